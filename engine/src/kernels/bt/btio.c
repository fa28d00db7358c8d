#include "btio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* this rank's slab: planes k0.. of u, contiguous in memory and in a dump */
static const double *slab(const bt_problem *p)
{
    return &p->u[5L * p->n * p->n * 2];
}

static size_t slab_doubles(const bt_problem *p)
{
    return 5u * (size_t)p->n * p->n * (size_t)p->nk;
}

static const double *row(const bt_problem *p, int j, int k)
{
    return &p->u[(((long)(k - p->k0 + 2) * p->n + j) * p->n) * 5];
}

/* An MPI error as one line of pario's: the library's own text. */
static int mpi_failed(btio_ctx *c, int code, const char *what)
{
    if (code == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    text[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    if (!c->why[0])
        snprintf(c->why, sizeof c->why, "%s: %s", what, text);
    return EIO;
}

/* ompio reports a failed write only by printing it: anything the library
 * printed while writing is a failure, named in its own first line. */
static int library_spoke(btio_ctx *c)
{
    char line[400];
    if (!stderr_capture_said(&c->library, line, sizeof line))
        return 0;
    if (!c->why[0])
        snprintf(c->why, sizeof c->why, "the MPI library reported: %s", line);
    return EIO;
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

static int posix_write(btio_ctx *c, const bt_problem *p, int dump)
{
    const int n = p->n;
    for (int k = p->k0; k < p->k0 + p->nk; k++)
        for (int j = 0; j < n; j++) {
            int e = pwrite_all(c->fd, row(p, j, k), 40u * (size_t)n,
                               (off_t)btio_offset(n, 0, j, k, (uint64_t)dump));
            if (e)
                return e;
        }
    return 0;
}

static int fd_close(btio_ctx *c)
{
    if (c->fd < 0)
        return 0;
    int e = fsync(c->fd) != 0 ? errno : 0;
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
    stderr_capture_begin(&c->library); /* without it, the library's lines pass through */
    e = mpi_failed(c, MPI_File_open(c->comm, c->path, MPI_MODE_WRONLY, c->info, &c->fh),
                   "MPI_File_open");
    if (e) {
        c->fh = MPI_FILE_NULL;
        return e; /* the capture ends in mpiio_close */
    }
    MPI_File_set_errhandler(c->fh, MPI_ERRORS_RETURN);
    return owned_file_check(c->path, &c->mine);
}

static int independent_write(btio_ctx *c, const bt_problem *p, int dump)
{
    const int n = p->n;
    for (int k = p->k0; k < p->k0 + p->nk; k++)
        for (int j = 0; j < n; j++) {
            int r = MPI_File_write_at(c->fh, (MPI_Offset)btio_offset(n, 0, j, k, (uint64_t)dump),
                                      row(p, j, k), 5 * n, MPI_DOUBLE, MPI_STATUS_IGNORE);
            if (r != MPI_SUCCESS)
                return mpi_failed(c, r, "MPI_File_write_at");
        }
    return library_spoke(c);
}

static int collective_write(btio_ctx *c, const bt_problem *p, int dump)
{
    MPI_Offset off = (MPI_Offset)btio_offset(p->n, 0, 0, p->k0, (uint64_t)dump);
    int e = mpi_failed(c, MPI_File_write_at_all(c->fh, off, slab(p), (int)slab_doubles(p),
                                                MPI_DOUBLE, MPI_STATUS_IGNORE),
                       "MPI_File_write_at_all");
    return e ? e : library_spoke(c);
}

static int mpiio_close(btio_ctx *c)
{
    int e = 0;
    if (c->fh != MPI_FILE_NULL) {
        e = mpi_failed(c, MPI_File_sync(c->fh), "MPI_File_sync");
        int ce = mpi_failed(c, MPI_File_close(&c->fh), "MPI_File_close");
        e = e ? e : ce;
        e = e ? e : library_spoke(c);
    }
    /* what the library said on a good run is passed on; after a failure
     * pario's one line names its first */
    stderr_capture_end(&c->library, !e && !c->why[0]);
    return e;
}

/* --- per-rank --------------------------------------------------------- */
static int per_rank_open(btio_ctx *c, const bt_problem *p)
{
    c->fd = create_exclusive(c->path, O_WRONLY, &c->mine);
    if (c->fd >= 0)
        return 0;
    int e = -c->fd;
    c->fd = -1;
    return e;
}

static int per_rank_write(btio_ctx *c, const bt_problem *p, int dump)
{
    size_t bytes = 8 * slab_doubles(p);
    return pwrite_all(c->fd, slab(p), bytes, (off_t)(bytes * (size_t)dump));
}

/* --- serial: gather to rank 0 ------------------------------------------ */
static int serial_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (e)
        return e;
    const size_t plane = 5u * (size_t)p->n * p->n;
    if (c->rank == 0) {
        c->gathered = malloc(8 * plane * (size_t)p->n);
        c->counts = malloc(sizeof(int) * (size_t)c->nranks);
        c->displs = malloc(sizeof(int) * (size_t)c->nranks);
        if (!c->gathered || !c->counts || !c->displs)
            e = ENOMEM;
        else if ((c->fd = open_ours(c->path, O_WRONLY, &c->mine)) < 0) {
            e = -c->fd;
            c->fd = -1;
        }
    }
    /* every rank's slab size and place, for the gather */
    int *all = c->rank == 0 ? malloc(sizeof(int) * 2 * (size_t)c->nranks) : NULL;
    int mine[2] = {p->nk, p->k0};
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, c->comm);
    if (c->rank == 0 && !e) {
        for (int r = 0; r < c->nranks; r++) {
            c->counts[r] = (int)(plane * (size_t)all[2 * r]);
            c->displs[r] = (int)(plane * (size_t)all[2 * r + 1]);
        }
    }
    free(all);
    MPI_Bcast(&e, 1, MPI_INT, 0, c->comm);
    return e;
}

static int serial_write(btio_ctx *c, const bt_problem *p, int dump)
{
    MPI_Gatherv(slab(p), (int)slab_doubles(p), MPI_DOUBLE, c->gathered, c->counts, c->displs,
                MPI_DOUBLE, 0, c->comm);
    if (c->rank != 0)
        return 0;
    size_t bytes = 40u * (size_t)p->n * p->n * p->n;
    return pwrite_all(c->fd, c->gathered, bytes, (off_t)(bytes * (size_t)dump));
}

static int serial_close(btio_ctx *c)
{
    int e = fd_close(c);
    free(c->gathered);
    free(c->counts);
    free(c->displs);
    c->gathered = NULL; /* closing twice (after an error) is harmless */
    c->counts = c->displs = NULL;
    return e;
}

static const btio_mode modes[] = {
    {"posix", true, posix_open, posix_write, fd_close},
    {"independent", true, mpiio_open, independent_write, mpiio_close},
    {"collective", true, mpiio_open, collective_write, mpiio_close},
    {"per-rank", false, per_rank_open, per_rank_write, fd_close},
    {"serial", true, serial_open, serial_write, serial_close},
};

const btio_mode *btio_mode_find(const char *name)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0)
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
    c->library.saved = c->library.held = -1;
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

int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], double xce_last[5],
                    FILE *diag, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    uint64_t dump_bytes = 40ULL * n * n * n, want = dump_bytes * (uint64_t)dumps;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size != want) {
        snprintf(why, why_len, "%s has %lld bytes, expected %llu (%d dumps of a %d^3 grid)", path,
                 (long long)st.st_size, (unsigned long long)want, dumps, n);
        close(fd);
        return -1;
    }
    double *u = malloc(dump_bytes);
    if (!u) {
        snprintf(why, why_len, "out of memory for one %d^3 dump", n);
        close(fd);
        return -1;
    }
    memset(xce_mean, 0, 5 * sizeof(double));
    int status = 0;
    for (int d = 0; d < dumps && !status; d++) {
        size_t got = 0;
        while (got < dump_bytes) { /* sequential, as a serial post-processor reads */
            ssize_t r = read(fd, (char *)u + got, dump_bytes - got);
            if (r <= 0) {
                snprintf(why, why_len, "%s: read of dump %d failed", path, d);
                status = -1;
                break;
            }
            got += (size_t)r;
        }
        if (status)
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
    close(fd);
    return status;
}
