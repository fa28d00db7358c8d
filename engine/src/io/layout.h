/* Which bytes each rank touches (the CFS report's file formats), as one
 * table.  A layout answers two questions for a rank: how many blocks it
 * moves, and the file offset of its k-th block.  Everything else (timing,
 * grouping, verification) is layout-blind. */
#ifndef PARIO_LAYOUT_H
#define PARIO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The file as seen by the ranks that share it. With file-per-rank each
 * file has sharers = 1 and member = 0. */
typedef struct layout_geometry {
    uint64_t file_bytes; /* bytes in one file */
    uint64_t block;      /* bytes per call */
    int sharers;         /* ranks that divide this file between them */
    int member;          /* this rank's index among the sharers */
    uint64_t seed;       /* for the random order */
} layout_geometry;

typedef struct layout_ops {
    const char *name;
    const char *summary;
    bool read_only; /* broadcast: every rank reads the whole file */
    /* NULL when the geometry is possible, else the reason and the fix. */
    const char *(*check)(const layout_geometry *g, char *why, size_t len);
    uint64_t (*block_count)(const layout_geometry *g);
    uint64_t (*block_offset)(const layout_geometry *g, uint64_t k);
} layout_ops;

const layout_ops *layout_find(const char *name);
const char *layout_names(void);

#endif
