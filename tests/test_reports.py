"""The CFS and NHT-1 presets as the reports ran them (issue 7): each test
here fails on the presets and front end that came before."""

import json
import os
import re
import sqlite3
import sys

import pytest

from conftest import ROOT
from test_front_end import pario

sys.path.insert(0, str(ROOT / "src"))
from pario.figures import Record, build  # noqa: E402
from pario.launch import Launcher, cores, hostfile_slots  # noqa: E402
from pario.presets import load_experiment  # noqa: E402
from pario.studies import kind_named  # noqa: E402

IO, BT = kind_named("io"), kind_named("bt")


def engine_lines(stdout):
    return [l for l in stdout.splitlines() if "pario-engine io" in l]


# --- CFS ---------------------------------------------------------------------

def test_cfs_preallocates_and_fsyncs_by_default_and_the_flags_turn_them_off(tmp_path):
    db = tmp_path / "r.sqlite"
    common = ["run", "cfs", "--dir", tmp_path, "--ranks", "2", "--blocks", "64k", "--size", "1m",
              "--tests", "broadcast,partitioned", "--dry-run"]
    plain = engine_lines(pario(*common, db=db).stdout)
    broadcast, partitioned = plain
    assert "--prealloc" in partitioned and "--evict" in partitioned and "--no-fsync" not in partitioned
    assert "--prealloc" not in broadcast and "--evict" in broadcast  # a read-only test: nothing to reserve
    changed = engine_lines(pario(*common, "--no-prealloc", "--no-fsync", "--cached", db=db).stdout)
    assert all("--prealloc" not in l and "--evict" not in l for l in changed)
    assert "--no-fsync" in changed[1] and "--no-fsync" not in changed[0]


def _read_residency(db):
    con = sqlite3.connect(db)
    return [c for (c,) in con.execute("SELECT cache_fraction FROM phases WHERE phase='read'")]


def test_cfs_on_disk_reads_from_the_disk_by_default_and_cached_brings_the_cache_back(disk_dir, tmp_path):
    args = ["run", "cfs", "--quick", "--dir", disk_dir, "--tests", "partitioned", "--ranks", "1,2",
            "--blocks", "1m", "--size", "16m", "--iterations", "2"]
    db = tmp_path / "evicted.sqlite"
    r = pario(*args, db=db)
    assert r.returncode == 0, r.stderr
    residency = _read_residency(db)
    assert residency and max(residency) < 0.1, residency          # each read began with the file on disk
    warnings = r.stdout.split("warnings:")[1] if "warnings:" in r.stdout else ""
    assert "page cache" not in warnings, warnings                 # no cache warning
    assert "Figure 7. Partitioned Read (16 MiB file): MiB/s, best of 2; page cache evicted before each read" \
        in r.stdout
    assert "Figure 6. Partitioned Write (16 MiB file): MiB/s, best of 2; preallocated, fsync before close" \
        in r.stdout
    params = [json.loads(j)["params"] for (j,) in sqlite3.connect(db).execute("SELECT result_json FROM points")]
    assert all(p["prealloc"] and p["evict"] and p["fsync"] for p in params)

    db = tmp_path / "cached.sqlite"
    r = pario(*args, "--cached", db=db)
    assert r.returncode == 0, r.stderr
    assert min(_read_residency(db)) > 0.9                          # the write just done, still in memory
    assert "read rates are likely served from the page cache" in r.stdout
    assert "not evicted (--cached, or the test's own choice): reads may come from the page cache" in r.stdout
    assert os.listdir(disk_dir) == []


def test_eviction_that_did_not_take_effect_is_warned_from_the_recorded_residency():
    base = {"test": "partitioned", "title": "P", "layout": "partitioned", "ranks": 2, "block": 1 << 20,
            "size": 1 << 24, "files": "shared", "api": "posix", "group": 0, "group_unit": "call",
            "phase": "read", "fs_type": "nfs", "memory_backed": False, "fsync": True}
    took = Record({**base, "evict": True}, {"rate": [1.0], "seconds": [1.0], "cache": [0.0]})
    ignored = Record({**base, "evict": True}, {"rate": [9.0], "seconds": [0.1], "cache": [0.97]})
    cached = Record({**base, "evict": False}, {"rate": [9.0], "seconds": [0.1], "cache": [1.0]})
    assert IO.notes({}, [took, cached], {}) == []
    [line] = IO.notes({}, [took, ignored], {})
    assert "eviction did not take effect on nfs: up to 97%" in line and "partitioned" in line


def test_grouping_that_cannot_act_is_warned_before_and_after_the_run(shm_dir, tmp_path):
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", "1,2,4", "--blocks", "64k", "--size", "1m",
              "--tests", "partitioned,partitioned-g2", "--iterations", "1", db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    assert ("plan: warning: partitioned-g2: group 2 cannot act at 1,2 rank(s) (G >= ranks)" in r.stdout)
    assert "partitioned-g2: group 2 could not act at 1,2 rank(s)" in r.stdout.split("warnings:")[1]
    # grouped and ungrouped curves of one pattern on one figure, as the report compares them
    table = r.stdout.split("Partitioned Read: grouped and ungrouped (64 KiB blocks, 1 MiB file)")[1]
    header = table.splitlines()[1].split()
    assert header == ["ranks", "ungrouped", "G=2"]
    assert [l.split()[0] for l in table.splitlines()[2:5]] == ["1", "2", "4"]
    assert "cf. Figure 7. Partitioned Read: grouped and ungrouped" in r.stdout
    # the report's caption names its number once (tester 5, e: "cf. Figure 6. Figure 6. Partitioned ...")
    out = tmp_path / "r.html"
    rep = pario("report", "1", "--out", out, db=tmp_path / "r.sqlite")
    assert rep.returncode == 0, rep.stderr
    html = out.read_text()
    assert "Figure 7. Figure 7." not in html and "Figure 6. Figure 6." not in html
    assert "Partitioned Read: grouped and ungrouped" in html


def test_full_cfs_ranks_are_powers_of_two_up_to_the_launchers_slots(tmp_path, monkeypatch):
    hosts = tmp_path / "hosts"
    hosts.write_text("# two nodes\nnode1 slots=16\nnode2 slots=16 max_slots=32\n")
    assert hostfile_slots(hosts) == 32
    (tmp_path / "mpich").write_text("a:4\nb:4\nc\n")
    assert hostfile_slots(tmp_path / "mpich") == 9
    t = Launcher("template", [], template=["mpirun", "--hostfile", str(hosts), "-np", "{ranks}",
                                           "{engine}", "{engine_args}"])
    assert t.slots() == (32, f"host file {hosts}")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_NTASKS", "512")
    assert Launcher("srun", ["srun"]).slots()[0] == 512
    monkeypatch.delenv("SLURM_JOB_ID")
    assert Launcher("mpirun", ["mpirun"]).slots() == (cores(), "the cores here")

    cfs = load_experiment("cfs").data
    ranks = lambda slots: sorted({p.ranks for p in IO.plan(cfs, {"slots": slots, "tests": ["partitioned"]})[0]})
    assert ranks(512) == [1, 2, 4, 8, 16, 32, 64, 128]      # 128 at most, as the report
    assert ranks(48) == [1, 2, 4, 8, 16, 32]
    assert sorted({p.ranks for p in IO.plan(cfs, {"slots": 48, "ranks": ["4"], "tests": ["partitioned"]})[0]}) == [4]

    r = pario("run", "cfs", "--dir", tmp_path, "--tests", "partitioned-g16", "--blocks", "64k",
              "--dry-run", "--launcher-template",
              f"mpirun --oversubscribe --hostfile {hosts} -np {{ranks}} {{engine}} {{engine_args}}",
              db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    assert f"plan: ranks 1,2,4,8,16,32: powers of two up to 32 slots (host file {hosts}" in r.stdout
    assert "group 16 cannot act at 1,2,4,8,16 rank(s)" in r.stdout  # and acts at 32


# --- NHT-1 -------------------------------------------------------------------

def _table_rows(stdout, method):
    block = stdout.split(f"write method {method} (")[1].split("\n\n")[0]
    rows = []
    for line in block.splitlines()[2:]:
        cells = line.split()
        if cells and cells[0].isdigit():
            rows.append(cells)
    return rows


def test_nht1_quick_prints_class_s_at_iw_10_with_r_io_and_zeta_of_the_measured_times(shm_dir, tmp_path):
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "nht1", "--quick", "--dir", shm_dir, "--ranks", "1,2", "--tests", "posix,serial",
              "--iterations", "2", "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    assert "the report's Tables 2-6, best of 2 verified runs" in r.stdout
    header = "    N No. Proc.  I_W  T_C (secs)  T_T (secs)  R_IO (bytes/sec)    zeta"
    assert header in r.stdout
    stored = [json.loads(j) for (j,) in sqlite3.connect(db).execute("SELECT result_json FROM points")]
    for method in ("posix", "serial"):
        rows = _table_rows(r.stdout, method)
        assert [row[:3] for row in rows] == [["12", "1", "10"], ["12", "2", "10"]]
        for n, procs, iw, t_c, t_t, rate, zeta, *_ in rows:
            t_c, t_t = float(t_c), float(t_t)
            # R_IO and zeta of the measured best times, as the figures and the
            # export (tester 19); the 4-digit times printed beside them agree
            tts = [d["t_t_seconds"] for d in stored
                   if d["params"]["io"] == method and d["params"]["ranks"] == int(procs)]
            assert int(rate) == round(5 * 8 * 12**3 * 60 / (10 * min(tts)))
            assert float(zeta) == pytest.approx(t_t / t_c - 1, abs=1.5e-3)
            assert re.fullmatch(r"-?\d+\.\d{3}", zeta)             # three decimals, as the report
            tcs = [d["t_t_seconds"] for d in stored
                   if d["params"]["io"] == "none" and d["params"]["ranks"] == int(procs)]
            assert len(tcs) == 2 and t_c == pytest.approx(min(tcs), rel=1e-3)  # best of the verified runs
    for d in stored:
        if d["params"]["io"] != "none":
            assert d["params"]["write_interval"] == 10 and d["io"]["dumps"] == 6
            assert d["verification"]["file_checked"] and d["verification"]["file_ok"]
    assert "Figure 4. BT class S (N=12): R_IO: R_IO in MiB/s" in r.stdout
    assert "Figure 5. BT class S (N=12): zeta" in r.stdout
    assert "is tmpfs: T_T measures writes into memory, not storage" in r.stdout


def test_nht1_grouped_writing_study_and_oversubscription_warning(shm_dir, tmp_path):
    ranks = min(cores() + 1, 12)           # more ranks than cores: the warning must appear
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "nht1", "--quick", "--dir", shm_dir, "--ranks", ranks, "--tests", "posix-grouped",
              "--groups", f"1,2,{ranks}", "--iterations", "1", "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    assert f"write group {ranks} cannot act at {ranks} rank(s)" in r.stdout
    groups = sorted(json.loads(j)["params"]["group"] for (j,) in sqlite3.connect(db).execute(
        "SELECT result_json FROM points WHERE api='posix'"))
    assert groups == [1, 2]
    fig = r.stdout.split("Figure 1. Effect of grouped writing, BT class S (N=12): T_T against write group size")[1]
    assert [l.split()[0] for l in fig.splitlines()[2:4]] == ["1", "2"]
    assert (plots / "run1-btS-groups.png").exists()
    assert f"{ranks} ranks share" in r.stdout


@pytest.mark.parametrize("args,phrase", [
    (["--tests", "posix", "--groups", "2"], "--groups sizes the grouped-writing test"),
    (["--groups", "0"], "--groups"),
    (["--write-interval", "0"], "--write-interval"),
    (["--iterations", "zero"], "--iterations"),
    (["--prealloc"], "--prealloc does not apply to nht1"),
    (["--cached", "--evict"], "--evict does not apply to nht1"),
    ("cfs --evict --cached".split()[1:], "contradict"),
])
def test_run_options_refuse_bad_values_in_one_line(tmp_path, args, phrase):
    db = tmp_path / "r.sqlite"
    preset = "cfs" if phrase == "contradict" else "nht1"
    r = pario("run", preset, "--dir", tmp_path, *args, db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and phrase in lines[0], r.stderr
    assert not db.exists()


def test_nht1_interval_follows_table_1_unless_set():
    nht1 = load_experiment("nht1").data
    pts, _ = BT.plan(nht1, {"classes": ["S", "W"], "ranks": ["1"], "tests": ["posix"], "iterations": 1})
    assert {(p.bt_class, p.interval) for p in pts if p.io != "none"} == {("S", 10), ("W", 5)}
    pts, _ = BT.plan(nht1, {"classes": ["S"], "ranks": ["1"], "tests": ["posix"], "write_interval": 3})
    assert {p.interval for p in pts if p.io != "none"} == {3}
    assert "--write-interval" in pts[1].engine_args("/d", "j.json") and len(pts) == 2 * 3  # best of 3


def test_nht1_zeta_figure_draws_the_acceptable_line_and_methods_keep_their_colours(tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    from pario.plot import Palette, plot_figure

    recs = []
    for method, io, tt in (("T_C (no I/O)", "none", 1.0), ("posix", "posix", 1.2), ("serial", "serial", 1.5)):
        for ranks in (1, 2):
            recs.append(Record({"test": io, "class": "S", "N": 12, "steps": 60, "ranks": ranks, "io": io,
                                "method": method, "interval": 10 if io != "none" else None, "group": 0,
                                "trial": 1}, {"t_t": [tt / ranks], "r_io": [], "zeta": []}))
    recs = BT.finish(recs)
    assert recs[2].values["zeta"] == [pytest.approx(0.2)]
    figs = BT.figures({}, recs, {})
    zeta = next(f for f in figs if f.id == "btS-zeta")
    assert zeta.lines == ((0.1, "0.1: acceptable overhead (NAS)"),)
    drawn = []
    real = Axes.errorbar
    monkeypatch.setattr(Axes, "errorbar", lambda self, *a, **k: drawn.append((k["label"], k["color"])) or real(self, *a, **k))
    palette = Palette()
    for f in figs:
        plot_figure(build(f, recs, BT.params, BT.quantities), tmp_path, 1, palette)
    colours = {}
    for label, colour in drawn:
        assert colours.setdefault(label, colour) == colour, label   # one colour per method on every plot
    assert set(colours) == {"T_C (no I/O)", "posix", "serial"}


def test_a_method_keeps_its_colour_in_every_run(tmp_path):
    """A run with only 'serial' colours it as a run with every method does."""
    from pario.plot import Palette, plot_figure

    def colour_of_serial(methods):
        recs = [Record({"test": m, "class": "S", "N": 12, "steps": 60, "ranks": 1, "io": m, "method": m,
                        "interval": 10, "group": 0, "trial": 1}, {"t_t": [1.0], "r_io": [], "zeta": []})
                for m in methods]
        fig = next(f for f in BT.figures({}, recs, {}) if f.id == "btS-time")
        palette = Palette()
        out = tmp_path / "-".join(methods)
        out.mkdir()  # plot_figure writes into a folder its caller made (safefile.make_directory)
        plot_figure(build(fig, recs, BT.params, BT.quantities), out, 1, palette)
        return palette.style("serial")["color"]

    assert colour_of_serial(["serial"]) == colour_of_serial(["posix", "collective", "serial"])


def test_nht1_time_figure_with_no_io_point_measured_names_no_write_interval():
    """Every I/O point failed: the figure holds T_C alone and its title says
    so, where it read 'I_W=-' (an interval no point ran)."""
    only_tc = [Record({"test": "none", "class": "S", "N": 12, "steps": 60, "ranks": r, "io": "none",
                       "method": "T_C (no I/O)", "interval": None, "group": 0, "trial": 1},
                      {"t_t": [1.0 / r], "r_io": [], "zeta": []}) for r in (1, 2)]
    with_io = only_tc + [Record({"test": "posix", "class": "S", "N": 12, "steps": 60, "ranks": 1,
                                 "io": "posix", "method": "posix", "interval": 5, "group": 0,
                                 "trial": 1}, {"t_t": [1.2], "r_io": [], "zeta": []})]
    title = {name: next(f for f in BT.figures({}, BT.finish(recs), {}) if f.id == "btS-time").title
             for name, recs in (("only", only_tc), ("io", with_io))}
    assert title["only"] == "BT class S (N={N}): T_C (no I/O run measured)"
    assert title["io"] == "BT class S (N={N}, I_W=5): T_C and T_T"


def test_a_plot_title_wraps_keeps_its_note_and_missing_glyphs_are_one_note(tmp_path, capsys):
    """Tester 20, item 6: long subtitles ran past the PNG's edge and lost
    'fsync before close' and the like; tester 21, item 5: a title in CJK
    printed matplotlib's UserWarning, with its source line, per glyph."""
    import matplotlib
    matplotlib.use("Agg")
    from dataclasses import replace

    import pario.plot as plot

    recs = [Record({"test": m, "class": "S", "N": 12, "steps": 60, "ranks": r, "io": m, "method": m,
                    "interval": 10, "group": 0, "trial": 1}, {"t_t": [1.0 / r], "r_io": [], "zeta": []})
            for m in ("測試", "posix") for r in (1, 2)]
    fig = next(f for f in BT.figures({}, recs, {}) if f.id == "btS-time")
    fig = replace(fig, title="a title " * 40, note="what ran: " + "fsync before close; " * 10)
    drawn = []
    real = plot.draw_figure

    def keep(data, palette=None):
        drawn.append(real(data, palette))
        return drawn[-1]

    plot._glyphs_said = False
    try:
        plot.draw_figure = keep
        plot.plot_figure(build(fig, recs, BT.params, BT.quantities), tmp_path, 1)
        plot.plot_figure(build(fig, recs, BT.params, BT.quantities), tmp_path, 2)
    finally:
        plot.draw_figure = real
    err = capsys.readouterr().err
    assert err == ("pario: note: the plots' font cannot draw some characters of the titles or labels: they "
                   "show as empty boxes\n"), err
    lines = drawn[0].axes[0].get_title().split("\n")
    assert len(lines) == 5 and all(len(l) <= 96 for l in lines), lines
    assert lines[2].endswith(" ...") and lines[3].startswith("what ran: fsync") and lines[4].endswith(" ...")


def test_an_ideal_curve_of_one_point_is_drawn_as_a_mark():
    """Tester 21, item d: at one rank count the dotted ideal line had no
    second point, so the legend's 'ideal' and its 'peak' label named
    nothing drawn."""
    import matplotlib
    matplotlib.use("Agg")
    from dataclasses import replace

    from pario.plot import draw_figure

    recs = [Record({"test": "posix", "class": "S", "N": 12, "steps": 60, "ranks": 1, "io": "posix",
                    "method": "posix", "interval": 10, "group": 0, "trial": 1},
                   {"t_t": [1.0], "r_io": [], "zeta": []})]
    fig = next(f for f in BT.figures({}, recs, {}) if f.id == "btS-time")
    data = replace(build(fig, recs, BT.params, BT.quantities), curves=[("ideal (peak 2)", [(1, 2.0)])])
    ax = draw_figure(data).axes[0]
    line = next(l for l in ax.get_lines() if l.get_label() == "ideal (peak 2)")
    assert line.get_marker() == "_"
    # and no 'peak 2' label at a point that is no knee (tester 22, item 10: it read 'peak 866'
    # beside a legend's 'ideal (peak 1530 MiB/s)')
    assert not [t for t in ax.texts if t.get_text().startswith("peak")]
