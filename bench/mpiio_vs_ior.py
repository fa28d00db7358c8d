#!/usr/bin/env python3
"""pario's mpiio and hdf5 backends beside IOR's MPIIO API, in the same minutes.

IOR's pattern, 4 ranks, one shared file: `-b SIZE/4 -t BLOCK -s 1` (rank r
owns the r-th contiguous quarter, moved in BLOCK transfers), which is
pario's `--layout partitioned --block BLOCK`.  Both tools time open, I/O
(with fsync for writes: IOR -e, pario's default) and close, take the rate
over all ranks (IOR: last close minus first open; pario: the longest
rank's barrier-to-barrier time, its timing rule ending with a barrier
after close, which IOR's lacks), read back the data just written, and use the same MPI-IO
implementation (OMPI_MCA_io for IOR, --mpiio-impl for pario).

  independent   pario --api mpiio                       vs ior -a MPIIO
  collective    pario --api mpiio --collective          vs ior -a MPIIO -c
                (one write_at_all over a file view per rank and phase)
  per call      pario --api mpiio --collective-per-call vs ior -a MPIIO -c
                (IOR's own form: one write_at_all per transfer)
  hdf5          pario --api hdf5 --collective           vs pario --api mpiio --collective

Every case runs on a tmpfs and a disk directory in pairs of runs in ABBA
order (bench/pairing.py: pario then peer, peer then pario, ...); each run
keeps its best of --iterations.  The table prints each tool's median, the
median of the per-pair ratios and its distribution-free 95 % interval
(at least 6 pairs) and range.  --null pario or --null peer puts the same
tool on both sides, to show that the pairing itself is neutral (the
ratio's interval should hold 1.00).

Both tools get the same mpirun settings: --yield-when-idle (Open MPI's
mpi_yield_when_idle: ranks waiting in a collective give up their core
instead of spinning, which matters with 4 ranks on 2 cores) and
--bind-to; and, where this virtual machine's free page reporting can be
tuned (root), freed memory is held in the guest for --hold-freed-memory
seconds (bench/bonnie_side_by_side.py says why: a tmpfs write faults on
memory the host took back, at about half the rate).

IOR is not built here: build it yourself (configure --with-mpiio) and pass
its path.

    .venv/bin/python bench/mpiio_vs_ior.py --ior /path/to/ior [--disk /var/tmp/pario-bench]
        [--shm /dev/shm/pario-bench] [--size 4g] [--block 1m] [--pairs 6]
        [--iterations 3] [--impl ompio|romio] [--only independent,collective,per-call,hdf5]
        [--where shm,disk] [--read-only] [--null pario|peer] [--yield-when-idle 0|1]
        [--bind-to none|core|socket] [--hold-freed-memory 60] [--transfer-buffer SIZE]

The file is 4 GiB by default: a read of a cached 1 GiB file lasts about
40 ms here, and one run's iterations then spread from 17 to 28 GiB/s for
either tool (22:40 UTC, quiet machine), so a best-of ratio said more about
that spread than about the tools (0.86 to 1.07 on repeats); at 4 GiB the
read lasts about 170 ms.

--read-only times the read phase alone (each tool writes its file untimed
first), which separates the read path from what a write phase just before
leaves behind.

Every file (pario's and IOR's) goes in a fresh directory made under --disk
and --shm for this run; only those directories are removed at the end.
"""

import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks and the bench's own directories)
from pario.engine import take_result  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.units import engine_size, format_size  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bonnie_side_by_side import HeldFreedMemory, reported_kib  # noqa: E402
from pairing import median_interval, run_pairs  # noqa: E402  (the one pairing mechanism)

RANKS = 4
COMPONENT = {"ompio": "ompio", "romio": "romio321"}


class Tools:
    def __init__(self, ior, impl, size, block, iterations, scratch, mpirun_args=(), env=None):
        """mpirun_args and env go to both tools' launches alike."""
        self.launcher, self.engine = choose_launcher(), _args.engine()
        self.ior, self.impl, self.size, self.block = ior, impl, size, block
        self.iterations, self.scratch = iterations, Path(scratch)
        self.phases = "write,read"
        self.mpirun_args, self.env = list(mpirun_args), dict(env or {})
        self.transfer_buffer = None  # pario's slice for its whole-list (--collective) rows
        if self.mpirun_args and self.launcher.kind != "mpirun":
            sys.exit(f"bench: --yield-when-idle and --bind-to are mpirun options; the launcher here "
                     f"is {self.launcher.kind}")

    def command(self, argv):
        cmd = self.launcher.command(RANKS, argv)
        cmd[1:1] = self.mpirun_args
        return cmd

    def environment(self):
        return {**self.launcher.environment(), **self.env}

    def read_only(self):
        """Time reads alone: pario writes its file untimed before its first
        read (--phases read), IOR reads a file it wrote and kept (-r -E -k);
        both then read the same cached bytes every iteration, with no write
        phase just before to leave work behind."""
        self.phases = "read"

    def pario(self, directory, *api):
        """{'write': MiB/s, 'read': MiB/s}, best of the run's iterations."""
        out = self.scratch / "pario.json"
        if self.transfer_buffer and "--collective" in api:
            api = (*api, "--transfer-buffer", engine_size(self.transfer_buffer))
        argv = self.command([
            self.engine, "io", "--dir", str(directory), *api, "--mpiio-impl", self.impl,
            "--layout", "partitioned", "--block", engine_size(self.block),
            "--size", engine_size(self.size), "--phases", self.phases,
            "--iterations", str(self.iterations), "--json", str(out)])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.environment())
        if p.returncode != 0:
            sys.exit(f"bench: pario-engine failed: {p.stderr.strip().splitlines()[0]}")
        doc = take_result(out)
        ran = doc["params"]["api_options"].get("implementation")
        if ran != COMPONENT[self.impl]:
            sys.exit(f"bench: pario ran MPI-IO implementation {ran}, not {self.impl}")
        return {ph["name"]: ph["summary"]["best_mib_per_s"] for ph in doc["phases"]}

    def ior_run(self, directory, collective):
        """IOR's Max(MiB) of write and read (MiB/s) over its repetitions."""
        env = self.environment()
        env["OMPI_MCA_io"] = COMPONENT[self.impl]
        path = Path(directory) / "ior-bench.dat"

        def ior(*phases, iterations=self.iterations):
            return subprocess.run(self.command([
                self.ior, "-a", "MPIIO", *(["-c"] if collective else []),
                "-b", str(self.size // RANKS), "-t", str(self.block), "-s", "1", "-e", *phases,
                "-i", str(iterations), "-o", str(path)]), capture_output=True, text=True, env=env)

        names = self.phases.split(",")
        if names == ["read"]:
            ior("-w", "-k", iterations=1)  # the file to read, written untimed as pario's is
            p = ior("-r", "-E", "-k")  # -E: read the kept file
            path.unlink(missing_ok=True)
        else:
            p = ior("-w", "-r")
        # the summary table: "write  Max(MiB)  Min(MiB) ..." after its header
        summary = p.stdout.split("Summary of all tests:")[-1]
        rates = {}
        for name in names:
            m = re.search(rf"^{name}\s+([0-9.]+)\s", summary, re.M)
            if p.returncode != 0 or "Summary of all tests:" not in p.stdout or not m:
                sys.exit(f"bench: ior failed: {(p.stderr or p.stdout).strip()[-300:]}")
            rates[name] = float(m.group(1))
        return rates


def table(title, rows, pairs, mine_run, theirs_run, peer_label):
    """rows: labels; mine_run(label) / theirs_run(label) -> {phase: MiB/s}.
    Pairs of runs in ABBA order (bench/pairing.py, the one pairing
    mechanism): whichever tool runs second meets the first one's file
    still being written back and its freed pages, and the machine drifts;
    each tool goes first in half the pairs.  Per phase: each tool's median,
    the median of the per-pair ratios and its 95 % interval."""
    print(f"\n{title}; {pairs} pairs of runs (ABBA order), MiB/s; ratio: median over pairs of "
          f"pario / peer, its 95 % interval (order statistics; n<6: too few pairs) and range",
          flush=True)
    print(f"{'case':<34}{'pario':>10}{'peer':>10}{'ratio':>8}{'95% interval':>14}{'range':>12}")
    for label in rows:
        got = run_pairs(lambda: mine_run(label), lambda: theirs_run(label), pairs)
        for ph in got[0][0]:
            a = statistics.median(m[ph] for m, _ in got)
            b = statistics.median(t[ph] for _, t in got)
            ratios = [m[ph] / t[ph] for m, t in got if t[ph] > 0]
            ci = median_interval(ratios) if ratios else None
            interval = f"{ci[0]:.2f}-{ci[1]:.2f}" if ci else "n<6"
            span = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
            ratio = f"{statistics.median(ratios):>8.2f}" if ratios else f"{'-':>8}"
            print(f"{label + ' ' + ph + ' (' + peer_label(label) + ')':<34}{a:>10.1f}{b:>10.1f}"
                  f"{ratio}{interval:>14}{span:>12}", flush=True)


CASES = {
    "independent": (["--api", "mpiio"], False),
    "collective": (["--api", "mpiio", "--collective"], True),
    "per-call": (["--api", "mpiio", "--collective-per-call"], True),
}


def bench_dir(tools, directory, kind, pairs, only, null=None):
    """null: 'pario' or 'peer' puts that tool on both sides of every pair."""
    rows = [c for c in CASES if c in only]

    def pario_case(label):
        return tools.pario(directory, *CASES[label][0])

    def ior_case(label):
        return tools.ior_run(directory, CASES[label][1])

    mine_run, theirs_run = pario_case, ior_case
    if null == "pario":
        theirs_run = pario_case
    elif null == "peer":
        mine_run = ior_case
    names = {"pario": "pario vs pario", "peer": "IOR vs IOR"}

    if rows:
        table(f"mpiio vs IOR -a MPIIO on {kind} {directory}: 4 ranks, {format_size(tools.size)} "
              f"shared file, {format_size(tools.block)} transfers, {tools.impl}"
              + (f"; NULL CHECK: {names[null]}" if null else ""), rows, pairs, mine_run, theirs_run,
              lambda label: names[null] if null else ("vs IOR -c" if CASES[label][1] else "vs IOR"))
    if "hdf5" in only and not null:
        table(f"hdf5 --collective vs mpiio --collective on {kind} {directory}", ["hdf5 coll"],
              pairs, lambda _: tools.pario(directory, "--api", "hdf5", "--collective"),
              lambda _: tools.pario(directory, "--api", "mpiio", "--collective"),
              lambda _: "vs mpiio coll")


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--ior", required=True, help="path of an IOR binary built with MPIIO")
    ap.add_argument("--disk", default="/var/tmp/pario-bench",
                    help="parent of this run's own fresh directory on the disk (made if missing)")
    ap.add_argument("--shm", default="/dev/shm/pario-bench",
                    help="parent of this run's own fresh directory on tmpfs (made if missing)")
    ap.add_argument("--size", type=_args.size, default="4g", help="the shared file (aggregate over 4 ranks)")
    ap.add_argument("--block", type=_args.size, default="1m", help="bytes per transfer (IOR -t)")
    ap.add_argument("--pairs", type=_args.count, default=6,
                    help="pairs of runs per case, ABBA order (6 is the fewest with a 95 %% interval)")
    ap.add_argument("--iterations", type=_args.count, default=3)
    ap.add_argument("--impl", default="ompio", choices=sorted(COMPONENT))
    ap.add_argument("--only", default="independent,collective,per-call,hdf5")
    ap.add_argument("--where", default="shm,disk")
    ap.add_argument("--read-only", action="store_true",
                    help="time reads alone, of a file written before (untimed) by each tool")
    ap.add_argument("--null", choices=("pario", "peer"),
                    help="the same tool on both sides (pario vs pario, IOR vs IOR): the pairing's "
                         "own ratio, which should be 1.00")
    ap.add_argument("--yield-when-idle", choices=("0", "1"),
                    help="Open MPI's mpi_yield_when_idle for both tools (default: Open MPI's own)")
    ap.add_argument("--bind-to", choices=("none", "core", "socket", "hwthread"),
                    help="mpirun --bind-to for both tools (default: Open MPI's own)")
    ap.add_argument("--transfer-buffer", type=_args.size, metavar="SIZE",
                    help="pario's slice (--transfer-buffer) in its --collective rows (default: "
                         "pario's own)")
    ap.add_argument("--hold-freed-memory", type=float, default=60.0, metavar="SECONDS",
                    help="free page reporting's min_free_ms for the bench's duration (root; 0: "
                         "leave it)")
    a = ap.parse_args()
    ior = shutil.which(a.ior) or a.ior
    if not (os.path.isfile(ior) and os.access(ior, os.X_OK)):
        _args.fail(f"--ior {a.ior} is not an executable: build IOR (configure --with-mpiio) "
                   "and give its path")
    only = set(a.only.split(","))
    if only - set(CASES) - {"hdf5"}:
        _args.fail(f"--only takes {','.join(CASES)},hdf5")
    where = a.where.split(",")
    if set(where) - {"shm", "disk"}:
        _args.fail(f"--where takes shm,disk, not {a.where}")
    size, block = a.size, a.block
    if size % (RANKS * block):
        _args.fail(f"--size must be a multiple of {RANKS} x --block")
    if a.transfer_buffer and not only & {"collective", "hdf5"}:
        _args.fail("--transfer-buffer sizes pario's --collective calls: add collective or hdf5 "
                   "to --only")
    if a.transfer_buffer and a.transfer_buffer % block:
        _args.fail("--transfer-buffer must be a multiple of --block")
    if a.read_only and "hdf5" in only:
        _args.fail("--read-only compares with IOR: leave hdf5 out of --only")
    for option, d in (("--shm", a.shm), ("--disk", a.disk)):
        _args.directory(d, option)
    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory())
        mpirun_args = []
        if a.yield_when_idle is not None:
            mpirun_args += ["--mca", "mpi_yield_when_idle", a.yield_when_idle]
        if a.bind_to:
            mpirun_args += ["--bind-to", a.bind_to]
        tools = Tools(ior, a.impl, size, block, a.iterations, scratch, mpirun_args)
        tools.transfer_buffer = a.transfer_buffer
        if a.read_only:
            tools.read_only()
        print("load average at the start: %.2f %.2f %.2f (2 cores here: read the ratios, not the absolute rates)"
              % os.getloadavg())
        print(f"mpirun settings for both tools: {' '.join(mpirun_args) or 'Open MPI defaults'}")
        held = stack.enter_context(HeldFreedMemory(a.hold_freed_memory))
        before = reported_kib()
        for kind, parent in (("tmpfs", a.shm), ("disk", a.disk)):
            if kind.replace("tmpfs", "shm") not in where:
                continue
            with _args.fresh_dir(parent, "mpiio-vs-ior") as d:
                bench_dir(tools, d, kind, a.pairs, only, a.null)
        after = reported_kib()
        if before is not None and after is not None:
            print(f"\nfree memory handed back to the host during the bench: "
                  f"{(after - before) / 1024:.0f} MiB" + ("" if held.old is not None else
                                                           " (reporting left as it was)"))


if __name__ == "__main__":
    main()
