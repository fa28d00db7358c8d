/* uring: io_uring through liburing, up to --queue-depth requests in flight.
 *
 * When a request is handed over.  A request that finds others already
 * in the kernel enters it at once (io_uring_submit_and_get_events, which
 * also collects the completions that arrived meanwhile), one system call
 * per request as fio's io_uring engine does by default
 * (iodepth_batch_submit=1); a request that would be alone (queue depth 1,
 * the first requests of a phase) waits for reap, which hands it over and
 * waits in the same call.  Measured on a virtio disk against holding the
 * whole refill for one call per reap (bench/backends.py, run F in the
 * README): 4 KiB random reads at depth 16 went from 0.92x to 1.04x fio's
 * IOPS, at depth 64 from 0.87x to 0.95x, although that makes three to
 * four times the system calls (not proven, our reading: the device gets
 * a freed slot's next request without waiting for the rest of the
 * refill).  --uring-submit-batch N
 * waits for N queued requests instead (N = the depth: once per refill).
 * reap enters the kernel only when it has something to hand over or no
 * completion is waiting in the ring.
 *
 * Registered buffers (the loop's buffer slots, pinned once per open) and
 * a registered file descriptor save the kernel a page-table walk and a
 * file lookup per request.
 *
 * With --uring-async-workers every request runs on the kernel's io-wq
 * worker threads, so cached reads are copied by several threads at once.
 * Those threads are created with the rank's CPU affinity, and the kernel
 * keeps any affinity given to them later (IORING_REGISTER_IOWQ_AFF)
 * inside the one the rank's launcher set with sched_setaffinity: under
 * mpirun's default binding of a rank to one core they all share that core
 * and a queue depth of 2 copies no faster than 1 (seen with perf record
 * --sample-cpu).  Only an unbound rank (mpirun --bind-to none) lets them
 * spread; bench/backends.py measures both. */
#include "backend.h"
#include "backend_fd.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../util/fail.h"
#include "../util/pattern.h"
#include "../util/sizes.h"
#include "../util/json.h"
#include "io_options.h"

#define URING_MAX_DEPTH 4096u
#define URING_MAX_BUFFER_BYTES (4ULL << 30)

typedef struct uring_config {
    unsigned depth;
    unsigned submit_batch; /* queued requests that enter the kernel at once */
    bool register_buffers;
    bool register_files;
    bool force_async;
} uring_config;

/* The ring setup the kernel accepted (see ring_init). */
static const char *ring_setup_used = "";

enum { OPT_DEPTH, OPT_SUBMIT_BATCH, OPT_REG_BUFS, OPT_REG_FILES, OPT_ASYNC };

static const backend_option uring_options[] = {
    {"queue-depth", "N", "requests in flight (default 16)", OPT_DEPTH},
    {"uring-submit-batch", "N",
     "hand requests to the kernel as soon as N are queued\nwhile others are in flight (default 1, "
     "as fio);\nN = --queue-depth: one system call per refill",
     OPT_SUBMIT_BATCH},
    {"uring-register-buffers", NULL,
     "register the buffers with the kernel once per open\n(io_uring fixed buffers)",
     OPT_REG_BUFS},
    {"uring-register-files", NULL, "register the file descriptor (fixed file)", OPT_REG_FILES},
    {"uring-async-workers", NULL,
     "hand every request to the kernel's worker threads\n(IOSQE_ASYNC): requests that "
     "would complete inline\n(cached data) run in parallel instead; the workers\ninherit "
     "the rank's CPU binding: launch unbound\n(mpirun --bind-to none) to give them more "
     "than one core",
     OPT_ASYNC},
};

static void uring_config_init(void *cfg)
{
    uring_config *c = cfg;
    c->depth = 16;
    c->submit_batch = 1;
}

static void uring_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    uring_config *c = cfg;
    switch (id) {
    case OPT_DEPTH: {
        uint64_t d = option_count("--queue-depth", arg);
        if (d > URING_MAX_DEPTH)
            fail_usage("--queue-depth %s is more than %u: use a smaller depth", arg,
                       URING_MAX_DEPTH);
        c->depth = (unsigned)d;
        break;
    }
    case OPT_SUBMIT_BATCH: {
        uint64_t b = option_count("--uring-submit-batch", arg);
        if (b > URING_MAX_DEPTH)
            fail_usage("--uring-submit-batch %s is more than %u: use at most the queue depth", arg,
                       URING_MAX_DEPTH);
        c->submit_batch = (unsigned)b;
        break;
    }
    case OPT_REG_BUFS: c->register_buffers = true; break;
    case OPT_REG_FILES: c->register_files = true; break;
    case OPT_ASYNC: c->force_async = true; break;
    }
}

static void uring_config_check(const void *cfg, const backend_run_facts *run)
{
    const uring_config *c = cfg;
    if (c->submit_batch > c->depth)
        fail_usage("--uring-submit-batch %u is more than --queue-depth %u: a batch that large "
                   "never fills; use at most %u",
                   c->submit_batch, c->depth, c->depth);
    /* Each slot holds a pattern source (1 MiB + block) and a read buffer. */
    uint64_t bytes = (uint64_t)c->depth * (PATTERN_PERIOD + 2 * (uint64_t)run->block);
    if (bytes > URING_MAX_BUFFER_BYTES) {
        char bl[32], need[32];
        size_format(run->block, bl, sizeof bl);
        size_format(bytes, need, sizeof need);
        fail_usage("--queue-depth %u with --block %s needs %s of buffers: lower the depth "
                   "or the block",
                   c->depth, bl, need);
    }
    /* Probe once, so an environment without io_uring (a seccomp filter, a
     * sysctl) is one clear line before any I/O. */
    struct io_uring ring;
    int e = io_uring_queue_init(1, &ring, 0);
    if (e < 0)
        fail_usage("--api uring: this system refuses io_uring (%s): use another --api",
                   strerror(-e));
    io_uring_queue_exit(&ring);
    if (c->register_buffers && geteuid() != 0) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur < bytes)
            fail_usage("--uring-register-buffers pins %llu MiB but ulimit -l allows %llu KiB: "
                       "raise ulimit -l or drop the option",
                       (unsigned long long)(bytes >> 20), (unsigned long long)(rl.rlim_cur >> 10));
    }
}

static unsigned uring_queue_depth(const void *cfg) { return ((const uring_config *)cfg)->depth; }

static void uring_describe(const void *cfg, struct json *j)
{
    const uring_config *c = cfg;
    json_uint(j, "queue_depth", c->depth);
    json_uint(j, "submit_batch", c->submit_batch);
    json_bool(j, "register_buffers", c->register_buffers);
    json_bool(j, "register_files", c->register_files);
    json_bool(j, "async_workers", c->force_async);
    json_string(j, "ring_setup", ring_setup_used);
}

/* One request in flight: what remains of it after a short transfer. */
typedef struct uring_req {
    enum backend_mode mode;
    char *buf;
    size_t left;
    uint64_t offset;
    unsigned buffer_index;
    uint64_t tag;
} uring_req;

typedef struct uring_file {
    int fd;
    struct io_uring ring;
    bool fixed_buffers, fixed_file, force_async;
    uring_req *reqs; /* depth of them */
    unsigned *free_reqs, nfree;
    unsigned depth, submit_batch;
} uring_file;

/* The ring's setup, best first: completions run only when this (single)
 * thread asks for them (DEFER_TASKRUN, Linux 6.1), or without forcing an
 * interrupt of the task (COOP_TASKRUN, 5.19), or plain.  Which one the
 * kernel took is recorded (describe). */
static const struct {
    unsigned flags;
    const char *name;
} ring_setups[] = {
    {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, "defer_taskrun"},
    {IORING_SETUP_COOP_TASKRUN, "coop_taskrun"},
    {0, "plain"},
};

static int ring_init(unsigned depth, struct io_uring *ring)
{
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof ring_setups / sizeof ring_setups[0]; i++) {
        r = io_uring_queue_init(depth, ring, ring_setups[i].flags);
        if (r == 0) {
            ring_setup_used = ring_setups[i].name;
            return 0;
        }
        if (r != -EINVAL)
            return r; /* a real failure, not an unknown flag */
    }
    return r;
}

static int uring_open(const backend_open_args *a, void **handle)
{
    const uring_config *cfg = a->config;
    uring_file *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->depth = cfg->depth;
    f->submit_batch = cfg->submit_batch;
    f->force_async = cfg->force_async;
    f->reqs = calloc(f->depth, sizeof *f->reqs);
    f->free_reqs = calloc(f->depth, sizeof *f->free_reqs);
    int e = (!f->reqs || !f->free_reqs) ? ENOMEM : 0;
    for (unsigned i = 0; i < f->depth; i++)
        f->free_reqs[f->nfree++] = i;
    f->fd = -1;
    if (!e) {
        int fd = backend_open_fd(a, false);
        if (fd < 0)
            e = -fd;
        else
            f->fd = fd;
    }
    bool ring_up = false;
    if (!e) {
        int r = ring_init(f->depth, &f->ring);
        if (r < 0)
            e = -r;
        else
            ring_up = true;
    }
    if (!e && cfg->register_buffers) {
        int r = io_uring_register_buffers(&f->ring, a->buffers, a->nbuffers);
        if (r < 0)
            e = -r;
        f->fixed_buffers = true;
    }
    if (!e && cfg->register_files) {
        int r = io_uring_register_files(&f->ring, &f->fd, 1);
        if (r < 0)
            e = -r;
        f->fixed_file = true;
    }
    if (e) {
        if (ring_up)
            io_uring_queue_exit(&f->ring);
        if (f->fd >= 0)
            close(f->fd);
        free(f->reqs);
        free(f->free_reqs);
        free(f);
        return e;
    }
    *handle = f;
    return 0;
}

/* Put the rest of request i on the submission queue. */
static int uring_prep(uring_file *f, unsigned i)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);
    if (!sqe) {
        /* the queue holds prepared entries the kernel has not seen yet */
        int r = io_uring_submit(&f->ring);
        if (r < 0)
            return -r;
        if (!(sqe = io_uring_get_sqe(&f->ring)))
            return EBUSY;
    }
    uring_req *q = &f->reqs[i];
    int fd = f->fixed_file ? 0 : f->fd;
    unsigned len = (unsigned)q->left;
    if (q->mode == BACKEND_WRITE) {
        if (f->fixed_buffers)
            io_uring_prep_write_fixed(sqe, fd, q->buf, len, q->offset, (int)q->buffer_index);
        else
            io_uring_prep_write(sqe, fd, q->buf, len, q->offset);
    } else {
        if (f->fixed_buffers)
            io_uring_prep_read_fixed(sqe, fd, q->buf, len, q->offset, (int)q->buffer_index);
        else
            io_uring_prep_read(sqe, fd, q->buf, len, q->offset);
    }
    if (f->fixed_file)
        sqe->flags |= IOSQE_FIXED_FILE;
    if (f->force_async)
        sqe->flags |= IOSQE_ASYNC;
    io_uring_sqe_set_data64(sqe, i);
    return 0;
}

static int uring_submit(void *h, enum backend_mode mode, const backend_request *rq)
{
    uring_file *f = h;
    if (f->nfree == 0)
        return EBUSY; /* the loop never exceeds the depth it was given */
    if (rq->len > (1u << 31))
        return EINVAL;
    unsigned i = f->free_reqs[--f->nfree];
    f->reqs[i] = (uring_req){.mode = mode,
                             .buf = rq->buf,
                             .left = rq->len,
                             .offset = rq->offset,
                             .buffer_index = rq->buffer_index,
                             .tag = rq->tag};
    int e = uring_prep(f, i);
    if (e) {
        f->free_reqs[f->nfree++] = i;
        return e;
    }
    /* Enter now if the batch is full and the kernel already holds other
     * requests (see the top of this file).  A failed entry is no failure
     * of this request: it stays queued, and reap enters again and reports
     * an error that lasts. */
    unsigned queued = io_uring_sq_ready(&f->ring), in_flight = f->depth - f->nfree;
    if (queued >= f->submit_batch && in_flight > queued)
        (void)io_uring_submit_and_get_events(&f->ring);
    return 0;
}

static int uring_reap(void *h, unsigned wait_for, backend_completion *done, unsigned max)
{
    uring_file *f = h;
    unsigned n = 0;
    while (n < wait_for) {
        /* no system call when there is nothing to hand over and
         * completions are already waiting in the ring */
        if (io_uring_sq_ready(&f->ring) > 0 || io_uring_cq_ready(&f->ring) == 0) {
            int r = io_uring_submit_and_wait(&f->ring, 1);
            if (r < 0 && r != -EINTR)
                return r;
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&f->ring, head, cqe)
        {
            if (n == max)
                break;
            seen++;
            unsigned i = (unsigned)io_uring_cqe_get_data64(cqe);
            uring_req *q = &f->reqs[i];
            int res = cqe->res, err = 0;
            if (res < 0) {
                err = -res;
            } else if (res == 0 && q->mode == BACKEND_READ) {
                err = ENODATA; /* the file ends before the block does */
            } else if (res == 0) {
                err = EIO;
            } else if ((size_t)res < q->left) {
                /* short transfer: send the rest, the request stays in flight */
                q->buf += res;
                q->left -= (size_t)res;
                q->offset += (uint64_t)res;
                err = uring_prep(f, i);
                if (!err)
                    continue;
            }
            done[n].tag = q->tag;
            done[n].error = err;
            n++;
            f->free_reqs[f->nfree++] = i;
        }
        io_uring_cq_advance(&f->ring, seen);
    }
    return (int)n;
}

static int uring_sync(void *h)
{
    uring_file *f = h;
    return fsync(f->fd) == 0 ? 0 : errno;
}

static int uring_close(void *h)
{
    uring_file *f = h;
    io_uring_queue_exit(&f->ring); /* cancels anything left after an error */
    int e = close(f->fd) == 0 ? 0 : errno;
    free(f->reqs);
    free(f->free_reqs);
    free(f);
    return e;
}

const backend_ops backend_uring = {
    .name = "uring",
    .summary = "io_uring (liburing): requests kept in flight up to a queue depth",
    .caps = BACKEND_CAP_DIRECT | BACKEND_CAP_ASYNC | BACKEND_CAP_GROUPABLE | BACKEND_CAP_PREALLOC,
    .options = uring_options,
    .noptions = sizeof uring_options / sizeof uring_options[0],
    .config_size = sizeof(uring_config),
    .config_init = uring_config_init,
    .config_set = uring_config_set,
    .config_check = uring_config_check,
    .describe = uring_describe,
    .open = uring_open,
    .queue_depth = uring_queue_depth,
    .submit = uring_submit,
    .reap = uring_reap,
    .sync = uring_sync,
    .close = uring_close,
};
