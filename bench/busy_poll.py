#!/usr/bin/env python3
"""Do waiting ranks steal CPU from ranks doing I/O?  More ranks than cores,
grouped I/O (G=1: one call in flight), 4 KiB calls on tmpfs, with Open MPI's
idle ranks busy-polling (mpi_yield_when_idle 0, its default) and yielding
(1).  pario's token wait yields by itself, so both should be close; an
engine whose waiting ranks spin falls to a few MiB/s here.

    .venv/bin/python bench/busy_poll.py [--ranks 4] [--rounds 2]
"""

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.engine import take_result  # noqa: E402
from pario.launch import choose_launcher, cores  # noqa: E402


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--ranks", type=_args.count, default=2 * cores())
    ap.add_argument("--rounds", type=_args.count, default=2)
    a = ap.parse_args()
    launcher, engine = choose_launcher(), _args.engine()
    if launcher.flavour != "openmpi":
        _args.fail("this measurement uses Open MPI's mpi_yield_when_idle: run it under Open MPI")
    print(f"{a.ranks} ranks on {cores()} cores, interleaved 4 KiB, 64 MiB, best of 3, MiB/s")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        for _ in range(a.rounds):
            for group in (0, 1):
                for yield_idle in (0, 1):
                    out = Path(d) / "r.json"
                    args = [engine, "io", "--dir", d, "--layout", "interleaved", "--block", "4k",
                            "--size", "64m", "--iterations", "3", "--json", str(out)]
                    if group:
                        args += ["--group", str(group)]
                    cmd = launcher.command(a.ranks, args)
                    cmd[1:1] = ["--mca", "mpi_yield_when_idle", str(yield_idle)]
                    subprocess.run(cmd, check=True, capture_output=True, env=launcher.environment())
                    doc = take_result(out)
                    rates = "  ".join(f"{p['name']} {p['summary']['best_mib_per_s']:8.0f}" for p in doc["phases"])
                    print(f"group {group or '-':>2}  yield_when_idle {yield_idle}:  {rates}", flush=True)


if __name__ == "__main__":
    main()
