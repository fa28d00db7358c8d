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

Every case runs on a tmpfs and a disk directory, in alternating rounds
(pario then peer, peer then pario, ...); each run keeps its best of --iterations,
and the table prints the median over rounds and the ratio pario / peer.
IOR is not built here: build it yourself (configure --with-mpiio) and pass
its path.

    .venv/bin/python bench/mpiio_vs_ior.py --ior /path/to/ior [--disk /var/tmp/pario-bench]
        [--shm /dev/shm/pario-bench] [--size 4g] [--block 1m] [--rounds 3]
        [--iterations 3] [--impl ompio|romio] [--only independent,collective,per-call,hdf5]
        [--where shm,disk] [--read-only]

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

RANKS = 4
COMPONENT = {"ompio": "ompio", "romio": "romio321"}


class Tools:
    def __init__(self, ior, impl, size, block, iterations, scratch):
        self.launcher, self.engine = choose_launcher(), _args.engine()
        self.ior, self.impl, self.size, self.block = ior, impl, size, block
        self.iterations, self.scratch = iterations, Path(scratch)
        self.phases = "write,read"

    def read_only(self):
        """Time reads alone: pario writes its file untimed before its first
        read (--phases read), IOR reads a file it wrote and kept (-r -E -k);
        both then read the same cached bytes every iteration, with no write
        phase just before to leave work behind."""
        self.phases = "read"

    def pario(self, directory, *api):
        """{'write': MiB/s, 'read': MiB/s}, best of the run's iterations."""
        out = self.scratch / "pario.json"
        argv = self.launcher.command(RANKS, [
            self.engine, "io", "--dir", str(directory), *api, "--mpiio-impl", self.impl,
            "--layout", "partitioned", "--block", engine_size(self.block),
            "--size", engine_size(self.size), "--phases", self.phases,
            "--iterations", str(self.iterations), "--json", str(out)])
        p = subprocess.run(argv, capture_output=True, text=True, env=self.launcher.environment())
        if p.returncode != 0:
            sys.exit(f"bench: pario-engine failed: {p.stderr.strip().splitlines()[0]}")
        doc = take_result(out)
        ran = doc["params"]["api_options"].get("implementation")
        if ran != COMPONENT[self.impl]:
            sys.exit(f"bench: pario ran MPI-IO implementation {ran}, not {self.impl}")
        return {ph["name"]: ph["summary"]["best_mib_per_s"] for ph in doc["phases"]}

    def ior_run(self, directory, collective):
        """IOR's Max(MiB) of write and read (MiB/s) over its repetitions."""
        env = self.launcher.environment()
        env["OMPI_MCA_io"] = COMPONENT[self.impl]
        path = Path(directory) / "ior-bench.dat"

        def ior(*phases, iterations=self.iterations):
            return subprocess.run(self.launcher.command(RANKS, [
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


def table(title, rows, rounds, one_round):
    """rows: labels; one_round(label, peer_first) -> (mine: {phase: v}, theirs: {phase: v}, names).
    Odd rounds run the peer first: whichever tool runs second meets the
    first one's file still being written back and its freed pages, so a
    fixed order would favour one tool."""
    print(f"\n{title}; median of {rounds} rounds, MiB/s")
    print(f"{'case':<34}{'pario':>12}{'peer':>12}{'ratio':>8}")
    for label in rows:
        mine, theirs, names = {}, {}, None
        for r in range(rounds):
            m, t, names = one_round(label, r % 2 == 1)
            for ph in m:
                mine.setdefault(ph, []).append(m[ph])
                theirs.setdefault(ph, []).append(t[ph])
        for ph in mine:
            a, b = statistics.median(mine[ph]), statistics.median(theirs[ph])
            print(f"{label + ' ' + ph + ' (' + names + ')':<34}{a:>12.1f}{b:>12.1f}"
                  f"{(a / b if b else float('nan')):>8.2f}", flush=True)


CASES = {
    "independent": (["--api", "mpiio"], False),
    "collective": (["--api", "mpiio", "--collective"], True),
    "per-call": (["--api", "mpiio", "--collective-per-call"], True),
}


def bench_dir(tools, directory, kind, rounds, only):
    rows = [c for c in CASES if c in only]

    def one_round(label, peer_first):
        api, collective = CASES[label]
        if peer_first:
            theirs = tools.ior_run(directory, collective)
        mine = tools.pario(directory, *api)
        if not peer_first:
            theirs = tools.ior_run(directory, collective)
        return mine, theirs, "vs IOR -c" if collective else "vs IOR"

    if rows:
        table(f"mpiio vs IOR -a MPIIO on {kind} {directory}: 4 ranks, {format_size(tools.size)} "
              f"shared file, {format_size(tools.block)} transfers, {tools.impl}", rows, rounds,
              one_round)
    if "hdf5" in only:
        def hdf5_round(_, peer_first):
            if peer_first:
                theirs = tools.pario(directory, "--api", "mpiio", "--collective")
            mine = tools.pario(directory, "--api", "hdf5", "--collective")
            if not peer_first:
                theirs = tools.pario(directory, "--api", "mpiio", "--collective")
            return mine, theirs, "vs mpiio coll"

        table(f"hdf5 --collective vs mpiio --collective on {kind} {directory}", ["hdf5 coll"],
              rounds, hdf5_round)


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--ior", required=True, help="path of an IOR binary built with MPIIO")
    ap.add_argument("--disk", default="/var/tmp/pario-bench",
                    help="parent of this run's own fresh directory on the disk (made if missing)")
    ap.add_argument("--shm", default="/dev/shm/pario-bench",
                    help="parent of this run's own fresh directory on tmpfs (made if missing)")
    ap.add_argument("--size", type=_args.size, default="4g", help="the shared file (aggregate over 4 ranks)")
    ap.add_argument("--block", type=_args.size, default="1m", help="bytes per transfer (IOR -t)")
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--iterations", type=_args.count, default=3)
    ap.add_argument("--impl", default="ompio", choices=sorted(COMPONENT))
    ap.add_argument("--only", default="independent,collective,per-call,hdf5")
    ap.add_argument("--where", default="shm,disk")
    ap.add_argument("--read-only", action="store_true",
                    help="time reads alone, of a file written before (untimed) by each tool")
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
    if a.read_only and "hdf5" in only:
        _args.fail("--read-only compares with IOR: leave hdf5 out of --only")
    for option, d in (("--shm", a.shm), ("--disk", a.disk)):
        _args.directory(d, option)
    with tempfile.TemporaryDirectory() as scratch:
        tools = Tools(ior, a.impl, size, block, a.iterations, scratch)
        if a.read_only:
            tools.read_only()
        print("load average at the start: %.2f %.2f %.2f (2 cores here: read the ratios, not the absolute rates)"
              % os.getloadavg())
        for kind, parent in (("tmpfs", a.shm), ("disk", a.disk)):
            if kind.replace("tmpfs", "shm") not in where:
                continue
            with _args.fresh_dir(parent, "mpiio-vs-ior") as d:
                bench_dir(tools, d, kind, a.rounds, only)


if __name__ == "__main__":
    main()
