"""The ASCI Red presets of single-node APIs (Figures 4-7) and of background
load (Figure 3), through the real engine: every backend by request size on a
cached and an evicted file, the per-target (scaled) rate of a file striped
over stripe directories pario makes itself, and bandwidth normalised by each
line's own rate alone, with the load measured as the report defines it.
Also every new TOML key's bad inputs: one line, exit 2, nothing stored."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT, assert_refused_in_one_line
from test_ascired_presets import check_pngs, pario

sys.path.insert(0, str(ROOT / "src"))
from pario.figures import Figure, Param, Quantity, Record, build, format_table  # noqa: E402


def points(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT test_id, params_json, result_json FROM points WHERE status='ok'").fetchall()
    return [(t, json.loads(p), json.loads(r)) for t, p, r in rows]


def table(out, number):
    """The lines of one figure's table in pario's output."""
    return out.split(f"{number}. ")[1].split("\n\n")[0].splitlines()


def cell(lines, row, column):
    """The best value of a table cell, by row label and column heading."""
    head = lines[1]
    start = head.index(column)
    end = start + len(column)
    line = next(l for l in lines[2:] if l.split()[0] == row or " ".join(l.split()[:2]) == row)
    text = line[:end].split()[-1]
    return float(text)


# --- ascired-api: Figures 4 to 7 ---------------------------------------------

def test_ascired_api_quick_every_backend_cached_evicted_striped(disk_dir, tmp_path):
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "ascired-api", "--quick", "--dir", disk_dir, "--blocks", "4k,1m", "--size", "4m",
              "--iterations", "1", "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for n in ("4a", "4b", "5a", "5b", "6a", "6b", "7a", "7b"):
        assert f"Figure {n}. " in out
    # one line per API, and stdio twice: its 8 KiB and 1 MiB stream buffers
    fig4 = table(out, "Figure 4a")
    for api in ("posix", "stdio, 8 KiB buffer", "stdio, 1 MiB buffer", "mmap", "uring", "mpiio", "hdf5"):
        assert api in fig4[1], fig4[1]
    assert [l.split()[0] for l in fig4[2:4]] == ["4", "1"]  # 4 KiB, 1 MiB rows
    check_pngs(plots, ["fig4a-read", "fig4b-write", "fig5a-read", "fig5b-write", "fig6a-read",
                       "fig6b-write", "fig7a-read", "fig7b-write"])
    # the stripe directories pario made are gone again, and so is every file
    assert os.listdir(disk_dir) == []
    done = points(db)
    assert len(done) == 36 and {p["api"] for _, p, _ in done} == {"posix", "stdio", "mmap", "uring", "mpiio",
                                                                   "hdf5"}
    for test, params, doc in done:
        evicts = doc["params"]["evict"]
        assert evicts is (not test.startswith("cached")), test
        assert doc["params"]["fsync"] is (not test.startswith("cached")), test
        if test.startswith("cached") and doc["params"]["api"] == "stdio":
            want = 8192 if test.endswith("8k") else 1 << 20
            assert doc["params"]["api_options"]["buffer_bytes"] == want
        stripe = doc["params"]["stripe"]
        if not test.startswith("striped"):
            assert stripe is None
            continue
        # the file was spread over <dir>/stripe-0 and stripe-1, 1 MiB units
        assert stripe["targets"] == 2 and stripe["unit_bytes"] == 1 << 20
        assert stripe["dirs"] == [str(disk_dir / "stripe-0"), str(disk_dir / "stripe-1")]
        for phase in doc["phases"]:
            for it in phase["iterations"]:  # the engine's scaled rate: aggregate over targets
                assert it["mib_per_s"] > 0
                assert it["per_target_mib_per_s"] == pytest.approx(it["mib_per_s"] / 2)
    # Figure 7 is Figure 6 per target, cell by cell
    for a, b in (("Figure 6a", "Figure 7a"), ("Figure 6b", "Figure 7b")):
        six, seven = table(out, a), table(out, b)
        for column in ("posix", "stdio, 8 KiB buffer", "mmap"):
            for row in ("4 KiB", "1 MiB"):
                assert cell(seven, row, column) == pytest.approx(cell(six, row, column) / 2, abs=0.06)


def test_stripe_directories_of_the_user_stay_and_links_are_refused(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    mine = shm_dir / "stripe-0"
    mine.mkdir()
    (mine / "notes").write_text("the user's\n")
    r = pario("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "striped-posix", "--blocks", "1m",
              "--size", "2m", "--iterations", "1", "--out", tmp_path / "plots", db=db)
    assert r.returncode == 0, r.stderr
    # pario made stripe-1 and removed it; stripe-0 was the user's: kept, with its file
    assert sorted(os.listdir(shm_dir)) == ["stripe-0"] and os.listdir(mine) == ["notes"]
    # a link at a stripe name: refused before anything runs, the link's target untouched
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (shm_dir / "stripe-1").symlink_to(elsewhere)
    db2 = tmp_path / "r2.sqlite"
    r = pario("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "striped-posix", "--blocks", "1m",
              "--size", "2m", db=db2)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "stripe-1 is a symbolic link" in lines[0], r.stderr
    assert not db2.exists() and os.listdir(elsewhere) == []
    (shm_dir / "stripe-1").unlink()
    (shm_dir / "stripe-1").write_text("a file\n")
    r = pario("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "striped-posix", "--blocks", "1m",
              "--size", "2m", db=db2)
    assert r.returncode == 2 and "is not a directory" in r.stderr and not db2.exists()
    assert (shm_dir / "stripe-1").read_text() == "a file\n"


def test_sigkill_of_pario_mid_striped_point_leaves_no_part_and_no_stripe_dir(shm_dir, tmp_path):
    from test_front_end_faults import pario_background, wait_for

    def engines():
        out = subprocess.run(["pgrep", "-f", f"pario-engine io --stripe-dirs {shm_dir}/stripe-0"],
                             capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    run = pario_background("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "striped-posix",
                           "--blocks", "4k", "--size", "64m", "--iterations", "200", db=tmp_path / "r.sqlite")
    try:
        parts = lambda: [f for d in ("stripe-0", "stripe-1") if (shm_dir / d).is_dir()
                         for f in os.listdir(shm_dir / d) if not f.startswith(".pario-")]  # not its markers
        assert wait_for(lambda: len(parts()) == 2, 60), "the striped point never started"
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=10)
        assert wait_for(lambda: not engines(), 30), "ranks outlived pario"
        # the watchdog removed both parts, then the two directories pario had made
        assert wait_for(lambda: os.listdir(shm_dir) == [], 10), os.listdir(shm_dir)
    finally:
        if run.poll() is None:
            run.kill()
        for pid in engines():
            os.kill(pid, signal.SIGKILL)


# --- ascired-load: Figure 3 --------------------------------------------------

def test_ascired_load_quick_normalised_with_measured_load(shm_dir, tmp_path):
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "ascired-load", "--quick", "--dir", shm_dir, "--size", "32m", "--iterations", "1",
              "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    check_pngs(plots, ["fig3a-read", "fig3b-write"])
    assert os.listdir(shm_dir) == []
    done = points(db)
    assert sorted((p["background_kind"], p["background"]) for _, p, _ in done) == [
        ("cpu", 0), ("cpu", 2), ("cpu", 4), ("write", 0), ("write", 2), ("write", 4)]
    for number in ("Figure 3a", "Figure 3b"):
        lines = table(out, number)
        assert "rate / rate at loaders per node 0" in lines[0]
        assert lines[1].split()[:4] == ["loaders", "per", "node", "streaming"]
        alone = lines[2].split()
        assert alone == ["0", "1.00", "1.00"], lines  # each line over its own rate alone
        for row in lines[3:5]:  # 2 and 4 loaders: the rate relative to alone, and the load measured
            loads = [float(x) for x in re.findall(r"\(load ([0-9.]+)\)", row)]
            assert len(loads) == 2 and all(x > 0 for x in loads), row
            if row.split()[0] == "4" and (os.cpu_count() or 1) < 5:  # more processes than cores
                assert min(loads) > 1.0, row
    # the stored results carry the measured load of every loaded phase
    for _, params, doc in done:
        loads = [it["background_load"] for ph in doc["phases"] for it in ph["iterations"]]
        if params["background"]:
            assert doc["params"]["background"]["loaders_per_node"] == params["background"]
            assert all(x is not None and x > 0 for x in loads)
            if params["background"] == 4 and (os.cpu_count() or 1) < 5:
                assert max(loads) > 1.0
        else:
            assert doc["params"]["background"] is None and loads == [None, None]


def test_normalise_divides_each_series_by_its_own_baseline_and_drops_one_without():
    params = {"background": Param("loaders", str, "linear"), "title": Param("test")}
    qs = {"rate": Quantity("", "MiB/s"), "load": Quantity("load", "", "max", ".2f")}
    recs = [Record({"background": 0, "title": "w"}, {"rate": [100.0, 80.0], "load": [None, None]}),
            Record({"background": 2, "title": "w"}, {"rate": [50.0, 40.0], "load": [1.5, 2.5]}),
            Record({"background": 0, "title": "c"}, {"rate": [10.0], "load": [None]}),
            Record({"background": 2, "title": "c"}, {"rate": [5.0], "load": [3.0]}),
            Record({"background": 2, "title": "lonely"}, {"rate": [7.0], "load": [2.0]})]
    fig = Figure(id="n", title="under load", x="background", series="title", y="rate",
                 normalise={"background": 0}, annotate="load")
    data = build(fig, recs, params, qs)
    assert data.series == ["w", "c"]  # "lonely" has no point alone
    assert data.best(0, "w") == 1.0 and data.best(2, "w") == 0.5 and data.best(2, "c") == 0.5
    assert data.cells[(0, "w")].values == [1.0, 0.8]
    text = format_table(data)
    assert "rate / rate at loaders 0" in text.splitlines()[0]
    assert "no baseline, left out: lonely" in text.splitlines()[0]
    assert "0.50 [0.40-0.45] (load 2.00)" in text  # the load's median beside the cell


# --- bad inputs of every new key: one line, exit 2, nothing stored ------------

HEAD = 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
TEST = '[[test]]\nid = "t"\nlayout = "partitioned"\nphases = ["write", "read"]\n'
FIG = '[[figure]]\nid = "f"\ntitle = "t"\nx = "background"\ny = "rate"\n'
LOADS = HEAD + "background = [0, 1]\n"

BAD = [
    ("stripe_targets 0", HEAD + TEST + "stripe_targets = 0\n", "test[1].stripe_targets: 0 is not a whole number of at least 1"),
    ("stripe_targets negative", HEAD + TEST + "stripe_targets = -2\n", "test[1].stripe_targets: -2 is not"),
    ("stripe_targets text", HEAD + TEST + 'stripe_targets = "4"\n', "test[1].stripe_targets: '4' is not"),
    ("stripe_targets too many", HEAD + TEST + "stripe_targets = 65\n", "above the engine's 64 targets"),
    ("stripe on uring", HEAD + TEST + 'api = "uring"\nstripe_targets = 2\n', "api uring cannot be striped"),
    ("stripe_unit alone", HEAD + TEST + 'stripe_unit = "64k"\n', "test[1].stripe_unit: stripes nothing"),
    ("stripe_unit odd", HEAD + TEST + 'stripe_targets = 2\nstripe_unit = "100"\n', "not a multiple of 8 bytes"),
    ("stripe_unit not a size", HEAD + TEST + 'stripe_targets = 2\nstripe_unit = "wide"\n', "test[1].stripe_unit:"),
    ("evict not boolean", HEAD + TEST + 'evict = "yes"\n', "test[1].evict: 'yes' is not true or false"),
    ("fsync not boolean", HEAD + TEST + "fsync = 1\n", "test[1].fsync: 1 is not true or false"),
    ("prealloc not boolean", HEAD + TEST + 'prealloc = "no"\n', "test[1].prealloc: 'no' is not true or false"),
    ("background negative", HEAD + "background = [0, -1]\n" + TEST, "sweep.background: entry 2: -1 is not"),
    ("background too many", HEAD + "background = [0, 65]\n" + TEST, "sweep.background: at most 64 loaders"),
    ("background not a list", HEAD + "background = 2\n" + TEST, "sweep.background:"),
    ("test background fraction", LOADS + TEST + "background = [1.5]\n", "test[1].background: entry 1"),
    ("background_kind unknown", LOADS + TEST + 'background_kind = "disk"\n', "test[1].background_kind: 'disk' is unknown"),
    ("background_kind without loaders", HEAD + TEST + 'background_kind = "cpu"\n', "no loaders to run"),
    ("normalise unknown parameter", LOADS + TEST + FIG + "normalise = { colour = 0 }\n",
     "figure[1].normalise.colour: not a parameter"),
    ("normalise not a table", LOADS + TEST + FIG + "normalise = 0\n", "figure[1].normalise: is not a table"),
    ("normalise empty", LOADS + TEST + FIG + "normalise = {}\n", "figure[1].normalise: is not a table"),
    ("normalise a list", LOADS + TEST + FIG + "normalise = { background = [0, 1] }\n", "figure[1].normalise:"),
    ("normalise with a unit", LOADS + TEST + FIG + 'normalise = { background = 0 }\nunit = "MB/s"\n',
     "figure[1].unit: a normalised figure has no unit"),
    ("annotate unknown", LOADS + TEST + FIG + 'annotate = "weight"\n', "figure[1].annotate: 'weight' is not measured"),
    ("annotate not a string", LOADS + TEST + FIG + "annotate = 3\n", "figure[1].annotate: 3 is not a string"),
]


@pytest.mark.parametrize("label,text,phrase", BAD, ids=[c[0] for c in BAD])
def test_new_keys_refuse_bad_values_with_one_line(tmp_path, label, text, phrase):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    db = tmp_path / "r.sqlite"
    r = pario("run", f, "--dir", tmp_path, db=db)
    assert_refused_in_one_line(r, f, phrase)
    assert not db.exists() and sorted(os.listdir(tmp_path)) == ["bad.toml"]
