/* `pario-engine bonnie`: one process, one file, Bonnie's six tests, the
 * report's table (Figures 1 and 2) and a result document.
 *
 * The file is twice the node's memory by default, so the reads cannot all
 * come from the page cache (the report's bonnie-against-bigbonnie lesson).
 * When that does not fit on the target, the file is made smaller and
 * dropped from the page cache before every reading test, and the run says
 * so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/fsinfo.h"
#include "../../util/json.h"
#include "../../util/options.h"
#include "../../util/run_files.h"
#include "../../util/result_doc.h"
#include "../../util/sizes.h"
#include "bonnie.h"

#define MIN_TIME 0.5 /* bonnie++ shows "+++++" under this: too short to trust */
#define MAX_WARNINGS 8

typedef struct bonnie_options {
    char dir[4096];
    char name[RUN_NAME_MAX]; /* --name, or "": a unique name */
    uint64_t size, chunk, char_size;
    bool size_given, char_size_given, evict, keep;
    int order;          /* index into order_names and rules */
    long seeks;
    int seek_procs;
    const char *json;
} bonnie_options;

/* Bray's Bonnie rewrites the per-character file before the block write;
 * bonnie++ block-writes first and rewrites that, and closes every test
 * with fsync (read from bonnie++ 2.00a's source and seen in strace). */
static const char *const order_names[] = {"bonnie", "bonnie++", NULL}; /* rows of rules */
static const bonnie_rules rules[] = {
    {{B_PUTC, B_REWRITE, B_BLOCK_WRITE, B_GETC, B_BLOCK_READ, B_SEEKS},
     .sync_every_close = false, .read_to_eof = true},
    {{B_PUTC, B_BLOCK_WRITE, B_REWRITE, B_GETC, B_BLOCK_READ, B_SEEKS},
     .sync_every_close = true, .read_to_eof = false},
};

typedef struct bonnie_run {
    bonnie_options o;
    bonnie_setup s;
    fs_facts fs;
    uint64_t memory;
    bonnie_measure m[B_NTESTS];
    char *warnings[MAX_WARNINGS];
    int nwarnings;
    bool data_ok;
    char data_why[256];
} bonnie_run;

static void warn(bonnie_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(bonnie_run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->nwarnings < MAX_WARNINGS && vasprintf(&r->warnings[r->nwarnings], fmt, ap) >= 0)
        r->nwarnings++;
    va_end(ap);
}

enum { O_DIR, O_SIZE, O_CHAR_SIZE, O_CHUNK, O_SEEKS, O_PROCS, O_EVICT, O_ORDER, O_NAME, O_KEEP, O_JSON };
static const option_spec bonnie_option_table[] = {
    {"dir", 0, "DIR", "directory on the file system to measure (required)", O_DIR},
    {"size", 0, "S",
     "file size (default: twice the node's memory; smaller with\neviction when that does not fit "
     "on DIR)",
     O_SIZE},
    {"char-size", 0, "S",
     "bytes for putc and getc, the file's first ones (bonnie++'s -f\nsize; default: the whole "
     "file); needs --order bonnie++",
     O_CHAR_SIZE},
    {"chunk", 0, "C",
     "bytes per read()/write(): 8k is Bonnie's (default), 64k the\nreport's bigbonnie; 256 bytes "
     "to 64 MiB",
     O_CHUNK},
    {"seeks", 0, "N", "random seeks in all (default 4000, Bonnie's)", O_SEEKS},
    {"seek-procs", 0, "N", "seeker processes (default 3, Bonnie's; 1 to 64)", O_PROCS},
    {"evict", 0, NULL, "drop the file from the page cache before each reading test", O_EVICT},
    {"order", 0, "O",
     "bonnie (default: putc, rewrite, block write, getc, block\nread, seeks) or bonnie++ (block "
     "write before rewrite, and every\ntest ends with fsync as bonnie++'s do)",
     O_ORDER},
    OPTION_NAME_ROW("pario-bonnie", O_NAME),
    OPTION_KEEP_ROW("the file", O_KEEP),
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec bonnie_command_spec =
    COMMAND_SPEC("bonnie", "usage: pario-engine bonnie --dir DIR [options]\n",
    "One process; run it without mpirun or with one rank.", bonnie_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    bonnie_options *o = ctx;
    switch (id) {
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir); break;
    case O_SIZE:
        o->size = option_size(opt, v);
        o->size_given = true;
        break;
    case O_CHAR_SIZE:
        o->char_size = option_size(opt, v);
        o->char_size_given = true;
        break;
    case O_CHUNK: o->chunk = option_size_in(opt, v, 256, 64u << 20); break;
    case O_SEEKS: o->seeks = option_whole(opt, v, 1, 100000000); break;
    case O_PROCS: o->seek_procs = (int)option_whole(opt, v, 1, 64); break;
    case O_EVICT: o->evict = true; break;
    case O_ORDER: o->order = option_choice(opt, v, order_names); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_KEEP: o->keep = true; break;
    case O_JSON: o->json = option_output(opt, v); break;
    }
}

static void parse(int argc, char **argv, bonnie_options *o)
{
    memset(o, 0, sizeof *o);
    o->chunk = 8192;
    o->seeks = 4000;
    o->seek_procs = 3;
    options_parse(&bonnie_command_spec, argc, argv, 0, set_option, o);
    fail_unless_target_dir(o->dir, "the directory on the file system to measure");
    if (o->size_given && o->size < o->chunk)
        fail_usage("--size is smaller than one --chunk: give at least one chunk");
    if (o->char_size_given && o->char_size < o->chunk)
        fail_usage("--char-size is smaller than one --chunk: give at least one chunk");
    if (o->char_size_given && o->size_given && o->char_size > o->size)
        fail_usage("--char-size is larger than --size: give at most the file's size");
    if (o->char_size_given && rules[o->order].order[1] == B_REWRITE)
        fail_usage("--char-size needs --order bonnie++: Bonnie's rewrite rewrites the per-character "
                   "file, which must then be the whole file");
}

/* Twice the memory by default; what does not fit is made to fit, with
 * eviction standing in for the size. */
static void choose_size(bonnie_run *r)
{
    bonnie_options *o = &r->o;
    char a[32], b[32], c[32];
    const uint64_t room = r->fs.free_bytes / 10 * 9;
    if (o->size_given && o->size > room) {
        size_approx(o->size, a, sizeof a);
        size_approx(r->fs.free_bytes, b, sizeof b);
        fail_usage("--size %s does not fit in %s (%s free): give a smaller --size", a, o->dir, b);
    }
    if (!o->size_given) {
        o->size = 2 * r->memory;
        if (o->size > room) {
            uint64_t fit = r->fs.free_bytes / 2 / o->chunk * o->chunk;
            if (fit < o->chunk)
                fail_usage("%s has almost no free space: free some or choose another --dir", o->dir);
            size_approx(o->size, a, sizeof a);
            size_approx(r->fs.free_bytes, b, sizeof b);
            size_approx(fit, c, sizeof c);
            warn(r, "a file of twice the memory (%s) does not fit in %s (%s free): using %s and "
                    "evicting it from the page cache before each reading test", a, o->dir, b, c);
            o->size = fit;
            o->evict = true;
        }
    }
    o->size = o->size / o->chunk * o->chunk; /* Bonnie's rounding */
    if (o->char_size_given && o->char_size > o->size)
        fail_usage("--char-size is larger than the file (%llu bytes): give at most that",
                   (unsigned long long)o->size);
    o->char_size = o->char_size_given ? o->char_size / o->chunk * o->chunk : o->size;
    if (r->fs.memory_backed)
        warn(r, "%s is %s: every rate here is memory speed, not storage", o->dir, r->fs.type);
    else if (!o->evict && o->size < 2 * r->memory) {
        size_approx(o->size, a, sizeof a);
        size_approx(r->memory, b, sizeof b);
        warn(r, "the file (%s) is smaller than twice the memory (%s) and --evict is off: the "
                "reads are likely served from the page cache", a, b);
    }
}

static double rate(const bonnie_measure *m)
{
    return m->seconds > 0 ? (double)m->work / m->seconds : 0;
}

static double cpu_percent(const bonnie_measure *m)
{
    return m->seconds > 0 ? 100.0 * m->cpu_seconds / m->seconds : 0;
}

/* " --label--" centred in width columns, as bonnie's header rows are. */
static void dashed(const char *label, int width)
{
    int inner = width - 1, len = (int)strlen(label) + 2;
    int left = (inner - len) / 2, right = inner - len - left;
    printf(" %.*s-%s-%.*s", left, "------------------------------------------", label, right,
           "------------------------------------------");
}

/* The report's table: K/sec for bonnie's 8 KiB chunks (Figure 1), MB/s for
 * bigbonnie's larger ones (Figure 2).  K and MB are 1024 and 1024². */
static void print_table(const bonnie_run *r)
{
    const bool kilo = r->o.chunk < 65536;
    const double unit = kilo ? 1024.0 : 1048576.0;
    static const enum bonnie_test order[] = {B_PUTC, B_BLOCK_WRITE, B_REWRITE, B_GETC, B_BLOCK_READ};
    const int group = kilo ? 15 : 13; /* one test's two columns; the seeks' are 15 wide */
    printf("%16s", "");
    dashed("Sequential Output", 3 * group);
    dashed("Sequential Input", 2 * group);
    dashed("Random", 15);
    printf("\n%16s", "");
    static const char *tests[] = {"Per Char", "Block", "Rewrite", "Per Char", "Block"};
    for (int i = 0; i < 5; i++)
        dashed(tests[i], group);
    dashed("Seeks", 15);
    printf("\n");
    printf("%-10s %6s", "Filesys", "MB");
    for (int i = 0; i < 5; i++)
        printf(kilo ? " %8s %5s" : " %6s %5s", kilo ? "K/sec" : "MB/s", "%CPU");
    printf(" %8s %5s\n", "/sec", "%CPU");
    /* the directory when it fits the column, as the report's /tmp, /home, /pvfs */
    printf("%-10s %6llu", strlen(r->o.dir) <= 10 ? r->o.dir : r->fs.type, (unsigned long long)(r->o.size >> 20));
    for (int i = 0; i < 5; i++)
        printf(kilo ? " %8.0f %5.1f" : " %6.1f %5.1f", rate(&r->m[order[i]]) / unit,
               cpu_percent(&r->m[order[i]]));
    printf(" %8.1f %5.1f\n", rate(&r->m[B_SEEKS]), cpu_percent(&r->m[B_SEEKS]));
}

static void save_json(const bonnie_run *r)
{
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "bonnie");
    json_string(&j, "status", "ok");
    json_object_begin(&j, "params");
    json_string(&j, "dir", r->o.dir);
    json_string(&j, "fs_type", r->fs.type);
    /* tmpfs/ramfs: --evict cannot evict, so the front end must not say it did */
    json_bool(&j, "memory_backed", r->fs.memory_backed);
    json_uint(&j, "size_bytes", r->o.size);
    json_uint(&j, "chunk_bytes", r->o.chunk);
    json_uint(&j, "char_size_bytes", r->o.char_size);
    json_int(&j, "seeks", r->o.seeks);
    json_int(&j, "seek_procs", r->o.seek_procs);
    json_int(&j, "update_every_seeks", 10);
    json_bool(&j, "evict", r->o.evict);
    json_string(&j, "order", order_names[r->o.order]);
    json_bool(&j, "fsync_after_reads", rules[r->o.order].sync_every_close);
    json_uint(&j, "node_memory_bytes", r->memory);
    json_object_end(&j);
    json_array_begin(&j, "tests");
    for (int t = 0; t < B_NTESTS; t++) {
        const bonnie_measure *m = &r->m[t];
        json_object_begin(&j, NULL);
        json_string(&j, "name", bonnie_test_name(t));
        json_double(&j, "seconds", m->seconds);
        json_double(&j, "cpu_seconds", m->cpu_seconds);
        json_double(&j, "cpu_percent", cpu_percent(m));
        if (t == B_SEEKS) {
            json_uint(&j, "seeks", m->work);
            json_double(&j, "seeks_per_s", rate(m));
        } else {
            json_uint(&j, "bytes", m->work);
            json_double(&j, "bytes_per_s", rate(m));
            json_double(&j, "kib_per_s", rate(m) / 1024);
            json_double(&j, "mib_per_s", rate(m) / 1048576);
        }
        json_object_begin(&j, "calls");
        json_uint(&j, "read", m->calls.read);
        json_uint(&j, "write", m->calls.write);
        json_uint(&j, "lseek", m->calls.lseek);
        json_uint(&j, "fsync", m->calls.fsync);
        json_uint(&j, "close", m->calls.close);
        json_object_end(&j);
        if (m->cached_fraction >= 0)
            json_double(&j, "cached_fraction_at_start", m->cached_fraction);
        else
            json_null(&j, "cached_fraction_at_start");
        json_bool(&j, "shorter_than_min_time", m->seconds < MIN_TIME);
        json_object_end(&j);
    }
    json_array_end(&j);
    result_doc_close_verified(&j, r->data_ok, (const char *const *)r->warnings, r->nwarnings, r->o.json);
}

int bonnie_command(int argc, char **argv)
{
    static bonnie_run r;
    parse(argc, argv, &r.o);
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    r.memory = node_memory_bytes();
    int e = fs_facts_of(r.o.dir, &r.fs);
    if (e)
        fail_usage("cannot examine --dir %s: %s", r.o.dir, strerror(e));
    choose_size(&r);
    char path[4200];
    const long stamp[2] = {(long)getpid(), (long)time(NULL)};
    run_file_base(r.o.dir, r.o.name, "pario-bonnie", stamp, NULL, path, sizeof path);
    static owned_file who;
    int fd = create_exclusive(path, O_RDWR, &who);
    if (fd == -EEXIST) {
        char taken[sizeof path + 160];
        run_file_taken(path, taken, sizeof taken);
        fail_usage("%s", taken);
    }
    if (fd < 0)
        fail_usage("cannot create %s: %s: check the directory's permissions", path, strerror(-fd));
    close(fd); /* every test opens the file afresh, as both programs do */
    r.s = (bonnie_setup){.path = path, .who = &who, .size = r.o.size, .chunk = r.o.chunk,
                         .char_size = r.o.char_size, .seeks = r.o.seeks, .seek_procs = r.o.seek_procs,
                         .evict = r.o.evict, .rules = &rules[r.o.order]};
    char sz[32], ck[32];
    size_format(r.o.size, sz, sizeof sz);
    size_format(r.o.chunk, ck, sizeof ck);
    char cs[48] = "";
    if (r.o.char_size < r.o.size) {
        char c[32];
        size_format(r.o.char_size, c, sizeof c);
        snprintf(cs, sizeof cs, ", putc/getc on the first %s", c);
    }
    printf("pario-engine bonnie: %s (%s), file %s%s, chunk %s, %ld seeks by %d processes%s\n", r.o.dir,
           r.fs.type, sz, cs, ck, r.o.seeks, r.o.seek_procs, r.o.evict ? ", evicting before reads" : "");
    fflush(stdout);
    const enum bonnie_test *run_order = rules[r.o.order].order;
    for (int i = 0; i < B_NTESTS; i++) {
        const char *what = "";
        e = bonnie_run_test(&r.s, run_order[i], &r.m[run_order[i]], &what);
        if (e) {
            remove_if_ours(path, &who); /* created by this run, if the name still holds it */
            fail_exit(EXIT_RUN_FAILED, 1, "bonnie %s: %s %s: %s", bonnie_test_name(run_order[i]),
                      what, path, owned_file_reason(e));
        }
    }
    r.data_ok = bonnie_data_ok(r.data_why, sizeof r.data_why);
    for (int t = 0; t < B_NTESTS; t++)
        if (r.m[t].seconds < MIN_TIME)
            warn(&r, "%s lasted %.3f s, under bonnie++'s 0.5 s: its figure is imprecise",
                 bonnie_test_name(t), r.m[t].seconds);
    print_table(&r);
    for (int i = 0; i < r.nwarnings; i++)
        printf("warning: %s\n", r.warnings[i]);
    if (r.o.keep)
        printf("  kept %s\n", path);
    else
        remove_if_ours(path, &who);
    if (!r.data_ok)
        fail_exit(EXIT_RUN_FAILED, 1, "bonnie: the file's data was wrong: %s", r.data_why);
    printf("  data checked: every chunk stamp and the byte sum as written\n");
    if (r.o.json)
        save_json(&r);
    return 0;
}
