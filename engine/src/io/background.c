#include "background.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/die_with_parent.h"

#define KNOWN_TASK_WORDS ((8u << 20) / 8)
#define LOADER_CHUNK (1u << 20)

const char *background_kind_name(enum background_kind k)
{
    return k == BACKGROUND_WRITE ? "write" : "cpu";
}

/* The known task: a hash pass over a buffer, the same work every time. */
static uint64_t *task_buf;

static double known_task(void)
{
    const double t = clock_now();
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int pass = 0; pass < 4; pass++)
        for (size_t i = 0; i < KNOWN_TASK_WORDS; i++) {
            h ^= task_buf[i] + (h << 6) + (h >> 2);
            task_buf[i] = h;
        }
    volatile uint64_t sink = h; /* keep the work */
    (void)sink;
    return clock_now() - t;
}

static double known_task_median(int n)
{
    double t[5];
    for (int i = 0; i < n; i++) {
        t[i] = known_task();
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    }
    return t[n / 2];
}

static _Noreturn void loader_main(enum background_kind kind, int fd)
{
    if (kind == BACKGROUND_CPU) {
        volatile uint64_t x = 1;
        for (;;)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    unsigned char *buf = malloc(LOADER_CHUNK);
    if (!buf)
        _exit(ENOMEM);
    memset(buf, 0xa5, LOADER_CHUNK);
    for (uint64_t off = 0;; off += LOADER_CHUNK) {
        if (off == BACKGROUND_FILE_BYTES) {
            fdatasync(fd);
            off = 0;
        }
        /* the exit status carries the errno: background_pause names it */
        if (pwrite(fd, buf, LOADER_CHUNK, (off_t)off) < 0 && errno != EINTR)
            _exit(errno > 0 && errno < 126 ? errno : EIO);
    }
}

int background_start(background *b, const char *dir, MPI_Comm comm, char *why, size_t len)
{
    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    b->leader = node_rank == 0 && b->n > 0;
    b->started = 0;
    if (!b->leader)
        return 0;
    task_buf = calloc(KNOWN_TASK_WORDS, sizeof *task_buf);
    if (!task_buf) {
        snprintf(why, len, "--background: cannot allocate the known task's buffer");
        return ENOMEM;
    }
    known_task(); /* first touch */
    b->alone_seconds = known_task_median(5);
    const pid_t parent = getpid();
    for (int i = 0; i < b->n; i++) {
        int fd = -1;
        if (b->kind == BACKGROUND_WRITE) {
            char path[4096];
            snprintf(path, sizeof path, "%s/pario-load.%ld.%d", dir, (long)parent, i);
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd < 0) {
                int e = errno;
                snprintf(why, len, "--background: cannot create the loader file %s: %s", path,
                         strerror(e));
                return e;
            }
            unlink(path); /* ours alone, and gone with the loader whatever happens */
        }
        pid_t pid = fork();
        if (pid < 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            snprintf(why, len, "--background: cannot start loader %d: %s", i, strerror(e));
            return e;
        }
        if (pid == 0) {
            die_with_parent(parent);
            raise(SIGSTOP); /* run only during phases */
            loader_main(b->kind, fd);
        }
        if (fd >= 0)
            close(fd);
        b->pids[b->started++] = pid;
        int st;
        waitpid(pid, &st, WUNTRACED); /* until it has stopped itself */
    }
    return 0;
}

double background_resume(background *b)
{
    if (!b->leader)
        return -1;
    for (int i = 0; i < b->started; i++)
        if (b->pids[i] > 0)
            kill(b->pids[i], SIGCONT);
    return known_task_median(3) / b->alone_seconds;
}

int background_pause(background *b, const char *dir, char *why, size_t len)
{
    int dead = 0;
    if (!b->leader)
        return 0;
    for (int i = 0; i < b->started; i++) {
        int st;
        if (b->pids[i] <= 0)
            continue;
        kill(b->pids[i], SIGSTOP);
        if (waitpid(b->pids[i], &st, WUNTRACED) != b->pids[i] || WIFSTOPPED(st))
            continue;
        /* it ended during the phase: the phase ran with fewer loaders than
         * the run says, so the run cannot stand */
        b->pids[i] = 0;
        if (dead++)
            continue;
        if (WIFEXITED(st))
            snprintf(why, len,
                     "%s loader %d stopped during the phase: %s in %s: free space there, or "
                     "use --background-kind cpu",
                     background_kind_name(b->kind), i, strerror(WEXITSTATUS(st)), dir);
        else
            snprintf(why, len, "%s loader %d was killed during the phase: %s",
                     background_kind_name(b->kind), i,
                     WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "unknown cause");
    }
    return dead;
}

void background_stop(background *b)
{
    if (!b->leader)
        return;
    for (int i = 0; i < b->started; i++) {
        if (b->pids[i] <= 0)
            continue; /* reaped by background_pause */
        kill(b->pids[i], SIGKILL);
        waitpid(b->pids[i], NULL, 0);
    }
    b->started = 0;
    free(task_buf);
    task_buf = NULL;
}
