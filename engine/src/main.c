/* pario-engine: the measuring half of pario.  One binary, subcommands. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "util/fail.h"
#include "version.h"

int io_command(int argc, char **argv);
int verify_command(int argc, char **argv);
int bt_command(int argc, char **argv);
int verify_bt_command(int argc, char **argv);
int bonnie_command(int argc, char **argv);
int perf_command(int argc, char **argv);
int laplace_command(int argc, char **argv);
int verify_laplace_command(int argc, char **argv);
int flashio_command(int argc, char **argv);
int beff_command(int argc, char **argv);

static void usage(void)
{
    printf("pario-engine %s: parallel I/O measurements\n"
           "\n"
           "  mpirun -np P pario-engine io --dir DIR --layout L --block B --size S ...\n"
           "  pario-engine verify --file FILE --seed S\n"
           "  pario-engine bt --class S|W|A|B|C [--io posix --dir DIR]\n"
           "  pario-engine verify-bt FILE --class C\n"
           "  pario-engine bonnie --dir DIR [--size S --chunk 8k|64k]\n"
           "  mpirun -np P pario-engine perf --dir DIR [--size 4m]\n"
           "  mpirun -np P pario-engine laplace --dir DIR [--grid 8001 --cb enable|disable]\n"
           "  pario-engine verify-laplace FILE --grid N --iterations K\n"
           "  mpirun -np P pario-engine flashio --dir DIR [--transfer collective]\n"
           "  mpirun -np P pario-engine beff --dir DIR -T SECONDS\n"
           "  pario-engine version\n"
           "\n"
           "'pario-engine COMMAND --help' describes each command.\n",
           PARIO_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage();
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("pario-engine %s\n", PARIO_VERSION);
        return 0;
    }
    if (strcmp(cmd, "verify") == 0)
        return verify_command(argc - 1, argv + 1); /* one process, no MPI */
    if (strcmp(cmd, "verify-bt") == 0)
        return verify_bt_command(argc - 1, argv + 1); /* the serial post-processor */
    if (strcmp(cmd, "verify-laplace") == 0)
        return verify_laplace_command(argc - 1, argv + 1); /* the serial reader */
    if (strcmp(cmd, "bonnie") == 0)
        return bonnie_command(argc - 1, argv + 1); /* one process that forks seekers: no MPI */
    int (*mpi_command)(int, char **) = strcmp(cmd, "io") == 0   ? io_command
                                       : strcmp(cmd, "bt") == 0 ? bt_command
                                       : strcmp(cmd, "perf") == 0 ? perf_command
                                       : strcmp(cmd, "laplace") == 0 ? laplace_command
                                       : strcmp(cmd, "flashio") == 0 ? flashio_command
                                       : strcmp(cmd, "beff") == 0 ? beff_command
                                                                : NULL;
    if (mpi_command) {
        MPI_Init(&argc, &argv);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fail_set_mpi(rank);
        int status = mpi_command(argc - 1, argv + 1);
        MPI_Finalize();
        return status;
    }
    fprintf(stderr, "pario-engine: error: unknown command '%s': use io, bt, bonnie, perf, laplace, verify-laplace, flashio, beff, verify, verify-bt or version\n", cmd);
    return EXIT_USAGE;
}
