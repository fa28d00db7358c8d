"""mpiio and hdf5 through real mpirun: the same bytes as posix on every
layout, and what the MPI library did (which ranks wrote, which locks it
took) seen by behaviour, never by MPI_File_get_info, which echoes hints."""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

RANKS = 4
BLOCK = 64 * 1024
SIZE = 32 * BLOCK  # 8 blocks per rank
SEED = 7


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_kept(run_io, directory, name, *extra, layout="partitioned", ranks=RANKS):
    return run_io(ranks, "--dir", directory, "--layout", layout, "--block", "64k", "--size", SIZE,
                  "--phases", "write", "--iterations", 1, "--keep", "--name", name, "--seed",
                  SEED, *extra)


@pytest.mark.parametrize("where", ["shm_dir", "disk_dir"])
def test_mpiio_every_layout_and_mode_writes_the_posix_bytes(request, where, run_io, verify):
    directory = request.getfixturevalue(where)
    write_kept(run_io, directory, "posix")
    reference = digest(directory / "posix")
    modes = {"independent": [], "collective": ["--collective"]}
    if where == "shm_dir":  # IOR's per-transfer collective form, once
        modes["per-call"] = ["--collective-per-call"]
    for layout in ("partitioned", "interleaved", "random"):
        for mode, flags in modes.items():
            name = f"{layout}-{mode}"
            r = write_kept(run_io, directory, name, "--api", "mpiio", *flags, layout=layout)
            assert r.result["params"]["api"] == "mpiio"
            assert digest(directory / name) == reference, name
            ok = verify(directory / name, SEED)
            assert ok.returncode == 0, ok.stderr
            assert f"{SIZE} bytes match seed {SEED}" in ok.stdout
            if mode == "collective":
                shape = {"partitioned": "contiguous", "interleaved": "vector",
                         "random": "indexed"}[layout]
                assert r.result["params"]["api_options"]["file_views"] == shape


def test_mpiio_write_then_read_verifies_through_both_implementations(shm_dir, run_io):
    for impl in ("romio", "ompio"):
        r = run_io(RANKS, "--dir", shm_dir, "--api", "mpiio", "--collective", "--mpiio-impl", impl,
                   "--layout", "random", "--block", "64k", "--size", SIZE, "--iterations", 1,
                   "--verify")
        b = r.result["params"]["api_options"]
        component = {"romio": "romio321", "ompio": "ompio"}[impl]
        assert b["implementation"] == component
        # the evidence: the one MPI-IO component the process loaded
        assert b["io_components_loaded"] == f"mca_io_{component}"
        # ... and loaded before the first timed open, by the untimed warm-up
        # (mpiio_env.h, mpiio_library_warm), which leaves nothing behind
        assert b["io_components_loaded_before_clock"] == f"mca_io_{component}"
        assert list(Path(shm_dir).iterdir()) == []
        assert r.result["verification"]["bytes_checked"] == 2 * SIZE


def hdf5_dataset_bytes(path):
    with h5py.File(path, "r") as f:
        d = f["data"]
        assert d.dtype == np.uint8 and d.shape == (SIZE,)
        return d[:].tobytes(), d.id.get_offset()


def test_hdf5_dataset_holds_the_posix_bytes(shm_dir, run_io, verify):
    write_kept(run_io, shm_dir, "posix")
    raw = (shm_dir / "posix").read_bytes()
    cases = [("independent", "interleaved", []), ("collective", "random", ["--collective"]),
             ("chunked", "partitioned", ["--collective", "--hdf5-chunk", "192k"])]
    for label, layout, flags in cases:
        name = f"{label}.h5"
        r = write_kept(run_io, shm_dir, name, "--api", "hdf5", *flags, layout=layout)
        b = r.result["params"]["api_options"]
        assert b["agreed_collective_writes"] is True  # the engine's override is the one HDF5 calls
        data, offset = hdf5_dataset_bytes(shm_dir / name)
        assert data == raw, label
        # verify checks the dataset, not the file's HDF5 header
        ok = verify(shm_dir / name, SEED)
        assert ok.returncode == 0, ok.stderr
        assert f"(its HDF5 dataset 'data'): {SIZE} bytes match seed {SEED}" in ok.stdout
        if label == "chunked":
            assert b["storage"] == "chunked" and b["data_offset"] is None and offset is None
            assert b["chunk_bytes_asked"] == b["chunk_bytes"] == 192 * 1024
        else:
            # contiguous: the same bytes lie in the file at the recorded,
            # aligned offset
            assert b["data_offset"] == offset and offset % (1 << 20) == 0
            with open(shm_dir / name, "rb") as f:
                f.seek(offset)
                assert f.read(SIZE) == raw
        observed = r.phase("write")["iterations"][0]["observed"]["actual_io_mode"]
        if label == "independent":
            assert observed == [0] * RANKS and "actual_io_mode" not in b
        else:
            want = "contiguous collective" if label == "collective" else "chunk collective"
            assert b["actual_io_mode"] == want
            assert set(observed) == {4 if label == "collective" else 2}


def test_verify_finds_a_wrong_byte_in_an_hdf5_dataset_and_refuses_a_foreign_hdf5_file(
        shm_dir, run_io, verify):
    """A chunk larger than the file is one chunk of the file's size, and the
    result says so; a byte changed inside the dataset is named by its
    offset in the dataset; an HDF5 file pario did not write is refused."""
    r = write_kept(run_io, shm_dir, "big-chunk.h5", "--api", "hdf5", "--hdf5-chunk", "64m",
                   layout="interleaved")
    b = r.result["params"]["api_options"]
    assert b["chunk_bytes_asked"] == 64 << 20 and b["chunk_bytes"] == SIZE
    with h5py.File(shm_dir / "big-chunk.h5", "r") as f:
        assert f["data"].chunks == (SIZE,)
    with h5py.File(shm_dir / "big-chunk.h5", "r+") as f:
        f["data"][SIZE - 5] ^= 0xFF
    bad = verify(shm_dir / "big-chunk.h5", SEED)
    assert bad.returncode == 3 and f"first wrong byte at offset {SIZE - 5} " in bad.stderr
    with h5py.File(shm_dir / "foreign.h5", "w") as f:
        f["x"] = np.arange(8, dtype=np.uint64)
    foreign = verify(shm_dir / "foreign.h5", SEED, "--size", "64")
    assert foreign.returncode == 2 and "Traceback" not in foreign.stderr
    assert foreign.stderr.strip().count("\n") == 0
    assert "without pario's one-byte dataset 'data'" in foreign.stderr


def test_hdf5_write_read_verify_and_alignment(disk_dir, run_io):
    r = run_io(RANKS, "--dir", disk_dir, "--api", "hdf5", "--collective", "--hdf5-align", "64k",
               "--layout", "interleaved", "--block", "64k", "--size", SIZE, "--iterations", 1,
               "--verify", "--keep", "--name", "a.h5")
    assert r.result["verification"]["bytes_checked"] == 2 * SIZE
    assert r.result["params"]["api_options"]["data_offset"] % (64 * 1024) == 0
    # H5Fcreate's MPI_File_open found the library loaded by the untimed warm-up
    assert r.result["params"]["api_options"]["io_components_loaded_before_clock"].startswith("mca_io_")


def written_by_rank(r):
    return r.phase("write")["iterations"][0]["observed"]["write_bytes"]


@pytest.mark.parametrize("impl,layout", [("romio", "interleaved"), ("ompio", "interleaved"),
                                         ("romio", "partitioned")])
def test_aggregators_change_which_ranks_write(shm_dir, run_io, impl, layout):
    """One aggregator: one rank writes every byte of the file and the others
    none; four: every rank writes its part.  Counted by the engine from
    /proc/self/io around the phase.  Partitioned: ROMIO would skip its
    aggregators there (accesses that do not interleave) unless told."""
    size = 64 * BLOCK
    seen = {}
    for n in (1, 4):
        r = run_io(RANKS, "--dir", shm_dir, "--api", "mpiio", "--collective", "--mpiio-impl", impl,
                   "--aggregators", n, "--layout", layout, "--block", "64k", "--size", size,
                   "--phases", "write", "--iterations", 1)
        seen[n] = written_by_rank(r)
        assert r.result["params"]["api_options"]["aggregators_asked"] == n
    one, four = seen[1], seen[4]
    assert sum(w >= size for w in one) == 1, one
    assert sum(w < size // 100 for w in one) == RANKS - 1, one
    assert all(w >= size // RANKS for w in four), four


def lock_calls(r, phase="write"):
    return r.phase(phase)["iterations"][0]["observed"]["lock_calls"]


def test_atomic_mode_takes_locks_where_honoured_and_says_so_where_not(shm_dir, run_io):
    common = ("--dir", shm_dir, "--api", "mpiio", "--layout", "interleaved", "--block", "64k",
              "--size", SIZE, "--iterations", 1)
    relaxed = run_io(RANKS, *common, "--mpiio-impl", "romio")
    atomic = run_io(RANKS, *common, "--mpiio-impl", "romio", "--atomic")
    assert lock_calls(relaxed) == [0] * RANKS and "atomic_mode" not in relaxed.result["params"]["api_options"]
    # ROMIO locks each access's byte range: lock and unlock per block
    per_rank = SIZE // BLOCK // RANKS
    assert all(n >= 2 * per_rank for n in lock_calls(atomic)), lock_calls(atomic)
    assert all(n >= 2 * per_rank for n in lock_calls(atomic, "read"))
    mode = atomic.result["params"]["api_options"]["atomic_mode"]
    assert atomic.result["params"]["api_options"]["atomic"] is True and mode["honoured"] is True
    ompio = run_io(RANKS, *common, "--mpiio-impl", "ompio", "--atomic")
    mode = ompio.result["params"]["api_options"]["atomic_mode"]
    assert mode["honoured"] is False and mode["evidence"].startswith("not honoured")
    assert lock_calls(ompio) == [0] * RANKS
    # ...and says so where a user reads, not only inside the result
    said = [w for w in ompio.result["warnings"] if w.startswith("--atomic was not honoured")]
    assert len(said) == 1 and "--mpiio-impl romio" in said[0]
    assert not [w for w in atomic.result["warnings"] if "atomic" in w]


BAD = [
    ("agg>ranks", ["--api", "mpiio", "--collective", "--aggregators", "2"],
     "--aggregators 2 is more than the 1 rank(s)"),
    ("agg-zero", ["--api", "mpiio", "--collective", "--aggregators", "0"],
     "--aggregators '0'"),
    ("agg-indep", ["--api", "mpiio", "--aggregators", "2"], "add --collective"),
    ("agg-per-rank", ["--api", "mpiio", "--collective", "--aggregators", "1", "--files", "per-rank"],
     "needs a shared file"),
    ("hint-no-eq", ["--api", "mpiio", "--hint", "cb_nodes"], "is not key=value"),
    ("hint-no-key", ["--api", "mpiio", "--hint", "=4"], "is not key=value"),
    ("hint-no-value", ["--api", "mpiio", "--hint", "cb_nodes="], "is not key=value"),
    ("hint-two-eq", ["--api", "mpiio", "--hint", "a=b=c"], "more than one '='"),
    ("hint-space", ["--api", "mpiio", "--hint", "a b=c"], "space"),
    ("hint-twice", ["--api", "mpiio", "--hint", "a=1", "--hint", "a=2"], "given twice"),
    ("hint+agg", ["--api", "mpiio", "--collective", "--aggregators", "1", "--hint", "cb_nodes=2"],
     "both set the aggregator count"),
    ("impl", ["--api", "mpiio", "--mpiio-impl", "mpich"], "--mpiio-impl 'mpich' is unknown"),
    ("two-collectives", ["--api", "mpiio", "--collective", "--collective-per-call"],
     "exclude each other"),
    ("group+collective", ["--api", "mpiio", "--collective", "--group", "1"], "drop --group"),
    ("hdf5-group+collective", ["--api", "hdf5", "--collective", "--group", "1"], "drop --group"),
    ("direct", ["--api", "mpiio", "--direct"], "cannot do direct I/O"),
    ("hdf5-prealloc", ["--api", "hdf5", "--prealloc"], "drop --prealloc"),
    ("hdf5-align-0", ["--api", "hdf5", "--hdf5-align", "0"], "--hdf5-align '0'"),
    ("hdf5-chunk-0", ["--api", "hdf5", "--hdf5-chunk", "0"], "--hdf5-chunk '0'"),
    ("hdf5-opt-on-mpiio", ["--api", "mpiio", "--hdf5-align", "4k"], "belongs to --api hdf5"),
    ("mpiio-opt-on-posix", ["--api", "posix", "--collective"], "belongs to --api mpiio or --api hdf5"),
]


@pytest.mark.parametrize("label,args,phrase", BAD, ids=[b[0] for b in BAD])
def test_bad_mpiio_and_hdf5_options_get_one_line(shm_dir, engine, launcher, label, args, phrase):
    # Refused while parsing, before any I/O: one process (an MPI singleton)
    # sees the same as each rank of a launch, at a third of the start-up.
    argv = [engine, "io", "--dir", str(shm_dir), "--block", "64k", "--size", "1m", *args]
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode == 2, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("pario-engine: error:"), p.stderr
    assert phrase in lines[0], p.stderr
    assert not list(shm_dir.iterdir())  # nothing half-stored


def test_unknown_mpiio_implementation_in_the_environment_is_refused(shm_dir, engine, launcher):
    env = launcher.environment()
    env["OMPI_MCA_io"] = "romio321,ompio"
    argv = launcher.command(1, [engine, "io", "--dir", str(shm_dir), "--api", "mpiio", "--size", "1m"])
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "does not name one MPI-IO implementation" in p.stderr


def test_without_parallel_hdf5_the_backend_refuses_in_one_line(engine, launcher, shm_dir):
    """A second engine configured without HDF5 (the environment a serial-only
    HDF5 gives); kept under build/ so later runs only relink."""
    root = Path(__file__).resolve().parents[1]
    build = root / "build" / "engine-without-hdf5"
    cfg = subprocess.run(["cmake", "-S", str(root / "engine"), "-B", str(build), "-DPARIO_HDF5=OFF",
                          "-DCMAKE_BUILD_TYPE=Release"], capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stderr
    b = subprocess.run(["cmake", "--build", str(build), "-j2", "--target", "pario-engine"],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    argv = launcher.command(1, [str(build / "pario-engine"), "io", "--dir", str(shm_dir), "--api",
                                "hdf5", "--size", "1m"])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    lines = [l for l in p.stderr.splitlines() if l.startswith("pario-engine")]
    assert p.returncode == 2 and len(lines) == 1
    assert "built without parallel HDF5" in lines[0] and "libhdf5-openmpi-dev" in lines[0]


def test_under_mpich_romio_is_the_implementation_and_hdf5_works(shm_dir, tmp_path):
    """The MPICH build (build/engine-mpich): one MPI-IO, ROMIO, which
    reports the hints in force; HDF5 through MPICH's parallel HDF5."""
    root = Path(__file__).resolve().parents[1]
    engine = root / "build" / "engine-mpich" / "pario-engine"
    launcher = subprocess.run(["sh", "-c", "command -v mpiexec.mpich"], capture_output=True,
                              text=True).stdout.strip()
    if not engine.exists() or not launcher:
        pytest.skip("no MPICH build: make build makes build/engine-mpich")
    for api, extra in (("mpiio", ["--aggregators", "1"]), ("hdf5", [])):
        out = tmp_path / f"{api}.json"  # --json never replaces a file
        p = subprocess.run([launcher, "-n", "2", str(engine), "io", "--dir", str(shm_dir), "--api", api,
                            "--collective", *extra, "--block", "64k", "--size", "1m", "--iterations", "1",
                            "--verify", "--json", str(out)], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        opts = json.loads(out.read_text())["params"]["api_options"]
        assert opts["implementation"] == "romio"
        if api == "mpiio":
            assert opts["info_returned"]["cb_nodes"] == "1"
        else:
            assert opts["actual_io_mode"] == "contiguous collective"
            assert opts["agreed_collective_writes"] is True  # the override works under MPICH too
    p = subprocess.run([launcher, "-n", "1", str(engine), "io", "--dir", str(shm_dir), "--api", "mpiio",
                        "--mpiio-impl", "ompio", "--size", "1m"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "needs Open MPI" in p.stderr


@pytest.mark.parametrize("kernel", [["laplace", "--grid", "512", "--iterations", "4"],
                                    ["beff", "-T", "2", "--max-chunk", "1m"]])
def test_under_mpich_a_full_disk_is_pario_s_one_line_alone(small_tmpfs, kernel):
    """MPICH's yaksa counted, at MPI_Finalize, the datatypes a stopped
    kernel had not freed: '[WARNING] yaksa: 1 leaked handle pool objects'
    under pario's line, once per rank."""
    root = Path(__file__).resolve().parents[1]
    engine = root / "build" / "engine-mpich" / "pario-engine"
    launcher = shutil.which("mpiexec.mpich")
    if not engine.exists() or not launcher:
        pytest.skip("no MPICH build: make build makes build/engine-mpich")
    full = small_tmpfs("1m")
    p = subprocess.run([launcher, "-n", "2", str(engine), *kernel, "--dir", str(full)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 3 and len(p.stderr.splitlines()) == 1, p.stderr
    assert "No space left on device: free space on" in p.stderr and list(full.iterdir()) == []
