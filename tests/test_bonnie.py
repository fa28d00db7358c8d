"""bonnie: Bonnie's six tests on a small file, read back and checked."""

import json
import subprocess

import pytest

TESTS = ["putc", "rewrite", "block_write", "getc", "block_read", "seeks"]


def bonnie(engine, *args):
    return subprocess.run([engine, "bonnie", *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("order", ["bonnie", "bonnie++"])
def test_bonnie_on_disk_with_eviction_measures_every_test_and_checks_the_data(engine, disk_dir, tmp_path,
                                                                              order):
    out = tmp_path / "b.json"
    p = bonnie(engine, "--dir", disk_dir, "--size", "6m", "--evict", "--seeks", "300", "--order", order,
               "--json", out)
    assert p.returncode == 0, p.stderr
    assert "-Per Char-" in p.stdout and "K/sec" in p.stdout  # Figure 1's shape for 8 KiB chunks
    assert "data checked" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "bonnie" and doc["status"] == "ok"
    assert doc["params"]["size_bytes"] == 6 << 20 and doc["params"]["chunk_bytes"] == 8192
    assert doc["params"]["evict"] and doc["params"]["fs_type"] != "tmpfs" and doc["params"]["order"] == order
    assert [t["name"] for t in doc["tests"]] == TESTS
    for t in doc["tests"]:
        assert t["seconds"] > 0 and t["cpu_percent"] >= 0
        if t["name"] == "seeks":
            assert t["seeks"] == 300 and t["seeks_per_s"] > 0
        else:
            assert t["bytes"] == 6 << 20 and t["bytes_per_s"] > 0
    # eviction happened before the reading tests: the block read began cold
    block_read = next(t for t in doc["tests"] if t["name"] == "block_read")
    assert block_read["cached_fraction_at_start"] < 0.5
    assert doc["verification"] == {"performed": True, "ok": True}
    assert list(disk_dir.iterdir()) == []  # the file is removed


def test_bigbonnie_chunk_prints_mb_per_s_and_rounds_the_size_to_chunks(engine, shm_dir, tmp_path):
    out = tmp_path / "b.json"
    p = bonnie(engine, "--dir", shm_dir, "--size", "1000k", "--chunk", "64k", "--seeks", "30", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "MB/s" in p.stdout and "K/sec" not in p.stdout
    assert "tmpfs: every rate here is memory speed" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["params"]["size_bytes"] == 15 * 65536  # Bonnie rounds down to whole chunks
    assert doc["verification"]["ok"]


def test_bonnie_keep_leaves_the_file_the_block_write_made(engine, shm_dir):
    p = bonnie(engine, "--dir", shm_dir, "--size", "64k", "--chunk", "8k", "--seeks", "10", "--keep")
    assert p.returncode == 0, p.stderr
    [f] = list(shm_dir.iterdir())
    data = f.read_bytes()
    assert len(data) == 65536
    # chunk 3 carries its stamp (seeks may have changed one byte in the middle of a chunk)
    assert int.from_bytes(data[3 * 8192:3 * 8192 + 8], "little") == 3


@pytest.mark.parametrize("args,phrase", [
    (["--size", "1m"], "--dir is required"),
    (["--dir", "/nonexistent/x", "--size", "1m"], "is not an existing directory"),
    (["--dir", "DIR", "--chunk", "0"], "--chunk '0' must be greater than zero"),
    (["--dir", "DIR", "--chunk", "100"], "outside 256 B to 64 MiB"),
    (["--dir", "DIR", "--size", "4k"], "smaller than one --chunk"),
    (["--dir", "DIR", "--size", "1p"], "does not fit in"),
    (["--dir", "DIR", "--seek-procs", "0"], "--seek-procs '0'"),
    (["--dir", "DIR", "--order", "iozone"], "--order 'iozone' is unknown"),
    (["--dir", "DIR", "--size", "1m", "--frob"], "unknown option '--frob'"),
])
def test_bonnie_refuses_bad_input_with_one_line_and_leaves_nothing(engine, shm_dir, tmp_path, args, phrase):
    out = tmp_path / "b.json"
    args = [str(shm_dir) if a == "DIR" else a for a in args]
    p = bonnie(engine, *args, "--json", out)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []
