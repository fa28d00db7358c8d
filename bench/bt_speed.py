#!/usr/bin/env python3
"""BT speed: pario's solver on class A (or another) at 1 and 4 ranks,
verified against NPB's reference norms, with Mop/s per rank; with --npb
PATH, an NPB BT binary you built yourself (e.g. NPB3.3-SER bt.A.x, gfortran
-O3) runs alternately beside it and the time ratio is printed.  Nothing here
builds or ships NPB.

    python bench/bt_speed.py [--class A] [--ranks 1,4] [--rounds 2] [--npb /path/to/bt.A.x]
"""

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.engine import engine_path  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402


def pario_bt(launcher, engine, ranks, cls):
    out = subprocess.run(launcher.command(ranks, [engine, "bt", "--class", cls]), capture_output=True,
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--class", dest="cls", default="A")
    ap.add_argument("--ranks", default="1,4")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--npb", help="an NPB BT binary of the same class, built by you")
    a = ap.parse_args()
    launcher, engine = choose_launcher(), engine_path()
    print(f"BT class {a.cls}: seconds (median of {a.rounds}), Mop/s total and per rank; all verified")
    npb_times = []
    for ranks in (int(r) for r in a.ranks.split(",")):
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


if __name__ == "__main__":
    main()
