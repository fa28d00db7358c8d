"""The bench scripts' one way in for their command line and their files.

Why one module: each script used to parse its sizes and counts itself, so a
bad argument ended in a traceback (or a division by zero, or an empty
median) and every script failed differently.  Here every bad argument, and
a missing engine or peer, is ONE line on stderr and exit code 2, decided
before anything is created.

And the house rule "pario never deletes, follows a link to, or overwrites a
file it did not create" holds for the benches too: `fresh_dir(parent)` makes
a new directory (mkdtemp) under --dir/--disk/--shm for everything a bench
writes, its peers' files included, and removes only that directory (and the
parent, only if this run made it and it is empty again).  Fixed names in a
shared directory (fio-bench.dat, ior-bench*) meant two benches at once, or
a user's own files, were deleted mid-run.
"""

import argparse
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from pario.errors import UsageError  # noqa: E402
from pario.units import parse_size  # noqa: E402


class Parser(argparse.ArgumentParser):
    """argparse whose refusals are one line (no usage block) and exit 2."""

    def error(self, message):
        fail(message)


def fail(message):
    """The bench's one line on stderr ("bench: ..."), exit code 2 (a usage
    error)."""
    print(f"bench: {message}", file=sys.stderr)
    sys.exit(2)


def _exit_on_sigterm(signum, frame):
    sys.exit(128 + signum)  # as SystemExit the bench's finally blocks remove what it made


def parser(doc):
    """A Parser described by the first line of a script's docstring; a
    bench that makes one is stopped by SIGTERM as by an exit, so that what
    it made (fresh_dir, its databases) is removed, not left behind."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    return Parser(prog=Path(sys.argv[0]).name, description=doc.splitlines()[0] if doc else None)


def size(text):
    """argparse type: a positive size such as 4k, 1m, 2g."""
    try:
        return parse_size(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def sizes(text):
    """argparse type: sizes separated by commas, e.g. 1m,4k."""
    return [size(t) for t in str(text).split(",")]


def count(text, least=1):
    """argparse type: a whole number of at least 1 (ranks, rounds, ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number: give e.g. 4") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is too small: give at least {least}")
    return value


def counts(text):
    """argparse type: whole numbers of at least 1 separated by commas, e.g. 1,4."""
    return [count(t) for t in str(text).split(",")]


def seconds(text):
    """argparse type: a number of seconds, not negative."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} seconds: give 0 or more")
    return value


def engine():
    """pario-engine's path, or the one-line refusal (run 'make build')."""
    from pario.engine import engine_path
    try:
        path = engine_path()
    except UsageError as e:
        fail(str(e))
    if not os.access(path, os.X_OK):
        fail(f"{path} is not an executable: run 'make build'")
    return path


def tool(name, fix="run 'make deps'"):
    """A program the bench runs (fio, bonnie++, ...) or the one-line refusal."""
    if not shutil.which(name):
        fail(f"{name} not found: {fix}")


def directory(text, option):
    """Check a --dir/--disk/--shm parent before anything is made: it is a
    directory we can write, or it does not exist yet (fresh_dir makes it)."""
    path = Path(text)
    if path.is_symlink():
        fail(f"{option} {text} is a symbolic link: give the directory it points to")
    if path.exists() and not path.is_dir():
        fail(f"{option} {text} is not a directory: give a directory (made if missing)")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        fail(f"{option} {text} is not writable: give a directory you can write")
    return path


@contextlib.contextmanager
def fresh_dir(parent, prefix):
    """A new directory under `parent` for everything a bench writes; on the
    way out it is removed whole, and `parent` (with any directories above it
    that this call made) only if it made them and they are empty."""
    parent = Path(parent)
    made = []
    for p in reversed([parent, *parent.parents]):
        if not p.exists():
            try:
                p.mkdir()
            except OSError as e:
                _rmdirs(made)
                fail(f"cannot make {p}: {e.strerror}: give a directory you can write")
            made.append(p)
    work = Path(tempfile.mkdtemp(prefix=f"{prefix}.", dir=parent))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        _rmdirs(made)


def _rmdirs(made):
    for p in reversed(made):
        try:
            p.rmdir()  # only if empty: another run may be using it now
        except OSError:
            break
