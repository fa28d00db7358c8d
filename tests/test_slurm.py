"""pario under a real Slurm (one node on 127.0.0.1, started by
tests/services/slurm.py): inside salloc and inside an sbatch script it
launches every point through srun in the allocation, srun places the
ranks, and a point that outlives its timeout has its step cancelled."""

import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, interrupt_when, wait_for

pytestmark = pytest.mark.integration

SMALL = ["--ranks", "1,4", "--blocks", "64k", "--size", "4m", "--iterations", "1", "--verify"]


def pario_argv(*args):
    return [sys.executable, "-m", "pario", *map(str, args)]


def env_for(cluster, db):
    return {**cluster.env, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}


def stored_points(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT status, ranks, command, result_json FROM points").fetchall()
    return [(s, r, json.loads(c), json.loads(j) if j else None) for s, r, c, j in rows]


def assert_placed_by_srun(db, job_id):
    points = stored_points(db)
    assert points and all(s == "ok" for s, *_ in points), points
    steps = set()
    for _, ranks, command, doc in points:
        assert os.path.basename(command[0]) == "srun" and "--mpi=pmix" in command
        assert command[command.index("-n") + 1] == str(ranks)
        mpi = doc["mpi"]
        assert mpi["slurm"]["job_id"] == job_id
        steps.add(mpi["slurm"]["step_id"])
        # every rank is on the one Slurm node, as srun placed it
        assert [h["slurm_node"] for h in mpi["hosts"]] == ["pario1"]
        assert sorted(r for h in mpi["hosts"] for r in h["ranks"]) == list(range(ranks))
        assert doc["verification"]["requested"] and doc["verification"]["ok"]
    assert len(steps) == len(points)  # one job step per point
    return points


def test_run_inside_salloc_launches_every_point_through_srun(slurm_cluster, tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    # -O: 4 tasks on a node with fewer CPUs would otherwise wait forever
    p = subprocess.run(["salloc", "-n", "4", "-O",
                        *pario_argv("run", "cfs", "--quick", "--dir", shm_dir, *SMALL)],
                       capture_output=True, text=True, env=env_for(slurm_cluster, db), timeout=300)
    assert p.returncode == 0, p.stderr
    job = re.search(r"launcher: inside Slurm job (\d+): 4 task\(s\)", p.stdout)
    assert job, p.stdout
    points = assert_placed_by_srun(db, job.group(1))
    assert len(points) == 5 * 2
    four = [c for _, r, c, _ in points if r == 4]
    assert all("-O" in c for c in four)  # more tasks than the allocation's CPUs
    assert all("-O" not in c for _, r, c, _ in points if r == 1)
    assert os.listdir(shm_dir) == []


def test_run_inside_an_sbatch_script(slurm_cluster, tmp_path, disk_dir):
    db, out = tmp_path / "r.sqlite", tmp_path / "job.out"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\nexec " + " ".join(pario_argv("run", "cfs", "--quick", "--dir", disk_dir,
                                                              "--tests", "partitioned,interleaved",
                                                              *SMALL)) + "\n")
    p = subprocess.run(["sbatch", "--wait", "-n", "4", "-O", "-o", str(out), str(script)],
                       capture_output=True, text=True, env=env_for(slurm_cluster, db), timeout=300)
    text = out.read_text() if out.exists() else ""
    assert p.returncode == 0, (p.stderr, text)
    job = re.search(r"Submitted batch job (\d+)", p.stdout).group(1)
    assert f"inside Slurm job {job}" in text
    assert len(assert_placed_by_srun(db, job)) == 2 * 2
    assert os.listdir(disk_dir) == []


def test_a_point_past_its_timeout_has_its_step_cancelled(slurm_cluster, tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    # ~200 s of 4 KiB calls: only the timeout ends it
    script = (" ".join(pario_argv("run", "cfs", "--dir", shm_dir, "--ranks", "2", "--blocks", "4k",
                                                "--size", "512m", "--tests", "partitioned",
                                                "--iterations", "50", "--timeout", "2"))
              + "; echo STEPS:; squeue -h -s -j $SLURM_JOB_ID -o '%i %j'")
    started = time.monotonic()
    p = subprocess.run(["salloc", "-n", "2", "-O", "sh", "-c", script], capture_output=True, text=True,
                       env=env_for(slurm_cluster, db), timeout=120)
    assert time.monotonic() - started < 60
    cancelled = re.search(r"timed out after 2 s .*; Slurm step (\d+\.\d+) cancelled with scancel", p.stdout)
    assert cancelled, p.stdout + p.stderr
    assert [s for s, *_ in stored_points(db)] == ["failed"]
    # no pario step of the job is left running
    assert "pario-" not in p.stdout.split("STEPS:")[-1]
    leftover = subprocess.run(["pgrep", "-f", f"pario-engine io --dir {shm_dir}"], capture_output=True)
    assert leftover.returncode != 0
    assert os.listdir(shm_dir) == []


@pytest.mark.parametrize("template", [[], ["--launcher-template", "srun --mpi=pmix -n {ranks} {engine} {engine_args}"]],
                         ids=["pario's srun", "a template's srun"])
def test_an_allocation_that_ends_mid_run_stops_the_run(slurm_cluster, tmp_path, shm_dir, template):
    """Tester 16, item 2: the job cancelled during a point, pario went on
    launching the next points into it (each failing with 'Expired or
    invalid job') and stored the run as complete; tester 18: so it still
    did with a template's srun."""
    db = tmp_path / "r.sqlite"
    name = f"pario-cut-{os.getpid()}"
    argv = ["salloc", "-n", "2", "-O", "-J", name,
            *pario_argv("run", "cfs", "--dir", shm_dir, "--ranks", "2,1", "--blocks", "4k", "--size", "256m",
                        "--tests", "interleaved,partitioned", "--iterations", "20", *template)]
    code, out, err = interrupt_when(argv, env_for(slurm_cluster, db), lambda: any(shm_dir.iterdir()),
                                    lambda: subprocess.run(["scancel", "-n", name], env=slurm_cluster.env,
                                                           check=True, timeout=30))
    said = [line for line in err.splitlines() if line.startswith("pario: error:")]
    assert code == 3 and len(said) == 1, (code, out, err)
    assert re.fullmatch(r"pario: error: Slurm job \d+ ended \([a-z]+\) during run 1: the run stops, marked "
                        r"incomplete, its points so far kept \(see 'pario show 1'\); start it again in a live "
                        r"allocation", said[0]), said
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs").fetchall() == [("incomplete",)]
    assert con.execute("SELECT status FROM points").fetchall() == [("failed",)]
    # show says why the run stopped there (tester 18)
    error, = con.execute("SELECT error FROM points").fetchone()
    assert re.search(r"; Slurm job \d+ ended \([a-z]+\): the run stopped here$", error), error
    listed = subprocess.run(pario_argv("list"), capture_output=True, text=True, env=env_for(slurm_cluster, db))
    assert "1 failed, 3 not run" in listed.stdout, listed.stdout
    assert wait_for(lambda: not os.listdir(shm_dir), 30), os.listdir(shm_dir)


def test_stale_job_id_with_a_live_controller_is_refused(slurm_cluster, tmp_path, shm_dir):
    env = {**env_for(slurm_cluster, tmp_path / "r.sqlite"), "SLURM_JOB_ID": "999999"}
    p = subprocess.run(pario_argv("run", "cfs", "--quick", "--dir", shm_dir), capture_output=True,
                       text=True, env=env, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "Slurm job 999999 is unknown to the controller, not a live allocation" in lines[0]
    assert not (tmp_path / "r.sqlite").exists()


def test_mpich_engine_under_srun_speaks_pmi2(slurm_cluster, tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    env = {k: v for k, v in env_for(slurm_cluster, db).items() if k != "PARIO_ENGINE"}
    p = subprocess.run(["salloc", "-n", "2", *pario_argv("run", "cfs", "--mpi", "mpich", "--dir", shm_dir,
                                                         "--tests", "interleaved", *SMALL[2:],
                                                         "--ranks", "2")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    [(status, ranks, command, doc)] = stored_points(db)
    assert status == "ok" and "--mpi=pmi2" in command and command[0].endswith("srun")
    assert doc["mpi"]["library"].startswith("MPICH") and doc["mpi"]["ranks"] == 2
    assert doc["mpi"]["hosts"][0]["slurm_node"] == "pario1" and doc["verification"]["ok"]


def test_the_full_preset_sweeps_ranks_up_to_the_allocations_tasks(slurm_cluster, tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    p = subprocess.run(["salloc", "-n", "2", *pario_argv("run", "cfs", "--dir", shm_dir, "--tests", "partitioned",
                                                         "--blocks", "64k", "--dry-run")],
                       capture_output=True, text=True, env=env_for(slurm_cluster, db), timeout=120)
    assert p.returncode == 0, p.stderr
    launches = [l.split() for l in p.stdout.splitlines() if "pario-engine io" in l]
    assert [l[l.index("-n") + 1] for l in launches] == ["1", "2"], p.stdout
    assert all(l[0].endswith("srun") and "--mpi=pmix" in l for l in launches)
    assert "the Slurm allocation (Slurm job" in p.stdout
    assert not db.exists()


def test_a_probe_in_a_one_task_allocation_plans_one_rank(slurm_cluster, tmp_path, shm_dir):
    """Tester 16: `pario probe` inside salloc -n 1 planned the host's two
    cores' worth of ranks, overcommitted with -O ('more than 1 ranks')."""
    p = subprocess.run(["salloc", "-n", "1", *pario_argv("probe", "--dir", shm_dir, "--quick", "--size", "4m",
                                                         "--iterations", "1", "--dry-run")],
                       capture_output=True, text=True, env=env_for(slurm_cluster, tmp_path / "r.sqlite"),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    launches = [line for line in p.stdout.splitlines() if "pario-engine probe" in line]
    assert launches and all(" -n 1 " in line and " -O " not in line for line in launches), p.stdout
    assert "more than 1 ranks" not in p.stdout
