#include "backend_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int backend_open_fd(const backend_open_args *a, bool want_rdwr)
{
    int flags = a->mode == BACKEND_WRITE ? (want_rdwr ? O_RDWR : O_WRONLY) : O_RDONLY;
    if (a->create)
        flags |= O_CREAT | O_EXCL; /* exclusive: never into a file this run did not create */
    flags |= O_NOFOLLOW | O_CLOEXEC;
    if (a->direct)
        flags |= O_DIRECT;
    int fd = open(a->path, flags, 0644);
    if (fd < 0)
        return -errno;
    /* identity from the descriptor: the file made or opened, not the name */
    int e = 0;
    if (a->create && a->created)
        e = owned_file_note_created(fd, a->path, a->created);
    else if (!a->create && a->expect && a->expect->known) {
        owned_file got;
        e = owned_file_note_fd(fd, &got);
        if (!e && (got.dev != a->expect->dev || got.ino != a->expect->ino))
            e = ESTALE;
    }
    if (e) {
        close(fd);
        return -e;
    }
    return fd;
}
