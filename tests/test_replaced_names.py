"""pario never deletes a file it did not create, even when the name of a
file it made is taken over mid-run (tester report 2, item 1).  The engine
knows its file from the descriptor it created (not from the name after the
fact), opens only that file again, and leaves a replaced name alone with one
line; the front end removes after a point only what the engine's ledger
says it made and still holds the name."""

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT
from pario.watchdog import new_ledger, remove_point_files

MINE = b"mine: a user's file, not pario's\n"


def replace_when_it_appears(directory, matches, stop, seconds=120):
    """Once an entry matching `matches` appears in directory, put the user's
    file in its place (rename over it: the name never goes missing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        names = [n for n in os.listdir(directory) if matches(n)]
        if names:
            target = Path(directory) / names[0]
            staged = Path(directory) / "user-staging"
            staged.write_bytes(MINE)
            os.rename(staged, target)
            return target
        time.sleep(0.002)
    return None


def run_while_replacing(argv, directory, matches, env=None, cwd=None):
    stop = threading.Event()
    found = {}
    t = threading.Thread(target=lambda: found.update(
        target=replace_when_it_appears(directory, matches, stop)))
    t.start()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    finally:
        stop.set()
        t.join()
    return proc, found.get("target")


@pytest.mark.parametrize("api", ["posix", "mpiio", "hdf5"])
def test_engine_leaves_a_replaced_name_alone(engine, launcher, shm_dir, api):
    # one iteration: the file exists from its creation in the write phase to
    # the end of the run, so the swap lands in a write, a read or a verify
    argv = launcher.command(1, [engine, "io", "--api", api, "--dir", str(shm_dir), "--block", "4k",
                                "--size", "128m", "--iterations", "1"])
    # the engine's own file, not a library's passing one (ompio's NAME.locktest.0)
    proc, target = run_while_replacing(argv, shm_dir, re.compile(r"pario-io\.\d+\.\d+$").match,
                                       env=launcher.environment())
    assert target is not None, "the engine's file never appeared"
    assert target.read_bytes() == MINE, "the user's file was changed or removed"
    assert os.listdir(shm_dir) == [target.name]
    lines = [ln for ln in proc.stderr.splitlines() if "pario-engine" in ln]
    assert len(lines) == 1 and "left alone" in lines[0], proc.stderr
    assert str(target) in lines[0]


def test_pario_run_leaves_a_replaced_point_file_alone(shm_dir, tmp_path):
    argv = [sys.executable, "-m", "pario", "run", "cfs", "--dir", str(shm_dir), "--tests",
            "partitioned", "--ranks", "1", "--blocks", "4k", "--size", "128m", "--iterations",
            "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(tmp_path / "r.sqlite")}
    proc, target = run_while_replacing(argv, shm_dir, re.compile(r"pario-.*-point0$").match,
                                       env=env, cwd=ROOT)
    assert target is not None, "the point's file never appeared"
    assert target.read_bytes() == MINE, "pario removed or changed a file it did not create"
    assert os.listdir(shm_dir) == [target.name]
    assert "left alone" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_cleanup_removes_only_what_the_ledger_says_the_engine_made(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    ledger = tmp_path / "point0.owned"
    new_ledger(ledger)
    name = "pario-h-1-ab-run1-point0"
    made = d / name                        # the engine made it and died
    made.write_bytes(b"x")
    removed = d / f"{name}.00000001"       # made, removed, its inode number reused by a user
    removed.write_bytes(b"x")
    planted = d / f"{name}.00000002"       # put there by someone else
    planted.write_bytes(MINE)
    st, rs = made.stat(), removed.stat()
    with open(ledger, "a") as f:
        f.write(f"made {st.st_dev} {st.st_ino} {made}\n")
        f.write(f"made {rs.st_dev} {rs.st_ino} {removed}\n")
        f.write(f"gone {rs.st_dev} {rs.st_ino} {removed}\n")
    link = d / f"{name}.00000003"          # a symlink to the engine's file is not the file
    link.symlink_to(made)
    left = remove_point_files(d, name, (), ledger)
    assert not made.exists()
    assert removed.read_bytes() == b"x" and planted.read_bytes() == MINE and link.is_symlink()
    assert sorted(left) == sorted([removed, planted, link])
    # no ledger (a launcher that drops the environment): nothing is removed
    assert sorted(remove_point_files(d, name, (), tmp_path / "none")) == sorted(left)
    # the ledger is pario's own, created exclusively
    with pytest.raises(FileExistsError):
        new_ledger(ledger)
