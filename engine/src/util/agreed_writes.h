/* Collective MPI-IO writes whose outcome every rank of the file learns,
 * for the files a library (parallel HDF5) writes for pario.
 *
 * Why: Open MPI's ompio reports a failed collective write (a full disk)
 * only on the aggregator that wrote: it returns an error or a short count
 * there and success on the ranks whose data it carried.  Parallel HDF5
 * 1.10 follows each collective write with more collective calls that it
 * skips on error: the raw data's MPI_File_write_at_all is followed by an
 * MPI_File_set_view that restores the view, and a metadata flush is
 * followed by an MPI_Barrier.  One rank that failed then leaves for its
 * error path while the others wait in the view reset or the barrier
 * forever (seen with 3 and 4 ranks: backend_hdf5.c, flashio).  No call of
 * pario's can sit between HDF5's write and HDF5's next collective.
 *
 * How: pario-engine defines MPI_File_write_at_all itself and exports it
 * (the dynamic list in CMakeLists.txt, as for lock_count.h), so HDF5's
 * calls reach it first; it forwards each call unchanged to
 * PMPI_File_write_at_all (MPI's profiling interface) and then, for a file
 * registered here, agrees over the file's ranks whether any rank's write
 * failed or fell short: if one did, the call fails on EVERY rank
 * (MPI_ERR_IO), so HDF5 takes the same path everywhere: the same error
 * return from H5Dwrite, the same failed flush in H5Fflush/H5Fclose, and no
 * rank waits in a collective the others skipped.  (ROMIO's collective
 * write agrees on its error code itself; the extra agreement costs one
 * small MPI_Allreduce per collective write.)  Files not registered (the
 * mpiio backend's, which agrees in io_run.c) pass straight through.
 *
 * A file whose collective write failed is lost (the run removes it), and
 * ompio's later collectives on it no longer agree either: its aggregator,
 * whose failed write left a request pending, returns from MPI_File_sync at
 * once while the other ranks wait in the sync's barrier (HDF5 still syncs
 * after its metadata write failed: seen with 3 and 4 ranks and --fsync).
 * So MPI_File_sync and MPI_File_set_size (HDF5's flush and truncate) are
 * defined here too: on a registered file that failed they fail at once on
 * every rank without entering the library; otherwise they run and their
 * outcome is agreed like a write's.
 *
 * Only collective writes can be agreed inside the call: a library's
 * independent writes must be collective to be covered, so pario asks HDF5
 * for collective metadata writes (H5Pset_coll_metadata_write) on every
 * file it writes. */
#ifndef PARIO_AGREED_WRITES_H
#define PARIO_AGREED_WRITES_H

#include <mpi.h>
#include <stdbool.h>

/* Collective over comm (the ranks that opened fh): agree on every later
 * collective write to fh.  0, or an errno value (nothing registered). */
int agreed_writes_register(MPI_File fh, MPI_Comm comm);

/* Collective over the file's ranks, after the file was closed: stop. */
void agreed_writes_forget(MPI_File fh);

/* Local: stop agreeing on a file dropped without closing it (backend.h,
 * Failing apart); its communicator is left to the process's exit. */
void agreed_writes_drop(MPI_File fh);

/* true when the agreeing definition is the one the process uses (a static
 * link or a stripped export would silently bypass it). */
bool agreed_writes_active(void);

#endif
