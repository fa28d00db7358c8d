/* How many byte-range lock requests (fcntl F_SETLK, F_SETLKW, F_GETLK and
 * their OFD forms) this process has made.
 *
 * Why: MPI_File_set_atomicity is honoured, where it is, by taking a lock
 * around each access (ROMIO does; Open MPI's OMPIO on a local file system
 * takes none), and MPI_File_get_info cannot tell.  So the engine counts the
 * lock requests the MPI library makes, around each phase.
 *
 * How: pario-engine defines fcntl() itself and exports it (see the
 * dynamic list in CMakeLists.txt), so the MPI-IO components, which are
 * loaded at run time and call fcntl through the global symbol scope, reach
 * this definition first; it counts lock commands and forwards every call
 * unchanged to the C library's fcntl.  No LD_PRELOAD, no tracing. */
#ifndef PARIO_LOCK_COUNT_H
#define PARIO_LOCK_COUNT_H

#include <stdbool.h>
#include <stdint.h>

/* Lock requests so far in this process. */
uint64_t lock_count_now(void);

/* true when the counting definition is the one the process uses (a static
 * link or a stripped export would silently bypass it). */
bool lock_count_active(void);

#endif
