/* `pario-engine verify`: check a file written by `io` alone, on one
 * process, without MPI.  Every byte is compared with the pattern; the
 * first wrong byte is named by its offset, and a short file is reported as
 * truncated.  A file of the hdf5 backend is checked through its dataset,
 * whose bytes are the raw file's (verify_hdf5.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../util/fail.h"
#include "../util/options.h"
#include "../util/input_file.h"
#include "../util/pattern.h"
#include "../util/sizes.h"
#include "stripe.h"
#include "verify_hdf5.h"

#define VERIFY_CHUNK (1u << 20)
#define VERIFY_MAX_ITERATION_GUESS 100000u

static void verify_usage(void)
{
    printf("usage: pario-engine verify --file FILE --seed S [--iteration I] [--stream N]\n"
           "                           [--size SIZE]\n"
           "\n"
           "  --file FILE    a file written by pario-engine io (e.g. kept with --keep);\n"
           "                 an HDF5 file (--api hdf5) is checked through its dataset\n"
           "  --seed S       the run's --seed\n"
           "  --iteration I  whose data (default: found from the file's first stamp)\n"
           "  --stream N     per-rank files: the rank that wrote it (default 0)\n"
           "  --size SIZE    the length the file must have (default: the length io\n"
           "                 --keep recorded in the file's user.pario.size attribute;\n"
           "                 a striped file: in each part's user.pario.striped_size)\n"
           "  --stripe-dirs D1,D2,.. --stripe-unit SIZE\n"
           "                 a striped file (io --stripe-dirs): --file names it, and\n"
           "                 its parts DIR/NAME are reassembled in this order\n");
}

/* The file being checked: one file, the parts of a striped one read as the
 * logical file they make, or the dataset of an HDF5 file. */
typedef struct logical_file {
    const stripe_spec *spec; /* NULL: one file */
    verify_hdf5 *h5;         /* non-NULL: the bytes are this dataset's */
    int n;
    int fds[STRIPE_MAX_TARGETS];
    uint64_t sizes[STRIPE_MAX_TARGETS];
    char paths[STRIPE_MAX_TARGETS][PATH_MAX];
    uint64_t length;
} logical_file;

static void logical_open(logical_file *lf, const char *file, const stripe_spec *spec)
{
    lf->spec = spec && spec->ntargets ? spec : NULL;
    lf->h5 = NULL;
    lf->n = stripe_parts(lf->spec, file, lf->paths);
    lf->length = 0;
    for (int t = 0; t < lf->n; t++) {
        const char *p = lf->paths[t];
        struct stat st;
        lf->fds[t] = input_file_open(p, &st); /* a FIFO is refused, never waited on */
        if (lf->fds[t] < 0)
            fail_usage("--file %s %s: give a file pario-engine io wrote", p,
                       input_file_reason(-lf->fds[t]));
        lf->sizes[t] = (uint64_t)st.st_size;
        lf->length += lf->sizes[t];
    }
    unsigned char first[8];
    if (!lf->spec && pread(lf->fds[0], first, sizeof first, 0) == (ssize_t)sizeof first &&
        verify_hdf5_signature(first)) {
        char why[256];
        lf->h5 = verify_hdf5_open(lf->paths[0], &lf->length, why, sizeof why);
        char mark[32];
        if (!lf->h5 && fgetxattr(lf->fds[0], "user.pario.size", mark, sizeof mark) > 0) {
            /* pario-engine io wrote it (--keep records its length): damaged since, not bad input */
            fprintf(stderr, "pario-engine: verify: %s %s, though pario-engine io wrote it "
                            "(user.pario.size): it is truncated or damaged\n", file, why);
            exit(EXIT_RUN_FAILED);
        }
        if (!lf->h5)
            fail_usage("--file %s %s", file, why);
    }
}

/* The parts of a striped file of `length` bytes have fixed sizes: name the
 * first that differs.  0 when they fit. */
static int logical_parts_fit(const logical_file *lf, uint64_t length)
{
    for (int t = 0; lf->spec && t < lf->n; t++) {
        uint64_t want = stripe_part_bytes(lf->spec, length, t);
        if (lf->sizes[t] != want) {
            fprintf(stderr,
                    "pario-engine: verify: part %s is %s: %llu bytes, but a %llu-byte file "
                    "striped over %d targets puts %llu there\n",
                    lf->paths[t], lf->sizes[t] < want ? "truncated" : "longer than expected",
                    (unsigned long long)lf->sizes[t], (unsigned long long)length, lf->n,
                    (unsigned long long)want);
            return EXIT_RUN_FAILED;
        }
    }
    return 0;
}

/* pread of the logical file: 0, or -1 with errno (0 at the end of a part). */
static int logical_pread(const logical_file *lf, unsigned char *buf, size_t len, uint64_t off,
                         const char **where)
{
    if (lf->h5) {
        *where = lf->paths[0];
        return verify_hdf5_read(lf->h5, buf, len, off);
    }
    while (len > 0) {
        int t = 0;
        uint64_t local = off, left = len;
        if (lf->spec)
            stripe_locate(lf->spec, off, &t, &local, &left);
        size_t piece = left < len ? (size_t)left : len;
        *where = lf->paths[t];
        ssize_t n = pread(lf->fds[t], buf, piece, (off_t)local);
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return -1;
        }
        buf += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

static uint64_t parse_u64(const char *opt, const char *text)
{
    char *end;
    errno = 0;
    if (!text[0] || text[0] == '-')
        fail_usage("%s '%s' must be a whole number, 0 or more", opt, text);
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end)
        fail_usage("%s '%s' must be a whole number, 0 or more", opt, text);
    return v;
}

int verify_command(int argc, char **argv)
{
    enum { O_FILE = 1000, O_SEED, O_ITER, O_STREAM, O_SIZE, O_HELP, O_SDIRS, O_SUNIT };
    static const struct option opts[] = {
        {"file", required_argument, 0, O_FILE},   {"seed", required_argument, 0, O_SEED},
        {"iteration", required_argument, 0, O_ITER}, {"stream", required_argument, 0, O_STREAM},
        {"size", required_argument, 0, O_SIZE},   {"help", no_argument, 0, O_HELP},
        {"stripe-dirs", required_argument, 0, O_SDIRS},
        {"stripe-unit", required_argument, 0, O_SUNIT},
        {0, 0, 0, 0}};
    const char *file = NULL;
    uint64_t seed = 0, iteration = 0, stream = 0, size = 0;
    bool seed_given = false, iteration_given = false, size_given = false, stream_given = false;
    static stripe_spec spec; /* static: holds the directory names until exit */
    bool unit_given = false;
    opterr = 0;
    optind = 1;
    int c, which = 0;
    bool seen[O_SUNIT - O_FILE + 1] = {false}; /* valued options given: once each */
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-' && c >= O_FILE)
            fail_usage("--%s needs a value: see pario-engine verify --help", opts[which].name);
        if (c >= O_FILE && c <= O_SUNIT) {
            char shown[40];
            snprintf(shown, sizeof shown, "--%s", opts[which].name);
            option_given(&seen[c - O_FILE], shown, optarg != NULL, false, "verify");
        }
        switch (c) {
        case O_FILE: file = optarg; break;
        case O_SEED: seed = parse_u64("--seed", optarg); seed_given = true; break;
        case O_ITER: iteration = parse_u64("--iteration", optarg); iteration_given = true; break;
        case O_STREAM:
            stream = parse_u64("--stream", optarg);
            stream_given = true;
            break;
        case O_SIZE: {
            const char *why;
            if (size_parse(optarg, &size, &why) != 0)
                fail_usage("--size '%s' %s: give a size such as 1m or 2g", optarg, why);
            size_given = true;
            break;
        }
        case O_HELP: verify_usage(); return 0;
        case O_SDIRS: stripe_parse_dirs(&spec, "--stripe-dirs", optarg, false); break;
        case O_SUNIT: {
            const char *why;
            if (size_parse(optarg, &spec.unit, &why) != 0)
                fail_usage("--stripe-unit '%s' %s: give a size such as 64k", optarg, why);
            unit_given = true;
            break;
        }
        case ':': fail_usage("%s needs a value: see pario-engine verify --help", argv[optind - 1]);
        default: fail_usage("unknown option '%s': see pario-engine verify --help", argv[optind - 1]);
        }
    }
    if (optind < argc)
        fail_usage("unexpected argument '%s': name the file with --file", argv[optind]);
    if (!file)
        fail_usage("--file is required: name the file to check");
    if (!seed_given)
        fail_usage("--seed is required: give the seed the file was written with");

    if (spec.ntargets && !unit_given)
        fail_usage("--stripe-dirs needs --stripe-unit SIZE, as the run was given");
    if (unit_given && !spec.ntargets)
        fail_usage("--stripe-unit needs --stripe-dirs D1,D2,...");
    logical_file lf;
    logical_open(&lf, file, &spec);
    uint64_t length = lf.length;
    /* The length the file must have: --size, else what io --keep recorded.
     * A file's own length cannot tell a whole file from a truncated one. */
    uint64_t expect = size;
    if (!size_given) {
        /* a striped file: the whole length every part carries (the first
         * part that still has it: the others' sizes are checked below) */
        const char *mark = lf.spec ? "user.pario.striped_size" : "user.pario.size";
        char text[32];
        ssize_t n = -1;
        for (int t = 0; t < lf.n && n <= 0; t++)
            n = fgetxattr(lf.fds[t], mark, text, sizeof text - 1);
        char *end;
        if (n <= 0 && lf.h5) /* a copy of an HDF5 file: its dataset states its length */
            snprintf(text, sizeof text, "%llu", (unsigned long long)length);
        else if (n <= 0)
            fail_usage("--file %s has no recorded length (no %s attribute, e.g. "
                       "copied or on a file system without user xattrs): give --size",
                       file, mark);
        else
            text[n] = 0;
        errno = 0;
        expect = strtoull(text, &end, 10);
        if (errno || *end || expect == 0)
            fail_usage("--file %s: its %s attribute '%s' is not a length: give --size", file, mark,
                       text);
    }
    if (expect % 8)
        fail_usage("--size %llu is not a whole number of 8-byte words: io files always are",
                   (unsigned long long)expect);
    if (logical_parts_fit(&lf, expect))
        return EXIT_RUN_FAILED;
    if (length < 8) {
        fprintf(stderr, "pario-engine: verify: %s is truncated at offset %llu: %llu bytes, "
                        "expected %llu\n",
                file, (unsigned long long)length, (unsigned long long)length,
                (unsigned long long)expect);
        return EXIT_RUN_FAILED;
    }

    if (!iteration_given) {
        /* The stamp at offset 0 is 0 XOR the key of (seed, iteration, stream). */
        uint64_t first;
        const char *where;
        if (logical_pread(&lf, (unsigned char *)&first, 8, 0, &where) != 0)
            fail_usage("--file %s: cannot read its first word", file);
        bool found = false;
        for (uint64_t i = 0; i < VERIFY_MAX_ITERATION_GUESS && !found; i++) {
            pattern_key k = pattern_key_make(seed, i, stream);
            if (pattern_word(&k, 0) == first) {
                iteration = i;
                found = true;
            }
        }
        if (!found) {
            /* a per-rank file is NAME.%08d, its rank's stream (io_run.c): name the fix */
            const char *dot = strrchr(file, '.');
            char hint[96] = "";
            if (!stream_given && dot && strlen(dot + 1) == 8 && strspn(dot + 1, "0123456789") == 8 &&
                strtoull(dot + 1, NULL, 10) != stream)
                snprintf(hint, sizeof hint, "; the suffix %s names a per-rank file of rank %llu: give --stream %llu",
                         dot, strtoull(dot + 1, NULL, 10), strtoull(dot + 1, NULL, 10));
            fprintf(stderr,
                    "pario-engine: verify: %s: first wrong byte at offset 0 (no iteration of "
                    "seed %llu, stream %llu matches; give --iteration if you know it%s)\n",
                    file, (unsigned long long)seed, (unsigned long long)stream, hint);
            return EXIT_RUN_FAILED;
        }
    }

    unsigned char *buf = malloc(VERIFY_CHUNK);
    pattern_source src;
    if (!buf || pattern_source_init(&src, VERIFY_CHUNK, false) != 0)
        fail_usage("out of memory");
    pattern_source_fill(&src, pattern_key_make(seed, iteration, stream));
    int status = 0;
    const uint64_t common = length < expect ? length : expect; /* content first, then length */
    for (uint64_t off = 0; off < common; off += VERIFY_CHUNK) {
        size_t len = (size_t)(common - off < VERIFY_CHUNK ? common - off : VERIFY_CHUNK);
        const char *where;
        if (logical_pread(&lf, buf, len, off, &where) != 0) {
            fprintf(stderr, "pario-engine: verify: %s: read at offset %llu failed: %s\n", where,
                    (unsigned long long)off, errno ? strerror(errno) : "end of file");
            status = EXIT_RUN_FAILED;
            break;
        }
        int64_t bad = pattern_check(&src, off, buf, len);
        if (bad >= 0) {
            fprintf(stderr,
                    "pario-engine: verify: %s: first wrong byte at offset %llu "
                    "(seed %llu, iteration %llu, stream %llu)\n",
                    file, (unsigned long long)(off + (uint64_t)bad), (unsigned long long)seed,
                    (unsigned long long)iteration, (unsigned long long)stream);
            status = EXIT_RUN_FAILED;
            break;
        }
    }
    if (status == 0 && length < expect) {
        fprintf(stderr,
                "pario-engine: verify: %s is truncated at offset %llu: %llu bytes, expected %llu "
                "(the bytes before match)\n",
                file, (unsigned long long)length, (unsigned long long)length,
                (unsigned long long)expect);
        status = EXIT_RUN_FAILED;
    } else if (status == 0 && length > expect) {
        fprintf(stderr,
                "pario-engine: verify: %s is extended: %llu byte%s beyond the expected %llu, "
                "from offset %llu\n",
                file, (unsigned long long)(length - expect), length - expect == 1 ? "" : "s",
                (unsigned long long)expect, (unsigned long long)expect);
        status = EXIT_RUN_FAILED;
    }
    if (status == 0)
        printf("verified %s%s: %llu bytes match seed %llu, iteration %llu, stream %llu\n", file,
               lf.h5 ? " (its HDF5 dataset 'data')" : "", (unsigned long long)length, (unsigned long long)seed,
               (unsigned long long)iteration, (unsigned long long)stream);
    pattern_source_free(&src);
    free(buf);
    verify_hdf5_close(lf.h5);
    for (int t = 0; t < lf.n; t++)
        close(lf.fds[t]);
    return status;
}
