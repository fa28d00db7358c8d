"""Collective buffering (ROMIO's two-phase I/O) as the engine's
`--collective` drives it, for machines with agent.cb_buffer.

The engine's collective MPI-IO (and HDF5) makes one collective call per
rank and phase, over a file view of the rank's whole access list.  ROMIO
then splits the region every rank asks for (the first byte to the last)
into one equal file domain per aggregator (ADIOI_Calc_file_domains; the
aggregators are ranks 0 to A-1 with cb_config_list *:*) and each
aggregator works through the extent of the data in its domain one
collective buffer (cb_buffer_size) at a time: for a write it receives
every rank's bytes of that buffer (an MPI message from each other rank
with data there), copies them into the buffer and writes the buffer in
one system call; a read runs the other way.  A buffer with holes (bytes
no rank asked for) is read first and written whole.

Measured here (tests/test_model_two_phase.py): 4 ranks, 32 MiB, one
aggregator: rank 0 writes two 16 MiB calls and the others none; two
aggregators: ranks 0 and 1 one 16 MiB call each."""


def plan(offsets, block, aggregators, cb_buffer):
    """Per aggregator, its buffers in order, each {"start", "extent" (bytes
    from the buffer's first data byte to its last), "data", "from":
    {rank: bytes of that rank's data in the buffer}}.  `offsets` holds
    each rank's call offsets (calls of `block` bytes)."""
    pieces = [(o, o + block, r) for r, offs in enumerate(offsets) for o in offs]
    if not pieces:
        return [[] for _ in range(aggregators)]
    lo, hi = min(p[0] for p in pieces), max(p[1] for p in pieces)
    size = -(-(hi - lo) // aggregators)
    chunk = cb_buffer or size
    buffers = {}  # (aggregator, buffer index) -> [first, last, data, {rank: bytes}]
    for b, e, r in pieces:
        while b < e:
            a = (b - lo) // size
            d0 = lo + a * size
            k = (b - d0) // chunk
            end = min(e, d0 + (k + 1) * chunk, d0 + size)
            got = buffers.setdefault((a, k), [b, end, 0, {}])
            got[0], got[1] = min(got[0], b), max(got[1], end)
            got[2] += end - b
            got[3][r] = got[3].get(r, 0) + end - b
            b = end
    out = [[] for _ in range(aggregators)]
    for (a, k), (first, last, data, ranks) in sorted(buffers.items()):
        out[a].append({"start": first, "extent": last - first, "data": data, "from": ranks})
    return out
