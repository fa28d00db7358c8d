/* mpiio: MPI-IO on a file opened by all ranks that share it.
 *
 *   independent (default)   MPI_File_write_at / read_at, one call per block
 *   --collective            the rank's whole access list in one
 *                           write_at_all / read_at_all over a file view built
 *                           from the layout's offsets (mpiio_view.h)
 *   --collective-per-call   write_at_all / read_at_all once per block, in
 *                           lock step: IOR's `-a MPIIO -c` form
 *   --atomic                MPI_File_set_atomicity(1): the ASCI Red report's
 *                           MUNIX against MASYNC
 *
 * plus the MPI-IO settings shared with hdf5 (mpiio_env.h): --hint,
 * --aggregators, --mpiio-impl.
 *
 * What the library did is observed, not taken from MPI_File_get_info (Open
 * MPI echoes any hint, taken or not): per rank and phase, the write and
 * read system calls and their bytes (/proc/self/io) and the byte-range
 * lock requests (lock_count.h).  One aggregator shows as one rank writing
 * every byte; atomic mode, where honoured, as lock requests. */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/disk_full.h"
#include "../util/fail.h"
#include "../util/lock_count.h"
#include "../util/proc_io.h"
#include "backend.h"
#include "../util/library_lines.h"
#include "../util/mpiio_env.h"
#include "mpiio_observe.h"
#include "mpiio_view.h"

enum mpiio_calls { CALLS_INDEPENDENT, CALLS_COLLECTIVE_PHASE, CALLS_COLLECTIVE_PER_CALL };

typedef struct mpiio_config {
    enum mpiio_calls calls;
    bool atomic;
    mpiio_settings mpi;
} mpiio_config;

enum { OPT_COLLECTIVE = 1, OPT_PER_CALL, OPT_ATOMIC, OPT_HINT, OPT_AGGREGATORS, OPT_IMPL };

static const backend_option mpiio_options[] = {
    {"collective", NULL,
     "collective I/O: each rank's whole list in one write_at_all/read_at_all over a file "
     "view built from the layout",
     OPT_COLLECTIVE},
    {"collective-per-call", NULL,
     "collective I/O one block per call, all ranks in lock step (IOR -a MPIIO -c)",
     OPT_PER_CALL},
    {"atomic", NULL, "MPI_File_set_atomicity(1) (MUNIX); default relaxed (MASYNC)", OPT_ATOMIC},
    {"hint", "KEY=VALUE", "MPI-IO hint for MPI_File_open (repeatable)", OPT_HINT},
    {"aggregators", "N",
     "collective-buffering aggregators (cb_nodes; ROMIO also gets cb_config_list=*:*, OMPIO "
     "io_ompio_num_aggregators)",
     OPT_AGGREGATORS},
    {"mpiio-impl", "I", "romio | ompio: Open MPI's MPI-IO implementation (default: ompio, "
                        "or what OMPI_MCA_io names)",
     OPT_IMPL},
};

static void mpiio_config_init(void *cfg)
{
    memset(cfg, 0, sizeof(mpiio_config));
}

static void need(const char *why)
{
    if (why)
        fail_usage("%s", why);
}

static void mpiio_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    mpiio_config *c = cfg;
    char why[512];
    switch (id) {
    case OPT_COLLECTIVE:
    case OPT_PER_CALL: {
        enum mpiio_calls want = id == OPT_COLLECTIVE ? CALLS_COLLECTIVE_PHASE
                                                     : CALLS_COLLECTIVE_PER_CALL;
        if (c->calls != CALLS_INDEPENDENT && c->calls != want)
            fail_usage("--collective and --collective-per-call exclude each other: give one");
        c->calls = want;
        break;
    }
    case OPT_ATOMIC: c->atomic = true; break;
    case OPT_HINT: need(mpiio_hint_add(&c->mpi, arg, why, sizeof why)); break;
    case OPT_AGGREGATORS: c->mpi.aggregators = mpiio_aggregators_parse(arg); break;
    case OPT_IMPL: need(mpiio_impl_parse(&c->mpi, arg, why, sizeof why)); break;
    default: fail_usage("%s: not an mpiio option", opt);
    }
}

static void mpiio_config_check(const void *cfg, const backend_run_facts *run)
{
    const mpiio_config *c = cfg;
    if (c->mpi.aggregators && c->calls == CALLS_INDEPENDENT)
        fail_usage("--aggregators sets collective buffering, which only collective I/O uses: "
                   "add --collective");
    if (c->mpi.aggregators && run->per_rank_files)
        fail_usage("--aggregators needs a shared file (--files shared): each per-rank file has "
                   "one rank");
    char why[512];
    /* The settings' resolved implementation lives in mpiio_ran (one run per
     * process); the config itself stays as parsed. */
    mpiio_settings s = c->mpi;
    need(mpiio_settings_apply(&s, run->nranks, why, sizeof why));
    mpiio_observe_settings(&s);
}

static unsigned mpiio_caps_for(const void *cfg)
{
    const mpiio_config *c = cfg;
    const unsigned common = BACKEND_CAP_COLLECTIVE_OPEN | BACKEND_CAP_NEEDS_MPI |
                            BACKEND_CAP_PREALLOC;
    switch (c ? c->calls : CALLS_INDEPENDENT) {
    /* A collective call fails only on the aggregators whose writes failed
     * (backend.h, Failing apart); independent calls fail where they ran. */
    case CALLS_COLLECTIVE_PHASE: return common | BACKEND_CAP_TRANSFER | BACKEND_CAP_SPLIT_FAILURES;
    case CALLS_COLLECTIVE_PER_CALL:
        return common | BACKEND_CAP_PER_CALL | BACKEND_CAP_COLLECTIVE_CALLS |
               BACKEND_CAP_SPLIT_FAILURES;
    default: return common | BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE;
    }
}

/* Failed calls take their cause from the library's held lines
 * (library_lines.h). */
typedef struct mpiio_file {
    MPI_File fh;
    const mpiio_config *cfg;
    MPI_Comm comm;
    mpiio_probe probe; /* what the library did between open and close */
    char path[4096];   /* for the free space behind a short write */
} mpiio_file;

static int mpiio_open(const backend_open_args *a, void **handle)
{
    const mpiio_config *cfg = a->config;
    mpiio_file *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->cfg = cfg;
    f->comm = a->comm;
    snprintf(f->path, sizeof f->path, "%s", a->path);
    mpiio_probe_start(&f->probe, a->observed);

    int amode = a->mode == BACKEND_WRITE ? MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    if (a->create)
        amode |= MPI_MODE_CREATE | MPI_MODE_EXCL; /* O_EXCL: never through a symlink */
    /* As IOR opens: no other process opens the file while pario has it. */
    amode |= MPI_MODE_UNIQUE_OPEN;

    MPI_Info info = mpiio_info_create(mpiio_run_settings());
    library_lines_hold();
    int e = library_lines_reason(mpiio_errno(MPI_File_open(a->comm, a->path, amode, info, &f->fh)));
    MPI_Info_free(&info);
    if (e) {
        library_lines_release();
        free(f);
        return e;
    }
    if (cfg->atomic && (e = library_lines_reason(mpiio_errno(MPI_File_set_atomicity(f->fh, 1)))) != 0) {
        MPI_File_close(&f->fh);
        library_lines_release();
        free(f);
        return e;
    }
    /* MPI holds the descriptor: the one it opened (safe_file.h), after the exclusive
     * create.  A failure leaves *created unknown, which the loop reports
     * after the phase (failing here would split a collective open). */
    if (a->create && a->created)
        owned_file_note_opened(a->path, a->created);
    mpiio_observe_open(f->fh);
    mpiio_probe_opened(&f->probe);
    *handle = f;
    return 0;
}

/* Opening an existing file: refuse a symlink put in its place (the MPI
 * library's open would follow it).  The loop agrees on it over the ranks
 * before the clock starts (backend.h, Opening), so the timed open holds
 * only the library's own collectives, as IOR's does; and, untimed, before
 * the first open of the process creates its file, the library's one-time
 * loading of its plug-ins (mpiio_env.h, mpiio_library_warm), which IOR's
 * creating rank also does before its clock. */
static int mpiio_open_check(const backend_open_args *a)
{
    struct stat st;
    if (a->create)
        mpiio_library_warm(a->path, mpiio_run_settings());
    if (!a->create && a->expect && a->expect->known)
        return owned_file_check(a->path, a->expect); /* only the file this run made */
    return (!a->create && lstat(a->path, &st) == 0 && S_ISLNK(st.st_mode)) ? ELOOP : 0;
}

/* All bytes moved, or why not: a short read means the file ended, a
 * short write (ompio's, when the disk fills) is named from the free space. */
static int moved(const mpiio_file *f, int rc, int sys, const MPI_Status *st, size_t len,
                 bool reading)
{
    if (rc != MPI_SUCCESS)
        return mpiio_errno_after(rc, sys);
    MPI_Count got = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &got);
    if ((size_t)got == len)
        return 0;
    return reading ? ENODATA : disk_short_write_errno(f->path, len - (size_t)got);
}

/* Blocks go as bytes when the count fits an int, else as 8-byte words. */
static void count_of(size_t len, int *count, MPI_Datatype *type)
{
    if (len <= INT_MAX) {
        *count = (int)len;
        *type = MPI_BYTE;
    } else {
        *count = (int)(len / 8);
        *type = MPI_UINT64_T;
    }
}

/* One MPI-IO call of `len` bytes at `offset` (collective per call or
 * independent, as configured): 0 with *got set, or why it failed. */
static int one_call(const mpiio_file *f, void *buf, size_t len, uint64_t offset, bool reading,
                    MPI_Count *got)
{
    MPI_Status st;
    int n;
    MPI_Datatype t;
    count_of(len, &n, &t);
    const bool all = f->cfg->calls == CALLS_COLLECTIVE_PER_CALL;
    errno = 0;
    int rc = reading ? (all ? MPI_File_read_at_all : MPI_File_read_at)(f->fh, (MPI_Offset)offset, buf, n, t, &st)
                     : (all ? MPI_File_write_at_all : MPI_File_write_at)(f->fh, (MPI_Offset)offset, buf, n, t,
                                                                           &st);
    const int sys = errno;
    if (rc != MPI_SUCCESS)
        return mpiio_errno_after(rc, sys);
    *got = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, got);
    return 0;
}

/* A call's outcome.  A collective call can also have failed where ompio
 * said it worked: its aggregator printed the cause (library_lines_after);
 * an independent call's failure shows in its own result. */
static int checked(const mpiio_file *f, int e)
{
    return f->cfg->calls == CALLS_INDEPENDENT ? library_lines_reason(e) : library_lines_after(e);
}

static int mpiio_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    mpiio_file *f = h;
    char *from = (char *)buf; /* MPI's write calls take a const buffer */
    for (;;) {
        MPI_Count got;
        int e = one_call(f, from, len, offset, false, &got);
        if (e || (size_t)got == len)
            return checked(f, e);
        /* A short write (ompio returns success with what fit when the disk
         * fills): as with write(2), the rest is tried again, and that call
         * says why (ENOSPC).  One rank cannot repeat a collective call. */
        if (got <= 0 || f->cfg->calls == CALLS_COLLECTIVE_PER_CALL)
            return library_lines_reason(disk_short_write_errno(f->path, len - (size_t)got));
        from += got;
        offset += (uint64_t)got;
        len -= (size_t)got;
    }
}

/* A short read means the file ended. */
static int mpiio_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    MPI_Count got;
    int e = one_call(h, buf, len, offset, true, &got);
    return checked(h, e ? e : (size_t)got == len ? 0 : ENODATA);
}

/* One slice of the rank's list: a view over its offsets, one collective
 * call.  A rank with nothing in this slice still takes part. */
static int mpiio_transfer(void *h, const backend_transfer *t)
{
    mpiio_file *f = h;
    mpiio_view v;
    int e = mpiio_view_build(&v, t->offsets, t->count, t->block);
    /* Every rank calls set_view and the collective call, even after a
     * local failure, so that no rank is left waiting. */
    MPI_Datatype filetype = e || t->count == 0 ? MPI_BYTE : v.filetype;
    MPI_Offset disp = e || t->count == 0 ? 0 : v.disp;
    int rc = MPI_File_set_view(f->fh, disp, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    if (!e)
        e = mpiio_errno(rc);
    MPI_Status st;
    const bool reading = t->mode == BACKEND_READ;
    int n = e || t->count == 0 ? 0 : 1;
    MPI_Datatype memtype = n ? v.memtype : MPI_BYTE;
    errno = 0;
    rc = reading ? MPI_File_read_at_all(f->fh, 0, t->buf, n, memtype, &st)
                 : MPI_File_write_at_all(f->fh, 0, t->buf, n, memtype, &st);
    const int sys = errno;
    if (!e && n)
        e = moved(f, rc, sys, &st, (size_t)t->count * t->block, reading);
    else if (!e)
        e = mpiio_errno_after(rc, sys);
    mpiio_observe_view(v.shape);
    mpiio_view_free(&v);
    return library_lines_after(e);
}

static int mpiio_sync(void *h)
{
    mpiio_file *f = h;
    errno = 0;
    int rc = MPI_File_sync(f->fh); /* collective over the file's ranks */
    return library_lines_reason(mpiio_errno_after(rc, errno));
}

static int mpiio_close(void *h)
{
    mpiio_file *f = h;
    mpiio_probe_closing(&f->probe);
    errno = 0;
    int rc = MPI_File_close(&f->fh);
    int e = library_lines_reason(mpiio_errno_after(rc, errno));
    library_lines_release();
    mpiio_probe_stop(&f->probe, f->comm, f->cfg->atomic);
    free(f);
    return e;
}

/* A sharer failed apart: ompio's collective close would wait in a
 * barrier the failed rank's close skips, so the file is left to the
 * process's exit; only this process's own holdings are released. */
static int mpiio_abandon(void *h)
{
    mpiio_file *f = h;
    library_lines_release_failed();
    free(f);
    return 0;
}

static void mpiio_describe(const void *cfg, json *j)
{
    const mpiio_config *c = cfg;
    static const char *const calls[] = {"independent", "collective (whole list, file view)",
                                        "collective per call"};
    json_string(j, "calls", calls[c->calls]);
    json_bool(j, "atomic", c->atomic);
    mpiio_observe_describe(j, c->atomic);
}

static const char *mpiio_caveat(const void *cfg)
{
    const mpiio_config *c = cfg;
    return mpiio_observe_caveat(c->atomic, c->calls != CALLS_INDEPENDENT);
}

const backend_ops backend_mpiio = {
    .name = "mpiio",
    .summary = "MPI-IO: independent or collective, atomic or relaxed, with hints",
    .caps = BACKEND_CAP_PER_CALL | BACKEND_CAP_TRANSFER | BACKEND_CAP_COLLECTIVE_OPEN |
            BACKEND_CAP_COLLECTIVE_CALLS | BACKEND_CAP_GROUPABLE | BACKEND_CAP_NEEDS_MPI |
            BACKEND_CAP_PREALLOC | BACKEND_CAP_SPLIT_FAILURES,
    .caps_for = mpiio_caps_for,
    .options = mpiio_options,
    .noptions = sizeof mpiio_options / sizeof mpiio_options[0],
    .repeatable = (const char *const[]){"hint", NULL},
    .config_size = sizeof(mpiio_config),
    .config_init = mpiio_config_init,
    .config_set = mpiio_config_set,
    .config_check = mpiio_config_check,
    .open = mpiio_open,
    .open_check = mpiio_open_check,
    .write_at = mpiio_write_at,
    .read_at = mpiio_read_at,
    .transfer = mpiio_transfer,
    .sync = mpiio_sync,
    .close = mpiio_close,
    .abandon = mpiio_abandon,
    .observed_names = MPIIO_OBSERVED_NAMES,
    .describe = mpiio_describe,
    .caveat = mpiio_caveat,
};
