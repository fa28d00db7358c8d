/* stdio: fread/fwrite/fseeko on a FILE stream, with the stream's buffer
 * set by --stdio-buffer (setvbuf).  The ASCI Red report measured buffered
 * streams at their 8 KiB default against larger buffers: small requests
 * are gathered into buffer-sized system calls, and a seek flushes. */
#include "backend.h"
#include "backend_fd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../util/fail.h"
#include "../util/json.h"
#include "io_options.h"

#define STDIO_MAX_BUFFER (1ULL << 30)

typedef struct stdio_config {
    uint64_t buffer; /* 0: the C library's own choice (st_blksize) */
} stdio_config;

enum { OPT_BUFFER };

static const backend_option stdio_options[] = {
    {"stdio-buffer", "SIZE", "the stream's buffer, set with setvbuf\n(default: the C library's)",
     OPT_BUFFER},
};

static void stdio_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    stdio_config *c = cfg;
    if (id == OPT_BUFFER) {
        c->buffer = option_size("--stdio-buffer", arg);
        if (c->buffer > STDIO_MAX_BUFFER)
            fail_usage("--stdio-buffer %s is larger than 1 GiB: use a smaller buffer", arg);
    }
}

static void stdio_describe(const void *cfg, struct json *j)
{
    const stdio_config *c = cfg;
    if (c->buffer)
        json_uint(j, "buffer_bytes", c->buffer);
    else
        json_null(j, "buffer_bytes"); /* the C library's choice */
}

typedef struct stdio_file {
    FILE *f;
    char *buffer;
    uint64_t pos; /* where the stream is, so sequential calls need no seek */
    bool writing;
} stdio_file;

static int stdio_open(const backend_open_args *a, void **handle)
{
    const stdio_config *cfg = a->config;
    stdio_file *s = calloc(1, sizeof *s);
    if (!s)
        return ENOMEM;
    int fd = backend_open_fd(a, false);
    if (fd < 0) {
        free(s);
        return -fd;
    }
    s->writing = a->mode == BACKEND_WRITE;
    /* "w" on an fd neither truncates nor creates: the fd's own flags rule. */
    s->f = fdopen(fd, s->writing ? "w" : "r");
    if (!s->f) {
        int e = errno;
        close(fd);
        free(s);
        return e;
    }
    if (cfg->buffer) {
        s->buffer = malloc(cfg->buffer);
        if (!s->buffer || setvbuf(s->f, s->buffer, _IOFBF, cfg->buffer) != 0) {
            fclose(s->f);
            free(s->buffer);
            free(s);
            return ENOMEM;
        }
    }
    *handle = s;
    return 0;
}

static int seek_to(stdio_file *s, uint64_t offset)
{
    if (s->pos == offset)
        return 0;
    if (fseeko(s->f, (off_t)offset, SEEK_SET) != 0)
        return errno ? errno : EIO;
    s->pos = offset;
    return 0;
}

static int stdio_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    stdio_file *s = h;
    int e = seek_to(s, offset);
    if (e)
        return e;
    errno = 0;
    size_t n = fwrite(buf, 1, len, s->f);
    s->pos += n;
    if (n != len)
        return errno ? errno : EIO;
    return 0;
}

static int stdio_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    stdio_file *s = h;
    int e = seek_to(s, offset);
    if (e)
        return e;
    errno = 0;
    size_t n = fread(buf, 1, len, s->f);
    s->pos += n;
    if (n != len)
        return feof(s->f) ? ENODATA : (errno ? errno : EIO);
    return 0;
}

static int stdio_sync(void *h)
{
    stdio_file *s = h;
    errno = 0;
    if (fflush(s->f) != 0)
        return errno ? errno : EIO;
    return fsync(fileno(s->f)) == 0 ? 0 : errno;
}

static int stdio_close(void *h)
{
    stdio_file *s = h;
    errno = 0;
    int e = fclose(s->f) == 0 ? 0 : (errno ? errno : EIO); /* flushes what is buffered */
    free(s->buffer);
    free(s);
    return e;
}

const backend_ops backend_stdio = {
    .name = "stdio",
    .summary = "fread/fwrite/fseeko on a buffered FILE stream",
    .caps = BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE | BACKEND_CAP_PREALLOC,
    .options = stdio_options,
    .noptions = sizeof stdio_options / sizeof stdio_options[0],
    .config_size = sizeof(stdio_config),
    .config_set = stdio_config_set,
    .describe = stdio_describe,
    .open = stdio_open,
    .write_at = stdio_write_at,
    .read_at = stdio_read_at,
    .sync = stdio_sync,
    .close = stdio_close,
};
