"""Where the measuring engine is, and which MPI library it was built with."""

import json
import os
import shutil
from pathlib import Path

from .errors import UsageError
from .mpi import FLAVOURS, build_path, flavour_of_engine

_ROOT = Path(__file__).resolve().parents[2]
_REPO_BUILD = build_path(_ROOT, "openmpi")


def engine_path(mpi=None):
    """PARIO_ENGINE, else this checkout's build (build/engine-mpich for
    mpi='mpich'), else pario-engine on PATH."""
    override = os.environ.get("PARIO_ENGINE")
    if override:
        if os.path.isdir(override):  # searchable, so X_OK alone would let it pass
            raise UsageError(f"PARIO_ENGINE={override} is a directory, not the engine: point it at "
                             "the pario-engine binary (e.g. build/engine/pario-engine) or unset it")
        if not os.access(override, os.X_OK):
            raise UsageError(f"PARIO_ENGINE={override} is not an executable: fix the path or unset it")
        return override
    if mpi and mpi != "auto":
        if mpi not in FLAVOURS:
            raise UsageError(f"--mpi '{mpi}' is unknown: use auto, {' or '.join(FLAVOURS)}")
        path = build_path(_ROOT, mpi)
        if not os.access(path, os.X_OK):
            raise UsageError(f"--mpi {mpi}: {path} is not built: run 'make build' "
                             f"(builds the engine for Open MPI and MPICH)")
        return str(path)
    if os.access(_REPO_BUILD, os.X_OK):
        return str(_REPO_BUILD)
    found = shutil.which("pario-engine")
    if found:
        return found
    raise UsageError("pario-engine not found: run 'make build' or set PARIO_ENGINE to the binary")


def engine_mpi(path, wanted=None):
    """The engine's MPI library ('openmpi', 'mpich' or '' when unknown);
    refuses an engine built with another library than --mpi asks for."""
    found = flavour_of_engine(path)
    if wanted and wanted != "auto" and found and found != wanted:
        raise UsageError(f"--mpi {wanted}: the engine {path} is built with {FLAVOURS[found].title}: "
                         f"unset PARIO_ENGINE or point it at a {FLAVOURS[wanted].title} build")
    return found


def take_result(path):
    """The result document an engine run wrote at `path`, parsed; the file
    is then removed, so the next run may use the same name (the engine's
    --json refuses a file that exists, its own included)."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    finally:
        path.unlink(missing_ok=True)
