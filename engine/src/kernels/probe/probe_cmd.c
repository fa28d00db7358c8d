/* `pario-engine probe`: run every component measurement in turn.
 *
 * Single-stream parts (request/reply, open/byte/close, the storage stream)
 * run on rank 0 (and one partner) while the other ranks wait in a barrier;
 * the memory copy and metadata parts run on every rank at once.  A failure
 * on any rank is agreed on by all, the files this probe created are
 * removed, and the engine exits with one line. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../io/group_token.h"
#include "../../util/clock.h"
#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/mpiio_env.h"
#include "../../util/pattern.h"
#include "../../util/run_files.h"
#include "../../util/safe_file.h"
#include "probe.h"

#define BARRIERS_PER_SAMPLE 1000
#define ROUND_TRIPS_PER_SAMPLE 1000
#define MEMORY_COPIES_PER_SAMPLE 5
#define TOKEN_CALLS_PER_SAMPLE 1000
/* The pinned pair's two rings (token_shared_core_sample), whose difference
 * is the hand-overs alone: a short one, and a long one of about
 * SHARED_CORE_LONG_SECONDS (16 ticks at 250 Hz) at the short one's pace,
 * between twice its calls (a loaded core: the sample then lasts about
 * three short rings) and SHARED_CORE_LONG_CALLS. */
#define SHARED_CORE_SHORT_CALLS 2000
#define SHARED_CORE_LONG_CALLS 20000
#define SHARED_CORE_LONG_SECONDS 0.064
#define MESSAGE_BYTES_MAX (64ULL << 20)
#define BUSY_ROUND_TRIPS_PER_SAMPLE 10 /* each several ms with every core busy */
#define BUSY_THREADS_MAX 64

/* File indices under the run's name: NAME.<8 digits>, so that the front
 * end's clean-up after a killed point recognises every one of them. */
enum {
    FILE_STREAM = 0,
    FILE_ONE_BYTE = 1,
    FILE_COLLECTIVE = 2,
    FILE_RANK1_STREAM = 3, /* rank 1's own file in the two writers of a file each */
    FILE_METADATA0 = 4
};

typedef struct probe_ctx {
    const probe_options *o;
    MPI_Comm comm;
    int rank, nranks;
    char base[PATH_MAX];
    /* The files this probe created, by identity: the only ones removed. */
    owned_file stream, one_byte, collective, rank1_stream;
    owned_file *md; /* per metadata file of this rank */
    int err;
    char err_msg[PATH_MAX + 256];
} probe_ctx;

static void record_error(probe_ctx *c, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void record_error(probe_ctx *c, int e, const char *fmt, ...)
{
    if (c->err)
        return;
    c->err = e ? e : EIO;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
    va_end(ap);
}

static void file_path(const probe_ctx *c, uint64_t index, char *out)
{
    snprintf(out, PATH_MAX, "%s.%08llu", c->base, (unsigned long long)index);
}

static uint64_t md_index(const probe_ctx *c, uint64_t i)
{
    return FILE_METADATA0 + (uint64_t)c->rank * c->o->ops + i;
}

/* Only ever files this probe created (each was made with O_EXCL) and that
 * the names still hold. */
static void remove_own_files(probe_ctx *c)
{
    char p[PATH_MAX];
    file_path(c, FILE_STREAM, p);
    remove_if_ours(p, &c->stream);
    file_path(c, FILE_ONE_BYTE, p);
    remove_if_ours(p, &c->one_byte);
    file_path(c, FILE_COLLECTIVE, p);
    remove_if_ours(p, &c->collective);
    file_path(c, FILE_RANK1_STREAM, p);
    remove_if_ours(p, &c->rank1_stream);
    for (uint64_t i = 0; c->md && i < c->o->ops; i++) {
        file_path(c, md_index(c, i), p);
        remove_if_ours(p, &c->md[i]);
    }
}

static void agree_or_fail(probe_ctx *c)
{
    int mine = c->err ? c->rank : c->nranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (first == c->nranks)
        return;
    if (c->rank == first)
        fprintf(stderr, "pario-engine: error: rank %d: %s\n", c->rank, c->err_msg);
    fflush(stderr);
    remove_own_files(c);
    MPI_Barrier(c->comm);
    fail_exit(EXIT_RUN_FAILED, 0, "%s", "");
}

/* Create a new file exclusively (never through a symlink) and note which
 * file it is in who; EEXIST means someone else's file. */
static int create_new(probe_ctx *c, const char *path, owned_file *who)
{
    int fd = create_exclusive(path, O_WRONLY, who);
    if (fd < 0) {
        errno = -fd;
        if (errno == EEXIST) {
            char taken[PATH_MAX + 160];
            run_file_taken(path, taken, sizeof taken);
            record_error(c, EEXIST, "%s", taken);
        } else
            record_error(c, errno, "cannot create %s: %s", path, strerror(errno));
    }
    return fd;
}

/* A barrier that sleeps while it waits: ranks idle during rank 0's
 * single-stream measurements must not spin on a core the measuring rank
 * (or its kernel threads) could use. */
static void quiet_barrier(probe_ctx *c)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(c->comm, &req);
    struct timespec nap = {0, 100 * 1000};
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static void add(samples *s, double v) { s->v[s->n++] = v; }

/* The device's read counters before a read pass (rank 0); `device_done`
 * adds the pass's requests and bytes, if the device could be asked both
 * times. */
typedef struct device_mark {
    bool ok;
    uint64_t requests, bytes;
} device_mark;

static device_mark device_mark_now(const probe_ctx *c)
{
    device_mark m = {0};
    m.ok = device_reads_of(c->o->dir, &m.requests, &m.bytes) == 0;
    return m;
}

static void device_done(const probe_ctx *c, device_mark before, device_reads *into)
{
    device_mark after = device_mark_now(c);
    if (!into || !before.ok || !after.ok || into->requests.n >= PROBE_MAX_ITERATIONS)
        return;
    add(&into->requests, (double)(after.requests - before.requests));
    add(&into->bytes, (double)(after.bytes - before.bytes));
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- memory copy: every rank at once ---------------------------------- */
static void measure_memory(probe_ctx *c, probe_result *r)
{
    size_t n = (size_t)c->o->memory_bytes;
    unsigned char *src = malloc(n), *dst = malloc(n);
    if (!src || !dst)
        record_error(c, ENOMEM, "cannot allocate 2 x %zu bytes for the memory copy: lower --memory",
                     n);
    agree_or_fail(c);
    memset(src, 0x5a, n); /* touch every page outside the timing */
    memset(dst, 0, n);
    /* Each sample is the fastest of a few copies: a copy takes tens of
     * milliseconds, and one preemption on a shared machine would otherwise
     * decide the sample. */
    double best = 0;
    for (uint64_t it = 0; it < c->o->iterations; it++) {
        double mine = INFINITY, slowest;
        for (int k = 0; k < MEMORY_COPIES_PER_SAMPLE; k++) {
            MPI_Barrier(c->comm);
            double t0 = clock_now();
            memcpy(dst, src, n);
            double t = clock_now() - t0;
            if (dst[n / 2] != 0x5a) /* keeps the copy from being optimised away */
                record_error(c, EIO, "memory copy produced wrong data");
            dst[n / 2] = 0;
            mine = t < mine ? t : mine;
        }
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, c->comm);
        double rate = (double)n / (1 << 20) / mine;
        if (rate > best)
            best = rate;
        if (c->rank == 0)
            add(&r->memory_aggregate, (double)n * c->nranks / (1 << 20) / slowest);
    }
    MPI_Gather(&best, 1, MPI_DOUBLE, r->memory_per_rank, 1, MPI_DOUBLE, 0, c->comm);
    free(src);
    free(dst);
    agree_or_fail(c);
}

/* ---- barrier latency --------------------------------------------------- */
static void measure_barrier(probe_ctx *c, probe_result *r)
{
    for (int i = 0; i < 10; i++)
        MPI_Barrier(c->comm); /* warm up the connections */
    for (uint64_t it = 0; it < c->o->iterations; it++) {
        MPI_Barrier(c->comm);
        double t0 = clock_now();
        for (int i = 0; i < BARRIERS_PER_SAMPLE; i++)
            MPI_Barrier(c->comm);
        double mine = (clock_now() - t0) / BARRIERS_PER_SAMPLE, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
        if (c->rank == 0)
            add(&r->barrier, slowest);
    }
}

/* ---- request/reply: rank 0 asks `to` for 4 KiB -------------------------- */
static void measure_pair(probe_ctx *c, int to, samples *out)
{
    static char reply[PROBE_REQUEST_BYTES];
    int request = 0;
    for (uint64_t it = 0; it < c->o->iterations; it++) {
        quiet_barrier(c); /* the ranks outside the pair sleep here */
        double t0 = clock_now();
        for (int i = 0; i < ROUND_TRIPS_PER_SAMPLE + 10; i++) {
            if (i == 10)
                t0 = clock_now(); /* ten warm-up round trips first */
            if (c->rank == 0) {
                MPI_Send(&request, 1, MPI_INT, to, 1, c->comm);
                MPI_Recv(reply, PROBE_REQUEST_BYTES, MPI_BYTE, to, 2, c->comm, MPI_STATUS_IGNORE);
            } else if (c->rank == to) {
                MPI_Recv(&request, 1, MPI_INT, 0, 1, c->comm, MPI_STATUS_IGNORE);
                MPI_Send(reply, PROBE_REQUEST_BYTES, MPI_BYTE, 0, 2, c->comm);
            }
        }
        if (c->rank == 0)
            add(out, (clock_now() - t0) / ROUND_TRIPS_PER_SAMPLE);
    }
}

static void measure_pairs(probe_ctx *c, probe_result *r)
{
    if (c->nranks < 2)
        return;
    /* farthest: the last rank on another host than rank 0, else the last */
    int far = c->nranks - 1;
    if (c->rank == 0) {
        for (int k = c->nranks - 1; k > 0; k--)
            if (r->host_of[k] != r->host_of[0]) {
                far = k;
                break;
            }
    }
    MPI_Bcast(&far, 1, MPI_INT, 0, c->comm);
    r->have_pairs = true;
    r->nearest.from = r->farthest.from = 0;
    r->nearest.to = 1;
    r->farthest.to = far;
    if (c->rank == 0) {
        r->nearest.same_host = r->host_of[1] == r->host_of[0];
        r->farthest.same_host = r->host_of[far] == r->host_of[0];
    }
    measure_pair(c, 1, &r->nearest.seconds);
    measure_pair(c, far, &r->farthest.seconds);
    quiet_barrier(c);
}

/* ---- open + 1 byte + close, rank 0 -------------------------------------- */
static void measure_one_byte(probe_ctx *c, probe_result *r)
{
    char p[PATH_MAX];
    file_path(c, FILE_ONE_BYTE, p);
    if (c->rank == 0) {
        int fd = create_new(c, p, &c->one_byte);
        if (fd >= 0) {
            if (write(fd, "p", 1) != 1)
                record_error(c, errno, "write %s: %s", p, strerror(errno));
            close(fd);
        }
        char byte;
        for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
            double t0 = clock_now();
            for (uint64_t i = 0; i < c->o->ops && !c->err; i++) {
                fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || pread(fd, &byte, 1, 0) != 1)
                    record_error(c, errno, "open/read a byte/close %s: %s", p, strerror(errno));
                if (fd >= 0)
                    close(fd);
            }
            add(&r->open_read_close, (clock_now() - t0) / (double)c->o->ops);
            t0 = clock_now();
            for (uint64_t i = 0; i < c->o->ops && !c->err; i++) {
                fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || pwrite(fd, "q", 1, 0) != 1)
                    record_error(c, errno, "open/write a byte/close %s: %s", p, strerror(errno));
                if (fd >= 0 && close(fd) != 0)
                    record_error(c, errno, "close %s: %s", p, strerror(errno));
            }
            add(&r->open_write_close, (clock_now() - t0) / (double)c->o->ops);
            /* ROMIO's atomic mode (MPI_File_set_atomicity) wraps every
             * access in a blocking write lock of its byte range and drops it
             * after: the pair's cost, on ranges no one else holds. */
            fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                record_error(c, errno, "open %s for the byte-range locks: %s", p, strerror(errno));
            t0 = clock_now();
            for (uint64_t i = 0; fd >= 0 && i < c->o->ops && !c->err; i++) {
                struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                                   .l_start = (off_t)(i * 4096), .l_len = 4096};
                if (fcntl(fd, F_SETLKW, &lk) != 0)
                    record_error(c, errno, "lock a byte range of %s: %s", p, strerror(errno));
                lk.l_type = F_UNLCK;
                if (fcntl(fd, F_SETLK, &lk) != 0)
                    record_error(c, errno, "unlock a byte range of %s: %s", p, strerror(errno));
            }
            if (fd >= 0) {
                add(&r->lock_pair, (clock_now() - t0) / (double)c->o->ops);
                close(fd);
            }
        }
        const int e = c->err ? 0 : owned_file_check(p, &c->one_byte); /* as io between phases */
        if (e)
            record_error(c, e, "%s %s", p, owned_file_reason(e));
        remove_if_ours(p, &c->one_byte);
    }
    quiet_barrier(c);
    agree_or_fail(c);
}

/* ---- one stream to and from the storage, rank 0 ------------------------- */
/* With `reserve`, the file is created and its space reserved
 * (posix_fallocate, made durable) before the clock starts, as the CFS
 * report preallocated its files and pario's studies do with --prealloc: the
 * stream then measures moving the data, not allocating blocks.  Where the
 * file system cannot preallocate, the blocks are allocated inside the timing
 * and the result says so.  Without it the timed open creates the file, as
 * a write phase without --prealloc does, and the file system allocates the
 * blocks as the data is written back. */
static double timed_stream_write(probe_ctx *c, const char *p, pattern_source *src, bool reserve,
                                 bool *preallocated)
{
    const uint64_t block = c->o->block, n = c->o->stream_bytes / block;
    int fd;
    double t0;
    if (reserve) {
        fd = create_new(c, p, &c->stream);
        if (fd < 0)
            return 0;
        *preallocated = posix_fallocate(fd, 0, (off_t)c->o->stream_bytes) == 0 && fsync(fd) == 0;
        close(fd);
        t0 = clock_now();
        fd = open_ours(p, O_WRONLY, &c->stream);
        if (fd < 0) {
            record_error(c, -fd, "open %s: %s", p, owned_file_reason(-fd));
            return 0;
        }
    } else {
        t0 = clock_now();
        fd = create_new(c, p, &c->stream);
        if (fd < 0)
            return 0;
    }
    for (uint64_t k = 0; k < n && !c->err; k++) {
        uint64_t off = k * block;
        ssize_t w = pwrite(fd, pattern_source_at(src, off, block), block, (off_t)off);
        if (w != (ssize_t)block)
            record_error(c, w < 0 ? errno : ENOSPC, "write %s at offset %llu: %s", p,
                         (unsigned long long)off, w < 0 ? strerror(errno) : "short write");
    }
    if (!c->err && fsync(fd) != 0)
        record_error(c, errno, "fsync %s: %s", p, strerror(errno));
    if (close(fd) != 0)
        record_error(c, errno, "close %s: %s", p, strerror(errno));
    return clock_now() - t0;
}

/* The last `bytes` of the stream (all of it: --size) in --block calls. */
static double timed_stream_read(probe_ctx *c, const char *p, unsigned char *buf, bool direct,
                                uint64_t bytes)
{
    const uint64_t block = c->o->block, n = bytes / block, first = c->o->stream_bytes - n * block;
    double t0 = clock_now();
    int fd = open_ours(p, O_RDONLY | (direct ? O_DIRECT : 0), &c->stream);
    if (fd < 0) {
        record_error(c, -fd, "open %s: %s", p, owned_file_reason(-fd));
        return 0;
    }
    for (uint64_t k = 0; k < n && !c->err; k++) {
        const uint64_t off = first + k * block;
        ssize_t got = pread(fd, buf, block, (off_t)off);
        if (got != (ssize_t)block)
            record_error(c, got < 0 ? errno : EIO, "read %s at offset %llu: %s", p,
                         (unsigned long long)off, got < 0 ? strerror(errno) : "short read");
    }
    close(fd);
    return clock_now() - t0;
}

/* Empty the page cache of the file; if the kernel keeps it anyway, the read
 * goes around the cache with O_DIRECT.  Returns the method used. */
static const char *keep_cache_out(probe_ctx *c, const char *p, const probe_result *r,
                                  double *fraction)
{
    if (r->fs.memory_backed) {
        *fraction = page_cache_fraction(p);
        return "none (memory-backed file system)";
    }
    int e = page_cache_evict(p);
    *fraction = page_cache_fraction(p);
    if (e == 0 && *fraction >= 0 && *fraction < 0.01)
        return "posix_fadvise DONTNEED";
    int fd = open(p, O_RDONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return "O_DIRECT";
    }
    return "none (eviction and O_DIRECT refused)";
}

static void measure_stream(probe_ctx *c, probe_result *r)
{
    char p[PATH_MAX];
    file_path(c, FILE_STREAM, p);
    if (c->rank == 0) {
        pattern_source src;
        bool huge;
        size_t mapped = 0;
        unsigned char *buf = pattern_buffer_alloc(c->o->block, false, &huge, &mapped);
        if (pattern_source_init(&src, c->o->block, false) != 0 || !buf)
            record_error(c, ENOMEM, "cannot allocate the stream's %llu-byte buffers",
                         (unsigned long long)c->o->block);
        else
            pattern_source_fill(&src, pattern_key_make(1, 0, 0));
        /* An eighth of the stream in whole calls, if that is less than all */
        r->short_bytes = c->o->stream_bytes / 8 / c->o->block * c->o->block;
        if (r->short_bytes >= c->o->stream_bytes)
            r->short_bytes = 0;
        for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
            remove_if_ours(p, &c->stream); /* ours: a fresh file every iteration */
            double t = timed_stream_write(c, p, &src, true, &r->stream_preallocated);
            if (c->err)
                break;
            add(&r->stream_write_seconds, t);
            add(&r->stream_write, (double)c->o->stream_bytes / (1 << 20) / t);
            read_iteration *ri = &r->reads[r->stream_read.n];
            ri->method = keep_cache_out(c, p, r, &ri->cache_fraction);
            const device_mark mark = device_mark_now(c);
            t = timed_stream_read(c, p, buf, strcmp(ri->method, "O_DIRECT") == 0, c->o->stream_bytes);
            if (c->err)
                break;
            device_done(c, mark, &r->stream_read_dev);
            add(&r->stream_read_seconds, t);
            add(&r->stream_read, (double)c->o->stream_bytes / (1 << 20) / t);
            /* Again from the page cache: what a rank pays for bytes another
             * rank's read brought in (a broadcast's later readers).  After an
             * O_DIRECT read the cache is filled first, outside the timing. */
            double frac = page_cache_fraction(p);
            if (!(frac >= 0.99)) {
                timed_stream_read(c, p, buf, false, c->o->stream_bytes);
                frac = page_cache_fraction(p);
            }
            if (r->stream_read_cached.n == 0 || frac < r->cached_fraction)
                r->cached_fraction = frac;
            t = timed_stream_read(c, p, buf, false, c->o->stream_bytes);
            if (c->err)
                break;
            add(&r->stream_read_cached_seconds, t);
            add(&r->stream_read_cached, (double)c->o->stream_bytes / (1 << 20) / t);
            /* Its last eighth from storage again: against the whole
             * stream, the fixed start of a read phase (the kernel's first
             * read-ahead, which the calls after it do not wait for) apart
             * from the cost per byte.  The last, not the first: read-ahead
             * stops at the end of the file as it does for a short file,
             * where after the first eighth it would read on past it. */
            if (r->short_bytes) {
                double f;
                const char *how = keep_cache_out(c, p, r, &f);
                t = timed_stream_read(c, p, buf, strcmp(how, "O_DIRECT") == 0, r->short_bytes);
                if (c->err)
                    break;
                add(&r->stream_read_short_seconds, t);
            }
            /* The stream into a new file without reserved space: what a
             * write phase without --prealloc pays for its block allocation. */
            remove_if_ours(p, &c->stream);
            bool reserved_none;
            t = timed_stream_write(c, p, &src, false, &reserved_none);
            if (c->err)
                break;
            add(&r->stream_write_new_seconds, t);
        }
        remove_if_ours(p, &c->stream);
        if (buf)
            pattern_buffer_free(buf, mapped);
        pattern_source_free(&src);
    }
    quiet_barrier(c);
    agree_or_fail(c);
}

/* ---- metadata: every rank creates, stats, removes its own files --------- */
static void measure_metadata(probe_ctx *c, probe_result *r)
{
    const uint64_t n = c->o->ops;
    c->md = calloc(n, sizeof *c->md);
    if (!c->md)
        record_error(c, ENOMEM, "cannot allocate the notes of %llu metadata files",
                     (unsigned long long)n);
    char p[PATH_MAX];
    for (uint64_t it = 0; it < c->o->iterations; it++) {
        double t[3];
        struct stat st;
        MPI_Barrier(c->comm);
        double t0 = clock_now();
        for (uint64_t i = 0; i < n && !c->err; i++) {
            file_path(c, md_index(c, i), p);
            int fd = create_new(c, p, &c->md[i]);
            if (fd >= 0)
                close(fd);
        }
        t[0] = clock_now() - t0;
        agree_or_fail(c);
        MPI_Barrier(c->comm);
        t0 = clock_now();
        for (uint64_t i = 0; i < n && !c->err; i++) {
            file_path(c, md_index(c, i), p);
            if (stat(p, &st) != 0)
                record_error(c, errno, "stat %s: %s", p, strerror(errno));
        }
        t[1] = clock_now() - t0;
        agree_or_fail(c);
        MPI_Barrier(c->comm);
        t0 = clock_now();
        for (uint64_t i = 0; i < n && !c->err; i++) {
            file_path(c, md_index(c, i), p);
            /* only while the name still holds our file: one lstat per remove, timed */
            const int e = remove_if_ours(p, &c->md[i]);
            if (e)
                record_error(c, e, "remove %s: %s", p, owned_file_reason(e));
        }
        t[2] = clock_now() - t0;
        agree_or_fail(c);
        double slowest[3];
        MPI_Reduce(t, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, c->comm);
        if (c->rank == 0) {
            double ops = (double)n * c->nranks;
            add(&r->creates, ops / slowest[0]);
            add(&r->stats, ops / slowest[1]);
            add(&r->removes, ops / slowest[2]);
        }
    }
}

/* ---- two streams of one file: ranks 0 and 1 a half each, at once ------- */
/* Each iteration rank 0 creates the stream's file again and reserves its
 * space (posix_fallocate, fsync), as for the one stream; then ranks 0 and
 * 1 each write one half of it in --block calls at the same time (open,
 * write, fsync, close), the page cache of it is emptied, and both read
 * their halves back at once: what one file's storage gives several writers
 * and readers at once (a partitioned file, several aggregators), against
 * the one stream above; then, the cache emptied again, both read all of it
 * at once, every other block each (an interleaved file); then, emptied
 * again, four readers at once, a quarter each (ranks 0 and 1 with a thread
 * each beside them: on a host of two cores, more readers than cores, as
 * four ranks on two cores are); then, emptied again, both read the whole
 * file at once, every block each (a broadcast: two readers of the same
 * bytes).  Last, emptied again, four readers at once of short shares:
 * each one device read-ahead window long (the file's last four), where a
 * reader's growing windows reach past its share into a neighbour's before
 * that neighbour has read it (docs/model.md, the short shares' race).
 * Rank 1 opens the file by the identity rank 0 created it with.  Then two
 * writers of a file each (a file per rank): rank 0 the stream's file made
 * anew and rank 1 a file of its own, each with a half's space reserved,
 * both written at once; writers of one file take turns at its lock, while
 * writers of their own files copy into the page cache side by side. */
typedef enum { TWO_HALVES, TWO_INTERLEAVED, FOUR_QUARTERS, FOUR_INTERLEAVED, TWO_WHOLE, FOUR_SHORT, TWO_FILES } two_mode;

/* One reader (or writer) of a pass: its part of the file, its own
 * descriptor.  Threads record their error here, not in the context. */
typedef struct stream_part {
    const probe_ctx *c;
    const char *path;
    const owned_file *who;
    bool writing;
    pattern_source *src;
    unsigned char *buf;
    uint64_t first, end, step;
    uint64_t call; /* bytes per call; 0: the probe's --block */
    int err;
    char msg[PATH_MAX + 128];
} stream_part;

static void *stream_part_run(void *arg)
{
    stream_part *s = arg;
    const uint64_t block = s->call ? s->call : s->c->o->block;
    int fd = open_ours(s->path, s->writing ? O_WRONLY : O_RDONLY, s->who);
    if (fd < 0) {
        s->err = -fd;
        snprintf(s->msg, sizeof s->msg, "open %s: %s", s->path, owned_file_reason(-fd));
        return NULL;
    }
    for (uint64_t off = s->first; off < s->end && !s->err; off += s->step) {
        ssize_t n = s->writing ? pwrite(fd, pattern_source_at(s->src, off, block), block, (off_t)off)
                               : pread(fd, s->buf, block, (off_t)off);
        if (n != (ssize_t)block) {
            s->err = n < 0 ? errno : EIO;
            snprintf(s->msg, sizeof s->msg, "%s %s at offset %llu: %s", s->writing ? "write" : "read",
                     s->path, (unsigned long long)off, n < 0 ? strerror(errno) : "short transfer");
        }
    }
    if (s->writing && !s->err && fsync(fd) != 0) {
        s->err = errno;
        snprintf(s->msg, sizeof s->msg, "fsync %s: %s", s->path, strerror(errno));
    }
    close(fd);
    return NULL;
}

/* A rank's `parts` (1 or 2) readers or writers at once, the second on a
 * thread of its own beside the rank (four readers on two ranks); each
 * part's error recorded in the context afterwards, by the rank's thread. */
static void run_parts(probe_ctx *c, stream_part *part, int parts)
{
    pthread_t helper;
    bool threaded = false;
    if (parts == 2) {
        int e = pthread_create(&helper, NULL, stream_part_run, &part[1]);
        if (e)
            record_error(c, e, "cannot start a rank's second reader thread: %s", strerror(e));
        threaded = e == 0;
    }
    stream_part_run(&part[0]);
    if (threaded)
        pthread_join(helper, NULL);
    for (int k = 0; k < parts; k++)
        if (part[k].err)
            record_error(c, part[k].err, "%s", part[k].msg);
}

static double two_streams_pass(probe_ctx *c, const char *p, const owned_file *who, bool writing,
                               pattern_source *src, unsigned char *buf, unsigned char *buf2,
                               uint64_t half, uint64_t short_share, two_mode mode)
{
    const uint64_t block = c->o->block, whole = 2 * half;
    MPI_Barrier(c->comm);
    double t0 = clock_now();
    if (c->rank < 2) {
        /* a half each, every other block of the whole, a quarter each (two
         * readers per rank), all of it each, or a short share each of the
         * file's last four (two readers per rank) */
        stream_part part[2];
        const uint64_t quarter = whole / block / 4 * block; /* whole calls */
        int parts = mode == FOUR_QUARTERS || mode == FOUR_INTERLEAVED || mode == FOUR_SHORT ? 2 : 1;
        for (int k = 0; k < parts; k++) {
            stream_part *s = &part[k];
            *s = (stream_part){.c = c, .path = p, .who = who, .writing = writing, .src = src,
                               .buf = k ? buf2 : buf, .step = block};
            if (mode == TWO_HALVES) {
                s->first = (uint64_t)c->rank * half;
                s->end = s->first + half;
            } else if (mode == TWO_INTERLEAVED) {
                s->first = (uint64_t)c->rank * block;
                s->end = whole;
                s->step = 2 * block;
            } else if (mode == FOUR_QUARTERS) {
                s->first = (uint64_t)(2 * c->rank + k) * quarter;
                s->end = s->first + quarter;
            } else if (mode == FOUR_INTERLEAVED) { /* every fourth call, the quarters' bytes */
                s->first = (uint64_t)(2 * c->rank + k) * block;
                s->end = 4 * quarter;
                s->step = 4 * block;
            } else if (mode == TWO_FILES) { /* p is the rank's own file */
                s->first = 0;
                s->end = half;
            } else if (mode == FOUR_SHORT) {
                s->first = whole - 4 * short_share + (uint64_t)(2 * c->rank + k) * short_share;
                s->end = s->first + short_share;
            } else {
                s->first = 0;
                s->end = whole;
            }
        }
        run_parts(c, part, parts);
    }
    double mine = c->rank < 2 ? clock_now() - t0 : 0, slowest;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    return slowest;
}

/* Ranks 0 and 1 each write a half's bytes into a file of their own at
 * once (fsync), each file made anew with its space reserved as the one
 * file of the two writers above is: rank 0's the stream's file (`p`),
 * rank 1's its own, which it removes after the pass. */
static void two_files_pass(probe_ctx *c, probe_result *r, const char *p, pattern_source *src,
                           unsigned char *buf, unsigned char *buf2, uint64_t half)
{
    char own[PATH_MAX] = "";
    owned_file *mine = c->rank == 0 ? &c->stream : &c->rank1_stream;
    if (c->rank < 2) {
        if (c->rank == 0)
            remove_if_ours(p, &c->stream);
        file_path(c, c->rank == 0 ? FILE_STREAM : FILE_RANK1_STREAM, own);
        int fd = create_new(c, own, mine);
        if (fd >= 0) {
            if (posix_fallocate(fd, 0, (off_t)half) == 0)
                fsync(fd);
            close(fd);
        }
    }
    agree_or_fail(c);
    if (c->err)
        return;
    double t = two_streams_pass(c, own, mine, true, src, buf, buf2, half, 0, TWO_FILES);
    agree_or_fail(c);
    if (c->rank == 0)
        add(&r->two_files_seconds, t);
    if (c->rank == 1)
        remove_if_ours(own, &c->rank1_stream);
}

static void measure_two_streams(probe_ctx *c, probe_result *r)
{
    if (c->nranks < 2)
        return;
    char p[PATH_MAX];
    file_path(c, FILE_STREAM, p);
    const uint64_t block = c->o->block, half = c->o->stream_bytes / block / 2 * block;
    if (half == 0)
        return;
    /* four readers need a whole call each */
    const bool quarters = 2 * half / block >= 4;
    /* Short shares: one device read-ahead window each in whole calls (at
     * least one), rank 0's device for both ranks; only where four of them
     * are less than the file (else they are the quarters above) and the
     * device has a read-ahead window. */
    int64_t ahead = r->read_ahead_bytes;
    MPI_Bcast(&ahead, 1, MPI_INT64_T, 0, c->comm);
    uint64_t short_share = ahead > 0 ? (uint64_t)ahead / block * block : 0;
    if (ahead > 0 && short_share == 0)
        short_share = block;
    if (4 * short_share >= 2 * half || r->fs.memory_backed)
        short_share = 0;
    r->four_short_share = short_share;
    unsigned char *buf = NULL, *buf2 = NULL;
    pattern_source src;
    bool src_ok = false;
    if (c->rank < 2) {
        src_ok = pattern_source_init(&src, block, false) == 0;
        if (src_ok)
            pattern_source_fill(&src, pattern_key_make(1, 0, 0));
        buf = malloc(block);
        buf2 = malloc(block);
        if (!src_ok || !buf || !buf2)
            record_error(c, ENOMEM, "cannot allocate the two streams' %llu-byte buffers",
                         (unsigned long long)block);
    }
    agree_or_fail(c);
    for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
        if (c->rank == 0) {
            remove_if_ours(p, &c->stream); /* ours: a fresh file every iteration */
            int fd = create_new(c, p, &c->stream);
            if (fd >= 0) {
                if (posix_fallocate(fd, 0, (off_t)(2 * half)) == 0)
                    fsync(fd);
                close(fd);
            }
        }
        agree_or_fail(c);
        owned_file who = c->stream;
        MPI_Bcast(&who, sizeof who, MPI_BYTE, 0, c->comm);
        /* The passes over one fresh file, in order; each but the last
         * evicts the file before the next reads it. */
        const struct {
            bool writes;
            int mode;
            samples *into;
            device_reads *dev; /* a read pass: the device's requests over it */
        } passes[] = {
            {true, TWO_HALVES, &r->two_writers_seconds, NULL},
            {false, TWO_HALVES, &r->two_streams_seconds, &r->two_streams_dev},
            /* the same file read by both at once, every other block each
             * (an interleaved layout): the kernel's read-ahead sees neither
             * rank read on from where it stopped */
            {false, TWO_INTERLEAVED, &r->two_interleaved_seconds, &r->two_interleaved_dev},
            /* four readers of a quarter each at once: on two cores, more
             * readers than cores (four ranks on two cores) */
            {false, FOUR_QUARTERS, quarters ? &r->four_streams_seconds : NULL, &r->four_streams_dev},
            /* the same four readers of one file in interleaved calls,
             * every fourth call each (four ranks of an interleaved layout
             * on two cores): they take turns on the cores, which decides
             * how often a reader's read-ahead window survives the others'
             * (docs/model.md, four interleaved readers) */
            {false, FOUR_INTERLEAVED, quarters ? &r->four_interleaved_seconds : NULL,
             &r->four_interleaved_dev},
            /* both read the whole file at once: a broadcast's two readers
             * of the same bytes, each with its own read-ahead */
            {false, TWO_WHOLE, &r->two_same_seconds, &r->two_same_dev},
            /* four readers of short shares at once: each share one
             * read-ahead window, so a reader's windows reach into its
             * neighbour's share early in the pass */
            {false, FOUR_SHORT, short_share ? &r->four_short_seconds : NULL, &r->four_short_dev},
        };
        const int npasses = (int)(sizeof passes / sizeof passes[0]);
        for (int k = 0; k < npasses; k++) {
            if (!passes[k].into)
                continue;
            const device_mark mark = c->rank == 0 ? device_mark_now(c) : (device_mark){0};
            double t = two_streams_pass(c, p, &who, passes[k].writes, &src, buf, buf2, half,
                                        short_share, passes[k].mode);
            agree_or_fail(c);
            if (c->rank == 0) {
                device_done(c, mark, passes[k].dev);
                add(passes[k].into, t);
                if (k + 1 < npasses && !r->fs.memory_backed)
                    page_cache_evict(p);
            }
        }
        if (!c->err)
            two_files_pass(c, r, p, &src, buf, buf2, half);
    }
    if (c->rank == 0)
        remove_if_ours(p, &c->stream);
    if (src_ok)
        pattern_source_free(&src);
    free(buf);
    free(buf2);
    quiet_barrier(c);
    agree_or_fail(c);
}

/* ---- messages: rank 1 sends rank 0 a call's worth of data at a time ------ */
/* The rate at which MPI moves a call's data between a rank and its
 * collective aggregator: min(--size, 64 MiB) in --block messages, rank 0
 * asking for them with one 0-byte message and timing until the last has
 * arrived.  The other ranks sleep in a barrier. */
static void measure_messages(probe_ctx *c, probe_result *r)
{
    if (c->nranks < 2)
        return;
    const uint64_t block = c->o->block;
    uint64_t n = (c->o->stream_bytes < MESSAGE_BYTES_MAX ? c->o->stream_bytes : MESSAGE_BYTES_MAX) / block;
    if (n == 0)
        n = 1;
    r->have_messages = true;
    r->message_bytes = n * block;
    unsigned char *buf = NULL;
    if (c->rank < 2 && !(buf = malloc(block)))
        record_error(c, ENOMEM, "cannot allocate a %llu-byte message buffer", (unsigned long long)block);
    agree_or_fail(c);
    if (c->rank == 1)
        memset(buf, 0x6d, block);
    int go = 0;
    for (uint64_t it = 0; it < c->o->iterations; it++) {
        quiet_barrier(c);
        if (c->rank == 0) {
            double t0 = clock_now();
            MPI_Send(&go, 0, MPI_INT, 1, 3, c->comm);
            for (uint64_t k = 0; k < n; k++)
                MPI_Recv(buf, (int)block, MPI_BYTE, 1, 4, c->comm, MPI_STATUS_IGNORE);
            add(&r->message_seconds, clock_now() - t0);
        } else if (c->rank == 1) {
            MPI_Recv(&go, 0, MPI_INT, 0, 3, c->comm, MPI_STATUS_IGNORE);
            for (uint64_t k = 0; k < n; k++)
                MPI_Send(buf, (int)block, MPI_BYTE, 0, 4, c->comm);
        }
    }
    free(buf);
    quiet_barrier(c);
}

/* ---- token hand-over: the engine's own ring, with every rank ------------ */
static atomic_int crowd_stop;

/* A thread that yields in a loop, as a rank waiting for the token does:
 * beside each rank it makes two runnable tasks per core, as ranks above
 * the core count are.  It makes no MPI call (the rank's thread alone
 * does), which MPI_Init's thread level allows in Open MPI and MPICH. */
static void *crowd_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&crowd_stop))
        sched_yield();
    return NULL;
}

/* One ring of `calls` calls per rank of the engine's token code over the
 * `nranks` ranks of `comm`; returns the slowest rank's seconds on rank 0
 * of comm (0 elsewhere).  A ring of n calls per rank makes n * nranks - 1
 * hand-overs (the ring closes with the last rank's last call). */
static double ring_seconds(MPI_Comm comm, int rank, int nranks, uint64_t calls)
{
    token_ring t;
    token_ring_init(&t, rank, nranks, 1, GROUP_PER_CALL, comm);
    MPI_Barrier(comm);
    double t0 = clock_now();
    for (uint64_t k = 0; k < calls; k++) {
        token_enter_call(&t, k);
        token_leave_call(&t, k, calls);
    }
    double mine = clock_now() - t0, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    return slowest;
}

static void token_ring_sample(probe_ctx *c, samples *out)
{
    double slowest = ring_seconds(c->comm, c->rank, c->nranks, TOKEN_CALLS_PER_SAMPLE);
    if (c->rank == 0)
        add(out, slowest / (double)(TOKEN_CALLS_PER_SAMPLE * (uint64_t)c->nranks - 1));
}

/* Ranks 0 and 1 alone pass the token while both run on one core (the
 * core rank 0 may run on first), the others waiting in a barrier: each
 * hand-over then needs the next holder switched in on that core, as when
 * ranks outnumber the cores (a grouped run of 4 ranks on 2 cores).  In
 * the ring beside yielding threads above the next holder is sometimes
 * already running on its own core, and what it measures swings with the
 * machine's load.
 *
 * The time per hand-over is the slope between a short ring and a long
 * one, not one ring's time over its hand-overs: here (a 2-core guest, a
 * 250 Hz tick) a pinned ring's time comes out in whole ticks, the start
 * (the partner switched in on the shared core) and the end rounded to
 * them, so a ring of 1000 calls measured 8.00 ms, "4.00 us" per
 * hand-over, in every trial of every probe, and a ring of 10000 32 or
 * 40 ms (1.6-2.0 us).  The slope: 1.3-1.9 us; the engine's own grouped
 * run of 4 ranks in 2 rings on 2 cores, 64-byte calls on tmpfs: 1.6-2.1
 * us per hand-over besides the call, the same minutes.  Each ring's ends
 * may each be a tick off, so one slope is good to about 0.1-0.3 us. */
static void token_shared_core_sample(probe_ctx *c, MPI_Comm pair, int core, samples *out)
{
    cpu_set_t own, one;
    const bool in = c->rank < 2;
    int pinned = 0, both = 0;
    if (in) {
        CPU_ZERO(&one);
        CPU_SET(core, &one);
        pinned = sched_getaffinity(0, sizeof own, &own) == 0 &&
                 sched_setaffinity(0, sizeof one, &one) == 0;
        /* a rank the host's cpuset keeps off that core: no such sample */
        MPI_Allreduce(&pinned, &both, 1, MPI_INT, MPI_MIN, pair);
    }
    MPI_Barrier(c->comm);
    if (in && both) {
        double shorter = ring_seconds(pair, c->rank, 2, SHARED_CORE_SHORT_CALLS);
        /* the long ring's length, from the short one's pace (rank 0's figure) */
        double scaled = shorter > 0.0 ? SHARED_CORE_SHORT_CALLS * SHARED_CORE_LONG_SECONDS / shorter
                                      : (double)SHARED_CORE_LONG_CALLS;
        uint64_t long_calls = scaled >= SHARED_CORE_LONG_CALLS ? SHARED_CORE_LONG_CALLS
                              : scaled <= 2 * SHARED_CORE_SHORT_CALLS ? 2 * SHARED_CORE_SHORT_CALLS
                                                                      : (uint64_t)scaled;
        MPI_Bcast(&long_calls, 1, MPI_UINT64_T, 0, pair);
        double longer = ring_seconds(pair, c->rank, 2, long_calls);
        /* each ring of n calls per rank makes 2n - 1 hand-overs, so the
         * long one makes 2 (long - short) more */
        double per = (longer - shorter) / (2.0 * (double)(long_calls - SHARED_CORE_SHORT_CALLS));
        /* the rings' ticks rounded the difference away: no sample (the long
         * ring's mean would be the tick-timed figure this slope replaces) */
        if (c->rank == 0 && per > 0.0)
            add(out, per);
    }
    if (pinned)
        sched_setaffinity(0, sizeof own, &own);
    MPI_Barrier(c->comm);
}

static void measure_token(probe_ctx *c, probe_result *r)
{
    if (c->nranks < 2)
        return;
    for (uint64_t it = 0; it < c->o->iterations; it++)
        token_ring_sample(c, &r->token_pass);
    atomic_store(&crowd_stop, 0);
    pthread_t helper;
    int e = pthread_create(&helper, NULL, crowd_thread, NULL);
    if (e)
        record_error(c, e, "cannot start the token measurement's yielding thread: %s", strerror(e));
    agree_or_fail(c);
    for (uint64_t it = 0; it < c->o->iterations; it++)
        token_ring_sample(c, &r->token_pass_crowded);
    atomic_store(&crowd_stop, 1);
    pthread_join(helper, NULL);
    MPI_Barrier(c->comm);
    /* the core: the first rank 0 may run on */
    cpu_set_t own;
    int core = 0;
    if (c->rank == 0 && sched_getaffinity(0, sizeof own, &own) == 0)
        while (core < CPU_SETSIZE - 1 && !CPU_ISSET(core, &own))
            core++;
    MPI_Bcast(&core, 1, MPI_INT, 0, c->comm);
    MPI_Comm pair;
    MPI_Comm_split(c->comm, c->rank < 2 ? 0 : MPI_UNDEFINED, c->rank, &pair);
    for (uint64_t it = 0; it < c->o->iterations; it++)
        token_shared_core_sample(c, pair, core, &r->token_pass_shared_core);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
}

/* ---- busy hand-over: waiters that yield beside busy ranks --------------- */
/* With more ranks than cores Open MPI waits by polling and yielding
 * (mpi_yield_when_idle, which it sets for an oversubscribed node).  A rank
 * waiting so beside a rank that computes without yielding (a two-phase
 * aggregator copying its buffer or writing it into the page cache) gives
 * its turn away at every poll, and the scheduler runs it again only after
 * the busy one has had its share: a collective step that needs it waits
 * that long.  Ranks 0 and 1 measure it (the others asleep in a barrier):
 * one thread per core of the host, split between them, copies memory
 * without yielding, and the two ranks pass a message back and forth, each
 * waiting for it as Open MPI does when oversubscribed (MPI_Test, then
 * sched_yield).  Seconds per hand-over: half a round trip. */
static atomic_int busy_stop;

static void *busy_copier(void *arg)
{
    (void)arg;
    const size_t n = 1 << 20;
    char *from = malloc(n), *to = malloc(n);
    if (from && to) {
        memset(from, 0x5a, n);
        while (!atomic_load(&busy_stop))
            memcpy(to, from, n);
    }
    free(from);
    free(to);
    return NULL;
}

/* Receive one byte from `peer`, waiting by polling and yielding. */
static void yielding_recv(probe_ctx *c, char *b, int peer)
{
    MPI_Request req;
    int done = 0;
    MPI_Irecv(b, 1, MPI_BYTE, peer, 7, c->comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        sched_yield();
    }
}

static void measure_busy_handover(probe_ctx *c, probe_result *r)
{
    if (c->nranks < 2)
        return;
    int cores = r->hosts[r->host_of[0]].cores;
    if (cores < 2)
        cores = 2;
    if (cores > 2 * BUSY_THREADS_MAX)
        cores = 2 * BUSY_THREADS_MAX;
    r->busy_threads = cores;
    /* rank 0 runs the odd one: every core of the host has a busy thread */
    const int mine = c->rank == 0 ? (cores + 1) / 2 : c->rank == 1 ? cores / 2 : 0;
    for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
        pthread_t busy[BUSY_THREADS_MAX];
        int started = 0, e = 0;
        atomic_store(&busy_stop, 0);
        for (; started < mine && !e; started++)
            e = pthread_create(&busy[started], NULL, busy_copier, NULL);
        if (e) {
            started--;
            record_error(c, e, "cannot start the busy hand-over's threads: %s", strerror(e));
        }
        MPI_Barrier(c->comm);
        char b = 'h';
        double t0 = clock_now();
        for (int i = 0; i < BUSY_ROUND_TRIPS_PER_SAMPLE && c->rank < 2; i++) {
            if (c->rank == 0) {
                MPI_Send(&b, 1, MPI_BYTE, 1, 7, c->comm);
                yielding_recv(c, &b, 1);
            } else {
                yielding_recv(c, &b, 0);
                MPI_Send(&b, 1, MPI_BYTE, 0, 7, c->comm);
            }
        }
        const double t = clock_now() - t0;
        atomic_store(&busy_stop, 1);
        for (int k = 0; k < started; k++)
            pthread_join(busy[k], NULL);
        if (c->rank == 0 && !e)
            add(&r->busy_handover, t / (2.0 * BUSY_ROUND_TRIPS_PER_SAMPLE));
        quiet_barrier(c);
        agree_or_fail(c);
    }
}

/* ---- collective MPI-IO: the fixed cost of one collective call ----------- */
/* Every rank writes, then reads, 1 byte at offset rank with collective
 * calls, through ROMIO with every rank an aggregator and collective
 * buffering on (the ascired-servers preset's path): --ops calls each, so
 * the time per call is the call's own cost, not its data's. */
static void measure_collective(probe_ctx *c, probe_result *r)
{
    char p[PATH_MAX];
    file_path(c, FILE_COLLECTIVE, p);
    if (c->rank == 0) {
        int fd = create_new(c, p, &c->collective);
        if (fd >= 0)
            close(fd);
    }
    agree_or_fail(c);
    mpiio_settings s;
    memset(&s, 0, sizeof s);
    s.choice = MPIIO_IMPL_ROMIO;
    s.aggregators = c->nranks;
    char why[512];
    if (mpiio_settings_apply(&s, c->nranks, why, sizeof why))
        record_error(c, EINVAL, "collective MPI-IO: %s", why);
    agree_or_fail(c);
    snprintf(r->collective_impl, sizeof r->collective_impl, "%s", s.impl);
    MPI_Info info = mpiio_info_create(&s);
    MPI_File fh;
    int e = MPI_File_open(c->comm, p, MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (e != MPI_SUCCESS) {
        record_error(c, mpiio_errno(e), "MPI_File_open %s for the collective calls failed", p);
        agree_or_fail(c);
    }
    /* The collective buffer the library uses (ROMIO works through an
     * aggregator's file domain one buffer at a time). */
    MPI_Info used;
    if (MPI_File_get_info(fh, &used) == MPI_SUCCESS) {
        char value[64];
        int flag = 0;
        MPI_Info_get(used, "cb_buffer_size", (int)sizeof value - 1, value, &flag);
        r->cb_buffer_size = flag ? atoll(value) : 0;
        MPI_Info_free(&used);
    }
    char byte = 'c';
    const MPI_Offset at = c->rank;
    for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
        for (int w = 1; w >= 0; w--) {
            MPI_Barrier(c->comm);
            double t0 = clock_now();
            for (uint64_t i = 0; i < c->o->ops; i++) {
                e = w ? MPI_File_write_at_all(fh, at, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE)
                      : MPI_File_read_at_all(fh, at, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
                if (e != MPI_SUCCESS) {
                    record_error(c, mpiio_errno(e), "collective %s of %s failed",
                                 w ? "write" : "read", p);
                    break;
                }
            }
            double mine = (clock_now() - t0) / (double)c->o->ops, slowest;
            MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
            if (c->rank == 0)
                add(w ? &r->collective_write : &r->collective_read, slowest);
        }
    }
    MPI_File_close(&fh);
    /* The library's own open and close of the file by every rank (what an
     * MPI-IO or HDF5 phase pays beside the system calls' open and close):
     * --ops / 10 pairs (at least one) per sample, the slowest rank's mean. */
    const uint64_t pairs = c->o->ops / 10 ? c->o->ops / 10 : 1;
    for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
        MPI_Info again = mpiio_info_create(&s);
        MPI_Barrier(c->comm);
        double t0 = clock_now();
        for (uint64_t i = 0; i < pairs && !c->err; i++) {
            e = MPI_File_open(c->comm, p, MPI_MODE_RDWR, again, &fh);
            if (e != MPI_SUCCESS) {
                record_error(c, mpiio_errno(e), "MPI_File_open %s (open/close pairs) failed", p);
                break;
            }
            MPI_File_close(&fh);
        }
        MPI_Info_free(&again);
        double mine = (clock_now() - t0) / (double)pairs, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
        if (c->rank == 0)
            add(&r->collective_open_close, slowest);
    }
    if (c->rank == 0) {
        const int own = c->err ? 0 : owned_file_check(p, &c->collective);
        if (own)
            record_error(c, own, "%s %s", p, owned_file_reason(own));
        remove_if_ours(p, &c->collective);
    }
    quiet_barrier(c);
    agree_or_fail(c);
}

/* ---- streams in calls of a collective buffer ----------------------------- */
/* ROMIO's aggregators move a file in calls of cb_buffer_size (16 MiB unless
 * a hint says otherwise), far above the stream's --block: the storage's
 * rate for calls that size, written into a new file with no space reserved
 * (fsync; as the collective presets write) and read back with the page cache
 * emptied, by rank 0 alone and then by ranks 0 and 1 a half each at once.
 * Each iteration makes the file anew. */
/* Ranks below `ranks` each move their `part` bytes of the file (rank r
 * from r x part) in `call`-byte calls, at once; a write ends with fsync,
 * and with two writers each waits for the other's writes before its fsync
 * (a barrier), as a collective write's sync waits for every aggregator:
 * the call's closing agreement comes before MPI_File_sync.  Two writers
 * that each fsync on their own finish sooner (one's write-back runs
 * beside the other's last writes), which a collective write never lets
 * happen.  The later one's time. */
static double buffer_pass(probe_ctx *c, const char *p, const owned_file *who, bool writing,
                          pattern_source *src, unsigned char *buf, uint64_t call, int ranks,
                          uint64_t part)
{
    MPI_Barrier(c->comm);
    double t0 = clock_now();
    int fd = -1;
    if (c->rank < ranks) {
        fd = open_ours(p, writing ? O_WRONLY : O_RDONLY, who);
        if (fd < 0)
            record_error(c, -fd, "open %s: %s", p, owned_file_reason(-fd));
        const uint64_t first = (uint64_t)c->rank * part;
        for (uint64_t off = first; fd >= 0 && off < first + part && !c->err; off += call) {
            ssize_t n = writing ? pwrite(fd, pattern_source_at(src, off, call), call, (off_t)off)
                                : pread(fd, buf, call, (off_t)off);
            if (n != (ssize_t)call)
                record_error(c, n < 0 ? errno : EIO, "%s %s at offset %llu: %s",
                             writing ? "write" : "read", p, (unsigned long long)off,
                             n < 0 ? strerror(errno) : "short transfer");
        }
    }
    if (writing && ranks > 1)
        MPI_Barrier(c->comm); /* every writer's writes done: then the syncs */
    if (c->rank < ranks) {
        if (fd >= 0 && writing && !c->err && fsync(fd) != 0)
            record_error(c, errno, "fsync %s: %s", p, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    double mine = c->rank < ranks ? clock_now() - t0 : 0, slowest;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    return slowest;
}

/* Ranks 0 and 1 with a thread each beside them read a quarter of the
 * file each at once in `call`-byte calls (four aggregators' buffer reads
 * on a host of two cores); the later rank's time. */
static double buffer_four_pass(probe_ctx *c, const char *p, const owned_file *who,
                               unsigned char *buf, unsigned char *buf2, uint64_t call,
                               uint64_t quarter)
{
    MPI_Barrier(c->comm);
    double t0 = clock_now();
    if (c->rank < 2) {
        stream_part part[2];
        for (int k = 0; k < 2; k++) {
            const uint64_t first = (uint64_t)(2 * c->rank + k) * quarter;
            part[k] = (stream_part){.c = c, .path = p, .who = who, .buf = k ? buf2 : buf,
                                    .first = first, .end = first + quarter, .step = call,
                                    .call = call};
        }
        run_parts(c, part, 2);
    }
    double mine = c->rank < 2 ? clock_now() - t0 : 0, slowest;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    return slowest;
}

static void measure_buffer_streams(probe_ctx *c, probe_result *r)
{
    uint64_t call = PROBE_BUFFER_CALL;
    if (call > c->o->stream_bytes / 2)
        call = c->o->stream_bytes / 2; /* two calls at least: one per half */
    call = call / 4096 * 4096;
    if (call == 0)
        return;
    const uint64_t whole = c->o->stream_bytes / (2 * call) * (2 * call);
    r->buffer_call = call;
    r->buffer_bytes = whole;
    /* four readers of a quarter each, in the longest calls of whole pages
     * that fit both a quarter and a buffer (their greatest common divisor:
     * both are whole pages), so the four read exactly the file's bytes */
    const uint64_t quarter = whole % (4 * 4096) == 0 ? whole / 4 : 0;
    uint64_t call4 = quarter, rest = call;
    while (rest) {
        const uint64_t t = call4 % rest;
        call4 = rest;
        rest = t;
    }
    r->buffer_four_call = c->nranks >= 2 ? call4 : 0;
    char p[PATH_MAX];
    file_path(c, FILE_STREAM, p);
    unsigned char *buf = NULL, *buf2 = NULL;
    pattern_source src;
    bool src_ok = false;
    const int ranks = c->nranks < 2 ? 1 : 2;
    if (c->rank < ranks) {
        src_ok = pattern_source_init(&src, call, false) == 0;
        if (src_ok)
            pattern_source_fill(&src, pattern_key_make(1, 0, 0));
        buf = malloc(call);
        buf2 = r->buffer_four_call ? malloc(call) : buf;
        if (!src_ok || !buf || !buf2)
            record_error(c, ENOMEM, "cannot allocate the buffer streams' %llu-byte buffers",
                         (unsigned long long)call);
    }
    agree_or_fail(c);
    for (uint64_t it = 0; it < c->o->iterations && !c->err; it++) {
        for (int n = 1; n <= ranks && !c->err; n++) {
            if (c->rank == 0) {
                remove_if_ours(p, &c->stream); /* ours: a fresh file, no space reserved */
                int fd = create_new(c, p, &c->stream);
                if (fd >= 0)
                    close(fd);
            }
            agree_or_fail(c);
            owned_file who = c->stream;
            MPI_Bcast(&who, sizeof who, MPI_BYTE, 0, c->comm);
            double t = buffer_pass(c, p, &who, true, &src, buf, call, n, whole / n);
            agree_or_fail(c);
            if (c->rank == 0) {
                add(n == 1 ? &r->buffer_write_seconds : &r->buffer_writers_seconds, t);
                if (!r->fs.memory_backed)
                    page_cache_evict(p);
            }
            t = buffer_pass(c, p, &who, false, &src, buf, call, n, whole / n);
            agree_or_fail(c);
            if (c->rank == 0)
                add(n == 1 ? &r->buffer_read_seconds : &r->buffer_readers_seconds, t);
            if (n == 2 && r->buffer_four_call && !c->err) {
                if (c->rank == 0 && !r->fs.memory_backed)
                    page_cache_evict(p);
                t = buffer_four_pass(c, p, &who, buf, buf2, r->buffer_four_call, quarter);
                agree_or_fail(c);
                if (c->rank == 0)
                    add(&r->buffer_four_readers_seconds, t);
            }
        }
    }
    if (c->rank == 0)
        remove_if_ours(p, &c->stream);
    if (src_ok)
        pattern_source_free(&src);
    if (buf2 != buf)
        free(buf2);
    free(buf);
    quiet_barrier(c);
    agree_or_fail(c);
}

static void gather_facts(probe_ctx *c, probe_result *r)
{
    int len;
    utc_now(r->started_utc, sizeof r->started_utc);
    MPI_Get_library_version(r->mpi_library, &len);
    MPI_Get_version(&r->mpi_version, &r->mpi_subversion);
    host_info me;
    host_info_mine(&me);
    r->hosts = calloc((size_t)c->nranks, sizeof *r->hosts);
    /* every rank needs the placement: the farthest partner is on another host */
    MPI_Allgather(&me, sizeof me, MPI_BYTE, r->hosts, sizeof me, MPI_BYTE, c->comm);
    r->host_of = malloc(sizeof(int) * (size_t)c->nranks);
    r->nhosts = hosts_place(r->hosts, c->nranks, r->host_of);
    fs_facts_of(c->o->dir, &r->fs);
    r->read_ahead_bytes = r->fs.memory_backed ? -1 : read_ahead_bytes_of(c->o->dir);
    if (c->rank == 0)
        r->memory_per_rank = calloc((size_t)c->nranks, sizeof(double));
}

int probe_command(int argc, char **argv)
{
    probe_ctx c = {0};
    c.comm = MPI_COMM_WORLD;
    engine_world(&c.rank, &c.nranks);
    probe_options o;
    probe_options_parse(argc, argv, c.rank, &o);
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    c.o = &o;

    char name[256];
    if (o.name[0])
        snprintf(name, sizeof name, "%s", o.name);
    else
        snprintf(name, sizeof name, "pario-probe.%ld.%ld", (long)getpid(), (long)time(NULL));
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, c.comm);
    snprintf(c.base, sizeof c.base, "%s/%s", o.dir, name);

    probe_result r = {0};
    r.opts = &o;
    r.argc = argc;
    r.argv = argv;
    r.nranks = c.nranks;
    gather_facts(&c, &r);
    /* Every rank holds two --memory buffers: refuse a probe that would take
     * more than half of a node's memory (every rank sees the same facts). */
    for (int h = 0; h < c.nranks; h++) {
        int on_host = 0;
        for (int k = 0; k < c.nranks; k++)
            on_host += r.host_of[k] == h;
        if (r.host_of[h] == h && 2 * o.memory_bytes * (uint64_t)on_host > r.hosts[h].memory_bytes / 2)
            fail_usage("--memory: %d ranks on %s would hold 2 x %llu MiB each, more than half of its "
                       "memory: lower --memory or the ranks per node",
                       on_host, r.hosts[h].name, (unsigned long long)(o.memory_bytes >> 20));
    }

    measure_memory(&c, &r);
    measure_barrier(&c, &r);
    measure_pairs(&c, &r);
    measure_messages(&c, &r);
    measure_token(&c, &r);
    measure_busy_handover(&c, &r);
    measure_one_byte(&c, &r);
    measure_stream(&c, &r);
    measure_two_streams(&c, &r);
    measure_collective(&c, &r);
    measure_buffer_streams(&c, &r);
    measure_metadata(&c, &r);
    utc_now(r.finished_utc, sizeof r.finished_utc);

    int status = 0;
    if (c.rank == 0) {
        probe_result_warn(&r);
        probe_result_print(&r);
        if (o.json[0]) {
            int e = probe_result_save_json(&r, o.json);
            if (e) {
                fprintf(stderr, "pario-engine: error: cannot write --json %s: %s\n", o.json,
                        strerror(e));
                status = EXIT_RUN_FAILED;
            }
        }
        for (int i = 0; i < r.nwarnings; i++)
            free(r.warnings[i]);
        free(r.memory_per_rank);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, c.comm);
    remove_own_files(&c);
    free(c.md);
    free(r.hosts);
    free(r.host_of);
    return status;
}
