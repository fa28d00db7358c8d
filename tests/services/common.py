"""What every service here shares: one-line errors, preconditions (root,
installed programs, free ports), waiting for readiness, and stopping only
the processes a service started (pid files in its own directory)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class ServiceError(Exception):
    """A service could not start or stop: the message is one line naming
    the problem and the fix."""


def require_root(what):
    if os.geteuid() != 0:
        raise ServiceError(f"{what} needs root (it starts system daemons): run as root or skip "
                           "the integration tests with -m 'not integration'")


def require_programs(what, programs, packages):
    missing = [p for p in programs if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
    if missing:
        raise ServiceError(f"{what}: {', '.join(missing)} not installed: run 'make deps' "
                           f"(Debian packages {' '.join(packages)})")


def program(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_free_port(what, port, fixed=False):
    """`fixed`: the service cannot move (glusterd's clients ask its one
    port for volume files), so the fix is only to free the port."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            raise ServiceError(f"{what}: port {port} on 127.0.0.1 is taken: stop what listens there "
                               f"(ss -ltnp 'sport = :{port}')"
                               + (f"; {what} needs this port" if fixed else " or choose another port")) from None


def wait_until(what, check, seconds, log=None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    tail = ""
    if log and Path(log).exists():
        lines = [l for l in Path(log).read_text(errors="replace").splitlines() if l.strip()]
        tail = f"; last log line: {lines[-1][:200]}" if lines else ""
    raise ServiceError(f"{what} not ready after {seconds:g} s{tail}: see {log or 'its output'}")


class Processes:
    """The daemons a service started, recorded in DIR/pids so a later
    `stop` (another process, a test that failed) finds exactly those."""

    def __init__(self, directory):
        self.file = Path(directory) / "pids"

    def start(self, argv, log):
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        with open(self.file, "a") as f:
            f.write(f"{proc.pid} {os.path.realpath(argv[0])}\n")
        return proc

    def alive(self, pid):
        """Running (a zombie whose parent is gone counts as ended)."""
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state != "Z"

    def adopt(self, pid):
        """A daemon that forked itself away (it wrote its pid file)."""
        with open(self.file, "a") as f:
            f.write(f"{pid} {os.readlink(f'/proc/{pid}/exe')}\n")

    def kill(self, pid, grace=5.0):
        """TERM, then KILL after `grace` seconds."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while self.alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        if self.alive(pid):
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
            _reap(pid)

    def stop(self, grace=5.0):
        """Last started, first stopped."""
        if not self.file.exists():
            return
        entries = [l.split(maxsplit=1) for l in self.file.read_text().splitlines() if l.strip()]
        for pid_text, name in reversed(entries):
            pid = int(pid_text)
            if self._ours(pid, name):
                self.kill(pid, grace)
        self.file.unlink()

    def _ours(self, pid, name):
        """The pid still runs the program we started (pids are reused)."""
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return False
        return exe == name.strip()


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def run(argv, timeout=30, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


def remove_if_empty(directory):
    """rmdir, only when nothing is left in it: the directory may have been
    given by hand and hold the user's files."""
    try:
        Path(directory).rmdir()
    except OSError:
        pass


def service_main(argv, name, make, started):
    """`python -m tests.services.NAME start|stop DIRECTORY` for every service:
    make(directory) builds the service, started(service) prints how to use it.
    Errors are the one line ServiceError carries, exit 1; bad words exit 2."""
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        print(f"usage: {argv[0]} start|stop DIRECTORY", file=sys.stderr)
        return 2
    service = make(argv[2])
    try:
        if argv[1] == "start":
            service.start()
            started(service)
        else:
            service.stop()
    except ServiceError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    return 0
