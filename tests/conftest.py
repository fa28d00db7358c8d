"""Fixtures: the real engine, launched through pario's own launcher, on
/dev/shm (tmpfs) and on a directory of the local disk."""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.engine import engine_path  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.watchdog import process_stat  # noqa: E402


@pytest.fixture(scope="session")
def engine():
    return engine_path()


@pytest.fixture(scope="session")
def launcher():
    return choose_launcher()


def _fresh_dir(parent):
    d = Path(parent) / f"pario-test-{uuid.uuid4().hex[:10]}"
    d.mkdir(parents=True)
    return d


@pytest.fixture
def shm_dir():
    d = _fresh_dir("/dev/shm")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def disk_dir():
    """A directory on a real block-device file system (not tmpfs)."""
    for parent in (os.environ.get("PARIO_TEST_DISK"), "/var/tmp", str(ROOT / "build")):
        if not parent or not os.path.isdir(parent):
            continue
        out = subprocess.run(["stat", "-f", "-c", "%T", parent], capture_output=True, text=True).stdout
        if "tmpfs" not in out:
            d = _fresh_dir(parent)
            yield d
            shutil.rmtree(d, ignore_errors=True)
            return
    pytest.skip("no disk-backed directory found: set PARIO_TEST_DISK")


class EngineRun:
    def __init__(self, proc, json_path):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.result = json.loads(Path(json_path).read_text()) if json_path and Path(json_path).exists() else None

    def phase(self, name):
        return next(p for p in self.result["phases"] if p["name"] == name)


@pytest.fixture
def run_io(engine, launcher, tmp_path):
    """run_io(ranks, *args) -> EngineRun: `pario-engine io` under mpirun."""
    counter = [0]

    def run(ranks, *args, expect_ok=True, timeout=300):
        counter[0] += 1
        json_path = tmp_path / f"result{counter[0]}.json"
        argv = launcher.command(ranks, [engine, "io", *map(str, args), "--json", str(json_path)])
        proc = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(),
                              timeout=timeout)
        r = EngineRun(proc, json_path)
        if expect_ok:
            assert proc.returncode == 0, proc.stderr
        return r

    return run


@pytest.fixture
def verify(engine):
    def run(path, seed, *extra):
        return subprocess.run([engine, "verify", "--file", str(path), "--seed", str(seed), *extra],
                              capture_output=True, text=True, timeout=120)

    return run


# Real services (Slurm, GlusterFS, ...) for the tests marked `integration`.
from services.fixtures import gluster_volumes, s3_server, slurm_cluster  # noqa: E402,F401


@pytest.fixture
def small_tmpfs():
    """small_tmpfs(size) -> a directory on a tmpfs of that size, mounted for
    this test alone and unmounted after it: a full disk on demand."""
    mounted = []

    def mount(size):
        if os.geteuid() != 0:
            pytest.skip("a small file system needs a tmpfs mounted by root: run the tests as root")
        d = Path("/var/tmp") / f"pario-full-{uuid.uuid4().hex[:10]}"
        d.mkdir()
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            d.rmdir()
            pytest.skip(f"cannot mount a tmpfs here ({p.stderr.strip()}): no full-disk test")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)
        d.rmdir()



def process_alive(pid):
    """Running or sleeping: not gone and not a zombie."""
    stat = process_stat(pid)
    return bool(stat) and stat[1][0] not in (b"Z", b"X")


def interrupt_when(argv, env, started, then, start_seconds=120, timeout=300):
    """(returncode, stdout, stderr) of `argv` run in the background while,
    once started() is true, then() acts on it (an unmount, a scancel): how
    a test makes something go away during a run.  The process is killed if
    it outlives the test's patience."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert wait_for(started, start_seconds), f"never started: {argv}"
        then()
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err


def wait_for(predicate, seconds, step=0.05):
    """predicate()'s first true value within `seconds`, else its last."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def assert_refused_in_one_line(result, experiment_file, phrase):
    """A bad experiment file: exit 2 and one line naming the file and the key."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert str(experiment_file) in lines[0] and phrase in lines[0], lines[0]
