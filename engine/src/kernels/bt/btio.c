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

int btio_write_dump_rows(int fd, const bt_problem *p, int dump)
{
    const int n = p->n;
    const size_t row = 40u * (size_t)n;
    for (int k = p->k0; k < p->k0 + p->nk; k++) /* this rank's planes */
        for (int j = 0; j < n; j++) {
            const double *src = &p->u[(((long)(k - p->k0 + 2) * n + j) * n) * 5];
            int e = pwrite_all(fd, src, row, (off_t)btio_offset(n, 0, j, k, (uint64_t)dump));
            if (e)
                return e;
        }
    return 0;
}

int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], FILE *diag,
                    char *why, size_t why_len)
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
        for (int m = 0; m < 5; m++)
            xce_mean[m] += xce[m] / dumps;
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
