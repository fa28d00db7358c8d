#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/pattern.h"

/* The buffer handed out for a range must equal the word-by-word
 * definition, at any offset, for any length, after any earlier use. */
static int matches_definition(pattern_source *s, uint64_t off, size_t len)
{
    const unsigned char *p = pattern_source_at(s, off, len);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w != pattern_word(&s->key, off + i))
            return 0;
    }
    return 1;
}

int main(void)
{
    pattern_source s;
    CHECK(pattern_source_init(&s, 1u << 20, false) == 0);
    pattern_key k = pattern_key_make(7, 2, 0);
    pattern_source_fill(&s, k);

    CHECK(matches_definition(&s, 0, 4096));
    CHECK(matches_definition(&s, 4096, 65536));
    CHECK(matches_definition(&s, PATTERN_PERIOD - 4096, 1u << 20)); /* crosses the period */
    CHECK(matches_definition(&s, 3ULL << 30, 1u << 20));            /* far offsets */
    CHECK(matches_definition(&s, 8, 1000 * 8));                     /* unaligned to stamps */
    CHECK(matches_definition(&s, 0, 4096));                         /* re-use after others */

    /* Stamps carry the offset: the same bytes never recur at two offsets. */
    const unsigned char *a = pattern_source_at(&s, 0, 4096);
    unsigned char first[4096];
    memcpy(first, a, 4096);
    const unsigned char *b = pattern_source_at(&s, PATTERN_PERIOD, 4096);
    CHECK(memcmp(first, b, 4096) != 0);

    /* The key depends on seed, iteration and stream. */
    pattern_key k2 = pattern_key_make(7, 3, 0), k3 = pattern_key_make(8, 2, 0),
                k4 = pattern_key_make(7, 2, 1);
    CHECK(pattern_word(&k, 0) != pattern_word(&k2, 0));
    CHECK(pattern_word(&k, 0) != pattern_word(&k3, 0));
    CHECK(pattern_word(&k, 0) != pattern_word(&k4, 0));
    CHECK(pattern_word(&k, 16) != pattern_word(&k2, 16));

    /* pattern_check names the first differing byte. */
    unsigned char buf[8192];
    memcpy(buf, pattern_source_at(&s, 8192, 8192), 8192);
    CHECK(pattern_check(&s, 8192, buf, 8192) == -1);
    buf[777] ^= 0x01;
    CHECK(pattern_check(&s, 8192, buf, 8192) == 777);
    /* a block written at the wrong place fails at its first stamp */
    memcpy(buf, pattern_source_at(&s, 0, 8192), 8192);
    int64_t misplaced = pattern_check(&s, 8192, buf, 8192);
    CHECK(misplaced >= 0 && misplaced < 8); /* inside the first stamp word */
    /* zeros (a hole) fail too */
    memset(buf, 0, sizeof buf);
    CHECK(pattern_check(&s, 8192, buf, 8192) >= 0);

    pattern_source_free(&s);
    CHECK_DONE();
}
