#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/layout.h"

/* Over all ranks, a writing layout covers every block of the file exactly
 * once, and each rank's offsets are block aligned and inside the file. */
static int covers_once(const layout_ops *l, uint64_t file_bytes, uint64_t block, int ranks)
{
    uint64_t blocks = file_bytes / block;
    unsigned char *seen = calloc(blocks, 1);
    int good = 1;
    for (int r = 0; r < ranks; r++) {
        layout_geometry g = {file_bytes, block, ranks, r, 99};
        uint64_t n = l->block_count(&g);
        if (n != blocks / (uint64_t)ranks)
            good = 0;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t off = l->block_offset(&g, k);
            if (off % block || off >= file_bytes || seen[off / block]++)
                good = 0;
        }
    }
    for (uint64_t i = 0; i < blocks; i++)
        if (seen[i] != 1)
            good = 0;
    free(seen);
    return good;
}

int main(void)
{
    const layout_ops *part = layout_find("partitioned"), *inter = layout_find("interleaved"),
                     *rnd = layout_find("random"), *bc = layout_find("broadcast");
    CHECK(part && inter && rnd && bc);
    CHECK(layout_find("spiral") == NULL);
    CHECK(bc->read_only && !part->read_only);

    for (int ranks = 1; ranks <= 8; ranks++) {
        CHECK(covers_once(part, 96 * 4096, 4096, ranks == 5 || ranks == 7 ? 4 : ranks));
        CHECK(covers_once(inter, 96 * 4096, 4096, ranks == 5 || ranks == 7 ? 4 : ranks));
        CHECK(covers_once(rnd, 96 * 4096, 4096, ranks == 5 || ranks == 7 ? 4 : ranks));
    }

    /* The shapes of the CFS report's Figure 5. */
    layout_geometry g = {16 * 4096, 4096, 4, 1, 0};
    CHECK(part->block_offset(&g, 0) == 4 * 4096); /* rank 1 starts a quarter in */
    CHECK(part->block_offset(&g, 1) == 5 * 4096);
    CHECK(inter->block_offset(&g, 0) == 1 * 4096); /* rank 1 takes blocks 1, 5, 9 */
    CHECK(inter->block_offset(&g, 1) == 5 * 4096);
    layout_geometry b = {16 * 4096, 4096, 1, 0, 0};
    CHECK(bc->block_count(&b) == 16 && bc->block_offset(&b, 15) == 15 * 4096);

    /* Random really is out of order. */
    layout_geometry one = {1024 * 4096, 4096, 1, 0, 5};
    int in_order = 1;
    for (uint64_t k = 0; k < 1024; k++)
        if (rnd->block_offset(&one, k) != k * 4096)
            in_order = 0;
    CHECK(!in_order);

    /* Impossible geometries are refused with a reason. */
    char why[256];
    layout_geometry odd = {10 * 4096, 4096, 3, 0, 0};
    CHECK(part->check(&odd, why, sizeof why) != NULL && strstr(why, "multiple of"));
    layout_geometry even = {12 * 4096, 4096, 3, 0, 0};
    CHECK(part->check(&even, why, sizeof why) == NULL);
    CHECK_DONE();
}
