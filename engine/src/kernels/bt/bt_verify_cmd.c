/* `pario-engine verify-bt`: the NHT-1 report's serial post-processing
 * program.  One process reads the solution file sequentially, prints the
 * diagonal u(m,i,i,i) of every dump, and checks the last dump (the final
 * solution, at any write interval) against NPB's error norm, and with
 * interval 5 the mean error norm over dumps against BTIO's reference.
 * With --ranks P, FILE names per-rank (epio) files FILE.0000..: each dump
 * is reassembled from every rank's cell records first. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../util/fail.h"
#include "../../util/options.h"
#include "bt.h"
#include "btio.h"

/* A file that is missing, not a regular file (a symlink is never
 * followed) or not the size the class's dumps make is bad input: exit 2
 * with what to give instead.  Exit 3 stays for a file whose numbers fail. */
static void check_input(const char *path, unsigned long long want, char cls, int dumps)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        fail_usage("verify-bt: %s: %s: give the file pario-engine bt --keep wrote", path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        fail_usage("verify-bt: %s is a symbolic link: pario reads only regular files; give the file itself",
                   path);
    if (S_ISDIR(st.st_mode))
        fail_usage("verify-bt: %s is a directory: give the solution file bt wrote", path);
    if (!S_ISREG(st.st_mode))
        fail_usage("verify-bt: %s is not a regular file: give the solution file bt wrote", path);
    if (want && (unsigned long long)st.st_size != want)
        fail_usage("verify-bt: %s has %lld bytes, expected %llu (%d dumps of class %c): give the "
                   "--class and --write-interval it was written with, or a complete file",
                   path, (long long)st.st_size, want, dumps, cls);
}

int verify_bt_command(int argc, char **argv)
{
    enum { O_CLASS = 1000, O_INTERVAL, O_QUIET, O_RANKS, O_DECOMP, O_HELP };
    static const struct option opts[] = {{"class", required_argument, 0, O_CLASS},
                                         {"write-interval", required_argument, 0, O_INTERVAL},
                                         {"quiet", no_argument, 0, O_QUIET},
                                         {"ranks", required_argument, 0, O_RANKS},
                                         {"decomposition", required_argument, 0, O_DECOMP},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    const bt_class *cls = NULL;
    int interval = 5;
    bool quiet = false;
    int ranks = 0, layout = -1;
    opterr = 0;
    optind = 1;
    int c, which = 0;
    bool seen[O_HELP - O_CLASS + 1] = {false}; /* valued options given: once each */
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("--%s needs a value: see pario-engine verify-bt --help", opts[which].name);
        if (c >= O_CLASS && c <= O_HELP) {
            char shown[40];
            snprintf(shown, sizeof shown, "--%s", opts[which].name);
            option_given(&seen[c - O_CLASS], shown, optarg != NULL, false, "verify-bt");
        }
        switch (c) {
        case O_CLASS:
            if (strlen(optarg) != 1 || !(cls = bt_class_find(optarg[0])))
                fail_usage("--class '%s' is unknown: use S, W, A, B or C", optarg);
            break;
        case O_INTERVAL: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0)
                fail_usage("--write-interval '%s' must be a whole number of steps, at least 1", optarg);
            interval = (int)v;
            break;
        }
        case O_QUIET: quiet = true; break;
        case O_RANKS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 1 << 20)
                fail_usage("--ranks '%s' must be the number of ranks that wrote the per-rank files", optarg);
            ranks = (int)v;
            break;
        }
        case O_DECOMP:
            if (!strcmp(optarg, "multipartition"))
                layout = BT_MULTIPARTITION;
            else if (!strcmp(optarg, "slabs"))
                layout = BT_SLABS;
            else
                fail_usage("--decomposition '%s' is unknown: use multipartition or slabs", optarg);
            break;
        case O_HELP:
            printf("usage: pario-engine verify-bt FILE --class C [--write-interval I] [--quiet]\n"
                   "       pario-engine verify-bt BASE --ranks P [--decomposition D] --class C ...\n"
                   "         (per-rank files BASE.0000..; D as bt ran: default multipartition on\n"
                   "         a square P, else slabs)\n");
            return 0;
        case ':': fail_usage("%s needs a value: see pario-engine verify-bt --help", argv[optind - 1]);
        default: fail_usage("unknown option '%s': see pario-engine verify-bt --help", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        fail_usage("name exactly one FILE: pario-engine verify-bt FILE --class C");
    if (!cls)
        fail_usage("--class is required: use S, W, A, B or C");
    if (layout >= 0 && !ranks)
        fail_usage("--decomposition says how per-rank files were cut: give --ranks P with it");
    int grid[3];
    if (ranks && layout < 0) /* bt's own default */
        layout = bt_layout_grid(BT_MULTIPARTITION, ranks, grid) ? BT_MULTIPARTITION : BT_SLABS;
    if (ranks && !bt_layout_grid((bt_layout)layout, ranks, grid))
        fail_usage("--decomposition multipartition needs a square --ranks, not %d", ranks);
    const char *path = argv[optind];
    const int dumps = btio_dumps(cls->steps, interval);
    if (ranks)
        for (int r = 0; r < ranks; r++) {
            char part[4200];
            snprintf(part, sizeof part, "%s.%04d", path, r);
            check_input(part, 0, cls->name, dumps);
        }
    else
        check_input(path, 40ULL * cls->grid * cls->grid * cls->grid * (unsigned long long)dumps, cls->name,
                    dumps);
    double xce[5], last[5];
    char why[512];
    int got = ranks ? btio_read_check_per_rank(path, cls->grid, (bt_layout)layout, ranks, dumps, xce,
                                               last, quiet ? NULL : stdout, why, sizeof why)
                    : btio_read_check(path, cls->grid, dumps, xce, last, quiet ? NULL : stdout, why,
                                      sizeof why);
    if (got != 0) {
        fprintf(stderr, "pario-engine: verify-bt: %s\n", why);
        return EXIT_RUN_FAILED;
    }
    printf("mean error norm over %d dumps:\n", dumps);
    double worst = 0;
    for (int m = 0; m < 5; m++) {
        double rel = fabs(xce[m] - cls->btio_xce_ref[m]) / fabs(cls->btio_xce_ref[m]);
        worst = fmax(worst, rel);
        printf("  %d %22.13e  reference %22.13e\n", m + 1, xce[m], cls->btio_xce_ref[m]);
    }
    /* The last dump is the final solution at any interval: NPB's error norm. */
    double last_worst = 0;
    for (int m = 0; m < 5; m++)
        last_worst = fmax(last_worst, fabs(last[m] - cls->xce_ref[m]) / fabs(cls->xce_ref[m]));
    printf("final solution (the last in the file) vs NPB's error norm: largest relative difference %.2e\n",
           last_worst);
    if (interval != 5)
        printf("the mean over dumps has a BTIO reference for --write-interval 5 only: the final "
               "solution decides\n");
    bool ok = last_worst <= 1e-8 && (interval != 5 || worst <= 1e-8);
    worst = interval == 5 ? fmax(worst, last_worst) : last_worst;
    printf("verification %s (largest relative difference %.2e)\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL",
           worst);
    return ok ? 0 : EXIT_RUN_FAILED;
}
