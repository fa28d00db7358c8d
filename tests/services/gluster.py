#!/usr/bin/env python3
"""GlusterFS on loopback, all of it under one directory: a glusterd of its
own (own working directory, bound to 127.0.0.1), a 4-brick distributed
volume and a 2+1 disperse volume whose bricks are directories of the root
file system (hence `force`), both mounted with the FUSE client.

Bricks must be named by a host name, not an address (Gluster refuses
127.0.0.1 and localhost), that resolves to 127.0.0.1: this host's name
when it does, else `pario-brick`, which start() adds to /etc/hosts (and
stop() removes) if nothing names it yet.

Each volume is profiled (`gluster volume profile`), so a test can count
the bytes its bricks really read: the honest check that a read was not
served by a client-side cache.

By hand:
    python3 tests/services/gluster.py start /var/tmp/pario-gluster   # prints the mount points
    python3 tests/services/gluster.py stop /var/tmp/pario-gluster
"""

import fcntl
import os
import re
import shutil
import socket
import stat
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python3 tests/services/gluster.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "services"
from .common import (Processes, ServiceError, program, remove_if_empty, require_free_port,
                     require_programs, require_root, run, service_main, wait_until)

PACKAGES = ["glusterfs-server", "glusterfs-client"]
PORT = 24007            # glusterd's port: clients and bricks ask it for volume files
RUN_DIR = Path("/var/run/gluster")  # where glusterd keeps brick and self-heal pid files
HOSTS_MARK = "# pario test bricks (tests/services/gluster.py), removed by its stop"
FALLBACK_HOST = "pario-brick"
LOCK_FILE = "/var/tmp/pario-gluster.lock"
VOLUMES = {
    # mount name: (volume name, create arguments between name and bricks, brick count)
    "dist": ("pario-dist", [], 4),
    "disperse": ("pario-disperse", ["disperse", "3", "redundancy", "1"], 3),
}


class GlusterVolumes:
    def __init__(self, directory):
        self.dir = Path(directory).resolve()
        self.procs = Processes(self.dir)
        self.mounts = {name: self.dir / "mnt" / name for name in VOLUMES}

    def volume(self, mount_name):
        return VOLUMES[mount_name][0]

    def start(self, ready_seconds=60):
        require_root("GlusterFS")
        require_programs("GlusterFS", ["glusterd", "gluster", "glusterfs", "glusterfsd"], PACKAGES)
        if not os.path.exists("/dev/fuse"):
            raise ServiceError("GlusterFS: /dev/fuse is missing, so volumes cannot be mounted: "
                               "load the fuse module (modprobe fuse) or run where FUSE is allowed")
        if self.dir.exists() and any(self.dir.iterdir()):
            raise ServiceError(f"{self.dir} is not empty (volumes already there?): stop them with "
                               f"'python3 tests/services/gluster.py stop {self.dir}' or use another directory")
        self._take_machine_lock()
        try:
            require_free_port("glusterd", PORT, fixed=True)
            self._start(ready_seconds)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, ready_seconds):
        for sub in ("glusterd", "log", "bricks", "mnt"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        host = self._brick_host()
        vol = self.dir / "glusterd.vol"
        vol.write_text("\n".join([
            "volume management",
            "    type mgmt/glusterd",
            f"    option working-directory {self.dir / 'glusterd'}",
            "    option transport-type socket",
            "    option transport.socket.bind-address 127.0.0.1",
            f"    option transport.socket.listen-port {PORT}",
            "    option transport.socket.read-fail-log off",
            "    option ping-timeout 0",
            "    option event-threads 1",
            "    option max-port 60999",
            "end-volume", ""]))
        log = self.dir / "log"
        self.procs.start([program("glusterd"), "-N", "-f", str(vol), "-l", str(log / "glusterd.log")],
                         log / "glusterd.out")
        wait_until("glusterd", lambda: self._cli("volume", "info", timeout=20).returncode == 0,
                   ready_seconds, log / "glusterd.log")
        for name, (volume, layout, count) in VOLUMES.items():
            bricks = [f"{host}:{self.dir / 'bricks' / f'{name}{i}'}" for i in range(count)]
            # force: the bricks are plain directories of the root file system
            self._must("volume", "create", volume, *layout, "transport", "tcp", *bricks, "force")
            self._must("volume", "start", volume)
            self._must("volume", "profile", volume, "start")
            self._mount(name, volume)

    def _take_machine_lock(self, wait_seconds=900):
        """glusterd has one port and one CLI socket per machine: test
        sessions running side by side (several checkouts) take turns."""
        self._lock = open(LOCK_FILE, "a")
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ServiceError(f"GlusterFS: another test session has held {LOCK_FILE} for "
                                       f"{wait_seconds} s: wait for it or stop its volumes") from None
                time.sleep(1)

    def _brick_host(self):
        """A host name that resolves to 127.0.0.1 (see the module's note)."""
        for name in (socket.gethostname(), FALLBACK_HOST):
            try:
                if socket.gethostbyname(name) == "127.0.0.1":
                    return name
            except OSError:
                continue
        try:
            with open("/etc/hosts", "a") as hosts:
                hosts.write(f"127.0.0.1 {FALLBACK_HOST} {HOSTS_MARK}\n")
        except OSError as exc:
            raise ServiceError(f"GlusterFS: no host name resolves to 127.0.0.1 and /etc/hosts is not "
                               f"writable ({exc.strerror}): add '127.0.0.1 {FALLBACK_HOST}' to it")
        (self.dir / "hosts-line-added").touch()
        return FALLBACK_HOST

    def _mount(self, name, volume):
        point = self.mounts[name]
        point.mkdir(parents=True, exist_ok=True)
        pid_file = self.dir / "log" / f"client-{name}.pid"
        self._plain([program("glusterfs"), "--volfile-server=127.0.0.1", f"--volfile-id={volume}",
                     f"--pid-file={pid_file}", "-l", str(self.dir / "log" / f"client-{name}.log"), str(point)],
                    f"mounting {volume}")
        wait_until(f"the FUSE mount of {volume}", lambda: os.path.ismount(point), 30,
                   self.dir / "log" / f"client-{name}.log")
        wait_until(f"the pid file of {volume}'s client", pid_file.exists, 10)
        self.procs.adopt(int(pid_file.read_text().split()[0]))

    def _cli(self, *args, timeout=60):
        try:
            return run([program("gluster"), "--mode=script", *args], timeout=timeout)
        except Exception as exc:  # a hung CLI is a failed command
            class Failed:
                returncode, stdout, stderr = 1, "", str(exc)
            return Failed()

    def _must(self, *args):
        p = self._cli(*args)
        if p.returncode != 0:
            said = (p.stderr or p.stdout).strip().splitlines()
            raise ServiceError(f"gluster {' '.join(args[:3])} failed: {said[-1] if said else p.returncode}")
        return p

    def _plain(self, argv, what):
        p = run(argv, timeout=60)
        if p.returncode != 0:
            said = (p.stderr or p.stdout).strip().splitlines()
            raise ServiceError(f"{what} failed: {said[-1] if said else p.returncode}")

    # --- what tests ask -------------------------------------------------

    def clear_profile(self, mount_name):
        self._must("volume", "profile", self.volume(mount_name), "info", "clear")

    def bytes_read_by_bricks(self, mount_name):
        """Bytes all bricks of the volume read since clear_profile()."""
        text = self._must("volume", "profile", self.volume(mount_name), "info", "cumulative").stdout
        return sum(int(n) for n in re.findall(r"Data Read:\s*(\d+) bytes", text))

    # --- stopping --------------------------------------------------------

    def stop(self):
        """Unmount, stop and delete the volumes, stop every daemon they
        started, remove what start() made.  Safe to call twice."""
        if getattr(self, "_lock", None) is None and not self.procs.file.exists():
            return  # never started here (or already stopped): the volumes may be another session's
        for point in self.mounts.values():
            if os.path.ismount(point):
                if run(["umount", str(point)], timeout=60).returncode != 0:
                    run(["umount", "-l", str(point)], timeout=60)
        running = self.procs.file.exists()
        sockets = []
        for volume, _, _ in VOLUMES.values():
            # read before `volume stop`, which removes the pid files that
            # name the daemons (and through them their sockets)
            daemons = self._volume_daemons(volume)
            sockets += [sock for _, sock in daemons if sock]
            if running:
                self._cli("volume", "stop", volume, "force", timeout=60)
                self._cli("volume", "delete", volume, timeout=60)
            for pid, _ in daemons:
                self.procs.kill(pid)
            for d in (RUN_DIR / "vols" / volume, RUN_DIR / "shd" / volume):
                remove_if_empty(d)  # only if glusterd left it empty
        self.procs.stop()
        for sock in sockets:
            _remove_socket(sock)
        if (self.dir / "hosts-line-added").exists():
            lines = Path("/etc/hosts").read_text().splitlines(keepends=True)
            Path("/etc/hosts").write_text("".join(l for l in lines if HOSTS_MARK not in l))
        for name in ("glusterd", "log", "bricks", "mnt"):
            shutil.rmtree(self.dir / name, ignore_errors=True)
        for name in ("glusterd.vol", "hosts-line-added"):
            (self.dir / name).unlink(missing_ok=True)
        remove_if_empty(self.dir)
        lock = getattr(self, "_lock", None)
        if lock:
            lock.close()  # releases the machine lock
            self._lock = None

    def _volume_daemons(self, volume):
        """[(pid, socket or None)] of the brick and self-heal daemons
        glusterd started for `volume` (which `volume stop` can leave
        behind, and whose unix sockets in RUN_DIR it always leaves): found
        by their pid files, taken only if their command line names this
        service's bricks or volume."""
        found = []
        for pid_file in [*(RUN_DIR / "vols" / volume).glob("*.pid"), *(RUN_DIR / "shd" / volume).glob("*.pid")]:
            try:
                pid = int(pid_file.read_text().split()[0])
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            except (OSError, ValueError, IndexError):
                continue
            if any(str(self.dir) in a or f"shd/{volume}" in a for a in argv):
                found.append((pid, _socket_argument(argv)))
        return found


def _socket_argument(argv):
    """The unix socket a gluster daemon listens on (its -S argument), if
    it is one in RUN_DIR: the only sockets stop() removes."""
    for flag, value in zip(argv, argv[1:]):
        if flag == "-S" and Path(value).parent == RUN_DIR and value.endswith(".socket"):
            return Path(value)
    return None


def _remove_socket(path):
    """Remove a daemon's socket once the daemon is gone: only a socket,
    never what else may have come to sit under its name."""
    try:
        if stat.S_ISSOCK(path.lstat().st_mode):
            path.unlink()
    except OSError:
        pass


def main(argv):
    def started(service):
        for name, point in service.mounts.items():
            print(f"{name}: {service.volume(name)} mounted on {point}")
    return service_main(argv, "gluster", GlusterVolumes, started)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
