/* The three FLASH files through parallel HDF5, and their serial check.
 *
 * Block data go as hyperslabs of [tot_blocks]... datasets starting at the
 * rank's global block offset, with independent or collective transfer;
 * the scalar datasets are written by rank 0 alone (independently), as
 * FLASH does.  Dataset creation is collective in parallel HDF5, so after
 * every dataset all ranks agree whether one failed: a rank that failed
 * never leaves the others waiting in the next collective call. */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../util/agreed_writes.h"
#include "../../util/disk_full.h"
#include "../../util/fail.h"
#include "../../util/library_lines.h"
#include "../../util/run_files.h"
#include "../../util/stderr_capture.h"
#include "flashio.h"

const char *flash_file_suffix(enum flash_file which)
{
    static const char *s[FLASH_NFILES] = {"hdf5_chk_0000", "hdf5_plt_cnt_0000", "hdf5_plt_crn_0000"};
    return s[which];
}

/* HDF5's error stack for pario's one line: the innermost message, and
 * every message, where the MPI layer's text may carry the system's cause
 * ("... No space left on device" from ROMIO). */
typedef struct h5_stack {
    char inner[256];
    char all[1024];
} h5_stack;

static herr_t stack_line(unsigned n, const H5E_error2_t *e, void *arg)
{
    h5_stack *st = arg;
    const char *desc = e->desc ? e->desc : "unknown error";
    if (n == 0)
        snprintf(st->inner, sizeof st->inner, "%s (%s)", desc, e->func_name ? e->func_name : "?");
    size_t used = strlen(st->all);
    snprintf(st->all + used, sizeof st->all - used, "%s; ", desc);
    return 0;
}

/* The first failure: the errno the library named (its held lines, or
 * HDF5's stack), else HDF5's innermost message.  HDF5 fails a write that
 * moved less than asked (ompio returns success with what fit when the disk
 * fills, saying nothing): named from the free space, as the io command
 * names it (disk_full.h), for the `bytes` the call wrote into path. */
static void fail_h5(flash_write_result *r, const char *what, const char *path, uint64_t bytes)
{
    if (r->why[0])
        return;
    h5_stack st = {"", ""};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, stack_line, &st); /* the deepest cause first */
    int e = library_lines_reason(stderr_capture_errno(st.all, EIO));
    if (e == EIO && bytes)
        e = disk_short_write_errno(path, bytes);
    if (e != EIO)
        snprintf(r->why, sizeof r->why, "%s: %s", what, strerror(e));
    else
        snprintf(r->why, sizeof r->why, "%s: %s", what, st.inner[0] ? st.inner : "HDF5 error");
    r->err = e;
}

/* Collective: did any rank fail so far? */
static bool any_failed(const flash_write_result *r, MPI_Comm comm)
{
    int mine = r->why[0] != 0, any;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}

typedef struct writer {
    const char *path;
    hid_t file, dxpl_data, dxpl_single;
    int rank;
    MPI_Comm comm;
    flash_write_result *r;
} writer;

/* Create a dataset of dims and write this rank's rows [offset, offset+rows)
 * of its first dimension (rows 0 when only rank 0 writes, see single). */
static void put(writer *w, const char *name, hid_t type, int ndims, const hsize_t *dims,
                long long offset, long long rows, const void *buf, bool single)
{
    if (any_failed(w->r, w->comm)) /* every rank asks before each collective create */
        return;
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t ds = H5Dcreate2(w->file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (ds < 0) {
        fail_h5(w->r, name, w->path, 1); /* its metadata: any byte */
        H5Sclose(space);
        return;
    }
    hsize_t start[4] = {(hsize_t)offset, 0, 0, 0}, count[4];
    for (int d = 0; d < ndims; d++)
        count[d] = d == 0 ? (hsize_t)rows : dims[d];
    const bool writes = !single || w->rank == 0;
    if (writes) {
        hid_t mem = H5Screate_simple(ndims, count, NULL);
        size_t n = H5Tget_size(type);
        for (int d = 0; d < ndims; d++)
            n *= count[d];
        herr_t e = H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        if (e >= 0)
            e = H5Dwrite(ds, type, mem, space, single ? w->dxpl_single : w->dxpl_data, buf);
        if (e < 0)
            fail_h5(w->r, name, w->path, n);
        else
            w->r->bytes += n;
        H5Sclose(mem);
    }
    H5Dclose(ds);
    H5Sclose(space);
}

static hid_t string_type(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    return t;
}

/* The metadata every FLASH file carries: scalars from rank 0, per-block
 * tree and geometry from every rank. */
static void put_metadata(writer *w, const flash_mesh *m, int nvars, const int *vars, bool single_precision)
{
    const hsize_t one = 1;
    hid_t s40 = string_type(40), s20 = string_type(20), s4 = string_type(4);
    char now[40] = "now", version[20] = "FLASH-IO pario";
    put(w, "file creation time", s40, 1, &one, 0, 1, now, true);
    put(w, "FLASH version", s20, 1, &one, 0, 1, version, true);

    /* simulation parameters: time and timestep are floats in the plotfiles */
    const hid_t real = single_precision ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    const size_t rsz = single_precision ? sizeof(float) : sizeof(double);
    const size_t size = 2 * sizeof(int) + 2 * rsz + 3 * sizeof(int);
    unsigned char rec[64] = {0};
    int total = (int)m->total, steps = 0, n = m->nxb;
    double t = 0, dt = 0;
    float tf = 0, dtf = 0;
    hid_t params = H5Tcreate(H5T_COMPOUND, size);
    size_t off = 0;
    H5Tinsert(params, "total blocks", off, H5T_NATIVE_INT), memcpy(rec + off, &total, 4), off += 4;
    H5Tinsert(params, "time", off, real), memcpy(rec + off, single_precision ? (void *)&tf : (void *)&t, rsz), off += rsz;
    H5Tinsert(params, "timestep", off, real), memcpy(rec + off, single_precision ? (void *)&dtf : (void *)&dt, rsz), off += rsz;
    H5Tinsert(params, "number of steps", off, H5T_NATIVE_INT), memcpy(rec + off, &steps, 4), off += 4;
    const char *dim_names[3] = {"nxb", "nyb", "nzb"};
    for (int d = 0; d < 3; d++)
        H5Tinsert(params, dim_names[d], off, H5T_NATIVE_INT), memcpy(rec + off, &n, 4), off += 4;
    put(w, "simulation parameters", params, 1, &one, 0, 1, rec, true);
    H5Tclose(params);

    char names[FLASH_NVAR][4];
    for (int v = 0; v < nvars; v++) /* 4-character labels, blank padded as FLASH's */
        memcpy(names[v], (char[4]){' ', ' ', ' ', ' '}, 4),
            memcpy(names[v], flash_var_names[vars[v]], strlen(flash_var_names[vars[v]]));
    const hsize_t ndims[2] = {(hsize_t)nvars, 1};
    put(w, "unknown names", s4, 2, ndims, 0, nvars, names, true);

    /* per block: lrefine = 1, nodetype = 1, gid = -1, coord 0.25, size 0.5, bnd_box 0 */
    const long long nb = m->lnblocks;
    int *ints = malloc(sizeof(int) * (size_t)nb * FLASH_NGID);
    double *reals = malloc(sizeof(double) * (size_t)nb * FLASH_NDIM * 2);
    if (!ints || !reals) {
        snprintf(w->r->why, sizeof w->r->why, "cannot allocate the block metadata");
    } else {
        const hsize_t tot = (hsize_t)m->total;
        for (long long i = 0; i < nb; i++)
            ints[i] = 1;
        put(w, "refine level", H5T_NATIVE_INT, 1, &tot, m->offset, nb, ints, false);
        put(w, "node type", H5T_NATIVE_INT, 1, &tot, m->offset, nb, ints, false);
        for (long long i = 0; i < nb * FLASH_NGID; i++)
            ints[i] = -1;
        const hsize_t gid[2] = {tot, FLASH_NGID};
        put(w, "gid", H5T_NATIVE_INT, 2, gid, m->offset, nb, ints, false);
        const hsize_t vec[2] = {tot, FLASH_NDIM}, box[3] = {tot, FLASH_NDIM, 2};
        for (long long i = 0; i < nb * FLASH_NDIM; i++)
            reals[i] = 0.25;
        put(w, "coordinates", H5T_NATIVE_DOUBLE, 2, vec, m->offset, nb, reals, false);
        for (long long i = 0; i < nb * FLASH_NDIM; i++)
            reals[i] = 0.5;
        put(w, "block size", H5T_NATIVE_DOUBLE, 2, vec, m->offset, nb, reals, false);
        memset(reals, 0, sizeof(double) * (size_t)nb * FLASH_NDIM * 2);
        put(w, "bounding box", H5T_NATIVE_DOUBLE, 3, box, m->offset, nb, reals, false);
    }
    free(ints);
    free(reals);
    H5Tclose(s40);
    H5Tclose(s20);
    H5Tclose(s4);
}

void flash_write_file(const flash_mesh *m, enum flash_file which, const char *path, bool collective,
                      MPI_Comm comm, flash_write_result *r)
{
    memset(r, 0, sizeof *r);
    H5dont_atexit(); /* shut down in MPI_Finalize only (see the close below); refused once started */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors become pario's one line, not HDF5's stack */
    writer w = {.path = path, .r = r, .comm = comm};
    MPI_Comm_rank(comm, &w.rank);
    const int n = m->nxb, nc = n + 1, nvars = which == FLASH_CHECKPOINT ? FLASH_NVAR : FLASH_NPLOT;
    int all[FLASH_NVAR];
    for (int v = 0; v < FLASH_NVAR; v++)
        all[v] = v;
    const int *vars = which == FLASH_CHECKPOINT ? all : flash_plot_vars;
    const size_t per_block = which == FLASH_PLOT_CORNERS ? (size_t)nc * nc * nc : (size_t)n * n * n;
    void *buf = malloc((size_t)m->lnblocks * per_block * sizeof(double));
    if (!buf)
        snprintf(r->why, sizeof r->why, "cannot allocate %d blocks of one variable", m->lnblocks);
    if (any_failed(r, comm))
        return;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    /* one collective write per metadata flush, agreed (agreed_writes.h) */
    H5Pset_coll_metadata_write(fapl, 1);
    w.dxpl_data = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(w.dxpl_data, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    w.dxpl_single = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(w.dxpl_single, H5FD_MPIO_INDEPENDENT);

    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    library_lines_hold(); /* ompio's failure lines, until the close */
    w.file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, fapl); /* never an existing file */
    int noted;
    struct stat there;
    if (w.file < 0 && lstat(path, &there) == 0) { /* H5F_ACC_EXCL: the name is someone else's */
        run_file_taken(path, r->why, sizeof r->why);
        r->err = EEXIST;
    } else if (w.file < 0)
        fail_h5(r, "creating the file", path, 0);
    else if ((noted = owned_file_note_opened(path, &r->who)) != 0) /* the descriptor HDF5 opened */
        snprintf(r->why, sizeof r->why, "%s", owned_file_reason(noted));
    /* Every collective write, sync and set_size HDF5 makes on it ends alike
     * on all ranks (agreed_writes.h): a full disk on ompio's aggregator no
     * longer leaves the others in HDF5's next collective (4 ranks with
     * --transfer collective hung in every run before). */
    MPI_File agreed = MPI_FILE_NULL;
    void *handle = NULL;
    int have = w.file >= 0 && H5Fget_vfd_handle(w.file, H5P_DEFAULT, &handle) >= 0 && handle, everyone;
    MPI_Allreduce(&have, &everyone, 1, MPI_INT, MPI_MIN, comm);
    if (everyone && agreed_writes_register(*(MPI_File *)handle, comm) == 0)
        agreed = *(MPI_File *)handle;
    else if (everyone && !r->why[0]) /* else a rank without the file says why */
        snprintf(r->why, sizeof r->why, "cannot follow HDF5's MPI-IO file (out of memory)");
    if (!any_failed(r, comm)) {
        put_metadata(&w, m, nvars, vars, which != FLASH_CHECKPOINT);
        const hsize_t dims[4] = {(hsize_t)m->total, which == FLASH_PLOT_CORNERS ? nc : n,
                                 which == FLASH_PLOT_CORNERS ? nc : n, which == FLASH_PLOT_CORNERS ? nc : n};
        for (int v = 0; v < nvars; v++) {
            if (which == FLASH_CHECKPOINT)
                flash_interior(m, vars[v], buf);
            else if (which == FLASH_PLOT_CENTERS)
                flash_interior_float(m, vars[v], buf);
            else
                flash_corners(m, vars[v], buf);
            put(&w, flash_var_names[vars[v]], which == FLASH_CHECKPOINT ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
                4, dims, m->offset, m->lnblocks, buf, false);
        }
    }
    /* A rank whose last write failed must not enter the collective close
     * alone: HDF5's close on a full disk leaves the ranks in different
     * collectives (one in a barrier of its metadata flush, one in the
     * truncate's broadcast).  Every rank agrees first; after a failure the
     * file is dropped unclosed and this process exits without HDF5's
     * shutdown, as below. */
    if (w.file >= 0 && any_failed(r, comm)) {
        agreed_writes_drop(agreed);
        fail_skip_finalize();
    } else if (w.file >= 0 && H5Fclose(w.file) < 0) { /* collective: every rank that created it closes it */
        fail_h5(r, "closing the file", path, 1); /* its metadata: any byte */
        /* HDF5 1.10 keeps a file whose close failed (its metadata could not
         * be written: a full disk) half torn down, and its shutdown in
         * MPI_Finalize then crashes on it: this process exits without it. */
        fail_skip_finalize();
    }
    if (w.file >= 0) /* closed, or dropped above (then nothing is left to forget) */
        agreed_writes_forget(agreed);
    int named = r->why[0] ? 0 : library_lines_after(0); /* a failure HDF5 did not see */
    if (named) {
        snprintf(r->why, sizeof r->why, "the MPI-IO layer under HDF5: %s", strerror(named));
        r->err = named;
    }
    library_lines_release();
    r->created = w.file >= 0;
    r->seconds = MPI_Wtime() - t0;
    H5Pclose(fapl);
    H5Pclose(w.dxpl_data);
    H5Pclose(w.dxpl_single);
    free(buf);
}

/* --- the serial check ---------------------------------------------------- */
static bool check_dataset(hid_t file, const char *name, int ndims, const hsize_t *dims, double want,
                          char *why, size_t len)
{
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) {
        snprintf(why, len, "dataset '%s' is missing", name);
        return false;
    }
    hid_t space = H5Dget_space(ds);
    hsize_t got[8] = {0};
    int nd = H5Sget_simple_extent_dims(space, got, NULL);
    bool ok = nd == ndims;
    for (int d = 0; ok && d < nd; d++)
        ok = got[d] == dims[d];
    if (!ok) {
        snprintf(why, len, "dataset '%s' has the wrong shape", name);
    } else {
        hsize_t count = 1;
        for (int d = 0; d < nd; d++)
            count *= got[d];
        double *vals = malloc(sizeof(double) * (size_t)count);
        ok = vals && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0;
        for (hsize_t i = 0; ok && i < count; i++)
            if (vals[i] != want) {
                snprintf(why, len, "dataset '%s' value %llu is %g, not %g", name, (unsigned long long)i,
                         vals[i], want);
                ok = false;
            }
        if (!vals)
            snprintf(why, len, "cannot allocate to read '%s'", name);
        free(vals);
    }
    H5Sclose(space);
    H5Dclose(ds);
    return ok;
}

bool flash_check_file(const char *path, const owned_file *who, enum flash_file which, int nxb,
                      long long total, char *why, size_t len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const int changed = owned_file_check(path, who);
    if (changed) {
        snprintf(why, len, "%s %s", path, owned_file_reason(changed));
        return false;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        snprintf(why, len, "cannot open %s", path);
        return false;
    }
    const int e = which == FLASH_PLOT_CORNERS ? nxb + 1 : nxb;
    const hsize_t dims[4] = {(hsize_t)total, e, e, e};
    const int nvars = which == FLASH_CHECKPOINT ? FLASH_NVAR : FLASH_NPLOT;
    bool ok = true;
    for (int v = 0; ok && v < nvars; v++) {
        const int var = which == FLASH_CHECKPOINT ? v : flash_plot_vars[v];
        ok = check_dataset(file, flash_var_names[var], 4, dims, var + 1.0, why, len);
    }
    const hsize_t tot = (hsize_t)total, gid[2] = {tot, FLASH_NGID}, vec[2] = {tot, FLASH_NDIM},
                  box[3] = {tot, FLASH_NDIM, 2};
    ok = ok && check_dataset(file, "refine level", 1, &tot, 1, why, len) &&
         check_dataset(file, "node type", 1, &tot, 1, why, len) &&
         check_dataset(file, "gid", 2, gid, -1, why, len) &&
         check_dataset(file, "coordinates", 2, vec, 0.25, why, len) &&
         check_dataset(file, "block size", 2, vec, 0.5, why, len) &&
         check_dataset(file, "bounding box", 3, box, 0, why, len);
    if (ok) {
        hid_t ds = H5Dopen2(file, "simulation parameters", H5P_DEFAULT);
        hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(int));
        H5Tinsert(t, "total blocks", 0, H5T_NATIVE_INT);
        int blocks = -1;
        if (ds < 0 || H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &blocks) < 0 || blocks != total) {
            snprintf(why, len, "'simulation parameters' does not give %lld total blocks", total);
            ok = false;
        }
        H5Tclose(t);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Fclose(file);
    return ok;
}
