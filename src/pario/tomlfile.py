"""The one way pario finds and reads a TOML file a user names: an
experiment (`pario run NAME`) or a machine (`pario model --machine NAME`).

NAME is a file when it looks like a path (it ends in .toml, in any case,
or holds a /), else a file shipped with pario (`shipped/NAME.toml`).  A
file is read only when it is a regular file of at most MAX_BYTES (a fifo
would be waited on for ever, a link to /dev/zero read until memory runs
out), and only as UTF-8 text; each problem is one line naming the file and
the fix."""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

# An experiment or a machine is a page or two of TOML; anything far
# larger is not one.
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Shipped:
    """The files of one sort that pario ships: where, and their words."""
    what: str           # "experiment", "machine": what a file of it holds
    noun: str           # "preset", "machine": what a shipped one is called
    directory: Path
    see: str = ""       # where the user can list them, e.g. " (see 'pario presets')"

    def names(self):
        return sorted(p.stem for p in self.directory.glob("*.toml"))


def names_a_file(text):
    return text.lower().endswith(".toml") or "/" in text


def _exists(path):
    """Path.exists, where a name the system cannot even look up (a NUL)
    counts as missing; a name too long or a loop of links is its own line."""
    try:
        return path.exists()
    except ValueError:
        return False


def locate(text, shipped):
    """The path NAME stands for (see above), or one line saying what was
    looked for and what to give instead."""
    names = ", ".join(shipped.names())
    try:
        if names_a_file(text):
            path = Path(text)
            if not _exists(path):
                raise UsageError(f"{shipped.what} file {text} does not exist: give an existing .toml file "
                                 f"or a {shipped.noun} name ({names})")
            return path
        path = shipped.directory / f"{text}.toml"
        if _exists(path):
            return path
        here = (f"; to read the file {text} here, give it as ./{text}" if Path(text).is_file() else
                "; a file of your own is named by its path: ending in .toml, or with a /")
    except OSError as exc:  # a name too long for the system, a loop of links...
        raise UsageError(f"{shipped.what} '{text}': {exc.strerror}: give a {shipped.noun} name "
                         f"({names}) or a .toml file") from None
    raise UsageError(f"{shipped.noun} '{text}' is unknown: use one of {names}{shipped.see} or a .toml "
                     f"file (no {shipped.noun} of that name is shipped{here})")


def read_text(path, what):
    """The text of a regular file of at most MAX_BYTES, as UTF-8.  Opened
    non-blocking, so a fifo is refused rather than waited on for ever."""
    kind = f"a .toml {what} file"
    one = f"{'an' if what[0] in 'aeiou' else 'a'} {what}"   # "an experiment", "a machine"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror}): check its permissions") from exc
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{path} is a directory: give {kind}")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path} is not a regular file (a device, fifo or socket): give {kind}")
        if st.st_size > MAX_BYTES:
            raise UsageError(f"{path} is {st.st_size} bytes, too large to be {one} (at most {MAX_BYTES}): "
                             f"give {kind}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror}): check its permissions") from exc
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:  # grew while read
        raise UsageError(f"{path} is too large to be {one} (over {MAX_BYTES} bytes): give {kind}")
    try:
        return raw.decode("utf-8-sig")  # an editor's byte-order mark is no TOML error
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}): save the file as UTF-8") from exc
