/* What a full disk means in pario's one line, for every command that
 * writes (io and the kernels alike).
 *
 * Open MPI's ompio returns success with a short count when the disk fills
 * (and prints its own line, held by library_lines.h): a write that moved
 * less than asked is named from the file system's free space.  A failure
 * whose cause is a full disk or quota ends with the fix: free space on the
 * directory, or lower the option that sets how much is written. */
#ifndef PARIO_DISK_FULL_H
#define PARIO_DISK_FULL_H

#include <stddef.h>
#include <stdint.h>

/* Why a write into the file system holding `path` moved less than asked:
 * ENOSPC when the `rest` no longer fits there, else EIO. */
int disk_short_write_errno(const char *path, uint64_t rest);

/* The bytes an unprivileged writer may still put into the file system
 * holding `path`; UINT64_MAX when it cannot be asked. */
uint64_t disk_free_bytes(const char *path);

/* ": free space on DIR or lower OPTION" when err is a full disk (ENOSPC)
 * or quota (EDQUOT), else "" (always terminated). */
void disk_full_fix(int err, const char *dir, const char *option, char *out, size_t len);

#endif
