"""Which bytes each rank touches, in which order: the engine's layout table
(engine/src/io/layout.c) restated for the model, so a predicted point
issues exactly the calls a measured one makes.

  broadcast    every rank reads the whole file from the start
  partitioned  rank m owns the m-th contiguous 1/P of the file
  interleaved  block i of the file belongs to rank i mod P
  random       every block once: the interleaved deal of a seeded random
               permutation of the blocks (the engine's permute_index)
With one file per rank, each rank is the only sharer of its own file."""

from ..errors import UsageError

_MASK64 = (1 << 64) - 1


def _round_hash(x, key, rnd):
    z = (x ^ key ^ ((rnd * 0x9E3779B97F4A7C15) & _MASK64)) & _MASK64
    z = ((z ^ (z >> 33)) * 0xFF51AFD7ED558CCD) & _MASK64
    z = ((z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53) & _MASK64
    return z ^ (z >> 33)


def permute_index(index, n, key):
    """A bijection of [0, n): the engine's Feistel permutation (util/permute.c)."""
    if n <= 1:
        return index
    bits = max((n - 1).bit_length(), 2)
    bits += bits % 2
    half = bits // 2
    mask = (1 << half) - 1
    x = index
    while True:
        left, right = x >> half, x & mask
        for r in range(4):
            left, right = right, left ^ (_round_hash(right, key, r) & mask)
        x = (left << half) | right
        if x < n:
            return x


LAYOUTS = ("broadcast", "partitioned", "interleaved", "random")


def rank_offsets(layout, file_bytes, block, sharers, member, seed=1):
    """The file offsets of one rank's calls, in order."""
    if layout == "broadcast":
        return range(0, file_bytes, block)
    count = file_bytes // block // sharers
    if layout == "partitioned":
        share = file_bytes // sharers
        return range(member * share, member * share + count * block, block)
    if layout == "interleaved":
        return range(member * block, count * sharers * block, sharers * block)
    if layout == "random":
        blocks = file_bytes // block
        return [permute_index(k * sharers + member, blocks, seed) * block for k in range(count)]
    raise UsageError(f"layout '{layout}' is not one the model knows: use {', '.join(LAYOUTS)}")
