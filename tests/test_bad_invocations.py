"""Every bad invocation is answered with one clear line and a non-zero
exit, before any I/O: no result document, no file left behind."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

GOOD = ["--layout", "partitioned", "--block", "64k", "--size", "1m"]

# (label, arguments after `io --dir DIR`, a phrase the line must contain)
ENGINE_CASES = [
    ("unknown layout", ["--layout", "spiral", "--size", "1m"], "--layout 'spiral' is unknown"),
    ("unknown api", ["--api", "carrier-pigeon", "--size", "1m"], "--api 'carrier-pigeon' is unknown"),
    ("unknown files", ["--files", "some", "--size", "1m"], "--files 'some'"),
    ("unknown phase", ["--phases", "write,fly", "--size", "1m"], "unknown phase 'fly'"),
    ("phase twice", ["--phases", "read,read", "--size", "1m"], "twice"),
    ("empty phases", ["--phases", ",", "--size", "1m"], "--phases is empty"),
    ("zero block", ["--block", "0", "--size", "1m"], "--block '0'"),
    ("negative block", ["--block", "-4k", "--size", "1m"], "--block '-4k'"),
    ("fractional size", ["--size", "1.5m"], "--size '1.5m'"),
    ("unknown unit", ["--size", "3x"], "unknown unit"),
    ("missing size", ["--block", "4k"], "--size is required"),
    ("block not multiple of 8", ["--block", "1001", "--size", "1m"], "multiple of 8"),
    ("block larger than share", ["--block", "2m", "--size", "1m"], "larger than a rank's share"),
    ("size not whole blocks", ["--block", "64k", "--size", "100k"], "multiple of"),
    ("zero iterations", GOOD + ["--iterations", "0"], "--iterations '0'"),
    ("iterations not a number", GOOD + ["--iterations", "three"], "--iterations 'three'"),
    ("zero group", GOOD + ["--group", "0"], "--group '0'"),
    ("unknown group unit", GOOD + ["--group", "2", "--group-unit", "byte"], "--group-unit 'byte'"),
    ("group unit without group", GOOD + ["--group-unit", "rank"], "needs --group"),
    ("broadcast write", ["--layout", "broadcast", "--size", "1m", "--phases", "write"], "only reads"),
    ("broadcast read shift", ["--layout", "broadcast", "--size", "1m", "--phases", "read",
                              "--read-shift", "1"], "does not apply"),
    ("negative read shift", GOOD + ["--read-shift", "-1"], "--read-shift '-1'"),
    ("read shift without read", GOOD + ["--phases", "write", "--read-shift", "1"], "only changes read"),
    ("evict without read", GOOD + ["--phases", "write", "--evict"], "add read to --phases"),
    ("fsync without write", GOOD + ["--phases", "read", "--fsync"], "add write"),
    ("direct with odd block", ["--block", "1000b", "--size", "1000000b", "--direct"], "multiple of"),
    ("direct unaligned", ["--block", "1024", "--size", "1m", "--direct"], "multiple of 4k"),
    ("negative seed", GOOD + ["--seed", "-3"], "--seed '-3'"),
    ("unknown option", GOOD + ["--turbo"], "unknown option '--turbo'"),
    ("missing value", GOOD + ["--block"], "--block needs a value"),
    ("stray argument", GOOD + ["extra"], "unexpected argument 'extra'"),
    ("name with slash", GOOD + ["--name", "a/b"], "plain file name"),
    ("json dir missing", GOOD + ["--json", "/nonexistent-dir/r.json"], "does not exist"),
    ("trace too long", ["--block", "8", "--size", "1m", "--trace"], "--trace records every call"),
    ("size beyond free space", ["--block", "1m", "--size", "1p"], "free"),
    ("option of another api", GOOD + ["--queue-depth", "4"],
     "--queue-depth belongs to --api uring, not --api posix"),
    ("stdio option to uring", GOOD + ["--api", "uring", "--stdio-buffer", "1m"],
     "--stdio-buffer belongs to --api stdio, not --api uring"),
    ("zero queue depth", GOOD + ["--api", "uring", "--queue-depth", "0"], "--queue-depth '0'"),
    ("queue depth too deep", GOOD + ["--api", "uring", "--queue-depth", "5000"], "more than 4096"),
    # tester 20, item h: the block was said in bytes ('--block 65536')
    ("queue depth's buffers", ["--api", "uring", "--queue-depth", "4096", "--block", "64k", "--size", "4m"],
     "--queue-depth 4096 with --block 64 KiB needs 4608 MiB of buffers: lower the depth or the block"),
    ("zero submit batch", GOOD + ["--api", "uring", "--uring-submit-batch", "0"],
     "--uring-submit-batch '0'"),
    ("submit batch not a number", GOOD + ["--api", "uring", "--uring-submit-batch", "all"],
     "--uring-submit-batch 'all'"),
    ("submit batch above depth", GOOD + ["--api", "uring", "--queue-depth", "4", "--uring-submit-batch", "5"],
     "--uring-submit-batch 5 is more than --queue-depth 4"),
    ("submit batch on posix", GOOD + ["--uring-submit-batch", "2"],
     "--uring-submit-batch belongs to --api uring, not --api posix"),
    ("queue depth beyond memory", ["--api", "uring", "--queue-depth", "4096", "--block", "1m",
                                   "--size", "16m"], "lower the depth"),
    ("zero stdio buffer", GOOD + ["--api", "stdio", "--stdio-buffer", "0"], "--stdio-buffer '0'"),
    ("direct on stdio", GOOD + ["--api", "stdio", "--direct"], "--api stdio cannot do direct I/O"),
    ("direct on mmap", GOOD + ["--api", "mmap", "--direct"], "--api mmap cannot do direct I/O"),
    ("unaligned direct on uring", ["--api", "uring", "--block", "1024", "--size", "1m", "--direct"],
     "multiple of 4k"),
    ("per-call grouping with uring", GOOD + ["--api", "uring", "--group", "2"], "--group-unit rank"),
    ("unknown mmap map", GOOD + ["--api", "mmap", "--mmap-map", "page"], "--mmap-map 'page'"),
    ("unknown mmap advice", GOOD + ["--api", "mmap", "--mmap-advice", "soon"], "--mmap-advice 'soon'"),
    ("transfer buffer on a per-call api", GOOD + ["--transfer-buffer", "1m"],
     "--transfer-buffer sizes whole-list calls, which --api posix does not make"),
    ("transfer hold on a per-call api", GOOD + ["--transfer-hold", "1m"],
     "--transfer-hold sizes the buffer of whole-list calls, which --api posix does not make"),
    ("transfer hold not a size", GOOD + ["--api", "mpiio", "--collective", "--transfer-hold", "lots"],
     "--transfer-hold 'lots'"),
    ("transfer hold of zero", GOOD + ["--api", "mpiio", "--collective", "--transfer-hold", "0"],
     "--transfer-hold '0'"),
]


@pytest.mark.parametrize("label,args,phrase", ENGINE_CASES, ids=[c[0] for c in ENGINE_CASES])
def test_engine_refuses_with_one_line(engine, shm_dir, tmp_path, label, args, phrase):
    json_path = tmp_path / "r.json"
    extra = [] if "--json" in args else ["--json", str(json_path)]
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), *args, *extra],
                       capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, (label, p.returncode, p.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("pario-engine: error: ") and phrase in lines[0], lines[0]
    assert not json_path.exists()
    assert os.listdir(shm_dir) == []


def test_engine_refuses_missing_and_unwritable_dir(engine, tmp_path):
    p = subprocess.run([engine, "io", "--dir", str(tmp_path / "absent"), *GOOD],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--dir" in p.stderr and "No such file or directory" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    p = subprocess.run([engine, "io", "--dir", str(a_file), *GOOD], capture_output=True, text=True)
    assert p.returncode == 2 and "is not a directory" in p.stderr


def test_engine_never_touches_an_existing_file(engine, shm_dir):
    precious = shm_dir / "precious"
    precious.write_bytes(b"user data")
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), *GOOD, "--name", "precious"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "already exists" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert precious.read_bytes() == b"user data"


def test_bad_invocation_through_mpirun_still_fails(run_io, shm_dir):
    r = run_io(2, "--dir", shm_dir, "--layout", "spiral", "--size", "1m", expect_ok=False)
    assert r.returncode != 0 and r.result is None
    assert "pario-engine: error: --layout 'spiral' is unknown" in r.stderr


VERIFY_CASES = [
    (["--seed", "1"], "--file is required"),
    (["--file", "/nonexistent"], "--seed is required"),
    (["--file", "/nonexistent", "--seed", "1"], "No such file"),
    (["--file", "/dev/null", "--seed", "x"], "--seed 'x'"),
]


@pytest.mark.parametrize("args,phrase", VERIFY_CASES)
def test_verify_refuses_with_one_line(engine, args, phrase):
    p = subprocess.run([engine, "verify", *args], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and phrase in p.stderr


def pario(*args, env_db):
    return subprocess.run([sys.executable, "-m", "pario", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(env_db)},
                          timeout=120)


FRONT_CASES = [
    (["run", "nosuchpreset", "--dir", "/dev/shm"], "preset 'nosuchpreset' is unknown"),
    (["run", "cfs", "--dir", "/nonexistent-dir"], "does not exist"),
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "0"], "--ranks"),
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "two"], "--ranks"),
    (["run", "cfs", "--dir", "/dev/shm", "--blocks", "4q"], "is not a size"),
    (["run", "cfs", "--dir", "/dev/shm", "--size", "0"], "greater than zero"),
    (["run", "cfs", "--dir", "/dev/shm", "--tests", "nope"], "--tests nope unknown"),
    (["run", "cfs", "--dir", "/dev/shm", "--timeout", "-1"], "--timeout"),
    (["run", "cfs", "--dir", "/dev/shm", "--launcher", "teleport"], "--launcher 'teleport'"),
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template", "mpiexec"], "{ranks}"),
    # a placeholder pario does not fill would reach the engine as an argument (tester 10)
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template",
      "mpirun -n {ranks} {engine} {engine_args} {bogus} --x={host}"],
     "--launcher-template: {bogus}, {host} is not a placeholder pario fills"),
    # a lone brace, or the engine's arguments twice: every point would fail (tester 13)
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template", "mpirun -n {ranks} {engine} {engine_args} {"],
     "--launcher-template: '{' has a brace that opens or closes no placeholder"),
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template", "mpirun -n {ranks} {engine} x}"],
     "'x}' has a brace"),
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template",
      "mpirun -n {ranks} {engine} {engine_args} {engine_args}"], "{engine_args} appears more than once"),
    # a launcher of the other MPI starts each rank as a world of its own (tester 16)
    (["run", "cfs", "--dir", "/dev/shm", "--launcher-template", "mpiexec.hydra -n {ranks} {engine} {engine_args}"],
     "--launcher-template starts MPICH's ranks (mpiexec.hydra), but the engine is built with Open MPI: "
     "give --mpi mpich"),
    (["run", "cfs", "--dir", "/dev/shm", "--mpi", "mpich", "--launcher-template",
      "mpirun.openmpi -n {ranks} {engine} {engine_args}"], "give --mpi openmpi, or a template of MPICH's"),
    (["probe", "--dir", "/dev/shm", "--launcher-template", "mpiexec.mpich -n {ranks} {engine}"],
     "starts MPICH's ranks (mpiexec.mpich)"),
    (["run", "nht1", "--quick", "--dir", "/dev/shm", "--classes", "S,s", "--dry-run"],
     "--classes S,s repeats S (as s): give each value once"),
    (["report", "1", "--out", "report.pdf"], "name the report file *.html"),
    # a kernel's trials are rounds of the whole plan: 1e8 of them took 24 GB (tester 15)
    (["run", "nht1", "--quick", "--dir", "/dev/shm", "--dry-run", "--iterations", "100000000"],
     "--iterations 100000000 is more than 1000 rounds (each runs every point of the plan again): use fewer"),
    (["run", "sgi750", "--quick", "--dir", "/dev/shm", "--tests", "perf", "--iterations", "1001"],
     "--iterations 1001 is more than 1000 rounds"),
    # what left the plan empty is said, not only "no runnable point" (tester 15)
    (["run", "nht1", "--quick", "--dir", "/dev/shm", "--ranks", "16", "--tests", "posix"],
     "no runnable point of posix (class S has 12 planes: at most 12 ranks)"),
    (["run", "nht1", "--quick", "--dir", "/dev/shm", "--tests", "posix-grouped", "--groups", "4"],
     "no runnable point of posix-grouped (write group 4 cannot act at 1 rank(s)"),
    (["model", "--print-machine", "--machine", "ipsc860", "--set", "io_node.prefetch=4"],
     "io_node.readahead_at (8) must be at most io_node.prefetch (4): --set io_node.readahead_at=4 too"),
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "1", "--blocks", "1m", "--size", "64k"], "no runnable point"),
    (["run", "cfs"], "--dir"),
    # A value given twice would run its points twice (tester 2, F-b).
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "1,2,1"], "'1,2,1' repeats 1"),
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "1,01"], "--ranks 1,01 repeats 1 (as 01)"),
    (["run", "cfs", "--dir", "/dev/shm", "--blocks", "4k,4096"], "--blocks 4k,4096 repeats 4k (as 4096)"),
    (["run", "cfs", "--dir", "/dev/shm", "--tests", "partitioned,partitioned"], "repeats partitioned"),
    # A negative value reaches pario's own check, not argparse's "expected one argument" (F-d).
    (["run", "cfs", "--dir", "/dev/shm", "--blocks", "-4k"], "'-4k': a size must be positive"),
    (["run", "cfs", "--dir", "/dev/shm", "--size", "-1m"], "'-1m': a size must be positive"),
    (["run", "cfs", "--dir", "/dev/shm", "--ranks", "-2"], "--ranks must be whole numbers of at least 1"),
    # Every point checked against the free space before the first (F-c).
    (["run", "cfs", "--quick", "--dir", "/dev/shm", "--size", "100p"], "free space on /dev/shm or lower --size"),
    # A --dir where the stripe targets cannot be made: refused before the run is stored (F-a).
    (["run", "ascired-api", "--quick", "--dir", "/proc"], "/proc"),
    (["show", "99"], "no results database"),  # show never creates one
    (["compare", "1", "2", "--fail-below", "abc"], "'abc' is not a ratio"),
    # the second silently replaced the first (tester 23, item 13); --set may repeat
    (["run", "cfs", "--dir", "/dev/shm", "--size", "8m", "--size=16m"], "--size is given twice: give it once"),
    (["model", "cfs", "--machine", "ipsc860", "--machine", "asci-red"], "--machine is given twice"),
    # int() took ' 3' and an Arabic-Indic digit as run 3 (tester 21, item g)
    (["show", " 3"], "argument run: ' 3' is not a whole number"),
    (["export", "\u0663", "--csv"], "argument run: '\u0663' is not a whole number"),
    (["model", "cfs", "--machine", "./nosuch.toml"], "machine file ./nosuch.toml does not exist"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize("args,phrase", FRONT_CASES, ids=[" ".join(c[0][:3]) for c in FRONT_CASES])
def test_front_end_refuses_with_one_line_and_stores_nothing(tmp_path, args, phrase):
    db = tmp_path / "r.sqlite"
    p = pario(*args, env_db=db)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and phrase in lines[0], lines
    if db.exists():
        import sqlite3
        assert sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_a_db_in_a_missing_directory_is_refused_and_nothing_created(tmp_path, shm_dir):
    """Only the default database's folder is pario's to make (tester 2, F-i)."""
    db = tmp_path / "missing" / "x.sqlite"
    p = pario("run", "cfs", "--quick", "--dir", str(shm_dir), "--db", str(db), env_db=tmp_path / "r.sqlite")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"--db {db}: directory {db.parent} does not exist: create it" in lines[0]
    assert list(tmp_path.iterdir()) == [] and list(shm_dir.iterdir()) == []
