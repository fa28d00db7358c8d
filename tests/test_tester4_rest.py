"""Tester report 4's items left after h-t4, each with its bad input or its
regression: rates too small for one decimal (14g), --help wider than a
terminal (14i), a split figure that reused its number (5), export
without the backend's options (14b), and a stripe directory that two runs
shared (12): the last run out removes it if a pario run made it, and
nothing pario did not make is ever removed."""

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "src"))
from pario.figures import Figure, Param, Quantity, Record, build, format_table, split_varying  # noqa: E402
from pario.rundirs import IN_USE, MADE, RunDirs, leave_dir  # noqa: E402
from pario.units import format_value  # noqa: E402
from test_front_end import pario  # noqa: E402

# item 14g ---------------------------------------------------------------------


def test_a_rate_below_one_decimal_keeps_two_significant_digits():
    assert [format_value(v) for v in (0.0061, 0.049, 0.05, 12.34, 0.0)] == ["0.0061", "0.049", "0.1", "12.3", "0.0"]
    assert format_value(0.00004, ".2f") == "0.000040" and format_value(0.5, ".2f") == "0.50"
    recs = [Record({"ranks": 1, "block": 8, "phase": "write"}, {"rate": [0.0061, 0.0042]})]
    fig = Figure(id="tiny", title="Tiny writes", x="ranks", series="block", y="rate")
    data = build(fig, recs, {"ranks": Param("ranks", str), "block": Param("block")},
                 {"rate": Quantity("", "MiB/s", "max")})
    assert "0.0061 [0.0042-0.0052]" in format_table(data), format_table(data)


def test_the_engine_prints_each_rate_as_its_result_holds_it(engine, shm_dir, tmp_path):
    """The printed rates are the result's to the digits shown: one decimal,
    or two significant digits below 0.05 (engine/tests/test_sizes.c holds
    the rule's small cases, whatever this machine's speed)."""
    out = tmp_path / "r.json"
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), "--block", "8", "--size", "64", "--iterations", "2",
                        "--no-fsync", "--json", str(out)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    for ph in doc["phases"]:
        best = max(it["mib_per_s"] for it in ph["iterations"])
        printed = re.search(rf"^{ph['name']}: best (\S+) MiB/s,", p.stdout, re.M).group(1)
        assert printed == format_value(best), (printed, best)
    assert os.listdir(shm_dir) == []


# item 14i ---------------------------------------------------------------------

@pytest.mark.parametrize("command", ["io", "verify", "bt", "verify-bt", "probe", "bonnie", "perf", "laplace",
                                     "verify-laplace", "flashio", "beff", None])
def test_every_help_line_fits_80_columns(engine, command):
    p = subprocess.run([engine, *([command] if command else []), "--help"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout, p.stderr
    wide = [l for l in p.stdout.splitlines() if len(l) > 80]
    assert wide == [], "\n".join(wide)


def test_a_wrapped_help_keeps_every_word(engine):
    text = subprocess.run([engine, "io", "--help"], capture_output=True, text=True, timeout=60).stdout
    words = " ".join(text.split())
    assert ("--collective collective I/O: each rank's whole list in one write_at_all/read_at_all over a file "
            "view built from the layout") in words


# item 5 -----------------------------------------------------------------------

def test_the_parts_of_a_split_figure_are_numbered_apart():
    params = {"test": Param("test"), "files": Param("files"), "ranks": Param("ranks", str)}
    recs = [Record({"test": t, "files": f, "ranks": 2, "phase": "read"}, {"rate": [1.0]})
            for t, f in (("shared-atomic", "per-rank"), ("shared-relaxed", "per-rank"))]
    fig = Figure(id="fig11a", number="Figure 11a", title="Reads by ranks", x="ranks", series="files", y="rate")
    parts = split_varying(fig, recs, params)
    assert [p.number for p in parts] == ["Figure 11a.1", "Figure 11a.2"]
    assert len({build(p, recs, params, {"rate": Quantity("", "MiB/s")}).heading for p in parts}) == 2
    several = Figure(id="g", number="Figures 6 and 7", title="Grouped", x="ranks", series="files", y="rate")
    assert [p.number for p in split_varying(several, recs, params)] == ["Figures 6 and 7 (part 1 of 2)",
                                                                        "Figures 6 and 7 (part 2 of 2)"]
    whole = Figure(id="w", number="Figure 3", title="One", x="ranks", series="test", y="rate")
    assert split_varying(whole, recs, params) == [whole]   # nothing split: its number stays


# item 12 ----------------------------------------------------------------------

def _names(d):
    return sorted(os.listdir(d))


def test_the_last_run_out_removes_a_stripe_directory_a_pario_run_made(tmp_path):
    from pario.checks import tag_host
    from pario.rundirs import NOTE
    ta, tb = (f"{tag_host()}-{os.getpid()}-{x * 8}" for x in "ab")   # two live runs of this host
    a, b = RunDirs(tmp_path, ["stripe-0", "stripe-1"], ta), RunDirs(tmp_path, ["stripe-0", "stripe-1"], tb)
    a.check()
    a.create()
    b.check()
    b.create()   # finds them there, made by run a
    assert _names(tmp_path / "stripe-0") == sorted([MADE, IN_USE + ta, IN_USE + tb])
    (tmp_path / "stripe-1" / "b-part").write_text("run b's part")
    stays = a.remove()                             # b is still in both: b removes them, and a says so
    assert stays == [f"{NOTE}{tmp_path / d} stays for run {tb}, still running on this host (pid {os.getpid()}): "
                     "the last run out removes it" for d in ("stripe-1", "stripe-0")], stays
    assert _names(tmp_path) == ["stripe-0", "stripe-1"]
    (tmp_path / "stripe-1" / "b-part").unlink()    # b's engine removes its part
    assert b.remove() == []
    assert _names(tmp_path) == []                  # b, the last out, removed what a made


def test_a_stripe_directory_the_user_made_is_never_removed(tmp_path):
    (tmp_path / "stripe-0").mkdir()
    (tmp_path / "stripe-0" / "mine.txt").write_text("the user's\n")
    (tmp_path / "stripe-1").mkdir()
    dirs = RunDirs(tmp_path, ["stripe-0", "stripe-1"], "a")
    dirs.check()
    dirs.create()
    assert dirs.remove() == []
    assert _names(tmp_path) == ["stripe-0", "stripe-1"]   # empty or not, the user's stays
    assert _names(tmp_path / "stripe-0") == ["mine.txt"] and _names(tmp_path / "stripe-1") == []


def test_a_pario_made_directory_holding_what_pario_did_not_put_there_stays_and_is_named(tmp_path):
    dirs = RunDirs(tmp_path, ["stripe-0", "stripe-1"], "a")
    dirs.check()
    dirs.create()
    (tmp_path / "stripe-1" / "theirs.dat").write_text("someone else's\n")
    os.symlink("/etc/passwd", tmp_path / "stripe-0" / "link")
    left = dirs.remove()
    assert len(left) == 2, left
    assert left[0].startswith(f"left {tmp_path / 'stripe-1'}, a stripe directory pario made: it holds what "
                              "pario did not put there (theirs.dat)"), left
    assert "(link)" in left[1]
    assert (tmp_path / "stripe-1" / "theirs.dat").read_text() == "someone else's\n"
    assert os.readlink(tmp_path / "stripe-0" / "link") == "/etc/passwd"
    # the marker stays with it: whoever empties it later may still remove it
    assert _names(tmp_path / "stripe-1") == sorted([MADE, "theirs.dat"])
    (tmp_path / "stripe-1" / "theirs.dat").unlink()
    again = RunDirs(tmp_path, ["stripe-1"], "b")
    again.create()
    assert again.remove() == [] and _names(tmp_path) == ["stripe-0"]


def test_a_marker_name_taken_by_a_link_is_not_followed_nor_removed(tmp_path):
    dirs = RunDirs(tmp_path, ["stripe-0"], "a")
    dirs.create()
    target = tmp_path / "precious"
    target.write_text("keep\n")
    (tmp_path / "stripe-0" / MADE).unlink()
    os.symlink(target, tmp_path / "stripe-0" / MADE)   # the made marker replaced by a link
    assert leave_dir(tmp_path / "stripe-0", IN_USE + "a") == ""   # not pario's then: left alone
    assert target.read_text() == "keep\n" and (tmp_path / "stripe-0" / MADE).is_symlink()


def test_a_killed_run_leaves_its_stripe_directories_through_the_watchdog(tmp_path):
    """kill -9 of pario: the watchdog leaves the directories as pario would."""
    from pario.watchdog import Watchdog
    other = RunDirs(tmp_path, ["stripe-0"], "other")
    other.create()
    w = Watchdog()
    mine = RunDirs(tmp_path, ["stripe-0", "stripe-1"], "mine")
    mine.create(on_create=w.made)
    w.close()   # pario gone: the watchdog leaves them
    assert _names(tmp_path) == ["stripe-0"]          # stripe-1 removed; stripe-0 still has 'other'
    assert _names(tmp_path / "stripe-0") == sorted([MADE, IN_USE + "other"])
    assert other.remove() == [] and _names(tmp_path) == []


def test_two_runs_sharing_dir_leave_no_stripe_directory(shm_dir, tmp_path):
    """Tester 4, item 12, with real runs: run B starts while run A holds
    the stripe directories; whichever ends last removes them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(tmp_path / "r.sqlite")}
    args = [sys.executable, "-m", "pario", "run", "ascired-api", "--quick", "--dir", str(shm_dir), "--blocks", "64k",
            "--iterations", "1"]
    a = subprocess.Popen(args + ["--tests", "striped-posix", "--size", "32m"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    from conftest import wait_for
    try:
        assert wait_for(lambda: (shm_dir / "stripe-1").is_dir(), 60), a.communicate(timeout=60)
        b = subprocess.run(args + ["--tests", "striped-stdio-1m", "--size", "2m"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
        out_a, err_a = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            a.kill()
    assert a.returncode == 0 and b.returncode == 0, (err_a, b.stderr)
    assert "left " not in err_a + b.stderr
    assert os.listdir(shm_dir) == []


# item 14b ---------------------------------------------------------------------

QD = """\
name = "qd"
title = "uring at two queue depths"
[sweep]
ranks = [1]
blocks = ["4k"]
size = "64k"
iterations = 1
[[test]]
id = "qd1"
title = "uring QD 1"
layout = "partitioned"
phases = ["write"]
api = "uring"
options = ["--queue-depth", "1"]
[[test]]
id = "qd64"
title = "uring QD 64"
layout = "partitioned"
phases = ["write"]
api = "uring"
options = ["--queue-depth", "64"]
"""


def test_export_names_each_tests_backend_options(shm_dir, tmp_path):
    toml = tmp_path / "qd.toml"
    toml.write_text(QD)
    db = tmp_path / "r.sqlite"
    r = pario("run", toml, "--dir", shm_dir, "--no-fsync", db=db)
    assert r.returncode == 0, r.stderr
    e = pario("export", "1", "--csv", db=db)
    assert e.returncode == 0, e.stderr
    rows = list(csv.DictReader(io.StringIO(e.stdout)))
    assert {row["test"]: row["options"] for row in rows} == {"qd1": "--queue-depth 1", "qd64": "--queue-depth 64"}
