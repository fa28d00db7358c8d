#!/usr/bin/env python3
"""BT speed: pario's solver on class A (or another) at 1 and 4 ranks,
verified against NPB's reference norms, with Mop/s per rank; with --npb
PATH, an NPB BT binary you built yourself (e.g. NPB3.3-SER bt.A.x, gfortran
-O3) runs alternately beside it and the time ratio is printed.  With
--decompositions, every rank count runs pario's z slabs and NPB's
multi-partition alternately (square counts) and prints multi-partition's
time over the slabs'.  Nothing here builds or ships NPB.

    .venv/bin/python bench/bt_speed.py [--class A] [--ranks 1,4] [--rounds 2] [--npb /path/to/bt.A.x]
    .venv/bin/python bench/bt_speed.py --class A --ranks 4 --rounds 5 --decompositions
"""

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.launch import choose_launcher  # noqa: E402


def pario_bt(launcher, engine, ranks, cls, decomposition=None):
    extra = ["--decomposition", decomposition] if decomposition else []
    out = subprocess.run(launcher.command(ranks, [engine, "bt", "--class", cls, *extra]), capture_output=True,
                         text=True, env=launcher.environment(), check=True).stdout
    if "verification SUCCESSFUL" not in out:
        sys.exit(f"bench: pario bt class {cls} on {ranks} ranks did not verify:\n{out}")
    m = re.search(r"T_T ([\d.]+) s, ([\d.]+) Mop/s \(([\d.]+) Mop/s per rank\)", out)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def npb_bt(path):
    out = subprocess.run([path], capture_output=True, text=True, check=True).stdout
    if "SUCCESSFUL" not in out:
        sys.exit(f"bench: {path} did not verify")
    return float(re.search(r"Time in seconds =\s+([\d.]+)", out).group(1))


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--class", dest="cls", default="A", choices=list("SWABC"))
    ap.add_argument("--ranks", type=_args.counts, default="1,4")
    ap.add_argument("--rounds", type=_args.count, default=2)
    ap.add_argument("--npb", help="an NPB BT binary of the same class, built by you")
    ap.add_argument("--decompositions", action="store_true",
                    help="slabs against multi-partition, alternating, at each (square) rank count")
    a = ap.parse_args()
    if a.npb and not os.access(a.npb, os.X_OK):
        _args.fail(f"--npb {a.npb} is not an executable: give the NPB BT binary you built")
    launcher, engine = choose_launcher(), _args.engine()
    if a.decompositions:
        return compare_decompositions(launcher, engine, a)
    print(f"BT class {a.cls}: seconds (median of {a.rounds}), Mop/s total and per rank; all verified")
    npb_times = []
    for ranks in a.ranks:
        runs = []
        for _ in range(a.rounds):
            runs.append(pario_bt(launcher, engine, ranks, a.cls))
            if a.npb and ranks == 1:
                npb_times.append(npb_bt(a.npb))
        t = statistics.median(r[0] for r in runs)
        total = statistics.median(r[1] for r in runs)
        per = statistics.median(r[2] for r in runs)
        line = f"  pario {ranks:>3} rank(s): {t:8.2f} s  {total:9.1f} Mop/s  {per:8.1f} Mop/s/rank"
        if a.npb and ranks == 1:
            n = statistics.median(npb_times)
            line += f"   NPB: {n:8.2f} s   pario/NPB time {t / n:.3f}"
        print(line, flush=True)


def compare_decompositions(launcher, engine, a):
    print(f"BT class {a.cls}: z slabs against NPB's multi-partition, alternating, {a.rounds} rounds; "
          "seconds are medians, all runs verified")
    for ranks in a.ranks:
        if round(ranks ** 0.5) ** 2 != ranks:
            print(f"  {ranks} ranks: not a square count, multi-partition cannot run")
            continue
        times = {"slabs": [], "multipartition": []}
        for i in range(a.rounds):
            order = ("slabs", "multipartition") if i % 2 == 0 else ("multipartition", "slabs")
            for d in order:
                times[d].append(pario_bt(launcher, engine, ranks, a.cls, d)[0])
        s, m = statistics.median(times["slabs"]), statistics.median(times["multipartition"])
        print(f"  {ranks:>3} ranks: slabs {s:8.2f} s  multipartition {m:8.2f} s  "
              f"multipartition/slabs {m / s:.3f}   (per round: "
              + ", ".join(f"{x:.2f}/{y:.2f}" for x, y in zip(times["multipartition"], times["slabs"]))
              + ")", flush=True)


if __name__ == "__main__":
    main()
