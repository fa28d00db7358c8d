/* `pario-engine probe`: the rate of every component on the path from a
 * rank's memory to the storage behind a directory, and the peak they
 * predict, after the CFS report's Tables 1-3 (Nitzberg 1992: "10 disks x
 * 0.82 MB/s = 8.2 MB/s").
 *
 * Components (each repeated --iterations times, every repetition kept):
 *   memory copy       every rank memcpy()s --memory bytes, all ranks at once
 *   barrier           MPI_Barrier latency, mean of 1000
 *   request/reply     rank 0 asks a partner for 4 KiB and waits for it:
 *                     nearest (rank 1) and farthest (the last rank on
 *                     another host, else the last rank)
 *   open/1 byte/close read and write, rank 0, mean of --ops
 *   byte-range lock   rank 0 takes and drops a write lock on one 4 KiB range
 *                     of an open file (fcntl F_SETLKW, F_UNLCK), mean of
 *                     --ops pairs: what ROMIO's atomic mode adds to a call
 *   one stream        rank 0 writes --size bytes into a preallocated
 *                     file (open, write, fsync, close) and reads them back with the page cache
 *                     emptied first (fadvise, else O_DIRECT; residency
 *                     measured with mincore), then once more from the page
 *                     cache (the cached read), then its last eighth with the
 *                     cache emptied again (the short read: with the whole
 *                     stream's time it separates a read's fixed start from its
 *                     cost per byte), and last the stream written into a new
 *                     file with no space reserved (open creating it, write,
 *                     fsync, close: blocks allocated as the data goes out)
 *   two streams       ranks 0 and 1 each write (fsync) one half of such a
 *                     file at once, then read it back at once, the page
 *                     cache emptied first (several streams of one file),
 *                     then all of it at once, every other block each (two
 *                     interleaved readers), then four readers a quarter
 *                     each (two threads on each rank), then both all of
 *                     it, every block (two readers of the same bytes),
 *                     then four readers again of the file's last four
 *                     shares of one read-ahead window each (short shares)
 *   messages          rank 1 sends rank 0 min(--size, 64 MiB) in --block
 *                     messages (MPI's rate for a call's data)
 *   token hand-over   every rank passes a grouped run's token round a ring
 *                     (the engine's own wait), then again with one thread per
 *                     rank yielding beside it (two runnable per core, as ranks
 *                     above the core count are), then ranks 0 and 1 alone
 *                     with both on one core (each hand-over switches the
 *                     next holder in)
 *   busy hand-over    ranks 0 and 1 (the others asleep) pass a message back
 *                     and forth, each waiting by MPI_Test and sched_yield as
 *                     Open MPI does when ranks outnumber cores, while a
 *                     thread per core copies memory without yielding: how
 *                     long a waiting rank beside busy ranks takes to act
 *                     once its turn has come (two ranks or more)
 *   collective call   every rank makes --ops collective MPI-IO writes, then
 *                     reads, of 1 byte (ROMIO, every rank an aggregator): the
 *                     fixed cost of one collective call
 *   buffer streams    the stream in calls of a collective buffer (16 MiB, at
 *                     most half of --size) into a new file (fsync), then read
 *                     with the cache emptied: rank 0 alone, then ranks 0 and
 *                     1 a half each at once (ROMIO's aggregators' transfers;
 *                     the two writers fsync after both have written, as a
 *                     collective write's sync follows every aggregator's),
 *                     then four readers at once, a quarter each (ranks 0
 *                     and 1 with a thread each: four aggregators reading)
 *   metadata          every rank creates, stats and removes --ops files
 *   read-ahead        (a fact, not a timing) the largest read-ahead window
 *                     of the device behind --dir (its read_ahead_kb)
 *
 * Every file is created exclusively (O_EXCL, never through a symlink)
 * under --dir with the run's name, its identity noted, and removed by the
 * probe itself only while the name still holds it (remove_if_ours: so the
 * metadata remove rate includes one lstat per file). */
#ifndef PARIO_PROBE_H
#define PARIO_PROBE_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../util/fsinfo.h"
#include "../../util/hosts.h"

#define PROBE_MAX_ITERATIONS 100
#define PROBE_REQUEST_BYTES 4096
#define PROBE_MAX_WARNINGS 8
#define PROBE_BUFFER_CALL (16ULL << 20) /* ROMIO's default cb_buffer_size */

typedef struct probe_options {
    char dir[PATH_MAX];
    char name[256];         /* file name base; "" = unique pario-probe.* */
    char json[PATH_MAX];
    uint64_t stream_bytes;  /* --size: bytes of the one-stream write/read */
    uint64_t block;         /* --block: bytes per call of the stream */
    uint64_t memory_bytes;  /* --memory: bytes each rank copies */
    uint64_t iterations;
    uint64_t ops;           /* --ops: metadata files per rank, open/close repetitions */
    uint64_t servers;       /* --servers: independent storage units behind --dir */
} probe_options;

void probe_options_parse(int argc, char **argv, int rank, probe_options *o);

/* Repetitions of one measurement; "best" is the highest rate or the
 * lowest time, as the CFS report kept the best of its trials. */
typedef struct samples {
    int n;
    double v[PROBE_MAX_ITERATIONS];
} samples;

typedef struct pair_timing {
    int from, to;
    bool same_host;
    samples seconds;        /* one round trip */
} pair_timing;

typedef struct read_iteration {
    double cache_fraction;  /* of the file, just before the timed read */
    const char *method;     /* how the cache was kept out of the way */
} read_iteration;


/* The device's read requests over each trial of a read pass (rank 0's
 * view of the whole device: on a quiet machine, the pass's own). */
/* A trial's device bytes are the pass's own when they are its file's bytes
 * within this fraction: the kernel's read-ahead stops at the file's end and
 * a file's own metadata (inode, extent blocks) is a few KiB, so a quiet
 * pass reads its file to well under 1 % (64.0-64.2 MiB for 64 MiB here);
 * beyond 5 % the device served another process too (a shared root disk
 * moved 108 MB in 5 idle seconds), and the trial's request sizes are not
 * the kernel's read-ahead of this pass. */
#define DEVICE_OWN_TOLERANCE 0.05
typedef struct device_reads {
    samples requests, bytes;
} device_reads;

typedef struct probe_result {
    const probe_options *opts;
    int argc;
    char **argv;
    int nranks, nhosts;
    host_info *hosts;       /* per rank */
    int *host_of;            /* per rank: first rank on the same host */
    char started_utc[32], finished_utc[32];
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
    int mpi_version, mpi_subversion;
    fs_facts fs;
    int64_t read_ahead_bytes;   /* the device's read_ahead_kb in bytes; -1 none (tmpfs, network) */

    double *memory_per_rank; /* best MiB/s of each rank, all ranks copying at once */
    samples memory_aggregate; /* MiB/s, all ranks */
    samples barrier;          /* seconds per barrier */
    bool have_pairs;
    pair_timing nearest, farthest;
    samples open_read_close, open_write_close; /* seconds per open+byte+close */
    samples lock_pair;                         /* seconds per byte-range lock + unlock */
    samples stream_write, stream_read;          /* MiB/s */
    samples stream_write_seconds, stream_read_seconds;
    bool stream_preallocated;                    /* the write went into reserved space */
    read_iteration reads[PROBE_MAX_ITERATIONS];
    samples creates, stats, removes;             /* operations per second, all ranks */
    /* The stream read once more with the file in the page cache. */
    samples stream_read_cached, stream_read_cached_seconds; /* MiB/s, s */
    double cached_fraction;                      /* least residency before it */
    /* The last short_bytes of the stream read again from storage (the
     * cache emptied first); 0 bytes when an eighth is less than one call. */
    uint64_t short_bytes;
    samples stream_read_short_seconds;
    /* The stream written into a new file, no space reserved (fsync). */
    samples stream_write_new_seconds;
    /* Ranks 0 and 1 writing (fsync) then reading a half of one file each,
     * at once, the page cache emptied between (two ranks or more): seconds
     * until both are done. */
    samples two_writers_seconds, two_streams_seconds;
    /* Ranks 0 and 1 writing a half's bytes (fsync) into a file each at
     * once, each file made anew with its space reserved: a file per rank. */
    samples two_files_seconds;
    /* Then both reading the whole file at once, every other block each;
     * then four readers at once, a quarter each (ranks 0 and 1 with a
     * thread each beside them; none when a quarter is less than a call);
     * then the same four readers every fourth block each (four
     * interleaved readers on two cores); then both reading all of it at
     * once, every block each (the same bytes: a broadcast). */
    samples two_interleaved_seconds, four_streams_seconds, four_interleaved_seconds, two_same_seconds;
    /* Then four readers at once again, each a share of one device
     * read-ahead window (four_short_share bytes: read_ahead_kb in whole
     * calls), the file's last four such shares, so the last ends at the
     * file's end as a partitioned file's last rank does: a reader's
     * read-ahead ramps up to a window that reaches past its share into its
     * neighbour's, while the neighbour may not yet have read it (none
     * without a known read-ahead, or when four shares are the whole file). */
    uint64_t four_short_share;
    samples four_short_seconds;
    /* the device's read requests over the one stream's read and each read
     * pass of two or four readers: how read-ahead cut them */
    device_reads stream_read_dev, two_streams_dev, two_interleaved_dev, four_streams_dev,
        four_interleaved_dev, two_same_dev, four_short_dev;
    /* MPI messages rank 1 -> rank 0 (two ranks or more). */
    bool have_messages;
    uint64_t message_bytes;                      /* in --block messages */
    samples message_seconds;
    /* A grouped run's token round a ring of every rank (two ranks or more):
     * seconds per hand-over, alone and with a yielding thread per rank;
     * and between ranks 0 and 1 pinned to one core. */
    samples token_pass, token_pass_crowded, token_pass_shared_core;
    /* Seconds per hand-over between ranks 0 and 1 waiting by MPI_Test and
     * sched_yield beside one busy thread per core (two ranks or more). */
    samples busy_handover;
    int busy_threads;
    /* Seconds per collective MPI-IO call of 1 byte per rank. */
    samples collective_write, collective_read;
    char collective_impl[32];
    long long cb_buffer_size;                    /* as MPI_File_get_info said; 0 unknown */
    samples collective_open_close;               /* seconds per MPI_File_open + close, all ranks */
    /* The stream in calls of a collective buffer (buffer_call bytes, a new
     * file, fsync; then read with the cache emptied): rank 0 alone, then
     * ranks 0 and 1 a half each at once (two ranks or more), then four
     * readers at once, a quarter each in calls of buffer_four_call bytes
     * (ranks 0 and 1 with a thread each beside them: four aggregators on a
     * host of two cores). */
    uint64_t buffer_call, buffer_bytes, buffer_four_call;
    samples buffer_write_seconds, buffer_read_seconds;
    samples buffer_writers_seconds, buffer_readers_seconds, buffer_four_readers_seconds;

    char *warnings[PROBE_MAX_WARNINGS];
    int nwarnings;
} probe_result;

/* The path's peak for one direction: the slowest component of the path
 * times its parallelism. */
typedef struct probe_peak {
    double mib_per_s;
    const char *limited_by;  /* "storage" or "memory copy" */
    double component_mib_per_s;
    double parallelism;
    double storage_mib_per_s, memory_mib_per_s; /* both terms */
} probe_peak;

double samples_best(const samples *s, bool higher_is_better);
double samples_median(const samples *s);

probe_peak probe_predicted_peak(const probe_result *r, bool writing);
void probe_result_warn(probe_result *r);
void probe_result_print(const probe_result *r);
int probe_result_save_json(const probe_result *r, const char *path); /* 0 or errno */

#endif
