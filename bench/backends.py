#!/usr/bin/env python3
"""pario's I/O backends beside their peers, in the same minutes.

Three comparisons, each run side by side in alternating rounds; the
median over rounds is printed with the ratio pario / peer:

  uring   `--api uring --direct` on a disk directory against fio's io_uring
          engine at the same queue depth, block and direct flag: 4 KiB
          random reads at depth 1, 16 and 64 (IOPS), 1 MiB sequential read
          and write at depth 16 (MiB/s).  Each tool touches every block of
          the file once (fio's random map, pario's random layout), on the
          same CPUs: the launcher binds pario's one rank to a core (Open
          MPI's default), so fio runs pinned to the same core(s) with
          taskset.  Where that core is not the one serving the disk's
          interrupts every completion is a cross-CPU wake-up, which at
          4 KiB costs either tool up to a third of its IOPS: comparing an
          unpinned fio with a bound pario measures placement, not the
          tools.  --placement unbound runs both unbound instead.  On a
          machine shared with other work run the script under `chrt -f 10`
          (root): both tools inherit SCHED_FIFO, so other processes stop
          taking their core mid-run (per-round ratios spread 0.3 to 2.5
          without it on 2026-11-22, about 0.8 to 1.3 with it).
  memcpy  one rank reading a 1 GiB tmpfs file in 1 MiB requests through
          posix, mmap and uring, against memcpy of the same bytes: this
          script maps a tmpfs file of the same size, faults every page in
          (as a read's page cache is), and copies it in 1 MiB pieces into
          one 1 MiB buffer, as a read does, in the same run.
  stdio   --api stdio with an 8 KiB against a 1 MiB stream buffer at 4 KiB
          requests on the disk directory (writes without fsync, cached
          reads): the buffer sets how many system calls the bytes take.

    .venv/bin/python bench/backends.py [--disk /var/tmp/pario-bench] [--shm /dev/shm/pario-bench]
        [--rounds 3] [--only uring,memcpy,stdio] [--memcpy-size 1g]
        [--placement bound|unbound]
"""

import ctypes
import json
import mmap
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.engine import engine_path, take_result  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks and the bench's own directories)
from pario.launch import choose_launcher  # noqa: E402
from pario.units import engine_size, format_size  # noqa: E402

MiB = 2 ** 20


class Pario:
    def __init__(self, scratch):
        self.launcher, self.engine, self.scratch = choose_launcher(), engine_path(), Path(scratch)

    def environment(self, unbound=False):
        env = self.launcher.environment()
        if unbound and self.launcher.flavour == "openmpi":
            env["OMPI_MCA_hwloc_base_binding_policy"] = "none"  # mpirun --bind-to none
        return env

    def rank_cpus(self, unbound=False):
        """The CPUs the launcher lets one rank run on, as a taskset list."""
        argv = self.launcher.command(1, [sys.executable, "-c",
                                         "import os; print(','.join(map(str, sorted(os.sched_getaffinity(0)))))"])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.environment(unbound))
        if p.returncode != 0 or not p.stdout.strip():
            sys.exit(f"bench: cannot ask the launcher where a rank runs: {p.stderr.strip()[-300:]}")
        return p.stdout.strip().splitlines()[-1]

    def rate(self, directory, *args, phase, iterations=1, unbound=False):
        """Best MiB/s of `phase` over the run's iterations (one rank)."""
        out = self.scratch / "pario.json"
        argv = self.launcher.command(1, [self.engine, "io", "--dir", str(directory), *map(str, args),
                                         "--iterations", str(iterations), "--json", str(out)])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.environment(unbound))
        if p.returncode != 0:
            sys.exit(f"bench: pario-engine failed: {p.stderr.strip()}")
        doc = take_result(out)
        return next(x for x in doc["phases"] if x["name"] == phase)["summary"]["best_mib_per_s"]


def fio_rate(path, rw, block, depth, size, cpus=None):
    argv = ["taskset", "-c", cpus] if cpus else []
    argv += ["fio", "--name=pario-peer", f"--filename={path}", "--ioengine=io_uring", "--direct=1",
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
    """rows: labels; run_round(label, peer_first) -> {tool: value}, pario's first; odd rounds
    run the peer first (the second tool meets the first one's freed pages and writeback).
    'rounds' is the range of the per-round ratios (each round's pair, run back to back)."""
    print(f"\n{title}; median of {rounds} rounds, {unit}")
    header = None
    for label in rows:
        samples = {}
        for r in range(rounds):
            for tool, value in run_round(label, r % 2 == 1).items():
                samples.setdefault(tool, []).append(value)
        tools = list(samples)
        if header is None:
            header = f"{'case':<24}" + "".join(f"{t:>16}" for t in tools) + f"{'ratio':>8}{'rounds':>12}"
            print(header)
        med = {t: statistics.median(v) for t, v in samples.items()}
        ratio = med[tools[0]] / med[tools[1]] if med[tools[1]] else float("nan")
        per_round = [a / b for a, b in zip(samples[tools[0]], samples[tools[1]]) if b]
        spread = f"{min(per_round):.2f}-{max(per_round):.2f}" if per_round else "-"
        print(f"{label:<24}" + "".join(f"{med[t]:>16.1f}" for t in tools) + f"{ratio:>8.2f}{spread:>12}",
              flush=True)


def disk_irq_cpus():
    """CPUs that served block-device (virtio/nvme/ahci) interrupts, from /proc/interrupts."""
    try:
        lines = Path("/proc/interrupts").read_text().splitlines()
    except OSError:
        return "?"
    ncpu = len(lines[0].split())
    counts = [0] * ncpu
    for line in lines[1:]:
        words = line.split()
        if any(k in line for k in ("-req.", "nvme", "ahci")) and len(words) > ncpu:
            for i in range(ncpu):
                counts[i] += int(words[1 + i]) if words[1 + i].isdigit() else 0
    top = max(counts) if counts else 0
    return ",".join(str(i) for i, c in enumerate(counts) if top and c >= top / 4) or "?"


def bench_uring(pario, disk, rounds, rand_size, seq_size, placement):
    # pario's buffers for --direct are on transparent huge pages by default
    # (one segment per 1 MiB request instead of 256); the "4k pages" rows
    # give pario the ordinary pages fio uses, for the like-for-like ratio.
    # The "one entry per refill" rows hold each refill for one io_uring_enter
    # (--uring-submit-batch = depth), as pario did before it entered the
    # kernel once per request like fio: what that choice is worth.
    cases = {"4k randread QD1": ("randread", 4096, 1, []), "4k randread QD16": ("randread", 4096, 16, []),
             "4k randread QD64": ("randread", 4096, 64, []),
             "4k rr QD16 refill batch": ("randread", 4096, 16, ["--uring-submit-batch", "16"]),
             "4k rr QD64 refill batch": ("randread", 4096, 64, ["--uring-submit-batch", "64"]),
             "1m read QD16": ("read", MiB, 16, []),
             "1m read QD16 4k pages": ("read", MiB, 16, ["--no-huge-pages"]),
             "1m write QD16": ("write", MiB, 16, []),
             "1m write QD16 4k pages": ("write", MiB, 16, ["--no-huge-pages"])}
    fio_file = disk / "fio-bench.dat"
    unbound = placement == "unbound"
    cpus = None if unbound else pario.rank_cpus()
    if cpus is not None and len(cpus.split(",")) >= (os.cpu_count() or 1):
        cpus = None  # the launcher does not bind: neither is fio
    where = ("both unbound" if unbound else
             f"pario's rank bound by the launcher to CPU {cpus}, fio pinned there too" if cpus else
             "the launcher does not bind; fio unpinned")
    print(f"\nrows: '4k randread QDn': IOPS reading every 4 KiB block of a {format_size(rand_size)} file "
          f"once in random order with n requests in flight, O_DIRECT, one pass each (pario: open, "
          f"reads, close; fio: its job's rate); '1m read/write QD16': MiB/s of one sequential pass "
          f"over {format_size(seq_size)} (writes of a fresh file, fsync included), pario's buffers on "
          f"transparent huge pages (its --direct default) or, '4k pages', on ordinary pages as fio's "
          f"are.  Placement: {where}; the disk's interrupts were served on CPU {disk_irq_cpus()}.")

    def one_round(label, peer_first):
        rw, block, depth, extra = cases[label]
        size = rand_size if block == 4096 else seq_size
        layout = "random" if rw == "randread" else "partitioned"
        phase = "write" if rw == "write" else "read"
        if peer_first:
            theirs = fio_rate(fio_file, rw, block, depth, size, cpus)
        mine = pario.rate(disk, "--api", "uring", "--queue-depth", depth, "--direct", "--layout", layout,
                          "--block", engine_size(block), "--size", engine_size(size), "--phases", phase,
                          *extra, phase=phase, unbound=unbound)
        if not peer_first:
            theirs = fio_rate(fio_file, rw, block, depth, size, cpus)
        scale = MiB / block if block == 4096 else 1  # IOPS for 4 KiB, MiB/s otherwise
        return {"pario uring": mine * scale, "fio io_uring": theirs * scale}

    try:
        median_table(f"uring --direct vs fio io_uring on {disk} (random {format_size(rand_size)}, "
                     f"sequential {format_size(seq_size)})", "IOPS for 4k rows, MiB/s for 1m rows",
                     list(cases), rounds, one_round)
    finally:
        fio_file.unlink(missing_ok=True)


class FileBytes:
    """A tmpfs file of `size` bytes mapped with every page faulted in: the
    same kind of pages (the file system's own, in memory) a read of a
    cached tmpfs file copies from."""

    def __init__(self, directory, size):
        self.path = Path(directory) / f"memcpy-source.{os.getpid()}"
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            chunk = bytes(range(256)) * (MiB // 256)
            for _ in range(size // MiB):
                os.write(fd, chunk)
            self.src = mmap.mmap(fd, size)  # writable only so ctypes can take its address
        finally:
            os.close(fd)
        self.size = size
        total = 0
        for i in range(0, size, 4096):  # fault every page in before timing
            total += self.src[i]

    def close(self):
        self.src.close()
        self.path.unlink(missing_ok=True)


def memcpy_rate(source, block=MiB, repeats=3):
    """Best MiB/s of copying the source's bytes in `block` pieces into one buffer."""
    dst = mmap.mmap(-1, block)
    dst.write(b"\1" * block)  # the destination is touched, as pario's read buffer is
    s = ctypes.addressof(ctypes.c_char.from_buffer(source.src))
    d = ctypes.addressof(ctypes.c_char.from_buffer(dst))
    best = 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        for o in range(0, source.size, block):
            ctypes.memmove(d, s + o, block)
        best = max(best, source.size / MiB / (time.perf_counter() - t))
    del s, d
    dst.close()
    return best


# label: (what the row reads with, its engine options, run the rank unbound)
MEMCPY_VARIANTS = {
    "posix pread": (["--api", "posix"], False),
    "mmap+memcpy": (["--api", "mmap"], False),
    "mmap populate+memcpy": (["--api", "mmap", "--mmap-populate"], False),
    "uring QD1 reg": (["--api", "uring", "--queue-depth", "1", "--uring-register-buffers"], False),
    "uring QD2 reg+wq bound": (["--api", "uring", "--queue-depth", "2", "--uring-register-buffers",
                                "--uring-async-workers"], False),
    "uring QD2 reg+wq unbound": (["--api", "uring", "--queue-depth", "2", "--uring-register-buffers",
                                  "--uring-async-workers"], True),
    "uring QD4 reg+wq unbound": (["--api", "uring", "--queue-depth", "4", "--uring-register-buffers",
                                  "--uring-async-workers"], True),
}


def bench_memcpy(pario, shm, rounds, size):
    print("\nrows: pario's read phase (open, reads, close) through each API, best of 3 iterations; "
          "'wq' hands every request to the kernel's io-wq workers (IOSQE_ASYNC), which inherit the "
          "rank's CPU binding: 'bound' is the launcher's default (one core), 'unbound' lets them "
          "copy on every core; memcpy: the same bytes from a tmpfs file's pages in memory into one "
          "1 MiB buffer, on one core, best of 3")
    source = FileBytes(shm, size)
    try:
        def one_round(label, peer_first):
            args, unbound = MEMCPY_VARIANTS[label]
            if peer_first:
                theirs = memcpy_rate(source)
            mine = pario.rate(shm, *args, "--layout", "partitioned", "--block", "1m",
                              "--size", engine_size(size), "--phases", "read", phase="read",
                              iterations=3, unbound=unbound)
            if not peer_first:
                theirs = memcpy_rate(source)
            return {"pario": mine, "memcpy": theirs}

        median_table(f"one rank reading {format_size(size)} on {shm} in 1 MiB requests vs memcpy "
                     f"of the same bytes", "MiB/s", list(MEMCPY_VARIANTS), rounds, one_round)
    finally:
        source.close()


def bench_stdio(pario, disk, rounds, size):
    cases = {"write (no fsync)": ("write", ["--no-fsync"]), "read (cached)": ("read", [])}
    print("\nrows: pario --api stdio at 4 KiB requests with a 1 MiB against an 8 KiB stream buffer "
          "(setvbuf), best of 3 iterations: the buffer sets how many system calls the bytes take")

    def one_round(label, _):
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
    ap = _args.parser(__doc__)
    ap.add_argument("--disk", default="/var/tmp/pario-bench",
                    help="parent of this run's own fresh directory on the disk (made if missing)")
    ap.add_argument("--shm", default="/dev/shm/pario-bench",
                    help="parent of this run's own fresh directory on tmpfs (made if missing)")
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--only", default="uring,memcpy,stdio")
    ap.add_argument("--rand-size", type=_args.size, default="64m", help="file of the 4 KiB random reads")
    ap.add_argument("--seq-size", type=_args.size, default="512m", help="file of the 1 MiB sequential runs")
    ap.add_argument("--memcpy-size", type=_args.size, default="1g")
    ap.add_argument("--stdio-size", type=_args.size, default="256m")
    ap.add_argument("--placement", default="bound", choices=("bound", "unbound"),
                    help="uring rows: pario's rank as the launcher binds it with fio pinned to the "
                         "same CPUs (default), or both unbound")
    a = ap.parse_args()
    only = set(a.only.split(","))
    if only - {"uring", "memcpy", "stdio"}:
        _args.fail(f"--only takes uring, memcpy, stdio, not {','.join(only - {'uring', 'memcpy', 'stdio'})}")
    if "uring" in only:
        _args.tool("fio")
    for option, d in (("--disk", a.disk), ("--shm", a.shm)):
        _args.directory(d, option)
    _args.engine()
    with tempfile.TemporaryDirectory() as scratch, _args.fresh_dir(a.disk, "backends") as disk, \
            _args.fresh_dir(a.shm, "backends") as shm:
        pario = Pario(scratch)
        print("load average at the start: %.2f %.2f %.2f (2 cores here: read the ratios, not the absolute rates)"
              % os.getloadavg())
        if "uring" in only:
            bench_uring(pario, disk, a.rounds, a.rand_size, a.seq_size, a.placement)
        if "memcpy" in only:
            bench_memcpy(pario, shm, a.rounds, a.memcpy_size)
        if "stdio" in only:
            bench_stdio(pario, disk, a.rounds, a.stdio_size)

if __name__ == "__main__":
    main()
