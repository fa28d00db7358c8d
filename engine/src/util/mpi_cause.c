#include "mpi_cause.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "library_lines.h"
#include "mpiio_env.h"

int mpi_cause(int rc, int sys)
{
    if (rc == MPI_SUCCESS)
        return 0;
    const int e = library_lines_reason(mpiio_errno_after(rc, sys));
    return e ? e : EIO;
}

void mpi_cause_text(int rc, int e, char *out, size_t len)
{
    if (e != EIO || rc == MPI_SUCCESS) {
        snprintf(out, len, "%s", strerror(e));
        return;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, msg, &n) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    /* MPI's texts can end in newlines or run over several lines */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    n = (int)strlen(msg);
    while (n > 0 && msg[n - 1] == ' ')
        msg[--n] = 0;
    snprintf(out, len, "%s", msg);
}
