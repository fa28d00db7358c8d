/* The NHT-1 / BTIO checkpoint file: every dump of u in serial (Fortran)
 * order, one file.  The writer is used inside BT's timed loop; the reader
 * is the report's serial post-processing program. */
#ifndef PARIO_BTIO_H
#define PARIO_BTIO_H

#include <stdio.h>

#include "bt.h"

/* posix mode: one pwrite per contiguous (j,k) row of 40*n bytes, for the
 * planes this rank owns; together the ranks write the whole dump.
 * Returns 0 or an errno value. */
int btio_write_dump_rows(int fd, const bt_problem *p, int dump);

/* Read `dumps` dumps of an n^3 grid from path, one at a time; the mean over
 * dumps of the RMS error norm goes to xce_mean.  With diag, print the
 * diagonal u(m,i,i,i) of every dump there.  Returns 0, or -1 with why set. */
int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], FILE *diag,
                    char *why, size_t why_len);

#endif
