/* `pario-engine verify`: check a file written by `io` alone, on one
 * process, without MPI.  Every byte is compared with the pattern; the
 * first wrong byte is named by its offset.  The length the file must have
 * comes from --size or from the user.pario.size extended attribute `io
 * --keep` records (docs/result-schema.md); with neither, verify refuses,
 * since a file's own length cannot tell a truncated file from a whole one.
 * A short file is called truncated at its end, a long one extended from
 * the expected length. */
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
#include "../util/pattern.h"
#include "../util/sizes.h"

#define VERIFY_CHUNK (1u << 20)
#define VERIFY_MAX_ITERATION_GUESS 100000u

static void verify_usage(void)
{
    printf("usage: pario-engine verify --file FILE --seed S [--iteration I] [--stream N] "
           "[--size SIZE]\n"
           "\n"
           "  --file FILE    a file written by pario-engine io (e.g. kept with --keep)\n"
           "  --seed S       the run's --seed\n"
           "  --iteration I  whose data (default: found from the file's first stamp)\n"
           "  --stream N     per-rank files: the rank that wrote it (default 0)\n"
           "  --size SIZE    the length the file must have (default: the length io\n"
           "                 --keep recorded in the file's user.pario.size attribute)\n");
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
    enum { O_FILE = 1000, O_SEED, O_ITER, O_STREAM, O_SIZE, O_HELP };
    static const struct option opts[] = {
        {"file", required_argument, 0, O_FILE},   {"seed", required_argument, 0, O_SEED},
        {"iteration", required_argument, 0, O_ITER}, {"stream", required_argument, 0, O_STREAM},
        {"size", required_argument, 0, O_SIZE},   {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    const char *file = NULL;
    uint64_t seed = 0, iteration = 0, stream = 0, size = 0;
    bool seed_given = false, iteration_given = false, size_given = false;
    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, ":", opts, &which)) != -1) {
        if (optarg && optarg[0] == '-' && optarg[1] == '-' && c >= O_FILE)
            fail_usage("--%s needs a value: see pario-engine verify --help", opts[which].name);
        switch (c) {
        case O_FILE: file = optarg; break;
        case O_SEED: seed = parse_u64("--seed", optarg); seed_given = true; break;
        case O_ITER: iteration = parse_u64("--iteration", optarg); iteration_given = true; break;
        case O_STREAM: stream = parse_u64("--stream", optarg); break;
        case O_SIZE: {
            const char *why;
            if (size_parse(optarg, &size, &why) != 0)
                fail_usage("--size '%s' %s: give a size such as 1m or 2g", optarg, why);
            size_given = true;
            break;
        }
        case O_HELP: verify_usage(); return 0;
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

    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail_usage("--file %s: %s", file, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        fail_usage("--file %s is not a regular file", file);
    uint64_t length = (uint64_t)st.st_size;
    uint64_t expect = size;
    if (!size_given) {
        char text[32];
        ssize_t n = fgetxattr(fd, "user.pario.size", text, sizeof text - 1);
        char *end;
        if (n <= 0)
            fail_usage("--file %s has no recorded length (no user.pario.size attribute, e.g. "
                       "copied or on a file system without user xattrs): give --size",
                       file);
        text[n] = 0;
        errno = 0;
        expect = strtoull(text, &end, 10);
        if (errno || *end || expect == 0)
            fail_usage("--file %s: its user.pario.size attribute '%s' is not a length: give --size",
                       file, text);
    }
    if (expect % 8)
        fail_usage("--size %llu is not a whole number of 8-byte words: io files always are",
                   (unsigned long long)expect);
    if (length == 0) {
        fprintf(stderr, "pario-engine: verify: %s is truncated at offset 0: empty, expected %llu "
                        "bytes\n",
                file, (unsigned long long)expect);
        close(fd);
        return EXIT_RUN_FAILED;
    }

    if (!iteration_given) {
        /* The stamp at offset 0 is 0 XOR the key of (seed, iteration, stream). */
        uint64_t first;
        if (pread(fd, &first, 8, 0) != 8) {
            fprintf(stderr, "pario-engine: verify: %s is truncated at offset %llu: %llu bytes, "
                            "expected %llu\n",
                    file, (unsigned long long)length, (unsigned long long)length,
                    (unsigned long long)expect);
            close(fd);
            return EXIT_RUN_FAILED;
        }
        bool found = false;
        for (uint64_t i = 0; i < VERIFY_MAX_ITERATION_GUESS && !found; i++) {
            pattern_key k = pattern_key_make(seed, i, stream);
            if (pattern_word(&k, 0) == first) {
                iteration = i;
                found = true;
            }
        }
        if (!found) {
            fprintf(stderr,
                    "pario-engine: verify: %s: first wrong byte at offset 0 (no iteration of "
                    "seed %llu, stream %llu matches; give --iteration if you know it)\n",
                    file, (unsigned long long)seed, (unsigned long long)stream);
            close(fd);
            return EXIT_RUN_FAILED;
        }
    }

    unsigned char *buf = malloc(VERIFY_CHUNK);
    pattern_source src;
    if (!buf || pattern_source_init(&src, VERIFY_CHUNK, false) != 0)
        fail_usage("out of memory");
    pattern_source_fill(&src, pattern_key_make(seed, iteration, stream));
    int status = 0;
    const uint64_t common = length < expect ? length : expect;
    for (uint64_t off = 0; off < common && !status; off += VERIFY_CHUNK) {
        size_t len = (size_t)(common - off < VERIFY_CHUNK ? common - off : VERIFY_CHUNK);
        size_t got = 0;
        while (got < len) {
            ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
            if (n <= 0) {
                fprintf(stderr, "pario-engine: verify: %s: read at offset %llu failed: %s\n", file,
                        (unsigned long long)(off + got), n == 0 ? "end of file" : strerror(errno));
                status = EXIT_RUN_FAILED;
                break;
            }
            got += (size_t)n;
        }
        if (status)
            break;
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
                "pario-engine: verify: %s is extended: %llu bytes beyond the expected %llu, "
                "from offset %llu\n",
                file, (unsigned long long)(length - expect), (unsigned long long)expect,
                (unsigned long long)expect);
        status = EXIT_RUN_FAILED;
    }
    if (status == 0)
        printf("verified %s: %llu bytes match seed %llu, iteration %llu, stream %llu\n", file,
               (unsigned long long)length, (unsigned long long)seed,
               (unsigned long long)iteration, (unsigned long long)stream);
    pattern_source_free(&src);
    free(buf);
    close(fd);
    return status;
}
