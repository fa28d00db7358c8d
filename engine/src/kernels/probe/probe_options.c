/* Options of `pario-engine probe`, parsed and checked before any I/O. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/fsinfo.h"
#include "../../util/options.h"
#include "../../util/sizes.h"
#include "probe.h"

enum { O_DIR, O_SIZE, O_BLOCK, O_MEMORY, O_OPS, O_ITER, O_SERVERS, O_NAME, O_JSON };
static const option_spec probe_option_table[] = {
    {"dir", 0, "DIR", "target directory (must exist and be writable)", O_DIR},
    {"size", 0, "SIZE", "bytes of the one-stream write and read (default 256m)", O_SIZE},
    {"block", 0, "SIZE", "bytes per call of the stream, a multiple of 4k (default 1m)", O_BLOCK},
    {"memory", 0, "SIZE", "bytes each rank copies for the memory rate (at least 1m; default 256m)", O_MEMORY},
    {"ops", 0, "N", "metadata files per rank; open/close repetitions (default 200)", O_OPS},
    {"iterations", 0, "N", "repetitions of every measurement (default 3)", O_ITER},
    {"servers", 0, "N",
     "independent storage units behind DIR (disks, OSTs,\nservers) that streams spread over "
     "(default 1)",
     O_SERVERS},
    {"name", 0, "NAME", "base of the probe's file names (default unique)", O_NAME},
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec probe_command_spec =
    COMMAND_SPEC("probe", "usage: mpirun -np P pario-engine probe --dir DIR [options]\n"
    "\n"
    "Measures the component rates of the path from a rank's memory to the\n"
    "storage behind DIR and the peak they predict (the CFS report's Tables 1-3).\n",
    "Predicted peak (per direction) = min(one stream's rate x --servers,\n"
    "all ranks' memory copy rate): the slowest component times its parallelism.", probe_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    probe_options *o = ctx;
    switch (id) {
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir - 64); break; /* room for the names */
    case O_SIZE: o->stream_bytes = option_size(opt, v); break;
    case O_BLOCK: o->block = option_size(opt, v); break;
    case O_MEMORY: o->memory_bytes = option_size(opt, v); break;
    case O_OPS: o->ops = (uint64_t)option_whole(opt, v, 1, 1000000); break;
    case O_ITER: o->iterations = (uint64_t)option_whole(opt, v, 1, PROBE_MAX_ITERATIONS); break;
    case O_SERVERS: o->servers = (uint64_t)option_whole(opt, v, 1, 1000000); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_JSON: option_path(opt, option_output(opt, v), o->json, sizeof o->json); break;
    }
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
    options_parse(&probe_command_spec, argc, argv, rank, set_option, o);
    fail_unless_target_dir(o->dir, "name the directory to probe, e.g. --dir /var/tmp");
    /* O_DIRECT may be needed to keep the cache out of the read. */
    if (o->block % 4096 != 0)
        fail_usage("--block must be a multiple of 4k (the read may use O_DIRECT): use 64k, 1m ...");
    if (o->block > (1ULL << 30))
        fail_usage("--block is larger than 1 GiB: use at most 1g per call");
    if (o->stream_bytes % o->block != 0 || o->stream_bytes < o->block)
        fail_usage("--size must be a whole number of --block calls: e.g. --size 256m --block 1m");
    /* A copy this short is timed mostly in the call and the clock: 1 byte
     * measured 47.7 MiB/s here, and that became the predicted peak. */
    if (o->memory_bytes < (1ULL << 20))
        fail_usage("--memory is below 1 MiB, too small to time a memory copy: use at least 1m "
                   "(the default 256m is above the CPU caches)");
    if (o->memory_bytes > (16ULL << 30))
        fail_usage("--memory is larger than 16 GiB: each rank holds twice this; use less");
    fs_facts fs;
    if (!check_mode() && fs_facts_of(o->dir, &fs) == 0 && o->stream_bytes > fs.free_bytes) {
        char n[32], f[32];
        size_format(o->stream_bytes, n, sizeof n);
        size_approx(fs.free_bytes, f, sizeof f);
        fail_usage("--dir %s has %s free but the stream needs %s: free space or lower --size",
                   o->dir, f, n);
    }
}
