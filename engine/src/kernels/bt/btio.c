#include "btio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* --- posix ---------------------------------------------------------- */
static int create_shared(btio_ctx *c)
{
    int e = 0;
    if (c->rank == 0) {
        int fd = open(c->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        e = fd < 0 ? errno : (close(fd), 0);
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, c->comm);
    return e;
}

static int posix_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (!e && (c->fd = open(c->path, O_WRONLY | O_CLOEXEC)) < 0)
        e = errno;
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
static int mpiio_open(btio_ctx *c, const bt_problem *p)
{
    int e = create_shared(c);
    if (e)
        return e;
    return MPI_File_open(c->comm, c->path, MPI_MODE_WRONLY, c->info, &c->fh) == MPI_SUCCESS ? 0 : EIO;
}

static int independent_write(btio_ctx *c, const bt_problem *p, int dump)
{
    const int n = p->n;
    for (int k = p->k0; k < p->k0 + p->nk; k++)
        for (int j = 0; j < n; j++)
            if (MPI_File_write_at(c->fh, (MPI_Offset)btio_offset(n, 0, j, k, (uint64_t)dump),
                                  row(p, j, k), 5 * n, MPI_DOUBLE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return EIO;
    return 0;
}

static int collective_write(btio_ctx *c, const bt_problem *p, int dump)
{
    MPI_Offset off = (MPI_Offset)btio_offset(p->n, 0, 0, p->k0, (uint64_t)dump);
    return MPI_File_write_at_all(c->fh, off, slab(p), (int)slab_doubles(p), MPI_DOUBLE,
                                 MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : EIO;
}

static int mpiio_close(btio_ctx *c)
{
    int e = MPI_File_sync(c->fh) == MPI_SUCCESS ? 0 : EIO;
    if (MPI_File_close(&c->fh) != MPI_SUCCESS && !e)
        e = EIO;
    return e;
}

/* --- per-rank --------------------------------------------------------- */
static int per_rank_open(btio_ctx *c, const bt_problem *p)
{
    c->fd = open(c->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    return c->fd < 0 ? errno : 0;
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
        else if ((c->fd = open(c->path, O_WRONLY | O_CLOEXEC)) < 0)
            e = errno;
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
    c->gathered = NULL;
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

int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], double xce_last[5],
                    FILE *diag, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    uint64_t dump_bytes = 40ULL * n * n * n, want = dump_bytes * (uint64_t)dumps;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != want) {
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
