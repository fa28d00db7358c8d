/* MPI-IO settings shared by every backend that goes through MPI-IO (mpiio,
 * and hdf5, whose MPI-IO driver takes the same hints): which MPI-IO
 * implementation runs, the hints asked for, the number of collective
 * buffering aggregators, and the facts a result needs to say what ran.
 *
 * Choosing the implementation (Open MPI has two: OMPIO, its own, and
 * ROMIO, from MPICH) works through the MCA variable OMPI_MCA_io.  Open MPI
 * opens its io framework lazily, at the first MPI_File_* call, and reads
 * the variable then; the engine sets it while checking its options, after
 * MPI_Init and before any file is opened (verified here: the chosen
 * component is the only mca_io_* object loaded afterwards, which the
 * result records).  So every command that goes through MPI-IO (io's mpiio
 * and hdf5 backends, and the perf, laplace, flashio and beff kernels)
 * applies these settings once, after its options and before its first
 * file.  The launcher's environment (mpirun -x OMPI_MCA_io=...)
 * works the same way and is honoured when --mpiio-impl is not given.
 *
 * Aggregators: ROMIO takes the hint cb_nodes, but caps it at one
 * aggregator per host unless cb_config_list lets more processes of a host
 * serve ("*:*"), and in its automatic mode does without aggregators when
 * the ranks' accesses do not interleave (each rank's part of a partitioned
 * file is written by that rank), so --aggregators also enables collective
 * buffering (romio_cb_write/romio_cb_read=enable) unless a hint says
 * otherwise.  OMPIO takes cb_nodes as well and has its own MCA variable
 * (io_ompio_num_aggregators), set too so both paths agree.  All of this is
 * checked by behaviour in the tests: which ranks' write system calls carry
 * the bytes. */
#ifndef PARIO_MPIIO_ENV_H
#define PARIO_MPIIO_ENV_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "json.h"

#define MPIIO_MAX_HINTS 32
#define MPIIO_HINT_KEY_MAX 256
#define MPIIO_HINT_VALUE_MAX 256

typedef enum { MPIIO_IMPL_AUTO, MPIIO_IMPL_ROMIO, MPIIO_IMPL_OMPIO } mpiio_impl_choice;

typedef struct mpiio_settings {
    mpiio_impl_choice choice;
    int aggregators; /* 0: the library's own choice */
    int nhints;
    char hint_key[MPIIO_MAX_HINTS][MPIIO_HINT_KEY_MAX];
    char hint_value[MPIIO_MAX_HINTS][MPIIO_HINT_VALUE_MAX];
    /* Filled by mpiio_settings_apply. */
    bool open_mpi;
    char impl[32];         /* "ompio", "romio321", or "romio" for MPICH-derived MPIs */
    char impl_source[64];  /* why that one: "--mpiio-impl", "OMPI_MCA_io", "default" */
} mpiio_settings;

/* Each returns NULL, or the reason and the fix (for one line on stderr). */
const char *mpiio_hint_add(mpiio_settings *s, const char *text, char *why, size_t len);
/* The value of a hint the MPI standard reserves (MPI-3.1 13.2.8) in the
 * form it defines: cb_nodes=abc would be ignored by the library in silence,
 * so it is refused here.  Keys MPI does not reserve pass unchecked. */
const char *mpiio_hint_value_check(const char *key, const char *value, char *why, size_t len);
const char *mpiio_impl_parse(mpiio_settings *s, const char *text, char *why, size_t len);

/* --mpiio-impl for a command of its own: the one line and exit 2 when wrong. */
void mpiio_impl_option(mpiio_settings *s, const char *text);
#define MPIIO_IMPL_HELP \
    "romio | ompio: Open MPI's MPI-IO implementation\n(default: ompio, or what OMPI_MCA_io names)"
#define MPIIO_IMPL_ROW(id) {"mpiio-impl", 0, "I", MPIIO_IMPL_HELP, id} /* an option_spec */

/* --aggregators N: a whole number of at least 1 (else one line, exit 2). */
int mpiio_aggregators_parse(const char *text);

/* Check against the rank count and the MPI library, and set the MCA
 * environment.  Call on every rank before any MPI_File_* call. */
const char *mpiio_settings_apply(mpiio_settings *s, int nranks, char *why, size_t len);

/* mpiio_settings_apply for a kernel: its one line and exit 2 on a problem. */
void mpiio_settings_apply_or_exit(mpiio_settings *s, int nranks);

/* A kernel's record of what ran, into its params: the MPI library (the
 * first clause of its version string), the MPI-IO implementation and what
 * chose it, and the mca_io_* objects loaded (the evidence). */
void mpiio_run_json(json *j, const mpiio_settings *s);

/* The info object for MPI_File_open / H5Pset_fapl_mpio: the user's hints
 * plus what --aggregators means for the implementation.  Free with
 * MPI_Info_free. */
MPI_Info mpiio_info_create(const mpiio_settings *s);

/* The hints asked for (key/value pairs, including those --aggregators
 * adds), as a JSON object. */
void mpiio_hints_json(json *j, const char *key, const mpiio_settings *s);

/* Every key/value of an info object as a JSON object (null for
 * MPI_INFO_NULL). */
void mpiio_info_json(json *j, const char *key, MPI_Info info);

/* The MPI-IO components this process has loaded ("mca_io_ompio",
 * "mca_io_romio321", comma-separated), read from /proc/self/maps: the
 * evidence of which implementation served the file. */
void mpiio_loaded_components(char *out, size_t len);

/* An MPI error code as the errno value the backend table speaks: by its
 * class, else by the system's reason in the library's text (a full disk
 * through ROMIO is MPI_ERR_IO "... No space left on device"), else EIO. */
int mpiio_errno(int mpi_error);

/* The same for a call made with errno cleared before it: sys is errno
 * right after.  ROMIO under Open MPI returns a bare MPI_ERR_IO
 * ("input/output error") for a full disk and leaves the system's ENOSPC
 * in errno; a disk-space errno found there names the cause. */
int mpiio_errno_after(int mpi_error, int sys);

/* Once per process, untimed, before the first timed MPI_File_open: load
 * the MPI-IO library's plug-ins with a read-only open of `path` on
 * MPI_COMM_SELF while nothing is there (lstat: ENOENT), which fails and
 * creates nothing; a no-op when `path` exists or after the first call.
 *
 * Why: the first MPI_File_open of a process loads and selects the
 * library's components (ompio under Open MPI 4.1: mca_io_ompio,
 * libmca_common_ompio and the fs, fbtl, five fcoll and three sharedfp
 * plug-ins, each dlopen'ed: strace of `pario-engine io --api mpiio`, 4
 * ranks, 2026-11-23), and in a one-iteration run that first open is the
 * timed one.  Measured on the shared machine (load 12-16, 2026-11-23
 * 05:39 UTC, `mpirun -np 4 pario-engine io --api mpiio --size 256m
 * --phases write --iterations 5`, 3 runs): the first write's open took
 * 42-78 ms, the later ones 9-28 ms.  IOR pays it outside its clock on the
 * rank that creates the file: rank 0's check before removing the old file
 * is an MPI_File_open of the absent file on MPI_COMM_SELF (ior.c
 * RemoveFile, aiori-MPIIO.c MPIIO_Access).  Whatever the library prints
 * about the refused open is dropped (library_lines.h). */
void mpiio_library_warm(const char *path, const mpiio_settings *s);

/* The MPI-IO components this process had loaded when the warm-up ended
 * ("mca_io_ompio"), or "" when there was none. */
const char *mpiio_library_warmed(void);

#endif
