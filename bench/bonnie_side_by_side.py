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
block write before rewrite).  The file is smaller than the machine's memory unless you give
--size, so both read from the page cache alike: this compares the
programs, not the disk.

usage: bench/bonnie_side_by_side.py [--dir DIR] [--size 1g] [--chunk 8k] [--rounds 3]
"""
import argparse
import json
import os
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


def size_bytes(text):
    t = text.strip().lower()
    return int(t[:-1]) * UNITS[t[-1]] if t[-1] in UNITS else int(t)


def run_pario(d, size, chunk):
    out = Path(d) / "pario-bench.json"
    p = subprocess.run([str(ENGINE), "bonnie", "--dir", d, "--size", str(size), "--chunk", str(chunk),
                        "--seeks", "8192", "--order", "bonnie++", "--json", str(out)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bonnie_side_by_side: pario-engine bonnie failed: {p.stderr.strip()}")
    doc = json.loads(out.read_text())
    out.unlink()
    return {t["name"]: t["bytes_per_s"] / 1024 for t in doc["tests"] if t["name"] in BPP_FIELDS}


def run_bonnie_pp(d, size, chunk, char_mib):
    argv = ["bonnie++", "-d", d, "-s", f"{size >> 20}:{chunk}", f"-f{char_mib}", "-r", "0", "-n", "0", "-q"]
    if os.geteuid() == 0:
        argv += ["-u", "root"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bonnie_side_by_side: bonnie++ failed: {p.stderr.strip()[-300:]}")
    fields = p.stdout.strip().splitlines()[-1].split(",")
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
                    ours.append(run_pario(d, size, chunk))
                else:
                    theirs.append(run_bonnie_pp(d, size, chunk, a.char_mib))
            print(f"round {r + 1}: pario {ours[-1]}\n         bonnie++ {theirs[-1]}", flush=True)
    finally:
        if own:
            shutil.rmtree(d, ignore_errors=True)
    print(f"\nfile {a.size}, chunk {a.chunk}, {a.rounds} alternating rounds, medians (KiB/s); "
          f"bonnie++ per-char on {a.char_mib} MiB; machine shared with other work")
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
