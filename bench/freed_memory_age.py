#!/usr/bin/env python3
"""Does a read run slower into memory the guest freed a while ago than into
memory it freed just before?  On a virtual machine with free page
reporting (virtio-balloon) the guest hands free memory back to the host a
couple of seconds after freeing it, and the host must fault it in again
when the guest reuses it.  That decides what a benchmark's read measures
when something long-running (bonnie++'s byte-per-syscall per-character
tests) sits between the freeing and the read; see
bench/bonnie_side_by_side.py.

One file; per round, alternating which goes first, the same sequence
twice but for where a pause sits:
  fresh: read it through, pause, evict it, read it (timed): the timed
         read lands on the memory the eviction freed a moment before;
  aged:  read it through, evict it, pause, read it (timed): the same
         memory, freed the pause before.
Both timed reads start the same time after the read-through, so what the
host caches of the file is alike.  Printed: MB/s and CPU seconds per GiB
of each timed read, per round, and the medians' ratio.

usage: bench/freed_memory_age.py [--dir /var/tmp] [--size 1g] [--pause 3] [--rounds 5]
"""
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from bonnie_side_by_side import evict  # the same eviction as the bonnie bench (bench/ is the script's path)

CALL = 1 << 20  # read size: the effect is the memory's, not the calls'


def read_all(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        t0, c0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
        n = 0
        while True:
            b = os.read(fd, CALL)
            if not b:
                break
            n += len(b)
        c1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
        return n, time.monotonic() - t0, cpu
    finally:
        os.close(fd)



def timed(path, pause, aged):
    read_all(path)  # the file's pages now hold memory; the host has read it
    if not aged:
        time.sleep(pause)
    evict(path)  # frees that memory
    if aged:
        time.sleep(pause)
    n, secs, cpu = read_all(path)
    return n / secs / 1e6, cpu / (n / (1 << 30))


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--size", type=_args.size, default="1g", help="file size, e.g. 512m or 1g")
    ap.add_argument("--pause", type=_args.seconds, default=3.0, help="seconds (free page reporting waits 2)")
    ap.add_argument("--rounds", type=_args.count, default=5)
    a = ap.parse_args()
    size = a.size
    if size < CALL:
        _args.fail("--size must be at least 1m")
    if not os.path.isdir(a.dir):
        _args.fail(f"--dir {a.dir} is not a directory: give an existing one")
    fd, path = tempfile.mkstemp(prefix="pario-freed-age.", dir=a.dir)
    try:
        block = os.urandom(CALL)
        for _ in range(size // CALL):
            os.write(fd, block)
        os.fsync(fd)
        os.close(fd)
        fresh, aged = [], []
        for r in range(a.rounds):
            for is_aged in ((False, True) if r % 2 == 0 else (True, False)):
                (aged if is_aged else fresh).append(timed(path, a.pause, is_aged))
            print(f"round {r + 1}: freed just before {fresh[-1][0]:7.0f} MB/s {fresh[-1][1]:.2f} CPU s/GiB; "
                  f"freed {a.pause:g} s before {aged[-1][0]:7.0f} MB/s {aged[-1][1]:.2f} CPU s/GiB", flush=True)
    finally:
        os.unlink(path)
    f, g = statistics.median(x[0] for x in fresh), statistics.median(x[0] for x in aged)
    print(f"\nmedians: freed just before {f:.0f} MB/s, freed {a.pause:g} s before {g:.0f} MB/s, ratio {f / g:.2f} "
          f"({a.rounds} alternating rounds; machine shared with other work)")


if __name__ == "__main__":
    main()
