"""Tester report 8, items 2, 3 and 17 (export): what pario writes under a
name it chose (the default plots folder plots/DBFILE-runN beside the
database, and plots/ itself) never goes through a link someone put
there, a file there is one warning line and exit 4 (README), a --out that
is a link is refused before anything is stored, and an export --out is
replaced only when it is the very file pario wrote for this database."""

import os
import shutil

import pytest

from test_front_end_files import ONE_POINT, pario

MODEL = ["model", "cfs", "--quick", "--tests", "partitioned", "--machine", "ipsc860"]


def _warning_only(r):
    warned = [l for l in r.stderr.splitlines() if l.startswith("pario: warning:")]
    assert r.returncode == 4 and len(warned) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "run 1 is stored, but not all its plots were written" in warned[0]
    return warned[0]


@pytest.mark.parametrize("where", ["run folder", "plots"])
def test_a_link_at_the_default_plots_folder_is_never_followed(tmp_path, where):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "plots").mkdir()
    link = tmp_path / "plots" / "m.sqlite-run1" if where == "run folder" else tmp_path / "plots"
    if where == "plots":
        os.rmdir(link)
    os.symlink(victim, link)
    r = pario(*MODEL, db=tmp_path / "m.sqlite")
    line = _warning_only(r)
    assert f"{link} is a symbolic link: pario never writes through a link" in line
    assert "Partitioned Write" in r.stdout  # the tables print all the same
    assert os.listdir(victim) == []
    # 'pario plot' refuses the same in one line, writing nothing
    r = pario("plot", "1", db=tmp_path / "m.sqlite")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "symbolic link" in r.stderr
    assert r.stdout == "" and os.listdir(victim) == []


def test_a_link_at_the_default_folder_of_a_measured_run_is_never_followed(tmp_path, shm_dir):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "plots").mkdir()
    os.symlink(victim, tmp_path / "plots" / "r.sqlite-run1")
    r = pario("run", "cfs", "--dir", str(shm_dir), *ONE_POINT, db=tmp_path / "r.sqlite")
    assert "symbolic link" in _warning_only(r)
    assert os.listdir(victim) == []


@pytest.mark.parametrize("where", ["run folder", "plots"])
def test_a_file_at_the_default_plots_folder_is_a_warning_and_exit_4(tmp_path, where):
    taken = tmp_path / "plots" / "m.sqlite-run1" if where == "run folder" else tmp_path / "plots"
    taken.parent.mkdir(exist_ok=True)
    taken.write_text("mine\n")
    r = pario(*MODEL, db=tmp_path / "m.sqlite")
    assert f"{taken} exists and is not a directory" in _warning_only(r)
    assert taken.read_text() == "mine\n"
    # elsewhere, as the warning says
    r = pario("plot", "1", "--out", str(tmp_path / "elsewhere"), db=tmp_path / "m.sqlite")
    assert r.returncode == 0 and len(os.listdir(tmp_path / "elsewhere")) == 2, r.stderr


def test_an_out_that_is_a_link_is_refused_before_anything_is_stored(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    os.symlink(victim, tmp_path / "out")
    r = pario(*MODEL, "--out", str(tmp_path / "out"), db=tmp_path / "m.sqlite")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"pario: error: --out {tmp_path / 'out'} is a symbolic link: pario never writes through a link at "
        "a directory it makes or writes into; give another --out"]
    assert not (tmp_path / "m.sqlite").exists() and os.listdir(victim) == []


def test_export_replaces_only_the_very_file_it_wrote_for_this_database(tmp_path):
    db, other = tmp_path / "m.sqlite", tmp_path / "other.sqlite"
    for d in (db, other):
        assert pario(*MODEL, db=d).returncode == 0
    out = tmp_path / "e.csv"
    for _ in range(2):  # its own file, unchanged: written again
        r = pario("export", "1", "--csv", "--out", str(out), db=db)
        assert r.returncode == 0, r.stderr
    # the same bytes, but a copy put at the name: not the file pario wrote
    shutil.copy(out, tmp_path / "copy")
    os.replace(tmp_path / "copy", out)
    before = out.read_bytes(), os.stat(out).st_ino
    r = pario("export", "1", "--csv", "--out", str(out), db=db)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "already exists and is not a file this results database recorded writing there" in r.stderr
    assert (out.read_bytes(), os.stat(out).st_ino) == before
    # a file pario wrote for another database is not this one's to replace,
    # and the line does not claim pario never wrote it
    theirs = tmp_path / "theirs.csv"
    assert pario("export", "1", "--csv", "--out", str(theirs), db=other).returncode == 0
    r = pario("export", "1", "--csv", "--out", str(theirs), db=db)
    assert r.returncode == 2 and "not a file this results database recorded writing" in r.stderr
    assert "did not write" not in r.stderr
