/* The result of one `io` run, held on rank 0.  Both outputs, the JSON
 * document (pario.result/1) and the human summary, are written from this
 * one object, so they cannot disagree. */
#ifndef PARIO_IO_RESULT_H
#define PARIO_IO_RESULT_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "../util/fsinfo.h"
#include "../util/hosts.h"
#include "io_options.h"

/* One rank's clock readings for one phase, seconds since the run's epoch
 * (rank 0's CLOCK_MONOTONIC at start, shared by all ranks of a node). */
typedef struct rank_record {
    double start;      /* after the opening barrier */
    double open_done;
    double io_first;   /* start of the first call */
    double io_last;    /* end of the last call (or of fsync) */
    double io_done;    /* end of the call loop */
    double sync_done;
    double close_done;
    double stop;       /* after the closing barrier */
    double bytes;
    double observed[BACKEND_MAX_OBSERVED]; /* the backend's own (observed_names) */
} rank_record;

#define RANK_RECORD_DOUBLES (sizeof(rank_record) / sizeof(double))

typedef struct io_iteration {
    enum phase_kind kind;
    uint64_t iteration;
    uint64_t data_iteration; /* whose data a read found */
    double seconds;          /* max over ranks of stop - start */
    uint64_t bytes;          /* moved by all ranks */
    double mib_per_s;
    double cache_fraction;   /* reads: page-cache share of the file before the phase, -1 n/a */
    double background_load;  /* known task under load / alone (largest node), -1 n/a */
    /* reads: the read requests and bytes the device behind the file (rank
     * 0's) completed over the phase, as the probe counts its passes: how
     * the kernel's read-ahead cut the phase into device requests */
    bool device_known;
    uint64_t device_requests, device_bytes;
    bool verified;
    double verify_seconds;
    uint64_t verified_bytes;
    rank_record *ranks;      /* nranks */
    double *trace;           /* nranks x calls x {start, end}, or NULL */
    uint64_t trace_calls;
} io_iteration;


#define IO_MAX_WARNINGS 16

typedef struct io_result {
    const io_options *opts;
    int argc;
    char **argv;
    int nranks;
    char started_utc[32], finished_utc[32];
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
    int mpi_version, mpi_subversion;
    host_info *hosts; /* per rank */
    int *host_of;     /* per rank: the first rank on the same host */
    fs_facts fs;
    char path[PATH_MAX];     /* the shared file, or rank 0's file */
    uint64_t file_bytes;     /* bytes in one file */
    uint64_t files;          /* how many files */
    uint64_t calls_per_rank;
    uint64_t transfer_slice_bytes; /* transfer style: rank 0's bytes per call; else 0 */
    uint64_t transfer_held_bytes;  /* transfer style: rank 0's slices packed before the clock */
    bool huge_pages_granted;
    /* how rank 0 waits for a grouped run's token: "mpi_yield_when_idle"
     * (the MPI library's polls yield), "sched_yield" (ours), NULL (no ring) */
    const char *group_wait;
    io_iteration *its;
    int nits;
    uint64_t last_data_iteration;
    double background_alone_seconds; /* the known task alone (rank 0's node) */
    char *warnings[IO_MAX_WARNINGS];
    int nwarnings;
} io_result;


/* Derive the warnings (cache honesty, tmpfs, oversubscription, short
 * phases) from what was measured. */
void io_result_warn(io_result *r);

int io_result_save_json(const io_result *r, const char *path); /* 0 or errno */
void io_result_print(const io_result *r);
void io_result_free(io_result *r);

/* Best, median, ... of the rates of one phase kind. */
typedef struct rate_summary {
    int n;
    double best, median, mean, min, stdev, best_seconds;
} rate_summary;

rate_summary io_result_summary(const io_result *r, enum phase_kind kind);

#endif
