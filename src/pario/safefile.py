"""The one way pario writes a file or makes a directory the user will see
(a report, an export, a figure and the folder it goes in): never over a
file pario did not create, never through a symlink, never half-written.

A file's data goes to a temporary name made with O_EXCL in the target's
own directory (so a symlink or a file already there is never opened),
then:
* a new name is made with link(2), which refuses a name that exists;
* an existing name is replaced with rename(2), which replaces the name
  itself and never writes through a symlink, and only when the caller's
  `may_replace` says pario made exactly that file: the results database
  recorded its fingerprint when pario wrote it (Store.figure_written), and
  the fingerprint is of the file itself (its device and inode: the very
  file pario linked there) and of its bytes (unchanged since).  A copy
  with the same bytes put at the name is not pario's file, and neither is
  one pario wrote for another database.  Anything else is refused in one
  line.

A directory pario makes (make_directory) is made with mkdir(2), which
makes a new name only; a name already there is used only when it is a
real directory, never a symlink (a link at a name pario chose would send
its files wherever the link points)."""

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import UsageError


def fingerprint(st, data):
    """What tells the file pario wrote from any other at its name: its
    device and inode, and the SHA-256 of its bytes, as one SHA-256."""
    return hashlib.sha256(f"{st.st_dev}:{st.st_ino}:".encode() + data).hexdigest()


def _current_fingerprint(path):
    """The fingerprint of an existing regular file, read without following
    a symlink; None for anything else (a symlink, a directory, a fifo)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        return fingerprint(os.fstat(f.fileno()), f.read())


def _not_a_file(path):
    """(what, why, the fix for a path the user named) of an existing `path`
    that is not a regular file; None for a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "a symlink", "pario never writes through one", "give the real path or a new name"
    if stat.S_ISDIR(mode):
        return "a directory", "pario writes a file, not into one", "give a file name inside it"
    if not stat.S_ISREG(mode):
        return ("not a regular file (a device, a fifo or a socket)", "pario writes only files of its own",
                "give a new file name")
    return None


def _shown(path, option):
    return f"{option} {path}" if option else str(path)


def check_replaceable(path, may_replace=None, option="--out", fix="choose a new name or remove it"):
    """Whether `path` exists and may be replaced (see write_new_file);
    refuses, in one line naming the path and the fix, one that may not."""
    if str(path).endswith(os.sep):  # Path() would drop it and write a file at the name
        raise UsageError(f"{_shown(path, option)} ends in '{os.sep}', a directory's name: give a file name")
    if not os.path.lexists(path):
        return False
    other = _not_a_file(path)
    if other:  # a path the user gave gets a fix that removes nothing (tester 11: --out /dev/null)
        what, why, own_fix = other
        raise UsageError(f"{_shown(path, option)} already exists and is {what}: {why}; "
                         f"{own_fix if option else fix}")
    try:
        current = _current_fingerprint(path)
    except OSError:
        current = None
    if may_replace is None:
        raise UsageError(f"{_shown(path, option)} already exists: pario writes only a new file here, "
                         f"never over one (nor through a symlink); {fix}")
    if current is None or not may_replace(path, current):
        raise UsageError(f"{_shown(path, option)} already exists and is not a file this results database "
                         "recorded writing there, unchanged since: pario replaces no other file (nor writes "
                         f"through a symlink); {fix}")
    return True


def write_new_file(path, data, option="--out", may_replace=None, fix="choose a new name or remove it"):
    """Write `data` (str or bytes) to `path` as described above; returns
    the fingerprint of the file written (for the store to record).
    `may_replace(path, fingerprint)` is asked about a regular file already
    at `path`; without it, nothing is replaced."""
    replacing = check_replaceable(path, may_replace, option, fix)  # before Path() drops a last '/'
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    parent = path.parent if str(path.parent) else Path(".")
    shown = _shown(path, option)
    if not parent.is_dir():
        raise UsageError(f"{shown}: directory {parent} does not exist: create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{shown}: directory {parent} is not writable: choose another")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pario-tmp", dir=parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            written = fingerprint(os.fstat(f.fileno()), data)  # link and rename keep the inode
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
    return written


def check_directory(path, option="", fix="remove it or choose another place"):
    """Refuse, in one line, a name pario would make a directory at (or
    write into) that is a symlink or not a directory; a missing name or a
    real directory passes.  Makes nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{_shown(path, option)}: {exc.strerror}: {fix}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{_shown(path, option)} is a symbolic link: pario never writes through a link "
                         f"at a directory it makes or writes into; {fix}")
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{_shown(path, option)} exists and is not a directory: {fix}")


def _another_place(option):
    return f"give another {option}" if option else "give --out DIR"


def try_writing(directory):
    """Create and remove a file of our own in `directory`; OSError when it
    cannot be written (access() says yes to root on file systems that
    refuse every write: /proc, a read-only mount)."""
    fd, name = tempfile.mkstemp(prefix=".pario-probe-", dir=directory)
    os.close(fd)
    os.unlink(name)


def check_makeable(path, option=""):
    """Before anything is printed: a directory to be made at `path` can be
    made there (its parent takes a file of pario's own)."""
    parent = Path(path).absolute().parent
    if os.path.lexists(path) or not parent.is_dir():
        return
    try:
        try_writing(parent)
    except OSError as exc:
        raise UsageError(f"{_shown(path, option)}: cannot make the directory ({exc.strerror}): "
                         f"{_another_place(option)}") from None


def make_directory(path, option="", fix="remove it or choose another place"):
    """The directory `path` (its parent must exist): made new with mkdir,
    or the real directory already there; a symlink or anything else at the
    name is refused as check_directory says."""
    try:
        os.mkdir(path, 0o755)  # a new name only: never through a link
        return Path(path)
    except FileExistsError:
        pass
    except OSError as exc:  # nothing at the name to remove: another place is the fix
        raise UsageError(f"{_shown(path, option)}: cannot make the directory ({exc.strerror}): "
                         f"{_another_place(option)}") from None
    check_directory(path, option, fix)
    return Path(path)


@contextlib.contextmanager
def database_scratch(beside, suffix):
    """A new empty file of pario's own beside `beside` (made with O_EXCL in
    its directory, its mode the umask's, as SQLite would make it), for an
    SQLite database built whole before it is linked to a name: the results
    database (Store), a copy saved beside a moved one (db_moved).  The
    scratch name and its -journal are removed afterwards; a name linked to
    the file keeps it."""
    beside = Path(beside)
    fd, tmp = tempfile.mkstemp(prefix=f".{beside.name}.", suffix=suffix, dir=beside.parent)
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
    finally:
        for name in (tmp, tmp + "-journal"):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
