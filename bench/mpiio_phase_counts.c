/* What one MPI-IO phase costs a rank, counted, not timed: a PMPI shim that
 * bench/mpiio_counts.py preloads into pario-engine and IOR alike, so both
 * tools are measured by the same code at the same points.
 *
 * A phase is one MPI_File_open .. MPI_File_close on a communicator of more
 * than one rank (IOR's MPI_COMM_SELF opens for its file checks are not
 * phases).  At the open's entry and the close's exit the shim samples, for
 * the calling thread (the one that calls MPI; Open MPI's own helper threads
 * are left out, except in the process-wide CPU):
 *   getrusage(RUSAGE_THREAD)  user and system CPU, minor/major faults,
 *                             voluntary/involuntary context switches
 *   getrusage(RUSAGE_SELF)    user and system CPU of the whole process:
 *                             ompio's collective write hands its pwrites
 *                             to a POSIX AIO helper thread when a call
 *                             takes more than two of its cycles
 *   perf_event_open           task-clock, page-faults, context-switches,
 *                             cpu-migrations, and system calls entered
 *                             (tracepoint raw_syscalls:sys_enter); -1 where
 *                             the kernel refuses
 *   /proc/self/io             read/write system calls and bytes
 *   page_reporting            KiB of free memory the guest handed to the
 *                             host meanwhile (machine-wide; -1 if absent)
 * and it times open, the data calls (every MPI_File_{write,read}*), sync,
 * close, barriers and allreduces the tool itself makes inside the phase,
 * and the first barrier or allreduce after close (the timing rule's end:
 * pario's barrier, IOR's).  Records stay in memory and are written
 * at MPI_Finalize, one line per phase, to $MPIIO_COUNTS_DIR/rank-N.tsv, so
 * the shim does no file I/O of its own inside a phase. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { EV_TASK_CLOCK, EV_FAULTS, EV_CSW, EV_MIGRATIONS, EV_SYSCALLS, NEV };
static const char *const ev_names[NEV] = {"task_clock_ms", "page_faults", "ctx_switches",
                                          "cpu_migrations", "syscalls"};

typedef struct sample {
    double t;
    struct rusage ru;
    struct rusage ru_self; /* the whole process, helper threads too */
    long long ev[NEV];
    long long syscr, syscw, rchar, wchar;
    long long reported_kib;
} sample;

typedef struct record {
    char kind; /* 'w' or 'r' */
    double open_s, io_s, sync_s, close_s, coll_s, wait_after_s, wall_s, t_open;
    long long io_calls;
    sample a, b;
} record;

#define MAX_RECORDS 4096
static record recs[MAX_RECORDS];
static int nrecs;
static int in_phase;       /* inside an open .. close of a shared file */
static int want_wait;      /* the next barrier/allreduce ends the phase */
static record cur;
static int ev_fd[NEV] = {-1, -1, -1, -1, -1};
static int ev_ready;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int open_event(unsigned type, unsigned long long config)
{
    struct perf_event_attr pa;
    memset(&pa, 0, sizeof pa);
    pa.size = sizeof pa;
    pa.type = type;
    pa.config = config;
    return (int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0); /* this thread, any CPU */
}

static void events_open(void)
{
    if (ev_ready)
        return;
    ev_ready = 1;
    ev_fd[EV_TASK_CLOCK] = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    ev_fd[EV_FAULTS] = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
    ev_fd[EV_CSW] = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
    ev_fd[EV_MIGRATIONS] = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
    FILE *f = fopen("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id", "r");
    if (!f)
        f = fopen("/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id", "r");
    unsigned long long id;
    if (f && fscanf(f, "%llu", &id) == 1)
        ev_fd[EV_SYSCALLS] = open_event(PERF_TYPE_TRACEPOINT, id);
    if (f)
        fclose(f);
}

static long long read_counter(int fd)
{
    long long v;
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return -1;
    return v;
}

static long long reported_kib(void)
{
    long long v = -1;
    FILE *f = fopen("/sys/module/page_reporting/parameters/reported_kib", "r");
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void take(sample *s)
{
    s->t = now();
    getrusage(RUSAGE_THREAD, &s->ru);
    getrusage(RUSAGE_SELF, &s->ru_self);
    for (int i = 0; i < NEV; i++)
        s->ev[i] = read_counter(ev_fd[i]);
    s->syscr = s->syscw = s->rchar = s->wchar = -1;
    FILE *f = fopen("/proc/self/io", "r");
    if (f) {
        char key[64];
        long long v;
        while (fscanf(f, "%63[^:]: %lld\n", key, &v) == 2) {
            if (!strcmp(key, "syscr"))
                s->syscr = v;
            else if (!strcmp(key, "syscw"))
                s->syscw = v;
            else if (!strcmp(key, "rchar"))
                s->rchar = v;
            else if (!strcmp(key, "wchar"))
                s->wchar = v;
        }
        fclose(f);
    }
    s->reported_kib = reported_kib();
}

int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)
{
    int n = 1;
    PMPI_Comm_size(comm, &n);
    if (n < 2 || in_phase || nrecs >= MAX_RECORDS)
        return PMPI_File_open(comm, name, amode, info, fh);
    events_open();
    memset(&cur, 0, sizeof cur);
    cur.kind = (amode & MPI_MODE_RDONLY) ? 'r' : 'w';
    take(&cur.a);
    int rc = PMPI_File_open(comm, name, amode, info, fh);
    cur.open_s = now() - cur.a.t;
    in_phase = rc == MPI_SUCCESS;
    return rc;
}

#define TIMED(call)                                   \
    do {                                              \
        double t0_ = in_phase ? now() : 0;            \
        int rc_ = (call);                             \
        if (in_phase) {                               \
            cur.io_s += now() - t0_;                  \
            cur.io_calls++;                           \
        }                                             \
        return rc_;                                   \
    } while (0)

int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t,
                      MPI_Status *st)
{
    TIMED(PMPI_File_write_at(fh, off, buf, count, t, st));
}
int MPI_File_read_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype t,
                     MPI_Status *st)
{
    TIMED(PMPI_File_read_at(fh, off, buf, count, t, st));
}
int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                          MPI_Datatype t, MPI_Status *st)
{
    TIMED(PMPI_File_write_at_all(fh, off, buf, count, t, st));
}
int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype t,
                         MPI_Status *st)
{
    TIMED(PMPI_File_read_at_all(fh, off, buf, count, t, st));
}
int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    TIMED(PMPI_File_write(fh, buf, count, t, st));
}
int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    TIMED(PMPI_File_read(fh, buf, count, t, st));
}
int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    TIMED(PMPI_File_write_all(fh, buf, count, t, st));
}
int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    TIMED(PMPI_File_read_all(fh, buf, count, t, st));
}

int MPI_File_sync(MPI_File fh)
{
    double t0 = now();
    int rc = PMPI_File_sync(fh);
    if (in_phase)
        cur.sync_s += now() - t0;
    return rc;
}

int MPI_File_close(MPI_File *fh)
{
    if (!in_phase)
        return PMPI_File_close(fh);
    double t0 = now();
    int rc = PMPI_File_close(fh);
    cur.close_s = now() - t0;
    take(&cur.b);
    cur.wall_s = cur.b.t - cur.a.t;
    cur.t_open = cur.a.t;
    in_phase = 0;
    want_wait = 1;
    recs[nrecs++] = cur;
    return rc;
}

static void waited(double t0)
{
    if (in_phase)
        cur.coll_s += now() - t0; /* a collective of the tool's own inside the phase */
    if (want_wait && nrecs > 0) {
        recs[nrecs - 1].wait_after_s = now() - t0;
        want_wait = 0;
    }
}

int MPI_Barrier(MPI_Comm comm)
{
    double t0 = now();
    int rc = PMPI_Barrier(comm);
    waited(t0);
    return rc;
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    double t0 = now();
    int rc = PMPI_Allreduce(s, r, n, t, op, comm);
    waited(t0);
    return rc;
}

static double tv(struct timeval v)
{
    return (double)v.tv_sec + 1e-6 * (double)v.tv_usec;
}

int MPI_Finalize(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = getenv("MPIIO_COUNTS_DIR");
    if (dir && nrecs) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank-%d.%ld.tsv", dir, rank, (long)getpid());
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "rank\tphase\tt_open\twall_s\topen_s\tio_s\tio_calls\tsync_s\tclose_s\t"
                       "coll_s\twait_after_s\tuser_s\tsys_s\tminflt\tmajflt\tnvcsw\tnivcsw");
            for (int i = 0; i < NEV; i++)
                fprintf(f, "\t%s", ev_names[i]);
            fprintf(f, "\tsyscr\tsyscw\trchar\twchar\treported_kib\tproc_user_s\tproc_sys_s\n");
            for (int i = 0; i < nrecs; i++) {
                const record *r = &recs[i];
                const struct rusage *a = &r->a.ru, *b = &r->b.ru;
                fprintf(f, "%d\t%c\t%.6f\t%.6f\t%.6f\t%.6f\t%lld\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%ld\t%ld\t%ld\t%ld",
                        rank, r->kind, r->t_open, r->wall_s, r->open_s, r->io_s, r->io_calls,
                        r->sync_s, r->close_s, r->coll_s, r->wait_after_s, tv(b->ru_utime) - tv(a->ru_utime),
                        tv(b->ru_stime) - tv(a->ru_stime), b->ru_minflt - a->ru_minflt,
                        b->ru_majflt - a->ru_majflt, b->ru_nvcsw - a->ru_nvcsw,
                        b->ru_nivcsw - a->ru_nivcsw);
                for (int e = 0; e < NEV; e++) {
                    long long d = r->a.ev[e] < 0 || r->b.ev[e] < 0 ? -1 : r->b.ev[e] - r->a.ev[e];
                    if (e == EV_TASK_CLOCK && d >= 0)
                        fprintf(f, "\t%.3f", (double)d / 1e6);
                    else
                        fprintf(f, "\t%lld", d);
                }
                fprintf(f, "\t%lld\t%lld\t%lld\t%lld\t%lld\t%.6f\t%.6f\n", r->b.syscr - r->a.syscr,
                        r->b.syscw - r->a.syscw, r->b.rchar - r->a.rchar, r->b.wchar - r->a.wchar,
                        r->a.reported_kib < 0 ? -1 : r->b.reported_kib - r->a.reported_kib,
                        tv(r->b.ru_self.ru_utime) - tv(r->a.ru_self.ru_utime),
                        tv(r->b.ru_self.ru_stime) - tv(r->a.ru_self.ru_stime));
            }
            fclose(f);
        }
    }
    return PMPI_Finalize();
}
