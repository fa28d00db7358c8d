"""Tester report 2: a --db that is a symlink is refused, dangling or not,
and nothing is created at its target (item 6); a failed write to standard
output is one line and a non-zero exit, not a traceback (item 13)."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT


def pario(*args, db, stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)})


@pytest.mark.parametrize("dangling", [True, False])
def test_a_db_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path, shm_dir, dangling):
    target = tmp_path / "target.sqlite"
    if not dangling:
        pario("list", db=target)  # nothing created by a reader
        target.write_bytes(b"")
    link = tmp_path / "link.sqlite"
    link.symlink_to(target)
    r = pario("run", "ascired-load", "--quick", "--tests", "cpu-load", "--dir", shm_dir,
              "--db", link, db=tmp_path / "other.sqlite")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"pario: error: --db {link} is a symlink: pario neither follows a symlink to its "
        "database nor creates one through it; give the real path"]
    assert target.exists() == (not dangling) and (dangling or target.read_bytes() == b"")
    assert os.listdir(shm_dir) == [] and not (tmp_path / "other.sqlite").exists()


@pytest.mark.parametrize("args", [["list"], ["model", "cfs", "--quick", "--machine", "ipsc860",
                                               "--print-machine"]])
def test_a_full_standard_output_is_one_line_not_a_traceback(tmp_path, args):
    sys.path.insert(0, str(ROOT / "src"))
    from pario.store import Store

    Store(tmp_path / "r.sqlite").close()  # a database with no runs: 'list' has a line to print
    with open("/dev/full", "w") as full:
        r = pario(*args, db=tmp_path / "r.sqlite", stdout=full)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "pario: error: cannot write to standard output: No space left on device: free space or "
        "send the output elsewhere"]
