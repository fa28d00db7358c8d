"""The one way pario starts the engine: an argument list (never a shell
string) for mpirun, srun inside a Slurm job, or a user's template, with a
timeout so a hung rank cannot hang pario.

Settings the launcher applies on the user's behalf (Open MPI's root
permission, oversubscription) are reported in `notes`, printed before a run
and stored with it."""

import os
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field

from .errors import UsageError


@dataclass
class LaunchOutcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool


@dataclass
class Launcher:
    kind: str                   # "mpirun", "srun" or "template"
    program: list               # the launcher's own words
    flavour: str = ""           # "openmpi", "mpich", "" when unknown
    template: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def command(self, ranks, engine_argv):
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
            return [*self.program, "-n", str(ranks), *engine_argv]
        words = [*self.program, "-np", str(ranks)]
        if self.flavour == "openmpi" and ranks > cores():
            words.append("--oversubscribe")
        return [*words, *engine_argv]

    def environment(self):
        env = dict(os.environ)
        if self.flavour == "openmpi" and os.geteuid() == 0:
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        return env

    def explain(self, max_ranks):
        """Lines saying what this launcher will do on the user's behalf."""
        lines = [f"launcher: {self.kind} ({' '.join(self.program or self.template)})"]
        if self.flavour == "openmpi" and os.geteuid() == 0:
            lines.append("launcher: running as root, so OMPI_ALLOW_RUN_AS_ROOT=1 and "
                         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set for Open MPI")
        if self.flavour == "openmpi" and max_ranks > cores() and self.kind != "template":
            lines.append(f"launcher: points with more than {cores()} ranks (the cores here) "
                         "get --oversubscribe; waiting ranks then compete for CPU")
        return lines

    def slots(self):
        """(how many ranks this launcher can place, where that number came
        from): a Slurm allocation, a host file (in the template or the MPI's
        environment), else the cores here."""
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

    def run(self, ranks, engine_argv, timeout):
        argv = self.command(ranks, engine_argv)
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.environment(), start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            timed_out = True
        except BaseException:
            _kill_group(proc)  # pario itself is stopping: take the ranks with it
            raise
        return LaunchOutcome(proc.returncode, out, err, time.monotonic() - started, timed_out)


def _kill_group(proc):
    """The launcher and every rank it started live in one process group."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


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


def _flavour(mpirun):
    try:
        text = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text.upper():
        return "mpich"
    return ""


def choose_launcher(template=None, kind=None):
    """A user template wins; then srun inside a Slurm job; then mpirun or mpiexec."""
    if template:
        words = shlex.split(template)
        if "{engine}" not in " ".join(words) or "{ranks}" not in " ".join(words):
            raise UsageError("--launcher-template must contain {ranks} and {engine} "
                             "(and {engine_args}), e.g. 'mpiexec -n {ranks} {engine} {engine_args}'")
        if "{engine_args}" not in words:
            words.append("{engine_args}")
        program = shutil.which(words[0])
        return Launcher("template", [], flavour=_flavour(program) if program else "", template=words)
    if kind not in (None, "auto", "mpirun", "srun"):
        raise UsageError(f"--launcher '{kind}' is unknown: use auto, mpirun or srun")
    if kind == "srun" or (kind in (None, "auto") and os.environ.get("SLURM_JOB_ID")
                          and shutil.which("srun")):
        srun = shutil.which("srun")
        if not srun:
            raise UsageError("--launcher srun: srun is not on PATH: run inside a Slurm job or use mpirun")
        return Launcher("srun", [srun])
    for name in ("mpirun", "mpiexec"):
        path = shutil.which(name)
        if path:
            return Launcher("mpirun", [path], flavour=_flavour(path))
    raise UsageError("mpirun not found: run 'make deps' (installs Open MPI) or put your MPI's bin on PATH")
