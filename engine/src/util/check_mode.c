#include "check_mode.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fail.h"

static bool g_checking = false;
static int g_nranks = 1;

/* A command that returns from its entry point in check mode went past its
 * check: a bug in pario, never an answer. */
enum { EXIT_NO_CHECK = 70 };
#define MAX_RANKS (1 << 20)
#define MAX_FIELDS 512

bool check_mode(void) { return g_checking; }

void engine_world(int *rank, int *nranks)
{
    if (g_checking) {
        *rank = 0;
        *nranks = g_nranks;
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
}

void check_mode_passed(void)
{
    if (g_checking) {
        fflush(stderr);
        _exit(0); /* a check's child owns nothing to clean up (nor to leak-check) */
    }
}

/* Undo the escapes of one field in place. */
static void unescape(char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) {
            *out++ = *p;
            continue;
        }
        p++;
        *out++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
    }
    *out = '\0';
}

/* The child: the command's own parser on the line, in check mode. */
static _Noreturn void check_one(int nranks, int argc, char **argv,
                                int (*run)(const char *, int, char **))
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO); /* --help and the like print nothing here */
        dup2(null, STDIN_FILENO);  /* the rest of the lines are the parent's */
    }
    g_checking = true;
    g_nranks = nranks;
    int rc = run(argv[0], argc, argv);
    if (rc == -1)
        fprintf(stderr, "pario-engine: error: '%s' has no check: check only commands that run "
                        "measurements (io, bt, probe, bonnie, perf, laplace, flashio, beff)\n",
                argv[0]);
    else
        fprintf(stderr, "pario-engine: error: %s ran past its check (a bug in pario-engine)\n",
                argv[0]);
    fflush(stderr);
    _exit(rc == -1 ? EXIT_USAGE : EXIT_NO_CHECK);
}

/* The child's first error line, without the prefix, on one line. */
static void first_line(char *text, char *out, size_t len)
{
    static const char prefix[] = "pario-engine: error: ";
    char *line = strstr(text, prefix);
    if (line)
        line += sizeof prefix - 1;
    else
        for (line = text; *line == '\n'; line++)
            ;
    size_t n = strcspn(line, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(out, line, n);
    out[n] = '\0';
    for (char *p = out; *p; p++)
        if (*p == '\t' || *p == '\r')
            *p = ' ';
}

static void answer(int code, const char *message)
{
    printf("%d\t%s\n", code, message);
    fflush(stdout);
}

static void check_line(char *line, int (*run)(const char *, int, char **))
{
    char *fields[MAX_FIELDS + 1];
    int n = 0;
    for (char *rest = line, *f; (f = strsep(&rest, "\t")) != NULL;) { /* empty fields kept */
        if (n == MAX_FIELDS) {
            answer(EXIT_USAGE, "check: more than 512 fields on one line");
            return;
        }
        unescape(f);
        fields[n++] = f;
    }
    fields[n] = NULL;
    char *end;
    long nranks = n ? strtol(fields[0], &end, 10) : 0;
    if (n < 2 || *end || nranks < 1 || nranks > MAX_RANKS) {
        answer(EXIT_USAGE, "check: each line is RANKS<TAB>COMMAND<TAB>ARGS..., RANKS from 1 to 1048576");
        return;
    }
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        answer(EXIT_USAGE, "check: cannot make a pipe");
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        answer(EXIT_USAGE, "check: cannot start a process");
        return;
    }
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[1]);
        check_one((int)nranks, n - 1, fields + 1, run);
    }
    close(pipefd[1]);
    char text[8192];
    size_t used = 0;
    for (;;) {
        ssize_t got = read(pipefd[0], text + used, sizeof text - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
        if (used == sizeof text - 1) { /* keep the start; drain the rest */
            char sink[4096];
            while (read(pipefd[0], sink, sizeof sink) > 0)
                ;
            break;
        }
    }
    text[used] = '\0';
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char message[2048] = "";
    if (code != 0)
        first_line(text, message, sizeof message);
    if (code != 0 && !message[0])
        snprintf(message, sizeof message, "%s stopped with code %d and no message", fields[1], code);
    answer(code, message);
}

int check_mode_serve(int (*run)(const char *command, int argc, char **argv))
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        check_line(line, run);
    }
    free(line);
    return 0;
}
