"""Checks of the paths a run will use, made before anything is stored or
started, so a bad one costs one line and no half-made run."""

import errno
import math
import os
import re
import secrets
import socket
from pathlib import Path

from .errors import UsageError
from .safefile import check_directory, try_writing

# The longest --timeout pario accepts: a week per point.
MAX_TIMEOUT = 7 * 24 * 3600.0


def path_text(option, text):
    """A path as the user typed it: not empty, valid UTF-8 (it is stored
    and printed), no control characters, within the system's limits."""
    if text is None or str(text) == "":
        raise UsageError(f"{option} is empty: give a path")
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{option} {text.encode('utf-8', 'backslashreplace').decode()} is not "
                         "valid UTF-8: choose a path of plain characters") from None
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise UsageError(f"{option} {text!r} contains control characters: choose a plain path")
    limit = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096
    if len(text.encode()) >= limit - 64 or any(len(part.encode()) > 255 for part in Path(text).parts):
        raise UsageError(f"{option} is too long for this system ({len(text.encode())} bytes; "
                         f"at most {limit - 64}, 255 per name): choose a shorter path")
    return text


# errno values of a directory that is there but out of reach: a network
# mount that stopped answering (the engine's fail_dir_fix says the same)
_MOUNT_TROUBLE = {errno.ENOTCONN, errno.EIO, errno.ESTALE, errno.EHOSTDOWN, errno.ETIMEDOUT}


def directory_fix(exc):
    """The fix for a directory an OSError refused: a mount to check when
    its file system stopped answering, else another directory."""
    if exc.errno in _MOUNT_TROUBLE:
        return "check the file system mounted there, or choose another directory"
    return "choose another directory"


def check_dir(text):
    """--dir: an existing, writable directory; returned resolved."""
    d = Path(path_text("--dir", text))
    try:
        if d.exists() and not d.is_dir():
            raise UsageError(f"--dir {d} is not a directory: point --dir at the directory to test")
        if not d.is_dir():
            raise UsageError(f"--dir {d} does not exist: create it or point --dir at an existing "
                             "directory")
        if not os.access(d, os.W_OK | os.X_OK):
            raise UsageError(f"--dir {d} is not writable: choose a directory you can write")
        return d.resolve()
    except OSError as exc:
        raise UsageError(f"--dir {d}: {exc.strerror}: {directory_fix(exc)}") from None


def check_out(text):
    """--out (plots): an existing directory, or a new name in one: pario
    creates at most the last component, as --dir, --db and report --out
    need their directory to exist (a typo must not grow a tree at /).
    Checked before any point runs."""
    if text is None:
        return None
    d = Path(path_text("--out", text))
    try:
        if d.exists() and not d.is_dir():
            raise UsageError(f"--out {d} is a file, not a directory: give a directory for the plots")
        check_directory(d, "--out", "give another --out")  # never a link at the name pario writes into
        probe = d.absolute() if d.is_dir() else d.absolute().parent
        if not probe.is_dir():
            raise UsageError(f"--out {d}: directory {probe} does not exist: create it or choose "
                             "another path (pario creates only the last name of --out)")
        _try_writing(probe, "--out", d)
    except OSError as exc:
        raise UsageError(f"--out {d}: {exc.strerror}: {directory_fix(exc)}") from None
    return d


def _try_writing(directory, option, shown):
    try:
        try_writing(directory)
    except OSError as exc:
        raise UsageError(f"{option} {shown}: {directory} is not writable ({exc.strerror}): "
                         "choose a directory you can write") from None


def check_timeout(seconds):
    if not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_TIMEOUT:
        raise UsageError(f"--timeout {seconds:g} must be a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT:.0f} (a week)")
    return seconds


def tag_host():
    """This host as run tags name it (rundirs judges markers by it)."""
    return re.sub(r"[^A-Za-z0-9-]", "", socket.gethostname().split(".")[0])[:24] or "host"


def run_tag():
    """A part of every file name this run's engines create that no other
    run shares, on any host or with any database: host, pid, 32 random bits
    (rundirs reads a stale in-use marker's host and pid back from it)."""
    return f"{tag_host()}-{os.getpid()}-{secrets.token_hex(4)}"
