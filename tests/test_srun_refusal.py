"""srun outside a live Slurm allocation is refused in seconds with one
line, never left waiting on a controller (srun alone waits minutes)."""

import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT

needs_slurm_client = pytest.mark.skipif(not shutil.which("srun"),
                                        reason="Slurm's client is not installed (make deps)")


def pario_run(args, env_changes, tmp_path, drop=("SLURM_JOB_ID", "SLURM_JOBID")):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPATH=str(ROOT / "src"), PARIO_DB=str(tmp_path / "r.sqlite"), **env_changes)
    started = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pario", "run", "cfs", "--quick", "--dir", str(tmp_path),
                        *args], capture_output=True, text=True, env=env, timeout=60)
    return p, time.monotonic() - started


def assert_refused(p, seconds, phrase, tmp_path, said_by="--launcher srun"):
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith(f"pario: error: {said_by}: "), lines
    assert phrase in lines[0], lines[0]
    assert seconds < 10, seconds  # generous for a loaded machine; srun alone waits minutes
    assert not (tmp_path / "r.sqlite").exists()  # nothing stored


def dead_controller_conf(tmp_path, port):
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"ClusterName=nowhere\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={port}\n"
                    "NodeName=n1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n"
                    "PartitionName=p Nodes=n1 Default=YES\n")
    return conf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_srun_outside_a_job_is_refused(tmp_path):
    p, seconds = pario_run(["--launcher", "srun"], {}, tmp_path)
    assert_refused(p, seconds, "not inside a Slurm job", tmp_path)


@needs_slurm_client
@pytest.mark.parametrize("launcher", [["--launcher", "srun"], []], ids=["srun", "auto"])
def test_stale_job_id_with_controller_down_is_refused(tmp_path, launcher):
    conf = dead_controller_conf(tmp_path, free_port())  # nothing listens there
    p, seconds = pario_run(launcher, {"SLURM_JOB_ID": "77", "SLURM_CONF": str(conf)}, tmp_path)
    # an option the user never gave is not named (tester 16, item 10): the variable that chose srun is
    said_by = "--launcher srun" if launcher else "SLURM_JOB_ID=77 (pario launches with srun in a Slurm job)"
    assert_refused(p, seconds, "Slurm controller is down", tmp_path, said_by)
    assert ("unset SLURM_JOB_ID, or give --launcher mpirun" in p.stderr) == (not launcher), p.stderr


@needs_slurm_client
def test_controller_that_never_answers_is_refused_after_a_short_wait(tmp_path):
    # A socket that accepts connections and never replies: what a hung or
    # firewalled controller looks like to srun.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        conf = dead_controller_conf(tmp_path, silent.getsockname()[1])
        p, seconds = pario_run(["--launcher", "srun"], {"SLURM_JOB_ID": "77", "SLURM_CONF": str(conf)},
                               tmp_path)
    assert_refused(p, seconds, "did not answer within", tmp_path)


@needs_slurm_client
def test_job_id_without_any_slurm_configuration_is_refused(tmp_path):
    p, seconds = pario_run(["--launcher", "srun"],
                           {"SLURM_JOB_ID": "77", "SLURM_CONF": str(tmp_path / "absent.conf")}, tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "--launcher srun" in lines[0], p.stderr
    assert seconds < 10


def test_srun_missing_from_path_is_refused(tmp_path):
    p, seconds = pario_run(["--launcher", "srun"], {"SLURM_JOB_ID": "77", "PATH": str(tmp_path)},
                           tmp_path)
    assert_refused(p, seconds, "srun is not on PATH", tmp_path)


def test_srun_command_overcommits_only_above_the_allocations_cpus():
    from pario.launch import Launcher
    from pario.slurm import Allocation, cpus_of

    s = Launcher("srun", ["/usr/bin/srun", "--mpi=pmix"], allocation=Allocation("5", 4, 2, 1))
    assert s.command(2, ["/e", "io"]) == ["/usr/bin/srun", "--mpi=pmix", "-n", "2", "/e", "io"]
    assert s.command(4, ["/e"], step_name="st") == ["/usr/bin/srun", "--mpi=pmix", "-n", "4", "-O",
                                                    "-J", "st", "/e"]
    assert cpus_of("4(x3),2") == 14 and cpus_of("2") == 2 and cpus_of("junk") == 0
