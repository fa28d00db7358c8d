#include "io_options.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fail.h"
#include "../util/fsinfo.h"
#include "../util/sizes.h"

const char *phase_name(enum phase_kind k) { return k == PHASE_WRITE ? "write" : "read"; }

bool io_has_phase(const io_options *o, enum phase_kind k)
{
    for (int i = 0; i < o->nphases; i++)
        if (o->phases[i] == k)
            return true;
    return false;
}

void io_usage(void)
{
    printf(
        "usage: mpirun -np P pario-engine io --dir DIR [options]\n"
        "\n"
        "Times one access pattern, CFS style: barrier, start, open, I/O, close,\n"
        "barrier, stop; the phase time is the maximum over ranks.\n"
        "\n"
        "  --dir DIR            target directory (must exist and be writable)\n"
        "  --name NAME          file name (default: a unique pario-io.* name)\n"
        "  --layout L           broadcast | partitioned | interleaved | random\n"
        "  --files F            shared (one file) | per-rank (one file per rank)\n"
        "  --api A              posix (pread/pwrite)\n"
        "  --block SIZE         bytes per call (4k 64k 1m ...; powers of 1024)\n"
        "  --size SIZE          broadcast: the file every rank reads;\n"
        "                       otherwise the aggregate over all ranks\n"
        "  --phases LIST        write,read (default) or write or read\n"
        "  --iterations N       repetitions of every phase (default 3)\n"
        "  --group G            at most G ranks do I/O at once (token passing)\n"
        "  --group-unit U       call (default: one call per group at a time, as\n"
        "                       in the CFS report) | rank (a rank's whole share)\n"
        "  --prealloc           reserve the file's space before each write phase\n"
        "  --fsync / --no-fsync fsync before close in write phases (default on)\n"
        "  --direct             O_DIRECT (block must be a multiple of 4 KiB)\n"
        "  --evict              drop the file from the page cache before reads\n"
        "  --huge-pages / --no-huge-pages  buffers on transparent huge pages\n"
        "                       (default: on with --direct)\n"
        "  --read-shift K       rank r reads what rank r+K wrote\n"
        "  --verify             check every byte after each phase (untimed)\n"
        "  --keep               keep the files (default: removed at the end)\n"
        "  --trace              record every call's start and end time\n"
        "  --seed S             data seed (default 1)\n"
        "  --json FILE          write the result document (pario.result/1)\n");
}

enum {
    OPT_DIR = 1000, OPT_NAME, OPT_LAYOUT, OPT_FILES, OPT_API, OPT_BLOCK, OPT_SIZE,
    OPT_PHASES, OPT_ITER, OPT_GROUP, OPT_GROUP_UNIT, OPT_PREALLOC, OPT_FSYNC,
    OPT_NO_FSYNC, OPT_DIRECT, OPT_EVICT, OPT_HUGE, OPT_NO_HUGE, OPT_SHIFT, OPT_VERIFY,
    OPT_KEEP, OPT_TRACE, OPT_SEED, OPT_JSON, OPT_HELP
};

static const struct option long_options[] = {
    {"dir", required_argument, 0, OPT_DIR},
    {"name", required_argument, 0, OPT_NAME},
    {"layout", required_argument, 0, OPT_LAYOUT},
    {"files", required_argument, 0, OPT_FILES},
    {"api", required_argument, 0, OPT_API},
    {"block", required_argument, 0, OPT_BLOCK},
    {"size", required_argument, 0, OPT_SIZE},
    {"phases", required_argument, 0, OPT_PHASES},
    {"iterations", required_argument, 0, OPT_ITER},
    {"group", required_argument, 0, OPT_GROUP},
    {"group-unit", required_argument, 0, OPT_GROUP_UNIT},
    {"prealloc", no_argument, 0, OPT_PREALLOC},
    {"fsync", no_argument, 0, OPT_FSYNC},
    {"no-fsync", no_argument, 0, OPT_NO_FSYNC},
    {"direct", no_argument, 0, OPT_DIRECT},
    {"evict", no_argument, 0, OPT_EVICT},
    {"huge-pages", no_argument, 0, OPT_HUGE},
    {"no-huge-pages", no_argument, 0, OPT_NO_HUGE},
    {"read-shift", required_argument, 0, OPT_SHIFT},
    {"verify", no_argument, 0, OPT_VERIFY},
    {"keep", no_argument, 0, OPT_KEEP},
    {"trace", no_argument, 0, OPT_TRACE},
    {"seed", required_argument, 0, OPT_SEED},
    {"json", required_argument, 0, OPT_JSON},
    {"help", no_argument, 0, OPT_HELP},
    {0, 0, 0, 0},
};

static uint64_t need_size(const char *opt, const char *text)
{
    uint64_t v;
    const char *why;
    if (size_parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give a size such as 4k, 1m or 2g", opt, text, why);
    return v;
}

static uint64_t need_count(const char *opt, const char *text)
{
    uint64_t v;
    const char *why;
    if (count_parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give a whole number of at least 1", opt, text, why);
    return v;
}

static void parse_phases(io_options *o, const char *text)
{
    char buf[128];
    if (strlen(text) >= sizeof buf)
        fail_usage("--phases '%s' is too long: use write,read", text);
    snprintf(buf, sizeof buf, "%s", text);
    o->nphases = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        enum phase_kind k;
        if (strcmp(t, "write") == 0)
            k = PHASE_WRITE;
        else if (strcmp(t, "read") == 0)
            k = PHASE_READ;
        else
            fail_usage("--phases has unknown phase '%s': use write, read or write,read", t);
        for (int i = 0; i < o->nphases; i++)
            if (o->phases[i] == k)
                fail_usage("--phases names '%s' twice: use write,read", t);
        if (o->nphases >= IO_MAX_PHASES)
            fail_usage("--phases lists too many phases: use write,read");
        o->phases[o->nphases++] = k;
    }
    if (o->nphases == 0)
        fail_usage("--phases is empty: use write, read or write,read");
}

static void check_dir(const io_options *o)
{
    struct stat st;
    if (!o->dir[0])
        fail_usage("--dir is required: name the directory to test, e.g. --dir /dev/shm/pario");
    if (stat(o->dir, &st) != 0)
        fail_usage("--dir %s: %s: create it first or choose an existing directory", o->dir,
                   strerror(errno));
    if (!S_ISDIR(st.st_mode))
        fail_usage("--dir %s is not a directory: give a directory", o->dir);
    if (access(o->dir, W_OK | X_OK) != 0)
        fail_usage("--dir %s is not writable by this user: choose a writable directory", o->dir);
}

static void check_json_path(const io_options *o)
{
    if (!o->json[0])
        return;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", o->json);
    const char *parent = dirname(copy);
    struct stat st;
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        fail_usage("--json %s: directory %s does not exist: create it or choose another path",
                   o->json, parent);
    if (access(parent, W_OK | X_OK) != 0)
        fail_usage("--json %s: directory %s is not writable: choose another path", o->json,
                   parent);
    if (stat(o->json, &st) == 0 && S_ISDIR(st.st_mode))
        fail_usage("--json %s is a directory: give a file name", o->json);
}

void io_options_parse(int argc, char **argv, int rank, int nranks, io_options *o)
{
    memset(o, 0, sizeof *o);
    o->layout = layout_find("partitioned");
    o->api = backend_find("posix");
    o->block = 1u << 20;
    o->size = 0;
    o->phases[0] = PHASE_WRITE;
    o->phases[1] = PHASE_READ;
    o->nphases = 2;
    o->iterations = 3;
    o->group_unit = GROUP_PER_CALL;
    o->seed = 1;
    int fsync_choice = -1, huge_choice = -1;
    bool size_given = false, shift_given = false, unit_given = false;

    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, ":", long_options, &which)) != -1) {
        /* "--block --json f": the next option is not a value */
        if (optarg && optarg[0] == '-' && optarg[1] == '-' && c >= OPT_DIR)
            fail_usage("--%s needs a value: see pario-engine io --help", long_options[which].name);
        switch (c) {
        case OPT_DIR:
            if (strlen(optarg) >= sizeof o->dir)
                fail_usage("--dir is too long: use a shorter path");
            snprintf(o->dir, sizeof o->dir, "%s", optarg);
            break;
        case OPT_NAME:
            if (!optarg[0] || strchr(optarg, '/') || strlen(optarg) > 200 ||
                strcmp(optarg, ".") == 0 || strcmp(optarg, "..") == 0)
                fail_usage("--name '%s' must be a plain file name (no '/'), at most 200 characters",
                           optarg);
            snprintf(o->name, sizeof o->name, "%s", optarg);
            break;
        case OPT_LAYOUT:
            o->layout = layout_find(optarg);
            if (!o->layout)
                fail_usage("--layout '%s' is unknown: use one of %s", optarg, layout_names());
            break;
        case OPT_FILES:
            if (strcmp(optarg, "shared") == 0)
                o->per_rank_files = false;
            else if (strcmp(optarg, "per-rank") == 0)
                o->per_rank_files = true;
            else
                fail_usage("--files '%s' is unknown: use shared or per-rank", optarg);
            break;
        case OPT_API:
            o->api = backend_find(optarg);
            if (!o->api)
                fail_usage("--api '%s' is unknown: use one of %s", optarg, backend_names());
            break;
        case OPT_BLOCK: o->block = need_size("--block", optarg); break;
        case OPT_SIZE:
            o->size = need_size("--size", optarg);
            size_given = true;
            break;
        case OPT_PHASES: parse_phases(o, optarg); break;
        case OPT_ITER:
            o->iterations = need_count("--iterations", optarg);
            if (o->iterations > 100000)
                fail_usage("--iterations %s is more than 100000: use fewer", optarg);
            break;
        case OPT_GROUP: {
            uint64_t g = need_count("--group", optarg);
            if (g > 1u << 30)
                fail_usage("--group %s is too large: use at most the number of ranks", optarg);
            o->group = (int)g;
            break;
        }
        case OPT_GROUP_UNIT:
            unit_given = true;
            if (strcmp(optarg, "call") == 0)
                o->group_unit = GROUP_PER_CALL;
            else if (strcmp(optarg, "rank") == 0)
                o->group_unit = GROUP_PER_RANK;
            else
                fail_usage("--group-unit '%s' is unknown: use call or rank", optarg);
            break;
        case OPT_PREALLOC: o->prealloc = true; break;
        case OPT_FSYNC: fsync_choice = 1; break;
        case OPT_NO_FSYNC: fsync_choice = 0; break;
        case OPT_DIRECT: o->direct = true; break;
        case OPT_EVICT: o->evict = true; break;
        case OPT_HUGE: huge_choice = 1; break;
        case OPT_NO_HUGE: huge_choice = 0; break;
        case OPT_SHIFT: {
            char *end;
            errno = 0;
            if (optarg[0] == '-' || optarg[0] == '\0')
                fail_usage("--read-shift '%s' must be a whole number of ranks, 0 or more", optarg);
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end)
                fail_usage("--read-shift '%s' must be a whole number of ranks, 0 or more", optarg);
            o->read_shift = v;
            shift_given = true;
            break;
        }
        case OPT_VERIFY: o->verify = true; break;
        case OPT_KEEP: o->keep = true; break;
        case OPT_TRACE: o->trace = true; break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            if (optarg[0] == '-' || optarg[0] == '\0')
                fail_usage("--seed '%s' must be a whole number, 0 or more", optarg);
            unsigned long long v = strtoull(optarg, &end, 0);
            if (errno || *end)
                fail_usage("--seed '%s' must be a whole number, 0 or more", optarg);
            o->seed = v;
            break;
        }
        case OPT_JSON:
            if (strlen(optarg) >= sizeof o->json || !optarg[0])
                fail_usage("--json needs a file name");
            snprintf(o->json, sizeof o->json, "%s", optarg);
            break;
        case OPT_HELP:
            if (rank == 0)
                io_usage();
            fail_exit(0, 0, "%s", "");
        case ':':
            fail_usage("%s needs a value: see pario-engine io --help", argv[optind - 1]);
        default:
            fail_usage("unknown option '%s': see pario-engine io --help", argv[optind - 1]);
        }
    }
    if (optind < argc)
        fail_usage("unexpected argument '%s': options start with --, see pario-engine io --help",
                   argv[optind]);

    check_dir(o);
    check_json_path(o);

    bool writes = io_has_phase(o, PHASE_WRITE), reads = io_has_phase(o, PHASE_READ);
    o->fsync = fsync_choice < 0 ? writes : fsync_choice == 1;
    o->huge_pages = huge_choice < 0 ? o->direct : huge_choice == 1;

    if (!size_given)
        fail_usage("--size is required: give the file size, e.g. --size 128m");
    if (o->block % 8 != 0)
        fail_usage("--block %llu is not a multiple of 8 bytes: use 4k, 64k, 1m ...",
                   (unsigned long long)o->block);
    if (o->block > (1ULL << 31))
        fail_usage("--block is larger than 2 GiB: use at most 2g per call");
    if (o->layout->read_only && writes)
        fail_usage("--layout %s only reads (every rank reads one whole file): use --phases read",
                   o->layout->name);
    if (o->layout->read_only && shift_given)
        fail_usage("--read-shift does not apply to --layout %s: every rank reads the whole file",
                   o->layout->name);
    if (shift_given && !reads)
        fail_usage("--read-shift only changes read phases: add read to --phases");
    if (o->evict && !reads)
        fail_usage("--evict drops the file from the cache before read phases: add read to --phases");
    if (o->fsync && !writes)
        fail_usage("--fsync applies to write phases: add write to --phases or drop --fsync");
    if (o->group_unit != GROUP_PER_CALL && !o->group && unit_given)
        fail_usage("--group-unit needs --group G");
    if (o->direct && !(o->api->caps & BACKEND_CAP_DIRECT))
        fail_usage("--api %s cannot do direct I/O: drop --direct", o->api->name);
    if (o->direct && o->block % 4096 != 0)
        fail_usage("--direct needs --block to be a multiple of 4k (O_DIRECT alignment): "
                   "use 4k, 8k, 64k, 1m ...");

    /* Bytes in one file, and how many ranks share it. */
    layout_geometry g = {0};
    g.block = o->block;
    g.seed = o->seed;
    if (o->layout->read_only) {
        g.file_bytes = o->size;
        g.sharers = 1;
    } else if (o->per_rank_files) {
        if (o->size % (uint64_t)nranks != 0)
            fail_usage("--size %llu bytes cannot be split evenly into %d per-rank files: "
                       "make it a multiple of %d blocks",
                       (unsigned long long)o->size, nranks, nranks);
        g.file_bytes = o->size / (uint64_t)nranks;
        g.sharers = 1;
    } else {
        g.file_bytes = o->size;
        g.sharers = nranks;
    }
    if (o->block > g.file_bytes / (uint64_t)g.sharers) {
        char bl[32], share[32];
        size_format(o->block, bl, sizeof bl);
        size_format(g.file_bytes / (uint64_t)g.sharers, share, sizeof share);
        fail_usage("--block %s is larger than a rank's share (%s with %d rank(s)): "
                   "use a smaller --block or a larger --size",
                   bl, share, nranks);
    }
    char why[256];
    if (o->layout->check(&g, why, sizeof why))
        fail_usage("%s", why);
    if (o->trace && o->layout->block_count(&g) > IO_MAX_TRACE_CALLS)
        fail_usage("--trace records every call and this run has %llu calls per rank: "
                   "use at most %u (a larger --block or smaller --size)",
                   (unsigned long long)o->layout->block_count(&g), IO_MAX_TRACE_CALLS);

    /* Space: a write run needs the whole data set on the target. */
    fs_facts fs;
    if (fs_facts_of(o->dir, &fs) == 0) {
        uint64_t need = o->layout->read_only
                            ? (o->per_rank_files ? o->size * (uint64_t)nranks : o->size)
                            : o->size;
        if (need > fs.free_bytes) {
            char n[32], f[32];
            size_format(need, n, sizeof n);
            size_approx(fs.free_bytes, f, sizeof f);
            fail_usage("--dir %s has %s free but the run needs %s: free space or lower --size",
                       o->dir, f, n);
        }
    }
}
