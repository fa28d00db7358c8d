"""What pario needs to know about Slurm to launch through srun: is this a
live allocation, how many tasks and CPUs does it hold, and how to cancel a
job step that outlived its timeout.

srun outside a job, or with a controller that does not answer, waits on
the controller for minutes; every question here is asked with a short
timeout so pario refuses in a second instead."""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from .errors import UsageError

# How long one question to the controller may take before pario decides it
# is not answering.  A healthy controller answers in milliseconds.
ASK_SECONDS = 2.0


@dataclass
class Allocation:
    job_id: str
    tasks: int          # SLURM_NTASKS (the tasks salloc/sbatch asked for)
    cpus: int           # CPUs of the allocation on all its nodes
    nodes: int

    def describe(self):
        return (f"Slurm job {self.job_id}: {self.tasks} task(s), {self.cpus} CPU(s) "
                f"on {self.nodes} node(s)")


def _ask(argv):
    """Run a Slurm client command with the short timeout; None if it hung."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=ASK_SECONDS,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]}: {exc.strerror}: install Slurm's client (slurm-client)")
    return p


def job_ended(job_id):
    """'' while Slurm job `job_id` still runs; else what happened to it
    ("Slurm job 16 ended (completed)", "the Slurm controller is down"):
    asked after a point failed, so a run does not go on launching points
    into an allocation that is gone (each would fail alike)."""
    state = _ask(["squeue", "-h", "-j", job_id, "-o", "%T"])
    if state is not None and state.returncode == 0 and state.stdout.strip() == "RUNNING":
        return ""
    ping = _ask(["scontrol", "ping"])
    if ping is None or " is UP" not in ping.stdout:
        return ("the Slurm controller " + ("did not answer within %g s" % ASK_SECONDS if ping is None
                                           else "is down"))
    if state is None:
        return ""  # the controller answers now: the job's state is unknown, not gone
    return f"Slurm job {job_id} ended ({state.stdout.strip().lower() or 'gone from the queue'})"


def cpus_of(per_node):
    """SLURM_JOB_CPUS_PER_NODE ('2', '4(x3),2') -> total CPUs."""
    total = 0
    for part in per_node.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not m:
            return 0
        total += int(m.group(1)) * int(m.group(2) or 1)
    return total


def _int_env(env, name, default):
    v = env.get(name, "")
    return int(v) if v.isdigit() else default


def allocation(env=None, asked=True):
    """The live Slurm allocation pario runs in, or a UsageError saying why
    srun cannot be used here.  Costs at most two short controller calls.
    `asked`: the user gave --launcher srun; else pario chose srun because
    SLURM_JOB_ID is set, and the line names that instead."""
    env = os.environ if env is None else env
    job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    if not job:
        raise UsageError("--launcher srun: not inside a Slurm job (SLURM_JOB_ID is unset): "
                         "run pario inside salloc or an sbatch script, or use --launcher mpirun")
    said_by = "--launcher srun" if asked else f"SLURM_JOB_ID={job} (pario launches with srun in a Slurm job)"
    other = "use --launcher mpirun" if asked else "unset SLURM_JOB_ID, or give --launcher mpirun"
    for tool in ("srun", "scontrol", "squeue"):
        if not shutil.which(tool, path=env.get("PATH")):
            raise UsageError(f"{said_by}: {tool} is not on PATH: install Slurm's client "
                             f"(slurm-client) or {other}")
    ping = _ask(["scontrol", "ping"])
    if ping is not None and "configuration" in ping.stderr and " is " not in ping.stdout:
        raise UsageError(f"{said_by}: Slurm has no configuration here (no slurm.conf): set SLURM_CONF "
                         f"or {other}")
    if ping is None or " is UP" not in ping.stdout:
        said = "did not answer within %g s" % ASK_SECONDS if ping is None else "is down"
        raise UsageError(f"{said_by}: the Slurm controller {said}: start slurmctld, fix SLURM_CONF, "
                         f"or {other}")
    state = _ask(["squeue", "-h", "-j", job, "-o", "%T"])
    if state is None or state.stdout.strip() != "RUNNING":
        said = (state.stdout.strip() or "unknown to the controller") if state else "not answered"
        raise UsageError(f"{said_by}: Slurm job {job} is {said.lower()}, not a live "
                         "allocation (a stale SLURM_JOB_ID?): run pario inside salloc or sbatch, "
                         "or unset SLURM_JOB_ID")
    nodes = _int_env(env, "SLURM_JOB_NUM_NODES", _int_env(env, "SLURM_NNODES", 1))
    cpus = cpus_of(env.get("SLURM_JOB_CPUS_PER_NODE", "")) or _int_env(env, "SLURM_CPUS_ON_NODE", 1)
    tasks = _int_env(env, "SLURM_NTASKS", _int_env(env, "SLURM_NPROCS", cpus))
    return Allocation(job, tasks, cpus, nodes)


def step_ids(job_id, step_name):
    """The running steps of `job_id` named `step_name` ('12.3', ...)."""
    p = _ask(["squeue", "-h", "-s", "-j", str(job_id), "-o", "%i %j"])
    if p is None:
        return []
    return [line.split()[0] for line in p.stdout.splitlines()
            if len(line.split()) == 2 and line.split()[1] == step_name]


def cancel_step(job_id, step_name):
    """Cancel the named step through Slurm (srun killed alone can leave its
    tasks running on the nodes).  Returns the step ids cancelled."""
    ids = step_ids(job_id, step_name)
    for sid in ids:
        _ask(["scancel", sid])
    return ids
