"""A figure read from a cache says so.  On the disk, a file smaller than
memory read back without --evict is flagged and was measurably resident in
the page cache; with --evict it was not, and the read is slower.  The
device behind the file counts what each read phase took from it
(device_reads: requests and bytes): an evicted read all of the file, a
cached one (nearly) nothing, tmpfs has no device to count."""

MIB = 1 << 20



def cache_warning(result):
    return [w for w in result["warnings"] if "page cache" in w and "likely" in w]


def test_disk_read_without_evict_is_flagged_and_cached(disk_dir, run_io):
    r = run_io(2, "--dir", disk_dir, "--layout", "partitioned", "--block", "1m", "--size", "64m",
               "--iterations", 2)
    assert r.result["target"]["fs_type"] != "tmpfs"
    assert cache_warning(r.result)
    for it in r.phase("read")["iterations"]:
        assert it["cache_resident_fraction"] > 0.9
        # other I/O on the shared device may add a little, never the file
        assert it["device_reads"]["bytes"] < 32 * MIB, it["device_reads"]
    for it in r.phase("write")["iterations"]:
        assert it["device_reads"] is None


def test_disk_read_with_evict_comes_from_the_device(disk_dir, run_io):
    r = run_io(2, "--dir", disk_dir, "--layout", "partitioned", "--block", "1m", "--size", "64m",
               "--iterations", 2, "--evict")
    assert not cache_warning(r.result)
    for it in r.phase("read")["iterations"]:
        assert it["cache_resident_fraction"] < 0.1
        dev = it["device_reads"]
        # the whole 64 MiB came from the device, in requests of at least a page
        assert dev["bytes"] >= 64 * MIB and 1 <= dev["requests"] <= dev["bytes"] // 4096, dev


def test_evicted_read_is_slower_than_cached_read_in_one_run(disk_dir, run_io):
    """Same file, same minute: cached then evicted reads, as a ratio."""
    args = ["--dir", disk_dir, "--layout", "partitioned", "--block", "1m", "--size", "256m",
            "--phases", "read", "--iterations", 3]
    cached = run_io(2, *args)
    evicted = run_io(2, *args, "--evict")
    fast = cached.phase("read")["summary"]["median_mib_per_s"]
    slow = evicted.phase("read")["summary"]["median_mib_per_s"]
    assert slow < fast, (slow, fast)


def test_tmpfs_is_always_flagged(shm_dir, run_io):
    r = run_io(1, "--dir", shm_dir, "--layout", "partitioned", "--block", "64k", "--size", "1m",
               "--iterations", 1, "--direct", "--evict")
    text = " ".join(r.result["warnings"])
    assert [it["device_reads"] for it in r.phase("read")["iterations"]] == [None]
    assert "tmpfs" in text and "O_DIRECT" in text and "--evict has no effect" in text
