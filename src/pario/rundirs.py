"""Subdirectories of --dir that a run's points need: the targets a striped
test spreads its file over (<dir>/stripe-0 .. stripe-N-1), as the ASCI
Red PFS spread a file over the UFS files of its RAIDs.

They are checked before anything runs (a name that is a symlink or a file
is refused: pario never follows a link, nor writes beside what it did not
make), created just before the first point if missing, and removed at the
end only if pario created them and they are empty again: a directory the
user made, or one holding anything pario did not put there, stays."""

import os
from pathlib import Path

from .errors import UsageError


class RunDirs:
    def __init__(self, directory, names):
        self.directory = Path(directory)
        self.paths = [self.directory / n for n in dict.fromkeys(names)]
        self.created = []

    def check(self):
        """Every name free or an existing directory of ours to write in."""
        for path in self.paths:
            try:
                if path.is_symlink():
                    raise UsageError(f"{path} is a symbolic link: pario never follows one for its stripe "
                                     "targets; remove it or use another --dir")
                if path.exists() and not path.is_dir():
                    raise UsageError(f"{path} exists and is not a directory: pario needs that name for "
                                     "a stripe target; move it or use another --dir")
                if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
                    raise UsageError(f"{path} is not writable: make it writable or use another --dir")
                if not path.exists():
                    _try_creating(path)
            except OSError as exc:
                raise UsageError(f"{path}: {exc.strerror}: use another --dir") from None

    def create(self, on_create=None):
        """Make the missing ones (never through a link: mkdir fails on any
        name that appeared since the check); `on_create(path)` hears of each."""
        for path in self.paths:
            if path.is_dir() and not path.is_symlink():
                continue
            try:
                os.mkdir(path, 0o755)
            except OSError as exc:
                raise UsageError(f"cannot create {path} ({exc.strerror}): use another --dir") from None
            self.created.append(path)
            if on_create:
                on_create(path)

    def remove(self, on_remove=None):
        """rmdir what pario created (rmdir removes only an empty directory,
        and never what a link points to).  Returns the lines for what it
        made and had to leave (another run's files inside): never silently."""
        left = []
        for path in reversed(self.created):
            try:
                os.rmdir(path)
            except OSError as exc:
                left.append(f"left {path}, which this run made: {exc.strerror} (another run sharing "
                            "--dir may be using it): remove it once that run is done")
                continue
            if on_remove:
                on_remove(path)
        self.created = []
        return left


def _try_creating(path):
    """Make and remove the directory now, so a --dir where it cannot be made
    (/proc, a read-only mount: access() says yes to root there) is refused
    before the run is stored, not at its first point."""
    try:
        os.mkdir(path, 0o755)
    except OSError as exc:
        raise UsageError(f"cannot create {path} ({exc.strerror}): use another --dir") from None
    os.rmdir(path)
