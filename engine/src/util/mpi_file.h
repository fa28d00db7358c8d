/* Shared files through MPI-IO that pario creates itself: a name no file
 * has (rank 0's pid and time, shared by all ranks), created with
 * MPI_MODE_CREATE|MPI_MODE_EXCL (never an existing file, never through a
 * symlink), errors returned rather than fatal.  Only a file created this
 * way is ever deleted. */
#ifndef PARIO_MPI_FILE_H
#define PARIO_MPI_FILE_H

#include <mpi.h>
#include <stddef.h>

#include "mpi_fail.h"

/* DIR/PREFIX.<pid>.<time>[SUFFIX], the same on every rank (collective). */
void mpi_file_unique_path(MPI_Comm comm, const char *dir, const char *prefix, const char *suffix,
                          char *out, size_t len);

/* Collective: create path exclusively and open it read-write.  Returns
 * MPI_SUCCESS or the error (recorded in w). */
int mpi_file_create(MPI_Comm comm, const char *path, MPI_Info info, MPI_File *fh, mpi_why *w);

/* Collective open of a file this run created (amode without CREATE). */
int mpi_file_reopen(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh, mpi_why *w);

#endif
