"""Tester 13's findings that need a stored run, through the real command
line on a small experiment file of the user's: a figure left out names no
option `pario run` lacks, a file without a title gets no empty '()', and a
report may be named *.HTML.  (The experiment files refused as they are
read are in test_studies.py's BAD_FILES; the launcher templates and the
--set relation in test_bad_invocations.py.)"""

import os
import subprocess
import sys

from conftest import ROOT

EXPERIMENT = """\
name = "mine"
[sweep]
ranks = [1]
blocks = ["64k"]
size = "1m"
iterations = 1
[[test]]
id = "t"
layout = "partitioned"
phases = ["write", "read"]
[[figure]]
id = "never"
title = "Wrote"
x = "ranks"
y = "rate"
where = { phase = "wrote" }
"""


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def test_a_users_experiment_run_reads_right_in_show_and_report(tmp_path, shm_dir):
    f = tmp_path / "mine.toml"
    f.write_text(EXPERIMENT)
    db = tmp_path / "r.sqlite"
    r = pario("run", f, "--dir", shm_dir, "--out", tmp_path / "p", db=db)
    assert r.returncode == 0, r.stderr
    # no title: no empty parentheses after the name
    # and a file of the user's is no preset of pario's (tester 20, item e)
    assert f"run 1: 1 point of experiment mine ({f}) into" in r.stdout, r.stdout
    assert f"run 1: experiment mine ({f}), complete" in r.stdout, r.stdout
    # the figure selects a phase no point has: said, without a '--phase' pario run does not take
    left = [l for l in (r.stdout + r.stderr).splitlines() if "never" in l and "left out" in l]
    assert left and "--phase" not in left[0], left
    assert "no option of 'pario run' sets it: the figure's where.phase asks for it" in left[0], left
    # a report's name in capitals is a report's name
    out = tmp_path / "R.HTML"
    r = pario("report", "1", "--out", out, db=db)
    assert r.returncode == 0, r.stderr
    assert out.read_text().lstrip().lower().startswith("<!doctype html")


def test_an_experiment_file_saved_with_a_byte_order_mark_reads(tmp_path, shm_dir):
    """Item 11: a UTF-8 BOM gave 'Invalid statement (at line 1, column 1)'."""
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbf" + EXPERIMENT.encode())
    r = pario("run", f, "--dir", shm_dir, "--dry-run", db=tmp_path / "r.sqlite")
    assert r.returncode == 0 and "pario-engine io" in r.stdout, r.stderr
