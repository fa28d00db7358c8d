#include "safe_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files this process created and has not removed, for the signal
 * handler below: a fixed table (nothing is allocated in a handler), each
 * row written whole before it is counted. */
enum { MADE_MAX = 256 };
static struct made_row {
    dev_t dev;
    ino_t ino;
    volatile sig_atomic_t live;
    char path[PATH_MAX];
} made[MADE_MAX];
static volatile sig_atomic_t nmade;

static void made_add(const owned_file *who, const char *path)
{
    int i = 0;
    while (i < nmade && made[i].live)
        i++;
    if (i == MADE_MAX || strlen(path) >= sizeof made[i].path)
        return; /* beyond the table: the front end's ledger still knows it */
    made[i].dev = who->dev;
    made[i].ino = who->ino;
    memcpy(made[i].path, path, strlen(path) + 1);
    made[i].live = 1;
    if (i == nmade)
        nmade = i + 1;
}

static void made_forget(const owned_file *who)
{
    for (int i = 0; i < nmade; i++)
        if (made[i].live && made[i].dev == who->dev && made[i].ino == who->ino)
            made[i].live = 0;
}

/* What this process made that no signal handler can remove (an object
 * store's objects: removing them takes requests), as the line it writes. */
static char elsewhere[1200];
static volatile sig_atomic_t elsewhere_len;

void owned_elsewhere_note(const char *what_are)
{
    elsewhere_len = 0; /* the handler never reads a half-written line */
    int n = snprintf(elsewhere, sizeof elsewhere, "pario-engine: stopped by a signal: %s left behind: "
                     "remove them with the store's own client\n", what_are);
    elsewhere_len = n > 0 && (size_t)n < sizeof elsewhere ? n : 0;
}

void owned_elsewhere_clear(void)
{
    elsewhere_len = 0;
}

/* SIGINT/SIGTERM (Ctrl-C, mpirun passing on its own, a timeout): remove
 * the files this process created, each only while its name still holds
 * that very file, say so in one line and exit non-zero.  Only
 * async-signal-safe calls (lstat, unlink, write, _exit). */
static void remove_made_and_exit(int sig)
{
    int removed = 0;
    for (int i = 0; i < nmade; i++) {
        struct stat st;
        if (made[i].live && lstat(made[i].path, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_dev == made[i].dev && st.st_ino == made[i].ino && unlink(made[i].path) == 0)
            removed++;
    }
    if (removed) {
        char line[160] = "pario-engine: stopped by ";
        size_t n = strlen(line);
        const char *what = sig == SIGINT ? "SIGINT" : "SIGTERM";
        memcpy(line + n, what, strlen(what));
        n += strlen(what);
        const char *rest = ": removed the files this process created (";
        memcpy(line + n, rest, strlen(rest));
        n += strlen(rest);
        char digits[12];
        int k = 0;
        for (int v = removed; v; v /= 10)
            digits[k++] = (char)('0' + v % 10);
        while (k)
            line[n++] = digits[--k];
        const char *end = removed == 1 ? " file)\n" : " files)\n";
        memcpy(line + n, end, strlen(end));
        n += strlen(end);
        if (write(STDERR_FILENO, line, n) < 0) {
            /* nothing more to do */
        }
    }
    if (elsewhere_len && write(STDERR_FILENO, elsewhere, (size_t)elsewhere_len) < 0) {
        /* nothing more to do */
    }
    _exit(128 + sig);
}

void owned_files_remove_on_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_made_and_exit;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* One line in the front end's ledger (safe_file.h); best effort: without
 * it the front end removes nothing, which is the safe side.  Every made
 * and gone file also passes here, so the signal handler's table follows. */
static void ledger(const char *what, const owned_file *who, const char *path)
{
    if (what[0] == 'm')
        made_add(who, path);
    else
        made_forget(who);
    const char *name = getenv(OWNED_LEDGER_ENV);
    if (!name || !*name)
        return;
    int fd = open(name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC); /* never created here */
    if (fd < 0)
        return;
    char line[PATH_MAX + 64];
    int n = snprintf(line, sizeof line, "%s %llu %llu %s\n", what, (unsigned long long)who->dev,
                     (unsigned long long)who->ino, path);
    if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) < 0) {
        /* nothing to do: the front end then leaves the file alone */
    }
    close(fd);
}

int create_exclusive(const char *path, int extra_flags, owned_file *who)
{
    int fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, 0644);
    if (fd < 0)
        return -errno;
    int e = owned_file_note_created(fd, path, who);
    if (e) {
        close(fd);
        return -e;
    }
    return fd;
}

int owned_file_note_fd(int fd, owned_file *who)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    who->dev = st.st_dev;
    who->ino = st.st_ino;
    who->known = true;
    return 0;
}

int owned_file_note_created(int fd, const char *path, owned_file *who)
{
    int e = owned_file_note_fd(fd, who);
    if (!e)
        ledger("made", who, path);
    return e;
}

int owned_file_note_opened(const char *path, owned_file *who)
{
    /* the kernel names an open file by its absolute path */
    char canon[PATH_MAX], dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return owned_file_note_path(path, who);
    snprintf(canon, sizeof canon, "%s/%s", strcmp(real, "/") ? real : "", base);
    char deleted[PATH_MAX + 16];
    snprintf(deleted, sizeof deleted, "%s (deleted)", canon);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return owned_file_note_path(path, who);
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[64], target[PATH_MAX + 16];
        int fd = atoi(e->d_name);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if ((!strcmp(target, canon) || !strcmp(target, deleted)) && fd > found)
            found = fd; /* the newest descriptor of that name: the library's */
    }
    int r = found >= 0 ? owned_file_note_created(found, path, who) : owned_file_note_path(path, who);
    closedir(d);
    return r;
}

int owned_file_note_path(const char *path, owned_file *who)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno;
    if (S_ISLNK(st.st_mode))
        return ELOOP;
    if (!S_ISREG(st.st_mode))
        return EINVAL;
    who->dev = st.st_dev;
    who->ino = st.st_ino;
    who->known = true;
    ledger("made", who, path);
    return 0;
}

/* Whether the directory holding path is now on another device than dev:
 * the file system the file was made on is no longer mounted there. */
static bool directory_moved_off(const char *path, dev_t dev)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    struct stat st;
    return stat(dirname(copy), &st) == 0 && st.st_dev != dev;
}

int owned_file_check(const char *path, const owned_file *who)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        const int e = errno;
        return e == ENOENT && who->known && directory_moved_off(path, who->dev) ? EXDEV : e;
    }
    if (!who->known || !S_ISREG(st.st_mode) || st.st_dev != who->dev || st.st_ino != who->ino)
        return ESTALE;
    return 0;
}

int remove_if_ours(const char *path, owned_file *who)
{
    if (!who->known)
        return 0;
    int e = owned_file_check(path, who);
    if (e == ENOENT) {
        who->known = false;
        return ENOENT;
    }
    if (e)
        return e;
    if (unlink(path) != 0)
        return errno;
    ledger("gone", who, path);
    who->known = false;
    return 0;
}

int open_ours(const char *path, int flags, const owned_file *who)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !who->known || st.st_dev != who->dev || st.st_ino != who->ino) {
        close(fd);
        return -ESTALE;
    }
    return fd;
}

const char *owned_file_reason(int e)
{
    if (e == ELOOP)
        return "was replaced during the run by a symlink pario did not create: left alone; keep "
               "other writers out of --dir";
    if (e == ESTALE || e == EINVAL)
        return "was replaced during the run by something pario did not create: left alone; keep "
               "other writers out of --dir";
    if (e == ENOENT)
        return "was removed during the run by someone else: keep other writers out of --dir";
    if (e == EXDEV)
        return "is on a file system that was unmounted from its directory during the run: it is left "
               "there; remove it once that file system is mounted again";
    /* a network mount that stopped answering (ENOTCONN, EIO): one line,
     * "NAME cannot be looked at (...)", with the fix */
    static _Thread_local char text[256];
    snprintf(text, sizeof text, "cannot be looked at (%s): check the file system mounted at --dir",
             strerror(e));
    return text;
}
