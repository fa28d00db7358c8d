"""Faults injected under the real engine: a full file system, a symlink
planted mid-run, a rank killed mid-phase, damaged files.  Each must end in
one line naming the fault, a non-zero exit, no hang, no file outside --dir
touched and nothing of the run's left behind."""

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

BT_MODES = ["serial", "collective", "independent", "posix", "per-rank"]


@pytest.fixture
def full_fs(small_tmpfs):
    """A 400 KiB tmpfs: class S's 12 dumps (830 KB) cannot fit."""
    return small_tmpfs("400k")


def mpirun(launcher, ranks, argv, timeout=120):
    return subprocess.run(launcher.command(ranks, argv), capture_output=True, text=True,
                          env=launcher.environment(), timeout=timeout)


def pario_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("pario-engine: error:")]


@pytest.mark.parametrize("mode", BT_MODES)
def test_bt_on_a_full_disk_ends_in_one_line_without_hanging(launcher, engine, full_fs, mode):
    p = mpirun(launcher, 2, [engine, "bt", "--class", "S", "--io", mode, "--dir", str(full_fs)],
               timeout=60)  # a deadlock fails here, by the timeout
    assert p.returncode != 0
    lines = pario_lines(p.stderr)
    assert len(lines) == 1, p.stderr[-2000:]
    assert "No space left on device" in lines[0] and f"--io {mode}" in lines[0]
    assert lines[0].endswith(f"free space on {full_fs} or lower --class"), lines[0]  # the fix
    assert "mca_" not in p.stderr  # no library line, not even inside pario's
    assert os.listdir(full_fs) == []  # the partial file is removed


MPIIO_COLLECTIVE = ["--api", "mpiio", "--collective"]
HDF5_COLLECTIVE = ["--api", "hdf5", "--collective"]
FILLS = [  # (id, api, ranks)
    ("posix", [], 2), ("mpiio", ["--api", "mpiio"], 2), ("mpiio-collective", MPIIO_COLLECTIVE, 2),
    ("romio", ["--api", "mpiio", "--mpiio-impl", "romio"], 2),
    ("romio-collective", [*MPIIO_COLLECTIVE, "--mpiio-impl", "romio"], 2),
    ("hdf5", ["--api", "hdf5"], 2),
    # A collective call fails only on the aggregator that wrote, and the
    # library's next collective (sync, close) then waited forever for it:
    # every rank count, since which rank aggregates depends on it.
    *[(f"hdf5-collective-{n}", HDF5_COLLECTIVE, n) for n in (1, 2, 3, 4)],
    *[(f"mpiio-collective-{n}", MPIIO_COLLECTIVE, n) for n in (1, 3, 4)],
    ("mpiio-per-call-4", ["--api", "mpiio", "--collective-per-call"], 4),
    ("hdf5-4", ["--api", "hdf5"], 4),
]
# HDF5 on 3-4 ranks used to hang here in about 1 run in 10: the metadata
# write of the fsync's H5Fflush failed on ompio's aggregator alone, whose
# MPI_File_sync then returned at once (its failed write left a request
# pending) while the other ranks waited in the sync's barrier.  HDF5's
# metadata writes are now collective and every collective write, sync and
# set_size on its file is agreed over the ranks (engine/src/util/agreed_writes.h).
FILL_PARAMS = [pytest.param(*f[1:], id=f[0]) for f in FILLS]


@pytest.mark.parametrize("api,ranks", FILL_PARAMS)
def test_io_on_a_disk_that_fills_mid_run_ends_in_one_line(launcher, engine, full_fs, api, ranks):
    """The engine's up-front free-space check passes; another writer then
    takes the space between iterations.  Through MPI-IO, ompio prints its
    own line per failed write: held back, so pario's one line (naming the
    library's cause, not a bare I/O error, and the fix) is all the user
    sees.  ROMIO returns a bare MPI_ERR_IO, the cause left in errno.  HDF5
    cannot close a file whose metadata it cannot write: no crash in
    MPI_Finalize either (exit 3, not 139), and no hang (it spun forever)."""
    size = "192k" if ranks == 3 else "256k"  # whole blocks per rank
    argv = launcher.command(ranks, [engine, "io", "--dir", str(full_fs), "--name", "run",
                                    "--block", "64k", "--size", size, "--phases", "write",
                                    "--iterations", "100000", *api])
    filler = full_fs / "filler"
    deadline = time.monotonic() + 90
    with open(filler, "wb", buffering=0) as f:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=launcher.environment(), start_new_session=True)
        while proc.poll() is None and not (full_fs / "run").exists():
            time.sleep(0.01)  # past the engine's free-space check
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                f.write(bytes(4096))
            except OSError:
                time.sleep(0.01)
                try:
                    f.truncate(f.tell())  # keep what fit, try again for more
                except OSError:
                    pass
    if proc.poll() is None:  # hung: take the launch down, then fail
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        filler.unlink()
        pytest.fail(f"{ranks} rank(s) still running 90 s after the disk filled")
    out, err = proc.communicate(timeout=60)
    filler.unlink()
    assert proc.returncode == 3, err
    lines = pario_lines(err)
    assert len(lines) == 1 and "No space left on device" in lines[0], err
    assert lines[0].endswith(f"free space on {full_fs} or lower --size"), lines[0]   # and the fix
    assert "mca_" not in err and "pwrite" not in err, err  # no library line besides pario's
    assert os.listdir(full_fs) == []


def plant_symlinks(name, target, stop):
    """Once the run has made its file, keep planting name -> target
    whenever the name is free (between an iteration's unlink and create)."""
    planted = 0
    while not stop.is_set() and not os.path.isfile(name):
        time.sleep(0.001)
    while not stop.is_set():
        try:
            os.symlink(target, name)
            planted += 1
        except FileExistsError:
            pass
    return planted


def test_io_never_writes_through_a_symlink_planted_mid_run(launcher, engine, shm_dir, tmp_path):
    precious = tmp_path / "precious"  # outside --dir
    precious.write_bytes(b"user data\n" * 100)
    argv = launcher.command(1, [engine, "io", "--dir", str(shm_dir), "--name", "victim",
                                "--block", "64k", "--size", "1m", "--phases", "write",
                                "--iterations", "400"])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=launcher.environment())
    stop = threading.Event()
    t = threading.Thread(target=plant_symlinks, args=(shm_dir / "victim", precious, stop))
    t.start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        stop.set()
        t.join()
    assert precious.read_bytes() == b"user data\n" * 100  # never written through
    link = shm_dir / "victim"
    assert link.is_symlink()  # the planted link is left alone, not removed as pario's
    assert proc.returncode != 0
    lines = pario_lines(err)
    # refused at the exclusive, no-follow create (EEXIST, ELOOP) or caught after it
    assert len(lines) == 1 and any(w in lines[0] for w in ("File exists", "symbolic links",
                                                           "replaced")), err
    link.unlink()
    assert os.listdir(shm_dir) == []


@pytest.mark.parametrize("mode", ["posix", "per-rank", "serial", "collective"])
def test_bt_refuses_a_symlink_at_its_file_name(launcher, engine, shm_dir, tmp_path, mode):
    precious = tmp_path / "precious"
    precious.write_bytes(b"keep me")
    name = "ckpt" + (".0000" if mode == "per-rank" else "")
    (shm_dir / name).symlink_to(precious)
    p = mpirun(launcher, 2, [engine, "bt", "--class", "S", "--io", mode, "--dir", str(shm_dir),
                             "--name", "ckpt"])
    assert p.returncode == 2 and len(pario_lines(p.stderr)) == 1, p.stderr
    assert precious.read_bytes() == b"keep me"
    assert sorted(os.listdir(shm_dir)) == [name]  # only the user's link, untouched
    assert (shm_dir / name).is_symlink()


def test_bt_json_is_checked_before_the_solve(engine, tmp_path):
    t = time.monotonic()
    p = subprocess.run([engine, "bt", "--class", "W", "--json", str(tmp_path / "no" / "r.json")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "--json" in p.stderr and "does not exist" in p.stderr
    assert "T_T" not in p.stdout  # refused before any step
    a_dir = tmp_path / "d"
    a_dir.mkdir()
    p = subprocess.run([engine, "bt", "--class", "W", "--json", str(a_dir)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "is a directory" in p.stderr and "T_T" not in p.stdout
    assert time.monotonic() - t < 30


def test_io_read_shift_of_the_rank_count_is_refused(launcher, engine, shm_dir):
    p = mpirun(launcher, 2, [engine, "io", "--dir", str(shm_dir), "--block", "64k", "--size", "1m",
                             "--read-shift", "2"])
    lines = pario_lines(p.stderr)
    assert p.returncode != 0 and len(lines) == 1 and "--read-shift 2" in lines[0], p.stderr
    assert os.listdir(shm_dir) == []


def test_a_rank_killed_mid_phase_ends_the_run(launcher, engine, shm_dir):
    argv = launcher.command(2, [engine, "io", "--dir", str(shm_dir), "--name", "killed",
                                "--block", "4k", "--size", "64m", "--iterations", "1000"])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=launcher.environment(), start_new_session=True)
    try:
        ranks = []
        deadline = time.monotonic() + 30
        while len(ranks) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            out = subprocess.run(["pgrep", "-f", f"pario-engine io --dir {shm_dir}"],
                                 capture_output=True, text=True).stdout.split()
            ranks = [int(x) for x in out if int(x) != proc.pid and _is_engine(int(x))]
        assert ranks, "the ranks never started"
        time.sleep(1.0)  # well inside a phase
        os.kill(max(ranks), signal.SIGKILL)
        proc.communicate(timeout=60)  # mpirun must notice and end the job
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0


def _is_engine(pid):
    try:
        return Path(f"/proc/{pid}/exe").resolve().name == "pario-engine"
    except OSError:
        return False


# --- damaged files: verify names the fault and its offset ----------------
BLOCK = 64 * 1024
SIZE = 16 * BLOCK


@pytest.fixture
def kept(run_io, shm_dir):
    run_io(2, "--dir", shm_dir, "--layout", "interleaved", "--block", "64k", "--size", SIZE,
           "--phases", "write", "--iterations", 1, "--keep", "--name", "good", "--seed", 7)
    path = shm_dir / "good"
    assert os.getxattr(path, "user.pario.size") == str(SIZE).encode()
    return path


def damaged(kept, how):
    """A copy (with its recorded length) damaged in place."""
    bad = kept.parent / how
    shutil.copy2(kept, bad)
    good = kept.read_bytes()
    with open(bad, "r+b") as f:
        if how == "flip":
            f.seek(300001)
            f.write(bytes([good[300001] ^ 0x01]))
        elif how == "truncate":
            f.truncate(SIZE - 4096)
        elif how == "extend":
            f.seek(SIZE)
            f.write(b"\0")
        elif how == "hole":
            f.seek(5 * BLOCK + 512)
            f.write(bytes(4096))
        elif how == "swap":
            f.seek(3 * BLOCK)
            f.write(good[9 * BLOCK:10 * BLOCK])
            f.seek(9 * BLOCK)
            f.write(good[3 * BLOCK:4 * BLOCK])
        elif how == "duplicate":
            f.seek(11 * BLOCK)
            f.write(good[10 * BLOCK:11 * BLOCK])
    return bad


@pytest.mark.parametrize("how,phrase", [
    ("flip", "first wrong byte at offset 300001 "),
    ("truncate", f"is truncated at offset {SIZE - 4096}:"),
    ("extend", f"is extended: 1 byte beyond the expected {SIZE}, from offset {SIZE}"),
    ("hole", f"first wrong byte at offset {5 * BLOCK + 512} "),
    # a moved block differs first inside its leading 8-byte position stamp,
    # whose high bytes the two places may share
    ("swap", [f"first wrong byte at offset {3 * BLOCK + i} " for i in range(8)]),
    ("duplicate", [f"first wrong byte at offset {11 * BLOCK + i} " for i in range(8)]),
])
def test_verify_names_each_damage_and_its_offset(kept, verify, how, phrase):
    assert verify(kept, 7).returncode == 0
    r = verify(damaged(kept, how), 7, "--iteration", "0")
    lines = r.stderr.strip().splitlines()
    phrases = phrase if isinstance(phrase, list) else [phrase]
    assert r.returncode == 3 and len(lines) == 1 and any(p in lines[0] for p in phrases), r.stderr


def test_verify_without_a_recorded_length_asks_for_size(kept, verify, tmp_path):
    plain = tmp_path / "plain"
    plain.write_bytes(kept.read_bytes()[:-4096])  # a copy loses the attribute
    r = verify(plain, 7)
    assert r.returncode == 2 and "give --size" in r.stderr
    r = verify(plain, 7, "--size", str(SIZE))
    assert r.returncode == 3 and f"truncated at offset {SIZE - 4096}" in r.stderr


@pytest.mark.parametrize("command", [["io", "--size", "1m"], ["bt", "--class", "S"]])
def test_an_output_path_where_nothing_can_be_written_is_refused_first(engine, shm_dir, command):
    """access() tells root yes on /proc; the engine tries for real, before any work."""
    argv = [engine, *command, "--json", "/proc/pario-result.json"]
    if command[0] == "io":
        argv += ["--dir", str(shm_dir)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "cannot create a file in /proc" in p.stderr and p.stdout == ""
    assert os.listdir(shm_dir) == []


def test_a_reader_leaving_early_does_not_strand_the_run_files(engine, shm_dir):
    read_end, write_end = os.pipe()
    os.close(read_end)  # `pario-engine io ... | head -1`, certain
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), "--block", "64k", "--size", "1m",
                        "--iterations", "3"], stdout=write_end, stderr=subprocess.PIPE,
                       timeout=60)
    os.close(write_end)
    assert p.returncode == 0 and os.listdir(shm_dir) == []


def test_verify_bt_refuses_a_directory(engine, shm_dir):
    p = subprocess.run([engine, "verify-bt", str(shm_dir), "--class", "S"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "is a directory: give the solution file bt wrote" in p.stderr  # bad input


# --- the MPI-IO and HDF5 kernels on a full disk: the io command's line ---
KERNELS_ON_A_FULL_DISK = {
    # id: (ranks, engine arguments, the option that writes less)
    "perf": (4, ["perf", "--size", "1m", "--repeats", "1"], "--size"),  # ranks fail, not all at once
    "perf-romio": (2, ["perf", "--size", "1m", "--repeats", "1", "--mpiio-impl", "romio"], "--size"),
    "laplace": (3, ["laplace", "--grid", "600", "--iterations", "2"], "--grid"),
    "laplace-romio": (2, ["laplace", "--grid", "600", "--iterations", "2", "--mpiio-impl", "romio",
                          "--cb", "enable"], "--grid"),
    "beff": (2, ["beff", "-T", "6", "--max-chunk", "64k"], "-T"),
    "flashio": (2, ["flashio", "--blocks", "4"], "--blocks"),
    "flashio-collective": (2, ["flashio", "--blocks", "4", "--transfer", "collective"], "--blocks"),
    # Hung every time before agreed_writes.h: ompio's aggregator failed the
    # collective write alone and HDF5's next collectives split the ranks.
    "flashio-collective-4": (4, ["flashio", "--blocks", "2", "--transfer", "collective"], "--blocks"),
}


@pytest.mark.parametrize("kernel", KERNELS_ON_A_FULL_DISK)
def test_a_kernel_on_a_full_disk_ends_in_the_io_commands_one_line(launcher, engine, small_tmpfs, kernel):
    """Every MPI-IO kernel (and flashio over HDF5) names a full disk as the
    io command does: one line, the cause and the fix, exit 3, none of the
    library's own lines, no crash, and only its own files removed."""
    ranks, args, shrink = KERNELS_ON_A_FULL_DISK[kernel]
    full = small_tmpfs("400k")
    mine = full / "the-users-file"
    mine.write_bytes(b"not pario's\n" * 100)
    p = mpirun(launcher, ranks, [engine, *args, "--dir", str(full)], timeout=90)
    lines = pario_lines(p.stderr)
    assert p.returncode == 3 and len(lines) == 1, p.stderr[-3000:]
    assert lines[0].endswith(f"No space left on device: free space on {full} or lower {shrink}"), lines[0]
    others = p.stderr.replace(lines[0], "")
    for library_word in ("mca_", "pwrite", "MPI_ERR", "HDF5-DIAG", "Signal", "ROMIO"):
        assert library_word not in others, p.stderr[-3000:]
    assert os.listdir(full) == [mine.name] and mine.read_bytes() == b"not pario's\n" * 100


def test_flashio_ranks_agree_before_hdf5s_close_on_a_full_disk(launcher, engine, small_tmpfs):
    """With 256 KiB free, 2 ranks of flashio --blocks 4 ran out at their last
    writes: a rank whose write failed entered HDF5's collective close alone,
    and the ranks hung in different collectives (a barrier of the metadata
    flush against the truncate's broadcast) in about half the runs.  The
    ranks now agree before the close: every run ends in pario's one line,
    with nothing of pario's left."""
    full = small_tmpfs("256k")
    for _ in range(3):
        p = mpirun(launcher, 2, [engine, "flashio", "--blocks", "4", "--dir", str(full)], timeout=60)
        lines = pario_lines(p.stderr)
        assert p.returncode == 3 and len(lines) == 1, p.stderr[-3000:]
        assert lines[0].endswith(f"No space left on device: free space on {full} or lower --blocks"), lines[0]
        assert os.listdir(full) == []
