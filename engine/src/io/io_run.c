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
#include "../util/disk_full.h"
#include "../util/fail.h"
#include "../util/check_mode.h"
#include "../util/fsinfo.h"
#include "../util/mpi_fail.h"
#include "../util/pattern.h"
#include "../util/run_files.h"
#include "../util/safe_file.h"
#include "group_token.h"
#include "io_options.h"
#include "io_result.h"
#include "stripe.h"

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
    /* the files on disk behind write_path and read_path: one each, or
     * one per target when striped (stripe.h) */
    int nparts;
    char (*write_parts)[PATH_MAX], (*read_parts)[PATH_MAX];
    owned_file *mine; /* identity of each write part as this run created it */
    owned_file *theirs; /* every rank's mine (nranks x nparts), for opening another's file */
    int write_owner, read_owner; /* the rank whose created file this rank writes / reads */
    token_ring ring;
    background bg;
    /* Buffer slots: one for per-call backends, queue-depth many for
     * asynchronous ones (backend.h says why each has its own source). */
    unsigned nslots;
    pattern_source *srcs;       /* data to write; srcs[0] also checks reads */
    unsigned char **read_bufs;
    size_t *read_mapped;
    unsigned *slot_free;        /* free slot stack */
    uint64_t *slot_block, *slot_offset; /* the block in flight in each slot */
    backend_completion *completions;
    struct iovec *iov;          /* every buffer, for backends that register them */
    unsigned niov;
    bool buffers_huge;
    /* transfer backends: slices of a rank's list, each in its own slot */
    unsigned char *xfer_buf;
    size_t xfer_mapped;
    uint64_t *xfer_offsets;
    uint64_t xfer_blocks;       /* blocks per slice (one transfer call) */
    uint64_t xfer_slots;        /* slices the buffer holds (packed before the clock) */
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

/* A file, or what an object store backend keeps under the path:
 * 1 or 0, or a negative errno when the store cannot be asked. */
static int data_exists(const io_ctx *c, const char *path)
{
    struct stat st;
    if (c->o->api->exists)
        return c->o->api->exists(path, c->o->api_config);
    return lstat(path, &st) == 0;
}

/* Remove write part t: 0 or errno (ENOENT when nothing was there, ESTALE
 * when the name now holds a file this run did not create). */
static int data_remove(io_ctx *c, int t)
{
    if (c->o->api->remove)
        return c->o->api->remove(c->write_parts[t], c->o->api_config);
    return remove_if_ours(c->write_parts[t], &c->mine[t]);
}

/* An open of this run's own file that found no file (ENOENT): EXDEV when
 * the file system it was made on is no longer mounted at its directory
 * (owned_file_check), so the line says where the file went; else e. */
static int gone_with_its_mount(const backend_open_args *a, int e)
{
    if (e != ENOENT || a->create || !a->expect || !a->expect->known)
        return e;
    return owned_file_check(a->path, a->expect) == EXDEV ? EXDEV : e;
}

/* say: the run succeeded, so no error line has named a replaced file yet.
 * Otherwise (a failed run) a file or an object store's objects that could
 * not be removed are noted for the error line (mpi_fail_left_behind). */
static void remove_own_files(io_ctx *c, bool say)
{
    if (c->o->keep)
        return;
    MPI_Barrier(c->comm);
    for (int t = 0; c->owns_file && t < c->nparts; t++) {
        int e = data_remove(c, t); /* only ever the file this run created */
        if (say && (e == ESTALE || e == ELOOP))
            fprintf(stderr, "pario-engine: warning: rank %d: %s %s\n", c->rank, c->write_parts[t],
                    owned_file_reason(e));
        /* not ours any more, or already said (the line's own EXDEV) */
        else if (!say && e && e != ENOENT && e != ESTALE && e != ELOOP && e != EXDEV) {
            char what[PATH_MAX + 600];
            if (c->o->api->stored_as)
                c->o->api->stored_as(c->write_parts[t], c->o->api_config, what, sizeof what);
            else
                snprintf(what, sizeof what, "%s is", c->write_parts[t]);
            mpi_fail_left_behind_as(what, e);
        }
    }
    MPI_Barrier(c->comm);
}

/* Every rank learns which files the others created (collective), so a
 * rank opening a file another rank made opens only that file. */
static void share_identities(io_ctx *c)
{
    const int n = (int)(sizeof *c->mine * (size_t)c->nparts);
    MPI_Allgather(c->mine, n, MPI_BYTE, c->theirs, n, MPI_BYTE, c->comm);
}

/* After a phase that created the write parts (collective): the backend
 * noted which files it created from its own descriptor (backend.h), so
 * only those are ever removed; a name swapped for a symlink or another
 * file mid-run is reported and left alone.  Never noted from the name
 * now: that would take whatever was put there for pario's own. */
static void note_own_file(io_ctx *c)
{
    for (int t = 0; c->owns_file && t < c->nparts && !(c->o->api_caps & BACKEND_CAP_OBJECTS); t++) {
        /* unknown: the create failed (already reported) or the name did
         * not hold the new file even right after it was made */
        int e = c->mine[t].known ? owned_file_check(c->write_parts[t], &c->mine[t]) : ESTALE;
        if (e)
            record_error(c, e, "%s %s", c->write_parts[t], owned_file_reason(e));
    }
    share_identities(c);
}

/* --keep: record the length the file must have in an extended attribute,
 * so `pario-engine verify` can tell truncation from extension without
 * --size (docs/result-schema.md).  A file system without user xattrs just
 * means verify needs --size.  A striped file's parts each carry the whole
 * file's length under a name of their own (user.pario.striped_size): a
 * part alone is no pattern file, and the sum of the parts cannot tell a
 * part cut short from a whole file (tester 14). */
static void record_length(io_ctx *c)
{
    if (!c->owns_file)
        return;
    const char *name = c->nparts == 1 ? "user.pario.size" : "user.pario.striped_size";
    char text[32];
    int n = snprintf(text, sizeof text, "%llu", (unsigned long long)c->write_geom.file_bytes);
    for (int t = 0; t < c->nparts; t++)
        if (owned_file_check(c->write_parts[t], &c->mine[t]) == 0)
            lsetxattr(c->write_parts[t], name, text, (size_t)n, 0);
}

/* All ranks agree whether a step failed; the lowest failing rank prints
 * its one line, files this run created are removed, and all exit. */
static void agree_or_fail(io_ctx *c)
{
    int mine = c->err ? c->rank : c->nranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (first == c->nranks)
        return;
    background_stop(&c->bg);
    remove_own_files(c, false); /* first: the line says what could not be removed */
    const char *left = mpi_fail_left_behind_agree(c->comm);
    char fix[PATH_MAX + 64]; /* the disk filled after the free-space check */
    disk_full_fix(c->err, c->o->stripe.ntargets ? "the --stripe-dirs" : c->o->dir, "--size", fix, sizeof fix);
    fail_exit(EXIT_RUN_FAILED, c->rank == first, "rank %d: %s%s%s", c->rank, c->err_msg, fix, left);
}

/* Refuse to touch a file that exists before the run: pario only ever
 * removes files it created. */
static void check_paths_are_new(io_ctx *c)
{
    int there = 0;
    char p[PATH_MAX] = "";
    for (int t = 0; c->owns_file && t < c->nparts && there == 0; t++)
        if ((there = data_exists(c, c->write_parts[t])) != 0)
            snprintf(p, sizeof p, "%s", c->write_parts[t]); /* a stripe's part, not its first */
    /* the lowest rank with a clash or an unanswered question speaks; nothing
     * is removed on the way out, since nothing was created yet */
    int mine = there != 0 ? c->rank : c->nranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (first == c->nranks)
        return;
    int what = there;
    MPI_Bcast(&what, 1, MPI_INT, first, c->comm);
    MPI_Bcast(p, PATH_MAX, MPI_CHAR, first, c->comm); /* the path that exists, as that rank sees it */
    const char *own = what < 0 && c->o->api->why ? c->o->api->why(-what, c->o->api_config) : NULL;
    if (own) /* the backend's words name the fix */
        fail_usage("--api %s cannot look for %s in its store: %s", c->o->api->name, p, own);
    if (what < 0)
        fail_usage("--api %s cannot look for %s in its store: %s: check the store's address "
                   "and bucket", c->o->api->name, p, strerror(-what));
    char taken[PATH_MAX + 160];
    run_file_taken(p, taken, sizeof taken);
    fail_usage("%s", taken);
}

/* ---- which blocks a rank moves, and with whom it shares the file ---- */

/* A rank's list of blocks in one pass over a file: the layout's blocks
 * for its geometry (count of them, or 0 for a rank that only takes part
 * in collective calls), and the ranks that open the file together. */
typedef struct access_list {
    const layout_ops *layout;
    layout_geometry geom;
    uint64_t count;
    uint64_t calls; /* I/O calls this rank makes: equal on all of comm when they are collective */
    MPI_Comm comm;
    bool owner;     /* this rank creates the file when it is created */
} access_list;

/* Agree the number of calls before the clock starts: collective calls
 * and transfer slices are made the same number of times on every sharer. */
static void plan_calls(io_ctx *c, access_list *L)
{
    unsigned caps = c->o->api_caps;
    uint64_t mine = L->count;
    if (caps & BACKEND_CAP_TRANSFER)
        mine = (L->count + c->xfer_blocks - 1) / c->xfer_blocks;
    L->calls = mine;
    if (caps & (BACKEND_CAP_TRANSFER | BACKEND_CAP_COLLECTIVE_CALLS))
        MPI_Allreduce(&mine, &L->calls, 1, MPI_UINT64_T, MPI_MAX, L->comm);
}

static access_list phase_list(io_ctx *c, enum phase_kind kind)
{
    const io_options *o = c->o;
    access_list L = {.layout = o->layout};
    L.geom = kind == PHASE_WRITE ? c->write_geom : c->read_geom;
    L.count = o->layout->block_count(&L.geom);
    L.comm = o->per_rank_files ? MPI_COMM_SELF : c->comm;
    L.owner = o->per_rank_files || c->rank == 0;
    plan_calls(c, &L);
    return L;
}

/* The blocks of a whole file dealt round-robin over the ranks that share
 * it, so each is written (prepare) or checked (verify) exactly once; when
 * they cannot be dealt evenly, rank 0 takes them all and the others only
 * take part in collective calls. */
static access_list dealt_list(io_ctx *c, uint64_t file_bytes)
{
    const io_options *o = c->o;
    access_list L = {.geom = {.file_bytes = file_bytes, .block = o->block, .seed = o->seed}};
    L.comm = o->per_rank_files ? MPI_COMM_SELF : c->comm;
    L.owner = o->per_rank_files || c->rank == 0;
    int P = o->per_rank_files ? 1 : c->nranks;
    uint64_t blocks = file_bytes / o->block;
    if (blocks % (uint64_t)P == 0) {
        L.layout = layout_find("interleaved");
        L.geom.sharers = P;
        L.geom.member = o->per_rank_files ? 0 : c->rank;
        L.count = blocks / (uint64_t)P;
    } else {
        L.layout = layout_find("broadcast");
        L.geom.sharers = 1;
        L.count = c->rank == 0 ? blocks : 0;
    }
    plan_calls(c, &L);
    return L;
}

/* ---- one pass of blocks through the backend, in its own style ---- */

typedef struct pass {
    enum backend_mode mode;
    const access_list *L;
    const char *path;
    const char *what;        /* "" for timed phases, "preparing: ", "verify: " */
    const token_ring *ring;  /* per-call grouping, or NULL */
    double *trace;           /* per-call start/end, or NULL */
    bool check;              /* compare every block read with the pattern */
    double io_first;         /* out: start of the first call */
    uint64_t bytes;          /* out: bytes moved (or checked) */
    uint64_t packed;         /* transfer: slices 0..packed-1 are in their slots already */
} pass;

static void open_args(io_ctx *c, const pass *P, bool direct, backend_open_args *a)
{
    const io_options *o = c->o;
    const bool writing = P->mode == BACKEND_WRITE;
    *a = (backend_open_args){.path = P->path,
                             .mode = P->mode,
                             .direct = direct,
                             .create = writing && !o->prealloc,
                             .file_bytes = P->L->geom.file_bytes,
                             .block = (size_t)o->block,
                             .layout = P->L->layout,
                             .geom = &P->L->geom,
                             .count = P->L->count,
                             .comm = P->L->comm,
                             .buffers = c->iov,
                             .nbuffers = c->niov,
                             .config = o->mover_config};
    if (!(o->api_caps & BACKEND_CAP_OBJECTS)) {
        const bool ours = P->path == c->write_path;
        a->created = writing ? c->mine : NULL;
        a->expect = &c->theirs[(size_t)(ours ? c->write_owner : c->read_owner) * (size_t)c->nparts];
    }
}

/* Open under the creation rule of backend.h: with a local open, the
 * owner creates the file exclusively and the other sharers open it after
 * it exists. */
static int open_file(io_ctx *c, backend_open_args *a, const access_list *L, void **h)
{
    const backend_ops *api = c->o->mover;
    int shared;
    MPI_Comm_size(L->comm, &shared);
    if (!a->create || shared == 1 || (c->o->api_caps & BACKEND_CAP_COLLECTIVE_OPEN))
        return api->open(a, h);
    int e = 0;
    if (L->owner)
        e = api->open(a, h);
    MPI_Barrier(L->comm);
    if (!L->owner) {
        a->create = false;
        e = api->open(a, h);
    }
    return e;
}

/* Every rank's open_check (backend.h, Opening), agreed over all ranks:
 * the worst errno, or 0.  The MPI_Allreduce is also a barrier, so the
 * timed phase uses it as the one that starts its clock. */
static int open_check_agreed(io_ctx *c, const backend_open_args *a)
{
    const backend_ops *api = c->o->mover;
    int mine = api->open_check ? api->open_check(a) : 0, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, c->comm);
    return worst;
}

/* Whether any sharer of the file failed in this pass, agreed over them
 * for a backend whose calls can fail on some sharers only (backend.h,
 * Failing apart); the others pay no collective and answer for themselves. */
static bool failed_apart(io_ctx *c, const access_list *L)
{
    int mine = c->err != 0, any = mine;
    if (c->o->api_caps & BACKEND_CAP_SPLIT_FAILURES)
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, L->comm);
    return any && (c->o->api_caps & BACKEND_CAP_SPLIT_FAILURES);
}

/* Whether to sync now.  Never once a sharer failed apart; otherwise a
 * collective-open backend's sync is collective, so every rank takes part,
 * even one that failed, or the others would wait for it forever. */
static bool may_sync(const io_ctx *c, bool apart)
{
    return !apart && (!c->err || (c->o->api_caps & BACKEND_CAP_COLLECTIVE_OPEN));
}

/* Close the file, or abandon it when a sharer failed apart: its library
 * can no longer close it collectively, nor MPI_Finalize (which would). */
static int end_file(io_ctx *c, void *h, bool apart)
{
    if (!apart)
        return c->o->mover->close(h);
    fail_skip_finalize();
    return c->o->mover->abandon(h);
}

static void block_failed(io_ctx *c, const pass *P, uint64_t off, int e)
{
    const bool writing = P->mode == BACKEND_WRITE;
    if (P->check && e == ENODATA)
        record_error(c, e, "verification failed: %s is truncated: it ends before offset %llu",
                     P->path, (unsigned long long)(off + c->o->block));
    else {
        /* a backend that knows what its store answered says it (S3's
         * "refused the credentials (AccessDenied)"), not an errno's text */
        const char *own = e != ENODATA && c->o->api->why ? c->o->api->why(e, c->o->api_config) : NULL;
        record_error(c, e, "%s%s %s at offset %llu: %s", P->what, writing ? "write" : "read",
                     P->path, (unsigned long long)off,
                     e == ENODATA ? "the file ends before this block" : own ? own : strerror(e));
    }
}

/* A block arrived (or failed): count it, and check it when verifying. */
static void block_done(io_ctx *c, pass *P, uint64_t off, int e, const unsigned char *got)
{
    if (e) {
        block_failed(c, P, off, e);
        return;
    }
    if (P->check && !c->err) {
        int64_t bad = pattern_check(&c->srcs[0], off, got, (size_t)c->o->block);
        if (bad >= 0) {
            record_error(c, EIO, "verification failed: %s: first wrong byte at offset %llu",
                         P->path, (unsigned long long)(off + (uint64_t)bad));
            return;
        }
    }
    P->bytes += c->o->block;
}

/* Synchronous calls, one block each, each timed alone. */
static void drive_per_call(io_ctx *c, void *h, pass *P)
{
    const io_options *o = c->o;
    const access_list *L = P->L;
    const bool writing = P->mode == BACKEND_WRITE;
    const size_t block = (size_t)o->block;
    for (uint64_t k = 0; k < L->calls; k++) {
        if (P->ring)
            token_enter_call(P->ring, k);
        if (k < L->count && !c->err) {
            const uint64_t off = L->layout->block_offset(&L->geom, k);
            const double s = P->trace || k == 0 ? clock_now() : 0;
            int e = writing ? o->mover->write_at(h, pattern_source_at(&c->srcs[0], off, block),
                                               block, off)
                            : o->mover->read_at(h, c->read_bufs[0], block, off);
            if (P->trace) {
                P->trace[2 * k] = s - c->epoch;
                P->trace[2 * k + 1] = clock_now() - c->epoch;
            }
            if (k == 0)
                P->io_first = s - c->epoch;
            block_done(c, P, off, e, c->read_bufs[0]);
        } else if (o->api_caps & BACKEND_CAP_COLLECTIVE_CALLS) {
            /* keep the lock step: take part, move nothing */
            int e = writing ? o->mover->write_at(h, c->read_bufs[0], 0, 0)
                            : o->mover->read_at(h, c->read_bufs[0], 0, 0);
            if (e)
                record_error(c, e, "%s%s %s: %s", P->what, writing ? "write" : "read", P->path,
                             strerror(e));
        }
        if (P->ring)
            token_leave_call(P->ring, k, L->calls);
    }
}

/* Up to nslots requests in flight, each in its own buffer slot (see
 * backend.h on why slots do not share a pattern source). */
static void drive_async(io_ctx *c, void *h, pass *P)
{
    const io_options *o = c->o;
    const access_list *L = P->L;
    const bool writing = P->mode == BACKEND_WRITE;
    const size_t block = (size_t)o->block;
    const unsigned depth = c->nslots;
    unsigned nfree = depth, inflight = 0;
    for (unsigned i = 0; i < depth; i++)
        c->slot_free[i] = depth - 1 - i;
    uint64_t next = 0;
    for (;;) {
        while (inflight < depth && next < L->count && !c->err) {
            unsigned slot = c->slot_free[--nfree];
            const uint64_t off = L->layout->block_offset(&L->geom, next);
            backend_request rq = {.len = block, .offset = off, .tag = slot};
            if (writing) {
                rq.buf = (void *)pattern_source_at(&c->srcs[slot], off, block);
                rq.buffer_index = slot;
            } else {
                rq.buf = c->read_bufs[slot];
                rq.buffer_index = depth + slot;
            }
            c->slot_block[slot] = next;
            c->slot_offset[slot] = off;
            if (next == 0 || P->trace) {
                const double s = clock_now();
                if (next == 0)
                    P->io_first = s - c->epoch;
                if (P->trace)
                    P->trace[2 * next] = s - c->epoch;
            }
            int e = o->mover->submit(h, P->mode, &rq);
            if (e) {
                c->slot_free[nfree++] = slot;
                block_failed(c, P, off, e);
                break;
            }
            inflight++;
            next++;
        }
        if (inflight == 0)
            break;
        int got = o->mover->reap(h, 1, c->completions, depth);
        if (got < 0) {
            record_error(c, -got, "%s%s %s: waiting for completions: %s", P->what,
                         writing ? "write" : "read", P->path, strerror(-got));
            break; /* the backend's close cancels what is still in flight */
        }
        const double t = P->trace ? clock_now() : 0;
        for (int i = 0; i < got; i++) {
            unsigned slot = (unsigned)c->completions[i].tag;
            if (P->trace)
                P->trace[2 * c->slot_block[slot] + 1] = t - c->epoch;
            block_done(c, P, c->slot_offset[slot], c->completions[i].error, c->read_bufs[slot]);
            c->slot_free[nfree++] = slot;
            inflight--;
        }
    }
}

/* Blocks in slice `call` of a rank's list (0 past its end). */
static uint64_t slice_count(const io_ctx *c, const access_list *L, uint64_t call)
{
    uint64_t first = call * c->xfer_blocks;
    if (first >= L->count)
        return 0;
    return L->count - first < c->xfer_blocks ? L->count - first : c->xfer_blocks;
}

/* Slice `call` lives in slot call % xfer_slots: its bytes and offsets. */
static unsigned char *slot_bytes(const io_ctx *c, uint64_t call)
{
    return c->xfer_buf + (call % c->xfer_slots) * c->xfer_blocks * (size_t)c->o->block;
}
static uint64_t *slot_offsets(const io_ctx *c, uint64_t call)
{
    return c->xfer_offsets + (call % c->xfer_slots) * c->xfer_blocks;
}

/* Put slice `call` of the rank's list into its slot's offsets (and, for a
 * write, its bytes into the slot); returns the blocks in it. */
static uint64_t pack_slice(io_ctx *c, pass *P, uint64_t call)
{
    const access_list *L = P->L;
    const size_t block = (size_t)c->o->block;
    uint64_t first = call * c->xfer_blocks, n = slice_count(c, L, call);
    uint64_t *offsets = slot_offsets(c, call);
    unsigned char *bytes = slot_bytes(c, call);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off = L->layout->block_offset(&L->geom, first + i);
        offsets[i] = off;
        if (P->mode == BACKEND_WRITE)
            memcpy(bytes + i * block, pattern_source_at(&c->srcs[0], off, block), block);
    }
    return n;
}

/* The rank's whole list in calls of one slice each, the same number of
 * calls on every sharer.  The slices that fit the buffer were packed
 * before the clock (pass_prepare); a later one is packed here, into the
 * slot of a slice already moved. */
static void drive_transfer(io_ctx *c, void *h, pass *P)
{
    const io_options *o = c->o;
    const access_list *L = P->L;
    const size_t block = (size_t)o->block;
    for (uint64_t call = 0; call < L->calls; call++) {
        uint64_t n = call < P->packed ? slice_count(c, L, call) : pack_slice(c, P, call);
        if (c->err)
            n = 0; /* keep taking part so the others are not left waiting */
        uint64_t *offsets = slot_offsets(c, call);
        unsigned char *bytes = slot_bytes(c, call);
        backend_transfer t = {.mode = P->mode,
                              .first = call * c->xfer_blocks,
                              .count = n,
                              .offsets = offsets,
                              .block = block,
                              .buf = bytes,
                              .call = call,
                              .calls = L->calls};
        const double s = clock_now();
        if (call == 0)
            P->io_first = s - c->epoch;
        int e = o->mover->transfer(h, &t);
        if (e) {
            record_error(c, e, "%s%s %s (%llu blocks from offset %llu): %s", P->what,
                         P->mode == BACKEND_WRITE ? "write" : "read", P->path,
                         (unsigned long long)n,
                         (unsigned long long)(n ? offsets[0] : 0), strerror(e));
            continue;
        }
        for (uint64_t i = 0; i < n; i++)
            block_done(c, P, offsets[i], 0, bytes + i * block);
    }
}

/* Untimed work a pass can do before its clock starts: every slice the
 * transfer buffer holds is packed now. */
static void pass_prepare(io_ctx *c, pass *P)
{
    P->packed = 0;
    if (!(c->o->api_caps & BACKEND_CAP_TRANSFER))
        return;
    while (P->packed < P->L->calls && P->packed < c->xfer_slots)
        pack_slice(c, P, P->packed++);
}

static void drive(io_ctx *c, void *h, pass *P)
{
    unsigned caps = c->o->api_caps;
    if (caps & BACKEND_CAP_TRANSFER)
        drive_transfer(c, h, P);
    else if (caps & BACKEND_CAP_ASYNC)
        drive_async(c, h, P);
    else
        drive_per_call(c, h, P);
}

/* ---- setup ---- */

/* The node's available memory (MemAvailable), 0 when unknown. */
static uint64_t memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kib = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kib * 1024;
}

/* Bytes of transfer buffer each rank may hold: --transfer-hold, or a
 * quarter of the node's available memory shared by its ranks (the rest is
 * left to the page cache, the file itself on tmpfs, and everything else),
 * at most IO_TRANSFER_HOLD.  Collective over c->comm unless given; the
 * same on every rank of a node. */
static uint64_t transfer_hold(io_ctx *c)
{
    if (c->o->transfer_hold) /* --transfer-hold: the same on every rank */
        return c->o->transfer_hold;
    MPI_Comm node;
    int local = 1;
    MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    uint64_t avail = memory_available(), least = avail;
    MPI_Allreduce(&avail, &least, 1, MPI_UINT64_T, MPI_MIN, node);
    MPI_Comm_free(&node);
    uint64_t hold = least / 4 / (uint64_t)local;
    return hold < IO_TRANSFER_HOLD ? hold : IO_TRANSFER_HOLD;
}

static void alloc_buffers(io_ctx *c)
{
    const io_options *o = c->o;
    unsigned caps = o->api_caps;
    /* every rank asks (collective), before anything can fail on it alone */
    const uint64_t hold = (caps & BACKEND_CAP_TRANSFER) ? transfer_hold(c) : 0;
    /* Two sizes, chosen apart.  The slice (--transfer-buffer, 64 MiB by
     * default) is what one collective call moves per rank; the hold
     * (--transfer-hold, transfer_hold()) is how many slices are packed
     * before the clock.  With the whole share held, no byte is copied in the
     * timed phase, as IOR -c copies none (it writes from one buffer): the
     * old single 256 MiB buffer repacked 3 of a 1 GiB share's 4 slices in
     * the phase, 0.7 s of CPU summed over 4 ranks on 2 cores (README).  But
     * a whole 1 GiB share held per rank measured 4x slower on the quiet
     * machine, so by default one slice is held (backend.h IO_TRANSFER_HOLD);
     * --transfer-hold holds more.
     *
     * Why the calls stay at 64 MiB per rank.  On one node Open MPI 4.1's
     * ompio (fcoll vulcan) makes 1 rank of 4 the aggregator (its simple
     * grouping caps them at ranks / io_ompio_max_aggregators_ratio 8) and
     * moves each call in cycles of half of io_ompio_bytes_per_agg (32 MiB):
     * the aggregator gathers 16 MiB from the ranks, and when a call spans
     * more than 2 cycles it hands the previous cycle's pwrite to a POSIX AIO
     * thread, so the gather of one cycle runs beside the write of the last
     * on the second core.  IOR -c's 1 MiB calls (4 MiB a call) are one
     * cycle each: gather, then write, one core.  strace -f, 256 MiB file
     * (2026-11-23 05:27): IOR 256 pwrite64 of 1 MiB from the aggregator's
     * own thread; pario 16 of 16 MiB from its AIO thread.  Calls much
     * larger than 64 MiB a rank measured slower, for a cause not pinned
     * down (counted under load, a 1 GiB call took no more CPU and faulted
     * less than 64 MiB ones, bench/mpiio_counts.py): the lead's quiet sweep of
     * 2026-11-23 05:00 (4 GiB, 4 ranks, tmpfs, MiB/s, 3 rounds; slices
     * then packed in the phase): 32m 1510/1300/1415, 64m 1515/1550/1558,
     * 128m 1178/1420/1448, 256m 898/1032/1060, IOR -c 1252/1369/1233; a
     * whole 1 GiB share in one call ran at 0.22x IOR -c (03:40). */
    uint64_t share = o->layout->block_count(&c->write_geom);
    if (o->layout->block_count(&c->read_geom) > share)
        share = o->layout->block_count(&c->read_geom);
    c->nslots = (caps & BACKEND_CAP_ASYNC) && !(caps & BACKEND_CAP_TRANSFER)
                    ? o->api->queue_depth(o->api_config)
                    : 1;
    c->srcs = calloc(c->nslots, sizeof *c->srcs);
    c->read_bufs = calloc(c->nslots, sizeof *c->read_bufs);
    c->read_mapped = calloc(c->nslots, sizeof *c->read_mapped);
    c->slot_free = calloc(c->nslots, sizeof *c->slot_free);
    c->slot_block = calloc(c->nslots, sizeof *c->slot_block);
    c->slot_offset = calloc(c->nslots, sizeof *c->slot_offset);
    c->completions = calloc(c->nslots, sizeof *c->completions);
    c->iov = calloc(2 * (size_t)c->nslots, sizeof *c->iov);
    if (!c->srcs || !c->read_bufs || !c->read_mapped || !c->slot_free || !c->slot_block ||
        !c->slot_offset || !c->completions || !c->iov) {
        record_error(c, ENOMEM, "cannot allocate %u buffer slots", c->nslots);
        return;
    }
    c->buffers_huge = true;
    for (unsigned i = 0; i < c->nslots && !c->err; i++) {
        if (pattern_source_init(&c->srcs[i], o->block, o->huge_pages) != 0) {
            record_error(c, ENOMEM, "cannot allocate %llu bytes of data buffer",
                         (unsigned long long)(PATTERN_PERIOD + o->block));
            break;
        }
        bool huge = false;
        c->read_bufs[i] =
            pattern_buffer_alloc(o->block, o->huge_pages, &huge, &c->read_mapped[i]);
        if (!c->read_bufs[i]) {
            record_error(c, ENOMEM, "cannot allocate a %llu-byte read buffer",
                         (unsigned long long)o->block);
            break;
        }
        /* Touch the read buffer so first-touch faults stay out of the timing. */
        memset(c->read_bufs[i], 0, o->block);
        c->buffers_huge = c->buffers_huge && huge && c->srcs[i].huge_pages;
        c->iov[i] = (struct iovec){c->srcs[i].base, c->srcs[i].mapped};
        c->iov[c->nslots + i] = (struct iovec){c->read_bufs[i], c->read_mapped[i]};
    }
    c->niov = 2 * c->nslots;
    if ((caps & BACKEND_CAP_TRANSFER) && !c->err) {
        c->xfer_blocks = o->transfer_buffer / o->block;
        if (c->xfer_blocks == 0)
            c->xfer_blocks = 1;
        /* no larger than the largest list a rank moves */
        uint64_t most = share;
        uint64_t whole = c->write_geom.file_bytes / o->block; /* prepare/verify of a file */
        if (whole > most)
            most = whole;
        if (c->xfer_blocks > most)
            c->xfer_blocks = most;
        if (c->xfer_blocks == 0)
            c->xfer_blocks = 1;
        /* One slot per slice of the timed share, up to `hold` bytes:
         * those slices are packed before the clock (backend.h). */
        const uint64_t slice_bytes = c->xfer_blocks * o->block;
        uint64_t slices = (share + c->xfer_blocks - 1) / c->xfer_blocks;
        uint64_t fit = hold / slice_bytes;
        c->xfer_slots = slices < fit ? slices : fit;
        if (c->xfer_slots == 0)
            c->xfer_slots = 1;
        const uint64_t held = c->xfer_slots * slice_bytes;
        bool huge = false;
        c->xfer_buf = pattern_buffer_alloc(held, o->huge_pages, &huge, &c->xfer_mapped);
        c->xfer_offsets = calloc(c->xfer_slots * c->xfer_blocks, sizeof *c->xfer_offsets);
        if (!c->xfer_buf || !c->xfer_offsets) {
            record_error(c, ENOMEM, "cannot allocate a %llu-byte transfer buffer",
                         (unsigned long long)held);
        } else {
            /* Touch it all: first-touch faults stay out of the timing. */
            memset(c->xfer_buf, 0, held);
            c->buffers_huge = c->buffers_huge && huge;
            c->iov[0] = (struct iovec){c->xfer_buf, c->xfer_mapped};
            c->niov = 1;
        }
    } else {
        c->xfer_blocks = 1;
        c->xfer_slots = 1;
    }
}

static void free_buffers(io_ctx *c)
{
    for (unsigned i = 0; i < c->nslots; i++) {
        if (c->srcs)
            pattern_source_free(&c->srcs[i]);
        if (c->read_bufs)
            pattern_buffer_free(c->read_bufs[i], c->read_mapped[i]);
    }
    free(c->srcs);
    free(c->read_bufs);
    free(c->read_mapped);
    free(c->slot_free);
    free(c->slot_block);
    free(c->slot_offset);
    free(c->completions);
    free(c->iov);
    pattern_buffer_free(c->xfer_buf, c->xfer_mapped);
    free(c->xfer_offsets);
}

/* Every slot's source holds the data of one (seed, iteration, stream). */
static void fill_sources(io_ctx *c, pattern_key key)
{
    for (unsigned i = 0; i < c->nslots; i++)
        pattern_source_fill(&c->srcs[i], key);
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

    uint64_t P = (uint64_t)c->nranks; /* above --read-shift (io_options_parse) */
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
    c->nparts = o->stripe.ntargets ? o->stripe.ntargets : 1;
    c->write_parts = calloc((size_t)c->nparts, PATH_MAX);
    c->read_parts = calloc((size_t)c->nparts, PATH_MAX);
    c->mine = calloc((size_t)c->nparts, sizeof *c->mine);
    c->theirs = calloc((size_t)c->nparts * (size_t)c->nranks, sizeof *c->theirs);
    c->write_owner = o->per_rank_files ? c->rank : 0;
    c->read_owner = o->per_rank_files ? reads_from : 0;
    if (!c->write_parts || !c->read_parts || !c->mine || !c->theirs)
        fail_usage("out of memory");
    stripe_parts(&o->stripe, c->write_path, c->write_parts);
    stripe_parts(&o->stripe, c->read_path, c->read_parts);
    check_paths_are_new(c);

    token_ring_init(&c->ring, c->rank, c->nranks, o->group, o->group_unit, c->comm);

    alloc_buffers(c);
    agree_or_fail(c);
    c->bg.n = o->background;
    c->bg.kind = o->background_kind;
    char why[PATH_MAX + 128];
    int be = background_start(&c->bg, o->dir, c->comm, why, sizeof why);
    if (be)
        record_error(c, be, "%s", why);
    agree_or_fail(c);

    double epoch = clock_now();
    MPI_Bcast(&epoch, 1, MPI_DOUBLE, 0, c->comm);
    c->epoch = epoch;

    /* Facts for the result document. */
    memset(r, 0, sizeof *r);
    r->opts = o;
    r->nranks = c->nranks;
    if (c->ring.active)
        r->group_wait = c->ring.mpi_yields ? "mpi_yield_when_idle" : "sched_yield";
    utc_now(r->started_utc, sizeof r->started_utc);
    int len;
    MPI_Get_library_version(r->mpi_library, &len);
    MPI_Get_version(&r->mpi_version, &r->mpi_subversion);
    host_info me;
    host_info_mine(&me);
    if (c->rank == 0)
        r->hosts = calloc((size_t)c->nranks, sizeof *r->hosts);
    MPI_Gather(&me, sizeof me, MPI_BYTE, r->hosts, sizeof me, MPI_BYTE, 0, c->comm);
    if (c->rank == 0) {
        r->host_of = malloc(sizeof(int) * (size_t)c->nranks);
        hosts_place(r->hosts, c->nranks, r->host_of);
    }
    fs_facts_of(o->dir, &r->fs);
    if (o->api_caps & BACKEND_CAP_OBJECTS) /* --dir only names the objects' prefix */
        r->fs = (fs_facts){.type = "objects", .magic = 0, .memory_backed = false};
    snprintf(r->path, sizeof r->path, "%s", c->write_path);
    if (c->rank == 0)
        per_rank_path(c, 0, r->path);
    r->file_bytes = g.file_bytes;
    r->files = o->per_rank_files ? P : 1;
    r->calls_per_rank = o->layout->block_count(&c->write_geom);
    r->transfer_slice_bytes = (o->api_caps & BACKEND_CAP_TRANSFER) ? c->xfer_blocks * o->block : 0;
    r->transfer_held_bytes = r->transfer_slice_bytes * c->xfer_slots;
    int huge = c->buffers_huge, all_huge;
    MPI_Allreduce(&huge, &all_huge, 1, MPI_INT, MPI_MIN, c->comm);
    r->huge_pages_granted = all_huge;
}

/* Write the data a read-only run needs, untimed, through the backend
 * itself (its file format may not be raw bytes): the blocks are dealt over
 * the ranks sharing the file; per-rank files are written by their owner. */
static void prepare_initial_file(io_ctx *c)
{
    const io_options *o = c->o;
    fill_sources(c, pattern_key_make(o->seed, 0, c->write_stream));
    access_list L = dealt_list(c, c->write_geom.file_bytes);
    pass P = {.mode = BACKEND_WRITE, .L = &L, .path = c->write_path, .what = "preparing: "};
    backend_open_args a;
    open_args(c, &P, false, &a);
    a.create = true; /* the run checked the path is new */
    void *h = NULL;
    int e = open_check_agreed(c, &a);
    if (!e)
        e = open_file(c, &a, &L, &h);
    if (e) {
        record_error(c, e, "cannot create %s: %s", c->write_path, strerror(e));
        h = NULL;
    } else {
        pass_prepare(c, &P);
        drive(c, h, &P);
    }
    const bool apart = failed_apart(c, &L); /* every rank takes part, opened or not */
    if (h) {
        if (may_sync(c, apart) && (e = o->mover->sync(h)) != 0)
            record_error(c, e, "preparing %s: fsync: %s", c->write_path, strerror(e));
        int ce = end_file(c, h, apart);
        if (ce)
            record_error(c, ce, "preparing %s: close: %s", c->write_path, strerror(ce));
    }
    note_own_file(c); /* collective: every rank, whether its open worked or not */
    agree_or_fail(c);
    MPI_Barrier(c->comm);
}

static void prepare_write(io_ctx *c, uint64_t iteration)
{
    const io_options *o = c->o;
    /* A fresh file every write iteration, as IOR does: the previous
     * iteration's file is ours, so removing it is allowed. */
    MPI_Barrier(c->comm);
    for (int t = 0; c->owns_file && t < c->nparts; t++) {
        int e = data_remove(c, t);
        if (e == ESTALE)
            record_error(c, e, "%s was replaced during the run by something pario did not "
                         "create: left alone; keep other writers out of --dir", c->write_parts[t]);
        else if (e == EXDEV) /* its file system unmounted from --dir */
            record_error(c, e, "%s %s", c->write_parts[t], owned_file_reason(e));
        else if (e && e != ENOENT)
            record_error(c, e, "cannot remove the previous iteration's %s: %s",
                         c->write_parts[t], strerror(e));
    }
    agree_or_fail(c);
    share_identities(c); /* the removed files are nobody's now */
    MPI_Barrier(c->comm);
    for (int t = 0; o->prealloc && c->owns_file && t < c->nparts; t++) {
        const char *part = c->write_parts[t];
        uint64_t bytes = o->stripe.ntargets
                             ? stripe_part_bytes(&o->stripe, c->write_geom.file_bytes, t)
                             : c->write_geom.file_bytes;
        int fd = create_exclusive(part, O_WRONLY, &c->mine[t]);
        if (fd < 0) {
            record_error(c, -fd, "--prealloc: cannot create %s: %s", part, strerror(-fd));
        } else {
            int e = bytes ? posix_fallocate(fd, 0, (off_t)bytes) : 0;
            if (e)
                record_error(c, e,
                             "--prealloc: %s cannot reserve %llu bytes: %s (drop --prealloc "
                             "on this file system)",
                             part, (unsigned long long)bytes, strerror(e));
            close(fd);
        }
    }
    agree_or_fail(c);
    share_identities(c); /* the sharers open only the file the owner made */
    fill_sources(c, pattern_key_make(o->seed, iteration, c->write_stream));
}

/* Before a read: optional eviction, then how much of the file is cached. */
static double prepare_read(io_ctx *c, uint64_t data_iteration)
{
    const io_options *o = c->o;
    MPI_Barrier(c->comm);
    for (int t = 0; o->evict && t < c->nparts; t++) {
        int e = page_cache_evict(c->read_parts[t]);
        if (e)
            record_error(c, e, "--evict: cannot drop %s from the page cache: %s",
                         c->read_parts[t], strerror(e));
    }
    agree_or_fail(c);
    MPI_Barrier(c->comm);
    /* cached share of the whole logical file: its parts weighted by size
     * (an object store has no cache on this node to measure) */
    double cached = 0, total = 0, mine, most;
    for (int t = 0; t < c->nparts && !(o->api_caps & BACKEND_CAP_OBJECTS); t++) {
        struct stat st;
        double f = page_cache_fraction(c->read_parts[t]);
        if (stat(c->read_parts[t], &st) == 0 && f >= 0) {
            cached += f * (double)st.st_size;
            total += (double)st.st_size;
        }
    }
    mine = total > 0 ? cached / total
         : (o->api_caps & BACKEND_CAP_OBJECTS) ? -1 : page_cache_fraction(c->read_parts[0]);
    MPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    fill_sources(c, pattern_key_make(o->seed, data_iteration, c->read_stream));
    return most;
}

/* The read requests of the device behind the file over a read phase (rank
 * 0, around the phase's barriers, so every rank's reads are inside): the
 * kernel's read-ahead windows as the device saw them.  Several ranks
 * reading one file in interleaved calls can lose those windows (a rank
 * ahead of the other finds the other's last call uncached and Linux reads
 * its call alone), which shows here as many requests of about a call each.
 * Not known for an object store, a striped file or a memory-backed file
 * system (no block device); on several nodes it is rank 0's node's device,
 * and other I/O on the device at the same time counts too. */
typedef struct device_count {
    bool ok;
    uint64_t requests, bytes;
} device_count;

static device_count device_count_start(const io_ctx *c, enum phase_kind kind)
{
    device_count d = {0};
    if (kind == PHASE_READ && c->rank == 0 && c->nparts == 1 && !(c->o->api_caps & BACKEND_CAP_OBJECTS))
        d.ok = device_reads_of(c->read_parts[0], &d.requests, &d.bytes) == 0;
    return d;
}

static void device_count_end(const io_ctx *c, device_count before, io_iteration *it)
{
    uint64_t requests, bytes;
    if (!before.ok || device_reads_of(c->read_parts[0], &requests, &bytes) != 0 ||
        requests < before.requests || bytes < before.bytes)
        return;
    it->device_known = true;
    it->device_requests = requests - before.requests;
    it->device_bytes = bytes - before.bytes;
}

static void timed_phase(io_ctx *c, enum phase_kind kind, rank_record *rec, double *trace)
{
    const io_options *o = c->o;
    const bool writing = kind == PHASE_WRITE;
    access_list L = phase_list(c, kind);
    pass P = {.mode = writing ? BACKEND_WRITE : BACKEND_READ,
              .L = &L,
              .path = writing ? c->write_path : c->read_path,
              .what = "",
              .ring = c->ring.per_call ? &c->ring : NULL,
              .trace = trace};
    backend_open_args a;
    open_args(c, &P, o->direct, &a);
    void *h = NULL;
    int e;

    memset(rec, 0, sizeof *rec);
    a.observed = rec->observed;
    pass_prepare(c, &P);
    const int refused = open_check_agreed(c, &a); /* the barrier that starts the clock */
    const double t0 = clock_now();
    rec->start = t0 - c->epoch;

    if ((e = refused ? refused : open_file(c, &a, &L, &h)) != 0) {
        if (e == EINVAL && o->direct)
            record_error(c, e, "%s: this file system refuses O_DIRECT: drop --direct", P.path);
        else if (e == ESTALE || e == ELOOP || (e = gone_with_its_mount(&a, e)) == EXDEV)
            record_error(c, e, "%s %s", P.path, owned_file_reason(e));
        else
            record_error(c, e, "open %s: %s", P.path, strerror(e));
        h = NULL;
    }
    rec->open_done = clock_now() - c->epoch;
    P.io_first = rec->open_done;

    token_enter_share(&c->ring);
    if (h)
        drive(c, h, &P);
    rec->io_first = P.io_first;
    rec->io_done = clock_now() - c->epoch;
    /* A collective-open backend's sync (MPI_File_sync, H5Fflush) and the
     * agreement on failures are collective: the rank holding a whole
     * share's token would wait in them for ranks that wait for the token.
     * Its turn therefore ends with its calls; the sync follows together. */
    const bool collective_end = o->api_caps & BACKEND_CAP_COLLECTIVE_OPEN;
    if (collective_end)
        token_leave_share(&c->ring);
    const bool apart = failed_apart(c, &L);
    if (writing && o->fsync && h && may_sync(c, apart) && (e = o->mover->sync(h)) != 0)
        record_error(c, e, "fsync %s: %s", P.path, strerror(e));
    rec->sync_done = clock_now() - c->epoch;
    rec->io_last = rec->sync_done;
    if (!collective_end)
        token_leave_share(&c->ring);
    if (h && (e = end_file(c, h, apart)) != 0)
        record_error(c, e, "close %s: %s", P.path, strerror(e));
    rec->close_done = clock_now() - c->epoch;
    MPI_Barrier(c->comm);
    rec->stop = clock_now() - c->epoch;
    rec->bytes = (double)P.bytes;
}

/* Untimed: read back every block this rank moved, through the backend,
 * and compare every byte with the pattern.  A broadcast file is checked
 * once, dealt over the ranks. */
static uint64_t verify_pass(io_ctx *c, enum phase_kind kind)
{
    const io_options *o = c->o;
    const bool writing = kind == PHASE_WRITE;
    access_list L = o->layout->read_only ? dealt_list(c, c->read_geom.file_bytes)
                                         : phase_list(c, kind);
    pass P = {.mode = BACKEND_READ,
              .L = &L,
              .path = writing ? c->write_path : c->read_path,
              .what = "verify: ",
              .check = true};
    backend_open_args a;
    open_args(c, &P, o->direct, &a);
    void *h = NULL;
    int e = open_check_agreed(c, &a);
    if (!e)
        e = open_file(c, &a, &L, &h);
    if (e) {
        if (e == ESTALE || e == ELOOP || (e = gone_with_its_mount(&a, e)) == EXDEV)
            record_error(c, e, "verify: %s %s", P.path, owned_file_reason(e));
        else
            record_error(c, e, "verify: open %s: %s", P.path, strerror(e));
        h = NULL;
    } else {
        pass_prepare(c, &P);
        drive(c, h, &P);
    }
    const bool apart = failed_apart(c, &L); /* every rank takes part, opened or not */
    if (h)
        end_file(c, h, apart);
    return P.bytes;
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
    engine_world(&rank, &nranks);
    io_options o;
    io_options_parse(argc, argv, rank, nranks, &o);
    check_mode_passed(); /* `pario-engine check`: the line is accepted */

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
            device_count dev = device_count_start(&c, kind);
            double load = background_resume(&c.bg);
            timed_phase(&c, kind, &rec, trace);
            device_count_end(&c, dev, &it);
            char gone[PATH_MAX + 160];
            if (background_pause(&c.bg, o.dir, gone, sizeof gone))
                record_error(&c, ECHILD, "%s", gone);
            MPI_Reduce(&load, &it.background_load, 1, MPI_DOUBLE, MPI_MAX, 0, c.comm);
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
    r.background_alone_seconds = c.bg.alone_seconds;
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
    background_stop(&c.bg);
    if (o.keep)
        record_length(&c);
    remove_own_files(&c, true);
    if (rank == 0)
        io_result_free(&r);
    free(trace);
    free_buffers(&c);
    io_options_free(&o);
    free(c.write_parts);
    free(c.read_parts);
    free(c.mine);
    free(c.theirs);
    free(o.api_config); /* io_options_parse's: LeakSanitizer (make test-asan) found it */
    return status;
}
