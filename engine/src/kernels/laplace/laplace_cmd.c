/* `pario-engine laplace`: the report's Figure 8.  Jacobi sweeps on an N×N
 * grid in row blocks (halo exchange with the ranks above and below), and
 * a checkpoint of the whole grid every K sweeps and after the last one:
 * each rank sets its file view at its own rows and all call
 * MPI_File_write_all, with collective buffering as --cb says
 * (romio_cb_write, a ROMIO hint: --mpiio-impl romio picks ROMIO under Open
 * MPI through the engine's one MPI-IO setting, util/mpiio_env.h).
 *
 * Each checkpoint is timed by the CFS rule (barrier, open, view, write,
 * close; the maximum over ranks).  Around the write every rank counts its
 * own write system calls and bytes (/proc/self/io), so the run shows which
 * ranks really wrote: with collective buffering only the aggregators do.
 * After the run every rank reads its rows back and compares them with its
 * own state (untimed); `pario-engine verify-laplace` recomputes the grid
 * serially and compares the file exactly. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/json.h"
#include "../../util/mpi_fail.h"
#include "../../util/mpi_file.h"
#include "../../util/mpiio_env.h"
#include "../../util/options.h"
#include "../../util/run_files.h"
#include "../../util/proc_io.h"
#include "../../util/result_doc.h"
#include "../../util/sizes.h"
#include "laplace.h"

#define MAX_CHECKPOINTS 10000

typedef struct laplace_options {
    int grid, iterations, every;
    const char *cb; /* enable, disable, automatic */
    char dir[4096];
    char name[RUN_NAME_MAX]; /* --name, or "": a unique name */
    bool keep;
    const char *json;
    mpiio_settings mpi; /* --mpiio-impl, and romio_cb_write from --cb */
} laplace_options;

/* One checkpoint as all ranks saw it. */
typedef struct checkpoint {
    int iteration;
    double seconds, residual;
    int writers; /* ranks that issued write system calls in the write */
} checkpoint;

enum { O_GRID, O_ITER, O_EVERY, O_CB, O_IMPL, O_DIR, O_NAME, O_KEEP, O_JSON };
static const option_spec laplace_option_table[] = {
    {"grid", 0, "N", "N×N unknowns (default 8001, the report's: 0.5 GB)", O_GRID},
    {"iterations", 0, "K", "Jacobi sweeps (default 100)", O_ITER},
    {"checkpoint-every", 0, "C",
     "checkpoint every C sweeps and after the last\n(default: only after the last)", O_EVERY},
    {"cb", 0, "MODE",
     "collective buffering for the checkpoint write:\nenable, disable or automatic "
     "(romio_cb_write; default\nautomatic).  A ROMIO hint: under Open MPI give\n--mpiio-impl romio",
     O_CB},
    MPIIO_IMPL_ROW(O_IMPL),
    {"dir", 0, "DIR", "where the checkpoint goes (required)", O_DIR},
    OPTION_NAME_ROW("pario-laplace", O_NAME),
    OPTION_KEEP_ROW("the checkpoint", O_KEEP),
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec laplace_command_spec =
    COMMAND_SPEC("laplace", "usage: mpirun -np P pario-engine laplace --dir DIR [options]\n",
    "The rows are split over the ranks (at least one row each).", laplace_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    laplace_options *o = ctx;
    static const char *const cb_modes[] = {"enable", "disable", "automatic", NULL};
    switch (id) {
    case O_GRID: o->grid = (int)option_whole(opt, v, 3, 100000); break;
    case O_ITER: o->iterations = (int)option_whole(opt, v, 1, 10000000); break;
    case O_EVERY: o->every = (int)option_whole(opt, v, 1, 10000000); break;
    case O_CB: o->cb = cb_modes[option_choice(opt, v, cb_modes)]; break;
    case O_IMPL: mpiio_impl_option(&o->mpi, v); break;
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_KEEP: o->keep = true; break;
    case O_JSON: o->json = option_output(opt, v); break;
    }
}

static void parse(int argc, char **argv, int rank, laplace_options *o)
{
    memset(o, 0, sizeof *o);
    o->grid = 8001;
    o->iterations = 100;
    o->cb = "automatic";
    options_parse(&laplace_command_spec, argc, argv, rank, set_option, o);
    if (!o->every || o->every > o->iterations)
        o->every = o->iterations;
    if (o->iterations / o->every + 1 > MAX_CHECKPOINTS)
        fail_usage("--checkpoint-every %d makes more than %d checkpoints: checkpoint less often",
                   o->every, MAX_CHECKPOINTS);
    fail_unless_target_dir(o->dir, "where the checkpoint goes");
    char hint[64], why[512];
    snprintf(hint, sizeof hint, "romio_cb_write=%s", o->cb);
    if (mpiio_hint_add(&o->mpi, hint, why, sizeof why))
        fail_usage("%s", why);
}

typedef struct laplace_state {
    char path[4200];
    bool created; /* by this run: a failure after it is not a bad --dir */
    owned_file who; /* which file that is: the only one reopened, read or removed */
    int rank;
} laplace_state;

static void remove_ours(void *arg)
{
    laplace_state *s = arg;
    MPI_Barrier(MPI_COMM_WORLD);
    int e = s->rank == 0 ? remove_if_ours(s->path, &s->who) : 0;
    if (e && e != ENOENT)
        mpi_fail_left_behind(s->path, e);
}

static void halo(laplace_block *b, int rank, int nranks)
{
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
    const int n = b->n;
    /* my first row goes up, the row below me comes into my bottom ghost */
    MPI_Sendrecv(laplace_at(b, b->u, 0, 0), n, MPI_DOUBLE, up, 1, laplace_at(b, b->u, b->rows, 0), n,
                 MPI_DOUBLE, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(laplace_at(b, b->u, b->rows - 1, 0), n, MPI_DOUBLE, down, 2, laplace_at(b, b->u, -1, 0), n,
                 MPI_DOUBLE, up, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* One checkpoint: open, view at my rows, one collective write, close. */
static double write_checkpoint(const laplace_options *o, laplace_state *s, const laplace_block *b,
                               MPI_Info info, MPI_Datatype mine, long long counts[2], mpi_why *w)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    proc_io before, after;
    if (mpi_file_reopen(MPI_COMM_WORLD, s->path, MPI_MODE_WRONLY, info, &fh, &s->who, w) == MPI_SUCCESS) {
        const MPI_Offset disp = (MPI_Offset)b->row0 * b->n * (MPI_Offset)sizeof(double);
        mpi_failed(MPI_File_set_view(fh, disp, MPI_DOUBLE, MPI_DOUBLE, "native", info), w,
                   "setting the view of %s", s->path);
        MPI_Status st;
        int put = -1;
        proc_io_sample(&before); /* which ranks really write: /proc/self/io around the call */
        errno = 0; /* what the library leaves there names a failure's cause (mpi_fail.h) */
        if (!mpi_failed(MPI_File_write_all(fh, laplace_at(b, b->u, 0, 0), 1, mine, &st), w,
                        "MPI_File_write_all to %s", s->path))
            MPI_Get_count(&st, MPI_DOUBLE, &put);
        proc_io_sample(&after);
        if (put >= 0 && put != b->rows * b->n) /* ompio reports a short write as success */
            mpi_why_short_write(w, (uint64_t)(b->rows * b->n - put) * sizeof(double),
                                "MPI_File_write_all to %s wrote %d of %d values", s->path, put,
                                b->rows * b->n);
        mpi_file_close(&fh, w, s->path);
        const proc_io d = proc_io_delta(&before, &after);
        counts[0] = (long long)d.syscw;
        counts[1] = (long long)d.wchar;
    }
    double mine_s = MPI_Wtime() - t0, worst;
    MPI_Allreduce(&mine_s, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* Untimed: my rows as the file holds them against my own state. */
static void check_rows(const laplace_state *s, const laplace_block *b, mpi_why *w)
{
    const int fd = open_ours(s->path, O_RDONLY, &s->who); /* never through a planted symlink */
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    double *row = malloc(sizeof(double) * (size_t)b->n);
    if (!f || !row) {
        mpi_why_set(w, "reading %s back: the file %s", s->path,
                    fd < 0 ? owned_file_reason(-fd) : strerror(errno));
    } else {
        for (int i = 0; i < b->rows && !w->text[0]; i++) {
            if (fseeko(f, ((off_t)(b->row0 + i) * b->n) * (off_t)sizeof(double), SEEK_SET) != 0 ||
                fread(row, sizeof(double), (size_t)b->n, f) != (size_t)b->n)
                /* a collective write can lose an aggregator's short write: the free space says why */
                mpi_why_short_write(w, sizeof(double) * (size_t)b->n * (size_t)(b->rows - i),
                                    "reading row %d of %s back: the checkpoint was not all written",
                                    b->row0 + i, s->path);
            else if (memcmp(row, laplace_at(b, b->u, i, 0), sizeof(double) * (size_t)b->n) != 0)
                mpi_why_set(w, "row %d of the checkpoint %s differs from the solver's state",
                            b->row0 + i, s->path);
        }
    }
    if (f)
        fclose(f);
    free(row);
}

/* --cb is ROMIO's hint (romio_cb_write): under OMPIO it is ignored, which
 * the user must hear, not only the result document. */
static const char *cb_ignored(const laplace_options *o)
{
    if (strncmp(o->mpi.impl, "romio", 5) == 0 || strcmp(o->cb, "automatic") == 0)
        return NULL;
    return "--cb sets romio_cb_write, a ROMIO hint, and OMPIO ignores it (see "
           "last_write_per_rank): give --mpiio-impl romio";
}

static void save_json(const laplace_options *o, int nranks, const checkpoint *cp, int ncp,
                      const long long *per_rank, double compute_s, double residual,
                      result_where *where)
{
    const double bytes = (double)o->grid * o->grid * sizeof(double);
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "laplace");
    json_string(&j, "status", "ok");
    result_doc_where(&j, where, o->dir, NULL);
    json_object_begin(&j, "params");
    json_int(&j, "grid", o->grid);
    json_int(&j, "iterations", o->iterations);
    json_int(&j, "checkpoint_every", o->every);
    json_string(&j, "cb", o->cb);
    json_int(&j, "ranks", nranks);
    json_string(&j, "dir", o->dir);
    mpiio_run_json(&j, &o->mpi);
    mpiio_hints_json(&j, "hints", &o->mpi);
    json_object_end(&j);
    json_uint(&j, "checkpoint_bytes", (uint64_t)bytes);
    json_double(&j, "compute_seconds", compute_s);
    json_double(&j, "final_residual", residual);
    double best = 0;
    json_array_begin(&j, "checkpoints");
    for (int i = 0; i < ncp; i++) {
        json_object_begin(&j, NULL);
        json_int(&j, "iteration", cp[i].iteration);
        json_double(&j, "residual", cp[i].residual);
        json_double(&j, "seconds", cp[i].seconds);
        json_double(&j, "mib_per_s", bytes / 1048576.0 / cp[i].seconds);
        json_int(&j, "writing_ranks", cp[i].writers);
        json_object_end(&j);
        best = fmax(best, bytes / 1048576.0 / cp[i].seconds);
    }
    json_array_end(&j);
    json_double(&j, "best_mib_per_s", best);
    /* the last checkpoint's write system calls and bytes, rank by rank */
    json_array_begin(&j, "last_write_per_rank");
    for (int r = 0; r < nranks; r++) {
        json_object_begin(&j, NULL);
        json_int(&j, "rank", r);
        json_int(&j, "write_syscalls", per_rank[2 * r]);
        json_int(&j, "bytes", per_rank[2 * r + 1]);
        json_object_end(&j);
    }
    json_array_end(&j);
    const char *warnings[] = {cb_ignored(o)};
    result_doc_close_verified(&j, true, warnings, 1, o->json);
}

int laplace_command(int argc, char **argv)
{
    int rank, nranks;
    engine_world(&rank, &nranks);
    laplace_options o;
    parse(argc, argv, rank, &o);
    mpiio_settings_apply_or_exit(&o.mpi, nranks); /* before the first MPI_File call */
    if (nranks > o.grid)
        fail_usage("a %d×%d grid does not split over %d ranks (at least one row each): use at most "
                   "%d ranks or a larger --grid", o.grid, o.grid, nranks, o.grid);
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    static laplace_state s;
    s.rank = rank;
    mpi_why w = MPI_WHY_FOR(o.dir, "--grid");
    laplace_block b;
    int row0, rows;
    laplace_split(o.grid, nranks, rank, &row0, &rows);
    if (laplace_block_init(&b, o.grid, row0, rows) != 0)
        mpi_why_set(&w, "cannot allocate %d rows of %d points: use more ranks or a smaller --grid", rows, o.grid);
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, NULL, NULL);

    MPI_Info info = mpiio_info_create(&o.mpi);
    MPI_Datatype mine; /* my interior rows inside the ghost frame */
    MPI_Type_vector(rows, o.grid, o.grid + 2, MPI_DOUBLE, &mine);
    MPI_Type_commit(&mine);

    mpi_file_unique_path(MPI_COMM_WORLD, o.dir, o.name, "pario-laplace", ".chk", s.path, sizeof s.path);
    MPI_File fh;
    if (mpi_file_create(MPI_COMM_WORLD, s.path, info, &fh, &s.who, &w) == MPI_SUCCESS) {
        s.created = true;
        mpi_file_close(&fh, &w, s.path);
    }
    s.created = mpi_file_create_agree(&w, s.created, MPI_COMM_WORLD, s.path, &s.who);
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, remove_ours, &s);

    const int ncp_max = o.iterations / o.every + 1;
    checkpoint *cp = calloc((size_t)ncp_max, sizeof *cp);
    long long counts[2] = {0, 0};
    int ncp = 0;
    double residual = 0, compute = 0;
    for (int it = 1; it <= o.iterations; it++) {
        double t = MPI_Wtime();
        halo(&b, rank, nranks);
        double change = laplace_sweep(&b);
        compute += MPI_Wtime() - t;
        if (it % o.every == 0 || it == o.iterations) {
            MPI_Allreduce(&change, &residual, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double secs = write_checkpoint(&o, &s, &b, info, mine, counts, &w);
            mpi_stop_if_failed(&w, MPI_COMM_WORLD, remove_ours, &s);
            int wrote = counts[0] > 0, writers;
            MPI_Allreduce(&wrote, &writers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            cp[ncp++] = (checkpoint){.iteration = it, .seconds = secs, .residual = residual, .writers = writers};
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &compute, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    check_rows(&s, &b, &w);
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, remove_ours, &s);
    long long *per_rank = rank == 0 ? malloc(sizeof(long long) * 2 * (size_t)nranks) : NULL;
    MPI_Gather(counts, 2, MPI_LONG_LONG, per_rank, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    result_where where; /* what the document's provenance needs: gathered only for one */
    if (o.json)
        result_where_gather(&where, MPI_COMM_WORLD);

    if (rank == 0) {
        const double mib = (double)o.grid * o.grid * sizeof(double) / 1048576.0;
        printf("pario-engine laplace: %d×%d grid, %d sweeps, %d rank(s) in row blocks, cb %s on %s, %s\n",
               o.grid, o.grid, o.iterations, nranks, o.cb, o.mpi.impl, s.path);
        if (cb_ignored(&o))
            printf("warning: %s\n", cb_ignored(&o));
        printf("%10s %14s %10s %10s %8s\n", "iteration", "residual", "seconds", "MiB/s", "writers");
        for (int i = 0; i < ncp; i++) {
            char rate[32];
            rate_format(mib / cp[i].seconds, rate, sizeof rate);
            printf("%10d %14.6e %10.4f %10s %8d\n", cp[i].iteration, cp[i].residual, cp[i].seconds, rate,
                   cp[i].writers);
        }
        printf("  compute %.3f s; every rank's rows read back and equal to its state\n", compute);
        printf("  last checkpoint's write system calls per rank:");
        for (int r = 0; r < nranks; r++)
            printf(" %lld", per_rank[2 * r]);
        printf("\n");
        if (o.json)
            save_json(&o, nranks, cp, ncp, per_rank, compute, residual, &where);
        if (o.keep)
            printf("  kept %s\n", s.path);
        else
            remove_if_ours(s.path, &s.who); /* created by this run (MPI_MODE_EXCL) */
    }
    free(per_rank);
    free(cp);
    MPI_Type_free(&mine);
    MPI_Info_free(&info);
    laplace_block_free(&b);
    return 0;
}
