"""The engine built against MPICH beside the Open MPI build: `--mpi`
picks the build, the launcher follows the library the binary is linked
against (mpiexec.hydra for MPICH), results name their library, and files
written under one library verify, byte for byte, under the other."""

import filecmp
import json
import os
import sqlite3
import subprocess
import sys

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
    assert f"for {title}" in r.stdout.splitlines()[0]
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
