#include "stderr_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The held lines live in memory (memfd), not in a file under TMPDIR: the
 * capture is begun inside timed opens, and creating and dropping an inode
 * on a disk file system there meant journal work (waiting behind the
 * commit of the benchmark's own fsync) that no MPI-IO peer pays. */
static int held_file(void)
{
    int fd = memfd_create("pario-held-stderr", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
    const char *dir = getenv("TMPDIR"); /* a kernel without memfd */
    return open(dir && dir[0] ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

int stderr_capture_begin(stderr_capture *c)
{
    c->saved = c->held = -1;
    int fd = held_file();
    if (fd < 0)
        return errno;
    fflush(stderr);
    int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (saved < 0 || dup2(fd, 2) < 0) {
        int e = errno;
        if (saved >= 0)
            close(saved);
        close(fd);
        return e;
    }
    c->saved = saved;
    c->held = fd;
    return 0;
}

bool stderr_capture_said(stderr_capture *c, char *line, size_t len)
{
    struct stat st;
    if (c->held < 0 || fstat(c->held, &st) != 0 || st.st_size == 0)
        return false;
    ssize_t n = pread(c->held, line, len - 1, 0);
    line[n > 0 ? n : 0] = 0;
    line[strcspn(line, "\n")] = 0;
    return true;
}

bool stderr_capture_said_since(stderr_capture *c, long long *from, char *text, size_t len)
{
    struct stat st;
    if (c->held < 0 || fstat(c->held, &st) != 0 || st.st_size <= *from)
        return false;
    ssize_t n = pread(c->held, text, len - 1, (off_t)*from);
    text[n > 0 ? n : 0] = 0;
    *from = st.st_size;
    return true;
}

void stderr_capture_end(stderr_capture *c, bool replay)
{
    if (c->saved < 0)
        return;
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    if (replay) {
        char buf[4096];
        ssize_t n;
        off_t off = 0;
        while ((n = pread(c->held, buf, sizeof buf, off)) > 0) {
            if (write(2, buf, (size_t)n) != n)
                break;
            off += n;
        }
    }
    close(c->held);
    c->saved = c->held = -1;
}

int stderr_capture_errno(const char *line, int fallback)
{
    int best = fallback;
    size_t longest = 0;
    for (int e = 1; e < 134; e++) { /* the longest match: no message hides in another */
        const char *text = strerror(e);
        size_t n = strlen(text);
        if (n > longest && strncmp(text, "Unknown error", 13) != 0 && strstr(line, text)) {
            best = e;
            longest = n;
        }
    }
    return best;
}
