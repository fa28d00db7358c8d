/* `pario-engine io`: one access pattern, timed by the CFS report's rule
 *
 *   barrier -> start -> open -> I/O (-> fsync) -> close -> barrier -> stop
 *
 * Everything around the timed region (removing the previous iteration's
 * file, preallocation, filling the data pattern, evicting the cache,
 * measuring cache residency, verifying) happens between phases and is
 * never timed. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/fail.h"
#include "../util/fsinfo.h"
#include "../util/pattern.h"
#include "../util/safe_file.h"
#include "group_token.h"
#include "io_options.h"
#include "io_result.h"

typedef struct io_ctx {
    const io_options *o;
    MPI_Comm comm;
    int rank, nranks;
    double epoch;
    char base[PATH_MAX];        /* shared path, or prefix of per-rank paths */
    char write_path[PATH_MAX];  /* the file this rank writes */
    char read_path[PATH_MAX];   /* the file this rank reads */
    layout_geometry write_geom, read_geom;
    uint64_t write_stream, read_stream;
    bool owns_file;             /* this rank removes write_path at the end */
    owned_file mine;            /* identity of write_path as this run created it */
    token_ring ring;
    pattern_source src;         /* data to write / expected data */
    unsigned char *read_buf;
    size_t read_buf_mapped;
    bool read_buf_huge;
    /* failure of the current step on this rank */
    int err;
    char err_msg[PATH_MAX + 256];
} io_ctx;

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void per_rank_path(const io_ctx *c, int rank, char *out)
{
    if (c->o->per_rank_files)
        snprintf(out, PATH_MAX, "%s.%08d", c->base, rank);
    else
        snprintf(out, PATH_MAX, "%s", c->base);
}

static void record_error(io_ctx *c, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void record_error(io_ctx *c, int e, const char *fmt, ...)
{
    if (c->err)
        return; /* keep the first */
    c->err = e ? e : EIO;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
    va_end(ap);
}

static void remove_own_files(io_ctx *c)
{
    if (c->o->keep)
        return;
    MPI_Barrier(c->comm);
    if (c->owns_file)
        remove_if_ours(c->write_path, &c->mine); /* only ever the file this run created */
    MPI_Barrier(c->comm);
}

/* After a phase that created write_path: note which file it is, so only
 * that file is ever removed; a name swapped for a symlink or another file
 * mid-run is reported and left alone. */
static void note_own_file(io_ctx *c)
{
    if (!c->owns_file)
        return;
    int e = c->mine.known ? owned_file_check(c->write_path, &c->mine)
                          : owned_file_note_path(c->write_path, &c->mine);
    if (e)
        record_error(c, e,
                     "%s was replaced during the run by %s pario did not create: left alone; "
                     "keep other writers out of --dir",
                     c->write_path, e == ELOOP ? "a symlink" : "something");
}

/* --keep: record the length the file must have in an extended attribute,
 * so `pario-engine verify` can tell truncation from extension without
 * --size (docs/result-schema.md).  A file system without user xattrs just
 * means verify needs --size. */
static void record_length(io_ctx *c)
{
    if (!c->owns_file || owned_file_check(c->write_path, &c->mine) != 0)
        return;
    char text[32];
    int n = snprintf(text, sizeof text, "%llu", (unsigned long long)c->write_geom.file_bytes);
    lsetxattr(c->write_path, "user.pario.size", text, (size_t)n, 0);
}

/* All ranks agree whether a step failed; the lowest failing rank prints
 * its one line, files this run created are removed, and all exit. */
static void agree_or_fail(io_ctx *c)
{
    int mine = c->err ? c->rank : c->nranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (first == c->nranks)
        return;
    if (c->rank == first)
        fprintf(stderr, "pario-engine: error: rank %d: %s\n", c->rank, c->err_msg);
    fflush(stderr);
    remove_own_files(c);
    fail_exit(EXIT_RUN_FAILED, 0, "%s", "");
}

/* Refuse to touch a file that exists before the run: pario only ever
 * removes files it created. */
static void check_paths_are_new(io_ctx *c)
{
    struct stat st;
    int clash = (c->owns_file && lstat(c->write_path, &st) == 0) ? c->rank : c->nranks, first;
    MPI_Allreduce(&clash, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (first != c->nranks) {
        char p[PATH_MAX];
        per_rank_path(c, first, p);
        fail_usage("%s already exists: pario never overwrites or removes a file it did not "
                   "create; remove it or choose another --name",
                   p);
    }
}

static void setup(io_ctx *c, const io_options *o, io_result *r)
{
    c->o = o;
    c->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nranks);

    char name[256];
    if (o->name[0]) {
        snprintf(name, sizeof name, "%s", o->name);
    } else {
        snprintf(name, sizeof name, "pario-io.%ld.%ld", (long)getpid(), (long)time(NULL));
        MPI_Bcast(name, sizeof name, MPI_CHAR, 0, c->comm);
    }
    snprintf(c->base, sizeof c->base, "%s/%s", o->dir, name);

    uint64_t P = (uint64_t)c->nranks;
    if (o->read_shift >= P)
        fail_usage("--read-shift %llu must be less than the %d ranks started: a shift of the "
                   "rank count reads a rank's own data",
                   (unsigned long long)o->read_shift, c->nranks);
    uint64_t shift = o->read_shift;
    int reads_from = (int)(((uint64_t)c->rank + shift) % P);
    layout_geometry g = {.block = o->block, .seed = o->seed};
    if (o->layout->read_only) {
        g.file_bytes = o->size;
        g.sharers = 1;
        g.member = 0;
    } else if (o->per_rank_files) {
        g.file_bytes = o->size / P;
        g.sharers = 1;
        g.member = 0;
    } else {
        g.file_bytes = o->size;
        g.sharers = c->nranks;
        g.member = c->rank;
    }
    c->write_geom = g;
    c->read_geom = g;
    if (!o->per_rank_files && !o->layout->read_only)
        c->read_geom.member = reads_from;
    per_rank_path(c, c->rank, c->write_path);
    per_rank_path(c, o->per_rank_files ? reads_from : 0, c->read_path);
    c->write_stream = o->per_rank_files ? (uint64_t)c->rank : 0;
    c->read_stream = o->per_rank_files ? (uint64_t)reads_from : 0;
    c->owns_file = o->per_rank_files || c->rank == 0;
    check_paths_are_new(c);

    token_ring_init(&c->ring, c->rank, c->nranks, o->group, o->group_unit, c->comm);

    if (pattern_source_init(&c->src, o->block, o->huge_pages) != 0)
        record_error(c, ENOMEM, "cannot allocate %llu bytes of data buffer",
                     (unsigned long long)c->src.span);
    c->read_buf = pattern_buffer_alloc(o->block, o->huge_pages, &c->read_buf_huge,
                                       &c->read_buf_mapped);
    if (!c->read_buf)
        record_error(c, ENOMEM, "cannot allocate a %llu-byte read buffer",
                     (unsigned long long)o->block);
    agree_or_fail(c);
    /* Touch the read buffer so first-touch faults stay out of the timing. */
    memset(c->read_buf, 0, o->block);

    double epoch = clock_now();
    MPI_Bcast(&epoch, 1, MPI_DOUBLE, 0, c->comm);
    c->epoch = epoch;

    /* Facts for the result document. */
    memset(r, 0, sizeof *r);
    r->opts = o;
    r->nranks = c->nranks;
    utc_now(r->started_utc, sizeof r->started_utc);
    int len;
    MPI_Get_library_version(r->mpi_library, &len);
    MPI_Get_version(&r->mpi_version, &r->mpi_subversion);
    host_info me = {0};
    MPI_Get_processor_name(me.name, &len);
    me.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    me.memory_bytes = node_memory_bytes();
    if (c->rank == 0)
        r->hosts = calloc((size_t)c->nranks, sizeof *r->hosts);
    MPI_Gather(&me, sizeof me, MPI_BYTE, r->hosts, sizeof me, MPI_BYTE, 0, c->comm);
    if (c->rank == 0)
        io_result_place_hosts(r);
    fs_facts_of(o->dir, &r->fs);
    snprintf(r->path, sizeof r->path, "%s", c->write_path);
    if (c->rank == 0)
        per_rank_path(c, 0, r->path);
    r->file_bytes = g.file_bytes;
    r->files = o->per_rank_files ? P : 1;
    r->calls_per_rank = o->layout->block_count(&c->write_geom);
    int huge = c->src.huge_pages && c->read_buf_huge, all_huge;
    MPI_Allreduce(&huge, &all_huge, 1, MPI_INT, MPI_MIN, c->comm);
    r->huge_pages_granted = all_huge;
}

/* Write the data a read-only run needs, untimed: ranks share the blocks of
 * a shared file round-robin; per-rank files are written by their owner. */
static void prepare_initial_file(io_ctx *c)
{
    const io_options *o = c->o;
    pattern_source_fill(&c->src, pattern_key_make(o->seed, 0, c->write_stream));
    backend_open_args a = {.path = c->write_path, .mode = BACKEND_WRITE, .direct = false};
    void *h = NULL;
    int e = o->api->open(&a, &h);
    if (e) {
        record_error(c, e, "cannot create %s: %s", c->write_path, strerror(e));
    } else {
        uint64_t blocks = c->write_geom.file_bytes / o->block;
        bool shared = !o->per_rank_files;
        for (uint64_t k = 0; k < blocks && !e; k++) {
            if (shared && k % (uint64_t)c->nranks != (uint64_t)c->rank)
                continue;
            uint64_t off = k * o->block;
            e = o->api->write_at(h, pattern_source_at(&c->src, off, o->block), o->block, off);
            if (e)
                record_error(c, e, "preparing %s: write at offset %llu: %s", c->write_path,
                             (unsigned long long)off, strerror(e));
        }
        if (!e && (e = o->api->sync(h)) != 0)
            record_error(c, e, "preparing %s: fsync: %s", c->write_path, strerror(e));
        int ce = o->api->close(h);
        if (ce)
            record_error(c, ce, "preparing %s: close: %s", c->write_path, strerror(ce));
        note_own_file(c);
    }
    agree_or_fail(c);
    MPI_Barrier(c->comm);
}

static void prepare_write(io_ctx *c, uint64_t iteration)
{
    const io_options *o = c->o;
    /* A fresh file every write iteration, as IOR does: the previous
     * iteration's file is ours, so removing it is allowed. */
    MPI_Barrier(c->comm);
    int e = c->owns_file ? remove_if_ours(c->write_path, &c->mine) : 0;
    if (e == ESTALE)
        record_error(c, e, "%s was replaced during the run by something pario did not create: "
                     "left alone; keep other writers out of --dir", c->write_path);
    else if (e && e != ENOENT)
        record_error(c, e, "cannot remove the previous iteration's %s: %s", c->write_path,
                     strerror(e));
    agree_or_fail(c);
    MPI_Barrier(c->comm);
    if (o->prealloc && c->owns_file) {
        int fd = create_exclusive(c->write_path, O_WRONLY, &c->mine);
        if (fd < 0) {
            record_error(c, -fd, "--prealloc: cannot create %s: %s", c->write_path,
                         strerror(-fd));
        } else {
            int e = posix_fallocate(fd, 0, (off_t)c->write_geom.file_bytes);
            if (e)
                record_error(c, e,
                             "--prealloc: %s cannot reserve %llu bytes: %s (drop --prealloc "
                             "on this file system)",
                             c->write_path, (unsigned long long)c->write_geom.file_bytes,
                             strerror(e));
            close(fd);
        }
    }
    agree_or_fail(c);
    pattern_source_fill(&c->src, pattern_key_make(o->seed, iteration, c->write_stream));
}

/* Before a read: optional eviction, then how much of the file is cached. */
static double prepare_read(io_ctx *c, uint64_t data_iteration)
{
    const io_options *o = c->o;
    MPI_Barrier(c->comm);
    if (o->evict) {
        int e = page_cache_evict(c->read_path);
        if (e)
            record_error(c, e, "--evict: cannot drop %s from the page cache: %s", c->read_path,
                         strerror(e));
    }
    agree_or_fail(c);
    MPI_Barrier(c->comm);
    double mine = page_cache_fraction(c->read_path), most;
    MPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    pattern_source_fill(&c->src, pattern_key_make(o->seed, data_iteration, c->read_stream));
    return most;
}

static void timed_phase(io_ctx *c, enum phase_kind kind, rank_record *rec, double *trace)
{
    const io_options *o = c->o;
    const bool writing = kind == PHASE_WRITE;
    const layout_geometry *g = writing ? &c->write_geom : &c->read_geom;
    const char *path = writing ? c->write_path : c->read_path;
    const uint64_t n = o->layout->block_count(g);
    const size_t block = (size_t)o->block;
    backend_open_args a = {.path = path,
                           .mode = writing ? BACKEND_WRITE : BACKEND_READ,
                           .direct = o->direct};
    void *h = NULL;
    uint64_t bytes = 0;
    int e;

    memset(rec, 0, sizeof *rec);
    MPI_Barrier(c->comm);
    const double t0 = clock_now();
    rec->start = t0 - c->epoch;

    if ((e = o->api->open(&a, &h)) != 0) {
        if (e == EINVAL && o->direct)
            record_error(c, e, "%s: this file system refuses O_DIRECT: drop --direct", path);
        else
            record_error(c, e, "open %s: %s", path, strerror(e));
        h = NULL;
    }
    rec->open_done = clock_now() - c->epoch;
    rec->io_first = rec->open_done;

    token_enter_share(&c->ring);
    for (uint64_t k = 0; k < n; k++) {
        token_enter_call(&c->ring, k);
        if (h && !c->err) {
            const uint64_t off = o->layout->block_offset(g, k);
            const double s = trace || k == 0 ? clock_now() : 0;
            if (writing)
                e = o->api->write_at(h, pattern_source_at(&c->src, off, block), block, off);
            else
                e = o->api->read_at(h, c->read_buf, block, off);
            if (e) {
                record_error(c, e, "%s %s at offset %llu: %s", writing ? "write" : "read", path,
                             (unsigned long long)off,
                             e == ENODATA ? "the file ends before this block" : strerror(e));
            } else {
                bytes += block;
            }
            if (k == 0)
                rec->io_first = s - c->epoch;
            if (trace) {
                trace[2 * k] = s - c->epoch;
                trace[2 * k + 1] = clock_now() - c->epoch;
            }
        }
        token_leave_call(&c->ring, k, n);
    }
    rec->io_done = clock_now() - c->epoch;
    if (writing && o->fsync && h && !c->err && (e = o->api->sync(h)) != 0)
        record_error(c, e, "fsync %s: %s", path, strerror(e));
    rec->sync_done = clock_now() - c->epoch;
    rec->io_last = rec->sync_done;
    token_leave_share(&c->ring);
    if (h && (e = o->api->close(h)) != 0)
        record_error(c, e, "close %s: %s", path, strerror(e));
    rec->close_done = clock_now() - c->epoch;
    MPI_Barrier(c->comm);
    rec->stop = clock_now() - c->epoch;
    rec->bytes = (double)bytes;
}

/* Untimed: read back every block this rank moved and compare every byte
 * with the pattern.  Broadcast files are checked once, split over ranks. */
static uint64_t verify_pass(io_ctx *c, enum phase_kind kind)
{
    const io_options *o = c->o;
    const bool writing = kind == PHASE_WRITE;
    const layout_geometry *g = writing ? &c->write_geom : &c->read_geom;
    const char *path = writing ? c->write_path : c->read_path;
    const uint64_t n = o->layout->block_count(g);
    backend_open_args a = {.path = path, .mode = BACKEND_READ, .direct = o->direct};
    void *h = NULL;
    uint64_t checked = 0;
    int e = o->api->open(&a, &h);
    if (e) {
        record_error(c, e, "verify: open %s: %s", path, strerror(e));
        return 0;
    }
    for (uint64_t k = 0; k < n && !c->err; k++) {
        if (o->layout->read_only && !o->per_rank_files &&
            k % (uint64_t)c->nranks != (uint64_t)c->rank)
            continue;
        uint64_t off = o->layout->block_offset(g, k);
        e = o->api->read_at(h, c->read_buf, o->block, off);
        if (e == ENODATA) {
            record_error(c, e, "verification failed: %s is truncated: it ends before offset %llu",
                         path, (unsigned long long)(off + o->block));
            break;
        } else if (e) {
            record_error(c, e, "verify: read %s at offset %llu: %s", path,
                         (unsigned long long)off, strerror(e));
            break;
        }
        int64_t bad = pattern_check(&c->src, off, c->read_buf, o->block);
        if (bad >= 0) {
            record_error(c, EIO, "verification failed: %s: first wrong byte at offset %llu",
                         path, (unsigned long long)(off + (uint64_t)bad));
            break;
        }
        checked += o->block;
    }
    o->api->close(h);
    return checked;
}

static void gather_iteration(io_ctx *c, io_iteration *it, const rank_record *rec,
                             const double *trace, uint64_t calls)
{
    if (c->rank == 0) {
        it->ranks = calloc((size_t)c->nranks, sizeof *it->ranks);
        if (trace)
            it->trace = calloc((size_t)c->nranks * calls * 2, sizeof(double));
    }
    MPI_Gather(rec, RANK_RECORD_DOUBLES, MPI_DOUBLE, it->ranks, RANK_RECORD_DOUBLES, MPI_DOUBLE,
               0, c->comm);
    if (trace) {
        MPI_Gather(trace, (int)(calls * 2), MPI_DOUBLE, it->trace, (int)(calls * 2), MPI_DOUBLE,
                   0, c->comm);
        it->trace_calls = calls;
    }
    if (c->rank != 0)
        return;
    double longest = 0, bytes = 0;
    for (int i = 0; i < c->nranks; i++) {
        double t = it->ranks[i].stop - it->ranks[i].start;
        if (t > longest)
            longest = t;
        bytes += it->ranks[i].bytes;
    }
    it->seconds = longest;
    it->bytes = (uint64_t)bytes;
    it->mib_per_s = longest > 0 ? bytes / (1024.0 * 1024.0) / longest : 0;
}

int io_command(int argc, char **argv)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    io_options o;
    io_options_parse(argc, argv, rank, nranks, &o);

    io_ctx c;
    memset(&c, 0, sizeof c);
    io_result r;
    setup(&c, &o, &r);
    r.argc = argc;
    r.argv = argv;

    const uint64_t calls = o.layout->block_count(&c.write_geom);
    double *trace = o.trace ? calloc(calls * 2, sizeof(double)) : NULL;
    if (rank == 0)
        r.its = calloc(o.iterations * (uint64_t)o.nphases, sizeof *r.its);

    /* A run that reads before it writes needs data already there. */
    uint64_t data_iteration = 0;
    if (o.phases[0] == PHASE_READ)
        prepare_initial_file(&c);

    for (uint64_t iter = 0; iter < o.iterations; iter++) {
        for (int p = 0; p < o.nphases; p++) {
            enum phase_kind kind = o.phases[p];
            io_iteration it = {.kind = kind, .iteration = iter, .cache_fraction = -1};
            if (kind == PHASE_WRITE) {
                prepare_write(&c, iter);
                it.data_iteration = iter;
            } else {
                it.cache_fraction = prepare_read(&c, data_iteration);
                it.data_iteration = data_iteration;
            }
            rank_record rec;
            timed_phase(&c, kind, &rec, trace);
            if (kind == PHASE_WRITE)
                note_own_file(&c);
            agree_or_fail(&c);
            if (kind == PHASE_WRITE)
                data_iteration = iter;
            if (o.verify) {
                double t = clock_now();
                uint64_t mine = verify_pass(&c, kind), all = 0;
                agree_or_fail(&c);
                MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, 0, c.comm);
                it.verified = true;
                it.verify_seconds = clock_now() - t;
                it.verified_bytes = all;
            }
            gather_iteration(&c, &it, &rec, trace, calls);
            if (rank == 0)
                r.its[r.nits++] = it;
        }
    }
    r.last_data_iteration = data_iteration;
    utc_now(r.finished_utc, sizeof r.finished_utc);

    int status = 0;
    if (rank == 0) {
        io_result_warn(&r);
        io_result_print(&r);
        if (o.json[0]) {
            int e = io_result_save_json(&r, o.json);
            if (e) {
                fprintf(stderr, "pario-engine: error: cannot write --json %s: %s\n", o.json,
                        strerror(e));
                status = EXIT_RUN_FAILED;
            }
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, c.comm);
    if (o.keep)
        record_length(&c);
    remove_own_files(&c);
    if (rank == 0)
        io_result_free(&r);
    free(trace);
    pattern_source_free(&c.src);
    pattern_buffer_free(c.read_buf, c.read_buf_mapped);
    return status;
}
