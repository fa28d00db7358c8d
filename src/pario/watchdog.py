"""A watchdog that outlives `pario run` by a moment, so that `kill -9` of
pario still takes mpirun and its ranks down and leaves no scratch behind.

pario starts it once per run as a separate process (its own session, so a
terminal's Ctrl-C goes to pario, which stops cleanly itself) and keeps the
write end of a pipe to its stdin.  pario tells it, line by line, what to
clean if pario vanishes:

    scratch PATH            a directory of pario's own, removed at the end
    point PGID DIR NAME LEDGER
                            the launcher's process group and the files its
                            engine creates (DIR/NAME, DIR/NAME.<suffix>,
                            DIR/NAME_<suffix>, and the same in DIR's
                            subdirectories named after LEDGER,
                            NUL-separated: a striped file's parts; see
                            point_files), and the ledger in which the
                            engine lists the files it made (see
                            point_ledger)
    clear                   the point ended; pario cleaned up itself
    made PATH MARKER        a directory (a stripe target) this run entered,
                            NUL-separated from its in-use marker's name:
                            left at the end (pario.rundirs.leave_dir: the
                            last run out removes a directory pario made)
    unmade PATH             pario left it itself

When the pipe reaches end of file (pario exited, however it died) the
watchdog kills the live point's process group (TERM, then KILL), removes
that point's files (only a name that still holds a file the engine's
ledger says it made: never a symlink or a file put there by anyone else),
leaves the directories it entered and removes the scratch directory,
then exits."""

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from .rundirs import leave_dir


class Watchdog:
    """pario's side: start the process, tell it what to guard."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pario.watchdog"], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            text=True, env={**os.environ, "PYTHONPATH": _package_root()})

    def _say(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the watchdog is gone: pario still cleans up itself

    def scratch(self, path):
        self._say(f"scratch {path}")

    def point(self, pgid, directory, name, ledger, subdirs=()):
        self._say(f"point {pgid} {directory}\0{name}\0{ledger}" + "".join(f"\0{d}" for d in subdirs))

    def made(self, path, marker):
        self._say(f"made {path}\0{marker}")

    def unmade(self, path):
        self._say(f"unmade {path}")

    def clear(self):
        self._say("clear")

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass


def _package_root():
    root = str(Path(__file__).resolve().parents[1])
    extra = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + extra if extra else "")


def point_files(directory, name, subdirs=()):
    """The file(s) a point's engine creates: NAME, or NAME followed by '.'
    or '_' and a suffix (the engine's --name rule: NAME.0003, NAME.t2.0001,
    NAME.chk, NAME_hdf5_chk_0000), in the directory and in the given
    subdirectories of it (a striped file's parts); regular files only (a
    symlink at such a name is not pario's).  The name is the run's own
    (run_tag) and the runner refuses to start a point while any entry of
    that name exists, so what matches was created by the point's engine."""
    return [f for f in names_in_use(directory, name, subdirs) if _regular(f)]


def names_in_use(directory, name, subdirs=()):
    """Every entry, of any type (a symlink too), at a name the point's
    engine could create."""
    found = []
    for d in [Path(directory), *(Path(directory) / s for s in subdirs)]:
        found += _entries(d, name)
    return found


def _entries(d, name):
    try:
        with os.scandir(d) as it:
            return [Path(e.path) for e in it if _is_point_name(e.name, name)]
    except OSError:
        return []


def _is_point_name(entry, name):
    if entry == name:
        return True
    rest = entry[len(name):]
    return (entry.startswith(name) and rest[0] in "._" and len(rest) > 1
            and all(c.isalnum() or c in "._" for c in rest[1:]))


def _regular(f):
    try:
        return not f.is_symlink() and f.is_file()
    except OSError:
        return False


# The engine's side of the ledger is engine/src/util/safe_file.c.
LEDGER_ENV = "PARIO_OWNED_LEDGER"


def new_ledger(path):
    """Create the (empty) ledger a point's engine appends to, exclusively:
    the engine only appends to it, it never creates it."""
    with open(path, "x"):
        pass
    return {LEDGER_ENV: str(path)}


def point_ledger(ledger):
    """(device, inode) of every file the engine lists as made ("made DEV
    INO PATH") and not removed by itself since ("gone DEV INO PATH"), in
    the order the lines were appended, so a reused inode number counts
    only while its latest line says made."""
    live = set()
    try:
        text = Path(ledger).read_text(errors="replace")
    except OSError:
        return live
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        dev, _, rest = rest.partition(" ")
        ino, _, _ = rest.partition(" ")
        if not (dev.isdigit() and ino.isdigit()):
            continue
        if word == "made":
            live.add((int(dev), int(ino)))
        elif word == "gone":
            live.discard((int(dev), int(ino)))
    return live


def remove_point_files(directory, name, subdirs=(), ledger=None, unremoved=None):
    """Remove what the point's engine made and left behind: a name goes only
    while it holds a regular file the ledger lists as the engine's (device
    and inode, looked at without following a link).  Returns the entries at
    the point's names that are not the engine's: left alone.  An engine's
    file that cannot be removed (an immutable or read-only directory) is
    appended to `unremoved` as (path, why), for the caller to say."""
    made = point_ledger(ledger) if ledger else set()
    left = []
    for f in names_in_use(directory, name, subdirs):
        try:
            st = os.lstat(f)
        except OSError:
            continue
        if not (stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in made):
            left.append(f)
            continue
        try:
            f.unlink()
        except OSError as exc:
            if unremoved is not None:
                unremoved.append((f, exc.strerror or str(exc)))
    return left


def process_stat(pid, proc="/proc"):
    """(command name, the fields after it) of /proc/PID/stat, the fields as
    bytes from the state on (0 the state, 1 the parent, 3 the session, 19
    the start time), or None when the process is gone or /proc unreadable.
    The name is cut at the last ")": a command may hold one itself."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    name, paren, rest = text.partition(b" (")[2].rpartition(b")")
    return (name.decode(errors="replace"), rest.split()) if paren else None


def session_members(sid):
    """The live processes of a session (zombies, already dead, left out).
    The launcher starts its command in a session of its own (sid = its
    pid), and mpirun puts every rank in a process group of its own (Open
    MPI does), so the session, not the launcher's group, holds them all."""
    found = []
    for entry in os.scandir("/proc"):
        stat = process_stat(entry.name) if entry.name.isdigit() else None
        if stat and len(stat[1]) > 3 and int(stat[1][3]) == sid and stat[1][0] not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def kill_session(sid, grace=5, reap=None):
    """TERM every process of the session (the launcher and each rank, in
    whatever process group), KILL what is left after grace seconds; returns
    once none is alive, so nothing can create a file after the caller
    cleans up.  reap(), when given, collects the launcher if it is the
    caller's child (a zombie is not alive, but is reaped at once)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in session_members(sid):
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if reap:
                reap()
            if not session_members(sid):
                return
            time.sleep(0.05)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    scratch, point, made = None, None, {}
    for line in sys.stdin:
        word, _, rest = line.rstrip("\n").partition(" ")
        if word == "scratch":
            scratch = rest
        elif word == "point":
            pgid, _, where = rest.partition(" ")
            directory, name, ledger, *subdirs = where.split("\0")
            point = (int(pgid), directory, name, subdirs, ledger)
        elif word == "clear":
            point = None
        elif word == "made":
            path, _, marker = rest.partition("\0")
            made[path] = marker
        elif word == "unmade":
            made.pop(rest, None)
    # pario is gone (or finished): clean what it could not.
    if point:
        kill_session(point[0])
        remove_point_files(point[1], point[2], point[3], point[4])
    for path, marker in reversed(made.items()):
        try:
            leave_dir(path, marker)  # removed only by the last run out, if pario made it
        except OSError:
            pass
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
