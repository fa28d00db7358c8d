#include "permute.h"

static inline uint64_t round_hash(uint64_t x, uint64_t key, unsigned round)
{
    uint64_t z = x ^ key ^ ((uint64_t)round * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return z ^ (z >> 33);
}

uint64_t permute_index(uint64_t index, uint64_t n, uint64_t key)
{
    if (n <= 1)
        return index;
    unsigned bits = 0;
    while (bits < 64 && (n - 1) >> bits)
        bits++;
    if (bits % 2)
        bits++;
    if (bits < 2)
        bits = 2;
    unsigned half = bits / 2;
    uint64_t mask = (half == 64) ? ~0ULL : ((1ULL << half) - 1);
    uint64_t x = index;
    do {
        uint64_t left = x >> half, right = x & mask;
        for (unsigned r = 0; r < 4; r++) {
            uint64_t next = left ^ (round_hash(right, key, r) & mask);
            left = right;
            right = next;
        }
        x = (left << half) | right;
    } while (x >= n); /* the domain is < 4n, so this ends quickly */
    return x;
}
