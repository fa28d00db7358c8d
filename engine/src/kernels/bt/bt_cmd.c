/* `pario-engine bt`: run BT (NPB timing: one untimed warm-up step, then
 * the timed steps) and verify it against NPB's reference norms. */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/clock.h"
#include "../../util/fail.h"
#include "../../util/json.h"
#include "../../version.h"
#include "bt.h"

#define BT_EPSILON 1.0e-8

static void bt_usage(void)
{
    printf("usage: pario-engine bt --class S|W|A|B|C [--steps N] [--json FILE]\n"
           "\n"
           "  --class C    NPB problem class (grid, steps, dt and reference norms)\n"
           "  --steps N    run N steps instead of the class's (no verification then)\n"
           "  --json FILE  write the result document\n"
           "\n"
           "Runs on one rank for now: the MPI decomposition and the I/O modes of\n"
           "the NHT-1 benchmark are not built yet.\n");
}

int bt_command(int argc, char **argv)
{
    enum { O_CLASS = 1000, O_STEPS, O_JSON, O_HELP };
    static const struct option opts[] = {{"class", required_argument, 0, O_CLASS},
                                         {"steps", required_argument, 0, O_STEPS},
                                         {"json", required_argument, 0, O_JSON},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const bt_class *cls = NULL;
    const char *json_path = NULL;
    long steps = -1;
    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("--%s needs a value: see pario-engine bt --help", opts[which].name);
        switch (c) {
        case O_CLASS:
            if (strlen(optarg) != 1 || !(cls = bt_class_find(optarg[0])))
                fail_usage("--class '%s' is unknown: use S, W, A, B or C", optarg);
            break;
        case O_STEPS: {
            char *end;
            steps = strtol(optarg, &end, 10);
            if (*end || steps <= 0 || steps > 1000000)
                fail_usage("--steps '%s' must be a whole number from 1 to 1000000", optarg);
            break;
        }
        case O_JSON: json_path = optarg; break;
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
    if (!cls)
        fail_usage("--class is required: use S, W, A, B or C");
    if (nranks != 1)
        fail_usage("bt runs on one rank for now (%d were started): the MPI decomposition is not "
                   "built yet; run it without mpirun or with -np 1",
                   nranks);
    const bool verify = steps < 0 || steps == cls->steps;
    if (steps < 0)
        steps = cls->steps;

    bt_problem p;
    if (bt_problem_init(&p, cls->grid, cls->dt) != 0)
        fail_usage("cannot allocate class %c (grid %d^3)", cls->name, cls->grid);
    bt_initialize(&p);
    bt_exact_rhs(&p);
    bt_step(&p); /* NPB's untimed warm-up step, then start again */
    bt_initialize(&p);

    double t0 = clock_now();
    for (long s = 0; s < steps; s++)
        bt_step(&p);
    double seconds = clock_now() - t0;

    double xcr[5], xce[5];
    bt_residual_norm(&p, xcr);
    bt_error_norm(&p, xce);
    bool ok = verify;
    double worst = 0;
    for (int m = 0; m < 5 && verify; m++) {
        double er = fabs(xcr[m] - cls->xcr_ref[m]) / fabs(cls->xcr_ref[m]);
        double ee = fabs(xce[m] - cls->xce_ref[m]) / fabs(cls->xce_ref[m]);
        worst = fmax(worst, fmax(er, ee));
        if (!(er <= BT_EPSILON && ee <= BT_EPSILON))
            ok = false;
    }
    double mops = bt_mops(cls->grid, (int)steps, seconds);

    printf("pario-engine bt: class %c, grid %d^3, %ld steps, dt %g, 1 rank\n", cls->name,
           cls->grid, steps, cls->dt);
    printf("  time %.3f s, %.1f Mop/s (%.1f Mop/s per rank)\n", seconds, mops, mops);
    printf("  %-4s %22s %22s %22s %22s\n", "m", "residual xcr", "reference", "error xce",
           "reference");
    for (int m = 0; m < 5; m++)
        printf("  %-4d %22.13e %22.13e %22.13e %22.13e\n", m + 1, xcr[m], cls->xcr_ref[m], xce[m],
               cls->xce_ref[m]);
    if (verify)
        printf("  verification %s (largest relative difference %.2e, tolerance %.0e)\n",
               ok ? "SUCCESSFUL" : "UNSUCCESSFUL", worst, BT_EPSILON);
    else
        printf("  verification not performed: --steps differs from the class's %d\n", cls->steps);

    if (json_path) {
        json j;
        json_init(&j, true);
        json_object_begin(&j, NULL);
        json_string(&j, "schema", "pario.result/1");
        json_object_begin(&j, "tool");
        json_string(&j, "name", "pario-engine");
        json_string(&j, "version", PARIO_VERSION);
        json_object_end(&j);
        json_string(&j, "command", "bt");
        json_string(&j, "status", !verify || ok ? "ok" : "failed");
        json_object_begin(&j, "params");
        char name[2] = {cls->name, 0};
        json_string(&j, "class", name);
        json_int(&j, "grid", cls->grid);
        json_int(&j, "steps", steps);
        json_double(&j, "dt", cls->dt);
        json_int(&j, "ranks", nranks);
        json_string(&j, "io", "none");
        json_object_end(&j);
        json_double(&j, "compute_seconds", seconds);
        json_double(&j, "mops", mops);
        json_double(&j, "mops_per_rank", mops / nranks);
        json_object_begin(&j, "verification");
        json_bool(&j, "performed", verify);
        json_bool(&j, "ok", ok);
        json_double(&j, "largest_relative_difference", worst);
        json_array_begin(&j, "xcr");
        for (int m = 0; m < 5; m++)
            json_double(&j, NULL, xcr[m]);
        json_array_end(&j);
        json_array_begin(&j, "xce");
        for (int m = 0; m < 5; m++)
            json_double(&j, NULL, xce[m]);
        json_array_end(&j);
        json_object_end(&j);
        json_array_begin(&j, "warnings");
        json_array_end(&j);
        json_object_end(&j);
        json_save(&j, json_path);
        json_free(&j);
    }
    bt_problem_free(&p);
    return verify && !ok ? EXIT_RUN_FAILED : 0;
}
