#include "fail.h"

#include "check_mode.h"
#include "library_lines.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static int g_mpi_up = 0;
static int g_rank = 0;

/* The signals a crash of this process raises itself, with the words the
 * line uses (a table: the handler may not call strsignal). */
static const struct {
    int sig;
    const char *words;
} crash_signals[] = {
    {SIGSEGV, "11 (SIGSEGV, segmentation fault)"},
    {SIGBUS, "7 (SIGBUS, bus error)"},
    {SIGFPE, "8 (SIGFPE, arithmetic error)"},
    {SIGILL, "4 (SIGILL, illegal instruction)"},
    {SIGABRT, "6 (SIGABRT, aborted)"},
};
enum { NCRASH = sizeof crash_signals / sizeof crash_signals[0] };
static struct sigaction library_handler[NCRASH];

static size_t append(char *line, size_t n, const char *s)
{
    size_t k = strlen(s);
    memcpy(line + n, s, k);
    return n + k;
}

/* A crashed rank names itself and the signal in the run's one line: the
 * launchers do not (MPICH's names a PID, and either may end its report
 * with a banner or a backtrace frame).  Then the MPI library's own handler
 * (its backtrace) runs, and the signal ends the process as before.  Only
 * async-signal-safe calls. */
static void name_crash(int sig, siginfo_t *info, void *context)
{
    int i = 0;
    while (i < NCRASH - 1 && crash_signals[i].sig != sig)
        i++;
    char line[160], digits[12];
    size_t n = append(line, 0, "pario-engine: error: rank ");
    int k = 0;
    for (unsigned v = (unsigned)g_rank; k == 0 || v; v /= 10)
        digits[k++] = (char)('0' + v % 10);
    while (k)
        line[n++] = digits[--k];
    n = append(line, n, " crashed with signal ");
    n = append(line, n, crash_signals[i].words);
    n = append(line, n, ": a fault in pario-engine or the MPI library; run the point again, "
                        "and report it if it repeats\n");
    if (write(STDERR_FILENO, line, n) < 0) {
        /* nothing more to do: the launcher still reports the signal */
    }
    const struct sigaction *was = &library_handler[i];
    sigaction(sig, was, NULL);
    if ((was->sa_flags & SA_SIGINFO) && was->sa_sigaction)
        was->sa_sigaction(sig, info, context);
    else if (was->sa_handler != SIG_DFL && was->sa_handler != SIG_IGN)
        was->sa_handler(sig);
    signal(sig, SIG_DFL); /* the library's handler returned, or there was none */
    raise(sig);
}

static void name_crashes(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = name_crash;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCRASH; i++)
        sigaction(crash_signals[i].sig, &sa, &library_handler[i]);
}

void fail_set_mpi(int rank)
{
    g_mpi_up = 1;
    g_rank = rank;
    name_crashes(); /* after MPI_Init, so the library's handlers are there to pass on to */
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
    if (g_mpi_up && !g_skip_finalize) {
        /* After pario's one line, what a library says while it finalizes
         * a failed run is noise: MPICH's yaksa counts the datatypes a
         * stopped kernel did not free ("[WARNING] yaksa: 1 leaked handle
         * pool objects"), once per rank. */
        int quiet = code != 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
        if (quiet >= 0) {
            dup2(quiet, STDERR_FILENO);
            close(quiet);
        }
        MPI_Finalize();
    } else if (g_mpi_up)
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

const char *fail_dir_fix(int e)
{
    if (e == ENOENT || e == ENOTDIR)
        return "create it first or choose an existing directory";
    if (e == ENOTCONN || e == EIO || e == ESTALE || e == EHOSTDOWN || e == ETIMEDOUT)
        return "check the file system mounted there, or choose another directory";
    return "choose another directory";
}

void fail_unless_target_dir(const char *dir, const char *what)
{
    struct stat st;
    if (!dir[0])
        fail_usage("--dir is required: %s", what);
    if (check_mode())
        return; /* the machine's part: checked when the run starts */
    const int e = stat(dir, &st) != 0 ? errno : 0;
    if (e && e != ENOENT && e != ENOTDIR) /* there, but out of reach */
        fail_usage("--dir %s: %s: %s", dir, strerror(e), fail_dir_fix(e));
    if (e || !S_ISDIR(st.st_mode))
        fail_usage("--dir %s is not an existing directory: create it first", dir);
    if (access(dir, W_OK | X_OK) != 0)
        fail_usage("--dir %s is not writable: choose a writable directory", dir);
}
