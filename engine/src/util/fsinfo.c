#include "fsinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

static const struct {
    uint64_t magic;
    const char *name;
    bool memory_backed;
} known_fs[] = {
    {0x01021994, "tmpfs", true},      {0x858458f6, "ramfs", true},
    {0xEF53, "ext4", false},          {0x58465342, "xfs", false},
    {0x9123683E, "btrfs", false},     {0x6969, "nfs", false},
    {0x0BD00BD0, "lustre", false},    {0x47504653, "gpfs", false},
    {0x19830326, "beegfs", false},    {0x65735546, "fuse", false},
    {0x2fc12fc1, "zfs", false},       {0x794c7630, "overlayfs", false},
    {0xFE534D42, "smb2", false},      {0xFF534D42, "cifs", false},
    {0x00c36400, "ceph", false},      {0x6a656a63, "fakeowner", false},
    {0x5346544e, "ntfs", false},      {0x4d44, "vfat", false},
    {0x73717368, "squashfs", false},
};

int fs_facts_of(const char *path, fs_facts *out)
{
    struct statfs st;
    memset(out, 0, sizeof *out);
    if (statfs(path, &st) != 0)
        return errno;
    out->magic = (uint64_t)(unsigned long)st.f_type & 0xffffffffULL;
    out->free_bytes = (uint64_t)st.f_bavail * (uint64_t)st.f_bsize;
    snprintf(out->type, sizeof out->type, "0x%llx", (unsigned long long)out->magic);
    for (size_t i = 0; i < sizeof known_fs / sizeof known_fs[0]; i++) {
        if (known_fs[i].magic == out->magic) {
            snprintf(out->type, sizeof out->type, "%s", known_fs[i].name);
            out->memory_backed = known_fs[i].memory_backed;
            break;
        }
    }
    return 0;
}

uint64_t node_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return 0;
    return (uint64_t)pages * (uint64_t)size;
}

double page_cache_fraction(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* never through a planted symlink */
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        return st.st_size == 0 ? 0.0 : -1;
    }
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const uint64_t window = 1ULL << 30; /* map at most 1 GiB at a time */
    uint64_t resident = 0, total = 0;
    static unsigned char vec[(1u << 30) / 4096]; /* one byte per page of the window */
    for (uint64_t off = 0; off < (uint64_t)st.st_size; off += window) {
        size_t len = (size_t)((uint64_t)st.st_size - off < window ? (uint64_t)st.st_size - off : window);
        void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
        if (m == MAP_FAILED) {
            close(fd);
            return -1;
        }
        size_t pages = (len + page - 1) / page;
        if (pages > sizeof vec || mincore(m, len, vec) != 0) {
            munmap(m, len);
            close(fd);
            return -1;
        }
        for (size_t i = 0; i < pages; i++)
            resident += vec[i] & 1;
        total += pages;
        munmap(m, len);
    }
    close(fd);
    return total ? (double)resident / (double)total : 0.0;
}

int page_cache_evict(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* never through a planted symlink */
    if (fd < 0)
        return errno;
    int e = 0;
    if (fdatasync(fd) != 0 && errno != EINVAL)
        e = errno;
    if (!e)
        e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return e;
}

int64_t read_ahead_bytes_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    /* a partition's directory has no queue of its own: its disk's is one up */
    static const char *const where[] = {"/sys/dev/block/%u:%u/queue/read_ahead_kb",
                                        "/sys/dev/block/%u:%u/../queue/read_ahead_kb"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char p[128];
        snprintf(p, sizeof p, where[i], major(st.st_dev), minor(st.st_dev));
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        long long kb = -1;
        const int got = fscanf(f, "%lld", &kb);
        fclose(f);
        if (got == 1 && kb >= 0)
            return (int64_t)kb * 1024;
    }
    return -1;
}

int device_reads_of(const char *path, uint64_t *requests, uint64_t *bytes)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    char p[96];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u/stat", major(st.st_dev), minor(st.st_dev));
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    unsigned long long done, merged, sectors;
    const int got = fscanf(f, "%llu %llu %llu", &done, &merged, &sectors);
    fclose(f);
    if (got != 3)
        return -1;
    *requests = done;
    *bytes = sectors * 512;
    return 0;
}

/* The mount's options, then those of the super block it does not already
 * name ("rw" is usually in both): each option once. */
static void join_options(char *out, size_t len, const char *mount, char *super)
{
    snprintf(out, len, "%s", mount);
    for (char *save = NULL, *opt = strtok_r(super, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        bool seen = false;
        for (const char *p = mount; *p && !seen; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            size_t n = strcspn(p, ",");
            seen = n == strlen(opt) && strncmp(p, opt, n) == 0;
        }
        size_t used = strlen(out);
        if (!seen && used + 1 + strlen(opt) < len)
            snprintf(out + used, len - used, "%s%s", used ? "," : "", opt);
    }
}

int fs_mount_of(const char *path, fs_mount *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    snprintf(out->device, sizeof out->device, "%u:%u", major(st.st_dev), minor(st.st_dev));
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return errno;
    /* id parent major:minor root point options [optional...] - type source super-options */
    char line[4096];
    int found = ENOENT;
    while (fgets(line, sizeof line, f)) {
        char dev[32], point[1024], opts[1024];
        if (sscanf(line, "%*s %*s %31s %*s %1023s %1023s", dev, point, opts) != 3)
            continue;
        if (strcmp(dev, out->device) != 0)
            continue;
        const char *dash = strstr(line, " - ");
        char type[128] = "", source[512] = "", super[1024] = "";
        if (dash)
            sscanf(dash + 3, "%127s %511s %1023s", type, source, super);
        /* Several mounts of one device (bind mounts): keep the longest mount
         * point that is a prefix of the path, else the first seen. */
        size_t n = strlen(point);
        bool prefix = strncmp(path, point, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
        if (found == 0 && !(prefix && n > strlen(out->point)))
            continue;
        snprintf(out->point, sizeof out->point, "%s", point);
        snprintf(out->source, sizeof out->source, "%s", source);
        snprintf(out->type, sizeof out->type, "%s", type);
        join_options(out->options, sizeof out->options, opts, super);
        found = 0;
    }
    fclose(f);
    return found;
}
