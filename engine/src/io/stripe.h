/* Striping: one logical file spread round-robin over one file per
 * directory, as the parallel file systems of the reports spread a file
 * over the UFS files of their I/O nodes.  Logical offset o lies in stripe
 * s = o / unit, on target s mod N, at local offset
 * (s / N) * unit + o mod unit of that target's part.  The part on target t
 * is DIR_t/NAME, NAME being the logical file's name.
 *
 * The run sees one file: the loop calls a per-call backend wrapped by
 * stripe_backend, which splits each call at stripe boundaries and sends
 * each piece to the part's handle of the chosen --api. */
#ifndef PARIO_STRIPE_H
#define PARIO_STRIPE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

#define STRIPE_MAX_TARGETS 64

typedef struct stripe_spec {
    int ntargets; /* 0: not striped */
    uint64_t unit;
    char *dirs[STRIPE_MAX_TARGETS]; /* owned (strdup) */
} stripe_spec;

/* Parse "D1,D2,...": every directory must exist (writable when
 * need_write), and none may be named twice (by any path: compared by
 * device and inode).  Fails with one line naming the option. */
void stripe_parse_dirs(stripe_spec *s, const char *opt, const char *list, bool need_write);

/* Where logical offset off lies: target, local offset, and the bytes left
 * in its stripe unit. */
void stripe_locate(const stripe_spec *s, uint64_t off, int *target, uint64_t *local,
                   uint64_t *left_in_unit);

/* Bytes on target t of a logical file of `bytes`. */
uint64_t stripe_part_bytes(const stripe_spec *s, uint64_t bytes, int t);

/* How many targets a logical file of `bytes` reaches (holds a byte on):
 * fewer than N when the file is shorter than N units. */
int stripe_targets_reached(const stripe_spec *s, uint64_t bytes);

/* DIR_t/basename(path). */
void stripe_part_path(const stripe_spec *s, int t, const char *path, char out[PATH_MAX]);

/* Paths of a logical file's parts: one (the path itself) when not striped.
 * Returns how many. */
int stripe_parts(const stripe_spec *s, const char *path, char out[][PATH_MAX]);

/* The per-call backend that spreads a logical file over the targets; its
 * config is a stripe_wrap. */
typedef struct stripe_wrap {
    const backend_ops *inner;
    void *inner_config;
    const stripe_spec *spec;
} stripe_wrap;

extern const backend_ops stripe_backend;

#endif
