/* hdf5: parallel HDF5 (the MPI-IO file driver), one dataset per file.
 *
 * The file holds one 1-D dataset "data" of file_bytes unsigned bytes, and
 * block k of the layout is elements [offset, offset + block) of it, so the
 * dataset's bytes are exactly the bytes the posix backend writes for the
 * same seed: that is what "byte-identical" means for HDF5 (HDF5 adds its
 * own metadata around them).  With the default contiguous layout the raw
 * data also lie in the file as one run starting at data_offset (recorded;
 * H5Pset_alignment puts it on a multiple of --hdf5-align, 1 MiB by
 * default), so the same bytes sit at data_offset + o in the file; with
 * --hdf5-chunk they are spread over chunks and only the dataset view holds.
 *
 *   independent (default)  one H5Dwrite/H5Dread per block (a hyperslab)
 *   --collective           the rank's whole list in one collective H5Dwrite/
 *                          H5Dread over the union of its hyperslabs
 *
 * MPI-IO settings (--hint, --aggregators, --mpiio-impl, --atomic via
 * H5Fset_mpi_atomicity) are those of mpiio (mpiio_env.h) and are observed
 * the same way (mpiio_observe.h); the result also records what HDF5 says
 * it did: H5Pget_mpio_actual_io_mode after each collective call. */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/agreed_writes.h"
#include "../util/disk_full.h"
#include "../util/fail.h"
#include "../util/fsinfo.h"
#include "../util/sizes.h"
#include "backend.h"
#include "../util/library_lines.h"
#include "io_options.h"
#include "../util/mpiio_env.h"
#include "mpiio_observe.h"

typedef struct hdf5_config {
    bool collective;
    bool atomic;
    uint64_t align; /* bytes; 1 = no alignment */
    uint64_t chunk; /* bytes; 0 = contiguous */
    mpiio_settings mpi;
} hdf5_config;

enum { OPT_COLLECTIVE = 1, OPT_ATOMIC, OPT_ALIGN, OPT_CHUNK, OPT_HINT, OPT_AGGREGATORS, OPT_IMPL };

static const backend_option hdf5_options[] = {
    {"collective", NULL, "collective transfer: each rank's whole list in one H5Dwrite/H5Dread",
     OPT_COLLECTIVE},
    {"atomic", NULL, "H5Fset_mpi_atomicity(1) (MPI-IO atomic mode)", OPT_ATOMIC},
    {"hdf5-align", "SIZE", "align the dataset's raw data on a multiple of SIZE (default 1m; 1 = "
                           "none)",
     OPT_ALIGN},
    {"hdf5-chunk", "SIZE", "chunked dataset with SIZE-byte chunks (default: contiguous;\n"
                           "at least 2k and block/521: HDF5's chunk cache; a SIZE\n"
                           "above the file's makes one chunk of the file's size)",
     OPT_CHUNK},
    {"hint", "KEY=VALUE", "MPI-IO hint for the MPI-IO driver (repeatable)", OPT_HINT},
    {"aggregators", "N", "collective-buffering aggregators (as for mpiio)", OPT_AGGREGATORS},
    {"mpiio-impl", "I", "romio | ompio under Open MPI (as for mpiio)", OPT_IMPL},
};

#ifdef PARIO_HAVE_PARALLEL_HDF5
#include <hdf5.h>

/* The observed numbers: mpiio's, then HDF5's own account of the last
 * collective call of the phase. */
static const char *const hdf5_observed_names[] = {
    "write_calls", "write_bytes", "read_calls", "read_bytes", "lock_calls", "actual_io_mode",
    NULL};
#define HDF5_OBS_MODE MPIIO_OBS_COUNT

static const char *io_mode_name(int m)
{
    switch (m) {
    case H5D_MPIO_NO_COLLECTIVE: return "no collective";
    case H5D_MPIO_CHUNK_INDEPENDENT: return "chunk independent";
    case H5D_MPIO_CHUNK_COLLECTIVE: return "chunk collective";
    case H5D_MPIO_CHUNK_MIXED: return "chunk mixed";
    case H5D_MPIO_CONTIGUOUS_COLLECTIVE: return "contiguous collective";
    default: return "unknown";
    }
}

/* Facts for the result, from the first file this process opened. */
static struct {
    bool have;
    uint64_t data_offset; /* UINT64_MAX when chunked */
    uint64_t chunk;       /* the dataset's chunk in bytes, 0 contiguous */
    int io_mode;          /* last collective call, -1 none */
    uint32_t no_collective_cause;
} h5ran = {.io_mode = -1};
#endif

static void hdf5_config_init(void *cfg)
{
    hdf5_config *c = cfg;
    memset(c, 0, sizeof *c);
    c->align = 1u << 20;
}

static void need(const char *why)
{
    if (why)
        fail_usage("%s", why);
}

static void hdf5_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    hdf5_config *c = cfg;
    char why[512];
    switch (id) {
    case OPT_COLLECTIVE: c->collective = true; break;
    case OPT_ATOMIC: c->atomic = true; break;
    case OPT_ALIGN:
        c->align = option_size("--hdf5-align", arg);
        break;
    case OPT_CHUNK:
        c->chunk = option_size("--hdf5-chunk", arg);
        if (c->chunk >= (1ULL << 32))
            fail_usage("--hdf5-chunk must be below 4g (HDF5's limit on a chunk)");
        break;
    case OPT_HINT: need(mpiio_hint_add(&c->mpi, arg, why, sizeof why)); break;
    case OPT_AGGREGATORS: c->mpi.aggregators = mpiio_aggregators_parse(arg); break;
    case OPT_IMPL: need(mpiio_impl_parse(&c->mpi, arg, why, sizeof why)); break;
    default: fail_usage("%s: not an hdf5 option", opt);
    }
}

/* HDF5's raw-data chunk cache holds, by default, at most 521 chunks or
 * 1 MiB, whichever is less (HDF5 "Dataset Chunking Issues"), and every
 * chunk is an entry of the dataset's chunk index.  Chunks of a few bytes
 * (--hdf5-chunk 3: 0.3 MiB/s) time that index, not I/O.  pario's rule:
 * a chunk of at least 1 MiB / 521 (2 KiB, below which the cache runs out of
 * slots before bytes), and one --block spread over at most 521 chunks (so
 * one call's chunks fit in the cache together). */
#define HDF5_CACHE_SLOTS 521
#define HDF5_MIN_CHUNK 2048

#ifdef PARIO_HAVE_PARALLEL_HDF5
static void check_chunk(uint64_t chunk, size_t block)
{
    char c[32], b[32], m[32];
    size_format(chunk, c, sizeof c);
    if (chunk < HDF5_MIN_CHUNK)
        fail_usage("--hdf5-chunk %s is under 2 KiB: HDF5's chunk cache (at most 521 chunks or "
                   "1 MiB) would run out of slots and the run would time HDF5's chunk index, "
                   "not I/O: give at least 2k (64k to 1m are usual)", c);
    uint64_t least = (block + HDF5_CACHE_SLOTS - 1) / HDF5_CACHE_SLOTS;
    if (chunk < least) {
        size_format(block, b, sizeof b);
        size_format(least, m, sizeof m);
        fail_usage("--hdf5-chunk %s splits each --block %s into more than the 521 chunks HDF5's "
                   "chunk cache holds: give at least %s, or a smaller --block", c, b, m);
    }
}
#endif

static void hdf5_config_check(const void *cfg, const backend_run_facts *run)
{
#ifndef PARIO_HAVE_PARALLEL_HDF5
    (void)cfg;
    (void)run;
    fail_usage("--api hdf5: this pario-engine was built without parallel HDF5: install "
               "libhdf5-openmpi-dev (make deps) and rebuild (make build)");
#else
    const hdf5_config *c = cfg;
    if (c->mpi.aggregators && !c->collective)
        fail_usage("--aggregators sets collective buffering, which only collective I/O uses: "
                   "add --collective");
    if (c->mpi.aggregators && run->per_rank_files)
        fail_usage("--aggregators needs a shared file (--files shared): each per-rank file has "
                   "one rank");
    if (c->chunk)
        check_chunk(c->chunk, run->block);
    char why[512];
    mpiio_settings s = c->mpi;
    need(mpiio_settings_apply(&s, run->nranks, why, sizeof why));
    mpiio_observe_settings(&s);
    H5dont_atexit(); /* shut down in MPI_Finalize only (see hdf5_close) */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors come back as values, printed once by the run */
#endif
}

static unsigned hdf5_caps_for(const void *cfg)
{
    const hdf5_config *c = cfg;
    /* Metadata are written by some ranks for all (rank 0, or each its share
     * of them), so any mode can fail apart (backend.h, Failing apart). */
    const unsigned common = BACKEND_CAP_COLLECTIVE_OPEN | BACKEND_CAP_NEEDS_MPI |
                            BACKEND_CAP_SPLIT_FAILURES;
    return c && c->collective ? common | BACKEND_CAP_TRANSFER
                              : common | BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE;
}

#ifdef PARIO_HAVE_PARALLEL_HDF5

typedef struct hdf5_file {
    const hdf5_config *cfg;
    MPI_Comm comm;
    hid_t file, dset, filespace, dxpl;
    hid_t memspace;       /* for one block, made on first use */
    uint64_t bytes;       /* elements in the dataset */
    unsigned char *scratch; /* collective calls whose offsets are not sorted */
    size_t scratch_len;
    double *observed;
    mpiio_probe probe;
    bool failed_apart;    /* a flush failed on some rank: close would not be collective */
    MPI_File agreed;      /* the MPI-IO file whose collective writes are agreed, or MPI_FILE_NULL */
    char path[4096];      /* for the free space behind a failed write */
} hdf5_file;

static void release(hdf5_file *f)
{
    library_lines_release();
    if (f->memspace > 0)
        H5Sclose(f->memspace);
    if (f->filespace > 0)
        H5Sclose(f->filespace);
    if (f->dxpl > 0)
        H5Pclose(f->dxpl);
    if (f->dset > 0)
        H5Dclose(f->dset);
    if (f->file > 0)
        H5Fclose(f->file);
    if (f->agreed != MPI_FILE_NULL)
        agreed_writes_forget(f->agreed);
    free(f->scratch);
    free(f);
}

static hid_t file_access(const hdf5_file *f, const backend_open_args *a)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    MPI_Info info = mpiio_info_create(mpiio_run_settings());
    H5Pset_fapl_mpio(fapl, a->comm, info);
    MPI_Info_free(&info);
    /* Only the raw data are this large: metadata stay packed, the data
     * start on a multiple of the alignment. */
    if (f->cfg->align > 1)
        H5Pset_alignment(fapl, a->file_bytes ? a->file_bytes : 1, f->cfg->align);
    if (f->cfg->collective)
        H5Pset_all_coll_metadata_ops(fapl, 1);
    /* Metadata go out in one collective write per flush, whose failure every
     * rank then learns (agreed_writes.h), with independent transfer too:
     * HDF5's default, each rank writing its share alone, lets one rank's
     * full disk skip the flush's closing barrier that the others wait in. */
    if (a->mode == BACKEND_WRITE)
        H5Pset_coll_metadata_write(fapl, 1);
    return fapl;
}

/* Every collective write HDF5 makes to the file from now on ends alike on
 * all its ranks (agreed_writes.h).  Collective: every rank that opened it. */
static int agree_on_writes(hdf5_file *f)
{
    void *handle = NULL;
    int ok = H5Fget_vfd_handle(f->file, H5P_DEFAULT, &handle) >= 0 && handle, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (!all)
        return EIO;
    int e = agreed_writes_register(*(MPI_File *)handle, f->comm);
    if (!e)
        f->agreed = *(MPI_File *)handle;
    return e;
}

static hid_t create_dataset(const hdf5_file *f, uint64_t bytes)
{
    hsize_t dims[1] = {bytes};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (f->cfg->chunk) {
        hsize_t chunk[1] = {f->cfg->chunk < bytes ? f->cfg->chunk : bytes};
        H5Pset_chunk(dcpl, 1, chunk);
    }
    /* All of it is written by the run: no fill pass, space allocated at
     * creation (what parallel HDF5 needs for collective writes). */
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    hid_t d = H5Dcreate2(f->file, "data", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

static int hdf5_open(const backend_open_args *a, void **handle)
{
    const hdf5_config *cfg = a->config;
    hdf5_file *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->cfg = cfg;
    f->comm = a->comm;
    f->agreed = MPI_FILE_NULL;
    f->observed = a->observed;
    snprintf(f->path, sizeof f->path, "%s", a->path);
    mpiio_probe_start(&f->probe, a->observed);

    hid_t fapl = file_access(f, a);
    library_lines_hold(); /* ompio's failure lines, until the close */
    if (a->mode == BACKEND_WRITE && a->create)
        /* H5F_ACC_EXCL opens with MPI_MODE_EXCL: never over an existing file or symlink */
        f->file = H5Fcreate(a->path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    else
        f->file = H5Fopen(a->path, a->mode == BACKEND_WRITE ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f->file < 0) {
        /* the MPI-IO error is gone by now; name the likely causes */
        int e = a->create ? EEXIST : ENOENT;
        if (!a->create && a->mode == BACKEND_READ)
            e = EINVAL; /* exists but is no HDF5 file (or not ours) */
        f->file = -1;
        release(f);
        return e;
    }
    /* HDF5 holds the descriptor: the one it opened (safe_file.h), after the exclusive
     * create.  A failure leaves *created unknown, which the loop reports
     * after the phase (failing here would split a collective open). */
    if (a->mode == BACKEND_WRITE && a->create && a->created)
        owned_file_note_opened(a->path, a->created);
    int agreed = a->mode == BACKEND_WRITE ? agree_on_writes(f) : 0;
    if (agreed) {
        release(f);
        return agreed;
    }
    if (cfg->atomic && H5Fset_mpi_atomicity(f->file, 1) < 0) {
        release(f);
        return ENOTSUP;
    }
    if (a->mode == BACKEND_WRITE && a->create) {
        f->dset = create_dataset(f, a->file_bytes);
        f->bytes = a->file_bytes;
    } else {
        f->dset = H5Dopen2(f->file, "data", H5P_DEFAULT);
        if (f->dset >= 0) {
            hid_t s = H5Dget_space(f->dset);
            hsize_t dims[1] = {0};
            if (H5Sget_simple_extent_ndims(s) == 1)
                H5Sget_simple_extent_dims(s, dims, NULL);
            H5Sclose(s);
            f->bytes = dims[0];
        }
    }
    if (f->dset < 0) {
        release(f);
        return EINVAL;
    }
    f->filespace = H5Dget_space(f->dset);
    f->dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(f->dxpl, cfg->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    if (!h5ran.have) {
        haddr_t at = H5Dget_offset(f->dset);
        h5ran.data_offset = at == HADDR_UNDEF ? UINT64_MAX : (uint64_t)at;
        /* what the dataset has, not what was asked: a chunk larger than
         * the file is made the file's size (create_dataset) */
        hid_t dcpl = H5Dget_create_plist(f->dset);
        hsize_t chunk[1] = {0};
        if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 1, chunk) == 1)
            h5ran.chunk = chunk[0];
        if (dcpl >= 0)
            H5Pclose(dcpl);
        h5ran.have = true;
    }
    if (f->observed)
        f->observed[HDF5_OBS_MODE] = H5D_MPIO_NO_COLLECTIVE;
    mpiio_probe_opened(&f->probe);
    *handle = f;
    return 0;
}

/* Opening an existing file: only the one this run made (backend.h,
 * Opening; the library would open whatever the name holds). */
static int hdf5_open_check(const backend_open_args *a)
{
    struct stat st;
    if (a->create) /* the library's one-time loading, untimed, as for --api mpiio */
        mpiio_library_warm(a->path, mpiio_run_settings());
    if (!a->create && a->expect && a->expect->known)
        return owned_file_check(a->path, a->expect);
    return (!a->create && lstat(a->path, &st) == 0 && S_ISLNK(st.st_mode)) ? ELOOP : 0;
}

/* HDF5 says only that a call failed (the MPI-IO error is gone by then);
 * a write that no longer fits is named from the free space, and a line
 * the library printed (library_lines.h) names the cause when there is one. */
static int failure_reason(const hdf5_file *f, bool reading, size_t len)
{
    return reading ? EIO : disk_short_write_errno(f->path, len);
}

static int per_call(hdf5_file *f, void *buf, size_t len, uint64_t offset, bool reading)
{
    if (reading && offset + len > f->bytes)
        return ENODATA;
    hsize_t start[1] = {offset}, count[1] = {len};
    if (H5Sselect_hyperslab(f->filespace, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        return EINVAL;
    if (f->memspace <= 0)
        f->memspace = H5Screate_simple(1, count, NULL);
    herr_t r = reading ? H5Dread(f->dset, H5T_NATIVE_UINT8, f->memspace, f->filespace, f->dxpl, buf)
                       : H5Dwrite(f->dset, H5T_NATIVE_UINT8, f->memspace, f->filespace, f->dxpl,
                                  buf);
    return library_lines_reason(r < 0 ? failure_reason(f, reading, len) : 0);
}

static int hdf5_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    return per_call(h, (void *)buf, len, offset, false);
}

static int hdf5_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    return per_call(h, buf, len, offset, true);
}

typedef struct placed {
    uint64_t offset, index;
} placed;

static int by_offset(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The file selection for a slice: HDF5 walks a selection in increasing
 * file order and maps it to memory in that order, so unsorted offsets
 * (random) are sorted and memory is staged through a scratch buffer in
 * the sorted order (a copy MPI-IO's indexed memory type avoids; it is
 * HDF5's cost and is timed).  Regular slices become one strided
 * hyperslab, others a union of runs. */
static int select_slice(hdf5_file *f, const backend_transfer *t, placed **order_out)
{
    const uint64_t n = t->count, block = t->block;
    *order_out = NULL;
    if (n == 0)
        return H5Sselect_none(f->filespace) < 0 ? EINVAL : 0;
    bool sorted = true;
    for (uint64_t i = 1; i < n && sorted; i++)
        sorted = t->offsets[i] > t->offsets[i - 1];
    placed *p = malloc(sizeof *p * n);
    if (!p)
        return ENOMEM;
    for (uint64_t i = 0; i < n; i++)
        p[i] = (placed){t->offsets[i], i};
    if (!sorted)
        qsort(p, n, sizeof *p, by_offset);
    for (uint64_t i = 0; i < n; i++)
        if (p[i].offset + block > f->bytes) {
            free(p);
            return t->mode == BACKEND_READ ? ENODATA : EINVAL;
        }
    uint64_t step = n > 1 ? p[1].offset - p[0].offset : block;
    bool regular = step >= block;
    for (uint64_t i = 2; i < n && regular; i++)
        regular = p[i].offset - p[i - 1].offset == step;
    herr_t r;
    if (regular) {
        hsize_t start[1] = {p[0].offset}, stride[1] = {step}, count[1] = {n}, blk[1] = {block};
        if (step == block) { /* one run */
            count[0] = n * block;
            r = H5Sselect_hyperslab(f->filespace, H5S_SELECT_SET, start, NULL, count, NULL);
        } else {
            r = H5Sselect_hyperslab(f->filespace, H5S_SELECT_SET, start, stride, count, blk);
        }
    } else {
        r = H5Sselect_none(f->filespace);
        for (uint64_t i = 0; i < n && r >= 0; i++) {
            uint64_t run = 1; /* coalesce neighbours into one hyperslab */
            while (i + run < n && p[i + run].offset == p[i].offset + run * block)
                run++;
            hsize_t start[1] = {p[i].offset}, count[1] = {run * block};
            r = H5Sselect_hyperslab(f->filespace, H5S_SELECT_OR, start, NULL, count, NULL);
            i += run - 1;
        }
    }
    if (r < 0) {
        free(p);
        return EINVAL;
    }
    if (sorted)
        free(p);
    else
        *order_out = p;
    return 0;
}

static int hdf5_transfer(void *h, const backend_transfer *t)
{
    hdf5_file *f = h;
    const bool reading = t->mode == BACKEND_READ;
    const size_t bytes = (size_t)t->count * t->block;
    placed *order = NULL;
    int e = select_slice(f, t, &order);
    if (e) /* still take part, with nothing selected */
        H5Sselect_none(f->filespace);
    unsigned char *mem = t->buf;
    if (!e && order) {
        if (f->scratch_len < bytes) {
            free(f->scratch);
            f->scratch = malloc(bytes);
            f->scratch_len = f->scratch ? bytes : 0;
        }
        if (!f->scratch) {
            e = ENOMEM;
            H5Sselect_none(f->filespace);
        } else {
            mem = f->scratch;
            if (!reading)
                for (uint64_t i = 0; i < t->count; i++)
                    memcpy(mem + i * t->block, (unsigned char *)t->buf + order[i].index * t->block,
                           t->block);
        }
    }
    hsize_t mdims[1] = {bytes ? bytes : 1};
    hid_t ms = H5Screate_simple(1, mdims, NULL);
    if (e || bytes == 0)
        H5Sselect_none(ms);
    herr_t r = reading ? H5Dread(f->dset, H5T_NATIVE_UINT8, ms, f->filespace, f->dxpl, mem)
                       : H5Dwrite(f->dset, H5T_NATIVE_UINT8, ms, f->filespace, f->dxpl, mem);
    H5Sclose(ms);
    if (!e && r < 0)
        e = failure_reason(f, reading, bytes);
    if (!e && reading && order)
        for (uint64_t i = 0; i < t->count; i++)
            memcpy((unsigned char *)t->buf + order[i].index * t->block, mem + i * t->block,
                   t->block);
    free(order);
    e = library_lines_after(e); /* ompio's collective write may fail where it says it worked */
    H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
    if (H5Pget_mpio_actual_io_mode(f->dxpl, &mode) >= 0) {
        if (f->observed)
            f->observed[HDF5_OBS_MODE] = (double)mode;
        h5ran.io_mode = (int)mode;
        uint32_t local = 0, global = 0;
        if (mode == H5D_MPIO_NO_COLLECTIVE &&
            H5Pget_mpio_no_collective_cause(f->dxpl, &local, &global) >= 0)
            h5ran.no_collective_cause = global;
    }
    return e;
}

/* The flush writes metadata from some ranks for all: agreed, so that a
 * failure on one rank ends in every rank's abandoning the file at close
 * rather than in an H5Fclose that is collective on some ranks only. */
static int hdf5_sync(void *h)
{
    hdf5_file *f = h;
    int e = library_lines_after(H5Fflush(f->file, H5F_SCOPE_LOCAL) < 0
                                    ? disk_short_write_errno(f->path, 1) : 0);
    int mine = e != 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, f->comm);
    f->failed_apart = any;
    return e;
}

/* Drop the file without HDF5's collective close (backend.h, Failing
 * apart): HDF5 1.10's close after a failed metadata write skips the
 * barrier the other ranks wait in.  Nothing of it is shut down; the run
 * ends without MPI_Finalize. */
static int hdf5_abandon(void *h)
{
    hdf5_file *f = h;
    if (f->agreed != MPI_FILE_NULL)
        agreed_writes_drop(f->agreed);
    library_lines_release_failed();
    fail_skip_finalize();
    free(f->scratch);
    free(f);
    return 0;
}

static int hdf5_close(void *h)
{
    hdf5_file *f = h;
    if (f->failed_apart)
        return hdf5_abandon(h);
    mpiio_probe_closing(&f->probe);
    H5Sclose(f->filespace);
    if (f->memspace > 0)
        H5Sclose(f->memspace);
    H5Pclose(f->dxpl);
    int e = H5Dclose(f->dset) < 0 ? EIO : 0;
    if (H5Fclose(f->file) < 0) {
        /* HDF5 1.10 keeps a file whose close failed (its metadata could not
         * be written: a full disk) half torn down, and its shutdown in
         * MPI_Finalize then crashes on it: this process exits without it.
         * The failure is every rank's (agreed_writes.h): the metadata's
         * write failed, named from the free space as a raw write's is. */
        fail_skip_finalize();
        e = e ? e : disk_short_write_errno(f->path, 1);
    }
    if (f->agreed != MPI_FILE_NULL)
        agreed_writes_forget(f->agreed);
    e = library_lines_after(e); /* a write the library said failed, though HDF5 did not see it */
    library_lines_release();
    mpiio_probe_stop(&f->probe, f->comm, f->cfg->atomic);
    free(f->scratch);
    free(f);
    return e;
}

static void hdf5_describe(const void *cfg, json *j)
{
    const hdf5_config *c = cfg;
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    char v[32];
    snprintf(v, sizeof v, "%u.%u.%u", maj, min, rel);
    json_string(j, "hdf5_version", v);
    json_string(j, "transfer", c->collective ? "collective" : "independent");
    json_string(j, "dataset", "data");
    json_string(j, "element", "uint8 (one element per byte of the raw file)");
    json_string(j, "storage", c->chunk ? "chunked" : "contiguous");
    if (c->chunk) {
        json_uint(j, "chunk_bytes_asked", c->chunk);
        if (h5ran.have)
            json_uint(j, "chunk_bytes", h5ran.chunk);
    }
    json_uint(j, "align", c->align);
    if (h5ran.have && h5ran.data_offset != UINT64_MAX)
        json_uint(j, "data_offset", h5ran.data_offset);
    else
        json_null(j, "data_offset");
    if (h5ran.io_mode >= 0) {
        json_string(j, "actual_io_mode", io_mode_name(h5ran.io_mode));
        if (h5ran.io_mode == H5D_MPIO_NO_COLLECTIVE)
            json_uint(j, "no_collective_cause", h5ran.no_collective_cause);
    }
    json_bool(j, "atomic", c->atomic);
    /* whether a full disk on one rank reaches every rank inside HDF5's
     * collective writes (agreed_writes.h): false only if the engine's
     * export of MPI_File_write_at_all was lost */
    json_bool(j, "agreed_collective_writes", agreed_writes_active());
    mpiio_observe_describe(j, c->atomic);
}

static const char *hdf5_caveat(const void *cfg)
{
    const hdf5_config *c = cfg;
    return mpiio_observe_caveat(c->atomic, c->collective);
}

#endif /* PARIO_HAVE_PARALLEL_HDF5 */

const backend_ops backend_hdf5 = {
    .name = "hdf5",
    .summary = "parallel HDF5: one byte dataset per file, independent or collective",
    .caps = BACKEND_CAP_PER_CALL | BACKEND_CAP_TRANSFER | BACKEND_CAP_COLLECTIVE_OPEN |
            BACKEND_CAP_GROUPABLE | BACKEND_CAP_NEEDS_MPI | BACKEND_CAP_SPLIT_FAILURES,
    .caps_for = hdf5_caps_for,
    .options = hdf5_options,
    .noptions = sizeof hdf5_options / sizeof hdf5_options[0],
    .repeatable = (const char *const[]){"hint", NULL},
    .config_size = sizeof(hdf5_config),
    .config_init = hdf5_config_init,
    .config_set = hdf5_config_set,
    .config_check = hdf5_config_check,
#ifdef PARIO_HAVE_PARALLEL_HDF5
    .open = hdf5_open,
    .open_check = hdf5_open_check,
    .write_at = hdf5_write_at,
    .read_at = hdf5_read_at,
    .transfer = hdf5_transfer,
    .sync = hdf5_sync,
    .close = hdf5_close,
    .abandon = hdf5_abandon,
    .observed_names = hdf5_observed_names,
    .describe = hdf5_describe,
    .caveat = hdf5_caveat,
#endif
};
