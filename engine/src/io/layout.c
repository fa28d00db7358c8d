#include "layout.h"

#include <stdio.h>
#include <string.h>

#include "../util/permute.h"
#include "../util/sizes.h"

static const char *need_whole_blocks(const layout_geometry *g, uint64_t per, char *why, size_t len)
{
    char fb[32], bl[32], unit[32];
    if (g->file_bytes % per == 0)
        return NULL;
    size_format(g->file_bytes, fb, sizeof fb);
    size_format(g->block, bl, sizeof bl);
    size_format(per, unit, sizeof unit);
    snprintf(why, len,
             "%s per file is not a whole number of %d rank(s) x %s blocks: "
             "make --size a multiple of %s",
             fb, g->sharers, bl, unit);
    return why;
}

/* broadcast: every rank reads the whole file from the start. */
static const char *broadcast_check(const layout_geometry *g, char *why, size_t len)
{
    layout_geometry one = *g;
    one.sharers = 1;
    return need_whole_blocks(&one, g->block, why, len);
}
static uint64_t broadcast_count(const layout_geometry *g) { return g->file_bytes / g->block; }
static uint64_t broadcast_offset(const layout_geometry *g, uint64_t k) { return k * g->block; }

/* partitioned (1-D): rank m owns one contiguous 1/P of the file. */
static const char *split_check(const layout_geometry *g, char *why, size_t len)
{
    return need_whole_blocks(g, g->block * (uint64_t)g->sharers, why, len);
}
static uint64_t split_count(const layout_geometry *g)
{
    return g->file_bytes / g->block / (uint64_t)g->sharers;
}
static uint64_t partitioned_offset(const layout_geometry *g, uint64_t k)
{
    uint64_t share = g->file_bytes / (uint64_t)g->sharers;
    return (uint64_t)g->member * share + k * g->block;
}

/* interleaved (2-D): block i of the file belongs to rank i mod P. */
static uint64_t interleaved_offset(const layout_geometry *g, uint64_t k)
{
    return (k * (uint64_t)g->sharers + (uint64_t)g->member) * g->block;
}

/* random: the interleaved deal of a seeded random permutation of all
 * blocks, so each block is touched exactly once, in random order. */
static uint64_t random_offset(const layout_geometry *g, uint64_t k)
{
    uint64_t blocks = g->file_bytes / g->block;
    uint64_t slot = k * (uint64_t)g->sharers + (uint64_t)g->member;
    return permute_index(slot, blocks, g->seed) * g->block;
}

static const layout_ops layouts[] = {
    {"broadcast", "every rank reads the whole file", true, broadcast_check, broadcast_count,
     broadcast_offset},
    {"partitioned", "1-D: rank r owns the r-th contiguous 1/P of the file", false, split_check,
     split_count, partitioned_offset},
    {"interleaved", "2-D: block i belongs to rank i mod P", false, split_check, split_count,
     interleaved_offset},
    {"random", "every block once, in a seeded random order dealt round-robin", false,
     split_check, split_count, random_offset},
};

const layout_ops *layout_find(const char *name)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (strcmp(layouts[i].name, name) == 0)
            return &layouts[i];
    return NULL;
}

const char *layout_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
            if (i)
                strcat(names, ", ");
            strcat(names, layouts[i].name);
        }
    return names;
}
