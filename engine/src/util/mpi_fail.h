/* MPI-IO failures as pario's one line, agreed by every rank.
 *
 * Every file is opened with MPI_ERRORS_RETURN, so a failed call returns
 * instead of aborting the job; the failing rank keeps "<what>: <cause>" in
 * its `why`, where the cause is the errno the io command's mpiio backend
 * would name: the MPI error's class or text (mpiio_errno), errno after the
 * call, or the line the library printed while the file was open
 * (library_lines.h); a write that moved less than asked is named from the
 * file system's free space (disk_full.h).  Only when none of them names a
 * cause does MPI's own text stand.  Before the next collective step all
 * ranks ask mpi_first_failure, so a rank that failed alone never leaves the
 * others waiting in a collective: they all stop together and exactly one
 * line is printed, by the lowest failing rank, with the fix for a full
 * disk: "free space on DIR or lower OPTION". */
#ifndef PARIO_MPI_FAIL_H
#define PARIO_MPI_FAIL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi_cause.h"

typedef struct mpi_why {
    char text[512];      /* empty while nothing failed on this rank */
    int err;             /* the cause as an errno value, 0 when MPI's text is all there is */
    const char *dir;     /* where the command's files go: named in a full disk's fix */
    const char *shrink;  /* the option that writes less, e.g. "--size" */
} mpi_why;

/* A `why` for a command writing into dir, whose option `shrink` (a string
 * literal) makes it write less. */
#define MPI_WHY_FOR(d, opt) ((mpi_why){.dir = (d), .shrink = (opt)})

/* Record the first failure: when rc is not MPI_SUCCESS, "<what>: <cause>"
 * goes into w (unless a failure is already there).  Call it right after
 * the MPI call, with errno as the call left it.  Returns true on failure. */
bool mpi_failed(int rc, mpi_why *w, const char *what_fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record a write that moved `rest` bytes less than asked while the library
 * said success: "<what>: No space left on device" when they no longer fit
 * in w->dir's file system (or the library's held line says why). */
void mpi_why_short_write(mpi_why *w, uint64_t rest, const char *what_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record a failure whose cause is the errno value e: "<what>: strerror(e)". */
void mpi_why_errno(mpi_why *w, int e, const char *what_fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record a failure that is not an MPI return code (allocation, data). */
void mpi_why_set(mpi_why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collective: the lowest rank with a failure recorded, or -1 for none. */
int mpi_first_failure(const mpi_why *w, MPI_Comm comm);

/* Collective: when any rank failed, run cleanup (may be NULL) on every
 * rank, print the lowest failing rank's line and exit 3 everywhere. */
void mpi_stop_if_failed(const mpi_why *w, MPI_Comm comm, void (*cleanup)(void *), void *arg);

/* For a cleanup: the file at path (this run's own) could not be removed
 * (errno e, e.g. the file system turned read-only): mpi_stop_if_failed's
 * line then says it is left behind, whichever rank failed first. */
void mpi_fail_left_behind(const char *path, int e);

/* The same of what is not a file: what_is "the objects under s3://B/P at
 * E are" (an object store's), said as it is. */
void mpi_fail_left_behind_as(const char *what_is, int e);

/* Collective, after the cleanups: "; PATH is left behind (...): remove it
 * when ..." as the lowest rank whose cleanup left a file recorded it, on
 * every rank, or "" when nothing was left. */
const char *mpi_fail_left_behind_agree(MPI_Comm comm);

#endif
