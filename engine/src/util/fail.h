/* One clear line for every error, then a non-zero exit.
 *
 * Parameter and environment errors are detected identically on every rank,
 * so only rank 0 prints them; I/O failures are reported by the rank that saw
 * them.  Exit codes: 2 = bad invocation or environment, 3 = run failed
 * (I/O error or verification failure). */
#ifndef PARIO_FAIL_H
#define PARIO_FAIL_H

#include <stdarg.h>

enum { EXIT_USAGE = 2, EXIT_RUN_FAILED = 3 };

/* Set once MPI is up, so usage errors print once and MPI is finalized; from
 * then on a rank that crashes names itself and the signal in one line. */
void fail_set_mpi(int rank);
/* A library can no longer shut down cleanly (HDF5 after a failed close):
 * a failure exit then skips MPI_Finalize, which would crash in it. */
void fail_skip_finalize(void);

/* Print "pario-engine: error: <message>" (rank 0 only) and exit 2. */
_Noreturn void fail_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The fix for a --dir that stat refused with errno e: a missing one is
 * created, an unreachable one (a network mount that stopped answering:
 * ENOTCONN, EIO) is a mount to check, not a directory to create. */
const char *fail_dir_fix(int e);

/* The kernels' --dir rule, one wording everywhere: given, an existing
 * directory, writable; else fail_usage.  `what` ends "--dir is required: ". */
void fail_unless_target_dir(const char *dir, const char *what);

/* Print the line from whichever rank calls it and exit with code. Only for
 * paths where every rank calls it (after an agreement step). */
_Noreturn void fail_exit(int code, int print_here, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
