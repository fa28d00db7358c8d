#include "proc_io.h"

#include <stdio.h>
#include <string.h>

bool proc_io_sample(proc_io *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen("/proc/self/io", "re");
    if (!f)
        return false;
    char key[32];
    unsigned long long v;
    int seen = 0;
    while (fscanf(f, "%31s %llu", key, &v) == 2) {
        if (strcmp(key, "syscw:") == 0)
            out->syscw = v, seen++;
        else if (strcmp(key, "wchar:") == 0)
            out->wchar = v, seen++;
        else if (strcmp(key, "syscr:") == 0)
            out->syscr = v, seen++;
        else if (strcmp(key, "rchar:") == 0)
            out->rchar = v, seen++;
    }
    fclose(f);
    return seen == 4;
}

proc_io proc_io_delta(const proc_io *before, const proc_io *after)
{
    proc_io d = {
        .syscw = after->syscw - before->syscw,
        .wchar = after->wchar - before->wchar,
        .syscr = after->syscr - before->syscr,
        .rchar = after->rchar - before->rchar,
    };
    return d;
}
