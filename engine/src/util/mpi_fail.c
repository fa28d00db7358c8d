#include "mpi_fail.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "disk_full.h"
#include "fail.h"
#include "library_lines.h"
#include "mpi_cause.h"

/* "<what>: <cause>" into w, with the cause's errno. */
static void record(mpi_why *w, int e, int rc, const char *what_fmt, va_list ap)
{
    char what[256], msg[MPI_MAX_ERROR_STRING];
    vsnprintf(what, sizeof what, what_fmt, ap);
    mpi_cause_text(rc, e, msg, sizeof msg);
    snprintf(w->text, sizeof w->text, "%s: %s", what, msg);
    w->err = e;
}

bool mpi_failed(int rc, mpi_why *w, const char *what_fmt, ...)
{
    const int sys = errno; /* before anything here can change it */
    if (rc == MPI_SUCCESS)
        return false;
    if (w->text[0])
        return true;
    const int e = mpi_cause(rc, sys);
    va_list ap;
    va_start(ap, what_fmt);
    record(w, e, rc, what_fmt, ap);
    va_end(ap);
    return true;
}

void mpi_why_short_write(mpi_why *w, uint64_t rest, const char *what_fmt, ...)
{
    if (w->text[0])
        return;
    const int e = library_lines_reason(disk_short_write_errno(w->dir ? w->dir : ".", rest));
    va_list ap;
    va_start(ap, what_fmt);
    record(w, e, MPI_SUCCESS, what_fmt, ap);
    va_end(ap);
}

void mpi_why_errno(mpi_why *w, int e, const char *what_fmt, ...)
{
    if (w->text[0])
        return;
    va_list ap;
    va_start(ap, what_fmt);
    record(w, e, MPI_SUCCESS, what_fmt, ap);
    va_end(ap);
}

void mpi_why_set(mpi_why *w, const char *fmt, ...)
{
    if (w->text[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text, sizeof w->text, fmt, ap);
    va_end(ap);
}

int mpi_first_failure(const mpi_why *w, MPI_Comm comm)
{
    int rank, mine, first;
    MPI_Comm_rank(comm, &rank);
    mine = w->text[0] ? rank : INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    return first == INT_MAX ? -1 : first;
}

static char left_behind[4400]; /* this rank's cleanup could not remove a file */

void mpi_fail_left_behind(const char *path, int e)
{
    char what[4200];
    snprintf(what, sizeof what, "%s is", path);
    mpi_fail_left_behind_as(what, e);
}

void mpi_fail_left_behind_as(const char *what_is, int e)
{
    const size_t n = strlen(what_is);
    const bool many = n > 4 && strcmp(what_is + n - 4, " are") == 0; /* its verb, not a path's words */
    snprintf(left_behind, sizeof left_behind, "; %s left behind (%s): remove %s when %s", what_is,
             strerror(e), many ? "them" : "it", e == EROFS ? "the file system is writable again" : "that is fixed");
}

const char *mpi_fail_left_behind_agree(MPI_Comm comm)
{
    /* the failing rank's line also names what a cleanup on another rank left */
    int rank;
    MPI_Comm_rank(comm, &rank);
    int mine = left_behind[0] ? rank : INT_MAX, from;
    MPI_Allreduce(&mine, &from, 1, MPI_INT, MPI_MIN, comm);
    if (from != INT_MAX)
        MPI_Bcast(left_behind, sizeof left_behind, MPI_CHAR, from, comm);
    return left_behind;
}

void mpi_stop_if_failed(const mpi_why *w, MPI_Comm comm, void (*cleanup)(void *), void *arg)
{
    int first = mpi_first_failure(w, comm), rank;
    if (first < 0)
        return;
    MPI_Comm_rank(comm, &rank);
    if (cleanup)
        cleanup(arg);
    mpi_fail_left_behind_agree(comm);
    char fix[4200];
    disk_full_fix(w->err, w->dir, w->shrink, fix, sizeof fix);
    fail_exit(EXIT_RUN_FAILED, rank == first, "rank %d: %s%s%s", rank, w->text, fix, left_behind);
}
