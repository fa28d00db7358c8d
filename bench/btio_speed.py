#!/usr/bin/env python3
"""BTIO speed and file equality: pario's BT with --io full on NPB's
multi-partition against NPB 3.4's own BTIO "full" binary, which you build
yourself outside this repository (NPB3.4-MPI: `make bt CLASS=A SUBTYPE=full`
gives bin/bt.A.x.mpi_io_full; nothing here builds or ships NPB).

Both run under the same launcher on the same rank count, alternating (the
order flips every round, so a drift of the machine falls on both), each
writing its file into its own fresh directory under --dir.  Printed: each
round's total time (NPB's "Time in seconds", pario's T_T: both from the
start of the timed steps to the file's close), the medians and pario/NPB;
NPB's BTIO statistics block and pario's (same 3.4.0 rule) side by side,
medians over the rounds; pario's I/O time also without the sync to storage
that its close does and NPB's MPI_File_close does not (the figure that
compares with NPB's); and every value of the two files compared (target:
equal to 1e-10 relative, 1e-14 absolute near zero).

Between runs, untimed, the page cache is written back (sync), so one
program's dirty file is not flushed to the disk while the other is timed.

    .venv/bin/python bench/btio_speed.py --npb /path/to/bt.A.x.mpi_io_full [--class A] [--ranks 4]
                               [--rounds 3] [--dir /var/tmp]
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.launch import choose_launcher  # noqa: E402

NPB_FILE = "btio.full.out"        # NPB's fixed name, in its working directory
PARIO_FILE = "pario.btio.full.out"
STATS = ("I/O timing in seconds", "I/O timing percentage", "Total data written (MB)",
         "I/O data rate  (MB/sec)")


UNSYNCED = ("I/O timing without sync", "I/O rate without sync")   # pario's only


def stats_of(out, keys=STATS):
    return {k: float(re.search(re.escape(k) + r"\s*:\s*([\d.]+)", out).group(1)) for k in keys}


def run_npb(launcher, binary, ranks, workdir):
    p = subprocess.run(launcher.command(ranks, [binary]), capture_output=True, text=True,
                       env=launcher.environment(), cwd=workdir)
    out = p.stdout
    if p.returncode != 0 or "Verification    =               SUCCESSFUL" not in out:
        sys.exit(f"bench: NPB {binary} on {ranks} ranks failed or did not verify:\n{out[-2000:]}{p.stderr}")
    return float(re.search(r"Time in seconds =\s+([\d.]+)", out).group(1)), stats_of(out)


def run_pario(launcher, engine, ranks, cls, workdir):
    argv = [engine, "bt", "--class", cls, "--io", "full", "--decomposition", "multipartition",
            "--dir", str(workdir), "--name", PARIO_FILE, "--keep"]
    p = subprocess.run(launcher.command(ranks, argv), capture_output=True, text=True,
                       env=launcher.environment())
    out = p.stdout
    if p.returncode != 0 or "verification SUCCESSFUL" not in out or "file check SUCCESSFUL" not in out:
        sys.exit(f"bench: pario bt --io full on {ranks} ranks failed or did not verify:\n{out}{p.stderr}")
    return float(re.search(r"T_T ([\d.]+) s", out).group(1)), stats_of(out, STATS + UNSYNCED)


def compare_files(npb, pario, rel=1e-10, near_zero=1e-14):
    """Every value: |pario - npb| <= max(rel |npb|, near_zero)."""
    a = np.fromfile(npb, dtype="<f8")
    b = np.fromfile(pario, dtype="<f8")
    if a.size != b.size:
        return f"sizes differ: NPB {a.size * 8} bytes, pario {b.size * 8} bytes", False
    diff = np.abs(a - b)
    bad = int(np.count_nonzero(diff > np.maximum(rel * np.abs(a), near_zero)))
    big = np.abs(a) > near_zero
    worst_rel = float((diff[big] / np.abs(a[big])).max()) if big.any() else 0.0
    identical = int(np.count_nonzero(diff == 0))
    near_zero_only = int(np.count_nonzero((diff > rel * np.abs(a)) & (diff <= near_zero)))
    text = (f"{a.size} values ({a.size * 8} bytes): {identical} bit-identical, largest relative "
            f"difference {worst_rel:.2e} (values above {near_zero:g}), largest absolute "
            f"{float(diff.max()):.2e}; {near_zero_only} beyond {rel:g} relative but within "
            f"{near_zero:g} absolute (near zero); {bad} outside both")
    return text, bad == 0


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--npb", required=True, help="NPB 3.4 BTIO full binary of the same class, built by you")
    ap.add_argument("--class", dest="cls", default="A", choices=list("SWABC"))
    ap.add_argument("--ranks", type=_args.count, default=4)
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--dir", default="/var/tmp", help="where both files go (a fresh directory inside)")
    a = ap.parse_args()
    if not os.access(a.npb, os.X_OK):
        _args.fail(f"--npb {a.npb} is not an executable: build NPB3.4-MPI's bt with SUBTYPE=full")
    _args.directory(a.dir, "--dir")
    launcher, engine = choose_launcher(), _args.engine()
    scratch = Path(tempfile.mkdtemp(prefix="pario-btio-bench-", dir=a.dir))
    npb_dir, pario_dir = scratch / "npb", scratch / "pario"
    npb_dir.mkdir()
    pario_dir.mkdir()
    times = {"npb": [], "pario": []}
    stats = {"npb": [], "pario": []}
    verdict = None
    try:
        print(f"BTIO full class {a.cls}, {a.ranks} ranks, files in {scratch}; {a.rounds} rounds, "
              "alternating", flush=True)
        for i in range(a.rounds):
            for who in (("npb", "pario") if i % 2 == 0 else ("pario", "npb")):
                own = npb_dir / NPB_FILE if who == "npb" else pario_dir / PARIO_FILE
                if own.exists():
                    own.unlink()        # this script's own file of the last round
                if who == "npb":
                    t, s = run_npb(launcher, a.npb, a.ranks, npb_dir)
                else:
                    t, s = run_pario(launcher, engine, a.ranks, a.cls, pario_dir)
                times[who].append(t)
                stats[who].append(s)
                os.sync()           # this run's dirty pages reach the disk before the next is timed
            n_io, p_io = stats["npb"][-1][STATS[0]], stats["pario"][-1][STATS[0]]
            print(f"  round {i + 1}: NPB {times['npb'][-1]:8.2f} s   pario {times['pario'][-1]:8.2f} s"
                  f"   pario/NPB {times['pario'][-1] / times['npb'][-1]:.3f}   I/O s: NPB {n_io:.2f}"
                  f" pario {p_io:.2f} (without sync {stats['pario'][-1][UNSYNCED[0]]:.2f})", flush=True)
            if verdict is None:     # every value of one pair of files (the runs are deterministic)
                verdict = compare_files(npb_dir / NPB_FILE, pario_dir / PARIO_FILE)
    finally:
        for f in (npb_dir / NPB_FILE, pario_dir / PARIO_FILE):
            if f.exists():
                f.unlink()
        shutil.rmtree(scratch, ignore_errors=True)
    n, p = statistics.median(times["npb"]), statistics.median(times["pario"])
    ratios = ", ".join(f"{b / a:.3f}" for a, b in zip(times["npb"], times["pario"]))
    print(f"median total time: NPB {n:.2f} s, pario {p:.2f} s: pario/NPB {p / n:.3f} (target <= 1.05); "
          f"per round {ratios}")

    def med(who, k):
        return statistics.median(s[k] for s in stats[who])

    print(f"BTIO -- statistics, medians of {a.rounds} rounds (NPB 3.4.0 rule in both):")
    for k in STATS:
        print(f"  {k:<26} NPB {med('npb', k):>12.2f}   pario {med('pario', k):>12.2f}")
    print("  pario without the sync to storage in its close (NPB's MPI_File_close does not sync):")
    for k, like in zip(UNSYNCED, (STATS[0], STATS[3])):
        print(f"  {k:<26} NPB {med('npb', like):>12.2f}   pario {med('pario', k):>12.2f}")
    print(f"  pario/NPB I/O time: {med('pario', STATS[0]) / med('npb', STATS[0]):.3f} as printed, "
          f"{med('pario', UNSYNCED[0]) / med('npb', STATS[0]):.3f} without pario's sync")
    print(f"files: {verdict[0]}: {'EQUAL' if verdict[1] else 'DIFFERENT'} within the target")
    return 0 if verdict[1] else 1


if __name__ == "__main__":
    sys.exit(main())
