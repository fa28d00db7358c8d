"""Tester 14's findings about the engine run directly, as IOR and fio are:
a one-process command started as several copies, and bonnie's seekers
outliving a bonnie killed with SIGKILL.  (A striped kept file cut short:
test_striping.py.)"""

import os
import signal
import subprocess
import time

from conftest import wait_for


def _seekers():
    """pids of processes running pario-engine bonnie."""
    out = subprocess.run(["pgrep", "-f", "pario-engine bonnie --dir"], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def test_a_one_process_command_started_as_several_copies_is_refused_once(engine, launcher, shm_dir):
    """Item 2: `mpirun -np 2 pario-engine bonnie` ran two bonnies side by
    side, each measuring the other; `check` accepted it at 2 ranks."""
    r = subprocess.run(launcher.command(2, [engine, "bonnie", "--dir", str(shm_dir), "--size", "1m"]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=60)
    said = [l for l in r.stderr.splitlines() if l.startswith("pario-engine:")]
    assert r.returncode != 0 and said == [
        "pario-engine: error: bonnie runs as one process, but 2 copies were started: run it without "
        "mpirun, or with one rank (-np 1)"], r.stderr
    assert "Sequential" not in r.stdout and os.listdir(shm_dir) == []
    checked = subprocess.run([engine, "check"], input=f"2\tbonnie\t--dir\t{shm_dir}\n1\tbonnie\t--dir\t{shm_dir}\n",
                             capture_output=True, text=True, timeout=60)
    assert checked.stdout.splitlines() == [
        "2\tbonnie runs as one process, but 2 copies were started: run it without mpirun, or with one rank "
        "(-np 1)", "0\t"], checked.stdout


def test_bonnie_killed_with_sigkill_leaves_no_seeker_running(engine, disk_dir):
    """Item 3: the forked seekers were re-parented to init and read on."""
    before = _seekers()
    p = subprocess.Popen([engine, "bonnie", "--dir", str(disk_dir), "--size", "64m", "--chunk", "8k",
                          "--seeks", "100000000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the seek test has begun when bonnie's own process has children
        assert wait_for(lambda: len(_seekers() - before) > 1, 60), "no seeker started"
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        assert wait_for(lambda: not (_seekers() - before), 10), _seekers() - before
    finally:
        for pid in _seekers() - before:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    for f in os.listdir(disk_dir):  # SIGKILL runs no clean-up: the file is left, as documented
        os.unlink(disk_dir / f)


def test_json_dash_is_refused_not_written_as_a_file_named_dash(engine, shm_dir, tmp_path):
    """Item 4: `--json -` wrote a file called '-' (fio's users read it as stdout)."""
    r = subprocess.run([engine, "io", "--dir", str(shm_dir), "--size", "1m", "--json", "-"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and r.stderr == (
        "pario-engine: error: --json -: the result document goes to a file, not standard output (which "
        "carries the tables): give a file name, e.g. --json result.json\n"), r.stderr
    assert os.listdir(tmp_path) == [] and os.listdir(shm_dir) == []
