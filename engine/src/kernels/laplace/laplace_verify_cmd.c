/* `pario-engine verify-laplace FILE --grid N --iterations K`: the serial
 * reader.  It solves the same problem alone, K sweeps on one block, and
 * compares the checkpoint with that grid value by value: Jacobi adds the
 * same four numbers in the same order however the rows were split, so the
 * file must match exactly. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../util/fail.h"
#include "laplace.h"

static int whole(const char *opt, const char *text, long lo, long hi)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || !*text || v < lo || v > hi)
        fail_usage("--%s '%s' must be a whole number from %ld to %ld", opt, text, lo, hi);
    return (int)v;
}

int verify_laplace_command(int argc, char **argv)
{
    enum { O_GRID = 1000, O_ITER, O_HELP };
    static const struct option opts[] = {{"grid", required_argument, 0, O_GRID},
                                         {"iterations", required_argument, 0, O_ITER},
                                         {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    int grid = 0, iterations = 0, c, which = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        switch (c) {
        case O_GRID: grid = whole("grid", optarg, 3, 100000); break;
        case O_ITER: iterations = whole("iterations", optarg, 1, 10000000); break;
        case O_HELP:
            printf("usage: pario-engine verify-laplace FILE --grid N --iterations K\n"
                   "  recompute K Jacobi sweeps serially and compare the checkpoint FILE exactly\n");
            return 0;
        case ':': fail_usage("%s needs a value: see pario-engine verify-laplace --help", argv[optind - 1]);
        default: fail_usage("unknown option '%s': see pario-engine verify-laplace --help", argv[optind - 1]);
        }
    }
    if (optind != argc - 1 || !grid || !iterations)
        fail_usage("give one checkpoint FILE, --grid N and --iterations K (the sweeps before it)");
    const char *path = argv[optind];
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0)
        fail_usage("cannot open %s: %s", path, strerror(errno));
    const off_t want = (off_t)grid * grid * (off_t)sizeof(double);
    if (st.st_size != want)
        fail_exit(EXIT_RUN_FAILED, 1, "%s holds %lld bytes; a %d×%d checkpoint holds %lld",
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
        fail_exit(EXIT_RUN_FAILED, 1, "%s differs from the serial solve in %lld values (first in row %d, "
                  "largest difference %.3e)", path, differing, first_bad, worst);
    printf("verify-laplace: %s equals the serial solve after %d sweeps on %d×%d (residual %.6e)\n",
           path, iterations, grid, grid, residual);
    return 0;
}
