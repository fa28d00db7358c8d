/* bonnie: T. Bray's single-node file system benchmark (REFERENCE-FACTS 6),
 * with 64-bit sizes and a chosen chunk, so one command gives both the
 * report's "bonnie" (8 KiB) and its "bigbonnie" (64 KiB).
 *
 * Six tests in Bonnie's order, each timed alone with its CPU share:
 * per-character write (putc), rewrite, block write, per-character read
 * (getc), block read, random seeks (forked seeker processes, every tenth
 * seek of each rewrites its chunk). */
#ifndef PARIO_BONNIE_H
#define PARIO_BONNIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../util/safe_file.h"

enum bonnie_test { B_PUTC, B_REWRITE, B_BLOCK_WRITE, B_GETC, B_BLOCK_READ, B_SEEKS, B_NTESTS };

/* What differs between the programs pario follows, beyond their tests:
 * the order, and how each test ends.  Both open the file afresh for every
 * test and close it inside the test's time (Bray's newfile and close;
 * bonnie++'s reopen and Close); bonnie++'s Close() always fsyncs first,
 * after a reading test and in every seeker too, and its block read reads
 * exactly the file's chunks where Bray's reads on until read() says 0.
 * Both seek to the start before the clock starts (a new descriptor is
 * there already). */
typedef struct bonnie_rules {
    enum bonnie_test order[B_NTESTS];
    bool sync_every_close;            /* fsync before closing after reads too */
    bool read_to_eof;                 /* rewrite, block read: one more read() that returns 0 */
} bonnie_rules;

typedef struct bonnie_setup {
    const char *path;
    owned_file *who;     /* which file that is: the only one reopened or removed */
    uint64_t size;       /* a multiple of chunk */
    uint64_t chunk;
    uint64_t char_size;  /* the per-character tests' bytes (bonnie++'s -f size): a multiple of chunk */
    long seeks;          /* total over all seeker processes */
    int seek_procs;
    bool evict;          /* drop the file from the page cache before reading tests */
    const bonnie_rules *rules;
} bonnie_setup;

/* The system calls a test made on its file inside its time (all seekers'
 * for B_SEEKS); putc and getc count only their own, not stdio's. */
typedef struct bonnie_calls {
    uint64_t read, write, lseek, fsync, close;
} bonnie_calls;

typedef struct bonnie_measure {
    double seconds;      /* wall time of the test */
    double cpu_seconds;  /* user + system (the seekers' for B_SEEKS) */
    double cached_fraction; /* of the file in the page cache as the test began; -1 unknown */
    uint64_t work;       /* bytes, or seeks for B_SEEKS */
    bonnie_calls calls;
} bonnie_measure;

/* Run one test.  Returns 0, or an errno with *what naming the step. */
int bonnie_run_test(const bonnie_setup *s, enum bonnie_test t, bonnie_measure *m,
                    const char **what);

/* What the reading tests found against what the writing tests wrote:
 * false with a reason when a byte or a chunk stamp was wrong. */
bool bonnie_data_ok(char *why, size_t len);

const char *bonnie_test_name(enum bonnie_test t);

#endif
