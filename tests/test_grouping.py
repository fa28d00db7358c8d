"""Grouped runs never have more than G ranks inside the I/O region at
once, checked from the per-rank timestamps the engine records (one clock,
CLOCK_MONOTONIC, shared by every process of this node)."""

import os

import pytest


def max_overlap(intervals):
    """Most intervals open at one instant ([start, end), ends first on ties)."""
    events = sorted([(s, 1) for s, e in intervals] + [(e, -1) for s, e in intervals],
                    key=lambda x: (x[0], x[1]))
    depth = best = 0
    for _, step in events:
        depth += step
        best = max(best, depth)
    return best


def call_intervals(iteration):
    return [tuple(c) for rk in iteration["ranks"] for c in rk["calls"]]


@pytest.mark.parametrize("group", [1, 2, 3])
def test_per_call_token_keeps_at_most_g_calls_in_flight(shm_dir, run_io, group):
    r = run_io(6, "--dir", shm_dir, "--layout", "interleaved", "--block", "16k", "--size", "3m",
               "--group", group, "--trace", "--iterations", 2)
    for phase in ("write", "read"):
        for it in r.phase(phase)["iterations"]:
            calls = call_intervals(it)
            assert len(calls) == 3 * 2**20 // (16 * 1024)
            assert max_overlap(calls) <= group


def test_group_one_serialises_calls_in_ring_order(shm_dir, run_io):
    r = run_io(3, "--dir", shm_dir, "--layout", "partitioned", "--block", "64k", "--size", "768k",
               "--group", 1, "--trace", "--iterations", 1, "--phases", "write")
    it = r.phase("write")["iterations"][0]
    # ring order: rank 0 call 0, rank 1 call 0, rank 2 call 0, rank 0 call 1, ...
    order = sorted((c[0], rk["rank"]) for rk in it["ranks"] for c in rk["calls"])
    assert [rank for _, rank in order] == [0, 1, 2] * 4


def test_per_rank_token_keeps_at_most_g_ranks_in_their_share(shm_dir, run_io):
    r = run_io(6, "--dir", shm_dir, "--layout", "partitioned", "--block", "64k", "--size", "6m",
               "--group", 2, "--group-unit", "rank", "--iterations", 2)
    for phase in ("write", "read"):
        for it in r.phase(phase)["iterations"]:
            regions = [(rk["io_first_seconds"], rk["io_last_seconds"]) for rk in it["ranks"]]
            assert max_overlap(regions) <= 2
    assert r.result["params"]["group"] == 2 and r.result["params"]["group_unit"] == "rank"


def test_ungrouped_ranks_do_overlap(shm_dir, run_io):
    """The check above can fail: without grouping, regions do overlap.

    Two ranks on the two cores, each with 32 MiB to read, in up to three
    iterations: under a heavily loaded machine the scheduler may run one
    rank's whole share inside one time slice, so one overlapping iteration
    is the claim, not every one."""
    r = run_io(2, "--dir", shm_dir, "--layout", "partitioned", "--block", "64k", "--size", "64m",
               "--iterations", 3, "--phases", "read")
    overlaps = [max_overlap([(rk["io_first_seconds"], rk["io_last_seconds"]) for rk in it["ranks"]])
                for it in r.phase("read")["iterations"]]
    assert max(overlaps) == 2


@pytest.mark.parametrize("api", ["mpiio", "hdf5"])
def test_per_rank_token_with_a_collective_open_backend_takes_turns_and_ends(disk_dir, run_io,
                                                                            api):
    """mpiio/hdf5 open, sync and agree on failures collectively: a rank
    holding its whole share's token once waited in MPI_File_sync for a
    rank that waited for the token (tester 6, item 8).  The turns end
    with the calls, so the run finishes, the file verifies, and no two
    ranks' calls overlap."""
    r = run_io(3, "--dir", disk_dir, "--api", api, "--layout", "interleaved", "--block", "8k",
               "--size", "96k", "--group", 1, "--group-unit", "rank", "--trace",
               "--iterations", 1, "--verify", timeout=60)
    for phase in ("write", "read"):
        it = r.phase(phase)["iterations"][0]
        shares = [(min(c[0] for c in rk["calls"]), max(c[1] for c in rk["calls"]))
                  for rk in it["ranks"]]
        assert len(shares) == 3 and max_overlap(shares) == 1
    assert r.result["verification"]["ok"]
    assert r.result["verification"]["bytes_checked"] == 2 * 96 * 1024  # write and read


def test_a_waiting_rank_yields_once_per_poll(engine, launcher, shm_dir, tmp_path):
    """Ranks above the slots: Open MPI's own polls yield the core
    (mpi_yield_when_idle, on by itself when oversubscribed), so the token's
    wait adds no yield of its own (a second one doubled every hand-over's
    context switches); with the library's yield off, or a library without it
    (MPICH), the wait yields itself.  The result says which."""
    import json
    import subprocess

    if launcher.flavour != "openmpi":
        pytest.skip("mpi_yield_when_idle is Open MPI's")

    def wait(ranks, env_extra):
        out = tmp_path / f"w{ranks}{len(env_extra)}.json"
        argv = launcher.command(ranks, [engine, "io", "--dir", shm_dir, "--layout", "partitioned",
                                        "--block", "4k", "--size", "256k", "--group", "2",
                                        "--phases", "write", "--iterations", "1", "--json", str(out)])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                              env={**launcher.environment(), **env_extra})
        assert proc.returncode == 0, proc.stderr
        return json.loads(out.read_text())["params"]["group_wait"]

    cores = len(os.sched_getaffinity(0))
    over = 2 * cores if cores <= 4 else None  # a few ranks above the cores, kept small
    if over is None:
        pytest.skip("a host of more than 4 cores: the oversubscribed run would be large")
    assert wait(over, {}) == "mpi_yield_when_idle"
    assert wait(over, {"OMPI_MCA_mpi_yield_when_idle": "0"}) == "sched_yield"
    assert wait(2, {}) is None  # G=2 at 2 ranks: one rank per group, no token to pass
