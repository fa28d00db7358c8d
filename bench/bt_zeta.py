#!/usr/bin/env python3
"""NHT-1 balance: T_C (no I/O), then T_T and zeta = T_T/T_C - 1 for an I/O
mode with and without --overlap, alternating in one run.

    .venv/bin/python bench/bt_zeta.py [--class W] [--ranks 1] [--interval 1] [--dir /var/tmp] [--rounds 3]
"""

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.engine import take_result  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402


def bt(launcher, engine, ranks, args, scratch):
    out = Path(scratch) / "bt.json"
    subprocess.run(launcher.command(ranks, [engine, "bt", *args, "--json", str(out)]), check=True,
                   capture_output=True, env=launcher.environment())
    return take_result(out)


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--class", dest="cls", default="W", choices=list("SWABC"))
    ap.add_argument("--ranks", type=_args.count, default=1)
    ap.add_argument("--io", default="posix")
    ap.add_argument("--interval", type=_args.count, default=1)
    ap.add_argument("--dir", default="/var/tmp", help="parent of this run's own fresh directory")
    ap.add_argument("--rounds", type=_args.count, default=3)
    a = ap.parse_args()
    _args.directory(a.dir, "--dir")
    launcher, engine = choose_launcher(), _args.engine()
    with _args.fresh_dir(a.dir, "bt-zeta") as target, tempfile.TemporaryDirectory() as scratch:
        target = str(target)
        tc, plain, over = [], [], []
        for _ in range(a.rounds):
            tc.append(bt(launcher, engine, a.ranks, ["--class", a.cls], scratch)["t_t_seconds"])
            io = ["--class", a.cls, "--io", a.io, "--dir", target, "--write-interval", str(a.interval),
                  "--tc", str(tc[-1])]
            plain.append(bt(launcher, engine, a.ranks, io, scratch))
            over.append(bt(launcher, engine, a.ranks, io + ["--overlap"], scratch))
        doc = plain[0]
        print(f"BT class {a.cls}, {a.ranks} rank(s), --io {a.io}, every {a.interval} step(s): "
              f"{doc['io']['dumps']} dumps, {doc['io']['bytes_written'] / 2**20:.1f} MiB into {a.dir}")
        print(f"  T_C {statistics.median(tc):.3f} s (median of {a.rounds})")
        for name, runs in (("plain", plain), ("--overlap", over)):
            print(f"  {name:>10}: T_T {statistics.median(r['t_t_seconds'] for r in runs):.3f} s, "
                  f"zeta {statistics.median(r['zeta'] for r in runs):.4f} "
                  f"(each: {', '.join(format(r['zeta'], '.4f') for r in runs)}), "
                  f"R_IO {statistics.median(r['io']['r_io_bytes_per_s'] for r in runs) / 1e6:.1f} MB/s")


if __name__ == "__main__":
    main()
