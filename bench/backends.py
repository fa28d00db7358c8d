#!/usr/bin/env python3
"""pario's I/O backends beside their peers, in the same minutes.

Three comparisons, each run side by side in alternating rounds; the
median over rounds is printed with the ratio pario / peer:

  uring   `--api uring --direct` on a disk directory against fio's io_uring
          engine at the same queue depth, block and direct flag: 4 KiB
          random reads at depth 1, 16 and 64 (IOPS), 1 MiB sequential read
          and write at depth 16 (MiB/s).  Each tool touches every block of
          the file once (fio's random map, pario's random layout).
  memcpy  one rank reading a tmpfs file in 1 MiB requests through posix,
          mmap and uring, against a memcpy of as many bytes in 1 MiB
          pieces from memory, measured by this script in the same run.
  stdio   --api stdio with an 8 KiB against a 1 MiB stream buffer at 4 KiB
          requests on the disk directory (writes without fsync, cached
          reads): the buffer sets how many system calls the bytes take.

    python bench/backends.py [--disk /var/tmp/pario-bench] [--shm /dev/shm/pario-bench]
        [--rounds 3] [--only uring,memcpy,stdio] [--memcpy-size 1g]
"""

import argparse
import ctypes
import json
import mmap
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.engine import engine_path  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.units import engine_size, format_size, parse_size  # noqa: E402

MiB = 2 ** 20


class Pario:
    def __init__(self, scratch):
        self.launcher, self.engine, self.scratch = choose_launcher(), engine_path(), Path(scratch)

    def rate(self, directory, *args, phase, iterations=1):
        """Best MiB/s of `phase` over the run's iterations (one rank)."""
        out = self.scratch / "pario.json"
        argv = self.launcher.command(1, [self.engine, "io", "--dir", str(directory), *map(str, args),
                                         "--iterations", str(iterations), "--json", str(out)])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.launcher.environment())
        if p.returncode != 0:
            sys.exit(f"bench: pario-engine failed: {p.stderr.strip()}")
        doc = json.loads(out.read_text())
        return next(x for x in doc["phases"] if x["name"] == phase)["summary"]["best_mib_per_s"]


def fio_rate(path, rw, block, depth, size):
    argv = ["fio", "--name=pario-peer", f"--filename={path}", "--ioengine=io_uring", "--direct=1",
            f"--rw={rw}", f"--bs={block}", f"--iodepth={depth}", f"--size={size}",
            "--fallocate=none", "--output-format=json"]
    if rw == "write":
        argv.append("--end_fsync=1")
    # a fresh file every run, as pario writes one: the same state in every cache below
    path.unlink(missing_ok=True)
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]["write" if rw == "write" else "read"]
    return job["bw_bytes"] / MiB


def median_table(title, unit, rows, rounds, run_round):
    """rows: labels; run_round(label) -> {tool: value}; tools alternate inside a round."""
    print(f"\n{title}; median of {rounds} rounds, {unit}")
    header = None
    for label in rows:
        samples = {}
        for _ in range(rounds):
            for tool, value in run_round(label).items():
                samples.setdefault(tool, []).append(value)
        tools = list(samples)
        if header is None:
            header = f"{'case':<24}" + "".join(f"{t:>16}" for t in tools) + f"{'ratio':>8}"
            print(header)
        med = {t: statistics.median(v) for t, v in samples.items()}
        ratio = med[tools[0]] / med[tools[1]] if med[tools[1]] else float("nan")
        print(f"{label:<24}" + "".join(f"{med[t]:>16.1f}" for t in tools) + f"{ratio:>8.2f}",
              flush=True)


def bench_uring(pario, disk, rounds, rand_size, seq_size):
    # pario's buffers for --direct are on transparent huge pages by default
    # (one segment per 1 MiB request instead of 256); the "4k pages" rows
    # give pario the ordinary pages fio uses, for the like-for-like ratio.
    cases = {"4k randread QD1": ("randread", 4096, 1, []), "4k randread QD16": ("randread", 4096, 16, []),
             "4k randread QD64": ("randread", 4096, 64, []), "1m read QD16": ("read", MiB, 16, []),
             "1m read QD16 4k pages": ("read", MiB, 16, ["--no-huge-pages"]),
             "1m write QD16": ("write", MiB, 16, []),
             "1m write QD16 4k pages": ("write", MiB, 16, ["--no-huge-pages"])}
    fio_file = disk / "fio-bench.dat"

    def one_round(label):
        rw, block, depth, extra = cases[label]
        size = rand_size if block == 4096 else seq_size
        layout = "random" if rw == "randread" else "partitioned"
        phase = "write" if rw == "write" else "read"
        mine = pario.rate(disk, "--api", "uring", "--queue-depth", depth, "--direct", "--layout", layout,
                          "--block", engine_size(block), "--size", engine_size(size), "--phases", phase,
                          *extra, phase=phase)
        theirs = fio_rate(fio_file, rw, block, depth, size)
        scale = MiB / block if block == 4096 else 1  # IOPS for 4 KiB, MiB/s otherwise
        return {"pario uring": mine * scale, "fio io_uring": theirs * scale}

    try:
        median_table(f"uring --direct vs fio io_uring on {disk} (random {format_size(rand_size)}, "
                     f"sequential {format_size(seq_size)})", "IOPS for 4k rows, MiB/s for 1m rows",
                     list(cases), rounds, one_round)
    finally:
        fio_file.unlink(missing_ok=True)


def memcpy_rate(size, block=MiB, repeats=3):
    """Best MiB/s of copying `size` bytes from memory in `block` pieces into one buffer."""
    src, dst = mmap.mmap(-1, size), mmap.mmap(-1, block)
    for i in range(0, size, 4096):  # fault every page in first, as a read's page cache is
        src[i] = 1
    dst[0] = 1
    s = ctypes.addressof(ctypes.c_char.from_buffer(src))
    d = ctypes.addressof(ctypes.c_char.from_buffer(dst))
    best = 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        for o in range(0, size, block):
            ctypes.memmove(d, s + o, block)
        best = max(best, size / MiB / (time.perf_counter() - t))
    del s, d
    src.close()
    dst.close()
    return best


MEMCPY_VARIANTS = {
    "posix": ["--api", "posix"],
    "mmap populate": ["--api", "mmap", "--mmap-populate"],
    "mmap": ["--api", "mmap"],
    "uring QD1 reg": ["--api", "uring", "--queue-depth", "1", "--uring-register-buffers"],
    "uring QD2 reg+wq": ["--api", "uring", "--queue-depth", "2", "--uring-register-buffers",
                         "--uring-async-workers"],
}


def bench_memcpy(pario, shm, rounds, size):
    def one_round(label):
        mine = pario.rate(shm, *MEMCPY_VARIANTS[label], "--layout", "partitioned", "--block", "1m",
                          "--size", engine_size(size), "--phases", "read", phase="read", iterations=3)
        return {"pario": mine, "memcpy": memcpy_rate(size)}

    median_table(f"one rank reading {format_size(size)} on {shm} in 1 MiB requests vs memcpy "
                 f"(best of 3 each)", "MiB/s", list(MEMCPY_VARIANTS), rounds, one_round)


def bench_stdio(pario, disk, rounds, size):
    cases = {"write (no fsync)": ("write", ["--no-fsync"]), "read (cached)": ("read", [])}

    def one_round(label):
        phase, extra = cases[label]
        got = {}
        for buf in ("8k", "1m"):
            got[f"stdio {buf}"] = pario.rate(disk, "--api", "stdio", "--stdio-buffer", buf, "--block", "4k",
                                             "--size", engine_size(size), "--phases", "write,read",
                                             *extra, phase=phase, iterations=3)
        return {"stdio 1m": got["stdio 1m"], "stdio 8k": got["stdio 8k"]}

    median_table(f"stdio buffer 1 MiB vs 8 KiB, 4 KiB requests, {format_size(size)} on {disk} "
                 f"(best of 3 each)", "MiB/s", list(cases), rounds, one_round)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disk", default="/var/tmp/pario-bench")
    ap.add_argument("--shm", default="/dev/shm/pario-bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="uring,memcpy,stdio")
    ap.add_argument("--rand-size", default="64m", help="file of the 4 KiB random reads")
    ap.add_argument("--seq-size", default="512m", help="file of the 1 MiB sequential runs")
    ap.add_argument("--memcpy-size", default="1g")
    ap.add_argument("--stdio-size", default="256m")
    a = ap.parse_args()
    only = set(a.only.split(","))
    if only - {"uring", "memcpy", "stdio"}:
        sys.exit(f"bench: --only takes uring, memcpy, stdio, not {','.join(only - {'uring', 'memcpy', 'stdio'})}")
    if "uring" in only and not shutil.which("fio"):
        sys.exit("bench: fio not found: run 'make deps'")
    made = []
    for d in (Path(a.disk), Path(a.shm)):
        if not d.exists():
            d.mkdir(parents=True)
            made.append(d)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            pario = Pario(scratch)
            print("machine shared with other work: read the ratios, not the absolute rates")
            if "uring" in only:
                bench_uring(pario, Path(a.disk), a.rounds, parse_size(a.rand_size), parse_size(a.seq_size))
            if "memcpy" in only:
                bench_memcpy(pario, Path(a.shm), a.rounds, parse_size(a.memcpy_size))
            if "stdio" in only:
                bench_stdio(pario, Path(a.disk), a.rounds, parse_size(a.stdio_size))
    finally:
        for d in made:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
