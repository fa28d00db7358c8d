"""Tester 7's items 9-11, each through the real CLI: a probe that cannot
fit is refused before anything runs (9); a one-rank probe's prediction of
points of more ranks says what it did not measure (10); a database removed
or replaced during a run is noticed, said in one line, with a non-zero
exit, the run saved beside it under a new name (11)."""

import os
import sqlite3

from conftest import wait_for
from test_front_end import pario, pario_background


def test_a_probe_that_does_not_fit_is_refused_before_anything_runs(small_tmpfs, tmp_path):
    """Item 9: the probe's stream did not count against the free space, so
    the run was stored as 'complete' with one failed point."""
    full = small_tmpfs("8m")
    db = tmp_path / "p.sqlite"
    r = pario("probe", "--dir", full, "--size", "16m", "--quick", "--ranks", "1", db=db, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "has 8 MiB free but probe ranks=1" in lines[0] and "needs 16 MiB" in lines[0], lines[0]
    assert lines[0].endswith(f"free space on {full} or lower --size"), lines[0]
    assert "run 1" not in r.stdout and not db.exists() and os.listdir(full) == []
    dry = pario("probe", "--dir", full, "--size", "16m", "--quick", "--ranks", "1", "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    assert "plan: warning: " in dry.stdout and "needs 16 MiB" in dry.stdout, dry.stdout
    assert not db.exists()
    # what fits still runs
    ok = pario("probe", "--dir", full, "--size", "4m", "--quick", "--ranks", "1", "--iterations", "1",
               db=db, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert sqlite3.connect(db).execute("SELECT status FROM runs").fetchall() == [("complete",)]


def _stored_points(db):
    """How many points the database at `db` holds so far (0 while it is
    being made); read-only, so the test writes nothing to it."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM points").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _saved_run(path):
    con = sqlite3.connect(path)
    try:
        return (con.execute("SELECT status FROM runs").fetchall(),
                con.execute("SELECT COUNT(*) FROM points").fetchone()[0])
    finally:
        con.close()


def test_a_database_removed_during_a_run_is_said_and_the_run_saved_beside_it(shm_dir, tmp_path):
    """Item 11: SQLite wrote on into the unlinked file; the run said
    'complete', 'results in del.sqlite', exit 0, and every point was lost."""
    db = tmp_path / "del.sqlite"
    proc = pario_background("run", "cfs", "--quick", "--dir", shm_dir, "--db", db, db=db)
    try:
        assert wait_for(lambda: _stored_points(db) >= 1, 120), "no point stored"
        for name in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            name.unlink(missing_ok=True)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = err.strip().splitlines()
    saved = tmp_path / "del.run1-saved.sqlite"
    assert proc.returncode == 5, (out, err)
    assert lines[-1] == (f"pario: error: --db {db} was removed during run 1: the database with run 1's "
                         f"points so far (marked incomplete) is saved in {saved}, a new file; keep other "
                         "processes off the database while a run writes to it"), err
    assert "points:" not in out  # no "complete" summary of a run no name reaches
    assert not db.exists()
    status, points = _saved_run(saved)
    assert status == [("incomplete",)] and points >= 1
    assert os.listdir(shm_dir) == []  # the point's files went as ever


def test_a_database_replaced_during_a_prediction_is_left_alone_and_the_run_saved(tmp_path):
    """Item 11 with `pario model`: a new file at the name is not pario's to
    write, and a name already taken beside it is not overwritten."""
    db = tmp_path / "rep.sqlite"
    taken = tmp_path / "rep.run1-saved.sqlite"
    taken.write_text("someone else's\n")
    proc = pario_background("model", "cfs", "--machine", "ipsc860", "--ranks", "1,2,4,8,16",
                            "--blocks", "1m,64k", "--db", db, db=db)
    try:
        assert wait_for(lambda: _stored_points(db) >= 1, 120), "no point stored"
        other = tmp_path / "other"
        other.write_text("a file pario did not write\n")
        os.replace(other, db)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    saved = tmp_path / "rep.run1-saved-2.sqlite"
    assert proc.returncode == 5, (out, err)
    assert f"--db {db} was replaced by another file during run 1" in err and str(saved) in err, err
    said = [l for l in err.splitlines() if l.startswith("pario:")]
    assert len(said) == 1 and said[0] == err.strip().splitlines()[-1], err  # one line, the last
    assert db.read_text() == "a file pario did not write\n"
    assert taken.read_text() == "someone else's\n"
    status, points = _saved_run(saved)
    assert status == [("incomplete",)] and points >= 1


def test_a_one_rank_probe_says_what_its_predictions_of_more_ranks_did_not_measure(shm_dir, tmp_path):
    """Item 10: a one-rank probe's machine holds zero token, message and
    hand-over costs and one stream's rates for several readers; its
    predictions of 2 and 4 ranks said nothing of it."""
    db = tmp_path / "p.sqlite"
    probe = pario("probe", "--dir", shm_dir, "--size", "16m", "--quick", "--ranks", "1",
                  "--iterations", "1", "--stream-blocks", "4k,64k,1m", db=db, timeout=300)
    assert probe.returncode == 0, probe.stderr
    warning = ("probe run 1 had one rank: token hand-over, MPI messages and several readers or writers "
               "at once were not measured, so the points of 2 and 4 ranks use one stream's rates and no "
               f"token or message costs: probe with 2 or more ranks ('pario probe --dir {shm_dir} "
               "--quick --ranks 2 --size 16m --iterations 1 --stream-blocks 4k,64k,1m') to measure them")
    model = pario("model", "cfs", "--quick", "--machine", "probe:1", "--tests", "partitioned", db=db)
    assert model.returncode == 0, model.stderr
    assert f"plan: warning: {warning}\n" in model.stdout, model.stdout
    shown = pario("show", "2", db=db)  # stored with the points: show and report say it again
    assert shown.returncode == 0 and f"  - {warning} [partitioned]" in shown.stdout, shown.stdout
    # a plan of one rank has nothing unmeasured to warn of
    one = pario("model", "cfs", "--quick", "--machine", "probe:1", "--tests", "partitioned",
                "--ranks", "1", db=db)
    assert one.returncode == 0 and "had one rank" not in one.stdout, one.stdout


def test_a_perf_plan_that_does_not_fit_is_refused_before_anything_runs(small_tmpfs, tmp_path):
    """Item 9's shared mechanism for the suite's kernels: perf's one file of
    ranks x size counts against the free space as an io point's does."""
    full = small_tmpfs("8m")
    db = tmp_path / "k.sqlite"
    r = pario("run", "perf", "--quick", "--dir", full, db=db, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "has 8 MiB free but perf ranks=2" in lines[0] and "needs 32 MiB" in lines[0], lines[0]
    assert "(2 of 4 points do not fit)" in lines[0], lines[0]
    assert "run 1" not in r.stdout and not db.exists() and os.listdir(full) == []


def test_a_database_whose_file_system_stops_answering_is_not_called_removed(tmp_path, monkeypatch):
    """Tester 16, item 3: --db on a GlusterFS volume stopped mid-run read
    'was removed during run 1: run 1 is lost'; once the volume was back,
    the run was there, whole.  A name that cannot be looked at (ENOTCONN)
    is said as that, and nothing is copied anywhere."""
    import errno

    from pario.db_moved import DatabaseMoved, moved_error

    db = tmp_path / "r.sqlite"
    con = sqlite3.connect(db)
    pinned = (os.stat(db).st_dev, os.stat(db).st_ino)
    real_stat = os.stat

    def unanswered(path, *args, **kwargs):
        if str(path) == str(db):
            raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", unanswered)
    error = moved_error(con, db, "--db", pinned, 1, lambda copy: None)
    monkeypatch.undo()
    assert not isinstance(error, DatabaseMoved) and error.exit_code == 5
    assert str(error) == (f"--db {db} stopped answering during run 1 (Transport endpoint is not connected): "
                          "the points stored so far stay in it; see them with 'pario show 1' once its file "
                          "system answers again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]  # nothing saved beside it
    # a name that is gone is still 'removed'
    db.unlink()
    assert "was removed during run 1" in str(moved_error(con, db, "--db", pinned, 1, lambda copy: None))
