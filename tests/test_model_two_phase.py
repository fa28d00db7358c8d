"""The model's collective buffering (model/two_phase.py) against what ROMIO
really does here: the engine counts each rank's read and write system-call
calls and bytes around a phase (/proc/self/io), and the aggregators' are
the buffers the model plans for them.  One small real run on /dev/shm:
4 ranks, a partitioned 32 MiB file in 256 KiB calls, two aggregators."""

from pario.model.two_phase import plan
from pario.model.workload import rank_offsets

MIB = 1 << 20


def test_aggregators_system_calls_are_the_modelled_buffers(shm_dir, run_io):
    ranks, size, block, aggregators = 4, 32 * MIB, 256 << 10, 2
    r = run_io(ranks, "--dir", shm_dir, "--api", "mpiio", "--collective", "--mpiio-impl", "romio",
               "--aggregators", aggregators, "--layout", "partitioned", "--block", "256k",
               "--size", "32m", "--phases", "write,read", "--iterations", 1)
    cb = r.result["params"]["api_options"].get("info_returned", {}).get("cb_buffer_size")
    buffers = plan([rank_offsets("partitioned", size, block, ranks, m) for m in range(ranks)],
                   block, aggregators, int(cb) if cb else 16 * MIB)
    write = r.phase("write")["iterations"][0]["observed"]
    read = r.phase("read")["iterations"][0]["observed"]
    for rank in range(ranks):
        mine = buffers[rank] if rank < aggregators else []
        assert write["write_calls"][rank] == len(mine)
        assert write["write_bytes"][rank] == sum(b["extent"] for b in mine)
        # reads: the buffers, beside a few hundred bytes of the library's own reads
        assert 0 <= read["read_bytes"][rank] - sum(b["extent"] for b in mine) < 4096
