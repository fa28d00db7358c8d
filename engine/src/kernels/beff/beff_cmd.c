/* `pario-engine beff`: the effective I/O bandwidth benchmark b_eff_io, as
 * far as REFERENCE-FACTS 5 gives it; what it marks unverified is chosen
 * here and said so in the README and the result document.
 *
 * For each pattern type and each chunk size the first write repeats its
 * call until the chunk's share of the time limit is used, all ranks
 * deciding together after every call (one MPI_Allreduce, which also
 * carries any rank's failure, so none is left waiting).  Rewrite and read
 * repeat exactly as many calls, over the same bytes, and the read checks
 * what the rewrite put there.  A pattern's time runs from its open to its
 * close (writes end with MPI_File_sync), the maximum over ranks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/check_mode.h"
#include "../../util/disk_full.h"
#include "../../util/fail.h"
#include "../../util/fsinfo.h"
#include "../../util/json.h"
#include "../../util/mpi_file.h"
#include "../../util/mpiio_env.h"
#include "../../util/options.h"
#include "../../util/run_files.h"
#include "../../util/result_doc.h"
#include "../../util/sizes.h"
#include "beff.h"

#define MAX_CHUNKS 8
#define SEGMENT_CHUNKS_OF_MPART 4 /* a segment holds 4 × MPART bytes (our choice) */

enum { M_WRITE, M_REWRITE, M_READ, M_N };
static const char *method_names[M_N] = {"write", "rewrite", "read"};

typedef struct beff_options {
    char dir[4096];
    char name[RUN_NAME_MAX]; /* --name, or "": a unique name */
    double seconds;           /* -T */
    uint64_t mem_per_pe, max_chunk;
    bool no_shared, keep;
    const char *json;
    mpiio_settings mpi; /* which MPI-IO runs, recorded in the result */
} beff_options;

typedef struct beff_run {
    beff_options o;
    int rank, nranks, nchunks;
    uint64_t chunks[MAX_CHUNKS];
    long calls[BEFF_NPATTERNS][MAX_CHUNKS];      /* per rank, decided by the first write */
    double chunk_s[M_N][BEFF_NPATTERNS][MAX_CHUNKS]; /* loop time, max over ranks */
    double seconds[M_N][BEFF_NPATTERNS];          /* open to close, max over ranks */
    uint64_t bytes[M_N][BEFF_NPATTERNS];          /* all ranks */
    char paths[BEFF_NPATTERNS][4300];
    owned_file who[BEFF_NPATTERNS]; /* the file each pattern created: per-rank ones each rank's own */
    double share;
} beff_run;

enum { O_DIR, O_TIME, O_MEM, O_MAXCHUNK, O_NOSHARED, O_IMPL, O_NAME, O_KEEP, O_JSON };
static const option_spec beff_option_table[] = {
    {"dir", 0, "DIR", "where the files go (required)", O_DIR},
    {"time", 'T', "S", "scheduled time in seconds for the whole run (default 60)", O_TIME},
    {"mem-per-pe", 0, "SIZE",
     "memory per process (b_eff_io's -MB; default: this node's\nmemory / its ranks); the largest "
     "chunk MPART is\nmin(16 MiB, SIZE/128)",
     O_MEM},
    {"max-chunk", 0, "SIZE", "MPART itself (at most 1g); chunks above it are left out", O_MAXCHUNK},
    {"no-shared", 0, NULL, "leave out pattern 1 (shared file pointer)", O_NOSHARED},
    MPIIO_IMPL_ROW(O_IMPL),
    OPTION_NAME_ROW("pario-beff", O_NAME),
    OPTION_KEEP_ROW("the files", O_KEEP),
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec beff_command_spec =
    COMMAND_SPEC("beff",
                 "usage: mpirun -np P pario-engine beff --dir DIR -T SECONDS [options]\n",
                 NULL, beff_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    beff_options *o = ctx;
    char *end;
    switch (id) {
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir); break;
    case O_TIME:
        o->seconds = strtod(v, &end);
        if (*end || !(o->seconds > 0) || o->seconds > 1e6)
            fail_usage("%s '%s' must be a number of seconds above 0", opt, v);
        break;
    case O_MEM: o->mem_per_pe = option_size(opt, v); break;
    case O_MAXCHUNK: o->max_chunk = option_size_in(opt, v, 1, 1u << 30); break;
    case O_NOSHARED: o->no_shared = true; break;
    case O_IMPL: mpiio_impl_option(&o->mpi, v); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_KEEP: o->keep = true; break;
    case O_JSON: o->json = option_output(opt, v); break;
    }
}

static void parse(int argc, char **argv, int rank, beff_options *o)
{
    memset(o, 0, sizeof *o);
    o->seconds = 60;
    options_parse(&beff_command_spec, argc, argv, rank, set_option, o);
    fail_unless_target_dir(o->dir, "where the files go");
}

/* 1 KiB, 32 KiB, 1 MiB, each also +8 (non-wellformed), and MPART; those
 * above MPART are left out. */
static void choose_chunks(beff_run *r)
{
    uint64_t mpart = r->o.max_chunk;
    if (!mpart) {
        uint64_t mem = r->o.mem_per_pe;
        if (!mem) {
            MPI_Comm node;
            int per_node;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
            MPI_Comm_size(node, &per_node);
            MPI_Comm_free(&node);
            mem = node_memory_bytes() / (uint64_t)per_node;
        }
        mpart = mem / 128 < (16u << 20) ? mem / 128 : (16u << 20);
        MPI_Allreduce(MPI_IN_PLACE, &mpart, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        if (mpart < 1024)
            fail_usage("--mem-per-pe gives a largest chunk of %llu bytes, under 1 KiB: give at least 128k",
                       (unsigned long long)mpart);
    }
    const uint64_t base[6] = {1024, 1024 + 8, 32768, 32768 + 8, 1u << 20, (1u << 20) + 8};
    for (int i = 0; i < 6; i++)
        if (base[i] < mpart)
            r->chunks[r->nchunks++] = base[i];
    r->chunks[r->nchunks++] = mpart;
}

static uint64_t stamp_of(int method, int pattern, int chunk, int rank, long i)
{
    uint64_t x = ((uint64_t)method << 60) ^ ((uint64_t)pattern << 56) ^ ((uint64_t)chunk << 52) ^
                 ((uint64_t)rank << 32) ^ (uint64_t)i;
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 29);
}

static void remove_ours(void *arg)
{
    beff_run *r = arg;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int p = 0; p < BEFF_NPATTERNS; p++)
        if (beff_patterns[p].per_rank_file || r->rank == 0) {
            char mine[4400];
            snprintf(mine, sizeof mine, beff_patterns[p].per_rank_file ? "%s.%04d" : "%s", r->paths[p], r->rank);
            remove_if_ours(mine, &r->who[p]); /* nothing when nothing was created */
        }
}

static int open_pattern(beff_run *r, int p, int method, beff_file *f, mpi_why *w)
{
    const beff_pattern *pat = &beff_patterns[p];
    char *path = f->path;
    MPI_Comm comm = pat->per_rank_file ? MPI_COMM_SELF : MPI_COMM_WORLD;
    snprintf(path, sizeof f->path, pat->per_rank_file ? "%s.%04d" : "%s", r->paths[p], r->rank);
    int rc;
    if (method == M_WRITE) {
        rc = mpi_file_create(comm, path, MPI_INFO_NULL, &f->fh, &r->who[p], w);
        if (p == 0) /* the run's first file (scatter: every rank's): a failure is bad input */
            mpi_file_create_agree(w, rc == MPI_SUCCESS, MPI_COMM_WORLD, path, &r->who[p]);
    } else {
        rc = mpi_file_reopen(comm, path, method == M_READ ? MPI_MODE_RDONLY : MPI_MODE_RDWR, MPI_INFO_NULL,
                             &f->fh, &r->who[p], w);
    }
    f->open = rc == MPI_SUCCESS;
    return rc;
}

/* One access method of one pattern over every chunk size. */
static void run_pattern(beff_run *r, int p, int method, char *buf, mpi_why *w)
{
    const beff_pattern *pat = &beff_patterns[p];
    beff_file f = {.rank = r->rank, .nranks = r->nranks};
    const bool write = method != M_READ;
    /* A write timed by -T alone can fill the disk, and ompio's sync and
     * close hang when one rank's write fails (tester 15): the first write
     * stops its calls before the free space runs out, as a full disk, on
     * every rank alike.  Rank 0 asks the file system once, before the
     * clock; every rank counts its calls against that answer. */
    uint64_t room = UINT64_MAX; /* bytes this pattern's first write may still put there */
    if (method == M_WRITE) {
        if (r->rank == 0) {
            const uint64_t free = disk_free_bytes(r->o.dir), slack = 1 << 20;
            room = free == UINT64_MAX ? free : free > slack ? (free - slack) / 10 * 9 : 0;
        }
        MPI_Bcast(&room, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    open_pattern(r, p, method, &f, w);
    uint64_t base = 0;
    int failed = 0; /* any rank's failure, agreed by all (the flags' reductions) */
    for (int c = 0; c < r->nchunks; c++) {
        f.l = r->chunks[c];
        f.base = base;
        f.capacity = (long)(SEGMENT_CHUNKS_OF_MPART * r->chunks[r->nchunks - 1] / f.l);
        int flags[2] = {0, 0};
        if (f.open)
            pat->region(&f, w);
        flags[1] = w->text[0] != 0;
        MPI_Allreduce(MPI_IN_PLACE, &flags[1], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if ((failed = flags[1]))
            break;
        const long planned = method == M_WRITE ? -1 : r->calls[p][c];
        const uint64_t call_bytes = (uint64_t)r->nranks * f.l, fit = room / call_bytes; /* calls that fit */
        const double tc = MPI_Wtime();
        long i = 0;
        while (!flags[0] && !flags[1] && (planned < 0 || i < planned)) {
            if ((uint64_t)i >= fit) {
                mpi_why_errno(w, ENOSPC, "writing %s (%llu-byte calls)", f.path, (unsigned long long)f.l);
                flags[1] = 1;
                break;
            }
            if (write) {
                uint64_t s = stamp_of(method, p, c, r->rank, i);
                memcpy(buf, &s, 8);
            }
            pat->call(&f, write, buf, i, w);
            if (!write && !w->text[0]) {
                uint64_t s, want = stamp_of(M_REWRITE, p, c, r->rank, i);
                memcpy(&s, buf, 8);
                if (s != want)
                    mpi_why_set(w, "%s read call %ld with %llu-byte chunks found another call's data",
                                pat->name, i, (unsigned long long)f.l);
            }
            i++;
            /* all ranks decide together: time up (or segment full), or a failure */
            flags[0] = planned < 0 && (MPI_Wtime() - tc >= r->share || (pat->segmented && i >= f.capacity));
            flags[1] = w->text[0] != 0;
            MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        }
        double loop = MPI_Wtime() - tc;
        MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        r->chunk_s[method][p][c] = loop;
        if (method == M_WRITE)
            r->calls[p][c] = i;
        r->bytes[method][p] += (uint64_t)i * call_bytes;
        room -= room == UINT64_MAX ? 0 : (uint64_t)i * call_bytes; /* i <= fit: never below 0 */
        base += beff_region_bytes(pat, &f, i);
        if ((failed = flags[1]))
            break;
    }
    /* MPI_File_sync and MPI_File_close are collective: entered by every
     * rank or by none, on the failure they agreed, never on this rank's
     * own.  After a failure the file is left open to the process's exit:
     * ompio's close hangs when one rank's write failed (tester 15). */
    if (f.open && !failed) {
        if (write)
            mpi_failed(MPI_File_sync(f.fh), w, "MPI_File_sync (%s)", pat->name);
        failed = w->text[0] != 0; /* a sync that failed on some ranks: agreed before the close */
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!failed)
            mpi_file_close(&f.fh, w, f.path);
    }
    double mine = MPI_Wtime() - t0;
    MPI_Allreduce(&mine, &r->seconds[method][p], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    mpi_stop_if_failed(w, MPI_COMM_WORLD, remove_ours, r);
}

static bool pattern_runs(const beff_run *r, int p) { return !(r->o.no_shared && p == 1); }

static double mib_per_s(const beff_run *r, int m, int p)
{
    return r->seconds[m][p] > 0 ? r->bytes[m][p] / 1048576.0 / r->seconds[m][p] : 0;
}

/* The published rule (unverified): scatter counts double in the mean over
 * pattern types, then the mean over write, rewrite and read. */
static double method_value(const beff_run *r, int m)
{
    double sum = 0, weight = 0;
    for (int p = 0; p < BEFF_NPATTERNS; p++)
        if (pattern_runs(r, p)) {
            const double w = p == 0 ? 2 : 1;
            sum += w * mib_per_s(r, m, p);
            weight += w;
        }
    return sum / weight;
}

static void save_json(const beff_run *r, double beff, result_where *where)
{
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "beff");
    json_string(&j, "status", "ok");
    result_doc_where(&j, where, r->o.dir, NULL);
    json_object_begin(&j, "params");
    json_int(&j, "ranks", r->nranks);
    json_double(&j, "time_limit_seconds", r->o.seconds);
    json_double(&j, "share_seconds", r->share);
    json_array_begin(&j, "chunk_bytes");
    for (int c = 0; c < r->nchunks; c++)
        json_uint(&j, NULL, r->chunks[c]);
    json_array_end(&j);
    json_bool(&j, "shared_pointer_pattern", !r->o.no_shared);
    json_string(&j, "dir", r->o.dir);
    mpiio_run_json(&j, &r->o.mpi);
    json_object_end(&j);
    json_array_begin(&j, "methods");
    for (int m = 0; m < M_N; m++) {
        json_object_begin(&j, NULL);
        json_string(&j, "name", method_names[m]);
        json_double(&j, "mib_per_s", method_value(r, m));
        json_array_begin(&j, "patterns");
        for (int p = 0; p < BEFF_NPATTERNS; p++) {
            if (!pattern_runs(r, p))
                continue;
            json_object_begin(&j, NULL);
            json_int(&j, "type", p);
            json_string(&j, "name", beff_patterns[p].name);
            json_uint(&j, "bytes", r->bytes[m][p]);
            json_double(&j, "seconds", r->seconds[m][p]);
            json_double(&j, "mib_per_s", mib_per_s(r, m, p));
            json_array_begin(&j, "chunks");
            for (int c = 0; c < r->nchunks; c++) {
                json_object_begin(&j, NULL);
                json_uint(&j, "chunk_bytes", r->chunks[c]);
                json_int(&j, "calls_per_rank", r->calls[p][c]);
                json_double(&j, "seconds", r->chunk_s[m][p][c]);
                json_object_end(&j);
            }
            json_array_end(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_double(&j, "b_eff_io_mib_per_s", beff);
    const char *warnings[] = {"b_eff_io's chunk list, time shares and single-number rule follow the "
                              "published description; its source was not available to check them "
                              "(REFERENCE-FACTS 5)"};
    result_doc_close_verified(&j, true, warnings, 1, r->o.json);
}

int beff_command(int argc, char **argv)
{
    static beff_run r;
    engine_world(&r.rank, &r.nranks);
    parse(argc, argv, r.rank, &r.o);
    mpiio_settings_apply_or_exit(&r.o.mpi, r.nranks); /* before the first MPI_File call */
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    choose_chunks(&r);
    int npat = 0;
    for (int p = 0; p < BEFF_NPATTERNS; p++)
        npat += pattern_runs(&r, p);
    /* the first write of each chunk of each pattern gets an equal share of
     * a third of T; rewrite and read repeat as many calls (our reading) */
    r.share = r.o.seconds / (3.0 * npat * r.nchunks);
    mpi_why w = MPI_WHY_FOR(r.o.dir, "-T");
    char *buf = aligned_alloc(4096, (r.chunks[r.nchunks - 1] + 8 + 4095) / 4096 * 4096);
    if (!buf)
        mpi_why_set(&w, "cannot allocate a buffer of the largest chunk: give a smaller --max-chunk");
    else
        for (uint64_t i = 0; i < r.chunks[r.nchunks - 1] + 8; i++)
            buf[i] = (char)(i * 131 + 7);
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, NULL, NULL);
    char base[4200];
    mpi_file_unique_path(MPI_COMM_WORLD, r.o.dir, r.o.name, "pario-beff", NULL, base, sizeof base);
    for (int p = 0; p < BEFF_NPATTERNS; p++)
        snprintf(r.paths[p], sizeof r.paths[p], "%s.t%d", base, p);

    for (int m = 0; m < M_N; m++) {
        for (int p = 0; p < BEFF_NPATTERNS; p++)
            if (pattern_runs(&r, p))
                run_pattern(&r, p, m, buf, &w);
        if (m != M_WRITE)
            continue;
        /* -T too short: single calls overran their shares so far that the
         * first write took over twice its third of T.  One call over its
         * share alone is not refused: on a loaded machine a collective call
         * can overrun a 80 ms share while the run still keeps to -T. */
        double worst = 0, spent = 0;
        for (int p = 0; p < BEFF_NPATTERNS; p++)
            for (int c = 0; c < r.nchunks && pattern_runs(&r, p); c++) {
                spent += r.chunk_s[M_WRITE][p][c];
                if (r.calls[p][c] == 1)
                    worst = fmax(worst, r.chunk_s[M_WRITE][p][c] / r.share);
            }
        if (worst > 1 && spent > 2.0 * r.o.seconds / 3.0) {
            remove_ours(&r);
            fail_exit(EXIT_USAGE, r.rank == 0, "-T %g is too short for one call of each pattern and chunk "
                      "size (one call took %.1f× its share): give -T %.0f or more", r.o.seconds, worst,
                      ceil(r.o.seconds * worst * 2));
        }
    }
    double values[M_N], beff = 0;
    for (int m = 0; m < M_N; m++)
        beff += (values[m] = method_value(&r, m)) / M_N;
    result_where where; /* what the document's provenance needs: gathered only for one */
    if (r.o.json)
        result_where_gather(&where, MPI_COMM_WORLD);
    if (r.rank == 0) {
        printf("pario-engine beff: b_eff_io on %d rank(s), -T %g s, chunks", r.nranks, r.o.seconds);
        for (int c = 0; c < r.nchunks; c++)
            printf(" %llu", (unsigned long long)r.chunks[c]);
        printf(" bytes, %s\n", r.o.dir);
        printf("%-8s", "method");
        for (int p = 0; p < BEFF_NPATTERNS; p++)
            if (pattern_runs(&r, p))
                printf(" %10s", beff_patterns[p].name);
        printf(" %10s\n", "weighted");
        for (int m = 0; m < M_N; m++) {
            printf("%-8s", method_names[m]);
            for (int p = 0; p < BEFF_NPATTERNS; p++)
                if (pattern_runs(&r, p))
                    printf(" %10.1f", mib_per_s(&r, m, p));
            printf(" %10.1f\n", values[m]);
        }
        printf("(MiB/s; weighted: scatter counted twice)\n");
        printf("b_eff_io = %.3f MiB/s (mean of write, rewrite and read)\n", beff);
        printf("  every read checked against the rewrite's data\n");
        if (r.o.json)
            save_json(&r, beff, &where);
    }
    if (!r.o.keep)
        remove_ours(&r);
    free(buf);
    return 0;
}
