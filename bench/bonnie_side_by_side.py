#!/usr/bin/env python3
"""pario-engine bonnie beside Debian's bonnie++ on the same file size and
chunk, in alternating rounds, printed as ratios (pario / bonnie++).

Claims checked: block write, rewrite and block read within 10 % either way
(they measure the same thing), per-character no slower.

bonnie++ 2.00a does its per-character tests with one system call per byte
(about 0.3 MB/s here), so over a whole file they would take hours; it is
given a small per-character size (-f, default 4 MiB) and its per-character
rate is compared as a rate.  Both programs fsync at the end of each write
test, and pario runs its tests in bonnie++'s order (--order bonnie++:
block write before rewrite).

The file (1 GiB by default) is far smaller than this machine's memory, so
without care a reading test reads whatever the page cache still holds of
it, and the two programs need not hold the same.  So by default both
files are evicted from the page cache before every reading test
(rewrite, getc, block read, seeks): pario by its own --evict (fdatasync,
then posix_fadvise DONTNEED), bonnie++ by this script at bonnie++'s own
synchronisation point (-y p: it waits for a line on stdin before each
test; the script evicts Bonnie.<pid> the same way, then answers).  Reads
then come from the disk.

The host of a virtual machine caches its disk in turn, and that cache
cannot be emptied from inside: what it holds depends on what the guest
read since it last wrote.  pario's getc reads the whole file just before
its block read, bonnie++'s only its small per-character file.  Like for
like, the script reads bonnie++'s file once through before its block read,
as pario's getc did, then evicts it: both block reads then start from the
same history.  --cached leaves both files in the guest's cache instead
(after the same read-through: both wholly resident; give a size whose
block read lasts over bonnie++'s 0.5 s, e.g. 3g).

usage: bench/bonnie_side_by_side.py [--dir DIR] [--size 1g] [--chunk 8k] [--rounds 3] [--cached]
"""
import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "build" / "engine" / "pario-engine"
UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
# bonnie++ CSV (format 1.98): field index of each rate (K/s) we compare
BPP_FIELDS = {"putc": 9, "block_write": 11, "rewrite": 13, "getc": 15, "block_read": 17}
# bonnie++ numbers its tests at each -y p prompt ("\n4:\n"): 0 putc, 1 block
# write, 2 rewrite, 3 getc, 4 block read, 5 seeks; these read the file
BPP_READING_TESTS = {2, 3, 4, 5}
BPP_BLOCK_READ = 4
PROMPT = re.compile(rb"\n(\d+):\n")


def read_through(path):
    """What pario's getc did just before its block read: the whole file
    read once (here in 1 MiB calls)."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


def evict(path):
    """What pario-engine bonnie --evict does to its own file: write back,
    then drop its pages from the page cache."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def size_bytes(text):
    t = text.strip().lower()
    return int(t[:-1]) * UNITS[t[-1]] if t[-1] in UNITS else int(t)


def run_pario(d, size, chunk, cached):
    out = Path(d) / "pario-bench.json"
    p = subprocess.run([str(ENGINE), "bonnie", "--dir", d, "--size", str(size), "--chunk", str(chunk),
                        "--seeks", "8192", "--order", "bonnie++", "--json", str(out),
                        *([] if cached else ["--evict"])], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bonnie_side_by_side: pario-engine bonnie failed: {p.stderr.strip()}")
    doc = json.loads(out.read_text())
    out.unlink()
    block_read = next(t for t in doc["tests"] if t["name"] == "block_read")
    print(f"  pario block read began with {block_read['cached_fraction_at_start']:.2f} of its file cached",
          flush=True)
    return {t["name"]: t["bytes_per_s"] / 1024 for t in doc["tests"] if t["name"] in BPP_FIELDS}


def run_bonnie_pp(d, size, chunk, char_mib, cached):
    """bonnie++ with -y p: it prints "\nN:\n" and waits for a line before
    each test; before each reading test its file is evicted first."""
    argv = ["bonnie++", "-d", d, "-s", f"{size >> 20}:{chunk}", f"-f{char_mib}", "-r", "0", "-n", "0",
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
                if not name.startswith(f"Bonnie.{p.pid}"):
                    continue
                if test == BPP_BLOCK_READ:
                    read_through(os.path.join(d, name))
                if not cached and test in BPP_READING_TESTS:
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
        if fields[i].startswith("+"):
            sys.exit(f"bonnie_side_by_side: bonnie++ found {name} too short to time: give a larger --size")
        rates[name] = float(fields[i])
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=None, help="directory to measure (default: a new one in /var/tmp)")
    ap.add_argument("--size", default="1g")
    ap.add_argument("--chunk", default="8k")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--char-mib", type=int, default=4, help="bonnie++'s per-character size (MiB)")
    ap.add_argument("--cached", action="store_true",
                    help="leave both files in the page cache before reading tests (default: evict both)")
    a = ap.parse_args()
    if shutil.which("bonnie++") is None:
        sys.exit("bonnie_side_by_side: bonnie++ is not installed: run make deps")
    if not ENGINE.exists():
        sys.exit("bonnie_side_by_side: build the engine first: make build")
    size, chunk = size_bytes(a.size), size_bytes(a.chunk)
    own = a.dir is None
    d = a.dir or tempfile.mkdtemp(prefix="pario-bonnie-bench.", dir="/var/tmp")
    try:
        ours, theirs = [], []
        for r in range(a.rounds):  # alternate, so drift in the machine hits both
            first_ours = r % 2 == 0
            for which in ((0, 1) if first_ours else (1, 0)):
                if which == 0:
                    ours.append(run_pario(d, size, chunk, a.cached))
                else:
                    theirs.append(run_bonnie_pp(d, size, chunk, a.char_mib, a.cached))
            print(f"round {r + 1}: pario {ours[-1]}\n         bonnie++ {theirs[-1]}", flush=True)
    finally:
        if own:
            shutil.rmtree(d, ignore_errors=True)
    print(f"\nfile {a.size}, chunk {a.chunk}, {a.rounds} alternating rounds, medians (KiB/s); "
          f"bonnie++ per-char on {a.char_mib} MiB; "
          f"{'both files left in the page cache' if a.cached else 'both files evicted before every reading test'}; "
          "machine shared with other work")
    print(f"{'test':12} {'pario':>12} {'bonnie++':>12} {'ratio':>8}  claim")
    failed = False
    for name in BPP_FIELDS:
        p = statistics.median(o[name] for o in ours)
        b = statistics.median(t[name] for t in theirs)
        ratio = p / b
        if name in ("putc", "getc"):
            claim, ok = "no slower (>= 1.0)", ratio >= 1.0
        else:
            claim, ok = "within 10 % (0.9-1.1)", 0.9 <= ratio <= 1.1
        failed |= not ok
        print(f"{name:12} {p:12.0f} {b:12.0f} {ratio:8.2f}  {claim}: {'met' if ok else 'NOT met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
