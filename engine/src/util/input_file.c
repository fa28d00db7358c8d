#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int input_file_open(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int e = 0;
    if (fstat(fd, st) != 0)
        e = errno;
    else if (S_ISDIR(st->st_mode))
        e = EISDIR;
    else if (!S_ISREG(st->st_mode))
        e = EINVAL;
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        e = errno;
    if (e) {
        close(fd);
        return -e;
    }
    return fd;
}

const char *input_file_reason(int e)
{
    static char text[160];
    if (e == EISDIR)
        return "is a directory";
    if (e == EINVAL)
        return "is not a regular file (a FIFO, a device or a socket)";
    snprintf(text, sizeof text, "cannot be opened: %s", strerror(e));
    return text;
}
