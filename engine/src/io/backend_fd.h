/* Opening a file descriptor under the creation rule of backend.h, for
 * every backend built on one (posix, stdio, mmap, uring): exclusive
 * creation, never through a symlink, O_DIRECT when asked. */
#ifndef PARIO_BACKEND_FD_H
#define PARIO_BACKEND_FD_H

#include "backend.h"

/* A descriptor (>= 0) or -errno. extra_flags adds e.g. O_RDWR needs:
 * with want_rdwr the file is opened read-write even for writes (mmap). */
int backend_open_fd(const backend_open_args *a, bool want_rdwr);

#endif
