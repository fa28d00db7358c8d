"""The engine built against MPICH beside the Open MPI build: `--mpi`
picks the build, the launcher follows the library the binary is linked
against (mpiexec.hydra for MPICH), results name their library, and files
written under one library verify, byte for byte, under the other."""

import filecmp
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "src"))
from pario.engine import engine_mpi, engine_path  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.mpi import FLAVOURS, build_path  # noqa: E402


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def flavour(request):
    path = build_path(ROOT, request.param)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built: run 'make build' (builds both MPI flavours)", pytrace=False)
    return request.param


def pario(*args, db):
    env = {k: v for k, v in os.environ.items() if k != "PARIO_ENGINE"}
    env.update(PYTHONPATH=str(ROOT / "src"), PARIO_DB=str(db))
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600)


def test_quick_preset_names_its_library_and_verifies(flavour, shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--quick", "--dir", shm_dir, "--mpi", flavour, "--ranks", "1,3",
              "--blocks", "64k", "--size", "3m", "--iterations", "1", "--verify", db=db)
    assert r.returncode == 0, r.stderr
    title = FLAVOURS[flavour].title
    # the launcher's first line, once the plan's own lines are said
    assert f"for {title}" in next(l for l in r.stdout.splitlines() if l.startswith("launcher:")), r.stdout
    rows = sqlite3.connect(db).execute("SELECT status, command, result_json FROM points").fetchall()
    assert len(rows) == 5 * 2
    for status, command, doc in rows:
        command, doc = json.loads(command), json.loads(doc)
        assert status == "ok"
        assert os.path.basename(command[0]) in FLAVOURS[flavour].launchers
        assert os.path.realpath(command[command.index("io") - 1]) == str(build_path(ROOT, flavour))
        assert doc["mpi"]["library"].startswith(title)
        other = [f.title for f in FLAVOURS.values() if f.name != flavour][0]
        assert other not in doc["mpi"]["library"]
        assert doc["verification"]["requested"] and doc["verification"]["ok"]
        assert doc["verification"]["bytes_checked"] > 0
    assert os.listdir(shm_dir) == []


def write_kept(flavour, directory, name, tmp_path, api="posix"):
    engine = engine_path(flavour)
    launcher = choose_launcher(mpi=engine_mpi(engine, flavour))
    argv = launcher.command(3, [engine, "io", "--dir", str(directory), "--api", api, "--layout", "interleaved",
                                "--block", "64k", "--size", "3m", "--phases", "write",
                                "--iterations", "1", "--keep", "--name", name, "--seed", "7",
                                "--json", str(tmp_path / f"{name}.json")])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / f"{name}.json").read_text())
    assert doc["mpi"]["ranks"] == 3  # one job of 3 ranks, not 3 singletons
    return directory / name


@pytest.mark.parametrize("api", ["posix", "mpiio"])  # mpiio: Open MPI's OMPIO against MPICH's ROMIO
def test_files_of_one_library_verify_under_the_other(shm_dir, tmp_path, api):
    for f in FLAVOURS:
        if not os.access(build_path(ROOT, f), os.X_OK):
            pytest.fail(f"{build_path(ROOT, f)} is not built: run 'make build'", pytrace=False)
    files = {f: write_kept(f, shm_dir, f"kept-{f}", tmp_path, api) for f in FLAVOURS}
    assert filecmp.cmp(files["openmpi"], files["mpich"], shallow=False)
    for writer, path in files.items():
        for checker in FLAVOURS:
            p = subprocess.run([engine_path(checker), "verify", "--file", str(path), "--seed", "7"],
                               capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, (writer, checker, p.stdout, p.stderr)
    # and a wrong seed is caught, so the checks above could fail
    p = subprocess.run([engine_path("mpich"), "verify", "--file", str(files["openmpi"]), "--seed", "8"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0


def test_mismatched_engine_and_mpi_is_refused(tmp_path, shm_dir):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(tmp_path / "r.sqlite"),
           "PARIO_ENGINE": str(build_path(ROOT, "openmpi"))}
    p = subprocess.run([sys.executable, "-m", "pario", "run", "cfs", "--dir", str(shm_dir), "--mpi", "mpich"],
                       capture_output=True, text=True, env=env, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "--mpi mpich: the engine" in lines[0] and "is built with Open MPI" in lines[0]
    assert not (tmp_path / "r.sqlite").exists()


def test_unknown_mpi_is_refused(tmp_path, shm_dir):
    p = pario("run", "cfs", "--dir", shm_dir, "--mpi", "lam", db=tmp_path / "r.sqlite")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "--mpi: invalid choice: 'lam'" in lines[0]


def test_the_probe_runs_under_mpich(shm_dir, tmp_path):
    """Tester 8, item 8: every point of the MPICH probe died in
    PMPI_T_cvar_get_num, where the token hand-over asked MPICH's tool
    interface a second time after finalizing it."""
    db = tmp_path / "p.sqlite"
    r = pario("probe", "--dir", shm_dir, "--quick", "--size", "8m", "--stream-blocks", "4k,64k,1m",
              "--mpi", "mpich", db=db)
    assert r.returncode == 0, r.stderr
    rows = sqlite3.connect(db).execute("SELECT status, error, result_json FROM points").fetchall()
    assert [(s, e) for s, e, _ in rows] == [("ok", None)] * 3
    for *_, doc in rows:
        doc = json.loads(doc)
        assert doc["mpi"]["library"].startswith("MPICH")
        assert doc["components"]["token_pass"]["seconds"]["best"] > 0  # the rows that crashed
    r = pario("model", "cfs", "--quick", "--tests", "partitioned", "--machine", "probe:1", db=db)
    assert r.returncode == 0, r.stderr
    assert os.listdir(shm_dir) == []


def _rank_of(pid):
    """The MPI rank of a running process, from its launcher's environment."""
    try:
        env = dict(v.split("=", 1) for v in open(f"/proc/{pid}/environ").read().split("\0") if "=" in v)
    except OSError:
        return None
    rank = env.get("OMPI_COMM_WORLD_RANK", env.get("PMI_RANK"))
    return int(rank) if rank is not None else None


def _engine_rank_pid(directory, rank, proc):
    """The process id of `rank` of the engine writing in `directory`, once
    it has started writing there (MPI is up then, and its handlers set)."""
    while proc.poll() is None:
        if not os.listdir(directory):
            time.sleep(0.05)
            continue
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = open(f"/proc/{entry}/cmdline").read().split("\0")
            except OSError:
                continue
            if os.path.basename(argv[0]) == "pario-engine" and str(directory) in argv and \
                    _rank_of(entry) == rank:
                return int(entry)
        time.sleep(0.05)
    pytest.fail(f"pario ended before rank {rank} of the engine was seen: {proc.communicate()}")


def test_a_crashed_rank_is_named_with_its_signal(flavour, shm_dir, tmp_path):
    """Tester 8, item 8: the error stored for a crashed engine was whatever
    line came last (MPICH's banner, a backtrace frame, Open MPI's 'Per
    user-direction, the job has been aborted.').  A rank killed by SIGSEGV
    fails its point with the rank and the signal named, and the run goes on."""
    db = tmp_path / "c.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "PARIO_ENGINE"}
    env.update(PYTHONPATH=str(ROOT / "src"), PARIO_DB=str(db))
    proc = subprocess.Popen([sys.executable, "-m", "pario", "run", "cfs", "--quick", "--mpi", flavour,
                             "--dir", str(shm_dir), "--tests", "partitioned", "--ranks", "2",
                             "--blocks", "4k,64k", "--size", "512m", "--iterations", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        os.kill(_engine_rank_pid(shm_dir, 1, proc), signal.SIGSEGV)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    rows = sqlite3.connect(db).execute("SELECT status, error FROM points ORDER BY id").fetchall()
    assert rows[0] == ("failed", "rank 1 crashed with signal 11 (SIGSEGV, segmentation fault): a fault "
                                 "in pario-engine or the MPI library; run the point again, and report "
                                 "it if it repeats")
    assert rows[1] == ("ok", None)
    assert os.listdir(shm_dir) == []


def test_a_rank_killed_from_outside_is_named_by_the_launchers_report(flavour, tmp_path):
    """A rank the engine could not speak for (SIGKILL, as the kernel's
    out-of-memory killer sends): the error is the launcher's report of the
    signal, not its last line (a banner, or 'Per user-direction, ...')."""
    from pario.runner import _engine_error
    launcher = choose_launcher(mpi=flavour)
    script = ("import os, signal, time\n"
              "rank = os.environ.get('OMPI_COMM_WORLD_RANK', os.environ.get('PMI_RANK'))\n"
              "if rank == '1': os.kill(os.getpid(), signal.SIGKILL)\n"
              "time.sleep(2)\n")
    outcome = launcher.run(2, [sys.executable, "-c", script], timeout=120)
    assert outcome.returncode != 0
    error = _engine_error(outcome)
    if flavour == "openmpi":
        assert re.fullmatch(r"rank 1 on \S+ ended by signal 9 \(Killed\)", error), outcome.stderr
    else:
        assert re.fullmatch(r"the rank with process id \d+ on \S+ ended by signal 9 \(Killed; MPICH's "
                            r"launcher names no rank\)", error), outcome.stderr
