#include "mpi_fail.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fail.h"

bool mpi_failed(int rc, mpi_why *w, const char *what_fmt, ...)
{
    if (rc == MPI_SUCCESS)
        return false;
    if (w->text[0])
        return true;
    char what[256], msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    va_list ap;
    va_start(ap, what_fmt);
    vsnprintf(what, sizeof what, what_fmt, ap);
    va_end(ap);
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    /* MPI's texts can end in newlines or run over several lines */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    while (len > 0 && msg[len - 1] == ' ')
        msg[--len] = 0;
    snprintf(w->text, sizeof w->text, "%s: %s", what, msg);
    return true;
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

void mpi_stop_if_failed(const mpi_why *w, MPI_Comm comm, void (*cleanup)(void *), void *arg)
{
    int first = mpi_first_failure(w, comm), rank;
    if (first < 0)
        return;
    MPI_Comm_rank(comm, &rank);
    if (cleanup)
        cleanup(arg);
    fail_exit(EXIT_RUN_FAILED, rank == first, "rank %d: %s", rank, w->text);
}
