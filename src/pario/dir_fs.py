"""Which file system --dir is on, as the engine names it in a result's
"target" (device "major:minor" from stat, type from /proc/self/mountinfo).

A run notes it before its first point and holds every point to it: if
--dir's mount goes away mid-run (a network file system unmounted, a lazy
umount), the engine would write into the empty mount-point directory on
the file system below, and that point must not be stored as the same
run's measurement."""

import os
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class DirFs:
    device: str      # "major:minor", as result["target"]["device"]
    fs_type: str     # the mount's type ("ext4", "fuse.glusterfs", "tmpfs") or "?"

    def __str__(self):
        return f"{self.fs_type}, device {self.device}"


def _mount_type(path, device):
    """The type of the mount of `device` that holds `path` (the longest
    mount point, as bind mounts share a device), or "?"."""
    best, kind = -1, "?"
    try:
        lines = open("/proc/self/mountinfo", encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return kind
    for line in lines:
        left, _, right = line.partition(" - ")
        f = left.split()
        if len(f) < 5 or f[2] != device or not right:
            continue
        point = f[4].replace("\\040", " ")
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), right.split()[0]
    return kind


def dir_fs(path):
    """--dir's file system now; None when --dir cannot be looked at (gone)."""
    path = os.path.realpath(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    return DirFs(device, _mount_type(path, device))


def moved_away(directory, started, result):
    """The one error line when a point ran on another file system than the
    one the run started on (by the point's own result document, else by
    --dir now), or None."""
    target = (result or {}).get("target") or {}
    now = dir_fs(directory)
    seen = target.get("device") or (now.device if now else None)
    kind = target.get("mount_type") or (now.fs_type if now and now.device == seen else "?")
    if started is None or seen is None or seen == started.device:
        return None
    host = ((result or {}).get("system") or {}).get("hostname")
    if host and host != socket.gethostname() and kind in (started.fs_type, "?"):
        return None  # another node numbers one network file system's device its own way
    return (f"--dir {directory} is no longer on the file system the run started on "
            f"({started} -> {kind}, device {seen}): was it unmounted? remount it and run again; "
            "this point is not stored as a measurement of the first")
