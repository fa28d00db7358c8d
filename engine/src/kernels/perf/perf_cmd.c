/* `pario-engine perf`: ROMIO's perf (REFERENCE-FACTS 4), the MPI-IO upper
 * bound of the SGI 750 report's Figures 3 to 5.
 *
 * Every rank owns a fixed-size array at rank × size of one shared file.
 * Pass 1 times one MPI_File_write (after a seek to its place) and, after
 * reopening, one MPI_File_read; pass 2 does the same with MPI_File_sync
 * inside the timed write.  Each time is the maximum over ranks, each
 * figure the best of the repeats (5, as perf), bandwidth =
 * size × ranks / best time in MiB/s.  Unlike perf, pario checks what it
 * read against what it wrote (untimed) and removes the file it created. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/check_mode.h"
#include "../../util/fail.h"
#include "../../util/json.h"
#include "../../util/mpi_fail.h"
#include "../../util/mpi_file.h"
#include "../../util/mpiio_env.h"
#include "../../util/options.h"
#include "../../util/run_files.h"
#include "../../util/pattern.h"
#include "../../util/result_doc.h"
#include "../../util/sizes.h"

#define PERF_MAX_REPEATS 100

typedef struct perf_options {
    char dir[4096];
    char name[RUN_NAME_MAX]; /* --name, or "": a unique name */
    uint64_t size;
    int repeats;
    bool pass[2]; /* [0] without sync, [1] with sync */
    bool keep;
    const char *json;
    mpiio_settings mpi; /* which MPI-IO runs, recorded in the result */
} perf_options;

typedef struct perf_pass {
    double write_s[PERF_MAX_REPEATS], read_s[PERF_MAX_REPEATS]; /* max over ranks */
    double best_write, best_read;
} perf_pass;

enum { O_DIR, O_SIZE, O_REPEATS, O_SYNC, O_IMPL, O_NAME, O_KEEP, O_JSON };
static const option_spec perf_option_table[] = {
    {"dir", 0, "DIR", "where the shared file goes (required)", O_DIR},
    {"size", 0, "S", "bytes per rank (default 4m, perf's; at most 1g)", O_SIZE},
    {"repeats", 0, "N", "repetitions, the best is reported (default 5, perf's)", O_REPEATS},
    {"sync", 0, "MODE", "no, yes or both (default): MPI_File_sync inside the\ntimed write", O_SYNC},
    MPIIO_IMPL_ROW(O_IMPL),
    OPTION_NAME_ROW("pario-perf", O_NAME),
    OPTION_KEEP_ROW("the file", O_KEEP),
    OPTION_JSON_ROW(O_JSON),
};
static const command_spec perf_command_spec =
    COMMAND_SPEC("perf",
                 "usage: mpirun -np P pario-engine perf --dir DIR [options]\n",
                 NULL, perf_option_table);

static void set_option(void *ctx, int id, const char *opt, const char *v)
{
    perf_options *o = ctx;
    static const char *const sync_modes[] = {"no", "yes", "both", NULL};
    switch (id) {
    case O_DIR: option_path(opt, v, o->dir, sizeof o->dir); break;
    case O_SIZE:
        o->size = option_size_in(opt, v, 8, 1u << 30);
        if (o->size % 8)
            fail_usage("%s '%s' is not a multiple of 8 bytes: give e.g. 4m", opt, v);
        break;
    case O_REPEATS: o->repeats = (int)option_whole(opt, v, 1, PERF_MAX_REPEATS); break;
    case O_SYNC: {
        const int m = option_choice(opt, v, sync_modes);
        o->pass[0] = m != 1; /* without sync: no, both */
        o->pass[1] = m != 0; /* with sync: yes, both */
        break;
    }
    case O_IMPL: mpiio_impl_option(&o->mpi, v); break;
    case O_NAME: option_file_name(opt, v, o->name, sizeof o->name); break;
    case O_KEEP: o->keep = true; break;
    case O_JSON: o->json = option_output(opt, v); break;
    }
}

static void parse(int argc, char **argv, int rank, perf_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = 4u << 20;
    o->repeats = 5;
    o->pass[0] = o->pass[1] = true;
    options_parse(&perf_command_spec, argc, argv, rank, set_option, o);
    fail_unless_target_dir(o->dir, "where the shared file goes");
}

typedef struct perf_state {
    char path[4200];
    bool created; /* by this run: a failure after it is not a bad --dir */
    owned_file who; /* which file that is: the only one reopened or removed */
    int rank;
} perf_state;

static void remove_ours(void *arg)
{
    perf_state *s = arg;
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has closed it */
    int e = s->rank == 0 ? remove_if_ours(s->path, &s->who) : 0;
    if (e && e != ENOENT)
        mpi_fail_left_behind(s->path, e);
}

/* One repetition: timed write (and sync), close, reopen, timed read. */
static void one_repeat(const perf_options *o, perf_state *s, bool sync, const void *wbuf, void *rbuf,
                       double *tw, double *tr, mpi_why *w)
{
    const MPI_Offset at = (MPI_Offset)s->rank * (MPI_Offset)o->size;
    MPI_File fh;
    if (mpi_file_reopen(MPI_COMM_WORLD, s->path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh, &s->who, w) == MPI_SUCCESS) {
        mpi_failed(MPI_File_seek(fh, at, MPI_SEEK_SET), w, "seeking in %s", s->path);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Status st;
        int put = -1;
        errno = 0; /* what the library leaves there names a failure's cause (mpi_fail.h) */
        double t0 = MPI_Wtime();
        if (!mpi_failed(MPI_File_write(fh, wbuf, (int)o->size, MPI_BYTE, &st), w, "MPI_File_write to %s", s->path))
            MPI_Get_count(&st, MPI_BYTE, &put);
        if (sync) /* collective: every rank calls it, failed or not, so none waits forever */
            mpi_failed(MPI_File_sync(fh), w, "MPI_File_sync of %s", s->path);
        *tw = MPI_Wtime() - t0;
        if (put >= 0 && put != (int)o->size) /* ompio reports a short write as success */
            mpi_why_short_write(w, o->size - (uint64_t)put, "MPI_File_write to %s wrote %d of %llu bytes",
                                s->path, put, (unsigned long long)o->size);
        mpi_file_close(&fh, w, s->path);
    }
    mpi_stop_if_failed(w, MPI_COMM_WORLD, remove_ours, s);
    MPI_Barrier(MPI_COMM_WORLD);

    memset(rbuf, 0, o->size);
    MPI_Status st;
    int got = -1;
    if (mpi_file_reopen(MPI_COMM_WORLD, s->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh, &s->who, w) == MPI_SUCCESS) {
        mpi_failed(MPI_File_seek(fh, at, MPI_SEEK_SET), w, "seeking in %s", s->path);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (!mpi_failed(MPI_File_read(fh, rbuf, (int)o->size, MPI_BYTE, &st), w, "MPI_File_read of %s", s->path))
            MPI_Get_count(&st, MPI_BYTE, &got);
        *tr = MPI_Wtime() - t0;
        mpi_file_close(&fh, w, s->path);
    }
    if (!w->text[0] && (got != (int)o->size || memcmp(rbuf, wbuf, o->size) != 0))
        mpi_why_set(w, "read back %d of %llu bytes at offset %lld of %s and they differ from what "
                       "was written", got, (unsigned long long)o->size, (long long)at, s->path);
    mpi_stop_if_failed(w, MPI_COMM_WORLD, remove_ours, s);
}

static double mib_per_s(const perf_options *o, int nranks, double seconds)
{
    return (double)o->size * nranks / (seconds * 1048576.0);
}

static void save_json(const perf_options *o, int nranks, const perf_pass pass[2], result_where *where)
{
    json j;
    json_init(&j, true);
    result_doc_begin(&j, "perf");
    json_string(&j, "status", "ok");
    result_doc_where(&j, where, o->dir, NULL);
    json_object_begin(&j, "params");
    json_string(&j, "dir", o->dir);
    json_uint(&j, "size_per_rank_bytes", o->size);
    json_int(&j, "ranks", nranks);
    json_int(&j, "repeats", o->repeats);
    mpiio_run_json(&j, &o->mpi);
    json_object_end(&j);
    json_array_begin(&j, "passes");
    for (int p = 0; p < 2; p++) {
        if (!o->pass[p])
            continue;
        json_object_begin(&j, NULL);
        json_bool(&j, "sync", p == 1);
        json_double(&j, "write_mib_per_s", mib_per_s(o, nranks, pass[p].best_write));
        json_double(&j, "read_mib_per_s", mib_per_s(o, nranks, pass[p].best_read));
        json_double(&j, "best_write_seconds", pass[p].best_write);
        json_double(&j, "best_read_seconds", pass[p].best_read);
        json_array_begin(&j, "write_seconds");
        for (int r = 0; r < o->repeats; r++)
            json_double(&j, NULL, pass[p].write_s[r]);
        json_array_end(&j);
        json_array_begin(&j, "read_seconds");
        for (int r = 0; r < o->repeats; r++)
            json_double(&j, NULL, pass[p].read_s[r]);
        json_array_end(&j);
        json_object_end(&j);
    }
    json_array_end(&j);
    result_doc_close_verified(&j, true, NULL, 0, o->json);
}

int perf_command(int argc, char **argv)
{
    int rank, nranks;
    engine_world(&rank, &nranks);
    perf_options o;
    parse(argc, argv, rank, &o);
    mpiio_settings_apply_or_exit(&o.mpi, nranks); /* before the first MPI_File call */
    check_mode_passed(); /* `pario-engine check`: the line is accepted */
    static perf_state s;
    s.rank = rank;
    mpi_why w = MPI_WHY_FOR(o.dir, "--size");
    unsigned char *wbuf = aligned_alloc(4096, (o.size + 4095) / 4096 * 4096);
    unsigned char *rbuf = aligned_alloc(4096, (o.size + 4095) / 4096 * 4096);
    if (!wbuf || !rbuf)
        mpi_why_set(&w, "cannot allocate two buffers of --size bytes: give a smaller --size");
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, NULL, NULL);
    /* contents: pario's pattern at each word's file offset (untimed) */
    pattern_key key = pattern_key_make(1, 0, 0);
    for (uint64_t i = 0; i < o.size; i += 8) {
        uint64_t word = pattern_word(&key, (uint64_t)rank * o.size + i);
        memcpy(wbuf + i, &word, 8);
    }
    mpi_file_unique_path(MPI_COMM_WORLD, o.dir, o.name, "pario-perf", NULL, s.path, sizeof s.path);
    MPI_File fh;
    if (mpi_file_create(MPI_COMM_WORLD, s.path, MPI_INFO_NULL, &fh, &s.who, &w) == MPI_SUCCESS) {
        s.created = true;
        mpi_file_close(&fh, &w, s.path);
    }
    s.created = mpi_file_create_agree(&w, s.created, MPI_COMM_WORLD, s.path, &s.who); /* rank 0 alone removes it */
    mpi_stop_if_failed(&w, MPI_COMM_WORLD, remove_ours, &s);

    perf_pass pass[2];
    memset(pass, 0, sizeof pass);
    for (int p = 0; p < 2; p++) {
        if (!o.pass[p])
            continue;
        for (int r = 0; r < o.repeats; r++) {
            double tw = 0, tr = 0, m[2];
            one_repeat(&o, &s, p == 1, wbuf, rbuf, &tw, &tr, &w);
            MPI_Allreduce((double[2]){tw, tr}, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            pass[p].write_s[r] = m[0];
            pass[p].read_s[r] = m[1];
            if (r == 0 || m[0] < pass[p].best_write)
                pass[p].best_write = m[0];
            if (r == 0 || m[1] < pass[p].best_read)
                pass[p].best_read = m[1];
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    result_where where; /* what the document's provenance needs: gathered only for one */
    if (o.json)
        result_where_gather(&where, MPI_COMM_WORLD);
    if (rank == 0) {
        char sz[32];
        size_format(o.size, sz, sizeof sz);
        printf("pario-engine perf: %d rank(s), %s per rank at rank x size of one file in %s, best of %d\n",
               nranks, sz, o.dir, o.repeats);
        if (o.pass[0]) {
            printf("Write bandwidth without file sync = %f Mbytes/sec\n", mib_per_s(&o, nranks, pass[0].best_write));
            printf("Read bandwidth without prior file sync = %f Mbytes/sec\n", mib_per_s(&o, nranks, pass[0].best_read));
        }
        if (o.pass[1]) {
            printf("Write bandwidth including file sync = %f Mbytes/sec\n", mib_per_s(&o, nranks, pass[1].best_write));
            printf("Read bandwidth after file sync = %f Mbytes/sec\n", mib_per_s(&o, nranks, pass[1].best_read));
        }
        printf("  every rank's array read back and checked\n");
        if (o.keep)
            printf("  kept %s\n", s.path);
        else
            remove_if_ours(s.path, &s.who); /* created by this run (MPI_MODE_EXCL) */
        if (o.json)
            save_json(&o, nranks, pass, &where);
    }
    free(wbuf);
    free(rbuf);
    return 0;
}
