#!/usr/bin/env python3
"""Work per request of `--api uring --direct` against fio's io_uring engine.

bench/backends.py compares rates, which on a shared or virtual machine
swing with the device and the neighbours.  This script counts what each
tool makes the machine do per 4 KiB O_DIRECT random read, which load
changes far less: CPU time of the tool's processes (perf's task-clock),
system calls, io_uring_enter calls, times the tool slept in the ring
waiting for a completion (io_uring:io_uring_cqring_wait) and context
switches.  Both tools read a file of the same size with the same depth,
block and direct flag, on the same CPUs (pario's rank where the launcher
binds it, fio pinned there with taskset, as in bench/backends.py).

Each count is a difference: the tool run with --passes reads of the file
minus the same tool with one, divided by the extra requests, so what
happens once per run (mpirun, pario's untimed preparation of its file,
fio's start-up) cancels.  The two tools alternate which goes first; the
median over rounds is printed with the range.

    .venv/bin/python bench/uring_per_io.py [--disk /var/tmp/pario-bench] [--depths 1,16,64]
        [--size 512m] [--passes 3] [--rounds 3] [--pario-args "..."]

Needs perf (Debian: linux-perf) and permission to count tracepoints
(root, or kernel.perf_event_paranoid = -1).
"""

import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import Pario  # noqa: E402  (bench/backends.py: the launcher and where a rank runs)
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from pario.engine import take_result  # noqa: E402
from pario.units import engine_size, format_size  # noqa: E402

# (perf event, column title, scale applied to the per-request difference)
EVENTS = [("task-clock", "CPU us", 1000.0),  # perf reports msec
          ("raw_syscalls:sys_enter", "syscalls", 1.0),
          ("syscalls:sys_enter_io_uring_enter", "io_uring_enter", 1.0),
          ("io_uring:io_uring_cqring_wait", "ring waits", 1.0),
          ("context-switches", "ctx switches", 1.0)]


def perf_counts(argv, scratch, env=None):
    """Run argv under perf stat; {event: count} over the whole process tree."""
    out = Path(scratch) / "perf.csv"
    out.unlink(missing_ok=True)
    cmd = ["perf", "stat", "-x,", "-o", str(out), "-e", ",".join(e for e, _, _ in EVENTS), "--", *argv]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench: {argv[0]} failed under perf stat: {p.stderr.strip()[-400:]}")
    counts = {}
    for row in csv.reader(line for line in out.read_text().splitlines() if line and not line.startswith("#")):
        if len(row) > 2:
            try:
                counts[row[2]] = float(row[0])
            except ValueError:  # <not supported>, <not counted>
                sys.exit(f"bench: perf cannot count {row[2]} here ({row[0]}): run as root or set "
                         f"kernel.perf_event_paranoid=-1")
    return counts


def pario_counts(pario, disk, depth, size, passes, scratch, extra):
    out = Path(scratch) / "pario.json"
    argv = pario.launcher.command(1, [pario.engine, "io", "--dir", str(disk), "--api", "uring",
                                      "--queue-depth", str(depth), "--direct", "--layout", "random",
                                      "--block", "4k", "--size", engine_size(size), "--phases", "read",
                                      "--iterations", str(passes), "--json", str(out), *extra])
    counts = perf_counts(argv, scratch, env=pario.environment())
    doc = take_result(out)
    read = next(x for x in doc["phases"] if x["name"] == "read")
    return counts, read["summary"]["median_mib_per_s"] * 256  # IOPS of 4 KiB


def fio_counts(path, depth, size, passes, cpus, scratch):
    argv = ["taskset", "-c", cpus] if cpus else []
    argv += ["fio", "--name=pario-peer", f"--filename={path}", "--ioengine=io_uring", "--direct=1",
             "--rw=randread", "--bs=4k", f"--iodepth={depth}", f"--size={size}", f"--loops={passes}",
             "--output-format=json", f"--output={Path(scratch) / 'fio.json'}"]
    counts = perf_counts(argv, scratch)
    job = json.loads((Path(scratch) / "fio.json").read_text())["jobs"][0]["read"]
    return counts, job["iops"]


def check_tools():
    for tool, package in (("perf", "linux-perf"), ("fio", "fio")):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} not found: apt-get install {package}")
    probe = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(e for e, _, _ in EVENTS), "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0 or "<not supported>" in probe.stderr:
        sys.exit("bench: perf cannot count io_uring and syscall tracepoints here: run as root or "
                 "set kernel.perf_event_paranoid=-1")


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--disk", default="/var/tmp/pario-bench",
                    help="parent of this run's own fresh directory (made if missing)")
    ap.add_argument("--depths", type=_args.counts, default="1,16,64")
    ap.add_argument("--size", type=_args.size, default="512m",
                    help="file read once per pass (the size of bench/backends.py's random rows)")
    ap.add_argument("--passes", type=lambda t: _args.count(t, 2), default=3, help="passes in the long run (the short run has one)")
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--pario-args", default="", help="extra engine options, e.g. '--uring-register-files'")
    a = ap.parse_args()
    depths, size = a.depths, a.size
    if size % 4096:
        _args.fail("--size must be a multiple of 4 KiB")
    check_tools()
    _args.directory(a.disk, "--disk")
    requests = size // 4096
    extra_requests = requests * (a.passes - 1)
    with _args.fresh_dir(a.disk, "uring-per-io") as disk:
        fio_file = disk / "fio-per-io.dat"
        with tempfile.TemporaryDirectory() as scratch:
            pario = Pario(scratch)
            cpus = pario.rank_cpus()
            if len(cpus.split(",")) >= (os.cpu_count() or 1):
                cpus = None  # the launcher does not bind: neither is fio
            # fio lays its file out once, untimed and uncounted
            subprocess.run(["fio", "--name=layout", f"--filename={fio_file}", f"--size={size}",
                            "--rw=read", "--bs=1m", "--create_only=1"], check=True, capture_output=True)
            print(f"4 KiB O_DIRECT random reads of a {format_size(size)} file; per request = (run of "
                  f"{a.passes} passes - run of 1 pass) / {extra_requests} requests; "
                  f"{'fio pinned to CPU ' + cpus + ', where the launcher binds pario' if cpus else 'unbound'}"
                  f"; load average at start {os.getloadavg()[0]:.1f}")
            for depth in depths:
                per = {"pario": {t: [] for _, t, _ in EVENTS}, "fio": {t: [] for _, t, _ in EVENTS}}
                rates = {"pario": [], "fio": []}
                for r in range(a.rounds):
                    order = ("pario", "fio") if r % 2 == 0 else ("fio", "pario")
                    for tool in order:
                        runs = []
                        for passes in (1, a.passes):
                            if tool == "pario":
                                runs.append(pario_counts(pario, disk, depth, size, passes, scratch,
                                                         a.pario_args.split()))
                            else:
                                runs.append(fio_counts(fio_file, depth, size, passes, cpus, scratch))
                        (short, _), (long_, rate) = runs
                        for event, title, scale in EVENTS:
                            per[tool][title].append((long_[event] - short[event]) / extra_requests * scale)
                        rates[tool].append(rate)
                print(f"\nQD {depth}: per request, median of {a.rounds} rounds (range)")
                print(f"{'':16}" + "".join(f"{t:>22}" for _, t, _ in EVENTS) + f"{'IOPS (context)':>18}")
                for tool in ("pario", "fio"):
                    cells = "".join(f" {statistics.median(v):.2f} ({min(v):.2f} to {max(v):.2f})".rjust(22)
                                    for v in per[tool].values())
                    print(f"{tool:<16}{cells}{statistics.median(rates[tool]):>18.0f}", flush=True)
            print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
