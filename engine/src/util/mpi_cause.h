/* The cause of a failed MPI-IO call, by one rule for the io command's
 * mpiio backend and every MPI-IO kernel: the MPI error's class or text
 * (mpiio_errno), errno as the call left it (ROMIO leaves a full disk's
 * ENOSPC there behind a bare MPI_ERR_IO), or the line the library printed
 * while the file was open (library_lines.h).  Only when none of them names
 * a cause does MPI's own text stand. */
#ifndef PARIO_MPI_CAUSE_H
#define PARIO_MPI_CAUSE_H

#include <stddef.h>

/* rc's cause as an errno value (sys: errno after the call): 0 for
 * MPI_SUCCESS, EIO when nothing names a better one.  Marks the library's
 * held lines as explained. */
int mpi_cause(int rc, int sys);

/* The cause's text: strerror(e), or MPI's own text for rc when e is the
 * bare EIO (on one line). */
void mpi_cause_text(int rc, int e, char *out, size_t len);

#endif
