"""The one way pario starts the engine: an argument list (never a shell
string) for mpirun, srun inside a Slurm job, or a user's template, with a
timeout so a hung rank cannot hang pario, and a look for a rank that died
without its launcher noticing (see DEAD_CHILD_GRACE).

Settings the launcher applies on the user's behalf (Open MPI's root
permission, oversubscription) are reported in `notes`, printed before a run
and stored with it."""

import itertools
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from . import slurm
from .errors import UsageError
from .watchdog import kill_session, process_stat
from .mpi import FLAVOURS, find_launcher, flavour_of_launcher

_steps = itertools.count()


@dataclass
class LaunchOutcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    note: str = ""              # what was done about a timed-out or stopped point (e.g. scancel)
    stopped: str = ""           # why pario stopped a launcher before it ended (one line), else ""


@dataclass
class Launcher:
    kind: str                   # "mpirun" (Open MPI), "mpiexec" (MPICH's hydra), "srun" or "template"
    program: list               # the launcher's own words
    flavour: str = ""           # "openmpi", "mpich", "" when unknown
    template: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    allocation: object = None   # slurm.Allocation when kind == "srun"

    def command(self, ranks, engine_argv, step_name=None):
        """The full argument list for `ranks` ranks of `engine_argv`."""
        if self.kind == "template":
            words = []
            for word in self.template:
                if word == "{engine_args}":
                    words.extend(engine_argv[1:])
                else:
                    words.append(word.replace("{ranks}", str(ranks)).replace("{engine}", engine_argv[0]))
            return words
        if self.kind == "srun":
            words = [*self.program, "-n", str(ranks)]
            if self.allocation and ranks > self.allocation.cpus:
                words.append("-O")  # without it srun waits for CPUs that never come
            if step_name:
                words += ["-J", step_name]  # so a timed-out step can be found and cancelled
            return [*words, *engine_argv]
        words = [*self.program, "-np", str(ranks)]
        if self.flavour == "openmpi" and ranks > cores():
            words.append("--oversubscribe")
        return [*words, *engine_argv]

    def environment(self):
        env = dict(os.environ)
        # a launcher of unknown library (a wrapper that does not answer
        # --version) may be Open MPI's: its refusal to run as root would
        # be the point's only line.  MPICH ignores these names.
        if self.flavour != "mpich" and os.geteuid() == 0:
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        return env

    def gone(self):
        """'' while the ranks can still be started; else why not (the Slurm
        allocation pario runs in ended: its own srun's, or the job any
        launcher, a template's srun or mpirun, starts its ranks inside)."""
        job = (self.allocation.job_id if self.allocation
               else os.environ.get("SLURM_JOB_ID") or os.environ.get("SLURM_JOBID"))
        return slurm.job_ended(job) if job and shutil.which("squeue") else ""

    def explain(self, max_ranks):
        """Lines saying what this launcher will do on the user's behalf."""
        library = f" for {FLAVOURS[self.flavour].title}" if self.flavour in FLAVOURS else ""
        lines = [f"launcher: {self.kind} ({' '.join(self.program or self.template)}){library}"]
        if self.allocation:
            lines.append(f"launcher: inside {self.allocation.describe()}; srun places the ranks")
            cpus = self.allocation.cpus
            if max_ranks > cpus:
                lines.append(f"launcher: points with more than {cpus} rank{'s' * (cpus != 1)} (the "
                             "allocation's CPUs) get -O (--overcommit)")
        # a launcher of unknown library (a wrapper that does not answer
        # --version) may be Open MPI's: its refusal to run as root would
        # be the point's only line.  MPICH ignores these names.
        if self.flavour != "mpich" and os.geteuid() == 0:
            lines.append("launcher: running as root, so OMPI_ALLOW_RUN_AS_ROOT=1 and "
                         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set for Open MPI")
        here = cores()
        if self.flavour == "openmpi" and max_ranks > here and self.kind in ("mpirun", "mpiexec"):
            lines.append(f"launcher: points with more than {here} rank{'s' * (here != 1)} (the cores here) "
                         "get --oversubscribe; waiting ranks then compete for CPU")
        return lines

    def slots(self):
        """(how many ranks this launcher can place, where that number came
        from): a Slurm allocation, a host file (in the template or the MPI's
        environment), else the cores here."""
        if self.allocation:
            return (self.allocation.tasks or self.allocation.cpus,
                    f"the Slurm allocation ({self.allocation.describe()})")
        if self.kind == "srun" or os.environ.get("SLURM_JOB_ID"):
            for var in ("SLURM_NTASKS", "SLURM_NPROCS"):
                if os.environ.get(var, "").isdigit():
                    return int(os.environ[var]), f"the Slurm allocation ({var})"
            nodes, per = os.environ.get("SLURM_JOB_NUM_NODES", ""), os.environ.get("SLURM_CPUS_ON_NODE", "")
            if nodes.isdigit() and per.isdigit():
                return int(nodes) * int(per), "the Slurm allocation (nodes x cpus on node)"
        hostfile = _hostfile_of(self.template)
        if hostfile:
            n = hostfile_slots(hostfile)
            if n:
                return n, f"host file {hostfile}"
        return cores(), "the cores here"

    def run(self, ranks, engine_argv, timeout, guard=None, env=None):
        """guard(pgid), when given, is called once the launcher's process
        group exists (the watchdog takes it down if pario is killed); env
        adds variables for the engine (the point's file ledger)."""
        step_name = f"pario-{os.getpid()}-{next(_steps)}" if self.kind == "srun" else None
        argv = self.command(ranks, engine_argv, step_name)
        started = time.monotonic()
        note = ""
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, errors="replace", env={**self.environment(), **(env or {})},
                                    start_new_session=True)
        except OSError as exc:
            # a template's program vanished since it was checked, or cannot run
            return LaunchOutcome(127, "", f"cannot start {argv[0]}: {exc.strerror}",
                                 time.monotonic() - started, False)
        if guard:
            guard(proc.pid)
        try:
            out, err, stopped = _wait(proc, started + timeout, os.path.basename(argv[0]),
                                      os.path.basename(engine_argv[0]))
            timed_out = out is None and not stopped
            if timed_out or stopped:
                note = self._cancel_step(step_name)
                _kill_group(proc)
                out, err = proc.communicate()  # all of it, what _wait read too
        except BaseException:
            self._cancel_step(step_name)
            _kill_group(proc)  # pario itself is stopping: take the ranks with it
            raise
        return LaunchOutcome(proc.returncode, out, err, time.monotonic() - started, timed_out,
                             note=note, stopped=stopped)

    def _cancel_step(self, step_name):
        """srun killed alone can leave its step's tasks running: cancel the
        step through Slurm first.  Returns what was done, for the record."""
        if not (step_name and self.allocation):
            return ""
        ids = slurm.cancel_step(self.allocation.job_id, step_name)
        return f"Slurm step {', '.join(ids)} cancelled with scancel" if ids else ""


# How each launcher reports a rank that a signal ended (measured with
# Open MPI 4.1 and MPICH 4.0): Open MPI names the rank; MPICH's hydra
# names only the process id, in its banner, and the signal after it.
_OPEN_MPI_SIGNAL = re.compile(r"noticed that process rank (\d+) with PID \d+ on node (\S+) "
                              r"exited on signal (\d+) \(([^)]*)\)")
_HYDRA_PID = re.compile(r"^=\s+PID (\d+) RUNNING AT (\S+)", re.M)
_HYDRA_SIGNAL = re.compile(r"EXIT STRING: (.*) \(signal (\d+)\)")


def signal_report(stderr):
    """The launcher's report of a rank ended by a signal, as one clause
    naming the signal and the rank (or, from MPICH, its process id), else
    None.  Its own last line is a banner, a backtrace frame or "Per
    user-direction, the job has been aborted.", whichever came last."""
    found = _OPEN_MPI_SIGNAL.search(stderr)
    if found:
        rank, node, number, name = found.groups()
        return f"rank {rank} on {node} ended by signal {number} ({name})"
    found = _HYDRA_SIGNAL.search(stderr)
    if found:
        name, number = found.groups()
        pid = _HYDRA_PID.search(stderr)
        where = f"the rank with process id {pid[1]} on {pid[2]}" if pid else "a rank"
        return f"{where} ended by signal {number} ({name}; MPICH's launcher names no rank)"
    return None


# How long a rank the launcher started (a child of it running the engine)
# may lie dead and unreaped before pario stops the launcher.  mpirun reaps
# a dead rank and aborts the job within a second; Open MPI 4.1's mpirun,
# when a rank is killed during MPI_Init, sometimes never does (the rank
# stays its zombie, mpirun sleeps on a futex) and the point would wait out
# its whole --timeout.  Ten times that second, so that a slow reap on a
# loaded machine, or the brief zombies of ranks ending a run, never count.
DEAD_CHILD_GRACE = 10.0
# How often pario looks while it waits: the launcher's children in /proc.
_LOOK_EVERY = 1.0
_PROC = "/proc"
_COMM_LENGTH = 15  # the kernel keeps a command's first 15 characters (/proc/PID/stat)


def _wait(proc, deadline, name, rank_name):
    """Wait for the launcher until the monotonic deadline, looking for a
    rank that died and was left unreaped (a zombie whose command is the
    engine's, `rank_name`, whose parent is the launcher or a process below
    it: _unreaped_ranks) for DEAD_CHILD_GRACE seconds.  Only ranks count: a launch script's own
    background job that ended, which the launcher it exec'd inherits and
    never collects, is no sign of a dead rank.  Returns (stdout,
    stderr, "") once it ends; (None, None, "") at the deadline; (None, None,
    why) for such a dead child, why being the point's one-line error.
    Output read so far is kept by communicate() for the caller's next call."""
    dead_since = {}  # (pid, start time) of a zombie child -> when first seen
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, None, ""
        try:
            out, err = proc.communicate(timeout=min(_LOOK_EVERY, left))
            return out, err, ""
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        dead_since = {z: dead_since.get(z, now)  # a reaped one is forgotten
                      for z in _unreaped_ranks(proc.pid, rank_name[:_COMM_LENGTH])}
        for zombie, since in dead_since.items():
            if now - since >= DEAD_CHILD_GRACE:
                return None, None, (
                    f"a rank ({rank_name}, process {zombie[0]}) ended while {name} kept running; "
                    f"{name} did not notice and was stopped after {DEAD_CHILD_GRACE:g} s (a rank killed "
                    "during MPI start-up?): run the point again, and if it recurs look for what "
                    "killed it (dmesg: the OOM killer)")


def _children(parent):
    """The pids of `parent`'s children: from the kernel's list of each of
    its threads' children (a few microseconds, while the ranks run beside
    pario), else every process's pid (a kernel without that list), else
    [] when /proc cannot be read (pario then simply waits)."""
    try:
        tasks = os.listdir(f"{_PROC}/{parent}/task")
        pids = []
        for tid in tasks:
            with open(f"{_PROC}/{parent}/task/{tid}/children", "rb") as f:
                pids += f.read().split()
        return [p.decode() for p in pids]
    except OSError:
        pass
    try:
        return [name for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


# How deep below the launcher pario looks for a dead rank: mpirun's own
# children (Open MPI), a proxy's (MPICH's hydra_pmi_proxy under
# mpiexec.hydra), or mpirun's below a launch script that does not exec it.
_RANK_DEPTH = 4


def _unreaped_ranks(launcher, rank_comm):
    """{(pid, start time)} of the dead, unreaped ranks (zombies whose
    command is `rank_comm`) of the launcher or of any process below
    it that is not itself a rank, down to _RANK_DEPTH levels, from /proc;
    {} when /proc cannot be read.  A rank's own children (its MPI
    library's helpers) are not looked into: ranks can be thousands."""
    found, level = set(), [launcher]
    for _ in range(_RANK_DEPTH):
        below = []
        for parent in level:
            mine = str(parent).encode()
            for pid in _children(parent):
                stat = process_stat(pid, _PROC)  # None: gone meanwhile
                if not stat or len(stat[1]) <= 19 or stat[1][1] != mine:
                    continue  # gone, or not this parent's (the every-pid fallback)
                if stat[1][0] == b"Z":
                    if stat[0] == rank_comm:
                        found.add((int(pid), stat[1][19]))
                elif stat[0] != rank_comm:
                    below.append(int(pid))
        level = below
    return found


def _kill_group(proc):
    """The launcher and every rank it started: one session (started with
    start_new_session), though Open MPI puts each rank in a process group
    of its own; returns once every one of them is gone."""
    kill_session(proc.pid, reap=proc.poll)
    proc.wait()


TEMPLATE_FIELDS = {"{ranks}", "{engine}", "{engine_args}"}  # what Launcher.command fills in
_HOSTFILE_FLAGS = ("--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f",
                   "--default-hostfile", "-machine")
_HOSTFILE_ENV = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_rmaps_base_default_hostfile",
                 "PRTE_MCA_prte_default_hostfile", "HYDRA_HOST_FILE")


def _hostfile_of(template):
    """The host file a launch line or the MPI's environment names, if any."""
    for i, word in enumerate(template[:-1]):
        if word in _HOSTFILE_FLAGS:
            return template[i + 1]
    for word in template:
        for flag in _HOSTFILE_FLAGS:
            if word.startswith(flag + "="):
                return word.split("=", 1)[1]
    for var in _HOSTFILE_ENV:
        if os.environ.get(var):
            return os.environ[var]
    return None


def hostfile_slots(path):
    """Slots in a host file: Open MPI's 'host slots=N', MPICH's 'host:N',
    or one slot per bare host line; 0 if it cannot be read."""
    total = 0
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return 0
    for line in lines:
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        n = 1
        for w in words[1:]:
            if w.startswith(("slots=", "max_slots=")) and w.split("=", 1)[1].isdigit():
                n = int(w.split("=", 1)[1])
                break
        if ":" in words[0] and words[0].rsplit(":", 1)[1].isdigit():
            n = int(words[0].rsplit(":", 1)[1])
        total += n
    return total


def cores():
    """Cores this process may use (Slurm's allocation wins inside a job)."""
    slurm = os.environ.get("SLURM_CPUS_ON_NODE")
    if slurm and slurm.isdigit():
        return int(slurm)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _flavour(program, timeout=10):
    return flavour_of_launcher(program, timeout)


def choose_launcher(template=None, kind=None, mpi=""):
    """A user template wins; then srun inside a Slurm job; then the mpirun
    or mpiexec of `mpi`, the library the engine was built with."""
    if template is not None and kind is not None:
        raise UsageError(f"--launcher {kind} and --launcher-template both say how to start the ranks: "
                         "give one (the template is the whole launch line)")
    if template is not None:
        try:
            words = shlex.split(template)
        except ValueError as exc:
            raise UsageError(f"--launcher-template cannot be split into words ({exc}): "
                             "close every quote") from None
        if not words or "{engine}" not in " ".join(words) or "{ranks}" not in " ".join(words):
            raise UsageError("--launcher-template must contain {ranks} and {engine} "
                             "(and {engine_args}), e.g. 'mpiexec -n {ranks} {engine} {engine_args}'")
        unknown = sorted({p for w in words for p in re.findall(r"\{[^{}]*\}", w)} - TEMPLATE_FIELDS)
        if unknown:
            raise UsageError(f"--launcher-template: {', '.join(unknown)} is not a placeholder pario "
                             "fills: use {ranks}, {engine} and {engine_args}")
        stray = [w for w in words if re.search(r"[{}]", re.sub(r"\{[^{}]*\}", "", w))]
        if stray:  # passed on, a lone brace reaches the engine as an argument (every point fails)
            raise UsageError(f"--launcher-template: '{stray[0]}' has a brace that opens or closes no "
                             "placeholder: write {ranks}, {engine} and {engine_args} whole")
        twice = [p for p in ("{engine}", "{engine_args}") if " ".join(words).count(p) > 1]
        if twice:
            raise UsageError(f"--launcher-template: {twice[0]} appears more than once: give it once "
                             "(the engine would get its arguments twice)")
        if "{engine_args}" not in words:
            words.append("{engine_args}")
        if words[0] == "{engine}":
            return Launcher("template", [], flavour="", template=words)
        program = shutil.which(words[0])
        if not program:
            raise UsageError(f"--launcher-template: program '{words[0]}' is not found or not "
                             "executable: give a launcher on PATH or its full path")
        # a user's program may not know --version: ask briefly, never block the run
        flavour = _flavour(program, timeout=2)
        if flavour and mpi and flavour != mpi:  # each rank would start alone: N one-rank worlds
            mine, other = FLAVOURS[mpi], FLAVOURS[flavour]
            raise UsageError(f"--launcher-template starts {other.title}'s ranks ({words[0]}), but the "
                             f"engine is built with {mine.title}: give --mpi {flavour}, or a template "
                             f"of {mine.title}'s launcher ({mine.launchers[0]})")
        return Launcher("template", [], flavour=flavour, template=words)
    if kind not in (None, "auto", "mpirun", "mpiexec", "srun"):
        raise UsageError(f"--launcher '{kind}' is unknown: use auto, mpirun, mpiexec or srun")
    if kind == "srun" or (kind in (None, "auto") and os.environ.get("SLURM_JOB_ID")):
        alloc = slurm.allocation(asked=kind == "srun")  # refuses in seconds, not minutes, outside a live job
        srun = [shutil.which("srun")]
        if not os.environ.get("SLURM_MPI_TYPE"):
            srun.append(f"--mpi={FLAVOURS[mpi or 'openmpi'].srun_mpi}")
        return Launcher("srun", srun, flavour=mpi, allocation=alloc)
    found = find_launcher(mpi)
    if not found:
        if mpi:
            f = FLAVOURS[mpi]
            raise UsageError(f"the engine is built with {f.title} but none of {', '.join(f.launchers)} "
                             f"is a {f.title} launcher: run 'make deps' or put its bin on PATH")
        raise UsageError("mpirun not found: run 'make deps' (installs Open MPI) or put your MPI's bin on PATH")
    path, flavour = found
    return Launcher("mpiexec" if flavour == "mpich" else "mpirun", [path], flavour=flavour)
