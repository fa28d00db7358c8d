/* How bytes move: one table of operations per API (fio's ioengines, IOR's
 * aiori).  The timed loop (io_run.c), layouts, grouping and verification
 * only ever call through this table, so a new API is one file plus one
 * line in backend_registry.c.
 *
 * ---------------------------------------------------------------------
 * THE CONTRACT
 * ---------------------------------------------------------------------
 * Three styles of moving bytes share one timed loop.  A backend declares
 * which it does through its capabilities (`caps`, or `caps_for` when they
 * depend on its options, e.g. mpiio --collective); the loop picks the first
 * that applies, in this order:
 *
 *   BACKEND_CAP_TRANSFER  whole-phase transfer lists: `transfer`
 *   BACKEND_CAP_ASYNC     submit/complete with a queue depth: `submit`, `reap`
 *   BACKEND_CAP_PER_CALL  one synchronous call per block: `write_at`, `read_at`
 *
 * Every style also has open, sync and close.  All functions return 0 or an
 * errno value (or a count, for reap) and never print: io_run.c turns the
 * error into the run's one line, agreed over all ranks.
 *
 * Per call (posix, stdio, mmap, ...).  For k = 0..n-1 the loop calls
 * write_at/read_at(handle, buf, block, offset_k) and times each call
 * (--trace).  A call moves all `len` bytes or fails; a read that meets the
 * end of the file returns ENODATA.  Buffers are page aligned and, when a
 * block is a multiple of 4 KiB, 4 KiB aligned (O_DIRECT).  With
 * BACKEND_CAP_COLLECTIVE_CALLS every rank sharing the file makes the same
 * number of calls in lock step (IOR's collective per-transfer form); a
 * rank with nothing to move then calls with len == 0.
 *
 * Asynchronous (uring, ...).  `queue_depth(config)` gives N.  The loop keeps
 * at most N requests in flight: it hands requests to `submit` (which may
 * only queue them, so that a batch goes to the kernel in one system call)
 * and calls `reap(handle, wait_for, done, max)`, which must first issue
 * everything submitted and then block until at least `wait_for` requests
 * have completed, writing up to `max` completions and returning how many
 * (or a negative errno).  A request completes only when all its bytes
 * moved (the backend resubmits short transfers itself) or with an error.
 * Each in-flight request owns one buffer SLOT: pattern_source_at() stamps
 * the offsets of a block in place in a buffer whose contents repeat with a
 * 1 MiB period, so two in-flight writes from one source could overwrite
 * each other's stamps whenever their offsets are equal modulo 1 MiB (every
 * random or strided pattern).  The loop therefore gives every slot its own
 * pattern source (1 MiB + block) and its own read buffer instead of
 * copying each block (a copy would be timed and costs as much as the I/O on
 * tmpfs).  The slots' memory is listed in backend_open_args.buffers, so a
 * backend may register it with the kernel (io_uring fixed buffers);
 * a request names its buffer by `buffer_index`.
 *
 * Whole-phase transfer lists (mpiio --collective, hdf5).  Every rank that
 * shares the file (backend_open_args.comm) calls `transfer` the SAME
 * number of times (`calls`, agreed by the loop), each time with the next
 * slice of its access list: `count` blocks whose file offsets are
 * offsets[0..count) and whose bytes are packed in `buf` (block i at
 * buf + i*block).  The slices are consecutive pieces of the layout's list:
 * offsets[i] == layout->block_offset(geom, first + i).  Offsets come in the
 * layout's order, which is not sorted for `random` (a file view must sort
 * them and permute memory to match).  count may be 0: the rank takes part
 * and moves nothing.  The loop cuts the phase into slices of at most
 * --transfer-buffer (IO_TRANSFER_BUFFER) bytes per rank, one call each;
 * each slice has its own slot in the loop's buffer, and the slices of up to
 * IO_TRANSFER_HOLD bytes per rank (a rank's whole share, usually) were
 * packed before the clock started, so a call's `buf` is ready and nothing
 * is copied in the timed phase.  Beyond that hold, slots are reused and
 * the later slices are packed inside the phase.  Transfer backends are never
 * grouped and their calls are not individually timed (no --trace).
 *
 * Opening.  backend_open_args carries everything a backend may need to
 * prepare a phase once: the path, the mode, direct I/O, the creation rule,
 * the file's final size, the phase's layout and geometry (a collective
 * backend builds its file view or hyperslab from them), the communicator of
 * the ranks sharing the file, and the backend's own parsed options.
 * layout and geom are NULL when the file is one part of a striped logical
 * file (stripe.h): the offsets a backend then sees are the part's own.
 * With BACKEND_CAP_COLLECTIVE_OPEN, open and close are collective over
 * `comm` (MPI_File_open/close, H5Fcreate/H5Fclose); every rank of comm
 * calls them together.  Otherwise open is local.  A collective open must
 * not let one rank refuse alone (the others would wait in the library's
 * open forever), so a rank's own checks before opening (e.g. that the
 * path is no symlink) go in `open_check`: the loop runs it on every rank
 * before every open and agrees on the worst outcome over all ranks in the
 * collective that starts the clock, so a timed open holds no collective
 * of pario's own, and open is called only when every rank's check passed.
 *
 * Failing apart.  A collective library's call can fail on some sharers
 * only (ompio reports a full disk to the aggregator that wrote, not to
 * the ranks whose data it carried; HDF5 writes metadata from rank 0), and
 * the library's later collective calls then take different paths on
 * different ranks (the failed rank's MPI_File_sync or H5Fclose skips the
 * barrier the others wait in) and the ranks wait for each other forever.
 * A backend that can fail so declares BACKEND_CAP_SPLIT_FAILURES: the loop
 * then agrees over comm, after the I/O and before sync, whether any
 * sharer failed in the pass, and if one did it calls neither sync nor
 * close on any sharer but `abandon`, which must release what this
 * process holds (stderr, memory) without any collective call and without
 * waiting for another rank; the run then ends without MPI_Finalize (which
 * would close the abandoned file collectively).  Capabilities without it
 * (mpiio's independent calls) pay no agreement.  A failure inside the
 * backend's own collective sync is the backend's to agree on (hdf5).
 * Where the library itself follows a collective write with another
 * collective inside ONE backend call (HDF5 resets the file view after its
 * raw write, and its H5Fflush syncs the file after writing metadata,
 * where ompio's failed aggregator skips the sync's barrier), no agreement
 * of the loop's can sit between: such a backend registers its MPI-IO file
 * with util/agreed_writes.h, which makes each collective write, sync and
 * set_size fail on every rank when it fails on one.
 *
 * Creating files safely.  pario never follows a symlink and never writes
 * into a file it did not create:
 *   create == true   create the file EXCLUSIVELY and never through a
 *                    symlink: O_CREAT|O_EXCL|O_NOFOLLOW, or the API's
 *                    equivalent (fopen "wx" is not enough: open the fd with
 *                    those flags and fdopen it; MPI_MODE_CREATE|
 *                    MPI_MODE_EXCL plus an lstat check).  EEXIST is an
 *                    error the loop reports.
 *   create == false  the file exists (it was created by this run, e.g. by
 *                    --prealloc or by the sharer that created it, or it is
 *                    read): open it with O_NOFOLLOW and without O_CREAT.
 * A backend with a descriptor notes the created file's identity from it
 * and checks an existing file's through it (backend_fd.c); one whose
 * library holds the descriptor (MPI-IO, HDF5) notes it from the descriptor
 * the library opened (owned_file_note_opened), and checks the name in
 * open_check before opening an existing file.
 * For a shared file and a local open, only the file's owner (rank 0) gets
 * create == true; the other sharers open after it (the loop orders them
 * with a barrier on comm, inside the timed open).  A collective open gets
 * the same create flag on every rank.
 *
 * Options.  A backend owns its options: `options` lists them (name,
 * argument, help), `config_size` is the size of its options struct,
 * `config_init` sets its defaults, `config_set` parses one option into it
 * (calling fail_usage() with one line on a bad value), and `config_check`
 * checks them against the rest of the run; `describe` records them in the
 * result document.  The option parser refuses an
 * option of one backend given with another --api by name, and --help
 * groups options by backend.
 *
 * Observations (optional; added for mpiio and hdf5).  A backend may report
 * what the library under it really did in a timed phase, per rank, as up
 * to BACKEND_MAX_OBSERVED numbers named by `observed_names` (NULL-ended):
 * e.g. the write system calls a rank made, which shows which ranks were
 * collective-buffering aggregators, or the byte-range locks atomic mode
 * took.  open gets a zeroed array (backend_open_args.observed; NULL in
 * untimed passes) that the backend fills by the time close returns; the
 * loop gathers it with the rank's timing record and the result lists it
 * per iteration as "observed": {name: [one number per rank]}.  Run-level
 * facts (which implementation ran, hints asked and returned, ...) go
 * through `describe`, which runs on rank 0 only, after the last phase,
 * while MPI is still up. */
#ifndef PARIO_BACKEND_H
#define PARIO_BACKEND_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../util/safe_file.h"
#include "layout.h"

struct json;

enum backend_mode { BACKEND_READ, BACKEND_WRITE };

/* Per-rank numbers a backend may observe in one phase (see Observations). */
#define BACKEND_MAX_OBSERVED 8

/* Bytes per rank per transfer call by default (--transfer-buffer):
 * larger shares are cut into slices.  Why 64 MiB, not a rank's whole share:
 * see io_run.c alloc_buffers. */
#define IO_TRANSFER_BUFFER ((size_t)64 << 20)

/* At most this many bytes per rank of slices packed before the clock (and
 * no more than a quarter of the node's available memory over its ranks);
 * later slices reuse the held slots and are packed inside the phase.  One
 * default slice, not a whole share: holding a 1 GiB share packed per rank
 * made ompio's collective write 4x slower (quiet, 2026-11-23 07:05 UTC,
 * 4 ranks, 4 GiB on tmpfs, 64 MiB calls, MiB/s: whole share held 331 and
 * 401, one 64 MiB slice held 1565 and 1583, IOR -c 1274 and 1155;
 * command: pario-engine io --api mpiio --collective
 * --layout partitioned --block 1m --size 4g --phases write, with and
 * without --transfer-hold 64m).  A share that fits in one slice is still
 * never copied in the phase. */
#define IO_TRANSFER_HOLD ((size_t)64 << 20)

enum backend_caps {
    BACKEND_CAP_DIRECT = 1u << 0,           /* honours direct (cache-bypassing) I/O */
    BACKEND_CAP_PER_CALL = 1u << 1,         /* write_at/read_at, each call timed alone */
    BACKEND_CAP_ASYNC = 1u << 2,            /* submit/reap with queue_depth() in flight */
    BACKEND_CAP_TRANSFER = 1u << 3,         /* transfer(): a rank's whole access list */
    BACKEND_CAP_COLLECTIVE_OPEN = 1u << 4,  /* open/close collective over comm */
    BACKEND_CAP_COLLECTIVE_CALLS = 1u << 5, /* I/O calls collective over comm (lock step) */
    BACKEND_CAP_GROUPABLE = 1u << 6,        /* ranks may take turns (--group) */
    BACKEND_CAP_NEEDS_MPI = 1u << 7,        /* calls MPI itself on comm */
    BACKEND_CAP_PREALLOC = 1u << 8,         /* works on a file --prealloc created */
    BACKEND_CAP_OBJECTS = 1u << 9,          /* stores objects, not a file of this node: no page
                                             * cache to evict or measure (see exists/remove) */
    BACKEND_CAP_SPLIT_FAILURES = 1u << 10,  /* a call may fail on some sharers only: agreed
                                             * before sync/close (see Failing apart) */
};

/* What the loop asks of an open. */
typedef struct backend_open_args {
    const char *path;
    enum backend_mode mode;
    bool direct;         /* O_DIRECT or the API's equivalent */
    bool create;         /* see "Creating files safely" above */
    uint64_t file_bytes; /* the file's final size (e.g. mmap extends it before mapping) */
    size_t block;        /* bytes per call */
    const layout_ops *layout;     /* the phase's access pattern ... */
    const layout_geometry *geom;  /* ... and this rank's place in it */
    uint64_t count;               /* blocks this rank moves in the phase */
    MPI_Comm comm;       /* ranks sharing this file (MPI_COMM_SELF for per-rank files) */
    const struct iovec *buffers;  /* every buffer the loop will pass (registrable) */
    unsigned nbuffers;
    void *config;        /* the backend's options (config_size bytes); the backend may also
                          * keep there facts it learns while running, for describe() */
    double *observed;    /* BACKEND_MAX_OBSERVED zeroed numbers to fill, or NULL */
    /* Which file is pario's (see "Creating files safely"): when create is
     * true and the open succeeds, the backend notes in *created the file it
     * just created, from its descriptor (owned_file_note_created, or
     * owned_file_note_opened for a library's), never from the name.  When create is false and expect is known,
     * the backend opens only that file: ESTALE when the name now holds
     * another.  Either may be NULL (nothing to note or to check).  For a
     * striped file they point to one identity per part (stripe.c). */
    owned_file *created;
    const owned_file *expect;
} backend_open_args;

/* One asynchronous request. */
typedef struct backend_request {
    void *buf;
    size_t len;
    uint64_t offset;
    unsigned buffer_index; /* buf lies inside buffers[buffer_index] of the open args */
    uint64_t tag;          /* the loop's own; returned on completion */
} backend_request;

typedef struct backend_completion {
    uint64_t tag;
    int error; /* 0 or errno; ENODATA when a read met the end of the file */
} backend_completion;

/* One slice of a rank's access list (see "Whole-phase transfer lists"). */
typedef struct backend_transfer {
    enum backend_mode mode;
    uint64_t first;           /* index of offsets[0] in the rank's whole list */
    uint64_t count;           /* blocks in this call; may be 0 */
    const uint64_t *offsets;  /* count file offsets, in the layout's order */
    size_t block;
    void *buf;                /* count * block bytes, block i at buf + i*block */
    uint64_t call, calls;     /* call index and number of calls, equal on all sharers */
} backend_transfer;

/* One option of a backend, "--name ARG". */
typedef struct backend_option {
    const char *name; /* without the dashes */
    const char *arg;  /* "SIZE", "N", ...; NULL for a flag */
    const char *help;
    int id;           /* handed back to config_set */
} backend_option;

/* Facts about the rest of the run that a backend's options are checked against. */
typedef struct backend_run_facts {
    size_t block;
    bool direct;
    bool writes, reads;
    int nranks;
    bool per_rank_files;
} backend_run_facts;

typedef struct backend_ops {
    const char *name;
    const char *summary;
    unsigned caps; /* everything it can do with some options */
    /* Effective capabilities for these options; NULL means `caps`. */
    unsigned (*caps_for)(const void *config);

    /* Options (all may be NULL/0 when the backend has none). */
    const backend_option *options;
    size_t noptions;
    /* The names of the valued options that may be given again (--hint),
     * NULL-terminated; any other valued option given twice is refused. */
    const char *const *repeatable;
    size_t config_size;
    void (*config_init)(void *config);
    void (*config_set)(void *config, int id, const char *opt, const char *arg);
    void (*config_check)(const void *config, const backend_run_facts *run);
    /* Write the options as they took effect, and facts learnt while
     * running (e.g. the hints an MPI library reports), as members of the
     * result's params.api_options object.  Rank 0, after the last phase. */
    void (*describe)(const void *config, struct json *j);

    int (*open)(const backend_open_args *args, void **handle);
    /* Optional: 0 or an errno, local and untimed (see Opening). */
    int (*open_check)(const backend_open_args *args);
    /* per call */
    int (*write_at)(void *handle, const void *buf, size_t len, uint64_t offset);
    int (*read_at)(void *handle, void *buf, size_t len, uint64_t offset);
    /* asynchronous */
    unsigned (*queue_depth)(const void *config);
    int (*submit)(void *handle, enum backend_mode mode, const backend_request *rq);
    int (*reap)(void *handle, unsigned wait_for, backend_completion *done, unsigned max);
    /* whole-phase transfer lists */
    int (*transfer)(void *handle, const backend_transfer *t);

    int (*sync)(void *handle);
    int (*close)(void *handle);
    /* With BACKEND_CAP_SPLIT_FAILURES: drop a file some sharer failed on,
     * without collective calls (see Failing apart); 0 or an errno. */
    int (*abandon)(void *handle);

    /* Observations (optional, see above). */
    const char *const *observed_names;

    /* Where the data is not a file at `path` (an object store): whether
     * anything is stored under `path` (1, 0, or a negative errno), and
     * remove all of it (0, ENOENT when nothing was there, or an errno).
     * NULL: the path is a file (lstat; removed only if this run created it). */
    int (*exists)(const char *path, const void *config);
    int (*remove)(const char *path, const void *config);

    /* Optional: what a path's data is where it is not a file, as a line
     * names it with its verb ("the objects under s3://B/P/ at E are"),
     * for a failed removal's line; without it, "PATH is". */
    void (*stored_as)(const char *path, const void *config, char *out, size_t size);

    /* Optional: the backend's own words for the errno `e` its last failed
     * call returned ("bucket 'x' does not exist at host:port (NoSuchBucket)"),
     * naming the fix; NULL (or no hook) for strerror's.  An errno alone
     * cannot say what an object store answered. */
    const char *(*why)(int e, const void *config);

    /* Optional: what the run asked of the library that the library was
     * seen not to do (atomic mode without one byte-range lock), as one
     * warning line naming the fix; NULL when there is none.  Rank 0,
     * after the last phase, beside the run's other warnings. */
    const char *(*caveat)(const void *config);
} backend_ops;

/* Capabilities for a configuration. */
unsigned backend_caps(const backend_ops *b, const void *config);

/* NULL when unknown. */
const backend_ops *backend_find(const char *name);

/* The i-th registered backend, NULL past the end. */
const backend_ops *backend_at(size_t i);

/* "posix, stdio, ..." for error messages. */
const char *backend_names(void);

#endif
