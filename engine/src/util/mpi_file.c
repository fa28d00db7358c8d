#include "mpi_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void mpi_file_unique_path(MPI_Comm comm, const char *dir, const char *prefix, const char *suffix,
                          char *out, size_t len)
{
    long stamp[2] = {(long)getpid(), (long)time(NULL)};
    MPI_Bcast(stamp, 2, MPI_LONG, 0, comm);
    snprintf(out, len, "%s/%s.%ld.%ld%s", dir, prefix, stamp[0], stamp[1], suffix ? suffix : "");
}

int mpi_file_create(MPI_Comm comm, const char *path, MPI_Info info, MPI_File *fh, mpi_why *w)
{
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN); /* the default for new files */
    int rc = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info, fh);
    mpi_failed(rc, w, "creating %s", path);
    return rc;
}

int mpi_file_reopen(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh, mpi_why *w)
{
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int rc = MPI_File_open(comm, path, amode, info, fh);
    mpi_failed(rc, w, "opening %s", path);
    return rc;
}
