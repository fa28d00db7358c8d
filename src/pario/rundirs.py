"""Subdirectories of --dir that a run's points need: the targets a striped
test spreads its file over (<dir>/stripe-0 .. stripe-N-1), as the ASCI
Red PFS spread a file over the UFS files of its RAIDs.

They are checked before anything runs (a name that is a symlink or a file
is refused: pario never follows a link, nor writes beside what it did not
make), created just before the first point if missing, and removed at the
end by the last run out, only if a pario run created them and they are
empty again: a directory the user made, or one holding anything pario
did not put there, stays.

Several runs may share --dir (the README allows it), so the run that made
a directory may finish while another still writes in it.  Two small
files of pario's own say who may remove it, each created exclusively and
never followed through a link:

    .pario-made            the directory was created by a pario run (not
                           by the user): whoever leaves it empty removes it
    .pario-in-use-TAG      run TAG is using it now (one per run)

A run enters a directory and leaves it under an flock of the directory
itself, so "is anyone else in it?" and the removal are one step: the last
run out, whichever made it, removes the marker and the directory; a run
that finds another run's marker leaves it to that run.

A marker can outlive its run: pario and its watchdog both killed (kill -9,
the OOM killer, a node crash).  Its name is the run's tag, host-pid-random
(checks.run_tag), so a run leaving a directory judges the others' markers:
one of this host whose pid no longer runs is stale and removed; one of
another host, or of a pid that still runs here, stays, and the run says in
one line which directory it left to whom."""

import errno
import fcntl
import os
import re
import stat
from pathlib import Path

from .checks import tag_host
from .errors import UsageError

MADE = ".pario-made"
IN_USE = ".pario-in-use-"
# How often a run retries entering a directory another run removed
# between its check and its entry (the last one out left just then).
ENTER_TRIES = 5
# A line about a directory that stays for a run still in it (not a fault:
# that run removes it); every other line is a warning.
NOTE = "note: "
# checks.run_tag's shape: host, pid, 32 random bits in hex
_TAG = re.compile(r"(?P<host>[A-Za-z0-9-]+)-(?P<pid>[0-9]+)-[0-9a-f]{8}")


class RunDirs:
    def __init__(self, directory, names, tag="run"):
        self.directory = Path(directory)
        self.paths = [self.directory / n for n in dict.fromkeys(names)]
        self.marker = f"{IN_USE}{tag}"
        self.entered = []

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
        name that appeared since the check) and enter every one (this
        run's in-use marker); `on_create(path, marker)` hears of each, so
        the watchdog can leave it for a killed run."""
        for path in self.paths:
            for _ in range(ENTER_TRIES):
                if _enter(path, self.marker):
                    break
            else:
                raise UsageError(f"cannot enter {path}: another run keeps removing it; use another --dir")
            self.entered.append(path)
            if on_create:
                on_create(path, self.marker)

    def remove(self, on_remove=None):
        """Leave every directory entered (leave_dir); returns the lines for
        those a pario run made that had to stay: never silently."""
        left = []
        for path in reversed(self.entered):
            why = leave_dir(path, self.marker)
            if why:
                left.append(why)
            if on_remove:
                on_remove(path)
        self.entered = []
        return left


def _enter(path, marker):
    """Create the directory if missing (with pario's MADE marker), then
    this run's in-use marker inside it, under the directory's lock.  False
    when the directory went away meanwhile (the last run out removed it):
    try again."""
    if path.is_symlink():  # put there since the check: never followed
        raise UsageError(f"{path} is a symbolic link: pario never follows one for its stripe "
                         "targets; remove it or use another --dir")
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"cannot create {path} ({exc.strerror}): use another --dir") from None
    else:
        try:
            _new_file(path / MADE, "this directory was made by a pario run; the last pario run to leave "
                                   "it removes it once nothing else is inside\n", path)
        except UsageError:
            os.rmdir(path)
            raise
    try:
        with _locked(path) as fd:
            if fd is None:
                return False
            _new_file(path / marker, f"a pario run (pid {os.getpid()}) is using this directory\n", path)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}: use another --dir") from None
    return True


def leave_dir(path, marker):
    """Remove this run's in-use marker; then, if no other run is in the
    directory, a pario run made it and nothing but its MADE marker is left,
    remove both.  Returns a line for a pario-made directory that must stay
    (a file pario did not make is inside), else ""."""
    path = Path(path)
    try:
        return _leave_locked(path, marker)
    except OSError:
        return ""  # cannot be read or locked: left as it is, never removed blindly


def _leave_locked(path, marker):
    with _locked(path) as fd:
        if fd is None:
            return ""  # gone already
        _remove_regular(path / marker)
        try:
            entries = os.listdir(path)
        except OSError:
            return ""
        kept = [why for why in (_judge_marker(path, e) for e in entries if e.startswith(IN_USE)) if why]
        if kept:  # another run is (or may be) still in it: the last one out removes it
            return kept[0]
        try:
            entries = os.listdir(path)  # without the stale markers just removed
        except OSError:
            return ""
        if MADE not in entries or not _is_regular(path / MADE):
            return ""  # the user's directory: never removed
        others = sorted(e for e in entries if e != MADE)
        if not others:
            _remove_regular(path / MADE)
            try:
                os.rmdir(path)
                return ""
            except OSError as exc:  # something appeared without the lock: keep the marker
                _new_file(path / MADE, "this directory was made by a pario run\n", path, quiet=True)
                others = [exc.strerror]
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        return (f"left {path}, a stripe directory pario made: it holds what pario did not put there "
                f"({shown}); remove that, then the directory")


def _pid_runs(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: running
    return True


def _judge_marker(path, name):
    """Another run's in-use marker, under the directory's lock: removed and
    "" when its run is gone from this host (the marker is stale), else the
    line saying why the directory stays."""
    tag = name[len(IN_USE):]
    m = _TAG.fullmatch(tag)
    pario_made = _is_regular(path / MADE)
    if m and m["host"] == tag_host() and not _pid_runs(int(m["pid"])):
        _remove_regular(path / name)
        return ""
    if not pario_made:
        return ""  # the user's directory stays whatever the markers say: nothing to report
    if m and m["host"] == tag_host():
        return (f"{NOTE}{path} stays for run {tag}, still running on this host (pid {m['pid']}): "
                "the last run out removes it")
    if m:
        return (f"left {path}, a stripe directory pario made: run {tag} of host {m['host']} is in it "
                f"(its marker {name}); once that run has ended, remove the marker, then the directory")
    return (f"left {path}, a stripe directory pario made: it holds an in-use marker of no run pario can "
            f"check ({name}); if no run uses the directory, remove the marker, then the directory")


class _locked:
    """An exclusive flock of the directory itself while its entries are
    judged; the descriptor, or None when the name no longer is that
    directory (removed meanwhile, or replaced by a link)."""

    def __init__(self, path):
        self.path, self.fd = Path(path), None

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone, or no longer a directory
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None  # a link now: never followed
            raise
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            now, held = os.lstat(self.path), os.fstat(self.fd)
        except OSError:
            return None
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino) or held.st_nlink == 0:
            return None  # removed (and maybe made again) while we waited for the lock
        return self.fd

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
        return False


def _new_file(path, text, directory, quiet=False):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        return  # MADE: there already; an in-use marker's name is this run's own
    except OSError as exc:
        if quiet:
            return
        raise UsageError(f"cannot write in {directory} ({exc.strerror}): use another --dir") from None
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _is_regular(path):
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove_regular(path):
    """Unlink a marker of pario's: only a regular file (never a link put at its name)."""
    if _is_regular(path):
        try:
            os.unlink(path)
        except OSError:
            pass


def _try_creating(path):
    """Make and remove the directory now, so a --dir where it cannot be made
    (/proc, a read-only mount: access() says yes to root there) is refused
    before the run is stored, not at its first point."""
    try:
        os.mkdir(path, 0o755)
    except OSError as exc:
        raise UsageError(f"cannot create {path} ({exc.strerror}): use another --dir") from None
    os.rmdir(path)
