"""A watchdog that outlives `pario run` by a moment, so that `kill -9` of
pario still takes mpirun and its ranks down and leaves no scratch behind.

pario starts it once per run as a separate process (its own session, so a
terminal's Ctrl-C goes to pario, which stops cleanly itself) and keeps the
write end of a pipe to its stdin.  pario tells it, line by line, what to
clean if pario vanishes:

    scratch PATH            a directory of pario's own, removed at the end
    point PGID DIR NAME     the launcher's process group and the files its
                            engine creates (DIR/NAME, DIR/NAME.<digits>,
                            and the same in DIR's subdirectories named
                            after NAME, NUL-separated: a striped file's parts)
    clear                   the point ended; pario cleaned up itself
    made PATH               a directory pario created (a stripe target):
                            removed at the end if still empty
    unmade PATH             pario removed it itself

When the pipe reaches end of file (pario exited, however it died) the
watchdog kills the live point's process group (TERM, then KILL), removes
that point's files (regular files only: never a symlink or a file pario's
engine did not create under the run's unique name), the empty directories
pario made and the scratch directory, then exits."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


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

    def point(self, pgid, directory, name, subdirs=()):
        self._say(f"point {pgid} {directory}\0{name}" + "".join(f"\0{d}" for d in subdirs))

    def made(self, path):
        self._say(f"made {path}")

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
    """The file(s) a point's engine creates: NAME, or NAME.<digits>, in
    the directory and in the given subdirectories of it (a striped file's
    parts); regular files only (a symlink at such a name is not pario's)."""
    found = []
    for d in [Path(directory), *(Path(directory) / s for s in subdirs)]:
        found += _files_in(d, name)
    return found


def _files_in(d, name):
    found = []
    try:
        candidates = [d / name, *d.glob(name + ".*")]
    except OSError:
        return found
    for f in candidates:
        if f.name != name and not f.name[len(name) + 1:].isdigit():
            continue
        try:
            if f.is_symlink() or not f.is_file():
                continue
        except OSError:
            continue
        found.append(f)
    return found


def remove_point_files(directory, name, subdirs=()):
    for f in point_files(directory, name, subdirs):
        try:
            f.unlink()
        except OSError:
            pass


def kill_group(pgid, grace=5):
    """TERM the process group, KILL what is left after grace seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.05)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    scratch, point, made = None, None, []
    for line in sys.stdin:
        word, _, rest = line.rstrip("\n").partition(" ")
        if word == "scratch":
            scratch = rest
        elif word == "point":
            pgid, _, where = rest.partition(" ")
            directory, name, *subdirs = where.split("\0")
            point = (int(pgid), directory, name, subdirs)
        elif word == "clear":
            point = None
        elif word == "made":
            made.append(rest)
        elif word == "unmade" and rest in made:
            made.remove(rest)
    # pario is gone (or finished): clean what it could not.
    if point:
        kill_group(point[0])
        remove_point_files(point[1], point[2], point[3])
    for path in reversed(made):
        try:
            os.rmdir(path)  # only if empty; never through a link
        except OSError:
            pass
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
