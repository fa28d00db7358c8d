/* The lines an MPI-IO library prints about its own failures, held while
 * any of this process's files through it is open: the io command's mpiio
 * and hdf5 backends, and the MPI-IO and HDF5 kernels (mpi_file.h, flashio).
 *
 * Open MPI's ompio reports a failed write by printing it ("mca_fbtl_posix_
 * pwritev: error in (p)write(v):No space left on device", once per call)
 * and returns a bare error or a short count.  While such a file is open
 * this process's stderr is held (stderr_capture.h): a failed call takes its
 * errno from the library's line, so pario's one line names the cause, and
 * the held lines are dropped; after a run without failure they are passed
 * on unchanged at the last close. */
#ifndef PARIO_LIBRARY_LINES_H
#define PARIO_LIBRARY_LINES_H

/* Before opening a file through the library. */
void library_lines_hold(void);

/* A call's errno (0: it worked), or the one the library's held line
 * names; marks the held lines as explained by pario's own. */
int library_lines_reason(int e);

/* For a call the library may report as done although it failed (ompio's
 * collective write prints "error in (p)write(v): No space left on device"
 * on the aggregator and returns success): e when it is an error, else the
 * errno a line printed since the last look names, else 0.  One fstat a
 * call: for collective calls, not per block. */
int library_lines_after(int e);

/* After closing a file: at the last one, stderr is given back. */
void library_lines_release(void);

/* The same, for a file dropped after a failure on some rank: what the
 * library said about it is explained by the run's one line, so dropped. */
void library_lines_release_failed(void);

/* Give stderr back now, whatever is still open: before pario prints its
 * own error line and exits (fail.h), which must reach the real stderr. */
void library_lines_give_back(void);

#endif
