#include <string.h>

#include "check.h"
#include "util/sizes.h"

static int ok(const char *s, uint64_t want)
{
    uint64_t v = 0;
    const char *why;
    return size_parse(s, &v, &why) == 0 && v == want;
}

static int bad(const char *s)
{
    uint64_t v;
    const char *why = NULL;
    return size_parse(s, &v, &why) != 0 && why != NULL;
}

int main(void)
{
    CHECK(ok("4k", 4096));
    CHECK(ok("4K", 4096));
    CHECK(ok("64k", 65536));
    CHECK(ok("1m", 1048576));
    CHECK(ok("2g", 2147483648ULL));
    CHECK(ok("1t", 1ULL << 40));
    CHECK(ok("1MiB", 1048576));
    CHECK(ok("1kb", 1024));
    CHECK(ok("4096", 4096));
    CHECK(ok("17b", 17));
    CHECK(bad(""));
    CHECK(bad("0"));
    CHECK(bad("0k"));
    CHECK(bad("-4k"));
    CHECK(bad("1.5m"));
    CHECK(bad("4x"));
    CHECK(bad("k"));
    CHECK(bad("4kk"));
    CHECK(bad("99999999999999999999"));
    CHECK(bad("17179869184g")); /* 2^34 GiB overflows 64 bits */

    uint64_t n;
    const char *why;
    CHECK(count_parse("3", &n, &why) == 0 && n == 3);
    CHECK(count_parse("0", &n, &why) != 0);
    CHECK(count_parse("3k", &n, &why) != 0);

    char buf[32];
    size_format(1048576, buf, sizeof buf);
    CHECK(strcmp(buf, "1 MiB") == 0);
    size_format(65536, buf, sizeof buf);
    CHECK(strcmp(buf, "64 KiB") == 0);
    size_format(1000, buf, sizeof buf);
    CHECK(strcmp(buf, "1000 B") == 0);
    size_approx(25275219968ULL, buf, sizeof buf);
    CHECK(strcmp(buf, "23.5 GiB") == 0);

    /* a rate too small for one decimal keeps two significant digits, never "0.0" (tester 4, 14g) */
    rate_format(0.0061, buf, sizeof buf);
    CHECK(strcmp(buf, "0.0061") == 0);
    rate_format(0.049, buf, sizeof buf);
    CHECK(strcmp(buf, "0.049") == 0);
    rate_format(12.34, buf, sizeof buf);
    CHECK(strcmp(buf, "12.3") == 0);
    rate_format(0.0, buf, sizeof buf);
    CHECK(strcmp(buf, "0.0") == 0);
    rate_format(0.00004, buf, sizeof buf);
    CHECK(strcmp(buf, "0.000040") == 0);
    CHECK_DONE();
}
