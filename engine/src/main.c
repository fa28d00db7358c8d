/* pario-engine: the measuring half of pario.  One binary, subcommands,
 * all named in one table below: a new kernel is one row. */
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/check_mode.h"
#include "util/fail.h"
#include "util/safe_file.h"
#include "version.h"

int io_command(int argc, char **argv);
int verify_command(int argc, char **argv);
int bt_command(int argc, char **argv);
int verify_bt_command(int argc, char **argv);
int probe_command(int argc, char **argv);
int bonnie_command(int argc, char **argv);
int perf_command(int argc, char **argv);
int laplace_command(int argc, char **argv);
int verify_laplace_command(int argc, char **argv);
int flashio_command(int argc, char **argv);
int beff_command(int argc, char **argv);
static int check_command(int argc, char **argv);

typedef struct engine_command {
    const char *name;
    int (*run)(int argc, char **argv);
    bool mpi; /* runs between MPI_Init and MPI_Finalize; else one plain process */
    const char *usage;
    bool checkable; /* stops at check_mode_passed() under `pario-engine check` */
} engine_command;

static const engine_command commands[] = {
    {"io", io_command, true,
     "mpirun -np P pario-engine io --dir DIR --layout L --block B --size S ...", true},
    {"verify", verify_command, false, "pario-engine verify --file FILE --seed S", false},
    {"bt", bt_command, true, "pario-engine bt --class S|W|A|B|C [--io posix --dir DIR]", true},
    {"verify-bt", verify_bt_command, false, "pario-engine verify-bt FILE --class C", false},
    {"probe", probe_command, true,
     "mpirun -np P pario-engine probe --dir DIR   (component rates, predicted peak)", true},
    /* bonnie forks its own seekers, so it stays outside MPI. */
    {"bonnie", bonnie_command, false, "pario-engine bonnie --dir DIR [--size S --chunk 8k|64k]", true},
    {"perf", perf_command, true, "mpirun -np P pario-engine perf --dir DIR [--size 4m]", true},
    {"laplace", laplace_command, true,
     "mpirun -np P pario-engine laplace --dir DIR [--grid 8001 --cb enable|disable]", true},
    {"verify-laplace", verify_laplace_command, false,
     "pario-engine verify-laplace FILE --grid N --iterations K", false},
    {"flashio", flashio_command, true,
     "mpirun -np P pario-engine flashio --dir DIR [--transfer collective]", true},
    {"beff", beff_command, true, "mpirun -np P pario-engine beff --dir DIR -T SECONDS", true},
    /* a plan's command lines, checked without running them (util/check_mode.h) */
    {"check", check_command, false,
     "pario-engine check < LINES   (RANKS<TAB>COMMAND<TAB>ARGS... per line: accepted\n"
     "    or why not)", false},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* A command that runs as one plain process (bonnie, verify) started as
 * several copies (`mpirun -np 2 pario-engine bonnie`): each would measure
 * beside the others, print its own table and race for --json.  Refused
 * by the first copy in one line (under `check`, the check's line), the
 * others exiting silent; nothing when it is one. */
static void refuse_copies(const engine_command *c, int rank, int copies)
{
    if (c->mpi || copies <= 1)
        return;
    if (rank != 0)
        exit(EXIT_USAGE);
    fail_usage("%s runs as one process, but %d copies were started: run it without mpirun, or with "
               "one rank (-np 1)", c->name, copies);
}

/* This process's rank and the number of copies a launcher started (Open
 * MPI, MPICH's Hydra, a Slurm step), for a command outside MPI; 0 and 1
 * when none did. */
static void launched_copies(int *rank, int *copies)
{
    static const char *vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                    {"PMI_SIZE", "PMI_RANK"},
                                    {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}};
    *rank = 0;
    *copies = 1;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *size = getenv(vars[i][0]), *me = getenv(vars[i][1]);
        if (size && atoi(size) > 1) {
            *copies = atoi(size);
            *rank = me ? atoi(me) : 0;
            return;
        }
    }
}

/* A launcher of another MPI library than the engine's starts each of its
 * N copies as a world of one rank (tester 16 and 18: the copies then met
 * at one file, "File exists"): the launcher's own variables say N. */
static void refuse_singletons(void)
{
    int size, copy, copies;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    launched_copies(&copy, &copies);
    if (size != 1 || copies <= 1)
        return;
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(library, &len);
    library[strcspn(library, ",\n")] = 0; /* "Open MPI v4.1.4", "MPICH Version:<TAB>4.0.2" */
    for (char *t = library; *t; t++)
        if (*t == '\t')
            *t = ' ';
    if (copy != 0)
        fail_exit(EXIT_USAGE, 0, "%s", ""); /* the first copy says it, once */
    fail_usage("%d copies were started as %d separate one-rank worlds: the launcher is not of %s, the "
               "MPI library this engine is built with: launch it with that library's mpirun or "
               "mpiexec (pario run --mpi chooses the engine's build)", copies, copies, library);
}

/* The entry point of a checkable command, for `pario-engine check`. */
static int run_checkable(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0 && commands[i].checkable) {
            int rank, planned;
            engine_world(&rank, &planned); /* the plan's rank count */
            refuse_copies(&commands[i], rank, planned);
            return commands[i].run(argc, argv);
        }
    return -1;
}

static int check_command(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "pario-engine: error: check reads its command lines from standard input "
                        "(RANKS<TAB>COMMAND<TAB>ARGS... per line): give no arguments\n");
        return EXIT_USAGE;
    }
    return check_mode_serve(run_checkable);
}

static void usage(void)
{
    printf("pario-engine %s: parallel I/O measurements\n\n", PARIO_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %s\n", commands[i].usage);
    printf("  pario-engine version\n\n'pario-engine COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
    /* A reader that leaves early (`| head`) must not kill a rank before it
     * removes its files: a failed write to stdout is simply lost. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage();
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("pario-engine %s\n", PARIO_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const engine_command *c = &commands[i];
        if (strcmp(cmd, c->name) != 0)
            continue;
        if (!c->mpi) {
            int rank, copies;
            launched_copies(&rank, &copies);
            refuse_copies(c, rank, copies);
            owned_files_remove_on_signal();
            return c->run(argc - 1, argv + 1);
        }
        MPI_Init(&argc, &argv);
        owned_files_remove_on_signal(); /* after MPI_Init: the handler is ours */
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fail_set_mpi(rank);
        refuse_singletons();
        int status = c->run(argc - 1, argv + 1);
        MPI_Finalize();
        return status;
    }
    char names[512] = "";
    for (size_t i = 0; i < NCOMMANDS; i++) {
        strcat(names, commands[i].name);
        strcat(names, ", ");
    }
    fprintf(stderr, "pario-engine: error: unknown command '%s': use %sor version\n", cmd, names);
    return EXIT_USAGE;
}
