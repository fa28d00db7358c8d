"""The layout changes who writes, not what: files written by 1, 3 and 4
ranks are byte-identical for one seed, and `verify` accepts them and names
the offset of any damage."""

import hashlib
import os

import pytest

BLOCK = 64 * 1024
SIZE = 48 * BLOCK  # divisible by 1, 3 and 4 ranks x 64 KiB


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_kept(run_io, directory, ranks, layout, name, seed=42, files="shared"):
    run_io(ranks, "--dir", directory, "--layout", layout, "--block", "64k", "--size", SIZE,
           "--phases", "write", "--iterations", 1, "--keep", "--name", name, "--seed", seed,
           "--files", files)
    return directory / name


@pytest.mark.parametrize("where", ["shm_dir", "disk_dir"])
def test_partitioned_interleaved_random_files_identical_for_1_3_4_ranks(request, where, run_io, verify):
    directory = request.getfixturevalue(where)
    digests = {}
    for layout in ("partitioned", "interleaved", "random"):
        for ranks in (1, 3, 4):
            path = write_kept(run_io, directory, ranks, layout, f"{layout}-{ranks}")
            assert path.stat().st_size == SIZE
            digests[(layout, ranks)] = digest(path)
            ok = verify(path, 42)
            assert ok.returncode == 0, ok.stderr
            assert f"{SIZE} bytes match seed 42, iteration 0" in ok.stdout
    assert len(set(digests.values())) == 1, digests


def test_other_seed_gives_other_bytes(shm_dir, run_io, verify):
    a = write_kept(run_io, shm_dir, 2, "partitioned", "a", seed=1)
    b = write_kept(run_io, shm_dir, 2, "partitioned", "b", seed=2)
    assert digest(a) != digest(b)
    assert verify(a, 2).returncode != 0


def test_verify_names_offset_of_flipped_byte(shm_dir, run_io, verify):
    path = write_kept(run_io, shm_dir, 4, "interleaved", "flip")
    copy = shm_dir / "flip-copy"
    data = bytearray(path.read_bytes())
    data[123457] ^= 0x40
    copy.write_bytes(bytes(data))
    bad = verify(copy, 42, "--iteration", "0", "--size", str(SIZE))  # a copy has no recorded length
    assert bad.returncode != 0
    assert "first wrong byte at offset 123457" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert verify(path, 42).returncode == 0  # the original is untouched


def test_verify_rejects_truncation_hole_and_misplaced_block(shm_dir, run_io, verify):
    path = write_kept(run_io, shm_dir, 3, "partitioned", "damage")
    good = path.read_bytes()

    short = shm_dir / "short"
    short.write_bytes(good[:-BLOCK])
    r = verify(short, 42, "--size", str(SIZE))
    assert r.returncode != 0 and "truncated" in r.stderr

    hole = shm_dir / "hole"
    data = bytearray(good)
    data[5 * BLOCK:6 * BLOCK] = bytes(BLOCK)
    hole.write_bytes(bytes(data))
    r = verify(hole, 42, "--size", str(SIZE))
    assert r.returncode != 0 and f"offset {5 * BLOCK}" in r.stderr

    swapped = shm_dir / "swapped"
    data = bytearray(good)
    data[2 * BLOCK:3 * BLOCK], data[7 * BLOCK:8 * BLOCK] = good[7 * BLOCK:8 * BLOCK], good[2 * BLOCK:3 * BLOCK]
    swapped.write_bytes(bytes(data))
    r = verify(swapped, 42, "--size", str(SIZE))
    assert r.returncode != 0
    offset = int(r.stderr.split("offset ")[1].split()[0])
    assert 2 * BLOCK <= offset < 2 * BLOCK + 8  # inside the stamp of the first moved block


def test_per_rank_files_each_verify_with_their_stream(shm_dir, run_io, verify):
    run_io(3, "--dir", shm_dir, "--layout", "interleaved", "--files", "per-rank", "--block", "64k",
           "--size", SIZE, "--phases", "write", "--iterations", 2, "--keep", "--name", "pr",
           "--seed", 9)
    files = sorted(shm_dir.glob("pr.*"))
    assert [f.name for f in files] == ["pr.00000000", "pr.00000001", "pr.00000002"]
    for rank, f in enumerate(files):
        assert f.stat().st_size == SIZE // 3
        r = verify(f, 9, "--stream", str(rank))
        assert r.returncode == 0, r.stderr
        assert "iteration 1" in r.stdout  # the last iteration's data stays
    assert verify(files[1], 9, "--stream", "0").returncode != 0


def test_in_run_verify_checks_every_byte_of_write_and_shifted_read(shm_dir, run_io):
    r = run_io(4, "--dir", shm_dir, "--layout", "partitioned", "--block", "64k", "--size", SIZE,
               "--iterations", 2, "--verify", "--read-shift", 1)
    for phase in ("write", "read"):
        for it in r.phase(phase)["iterations"]:
            assert it["verify"]["checked"] and it["verify"]["bytes"] == SIZE
    assert r.result["verification"]["ok"] and r.result["verification"]["bytes_checked"] == 4 * SIZE
    assert os.listdir(shm_dir) == []  # the engine removed what it created


def test_result_document_follows_the_timing_rule(shm_dir, run_io):
    r = run_io(3, "--dir", shm_dir, "--layout", "interleaved", "--block", "64k", "--size", SIZE,
               "--iterations", 3)
    doc = r.result
    assert doc["schema"] == "pario.result/1" and doc["status"] == "ok"
    assert doc["mpi"]["ranks"] == 3 and doc["target"]["fs_type"] == "tmpfs"
    assert doc["params"]["calls_per_rank"] == SIZE // BLOCK // 3
    for phase in doc["phases"]:
        assert len(phase["iterations"]) == 3
        for it in phase["iterations"]:
            assert it["bytes"] == SIZE
            assert len(it["ranks"]) == 3
            longest = max(rk["total_seconds"] for rk in it["ranks"])
            assert it["seconds"] == pytest.approx(longest)
            assert it["mib_per_s"] == pytest.approx(SIZE / 2**20 / it["seconds"])
            for rk in it["ranks"]:
                parts = rk["open_seconds"] + rk["io_seconds"] + rk["fsync_seconds"] + rk["close_seconds"]
                assert 0 <= parts <= rk["total_seconds"] + 1e-9
                assert rk["bytes"] == SIZE // 3
        rates = [it["mib_per_s"] for it in phase["iterations"]]
        assert phase["summary"]["best_mib_per_s"] == pytest.approx(max(rates))
    write = r.phase("write")["iterations"][0]["ranks"][0]
    assert write["fsync_seconds"] >= 0 and doc["params"]["fsync"] is True
    assert any("tmpfs" in w for w in doc["warnings"])


def test_broadcast_moves_size_times_ranks_and_prepares_its_own_file(shm_dir, run_io):
    r = run_io(4, "--dir", shm_dir, "--layout", "broadcast", "--phases", "read", "--block", "64k",
               "--size", "2m", "--iterations", 2, "--verify")
    for it in r.phase("read")["iterations"]:
        assert it["bytes"] == 4 * 2 * 2**20
        assert all(rk["bytes"] == 2 * 2**20 for rk in it["ranks"])
    assert os.listdir(shm_dir) == []


def test_verify_refuses_a_fifo_without_waiting_on_it(engine, tmp_path):
    """`verify --file` of a FIFO: refused before the open that would wait
    for a writer forever (tester 2, 25t); a device as before."""
    import subprocess

    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        p = subprocess.run([engine, "verify", "--file", str(path), "--seed", "1", "--size", "1m"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and p.stderr == (
            f"pario-engine: error: --file {path} is not a regular file (a FIFO, a device or a "
            "socket): give a file pario-engine io wrote\n"), p.stderr
