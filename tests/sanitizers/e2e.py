"""The engine built with AddressSanitizer and UBSan (build/asan), driven
end to end through every subcommand, good paths and error paths.  Any
sanitizer report fails the run; leaks inside the MPI library are
suppressed by library name (lsan.supp), nothing of pario's.

usage: python tests/sanitizers/e2e.py build/asan/pario-engine"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
           "SUMMARY: UndefinedBehaviorSanitizer")


def environment():
    env = dict(os.environ)
    env.update({
        "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=99",
        "LSAN_OPTIONS": f"suppressions={HERE / 'lsan.supp'}:fast_unwind_on_malloc=0:print_suppressions=0"
                        # gcc 12's LeakSanitizer crashes scanning the dynamic TLS of a
                        # library MPI unloaded ('Tracer caught signal 11')
                        ":use_tls=0",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=99",
        # keep MPI's plugins loaded, so their leaks are named by library
        "OMPI_MCA_mca_base_component_disable_dlclose": "1",
    })
    if os.geteuid() == 0:
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env


def main():
    engine = str(Path(sys.argv[1]).resolve())
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    work = Path(tempfile.mkdtemp(prefix="pario-asan-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    d = str(work)
    env = environment()

    def mpi(n, *args):
        return [mpirun, "--oversubscribe", "-np", str(n), engine, *args]

    kept = work / "kept"
    bt_kept = work / "btk"
    cases = [  # (argv, expected exit code)
        ([engine, "version"], 0),
        ([engine, "io", "--help"], 0),
        (mpi(2, "io", "--dir", d, "--layout", "partitioned", "--block", "64k", "--size", "1m",
             "--iterations", "2", "--verify", "--keep", "--name", "kept", "--read-shift", "1",
             "--json", f"{d}/io.json"), 0),
        (mpi(3, "io", "--dir", d, "--layout", "interleaved", "--files", "per-rank", "--block", "8k",
             "--size", "768k", "--group", "2", "--prealloc", "--fsync", "--trace", "--evict"), 0),
        (mpi(2, "io", "--dir", d, "--layout", "random", "--block", "4k", "--size", "512k",
             "--verify"), 0),
        ([engine, "io", "--dir", d, "--layout", "broadcast", "--block", "64k", "--size", "1m",
          "--phases", "read", "--verify"], 0),
        (mpi(2, "io", "--dir", d, "--size", "1m", "--block", "64k", "--read-shift", "2"), 2),
        ([engine, "verify", "--file", str(kept), "--seed", "1"], 0),
        ([engine, "verify", "--file", str(kept), "--seed", "1", "--size", "2m"], 3),
        ([engine, "verify", "--file", "/nonexistent", "--seed", "1"], 2),
        ([engine, "bt", "--class", "S", "--json", f"{d}/bt.json"], 0),
        (mpi(2, "bt", "--class", "S", "--io", "serial", "--dir", d, "--keep", "--name", "btk"), 0),
        # the other modes on a few steps: the same code paths, less time
        (mpi(2, "bt", "--class", "S", "--steps", "6", "--io", "collective", "--dir", d,
             "--hint", "cb_nodes=1"), 0),
        (mpi(2, "bt", "--class", "S", "--steps", "6", "--io", "independent", "--dir", d), 0),
        (mpi(2, "bt", "--class", "S", "--steps", "6", "--io", "posix", "--dir", d, "--overlap"), 0),
        (mpi(2, "bt", "--grid", "8", "--steps", "6", "--dt", "0.01", "--io", "per-rank",
             "--dir", d, "--group", "1"), 0),
        # NPB's multi-partition (2 cells per rank): its halo, pipelined solves and BTIO's
        # datatypes (full's file view, serial's per-rank receive types, epio's records)
        (mpi(4, "bt", "--class", "S", "--steps", "6", "--io", "full", "--dir", d), 0),
        (mpi(4, "bt", "--class", "S", "--steps", "6", "--io", "serial", "--dir", d), 0),
        (mpi(4, "bt", "--class", "S", "--io", "epio", "--dir", d), 0),
        ([engine, "bt", "--class", "S", "--json", f"{d}/none/x.json"], 2),
        ([engine, "verify-bt", str(bt_kept), "--class", "S"], 0),
        ([engine, "verify-bt", str(bt_kept), "--class", "W", "--quiet"], 2),  # a class-S file is not a class-W one: bad input
        # the other kernels, each on a small problem
        ([engine, "bonnie", "--dir", d, "--size", "1m"], 0),
        (mpi(2, "perf", "--dir", d, "--size", "64k"), 0),
        (mpi(2, "laplace", "--dir", d, "--grid", "65", "--iterations", "5", "--keep"), 0),
        (lambda: [engine, "verify-laplace", str(next(work.glob("pario-laplace*"))), "--grid", "65",
                  "--iterations", "5"], 0),
        (mpi(2, "flashio", "--dir", d, "--nxb", "4", "--blocks", "2"), 0),
        (mpi(2, "beff", "--dir", d, "-T", "4", "--mem-per-pe", "4m", "--max-chunk", "1k"), 0),
        (mpi(2, "probe", "--dir", d, "--size", "4m", "--memory", "8m", "--ops", "5",
             "--iterations", "1", "--json", f"{d}/probe.json"), 0),
        ([engine, "probe", "--dir", d, "--size", "0"], 2),
        ([engine, "nonsense"], 2),
        # a plan's command lines checked by each command's parser in a child (check_mode.h)
        (["bash", "-c", "printf '2\\tio\\t--dir\\tx\\t--block\\t3g\\t--size\\t6g\\n"
          "2\\tio\\t--dir\\tx\\t--api\\thdf5\\t--hdf5-chunk\\t64k\\t--size\\t1m\\t--block\\t64k\\n"
          "4\\tbt\\t--class\\tS\\n1\\tbonnie\\t--dir\\tx\\n' | \"$0\" check | "
          "grep -c '^0' | grep -qx 3", engine], 0),
    ]
    failures = 0
    try:
        for argv, want in cases:
            if callable(argv):  # names a file an earlier case made
                argv = argv()
            t = time.monotonic()
            p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
            shown = " ".join(a.replace(d, "DIR") for a in argv[argv.index(engine) + 1:])
            found = [r for r in REPORTS if r in p.stderr]
            if found or p.returncode != want:
                failures += 1
                print(f"FAIL {shown}: exit {p.returncode} (want {want}), {found or 'no report'}")
                print(p.stderr[-4000:])
            else:
                print(f"ok   {shown} ({time.monotonic() - t:.1f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"sanitizers: {len(cases) - failures} of {len(cases)} runs clean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
