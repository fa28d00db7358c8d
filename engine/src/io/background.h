/* Background load (the ASCI Red report's Figure 3): N loader processes on
 * each node run during every timed phase and are stopped between phases,
 * so preparation, verification and the pattern fill stay unloaded.
 *
 * Kinds: `write` streams 1 MiB writes into a file of its own in the target
 * directory (64 MiB, rewritten in a ring, fdatasync at each wrap); `cpu`
 * spins.  A loader's file is created exclusively (never through a symlink)
 * and unlinked at once, so it lives only while its loader does and nothing
 * is left behind even if the run is killed; loaders die with their rank
 * (PR_SET_PDEATHSIG).
 *
 * The load is recorded as the report defines it: the time of a known task
 * under load divided by its time alone.  The known task is a fixed
 * compute-and-memory pass (a hash over 8 MiB), timed alone once at the
 * start and again under load before each phase, on the node's first rank. */
#ifndef PARIO_BACKGROUND_H
#define PARIO_BACKGROUND_H

#include <mpi.h>
#include <stdbool.h>
#include <sys/types.h>

enum background_kind { BACKGROUND_WRITE, BACKGROUND_CPU };

#define BACKGROUND_MAX 64
#define BACKGROUND_FILE_BYTES (64ULL << 20)

typedef struct background {
    int n;                      /* loaders per node; 0 = none */
    enum background_kind kind;
    bool leader;                /* this rank starts the node's loaders */
    pid_t pids[BACKGROUND_MAX];
    int started;
    double alone_seconds;       /* the known task with the loaders stopped */
} background;

const char *background_kind_name(enum background_kind k);

/* Start the loaders (stopped) on each node's first rank of comm and time
 * the known task alone.  0, or an errno value with the reason in why. */
int background_start(background *b, const char *dir, MPI_Comm comm, char *why, size_t len);

/* Let the loaders run; on the leader, returns the load (known task under
 * load / alone), elsewhere -1. */
double background_resume(background *b);

/* Stop them until the next phase.  Returns how many loaders ended during
 * the phase (a write loader whose disk filled, one killed from outside),
 * with the first one's reason, naming `dir`, in `why`; they are reaped and
 * not counted again. */
int background_pause(background *b, const char *dir, char *why, size_t len);

/* Kill and reap them (their files are already unlinked). */
void background_stop(background *b);

#endif
