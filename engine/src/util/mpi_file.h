/* Shared files through MPI-IO that pario creates itself: a name no file
 * has (rank 0's pid and time, shared by all ranks), created by rank 0
 * with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file, never through a
 * symlink; create_exclusive) before MPI opens it, its identity noted at
 * once, errors returned rather than fatal.
 * Only a file created this way, and still the same file, is ever reopened
 * or deleted (remove_if_ours). */
#ifndef PARIO_MPI_FILE_H
#define PARIO_MPI_FILE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "mpi_fail.h"
#include "safe_file.h"

/* DIR/NAME[SUFFIX] when name (--name) is given, else
 * DIR/PREFIX.<pid>.<time>[SUFFIX], the same on every rank (collective;
 * run_files.h). */
void mpi_file_unique_path(MPI_Comm comm, const char *dir, const char *name, const char *prefix,
                          const char *suffix, char *out, size_t len);

/* Files opened here hold the MPI library's own lines until mpi_file_close
 * (library_lines.h), so a failed call is named by the cause the library
 * printed, and nothing but pario's one line reaches the user. */

/* Collective: create path exclusively and open it read-write, and note
 * on every rank which file that is (who), so it is the only file later
 * reopened or removed under that name.  Returns MPI_SUCCESS or the error
 * (recorded in w). */
int mpi_file_create(MPI_Comm comm, const char *path, MPI_Info info, MPI_File *fh, owned_file *who,
                    mpi_why *w);

/* Collective, right after mpi_file_create: when no rank opened the file,
 * the run has not started: a file rank 0 created before the open failed
 * is removed (path, who), the lowest failing rank prints why (and what
 * could not be removed) and all exit 2 (bad input: a taken --name in
 * run_files.h's words, else a --dir to check).  Otherwise returns whether
 * the file was opened (a later failure is the run's: mpi_stop_if_failed). */
bool mpi_file_create_agree(const mpi_why *w, bool created, MPI_Comm comm, const char *path,
                           owned_file *who);

/* Collective open of a file this run created (amode without CREATE): only
 * while every rank finds the file it noted under the name, before and after
 * MPI_File_open (MPI-IO would follow a symlink planted there, and opens by
 * name some time into the call); otherwise the file is closed untouched,
 * the ranks that saw the change record why, and all return an error.
 * Costs two lstat calls and two one-integer reductions. */
int mpi_file_reopen(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh,
                    const owned_file *who, mpi_why *w);

/* Collective: close a file opened by mpi_file_create or mpi_file_reopen
 * (a failure is recorded in w, and so is a system error the library
 * printed while the file was open) and give the library's lines back at
 * the last close.  Returns MPI_SUCCESS or the error. */
int mpi_file_close(MPI_File *fh, mpi_why *w, const char *path);

#endif
