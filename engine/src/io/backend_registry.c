#include "backend.h"

#include <string.h>

extern const backend_ops backend_posix;

/* The one list of APIs. Add a backend here. */
static const backend_ops *const backends[] = {
    &backend_posix,
};

const backend_ops *backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *backend_names(void)
{
    static char names[256];
    if (!names[0]) {
        for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
            if (i)
                strcat(names, ", ");
            strcat(names, backends[i]->name);
        }
    }
    return names;
}
