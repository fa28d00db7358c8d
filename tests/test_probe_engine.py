"""`pario-engine probe` through real MPI: component rates in the right
order of magnitude, a predicted peak from the slowest component, every file
it creates removed, and every bad invocation answered with one line."""

import json
import subprocess

import pytest


def _probe(engine, launcher, ranks, directory, json_path, *extra, timeout=300):
    # a case's own --size/--memory/--ops stand instead of these (each option once)
    defaults = [w for opt, v in (("--size", "32m"), ("--memory", "128m"), ("--ops", "50"))
                if opt not in extra for w in (opt, v)]
    argv = launcher.command(ranks, [engine, "probe", "--dir", str(directory), *defaults,
                                    "--json", str(json_path), *extra])
    proc = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(),
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(json_path.read_text())


@pytest.fixture(scope="module")
def probes(engine, launcher, tmp_path_factory):
    """One 2-rank probe of /dev/shm and one of the disk, shared by the tests."""
    import os
    import shutil
    import uuid

    out = tmp_path_factory.mktemp("probe")
    dirs = {"shm": f"/dev/shm/pario-test-{uuid.uuid4().hex[:10]}",
            "disk": os.environ.get("PARIO_TEST_DISK", "/var/tmp") + f"/pario-test-{uuid.uuid4().hex[:10]}"}
    results = {}
    try:
        for kind, d in dirs.items():
            os.makedirs(d)
            proc, doc = _probe(engine, launcher, 2, d, out / f"{kind}.json")
            results[kind] = (d, proc, doc)
            assert os.listdir(d) == [], f"probe left files in {d}: {os.listdir(d)}"
        proc, doc = _probe(engine, launcher, 1, dirs["shm"], out / "one.json", "--iterations", "1",
                           "--size", "4m", "--memory", "4m")
        results["one"] = (dirs["shm"], proc, doc)
        assert os.listdir(dirs["shm"]) == []
        yield results
    finally:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


def test_document_shape(probes):
    _, _, doc = probes["disk"]
    assert doc["schema"] == "pario.result/1" and doc["command"] == "probe"
    assert doc["target"]["fs_type"] != "tmpfs" and doc["target"]["mount_point"]
    assert doc["system"]["kernel_release"]
    c = doc["components"]
    assert len(c["memory_copy"]["per_rank_best_mib_per_s"]) == 2
    for key in ("aggregate_mib_per_s",):
        assert len(c["memory_copy"][key]["values"]) == 3
    assert c["request_reply"]["nearest"]["to_rank"] == 1
    assert c["request_reply"]["nearest"]["same_host"] is True
    assert len(c["stream_read"]["iterations"]) == 3
    assert c["stream_write"]["preallocated"] is True  # ext4 and tmpfs both reserve space
    for it in c["stream_read"]["iterations"]:
        # the cache was kept out of the way, and the document says how
        assert it["cache_method"] in ("posix_fadvise DONTNEED", "O_DIRECT")
        assert it["cache_method"] == "O_DIRECT" or it["cache_resident_fraction"] < 0.01


def _sys_read_ahead(path):
    """read_ahead_kb of the device behind `path`, in bytes, as /sys says it
    (the disk's own queue for a partition), or None."""
    import os

    st = os.stat(path)
    base = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    for q in (f"{base}/queue/read_ahead_kb", f"{base}/../queue/read_ahead_kb"):
        if os.path.exists(q):
            return int(open(q).read()) * 1024
    return None


def test_the_devices_read_ahead_window_is_recorded(probes):
    """The largest read-ahead window of the disk's device (the model sizes a
    read's first window with it); tmpfs has no device, so none."""
    d, _, doc = probes["disk"]
    want = _sys_read_ahead(d)
    rec = doc["components"]["read_ahead"]
    if want is None:  # a disk directory on a file system without a block device
        assert rec is None
    else:
        assert rec["max_bytes"] == want and "read_ahead_kb" in rec["source"]
    assert probes["shm"][2]["components"]["read_ahead"] is None


def test_read_passes_count_the_devices_requests(probes):
    """Around each read pass rank 0 reads the device's counters: requests
    and bytes per trial (the whole device's, so at least the pass's own on
    a quiet disk); tmpfs has no device to ask."""
    d, _, doc = probes["disk"]
    c = doc["components"]
    for key in ("stream_read", "two_streams", "two_interleaved", "four_streams", "four_interleaved",
                "two_same"):
        dev = c[key]["device_reads"]
        if _sys_read_ahead(d) is None:
            assert dev is None
            continue
        assert len(dev["requests"]) == len(dev["bytes"]) == len(c[key]["seconds"]["values"]), key
        assert all(n >= 1 for n in dev["requests"]) and all(b >= 4096 for b in dev["bytes"]), key
        # the counters are the whole device's: each trial says whether its
        # bytes were the pass's file's, within the tolerance (tester 6, 2)
        size = c[key]["bytes"]  # the file, or the four readers' quarters
        assert dev["file_bytes"] == size and dev["own_tolerance"] == 0.05, key
        assert dev["own"] == [abs(b - size) <= 0.05 * size for b in dev["bytes"]], key
    assert "device_reads" not in c["two_writers"]  # a write pass
    shm = probes["shm"][2]["components"]
    assert shm["stream_read"]["device_reads"] is None and shm["two_interleaved"]["device_reads"] is None


def test_two_ranks_print_their_one_pair_once(probes):
    """Tester 3, item 5: with 2 ranks the nearest and the farthest rank are
    rank 1 both times: one line, not two rows of one pair."""
    _, proc, doc = probes["disk"]
    rr = doc["components"]["request_reply"]
    assert rr["nearest"]["to_rank"] == rr["farthest"]["to_rank"] == 1
    lines = [l for l in proc.stdout.splitlines() if "request/reply 4 KiB" in l]
    assert len(lines) == 1 and "0 <-> 1 (nearest = farthest)" in lines[0], proc.stdout


def test_rows_for_the_model(probes):
    """The rows a probed machine's host, messages, token and collective
    parameters come from (docs/model.md), with sane magnitudes."""
    for kind in ("shm", "disk"):
        d, _, doc = probes[kind]
        c = doc["components"]
        cached = c["stream_read_cached"]
        assert cached["bytes"] == 32 << 20 and cached["block_bytes"] == 1 << 20
        assert cached["cache_resident_fraction"] >= 0.99  # it was read from the page cache
        assert len(cached["seconds"]["values"]) == 3 and cached["mib_per_s"]["best"] > 100
        for row in ("two_writers", "two_files"):  # a half each of one file, and a file each
            w = c[row]
            assert (w["writers"], w["bytes"], w["block_bytes"], w["fsync"]) == (2, 32 << 20, 1 << 20, True)
            assert w["best_mib_per_s"] == pytest.approx(32 / w["seconds"]["best"]) and w["best_mib_per_s"] > 5
            assert len(w["seconds"]["values"]) == 3 and "device_reads" not in w, row
        two = c["two_streams"]
        assert (two["readers"], two["bytes"], two["block_bytes"]) == (2, 32 << 20, 1 << 20)
        assert two["best_mib_per_s"] == pytest.approx(32 / two["seconds"]["best"]) and two["best_mib_per_s"] > 10
        # the stream's last eighth from storage, and the stream into a new file
        short = c["stream_read_short"]
        assert (short["bytes"], short["block_bytes"]) == (4 << 20, 1 << 20)
        assert len(short["seconds"]["values"]) == 3
        assert short["best_mib_per_s"] == pytest.approx(4 / short["seconds"]["best"])
        assert short["seconds"]["best"] > 0
        new = c["stream_write_new"]
        assert (new["bytes"], new["block_bytes"], new["fsync"], new["preallocated"]) == (
            32 << 20, 1 << 20, True, False)
        assert len(new["seconds"]["values"]) == 3
        assert new["best_mib_per_s"] == pytest.approx(32 / new["seconds"]["best"]) and new["best_mib_per_s"] > 5
        four = c["four_streams"]  # a quarter of the 32 MiB each, four at once
        assert (four["readers"], four["bytes"], four["block_bytes"]) == (4, 32 << 20, 1 << 20)
        assert len(four["seconds"]["values"]) == 3 and four["best_mib_per_s"] > 10
        assert four["best_mib_per_s"] == pytest.approx(32 / four["seconds"]["best"])
        # the same four readers, every fourth call each of the quarters' bytes
        four_il = c["four_interleaved"]
        assert (four_il["readers"], four_il["bytes"], four_il["block_bytes"]) == (4, 32 << 20, 1 << 20)
        assert len(four_il["seconds"]["values"]) == 3 and four_il["best_mib_per_s"] > 10
        assert four_il["best_mib_per_s"] == pytest.approx(32 / four_il["seconds"]["best"])
        same = c["two_same"]  # both read all 32 MiB: the file's bytes over the time
        assert (same["readers"], same["bytes"], same["block_bytes"]) == (2, 32 << 20, 1 << 20)
        assert len(same["seconds"]["values"]) == 3 and same["best_mib_per_s"] > 10
        assert same["best_mib_per_s"] == pytest.approx(32 / same["seconds"]["best"])
        inter = c["two_interleaved"]
        assert (inter["readers"], inter["bytes"], inter["block_bytes"]) == (2, 32 << 20, 1 << 20)
        assert len(inter["seconds"]["values"]) == 3
        assert inter["best_mib_per_s"] == pytest.approx(32 / inter["seconds"]["best"])
        assert inter["best_mib_per_s"] > 10
        cb = c["collective_mpiio"]["cb_buffer_size"]
        assert cb is None or cb > 0  # ROMIO under Open MPI does not report it
        m = c["messages"]
        assert (m["from_rank"], m["to_rank"], m["bytes"], m["block_bytes"]) == (1, 0, 32 << 20, 1 << 20)
        assert m["best_mib_per_s"] == pytest.approx(32 / m["seconds"]["best"])
        assert m["best_mib_per_s"] > 5
        t = c["token_pass"]
        assert t["ranks"] == 2 and t["cores"] == doc["mpi"]["hosts"][0]["cores"]
        # a hand-over on one host: microseconds idle, still under 10 ms on a loaded machine
        assert 0 < t["seconds"]["best"] < 1e-2 and 0 < t["crowded_seconds"]["best"] < 1e-1
        busy = c["busy_handover"]
        assert busy["busy_threads"] == doc["mpi"]["hosts"][0]["cores"] and busy["waiters"] == 2
        # ranks waiting by yielding beside a busy thread on every core: far slower
        # than the token's hand-over between idle ranks, and under a second
        assert len(busy["seconds"]["values"]) == 3
        assert t["seconds"]["best"] < busy["seconds"]["best"] < 1.0
        # ranks 0 and 1 pinned to one core: every trial taken (this host lets a
        # rank move), each hand-over a switch on that core: microseconds, far
        # below the wait beside a rank that does not yield
        one_core = t["shared_core_seconds"]
        # timed as the slope between a short ring and a long one; a trial
        # whose rings' ticks left no difference gives no sample
        assert t["shared_core_timing"] == "slope"
        assert 1 <= len(one_core["values"]) <= 3
        assert 0 < one_core["best"] < busy["seconds"]["best"]
        coll = c["collective_mpiio"]
        assert coll["implementation"].startswith("romio") and coll["aggregators"] == 2
        assert coll["calls"] == 50
        for which in ("write_seconds", "read_seconds"):
            assert 0 < coll[which]["best"] < 1e-1 and len(coll[which]["values"]) == 3
    _, _, one = probes["one"]
    c = one["components"]
    assert c["messages"] is None and c["token_pass"] is None  # one rank: nothing to pass
    assert c["busy_handover"] is None  # one rank: no one to hand over to
    assert c["two_streams"] is None and c["two_writers"] is None and c["two_interleaved"] is None
    assert c["two_files"] is None
    assert c["four_streams"] is None and c["four_interleaved"] is None and c["two_same"] is None
    # 4 MiB in 1 MiB calls: an eighth is less than one call, so no short read
    assert c["stream_read_short"] is None and c["stream_write_new"]["bytes"] == 4 << 20
    assert c["collective_mpiio"]["aggregators"] == 1 and c["collective_mpiio"]["write_seconds"]["best"] > 0


def test_magnitudes_on_one_host(probes):
    for kind in ("shm", "disk"):
        c = probes[kind][2]["components"]
        # a barrier on one host: microseconds, far below a millisecond
        assert 0 < c["barrier_seconds"]["best"] < 1e-4, kind
        # open + a byte + close is a system call affair: well under 10 ms
        assert 0 < c["open_write_byte_close_seconds"]["best"] < 1e-2
        assert 0 < c["open_read_byte_close_seconds"]["best"] < 1e-2
        # a byte-range lock and its unlock: two fcntl calls, microseconds
        assert 0 < c["byte_range_lock_seconds"]["best"] < 1e-3, kind
        # MPI_File_open and close of every rank: the library's own, under a second
        assert 0 < c["collective_mpiio"]["open_close_seconds"]["best"] < 1, kind
        assert len(c["byte_range_lock_seconds"]["values"]) == len(c["open_read_byte_close_seconds"]["values"])
        assert c["metadata"]["creates_per_s"]["best"] > 100
        assert c["request_reply"]["farthest"]["best_mib_per_s"] > 0
    disk = probes["disk"][2]["components"]
    # copying memory is far above writing a stream through to the disk
    assert disk["memory_copy"]["aggregate_mib_per_s"]["best"] > 1.5 * disk["stream_write"]["mib_per_s"]["best"]


def test_predicted_peak_is_slowest_component_times_parallelism(probes):
    for kind in ("shm", "disk"):
        doc = probes[kind][2]
        c, peak = doc["components"], doc["predicted_peak"]
        for phase in ("write", "read"):
            stream = c[f"stream_{phase}"]["mib_per_s"]["best"]
            memory = c["memory_copy"]["aggregate_mib_per_s"]["best"]
            p = peak[phase]
            assert p["mib_per_s"] == pytest.approx(min(stream * doc["params"]["servers"], memory))
            assert p["limited_by"] == ("storage" if stream <= memory else "memory copy")
            assert p["mib_per_s"] == pytest.approx(p["component_mib_per_s"] * p["parallelism"])
    assert any("tmpfs" in w for w in probes["shm"][2]["warnings"])
    assert not any("tmpfs" in w for w in probes["disk"][2]["warnings"])


def test_servers_multiplies_the_storage_term(engine, launcher, shm_dir, tmp_path):
    _, doc = _probe(engine, launcher, 1, shm_dir, tmp_path / "p.json", "--servers", "4",
                    "--iterations", "1")
    peak = doc["predicted_peak"]["write"]
    assert peak["storage_term_mib_per_s"] == pytest.approx(
        4 * doc["components"]["stream_write"]["mib_per_s"]["best"])
    assert doc["components"]["request_reply"] is None
    assert any("one rank" in w for w in doc["warnings"])
    assert list(shm_dir.iterdir()) == []


def test_a_foreign_file_with_the_probes_name_is_never_touched(engine, launcher, shm_dir, tmp_path):
    # the stream file, rank 1's file of the two writers of a file each (2
    # MiB: a half of 1 MiB each), a metadata file
    for index in ("00000000", "00000003", "00000004"):
        foreign = shm_dir / f"clash.{index}"
        foreign.write_text("not pario's")
        argv = launcher.command(2, [engine, "probe", "--dir", str(shm_dir), "--name", "clash",
                                    "--size", "2m", "--memory", "1m", "--ops", "5",
                                    "--iterations", "1", "--json", str(tmp_path / "x.json")])
        p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(),
                           timeout=120)
        assert p.returncode == 3
        assert "already exists" in p.stderr and str(foreign) in p.stderr
        assert foreign.read_text() == "not pario's"
        assert sorted(f.name for f in shm_dir.iterdir()) == [foreign.name]
        assert not (tmp_path / "x.json").exists()
        foreign.unlink()


CASES = [
    ("no dir", ["--size", "1m"], "--dir is required"),
    ("zero size", ["--size", "0"], "--size '0'"),
    ("bad unit", ["--size", "3x"], "--size '3x'"),
    ("block not 4k", ["--block", "1000"], "multiple of 4k"),
    ("size not whole blocks", ["--size", "1m", "--block", "768k"], "whole number of --block"),
    ("zero iterations", ["--iterations", "0"], "--iterations '0'"),
    ("too many iterations", ["--iterations", "101"], "must be a whole number from 1 to 100"),
    ("ops not a number", ["--ops", "many"], "--ops 'many'"),
    ("zero servers", ["--servers", "0"], "--servers '0'"),
    ("zero memory", ["--memory", "0"], "--memory '0'"),
    # tester 8, item 17: 1 byte was accepted, and its 47.7 MiB/s became the predicted peak
    ("memory too small to time", ["--memory", "1"], "too small to time a memory copy: use at least 1m"),
    ("name with slash", ["--name", "a/b"], "plain file name"),
    ("json dir missing", ["--json", "/nonexistent-dir/p.json"], "does not exist"),
    ("unknown option", ["--turbo"], "unknown option '--turbo'"),
    ("missing value", ["--size"], "--size needs a value"),
    ("stray argument", ["extra"], "unexpected argument 'extra'"),
    ("size beyond free space", ["--size", "1p"], "free"),
    ("memory beyond the node", ["--memory", "16g"], "more than half of its memory"),
]


@pytest.mark.parametrize("label,args,phrase", CASES, ids=[c[0] for c in CASES])
def test_bad_probe_invocations(engine, shm_dir, tmp_path, label, args, phrase):
    json_path = tmp_path / "p.json"
    base = [] if label == "no dir" else ["--dir", str(shm_dir)]
    extra = [] if "--json" in args else ["--json", str(json_path)]
    p = subprocess.run([engine, "probe", *base, *args, *extra], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pario-engine: error:"), p.stderr
    assert phrase in lines[0]
    assert not json_path.exists()
    assert list(shm_dir.iterdir()) == []


def test_missing_and_file_dir(engine, shm_dir):
    (shm_dir / "f").write_text("")
    for d, phrase in ((shm_dir / "nope", "create it first"), (shm_dir / "f", "is not an existing directory")):
        p = subprocess.run([engine, "probe", "--dir", str(d)], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2 and phrase in p.stderr and len(p.stderr.strip().splitlines()) == 1


def _short_share(read_ahead, block, file_bytes):
    """The probe's short share for a device window: the window in whole
    calls (at least one), where four of them are less than the file."""
    if not read_ahead:
        return None
    share = max(block, read_ahead // block * block)
    return share if 4 * share < file_bytes else None


def test_four_readers_of_short_shares(probes, engine, launcher, tmp_path):
    """Four readers again, each one device read-ahead window of the file's
    last four (the short shares' race, docs/model.md): a row with its bytes
    and the device's requests (the device reads those bytes, not the
    file's); none on tmpfs (no window) nor where four windows are the whole
    file or more (the four quarters are then those shares)."""
    import os

    for kind in ("shm", "disk"):
        d, _, doc = probes[kind]
        want = _short_share(_sys_read_ahead(d) if kind == "disk" else None, 1 << 20, 32 << 20)
        row = doc["components"]["four_short_streams"]
        if want is None:
            assert row is None, kind
        else:
            assert (row["readers"], row["bytes"], row["block_bytes"]) == (4, 4 * want, 1 << 20)
    # a file four windows exceed, on the disk: the row, whatever the window
    d = os.environ.get("PARIO_TEST_DISK", "/var/tmp")
    window = _sys_read_ahead(d)
    size = max(64 << 20, 8 * window) if window else 64 << 20
    if window is None or size > 256 << 20:
        pytest.skip(f"{d}: no block device read-ahead window to size short shares from (or one too large)")
    work = os.path.join(d, f"pario-test-short-{os.getpid()}")
    os.makedirs(work)
    try:
        proc, doc = _probe(engine, launcher, 2, work, tmp_path / "short.json", "--size", f"{size >> 20}m",
                           "--iterations", "2", "--memory", "16m", "--ops", "10")
        assert os.listdir(work) == []
    finally:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    c = doc["components"]
    share = _short_share(window, 1 << 20, size)
    row = c["four_short_streams"]
    assert (row["readers"], row["bytes"], row["block_bytes"]) == (4, 4 * share, 1 << 20)
    assert len(row["seconds"]["values"]) == 2 and row["seconds"]["best"] > 0
    assert row["best_mib_per_s"] == pytest.approx(4 * share / (1 << 20) / row["seconds"]["best"])
    dev = row["device_reads"]
    assert dev["file_bytes"] == 4 * share  # the device reads the pass's bytes, not the file's
    assert dev["own"] == [abs(b - 4 * share) <= 0.05 * 4 * share for b in dev["bytes"]]
    assert "four readers of" in proc.stdout and "shares (the file's last)" in proc.stdout


def test_four_readers_read_the_quarters_whole_calls(engine, launcher, tmp_path):
    """Tester 10, item 4: a file that is not four whole calls (10 MiB in 1
    MiB calls) gives each of the four readers two calls, 8 MiB in all:
    their rows' bytes and the device bytes their trials are judged by are
    those 8 MiB, not the file's 10, where the two ranks' rows read all 10."""
    import os
    import shutil
    import uuid

    d = os.environ.get("PARIO_TEST_DISK", "/var/tmp") + f"/pario-test-{uuid.uuid4().hex[:10]}"
    os.makedirs(d)
    try:
        _, doc = _probe(engine, launcher, 2, d, tmp_path / "odd.json", "--size", "10m", "--memory", "4m",
                        "--iterations", "1")
        assert os.listdir(d) == []
    finally:
        shutil.rmtree(d, ignore_errors=True)
    c = doc["components"]
    assert c["two_streams"]["bytes"] == c["two_interleaved"]["bytes"] == 10 << 20
    for key in ("four_streams", "four_interleaved"):
        assert c[key]["bytes"] == 8 << 20 and c[key]["readers"] == 4, key
        dev = c[key]["device_reads"]
        assert dev is None or dev["file_bytes"] == 8 << 20, key
    assert c["two_streams"]["device_reads"] is None or c["two_streams"]["device_reads"]["file_bytes"] == 10 << 20
