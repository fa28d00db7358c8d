#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/stripe.h"

/* Every logical byte maps to exactly one (target, local) place, the local
 * places of each target are dense from 0, and the part sizes add up to
 * the logical length, for units that do and do not divide the file. */
static int maps_once(int n, uint64_t unit, uint64_t bytes)
{
    stripe_spec s = {.ntargets = n, .unit = unit};
    uint64_t *next = calloc((size_t)n, sizeof *next); /* next local offset expected per target */
    int good = 1;
    for (uint64_t off = 0; off < bytes;) {
        int t;
        uint64_t local, left;
        stripe_locate(&s, off, &t, &local, &left);
        if (t < 0 || t >= n || local != next[t] || left == 0 || left > unit)
            good = 0;
        uint64_t step = left < bytes - off ? left : bytes - off;
        next[t] += step;
        off += step;
    }
    uint64_t sum = 0;
    for (int t = 0; t < n; t++) {
        if (stripe_part_bytes(&s, bytes, t) != next[t])
            good = 0;
        sum += stripe_part_bytes(&s, bytes, t);
    }
    free(next);
    return good && sum == bytes;
}

int main(void)
{
    CHECK(maps_once(1, 4096, 10 * 4096));
    CHECK(maps_once(3, 24 * 1024, 3 * 1024 * 1024));
    CHECK(maps_once(4, 64 * 1024, 1000 * 1024 + 8));
    CHECK(maps_once(7, 8, 12345 * 8));

    stripe_spec s = {.ntargets = 3, .unit = 100};
    int t;
    uint64_t local, left;
    stripe_locate(&s, 450, &t, &local, &left); /* stripe 4: target 1, its second unit */
    CHECK(t == 1 && local == 150 && left == 50);

    char out[PATH_MAX];
    char d0[] = "/a", d1[] = "/b/c";
    s.dirs[0] = d0;
    s.dirs[1] = d1;
    stripe_part_path(&s, 1, "/x/y/name.00000003", out);
    CHECK(strcmp(out, "/b/c/name.00000003") == 0);
    char parts[1][PATH_MAX];
    CHECK(stripe_parts(NULL, "/x/f", parts) == 1 && strcmp(parts[0], "/x/f") == 0);
    CHECK_DONE();
}
