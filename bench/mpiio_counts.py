#!/usr/bin/env python3
"""Counted, not timed: what each timed MPI-IO phase costs a rank, pario
beside IOR -a MPIIO on IOR's pattern (bench/mpiio_vs_ior.py's cases).

On a shared 2-core machine one run's rate swings by 2x either way, so a
gap between the two tools is looked for in counts instead: per rank and
phase, CPU time (user, system), page faults, context switches, CPU
migrations, system calls, bytes moved, and where the phase's time went
(open, data calls, sync, close, the tool's own collectives inside the
phase, the wait in the barrier after close).  The same PMPI shim
(bench/mpiio_phase_counts.c, built here with mpicc, preloaded into both
tools' ranks) samples the same points in both, so neither tool's own
clock is trusted; the rate printed beside the counts is IOR's rule
applied to both by the shim (bytes / (last close - first open)).

    .venv/bin/python bench/mpiio_counts.py --ior /path/to/ior [--where shm,disk]
        [--only independent,collective,per-call] [--runs 2] [--size 1g]
        [--iterations 2] [--yield-when-idle 0|1] [--bind-to none|core]
        [--keep-tsv DIR] [--transfer-buffer SIZE]

Columns, medians over runs x iterations of each rank's phase, summed over
the 4 ranks where marked (sum):
  MiB/s    the shim's rate, IOR's rule for both tools
  open io sync close coll wait   ms per rank (mean over ranks)
  cpu/GiB  user+system CPU seconds (sum) per GiB moved
  usr sys  CPU seconds (sum)
  minflt   minor faults (sum); majflt is printed when not 0
  vcsw ivcsw migr   context switches voluntary / involuntary, migrations (sum)
  sysc     system calls entered (sum; perf tracepoint)
  rw       read+write system calls (/proc/self/io, sum)
  MiB      bytes through read/write calls (sum)
  rep      MiB of free memory the guest handed back to the host in the phase
  pcpu     user+system CPU seconds of the whole processes, helper threads too
           (ompio's POSIX AIO thread writes for the aggregator when a
           collective call spans more than two of its cycles; sum)
"""

import contextlib
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from mpiio_vs_ior import CASES, Tools  # noqa: E402
import _args  # noqa: E402  (bench/_args.py: argument types)
from bonnie_side_by_side import HeldFreedMemory  # noqa: E402

from pario.units import parse_size  # noqa: E402  (mpiio_vs_ior put src/ on the path)

SHIM = HERE / "mpiio_phase_counts.c"


def build_shim(out_dir):
    mpicc = shutil.which("mpicc")
    if not mpicc:
        sys.exit("bench: mpicc not found: the shim is built with the MPI's compiler wrapper")
    so = Path(out_dir) / "libmpiio_phase_counts.so"
    p = subprocess.run([mpicc, "-O2", "-shared", "-fPIC", "-o", str(so), str(SHIM)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench: cannot build {SHIM.name}: {p.stderr.strip().splitlines()[-1]}")
    return so


def read_records(d):
    """{pid-file: [rows]} from one run's counts directory, rows as dicts."""
    runs = []
    for f in sorted(Path(d).glob("rank-*.tsv")):
        with open(f) as fh:
            runs.append(list(csv.DictReader(fh, delimiter="\t")))
    return runs


def phases_of(ranks):
    """Align the i-th phase of every rank (every tool opens its shared
    files in the same order on all ranks): [(kind, [row per rank])]."""
    n = min(len(r) for r in ranks) if ranks else 0
    return [(ranks[0][i]["phase"], [r[i] for r in ranks]) for i in range(n)]


NUM = ("wall_s", "open_s", "io_s", "sync_s", "close_s", "coll_s", "wait_after_s", "user_s",
       "sys_s", "minflt", "majflt", "nvcsw", "nivcsw", "cpu_migrations", "syscalls", "syscr",
       "syscw", "rchar", "wchar", "reported_kib", "io_calls", "task_clock_ms", "page_faults",
       "ctx_switches", "proc_user_s", "proc_sys_s")


def summarise(rows):
    """One phase over its ranks: the numbers printed."""
    v = {k: [float(r[k]) for r in rows] for k in NUM}
    first = min(float(r["t_open"]) for r in rows)
    last = max(float(r["t_open"]) + float(r["wall_s"]) for r in rows)
    moved = sum(v["rchar"]) + sum(v["wchar"])
    s = {
        "mib_s": moved / 2**20 / (last - first) if last > first else 0.0,
        "cpu_per_gib": (sum(v["user_s"]) + sum(v["sys_s"])) / (moved / 2**30) if moved else 0.0,
        "mib": moved / 2**20,
        "rw": sum(v["syscr"]) + sum(v["syscw"]),
        "rep": max(v["reported_kib"]) / 1024,
        "pcpu": sum(v["proc_user_s"]) + sum(v["proc_sys_s"]),
    }
    for k in ("open_s", "io_s", "sync_s", "close_s", "coll_s", "wait_after_s"):
        s[k] = 1000 * statistics.mean(v[k])
    for k in ("user_s", "sys_s", "minflt", "majflt", "nvcsw", "nivcsw", "cpu_migrations", "syscalls"):
        s[k] = sum(v[k])
    return s


def median_of(summaries):
    return {k: statistics.median(s[k] for s in summaries) for k in summaries[0]}


HEAD = (f"{'tool':<6}{'MiB/s':>8}{'open':>7}{'io':>8}{'sync':>7}{'close':>7}{'coll':>7}"
        f"{'wait':>7}{'cpu/GiB':>8}{'usr':>6}{'sys':>6}{'minflt':>8}{'vcsw':>6}{'ivcsw':>6}"
        f"{'migr':>5}{'sysc':>7}{'rw':>6}{'MiB':>7}{'rep':>6}{'pcpu':>7}")


def line(tool, s):
    maj = f"  majflt {s['majflt']:.0f}" if s["majflt"] else ""
    return (f"{tool:<6}{s['mib_s']:>8.0f}{s['open_s']:>7.1f}{s['io_s']:>8.1f}{s['sync_s']:>7.1f}"
            f"{s['close_s']:>7.1f}{s['coll_s']:>7.1f}{s['wait_after_s']:>7.1f}"
            f"{s['cpu_per_gib']:>8.3f}{s['user_s']:>6.2f}{s['sys_s']:>6.2f}{s['minflt']:>8.0f}"
            f"{s['nvcsw']:>6.0f}{s['nivcsw']:>6.0f}{s['cpu_migrations']:>5.0f}{s['syscalls']:>7.0f}"
            f"{s['rw']:>6.0f}{s['mib']:>7.0f}{s['rep']:>6.0f}{s['pcpu']:>7.2f}{maj}")


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--ior", required=True)
    ap.add_argument("--disk", default="/var/tmp/pario-counts")
    ap.add_argument("--shm", default="/dev/shm/pario-counts")
    ap.add_argument("--where", default="shm,disk")
    ap.add_argument("--only", default="independent,collective,per-call")
    ap.add_argument("--size", default="1g")
    ap.add_argument("--block", default="1m")
    ap.add_argument("--runs", type=int, default=2, help="runs per tool, alternating which goes first")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--impl", default="ompio", choices=("ompio", "romio"))
    ap.add_argument("--yield-when-idle", choices=("0", "1"))
    ap.add_argument("--bind-to", choices=("none", "core", "socket", "hwthread"))
    ap.add_argument("--hold-freed-memory", type=float, default=60.0, metavar="SECONDS")
    ap.add_argument("--keep-tsv", help="copy every run's per-rank records here")
    ap.add_argument("--transfer-buffer", type=_args.size, metavar="SIZE",
                    help="pario's slice (--transfer-buffer) in its collective case")
    a = ap.parse_args()
    only = [c for c in a.only.split(",") if c]
    if set(only) - set(CASES) or a.runs < 1 or a.iterations < 1:
        sys.exit(f"bench: --only takes {','.join(CASES)}; --runs and --iterations at least 1")
    size, block = parse_size(a.size), parse_size(a.block)
    made = []
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        so = build_shim(scratch)
        counts = scratch / "counts"
        mpirun_args = ["-x", f"LD_PRELOAD={so}", "-x", f"MPIIO_COUNTS_DIR={counts}"]
        if a.yield_when_idle is not None:
            mpirun_args += ["--mca", "mpi_yield_when_idle", a.yield_when_idle]
        if a.bind_to:
            mpirun_args += ["--bind-to", a.bind_to]
        tools = Tools(a.ior, a.impl, size, block, a.iterations, scratch, mpirun_args)
        tools.transfer_buffer = a.transfer_buffer
        stack.enter_context(HeldFreedMemory(a.hold_freed_memory))
        print("load average at the start: %.2f %.2f %.2f; settings for both: %s" %
              (*os.getloadavg(), " ".join(mpirun_args[4:]) or "Open MPI defaults"))
        print(f"{a.size} shared file, {a.block} calls, 4 ranks, {a.impl}; {a.runs} runs x "
              f"{a.iterations} iterations per tool, alternating")
        try:
            for kind, d in (("tmpfs", a.shm), ("disk", a.disk)):
                if kind.replace("tmpfs", "shm") not in a.where.split(","):
                    continue
                d = Path(d)
                if not d.exists():
                    d.mkdir(parents=True)
                    made.append(d)
                for case in only:
                    got = {"pario": [], "IOR": []}
                    for r in range(a.runs):
                        order = ("pario", "IOR") if r % 2 == 0 else ("IOR", "pario")
                        for tool in order:
                            shutil.rmtree(counts, ignore_errors=True)
                            counts.mkdir()
                            if tool == "pario":
                                tools.pario(d, *CASES[case][0])
                            else:
                                tools.ior_run(d, CASES[case][1])
                            if a.keep_tsv:
                                dst = Path(a.keep_tsv) / f"{kind}-{case}-{tool}-{r}"
                                shutil.copytree(counts, dst, dirs_exist_ok=True)
                            got[tool].extend(phases_of(read_records(counts)))
                    print(f"\n{kind} {d}, {case} ({' '.join(CASES[case][0][2:]) or 'independent'}"
                          f" vs IOR{' -c' if CASES[case][1] else ''})")
                    for ph, name in (("w", "write"), ("r", "read")):
                        print(f"  {name}:\n  {HEAD}")
                        for tool in ("pario", "IOR"):
                            sums = [summarise(rows) for k, rows in got[tool] if k == ph]
                            if sums:
                                print("  " + line(tool, median_of(sums)), flush=True)
        finally:
            for d in made:
                shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
