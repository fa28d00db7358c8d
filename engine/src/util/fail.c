#include "fail.h"

#include "check_mode.h"
#include "library_lines.h"

#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static int g_mpi_up = 0;
static int g_rank = 0;

void fail_set_mpi(int rank)
{
    g_mpi_up = 1;
    g_rank = rank;
}

static int g_skip_finalize = 0;

void fail_skip_finalize(void)
{
    g_skip_finalize = 1;
}

/* A rank that exits without MPI_Finalize makes Open MPI's launcher take
 * the whole job down at once, and the rank printing the run's one line was
 * then killed mid-line (seen as "pario-engine: error: " followed by
 * mpirun's banner).  So before such an exit the ranks meet once more, after
 * the line is out; at most a few seconds, so a path on which not every rank
 * ends here still ends. */
static void wait_for_every_rank(void)
{
    MPI_Request rq;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
        return;
    const double until = MPI_Wtime() + 5;
    int done = 0;
    while (!done && MPI_Wtime() < until)
        if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        else if (!done)
            usleep(1000);
}

static _Noreturn void finish(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (check_mode())
        _exit(code); /* a check's child (check_mode.h): nothing to finalize or free */
    if (g_mpi_up && !g_skip_finalize)
        MPI_Finalize();
    else if (g_mpi_up)
        wait_for_every_rank();
    exit(code);
}

/* One write, so the launcher that gathers the ranks' output never splits it. */
static void print_line(const char *fmt, va_list ap)
{
    library_lines_give_back(); /* pario's line goes to the real stderr, never a held one */
    char line[8192];
    int n = snprintf(line, sizeof line, "pario-engine: error: ");
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    line[len] = '\n';
    fwrite(line, 1, len + 1, stderr);
}

void fail_usage(const char *fmt, ...)
{
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        print_line(fmt, ap);
        va_end(ap);
    }
    finish(EXIT_USAGE);
}

void fail_exit(int code, int print_here, const char *fmt, ...)
{
    if (print_here) {
        va_list ap;
        va_start(ap, fmt);
        print_line(fmt, ap);
        va_end(ap);
    }
    finish(code);
}

void fail_unless_target_dir(const char *dir, const char *what)
{
    struct stat st;
    if (!dir[0])
        fail_usage("--dir is required: %s", what);
    if (check_mode())
        return; /* the machine's part: checked when the run starts */
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        fail_usage("--dir %s is not an existing directory: create it first", dir);
    if (access(dir, W_OK | X_OK) != 0)
        fail_usage("--dir %s is not writable: choose a writable directory", dir);
}
