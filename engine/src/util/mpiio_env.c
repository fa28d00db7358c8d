#include "mpiio_env.h"

#include "fail.h"
#include "library_lines.h"
#include "options.h"
#include "stderr_capture.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *failf(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *failf(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return why;
}

static int hint_index(const mpiio_settings *s, const char *key)
{
    for (int i = 0; i < s->nhints; i++)
        if (strcmp(s->hint_key[i], key) == 0)
            return i;
    return -1;
}

/* The reserved file hints of the MPI standard (MPI-3.1, section 13.2.8)
 * whose values it defines as numbers or booleans; the string-valued ones
 * (access_style, filename, file_perm, io_node_list) take any text. */
enum hint_form { HINT_INTEGER, HINT_INTEGERS, HINT_BOOLEAN };
static const struct {
    const char *key;
    enum hint_form form;
} reserved_hints[] = {
    {"cb_block_size", HINT_INTEGER},  {"cb_buffer_size", HINT_INTEGER},
    {"cb_nodes", HINT_INTEGER},       {"nb_proc", HINT_INTEGER},
    {"num_io_nodes", HINT_INTEGER},   {"striping_factor", HINT_INTEGER},
    {"striping_unit", HINT_INTEGER},  {"chunked", HINT_INTEGERS},
    {"chunked_item", HINT_INTEGERS},  {"chunked_size", HINT_INTEGERS},
    {"collective_buffering", HINT_BOOLEAN},
};

/* A whole number from 1 to INT_MAX in decimal digits (MPI's info values
 * are read as C ints); end: where it stopped. */
static bool positive_int_at(const char *p, const char **end)
{
    long long v = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9' && v <= 2147483647LL)
        v = v * 10 + (*q++ - '0');
    *end = q;
    return q > p && v >= 1 && v <= 2147483647LL;
}

const char *mpiio_hint_value_check(const char *key, const char *value, char *why, size_t len)
{
    for (size_t i = 0; i < sizeof reserved_hints / sizeof reserved_hints[0]; i++) {
        if (strcmp(key, reserved_hints[i].key) != 0)
            continue;
        const char *end = value;
        switch (reserved_hints[i].form) {
        case HINT_INTEGER:
            if (!positive_int_at(value, &end) || *end)
                return failf(why, len, "--hint %s=%s: MPI defines %s as a whole number: give one "
                             "from 1 to 2147483647, e.g. %s=4", key, value, key, key);
            return NULL;
        case HINT_INTEGERS:
            for (const char *p = value;; p = end + 1) {
                if (!positive_int_at(p, &end) || (*end && *end != ','))
                    return failf(why, len, "--hint %s=%s: MPI defines %s as a comma-separated "
                                 "list of whole numbers: give e.g. %s=64,64", key, value, key, key);
                if (!*end)
                    return NULL;
            }
        case HINT_BOOLEAN:
            if (strcmp(value, "true") && strcmp(value, "false"))
                return failf(why, len, "--hint %s=%s: MPI defines %s as true or false: give one "
                             "of those", key, value, key);
            return NULL;
        }
    }
    return NULL;
}

const char *mpiio_hint_add(mpiio_settings *s, const char *text, char *why, size_t len)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1])
        return failf(why, len, "--hint '%s' is not key=value: give e.g. --hint cb_buffer_size=16777216",
                     text);
    size_t klen = (size_t)(eq - text), vlen = strlen(eq + 1);
    for (const char *p = text; *p; p++)
        if (isspace((unsigned char)*p) || !isprint((unsigned char)*p))
            return failf(why, len,
                         "--hint '%s' contains a space or control character: give key=value "
                         "without spaces",
                         text);
    if (strchr(eq + 1, '='))
        return failf(why, len, "--hint '%s' has more than one '=': give one key=value per --hint",
                     text);
    if (klen >= MPIIO_HINT_KEY_MAX || klen >= MPI_MAX_INFO_KEY)
        return failf(why, len, "--hint key in '%s' is longer than MPI allows (%d characters)", text,
                     MPI_MAX_INFO_KEY - 1);
    if (vlen >= MPIIO_HINT_VALUE_MAX || vlen >= MPI_MAX_INFO_VAL)
        return failf(why, len, "--hint value in '%s' is longer than %d characters", text,
                     MPIIO_HINT_VALUE_MAX - 1);
    if (s->nhints >= MPIIO_MAX_HINTS)
        return failf(why, len, "more than %d --hint options: give fewer", MPIIO_MAX_HINTS);
    char key[MPIIO_HINT_KEY_MAX];
    memcpy(key, text, klen);
    key[klen] = '\0';
    if (hint_index(s, key) >= 0)
        return failf(why, len, "--hint %s is given twice: give each key once", key);
    if (mpiio_hint_value_check(key, eq + 1, why, len))
        return why;
    memcpy(s->hint_key[s->nhints], key, klen + 1);
    memcpy(s->hint_value[s->nhints], eq + 1, vlen + 1);
    s->nhints++;
    return NULL;
}

const char *mpiio_impl_parse(mpiio_settings *s, const char *text, char *why, size_t len)
{
    if (strcmp(text, "romio") == 0)
        s->choice = MPIIO_IMPL_ROMIO;
    else if (strcmp(text, "ompio") == 0)
        s->choice = MPIIO_IMPL_OMPIO;
    else
        return failf(why, len, "--mpiio-impl '%s' is unknown: use romio or ompio", text);
    return NULL;
}

void mpiio_impl_option(mpiio_settings *s, const char *text)
{
    char why[256];
    if (mpiio_impl_parse(s, text, why, sizeof why))
        fail_usage("%s", why);
}

int mpiio_aggregators_parse(const char *text)
{
    uint64_t v = option_count("--aggregators", text);
    if (v > 1u << 20)
        fail_usage("--aggregators %s is more than any run has ranks: give at most the rank count",
                   text);
    return (int)v;
}

/* Open MPI's component for an implementation choice. */
static const char *component_of(mpiio_impl_choice c)
{
    return c == MPIIO_IMPL_ROMIO ? "romio321" : "ompio";
}

/* What OMPI_MCA_io (set by the user or by mpirun --mca io X) selects, when
 * it names exactly one of the two components; NULL otherwise. */
static const char *component_from_env(const char *v)
{
    if (strcmp(v, "ompio") == 0 || strcmp(v, "^romio321") == 0)
        return "ompio";
    if (strcmp(v, "romio321") == 0 || strcmp(v, "^ompio") == 0)
        return "romio321";
    return NULL;
}

const char *mpiio_settings_apply(mpiio_settings *s, int nranks, char *why, size_t len)
{
    if (s->aggregators > nranks)
        return failf(why, len,
                     "--aggregators %d is more than the %d rank(s) of this run: give at most %d",
                     s->aggregators, nranks, nranks);
    if (s->aggregators && hint_index(s, "cb_nodes") >= 0)
        return failf(why, len,
                     "--aggregators and --hint cb_nodes both set the aggregator count: give one");

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int l;
    MPI_Get_library_version(lib, &l);
    s->open_mpi = strstr(lib, "Open MPI") != NULL;

    if (!s->open_mpi) {
        /* MPICH and its derivatives have one MPI-IO: ROMIO. */
        if (s->choice == MPIIO_IMPL_OMPIO)
            return failf(why, len,
                         "--mpiio-impl ompio needs Open MPI; this MPI's only MPI-IO is ROMIO: "
                         "use --mpiio-impl romio or leave it out");
        snprintf(s->impl, sizeof s->impl, "romio");
        snprintf(s->impl_source, sizeof s->impl_source, "the MPI library's only MPI-IO");
        return NULL;
    }

    const char *env = getenv("OMPI_MCA_io");
    const char *comp;
    if (s->choice != MPIIO_IMPL_AUTO) {
        comp = component_of(s->choice);
        snprintf(s->impl_source, sizeof s->impl_source, "--mpiio-impl");
    } else if (env && env[0]) {
        comp = component_from_env(env);
        if (!comp)
            return failf(why, len,
                         "OMPI_MCA_io='%s' does not name one MPI-IO implementation: give "
                         "--mpiio-impl romio or --mpiio-impl ompio",
                         env);
        snprintf(s->impl_source, sizeof s->impl_source, "OMPI_MCA_io");
    } else {
        /* Open MPI 4.1 ranks ompio (priority 30) above romio321 (10); pin
         * it so the result can say for certain which one ran. */
        comp = "ompio";
        snprintf(s->impl_source, sizeof s->impl_source, "default (Open MPI's own choice)");
    }
    snprintf(s->impl, sizeof s->impl, "%s", comp);
    if (setenv("OMPI_MCA_io", comp, 1) != 0)
        return failf(why, len, "cannot set OMPI_MCA_io: %s", strerror(errno));
    if (s->aggregators && strcmp(comp, "ompio") == 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", s->aggregators);
        if (setenv("OMPI_MCA_io_ompio_num_aggregators", n, 1) != 0)
            return failf(why, len, "cannot set OMPI_MCA_io_ompio_num_aggregators: %s",
                         strerror(errno));
    }
    return NULL;
}

void mpiio_settings_apply_or_exit(mpiio_settings *s, int nranks)
{
    char why[512];
    if (mpiio_settings_apply(s, nranks, why, sizeof why))
        fail_usage("%s", why);
}

void mpiio_run_json(json *j, const mpiio_settings *s)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], loaded[128];
    int n = 0;
    MPI_Get_library_version(lib, &n);
    lib[strcspn(lib, "\n,")] = 0; /* the first line or clause names it */
    json_string(j, "mpi_library", lib);
    json_string(j, "mpi_io_implementation", s->impl);
    json_string(j, "mpi_io_chosen_by", s->impl_source);
    mpiio_loaded_components(loaded, sizeof loaded);
    json_string(j, "mpi_io_components_loaded", loaded);
}

/* The pairs mpiio_info_create puts in the info object, in order. */
typedef void (*pair_fn)(void *ctx, const char *key, const char *value);

static void each_pair(const mpiio_settings *s, pair_fn f, void *ctx)
{
    for (int i = 0; i < s->nhints; i++)
        f(ctx, s->hint_key[i], s->hint_value[i]);
    if (s->aggregators) {
        char n[16];
        snprintf(n, sizeof n, "%d", s->aggregators);
        f(ctx, "cb_nodes", n);
        if (strncmp(s->impl, "romio", 5) == 0) {
            /* ROMIO: without this, one aggregator per host whatever
             * cb_nodes says. */
            if (hint_index(s, "cb_config_list") < 0)
                f(ctx, "cb_config_list", "*:*");
            /* ROMIO's automatic mode skips collective buffering, and so
             * the aggregators, when the ranks' accesses do not interleave
             * (a partitioned file): the aggregators asked for must act. */
            if (hint_index(s, "romio_cb_write") < 0)
                f(ctx, "romio_cb_write", "enable");
            if (hint_index(s, "romio_cb_read") < 0)
                f(ctx, "romio_cb_read", "enable");
        }
    }
}

static void info_set(void *ctx, const char *key, const char *value)
{
    MPI_Info_set(*(MPI_Info *)ctx, key, value);
}

MPI_Info mpiio_info_create(const mpiio_settings *s)
{
    MPI_Info info;
    MPI_Info_create(&info);
    each_pair(s, info_set, &info);
    return info;
}

static void json_pair(void *ctx, const char *key, const char *value)
{
    json_string((json *)ctx, key, value);
}

void mpiio_hints_json(json *j, const char *key, const mpiio_settings *s)
{
    json_object_begin(j, key);
    each_pair(s, json_pair, j);
    json_object_end(j);
}

void mpiio_info_json(json *j, const char *key, MPI_Info info)
{
    if (info == MPI_INFO_NULL) {
        json_null(j, key);
        return;
    }
    int n = 0;
    MPI_Info_get_nkeys(info, &n);
    json_object_begin(j, key);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, k);
        MPI_Info_get(info, k, MPI_MAX_INFO_VAL, v, &flag);
        if (flag)
            json_string(j, k, v);
    }
    json_object_end(j);
}

void mpiio_loaded_components(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *name = strstr(line, "/mca_io_");
        if (!name)
            continue;
        name++;
        char *dot = strstr(name, ".so");
        if (dot)
            *dot = '\0';
        else
            name[strcspn(name, "\n")] = '\0';
        if (strstr(out, name))
            continue; /* one line per mapped segment */
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", used ? "," : "", name);
    }
    fclose(f);
}

int mpiio_errno(int mpi_error)
{
    if (mpi_error == MPI_SUCCESS)
        return 0;
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(mpi_error, &cls);
    switch (cls) {
    case MPI_ERR_FILE_EXISTS: return EEXIST;
    case MPI_ERR_NO_SUCH_FILE: return ENOENT;
    case MPI_ERR_ACCESS: return EACCES;
    case MPI_ERR_NO_SPACE: return ENOSPC;
    case MPI_ERR_QUOTA: return EDQUOT;
    case MPI_ERR_READ_ONLY: return EROFS;
    case MPI_ERR_BAD_FILE: return EINVAL;
    case MPI_ERR_FILE_IN_USE: return EBUSY;
    case MPI_ERR_AMODE: return EINVAL;
    case MPI_ERR_UNSUPPORTED_OPERATION: return ENOTSUP;
    default: {
        /* ROMIO (and ompio's collective path) give a full disk the class
         * MPI_ERR_IO, with the system's reason only in the text ("Other
         * I/O error No space left on device"): take the errno from it. */
        char text[MPI_MAX_ERROR_STRING];
        int n = 0;
        if (MPI_Error_string(mpi_error, text, &n) != MPI_SUCCESS)
            return EIO;
        text[n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1] = '\0';
        return stderr_capture_errno(text, EIO);
    }
    }
}

int mpiio_errno_after(int mpi_error, int sys)
{
    int e = mpiio_errno(mpi_error);
    if (e == EIO && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG))
        return sys;
    return e;
}

static char warmed[128]; /* the mca_io_* objects mapped after the warm-up */

const char *mpiio_library_warmed(void)
{
    return warmed;
}

void mpiio_library_warm(const char *path, const mpiio_settings *s)
{
    static bool warm;
    struct stat st;
    if (warm)
        return;
    warm = true;
    if (lstat(path, &st) == 0 || errno != ENOENT)
        return; /* never open a name that holds something: the timed open warms instead */
    MPI_Info info = mpiio_info_create(s);
    MPI_File fh;
    library_lines_hold();
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, info, &fh) == MPI_SUCCESS)
        MPI_File_close(&fh); /* appeared since the lstat: read nothing, closed */
    library_lines_release_failed(); /* the refusal was the point: its lines are dropped */
    MPI_Info_free(&info);
    mpiio_loaded_components(warmed, sizeof warmed); /* the evidence, for the result */
}
