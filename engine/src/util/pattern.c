#include "pattern.h"

#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

/* splitmix64's finaliser: a fast, well-mixed 64-bit bijection. */
static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

pattern_key pattern_key_make(uint64_t seed, uint64_t iteration, uint64_t stream)
{
    pattern_key k;
    uint64_t h = mix64(seed);
    h = mix64(h ^ (iteration * 0xd6e8feb86659fd93ULL));
    h = mix64(h ^ (stream * 0xa0761d6478bd642fULL));
    k.random_key = h;
    k.stamp_key = mix64(h ^ 0x5bd1e9955bd1e995ULL);
    return k;
}

uint64_t pattern_word(const pattern_key *k, uint64_t offset)
{
    if (offset % PATTERN_STAMP == 0)
        return offset ^ k->stamp_key;
    return mix64(k->random_key + (offset % PATTERN_PERIOD) / 8);
}

void *pattern_buffer_alloc(size_t len, bool want_huge, bool *huge_out, size_t *mapped_out)
{
    size_t mapped = (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (mapped == 0)
        mapped = HUGE_PAGE;
    void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    bool huge = false;
#ifdef MADV_HUGEPAGE
    if (want_huge && madvise(p, mapped, MADV_HUGEPAGE) == 0)
        huge = true;
#else
    (void)want_huge;
#endif
    if (huge_out)
        *huge_out = huge;
    if (mapped_out)
        *mapped_out = mapped;
    return p;
}

void pattern_buffer_free(void *p, size_t mapped)
{
    if (p)
        munmap(p, mapped);
}

int pattern_source_init(pattern_source *s, size_t max_len, bool want_huge)
{
    memset(s, 0, sizeof *s);
    s->span = PATTERN_PERIOD + max_len;
    s->base = pattern_buffer_alloc(s->span, want_huge, &s->huge_pages, &s->mapped);
    return s->base ? 0 : -1;
}

void pattern_source_free(pattern_source *s)
{
    pattern_buffer_free(s->base, s->mapped);
    memset(s, 0, sizeof *s);
}

void pattern_source_fill(pattern_source *s, pattern_key key)
{
    if (s->filled && s->key.random_key == key.random_key && s->key.stamp_key == key.stamp_key)
        return;
    uint64_t *w = (uint64_t *)s->base;
    size_t n = s->span / 8;
    /* Stamp words are left as random words here; pattern_source_at writes
     * the real stamp for each range it hands out. */
    for (size_t i = 0; i < n; i++)
        w[i] = mix64(key.random_key + (i % (PATTERN_PERIOD / 8)));
    s->key = key;
    s->filled = true;
}

const unsigned char *pattern_source_at(pattern_source *s, uint64_t offset, size_t len)
{
    unsigned char *p = s->base + (offset % PATTERN_PERIOD);
    uint64_t first = (offset + PATTERN_STAMP - 1) / PATTERN_STAMP * PATTERN_STAMP;
    for (uint64_t o = first; o < offset + len; o += PATTERN_STAMP) {
        uint64_t v = o ^ s->key.stamp_key;
        memcpy(p + (o - offset), &v, 8);
    }
    return p;
}

int64_t pattern_check(pattern_source *s, uint64_t offset, const unsigned char *got, size_t len)
{
    const unsigned char *want = pattern_source_at(s, offset, len);
    if (memcmp(want, got, len) == 0)
        return -1;
    for (size_t i = 0; i < len; i++)
        if (want[i] != got[i])
            return (int64_t)i;
    return -1;
}
