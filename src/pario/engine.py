"""Where the measuring engine is."""

import os
import shutil
from pathlib import Path

from .errors import UsageError

_REPO_BUILD = Path(__file__).resolve().parents[2] / "build" / "engine" / "pario-engine"


def engine_path():
    """PARIO_ENGINE, else this checkout's build, else pario-engine on PATH."""
    override = os.environ.get("PARIO_ENGINE")
    if override:
        if not os.access(override, os.X_OK):
            raise UsageError(f"PARIO_ENGINE={override} is not an executable: fix the path or unset it")
        return override
    if os.access(_REPO_BUILD, os.X_OK):
        return str(_REPO_BUILD)
    found = shutil.which("pario-engine")
    if found:
        return found
    raise UsageError("pario-engine not found: run 'make build' or set PARIO_ENGINE to the binary")
