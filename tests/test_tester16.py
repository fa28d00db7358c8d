"""Tester 16's items on file systems that go away during a run, through
the real engine and pario: a --dir unmounted mid-run (the file is left on
the file system that went, and said so, not "removed by someone else");
a mount that stopped answering (ENOTCONN from a GlusterFS client that
died) is a mount to check, not a directory to create."""

import os
import shutil
import sqlite3
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, interrupt_when, wait_for


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def engine_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine")]


def test_a_dir_unmounted_mid_run_names_the_file_left_on_it(engine, launcher, small_tmpfs):
    mounted = small_tmpfs("300m")
    argv = launcher.command(2, [engine, "io", "--dir", str(mounted), "--layout", "partitioned", "--size", "128m",
                                "--block", "64k", "--iterations", "1000"])
    code, out, err = interrupt_when(argv, launcher.environment(), lambda: any(mounted.iterdir()),
                                    lambda: subprocess.run(["umount", "-l", str(mounted)], check=True))
    lines = engine_lines(err)
    assert code == 3 and len(lines) == 1, err
    assert lines[0].endswith("is on a file system that was unmounted from its directory during the run: it "
                             "is left there; remove it once that file system is mounted again"), lines
    assert f" {mounted}/pario-io." in lines[0] and "removed during the run by someone else" not in err


@pytest.fixture
def dead_mount(gluster_volumes, tmp_path):
    """A FUSE mount of the distributed volume whose client was killed:
    every look at it answers ENOTCONN, as a network mount that stopped
    answering does."""
    point = Path("/var/tmp") / f"pario-dead-{uuid.uuid4().hex[:10]}"
    point.mkdir()
    pid_file = tmp_path / "client.pid"
    subprocess.run(["glusterfs", "--volfile-server=127.0.0.1", f"--volfile-id={gluster_volumes.volume('dist')}",
                    f"--pid-file={pid_file}", "-l", str(tmp_path / "client.log"), str(point)], check=True)
    try:
        assert wait_for(lambda: os.path.ismount(point) and pid_file.exists(), 30), "no mount"
        os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        assert wait_for(lambda: _unreachable(point), 10)
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
        point.rmdir()


def _unreachable(path):
    try:
        os.stat(path)
    except OSError as exc:
        return exc.strerror == "Transport endpoint is not connected"
    return False


def test_a_mount_that_stopped_answering_is_a_mount_to_check(dead_mount, engine, launcher, tmp_path):
    fix = "Transport endpoint is not connected: check the file system mounted there, or choose another directory"
    for argv in ([engine, "io", "--dir", str(dead_mount), "--size", "1m"],
                 [engine, "io", "--dir", str(dead_mount / "sub"), "--size", "1m"],
                 [engine, "laplace", "--dir", str(dead_mount)],
                 [engine, "io", "--dir", str(tmp_path), "--size", "1m", "--json", str(dead_mount / "r.json")]):
        p = subprocess.run(launcher.command(1, argv), capture_output=True, text=True, env=launcher.environment(),
                           timeout=60)
        lines = engine_lines(p.stderr)
        assert p.returncode == 2 and len(lines) == 1 and lines[0].endswith(fix), p.stderr
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--quick", "--dir", dead_mount, db=db)
    assert r.returncode == 2 and r.stderr == f"pario: error: --dir {dead_mount}: {fix}\n", r.stderr
    assert not db.exists()
    # reading commands with a file on it (tester 18: tracebacks)
    model = pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--machine", "ipsc860",
                  "--out", tmp_path / "plots", db=db)
    assert model.returncode == 0, model.stderr
    for args, where in ((["export", "1", "--csv", "--out", dead_mount / "e.csv"], dead_mount),
                        (["report", "1", "--out", dead_mount / "r.html"], dead_mount)):
        r = pario(*args, db=db)
        assert r.returncode == 2 and r.stderr == f"pario: error: {where}: {fix}\n", (args, r.stderr)
    r = pario("plot", "1", db=dead_mount / "g.sqlite")
    assert r.returncode == 2 and r.stderr == f"pario: error: {dead_mount / 'g.sqlite'}: {fix}\n", r.stderr


def test_plot_beside_a_database_on_a_read_only_mount_refuses_before_its_tables(small_tmpfs, shm_dir, tmp_path):
    """Item 11: the tables were printed, then 'cannot make the directory
    (Read-only file system): remove it or give --out DIR' of a folder
    that did not exist."""
    mounted = small_tmpfs("16m")
    db = mounted / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots", db=db)
    assert r.returncode == 0, r.stderr
    subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
    p = pario("plot", "1", db=db)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr == (f"pario: error: {mounted}/plots: cannot make the directory (Read-only file system): "
                        "give --out DIR\n"), p.stderr
    assert pario("plot", "1", "--out", tmp_path / "again", db=db).returncode == 0  # elsewhere, it draws


@pytest.mark.parametrize("program", ["mpirun", "mpirun.openmpi", "mpiexec.openmpi"])
def test_a_launcher_refusal_is_named_by_its_cause_not_its_last_line(shm_dir, tmp_path, program):
    """Item 6: Open MPI's refusal to run as root reached the stored point as
    its last line, 'We reiterate our advice against doing so - please
    proceed at your own risk.'  (Open MPI names itself as it was called:
    'mpirun.openmpi has detected ...', tester 18.)"""
    if os.geteuid() != 0:
        pytest.skip("Open MPI refuses root only to root")
    if not shutil.which(program):
        pytest.skip(f"no {program} here")
    wrapper = tmp_path / "drops-the-variables.sh"
    wrapper.write_text("#!/bin/sh\nexec env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM "
                       f"{program} \"$@\"\n")
    wrapper.chmod(0o755)
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots",
              "--launcher-template", f"{wrapper} -np {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 3, r.stderr
    said = ("Open MPI's launcher refused to run as root (OMPI_ALLOW_RUN_AS_ROOT=1 and "
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, which pario sets, did not reach it): keep both in the launch's "
            "environment, or run pario as another user")
    assert f"point failed: partitioned ranks=1 block=64 KiB: {said}" in r.stdout + r.stderr, r.stdout
    assert "reiterate" not in r.stdout + r.stderr


def test_an_engine_file_pario_cannot_remove_is_said_not_left_silently(disk_dir, tmp_path):
    """Tester 19, item 1: a directory made immutable mid-run kept a 22 MB
    file of the point's engine, exit 0, no word: the front end's clean-up
    swallowed the failed unlink."""
    if subprocess.run(["chattr", "-i", str(disk_dir)], capture_output=True).returncode != 0:
        pytest.skip("chattr does not work on this file system")
    # the launch: the engine starts, its file appears, the directory turns
    # immutable and the ranks are killed, leaving the file to pario
    wrapper = tmp_path / "freeze-then-kill.sh"
    wrapper.write_text(f"""#!/bin/sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np "$@" &
launched=$!
for i in $(seq 600); do ls {disk_dir} | grep -q . && break; sleep 0.05; done
chattr +i {disk_dir}
pkill -9 -f "pario-engine io --dir {disk_dir}"
wait $launched
exit 137
""")
    wrapper.chmod(0o755)
    db = tmp_path / "r.sqlite"
    try:
        r = pario("run", "cfs", "--dir", disk_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "4k",
                  "--size", "256m", "--iterations", "20", "--out", tmp_path / "plots",
                  "--launcher-template", f"{wrapper} {{ranks}} {{engine}} {{engine_args}}", db=db)
        left = sorted(disk_dir.iterdir())
    finally:
        subprocess.run(["chattr", "-i", str(disk_dir)], check=True)
    assert r.returncode == 3 and len(left) == 1, (r.returncode, r.stdout, r.stderr)
    said = (f"{left[0]} is this point's engine's file, but it could not be removed (Operation not permitted): "
            "remove it yourself")
    assert f"warning: {said}" in r.stdout + r.stderr, r.stdout + r.stderr
    error = sqlite3.connect(db).execute("SELECT error FROM points").fetchone()[0]
    assert error.endswith(f"; {said}"), error


@pytest.mark.parametrize("version,dropped", [
    (2, [("runs", "planned_points")]),
    # tester 21, item 3: show and report asked for runs.kind (the probe
    # of the run's target), which a schema-1 database lacks
    (1, [("runs", "planned_points"), ("runs", "kind"), ("runs", "experiment_toml"),
         ("runs", "experiment_origin"), ("points", "params_json")]),
])
def test_an_older_database_on_a_read_only_mount_is_read_as_it_is(small_tmpfs, shm_dir, tmp_path, version,
                                                                  dropped):
    """Tester 18: schema 3 added runs.planned_points, and every reading
    command then tried to migrate a schema-2 database in place: on a
    read-only mount all of them failed ('attempt to write a readonly
    database'), and on a writable one `list` changed the file."""
    import hashlib

    made = tmp_path / "old.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots", db=made)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(made)  # as pario wrote it before the columns were added
    for table, column in dropped:
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    mounted = small_tmpfs("16m")
    db = mounted / "old.sqlite"
    db.write_bytes(made.read_bytes())
    subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in (["list"], ["show", "1"], ["export", "1", "--csv"], ["report", "1", "--out", tmp_path / "r.html"],
                 ["compare", "1", "1"]):
        got = pario(*args, db=db)
        assert got.returncode == 0, (args, got.stderr)
    assert "points: 1 ok\n" in pario("show", "1", db=db).stdout
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_run_whose_dir_is_unmounted_stops_before_its_next_point(small_tmpfs, tmp_path):
    """Tester 18: after a lazy umount of --dir, every later point wrote its
    whole file into the mount point on the file system below, and only
    then failed; the run went on to its end."""
    mounted = small_tmpfs("400m")
    db = tmp_path / "r.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    argv = [sys.executable, "-m", "pario", "run", "cfs", "--dir", str(mounted), "--tests", "partitioned,interleaved",
            "--ranks", "1,2", "--blocks", "4k,8k", "--size", "64m", "--iterations", "3", "--out",
            str(tmp_path / "plots")]
    code, out, err = interrupt_when(argv, env, lambda: any(mounted.iterdir()),
                                    lambda: subprocess.run(["umount", "-l", str(mounted)], check=True))
    said = [line for line in err.splitlines() if line.startswith("pario: error:")]
    assert code == 3 and len(said) == 1, (code, out, err)
    assert f"--dir {mounted} is no longer on the file system the run started on" in said[0], said
    assert "was it unmounted?" in said[0] and "marked incomplete" in said[0]
    assert list(mounted.iterdir()) == []  # nothing written on the file system below
    status, = sqlite3.connect(db).execute("SELECT status FROM runs").fetchone()
    assert status == "incomplete"


def test_ranks_started_by_the_other_library_s_launcher_are_named_so(shm_dir, tmp_path):
    """Tester 18: a template that hides its launcher (env A=1 mpiexec.hydra)
    passes the check of its program's library, and each rank came up as a
    one-rank world of its own; the point failed on 'File exists'."""
    if not shutil.which("mpiexec.hydra"):
        pytest.skip("no MPICH launcher here")
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "2", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots",
              "--launcher-template", "env A=1 mpiexec.hydra -n {ranks} {engine} {engine_args}", db=db)
    assert r.returncode == 3, r.stderr
    error = sqlite3.connect(db).execute("SELECT error FROM points").fetchone()[0]
    assert error.startswith("2 copies were started as 2 separate one-rank worlds: the launcher is not of Open MPI"), \
        error
    assert list(shm_dir.iterdir()) == []
