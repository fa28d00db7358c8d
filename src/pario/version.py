"""pario's version, with the git commit of the source when it runs from a
checkout (stored with every run, shown in reports)."""

import subprocess
from pathlib import Path

from . import __version__


def describe():
    """'0.1.0' or '0.1.0 (git 1a2b3c4d, modified)'."""
    src = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(src), "rev-parse", "--short=10", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return __version__
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return __version__
    return f"{__version__} (git {head.stdout.strip()}{', modified' if dirty else ''})"
