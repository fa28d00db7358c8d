"""Tester 6's front-end, engine and README items (3, 5, 6, a, b, e, f, g),
each through the real engine, a real run or the real report."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from test_front_end import pario

# item b: a repeated --mpiio-impl ----------------------------------------------

TWICE = [
    ("io-mpiio", ["io", "--api", "mpiio", "--block", "64k", "--size", "1m"]),
    ("io-hdf5", ["io", "--api", "hdf5", "--block", "64k", "--size", "1m"]),
    ("beff", ["beff"]),
    ("laplace", ["laplace"]),
    ("perf", ["perf"]),
    ("flashio", ["flashio"]),
]


@pytest.mark.parametrize("label,args", TWICE, ids=[t[0] for t in TWICE])
def test_a_repeated_mpiio_impl_is_refused_not_the_last_one_taken(engine, launcher, shm_dir, label, args):
    # refused while parsing: one process (an MPI singleton) is enough
    # the same value twice is refused as well (once, on io: the parser is shared)
    for first, second in (("romio", "ompio"), ("ompio", "ompio"))[:2 if label == "io-mpiio" else 1]:
        argv = [engine, args[0], "--dir", str(shm_dir), *args[1:], "--mpiio-impl", first, "--mpiio-impl", second]
        p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert p.returncode == 2 and len(lines) == 1, p.stderr
        # the engine's one refusal of a repeated valued option (util/options.c)
        assert lines[0] == (f"pario-engine: error: --mpiio-impl is given twice: give it once "
                            f"(pario-engine {args[0]} would take only the last)")
        assert not list(shm_dir.iterdir())


# item e: the "--atomic was not honoured" warning names what differs ------------------


@pytest.mark.parametrize("calls", ["--collective", "--collective-per-call"])
def test_romio_collective_atomic_warning_says_drop_collective_not_use_romio(shm_dir, run_io, calls):
    r = run_io(2, "--dir", shm_dir, "--api", "mpiio", "--mpiio-impl", "romio", calls, "--atomic",
               "--layout", "interleaved", "--block", "8k", "--size", "64k", "--iterations", 1)
    said = [w for w in r.result["warnings"] if w.startswith("--atomic was not honoured")]
    assert len(said) == 1, r.result["warnings"]
    assert said[0].endswith("ROMIO's collective path took no lock: drop --collective for a locking atomic run")
    assert "romio321 took no byte-range lock" in said[0] and "(ROMIO)" not in said[0]
    assert said[0] in r.stderr + r.stdout   # where the user reads it too


# item 5 and 6: bonnie on tmpfs through a real run and the real report -----------------


def test_bonnie_on_tmpfs_never_claims_an_eviction_and_its_report_numbers_each_table_once(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("run", "bonnie", "--quick", "--tests", "bonnie", "--dir", shm_dir, "--out", tmp_path / "p", db=db)
    assert r.returncode == 0, r.stderr
    doc = json.loads(sqlite3.connect(db).execute("select result_json from points").fetchone()[0])
    assert doc["params"]["evict"] is True and doc["params"]["memory_backed"] is True   # the engine's word
    heading = next(l for l in r.stdout.splitlines() if l.startswith("Figure 1. bonnie"))
    assert "(tmpfs: every byte in memory, nothing evicted)" in heading and "evicted before reads" not in r.stdout
    out = tmp_path / "r.html"
    rep = pario("report", "1", "--out", out, db=db)
    assert rep.returncode == 0, rep.stderr
    html = out.read_text()
    assert "evicted before reads" not in html and "nothing evicted" in html
    # one number per table: bonnie's own "Figure 1", no "Table P2" heading above it
    assert re.findall(r"Table P\d+", html) == ["Table P1"], re.findall(r"Table P\d+", html)
    # its tables state their units (K/sec, %CPU, one trial): no MiB/s sentence
    assert "MiB/s (2^20 bytes per second)" not in html and "K/sec and %CPU, best of 1" in html


# items 3, 6 and f: two real runs in one database --------------------------------------
# run 1 (ascired-api, striped) into a --dir where a killed run left its
# stripe directories; run 2 (cfs), a run to report beside it.


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from pario.checks import tag_host
    from pario.rundirs import IN_USE, MADE
    tmp = tmp_path_factory.mktemp("tester6")
    shm = Path("/dev/shm") / f"pario-test-{uuid.uuid4().hex[:10]}"
    shm.mkdir()
    try:
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()   # a pid of this host that runs no more
        dead, elsewhere = f"{tag_host()}-{gone}-917ef42c", "othernode7-2338-0badcafe"
        for d in ("stripe-0", "stripe-1"):              # as a run killed with its watchdog left them
            (shm / d).mkdir()
            (shm / d / MADE).write_text("made by pario\n")
            (shm / d / (IN_USE + dead)).write_text(f"a pario run (pid {gone})\n")
        (shm / "stripe-1" / (IN_USE + elsewhere)).write_text("a pario run of another host\n")
        db = tmp / "r.sqlite"
        striped = pario("run", "ascired-api", "--quick", "--tests", "striped-posix", "--blocks", "1m", "--size",
                        "8m", "--dir", shm, "--out", tmp / "p1", db=db)
        left = sorted(os.listdir(shm)), sorted(os.listdir(shm / "stripe-1")) if (shm / "stripe-1").is_dir() else []
        shutil.rmtree(shm / "stripe-1", ignore_errors=True)
        cfs = pario("run", "cfs", "--dir", shm, "--tests", "partitioned", "--ranks", "2", "--blocks", "64k",
                    "--size", "256k", "--iterations", "1", "--out", tmp / "p2", db=db)
        yield {"db": db, "tmp": tmp, "shm": shm, "striped": striped, "cfs": cfs, "left": left,
               "elsewhere": IN_USE + elsewhere, "made": MADE}
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_a_dead_runs_marker_is_stale_and_another_hosts_is_left_with_one_line(runs):
    r, shm, marker = runs["striped"], runs["shm"], runs["elsewhere"]
    assert r.returncode == 0, r.stderr
    dirs, in_stripe_1 = runs["left"]
    assert dirs == ["stripe-1"]                    # stripe-0: the dead run's marker was stale, removed
    assert in_stripe_1 == sorted([marker, runs["made"]])   # stripe-1 kept for the other host's run alone
    said = [l for l in r.stderr.splitlines() if "stripe-" in l]
    assert said == [f"pario: warning: left {shm / 'stripe-1'}, a stripe directory pario made: run "
                    f"{marker.removeprefix('.pario-in-use-')} of host othernode7 is in it (its marker {marker}); "
                    "once that run has ended, remove the marker, then the directory"], r.stderr


def test_report_refuses_a_repeated_run_and_says_when_a_point_is_another_runs(runs):
    db, tmp = runs["db"], runs["tmp"]
    assert runs["cfs"].returncode == 0, runs["cfs"].stderr
    out = tmp / "twice.html"
    rep = pario("report", "1", "2", "1", "--out", out, db=db)
    assert rep.returncode == 2 and rep.stderr.strip() == "pario: error: run 1 is given twice: name each run once"
    assert not out.exists()
    second = [p for (p,) in sqlite3.connect(db).execute("select id from points where run_id = 2")]
    out = tmp / "r.html"
    rep = pario("report", "1", "2", "--point", second[0], "--out", out, db=db)
    assert rep.returncode == 0, rep.stderr
    html = out.read_text()
    assert f"--point {second[0]} is not a point of run 1" in html
    timelines = re.findall(r"Per-rank timeline of point (\d+)", html)
    assert len(set(timelines)) == 2 and str(second[0]) in timelines   # run 1 keeps its own
    for run in (1, 2):   # the units, once per run of MiB/s figures, not once for any report
        assert html.count(f"Rates of run {run} are MiB/s (2^20 bytes per second)") == 1
    assert html.count("2^20 bytes per second") == 2


# item a: a --stripe-unit the file never fills past the first target(s) ---------------------


def test_a_stripe_unit_beyond_the_file_warns_and_rates_only_the_targets_with_data(shm_dir, run_io):
    (shm_dir / "a").mkdir(), (shm_dir / "b").mkdir(), (shm_dir / "c").mkdir()
    dirs = f"{shm_dir / 'a'},{shm_dir / 'b'},{shm_dir / 'c'}"
    common = ("--stripe-dirs", dirs, "--block", "8k", "--size", "96k", "--iterations", 1)
    short = run_io(2, *common, "--stripe-unit", "64k")          # 96 KiB: 64k on a, 32k on b, none on c
    said = [w for w in short.result["warnings"] if w.startswith("--stripe-unit")]
    assert said == ["--stripe-unit 64 KiB puts each 96 KiB file on 2 of the 3 targets: target 2 moved nothing, "
                    "so the per-target rates are over the 2 that did; a --stripe-unit of at most 32 KiB reaches "
                    "every target"], short.result["warnings"]
    assert f"warning: {said[0]}" in short.stdout
    assert short.result["params"]["stripe"]["targets_with_data"] == 2
    for ph in short.result["phases"]:
        s = ph["summary"]
        assert s["per_target_best_mib_per_s"] == pytest.approx(s["best_mib_per_s"] / 2)
        assert f"{ph['name']} per target: best" in short.stdout and "(2 of 3 targets hold data" in short.stdout
    huge = run_io(2, *common, "--stripe-unit", "1g")             # every byte on a
    assert any("on 1 of the 3 targets: targets 1..2 moved nothing" in w for w in huge.result["warnings"])
    s = huge.result["phases"][0]["summary"]
    assert s["per_target_best_mib_per_s"] == pytest.approx(s["best_mib_per_s"])
    full = run_io(2, *common, "--stripe-unit", "32k")            # reaches all three: no word, rate / 3
    assert not [w for w in full.result["warnings"] if w.startswith("--stripe-unit")]
    s = full.result["phases"][0]["summary"]
    assert s["per_target_best_mib_per_s"] == pytest.approx(s["best_mib_per_s"] / 3)
    assert "(3 targets, unit 32768 bytes)" in full.stdout


# item g: the README's first steps work as a new user types them ---------------------------


def test_the_readme_says_where_make_puts_both_commands_and_makes_the_examples_dir():
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    assert 'export PATH="$PWD/.venv/bin:$PWD/build/engine:$PATH"' in text
    assert (root / ".venv" / "bin" / "pario").exists() and (root / "build" / "engine" / "pario-engine").exists()
    # every engine example on /dev/shm/x makes it first, in the same block
    for block in re.findall(r"```\n(.*?)```", text, re.S):
        if "--dir /dev/shm/x" in block:
            assert block.index("mkdir -p /dev/shm/x") < block.index("--dir /dev/shm/x"), block
