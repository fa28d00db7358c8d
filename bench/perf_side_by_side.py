#!/usr/bin/env python3
"""pario-engine perf beside ROMIO's own perf (test/perf.c of MPICH's ROMIO)
on the same array size, rank counts and directory, alternating rounds,
printed as ratios of the medians (pario / perf).  Claim: equal within
noise.

ROMIO's perf is not built here: build it by hand outside the repository
(its array size is a compile-time constant, SIZE, 4 MiB as shipped) and
give its path and the size it was built with:

    bench/perf_side_by_side.py --peer /tmp/peers/perf/perf_4m --size 4m --ranks 1,2,4

perf prints its four lines on stderr and leaves its file; this script
gives it a fresh name each round and removes it.  pario checks what it read
(untimed) and removes its own file.  The machine may be shared: read the
ratios with the spread of the rounds beside them.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)
from pario.units import engine_size  # noqa: E402
LINES = {"write, no sync": "Write bandwidth without file sync",
         "read, no sync": "Read bandwidth without prior file sync",
         "write with sync": "Write bandwidth including file sync",
         "read after sync": "Read bandwidth after file sync"}


def mpirun(ranks, argv):
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    cmd = ["mpirun", "-np", str(ranks)] + (["--oversubscribe"] if ranks > 2 else []) + argv
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"perf_side_by_side: {' '.join(argv[:2])} failed: {p.stderr.strip()[-400:]}")
    return p


def run_pario(d, ranks, size):
    out = Path(d) / f"pario-{uuid.uuid4().hex[:8]}.json"
    mpirun(ranks, [_args.engine(), "perf", "--dir", d, "--size", size, "--json", str(out)])
    doc = json.loads(out.read_text())
    out.unlink()
    rates = {}
    for x in doc["passes"]:
        rates["write with sync" if x["sync"] else "write, no sync"] = x["write_mib_per_s"]
        rates["read after sync" if x["sync"] else "read, no sync"] = x["read_mib_per_s"]
    return rates


def run_peer(d, ranks, peer):
    f = Path(d) / f"romio-perf-{uuid.uuid4().hex[:8]}"
    p = mpirun(ranks, [peer, "-fname", str(f)])
    f.unlink(missing_ok=True)
    rates = {}
    for key, line in LINES.items():
        m = re.search(re.escape(line) + r" = ([0-9.]+) Mbytes/sec", p.stderr)
        if not m:
            sys.exit(f"perf_side_by_side: the peer did not print '{line}'")
        rates[key] = float(m.group(1))
    return rates


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--peer", required=True, help="ROMIO's perf, built by hand outside the repository")
    ap.add_argument("--size", type=_args.size, default="4m", help="the SIZE the peer was built with (default 4m)")
    ap.add_argument("--ranks", type=_args.counts, default="1,2,4")
    ap.add_argument("--dirs", default="/dev/shm,/var/tmp", help="parents of the directories to measure")
    ap.add_argument("--rounds", type=_args.count, default=5)
    a = ap.parse_args()
    if not Path(a.peer).exists():
        _args.fail(f"--peer {a.peer} does not exist: build ROMIO's test/perf.c by hand")
    for parent in a.dirs.split(","):
        _args.directory(parent, "--dirs")
    _args.engine()
    a.size = engine_size(a.size)
    print(f"pario perf beside ROMIO perf ({a.peer}), {a.size} per rank, {a.rounds} alternating rounds; "
          "medians in MiB/s, ratio pario/perf [range of per-round ratios]; machine shared with other work")
    for parent in a.dirs.split(","):
        with _args.fresh_dir(parent, "perf-side-by-side") as work:
            d = str(work)
            for ranks in a.ranks:
                ours, theirs = [], []
                for r in range(a.rounds):
                    if r % 2 == 0:
                        ours.append(run_pario(d, ranks, a.size))
                        theirs.append(run_peer(d, ranks, a.peer))
                    else:
                        theirs.append(run_peer(d, ranks, a.peer))
                        ours.append(run_pario(d, ranks, a.size))
                print(f"\n{parent}, {ranks} rank(s)")
                print(f"{'':18} {'pario':>10} {'perf':>10} {'ratio':>7}  per-round ratios")
                for key in LINES:
                    p = statistics.median(o[key] for o in ours)
                    t = statistics.median(x[key] for x in theirs)
                    per = [o[key] / x[key] for o, x in zip(ours, theirs)]
                    print(f"{key:18} {p:10.1f} {t:10.1f} {p / t:7.2f}  [{min(per):.2f}-{max(per):.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
