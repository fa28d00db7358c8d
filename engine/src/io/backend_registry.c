#include "backend.h"

#include <string.h>

extern const backend_ops backend_posix;
extern const backend_ops backend_uring;
extern const backend_ops backend_mpiio;
extern const backend_ops backend_hdf5;
extern const backend_ops backend_stdio;
extern const backend_ops backend_mmap;
extern const backend_ops backend_s3;

/* The one list of APIs. Add a backend here. */
static const backend_ops *const backends[] = {
    &backend_posix,
    &backend_stdio,
    &backend_mmap,
    &backend_uring,
    &backend_mpiio,
    &backend_hdf5,
    &backend_s3,
};

#define NBACKENDS (sizeof backends / sizeof backends[0])

const backend_ops *backend_at(size_t i) { return i < NBACKENDS ? backends[i] : NULL; }

unsigned backend_caps(const backend_ops *b, const void *config)
{
    return b->caps_for ? b->caps_for(config) : b->caps;
}

const backend_ops *backend_find(const char *name)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *backend_names(void)
{
    static char names[256];
    if (!names[0]) {
        for (size_t i = 0; i < NBACKENDS; i++) {
            if (i)
                strcat(names, ", ");
            strcat(names, backends[i]->name);
        }
    }
    return names;
}
