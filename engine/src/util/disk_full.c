#include "disk_full.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/statvfs.h>

int disk_short_write_errno(const char *path, uint64_t rest)
{
    struct statvfs fs;
    if (statvfs(path, &fs) == 0 && (unsigned long long)fs.f_bavail * fs.f_frsize < rest)
        return ENOSPC;
    return EIO;
}

uint64_t disk_free_bytes(const char *path)
{
    struct statvfs fs;
    if (statvfs(path, &fs) != 0)
        return UINT64_MAX;
    return (uint64_t)fs.f_bavail * fs.f_frsize;
}

void disk_full_fix(int err, const char *dir, const char *option, char *out, size_t len)
{
    if (len == 0)
        return;
    out[0] = '\0';
    if ((err == ENOSPC || err == EDQUOT) && dir && option)
        snprintf(out, len, ": free space on %s or lower %s", dir, option);
}
