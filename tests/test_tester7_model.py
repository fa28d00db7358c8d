"""Tester report 7's findings on `pario model`, each with its bad input,
through the real front end on small sizes."""

import sqlite3

from test_front_end import pario


def _runs(db):
    if not db.exists():
        return []
    return sqlite3.connect(db).execute("SELECT id, status FROM runs").fetchall()


def test_a_plan_of_more_calls_than_the_model_simulates_is_refused_at_once(tmp_path):
    """A broadcast of 1 GiB at 1024 ranks is a million 1 MiB calls per
    phase: no stripe unit brings that under the limit, and the search for
    one never ended (the command ran for a quarter of an hour with no
    word).  Now one line naming the calls and the options that shrink
    them, exit 2, nothing stored; the subprocess's timeout fails the test
    if the search comes back."""
    db = tmp_path / "r.sqlite"
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "1m", "--size", "1g",
              "--tests", "broadcast", db=db, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "broadcast ranks=1024 block=1 MiB makes 1048576 calls per phase (1 TiB in 1 MiB calls)" in lines[0]
    assert "use larger --blocks or a smaller --size, or fewer --ranks" in lines[0], lines[0]
    assert _runs(db) == []
    # the same point in calls of 4 MiB is 262144 calls: within the limit,
    # and refused for its stripe unit (4 KiB) instead, naming the one that fits
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "4m", "--size", "1g",
              "--tests", "broadcast", db=db, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "use --set stripe.unit=4m or more" in lines[0], lines[0]
    assert _runs(db) == []
