/* b_eff_io (Rabenseifner and Koniges; REFERENCE-FACTS 5): five access
 * patterns, each over a list of chunk sizes, first write, rewrite and read,
 * time-driven, one number at the end.
 *
 * A pattern is a row of one table: how its file is opened and where the
 * i-th call of a rank goes for chunk size l in a region starting at base.
 * The time loop, the checks and the summary never look at which pattern
 * runs. */
#ifndef PARIO_BEFF_H
#define PARIO_BEFF_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../util/mpi_fail.h"

enum { BEFF_NPATTERNS = 5 };

typedef struct beff_file {
    MPI_File fh;
    bool open;
    char path[4400];   /* for pario's line about it */
    int rank, nranks;
    uint64_t base;     /* this chunk size's region in the file */
    uint64_t l;        /* chunk size */
    long capacity;     /* calls per rank the region holds (segmented patterns) */
} beff_file;

typedef struct beff_pattern {
    int type;
    const char *name;      /* as b_eff_io heads its output */
    bool per_rank_file;    /* "separate": one file per process */
    bool segmented;        /* regions are fixed segments per rank */
    /* Set up the region for chunk size l at base (views, pointers). */
    int (*region)(beff_file *f, mpi_why *w);
    /* The i-th call of this rank: write or read l bytes. */
    int (*call)(beff_file *f, bool write, void *buf, long i, mpi_why *w);
} beff_pattern;

extern const beff_pattern beff_patterns[BEFF_NPATTERNS];

/* Bytes a region of n calls per rank takes in the pattern's file. */
uint64_t beff_region_bytes(const beff_pattern *p, const beff_file *f, long n);

#endif
