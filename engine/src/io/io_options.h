/* Options of `pario-engine io`, parsed and checked before any I/O. */
#ifndef PARIO_IO_OPTIONS_H
#define PARIO_IO_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "background.h"
#include "layout.h"
#include "../util/options.h" /* option_size, option_count: for backends' config_set too */
#include "stripe.h"

enum phase_kind { PHASE_WRITE, PHASE_READ };
enum group_unit { GROUP_PER_CALL, GROUP_PER_RANK };

#define IO_MAX_PHASES 4
#define IO_MAX_TRACE_CALLS 100000u

typedef struct io_options {
    char dir[PATH_MAX];
    char name[256]; /* file name (without the per-rank suffix); "" = unique default */
    const layout_ops *layout;
    bool per_rank_files;
    const backend_ops *api;
    void *api_config;   /* the backend's own options (api->config_size bytes) */
    unsigned api_caps;  /* backend_caps(api, api_config) */
    /* What the run calls to move bytes: api itself, or stripe_backend
     * around it when striped. */
    const backend_ops *mover;
    void *mover_config;
    stripe_spec stripe;  /* --stripe-dirs / --stripe-unit; ntargets 0 = one file */
    stripe_wrap stripe_wrap;
    uint64_t block;
    uint64_t size; /* broadcast: the file each rank reads; else aggregate over ranks */
    enum phase_kind phases[IO_MAX_PHASES];
    int nphases;
    uint64_t iterations;
    int group; /* 0 = no limit */
    enum group_unit group_unit;
    int background;      /* loader processes per node during phases */
    enum background_kind background_kind;
    uint64_t transfer_buffer; /* transfer backends: bytes per rank per call */
    uint64_t transfer_hold;   /* transfer backends: bytes per rank packed before the
                                 clock; 0: automatic (io_run.c transfer_hold) */
    bool prealloc;
    bool fsync;
    bool direct;
    bool evict;
    bool huge_pages;
    uint64_t read_shift;
    bool verify;
    bool keep;
    bool trace;
    uint64_t seed;
    char json[PATH_MAX];
} io_options;

/* Parse and check; on any problem prints one line and exits 2 (rank 0
 * prints, all ranks exit). */
void io_options_parse(int argc, char **argv, int rank, int nranks, io_options *o);

void io_usage(void);

/* What parsing allocated (the backend's options, stripe directories). */
void io_options_free(io_options *o);

/* Name of a phase ("write"/"read"). */
const char *phase_name(enum phase_kind k);


bool io_has_phase(const io_options *o, enum phase_kind k);

#endif
