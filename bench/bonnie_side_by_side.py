#!/usr/bin/env python3
"""pario-engine bonnie beside Debian's bonnie++ on the same file size and
chunk, in alternating rounds, printed as ratios (pario / bonnie++).

Claims checked: block write, rewrite and block read within 10 % either way
(they measure the same thing), per-character no slower.

The two run the same tests on the same history, so that what differs is
the program.  That takes two runs of each per round:

* block write, rewrite and block read from runs without per-character
  tests (bonnie++ -f; pario --char-size of one chunk, a few ms).  On this
  virtual machine a read (or write) is much slower into memory the guest
  freed more than about 2 s before than into memory freed just before:
  the guest hands free 2 MiB blocks back to the host (virtio-balloon free
  page reporting, on here), and the host must fault them in again.
  Measured here (20:35 UTC, machine shared): the same 1 GiB file, evicted
  then read at once, 454-991 MB/s at 12-18 %CPU; evicted, 3 s pause, then
  read, 210-381 MB/s at 19-25 %CPU.  bonnie++ 2.00a's per-character tests
  make one system call per byte, about 10 s for 4 MiB here; put between
  its rewrite and its block read (or before its block write), they
  decide whether its block test lands on warm or cold memory, and pario's
  (through stdio, milliseconds) on the other.  With per-character tests
  of 4 MiB in both, pario's block read came out 3x to 8x bonnie++'s;
  without them, within the machine's noise.  Earlier this script also
  gave pario's per-character tests the whole file, so its block write
  followed the freeing of its 1 GiB putc file, and its block read a 1 GiB
  getc: histories bonnie++ never had.
* putc and getc from runs with both given the same per-character size
  (--char-mib, default 4 MiB; bonnie++ -f4, pario --char-size 4m) on a
  small file, compared as rates.

Each test is timed as bonnie++ times it (read from its source, seen in
strace): a descriptor opened for the test, the seek to the start before
the clock, and fsync then close inside the time after every test, the
reading ones too; the block read reads exactly the file's chunks.  pario
does the same under --order bonnie++ and counts its calls in its result
document (this script prints the block read's).  bonnie++ 2.00a starts 5
seeker processes (strace), so pario is given --seek-procs 5.

The file (1 GiB by default) is far smaller than this machine's memory, so
by default both files are evicted from the page cache before every
reading test (rewrite, getc, block read, seeks): pario by its own --evict
(fdatasync, then posix_fadvise DONTNEED), bonnie++ by this script at
bonnie++'s own synchronisation point (-y p: it waits for a line on stdin
before each test; the script evicts Bonnie.<pid> the same way, then
answers).  Reads then come from the disk (on a virtual machine, from
whatever the host caches of it).  --cached leaves both files in the
page cache instead (give a size whose block read lasts over bonnie++'s
0.5 s, e.g. 3g).

The same holds between the two programs: each one's rewrite came out
about 1.6x slower (and took twice the CPU per GiB) when it ran first in its
round, after the other's small per-character run, than second, after the
other's 1 GiB file was written and deleted; dropping the page cache and
waiting 3 s between runs did not remove it (22:25 UTC, quiet machine:
rewrite 0.59, 1.61, 0.63, 1.41 with pario first in rounds 1 and 3).  This
disk is mounted with -o discard, so deleting a file also discards its
blocks on the virtual disk, and freed memory goes back to the host: what
a run follows matters.  So every run follows the same thing: the script
writes a file of the run's size in 1 MiB calls, fsyncs and deletes it,
writes back dirty pages, drops the page cache (as root) and waits
--settle seconds (default 3).  It also prints the geometric mean of the
per-round ratios beside the medians: over an even number of alternating
rounds an order effect that multiplies cancels in it.

Where this virtual machine's free page reporting can be tuned (as root:
/sys/module/page_reporting/parameters/min_free_ms, the time memory must
stay free before the guest hands it to the host), the script raises it to
--hold-freed-memory seconds (default 60, the most this kernel takes) for its own duration and puts
the old value back at the end, so no run lands on memory the host took
back in the middle of the bench; 0 leaves it alone.  It prints how much
memory was handed back during each program's runs.

usage: bench/bonnie_side_by_side.py [--dir DIR] [--size 1g] [--chunk 8k] [--rounds 4] [--char-mib 4] [--cached] [--settle 3]
"""
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks and the bench's own directory)
from pario.units import format_size  # noqa: E402
# bonnie++ CSV (format 1.98): field index of each rate (K/s) we compare
BPP_FIELDS = {"putc": 9, "block_write": 11, "rewrite": 13, "getc": 15, "block_read": 17}
# bonnie++ numbers its tests at each -y p prompt ("\n4:\n"): 0 putc, 1 block
# write, 2 rewrite, 3 getc, 4 block read, 5 seeks; these read the file
BPP_READING_TESTS = {2, 3, 4, 5}
CHAR_TESTS = ("putc", "getc")
BPP_SEEK_PROCS = 5  # bonnie++ 2.00a's seekers, as strace shows them
# %CPU / rate (KiB/s) times this is CPU seconds per GiB
GIB_PER_PERCENT = (1 << 20) / 100
PROMPT = re.compile(rb"\n(\d+):\n")


def evict(path):
    """What pario-engine bonnie --evict does to its own file: write back,
    then drop its pages from the page cache."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


REPORTING = Path("/sys/module/page_reporting/parameters")


def reported_kib():
    """KiB of free memory the guest has handed back to the host so far
    (None where the kernel has no such counter)."""
    try:
        return int((REPORTING / "reported_kib").read_text())
    except (OSError, ValueError):
        return None


class HeldFreedMemory:
    """For the bench's duration, memory must stay free `seconds` before the
    guest reports it to the host; the old setting is put back after."""

    def __init__(self, seconds):
        self.knob, self.old = REPORTING / "min_free_ms", None
        self.ms = int(seconds * 1000)

    def __enter__(self):
        if self.ms > 0:
            try:
                self.old = self.knob.read_text().strip()
                self.knob.write_text(f"{self.ms}\n")
                print(f"free page reporting: memory must stay free {self.ms} ms before the host takes it back "
                      f"(was {self.old} ms; put back at the end)", flush=True)
            except OSError as e:
                self.old = None
                print(f"free page reporting: left as it is ({self.knob}: {e.strerror})", flush=True)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            self.knob.write_text(f"{self.old}\n")


def settle(d, size, seconds):
    """Give the next run the same history as every other: a file of its
    size just written, synced and deleted in its directory (what the run
    before it left), then nothing dirty, nothing cached (root only: others
    keep what is cached) and a pause."""
    fd, path = tempfile.mkstemp(prefix="settle.", dir=d)
    try:
        block = b"\xa5" * (1 << 20)
        for _ in range(max(1, size >> 20)):
            os.write(fd, block)
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(path)
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass  # not root: the pause alone still ages the freed memory
    time.sleep(seconds)


def run_pario(engine, d, size, chunk, char_size, cached):
    out = Path(d) / "pario-bench.json"
    p = subprocess.run([str(engine), "bonnie", "--dir", d, "--size", str(size), "--chunk", str(chunk),
                        "--char-size", str(char_size), "--seeks", "8192", "--seek-procs", str(BPP_SEEK_PROCS),
                        "--order", "bonnie++", "--json", str(out), *([] if cached else ["--evict"])],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bonnie_side_by_side: pario-engine bonnie failed: {p.stderr.strip()}")
    doc = json.loads(out.read_text())
    out.unlink()
    block_read = next(t for t in doc["tests"] if t["name"] == "block_read")
    print(f"  pario block read began with {block_read['cached_fraction_at_start']:.2f} of its file cached; "
          f"its calls: {block_read['calls']}", flush=True)
    rates = {t["name"]: t["bytes_per_s"] / 1024 for t in doc["tests"] if t["name"] in BPP_FIELDS}
    rates.update({f"{t['name']}_cpu": t["cpu_percent"] for t in doc["tests"] if t["name"] in BPP_FIELDS})
    return rates


def run_bonnie_pp(d, size, chunk, char_mib, cached):
    """bonnie++ with -y p: it prints "\nN:\n" and waits for a line before
    each test; before each reading test its file is evicted first (unless
    cached).  char_mib None: no per-character tests (-f)."""
    argv = ["bonnie++", "-d", d, "-s", f"{size >> 20}:{chunk}", f"-f{char_mib or ''}", "-r", "0", "-n", "0",
            "-y", "p"]
    if os.geteuid() == 0:
        argv += ["-u", "root"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, seen = b"", 0
    while True:
        ready, _, _ = select.select([p.stdout], [], [], 1.0)
        data = os.read(p.stdout.fileno(), 65536) if ready else b""
        if ready and not data:
            break  # bonnie++ closed its output: done
        out += data
        for m in PROMPT.finditer(out, seen):
            seen = m.end()
            test = int(m.group(1))
            for name in os.listdir(d):
                if name.startswith(f"Bonnie.{p.pid}") and not cached and test in BPP_READING_TESTS:
                    evict(os.path.join(d, name))
            p.stdin.write(b"\n")
            p.stdin.flush()
    err = p.stderr.read().decode(errors="replace")
    if p.wait() != 0:
        sys.exit(f"bonnie_side_by_side: bonnie++ failed: {err.strip()[-300:]}")
    csv = [line for line in out.decode(errors="replace").splitlines() if line.startswith("1.98,")]
    if not csv:
        sys.exit("bonnie_side_by_side: bonnie++ printed no CSV line (format 1.98): another version?")
    fields = csv[-1].split(",")
    rates = {}
    for name, i in BPP_FIELDS.items():
        if (name in CHAR_TESTS) != (char_mib is not None):
            continue  # a run for the block tests, or one for the per-character tests
        if fields[i].startswith("+"):
            sys.exit(f"bonnie_side_by_side: bonnie++ found {name} too short to time: give a larger --size")
        rates[name] = float(fields[i])
        rates[f"{name}_cpu"] = float(fields[i + 1])  # %CPU follows each rate
    return rates


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--dir", default="/var/tmp",
                    help="parent of this run's own fresh directory, on the file system to measure")
    ap.add_argument("--size", type=_args.size, default="1g")
    ap.add_argument("--chunk", type=_args.size, default="8k")
    ap.add_argument("--rounds", type=_args.count, default=4, help="alternating rounds (even: each order as often)")
    ap.add_argument("--char-mib", type=_args.count, default=4, help="both programs' per-character size (MiB)")
    ap.add_argument("--cached", action="store_true",
                    help="leave both files in the page cache before reading tests (default: evict both)")
    ap.add_argument("--hold-freed-memory", type=_args.seconds, default=60.0, metavar="SECONDS",
                    help="raise the VM's free page reporting delay to this for the bench's duration (0: leave it)")
    ap.add_argument("--settle", type=_args.seconds, default=3.0,
                    help="seconds to wait between the settling file's deletion and each run (default 3)")
    a = ap.parse_args()
    if a.size % (1 << 20):
        _args.fail(f"--size {a.size} B is not a whole number of MiB (bonnie++ -s takes MiB): give e.g. 1g")
    _args.tool("bonnie++")
    _args.directory(a.dir, "--dir")
    engine = _args.engine()
    size, chunk = a.size, a.chunk
    with _args.fresh_dir(a.dir, "bonnie-side-by-side") as work:
        d = str(work)
        char_file = max(2 * a.char_mib, 64) << 20  # the per-character runs' file: small
        with HeldFreedMemory(a.hold_freed_memory):
            # per round: block tests without per-character tests, then the
            # per-character tests alone; each pair alternates who goes first
            ours, theirs, ours_c, theirs_c = [], [], [], []
            for r in range(a.rounds):
                first_ours = r % 2 == 0
                for which in ((0, 1) if first_ours else (1, 0)):
                    settle(d, size, a.settle)
                    before = reported_kib()
                    if which == 0:
                        ours.append(run_pario(engine, d, size, chunk, chunk, a.cached))
                    else:
                        theirs.append(run_bonnie_pp(d, size, chunk, None, a.cached))
                    after = reported_kib()
                    (ours if which == 0 else theirs)[-1]["handed_back_mib"] = (
                        (after - before) / 1024 if before is not None and after is not None else float("nan"))
                for which in ((1, 0) if first_ours else (0, 1)):
                    settle(d, char_file, a.settle)
                    if which == 0:
                        ours_c.append(run_pario(engine, d, char_file, chunk, a.char_mib << 20, a.cached))
                    else:
                        theirs_c.append(run_bonnie_pp(d, char_file, chunk, a.char_mib, a.cached))
                for name in CHAR_TESTS:
                    for mine, peer in ((ours, ours_c), (theirs, theirs_c)):
                        mine[-1][name], mine[-1][f"{name}_cpu"] = peer[-1][name], peer[-1][f"{name}_cpu"]
                print(f"round {r + 1}: pario {ours[-1]}\n         bonnie++ {theirs[-1]}", flush=True)
    print(f"\nfile {format_size(a.size)}, chunk {format_size(a.chunk)}, {a.rounds} alternating rounds, medians (KiB/s); block tests from "
          f"runs without per-character tests, putc/getc from runs of both on the first {a.char_mib} MiB of a "
          f"{char_file >> 20} MiB file; "
          f"{'both files left in the page cache' if a.cached else 'both files evicted before every reading test'}; "
          f"each run after a file of its size written and deleted, a dropped page cache and a {a.settle:g} s pause")
    print(f"{'test':12} {'pario':>12} {'bonnie++':>12} {'ratio':>8} {'geomean':>8}  claim (on the ratio of medians)")
    failed = False
    for name in BPP_FIELDS:
        p = statistics.median(o[name] for o in ours)
        b = statistics.median(t[name] for t in theirs)
        ratio = p / b
        geomean = statistics.geometric_mean(o[name] / t[name] for o, t in zip(ours, theirs))
        if name in ("putc", "getc"):
            claim, ok = "no slower (>= 1.0)", ratio >= 1.0
        else:
            claim, ok = "within 10 % (0.9-1.1)", 0.9 <= ratio <= 1.1
        failed |= not ok
        print(f"{name:12} {p:12.0f} {b:12.0f} {ratio:8.2f} {geomean:8.2f}  {claim}: {'met' if ok else 'NOT met'}")
    print("\nper round (pario first in rounds 1, 3, ...), pario / bonnie++ (the spread the medians hide), then each one's CPU seconds per GiB "
          "(%CPU x time: the work done, which the disk's and the host's noise touch less):")
    for name in BPP_FIELDS:
        cpu = [(o[f"{name}_cpu"] / o[name], t[f"{name}_cpu"] / t[name]) for o, t in zip(ours, theirs)]
        print(f"{name:12} " + " ".join(f"{o[name] / t[name]:5.2f}" for o, t in zip(ours, theirs)) +
              "   cpu s/GiB pario " + " ".join(f"{c[0] * GIB_PER_PERCENT:.2f}" for c in cpu) +
              ", bonnie++ " + " ".join(f"{c[1] * GIB_PER_PERCENT:.2f}" for c in cpu))
    print("memory the guest handed back to the host during each block run (MiB): pario " +
          " ".join(f"{o['handed_back_mib']:.0f}" for o in ours) + ", bonnie++ " +
          " ".join(f"{t['handed_back_mib']:.0f}" for t in theirs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
