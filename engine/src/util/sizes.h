/* Sizes as users write them: "4k", "64K", "1m", "2g", "1t" (powers of 1024),
 * or plain bytes.  Zero, negative, fractional and overflowing values are
 * refused. */
#ifndef PARIO_SIZES_H
#define PARIO_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0 and sets *out, or -1 with a reason in why. */
int size_parse(const char *text, uint64_t *out, const char **why);

/* "1 MiB", "64 KiB", "1000 B": the shortest exact form, for summaries. */
void size_format(uint64_t bytes, char *buf, size_t len);

/* "23.5 GiB": one decimal, for sizes that are not exact (memory, free space). */
void size_approx(uint64_t bytes, char *buf, size_t len);

/* A measured rate (or any positive quantity) with one decimal, or with
 * two significant digits where one decimal would print a non-zero value
 * as 0.0 ("0.0061" MiB/s for a 64-byte run): a rate shown as zero says
 * nothing.  pario's tables follow the same rule (pario.units.format_value). */
void rate_format(double value, char *buf, size_t len);

/* Positive integer (counts, ranks, iterations); same contract. */
int count_parse(const char *text, uint64_t *out, const char **why);

#endif
