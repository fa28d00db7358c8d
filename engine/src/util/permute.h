/* A bijection of [0, n) chosen by a key, in O(1) memory: a 4-round Feistel
 * network on the smallest even bit width covering n, with cycle walking
 * back into range.  The random layout uses it so that every block of the
 * file is visited exactly once, in a seeded random order, at any file size. */
#ifndef PARIO_PERMUTE_H
#define PARIO_PERMUTE_H

#include <stdint.h>

uint64_t permute_index(uint64_t index, uint64_t n, uint64_t key);

#endif
