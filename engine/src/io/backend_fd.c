#include "backend_fd.h"

#include <errno.h>
#include <fcntl.h>

int backend_open_fd(const backend_open_args *a, bool want_rdwr)
{
    int flags = a->mode == BACKEND_WRITE ? (want_rdwr ? O_RDWR : O_WRONLY) : O_RDONLY;
    if (a->create)
        flags |= O_CREAT | O_EXCL; /* exclusive: never into a file this run did not create */
    flags |= O_NOFOLLOW | O_CLOEXEC;
    if (a->direct)
        flags |= O_DIRECT;
    int fd = open(a->path, flags, 0644);
    return fd >= 0 ? fd : -errno;
}
