/* posix: open/pread/pwrite/fsync/close on a file descriptor. */
#include "backend.h"
#include "backend_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct posix_file {
    int fd;
} posix_file;

static int posix_open(const backend_open_args *a, void **handle)
{
    int fd = backend_open_fd(a, false);
    if (fd < 0)
        return -fd;
    posix_file *f = malloc(sizeof *f);
    if (!f) {
        close(fd);
        return ENOMEM;
    }
    f->fd = fd;
    *handle = f;
    return 0;
}

/* pwrite/pread may move fewer bytes than asked; loop until done. */
static int posix_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    posix_file *f = h;
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(f->fd, p, len, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EIO;
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

static int posix_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    posix_file *f = h;
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(f->fd, p, len, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return ENODATA; /* the file ends before the block does */
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

static int posix_sync(void *h)
{
    posix_file *f = h;
    return fsync(f->fd) == 0 ? 0 : errno;
}

static int posix_close(void *h)
{
    posix_file *f = h;
    int e = close(f->fd) == 0 ? 0 : errno;
    free(f);
    return e;
}

const backend_ops backend_posix = {
    .name = "posix",
    .summary = "pread/pwrite on a file descriptor",
    .caps = BACKEND_CAP_DIRECT | BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE |
            BACKEND_CAP_PREALLOC,
    .open = posix_open,
    .write_at = posix_write_at,
    .read_at = posix_read_at,
    .sync = posix_sync,
    .close = posix_close,
};
