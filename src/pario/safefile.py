"""The one way pario writes a file the user will see (a report, an export,
a figure): never over a file pario did not create, never through a symlink,
never half-written.

The data goes to a temporary name made with O_EXCL in the target's own
directory (so a symlink or a file already there is never opened), then:
* a new name is made with link(2), which refuses a name that exists;
* an existing name is replaced with rename(2), which replaces the name
  itself and never writes through a symlink, and only when the caller's
  `may_replace` says pario wrote exactly that file (figures: a regular file
  whose path and SHA-256 the results database recorded when pario wrote it,
  see Store.figure_written).  Anything else is refused in one line."""

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import UsageError


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _current_bytes(path):
    """The bytes of an existing regular file, read without following a
    symlink; None for anything else (a symlink, a directory, a fifo)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def check_replaceable(path, may_replace=None, option="--out", fix="choose a new name or remove it"):
    """Whether `path` exists and may be replaced (see write_new_file);
    refuses, in one line naming the path and the fix, one that may not."""
    if not os.path.lexists(path):
        return False
    try:
        current = _current_bytes(path)
    except OSError:
        current = None
    if current is None or may_replace is None or not may_replace(path, sha256(current)):
        shown = f"{option} {path}" if option else str(path)
        raise UsageError(f"{shown} already exists: pario never overwrites a file it did not "
                         f"write (nor writes through a symlink); {fix}")
    return True


def write_new_file(path, data, option="--out", may_replace=None, fix="choose a new name or remove it"):
    """Write `data` (str or bytes) to `path` as described above; returns
    the SHA-256 of what was written.  `may_replace(path, sha256)` is asked
    about a regular file already at `path`; without it, nothing is replaced."""
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    parent = path.parent if str(path.parent) else Path(".")
    shown = f"{option} {path}" if option else str(path)
    replacing = check_replaceable(path, may_replace, option, fix)
    if not parent.is_dir():
        raise UsageError(f"{shown}: directory {parent} does not exist: create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{shown}: directory {parent} is not writable: choose another")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pario-tmp", dir=parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        if replacing:
            os.rename(tmp, path)
            tmp = None
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UsageError(f"{shown} appeared while writing: pario never overwrites a file; "
                                 f"{fix}") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot write it ({exc.strerror}): choose another path") from exc
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    return sha256(data)
