#!/usr/bin/env python3
"""pario's I/O backends beside their peers, in the same minutes.

Every comparison runs as short paired turns (bench/pairing.py): the two
sides take turns of equal length (the same bytes) in ABBA order, A B,
B A, A B, ..., each pair gives one ratio A/B, and each row prints the
median of those ratios with a distribution-free 95 % interval for it, its
range, and in how many pairs A was at least B.  A steady drift of the
device (the host's cache of a virtual disk, the other vCPU's load) then
adds to A in half the pairs and to B in the other half instead of landing
on whichever tool had the one long turn.  `--control` runs the same
pairing with one tool on both sides, which must give 1.00 inside its
interval: the method favours neither place; `--pario-variant OPTIONS`
pairs pario's uring rows run with extra engine options against its
default, which is how an option's worth is measured.

  uring   `--api uring --direct` on a disk directory against fio's io_uring
          engine at the same queue depth, block and direct flag: 4 KiB
          random reads at depth 1, 16 and 64 (IOPS), 1 MiB sequential read
          and write at depth 16 (MiB/s).  A turn is one pass over a fresh
          file of --rand-size (4 KiB rows) or --seq-size (1 MiB rows):
          each tool writes its own file untimed and flushed to the device
          (fsync) just before its timed reads (pario: its untimed
          preparation; fio: a separate --create_only run, then fsync by
          this script), touches every block once (fio's random map, pario's
          random layout, both with the same seed every turn) and the file
          is removed after the turn and the removal committed (syncfs:
          on a file system mounted with `discard` the freed blocks are
          discarded then), so no turn's writeback or discard lands on
          the next one.  Both run on the same CPUs: the launcher binds pario's
          one rank to a core (Open MPI's default), so fio runs pinned to
          the same core(s) with taskset; `--placement unbound` runs both
          unbound, `--placement irq` pins both to the CPU serving the
          disk's interrupts (pario's rank unbound by the launcher and
          pinned with taskset).  Where that core is not the one serving
          the interrupts every completion is a cross-CPU wake-up, which
          at 4 KiB costs either tool up to a third of its IOPS: comparing
          an unpinned fio with a bound pario measures placement, not the
          tools.  On a machine shared with other work run the script
          under `chrt -f 10` (root): both tools inherit SCHED_FIFO.
  memcpy  one rank reading a 1 GiB tmpfs file in 1 MiB requests through
          posix, mmap and uring, against memcpy of the same bytes: this
          script maps a tmpfs file of the same size, faults every page in
          (as a read's page cache is), and copies it in 1 MiB pieces into
          one 1 MiB buffer, as a read does, in the same run.
  stdio   --api stdio with an 8 KiB against a 1 MiB stream buffer at 4 KiB
          requests on the disk directory (writes without fsync, cached
          reads): the buffer sets how many system calls the bytes take.

    .venv/bin/python bench/backends.py [--disk /var/tmp/pario-bench] [--shm /dev/shm/pario-bench]
        [--pairs 8] [--only uring,memcpy,stdio] [--cases qd1,qd16,...]
        [--control fio,pario] [--pario-variant=OPTIONS] [--rand-size 64m] [--seq-size 512m]
        [--memcpy-size 1g] [--placement bound|unbound|irq]
"""

import argparse
import ctypes
import json
import mmap
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.engine import engine_path, take_result  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.errors import UsageError  # noqa: E402
from pario.units import engine_size, format_size, parse_size  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairing import PairedTable  # noqa: E402  (bench/pairing.py: the paired turns)
import _args  # noqa: E402  (bench/_args.py: argument checks and the bench's own directories)

MiB = 2 ** 20


def fail(message):
    """The bench's one line on stderr, and a non-zero exit."""
    sys.exit(f"bench: {message}")


class Pario:
    """pario-engine io for one rank, through pario's own launcher.

    pin: a taskset CPU list the launcher itself runs under (with the
    launcher's binding off, the rank inherits it), or None."""

    def __init__(self, scratch, unbound=False, pin=None):
        self.launcher, self.engine, self.scratch = choose_launcher(), engine_path(), Path(scratch)
        self.unbound, self.pin = unbound or pin is not None, pin

    def environment(self, unbound=None):
        env = self.launcher.environment()
        if (self.unbound if unbound is None else unbound) and self.launcher.flavour == "openmpi":
            env["OMPI_MCA_hwloc_base_binding_policy"] = "none"  # mpirun --bind-to none
        return env

    def command(self, engine_argv):
        argv = self.launcher.command(1, engine_argv)
        return ["taskset", "-c", self.pin, *argv] if self.pin else argv

    def rank_cpus(self):
        """The CPUs the launcher lets one rank run on, as a taskset list."""
        argv = self.command([sys.executable, "-c",
                             "import os; print(','.join(map(str, sorted(os.sched_getaffinity(0)))))"])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.environment())
        if p.returncode != 0 or not p.stdout.strip():
            fail(f"cannot ask the launcher where a rank runs: {p.stderr.strip()[-300:]}")
        return p.stdout.strip().splitlines()[-1]

    def rate(self, directory, *args, phase, iterations=1, unbound=None):
        """Best MiB/s of `phase` over the run's iterations (one rank)."""
        out = self.scratch / "pario.json"
        argv = self.command([self.engine, "io", "--dir", str(directory), *map(str, args),
                             "--iterations", str(iterations), "--json", str(out)])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.environment(unbound))
        if p.returncode != 0:
            fail(f"pario-engine failed: {' '.join(p.stderr.strip().splitlines()[-1:])}")
        doc = take_result(out)
        return next(x for x in doc["phases"] if x["name"] == phase)["summary"]["best_mib_per_s"]


def run_checked(argv, what):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{what} failed: {' '.join((p.stderr or p.stdout).strip().splitlines()[-1:])}")
    return p.stdout


def fio_turn(path, rw, block, depth, size, cpus=None):
    """MiB/s of one fio io_uring pass over a fresh file of `size` bytes.
    A read turn's file is laid out by fio beforehand, untimed, and flushed
    to the device, as pario's untimed preparation flushes its file; the
    file is removed after the turn, as pario removes its own."""
    try:
        if rw != "write":
            run_checked(["fio", "--name=layout", f"--filename={path}", f"--size={size}", "--rw=read",
                         "--bs=1m", "--create_only=1"], "fio laying out its file")
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        argv = ["taskset", "-c", cpus] if cpus else []
        argv += ["fio", "--name=pario-peer", f"--filename={path}", "--ioengine=io_uring", "--direct=1",
                 f"--rw={rw}", f"--bs={block}", f"--iodepth={depth}", f"--size={size}",
                 "--fallocate=none", "--output-format=json"]
        if rw == "write":
            argv.append("--end_fsync=1")
        out = run_checked(argv, "fio")
    finally:
        path.unlink(missing_ok=True)
    job = json.loads(out[out.index("{"):])["jobs"][0]["write" if rw == "write" else "read"]
    return job["bw_bytes"] / MiB


def settle(directory):
    """Commit the file system holding `directory` (syncfs), untimed.  On a
    file system mounted with `discard` a removed file's blocks are
    discarded when the journal commits, seconds later, which would land in
    the next turn, whichever tool that is."""
    run_checked(["sync", "--file-system", str(directory)], "sync --file-system")


def disk_irq_cpus():
    """CPUs that served block-device (virtio/nvme/ahci) interrupts, from /proc/interrupts."""
    try:
        lines = Path("/proc/interrupts").read_text().splitlines()
    except OSError:
        return None
    ncpu = len(lines[0].split())
    counts = [0] * ncpu
    for line in lines[1:]:
        words = line.split()
        if any(k in line for k in ("-req.", "nvme", "ahci")) and len(words) > ncpu:
            for i in range(ncpu):
                counts[i] += int(words[1 + i]) if words[1 + i].isdigit() else 0
    top = max(counts) if counts else 0
    return ",".join(str(i) for i, c in enumerate(counts) if top and c >= top / 4) or None


# key: (row label, rw, block, depth, extra engine options).  pario's
# buffers for --direct are on transparent huge pages by default (one
# segment per 1 MiB request instead of 256); the "4k pages" rows give
# pario the ordinary pages fio uses, for the like-for-like ratio.  The
# "refill batch" rows hold each refill for one io_uring_enter
# (--uring-submit-batch = depth), as pario did before it entered the
# kernel once per request like fio: what that choice is worth.
URING_CASES = {
    "qd1": ("4k randread QD1", "randread", 4096, 1, []),
    "qd16": ("4k randread QD16", "randread", 4096, 16, []),
    "qd64": ("4k randread QD64", "randread", 4096, 64, []),
    "qd16-batch": ("4k rr QD16 refill batch", "randread", 4096, 16, ["--uring-submit-batch", "16"]),
    "qd64-batch": ("4k rr QD64 refill batch", "randread", 4096, 64, ["--uring-submit-batch", "64"]),
    "1m-read": ("1m read QD16", "read", MiB, 16, []),
    "1m-read-4k": ("1m read QD16 4k pages", "read", MiB, 16, ["--no-huge-pages"]),
    "1m-write": ("1m write QD16", "write", MiB, 16, []),
    "1m-write-4k": ("1m write QD16 4k pages", "write", MiB, 16, ["--no-huge-pages"]),
}
CONTROLS = ("fio", "pario")


def placement_of(pario_factory, placement):
    """(Pario, fio's taskset list or None, words for the header)."""
    irq = disk_irq_cpus()
    if placement == "irq":
        if irq is None or "," in irq:
            fail(f"--placement irq needs the disk's interrupts on one CPU; /proc/interrupts shows "
                 f"{irq or 'none'}: use --placement bound or unbound")
        return pario_factory(pin=irq), irq, f"both pinned to CPU {irq}, which serves the disk's interrupts"
    if placement == "unbound":
        return pario_factory(unbound=True), None, f"both unbound; the disk's interrupts on CPU {irq or '?'}"
    pario = pario_factory()
    cpus = pario.rank_cpus()
    if len(cpus.split(",")) >= (os.cpu_count() or 1):
        return pario, None, (f"the launcher does not bind; fio unpinned; the disk's interrupts on "
                             f"CPU {irq or '?'}")
    return pario, cpus, (f"pario's rank bound by the launcher to CPU {cpus}, fio pinned there too; "
                         f"the disk's interrupts on CPU {irq or '?'}")


def bench_uring(pario_factory, disk, pairs, cases, controls, variant, rand_size, seq_size, placement):
    pario, cpus, where = placement_of(pario_factory, placement)
    fio_file = disk / f"fio-bench.{os.getpid()}.dat"
    if os.path.lexists(fio_file):
        fail(f"{fio_file} exists and is not this run's: remove it or give another --disk")
    print(f"\nrows: '4k randread QDn': IOPS of one turn reading every 4 KiB block of a fresh "
          f"{format_size(rand_size)} file once in random order with n requests in flight, O_DIRECT "
          f"(pario: open, reads, close; fio: its job's rate); '1m read/write QD16': MiB/s of one "
          f"sequential turn over {format_size(seq_size)} (writes of a fresh file, fsync included), "
          f"pario's buffers on transparent huge pages (its --direct default) or, '4k pages', on "
          f"ordinary pages as fio's are.  Each turn's file is written and flushed untimed just "
          f"before it, removed after it, and the removal committed (syncfs) before the next turn.  Placement: {where}.")

    def turns(key):
        _, rw, block, depth, extra = URING_CASES[key]
        size = rand_size if block == 4096 else seq_size
        layout = "random" if rw == "randread" else "partitioned"
        phase = "write" if rw == "write" else "read"
        scale = MiB / block if block == 4096 else 1  # IOPS for 4 KiB, MiB/s otherwise

        def mine(more=()):
            got = pario.rate(disk, "--api", "uring", "--queue-depth", depth, "--direct", "--layout", layout,
                             "--block", engine_size(block), "--size", engine_size(size), "--phases", phase,
                             *extra, *more, phase=phase)
            settle(disk)
            return scale * got

        def theirs():
            got = fio_turn(fio_file, rw, block, depth, size, cpus)
            settle(disk)
            return scale * got

        return {"pario": mine, "fio": theirs, "variant": lambda: mine(variant)}

    title = (f"uring --direct vs fio io_uring on {disk} (random {format_size(rand_size)}, "
             f"sequential {format_size(seq_size)})")
    unit = "IOPS for 4k rows, MiB/s for 1m rows"
    table = PairedTable(title, unit, ("pario uring", "fio io_uring"), pairs)
    for key in cases:
        t = turns(key)
        table.row(URING_CASES[key][0], t["pario"], t["fio"])
    for tool in controls:
        names = {"fio": "fio io_uring", "pario": "pario uring"}[tool]
        table = PairedTable(f"control: {names} against itself through the same pairing (must give "
                            f"1.00 inside its interval)", unit, (f"{tool} (A)", f"{tool} (B)"), pairs)
        for key in cases:
            t = turns(key)
            table.row(URING_CASES[key][0], t[tool], t[tool])
    if variant:
        table = PairedTable(f"pario uring with {' '.join(variant)} against its default through the same "
                            f"pairing", unit, ("pario variant", "pario default"), pairs)
        for key in cases:
            t = turns(key)
            table.row(URING_CASES[key][0], t["variant"], t["pario"])


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


def bench_memcpy(pario, shm, pairs, size):
    print("\nrows: pario's read phase (open, reads, close) through each API, best of 3 iterations; "
          "'wq' hands every request to the kernel's io-wq workers (IOSQE_ASYNC), which inherit the "
          "rank's CPU binding: 'bound' is the launcher's default (one core), 'unbound' lets them "
          "copy on every core; memcpy: the same bytes from a tmpfs file's pages in memory into one "
          "1 MiB buffer, on one core, best of 3")
    source = FileBytes(shm, size)
    try:
        table = PairedTable(f"one rank reading {format_size(size)} on {shm} in 1 MiB requests vs memcpy "
                            f"of the same bytes", "MiB/s", ("pario", "memcpy"), pairs)
        for label, (args, unbound) in MEMCPY_VARIANTS.items():
            table.row(label,
                      lambda: pario.rate(shm, *args, "--layout", "partitioned", "--block", "1m",
                                         "--size", engine_size(size), "--phases", "read", phase="read",
                                         iterations=3, unbound=unbound),
                      lambda: memcpy_rate(source))
    finally:
        source.close()


def bench_stdio(pario, disk, pairs, size):
    cases = {"write (no fsync)": ("write", ["--no-fsync"]), "read (cached)": ("read", [])}
    print("\nrows: pario --api stdio at 4 KiB requests with a 1 MiB against an 8 KiB stream buffer "
          "(setvbuf), best of 3 iterations: the buffer sets how many system calls the bytes take")
    table = PairedTable(f"stdio buffer 1 MiB vs 8 KiB, 4 KiB requests, {format_size(size)} on {disk} "
                        f"(best of 3 each)", "MiB/s", ("stdio 1m", "stdio 8k"), pairs)
    for label, (phase, extra) in cases.items():
        def turn(buf, phase=phase, extra=extra):
            return lambda: pario.rate(disk, "--api", "stdio", "--stdio-buffer", buf, "--block", "4k",
                                      "--size", engine_size(size), "--phases", "write,read", *extra,
                                      phase=phase, iterations=3)
        table.row(label, turn("1m"), turn("8k"))


def names_list(text, known, option):
    """'a,b' -> ['a', 'b'], each one of `known`, in the order given, no repeats."""
    words = [w for w in text.split(",") if w]
    unknown = [w for w in words if w not in known]
    if unknown or not words:
        _args.fail(f"{option} takes a comma-separated list of {', '.join(known)}, not '{text}'")
    if len(set(words)) != len(words):
        _args.fail(f"{option} '{text}' names one twice: give each once")
    return words


def parse_args(argv=None):
    ap = _args.parser(__doc__)
    ap.add_argument("--disk", default="/var/tmp/pario-bench")
    ap.add_argument("--shm", default="/dev/shm/pario-bench")
    ap.add_argument("--pairs", default="8",
                    help="pairs of turns per row, in ABBA order (an even number, so each side goes "
                         "first as often; 6 or more for a 95 %% interval)")
    ap.add_argument("--rounds", help=argparse.SUPPRESS)
    ap.add_argument("--only", default="uring,memcpy,stdio")
    ap.add_argument("--cases", default=",".join(URING_CASES),
                    help=f"uring rows to run, of {', '.join(URING_CASES)}")
    ap.add_argument("--control", default="",
                    help="also pair fio and/or pario (fio,pario) against itself on the same uring "
                         "rows: the method's check, which must give 1.00 inside its interval")
    ap.add_argument("--pario-variant", metavar="OPTIONS",
                    help="also pair pario's uring rows run with these extra engine options "
                         "(e.g. --pario-variant=--uring-register-buffers) against its default")
    ap.add_argument("--rand-size", default="64m", help="file of one turn of 4 KiB random reads")
    ap.add_argument("--seq-size", default="512m", help="file of one turn of 1 MiB sequential I/O")
    ap.add_argument("--memcpy-size", default="1g")
    ap.add_argument("--stdio-size", default="256m")
    ap.add_argument("--placement", default="bound",
                    help="uring rows: bound (pario's rank where the launcher binds it, fio pinned "
                         "to the same CPUs; default), unbound (both), irq (both pinned to the CPU "
                         "serving the disk's interrupts)")
    a = ap.parse_args(argv)
    if a.rounds is not None:
        _args.fail("--rounds is gone: the rows now run as --pairs N pairs of short turns (see --help)")
    try:
        a.pairs = int(a.pairs)
    except ValueError:
        _args.fail(f"--pairs '{a.pairs}' is not a whole number: give an even number such as 8")
    if a.pairs < 2 or a.pairs % 2:
        _args.fail(f"--pairs {a.pairs}: give an even number of at least 2, so each side goes first as "
             f"often (6 or more for a 95 % interval)")
    a.only = names_list(a.only, ("uring", "memcpy", "stdio"), "--only")
    a.cases = names_list(a.cases, tuple(URING_CASES), "--cases")
    a.control = names_list(a.control, CONTROLS, "--control") if a.control else []
    if a.pario_variant is not None:
        try:
            a.pario_variant = shlex.split(a.pario_variant)
        except ValueError as e:
            _args.fail(f"--pario-variant cannot be split into words ({e}): close every quote")
        if not a.pario_variant or not a.pario_variant[0].startswith("--"):
            _args.fail(f"--pario-variant '{' '.join(a.pario_variant)}' names no engine option: give e.g. "
                 f"--pario-variant=--uring-register-buffers")
        if "uring" not in a.only:
            _args.fail("--pario-variant compares uring rows: add uring to --only")
    if a.placement not in ("bound", "unbound", "irq"):
        _args.fail(f"--placement '{a.placement}' is unknown: use bound, unbound or irq")
    for name in ("rand_size", "seq_size", "memcpy_size", "stdio_size"):
        option = "--" + name.replace("_", "-")
        try:
            setattr(a, name, parse_size(getattr(a, name), option))
        except UsageError as e:
            _args.fail(str(e))
    if a.rand_size % 4096:
        _args.fail(f"--rand-size {engine_size(a.rand_size)} is not a whole number of 4 KiB blocks: use a "
             f"multiple of 4k")
    for name, value in (("--seq-size", a.seq_size), ("--memcpy-size", a.memcpy_size)):
        if value % MiB:
            _args.fail(f"{name} {engine_size(value)} is not a whole number of 1 MiB blocks: use a multiple "
                 f"of 1m")
    if a.stdio_size % 4096:
        _args.fail(f"--stdio-size {engine_size(a.stdio_size)} is not a whole number of 4 KiB blocks")
    if "uring" in a.only:
        _args.tool("fio")
    for option, d in (("--disk", a.disk), ("--shm", a.shm)):
        _args.directory(d, option)
    _args.engine()
    return a


def main():
    a = parse_args()
    # every file, fio's too, in fresh directories of this run's own, the only
    # things removed afterwards (a user's or another bench's files stay)
    with _args.fresh_dir(a.disk, "backends") as disk, _args.fresh_dir(a.shm, "backends") as shm:
        with tempfile.TemporaryDirectory() as scratch:
            try:
                def pario_factory(unbound=False, pin=None):
                    return Pario(scratch, unbound=unbound, pin=pin)
                pario = pario_factory()
            except UsageError as e:
                fail(str(e))
            print("load average at the start: %.2f %.2f %.2f (2 cores here: read the ratios, not the absolute rates)"
                  % os.getloadavg())
            if "uring" in a.only:
                bench_uring(pario_factory, disk, a.pairs, a.cases, a.control, a.pario_variant or [],
                            a.rand_size, a.seq_size, a.placement)
            if "memcpy" in a.only:
                bench_memcpy(pario, shm, a.pairs, a.memcpy_size)
            if "stdio" in a.only:
                bench_stdio(pario, disk, a.pairs, a.stdio_size)
            print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
