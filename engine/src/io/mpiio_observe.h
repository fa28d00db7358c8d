/* What an MPI-IO library did, observed by the engine: per rank and phase
 * the write and read system calls and their bytes (/proc/self/io) and the
 * byte-range lock requests (lock_count.h), and for the result which
 * implementation served the files (the mca_io_* objects loaded), the hints
 * asked for, what MPI_File_get_info returned (recorded, never trusted: Open
 * MPI echoes hints it did not take) and whether atomic mode was honoured,
 * judged by the locks the library took.  Shared by mpiio and hdf5. */
#ifndef PARIO_MPIIO_OBSERVE_H
#define PARIO_MPIIO_OBSERVE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "../util/json.h"
#include "../util/proc_io.h"
#include "../util/mpiio_env.h"

/* Per rank and phase, in this order (the backend's observed_names). */
extern const char *const mpiio_observed_names[];
#define MPIIO_OBSERVED_NAMES mpiio_observed_names
enum { MPIIO_OBS_WRITE_CALLS, MPIIO_OBS_WRITE_BYTES, MPIIO_OBS_READ_CALLS, MPIIO_OBS_READ_BYTES,
       MPIIO_OBS_LOCK_CALLS, MPIIO_OBS_COUNT };

typedef struct mpiio_probe {
    proc_io io0;
    uint64_t locks0, locks_io;
    double *out; /* MPIIO_OBS_COUNT numbers, or NULL */
} mpiio_probe;

/* Around an open ... close.  System calls are counted from before the
 * open to after the close; lock requests only between the end of the open
 * and the start of the close, i.e. around the accesses (a library may
 * take a lock of its own while opening: OMPIO does, atomic or not).
 *   start     before MPI_File_open / H5Fcreate
 *   opened    after the file is open (and atomicity set)
 *   closing   before MPI_File_close / H5Fclose
 *   stop      after it; with atomic, also sums the access locks over comm
 *             (one small reduction) for the verdict in describe. */
void mpiio_probe_start(mpiio_probe *p, double *out);
void mpiio_probe_opened(mpiio_probe *p);
void mpiio_probe_closing(mpiio_probe *p);
void mpiio_probe_stop(mpiio_probe *p, MPI_Comm comm, bool atomic);

/* The run's settings once resolved by mpiio_settings_apply (one run per
 * process): what every open uses and what the result reports. */
void mpiio_observe_settings(const mpiio_settings *s);
const mpiio_settings *mpiio_run_settings(void);

/* Run facts, kept for the result (rank 0's are the ones written). */
void mpiio_observe_open(MPI_File fh);
void mpiio_observe_view(const char *shape);

/* Into the backend's object of the result document. */
void mpiio_observe_describe(json *j, bool atomic);
/* The warning when atomic mode was asked and no lock was seen, else NULL
 * (backend_ops.caveat of mpiio and hdf5); `collective` names the fix when
 * ROMIO's collective path is what took no lock. */
const char *mpiio_observe_caveat(bool atomic, bool collective);

#endif
