"""--background N: loader processes run on the node during every phase,
the load is recorded as the ASCI Red report defines it (a known task's
time under load over its time alone), and nothing of the loaders outlives
the run: no process, no file, even when the engine is killed."""

import os
import signal
import subprocess
import time
import uuid

import pytest


def processes_with(word):
    """PIDs whose command line contains word (the engine and its loaders)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if word.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("kind", ["cpu", "write"])
def test_load_is_recorded_and_loaders_leave_nothing(shm_dir, run_io, kind):
    name = f"bg-{uuid.uuid4().hex[:8]}"
    r = run_io(2, "--dir", shm_dir, "--block", "1m", "--size", "32m", "--iterations", 1,
               "--background", 2, "--background-kind", kind, "--name", name)
    bg = r.result["params"]["background"]
    assert bg == {"loaders_per_node": 2, "kind": kind, "known_task_alone_seconds": bg["known_task_alone_seconds"]}
    assert bg["known_task_alone_seconds"] > 0
    loads = [it["background_load"] for p in r.result["phases"] for it in p["iterations"]]
    assert len(loads) == 2 and all(x is not None for x in loads)
    if kind == "cpu":
        # two spinning loaders beside two ranks on this node: the known task must slow down
        assert max(loads) > 1.2, loads
    assert os.listdir(shm_dir) == []
    assert processes_with(name) == []


def test_no_background_records_null(shm_dir, run_io):
    r = run_io(1, "--dir", shm_dir, "--block", "1m", "--size", "4m", "--iterations", 1)
    assert r.result["params"]["background"] is None
    assert all(it["background_load"] is None for p in r.result["phases"] for it in p["iterations"])


def test_loaders_die_with_a_killed_engine(engine, shm_dir):
    name = f"bg-{uuid.uuid4().hex[:8]}"
    p = subprocess.Popen([engine, "io", "--dir", str(shm_dir), "--block", "1m", "--size", "64m",
                          "--iterations", "100000", "--background", "2", "--name", name],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while len(processes_with(name)) < 3 and time.time() < deadline:
            time.sleep(0.05)
        assert len(processes_with(name)) >= 3, "loaders never started"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    deadline = time.time() + 10
    while processes_with(name) and time.time() < deadline:
        time.sleep(0.05)
    assert processes_with(name) == []
    # the killed run's own data file is the front end's to clean; no loader file is there
    assert not [f for f in os.listdir(shm_dir) if f.startswith("pario-load")]


def test_a_loader_that_dies_mid_run_fails_the_run_in_one_line(engine, shm_dir):
    """A phase that ran with fewer loaders than the run says is no point of
    Figure 3.  A loader's file stops at a 16 MiB file-size limit (it
    streams a 64 MiB ring; the run's own file is 4 MiB), so the kernel
    kills it the way any outside cause would: the run must fail naming
    the loader, not print a load measured without it."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))

    p = subprocess.run([engine, "io", "--dir", str(shm_dir), "--block", "1m", "--size", "4m",
                        "--iterations", "50", "--phases", "write", "--no-fsync", "--background", "1",
                        "--background-kind", "write"], preexec_fn=limit,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, (p.returncode, p.stdout[-500:], p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "write loader 0 was killed during the phase" in lines[0], lines
    assert "File size limit exceeded" in lines[0]
    assert "loader(s) per node" not in p.stdout
    assert os.listdir(shm_dir) == []


BAD = [
    (["--background", "0"], "--background '0'"),
    (["--background", "65"], "more than 64 loaders"),
    (["--background", "1", "--background-kind", "disk"], "--background-kind 'disk'"),
    (["--background-kind", "cpu"], "--background-kind needs --background N"),
]


@pytest.mark.parametrize("args,phrase", BAD)
def test_background_bad_input(engine, shm_dir, args, phrase):
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), "--size", "1m", "--block", "64k", *args],
                       capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and phrase in p.stderr
    assert os.listdir(shm_dir) == []
