#include "io_options.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/check_mode.h"
#include "../util/fail.h"
#include "../util/options.h"
#include "../util/out_path.h"
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

/* State that only lives while parsing: choices whose default depends on
 * other options. */
typedef struct parse_state {
    int fsync_choice, huge_choice;
    bool size_given, shift_given, unit_given, transfer_given, hold_given, dir_given, stripe_unit_given, kind_given, help;
} parse_state;

/* One core option: "--name ARG", its help, and what it sets. */
typedef struct core_option {
    const char *name;
    const char *arg;  /* NULL for a flag */
    const char *help; /* continuation lines after '\n' */
    void (*set)(io_options *o, parse_state *s, const char *arg);
} core_option;

static uint64_t whole_number(const char *opt, const char *text, int base, const char *what)
{
    char *end;
    errno = 0;
    if (text[0] == '-' || text[0] == '\0')
        fail_usage("%s '%s' must be a whole number%s, 0 or more", opt, text, what);
    unsigned long long v = strtoull(text, &end, base);
    if (errno || *end)
        fail_usage("%s '%s' must be a whole number%s, 0 or more", opt, text, what);
    return v;
}

static void parse_phases(io_options *o, const char *text);

static void set_dir(io_options *o, parse_state *s, const char *a)
{
    s->dir_given = true;
    if (strlen(a) >= sizeof o->dir)
        fail_usage("--dir is too long: use a shorter path");
    snprintf(o->dir, sizeof o->dir, "%s", a);
}
static void set_name(io_options *o, parse_state *s, const char *a)
{
    option_file_name("--name", a, o->name, sizeof o->name);
}
static void set_layout(io_options *o, parse_state *s, const char *a)
{
    o->layout = layout_find(a);
    if (!o->layout)
        fail_usage("--layout '%s' is unknown: use one of %s", a, layout_names());
}
static void set_files(io_options *o, parse_state *s, const char *a)
{
    if (strcmp(a, "shared") == 0)
        o->per_rank_files = false;
    else if (strcmp(a, "per-rank") == 0)
        o->per_rank_files = true;
    else
        fail_usage("--files '%s' is unknown: use shared or per-rank", a);
}
static void set_api(io_options *o, parse_state *s, const char *a)
{
    o->api = backend_find(a);
    if (!o->api)
        fail_usage("--api '%s' is unknown: use one of %s", a, backend_names());
}
static void set_block(io_options *o, parse_state *s, const char *a)
{
    o->block = option_size("--block", a);
}
static void set_size(io_options *o, parse_state *s, const char *a)
{
    o->size = option_size("--size", a);
    s->size_given = true;
}
static void set_phases(io_options *o, parse_state *s, const char *a) { parse_phases(o, a); }
static void set_iterations(io_options *o, parse_state *s, const char *a)
{
    o->iterations = option_count("--iterations", a);
    if (o->iterations > 100000)
        fail_usage("--iterations %s is more than 100000: use fewer", a);
}
static void set_group(io_options *o, parse_state *s, const char *a)
{
    uint64_t g = option_count("--group", a);
    if (g > 1u << 30)
        fail_usage("--group %s is too large: use at most the number of ranks", a);
    o->group = (int)g;
}
static void set_group_unit(io_options *o, parse_state *s, const char *a)
{
    s->unit_given = true;
    if (strcmp(a, "call") == 0)
        o->group_unit = GROUP_PER_CALL;
    else if (strcmp(a, "rank") == 0)
        o->group_unit = GROUP_PER_RANK;
    else
        fail_usage("--group-unit '%s' is unknown: use call or rank", a);
}
static void set_stripe_dirs(io_options *o, parse_state *s, const char *a)
{
    stripe_parse_dirs(&o->stripe, "--stripe-dirs", a, true);
}
static void set_stripe_unit(io_options *o, parse_state *s, const char *a)
{
    o->stripe.unit = option_size("--stripe-unit", a);
    s->stripe_unit_given = true;
}
static void set_background(io_options *o, parse_state *s, const char *a)
{
    uint64_t n = option_count("--background", a);
    if (n > BACKGROUND_MAX)
        fail_usage("--background %s is more than %d loaders: use fewer", a, BACKGROUND_MAX);
    o->background = (int)n;
}
static void set_background_kind(io_options *o, parse_state *s, const char *a)
{
    s->kind_given = true;
    if (strcmp(a, "write") == 0)
        o->background_kind = BACKGROUND_WRITE;
    else if (strcmp(a, "cpu") == 0)
        o->background_kind = BACKGROUND_CPU;
    else
        fail_usage("--background-kind '%s' is unknown: use write or cpu", a);
}
static void set_transfer_buffer(io_options *o, parse_state *s, const char *a)
{
    o->transfer_buffer = option_size("--transfer-buffer", a);
    s->transfer_given = true;
}
static void set_transfer_hold(io_options *o, parse_state *s, const char *a)
{
    o->transfer_hold = option_size("--transfer-hold", a);
    s->hold_given = true;
}
static void set_prealloc(io_options *o, parse_state *s, const char *a) { o->prealloc = true; }
/* A flag and its --no- form on one line: which one was meant is a guess,
 * never "the last one wins". */
static void choose(int *choice, int want, const char *flag)
{
    if (*choice >= 0 && *choice != want)
        fail_usage("--%s and --no-%s exclude each other: give one", flag, flag);
    *choice = want;
}
static void set_fsync(io_options *o, parse_state *s, const char *a) { choose(&s->fsync_choice, 1, "fsync"); }
static void set_no_fsync(io_options *o, parse_state *s, const char *a) { choose(&s->fsync_choice, 0, "fsync"); }
static void set_direct(io_options *o, parse_state *s, const char *a) { o->direct = true; }
static void set_evict(io_options *o, parse_state *s, const char *a) { o->evict = true; }
static void set_huge(io_options *o, parse_state *s, const char *a) { choose(&s->huge_choice, 1, "huge-pages"); }
static void set_no_huge(io_options *o, parse_state *s, const char *a) { choose(&s->huge_choice, 0, "huge-pages"); }
static void set_shift(io_options *o, parse_state *s, const char *a)
{
    o->read_shift = whole_number("--read-shift", a, 10, " of ranks");
    s->shift_given = true;
}
static void set_verify(io_options *o, parse_state *s, const char *a) { o->verify = true; }
static void set_keep(io_options *o, parse_state *s, const char *a) { o->keep = true; }
static void set_trace(io_options *o, parse_state *s, const char *a) { o->trace = true; }
static void set_seed(io_options *o, parse_state *s, const char *a)
{
    o->seed = whole_number("--seed", a, 0, "");
}
static void set_json(io_options *o, parse_state *s, const char *a)
{
    if (strlen(a) >= sizeof o->json || !a[0])
        fail_usage("--json needs a file name");
    snprintf(o->json, sizeof o->json, "%s", a);
}
static void set_help(io_options *o, parse_state *s, const char *a);

/* The core options, in --help order.  Each backend adds its own
 * (backend_ops.options), printed under its name. */
static const core_option core_options[] = {
    {"dir", "DIR", "target directory (must exist and be writable)", set_dir},
    {"stripe-dirs", "D1,D2,..",
     "instead of --dir: one logical file spread round-robin\nover one file per directory "
     "(per-call APIs)",
     set_stripe_dirs},
    {"stripe-unit", "SIZE", "bytes per target before the next (with --stripe-dirs)",
     set_stripe_unit},
    {"name", "NAME", "file name (default: a unique pario-io.* name)", set_name},
    {"layout", "L", "broadcast | partitioned | interleaved | random", set_layout},
    {"files", "F", "shared (one file) | per-rank (one file per rank)", set_files},
    {"api", "A", "how bytes move (default posix; each API and its own\noptions are listed below)",
     set_api},
    {"block", "SIZE", "bytes per call (4k 64k 1m ...; powers of 1024)", set_block},
    {"size", "SIZE", "broadcast: the file every rank reads;\notherwise the aggregate over all ranks",
     set_size},
    {"phases", "LIST", "write,read (default) or write or read", set_phases},
    {"iterations", "N", "repetitions of every phase (default 3)", set_iterations},
    {"group", "G", "at most G ranks do I/O at once (token passing)", set_group},
    {"group-unit", "U",
     "call (default: one call per group at a time, as\nin the CFS report) | rank (a rank's whole "
     "share)",
     set_group_unit},
    {"background", "N",
     "N loader processes per node during every phase\n(the ASCI Red report's load, Figure 3)",
     set_background},
    {"background-kind", "K",
     "write (default: each streams into its own file in\nthe target) | cpu (each spins)",
     set_background_kind},
    {"transfer-buffer", "SIZE",
     "APIs that move a rank's whole list per call (collective):\nat most SIZE per rank per call "
     "(default 64m)",
     set_transfer_buffer},
    {"transfer-hold", "SIZE",
     "the same APIs: slices packed before the clock, up to\nSIZE per rank (at least one slice; "
     "default: one slice,\nat most 64m and a quarter of the node's free memory);\nlater "
     "slices are packed inside the timed phase",
     set_transfer_hold},
    {"prealloc", NULL, "reserve the file's space before each write phase", set_prealloc},
    {"fsync", NULL, "fsync before close in write phases (default on)", set_fsync},
    {"no-fsync", NULL, "no fsync before close", set_no_fsync},
    {"direct", NULL, "O_DIRECT (block must be a multiple of 4 KiB)", set_direct},
    {"evict", NULL, "drop the file from the page cache before reads", set_evict},
    {"huge-pages", NULL, "buffers on transparent huge pages\n(default: on with --direct)", set_huge},
    {"no-huge-pages", NULL, "buffers on ordinary pages", set_no_huge},
    {"read-shift", "K", "rank r reads what rank r+K wrote", set_shift},
    {"verify", NULL, "check every byte after each phase (untimed)", set_verify},
    {"keep", NULL, "keep the files (default: removed at the end)", set_keep},
    {"trace", NULL, "record every call's start and end time", set_trace},
    {"seed", "S", "data seed (default 1)", set_seed},
    {"json", "FILE", "write the result document (pario.result/1)", set_json},
    {"help", NULL, "this text", set_help},
};

#define NCORE (sizeof core_options / sizeof core_options[0])

void io_usage(void)
{
    printf("usage: mpirun -np P pario-engine io --dir DIR [options]\n"
           "\n"
           "Times one access pattern, CFS style: barrier, start, open, I/O, close,\n"
           "barrier, stop; the phase time is the maximum over ranks.\n"
           "\n");
    for (size_t i = 0; i < NCORE; i++)
        option_print(core_options[i].name, core_options[i].arg, core_options[i].help);
    const backend_ops *b;
    for (size_t i = 0; (b = backend_at(i)) != NULL; i++) {
        printf("\n--api %s: %s\n", b->name, b->summary);
        for (size_t k = 0; k < b->noptions; k++)
            option_print(b->options[k].name, b->options[k].arg, b->options[k].help);
    }
}

static void set_help(io_options *o, parse_state *s, const char *a)
{
    s->help = true; /* answered once the parser's memory is freed */
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

/* Whether the run writes into --dir itself: not an object store's run,
 * where --dir only names the objects' prefix, unless write loaders stream
 * their files there. */
static bool writes_into_dir(const io_options *o)
{
    return !(o->api_caps & BACKEND_CAP_OBJECTS) ||
           (o->background && o->background_kind == BACKGROUND_WRITE);
}

static void check_dir(const io_options *o)
{
    struct stat st;
    if (!o->dir[0])
        fail_usage("--dir is required: name the directory to test, e.g. --dir /dev/shm/pario");
    if (check_mode())
        return; /* the machine's part: checked when the run starts */
    if (stat(o->dir, &st) != 0)
        fail_usage("--dir %s: %s: %s", o->dir, strerror(errno), fail_dir_fix(errno));
    if (!S_ISDIR(st.st_mode))
        fail_usage("--dir %s is not a directory: give a directory", o->dir);
    if (writes_into_dir(o) && access(o->dir, W_OK | X_OK) != 0)
        fail_usage("--dir %s is not writable by this user: choose a writable directory", o->dir);
}

static void check_json_path(const io_options *o)
{
    if (o->json[0] && !check_mode())
        check_output_file("--json", o->json); /* one rule for every output file */
}

/* Every option of every backend is known to getopt, so an option of
 * another backend is recognised and refused by name rather than called
 * unknown.  Backend options are applied after the whole line is read,
 * once --api is known. */
typedef struct option_entry {
    const core_option *core; /* or a backend's: */
    const backend_option *bopt;
} option_entry;

/* Whether a backend option may be given again: the same name may belong
 * to several backends, and getopt hands back the first one's row. */
static bool repeats(const backend_option *opt)
{
    const backend_ops *b;
    for (size_t i = 0; (b = backend_at(i)) != NULL; i++)
        for (const char *const *r = b->repeatable; r && *r; r++)
            if (strcmp(*r, opt->name) == 0)
                return true;
    return false;
}

static void apply_backend_option(io_options *o, const backend_option *opt, const char *arg)
{
    /* The same name may belong to several backends (e.g. --queue-depth). */
    for (size_t k = 0; k < o->api->noptions; k++)
        if (strcmp(o->api->options[k].name, opt->name) == 0) {
            o->api->config_set(o->api_config, o->api->options[k].id, opt->name, arg);
            return;
        }
    char owners[256] = "";
    const backend_ops *b;
    for (size_t i = 0; (b = backend_at(i)) != NULL; i++)
        for (size_t k = 0; k < b->noptions; k++)
            if (strcmp(b->options[k].name, opt->name) == 0) {
                size_t used = strlen(owners);
                snprintf(owners + used, sizeof owners - used, "%s--api %s", used ? " or " : "",
                         b->name);
            }
    fail_usage("--%s belongs to %s, not --api %s: drop it or choose that --api", opt->name,
               owners, o->api->name);
}

/* --stripe-dirs takes the place of --dir; the run then calls the chosen
 * backend through stripe_backend, which needs a per-call backend. */
static void check_striping(io_options *o, const parse_state *s)
{
    o->mover = o->api;
    o->mover_config = o->api_config;
    if (s->stripe_unit_given && !o->stripe.ntargets)
        fail_usage("--stripe-unit needs --stripe-dirs D1,D2,...");
    if (!o->stripe.ntargets)
        return;
    if (s->dir_given)
        fail_usage("--dir and --stripe-dirs both say where the file goes: give only --stripe-dirs");
    if (!s->stripe_unit_given)
        fail_usage("--stripe-dirs needs --stripe-unit SIZE (bytes per target, e.g. 64k)");
    if (o->stripe.unit % 8 != 0)
        fail_usage("--stripe-unit %llu is not a multiple of 8 bytes: use 4k, 64k, 1m ...",
                   (unsigned long long)o->stripe.unit);
    if (o->direct && o->stripe.unit % 4096 != 0)
        fail_usage("--direct needs --stripe-unit to be a multiple of 4k (O_DIRECT alignment)");
    if (o->api_caps & BACKEND_CAP_OBJECTS)
        fail_usage("--stripe-dirs spreads a file over directories, and --api %s writes objects "
                   "to one store: drop --stripe-dirs",
                   o->api->name);
    if (!(o->api_caps & BACKEND_CAP_PER_CALL) ||
        (o->api_caps & (BACKEND_CAP_ASYNC | BACKEND_CAP_TRANSFER)))
        fail_usage("--stripe-dirs splits each call over the targets, which needs a per-call --api "
                   "(posix, stdio, mmap), not --api %s",
                   o->api->name);
    if (o->api_caps & BACKEND_CAP_COLLECTIVE_OPEN)
        fail_usage("--stripe-dirs opens one part per target on each rank alone, and --api %s opens "
                   "files collectively: use a per-call --api (posix, stdio, mmap)",
                   o->api->name);
    snprintf(o->dir, sizeof o->dir, "%s", o->stripe.dirs[0]);
    o->stripe_wrap = (stripe_wrap){.inner = o->api, .inner_config = o->api_config,
                                   .spec = &o->stripe};
    o->mover = &stripe_backend;
    o->mover_config = &o->stripe_wrap;
}

/* What the chosen backend cannot do is refused, never approximated. */
static void check_capabilities(const io_options *o, const parse_state *s, bool writes,
                               bool reads, int nranks)
{
    const char *api = o->api->name;
    unsigned caps = o->api_caps;
    if (o->direct && !(caps & BACKEND_CAP_DIRECT))
        fail_usage("--api %s cannot do direct I/O: drop --direct", api);
    if (o->group && !(caps & BACKEND_CAP_GROUPABLE))
        fail_usage("--api %s moves data in calls all ranks make together, so they cannot "
                   "take turns: drop --group",
                   api);
    if (o->group && o->group_unit == GROUP_PER_CALL && !(caps & BACKEND_CAP_PER_CALL))
        fail_usage("--api %s keeps several calls in flight, so the token cannot pass after "
                   "each one: use --group-unit rank",
                   api);
    if (o->trace && (caps & BACKEND_CAP_TRANSFER))
        fail_usage("--trace times every call, and --api %s moves a rank's whole list in one "
                   "call: drop --trace",
                   api);
    if (s->transfer_given && !(caps & BACKEND_CAP_TRANSFER))
        fail_usage("--transfer-buffer sizes whole-list calls, which --api %s does not make: "
                   "drop it",
                   api);
    if (s->hold_given && !(caps & BACKEND_CAP_TRANSFER))
        fail_usage("--transfer-hold sizes the buffer of whole-list calls, which --api %s does "
                   "not make: drop it",
                   api);
    /* Only whole-list calls are cut into --transfer-buffer slices: a
     * per-call or asynchronous API takes any block up to the 2 GiB limit
     * (a default below one block was raised to it in io_options_parse). */
    if ((caps & BACKEND_CAP_TRANSFER) && o->transfer_buffer < o->block)
        fail_usage("--transfer-buffer is smaller than one --block: give at least the block size");
    if (o->evict && (caps & BACKEND_CAP_OBJECTS))
        fail_usage("--evict drops a file from this node's page cache, and --api %s stores "
                   "objects that no cache here holds: drop --evict", api);
    if (o->prealloc && !(caps & BACKEND_CAP_PREALLOC))
        fail_usage("--api %s cannot write into a file --prealloc created: drop --prealloc", api);
    if (o->api->config_check) {
        backend_run_facts run = {.block = (size_t)o->block,
                                 .direct = o->direct,
                                 .writes = writes,
                                 .reads = reads,
                                 .nranks = nranks,
                                 .per_rank_files = o->per_rank_files};
        o->api->config_check(o->api_config, &run);
    }
}

/* The bytes each file system must hold against its free space: stripe
 * targets on one file system (<dir>/stripe-0, stripe-1 on one disk) share
 * its free space, so their parts are summed per device, not each held
 * against the whole.  `need` is the data (0 for an object store's run),
 * `loaders` the write loaders' files, which live in --dir whatever the
 * data's targets. */
static dev_t dir_dev(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 ? st.st_dev : (dev_t)-1;
}

static void check_space(const io_options *o, uint64_t need, uint64_t loaders)
{
    if (check_mode())
        return; /* the machine's part: checked when the run starts */
    const int targets = o->stripe.ntargets ? o->stripe.ntargets : 1;
    struct fs_need {
        dev_t dev;
        uint64_t need, data; /* all bytes, and the data's among them */
        int first, count;    /* the first target on it, and how many */
    } fs[STRIPE_MAX_TARGETS + 1];
    int nfs = 0;
    for (int t = 0; t <= targets; t++) {
        /* the targets, then --dir for the loaders' files */
        const bool loader_entry = t == targets;
        if (loader_entry && !loaders)
            break;
        const char *dir = !loader_entry && o->stripe.ntargets ? o->stripe.dirs[t] : o->dir;
        uint64_t here = loader_entry            ? loaders
                        : o->stripe.ntargets    ? stripe_part_bytes(&o->stripe, need, t)
                                                : need;
        struct stat st;
        if (stat(dir, &st) != 0)
            continue; /* refused by name elsewhere */
        int i = 0;
        while (i < nfs && fs[i].dev != st.st_dev)
            i++;
        if (i == nfs)
            fs[nfs++] = (struct fs_need){.dev = st.st_dev, .first = t};
        fs[i].need += here;
        fs[i].data += loader_entry ? 0 : here;
        fs[i].count += !loader_entry;
    }
    for (int i = 0; i < nfs; i++) {
        const bool targets_there = fs[i].data > 0;
        const char *dir = targets_there && o->stripe.ntargets ? o->stripe.dirs[fs[i].first] : o->dir;
        fs_facts facts;
        if (fs_facts_of(dir, &facts) != 0 || fs[i].need <= facts.free_bytes)
            continue;
        char n[32], f[32], shared[64] = "";
        size_format(fs[i].need, n, sizeof n);
        size_approx(facts.free_bytes, f, sizeof f);
        if (fs[i].count > 1)
            snprintf(shared, sizeof shared, " (one file system for %d targets)", fs[i].count);
        const bool loaders_there = loaders && fs[i].dev == dir_dev(o->dir);
        fail_usage("%s %s%s has %s free but the run needs %s%s: free space or lower %s",
                   targets_there && o->stripe.ntargets ? "--stripe-dirs" : "--dir", dir, shared, f,
                   n, loaders_there ? " (with the write loaders' files)" : "",
                   !loaders_there  ? "--size"
                   : targets_there ? "--size or --background"
                                   : "--background");
    }
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
    o->transfer_buffer = IO_TRANSFER_BUFFER;
    parse_state st = {.fsync_choice = -1, .huge_choice = -1}, *s = &st;

    size_t nentries = NCORE;
    const backend_ops *b;
    for (size_t i = 0; (b = backend_at(i)) != NULL; i++)
        nentries += b->noptions;
    option_entry *entries = calloc(nentries, sizeof *entries);
    struct option *longopts = calloc(nentries + 1, sizeof *longopts);
    /* backend options seen, applied once --api is known */
    const backend_option **pending = calloc((size_t)argc + 1, sizeof *pending);
    const char **pending_arg = calloc((size_t)argc + 1, sizeof *pending_arg);
    bool *seen = calloc(nentries, sizeof *seen);
    if (!entries || !longopts || !pending || !pending_arg || !seen)
        fail_usage("out of memory parsing the options");
    size_t n = 0, npending = 0;
    for (size_t i = 0; i < NCORE; i++, n++) {
        entries[n].core = &core_options[i];
        longopts[n] = (struct option){core_options[i].name,
                                      core_options[i].arg ? required_argument : no_argument, 0,
                                      (int)(1000 + n)};
    }
    for (size_t i = 0; (b = backend_at(i)) != NULL; i++)
        for (size_t k = 0; k < b->noptions; k++, n++) {
            entries[n].bopt = &b->options[k];
            longopts[n] = (struct option){b->options[k].name,
                                          b->options[k].arg ? required_argument : no_argument, 0,
                                          (int)(1000 + n)};
        }

    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, ":", longopts, &which)) != -1) {
        if (c == ':')
            fail_usage("%s needs a value: see pario-engine io --help", argv[optind - 1]);
        if (c < 1000 || (size_t)(c - 1000) >= nentries)
            fail_usage("unknown option '%s': see pario-engine io --help", argv[optind - 1]);
        const option_entry *e = &entries[c - 1000];
        /* "--block --json f": the next option is not a value */
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("--%s needs a value: see pario-engine io --help", longopts[which].name);
        char shown[80];
        snprintf(shown, sizeof shown, "--%s", longopts[which].name);
        option_given(&seen[c - 1000], shown, optarg != NULL, e->bopt && repeats(e->bopt), "io");
        if (e->core) {
            e->core->set(o, s, optarg);
        } else {
            pending[npending] = e->bopt;
            pending_arg[npending++] = optarg;
        }
    }
    free(seen);
    if (s->help) {
        free(entries);
        free(longopts);
        free(pending);
        free(pending_arg);
        if (rank == 0)
            io_usage();
        fail_exit(0, 0, "%s", "");
    }
    if (optind < argc)
        fail_usage("unexpected argument '%s': options start with --, see pario-engine io --help",
                   argv[optind]);

    o->api_config = calloc(1, o->api->config_size ? o->api->config_size : 1);
    if (!o->api_config)
        fail_usage("out of memory for the options of --api %s", o->api->name);
    if (o->api->config_init)
        o->api->config_init(o->api_config);
    for (size_t i = 0; i < npending; i++)
        apply_backend_option(o, pending[i], pending_arg[i]);
    o->api_caps = backend_caps(o->api, o->api_config);
    free(entries);
    free(longopts);
    free(pending);
    free(pending_arg);

    check_striping(o, s);
    if (s->kind_given && !o->background)
        fail_usage("--background-kind needs --background N");
    check_dir(o);
    check_json_path(o);

    bool writes = io_has_phase(o, PHASE_WRITE), reads = io_has_phase(o, PHASE_READ);
    o->fsync = s->fsync_choice < 0 ? writes : s->fsync_choice == 1;
    o->huge_pages = s->huge_choice < 0 ? o->direct : s->huge_choice == 1;

    if (!s->size_given)
        fail_usage("--size is required: give the file size, e.g. --size 128m");
    if (o->block % 8 != 0)
        fail_usage("--block %llu is not a multiple of 8 bytes: use 4k, 64k, 1m ...",
                   (unsigned long long)o->block);
    if (o->block > (1ULL << 31))
        fail_usage("--block is larger than 2 GiB: use at most 2g per call");
    if (o->layout->read_only && writes)
        fail_usage("--layout %s only reads (every rank reads one whole file): use --phases read",
                   o->layout->name);
    if (o->layout->read_only && s->shift_given)
        fail_usage("--read-shift does not apply to --layout %s: every rank reads the whole file",
                   o->layout->name);
    if (s->shift_given && !reads)
        fail_usage("--read-shift only changes read phases: add read to --phases");
    if (o->read_shift >= (uint64_t)nranks)
        fail_usage("--read-shift %llu must be less than the %d ranks started: a shift of the "
                   "rank count reads a rank's own data",
                   (unsigned long long)o->read_shift, nranks);
    if (o->evict && !reads)
        fail_usage("--evict drops the file from the cache before read phases: add read to --phases");
    if (o->fsync && !writes)
        fail_usage("--fsync applies to write phases: add write to --phases or drop --fsync");
    if (o->group_unit != GROUP_PER_CALL && !o->group && s->unit_given)
        fail_usage("--group-unit needs --group G");
    if (o->direct && o->block % 4096 != 0)
        fail_usage("--direct needs --block to be a multiple of 4k (O_DIRECT alignment): "
                   "use 4k, 8k, 64k, 1m ...");
    /* left at its default, a whole-list slice holds at least one block */
    if (!s->transfer_given && o->transfer_buffer < o->block)
        o->transfer_buffer = o->block;
    check_capabilities(o, s, writes, reads, nranks);

    /* Bytes in one file, and how many ranks share it. */
    layout_geometry g = {0};
    g.block = o->block;
    g.seed = o->seed;
    if (o->layout->read_only) {
        g.file_bytes = o->size;
        g.sharers = 1;
    } else if (o->per_rank_files) {
        /* each file whole blocks: said in --size's terms, which the
         * layout's own check (one file's bytes) cannot */
        uint64_t unit = o->block * (uint64_t)nranks;
        if (o->size % unit != 0) {
            char sz[32], bl[32], un[32];
            size_format(o->size, sz, sizeof sz);
            size_format(o->block, bl, sizeof bl);
            size_format(unit, un, sizeof un);
            fail_usage("--size %s is not %d per-rank file(s) of whole %s blocks: "
                       "make it a multiple of %s (%d rank(s) x %s)",
                       sz, nranks, bl, un, nranks, bl);
        }
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
    uint64_t need = o->layout->read_only
                        ? (o->per_rank_files ? o->size * (uint64_t)nranks : o->size)
                        : o->size;
    if (o->api_caps & BACKEND_CAP_OBJECTS)
        need = 0; /* the data goes to the object store, not --dir */
    uint64_t loaders = o->background && o->background_kind == BACKGROUND_WRITE
                           ? (uint64_t)o->background * BACKGROUND_FILE_BYTES /* per node */
                           : 0;
    check_space(o, need, loaders);
}

void io_options_free(io_options *o)
{
    free(o->api_config);
    o->api_config = NULL;
    for (int t = 0; t < o->stripe.ntargets; t++)
        free(o->stripe.dirs[t]);
    o->stripe.ntargets = 0;
}
