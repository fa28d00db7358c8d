/* `pario-engine check`: a plan's command lines checked by the very
 * parsers that will run them, before anything runs.
 *
 * The front end (pario run, pario model) plans many engine runs; an option
 * the engine refuses at every one of them (--direct on an API that cannot
 * bypass the cache, --iterations 1e8, a 3 GiB block) must be refused once,
 * up front, not stored as a run of failures.  Rather than copy the
 * engine's limits into Python, the front end sends each distinct command
 * line here, and each command parses and checks it exactly as it would
 * under mpirun, with the rank count the plan gives, then stops before its
 * first MPI call or file operation.
 *
 * What a command line alone decides is checked; what the machine decides at
 * run time is not: directories, free space and output files (the front end
 * checks those itself, and the engine again when it runs), memory per node.
 *
 * Protocol: one command line per input line, fields separated by TAB:
 *   RANKS  COMMAND  ARG...
 * with backslash escapes in fields (\\ \t \n).  One output line per input
 * line, in order:  CODE TAB MESSAGE  where CODE is the exit code the
 * command would have (0 = accepted, 2 = refused) and MESSAGE its one line
 * (without "pario-engine: error: "), empty when accepted. */
#ifndef PARIO_CHECK_MODE_H
#define PARIO_CHECK_MODE_H

#include <stdbool.h>

/* True inside `pario-engine check`: skip what the machine decides. */
bool check_mode(void);

/* MPI_COMM_WORLD's rank and size; in check mode rank 0 of the planned
 * count (MPI is not started there). */
void engine_world(int *rank, int *nranks);

/* Every check of the command line passed: in check mode exit 0 here,
 * before the first MPI call or file operation; otherwise nothing. */
void check_mode_passed(void);

/* The `check` command: reads the lines above from stdin and answers each,
 * running `run` (the named command's entry point, or -1 if it has no
 * check) in a child process. */
int check_mode_serve(int (*run)(const char *command, int argc, char **argv));

#endif
