/* --overlap: dump k is written by a thread while the solver computes the
 * steps after it (the NHT-1 report allows asynchronous I/O).  At a dump
 * the solver copies its slab into a snapshot and goes on; the next dump
 * first waits for the previous write.  The writer makes no MPI calls, so
 * only the POSIX modes (posix, per-rank) can overlap. */
#ifndef PARIO_BT_OVERLAP_H
#define PARIO_BT_OVERLAP_H

#include <pthread.h>
#include <stdbool.h>

#include "bt.h"
#include "btio.h"

typedef struct overlap_writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool busy, stop;
    int dump, err;
    btio_ctx *io;
    bt_problem snapshot; /* shares n and the cells with the solver; u is a copy */
    double *dump_seconds;
} overlap_writer;

int overlap_start(overlap_writer *w, btio_ctx *io, const bt_problem *p, double *dump_seconds);
/* Wait for the previous write, snapshot u, hand dump to the writer. */
void overlap_submit(overlap_writer *w, const bt_problem *p, int dump);
/* Wait for the last write and stop the thread; 0 or the first errno. */
int overlap_finish(overlap_writer *w);

#endif
