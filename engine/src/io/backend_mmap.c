/* mmap: map the file (or only the range this rank touches) and copy
 * blocks in and out with memcpy.  A write phase reserves the mapped range
 * (posix_fallocate) and extends the file to its final size before mapping
 * (pages beyond the end of a file cannot be mapped; pages without blocks
 * behind them end in SIGBUS), and its sync is msync(MS_SYNC) followed by
 * fsync.  Page faults
 * are the cost this API adds; --mmap-populate moves them into the open
 * (MAP_POPULATE), --mmap-huge-pages asks for huge pages (MADV_HUGEPAGE,
 * honoured on tmpfs mounted with huge=) and --mmap-advice passes a hint. */
#include "backend.h"
#include "backend_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fail.h"
#include "../util/json.h"
#include "io_options.h"

typedef struct mmap_config {
    bool populate;
    bool huge_pages;
    bool region; /* map only the pages the rank's blocks fall in */
    int advice;  /* madvise, or -1 */
    const char *advice_name;
} mmap_config;

enum { OPT_POPULATE, OPT_HUGE, OPT_MAP, OPT_ADVICE };

static const backend_option mmap_options[] = {
    {"mmap-populate", NULL, "fault every page in at open (MAP_POPULATE)", OPT_POPULATE},
    {"mmap-huge-pages", NULL, "ask for huge pages (MADV_HUGEPAGE)", OPT_HUGE},
    {"mmap-map", "WHAT", "file (default: the whole file) | region (only the\nrange of the "
                         "rank's blocks)",
     OPT_MAP},
    {"mmap-advice", "A", "normal | sequential | random | willneed (madvise)", OPT_ADVICE},
};

static void mmap_config_init(void *cfg)
{
    mmap_config *c = cfg;
    c->advice = -1;
}

static void mmap_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    mmap_config *c = cfg;
    switch (id) {
    case OPT_POPULATE: c->populate = true; break;
    case OPT_HUGE: c->huge_pages = true; break;
    case OPT_MAP:
        if (strcmp(arg, "file") == 0)
            c->region = false;
        else if (strcmp(arg, "region") == 0)
            c->region = true;
        else
            fail_usage("--mmap-map '%s' is unknown: use file or region", arg);
        break;
    case OPT_ADVICE: {
        static const struct { const char *name; int advice; } advices[] = {
            {"normal", MADV_NORMAL},
            {"sequential", MADV_SEQUENTIAL},
            {"random", MADV_RANDOM},
            {"willneed", MADV_WILLNEED},
        };
        for (size_t i = 0; i < sizeof advices / sizeof advices[0]; i++)
            if (strcmp(arg, advices[i].name) == 0) {
                c->advice = advices[i].advice;
                c->advice_name = advices[i].name;
                return;
            }
        fail_usage("--mmap-advice '%s' is unknown: use normal, sequential, random or willneed",
                   arg);
    }
    }
}

static void mmap_describe(const void *cfg, struct json *j)
{
    const mmap_config *c = cfg;
    json_string(j, "map", c->region ? "region" : "file");
    json_bool(j, "populate", c->populate);
    json_bool(j, "huge_pages", c->huge_pages);
    json_string(j, "advice", c->advice_name);
}

typedef struct mmap_file {
    int fd;
    unsigned char *map;
    size_t mapped;       /* bytes mapped */
    uint64_t map_offset; /* file offset of map[0] */
    uint64_t readable;   /* file offset where the data end (reads) */
    bool writing;
} mmap_file;

/* The page-aligned range covering every block the rank moves. */
static void rank_region(const backend_open_args *a, uint64_t *lo, uint64_t *hi)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (uint64_t k = 0; k < a->count; k++) {
        uint64_t off = a->layout->block_offset(a->geom, k);
        if (off < first)
            first = off;
        if (off + a->block > last)
            last = off + a->block;
    }
    if (a->count == 0)
        first = last = 0;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    *lo = first / page * page;
    *hi = last;
}

static int mmap_open(const backend_open_args *a, void **handle)
{
    const mmap_config *cfg = a->config;
    mmap_file *m = calloc(1, sizeof *m);
    if (!m)
        return ENOMEM;
    m->writing = a->mode == BACKEND_WRITE;
    /* a shared writable mapping needs the file open for reading too */
    int fd = backend_open_fd(a, m->writing);
    if (fd < 0) {
        free(m);
        return -fd;
    }
    m->fd = fd;
    int e = 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        e = errno;
    uint64_t lo = 0, hi = a->file_bytes;
    if (!e && cfg->region && a->layout) /* no layout (a stripe part): the whole part */
        rank_region(a, &lo, &hi);
    /* A store into a mapped page the file system cannot back (a full
     * disk, a sparse page) kills the process with SIGBUS; reserving the
     * mapped range first turns that into ENOSPC at open, reported in one
     * line.  Sharers reserve overlapping ranges: harmless to repeat. */
    if (!e && m->writing && hi > lo) {
        int r = posix_fallocate(fd, (off_t)lo, (off_t)(hi - lo));
        if (r)
            e = r;
    }
    if (!e && m->writing && (uint64_t)st.st_size < a->file_bytes &&
        ftruncate(fd, (off_t)a->file_bytes) != 0)
        e = errno; /* the region may end before the file does */
    m->readable = m->writing ? a->file_bytes : (uint64_t)st.st_size;
    if (!e && !m->writing && hi > m->readable)
        hi = m->readable > lo ? m->readable : lo; /* reads past the end fail with ENODATA */
    m->map_offset = lo;
    m->mapped = (size_t)(hi - lo);
    if (!e && m->mapped > 0) {
        int prot = m->writing ? PROT_READ | PROT_WRITE : PROT_READ;
        int flags = MAP_SHARED | (cfg->populate ? MAP_POPULATE : 0);
        void *p = mmap(NULL, m->mapped, prot, flags, fd, (off_t)lo);
        if (p == MAP_FAILED) {
            e = errno;
        } else {
            m->map = p;
#ifdef MADV_HUGEPAGE
            if (cfg->huge_pages && madvise(p, m->mapped, MADV_HUGEPAGE) != 0)
                e = errno;
#endif
            if (!e && cfg->advice >= 0 && madvise(p, m->mapped, cfg->advice) != 0)
                e = errno;
        }
    }
    if (e) {
        if (m->map)
            munmap(m->map, m->mapped);
        close(fd);
        free(m);
        return e;
    }
    *handle = m;
    return 0;
}

static int mmap_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    mmap_file *m = h;
    if (offset < m->map_offset || offset + len > m->map_offset + m->mapped)
        return EFAULT; /* outside what was mapped: a layout/region mismatch */
    memcpy(m->map + (offset - m->map_offset), buf, len);
    return 0;
}

static int mmap_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    mmap_file *m = h;
    if (offset + len > m->readable)
        return ENODATA;
    if (offset < m->map_offset || offset + len > m->map_offset + m->mapped)
        return EFAULT;
    memcpy(buf, m->map + (offset - m->map_offset), len);
    return 0;
}

static int mmap_sync(void *h)
{
    mmap_file *m = h;
    if (m->map && msync(m->map, m->mapped, MS_SYNC) != 0)
        return errno;
    return fsync(m->fd) == 0 ? 0 : errno;
}

static int mmap_close(void *h)
{
    mmap_file *m = h;
    int e = 0;
    if (m->map && munmap(m->map, m->mapped) != 0)
        e = errno;
    if (close(m->fd) != 0 && !e)
        e = errno;
    free(m);
    return e;
}

const backend_ops backend_mmap = {
    .name = "mmap",
    .summary = "memcpy to and from a shared mapping of the file",
    .caps = BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE | BACKEND_CAP_PREALLOC,
    .options = mmap_options,
    .noptions = sizeof mmap_options / sizeof mmap_options[0],
    .config_size = sizeof(mmap_config),
    .config_init = mmap_config_init,
    .config_set = mmap_config_set,
    .describe = mmap_describe,
    .open = mmap_open,
    .write_at = mmap_write_at,
    .read_at = mmap_read_at,
    .sync = mmap_sync,
    .close = mmap_close,
};
