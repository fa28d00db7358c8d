"""The MPI libraries pario knows, in one table: which engine build uses
which library, which launcher programs start it, and what srun must be told.

Debian installs Open MPI and MPICH side by side: `mpirun`/`mpiexec` follow
the system's alternatives, `*.openmpi` and `*.mpich`/`mpiexec.hydra` always
name one library.  A launcher of the other library would start N singleton
engines instead of one job of N ranks, so the launcher is always chosen to
match the library the engine binary was linked against."""

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Flavour:
    name: str           # "openmpi", "mpich"
    title: str          # as MPI_Get_library_version names it
    build_dir: str      # the engine's build directory under build/
    sonames: tuple      # how its library shows in `ldd`
    launchers: tuple    # programs to try, most specific first
    srun_mpi: str       # srun --mpi=... for this library
    version_words: tuple  # words in `<launcher> --version` that identify it


FLAVOURS = {
    "openmpi": Flavour("openmpi", "Open MPI", "engine", ("libmpi.so.",),
                       ("mpirun.openmpi", "mpiexec.openmpi", "mpirun", "mpiexec"),
                       "pmix",  # Debian's Open MPI has PMIx only: pmi2 aborts in MPI_Init
                       ("Open MPI", "OpenRTE")),
    "mpich": Flavour("mpich", "MPICH", "engine-mpich", ("libmpich.so.",),
                     ("mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich", "mpiexec", "mpirun"),
                     "pmi2", ("HYDRA", "MPICH")),
}


def flavour_of_launcher(program, timeout=10):
    """'openmpi', 'mpich' or '' from `<program> --version`; a program that
    does not answer within timeout seconds is of unknown flavour.  It runs
    in a session of its own, taken down whole after it answers or not, so
    nothing it started (a user's launch script may start anything) outlives
    the question."""
    from .watchdog import kill_session

    try:
        proc = subprocess.Popen([program, "--version"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                                errors="replace", start_new_session=True)
    except OSError:
        return ""
    try:
        text = proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        text = ""
    finally:
        kill_session(proc.pid, grace=1, reap=proc.poll)
        proc.wait()
    for f in FLAVOURS.values():
        if any(w in text for w in f.version_words):
            return f.name
    return ""


def flavour_of_engine(path):
    """The MPI library the engine binary is linked against ('' if unknown,
    e.g. a static build: then the launcher is not checked against it)."""
    try:
        text = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for line in text.splitlines():
        lib = line.strip().split(" ", 1)[0]
        for f in FLAVOURS.values():
            if any(lib.startswith(s) for s in f.sonames):
                return f.name
    return ""


def find_launcher(flavour):
    """(path, flavour) of the first launcher program of `flavour` (any
    library when flavour is ''), or None."""
    names = FLAVOURS[flavour].launchers if flavour else ("mpirun", "mpiexec")
    for name in names:
        path = shutil.which(name)
        if not path:
            continue
        found = flavour_of_launcher(path)
        if not flavour or found == flavour:
            return path, found
    return None


def build_path(root, flavour):
    return Path(root) / "build" / FLAVOURS[flavour].build_dir / "pario-engine"
