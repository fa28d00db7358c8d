/* Grouped I/O (both reports): at most G ranks do I/O at once.
 *
 * Ranks are dealt into G groups (rank r joins group r mod G) and a token
 * circulates inside each group, so one member per group is in I/O at a
 * time.  Two grains:
 *   per call (the CFS report's form): the token moves after every call,
 *     round-robin through the members;
 *   per rank: a member keeps the token for its whole share (open and close
 *     stay outside), then hands it on, like checkpoint "waves".
 * Passing costs one zero-byte message per hand-over; a waiting rank polls
 * and gives its core away between polls (group_token.c). */
#ifndef PARIO_GROUP_TOKEN_H
#define PARIO_GROUP_TOKEN_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "io_options.h"

typedef struct token_ring {
    bool active;   /* grouping on and this group has more than one member */
    bool per_call; /* else per rank */
    bool first, last;
    int prev, next; /* ring neighbours (wrapping) */
    bool mpi_yields; /* the MPI library's own polling gives the core away */
    MPI_Comm comm;
} token_ring;

void token_ring_init(token_ring *t, int rank, int nranks, int group, enum group_unit unit,
                     MPI_Comm comm);

/* Around a rank's whole share of a phase (per-rank grain). */
void token_enter_share(const token_ring *t);
void token_leave_share(const token_ring *t);

/* Around call k of n (per-call grain). */
void token_enter_call(const token_ring *t, uint64_t k);
void token_leave_call(const token_ring *t, uint64_t k, uint64_t n);

#endif
