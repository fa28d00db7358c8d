/* MPI-IO failures as pario's one line, agreed by every rank.
 *
 * Every file is opened with MPI_ERRORS_RETURN, so a failed call returns
 * instead of aborting the job; the failing rank keeps the library's own
 * text (MPI_Error_string) in its `why`.  Before the next collective step
 * all ranks ask mpi_first_failure, so a rank that failed alone never
 * leaves the others waiting in a collective: they all stop together and
 * exactly one line is printed, by the lowest failing rank. */
#ifndef PARIO_MPI_FAIL_H
#define PARIO_MPI_FAIL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct mpi_why {
    char text[512]; /* empty while nothing failed on this rank */
} mpi_why;

/* Record the first failure: when rc is not MPI_SUCCESS, "<what>: <MPI's
 * text>" goes into w (unless a failure is already there).  Returns true on
 * failure. */
bool mpi_failed(int rc, mpi_why *w, const char *what_fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record a failure that is not an MPI return code (allocation, data). */
void mpi_why_set(mpi_why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collective: the lowest rank with a failure recorded, or -1 for none. */
int mpi_first_failure(const mpi_why *w, MPI_Comm comm);

/* Collective: when any rank failed, run cleanup (may be NULL) on every
 * rank, print the lowest failing rank's line and exit 3 everywhere. */
void mpi_stop_if_failed(const mpi_why *w, MPI_Comm comm, void (*cleanup)(void *), void *arg);

#endif
