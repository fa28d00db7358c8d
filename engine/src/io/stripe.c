#include "stripe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/check_mode.h"
#include "../util/fail.h"

void stripe_parse_dirs(stripe_spec *s, const char *opt, const char *list, bool need_write)
{
    char *copy = strdup(list), *save = NULL;
    dev_t devs[STRIPE_MAX_TARGETS];
    ino_t inos[STRIPE_MAX_TARGETS];
    if (!copy)
        fail_usage("out of memory");
    s->ntargets = 0;
    for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        struct stat st;
        if (s->ntargets == STRIPE_MAX_TARGETS)
            fail_usage("%s names more than %d directories: use fewer", opt, STRIPE_MAX_TARGETS);
        if (strlen(d) >= PATH_MAX - 256)
            fail_usage("%s: directory '%s' is too long: use a shorter path", opt, d);
        if (check_mode()) { /* the directories are made when the run starts: names only */
            for (int i = 0; i < s->ntargets; i++)
                if (strcmp(s->dirs[i], d) == 0)
                    fail_usage("%s names %s twice: each target must be its own directory", opt, d);
            if (!(s->dirs[s->ntargets++] = strdup(d)))
                fail_usage("out of memory");
            continue;
        }
        if (stat(d, &st) != 0)
            fail_usage("%s: %s: %s: create it first or leave it out", opt, d, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            fail_usage("%s: %s is not a directory: give directories", opt, d);
        if (need_write && access(d, W_OK | X_OK) != 0)
            fail_usage("%s: %s is not writable by this user: choose a writable directory", opt, d);
        for (int i = 0; i < s->ntargets; i++)
            if (devs[i] == st.st_dev && inos[i] == st.st_ino)
                fail_usage("%s names %s twice (as %s and %s): each target must be its own "
                           "directory",
                           opt, d, s->dirs[i], d);
        devs[s->ntargets] = st.st_dev;
        inos[s->ntargets] = st.st_ino;
        if (!(s->dirs[s->ntargets++] = strdup(d)))
            fail_usage("out of memory");
    }
    free(copy);
    if (s->ntargets == 0)
        fail_usage("%s is empty: give directories such as /mnt/a,/mnt/b", opt);
}

void stripe_locate(const stripe_spec *s, uint64_t off, int *target, uint64_t *local,
                   uint64_t *left_in_unit)
{
    uint64_t stripe = off / s->unit, within = off % s->unit, n = (uint64_t)s->ntargets;
    *target = (int)(stripe % n);
    *local = stripe / n * s->unit + within;
    *left_in_unit = s->unit - within;
}

uint64_t stripe_part_bytes(const stripe_spec *s, uint64_t bytes, int t)
{
    uint64_t n = (uint64_t)s->ntargets, full = bytes / s->unit, tail = bytes % s->unit;
    uint64_t mine = full / n + ((uint64_t)t < full % n ? 1 : 0); /* whole units on t */
    uint64_t v = mine * s->unit;
    if (tail && full % n == (uint64_t)t)
        v += tail; /* the last, partial unit */
    return v;
}

int stripe_targets_reached(const stripe_spec *s, uint64_t bytes)
{
    uint64_t units = bytes / s->unit + (bytes % s->unit ? 1 : 0);
    return units < (uint64_t)s->ntargets ? (int)units : s->ntargets;
}

void stripe_part_path(const stripe_spec *s, int t, const char *path, char out[PATH_MAX])
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, PATH_MAX, "%s/%s", s->dirs[t], base);
}

int stripe_parts(const stripe_spec *s, const char *path, char out[][PATH_MAX])
{
    if (!s || s->ntargets == 0) {
        snprintf(out[0], PATH_MAX, "%s", path);
        return 1;
    }
    for (int t = 0; t < s->ntargets; t++)
        stripe_part_path(s, t, path, out[t]);
    return s->ntargets;
}

/* ---- the wrapping backend ---- */

typedef struct striped_file {
    const stripe_wrap *w;
    int n;
    void *parts[STRIPE_MAX_TARGETS];
} striped_file;

static int striped_close(void *h);

static int striped_open(const backend_open_args *a, void **handle)
{
    const stripe_wrap *w = a->config;
    striped_file *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->w = w;
    int e = 0;
    for (int t = 0; t < w->spec->ntargets && !e; t++) {
        char path[PATH_MAX];
        stripe_part_path(w->spec, t, a->path, path);
        backend_open_args pa = *a;
        pa.path = path;
        pa.file_bytes = stripe_part_bytes(w->spec, a->file_bytes, t);
        pa.layout = NULL; /* the layout's offsets are logical, not the part's */
        pa.geom = NULL;
        pa.count = 0;
        pa.config = w->inner_config;
        pa.created = a->created ? &a->created[t] : NULL; /* one identity per part */
        pa.expect = a->expect ? &a->expect[t] : NULL;
        e = w->inner->open(&pa, &f->parts[t]);
        if (!e)
            f->n = t + 1;
    }
    if (e) {
        striped_close(f);
        return e;
    }
    *handle = f;
    return 0;
}

/* The inner API's checks, part by part (backend.h, Opening). */
static int striped_open_check(const backend_open_args *a)
{
    const stripe_wrap *w = a->config;
    for (int t = 0; t < w->spec->ntargets && w->inner->open_check; t++) {
        char path[PATH_MAX];
        stripe_part_path(w->spec, t, a->path, path);
        backend_open_args pa = *a;
        pa.path = path;
        pa.config = w->inner_config;
        pa.created = NULL;
        pa.expect = a->expect ? &a->expect[t] : NULL;
        int e = w->inner->open_check(&pa);
        if (e)
            return e;
    }
    return 0;
}

/* Cut [offset, offset+len) at stripe boundaries; each piece to its part. */
static int striped_io(striped_file *f, bool writing, unsigned char *buf, size_t len,
                      uint64_t offset)
{
    while (len > 0) {
        int t;
        uint64_t local, left;
        stripe_locate(f->w->spec, offset, &t, &local, &left);
        size_t piece = left < len ? (size_t)left : len;
        int e = writing ? f->w->inner->write_at(f->parts[t], buf, piece, local)
                        : f->w->inner->read_at(f->parts[t], buf, piece, local);
        if (e)
            return e;
        buf += piece;
        offset += piece;
        len -= piece;
    }
    return 0;
}

static int striped_write_at(void *h, const void *buf, size_t len, uint64_t offset)
{
    return striped_io(h, true, (unsigned char *)buf, len, offset);
}

static int striped_read_at(void *h, void *buf, size_t len, uint64_t offset)
{
    return striped_io(h, false, buf, len, offset);
}

static int striped_sync(void *h)
{
    striped_file *f = h;
    int first = 0;
    for (int t = 0; t < f->n; t++) {
        int e = f->w->inner->sync(f->parts[t]);
        if (e && !first)
            first = e;
    }
    return first;
}

static int striped_close(void *h)
{
    striped_file *f = h;
    int first = 0;
    for (int t = 0; t < f->n; t++) {
        int e = f->w->inner->close(f->parts[t]);
        if (e && !first)
            first = e;
    }
    free(f);
    return first;
}

const backend_ops stripe_backend = {
    .name = "striped",
    .summary = "one logical file over one part per --stripe-dirs directory",
    .caps = BACKEND_CAP_PER_CALL,
    .open = striped_open,
    .open_check = striped_open_check,
    .write_at = striped_write_at,
    .read_at = striped_read_at,
    .sync = striped_sync,
    .close = striped_close,
};
