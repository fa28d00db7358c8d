/* What this process asked of the kernel, from /proc/self/io: write and read
 * system calls and the bytes they carried.  Sampled around a phase, the
 * difference says which ranks really touched the file, e.g. that with one
 * collective-buffering aggregator only that rank writes.  A real
 * observation made by the engine itself: no strace, no LD_PRELOAD. */
#ifndef PARIO_PROC_IO_H
#define PARIO_PROC_IO_H

#include <stdbool.h>
#include <stdint.h>

typedef struct proc_io {
    uint64_t syscw;  /* write-family system calls */
    uint64_t wchar;  /* bytes they carried (any fd: files, pipes, sockets) */
    uint64_t syscr;  /* read-family system calls */
    uint64_t rchar;  /* bytes they returned */
} proc_io;

/* false when /proc/self/io cannot be read (then *out is zeroed). */
bool proc_io_sample(proc_io *out);

/* after - before, field by field. */
proc_io proc_io_delta(const proc_io *before, const proc_io *after);

#endif
