"""Every backend moves the same bytes: for one seed, each --api on each
layout writes files byte-identical to the posix backend's, reads them back
through itself with every byte checked (--verify, with --read-shift so a
rank reads what another wrote), and `pario-engine verify` accepts them."""

import hashlib

import pytest

BLOCK = 64 * 1024
SIZE = 48 * BLOCK  # 3 ranks x 16 blocks; per-rank files of 16 blocks
RANKS = 3
SEED = 7

# (label, --api and its own options)
VARIANTS = [
    ("stdio", ["--api", "stdio"]),
    ("stdio-8k", ["--api", "stdio", "--stdio-buffer", "8k"]),
    ("mmap", ["--api", "mmap"]),
    ("mmap-region", ["--api", "mmap", "--mmap-map", "region", "--mmap-populate"]),
    ("uring", ["--api", "uring", "--queue-depth", "4"]),
    # one system call per refill (--uring-submit-batch = depth) instead of one per request
    ("uring-registered", ["--api", "uring", "--queue-depth", "8", "--uring-register-buffers",
                          "--uring-register-files", "--uring-submit-batch", "8"]),
]

CASES = [(layout, files, "shm_dir") for layout in ("broadcast", "partitioned", "interleaved", "random")
         for files in ("shared", "per-rank")]
CASES += [("random", "shared", "disk_dir"), ("partitioned", "per-rank", "disk_dir")]


def digests(directory, name, files):
    paths = [directory / name] if files == "shared" else \
        [directory / f"{name}.{r:08d}" for r in range(RANKS)]
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths], paths


@pytest.mark.parametrize("layout,files,where", CASES, ids=["-".join(c) for c in CASES])
def test_every_backend_writes_the_posix_bytes(request, run_io, verify, layout, files, where):
    directory = request.getfixturevalue(where)
    common = ["--dir", directory, "--layout", layout, "--files", files, "--block", "64k",
              "--size", SIZE, "--iterations", 1, "--seed", SEED, "--keep", "--verify"]
    if layout == "broadcast":
        common += ["--phases", "read"]  # the file is written (untimed) through the backend
    else:
        common += ["--phases", "write,read", "--read-shift", 1]
    run_io(RANKS, *common, "--name", "posix")
    want, _ = digests(directory, "posix", files)
    for label, api in VARIANTS:
        r = run_io(RANKS, *common, "--name", label, *api)
        for phase in r.result["phases"]:
            it = phase["iterations"][0]
            assert it["verify"]["checked"] and it["verify"]["bytes"] > 0, (label, phase["name"])
        got, paths = digests(directory, label, files)
        assert got == want, label
        for stream, path in enumerate(paths):
            extra = ["--stream", str(stream)] if files == "per-rank" else []
            ok = verify(path, SEED, "--size", str(path.stat().st_size), *extra)
            assert ok.returncode == 0, (label, ok.stderr)


def test_async_requests_are_traced_and_grouped_by_rank(shm_dir, run_io):
    """An asynchronous API keeps requests in flight, yet every request's
    submit and completion are recorded, and ranks grouped per rank take
    turns (their I/O regions do not overlap)."""
    r = run_io(2, "--dir", shm_dir, "--api", "uring", "--queue-depth", 4, "--block", "64k",
               "--size", "4m", "--iterations", 1, "--trace", "--group", 1, "--group-unit", "rank")
    assert r.result["params"]["api_style"] == "async"
    assert r.result["params"]["api_options"]["queue_depth"] == 4
    assert r.result["params"]["api_options"]["submit_batch"] == 1  # the default: one request per entry
    for phase in r.result["phases"]:
        ranks = phase["iterations"][0]["ranks"]
        for rk in ranks:
            assert len(rk["calls"]) == 32 and all(0 < s <= e for s, e in rk["calls"])
        (a0, a1), (b0, b1) = sorted((rk["io_first_seconds"], rk["io_last_seconds"]) for rk in ranks)
        assert a1 <= b0, (phase["name"], ranks)
