"""Faults around `pario run`: the front end killed with SIGKILL mid-point,
a rank killed, a hung launcher, two runs into one directory (one database
and two), a database of another application, a reader that leaves early.
Whatever happens: no rank outlives the run, no scratch directory, no file
of the run left in --dir, nothing of another run touched, and one line."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, wait_for

ONE_POINT = ["--tests", "partitioned", "--ranks", "2", "--blocks", "64k", "--size", "1m",
             "--iterations", "1"]
LONG_POINT = ["--tests", "partitioned", "--ranks", "2", "--blocks", "4k", "--size", "64m",
              "--iterations", "200"]


def env_for(db):
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}


def pario(*args, db, timeout=300):
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env_for(db), timeout=timeout)


def pario_background(*args, db):
    return subprocess.Popen([sys.executable, "-m", "pario", *map(str, args)], cwd=ROOT,
                            env=env_for(db), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def engines_in(directory):
    """pids of engine ranks (and their launcher) working in directory."""
    out = subprocess.run(["pgrep", "-f", f"pario-engine io --dir {directory} "],
                         capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def scratch_of(pids):
    """The result scratch directories named on those processes' command lines."""
    found = set()
    for pid in pids:
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for i, w in enumerate(words[:-1]):
            if w == b"--json":
                found.add(Path(words[i + 1].decode()).parent)
    return found


def _is_engine(pid):
    try:
        return Path(f"/proc/{pid}/exe").resolve().name == "pario-engine"
    except OSError:
        return False


def test_sigkill_of_pario_takes_ranks_files_and_scratch_with_it(shm_dir, tmp_path):
    run = pario_background("run", "cfs", "--dir", shm_dir, *LONG_POINT, db=tmp_path / "r.sqlite")
    try:
        pids = wait_for(lambda: len(engines_in(shm_dir)) >= 3 and engines_in(shm_dir), 60)
        assert pids, "the point never started"
        scratch = scratch_of(pids)
        assert scratch and all(s.is_dir() for s in scratch)
        assert wait_for(lambda: os.listdir(shm_dir), 30)  # the engine's file is there
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=10)
        assert wait_for(lambda: not engines_in(shm_dir), 30), "ranks outlived pario"
        assert wait_for(lambda: not any(s.exists() for s in scratch), 10), "scratch outlived pario"
        assert wait_for(lambda: os.listdir(shm_dir) == [], 10), os.listdir(shm_dir)
    finally:
        if run.poll() is None:
            run.kill()
        for pid in engines_in(shm_dir):
            os.kill(pid, signal.SIGKILL)
    # the run is shown as incomplete, its database readable
    r = pario("list", db=tmp_path / "r.sqlite")
    assert r.returncode == 0 and "incomplete" in r.stdout


def test_a_killed_rank_fails_its_point_and_the_run_exits_3(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    run = pario_background("run", "cfs", "--dir", shm_dir, *LONG_POINT, db=db)
    try:
        def both_ranks():
            ranks = [p for p in engines_in(shm_dir) if _is_engine(p)]
            return ranks if len(ranks) == 2 else None

        ranks = wait_for(both_ranks, 60)
        assert ranks, "the ranks never started"
        time.sleep(0.5)
        os.kill(max(ranks), signal.SIGKILL)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 3, err
    assert "Traceback" not in err and "1 point(s) failed" in out
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM points").fetchall() == [("failed",)]
    assert con.execute("SELECT status FROM runs").fetchall() == [("complete",)]
    assert os.listdir(shm_dir) == []


def test_a_hung_launcher_is_killed_at_the_timeout(shm_dir, tmp_path):
    hang = tmp_path / "hang.sh"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    db = tmp_path / "r.sqlite"
    t = time.monotonic()
    r = pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, "--timeout", "3",
              "--launcher-template", f"{hang} {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert time.monotonic() - t < 60  # the probe of the template and the point are both bounded
    con = sqlite3.connect(db)
    (error,) = con.execute("SELECT error FROM points").fetchone()
    assert "timed out after 3 s" in error
    assert con.execute("SELECT status FROM runs").fetchone() == ("complete",)
    assert not subprocess.run(["pgrep", "-f", str(hang)], capture_output=True).stdout


@pytest.mark.parametrize("databases", [1, 2])
def test_two_runs_into_one_directory_never_touch_each_others_files(shm_dir, tmp_path, databases):
    dbs = [tmp_path / "a.sqlite", tmp_path / ("b.sqlite" if databases == 2 else "a.sqlite")]
    args = ["run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1,2",
            "--blocks", "64k", "--size", "1m", "--iterations", "2", "--verify"]
    runs = [pario_background(*args, db=db) for db in dbs]
    results = [r.communicate(timeout=300) for r in runs]
    for r, (out, err) in zip(runs, results):
        assert r.returncode == 0, err  # both complete: names are unique per run
    for db in set(dbs):
        con = sqlite3.connect(db)
        statuses = {s for (s,) in con.execute("SELECT status FROM points")}
        assert statuses == {"ok"}
    assert os.listdir(shm_dir) == []


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_a_database_of_another_application_is_refused_and_left_unchanged(shm_dir, tmp_path, journal):
    """In WAL mode too (tester 8, item 17: the read-only look at it left a
    -wal and -shm beside it)."""
    other = tmp_path / "app.sqlite"
    con = sqlite3.connect(other)
    con.execute(f"PRAGMA journal_mode={journal}")
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO customers(name) VALUES ('Ada')")
    con.commit()
    con.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    for args in (["run", "cfs", "--dir", shm_dir, *ONE_POINT, "--db", other],
                 ["list", "--db", other], ["show", "--db", other]):
        r = pario(*args, db=tmp_path / "unused.sqlite")
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "another application" in lines[0], r.stderr
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]  # no -wal, no -shm
    assert os.listdir(shm_dir) == []


def test_show_into_a_pipe_that_closes_early_ends_quietly(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    assert pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, db=db).returncode == 0
    # `pario show | head -1`, made certain: the reader is gone before the first write
    read_end, write_end = os.pipe()
    os.close(read_end)
    p = subprocess.run([sys.executable, "-m", "pario", "show"], cwd=ROOT, env=env_for(db),
                       stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write_end)
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
    assert p.stderr == ""


def test_out_that_is_a_file_is_refused_before_anything_runs(shm_dir, tmp_path):
    a_file = tmp_path / "plots"
    a_file.write_text("not a directory")
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, "--out", a_file, db=db)
    assert r.returncode == 2 and "--out" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not db.exists()  # refused before the run was stored


def test_a_template_whose_program_is_missing_leaves_no_running_run(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    for template in ("no-such-launcher -n {ranks} {engine}", "mpirun -n {ranks} {engine} '"):
        r = pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, "--launcher-template", template, db=db)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not db.exists()
