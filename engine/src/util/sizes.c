#include "sizes.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>

static int parse_digits(const char **p, uint64_t *value, const char **why)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s == '-') {
        *why = "must be positive";
        return -1;
    }
    if (!isdigit((unsigned char)*s)) {
        *why = "is not a number";
        return -1;
    }
    while (isdigit((unsigned char)*s)) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *why = "is too large";
            return -1;
        }
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *value = v;
    return 0;
}

/* The leading whole number both parsers share; *p is left after it. */
static int leading_number(const char **p, uint64_t *value, const char **why)
{
    if (!*p || !**p) {
        *why = "is empty";
        return -1;
    }
    return parse_digits(p, value, why);
}

int size_parse(const char *text, uint64_t *out, const char **why)
{
    const char *s = text;
    uint64_t v;
    if (leading_number(&s, &v, why) != 0)
        return -1;
    unsigned shift = 0;
    if (*s) {
        switch (tolower((unsigned char)*s)) {
        case 'b': shift = 0; break;
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        case 'p': shift = 50; break;
        default:
            *why = "has an unknown unit (use k, m, g or t, powers of 1024)";
            return -1;
        }
        s++;
        /* accept "kib"/"kb"/"k" alike: all mean 1024 here */
        if (shift && tolower((unsigned char)*s) == 'i')
            s++;
        if (shift && tolower((unsigned char)*s) == 'b')
            s++;
        if (*s) {
            *why = "has trailing characters";
            return -1;
        }
    }
    if (v == 0) {
        *why = "must be greater than zero";
        return -1;
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        *why = "is too large";
        return -1;
    }
    *out = v << shift;
    return 0;
}

int count_parse(const char *text, uint64_t *out, const char **why)
{
    const char *s = text;
    uint64_t v;
    if (leading_number(&s, &v, why) != 0)
        return -1;
    if (*s) {
        *why = "is not a whole number";
        return -1;
    }
    if (v == 0) {
        *why = "must be greater than zero";
        return -1;
    }
    *out = v;
    return 0;
}

void size_format(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    uint64_t v = bytes;
    while (u < 5 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", (unsigned long long)v, units[u]);
}

void size_approx(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (u < 5 && v >= 1024) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void rate_format(double value, char *buf, size_t len)
{
    const double v = fabs(value);
    int decimals = 1;
    if (v > 0 && v < 0.05 && isfinite(v))
        decimals = 1 - (int)floor(log10(v)); /* two significant digits */
    snprintf(buf, len, "%.*f", decimals, value);
}
