"""Tester 7's items 9-11, each through the real CLI: a probe that cannot
fit is refused before anything runs (9); a one-rank probe's prediction of
points of more ranks says what it did not measure (10); a database removed
or replaced during a run is noticed, said in one line, with a non-zero
exit, the run saved beside it under a new name (11)."""

import os
import sqlite3

from test_front_end import pario


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
