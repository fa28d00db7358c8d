#!/usr/bin/env python3
"""pario beside its peers on the same shapes, in the same minutes.

Partitioned shared file, P ranks (fio: P jobs with offset_increment), one
block size per row; write with fsync at the end, then read.  pario and fio
(psync engine) alternate, ROUNDS times; each tool's best rate per round is
kept and the median over rounds is compared as a ratio pario / peer.
With --ior PATH, an IOR binary you built yourself runs too (IOR's -b
SIZE/P -t BLOCK -e); nothing here builds or ships IOR.

    .venv/bin/python bench/fio_side_by_side.py [--dir /dev/shm/bench] [--ranks 4]
        [--size 1g] [--blocks 1m,4k] [--rounds 3] [--ior /path/to/ior]

Every file (pario's, fio's, IOR's) goes in a fresh directory made under
--dir for this run, and only that directory is removed at the end.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks and the bench's own directory)
from pario.engine import take_result  # noqa: E402
from pario.launch import choose_launcher  # noqa: E402
from pario.units import engine_size, format_size  # noqa: E402


def pario_rates(launcher, engine, ranks, directory, block, size, scratch):
    out = Path(scratch) / "pario.json"
    argv = launcher.command(ranks, [engine, "io", "--dir", str(directory), "--layout", "partitioned",
                                    "--block", engine_size(block), "--size", engine_size(size),
                                    "--phases", "write,read", "--iterations", "3", "--json", str(out)])
    subprocess.run(argv, check=True, capture_output=True, env=launcher.environment())
    doc = take_result(out)
    return {p["name"]: p["summary"]["best_mib_per_s"] for p in doc["phases"]}


def fio_rates(ranks, directory, block, size):
    path = Path(directory) / "fio-bench.dat"
    share = size // ranks
    common = ["fio", "--name=pario-peer", f"--filename={path}", "--ioengine=psync",
              f"--bs={block}", f"--size={share}", f"--numjobs={ranks}",
              f"--offset_increment={share}", "--group_reporting", "--fallocate=none",
              "--output-format=json"]
    best = {}
    for phase, extra in (("write", ["--rw=write", "--end_fsync=1"]), ("read", ["--rw=read"])):
        rates = []
        for _ in range(3):  # best of 3, as pario's --iterations 3
            if phase == "write":
                path.unlink(missing_ok=True)  # in this run's own directory: fio's own file
            out = subprocess.run(common + extra, check=True, capture_output=True, text=True).stdout
            job = json.loads(out[out.index("{"):])["jobs"][0][phase]
            rates.append(job["bw_bytes"] / 2**20)
        best[phase] = max(rates)
    path.unlink(missing_ok=True)
    return best


def ior_rates(launcher, ior, ranks, directory, block, size):
    argv = launcher.command(ranks, [ior, "-a", "POSIX", "-b", str(size // ranks), "-t", str(block),
                                    "-e", "-w", "-r", "-i", "3", "-o", str(Path(directory) / "ior-bench")])
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=launcher.environment()).stdout
    # IOR's per-iteration lines start with the access and its bandwidth in MiB/s
    return {phase: max(float(x) for x in re.findall(rf"^{phase}\s+([\d.]+)\s", out, re.M))
            for phase in ("write", "read")}


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--dir", default="/dev/shm/pario-bench",
                    help="parent of this run's own fresh directory (made if missing)")
    ap.add_argument("--ranks", type=_args.count, default=4)
    ap.add_argument("--size", type=_args.size, default="1g")
    ap.add_argument("--blocks", type=_args.sizes, default="1m,4k")
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--ior", help="an IOR binary you built yourself, to run beside pario too")
    a = ap.parse_args()
    size = a.size
    if size % a.ranks or any((size // a.ranks) % b for b in a.blocks):
        _args.fail(f"--size {engine_size(size)} does not split into {a.ranks} equal shares of whole "
                   f"--blocks: give a size that is a multiple of ranks x block")
    if a.ior and not os.access(a.ior, os.X_OK):
        _args.fail(f"--ior {a.ior} is not an executable: give the IOR binary you built")
    _args.tool("fio")
    _args.directory(a.dir, "--dir")
    launcher, engine = choose_launcher(), _args.engine()
    peers = ["fio"] + (["ior"] if a.ior else [])
    with _args.fresh_dir(a.dir, "fio-side-by-side") as directory, tempfile.TemporaryDirectory() as scratch:
        print(f"partitioned shared file, {a.ranks} ranks, {format_size(size)} in {directory}; "
              f"best of 3 per round, median of {a.rounds} rounds; MiB/s")
        print(f"{'block':>8} {'phase':>6} {'pario':>10} " + " ".join(f"{p:>10} {'ratio':>6}" for p in peers))
        for block in a.blocks:
            samples = {t: {"write": [], "read": []} for t in ["pario", *peers]}
            for _ in range(a.rounds):
                for tool in ["pario", *peers]:
                    if tool == "pario":
                        r = pario_rates(launcher, engine, a.ranks, directory, block, size, scratch)
                    elif tool == "fio":
                        r = fio_rates(a.ranks, directory, block, size)
                    else:
                        r = ior_rates(launcher, a.ior, a.ranks, directory, block, size)
                    for phase in ("write", "read"):
                        samples[tool][phase].append(r[phase])
            for phase in ("write", "read"):
                mine = statistics.median(samples["pario"][phase])
                cells = []
                for p in peers:
                    theirs = statistics.median(samples[p][phase])
                    cells.append(f"{theirs:>10.0f} {mine / theirs:>6.2f}")
                print(f"{format_size(block):>8} {phase:>6} {mine:>10.0f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
