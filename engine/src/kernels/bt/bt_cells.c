/* BT's decompositions as one idea: a grid of cells and who owns which
 * (REFERENCE-FACTS §1.9).  The solver, the halo exchange and every BTIO
 * writer work on cells, so z slabs and NPB's multi-partition differ only
 * here. */
#include <math.h>
#include <mpi.h>

#include "bt.h"

const char *bt_layout_name(bt_layout layout)
{
    return layout == BT_MULTIPARTITION ? "multipartition" : "slabs";
}

static int square_root(int nranks)
{
    int p = (int)lround(sqrt((double)nranks));
    return p * p == nranks ? p : 0;
}

int bt_layout_grid(bt_layout layout, int nranks, int grid[3])
{
    if (layout == BT_SLABS) {
        grid[0] = grid[1] = 1;
        grid[2] = nranks;
        return 1;
    }
    int p = square_root(nranks);
    grid[0] = grid[1] = grid[2] = p;
    return p > 0;
}

/* Cell `coord` of `cells` along an axis of n points: N div cells points,
 * the first N mod cells one more, contiguous. */
static void extent(int n, int cells, int coord, int *lo, int *size)
{
    const int base = n / cells, extra = n % cells;
    *size = base + (coord < extra);
    *lo = coord * base + (coord < extra ? coord : extra);
}

int bt_smallest_cell(int n, int cells)
{
    return n / cells;
}

/* The rank owning a cell.  Multi-partition: cell c of rank (i, j) (its
 * first cell's x, y) sits at (i + c, j - c, c) mod p, so the owner of
 * (x, y, z) is (x - z, y + z) mod p. */
static int owner(bt_layout layout, const int grid[3], const int c[3])
{
    if (layout == BT_SLABS)
        return c[2];
    const int p = grid[0];
    return ((c[0] - c[2]) % p + p) % p + p * ((c[1] + c[2]) % p);
}

int bt_cells_of(bt_layout layout, int n, int nranks, int rank, bt_cell *out)
{
    int grid[3];
    if (!bt_layout_grid(layout, nranks, grid))
        return 0;
    const int count = layout == BT_SLABS ? 1 : grid[0];
    long base = 0;
    for (int c = 0; c < count; c++) {
        bt_cell *cell = &out[c];
        if (layout == BT_SLABS) {
            cell->coord[0] = cell->coord[1] = 0;
            cell->coord[2] = rank;
        } else {
            const int p = grid[0];
            cell->coord[0] = (rank % p + c) % p;
            cell->coord[1] = ((rank / p - c) % p + p) % p;
            cell->coord[2] = c;
        }
        long points = 1;
        for (int a = 0; a < 3; a++) {
            extent(n, grid[a], cell->coord[a], &cell->lo[a], &cell->size[a]);
            cell->dim[a] = cell->size[a] + 4;
            points *= cell->dim[a];
            int nb[3] = {cell->coord[0], cell->coord[1], cell->coord[2]};
            nb[a] = cell->coord[a] - 1;
            cell->prev[a] = nb[a] >= 0 ? owner(layout, grid, nb) : -1;
            nb[a] = cell->coord[a] + 1;
            cell->next[a] = nb[a] < grid[a] ? owner(layout, grid, nb) : -1;
        }
        cell->base = base;
        base += points;
    }
    return count;
}

/* MPI_Waitall without statuses, one request at a time (gcc warns about
 * the array Open MPI's MPI_STATUSES_IGNORE stands for). */
void bt_wait_all(int count, void *requests)
{
    MPI_Request *r = requests;
    for (int i = 0; i < count; i++)
        MPI_Wait(&r[i], MPI_STATUS_IGNORE);
}
