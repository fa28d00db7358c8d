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

    def run(self, ranks, engine_argv, timeout, guard=None):
        """guard(pgid), when given, is called once the launcher's process
        group exists (the watchdog takes it down if pario is killed)."""
        argv = self.command(ranks, engine_argv)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, errors="replace", env=self.environment(),
                                    start_new_session=True)
        except OSError as exc:
            # a template's program vanished since it was checked, or cannot run
            return LaunchOutcome(127, "", f"cannot start {argv[0]}: {exc.strerror}",
                                 time.monotonic() - started, False)
        if guard:
            guard(proc.pid)
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


def cores():
    """Cores this process may use (Slurm's allocation wins inside a job)."""
    slurm = os.environ.get("SLURM_CPUS_ON_NODE")
    if slurm and slurm.isdigit():
        return int(slurm)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _flavour(mpirun, timeout=10):
    """Which MPI a launcher belongs to, from its --version; a program that
    does not answer within timeout seconds is simply of unknown flavour."""
    try:
        text = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                              errors="replace", timeout=timeout, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text.upper():
        return "mpich"
    return ""


def choose_launcher(template=None, kind=None):
    """A user template wins; then srun inside a Slurm job; then mpirun or mpiexec."""
    if template is not None:
        try:
            words = shlex.split(template)
        except ValueError as exc:
            raise UsageError(f"--launcher-template cannot be split into words ({exc}): "
                             "close every quote") from None
        if not words or "{engine}" not in " ".join(words) or "{ranks}" not in " ".join(words):
            raise UsageError("--launcher-template must contain {ranks} and {engine} "
                             "(and {engine_args}), e.g. 'mpiexec -n {ranks} {engine} {engine_args}'")
        if "{engine_args}" not in words:
            words.append("{engine_args}")
        if words[0] == "{engine}":
            return Launcher("template", [], flavour="", template=words)
        program = shutil.which(words[0])
        if not program:
            raise UsageError(f"--launcher-template: program '{words[0]}' is not found or not "
                             "executable: give a launcher on PATH or its full path")
        # a user's program may not know --version: ask briefly, never block the run
        return Launcher("template", [], flavour=_flavour(program, timeout=2), template=words)
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
