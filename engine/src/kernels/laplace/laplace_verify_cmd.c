/* `pario-engine verify-laplace FILE --grid N --iterations K`: the serial
 * reader.  It solves the same problem alone, K sweeps on one block, and
 * compares the checkpoint with that grid value by value: Jacobi adds the
 * same four numbers in the same order however the rows were split, so the
 * file must match exactly. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../util/fail.h"
#include "../../util/input_file.h"
#include "../../util/options.h"
#include "laplace.h"

enum { O_GRID, O_ITER };
static const option_spec verify_option_table[] = {
    {"grid", 0, "N", "the checkpoint's grid is N×N (as laplace --grid)", O_GRID},
    {"iterations", 0, "K", "the Jacobi sweeps before it", O_ITER},
};
static const command_spec verify_command_spec = {
    "verify-laplace",
    "usage: pario-engine verify-laplace FILE --grid N --iterations K\n"
    "  recompute K Jacobi sweeps serially and compare the checkpoint FILE exactly\n",
    NULL, verify_option_table, sizeof verify_option_table / sizeof verify_option_table[0], 1};

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    int *grid_iterations = ctx;
    grid_iterations[id] = (int)(id == O_GRID ? option_whole(opt, v, 3, 100000)
                                             : option_whole(opt, v, 1, 10000000));
}

int verify_laplace_command(int argc, char **argv)
{
    int gi[2] = {0, 0};
    const int first = options_parse(&verify_command_spec, argc, argv, 0, set_option, gi);
    const int grid = gi[O_GRID], iterations = gi[O_ITER];
    if (first != argc - 1 || !grid || !iterations)
        fail_usage("give one checkpoint FILE, --grid N and --iterations K (the sweeps before it)");
    const char *path = argv[first];
    struct stat st;
    const int fd = input_file_open(path, &st); /* a FIFO is refused, never waited on */
    if (fd < 0)
        fail_usage("%s %s: give the checkpoint laplace --keep wrote", path, input_file_reason(-fd));
    FILE *f = fdopen(fd, "rb");
    if (!f)
        fail_usage("cannot read %s: %s", path, strerror(errno));
    /* A size that no N×N grid of this --grid makes is bad input, as
     * verify-bt treats it: exit 3 stays for values that differ. */
    const off_t want = (off_t)grid * grid * (off_t)sizeof(double);
    if (st.st_size != want)
        fail_usage("%s holds %lld bytes; a %d×%d checkpoint holds %lld: give the --grid it was "
                   "written with, or a complete checkpoint",
                   path, (long long)st.st_size, grid, grid, (long long)want);
    laplace_block b;
    if (laplace_block_init(&b, grid, 0, grid) != 0)
        fail_usage("cannot allocate a %d×%d grid for the serial solve", grid, grid);
    double residual = 0;
    for (int it = 0; it < iterations; it++)
        residual = laplace_sweep(&b);
    double *row = malloc(sizeof(double) * (size_t)grid), worst = 0;
    long long differing = 0;
    int first_bad = -1;
    for (int i = 0; i < grid; i++) {
        if (fread(row, sizeof(double), (size_t)grid, f) != (size_t)grid)
            fail_exit(EXIT_RUN_FAILED, 1, "%s: short read at row %d", path, i);
        const double *ref = laplace_at(&b, b.u, i, 0);
        for (int j = 0; j < grid; j++)
            if (row[j] != ref[j]) {
                differing++;
                worst = fmax(worst, fabs(row[j] - ref[j]));
                if (first_bad < 0)
                    first_bad = i;
            }
    }
    fclose(f);
    free(row);
    laplace_block_free(&b);
    if (differing)
        fail_exit(EXIT_RUN_FAILED, 1, "%s differs from the serial solve in %lld value%s (first in row %d, "
                  "largest difference %.3e)", path, differing, differing == 1 ? "" : "s", first_bad, worst);
    printf("verify-laplace: %s equals the serial solve after %d sweeps on %d×%d (residual %.6e)\n",
           path, iterations, grid, grid, residual);
    return 0;
}
