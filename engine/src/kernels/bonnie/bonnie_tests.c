/* The six bonnie tests.  Each runs on a descriptor opened for it and is
 * timed from its first call to the close of that descriptor, the way both
 * Bray's Bonnie and bonnie++ time theirs: writes end with fsync, and under
 * bonnie++'s rules every test does (its Close()).  Each is charged with the
 * CPU time getrusage reports for it, and counts the calls it made.  Checks of the data ride along cheaply,
 * so they do not change what is measured: the per-character read sums the
 * bytes, the block read looks at one stamp per chunk, the rewrite looks at
 * the first bytes the per-character write put in each chunk. */
#include "bonnie.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../util/clock.h"
#include "../../util/die_with_parent.h"
#include "../../util/fsinfo.h"

/* The per-character write puts byte (offset mod PUTC_PERIOD): a prime
 * period, so every chunk starts with a different, checkable value. */
#define PUTC_PERIOD 251
#define UPDATE_SEEK 10 /* every 10th seek of a seeker rewrites its chunk */

/* What the file holds, so every reading test knows what to expect
 * whichever order the tests run in. */
static struct {
    char why[256];
    enum bonnie_test last_writer;  /* B_PUTC or B_BLOCK_WRITE */
    bool rewritten;                /* a rewrite changed one word per chunk since */
} g_check;

static void mismatch(const char *fmt, uint64_t a, uint64_t b)
{
    if (!g_check.why[0])
        snprintf(g_check.why, sizeof g_check.why, fmt, (unsigned long long)a, (unsigned long long)b);
}

bool bonnie_data_ok(char *why, size_t len)
{
    snprintf(why, len, "%s", g_check.why);
    return !g_check.why[0];
}

const char *bonnie_test_name(enum bonnie_test t)
{
    static const char *names[B_NTESTS] = {"putc", "rewrite", "block_write",
                                          "getc", "block_read", "seeks"};
    return names[t];
}

static double cpu_seconds(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * ru.ru_stime.tv_usec;
}

static int read_full(int fd, char *buf, size_t len, size_t *got, bonnie_calls *n)
{
    *got = 0;
    while (*got < len) {
        n->read++;
        ssize_t r = read(fd, buf + *got, len - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const char *buf, size_t len, bonnie_calls *n)
{
    while (len) {
        n->write++;
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static off_t counted_lseek(int fd, off_t off, int whence, bonnie_calls *n)
{
    n->lseek++;
    return lseek(fd, off, whence);
}

/* A stdio stream on the test's descriptor (a duplicate: the test closes
 * the descriptor itself, as every test does). */
static FILE *stream(int test_fd, const char *mode, int *err)
{
    int fd = dup(test_fd);
    FILE *f = fd < 0 ? NULL : fdopen(fd, mode);
    if (!f) {
        *err = errno;
        if (fd >= 0)
            close(fd);
    }
    return f;
}

/* Both writing tests start on a new, empty file, as Bonnie's do (untimed):
 * our own file (only while the name still holds it) is removed and created
 * again exclusively.  Returns its descriptor, or -errno. */
static int fresh_file(const bonnie_setup *s)
{
    int e = remove_if_ours(s->path, s->who);
    return e ? -e : create_exclusive(s->path, O_RDWR, s->who);
}

static int test_putc(const bonnie_setup *s, int fd, const char **what)
{
    int e = 0;
    *what = "opening a stream";
    FILE *f = stream(fd, "w", &e);
    if (!f)
        return e;
    *what = "putc";
    int b = 0;
    for (uint64_t i = 0; i < s->char_size; i++) {
        if (putc_unlocked(b, f) == EOF) {
            e = errno ? errno : EIO;
            break;
        }
        if (++b == PUTC_PERIOD)
            b = 0;
    }
    if (!e && fflush(f) != 0)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    return e; /* the fsync and close end every writing test */
}

/* Read a chunk, change one word, seek back, write it: Bonnie's rewrite. */
/* The word the rewrite changes in chunk c: rotating, never the stamp in
 * the first 8 bytes (chunks are at least 256 bytes). */
static uint64_t rewrite_word(uint64_t chunk, uint64_t c)
{
    return 2 + c % (chunk / sizeof(int) - 2);
}

static bool stamp_ok(const char *buf, uint64_t c);

/* Read a chunk, change one word, seek back, write it: Bonnie's rewrite.
 * The descriptor is new, at offset 0: both programs seek there before
 * their clock starts.  Bray's reads on until read() says 0, bonnie++
 * reads the file's chunks and stops (the rules). */
static int test_rewrite(const bonnie_setup *s, int fd, char *buf, bonnie_calls *n, const char **what)
{
    const uint64_t chunks = s->size / s->chunk;
    uint64_t c = 0;
    while (s->rules->read_to_eof || c < chunks) {
        size_t got;
        *what = "reading";
        int e = read_full(fd, buf, (size_t)s->chunk, &got, n);
        if (e)
            return e;
        if (got == 0)
            break;
        uint64_t off = c * s->chunk;
        if (g_check.last_writer == B_PUTC ? (unsigned char)buf[0] != off % PUTC_PERIOD : !stamp_ok(buf, c))
            mismatch("rewrite read byte %llu at offset %llu: not what the last writing test put",
                     (unsigned char)buf[0], off);
        ((int *)buf)[rewrite_word(s->chunk, c)] += 1;
        *what = "seeking back";
        if (counted_lseek(fd, -(off_t)got, SEEK_CUR, n) < 0)
            return errno;
        *what = "writing";
        if ((e = write_full(fd, buf, got, n)) != 0)
            return e;
        c++;
    }
    g_check.rewritten = true;
    return 0;
}

/* The block write's chunk: a fixed non-zero fill, the chunk's index in its
 * first eight bytes (chunks are at least 256 bytes). */
static void stamp(char *buf, uint64_t index)
{
    memcpy(buf, &index, 8);
}

static bool stamp_ok(const char *buf, uint64_t c)
{
    uint64_t index;
    memcpy(&index, buf, 8);
    return index == c;
}

static void fill(char *buf, uint64_t chunk)
{
    for (uint64_t i = 0; i < chunk; i++)
        buf[i] = (char)(0x5a ^ (i * 31));
}

static int test_block_write(const bonnie_setup *s, int fd, char *buf, bonnie_calls *n, const char **what)
{
    *what = "writing";
    for (uint64_t c = 0; c < s->size / s->chunk; c++) {
        stamp(buf, c);
        int e = write_full(fd, buf, (size_t)s->chunk, n);
        if (e)
            return e;
    }
    return 0;
}

static uint64_t word_byte_sum(unsigned int w)
{
    return (w & 0xff) + ((w >> 8) & 0xff) + ((w >> 16) & 0xff) + (w >> 24);
}

/* Sum of the bytes the block write left in the file's first chunks (those
 * getc reads), with the word each chunk's rewrite changed when one ran
 * since. */
static uint64_t block_file_byte_sum(const bonnie_setup *s, char *buf, uint64_t chunks)
{
    fill(buf, s->chunk);
    uint64_t fill_sum = 0, total = 0;
    for (uint64_t i = 8; i < s->chunk; i++)
        fill_sum += (unsigned char)buf[i];
    for (uint64_t c = 0; c < chunks; c++) {
        total += fill_sum;
        for (uint64_t b = 0; b < 8; b++)
            total += (c >> (8 * b)) & 0xff;
        if (g_check.rewritten) {
            unsigned int w;
            memcpy(&w, buf + 4 * rewrite_word(s->chunk, c), 4);
            total += word_byte_sum(w + 1) - word_byte_sum(w);
        }
    }
    return total;
}

/* getc of the file's first char_size bytes (all of it unless bonnie++'s
 * per-character size was given). */
static int test_getc(const bonnie_setup *s, int fd, uint64_t *sum, const char **what)
{
    int e = 0;
    *what = "opening a stream";
    FILE *f = stream(fd, "r", &e);
    if (!f)
        return e;
    *what = "getc";
    uint64_t n = 0, acc = 0;
    int ch;
    while (n < s->char_size && (ch = getc_unlocked(f)) != EOF) {
        acc += (unsigned)ch;
        n++;
    }
    if (ferror(f))
        e = errno ? errno : EIO;
    fclose(f);
    if (!e && n != s->char_size)
        mismatch("getc read %llu bytes of %llu", n, s->char_size);
    *sum = acc;
    return e;
}

static int test_block_read(const bonnie_setup *s, int fd, char *buf, bonnie_calls *n, const char **what)
{
    *what = "reading"; /* from offset 0, as test_rewrite */
    const uint64_t chunks = s->size / s->chunk;
    uint64_t c = 0;
    while (s->rules->read_to_eof || c < chunks) {
        size_t got;
        int e = read_full(fd, buf, (size_t)s->chunk, &got, n);
        if (e)
            return e;
        if (got == 0)
            break;
        uint64_t index;
        memcpy(&index, buf, 8);
        if (got != s->chunk || index != c)
            mismatch("block read found chunk stamp %llu where chunk %llu belongs", index, c);
        c++;
    }
    if (c != chunks)
        mismatch("block read found %llu chunks of %llu", c, chunks);
    return 0;
}

/* --- random seeks: forked seekers drawing tickets from one counter ----- */
typedef struct seek_board {
    atomic_long next_ticket;
    double start[64], end[64];
    int err[64];
    bonnie_calls calls[64];
} seek_board;

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static _Noreturn void seeker(const bonnie_setup *s, seek_board *board, int id, int go_fd)
{
    char c;
    int fd = open_ours(s->path, O_RDWR, s->who); /* each seeker its own open file description */
    char *buf = fd < 0 ? NULL : aligned_alloc(4096, (s->chunk + 4095) / 4096 * 4096);
    int e = fd < 0 ? -fd : buf ? 0 : ENOMEM;
    while (read(go_fd, &c, 1) < 0 && errno == EINTR)
        ;
    board->start[id] = clock_now();
    uint64_t rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)getpid() << 17), chunks = s->size / s->chunk;
    long mine = 0;
    bonnie_calls *n = &board->calls[id];
    /* lseek then read (and lseek then write back), as both programs seek */
    while (!e && atomic_fetch_add(&board->next_ticket, 1) < s->seeks) {
        off_t off = (off_t)(xorshift(&rng) % chunks * s->chunk);
        size_t got = 0;
        if (counted_lseek(fd, off, SEEK_SET, n) != off)
            e = errno;
        else if ((e = read_full(fd, buf, (size_t)s->chunk, &got, n)) == 0 && got != s->chunk)
            e = EIO;
        if (e)
            break;
        if (mine++ % UPDATE_SEEK == 0) {
            buf[s->chunk / 2]++;
            if (counted_lseek(fd, off, SEEK_SET, n) != off)
                e = errno;
            else
                e = write_full(fd, buf, (size_t)s->chunk, n);
        }
    }
    if (fd >= 0) {
        if (s->rules->sync_every_close && !e) {
            n->fsync++;
            e = fsync(fd) != 0 ? errno : 0;
        }
        n->close++;
        close(fd);
    }
    board->end[id] = clock_now();
    board->err[id] = e;
    _exit(e ? 1 : 0);
}

static int test_seeks(const bonnie_setup *s, bonnie_measure *m, const char **what)
{
    *what = "starting the seekers";
    seek_board *board = mmap(NULL, sizeof *board, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (board == MAP_FAILED)
        return errno;
    memset(board, 0, sizeof *board);
    int go[2];
    if (pipe(go) != 0) {
        int e = errno;
        munmap(board, sizeof *board);
        return e;
    }
    fflush(NULL);
    pid_t pids[64], parent = getpid();
    int started = 0, e = 0;
    for (; started < s->seek_procs; started++) {
        pid_t p = fork();
        if (p < 0) {
            e = errno;
            break;
        }
        if (p == 0) {
            die_with_parent(parent); /* a SIGKILLed bonnie leaves no seeker reading on */
            close(go[1]);
            seeker(s, board, started, go[0]);
        }
        pids[started] = p;
    }
    close(go[0]);
    /* one byte each opens the gate; closing the pipe releases any left */
    for (int i = 0; i < started && !e; i++)
        if (write(go[1], "g", 1) != 1)
            e = errno;
    close(go[1]);
    double cpu = 0;
    for (int i = 0; i < started; i++) {
        int status;
        struct rusage ru;
        while (wait4(pids[i], &status, 0, &ru) < 0 && errno == EINTR)
            ;
        cpu += (double)ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec +
               (double)ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec;
        const bonnie_calls *c = &board->calls[i];
        m->calls.read += c->read;
        m->calls.write += c->write;
        m->calls.lseek += c->lseek;
        m->calls.fsync += c->fsync;
        m->calls.close += c->close;
        if (!e && board->err[i]) {
            e = board->err[i];
            *what = "seeking and reading";
        }
    }
    double first = board->start[0], last = board->end[0];
    for (int i = 1; i < started; i++) {
        first = board->start[i] < first ? board->start[i] : first;
        last = board->end[i] > last ? board->end[i] : last;
    }
    munmap(board, sizeof *board);
    m->seconds = last - first;
    m->cpu_seconds = cpu;
    m->work = (uint64_t)s->seeks;
    return e;
}

static int evict(int fd)
{
    if (fdatasync(fd) != 0)
        return errno;
    return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* The file for one test, opened afresh (untimed): a new empty one for the
 * writing tests, ours reopened (and evicted when asked) for the others.
 * Returns the descriptor, or -errno with *what naming the step. */
static int open_for(const bonnie_setup *s, bool reads, const char **what)
{
    *what = reads ? "reopening the file" : "creating the file again";
    int fd = reads ? open_ours(s->path, O_RDWR, s->who) : fresh_file(s);
    if (fd >= 0 && reads && s->evict) {
        int e = evict(fd);
        if (e) {
            close(fd);
            *what = "evicting the file from the page cache";
            return -e;
        }
    }
    return fd;
}

/* How every test ends, inside its time: what it wrote reaches storage
 * (fsync), and under bonnie++'s rules a test that only read fsyncs too;
 * then the descriptor is closed. */
static int finish(const bonnie_setup *s, int fd, bool wrote, bonnie_calls *n, int e, const char **what)
{
    if (!e && (wrote || s->rules->sync_every_close)) {
        n->fsync++;
        if (fsync(fd) != 0) {
            e = errno;
            *what = "fsync";
        }
    }
    n->close++;
    if (close(fd) != 0 && !e) {
        e = errno;
        *what = "closing";
    }
    return e;
}

int bonnie_run_test(const bonnie_setup *s, enum bonnie_test t, bonnie_measure *m, const char **what)
{
    static char *buf;
    if (!buf && !(buf = aligned_alloc(4096, (s->chunk + 4095) / 4096 * 4096))) {
        *what = "allocating the chunk buffer";
        return ENOMEM;
    }
    const bool reads = t != B_PUTC && t != B_BLOCK_WRITE;
    memset(m, 0, sizeof *m);
    int fd = open_for(s, reads, what);
    if (fd < 0)
        return -fd;
    if (t == B_BLOCK_WRITE)
        fill(buf, s->chunk);
    m->cached_fraction = reads ? page_cache_fraction(s->path) : -1;
    m->work = t == B_PUTC || t == B_GETC ? s->char_size : s->size;
    if (t == B_SEEKS) {
        close(fd); /* each seeker opens its own */
        return test_seeks(s, m, what);
    }
    uint64_t sum = 0;
    bonnie_calls *n = &m->calls;
    double cpu0 = cpu_seconds(RUSAGE_SELF), t0 = clock_now();
    if (!reads) {
        g_check.last_writer = t;
        g_check.rewritten = false;
    }
    int e = t == B_PUTC          ? test_putc(s, fd, what)
            : t == B_REWRITE     ? test_rewrite(s, fd, buf, n, what)
            : t == B_BLOCK_WRITE ? test_block_write(s, fd, buf, n, what)
            : t == B_GETC        ? test_getc(s, fd, &sum, what)
                                 : test_block_read(s, fd, buf, n, what);
    e = finish(s, fd, t != B_GETC && t != B_BLOCK_READ, n, e, what);
    m->seconds = clock_now() - t0;
    m->cpu_seconds = cpu_seconds(RUSAGE_SELF) - cpu0;
    if (!e && t == B_GETC) {
        uint64_t want = block_file_byte_sum(s, buf, s->char_size / s->chunk);
        if (sum != want)
            mismatch("getc byte sum %llu, the block write put %llu", sum, want);
    }
    return e;
}
