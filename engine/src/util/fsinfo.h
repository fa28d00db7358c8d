/* Facts about where the bytes go: file-system type (statfs), node memory,
 * and how much of a file sits in this node's page cache (mincore).  These
 * feed the cache-honesty warnings: a rate read from memory is reported as
 * such. */
#ifndef PARIO_FSINFO_H
#define PARIO_FSINFO_H

#include <stdbool.h>
#include <stdint.h>

typedef struct fs_facts {
    char type[32];        /* "ext4", "tmpfs", "lustre", ... or "0x…" */
    uint64_t magic;
    bool memory_backed;   /* tmpfs/ramfs: O_DIRECT and eviction do nothing */
    uint64_t free_bytes;
} fs_facts;

int fs_facts_of(const char *path, fs_facts *out); /* 0 or errno */

uint64_t node_memory_bytes(void);

/* The mount a path lives on, from /proc/self/mountinfo (matched by the
 * path's device): for provenance, so a result says "ext4 on /dev/vda at /,
 * rw,relatime" and a probe can be matched to runs on the same file system. */
typedef struct fs_mount {
    char point[512];     /* mount point */
    char source[256];    /* device or server:export */
    char type[64];       /* as the kernel names it, e.g. "ext4", "nfs4", "fuse.glusterfs" */
    char options[512];   /* per-mount options, then the super block's */
    char device[32];     /* "major:minor" of the file system */
} fs_mount;

int fs_mount_of(const char *path, fs_mount *out); /* 0, or errno (out holds what is known) */

/* Fraction [0,1] of the file's pages resident in the page cache, or -1 when
 * it cannot be measured. */
double page_cache_fraction(const char *path);

/* Drop one file from this node's page cache: fdatasync, then
 * POSIX_FADV_DONTNEED (no root needed). Returns 0 or errno. */
int page_cache_evict(const char *path);

/* The kernel's largest read-ahead window for files under `path`: the
 * read_ahead_kb of the block device behind its file system
 * (/sys/dev/block/MAJ:MIN/queue, or the whole disk's for a partition), in
 * bytes; -1 when there is none to read (tmpfs, a network file system, no
 * /sys).  Linux sizes a reader's first read-ahead from its call and grows
 * the window up to this. */
int64_t read_ahead_bytes_of(const char *path);

/* The read requests the block device behind `path` has completed, and
 * their bytes, since boot (/sys/dev/block/MAJ:MIN/stat: reads completed,
 * sectors read x 512): around a read, how the kernel's read-ahead cut it
 * into device requests.  0, or -1 when there is no device to ask. */
int device_reads_of(const char *path, uint64_t *requests, uint64_t *bytes);

#endif
