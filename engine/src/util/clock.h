/* One clock for every timestamp: CLOCK_MONOTONIC, which all processes on a
 * node share, so per-rank timestamps on one node are directly comparable. */
#ifndef PARIO_CLOCK_H
#define PARIO_CLOCK_H

#include <time.h>

static inline double clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
