#include "run_files.h"

#include <stdio.h>

void run_file_base(const char *dir, const char *name, const char *prefix, const long stamp[2],
                   const char *suffix, char *out, size_t len)
{
    if (name && name[0])
        snprintf(out, len, "%s/%s%s", dir, name, suffix ? suffix : "");
    else
        snprintf(out, len, "%s/%s.%ld.%ld%s", dir, prefix, stamp[0], stamp[1], suffix ? suffix : "");
}

void run_file_taken(const char *path, char *out, size_t len)
{
    snprintf(out, len,
             "%s already exists: pario never overwrites or removes a file it did not create; "
             "remove it or choose another --name",
             path);
}
