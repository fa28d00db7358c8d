/* `pario-engine bt`: the NHT-1 application I/O benchmark on NPB's BT.
 *
 * Timing follows NPB: one untimed warm-up step, then the timed steps.  With
 * I/O on, the solution is written after every I_W-th step and after the
 * last, into one serial-order file; T_T runs from the start to the close
 * of that file (the transfers are complete), and verification of the file
 * happens after, untimed, as the report requires. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../util/clock.h"
#include "../../util/disk_full.h"
#include "../../util/check_mode.h"
#include "../../util/options.h"
#include "../../util/fail.h"
#include "../../util/json.h"
#include "../../util/mpiio_env.h"
#include "../../util/fsinfo.h"
#include "../../util/out_path.h"
#include "../../util/result_doc.h"
#include "../../util/run_files.h"
#include "bt.h"
#include "../../io/group_token.h"
#include "bt_overlap.h"
#include "btio.h"

#define BT_EPSILON 1.0e-8

typedef struct bt_options {
    const bt_class *cls;
    bt_class custom;    /* --grid/--dt: a problem no reference covers */
    long steps;
    bool io;            /* any mode but none */
    const btio_mode *mode;
    int layout;         /* bt_layout, or -1: the default for the rank count */
    MPI_Info hints;     /* --hint key=value, for the MPI-IO modes */
    int nhints;
    int interval;       /* I_W */
    char dir[4096];
    bool keep;
    bool overlap;       /* write dumps from a thread while computing */
    char name[256];     /* file name in dir; "" = unique default */
    int group;          /* at most this many ranks write at once; 0 = no limit */
    double tc;          /* T_C from an --io none run, 0 = not given */
    const char *json;
} bt_options;

static void bt_usage(void)
{
    printf("usage: pario-engine bt --class S|W|A|B|C | --grid N --steps N --dt DT [options]\n"
           "\n"
           "  --class C            NPB problem class (grid, steps, dt, reference norms)\n"
           "  --steps N            run N steps instead of the class's (no verification)\n"
           "  --grid N --dt DT     another problem size or time step (with --steps, in\n"
           "                       place of --class; not verified)\n"
           "  --decomposition D    multipartition (NPB's: a square rank count, p cells\n"
           "                       per rank) or slabs (z slabs, any rank count up to\n"
           "                       the grid); default multipartition on square counts\n"
           "  --io MODE            none (default); posix (pwrite per row), fortran (one\n"
           "                       40-byte record per point), independent or simple\n"
           "                       (MPI_File_write_at per row), collective or full (one\n"
           "                       MPI_File_write_at_all per dump through a file view),\n"
           "                       serial (gather to rank 0): one serial-order (BTIO)\n"
           "                       file; per-rank or epio: one file per rank, one\n"
           "                       Fortran record per cell and dump\n"
           "  --hint KEY=VALUE     MPI-IO hint (independent, collective); repeatable\n"
           "  --group G            at most G ranks write at once, the report's grouped\n"
           "                       writing (posix, independent, per-rank)\n"
           "  --overlap            write each dump from a thread while the solver\n"
           "                       computes on (posix, per-rank)\n"
           "  --write-interval I   write the solution every I steps (default 5)\n"
           "  --dir DIR            where the file goes (required with an --io mode)\n"
           "  --name NAME          file name in DIR (default: a unique btio.pario.* name)\n"
           "  --keep               keep the file (default: removed after verification)\n"
           "  --tc SECONDS         T_C of the same run without I/O, for zeta\n"
           "  --json FILE          write the result document\n"
           "\n"
           "Any rank count up to the grid size (z slabs); square counts whose cells keep\n"
           "at least 3 points per side (multipartition).\n");
}

static void parse(int argc, char **argv, int rank, bt_options *o)
{
    enum { O_CLASS = 1000, O_STEPS, O_IO, O_INTERVAL, O_DIR, O_KEEP, O_TC, O_JSON, O_HINT, O_OVERLAP, O_NAME, O_GROUP, O_GRID, O_DT, O_DECOMP, O_HELP };
    static const struct option opts[] = {
        {"class", required_argument, 0, O_CLASS},  {"steps", required_argument, 0, O_STEPS},
        {"io", required_argument, 0, O_IO},        {"write-interval", required_argument, 0, O_INTERVAL},
        {"dir", required_argument, 0, O_DIR},      {"keep", no_argument, 0, O_KEEP},
        {"tc", required_argument, 0, O_TC},        {"json", required_argument, 0, O_JSON},
        {"hint", required_argument, 0, O_HINT},    {"overlap", no_argument, 0, O_OVERLAP},
        {"name", required_argument, 0, O_NAME},   {"group", required_argument, 0, O_GROUP},
        {"grid", required_argument, 0, O_GRID},   {"dt", required_argument, 0, O_DT},
        {"decomposition", required_argument, 0, O_DECOMP},
        {"help", no_argument, 0, O_HELP},          {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->hints = MPI_INFO_NULL;
    if (!check_mode()) /* MPI is not started under `pario-engine check` */
        MPI_Info_create(&o->hints);
    o->steps = -1;
    o->interval = 5;
    o->layout = -1;
    bool interval_given = false;
    opterr = 0;
    optind = 1;
    int c, which = 0, grid = 0;
    double dt = 0;
    char *end;
    bool seen[O_HELP - O_CLASS + 1] = {false}; /* valued options given: once each */
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("--%s needs a value: see pario-engine bt --help", opts[which].name);
        if (c >= O_CLASS && c <= O_HELP) {
            char shown[40];
            snprintf(shown, sizeof shown, "--%s", opts[which].name);
            option_given(&seen[c - O_CLASS], shown, optarg != NULL, c == O_HINT, "bt");
        }
        switch (c) {
        case O_CLASS:
            if (strlen(optarg) != 1 || !(o->cls = bt_class_find(optarg[0])))
                fail_usage("--class '%s' is unknown: use S, W, A, B or C", optarg);
            break;
        case O_STEPS:
            o->steps = strtol(optarg, &end, 10);
            if (*end || o->steps <= 0 || o->steps > 1000000)
                fail_usage("--steps '%s' must be a whole number from 1 to 1000000", optarg);
            break;
        case O_IO:
            o->mode = btio_mode_find(optarg);
            o->io = o->mode != NULL;
            if (!o->mode && strcmp(optarg, "none") != 0)
                fail_usage("--io '%s' is unknown: use none, posix, fortran, independent (simple), "
                           "collective (full), per-rank (epio) or serial", optarg);
            break;
        case O_DECOMP:
            if (!strcmp(optarg, "multipartition"))
                o->layout = BT_MULTIPARTITION;
            else if (!strcmp(optarg, "slabs"))
                o->layout = BT_SLABS;
            else
                fail_usage("--decomposition '%s' is unknown: use multipartition or slabs", optarg);
            break;
        case O_HINT: {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1] || eq - optarg >= MPI_MAX_INFO_KEY)
                fail_usage("--hint '%s' must be key=value, e.g. cb_nodes=2", optarg);
            char key[MPI_MAX_INFO_KEY + 1], why[512];
            snprintf(key, sizeof key, "%.*s", (int)(eq - optarg), optarg);
            if (mpiio_hint_value_check(key, eq + 1, why, sizeof why))
                fail_usage("%s", why);
            if (!check_mode())
                MPI_Info_set(o->hints, key, eq + 1);
            o->nhints++;
            break;
        }
        case O_INTERVAL: {
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 1000000)
                fail_usage("--write-interval '%s' must be a whole number of steps, at least 1", optarg);
            o->interval = (int)v;
            interval_given = true;
            break;
        }
        case O_DIR:
            snprintf(o->dir, sizeof o->dir, "%s", optarg);
            break;
        case O_KEEP: o->keep = true; break;
        case O_OVERLAP: o->overlap = true; break;
        case O_GRID: {
            long g = strtol(optarg, &end, 10);
            if (*end || g < 5 || g > 4096)
                fail_usage("--grid '%s' must be a whole number of points from 5 to 4096", optarg);
            grid = (int)g;
            break;
        }
        case O_DT:
            dt = strtod(optarg, &end);
            if (*end || !(dt > 0) || dt > 1)
                fail_usage("--dt '%s' must be a time step above 0 and at most 1", optarg);
            break;
        case O_GROUP: {
            long g = strtol(optarg, &end, 10);
            if (*end || g <= 0 || g > 1 << 30)
                fail_usage("--group '%s' must be a whole number of ranks, at least 1", optarg);
            o->group = (int)g;
            break;
        }
        case O_NAME:
            if (!optarg[0] || strchr(optarg, '/') || strlen(optarg) > 200)
                fail_usage("--name '%s' must be a plain file name (no '/'), at most 200 characters",
                           optarg);
            snprintf(o->name, sizeof o->name, "%s", optarg);
            break;
        case O_TC:
            o->tc = strtod(optarg, &end);
            if (*end || !(o->tc > 0))
                fail_usage("--tc '%s' must be a positive number of seconds", optarg);
            break;
        case O_JSON:
            if (!check_mode())
                check_output_file("--json", optarg); /* before the solve, not after */
            o->json = optarg;
            break;
        case O_HELP:
            if (rank == 0)
                bt_usage();
            fail_exit(0, 0, "%s", "");
        case ':': fail_usage("%s needs a value: see pario-engine bt --help", argv[optind - 1]);
        default: fail_usage("unknown option '%s': see pario-engine bt --help", argv[optind - 1]);
        }
    }
    if (optind < argc)
        fail_usage("unexpected argument '%s': see pario-engine bt --help", argv[optind]);
    if (!o->cls && !(grid && dt && o->steps > 0))
        fail_usage("--class is required (S, W, A, B or C), or all of --grid, --steps and --dt");
    if (o->cls && (grid || dt)) {
        /* the class's problem with changes: runs, but nothing to verify against */
        o->custom = *o->cls;
        o->custom.grid = grid ? grid : o->cls->grid;
        o->custom.dt = dt ? dt : o->cls->dt;
        o->custom.name = '-';
        o->cls = &o->custom;
    } else if (!o->cls) {
        memset(&o->custom, 0, sizeof o->custom);
        o->custom.name = '-';
        o->custom.grid = grid;
        o->custom.steps = (int)o->steps;
        o->custom.dt = dt;
        o->cls = &o->custom;
    }
    if (!o->io && (o->dir[0] || o->keep || interval_given || o->name[0]))
        fail_usage("--dir, --name, --keep and --write-interval need an --io mode other than none");
    if (o->overlap && !(o->io && (!strcmp(o->mode->name, "posix") || !strcmp(o->mode->name, "per-rank"))))
        fail_usage("--overlap writes from a thread with POSIX calls: use it with --io posix or "
                   "--io per-rank");
    if (o->group && !(o->io && (!strcmp(o->mode->name, "posix") ||
                                !strcmp(o->mode->name, "independent") ||
                                !strcmp(o->mode->name, "per-rank"))))
        fail_usage("--group limits ranks writing on their own: use it with --io posix, "
                   "independent or per-rank");
    if (o->group && o->overlap)
        fail_usage("--group and --overlap cannot be combined: the writer thread makes no MPI calls");
    if (o->nhints && !(o->io && (!strcmp(o->mode->name, "independent") ||
                                 !strcmp(o->mode->name, "collective"))))
        fail_usage("--hint is for MPI-IO: use it with --io independent or --io collective");
    if (o->io) {
        struct stat st;
        if (!o->dir[0])
            fail_usage("--io %s needs --dir DIR: where the solution file goes", o->mode->name);
        if (check_mode())
            return; /* the machine's part: checked when the run starts */
        if (stat(o->dir, &st) != 0 || !S_ISDIR(st.st_mode))
            fail_usage("--dir %s is not an existing directory: create it first", o->dir);
        if (access(o->dir, W_OK | X_OK) != 0)
            fail_usage("--dir %s is not writable: choose a writable directory", o->dir);
    }
}

/* NPB BTIO's "BTIO -- statistics" block. */
typedef struct npb_io {
    double seconds, percent, mbytes, mb_per_s;
} npb_io;

/* What one BT run measured and found: everything the result document
 * needs beyond the options. */
typedef struct bt_outcome {
    int nranks;
    bt_layout layout;
    int cells_per_rank;
    int node_ranks, node_cores; /* the busiest node: ranks on it, its cores */
    fs_facts fs;                /* where the file went (with an --io mode) */
    result_where *where;        /* the mpi and target objects every document carries */
    long steps;
    double tt, mops, r_io, worst;
    int dumps;
    const double *dump_seconds;
    npb_io npb;
    npb_io unsynced; /* the same rule without the sync in pario's close */
    double sync_max; /* the longest sync of any rank */
    uint64_t bytes;
    bool verified, ok, file_checked, file_ok;
    const double *xcr, *xce, *file_xce;
    const char *path;
} bt_outcome;

static void save_json(const bt_options *o, const bt_outcome *r)
{
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "bt");
    json_string(&j, "status", "ok");
    result_doc_where(&j, r->where, o->io ? o->dir : NULL, NULL);
    json_object_begin(&j, "params");
    char name[2] = {o->cls->name, 0};
    json_string(&j, "class", name);
    json_int(&j, "grid", o->cls->grid);
    json_int(&j, "steps", r->steps);
    json_double(&j, "dt", o->cls->dt);
    json_int(&j, "ranks", r->nranks);
    json_string(&j, "decomposition", bt_layout_name(r->layout));
    json_int(&j, "cells_per_rank", r->cells_per_rank);
    json_string(&j, "io", o->io ? o->mode->name : "none");
    json_int(&j, "write_interval", o->io ? o->interval : 0);
    json_bool(&j, "serial_order", !o->io || o->mode->serial_order);
    json_bool(&j, "overlap", o->overlap);
    json_int(&j, "group", o->group);
    json_object_end(&j);
    json_double(&j, "t_t_seconds", r->tt);
    if (o->tc > 0) {
        json_double(&j, "t_c_seconds", o->tc);
        json_double(&j, "zeta", r->tt / o->tc - 1.0);
    } else {
        json_double(&j, "t_c_seconds", o->io ? NAN : r->tt);
        json_double(&j, "zeta", o->io ? NAN : 0.0);
    }
    json_double(&j, "mops", r->mops);
    json_double(&j, "mops_per_rank", r->mops / r->nranks);
    json_object_begin(&j, "io");
    json_int(&j, "dumps", r->dumps);
    json_uint(&j, "bytes_written", r->bytes);
    json_double(&j, "r_io_bytes_per_s", r->r_io);
    /* NPB BTIO's own figures (NPB 3.3.1/3.4.0 rule: harmonic mean over
     * ranks of each rank's write-and-close time) */
    json_double(&j, "npb_io_seconds", o->io ? r->npb.seconds : NAN);
    json_double(&j, "npb_io_percent", o->io ? r->npb.percent : NAN);
    json_double(&j, "npb_mbytes_written", o->io ? r->npb.mbytes : NAN);
    json_double(&j, "npb_io_mb_per_s", o->io ? r->npb.mb_per_s : NAN);
    json_string(&j, "npb_io_rule", !o->io ? NULL
                : o->mode->rank0_writes ? "NPB 3.3.1/3.4.0 over the ranks that write (serial: rank 0 alone): "
                                          "1/mean of 1/(rank's write + close seconds); MB = 1e6 bytes"
                                        : "NPB 3.3.1/3.4.0: 1/mean over ranks of 1/(rank's write + close "
                                          "seconds); MB = 1e6 bytes");
    /* pario's close syncs the file to storage (fsync, MPI_File_sync);
     * NPB's MPI_File_close does not (ompio's calls no fsync in it):
     * the same figures without the sync, beside, and the sync itself */
    json_double(&j, "sync_seconds_max", o->io ? r->sync_max : NAN);
    json_double(&j, "npb_io_seconds_without_sync", o->io ? r->unsynced.seconds : NAN);
    json_double(&j, "npb_io_mb_per_s_without_sync", o->io ? r->unsynced.mb_per_s : NAN);
    json_array_begin(&j, "dump_seconds");
    for (int d = 0; d < r->dumps; d++)
        json_double(&j, NULL, r->dump_seconds[d]);
    json_array_end(&j);
    json_string(&j, "file", r->path && o->keep ? r->path : NULL);
    json_object_end(&j);
    json_object_begin(&j, "verification");
    json_bool(&j, "performed", r->verified);
    json_bool(&j, "ok", r->ok);
    json_double(&j, "largest_relative_difference", r->worst);
    json_array_begin(&j, "xcr");
    for (int m = 0; m < 5; m++)
        json_double(&j, NULL, r->xcr[m]);
    json_array_end(&j);
    json_array_begin(&j, "xce");
    for (int m = 0; m < 5; m++)
        json_double(&j, NULL, r->xce[m]);
    json_array_end(&j);
    json_bool(&j, "file_checked", r->file_checked);
    json_bool(&j, "file_ok", r->file_ok);
    json_string(&j, "file_check",
                !r->file_checked ? NULL
                : o->interval == 5 ? "last dump vs NPB reference and this run's solution; "
                                     "mean over dumps vs BTIO reference"
                                   : "last dump vs NPB reference and this run's solution");
    json_array_begin(&j, "file_xce_mean");
    for (int m = 0; m < 5 && r->file_checked; m++)
        json_double(&j, NULL, r->file_xce[m]);
    json_array_end(&j);
    json_object_end(&j);
    json_object_begin(&j, "placement");
    json_int(&j, "ranks_on_busiest_node", r->node_ranks);
    json_int(&j, "cores_on_that_node", r->node_cores);
    json_object_end(&j);
    char memory[400], shared[400];
    snprintf(memory, sizeof memory, "target %s is %s: T_T measures writes into memory, not storage",
             o->dir, r->fs.type);
    snprintf(shared, sizeof shared, "%d ranks share %d cores on one node: the times measure "
             "ranks taking turns on cores, not the machine's speed", r->node_ranks, r->node_cores);
    const char *warnings[] = {
        o->io && o->tc <= 0 ? "no --tc given: zeta needs T_C from the same run with --io none" : NULL,
        o->io && r->fs.memory_backed ? memory : NULL,
        r->node_ranks > r->node_cores ? shared : NULL,
    };
    int e = result_doc_close(&j, warnings, 3, o->json);
    if (e)
        fail_exit(EXIT_RUN_FAILED, 1, "cannot write --json %s: %s", o->json, strerror(e));
}

/* Compare a file's mean dump error with BTIO's references (interval 5). */
static bool btio_matches(const bt_class *cls, const double xce[5], double *worst)
{
    bool ok = true;
    for (int m = 0; m < 5; m++) {
        double rel = fabs(xce[m] - cls->btio_xce_ref[m]) / fabs(cls->btio_xce_ref[m]);
        *worst = fmax(*worst, rel);
        ok = ok && rel <= BT_EPSILON;
    }
    return ok;
}

/* Agree on I/O failure across ranks; on failure the lowest failing rank
 * prints one line, the file(s) this run created are removed, and every
 * rank exits 3 together.  The file is not closed first: a collective
 * MPI_File_close after a failed write hangs under ompio (the failing
 * rank's close skips the barrier the others wait in, tester 15), so it
 * is left open to the process's exit, as the io backend abandons it. */
static void stop_on_io_error(const bt_options *o, btio_ctx *io, int io_err, MPI_Comm comm)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    int mine = io_err ? rank : nranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == nranks)
        return;
    MPI_Barrier(comm); /* every rank has stopped writing before the file goes */
    btio_remove(io);
    char fix[4200];
    disk_full_fix(io_err, o->dir, "--class", fix, sizeof fix);
    fail_exit(EXIT_RUN_FAILED, rank == first, "--io %s: rank %d writing %s: %s%s", o->mode->name,
              rank, io->path, io->why[0] ? io->why : strerror(io_err), fix);
}

/* The file's last dump against NPB's reference error norm (1e-8) and
 * against this run's in-memory solution (1e-12: summation order only). */
static bool final_dump_matches(const bt_class *cls, const double last[5], const double mine[5],
                               double *worst)
{
    bool ok = true;
    for (int m = 0; m < 5; m++) {
        double ref = fabs(last[m] - cls->xce_ref[m]) / fabs(cls->xce_ref[m]);
        double own = fabs(last[m] - mine[m]) / fabs(mine[m]);
        *worst = fmax(*worst, ref);
        ok = ok && ref <= BT_EPSILON && own <= 1e-12;
    }
    return ok;
}

static double dumps_seconds_sum(const double *dump_seconds, int dumps)
{
    double t = 0;
    for (int d = 0; d < dumps; d++)
        t += dump_seconds[d];
    return t;
}

/* NPB BTIO's I/O figures as NPB 3.3.1 and 3.4.0 print them (§2.6; NPB
 * 3.4.3 sums per-rank rates instead).  Each rank's I/O time t_p covers
 * its dump writes and the close (NPB's timer 2); the printed time is the
 * harmonic mean over the ranks that write, 1 / mean(1 / t_p) (NPB's
 * modes: all of them; pario's serial: rank 0 alone, whose helpers'
 * sends are no I/O and whose near-zero times would drown it, tester 19);
 * the percentage is of the slowest rank's total time; MB are 1e6 bytes
 * of 40 N^3 per dump. */
static npb_io npb_io_figures(bool io, bool writes, double my_io, double tt, double bytes, MPI_Comm comm)
{
    npb_io r = {0};
    double mine[2] = {writes && my_io > 0 ? 1.0 / my_io : 0, writes}, sum[2];
    MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, comm);
    if (!io || sum[1] < 1)
        return r;
    const double mean_inv = sum[0] / sum[1];
    r.seconds = mean_inv > 0 ? 1.0 / mean_inv : 0;
    r.percent = tt > 0 ? r.seconds * 100.0 / tt : 0;
    r.mbytes = bytes * 1e-6;
    r.mb_per_s = r.mbytes * mean_inv;
    return r;
}

int bt_command(int argc, char **argv)
{
    int rank, nranks;
    engine_world(&rank, &nranks);
    bt_options o;
    parse(argc, argv, rank, &o);
    const bt_class *cls = o.cls;
    int grid[3];
    const bt_layout layout = o.layout >= 0 ? (bt_layout)o.layout
                             : bt_layout_grid(BT_MULTIPARTITION, nranks, grid) ? BT_MULTIPARTITION
                                                                              : BT_SLABS;
    if (!bt_layout_grid(layout, nranks, grid))
        fail_usage("--decomposition multipartition needs a square rank count and %d ranks were "
                   "started: use 1, 4, 9, 16... ranks or --decomposition slabs", nranks);
    if (layout == BT_SLABS && nranks > cls->grid)
        fail_usage("class %c has %d planes and %d ranks were started: use at most %d ranks",
                   cls->name, cls->grid, nranks, cls->grid);
    if (layout == BT_MULTIPARTITION && bt_smallest_cell(cls->grid, grid[0]) < 3)
        fail_usage("class %c (grid %d) on %d ranks gives multi-partition cells of %d points, under "
                   "NPB's minimum of 3: use at most %d ranks or --decomposition slabs", cls->name,
                   cls->grid, nranks, bt_smallest_cell(cls->grid, grid[0]),
                   (cls->grid / 3) * (cls->grid / 3));
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    MPI_Comm comm = MPI_COMM_WORLD;
    const bool verify = cls->name != '-' && (o.steps < 0 || o.steps == cls->steps);
    const long steps = o.steps < 0 ? cls->steps : o.steps;
    const int dumps = o.io ? btio_dumps((int)steps, o.interval) : 0;

    bt_problem p;
    if (bt_problem_init(&p, cls->grid, cls->dt, layout, &comm) != 0)
        fail_usage("cannot allocate class %c (grid %d^3)", cls->name, cls->grid);
    char path[4200] = "";
    btio_ctx io;
    if (o.io) {
        long stamp[2] = {(long)getpid(), (long)time(NULL)};
        MPI_Bcast(stamp, 2, MPI_LONG, 0, comm);
        if (o.name[0])
            snprintf(path, sizeof path, "%s/%s", o.dir, o.name);
        else
            snprintf(path, sizeof path, "%s/btio.pario.%ld.%ld.out", o.dir, stamp[0], stamp[1]);
        int e = btio_open(&io, o.mode, path, o.hints, &p);
        int failed = e ? p.rank : p.nranks, first;
        MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, comm);
        if (first < p.nranks) {
            o.mode->close(&io);
            btio_remove(&io); /* what this run created before another rank failed */
            /* the lowest failing rank names its own file: with --io epio
             * the part that exists (NAME.0003), not the base name */
            char taken[sizeof io.path + 160];
            run_file_taken(io.path, taken, sizeof taken);
            if (e == EEXIST) /* the create is exclusive: the name is someone else's */
                fail_exit(EXIT_USAGE, p.rank == first, "--io %s: %s", o.mode->name, taken);
            fail_exit(EXIT_USAGE, p.rank == first, "--io %s: cannot create %s: %s", o.mode->name,
                      io.path, io.why[0] ? io.why : strerror(e));
        }
    }
    double *dump_seconds = calloc((size_t)dumps + 1, sizeof(double));
    bt_initialize(&p);
    bt_exact_rhs(&p);
    bt_step(&p); /* NPB's untimed warm-up step, then start again */
    bt_initialize(&p);

    int io_err = 0, dump = 0;
    overlap_writer writer;
    token_ring ring; /* --group: the io engine's token passing, one share per dump */
    token_ring_init(&ring, rank, nranks, o.group, GROUP_PER_RANK, comm);
    if (o.overlap && (io_err = overlap_start(&writer, &io, &p, dump_seconds)) != 0)
        fail_exit(EXIT_RUN_FAILED, 1, "--overlap: cannot start the writer thread: %s", strerror(io_err));
    MPI_Barrier(comm);
    double t0 = clock_now();
    for (long s = 1; s <= steps; s++) {
        bt_step(&p);
        if (o.io && (s % o.interval == 0 || s == steps)) {
            if (o.overlap) {
                overlap_submit(&writer, &p, dump++);
                continue;
            }
            double t = clock_now();
            token_enter_share(&ring); /* the token moves even after an error, */
            if (!io_err)              /* or the rest of the group would wait forever */
                io_err = o.mode->write_dump(&io, &p, dump);
            token_leave_share(&ring);
            dump_seconds[dump++] = clock_now() - t;
            /* Every rank learns of any rank's failure before the next
             * collective step (halo exchange, gather): no rank is left
             * waiting for one that stopped writing. */
            stop_on_io_error(&o, &io, io_err, comm);
        }
    }
    if (o.overlap)
        io_err = overlap_finish(&writer); /* the last dump is on its way */
    double close_seconds = 0;
    if (o.io) { /* the transfers are complete when the file is closed */
        double t = clock_now();
        int e = o.mode->close(&io);
        close_seconds = clock_now() - t;
        if (!io_err)
            io_err = e;
    }
    double my_time = clock_now() - t0, tt;
    MPI_Allreduce(&my_time, &tt, 1, MPI_DOUBLE, MPI_MAX, comm); /* as NPB: the slowest rank */
    if (o.io)
        stop_on_io_error(&o, &io, io_err, comm);
    const double my_io = dumps_seconds_sum(dump_seconds, dumps) + close_seconds,
                 my_sync = o.io ? io.sync_seconds : 0,
                 all_bytes = 40.0 * cls->grid * cls->grid * (double)cls->grid * dumps;
    const bool writes = o.io && (!o.mode->rank0_writes || rank == 0);
    const npb_io npb = npb_io_figures(o.io, writes, my_io, tt, all_bytes, comm),
                 unsynced = npb_io_figures(o.io, writes, my_io - my_sync, tt, all_bytes, comm);
    double sync_max = 0;
    MPI_Allreduce(&my_sync, &sync_max, 1, MPI_DOUBLE, MPI_MAX, comm);

    double xcr[5], xce[5], worst = 0;
    bt_residual_norm(&p, xcr);
    bt_error_norm(&p, xce);
    bool ok = verify;
    for (int m = 0; m < 5 && verify; m++) {
        double er = fabs(xcr[m] - cls->xcr_ref[m]) / fabs(cls->xcr_ref[m]);
        double ee = fabs(xce[m] - cls->xce_ref[m]) / fabs(cls->xce_ref[m]);
        worst = fmax(worst, fmax(er, ee));
        ok = ok && er <= BT_EPSILON && ee <= BT_EPSILON;
    }
    /* The file, read back serially (untimed), at any interval: its last
     * dump is the final solution, so its error norm must be NPB's verified
     * one and this run's own (the same data, summed in another order);
     * with NPB's interval 5 the mean over dumps must also be BTIO's. */
    double file_xce[5] = {0}, last_xce[5] = {0}, file_worst = 0;
    bool file_checked = false, file_ok = false;
    char why[512] = "";
    if (o.io && verify && rank == 0) {
        file_checked = true; /* per-rank files: the dumps reassembled from every rank's cells */
        int got = o.mode->serial_order
                      ? btio_read_check(path, cls->grid, dumps, file_xce, last_xce, NULL, why, sizeof why)
                      : btio_read_check_per_rank(path, cls->grid, layout, nranks, dumps, file_xce,
                                                 last_xce, NULL, why, sizeof why);
        if (got == 0)
            file_ok = final_dump_matches(cls, last_xce, xce, &file_worst) &&
                      (o.interval != 5 || btio_matches(cls, file_xce, &file_worst));
    }
    const uint64_t bytes = 40ULL * cls->grid * cls->grid * cls->grid * (uint64_t)dumps;
    /* The report's R_IO = 5 w N^3 N_S / (I_W T_T), w = 8 bytes. */
    const double r_io = o.io ? 40.0 * cls->grid * cls->grid * (double)cls->grid * steps /
                                   ((double)o.interval * tt)
                             : 0;
    const double mops = bt_mops(cls->grid, (int)steps, tt);
    /* Oversubscription: ranks on the busiest node against its cores. */
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int here[2], node_size, busiest[2];
    MPI_Comm_size(node, &node_size);
    here[0] = node_size;
    here[1] = -(int)sysconf(_SC_NPROCESSORS_ONLN);
    MPI_Allreduce(here, busiest, 2, MPI_INT, MPI_MAX, comm); /* most ranks; fewest cores */
    MPI_Comm_free(&node);
    fs_facts fs = {0};
    if (o.io && fs_facts_of(o.dir, &fs) != 0)
        snprintf(fs.type, sizeof fs.type, "unknown");
    /* the file check ran on rank 0: share its verdict */
    int file_flags[2] = {file_checked, file_ok};
    MPI_Bcast(file_flags, 2, MPI_INT, 0, comm);
    file_checked = file_flags[0];
    file_ok = file_flags[1];
    bool failed = (verify && !ok) || (file_checked && !file_ok);
    result_where where; /* what the document's provenance needs: gathered only for one */
    if (o.json)
        result_where_gather(&where, comm);
    if (rank != 0) {
        if (o.io && !o.mode->serial_order && !o.keep)
            btio_remove(&io); /* this rank's own file */
        free(dump_seconds);
        bt_problem_free(&p);
        return failed ? EXIT_RUN_FAILED : 0;
    }

    if (layout == BT_SLABS)
        printf("pario-engine bt: class %c, grid %d^3, %ld steps, dt %g, %d rank(s) in z slabs, io %s\n",
               cls->name, cls->grid, steps, cls->dt, nranks, o.io ? o.mode->name : "none");
    else
        printf("pario-engine bt: class %c, grid %d^3, %ld steps, dt %g, %d rank(s) in multi-partition "
               "(%d cells each of a %d^3 cell grid), io %s\n", cls->name, cls->grid, steps, cls->dt,
               nranks, p.ncells, grid[0], o.io ? o.mode->name : "none");
    printf("  T_T %.3f s, %.1f Mop/s (%.1f Mop/s per rank)\n", tt, mops, mops / nranks);
    if (o.io) {
        printf("  %d dumps every %d steps%s, %llu bytes, R_IO %.1f MB/s", dumps, o.interval,
               o.overlap ? " (overlapped)" : "",
               (unsigned long long)bytes, r_io / 1e6);
        if (o.tc > 0)
            printf(", T_C %.3f s, zeta %.4f", o.tc, tt / o.tc - 1.0);
        printf("\n");
        /* NPB BTIO's statistics block, in its words (3.3.1/3.4.0 rule) */
        printf("  BTIO -- statistics (NPB 3.4.0 rule):\n"
               "    I/O timing in seconds   : %14.2f\n"
               "    I/O timing percentage   : %14.2f\n"
               "    Total data written (MB) : %14.2f\n"
               "    I/O data rate  (MB/sec) : %14.2f\n",
               npb.seconds, npb.percent, npb.mbytes, npb.mb_per_s);
        /* beside it, what NPB's own close does: no sync to storage */
        printf("  without the sync in pario's close (longest sync %.2f s; NPB's MPI_File_close does "
               "not sync):\n"
               "    I/O timing without sync : %14.2f\n"
               "    I/O rate without sync   : %14.2f\n",
               sync_max, unsynced.seconds, unsynced.mb_per_s);
    }
    printf("  %-4s %22s %22s %22s %22s\n", "m", "residual xcr", "reference", "error xce", "reference");
    for (int m = 0; m < 5; m++) {
        if (verify)
            printf("  %-4d %22.13e %22.13e %22.13e %22.13e\n", m + 1, xcr[m], cls->xcr_ref[m], xce[m],
                   cls->xce_ref[m]);
        else /* no NPB reference for this problem: its zeros are not norms */
            printf("  %-4d %22.13e %22s %22.13e %22s\n", m + 1, xcr[m], "-", xce[m], "-");
    }
    if (verify)
        printf("  verification %s (largest relative difference %.2e, tolerance %.0e)\n",
               ok ? "SUCCESSFUL" : "UNSUCCESSFUL", worst, BT_EPSILON);
    else
        printf("  verification not performed: no NPB reference for this grid, step count and dt\n");
    if (why[0])
        printf("  file check FAILED: %s\n", why);
    else if (file_checked)
        printf("  file check %s: %d dumps%s; the last is the verified solution%s, largest relative "
               "difference %.2e\n",
               file_ok ? "SUCCESSFUL" : "UNSUCCESSFUL", dumps,
               o.mode->serial_order ? "" : " reassembled from every rank's file", o.interval == 5 ? "; mean error over dumps vs BTIO reference" : "", file_worst);

    if (o.json && !failed)
        save_json(&o, &(bt_outcome){.nranks = nranks, .layout = layout, .cells_per_rank = p.ncells, .node_ranks = busiest[0],
                                    .node_cores = -busiest[1], .fs = fs, .steps = steps, .tt = tt, .mops = mops,
                                    .r_io = r_io, .worst = worst, .dumps = dumps,
                                    .dump_seconds = dump_seconds, .npb = npb, .unsynced = unsynced,
                                    .sync_max = sync_max, .bytes = bytes,
                                    .verified = verify, .ok = ok, .file_checked = file_checked,
                                    .file_ok = file_ok, .xcr = xcr, .xce = xce,
                                    .file_xce = file_xce, .path = path, .where = &where});
    else if (o.json)
        result_where_free(&where); /* a failed run writes no document */
    if (o.io && !o.keep)
        btio_remove(&io); /* created by this run, and still that file */
    else if (o.io)
        printf("  kept %s%s\n", path, o.mode->serial_order ? "" : ".RRRR (one per rank)");
    free(dump_seconds);
    bt_problem_free(&p);
    return failed ? EXIT_RUN_FAILED : 0;
}
