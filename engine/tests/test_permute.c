#include <stdlib.h>

#include "check.h"
#include "util/permute.h"

static int is_bijection(uint64_t n, uint64_t key)
{
    unsigned char *seen = calloc(n ? n : 1, 1);
    int good = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t p = permute_index(i, n, key);
        if (p >= n || seen[p]++)
            good = 0;
    }
    free(seen);
    return good;
}

int main(void)
{
    uint64_t sizes[] = {1, 2, 3, 5, 16, 17, 1000, 4096, 65537, 262144};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CHECK(is_bijection(sizes[i], 1));
        CHECK(is_bijection(sizes[i], 0xdeadbeef));
    }
    /* different keys give different orders */
    int same = 1;
    for (uint64_t i = 0; i < 100; i++)
        if (permute_index(i, 1000, 1) != permute_index(i, 1000, 2))
            same = 0;
    CHECK(!same);
    CHECK_DONE();
}
