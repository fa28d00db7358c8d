/* `pario-engine flashio`: the FLASH I/O benchmark (the report's Figure 7).
 *
 * Writes the checkpoint and the two plotfiles, each timed from create to
 * close on every rank; a file's time is the maximum over ranks (the
 * PnetCDF port's report) and the bandwidth is the PnetCDF port's: all
 * bytes put by all ranks / 2^20 / (t_chk + t_plot + t_corner).  Then,
 * untimed, rank 0 opens each file serially and checks every dataset's
 * shape and values. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/disk_full.h"
#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/json.h"
#include "../../util/mpi_file.h"
#include "../../util/mpiio_env.h"
#include "../../util/options.h"
#include "../../util/run_files.h"
#include "../../util/result_doc.h"
#include "flashio.h"

typedef struct flashio_options {
    int nxb, blocks;
    bool collective, keep;
    char dir[4096];
    char name[RUN_NAME_MAX]; /* --name, or "": a unique name */
    const char *json;
    mpiio_settings mpi; /* which MPI-IO runs, recorded in the result */
} flashio_options;

enum { O_DIR, O_NXB, O_BLOCKS, O_TRANSFER, O_IMPL, O_NAME, O_KEEP, O_JSON };
static const option_spec flashio_option_table[] = {
    {"dir", 0, "DIR", "where the three files go (required)", O_DIR},
    {"nxb", 0, "N", "zones per block edge (default 8, the original's;\n16 is the PnetCDF port's)", O_NXB},
    {"blocks", 0, "B",
     "blocks per rank before the imbalance: rank r holds\nB + r mod 3 (default 80)", O_BLOCKS},
    {"transfer", 0, "MODE",
     "independent (default, as on SGI and Chiba City) or\ncollective: the HDF5 transfer of the "
     "block data",
     O_TRANSFER},
    MPIIO_IMPL_ROW(O_IMPL),
    OPTION_NAME_ROW("pario-flashio", O_NAME),
    OPTION_KEEP_ROW("the files", O_KEEP),
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec flashio_command_spec =
    COMMAND_SPEC("flashio",
                 "usage: mpirun -np P pario-engine flashio --dir DIR [options]\n",
                 NULL, flashio_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    flashio_options *o = ctx;
    static const char *const transfers[] = {"independent", "collective", NULL};
    switch (id) {
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir); break;
    case O_NXB: o->nxb = (int)option_whole(opt, v, 1, 64); break;
    case O_BLOCKS: o->blocks = (int)option_whole(opt, v, 1, 100000); break;
    case O_TRANSFER: o->collective = option_choice(opt, v, transfers) == 1; break;
    case O_IMPL: mpiio_impl_option(&o->mpi, v); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_KEEP: o->keep = true; break;
    case O_JSON: o->json = option_output(opt, v); break;
    }
}

static void parse(int argc, char **argv, int rank, flashio_options *o)
{
    memset(o, 0, sizeof *o);
    o->nxb = 8;
    o->blocks = 80;
    options_parse(&flashio_command_spec, argc, argv, rank, set_option, o);
    fail_unless_target_dir(o->dir, "where the three files go");
}

typedef struct flashio_run {
    char paths[FLASH_NFILES][4300];
    int created[FLASH_NFILES]; /* agreed by all ranks */
    owned_file who[FLASH_NFILES]; /* rank 0's note of each: the only files removed */
    double seconds[FLASH_NFILES]; /* maximum over ranks */
    unsigned long long bytes[FLASH_NFILES]; /* sum over ranks */
} flashio_run;

static void remove_created(flashio_run *r, int rank)
{
    for (int f = 0; f < FLASH_NFILES && rank == 0; f++)
        remove_if_ours(r->paths[f], &r->who[f]); /* created by this run (H5F_ACC_EXCL) */
}

static void save_json(const flashio_options *o, int nranks, const flash_mesh *m, const flashio_run *r,
                      double mib_per_s)
{
    static const char *names[FLASH_NFILES] = {"checkpoint", "plot_centers", "plot_corners"};
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "flashio");
    json_string(&j, "status", "ok");
    json_object_begin(&j, "params");
    json_int(&j, "ranks", nranks);
    json_int(&j, "nxb", o->nxb);
    json_int(&j, "blocks_base", o->blocks);
    json_int(&j, "total_blocks", m->total);
    json_int(&j, "variables", FLASH_NVAR);
    json_string(&j, "transfer", o->collective ? "collective" : "independent");
    json_string(&j, "dir", o->dir);
    mpiio_run_json(&j, &o->mpi);
    json_object_end(&j);
    json_array_begin(&j, "files");
    double total_s = 0;
    unsigned long long total_b = 0;
    for (int f = 0; f < FLASH_NFILES; f++) {
        json_object_begin(&j, NULL);
        json_string(&j, "name", names[f]);
        json_string(&j, "suffix", flash_file_suffix(f));
        json_double(&j, "seconds", r->seconds[f]);
        json_uint(&j, "bytes", r->bytes[f]);
        json_double(&j, "mib_per_s", (double)r->bytes[f] / 1048576.0 / r->seconds[f]);
        json_string(&j, "file", o->keep ? r->paths[f] : NULL);
        json_object_end(&j);
        total_s += r->seconds[f];
        total_b += r->bytes[f];
    }
    json_array_end(&j);
    json_uint(&j, "total_bytes", total_b);
    json_double(&j, "total_seconds", total_s);
    json_double(&j, "mib_per_s", mib_per_s);
    result_doc_close_verified(&j, true, NULL, 0, o->json);
}

int flashio_command(int argc, char **argv)
{
    int rank, nranks;
    engine_world(&rank, &nranks);
    flashio_options o;
    parse(argc, argv, rank, &o);
    mpiio_settings_apply_or_exit(&o.mpi, nranks); /* before the first MPI_File call */
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    static flash_mesh m;
    int bad = flash_mesh_init(&m, o.nxb, o.blocks, MPI_COMM_WORLD) != 0, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
        fail_exit(EXIT_USAGE, rank == 0, "cannot allocate %d blocks of %d^3 zones and 24 variables: "
                  "give fewer --blocks or a smaller --nxb", o.blocks + 2, o.nxb);
    static flashio_run r;
    char base[4200];
    mpi_file_unique_path(MPI_COMM_WORLD, o.dir, o.name, "pario-flashio", "_", base, sizeof base);
    for (int f = 0; f < FLASH_NFILES; f++) {
        snprintf(r.paths[f], sizeof r.paths[f], "%s%s", base, flash_file_suffix(f));
        flash_write_result w;
        flash_write_file(&m, f, r.paths[f], o.collective, MPI_COMM_WORLD, &w);
        r.who[f] = w.who;
        int made = w.created;
        MPI_Allreduce(&made, &r.created[f], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        int failed = w.why[0] ? rank : nranks, first;
        MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first < nranks) {
            MPI_Barrier(MPI_COMM_WORLD);
            remove_created(&r, rank);
            const int code = first == 0 && !r.created[f] && f == 0 ? EXIT_USAGE : EXIT_RUN_FAILED;
            if (w.err == EEXIST) /* the line names the file and the fix */
                fail_exit(code, rank == first, "%s", w.why);
            char fix[4300];
            disk_full_fix(w.err, o.dir, "--blocks", fix, sizeof fix);
            fail_exit(code, rank == first, "rank %d writing %s: %s%s", rank, r.paths[f], w.why, fix);
        }
        MPI_Allreduce(&w.seconds, &r.seconds[f], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        unsigned long long b = w.bytes;
        MPI_Allreduce(&b, &r.bytes[f], 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    /* untimed: the files as a serial reader sees them */
    char why[512] = "";
    int ok = 1;
    for (int f = 0; f < FLASH_NFILES && rank == 0 && ok; f++)
        ok = flash_check_file(r.paths[f], &r.who[f], f, o.nxb, m.total, why, sizeof why);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        remove_created(&r, rank);
        fail_exit(EXIT_RUN_FAILED, rank == 0, "the FLASH files are wrong: %s", why);
    }
    if (rank == 0) {
        static const char *labels[FLASH_NFILES] = {"checkpoint", "plotfile (centers)", "plotfile (corners)"};
        double total_s = 0;
        unsigned long long total_b = 0;
        printf("pario-engine flashio: %d rank(s), %lld blocks of %d^3 zones, 24 variables, %s transfer, "
               "parallel HDF5\n", nranks, m.total, o.nxb, o.collective ? "collective" : "independent");
        printf("%-20s %10s %12s %10s\n", "file", "seconds", "MiB", "MiB/s");
        for (int f = 0; f < FLASH_NFILES; f++) {
            printf("%-20s %10.4f %12.2f %10.1f\n", labels[f], r.seconds[f], r.bytes[f] / 1048576.0,
                   r.bytes[f] / 1048576.0 / r.seconds[f]);
            total_s += r.seconds[f];
            total_b += r.bytes[f];
        }
        const double mib_per_s = total_b / 1048576.0 / total_s;
        printf("%-20s %10.4f %12.2f %10.1f  (the PnetCDF port's bandwidth)\n", "all three", total_s,
               total_b / 1048576.0, mib_per_s);
        printf("  every dataset of the three files read back serially and checked\n");
        if (o.json)
            save_json(&o, nranks, &m, &r, mib_per_s);
        if (o.keep)
            printf("  kept %s{%s,%s,%s}\n", base, flash_file_suffix(0), flash_file_suffix(1), flash_file_suffix(2));
        else
            remove_created(&r, rank);
    }
    flash_mesh_free(&m);
    return 0;
}
