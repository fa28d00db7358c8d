#include "btio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/clock.h"
#include "../../util/library_lines.h"
#include "../../util/mpi_cause.h"
#include "../../util/safe_file.h"

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return EIO;
        p += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Row (j, k) of a cell: its size[0] points, contiguous in memory (x is
 * fastest in a cell's storage) and in a dump (x is fastest in the file). */
static const double *row(const bt_problem *p, const bt_cell *c, int j, int k)
{
    return &p->u[5 * bt_at(c, c->lo[0], j, k)];
}

/* Every owned row of every cell, in the order the cells lie in z: the
 * independent writers' loop. */
#define FOR_ROWS(p, c, j, k)                                                            \
    for (const bt_cell *c = (p)->cells; c < (p)->cells + (p)->ncells; c++)             \
        for (int k = c->lo[2]; k < c->lo[2] + c->size[2]; k++)                         \
            for (int j = c->lo[1]; j < c->lo[1] + c->size[1]; j++)

static uint64_t owned_points(const bt_cell *cells, int ncells)
{
    uint64_t pts = 0;
    for (int c = 0; c < ncells; c++)
        pts += (uint64_t)cells[c].size[0] * cells[c].size[1] * cells[c].size[2];
    return pts;
}

/* BTIO "full"'s two datatypes (§2.3).  The file type: one 3-D subarray of
 * the N^3 grid of points (etype: a point's 5 doubles) per cell, joined in
 * a struct; the cells lie in z order, so the type map ascends as a file
 * view requires, and its extent is one whole dump.  The memory type: the
 * same cells' interiors inside their ghost layers in u.  The serial
 * writer's rank 0 receives every rank's data through that rank's file
 * type, so the two describe one transfer either way. */
static MPI_Datatype point_type(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(5, MPI_DOUBLE, &t);
    return t;
}

static MPI_Datatype file_type(const bt_cell *cells, int ncells, int n, MPI_Datatype point)
{
    MPI_Datatype *parts = calloc((size_t)ncells, sizeof(MPI_Datatype)), t;
    int *ones = calloc((size_t)ncells, sizeof(int));
    MPI_Aint *zero = calloc((size_t)ncells, sizeof(MPI_Aint));
    for (int c = 0; c < ncells; c++) {
        const bt_cell *cl = &cells[c];
        int sizes[3] = {n, n, n}, sub[3] = {cl->size[2], cl->size[1], cl->size[0]},
            start[3] = {cl->lo[2], cl->lo[1], cl->lo[0]};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, point, &parts[c]);
        ones[c] = 1;
        zero[c] = 0;
    }
    MPI_Type_create_struct(ncells, ones, zero, parts, &t);
    MPI_Type_commit(&t);
    for (int c = 0; c < ncells; c++)
        MPI_Type_free(&parts[c]);
    free(parts);
    free(ones);
    free(zero);
    return t;
}

static MPI_Datatype memory_type(const bt_problem *p, MPI_Datatype point)
{
    const int nc = p->ncells;
    MPI_Datatype *parts = calloc((size_t)nc, sizeof(MPI_Datatype)), t;
    int *ones = calloc((size_t)nc, sizeof(int));
    MPI_Aint *at = calloc((size_t)nc, sizeof(MPI_Aint));
    for (int c = 0; c < nc; c++) {
        const bt_cell *cl = &p->cells[c];
        int sizes[3] = {cl->dim[2], cl->dim[1], cl->dim[0]},
            sub[3] = {cl->size[2], cl->size[1], cl->size[0]}, start[3] = {2, 2, 2};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, point, &parts[c]);
        ones[c] = 1;
        at[c] = (MPI_Aint)(40 * cl->base);
    }
    MPI_Type_create_struct(nc, ones, at, parts, &t);
    MPI_Type_commit(&t);
    for (int c = 0; c < nc; c++)
        MPI_Type_free(&parts[c]);
    free(parts);
    free(ones);
    free(at);
    return t;
}

static void free_types(btio_ctx *c)
{
    MPI_Datatype *t[3] = {&c->point, &c->filetype, &c->memtype};
    for (int i = 0; i < 3; i++)
        if (*t[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(t[i]);
}

/* An MPI error as one line of pario's: its cause by the io command's rule
 * (mpi_cause.h), so a full disk reads "No space left on device". */
static int mpi_failed(btio_ctx *c, int code, const char *what)
{
    const int sys = errno;
    if (code == MPI_SUCCESS)
        return 0;
    const int e = mpi_cause(code, sys);
    char text[MPI_MAX_ERROR_STRING];
    mpi_cause_text(code, e, text, sizeof text);
    if (!c->why[0])
        snprintf(c->why, sizeof c->why, "%s: %s", what, text);
    return e;
}

/* ompio can report a failed write only by printing it: a system error the
 * library printed while writing is a failure (library_lines.h). */
static int library_spoke(btio_ctx *c, const char *what)
{
    const int e = library_lines_after(0);
    if (e && !c->why[0])
        snprintf(c->why, sizeof c->why, "%s: %s", what, strerror(e));
    return e;
}

/* --- posix ---------------------------------------------------------- */
/* Rank 0 creates the shared file (exclusively, never through a symlink);
 * every rank learns which file that is, so a name swapped mid-run is
 * caught rather than written through or removed. */
static int create_shared(btio_ctx *c)
{
    int e = 0;
    if (c->rank == 0) {
        int fd = create_exclusive(c->path, O_WRONLY, &c->mine);
        e = fd < 0 ? -fd : (close(fd), 0);
    }
    unsigned long long id[3] = {(unsigned long long)e, (unsigned long long)c->mine.dev,
                                (unsigned long long)c->mine.ino};
    MPI_Bcast(id, 3, MPI_UNSIGNED_LONG_LONG, 0, c->comm);
    c->mine.dev = (dev_t)id[1];
    c->mine.ino = (ino_t)id[2];
    c->mine.known = id[0] == 0;
    return (int)id[0];
}

static int posix_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (!e && (c->fd = open_ours(c->path, O_WRONLY, &c->mine)) < 0) {
        e = -c->fd;
        c->fd = -1;
    }
    return e;
}

/* posix: one pwrite per (cell, j, k) row; fortran: one 40-byte record
 * per point, at record (point index + dump N^3), as NPB's direct-access
 * file puts them. */
static int posix_write(btio_ctx *c, const bt_problem *p, int dump)
{
    const int n = p->n;
    const int per_call = c->mode->record_points;
    FOR_ROWS(p, cell, j, k) {
        const int len = per_call ? per_call : cell->size[0];
        for (int i = 0; i < cell->size[0]; i += len) {
            int e = pwrite_all(c->fd, row(p, cell, j, k) + 5 * i, 40u * (size_t)len,
                               (off_t)btio_offset(n, cell->lo[0] + i, j, k, (uint64_t)dump));
            if (e)
                return e;
        }
    }
    return 0;
}

static int fd_close(btio_ctx *c)
{
    if (c->fd < 0)
        return 0;
    double t = clock_now();
    int e = fsync(c->fd) != 0 ? errno : 0;
    c->sync_seconds = clock_now() - t;
    if (close(c->fd) != 0 && !e)
        e = errno;
    c->fd = -1;
    return e;
}

/* --- MPI-IO: independent and collective ------------------------------ */
/* MPI-IO opens by name and knows no O_NOFOLLOW: the name is checked to
 * still be the file rank 0 created once every rank holds it open. */
static int mpiio_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (e)
        return e;
    /* errors come back as codes pario reports in one line, on every file */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    library_lines_hold(); /* until mpiio_close: the library's failure lines are pario's to name */
    e = mpi_failed(c, MPI_File_open(c->comm, c->path, MPI_MODE_WRONLY, c->info, &c->fh),
                   "MPI_File_open");
    if (e) {
        c->fh = MPI_FILE_NULL;
        library_lines_release(); /* held only while a file is open */
        return e;
    }
    MPI_File_set_errhandler(c->fh, MPI_ERRORS_RETURN);
    e = owned_file_check(c->path, &c->mine);
    return e ? e : c->mode->view ? c->mode->view(c, p) : 0;
}

/* NPB "simple": one MPI_File_write_at per (cell, j, k) row. */
static int independent_write(btio_ctx *c, const bt_problem *p, int dump)
{
    const int n = p->n;
    FOR_ROWS(p, cell, j, k) {
        int r = MPI_File_write_at(c->fh, (MPI_Offset)btio_offset(n, cell->lo[0], j, k, (uint64_t)dump),
                                  row(p, cell, j, k), 5 * cell->size[0], MPI_DOUBLE, MPI_STATUS_IGNORE);
        if (r != MPI_SUCCESS)
            return mpi_failed(c, r, "MPI_File_write_at");
    }
    return library_spoke(c, "MPI_File_write_at");
}

/* NPB "full": the view is this rank's cells of every dump (file type
 * tiled dump after dump), the hints go with it. */
static int collective_view(btio_ctx *c, const bt_problem *p)
{
    c->point = point_type();
    MPI_Type_commit(&c->point);
    c->filetype = file_type(p->cells, p->ncells, p->n, c->point);
    c->memtype = memory_type(p, c->point);
    c->local_points = owned_points(p->cells, p->ncells);
    return mpi_failed(c, MPI_File_set_view(c->fh, 0, c->point, c->filetype, "native", c->info),
                      "MPI_File_set_view");
}

/* One MPI_File_write_at_all per dump: offset iseek = dump x (points this
 * rank owns), in etypes of the view, one memory-type element of u. */
static int collective_write(btio_ctx *c, const bt_problem *p, int dump)
{
    MPI_Offset iseek = (MPI_Offset)(c->local_points * (uint64_t)dump);
    int e = mpi_failed(c, MPI_File_write_at_all(c->fh, iseek, p->u, 1, c->memtype, MPI_STATUS_IGNORE),
                       "MPI_File_write_at_all");
    return e ? e : library_spoke(c, "MPI_File_write_at_all");
}

static int mpiio_close(btio_ctx *c)
{
    int e = 0;
    if (c->fh != MPI_FILE_NULL) {
        /* MPI_File_close syncs by the standard's words, but ompio's calls
         * no fsync (strace) and ROMIO's does not flush either: pario asks,
         * so its I/O time ends with the data on storage */
        double t = clock_now();
        e = mpi_failed(c, MPI_File_sync(c->fh), "MPI_File_sync");
        c->sync_seconds = clock_now() - t;
        int ce = mpi_failed(c, MPI_File_close(&c->fh), "MPI_File_close");
        /* closed on every rank, whatever this one's answer: ompio may leave
         * a handle whose close failed (a disk full), and stop_on_io_error's
         * second, collective close on those ranks alone never returned */
        c->fh = MPI_FILE_NULL;
        e = e ? e : ce;
        e = e ? e : library_spoke(c, "MPI_File_close");
        /* what the library said on a good run is passed on; after a failure
         * pario's one line names its cause */
        library_lines_release();
    }
    free_types(c);
    return e;
}

/* --- per-rank --------------------------------------------------------- */
static int per_rank_open(btio_ctx *c, const bt_problem *p)
{
    uint64_t largest = 0;
    c->epio_dump_bytes = 0;
    for (int i = 0; i < p->ncells; i++) {
        const bt_cell *cl = &p->cells[i];
        uint64_t b = 40ULL * cl->size[0] * cl->size[1] * cl->size[2];
        largest = b > largest ? b : largest;
        c->epio_dump_bytes += b + 8;
    }
    if (largest > INT32_MAX) { /* gfortran would split it into subrecords; pario does not */
        snprintf(c->why, sizeof c->why, "a cell of %llu bytes is over the 2 GiB a Fortran record "
                 "marker holds: use more ranks", (unsigned long long)largest);
        return EFBIG;
    }
    c->record = malloc((size_t)largest + 8);
    if (!c->record)
        return ENOMEM;
    c->fd = create_exclusive(c->path, O_WRONLY, &c->mine);
    if (c->fd >= 0)
        return 0;
    int e = -c->fd;
    c->fd = -1;
    return e;
}

/* NPB "epio": per dump, one Fortran unformatted sequential record per
 * owned cell, in cell order: the cell's points, 5 components fastest, then
 * i, j, k.  A record is framed as gfortran frames it: a 4-byte
 * little-endian (native) length in bytes before and after the data.  One
 * pwrite per record from a packed copy. */
static int per_rank_write(btio_ctx *c, const bt_problem *p, int dump)
{
    uint64_t at = c->epio_dump_bytes * (uint64_t)dump;
    for (const bt_cell *cell = p->cells; cell < p->cells + p->ncells; cell++) {
        const uint64_t pts = (uint64_t)cell->size[0] * cell->size[1] * cell->size[2];
        const uint32_t len = (uint32_t)(40 * pts);
        char *rec = c->record;
        memcpy(rec, &len, 4);
        double *d = (double *)(rec + 4);
        for (int k = cell->lo[2]; k < cell->lo[2] + cell->size[2]; k++)
            for (int j = cell->lo[1]; j < cell->lo[1] + cell->size[1]; j++) {
                memcpy(d, row(p, cell, j, k), 40u * (size_t)cell->size[0]);
                d += 5 * cell->size[0];
            }
        memcpy(rec + 4 + len, &len, 4);
        int e = pwrite_all(c->fd, rec, (size_t)len + 8, (off_t)at);
        if (e)
            return e;
        at += (uint64_t)len + 8;
    }
    return 0;
}

static int per_rank_close(btio_ctx *c)
{
    free(c->record);
    c->record = NULL;
    return fd_close(c);
}

/* --- serial: gather to rank 0 ------------------------------------------ */
/* Every rank sends its cells' interiors (memory type); rank 0 receives
 * each rank's through that rank's file type into one whole dump, and
 * writes it with one pwrite. */
static int serial_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (e)
        return e;
    c->point = point_type();
    MPI_Type_commit(&c->point);
    c->memtype = memory_type(p, c->point);
    if (c->rank == 0) {
        c->gathered = malloc(40 * (size_t)p->n * p->n * (size_t)p->n);
        c->from = malloc(sizeof(MPI_Datatype) * (size_t)c->nranks);
        c->pending = malloc(sizeof(MPI_Request) * (size_t)c->nranks);
        bt_cell *cells = malloc(sizeof(bt_cell) * (size_t)p->n);
        for (int r = 0; c->from && r < c->nranks; r++)
            c->from[r] = MPI_DATATYPE_NULL; /* closing after a failure frees only what was made */
        if (!c->gathered || !c->from || !c->pending || !cells)
            e = ENOMEM;
        else if ((c->fd = open_ours(c->path, O_WRONLY, &c->mine)) < 0) {
            e = -c->fd;
            c->fd = -1;
        }
        for (int r = 0; r < c->nranks && !e; r++) {
            int nc = bt_cells_of(p->layout, p->n, c->nranks, r, cells);
            c->from[r] = file_type(cells, nc, p->n, c->point);
        }
        free(cells);
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, c->comm);
    return e;
}

static int serial_write(btio_ctx *c, const bt_problem *p, int dump)
{
    if (c->rank != 0) {
        MPI_Send(p->u, 1, c->memtype, 0, 0, c->comm);
        return 0;
    }
    for (int r = 1; r < c->nranks; r++)
        MPI_Irecv(c->gathered, 1, c->from[r], r, 0, c->comm, &c->pending[r - 1]);
    MPI_Sendrecv(p->u, 1, c->memtype, 0, 1, c->gathered, 1, c->from[0], 0, 1, c->comm,
                 MPI_STATUS_IGNORE);
    bt_wait_all(c->nranks - 1, c->pending);
    size_t bytes = 40u * (size_t)p->n * p->n * p->n;
    return pwrite_all(c->fd, c->gathered, bytes, (off_t)(bytes * (size_t)dump));
}

static int serial_close(btio_ctx *c)
{
    int e = fd_close(c);
    if (c->from)
        for (int r = 0; r < c->nranks; r++)
            if (c->from[r] != MPI_DATATYPE_NULL)
                MPI_Type_free(&c->from[r]);
    free(c->gathered);
    free(c->from);
    free(c->pending);
    c->gathered = NULL; /* closing twice (after an error) is harmless */
    c->from = NULL;
    c->pending = NULL;
    free_types(c);
    return e;
}

/* NPB BTIO's subtypes are the modes that do the same thing: "full" is
 * collective, "simple" independent, "epio" per-rank; "fortran" is posix
 * one 40-byte record per point. */
static const btio_mode modes[] = {
    {"posix", NULL, true, 0, false, posix_open, NULL, posix_write, fd_close},
    {"fortran", "fortran", true, 1, false, posix_open, NULL, posix_write, fd_close},
    {"independent", "simple", true, 0, false, mpiio_open, NULL, independent_write, mpiio_close},
    {"collective", "full", true, 0, false, mpiio_open, collective_view, collective_write, mpiio_close},
    {"per-rank", "epio", false, 0, false, per_rank_open, NULL, per_rank_write, per_rank_close},
    {"serial", NULL, true, 0, true, serial_open, NULL, serial_write, serial_close},
};

const btio_mode *btio_mode_find(const char *name)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0 || (modes[i].npb && strcmp(modes[i].npb, name) == 0))
            return &modes[i];
    return NULL;
}

int btio_open(btio_ctx *c, const btio_mode *m, const char *base, MPI_Info info,
              const bt_problem *p)
{
    memset(c, 0, sizeof *c);
    c->mode = m;
    c->fd = -1;
    c->fh = MPI_FILE_NULL;
    c->point = c->filetype = c->memtype = MPI_DATATYPE_NULL;
    c->info = info;
    c->comm = *(MPI_Comm *)p->comm;
    c->rank = p->rank;
    c->nranks = p->nranks;
    if (m->serial_order)
        snprintf(c->path, sizeof c->path, "%s", base);
    else
        snprintf(c->path, sizeof c->path, "%s.%04d", base, p->rank);
    return m->open(c, p);
}

void btio_remove(btio_ctx *c)
{
    if (c->mode->serial_order ? c->rank == 0 : true)
        remove_if_ours(c->path, &c->mine);
}

/* Where the dumps come from: one serial-order file read sequentially, or
 * every rank's per-rank file, its cell records put back in place. */
typedef struct dump_source {
    int n, nranks, dumps;
    bt_layout layout;
    int *fds;        /* one (serial order) or one per rank */
    bt_cell *cells;  /* scratch: one rank's cells */
    double *record;  /* scratch: one cell record's data */
    const char *path;
} dump_source;

static int read_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Open a dump file read-only (never through a symlink) and check its size;
 * a size that does not fit says what does (fix: the options that decide it). */
static int open_sized(const char *path, uint64_t want, const char *what, const char *fix, char *why,
                      size_t why_len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size != want) {
        snprintf(why, why_len, "%s has %lld bytes, expected %llu (%s): %s", path, (long long)st.st_size,
                 (unsigned long long)want, what, fix);
        close(fd);
        return -1;
    }
    return fd;
}

static int fill_dump(dump_source *src, int d, double *u, char *why, size_t why_len)
{
    const int n = src->n;
    if (src->nranks == 0) { /* serial order: sequential, as a serial post-processor reads */
        if (read_exact(src->fds[0], u, 40ULL * n * n * n) != 0) {
            snprintf(why, why_len, "%s: read of dump %d failed", src->path, d);
            return -1;
        }
        return 0;
    }
    for (int r = 0; r < src->nranks; r++) {
        int nc = bt_cells_of(src->layout, n, src->nranks, r, src->cells);
        for (int c = 0; c < nc; c++) {
            const bt_cell *cl = &src->cells[c];
            const uint32_t want = (uint32_t)(40ULL * cl->size[0] * cl->size[1] * cl->size[2]);
            uint32_t head, tail;
            if (read_exact(src->fds[r], &head, 4) || head != want ||
                read_exact(src->fds[r], src->record, want) || read_exact(src->fds[r], &tail, 4) ||
                tail != want) {
                snprintf(why, why_len, "%s.%04d: dump %d, cell %d is not a %u-byte record", src->path,
                         r, d, c, want);
                return -1;
            }
            const double *v = src->record;
            for (int k = cl->lo[2]; k < cl->lo[2] + cl->size[2]; k++)
                for (int j = cl->lo[1]; j < cl->lo[1] + cl->size[1]; j++) {
                    memcpy(&u[5 * (((long)k * n + j) * n + cl->lo[0])], v, 40u * (size_t)cl->size[0]);
                    v += 5 * cl->size[0];
                }
        }
    }
    return 0;
}

/* Every dump's error norm, their mean and the last one's. */
static int check_dumps(dump_source *src, double xce_mean[5], double xce_last[5], FILE *diag,
                       char *why, size_t why_len)
{
    const int n = src->n, dumps = src->dumps;
    double *u = malloc(40ULL * n * n * n);
    if (!u) {
        snprintf(why, why_len, "out of memory for one %d^3 dump", n);
        return -1;
    }
    memset(xce_mean, 0, 5 * sizeof(double));
    int status = 0;
    for (int d = 0; d < dumps && !status; d++) {
        if ((status = fill_dump(src, d, u, why, why_len)) != 0)
            break;
        double xce[5];
        bt_error_norm_of(n, u, xce);
        for (int m = 0; m < 5; m++) {
            xce_mean[m] += xce[m] / dumps;
            if (xce_last && d == dumps - 1)
                xce_last[m] = xce[m];
        }
        if (diag) {
            fprintf(diag, "dump %d\n", d + 1);
            for (int i = 0; i < n; i++) {
                const double *v = &u[(((long)i * n + i) * n + i) * 5];
                fprintf(diag, "  %4d %21.13e %21.13e %21.13e %21.13e %21.13e\n", i, v[0], v[1],
                        v[2], v[3], v[4]);
            }
        }
    }
    free(u);
    return status;
}

int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], double xce_last[5],
                    FILE *diag, char *why, size_t why_len)
{
    char what[128];
    snprintf(what, sizeof what, "%d dumps of a %d^3 grid", dumps, n);
    int fd = open_sized(path, 40ULL * n * n * n * (uint64_t)dumps, what,
                        "give the --class and --write-interval bt ran with", why, why_len);
    if (fd < 0)
        return -1;
    dump_source src = {.n = n, .dumps = dumps, .fds = &fd, .path = path};
    int status = check_dumps(&src, xce_mean, xce_last, diag, why, why_len);
    close(fd);
    return status;
}

int btio_read_check_per_rank(const char *base, int n, bt_layout layout, int nranks, int dumps,
                             double xce_mean[5], double xce_last[5], FILE *diag, char *why,
                             size_t why_len)
{
    int grid[3];
    if (!bt_layout_grid(layout, nranks, grid)) {
        snprintf(why, why_len, "%s files cannot come from %d ranks: not a square count",
                 bt_layout_name(layout), nranks);
        return -1;
    }
    dump_source src = {.n = n, .nranks = nranks, .dumps = dumps, .layout = layout, .path = base};
    src.fds = malloc(sizeof(int) * (size_t)nranks);
    src.cells = malloc(sizeof(bt_cell) * (size_t)grid[2]);
    size_t largest = 0;
    int status = src.fds && src.cells ? 0 : -1;
    if (status)
        snprintf(why, why_len, "out of memory for %d per-rank files", nranks);
    int opened = 0;
    for (int r = 0; r < nranks && !status; r++, opened++) {
        int nc = bt_cells_of(layout, n, nranks, r, src.cells);
        uint64_t bytes = 0;
        for (int c = 0; c < nc; c++) {
            size_t b = 40u * (size_t)src.cells[c].size[0] * src.cells[c].size[1] * src.cells[c].size[2];
            largest = b > largest ? b : largest;
            bytes += b + 8;
        }
        char path[4200], what[160];
        snprintf(path, sizeof path, "%s.%04d", base, r);
        snprintf(what, sizeof what, "%d dumps of rank %d's %d cell record(s), %s on %d ranks", dumps,
                 r, nc, bt_layout_name(layout), nranks);
        /* files cut otherwise (bt's default decomposition is multipartition
         * at a square rank count) have other sizes */
        if ((src.fds[r] = open_sized(path, bytes * (uint64_t)dumps, what,
                                     "give the --ranks, --decomposition, --class and --write-interval "
                                     "bt ran with", why, why_len)) < 0)
            status = -1;
    }
    if (!status && !(src.record = malloc(largest))) {
        snprintf(why, why_len, "out of memory for one cell record");
        status = -1;
    }
    if (!status)
        status = check_dumps(&src, xce_mean, xce_last, diag, why, why_len);
    for (int r = 0; r < opened; r++)
        if (src.fds[r] >= 0)
            close(src.fds[r]);
    free(src.fds);
    free(src.cells);
    free(src.record);
    return status;
}
