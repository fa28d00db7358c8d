/* How bytes move: one table of operations per API (fio's ioengines, IOR's
 * aiori).  The timed loop, layouts, grouping and verification only ever
 * call through this table, so a new API is one file plus one line in
 * backend_registry.c. */
#ifndef PARIO_BACKEND_H
#define PARIO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum backend_mode { BACKEND_READ, BACKEND_WRITE };

/* What the caller asks of an open. */
typedef struct backend_open_args {
    const char *path;
    enum backend_mode mode;
    bool direct; /* O_DIRECT or the API's equivalent */
} backend_open_args;

enum backend_caps {
    BACKEND_CAP_DIRECT = 1u << 0, /* honours direct (cache-bypassing) I/O */
};

typedef struct backend_ops {
    const char *name;
    const char *summary;
    unsigned caps;
    /* Each returns 0 or an errno value; never prints. */
    int (*open)(const backend_open_args *args, void **handle);
    int (*write_at)(void *handle, const void *buf, size_t len, uint64_t offset);
    int (*read_at)(void *handle, void *buf, size_t len, uint64_t offset);
    int (*sync)(void *handle);
    int (*close)(void *handle);
} backend_ops;

/* NULL when unknown. */
const backend_ops *backend_find(const char *name);

/* "posix" (comma-separated list of known names), for error messages. */
const char *backend_names(void);

#endif
