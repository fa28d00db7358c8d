#include "laplace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void laplace_split(int n, int p, int r, int *row0, int *rows)
{
    const int base = n / p, extra = n % p;
    *rows = base + (r < extra);
    *row0 = r * base + (r < extra ? r : extra);
}

int laplace_block_init(laplace_block *b, int n, int row0, int rows)
{
    const size_t cells = (size_t)(rows + 2) * (size_t)(n + 2);
    b->n = n;
    b->row0 = row0;
    b->rows = rows;
    b->u = calloc(cells, sizeof(double));
    b->next = calloc(cells, sizeof(double));
    if (!b->u || !b->next) {
        laplace_block_free(b);
        return ENOMEM;
    }
    /* the fixed edge above row 0 lives in the top ghost row of its block,
     * in both arrays, so sweeps never overwrite it */
    if (row0 == 0)
        for (int j = 0; j < n; j++)
            *laplace_at(b, b->u, -1, j) = *laplace_at(b, b->next, -1, j) = LAPLACE_TOP_EDGE;
    return 0;
}

void laplace_block_free(laplace_block *b)
{
    free(b->u);
    free(b->next);
    b->u = b->next = NULL;
}

double laplace_sweep(laplace_block *b)
{
    const int n = b->n;
    const long stride = n + 2;
    double worst = 0;
    for (int i = 0; i < b->rows; i++) {
        const double *up = laplace_at(b, b->u, i - 1, 0), *mid = laplace_at(b, b->u, i, 0),
                     *down = up + 2 * stride;
        double *out = laplace_at(b, b->next, i, 0);
        for (int j = 0; j < n; j++) {
            const double v = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
            worst = fmax(worst, fabs(v - mid[j]));
            out[j] = v;
        }
    }
    double *t = b->u;
    b->u = b->next;
    b->next = t;
    return worst;
}
