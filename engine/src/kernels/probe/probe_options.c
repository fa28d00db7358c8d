/* Options of `pario-engine probe`, parsed and checked before any I/O. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/fail.h"
#include "../../util/fsinfo.h"
#include "../../util/sizes.h"
#include "probe.h"

static void usage(void)
{
    printf("usage: mpirun -np P pario-engine probe --dir DIR [options]\n"
           "\n"
           "Measures the component rates of the path from a rank's memory to the\n"
           "storage behind DIR and the peak they predict (the CFS report's Tables 1-3).\n"
           "\n"
           "  --dir DIR          target directory (must exist and be writable)\n"
           "  --size SIZE        bytes of the one-stream write and read (default 256m)\n"
           "  --block SIZE       bytes per call of the stream, a multiple of 4k (default 1m)\n"
           "  --memory SIZE      bytes each rank copies for the memory rate (default 256m)\n"
           "  --ops N            metadata files per rank; open/close repetitions (default 200)\n"
           "  --iterations N     repetitions of every measurement (default 3)\n"
           "  --servers N        independent storage units behind DIR (disks, OSTs,\n"
           "                     servers) that streams spread over (default 1)\n"
           "  --name NAME        base of the probe's file names (default unique)\n"
           "  --json FILE        write the result document (pario.result/1)\n"
           "\n"
           "Predicted peak (per direction) = min(one stream's rate x --servers,\n"
           "all ranks' memory copy rate): the slowest component times its parallelism.\n");
}

enum { O_DIR = 1000, O_SIZE, O_BLOCK, O_MEMORY, O_OPS, O_ITER, O_SERVERS, O_NAME, O_JSON, O_HELP };

static const struct option long_options[] = {
    {"dir", required_argument, 0, O_DIR},         {"size", required_argument, 0, O_SIZE},
    {"block", required_argument, 0, O_BLOCK},     {"memory", required_argument, 0, O_MEMORY},
    {"ops", required_argument, 0, O_OPS},         {"iterations", required_argument, 0, O_ITER},
    {"servers", required_argument, 0, O_SERVERS}, {"name", required_argument, 0, O_NAME},
    {"json", required_argument, 0, O_JSON},       {"help", no_argument, 0, O_HELP},
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

static uint64_t need_count(const char *opt, const char *text, uint64_t most)
{
    uint64_t v;
    const char *why;
    if (count_parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give a whole number of at least 1", opt, text, why);
    if (v > most)
        fail_usage("%s %s is more than %llu: use fewer", opt, text, (unsigned long long)most);
    return v;
}

void probe_options_parse(int argc, char **argv, int rank, probe_options *o)
{
    memset(o, 0, sizeof *o);
    o->stream_bytes = 256ULL << 20;
    o->block = 1ULL << 20;
    o->memory_bytes = 256ULL << 20; /* 4 x src+dst above the 32-64 MiB L3 of a current server */
    o->ops = 200;
    o->iterations = 3;
    o->servers = 1;

    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, ":", long_options, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("--%s needs a value: see pario-engine probe --help",
                       long_options[which].name);
        switch (c) {
        case O_DIR:
            if (strlen(optarg) >= sizeof o->dir - 64)
                fail_usage("--dir is too long: use a shorter path");
            snprintf(o->dir, sizeof o->dir, "%s", optarg);
            break;
        case O_SIZE: o->stream_bytes = need_size("--size", optarg); break;
        case O_BLOCK: o->block = need_size("--block", optarg); break;
        case O_MEMORY: o->memory_bytes = need_size("--memory", optarg); break;
        case O_OPS: o->ops = need_count("--ops", optarg, 1000000); break;
        case O_ITER: o->iterations = need_count("--iterations", optarg, PROBE_MAX_ITERATIONS); break;
        case O_SERVERS: o->servers = need_count("--servers", optarg, 1000000); break;
        case O_NAME:
            if (!optarg[0] || strchr(optarg, '/') || strlen(optarg) > 200 ||
                strcmp(optarg, ".") == 0 || strcmp(optarg, "..") == 0)
                fail_usage("--name '%s' must be a plain file name (no '/'), at most 200 characters",
                           optarg);
            snprintf(o->name, sizeof o->name, "%s", optarg);
            break;
        case O_JSON:
            if (!optarg[0] || strlen(optarg) >= sizeof o->json)
                fail_usage("--json needs a file name");
            snprintf(o->json, sizeof o->json, "%s", optarg);
            break;
        case O_HELP:
            if (rank == 0)
                usage();
            fail_exit(0, 0, "%s", "");
        case ':': fail_usage("%s needs a value: see pario-engine probe --help", argv[optind - 1]);
        default: fail_usage("unknown option '%s': see pario-engine probe --help", argv[optind - 1]);
        }
    }
    if (optind < argc)
        fail_usage("unexpected argument '%s': options start with --, see pario-engine probe --help",
                   argv[optind]);

    struct stat st;
    if (!o->dir[0])
        fail_usage("--dir is required: name the directory to probe, e.g. --dir /var/tmp");
    if (stat(o->dir, &st) != 0)
        fail_usage("--dir %s: %s: create it first or choose an existing directory", o->dir,
                   strerror(errno));
    if (!S_ISDIR(st.st_mode))
        fail_usage("--dir %s is not a directory: give a directory", o->dir);
    if (access(o->dir, W_OK | X_OK) != 0)
        fail_usage("--dir %s is not writable by this user: choose a writable directory", o->dir);
    if (o->json[0]) {
        char copy[PATH_MAX];
        snprintf(copy, sizeof copy, "%s", o->json);
        const char *parent = dirname(copy);
        if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
            fail_usage("--json %s: directory %s does not exist: create it or choose another path",
                       o->json, parent);
        if (access(parent, W_OK | X_OK) != 0)
            fail_usage("--json %s: directory %s is not writable: choose another path", o->json,
                       parent);
        if (stat(o->json, &st) == 0 && S_ISDIR(st.st_mode))
            fail_usage("--json %s is a directory: give a file name", o->json);
    }
    /* O_DIRECT may be needed to keep the cache out of the read. */
    if (o->block % 4096 != 0)
        fail_usage("--block must be a multiple of 4k (the read may use O_DIRECT): use 64k, 1m ...");
    if (o->block > (1ULL << 30))
        fail_usage("--block is larger than 1 GiB: use at most 1g per call");
    if (o->stream_bytes % o->block != 0 || o->stream_bytes < o->block)
        fail_usage("--size must be a whole number of --block calls: e.g. --size 256m --block 1m");
    if (o->memory_bytes > (16ULL << 30))
        fail_usage("--memory is larger than 16 GiB: each rank holds twice this; use less");
    fs_facts fs;
    if (fs_facts_of(o->dir, &fs) == 0 && o->stream_bytes > fs.free_bytes) {
        char n[32], f[32];
        size_format(o->stream_bytes, n, sizeof n);
        size_approx(fs.free_bytes, f, sizeof f);
        fail_usage("--dir %s has %s free but the stream needs %s: free space or lower --size",
                   o->dir, f, n);
    }
}
