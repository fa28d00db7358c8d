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
    for mode in ("masync", "munix"):  # munix is the machine's own mode: no --set for it
        r = pario("model", *plan, *(["--set", f"agent.mode={mode}"] if mode == "masync" else []), db=db)
        assert r.returncode == 0, r.stderr
    same = pario("model", *plan, "--set", "agent.mode=munix", db=db)
    assert same.returncode == 2 and same.stderr == (
        "pario: error: --set agent.mode=munix is machine asci-red's own value (munix): it changes nothing; "
        "drop it, or give another value\n"), same.stderr
    assert _runs(db) == 2
    rates = []
    for run_id in (1, 2):
        e = pario("export", str(run_id), "--csv", db=db)
        assert e.returncode == 0, e.stderr
        rates.append([float(r["rate_MiB_per_s"]) for r in csv.DictReader(io.StringIO(e.stdout))])
    assert len(rates[0]) == 2 and all(m > u for m, u in zip(*rates))  # the token costs MUNIX time


@pytest.mark.parametrize("key,value,phrase", [
    ("client.collective_overhead", "1ms", "no point reads collectively"),
    ("client.collective_write_overhead", "1ms", "no point writes collectively"),
    ("client.mpiio_open_close", "1ms", "no test uses api mpiio or hdf5"),
    ("file.lock_overhead", "1ms", "no test is --atomic"),
    ("disk.files_write_rate", "5MB/s", "no point writes a file per rank"),
])
def test_a_set_of_what_cfs_never_does_is_refused(tmp_path, key, value, phrase):
    """Tester 11: on cfs (POSIX calls into one shared file) each of these
    stored a run that predicted what the run without it did."""
    db = tmp_path / "m.sqlite"
    r = pario("model", "cfs", "--quick", "--machine", "asci-red", "--set", f"{key}={value}", db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"--set {key}={value} does not act on cfs: " in lines[0] and phrase in lines[0], lines[0]
    assert "--atomic, or --set agent.munix_overhead" not in lines[0]
    assert _runs(db) == 0


def test_a_set_of_the_mpiio_open_acts_where_a_test_uses_mpiio(tmp_path):
    db = tmp_path / "m.sqlite"
    plan = ["ascired-shared", "--quick", "--tests", "shared-relaxed", "--ranks", "2", "--blocks", "64k",
            "--size", "4m", "--machine", "asci-red"]
    assert pario("model", *plan, db=db).returncode == 0
    r = pario("model", *plan, "--set", "client.mpiio_open_close=50ms", db=db)
    assert r.returncode == 0, r.stderr
    rates = []
    for run_id in (1, 2):
        e = pario("export", str(run_id), "--csv", db=db)
        rates.append([float(x["rate_MiB_per_s"]) for x in csv.DictReader(io.StringIO(e.stdout))])
    assert all(b < a for a, b in zip(*rates))  # 50 ms of open and close a phase
