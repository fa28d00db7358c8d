#include "io_result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "../util/result_doc.h"
#include "../util/sizes.h"

static void warn(io_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(io_result *r, const char *fmt, ...)
{
    if (r->nwarnings >= IO_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&r->warnings[r->nwarnings], fmt, ap) >= 0)
        r->nwarnings++;
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

rate_summary io_result_summary(const io_result *r, enum phase_kind kind)
{
    rate_summary s = {0};
    double *v = malloc(sizeof(double) * (size_t)(r->nits ? r->nits : 1));
    double sum = 0;
    for (int i = 0; i < r->nits; i++) {
        if (r->its[i].kind != kind)
            continue;
        double rate = r->its[i].mib_per_s;
        if (s.n == 0 || rate > s.best) {
            s.best = rate;
            s.best_seconds = r->its[i].seconds;
        }
        v[s.n++] = rate;
        sum += rate;
    }
    if (s.n) {
        qsort(v, (size_t)s.n, sizeof *v, cmp_double);
        s.min = v[0];
        s.median = s.n % 2 ? v[s.n / 2] : 0.5 * (v[s.n / 2 - 1] + v[s.n / 2]);
        s.mean = sum / s.n;
        double ss = 0;
        for (int i = 0; i < s.n; i++)
            ss += (v[i] - s.mean) * (v[i] - s.mean);
        s.stdev = sqrt(ss / s.n); /* population, as IOR reports */
    }
    free(v);
    return s;
}

/* The targets a per-target rate is over: those the file reaches (a
 * target that held no byte delivered nothing to average in). */
static int targets_used(const io_result *r)
{
    int n = stripe_targets_reached(&r->opts->stripe, r->file_bytes);
    return n > 0 ? n : 1;
}

void io_result_warn(io_result *r)
{
    const io_options *o = r->opts;
    char a[32], b[32];
    bool reads = io_has_phase(o, PHASE_READ), writes = io_has_phase(o, PHASE_WRITE);

    if (r->fs.memory_backed)
        warn(r, "target %s is %s: every rate here is memory speed, not storage", o->dir,
             r->fs.type);
    if (o->direct && r->fs.memory_backed)
        warn(r, "--direct on %s: it accepts O_DIRECT but still serves every byte from memory",
             r->fs.type);
    if (o->evict && r->fs.memory_backed)
        warn(r, "--evict has no effect on %s: the file lives in memory", r->fs.type);
    if (writes && !o->fsync && !o->direct)
        warn(r, "write phases without fsync measure the page cache, not storage: drop --no-fsync");
    /* The token passes among G ranks at a time: G at or above the rank
     * count leaves nobody waiting (group_token.c), as the front end's plan
     * notes say for its own points. */
    if (o->group && o->group >= r->nranks)
        warn(r, "--group %d with %d rank(s): all ranks do I/O at once, so this run is "
                "ungrouped; give more ranks than G to see grouping", o->group, r->nranks);

    /* Cache honesty for reads: the data a node reads is smaller than twice
     * its memory and nothing kept the page cache out of the way. */
    if (reads && !r->fs.memory_backed && !o->direct && !o->evict && !(o->api_caps & BACKEND_CAP_OBJECTS)) {
        bool crosses_hosts = true;
        if (o->read_shift % (uint64_t)r->nranks == 0 || o->layout->read_only)
            crosses_hosts = false;
        for (int i = 0; i < r->nranks && crosses_hosts; i++) {
            int from = (int)(((uint64_t)i + o->read_shift) % (uint64_t)r->nranks);
            if (r->host_of[i] == r->host_of[from])
                crosses_hosts = false;
        }
        uint64_t data = r->file_bytes * r->files;
        uint64_t mem = r->hosts[0].memory_bytes;
        if (!crosses_hosts && data < 2 * mem) {
            size_format(data, a, sizeof a);
            size_approx(mem, b, sizeof b);
            warn(r,
                 "read rates are likely served from the page cache: the data (%s) is smaller "
                 "than twice this node's memory (%s) and neither --direct nor --evict was used",
                 a, b);
        }
    }
    double cached = -1;
    for (int i = 0; i < r->nits; i++)
        if (r->its[i].kind == PHASE_READ && r->its[i].cache_fraction > cached)
            cached = r->its[i].cache_fraction;
    if (cached > 0.5 && !r->fs.memory_backed && !o->direct)
        warn(r, "up to %.0f%% of the file was in the page cache when a read phase began",
             100.0 * cached);

    /* More ranks than cores on a host: waiting ranks busy-poll in MPI and
     * take CPU from the ranks doing I/O. */
    int *on_host = calloc((size_t)r->nranks, sizeof(int)); /* indexed by a host's first rank */
    for (int j = 0; j < r->nranks; j++)
        on_host[r->host_of[j]]++;
    for (int i = 0; i < r->nranks; i++) {
        if (r->host_of[i] == i && on_host[i] > r->hosts[i].cores) {
            warn(r, "%d ranks share %d cores on %s: ranks waiting in MPI spin and take CPU "
                    "from ranks doing I/O",
                 on_host[i], r->hosts[i].cores, r->hosts[i].name);
            break;
        }
    }
    free(on_host);
    char reporting[1024];
    if (hosts_free_page_reporting_warning(r->hosts, r->host_of, r->nranks, reporting, sizeof reporting))
        warn(r, "%s", reporting);
    double shortest = -1;
    for (int i = 0; i < r->nits; i++)
        if (shortest < 0 || r->its[i].seconds < shortest)
            shortest = r->its[i].seconds;
    if (shortest >= 0 && shortest < 0.05)
        warn(r, "a phase lasted under 0.05 s: barrier and open/close costs weigh on the rate; "
                "raise --size for a steadier figure");
    const char *caveat = o->api->caveat ? o->api->caveat(o->api_config) : NULL;
    if (caveat)
        warn(r, "%s", caveat);
    if (o->stripe.ntargets && targets_used(r) < o->stripe.ntargets) {
        /* warned, not refused: a short file on few targets is a fair thing
         * to measure (the front end's quick sizes), if said */
        int used = targets_used(r);
        size_format(r->file_bytes, a, sizeof a);
        size_format(o->stripe.unit, b, sizeof b);
        char most[32], idle[48];
        size_format(r->file_bytes / (uint64_t)o->stripe.ntargets / 8 * 8, most, sizeof most);
        if (used == o->stripe.ntargets - 1)
            snprintf(idle, sizeof idle, "target %d", used);
        else
            snprintf(idle, sizeof idle, "targets %d..%d", used, o->stripe.ntargets - 1);
        warn(r,
             "--stripe-unit %s puts each %s file on %d of the %d targets: %s moved nothing, so "
             "the per-target rates are over the %d that did; a --stripe-unit of at most %s "
             "reaches every target",
             b, a, used, o->stripe.ntargets, idle, used, most);
    }
    if (o->direct && o->huge_pages && !r->huge_pages_granted)
        warn(r, "transparent huge pages were refused: direct I/O buffers are in 4 KiB pages");
}

static void write_rank(json *j, const io_iteration *it, int rank)
{
    const rank_record *x = &it->ranks[rank];
    json_object_begin(j, NULL);
    json_int(j, "rank", rank);
    json_double(j, "start_seconds", x->start);
    json_double(j, "open_seconds", x->open_done - x->start);
    json_double(j, "io_seconds", x->io_done - x->open_done);
    json_double(j, "fsync_seconds", x->sync_done - x->io_done);
    json_double(j, "close_seconds", x->close_done - x->sync_done);
    json_double(j, "total_seconds", x->stop - x->start);
    json_double(j, "io_first_seconds", x->io_first);
    json_double(j, "io_last_seconds", x->io_last);
    json_uint(j, "bytes", (uint64_t)x->bytes);
    if (it->trace) {
        json_array_begin(j, "calls");
        const double *t = it->trace + (size_t)rank * it->trace_calls * 2;
        for (uint64_t k = 0; k < it->trace_calls; k++) {
            json_array_begin(j, NULL);
            json_double(j, NULL, t[2 * k]);
            json_double(j, NULL, t[2 * k + 1]);
            json_array_end(j);
        }
        json_array_end(j);
    }
    json_object_end(j);
}

/* What the backend saw the library do, one number per rank per name. */
static void write_observed(json *j, const io_result *r, const io_iteration *it)
{
    const char *const *names = r->opts->api->observed_names;
    if (!names)
        return;
    json_object_begin(j, "observed");
    for (int n = 0; names[n] && n < BACKEND_MAX_OBSERVED; n++) {
        json_array_begin(j, names[n]);
        for (int k = 0; k < r->nranks; k++)
            json_double(j, NULL, it->ranks[k].observed[n]);
        json_array_end(j);
    }
    json_object_end(j);
}

static void write_phase(json *j, const io_result *r, enum phase_kind kind)
{
    json_object_begin(j, NULL);
    json_string(j, "name", phase_name(kind));
    json_array_begin(j, "iterations");
    for (int i = 0; i < r->nits; i++) {
        const io_iteration *it = &r->its[i];
        if (it->kind != kind)
            continue;
        json_object_begin(j, NULL);
        json_uint(j, "iteration", it->iteration);
        json_uint(j, "data_iteration", it->data_iteration);
        json_double(j, "seconds", it->seconds);
        json_uint(j, "bytes", it->bytes);
        json_double(j, "mib_per_s", it->mib_per_s);
        if (r->opts->stripe.ntargets)
            json_double(j, "per_target_mib_per_s", it->mib_per_s / targets_used(r));
        if (it->cache_fraction >= 0)
            json_double(j, "cache_resident_fraction", it->cache_fraction);
        else
            json_null(j, "cache_resident_fraction");
        if (it->background_load >= 0)
            json_double(j, "background_load", it->background_load);
        else
            json_null(j, "background_load");
        if (it->device_known) {
            json_object_begin(j, "device_reads");
            json_uint(j, "requests", it->device_requests);
            json_uint(j, "bytes", it->device_bytes);
            json_object_end(j);
        } else {
            json_null(j, "device_reads");
        }
        json_object_begin(j, "verify");
        json_bool(j, "checked", it->verified);
        json_uint(j, "bytes", it->verified_bytes);
        json_double(j, "seconds", it->verify_seconds);
        json_object_end(j);
        json_array_begin(j, "ranks");
        for (int k = 0; k < r->nranks; k++)
            write_rank(j, it, k);
        json_array_end(j);
        write_observed(j, r, it);
        json_object_end(j);
    }
    json_array_end(j);
    rate_summary s = io_result_summary(r, kind);
    json_object_begin(j, "summary");
    json_int(j, "iterations", s.n);
    json_double(j, "best_mib_per_s", s.best);
    json_double(j, "median_mib_per_s", s.median);
    json_double(j, "mean_mib_per_s", s.mean);
    json_double(j, "min_mib_per_s", s.min);
    json_double(j, "stdev_mib_per_s", s.stdev);
    json_double(j, "best_seconds", s.best_seconds);
    if (r->opts->stripe.ntargets) {
        /* the reports' "scaled" (per-RAID) rate: what each target delivered */
        json_double(j, "per_target_best_mib_per_s", s.best / targets_used(r));
        json_double(j, "per_target_median_mib_per_s", s.median / targets_used(r));
    }
    json_object_end(j);
    json_object_end(j);
}

int io_result_save_json(const io_result *r, const char *path)
{
    const io_options *o = r->opts;
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "io");
    result_doc_run(&j, r->argc, r->argv, r->started_utc, r->finished_utc);

    hosts_write_mpi_json(&j, r->mpi_library, r->mpi_version, r->mpi_subversion, r->hosts,
                         r->host_of, r->nranks);

    result_doc_target(&j, o->dir, r->path, &r->fs, r->hosts[0].memory_bytes);

    json_object_begin(&j, "params");
    json_string(&j, "layout", o->layout->name);
    json_string(&j, "files", o->per_rank_files ? "per-rank" : "shared");
    json_string(&j, "api", o->api->name);
    json_string(&j, "api_style", (o->api_caps & BACKEND_CAP_TRANSFER) ? "transfer"
                                 : (o->api_caps & BACKEND_CAP_ASYNC)  ? "async"
                                                                      : "per-call");
    json_object_begin(&j, "api_options");
    if (o->api->describe)
        o->api->describe(o->api_config, &j);
    json_object_end(&j);
    json_uint(&j, "block_bytes", o->block);
    json_uint(&j, "size_bytes", o->size);
    json_uint(&j, "file_bytes", r->file_bytes);
    json_uint(&j, "file_count", r->files);
    json_uint(&j, "calls_per_rank", r->calls_per_rank);
    if (o->api_caps & BACKEND_CAP_TRANSFER)
        json_uint(&j, "transfer_slice_bytes", r->transfer_slice_bytes);
    if (o->api_caps & BACKEND_CAP_TRANSFER)
        json_uint(&j, "transfer_held_bytes", r->transfer_held_bytes);
    json_array_begin(&j, "phases");
    for (int i = 0; i < o->nphases; i++)
        json_string(&j, NULL, phase_name(o->phases[i]));
    json_array_end(&j);
    json_uint(&j, "iterations", o->iterations);
    json_int(&j, "group", o->group);
    json_string(&j, "group_unit", o->group_unit == GROUP_PER_CALL ? "call" : "rank");
    if (r->group_wait)
        json_string(&j, "group_wait", r->group_wait);
    else
        json_null(&j, "group_wait");
    json_bool(&j, "prealloc", o->prealloc);
    json_bool(&j, "fsync", o->fsync);
    json_bool(&j, "direct", o->direct);
    json_bool(&j, "evict", o->evict);
    json_bool(&j, "huge_pages_requested", o->huge_pages);
    json_bool(&j, "huge_pages_granted", r->huge_pages_granted);
    json_uint(&j, "read_shift", o->read_shift);
    json_bool(&j, "verify", o->verify);
    json_bool(&j, "keep", o->keep);
    json_bool(&j, "trace", o->trace);
    json_uint(&j, "seed", o->seed);
    if (o->background) {
        json_object_begin(&j, "background");
        json_int(&j, "loaders_per_node", o->background);
        json_string(&j, "kind", background_kind_name(o->background_kind));
        json_double(&j, "known_task_alone_seconds", r->background_alone_seconds);
        json_object_end(&j);
    } else {
        json_null(&j, "background");
    }
    if (o->stripe.ntargets) {
        json_object_begin(&j, "stripe");
        json_int(&j, "targets", o->stripe.ntargets);
        json_int(&j, "targets_with_data", targets_used(r)); /* the per-target rates' divisor */
        json_uint(&j, "unit_bytes", o->stripe.unit);
        json_array_begin(&j, "dirs");
        for (int t = 0; t < o->stripe.ntargets; t++)
            json_string(&j, NULL, o->stripe.dirs[t]);
        json_array_end(&j);
        json_object_end(&j);
    } else {
        json_null(&j, "stripe");
    }
    json_object_end(&j);

    json_array_begin(&j, "phases");
    for (int p = 0; p < o->nphases; p++)
        write_phase(&j, r, o->phases[p]);
    json_array_end(&j);

    json_object_begin(&j, "verification");
    json_bool(&j, "requested", o->verify);
    json_bool(&j, "ok", true); /* a failed verification never reaches here */
    uint64_t checked = 0;
    for (int i = 0; i < r->nits; i++)
        checked += r->its[i].verified_bytes;
    json_uint(&j, "bytes_checked", checked);
    json_object_end(&j);

    json_array_begin(&j, "kept_files");
    if (o->keep) {
        for (uint64_t f = 0; f < r->files; f++) {
            char p[PATH_MAX + 16];
            if (o->per_rank_files) {
                size_t n = strlen(r->path);
                snprintf(p, sizeof p, "%.*s%08llu", (int)(n - 8), r->path, (unsigned long long)f);
            } else {
                snprintf(p, sizeof p, "%s", r->path);
            }
            json_object_begin(&j, NULL);
            json_string(&j, "path", p);
            json_uint(&j, "bytes", r->file_bytes);
            json_uint(&j, "seed", o->seed);
            json_uint(&j, "stream", o->per_rank_files ? f : 0);
            json_uint(&j, "data_iteration", r->last_data_iteration);
            if (o->stripe.ntargets) {
                json_array_begin(&j, "parts"); /* in target order: stripe s is on s mod N */
                for (int t = 0; t < o->stripe.ntargets; t++) {
                    char part[PATH_MAX];
                    stripe_part_path(&o->stripe, t, p, part);
                    json_string(&j, NULL, part);
                }
                json_array_end(&j);
            }
            json_object_end(&j);
        }
    }
    json_array_end(&j);

    return result_doc_close(&j, (const char *const *)r->warnings, r->nwarnings, path);
}

void io_result_print(const io_result *r)
{
    const io_options *o = r->opts;
    char bl[32], sz[32];
    size_format(o->block, bl, sizeof bl);
    size_format(o->size, sz, sizeof sz);
    printf("pario-engine io: %s, %s file%s, api %s, %d rank(s), block %s, size %s\n",
           o->layout->name, o->per_rank_files ? "per-rank" : "shared",
           o->per_rank_files ? "s" : "", o->api->name, r->nranks, bl, sz);
    if (o->group)
        printf("  grouped: at most %d rank(s) in I/O at once, token per %s\n", o->group,
               o->group_unit == GROUP_PER_CALL ? "call" : "rank");
    printf("  target %s (%s)%s%s%s\n", r->path, r->fs.type, o->direct ? ", O_DIRECT" : "",
           /* an object is stored whole when its PUT returns: nothing to sync */
           o->fsync && !(o->api_caps & BACKEND_CAP_OBJECTS) ? ", fsync before close" : "",
           o->evict ? ", cache evicted before reads" : "");
    printf("%-6s %5s %12s %10s %9s %9s %9s %9s\n", "phase", "iter", "MiB/s", "seconds",
           "open(s)", "io(s)", "fsync(s)", "close(s)");
    for (int i = 0; i < r->nits; i++) {
        const io_iteration *it = &r->its[i];
        double open = 0, io = 0, sync = 0, close = 0; /* slowest rank of each part */
        for (int k = 0; k < r->nranks; k++) {
            const rank_record *x = &it->ranks[k];
            open = fmax(open, x->open_done - x->start);
            io = fmax(io, x->io_done - x->open_done);
            sync = fmax(sync, x->sync_done - x->io_done);
            close = fmax(close, x->close_done - x->sync_done);
        }
        char rate[32];
        rate_format(it->mib_per_s, rate, sizeof rate);
        printf("%-6s %5llu %12s %10.4f %9.4f %9.4f %9.4f %9.4f%s\n", phase_name(it->kind),
               (unsigned long long)it->iteration, rate, it->seconds, open, io, sync,
               close, it->verified ? "  verified" : "");
    }
    for (int p = 0; p < o->nphases; p++) {
        rate_summary s = io_result_summary(r, o->phases[p]);
        char best[32], median[32], min[32], stdev[32];
        rate_format(s.best, best, sizeof best);
        rate_format(s.median, median, sizeof median);
        rate_format(s.min, min, sizeof min);
        rate_format(s.stdev, stdev, sizeof stdev);
        printf("%s: best %s MiB/s, median %s, min %s, stdev %s over %d iteration(s)\n",
               phase_name(o->phases[p]), best, median, min, stdev, s.n);
        if (o->background) {
            double sum = 0;
            int n = 0;
            for (int i = 0; i < r->nits; i++)
                if (r->its[i].kind == o->phases[p] && r->its[i].background_load >= 0) {
                    sum += r->its[i].background_load;
                    n++;
                }
            printf("%s under %d %s loader(s) per node: load %.2f (known task under load / "
                   "alone, mean of %d)\n",
                   phase_name(o->phases[p]), o->background, background_kind_name(o->background_kind),
                   n ? sum / n : 0, n);
        }
        if (o->stripe.ntargets) {
            int used = targets_used(r);
            rate_format(s.best / used, best, sizeof best);
            rate_format(s.median / used, median, sizeof median);
            char over[48] = "";
            if (used < o->stripe.ntargets)
                snprintf(over, sizeof over, "%d of ", used);
            printf("%s per target: best %s MiB/s, median %s (%s%d targets%s, unit %llu bytes)\n",
                   phase_name(o->phases[p]), best, median, over, o->stripe.ntargets,
                   used < o->stripe.ntargets ? " hold data" : "", (unsigned long long)o->stripe.unit);
        }
    }
    for (int i = 0; i < r->nwarnings; i++)
        printf("warning: %s\n", r->warnings[i]);
    fflush(stdout);
}

void io_result_free(io_result *r)
{
    for (int i = 0; i < r->nits; i++) {
        free(r->its[i].ranks);
        free(r->its[i].trace);
    }
    free(r->its);
    free(r->hosts);
    free(r->host_of);
    for (int i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
}
