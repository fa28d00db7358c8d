/* The probe's result: its summary, the predicted peak, the warnings, the
 * printed tables (CFS Tables 2 and 3) and the JSON document, all from one
 * probe_result, so the two outputs cannot disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/json.h"
#include "../../util/result_doc.h"
#include "../../util/sizes.h"
#include "probe.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double samples_best(const samples *s, bool higher_is_better)
{
    if (s->n == 0)
        return NAN;
    double b = s->v[0];
    for (int i = 1; i < s->n; i++)
        b = higher_is_better ? fmax(b, s->v[i]) : fmin(b, s->v[i]);
    return b;
}

double samples_median(const samples *s)
{
    if (s->n == 0)
        return NAN;
    double v[PROBE_MAX_ITERATIONS];
    memcpy(v, s->v, sizeof(double) * (size_t)s->n);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    return s->n % 2 ? v[s->n / 2] : 0.5 * (v[s->n / 2 - 1] + v[s->n / 2]);
}

static double mib_of_round_trip(double seconds)
{
    return (double)PROBE_REQUEST_BYTES / (1 << 20) / seconds;
}

/* The bytes of the file the two ranks' rows use (whole calls, a half
 * each), and the part of it four readers move (whole calls, a quarter). */
static uint64_t two_ranks_bytes(const probe_options *o)
{
    return o->stream_bytes / o->block / 2 * o->block * 2;
}

static uint64_t four_readers_bytes(const probe_options *o)
{
    return two_ranks_bytes(o) / o->block / 4 * o->block * 4;
}

/* The CFS report: the path's peak is its slowest link times how many of
 * that link work at once ("10 disks x 0.82 MB/s").  On this path the links
 * are (1) the storage, one stream's rate times --servers independent units,
 * and (2) the ranks' memory, the copy rate of all probe ranks at once.
 * MPI request/reply is reported but is on the storage path only for
 * collective I/O's exchange, so it is not a term. */
probe_peak probe_predicted_peak(const probe_result *r, bool writing)
{
    probe_peak p = {0};
    double stream = samples_best(writing ? &r->stream_write : &r->stream_read, true);
    p.storage_mib_per_s = stream * (double)r->opts->servers;
    p.memory_mib_per_s = samples_best(&r->memory_aggregate, true);
    if (!(p.memory_mib_per_s < p.storage_mib_per_s)) {
        p.limited_by = "storage";
        p.component_mib_per_s = stream;
        p.parallelism = (double)r->opts->servers;
        p.mib_per_s = p.storage_mib_per_s;
    } else {
        p.limited_by = "memory copy";
        p.component_mib_per_s = p.memory_mib_per_s / r->nranks;
        p.parallelism = r->nranks;
        p.mib_per_s = p.memory_mib_per_s;
    }
    return p;
}

static void warn(probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(probe_result *r, const char *fmt, ...)
{
    if (r->nwarnings >= PROBE_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&r->warnings[r->nwarnings], fmt, ap) >= 0)
        r->nwarnings++;
    va_end(ap);
}

void probe_result_warn(probe_result *r)
{
    const probe_options *o = r->opts;
    if (r->fs.memory_backed)
        warn(r, "target %s is %s: the 'storage' stream is memory, and so is the predicted peak",
             o->dir, r->fs.type);
    double cached = 0;
    for (int i = 0; i < r->stream_read.n; i++)
        if (r->reads[i].cache_fraction > cached)
            cached = r->reads[i].cache_fraction;
    for (int i = 0; i < r->stream_read.n && !r->fs.memory_backed; i++) {
        if (strncmp(r->reads[i].method, "none", 4) == 0) {
            warn(r, "the stream read could not keep the page cache out (%.0f%% resident, "
                    "O_DIRECT refused): its rate is partly memory",
                 100 * cached);
            break;
        }
    }
    if (r->nranks < 2)
        warn(r, "one rank: no request/reply between ranks was measured; run with 2 or more");
    int *on_host = calloc((size_t)r->nranks, sizeof(int));
    for (int j = 0; j < r->nranks; j++)
        on_host[r->host_of[j]]++;
    for (int i = 0; i < r->nranks; i++) {
        if (r->host_of[i] == i && on_host[i] > r->hosts[i].cores) {
            warn(r, "%d ranks share %d cores on %s: waiting ranks spin and slow the rank measuring",
                 on_host[i], r->hosts[i].cores, r->hosts[i].name);
            break;
        }
    }
    free(on_host);
    char reporting[1024];
    if (hosts_free_page_reporting_warning(r->hosts, r->host_of, r->nranks, reporting, sizeof reporting))
        warn(r, "%s", reporting);
    if (samples_best(&r->stream_write_seconds, false) < 0.05 ||
        samples_best(&r->stream_read_seconds, false) < 0.05)
        warn(r, "a stream lasted under 0.05 s: open and fsync costs weigh on its rate; raise --size");
}

void probe_result_print(const probe_result *r)
{
    const probe_options *o = r->opts;
    char sz[32], mem[32], bl[32];
    size_format(o->stream_bytes, sz, sizeof sz);
    size_format(o->memory_bytes, mem, sizeof mem);
    size_format(o->block, bl, sizeof bl);
    printf("pario-engine probe: %d rank(s) on %d host(s), target %s (%s)\n", r->nranks, r->nhosts,
           o->dir, r->fs.type);
    printf("Measured component rates (best of %llu; CFS Table 2)\n",
           (unsigned long long)o->iterations);
    printf("  %-56s %12s\n", "component", "MiB/s");
    double slowest = INFINITY;
    for (int i = 0; i < r->nranks; i++)
        slowest = fmin(slowest, r->memory_per_rank[i]);
    char what[96];
    snprintf(what, sizeof what, "memory copy, slowest rank (%s, %d at once)", mem, r->nranks);
    printf("  %-56s %12.1f\n", what, slowest);
    printf("  %-56s %12.1f\n", "memory copy, all ranks", samples_best(&r->memory_aggregate, true));
    if (r->have_pairs && r->farthest.to == r->nearest.to) {
        /* two ranks: the nearest and the farthest are one pair, measured
           twice; one line, the best of both */
        snprintf(what, sizeof what, "request/reply 4 KiB, 0 <-> %d (nearest = farthest)", r->nearest.to);
        printf("  %-56s %12.1f\n", what,
               mib_of_round_trip(fmin(samples_best(&r->nearest.seconds, false),
                                      samples_best(&r->farthest.seconds, false))));
    } else if (r->have_pairs) {
        snprintf(what, sizeof what, "request/reply 4 KiB, nearest (0 <-> %d)", r->nearest.to);
        printf("  %-56s %12.1f\n", what, mib_of_round_trip(samples_best(&r->nearest.seconds, false)));
        snprintf(what, sizeof what, "request/reply 4 KiB, farthest (0 <-> %d%s)", r->farthest.to,
                 r->farthest.same_host ? ", same host" : ", other host");
        printf("  %-56s %12.1f\n", what,
               mib_of_round_trip(samples_best(&r->farthest.seconds, false)));
    }
    snprintf(what, sizeof what, "storage, one stream write (%s, %s calls, %sfsync)", sz, bl,
             r->stream_preallocated ? "preallocated, " : "");
    printf("  %-56s %12.1f\n", what, samples_best(&r->stream_write, true));
    snprintf(what, sizeof what, "storage, one stream read (%s)",
             r->stream_read.n ? r->reads[0].method : "-");
    printf("  %-56s %12.1f\n", what, samples_best(&r->stream_read, true));
    snprintf(what, sizeof what, "storage, one stream read again (page cache, %.0f%% resident)",
             100 * r->cached_fraction);
    printf("  %-56s %12.1f\n", what, samples_best(&r->stream_read_cached, true));
    if (r->stream_read_short_seconds.n) {
        char sb[32];
        size_format(r->short_bytes, sb, sizeof sb);
        snprintf(what, sizeof what, "storage, the stream's last %s read (cache kept out)", sb);
        printf("  %-56s %12.1f\n", what,
               (double)r->short_bytes / (1 << 20) / samples_best(&r->stream_read_short_seconds, false));
    }
    if (r->stream_write_new_seconds.n)
        printf("  %-56s %12.1f\n", "storage, one stream write, new file (fsync)",
               (double)o->stream_bytes / (1 << 20) / samples_best(&r->stream_write_new_seconds, false));
    if (r->two_writers_seconds.n)
        printf("  %-56s %12.1f\n", "storage, two streams written at once (ranks 0, 1; fsync)",
               (double)two_ranks_bytes(o) / (1 << 20) /
                   samples_best(&r->two_writers_seconds, false));
    if (r->two_files_seconds.n)
        printf("  %-56s %12.1f\n", "storage, two writers of a file each (ranks 0, 1; fsync)",
               (double)two_ranks_bytes(o) / (1 << 20) / samples_best(&r->two_files_seconds, false));
    if (r->two_streams_seconds.n)
        printf("  %-56s %12.1f\n", "storage, two streams read at once (ranks 0, 1; cache kept out)",
               (double)two_ranks_bytes(o) / (1 << 20) /
                   samples_best(&r->two_streams_seconds, false));
    if (r->two_interleaved_seconds.n)
        printf("  %-56s %12.1f\n", "storage, two interleaved readers (every other block each)",
               (double)two_ranks_bytes(o) / (1 << 20) /
                   samples_best(&r->two_interleaved_seconds, false));
    if (r->four_streams_seconds.n)
        printf("  %-56s %12.1f\n", "storage, four readers at once (ranks 0, 1, 2 threads each)",
               (double)four_readers_bytes(o) / (1 << 20) / samples_best(&r->four_streams_seconds, false));
    if (r->four_interleaved_seconds.n)
        printf("  %-56s %12.1f\n", "storage, four interleaved readers (every fourth call)",
               (double)four_readers_bytes(o) / (1 << 20) /
                   samples_best(&r->four_interleaved_seconds, false));
    if (r->two_same_seconds.n)
        printf("  %-56s %12.1f\n", "storage, two readers of the same bytes (each all of it)",
               (double)two_ranks_bytes(o) / (1 << 20) / samples_best(&r->two_same_seconds, false));
    if (r->four_short_seconds.n) {
        char sb[32];
        size_format(r->four_short_share, sb, sizeof sb);
        snprintf(what, sizeof what, "storage, four readers of %s shares (the file's last)", sb);
        printf("  %-56s %12.1f\n", what,
               (double)(4 * r->four_short_share) / (1 << 20) / samples_best(&r->four_short_seconds, false));
    }
    if (r->have_messages) {
        char mb[32];
        size_format(r->message_bytes, mb, sizeof mb);
        snprintf(what, sizeof what, "MPI messages 1 -> 0 (%s in %s messages)", mb, bl);
        printf("  %-56s %12.1f\n", what,
               (double)r->message_bytes / (1 << 20) / samples_best(&r->message_seconds, false));
    }
    if (r->buffer_write_seconds.n) {
        char cb[32];
        size_format(r->buffer_call, cb, sizeof cb);
        const double mib = (double)r->buffer_bytes / (1 << 20);
        snprintf(what, sizeof what, "storage, %s calls: write, new file (fsync)", cb);
        printf("  %-56s %12.1f\n", what, mib / samples_best(&r->buffer_write_seconds, false));
        snprintf(what, sizeof what, "storage, %s calls: read (cache kept out)", cb);
        printf("  %-56s %12.1f\n", what, mib / samples_best(&r->buffer_read_seconds, false));
        if (r->buffer_writers_seconds.n) {
            snprintf(what, sizeof what, "storage, %s calls: two writers, then fsyncs", cb);
            printf("  %-56s %12.1f\n", what, mib / samples_best(&r->buffer_writers_seconds, false));
            snprintf(what, sizeof what, "storage, %s calls: two readers at once", cb);
            printf("  %-56s %12.1f\n", what, mib / samples_best(&r->buffer_readers_seconds, false));
        }
        if (r->buffer_four_readers_seconds.n) {
            size_format(r->buffer_four_call, cb, sizeof cb);
            snprintf(what, sizeof what, "storage, %s calls: four readers at once", cb);
            printf("  %-56s %12.1f\n", what, mib / samples_best(&r->buffer_four_readers_seconds, false));
        }
    }
    printf("Overheads (CFS Table 3)\n");
    printf("  %-56s %12s\n", "operation", "seconds");
    printf("  %-56s %12.7f\n", "MPI barrier", samples_best(&r->barrier, false));
    printf("  %-56s %12.7f\n", "open / read a byte / close", samples_best(&r->open_read_close, false));
    printf("  %-56s %12.7f\n", "open / write a byte / close",
           samples_best(&r->open_write_close, false));
    if (r->lock_pair.n)
        printf("  %-56s %12.7f\n", "byte-range lock and unlock (fcntl)", samples_best(&r->lock_pair, false));
    if (r->token_pass.n) {
        printf("  %-56s %12.7f\n", "token hand-over (ring of all ranks)", samples_best(&r->token_pass, false));
        printf("  %-56s %12.7f\n", "token hand-over, a yielding thread beside each rank",
               samples_best(&r->token_pass_crowded, false));
        printf("  %-56s %12.7f\n", "token hand-over, ranks 0 and 1 on one core",
               samples_best(&r->token_pass_shared_core, false));
    }
    if (r->busy_handover.n)
        printf("  %-56s %12.7f\n", "hand-over between yielding waiters, every core busy",
               samples_best(&r->busy_handover, false));
    snprintf(what, sizeof what, "collective MPI-IO write call, 1 byte per rank (%s)", r->collective_impl);
    printf("  %-56s %12.7f\n", what, samples_best(&r->collective_write, false));
    snprintf(what, sizeof what, "collective MPI-IO read call, 1 byte per rank (%s)", r->collective_impl);
    printf("  %-56s %12.7f\n", what, samples_best(&r->collective_read, false));
    snprintf(what, sizeof what, "collective MPI-IO open and close (%s)", r->collective_impl);
    printf("  %-56s %12.7f\n", what, samples_best(&r->collective_open_close, false));
    printf("Metadata (%llu files per rank, %d rank(s) at once)\n", (unsigned long long)o->ops,
           r->nranks);
    printf("  creates %.0f/s, stats %.0f/s, removes %.0f/s\n", samples_best(&r->creates, true),
           samples_best(&r->stats, true), samples_best(&r->removes, true));
    for (int w = 1; w >= 0; w--) {
        probe_peak p = probe_predicted_peak(r, w);
        printf("predicted peak %s: %.1f MiB/s = %g x %.1f MiB/s (%s)\n", w ? "write" : "read",
               p.mib_per_s, p.parallelism, p.component_mib_per_s, p.limited_by);
    }
    for (int i = 0; i < r->nwarnings; i++)
        printf("warning: %s\n", r->warnings[i]);
    fflush(stdout);
}

/* key: {values: [...], best, median}; best is the highest rate or the
 * lowest time. */
static void write_samples(json *j, const char *key, const samples *s, bool higher_is_better)
{
    json_object_begin(j, key);
    json_array_begin(j, "values");
    for (int i = 0; i < s->n; i++)
        json_double(j, NULL, s->v[i]);
    json_array_end(j);
    json_double(j, "best", samples_best(s, higher_is_better));
    json_double(j, "median", samples_median(s));
    json_object_end(j);
}

static void write_pair(json *j, const char *key, const pair_timing *p)
{
    json_object_begin(j, key);
    json_int(j, "from_rank", p->from);
    json_int(j, "to_rank", p->to);
    json_bool(j, "same_host", p->same_host);
    write_samples(j, "round_trip_seconds", &p->seconds, false);
    json_double(j, "best_mib_per_s", mib_of_round_trip(samples_best(&p->seconds, false)));
    json_object_end(j);
}

static void write_peak(json *j, const char *key, const probe_peak *p)
{
    json_object_begin(j, key);
    json_double(j, "mib_per_s", p->mib_per_s);
    json_string(j, "limited_by", p->limited_by);
    json_double(j, "component_mib_per_s", p->component_mib_per_s);
    json_double(j, "parallelism", p->parallelism);
    json_double(j, "storage_term_mib_per_s", p->storage_mib_per_s);
    json_double(j, "memory_term_mib_per_s", p->memory_mib_per_s);
    json_object_end(j);
}

/* A row timed on ranks 0 and 1 at once (count readers or writers, all
 * their calls whole; writers sync): its samples and its best rate, bytes
 * over the time until the last is done, or null when the run did not time
 * it. */
/* The device's read requests and bytes over each trial of a read pass, or
 * null where the device could not be asked (tmpfs, no /sys); with the
 * pass's file bytes and, per trial, whether the device's bytes were the
 * pass's own (DEVICE_OWN_TOLERANCE): the counters are the whole device's,
 * so a trial during which another process read is flagged, and the front
 * end leaves it out of its notes. */
static void write_device_reads(json *j, const device_reads *d, uint64_t file_bytes)
{
    if (!d || !d->requests.n) {
        json_null(j, "device_reads");
        return;
    }
    json_object_begin(j, "device_reads");
    json_array_begin(j, "requests");
    for (int i = 0; i < d->requests.n; i++)
        json_uint(j, NULL, (uint64_t)d->requests.v[i]);
    json_array_end(j);
    json_array_begin(j, "bytes");
    for (int i = 0; i < d->bytes.n; i++)
        json_uint(j, NULL, (uint64_t)d->bytes.v[i]);
    json_array_end(j);
    json_uint(j, "file_bytes", file_bytes);
    json_double(j, "own_tolerance", DEVICE_OWN_TOLERANCE);
    json_array_begin(j, "own");
    for (int i = 0; i < d->bytes.n; i++)
        json_bool(j, NULL, fabs(d->bytes.v[i] - (double)file_bytes) <= DEVICE_OWN_TOLERANCE * (double)file_bytes);
    json_array_end(j);
    json_object_end(j);
}

/* A pass of several readers (or writers) of the stream's file; a read
 * pass's device bytes are its own when they are `read_bytes` (the file's,
 * for every pass but the short shares, which read its last part). */
static void write_readers(json *j, const char *key, const char *who, int count, uint64_t bytes,
                          const samples *s, const probe_options *o, bool writes, const device_reads *dev,
                          uint64_t read_bytes)
{
    if (!s->n) {
        json_null(j, key);
        return;
    }
    json_object_begin(j, key);
    json_int(j, who, count);
    json_uint(j, "bytes", bytes);
    json_uint(j, "block_bytes", o->block);
    if (writes)
        json_bool(j, "fsync", true);
    write_samples(j, "seconds", s, false);
    json_double(j, "best_mib_per_s", (double)bytes / (1 << 20) / samples_best(s, false));
    if (!writes)
        write_device_reads(j, dev, read_bytes);
    json_object_end(j);
}

int probe_result_save_json(const probe_result *r, const char *path)
{
    const probe_options *o = r->opts;
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "probe");
    result_doc_run(&j, r->argc, r->argv, r->started_utc, r->finished_utc);

    hosts_write_mpi_json(&j, r->mpi_library, r->mpi_version, r->mpi_subversion, r->hosts,
                         r->host_of, r->nranks);

    result_doc_target(&j, o->dir, NULL, &r->fs, r->hosts[0].memory_bytes);

    json_object_begin(&j, "params");
    json_uint(&j, "stream_bytes", o->stream_bytes);
    json_uint(&j, "block_bytes", o->block);
    json_uint(&j, "memory_bytes", o->memory_bytes);
    json_uint(&j, "ops", o->ops);
    json_uint(&j, "iterations", o->iterations);
    json_uint(&j, "servers", o->servers);
    json_object_end(&j);

    json_object_begin(&j, "components");
    json_object_begin(&j, "memory_copy");
    json_uint(&j, "bytes_per_rank", o->memory_bytes);
    json_array_begin(&j, "per_rank_best_mib_per_s");
    for (int i = 0; i < r->nranks; i++)
        json_double(&j, NULL, r->memory_per_rank[i]);
    json_array_end(&j);
    write_samples(&j, "aggregate_mib_per_s", &r->memory_aggregate, true);
    json_object_end(&j);

    write_samples(&j, "barrier_seconds", &r->barrier, false);
    if (r->have_pairs) {
        json_object_begin(&j, "request_reply");
        json_uint(&j, "bytes", PROBE_REQUEST_BYTES);
        write_pair(&j, "nearest", &r->nearest);
        write_pair(&j, "farthest", &r->farthest);
        json_object_end(&j);
    } else {
        json_null(&j, "request_reply");
    }
    write_samples(&j, "open_read_byte_close_seconds", &r->open_read_close, false);
    write_samples(&j, "open_write_byte_close_seconds", &r->open_write_close, false);
    write_samples(&j, "byte_range_lock_seconds", &r->lock_pair, false);

    json_object_begin(&j, "stream_write");
    json_uint(&j, "bytes", o->stream_bytes);
    json_uint(&j, "block_bytes", o->block);
    json_bool(&j, "fsync", true);
    json_bool(&j, "preallocated", r->stream_preallocated);
    write_samples(&j, "mib_per_s", &r->stream_write, true);
    write_samples(&j, "seconds", &r->stream_write_seconds, false);
    json_object_end(&j);

    json_object_begin(&j, "stream_read");
    json_uint(&j, "bytes", o->stream_bytes);
    json_uint(&j, "block_bytes", o->block);
    write_samples(&j, "mib_per_s", &r->stream_read, true);
    write_samples(&j, "seconds", &r->stream_read_seconds, false);
    write_device_reads(&j, &r->stream_read_dev, o->stream_bytes);
    json_array_begin(&j, "iterations");
    for (int i = 0; i < r->stream_read.n; i++) {
        json_object_begin(&j, NULL);
        json_string(&j, "cache_method", r->reads[i].method);
        if (r->reads[i].cache_fraction >= 0)
            json_double(&j, "cache_resident_fraction", r->reads[i].cache_fraction);
        else
            json_null(&j, "cache_resident_fraction");
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);

    json_object_begin(&j, "stream_read_cached");
    json_uint(&j, "bytes", o->stream_bytes);
    json_uint(&j, "block_bytes", o->block);
    json_double(&j, "cache_resident_fraction", r->cached_fraction);
    write_samples(&j, "mib_per_s", &r->stream_read_cached, true);
    write_samples(&j, "seconds", &r->stream_read_cached_seconds, false);
    json_object_end(&j);

    /* The kernel's largest read-ahead window on the target's device: the
     * model sizes a read's first, synchronous read-ahead with it. */
    if (r->read_ahead_bytes >= 0) {
        json_object_begin(&j, "read_ahead");
        json_uint(&j, "max_bytes", (uint64_t)r->read_ahead_bytes);
        json_string(&j, "source", "read_ahead_kb of the block device behind --dir (/sys/dev/block)");
        json_object_end(&j);
    } else {
        json_null(&j, "read_ahead");
    }
    if (r->stream_read_short_seconds.n) {
        json_object_begin(&j, "stream_read_short");
        json_uint(&j, "bytes", r->short_bytes);
        json_uint(&j, "block_bytes", o->block);
        write_samples(&j, "seconds", &r->stream_read_short_seconds, false);
        json_double(&j, "best_mib_per_s", (double)r->short_bytes / (1 << 20) /
                                              samples_best(&r->stream_read_short_seconds, false));
        json_object_end(&j);
    } else {
        json_null(&j, "stream_read_short");
    }
    if (r->stream_write_new_seconds.n) {
        json_object_begin(&j, "stream_write_new");
        json_uint(&j, "bytes", o->stream_bytes);
        json_uint(&j, "block_bytes", o->block);
        json_bool(&j, "fsync", true);
        json_bool(&j, "preallocated", false);
        write_samples(&j, "seconds", &r->stream_write_new_seconds, false);
        json_double(&j, "best_mib_per_s", (double)o->stream_bytes / (1 << 20) /
                                              samples_best(&r->stream_write_new_seconds, false));
        json_object_end(&j);
    } else {
        json_null(&j, "stream_write_new");
    }
    /* every pass but the four readers' and the short shares' reads the
     * whole file from the device; the four readers read the quarters'
     * whole calls, less than the file where it is not four whole calls */
    const uint64_t file = two_ranks_bytes(o), quarters = four_readers_bytes(o);
    write_readers(&j, "two_writers", "writers", 2, file, &r->two_writers_seconds, o, true, NULL, file);
    /* the same bytes, a half in each writer's own file */
    write_readers(&j, "two_files", "writers", 2, file, &r->two_files_seconds, o, true, NULL, file);
    write_readers(&j, "two_streams", "readers", 2, file, &r->two_streams_seconds, o, false,
                  &r->two_streams_dev, file);
    write_readers(&j, "two_interleaved", "readers", 2, file, &r->two_interleaved_seconds, o, false,
                  &r->two_interleaved_dev, file);
    write_readers(&j, "four_streams", "readers", 4, quarters, &r->four_streams_seconds, o, false,
                  &r->four_streams_dev, quarters);
    write_readers(&j, "four_interleaved", "readers", 4, quarters, &r->four_interleaved_seconds, o, false,
                  &r->four_interleaved_dev, quarters);
    /* the file's bytes, which each of the two read whole */
    write_readers(&j, "two_same", "readers", 2, file, &r->two_same_seconds, o, false, &r->two_same_dev,
                  file);
    /* the file's last four shares of one read-ahead window each (a share:
     * bytes / readers), which the device reads and no more */
    const uint64_t short_bytes = 4 * r->four_short_share;
    write_readers(&j, "four_short_streams", "readers", 4, short_bytes, &r->four_short_seconds, o, false,
                  &r->four_short_dev, short_bytes);

    if (r->have_messages) {
        json_object_begin(&j, "messages");
        json_int(&j, "from_rank", 1);
        json_int(&j, "to_rank", 0);
        json_uint(&j, "bytes", r->message_bytes);
        json_uint(&j, "block_bytes", o->block);
        write_samples(&j, "seconds", &r->message_seconds, false);
        json_double(&j, "best_mib_per_s",
                    (double)r->message_bytes / (1 << 20) / samples_best(&r->message_seconds, false));
        json_object_end(&j);
        json_object_begin(&j, "token_pass");
        json_int(&j, "ranks", r->nranks);
        json_int(&j, "cores", r->hosts[0].cores);
        write_samples(&j, "seconds", &r->token_pass, false);
        write_samples(&j, "crowded_seconds", &r->token_pass_crowded, false);
        write_samples(&j, "shared_core_seconds", &r->token_pass_shared_core, false);
        /* how shared_core_seconds was timed: the slope between two rings
         * (an older probe timed one ring whole, in the scheduler's ticks) */
        json_string(&j, "shared_core_timing", "slope");
        json_object_end(&j);
    } else {
        json_null(&j, "messages");
        json_null(&j, "token_pass");
    }

    if (r->busy_handover.n) {
        json_object_begin(&j, "busy_handover");
        json_int(&j, "busy_threads", r->busy_threads);
        json_int(&j, "waiters", 2);
        write_samples(&j, "seconds", &r->busy_handover, false);
        json_object_end(&j);
    } else {
        json_null(&j, "busy_handover");
    }

    json_object_begin(&j, "collective_mpiio");
    json_string(&j, "implementation", r->collective_impl);
    json_int(&j, "aggregators", r->nranks);
    json_uint(&j, "calls", o->ops);
    json_uint(&j, "bytes_per_rank", 1);
    if (r->cb_buffer_size > 0)
        json_uint(&j, "cb_buffer_size", (uint64_t)r->cb_buffer_size);
    else
        json_null(&j, "cb_buffer_size");
    write_samples(&j, "write_seconds", &r->collective_write, false);
    write_samples(&j, "read_seconds", &r->collective_read, false);
    write_samples(&j, "open_close_seconds", &r->collective_open_close, false);
    json_object_end(&j);

    if (r->buffer_write_seconds.n) {
        json_object_begin(&j, "buffer_streams");
        json_uint(&j, "bytes", r->buffer_bytes);
        json_uint(&j, "call_bytes", r->buffer_call);
        json_bool(&j, "fsync", true);
        json_bool(&j, "preallocated", false);
        write_samples(&j, "write_seconds", &r->buffer_write_seconds, false);
        write_samples(&j, "read_seconds", &r->buffer_read_seconds, false);
        if (r->buffer_writers_seconds.n) {
            /* the two writers' fsyncs come after both have written (a
             * collective write's order); probes before this key let each
             * writer fsync as soon as its own writes were done */
            json_string(&j, "two_writers_sync", "after every writer's writes");
            write_samples(&j, "two_writers_seconds", &r->buffer_writers_seconds, false);
            write_samples(&j, "two_readers_seconds", &r->buffer_readers_seconds, false);
        }
        if (r->buffer_four_readers_seconds.n) {
            /* ranks 0 and 1 with a thread each, a quarter of `bytes` each */
            json_uint(&j, "four_call_bytes", r->buffer_four_call);
            write_samples(&j, "four_readers_seconds", &r->buffer_four_readers_seconds, false);
        }
        json_object_end(&j);
    } else {
        json_null(&j, "buffer_streams");
    }
    json_object_begin(&j, "metadata");
    json_uint(&j, "files_per_rank", o->ops);
    json_int(&j, "ranks", r->nranks);
    write_samples(&j, "creates_per_s", &r->creates, true);
    write_samples(&j, "stats_per_s", &r->stats, true);
    write_samples(&j, "removes_per_s", &r->removes, true);
    json_object_end(&j);
    json_object_end(&j); /* components */

    json_object_begin(&j, "predicted_peak");
    probe_peak w = probe_predicted_peak(r, true), rd = probe_predicted_peak(r, false);
    write_peak(&j, "write", &w);
    write_peak(&j, "read", &rd);
    json_string(&j, "rule", "min(one stream x servers, memory copy of all ranks): the slowest "
                            "component of the path times its parallelism");
    json_object_end(&j);

    return result_doc_close(&j, (const char *const *)r->warnings, r->nwarnings, path);
}
