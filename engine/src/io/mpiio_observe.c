#include "mpiio_observe.h"

#include <stdio.h>
#include <string.h>

#include "../util/lock_count.h"

const char *const mpiio_observed_names[] = {"write_calls", "write_bytes", "read_calls",
                                            "read_bytes",  "lock_calls",  NULL};

/* One run per process: what the settings resolved to and what the library
 * reported, kept from the first open on. */
static struct {
    bool have_settings;
    mpiio_settings settings;
    bool have_info;
    MPI_Info info;
    char view_shapes[64];
    uint64_t atomic_phases;
    uint64_t atomic_locks; /* summed over the ranks of each file */
} ran;

void mpiio_probe_start(mpiio_probe *p, double *out)
{
    p->out = out;
    p->locks0 = p->locks_io = 0;
    proc_io_sample(&p->io0);
}

void mpiio_probe_opened(mpiio_probe *p)
{
    p->locks0 = lock_count_now();
}

void mpiio_probe_closing(mpiio_probe *p)
{
    p->locks_io = lock_count_now() - p->locks0;
}

void mpiio_probe_stop(mpiio_probe *p, MPI_Comm comm, bool atomic)
{
    proc_io io1, d;
    proc_io_sample(&io1);
    d = proc_io_delta(&p->io0, &io1);
    if (p->out) {
        p->out[MPIIO_OBS_WRITE_CALLS] = (double)d.syscw;
        p->out[MPIIO_OBS_WRITE_BYTES] = (double)d.wchar;
        p->out[MPIIO_OBS_READ_CALLS] = (double)d.syscr;
        p->out[MPIIO_OBS_READ_BYTES] = (double)d.rchar;
        p->out[MPIIO_OBS_LOCK_CALLS] = (double)p->locks_io;
    }
    if (atomic) {
        uint64_t all = 0;
        MPI_Allreduce(&p->locks_io, &all, 1, MPI_UINT64_T, MPI_SUM, comm);
        ran.atomic_phases++;
        ran.atomic_locks += all;
    }
}

void mpiio_observe_settings(const mpiio_settings *s)
{
    ran.settings = *s;
    ran.have_settings = true;
}

const mpiio_settings *mpiio_run_settings(void)
{
    return &ran.settings;
}

void mpiio_observe_open(MPI_File fh)
{
    if (ran.have_info)
        return;
    if (MPI_File_get_info(fh, &ran.info) == MPI_SUCCESS)
        ran.have_info = true;
}

void mpiio_observe_view(const char *shape)
{
    if (strstr(ran.view_shapes, shape))
        return;
    size_t used = strlen(ran.view_shapes);
    snprintf(ran.view_shapes + used, sizeof ran.view_shapes - used, "%s%s", used ? "," : "",
             shape);
}

/* The verdict on atomic mode, for describe and the warning alike. */
enum atomic_verdict { ATOMIC_UNCOUNTED, ATOMIC_HONOURED, ATOMIC_NOT_HONOURED };

static enum atomic_verdict atomic_verdict(void)
{
    if (!lock_count_active())
        return ATOMIC_UNCOUNTED;
    return ran.atomic_locks > 0 ? ATOMIC_HONOURED : ATOMIC_NOT_HONOURED;
}

const char *mpiio_observe_caveat(bool atomic, bool collective)
{
    static char line[320];
    if (!atomic || ran.atomic_phases == 0 || atomic_verdict() != ATOMIC_NOT_HONOURED)
        return NULL;
    const char *impl = ran.have_settings ? ran.settings.impl : "the MPI-IO library";
    bool ompio = ran.have_settings && strcmp(ran.settings.impl, "ompio") == 0;
    /* The fix is what differs from a run that locks: OMPIO never locks;
     * ROMIO's independent calls lock, its collective path does not. */
    const char *fix = ompio ? collective ? "use --mpiio-impl romio and drop --collective for a "
                                           "locking atomic run"
                                         : "use --mpiio-impl romio for locking atomic mode"
                      : collective
                          ? "ROMIO's collective path took no lock: drop --collective for a locking "
                            "atomic run"
                          : "use an MPI-IO implementation that locks in atomic mode";
    snprintf(line, sizeof line,
             "--atomic was not honoured: %s took no byte-range lock in atomic mode, so this run "
             "measured relaxed (MASYNC) I/O; %s",
             impl, fix);
    return line;
}

void mpiio_observe_describe(json *j, bool atomic)
{
    if (ran.have_settings) {
        json_string(j, "implementation", ran.settings.impl);
        json_string(j, "implementation_chosen_by", ran.settings.impl_source);
        json_int(j, "aggregators_asked", ran.settings.aggregators);
        mpiio_hints_json(j, "hints_asked", &ran.settings);
    }
    char loaded[128];
    mpiio_loaded_components(loaded, sizeof loaded);
    json_string(j, "io_components_loaded", loaded);
    /* loaded by the untimed warm-up, so no timed open paid for it */
    json_string(j, "io_components_loaded_before_clock", mpiio_library_warmed());
    mpiio_info_json(j, "info_returned", ran.have_info ? ran.info : MPI_INFO_NULL);
    if (ran.view_shapes[0])
        json_string(j, "file_views", ran.view_shapes);
    json_bool(j, "lock_counting", lock_count_active());
    if (atomic) {
        json_object_begin(j, "atomic_mode");
        json_uint(j, "lock_requests", ran.atomic_locks);
        json_uint(j, "files_opened", ran.atomic_phases);
        if (atomic_verdict() == ATOMIC_UNCOUNTED) {
            json_null(j, "honoured");
            json_string(j, "evidence", "lock requests could not be counted in this build");
        } else if (atomic_verdict() == ATOMIC_HONOURED) {
            json_bool(j, "honoured", true);
            json_string(j, "evidence",
                        "the MPI library took byte-range locks around accesses in atomic mode");
        } else {
            json_bool(j, "honoured", false);
            json_string(j, "evidence",
                        "not honoured: the MPI library took no byte-range lock in atomic mode, "
                        "so it did nothing observable to enforce it");
        }
        json_object_end(j);
    }
}
