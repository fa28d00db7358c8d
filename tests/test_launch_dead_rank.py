"""A rank that dies while its launcher keeps running (Open MPI 4.1's
mpirun, a rank killed during MPI_Init: the rank stays mpirun's zombie and
mpirun sleeps on).  pario notices a process the launcher started lying
dead and unreaped for launch.DEAD_CHILD_GRACE seconds and fails the point
in one line, long before --timeout; a child the launcher reaps, even after
a few seconds, is no alarm, nor a dead child that is not a rank (a launch
script's own background job, inherited by the mpirun it exec'd).  The launchers here are fake: scripts given as
--launcher-template."""

import os
import shutil
import sqlite3
import subprocess
import sys
import time

from conftest import ROOT, process_alive as _alive, wait_for

sys.path.insert(0, str(ROOT / "src"))
from pario import launch  # noqa: E402
from pario.launch import DEAD_CHILD_GRACE, Launcher  # noqa: E402
from pario.watchdog import session_members as _session  # noqa: E402

ONE_POINT = ["--tests", "partitioned", "--ranks", "2", "--blocks", "64k", "--size", "1m",
             "--iterations", "1"]

# Forks a rank that exits at once (a child named as the engine, argv[2],
# as a rank is once Open MPI has started it) and is never reaped, starts a
# live "rank" in a process group of its own (as Open MPI does), writes the
# three pids to PIDS, then sleeps: the hang of the bug.  With {rank} False
# the dead child keeps the script's name: a background job, not a rank.
NEVER_REAPS = """\
import os, subprocess, sys, time
if sys.argv[1:] == ["--version"]:   # pario asks a template's program which MPI it is
    sys.exit(0)
child = os.fork()
if child == 0:
    if {rank}:
        with open("/proc/self/comm", "w") as comm:
            comm.write(os.path.basename(sys.argv[2]))
    os._exit(0)
rank = subprocess.Popen(["sleep", "600"], preexec_fn=os.setpgrp)
with open({pids!r}, "w") as f:
    f.write(f"{{os.getpid()}} {{child}} {{rank.pid}}")
time.sleep(600)
"""

# Forks a child that exits at once, leaves it a zombie for 3 s (several of
# pario's looks), reaps it, outlives the grace period, then runs the real
# launch line it was given.
REAPS = """\
import os, sys, time
if sys.argv[1:] == ["--version"]:
    os.execv({real!r}, [{real!r}, "--version"])   # so pario knows the MPI (root's settings)
child = os.fork()
if child == 0:
    os._exit(0)
time.sleep(3)
state = open(f"/proc/{{child}}/stat").read().rsplit(")", 1)[1].split()[0]
os.waitpid(child, 0)
with open({seen!r}, "w") as f:
    f.write(state)
time.sleep({after})
os.execv(sys.argv[1], sys.argv[1:])
"""


def _script(path, text):
    path.write_text(f"#!{sys.executable}\n{text}")
    path.chmod(0o755)
    return path


def _pario(*args, db, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


def test_a_dead_unreaped_rank_fails_the_point_long_before_the_timeout(shm_dir, tmp_path):
    pids = tmp_path / "pids"
    fake = _script(tmp_path / "fakempirun", NEVER_REAPS.format(pids=str(pids), rank=True))
    db = tmp_path / "r.sqlite"
    t = time.monotonic()
    r = _pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, "--timeout", "120",
               "--launcher-template", f"{fake} {{ranks}} {{engine}} {{engine_args}}", db=db)
    elapsed = time.monotonic() - t
    launcher_pid, child, rank = map(int, pids.read_text().split())
    try:
        assert r.returncode == 3, r.stderr
        assert "Traceback" not in r.stderr and "1 point(s) failed" in r.stdout
        assert DEAD_CHILD_GRACE <= elapsed < DEAD_CHILD_GRACE + 30, elapsed  # not the 120 s timeout
        con = sqlite3.connect(db)
        (status, error), = con.execute("SELECT status, error FROM points").fetchall()
        assert status == "failed" and "\n" not in error
        assert error.startswith(f"a rank (pario-engine, process {child}) ended while fakempirun kept "
                                f"running; fakempirun did not notice and was stopped after "
                                f"{DEAD_CHILD_GRACE:g} s"), error
        assert "run the point again" in error
        assert "point failed: " in r.stderr and error in r.stderr  # the same line on the terminal
        assert con.execute("SELECT status FROM runs").fetchone() == ("complete",)
        # the session is gone: the launcher, its live rank (own process group), the zombie
        assert wait_for(lambda: not any(map(_alive, (launcher_pid, child, rank))), 10)
        assert not _session(launcher_pid)
        assert os.listdir(shm_dir) == []
    finally:
        for pid in (rank, launcher_pid):
            if _alive(pid):
                os.kill(pid, 9)


def test_a_child_the_launcher_reaps_is_no_alarm(shm_dir, tmp_path):
    real = shutil.which("mpirun")
    seen = tmp_path / "seen"
    after = DEAD_CHILD_GRACE + 3  # the launcher runs on past the grace period
    fake = _script(tmp_path / "fakempirun", REAPS.format(real=real, seen=str(seen), after=after))
    db = tmp_path / "r.sqlite"
    t = time.monotonic()
    r = _pario("run", "cfs", "--dir", shm_dir, *ONE_POINT, "--launcher-template",
               f"{fake} {real} --oversubscribe -np {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 0, r.stderr
    assert seen.read_text() == "Z"  # pario had a zombie child to look at, 3 s long
    assert time.monotonic() - t > 3 + after
    con = sqlite3.connect(db)
    assert con.execute("SELECT status, error FROM points").fetchall() == [("ok", None)]
    assert os.listdir(shm_dir) == []


def _fake_launcher(tmp_path, rank=True):
    pids = tmp_path / "pids"
    fake = _script(tmp_path / "fakempirun", NEVER_REAPS.format(pids=str(pids), rank=rank))
    return Launcher("template", [], template=[str(fake), "{ranks}", "{engine}", "{engine_args}"]), pids


def test_the_grace_period_is_the_modules_constant(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "DEAD_CHILD_GRACE", 1.0)
    launcher, pids = _fake_launcher(tmp_path)
    outcome = launcher.run(1, ["/bin/true"], timeout=60)
    assert not outcome.timed_out and outcome.seconds < 10, outcome
    assert "was stopped after 1 s" in outcome.stopped
    assert not _session(int(pids.read_text().split()[0]))


def test_without_proc_pario_waits_for_the_timeout_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "DEAD_CHILD_GRACE", 1.0)
    monkeypatch.setattr(launch, "_PROC", str(tmp_path / "no-proc"))
    launcher, pids = _fake_launcher(tmp_path)
    outcome = launcher.run(1, ["/bin/true"], timeout=4)
    assert outcome.timed_out and not outcome.stopped and 4 <= outcome.seconds < 15, outcome
    assert not _session(int(pids.read_text().split()[0]))


def test_a_dead_child_that_is_not_a_rank_is_no_alarm(tmp_path, monkeypatch):
    """A launch script's background job that ended before it exec'd mpirun
    is mpirun's zombie for good (mpirun never collects what it did not
    start): not a rank, so the point runs on to its own end (here the
    timeout, well past the grace period)."""
    monkeypatch.setattr(launch, "DEAD_CHILD_GRACE", 1.0)
    launcher, pids = _fake_launcher(tmp_path, rank=False)
    outcome = launcher.run(1, ["/bin/true"], timeout=5)
    assert outcome.timed_out and not outcome.stopped and outcome.seconds >= 5, outcome
    assert not _session(int(pids.read_text().split()[0]))


def test_a_dead_rank_below_a_launch_script_that_does_not_exec_is_found(tmp_path, monkeypatch):
    """A template whose program runs the launcher as its child (a shell
    script with a line after the launch, as MPICH's mpiexec.hydra runs
    ranks under hydra_pmi_proxy): the dead rank is the launcher's
    grandchild, and still noticed within the grace period."""
    monkeypatch.setattr(launch, "DEAD_CHILD_GRACE", 1.0)
    pids = tmp_path / "pids"
    fake = _script(tmp_path / "fakempirun", NEVER_REAPS.format(pids=str(pids), rank=True))
    wrapper = tmp_path / "launch.sh"
    wrapper.write_text('#!/bin/sh\n[ "$1" = --version ] && exit 0\n"$@"\nstatus=$?\nexit $status\n')
    wrapper.chmod(0o755)
    launcher = Launcher("template", [], template=[str(wrapper), str(fake), "{ranks}", "{engine}",
                                                  "{engine_args}"])
    outcome = launcher.run(1, ["/bin/true"], timeout=60)
    fake_pid, child, _ = map(int, pids.read_text().split())
    assert not outcome.timed_out and outcome.seconds < 10, outcome
    assert f"process {child})" in outcome.stopped and "was stopped after 1 s" in outcome.stopped
    assert not _session(fake_pid)
