/* Minimal assertions for the engine's unit tests: count failures, print
 * each with its line, exit non-zero if any failed. */
#ifndef PARIO_CHECK_H
#define PARIO_CHECK_H

#include <stdio.h>

static int check_failures = 0, check_count = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        check_count++;                                                                 \
        if (!(cond)) {                                                                 \
            check_failures++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

#define CHECK_DONE()                                                                   \
    do {                                                                               \
        printf("%d checks, %d failed\n", check_count, check_failures);                 \
        return check_failures ? 1 : 0;                                                 \
    } while (0)

#endif
