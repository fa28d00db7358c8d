"""BT verifies against NPB's reference residual and error norms (1e-8)."""

import hashlib
import json
import re
import subprocess

import pytest


@pytest.mark.parametrize("cls", ["S", "W"])
def test_bt_class_verifies_against_npb_reference(engine, tmp_path, cls):
    out = tmp_path / "bt.json"
    p = subprocess.run([engine, "bt", "--class", cls, "--json", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "verification SUCCESSFUL" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "bt" and doc["status"] == "ok"
    v = doc["verification"]
    assert v["performed"] and v["ok"] and v["largest_relative_difference"] < 1e-8
    assert doc["params"]["grid"] == {"S": 12, "W": 24}[cls]
    assert doc["mops"] > 0 and doc["t_t_seconds"] > 0 and doc["zeta"] == 0.0


def test_bt_other_step_count_is_not_called_verified(engine):
    p = subprocess.run([engine, "bt", "--class", "S", "--steps", "59"], capture_output=True, text=True)
    assert p.returncode == 0 and "verification not performed" in p.stdout
    assert "SUCCESSFUL" not in p.stdout


def test_bt_under_mpirun_on_one_rank(run_io, launcher, engine, tmp_path):
    argv = launcher.command(1, [engine, "bt", "--class", "S"])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode == 0 and "SUCCESSFUL" in p.stdout


@pytest.mark.parametrize("args,phrase", [
    ([], "--class is required"),
    (["--class", "Q"], "--class 'Q' is unknown"),
    (["--class", "S", "--steps", "0"], "--steps '0'"),
    (["--class", "S", "--warp"], "unknown option '--warp'"),
])
def test_bt_refuses_with_one_line(engine, args, phrase):
    p = subprocess.run([engine, "bt", *args], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0]


def run_bt(launcher, engine, ranks, *args, timeout=300):
    argv = launcher.command(ranks, [engine, "bt", *args])
    return subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=timeout)


@pytest.mark.parametrize("cls,ranks", [("S", 2), ("S", 3), ("S", 4), ("S", 12), ("W", 9)])
def test_bt_verifies_on_any_rank_count(launcher, engine, cls, ranks):
    p = run_bt(launcher, engine, ranks, "--class", cls, "--decomposition", "slabs")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{ranks} rank(s) in z slabs" in p.stdout and "verification SUCCESSFUL" in p.stdout


def test_bt_shared_file_modes_write_identical_files_whatever_the_rank_count(launcher, engine, shm_dir):
    digests = set()
    for mode in ("posix", "independent", "collective", "serial"):
        for ranks in (1, 2, 4, 9):
            d = shm_dir / f"{mode}{ranks}"
            d.mkdir()
            p = run_bt(launcher, engine, ranks, "--class", "S", "--io", mode, "--dir", str(d), "--keep")
            assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stdout + p.stderr
            [f] = list(d.iterdir())
            digests.add(hashlib.sha256(f.read_bytes()).hexdigest())
    assert len(digests) == 1


def test_bt_per_rank_files_are_reassembled_and_checked(launcher, engine, shm_dir, tmp_path):
    out = tmp_path / "r.json"
    p = run_bt(launcher, engine, 3, "--class", "S", "--io", "per-rank", "--dir", str(shm_dir), "--keep",
               "--json", str(out))
    assert p.returncode == 0 and "reassembled from every rank's file" in p.stdout, p.stdout + p.stderr
    files = sorted(f.name for f in shm_dir.iterdir())
    assert len(files) == 3 and files[0].endswith(".0000") and files[2].endswith(".0002")
    # one Fortran record per rank (one slab) and dump: 4-byte markers either side
    assert sum((shm_dir / f).stat().st_size for f in files) == 40 * 12**3 * 12 + 8 * 3 * 12
    doc = json.loads(out.read_text())
    assert doc["params"]["serial_order"] is False and doc["verification"]["file_ok"] is True


@pytest.mark.parametrize("mode,ranks", [("posix", 1), ("posix", 3), ("per-rank", 2)])
def test_bt_overlap_writes_the_same_dumps(launcher, engine, shm_dir, tmp_path, mode, ranks):
    out = tmp_path / "r.json"
    p = run_bt(launcher, engine, ranks, "--class", "S", "--io", mode, "--dir", str(shm_dir),
               "--overlap", "--keep", "--json", str(out))
    assert p.returncode == 0 and "(overlapped)" in p.stdout, p.stdout + p.stderr
    doc = json.loads(out.read_text())
    assert doc["params"]["overlap"] is True and len(doc["io"]["dump_seconds"]) == 12
    assert all(t > 0 for t in doc["io"]["dump_seconds"])  # every dump was written by the thread
    if mode == "posix":  # byte for byte what the same run writes without the thread
        assert "file check SUCCESSFUL" in p.stdout
        plain = shm_dir / "plain"
        plain.mkdir()
        q = run_bt(launcher, engine, ranks, "--class", "S", "--io", mode, "--dir", str(plain), "--keep")
        assert q.returncode == 0
        [a] = [f for f in shm_dir.iterdir() if f.is_file()]
        [b] = list(plain.iterdir())
        assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("mode", ["posix", "independent"])
def test_bt_grouped_writing_keeps_the_file_and_records_g(launcher, engine, shm_dir, tmp_path, mode):
    out = tmp_path / "r.json"
    p = run_bt(launcher, engine, 4, "--class", "S", "--io", mode, "--dir", str(shm_dir), "--group", "2",
               "--json", str(out))
    assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stdout + p.stderr
    assert json.loads(out.read_text())["params"]["group"] == 2


def test_bt_collective_takes_mpiio_hints(launcher, engine, shm_dir):
    p = run_bt(launcher, engine, 2, "--class", "S", "--io", "collective", "--dir", str(shm_dir),
               "--hint", "cb_nodes=1", "--hint", "romio_cb_write=enable")
    assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stderr
    assert list(shm_dir.iterdir()) == []


def test_bt_refuses_more_ranks_than_planes(launcher, engine):
    p = run_bt(launcher, engine, 13, "--class", "S")
    assert p.returncode != 0 and "use at most 12 ranks" in p.stderr


@pytest.mark.parametrize("cls,dumps", [("S", 12), ("W", 40)])
def test_bt_checkpoints_a_serial_order_file_that_verify_bt_accepts(engine, shm_dir, tmp_path, cls, dumps):
    out = tmp_path / "bt.json"
    p = subprocess.run([engine, "bt", "--class", cls, "--io", "posix", "--dir", str(shm_dir), "--keep",
                        "--tc", "1.0", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "file check SUCCESSFUL" in p.stdout
    doc = json.loads(out.read_text())
    n = doc["params"]["grid"]
    io = doc["io"]
    assert io["dumps"] == dumps and io["bytes_written"] == 40 * n**3 * dumps
    assert len(io["dump_seconds"]) == dumps and all(t > 0 for t in io["dump_seconds"])
    steps, tt = doc["params"]["steps"], doc["t_t_seconds"]
    assert io["r_io_bytes_per_s"] == pytest.approx(5 * 8 * n**3 * steps / (5 * tt))
    assert doc["zeta"] == pytest.approx(tt / 1.0 - 1)
    assert doc["verification"]["file_ok"]

    [path] = list(shm_dir.iterdir())
    assert path.stat().st_size == 40 * n**3 * dumps
    ok = subprocess.run([engine, "verify-bt", str(path), "--class", cls], capture_output=True, text=True)
    assert ok.returncode == 0 and "verification SUCCESSFUL" in ok.stdout
    assert ok.stdout.count("dump ") == dumps  # the diagonal of every dump is printed

    # One value of the last dump scaled by 2^16 (an exponent bit): the serial
    # check notices. (It checks norms, so a flip in the lowest mantissa bits
    # would pass, as it would in NPB.)
    data = bytearray(path.read_bytes())
    data[-40 * n - 1] ^= 0x01
    path.write_bytes(bytes(data))
    bad = subprocess.run([engine, "verify-bt", str(path), "--class", cls, "--quiet"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "UNSUCCESSFUL" in bad.stdout


def test_bt_without_keep_removes_only_its_file(engine, shm_dir):
    mine = shm_dir / "not-pario"
    mine.write_text("user data")
    p = subprocess.run([engine, "bt", "--class", "S", "--io", "posix", "--dir", str(shm_dir)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout
    assert [f.name for f in shm_dir.iterdir()] == ["not-pario"]


@pytest.mark.parametrize("args,phrase", [
    (["--class", "S", "--io", "posix"], "needs --dir"),
    (["--class", "S", "--io", "serial"], "needs --dir"),
    (["--class", "S", "--io", "posix", "--dir", "/tmp", "--hint", "a=b"], "--hint is for MPI-IO"),
    (["--class", "S", "--io", "collective", "--dir", "/tmp", "--hint", "novalue"], "key=value"),
    (["--class", "S", "--io", "teleport"], "--io 'teleport' is unknown"),
    (["--class", "S", "--dir", "/tmp"], "need an --io mode"),
    (["--class", "S", "--io", "posix", "--dir", "/nonexistent"], "not an existing directory"),
    (["--class", "S", "--io", "posix", "--dir", "/tmp", "--write-interval", "0"], "--write-interval '0'"),
    (["--class", "S", "--tc", "-2"], "--tc '-2'"),
    (["--class", "S", "--io", "collective", "--dir", "/tmp", "--overlap"], "--overlap writes from a thread"),
    (["--class", "S", "--overlap"], "--overlap writes from a thread"),
    (["--class", "S", "--io", "collective", "--dir", "/tmp", "--group", "2"], "--group limits ranks"),
    (["--class", "S", "--io", "posix", "--dir", "/tmp", "--group", "0"], "--group '0'"),
    (["--class", "S", "--io", "posix", "--dir", "/tmp", "--group", "2", "--overlap"], "cannot be combined"),
])
def test_bt_io_refuses_with_one_line(engine, args, phrase):
    p = subprocess.run([engine, "bt", *args], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], p.stderr


@pytest.mark.parametrize("bad,phrase", [
    ("missing", "No such file or directory: give the file pario-engine bt --keep wrote"),
    ("directory", "is a directory: give the solution file bt wrote"),
    ("symlink", "is a symbolic link: pario reads only regular files; give the file itself"),
    ("truncated", "has 4000 bytes, expected 829440 (12 dumps of class S): give the --class"),
    ("per-rank missing", ".0000: No such file or directory"),
])
def test_verify_bt_calls_a_bad_file_bad_input_not_a_failed_verification(engine, tmp_path, bad, phrase):
    """Exit 2 and one line with the fix; exit 3 is kept for numbers that fail."""
    short = tmp_path / "short"
    short.write_bytes(b"\0" * 4000)
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(short)
    path = {"missing": tmp_path / "nope", "directory": tmp_path / "dir", "symlink": tmp_path / "link",
            "truncated": short, "per-rank missing": tmp_path / "nope"}[bad]
    extra = ["--ranks", "4"] if bad == "per-rank missing" else []
    p = subprocess.run([engine, "verify-bt", str(path), "--class", "S", *extra], capture_output=True, text=True)
    lines = p.stderr.splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("pario-engine: error: verify-bt: "), p.stderr
    assert phrase in lines[0], lines[0]
    assert short.read_bytes() == b"\0" * 4000


def test_bt_explicit_grid_runs_unverified_and_converges(engine, tmp_path):
    out = tmp_path / "g.json"
    p = subprocess.run([engine, "bt", "--grid", "16", "--steps", "20", "--dt", "0.002", "--json", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "grid 16^3, 20 steps" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["verification"]["performed"] is False and doc["params"]["grid"] == 16
    assert all(x == x and 0 < x < 1e3 for x in doc["verification"]["xce"])  # finite, no blow-up


def test_bt_checks_the_file_at_every_write_interval(engine, shm_dir, tmp_path):
    """NPB's BTIO references cover I_W=5 only; at I_W=10 (the NHT-1 report's
    for N=12) the file is still checked: its last dump is the final solution,
    which must match NPB's error norm and this run's own."""
    out = tmp_path / "bt.json"
    p = subprocess.run([engine, "bt", "--class", "S", "--io", "posix", "--write-interval", "10",
                        "--dir", str(shm_dir), "--keep", "--name", "iw10.out", "--json", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "file check SUCCESSFUL: 6 dumps; the last is the verified solution" in p.stdout
    v = json.loads(out.read_text())["verification"]
    assert v["file_checked"] and v["file_ok"] and v["file_check"].startswith("last dump")
    path = shm_dir / "iw10.out"
    ok = subprocess.run([engine, "verify-bt", str(path), "--class", "S", "--write-interval", "10",
                         "--quiet"], capture_output=True, text=True)
    assert ok.returncode == 0 and "verification SUCCESSFUL" in ok.stdout, ok.stdout
    data = bytearray(path.read_bytes())
    data[-40 * 12 * 5 - 1] ^= 0x01      # an exponent bit of one value of the last dump
    path.write_bytes(bytes(data))
    bad = subprocess.run([engine, "verify-bt", str(path), "--class", "S", "--write-interval", "10",
                          "--quiet"], capture_output=True, text=True)
    assert bad.returncode != 0 and "UNSUCCESSFUL" in bad.stdout


@pytest.mark.parametrize("mode,ranks", [("full", 4), ("posix", 2)])
def test_bt_reports_the_sync_in_its_close_beside_npbs_io_figures(launcher, engine, disk_dir, tmp_path,
                                                                 mode, ranks):
    """pario's close syncs the file to storage and NPB's MPI_File_close does
    not: the NPB-rule figures keep the sync, and the same rule without it is
    printed and stored beside them, consistent with each other."""
    out = tmp_path / "r.json"
    p = run_bt(launcher, engine, ranks, "--class", "S", "--io", mode, "--dir", str(disk_dir),
               "--json", str(out))
    assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stdout + p.stderr
    io = json.loads(out.read_text())["io"]
    assert io["sync_seconds_max"] > 0
    assert 0 < io["npb_io_seconds_without_sync"] < io["npb_io_seconds"]
    assert io["npb_io_mb_per_s_without_sync"] == pytest.approx(
        io["npb_mbytes_written"] / io["npb_io_seconds_without_sync"])
    printed = {k: float(v) for k, v in re.findall(r"(I/O timing without sync|I/O rate without sync)"
                                                   r"\s*:\s*([\d.]+)", p.stdout)}
    assert printed["I/O timing without sync"] == pytest.approx(io["npb_io_seconds_without_sync"], abs=0.006)
    assert printed["I/O rate without sync"] == pytest.approx(io["npb_io_mb_per_s_without_sync"], abs=0.006)
    assert list(disk_dir.iterdir()) == []


def test_npb_s_io_figures_of_serial_count_the_rank_that_writes(launcher, engine, shm_dir, tmp_path):
    """Tester 19: with serial (rank 0 writes what it gathers), rank 1's
    near-zero 'I/O' time entered NPB's harmonic mean: an I/O time shorter
    than rank 0's own sync and a rate of 9 GB/s."""
    out = tmp_path / "b.json"
    p = run_bt(launcher, engine, 2, "--class", "S", "--io", "serial", "--dir", shm_dir, "--json", out)
    assert p.returncode == 0, p.stderr
    io = json.loads(out.read_text())["io"]
    assert io["npb_io_seconds"] >= io["sync_seconds_max"] > 0
    assert io["npb_io_rule"].startswith("NPB 3.3.1/3.4.0 over the ranks that write (serial: rank 0 alone)")
    # NPB's own figure: rank 0's time alone, the data over it
    assert io["npb_io_mb_per_s"] == pytest.approx(io["npb_mbytes_written"] / io["npb_io_seconds"], rel=1e-9)
