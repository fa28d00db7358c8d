"""Tester 6's model items through the real command: a --set that acts on
no point of the plan is refused before anything is stored (item 4)."""

import csv
import io
import sqlite3

import pytest

from test_front_end import pario


def _runs(db):
    if not db.exists():
        return 0
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize("mode", ["masync", "munix"])
def test_agent_mode_on_tests_that_set_their_own_mode_is_refused(tmp_path, mode):
    """Every ascired-shared test is MPI-IO or HDF5 and sets its mode with
    --atomic: agent.mode changes nothing there, so no run labelled with it."""
    db = tmp_path / "m.sqlite"
    r = pario("model", "ascired-shared", "--quick", "--machine", "asci-red", "--set",
              f"agent.mode={mode}", db=db)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--set agent.mode={mode} does not act on ascired-shared" in lines[0]
    assert "--atomic" in lines[0] and "Traceback" not in r.stderr
    assert _runs(db) == 0


def test_agent_mode_acts_where_a_test_takes_the_machines_mode(tmp_path):
    """A POSIX test runs in the machine's mode: the --set is taken, and
    changes the prediction (MUNIX's token on asci-red's agents)."""
    db = tmp_path / "m.sqlite"
    plan = ["cfs", "--quick", "--tests", "partitioned", "--ranks", "4", "--blocks", "64k", "--size", "4m",
            "--machine", "asci-red"]
    for mode in ("masync", "munix"):
        r = pario("model", *plan, "--set", f"agent.mode={mode}", db=db)
        assert r.returncode == 0, r.stderr
    assert _runs(db) == 2
    rates = []
    for run_id in (1, 2):
        e = pario("export", str(run_id), "--csv", db=db)
        assert e.returncode == 0, e.stderr
        rates.append([float(r["rate_MiB_per_s"]) for r in csv.DictReader(io.StringIO(e.stdout))])
    assert len(rates[0]) == 2 and all(m > u for m, u in zip(*rates))  # the token costs MUNIX time
