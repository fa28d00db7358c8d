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


@pytest.mark.parametrize("order,fsync_after_reads,eof_read", [("bonnie", False, 1), ("bonnie++", True, 0)])
def test_bonnie_call_counts_show_each_programs_timed_calls(engine, shm_dir, tmp_path, order, fsync_after_reads,
                                                           eof_read):
    """What each test did inside its time, counted by the engine: one
    8 KiB call per chunk, no seek to the start (both programs seek before
    their clock), a close ending every test; fsync ends every writing
    test, and every test under bonnie++'s rules (its Close()); Bray's
    block read and rewrite read on until read() says 0, bonnie++'s read
    exactly the chunks."""
    out = tmp_path / "b.json"
    p = bonnie(engine, "--dir", shm_dir, "--size", "1m", "--seeks", "200", "--seek-procs", "4",
               "--order", order, "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["params"]["fsync_after_reads"] is fsync_after_reads
    calls = {t["name"]: t["calls"] for t in doc["tests"]}
    sync = int(fsync_after_reads)
    chunks = (1 << 20) // 8192
    assert calls["block_write"] == {"read": 0, "write": chunks, "lseek": 0, "fsync": 1, "close": 1}
    assert calls["rewrite"] == {"read": chunks + eof_read, "write": chunks, "lseek": chunks, "fsync": 1, "close": 1}
    assert calls["block_read"] == {"read": chunks + eof_read, "write": 0, "lseek": 0, "fsync": sync, "close": 1}
    assert calls["putc"]["fsync"] == 1 and calls["getc"]["fsync"] == sync
    seeks = calls["seeks"]  # each seeker: lseek + read per seek, lseek + write on its 1st, 11th, ...
    assert seeks["read"] == 200 and seeks["lseek"] == 200 + seeks["write"] and 20 <= seeks["write"] <= 23
    assert seeks["close"] == 4 and seeks["fsync"] == 4 * sync


def test_bonnie_char_size_runs_putc_and_getc_on_the_first_bytes_only(engine, disk_dir, tmp_path):
    """bonnie++'s -f size: the per-character tests cover the file's first
    bytes (rounded to chunks), everything else the whole file, and getc's
    byte sum still checks what the block write and rewrite left there."""
    out = tmp_path / "b.json"
    p = bonnie(engine, "--dir", disk_dir, "--size", "4m", "--char-size", "1001k", "--order", "bonnie++",
               "--seeks", "50", "--evict", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "putc/getc on the first 1000 KiB" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["params"]["char_size_bytes"] == 125 * 8192
    size = {t["name"]: t.get("bytes") for t in doc["tests"]}
    assert size == {"putc": 125 * 8192, "getc": 125 * 8192, "block_write": 4 << 20, "rewrite": 4 << 20,
                    "block_read": 4 << 20, "seeks": None}
    assert doc["verification"]["ok"]
    assert list(disk_dir.iterdir()) == []


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
    (["--dir", "DIR", "--size", "1m", "--char-size", "1m"], "--char-size needs --order bonnie++"),
    (["--dir", "DIR", "--size", "1m", "--char-size", "2m", "--order", "bonnie++"], "--char-size is larger"),
    (["--dir", "DIR", "--size", "1m", "--char-size", "4k", "--order", "bonnie++"], "--char-size is smaller"),
    (["--dir", "DIR", "--size", "1m", "--char-size", "lots", "--order", "bonnie++"], "--char-size 'lots'"),
    (["--dir", "DIR", "--size", "1m", "--frob"], "unknown option '--frob'"),
])
def test_bonnie_refuses_bad_input_with_one_line_and_leaves_nothing(engine, shm_dir, tmp_path, args, phrase):
    out = tmp_path / "b.json"
    args = [str(shm_dir) if a == "DIR" else a for a in args]
    p = bonnie(engine, *args, "--json", out)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []
