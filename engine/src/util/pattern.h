/* Deterministic file contents: every 8-byte word is a function of
 * (seed, iteration, stream, file offset), so any rank can produce or check
 * any block alone, and a verifier can check a whole file alone.
 *
 *   word at offset o (o a multiple of 8):
 *     o % PATTERN_STAMP == 0 : o XOR stamp_key           (the offset stamp)
 *     otherwise              : mix(key + (o % PATTERN_PERIOD) / 8)
 *
 * The stamp every 512 bytes makes every sector unique (no dedup, and a
 * misplaced block is caught with its offset); the random words between
 * stamps repeat with a 1 MiB period so that one pre-computed source buffer
 * serves every write without copying: a write at offset o points straight
 * into the buffer at o % PERIOD and only re-stamps its sectors (1/64 of
 * its words).  The buffer is filled outside the timed region; the timed
 * loop adds one store per 512 bytes, which is why pario's own cost does
 * not show in the rates.
 *
 * "stream" tells apart files with the same offsets: 0 for a shared file,
 * the owning rank for file-per-rank. */
#ifndef PARIO_PATTERN_H
#define PARIO_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATTERN_STAMP 512u
#define PATTERN_PERIOD (1u << 20)

typedef struct pattern_key {
    uint64_t random_key; /* seeds the random words */
    uint64_t stamp_key;  /* XORed into each offset stamp */
} pattern_key;

pattern_key pattern_key_make(uint64_t seed, uint64_t iteration, uint64_t stream);

/* The expected word at a file offset (a multiple of 8). */
uint64_t pattern_word(const pattern_key *k, uint64_t offset);

/* A source buffer covering PERIOD + max_len bytes of pattern. */
typedef struct pattern_source {
    unsigned char *base;
    size_t span;        /* PERIOD + max_len */
    size_t mapped;      /* bytes mapped (rounded for huge pages) */
    bool huge_pages;    /* MADV_HUGEPAGE was accepted */
    pattern_key key;
    bool filled;
} pattern_source;

/* Allocate (page aligned; want_huge asks for transparent huge pages). */
int pattern_source_init(pattern_source *s, size_t max_len, bool want_huge);
void pattern_source_free(pattern_source *s);

/* Fill for a key (untimed); a no-op when the key is unchanged. */
void pattern_source_fill(pattern_source *s, pattern_key key);

/* Pointer to len bytes holding exactly the file contents at [offset,
 * offset+len): stamps of that range are written in place. offset and len
 * must be multiples of 8, len <= max_len. */
const unsigned char *pattern_source_at(pattern_source *s, uint64_t offset, size_t len);

/* Compare got[0..len) with the pattern at offset. Returns -1 when equal,
 * else the index of the first differing byte. */
int64_t pattern_check(pattern_source *s, uint64_t offset, const unsigned char *got, size_t len);

/* Page-aligned buffer for reads (huge pages when asked); free with
 * pattern_buffer_free. */
void *pattern_buffer_alloc(size_t len, bool want_huge, bool *huge_out, size_t *mapped_out);
void pattern_buffer_free(void *p, size_t mapped);

#endif
