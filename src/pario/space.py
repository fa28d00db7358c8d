"""Whether a run's points fit on their file systems, checked once before
anything is stored or started.

A point may say what it writes (`space_needs(directory)`: (directory,
bytes) pairs, optional in the point contract); points run one after
another and each removes its files, so each point on its own must fit.
Directories on one file system share its free space (stripe targets
<dir>/stripe-0, stripe-1 on one disk): their bytes are summed per device
(st_dev), never each held against the whole.  The engine checks the same
again when it starts (the disk can fill meanwhile); this check spares a
run whose every point would be refused by it."""

import os
from pathlib import Path

from .checks import directory_fix
from .dir_fs import dir_fs
from .errors import UsageError
from .studies import space_fix


def _existing(path):
    """The path, or its nearest existing parent (a stripe target the
    runner has not made yet lives on its parent's file system)."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _free_bytes(path):
    """Free bytes of path's file system; refused in one line where it has
    no storage at all (0 blocks: /proc, /sys), where "0 B free" would send
    the user to free space that was never there."""
    st = os.statvfs(path)
    if st.f_blocks == 0:
        found = dir_fs(path)
        kind = f" ({found.fs_type})" if found else ""
        raise UsageError(f"{path} is on a file system with no storage{kind}: 0 blocks in all, so "
                         "pario cannot write its files there; give --dir a directory on a disk or "
                         "a parallel file system")
    return st.f_bavail * st.f_frsize


def free_text(path):
    """The free space of the file system holding `path`, as a person
    reads it ('448 KiB')."""
    return _approx(_free_bytes(_existing(path)))


def per_file_system(needs):
    """[(directory, bytes), ...] -> {st_dev: (first directory, bytes, how many)}."""
    out = {}
    for directory, nbytes in needs:
        dev = os.stat(_existing(directory)).st_dev
        first, total, count = out.get(dev, (directory, 0, 0))
        out[dev] = (first, total + nbytes, count + 1)
    return out


def check_space(points, directory, kind):
    """Refuse, in one line, a plan of `kind` (the experiment's) with a
    point whose files do not fit in the free space of a file system it
    writes to (the point that misses by the most is named, with how many
    miss, and the fix is one the command takes: studies.space_fix)."""
    short, worst = 0, None
    for p in points:
        needs = p.space_needs(directory) if hasattr(p, "space_needs") else []
        try:
            groups = per_file_system(needs)
            misses = [(need - _free_bytes(_existing(d)), d, need, n) for d, need, n in groups.values()]
        except OSError as exc:  # the directory checks ran first: only a race gets here
            raise UsageError(f"--dir {directory}: {exc.strerror}: {directory_fix(exc)}") from None
        misses = [m for m in misses if m[0] > 0]
        if misses:
            short += 1
            miss = max(misses, key=lambda m: m[0])
            if worst is None or miss[0] > worst[0][0]:
                worst = (miss, p)
    if worst is None:
        return
    (over, where, need, targets), p = worst
    free = need - over
    shared = f" over {targets} stripe targets on one file system" if targets > 1 else ""
    others = f" ({short} of {len(points)} points do not fit)" if short > 1 else ""
    # a point's write loaders stream files of their own (the engine's check says so too)
    loader_bytes = p.loader_bytes() if hasattr(p, "loader_bytes") else 0
    with_loaders = " (with the write loaders' files)" if loader_bytes else ""
    # no option of `pario run` sets the loaders: the experiment's key does;
    # and where their files alone overflow, a smaller --size cannot help
    fewer = ("fewer background loaders (the background key of an experiment file of your own, "
             "docs/presets.md)")
    fix = (f"free space on {directory} or {fewer}" if loader_bytes and loader_bytes >= free
           else space_fix(kind, p, directory) + (f" or {fewer}" if loader_bytes else ""))
    raise UsageError(f"{_existing(where)} has {_approx(free)} free but {p.label()} needs "
                     f"{_approx(need)}{with_loaders}{shared}{others}: {fix}")


def _approx(n):
    """A byte count as a person reads it: '448 KiB', '1.5 GiB'."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v >= 10 or v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"
