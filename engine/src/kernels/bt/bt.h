/* BT: the NAS Parallel Benchmarks' block-tridiagonal ADI solver, written
 * from the published specification (shared/REFERENCE-FACTS.md §1): the
 * application the NHT-1 report checkpoints.
 *
 * State u is stored per cell, point-major, component fastest, so a point's
 * five unknowns are one cache line apart at most and x lines are
 * contiguous, as in the BTIO file.
 *
 * Decomposition: a grid of cells (bt_layout below), z slabs or NPB's
 * multi-partition.  A line that crosses cells is solved by a block-Thomas
 * sweep pipelined across the cells' owners, one row of lines per message;
 * a line wholly inside one cell is solved locally. */
#ifndef PARIO_BT_H
#define PARIO_BT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bt_class {
    char name;
    int grid;
    int steps;
    double dt;
    double xcr_ref[5], xce_ref[5];
    double btio_xce_ref[5]; /* mean error norm over dumps, write interval 5 (§2.5) */
} bt_class;

/* BTIO file layout (§2.3): dump d, point (i,j,k), component m at byte
 * 8*(5*(i + N*(j + N*(k + N*d))) + m); our u array is one dump. */
static inline uint64_t btio_offset(int n, int i, int j, int k, uint64_t dump)
{
    return 40ULL * ((uint64_t)i + (uint64_t)n * ((uint64_t)j + (uint64_t)n * ((uint64_t)k + (uint64_t)n * dump)));
}

/* Dumps written by `steps` steps with a write interval (every interval-th
 * step and the last one). */
static inline int btio_dumps(int steps, int interval)
{
    return steps / interval + (steps % interval ? 1 : 0);
}

const bt_class *bt_class_find(char name);

/* How the grid is split over ranks: one table of decompositions.
 *   slabs           z slabs, any rank count up to N: a cell grid 1 x 1 x P,
 *                   rank r owns cell (0, 0, r)
 *   multipartition  NPB's diagonal multi-partition (REFERENCE-FACTS §1.9):
 *                   P = p^2 ranks, a p x p x p cell grid, each rank owns p
 *                   cells, one in every slab of every direction, so each
 *                   stage of a pipelined line solve keeps every rank busy */
typedef enum bt_layout { BT_SLABS, BT_MULTIPARTITION } bt_layout;

/* One block of the grid a rank owns.  It is stored with two ghost layers
 * on every face: dim = size + 4 points per axis, point-major, component
 * fastest, x fastest among points. */
typedef struct bt_cell {
    int coord[3];         /* place in the cell grid */
    int lo[3], size[3];   /* first global point and points, per axis */
    int dim[3];           /* stored points per axis */
    long base;            /* this cell's first stored point in the rank's arrays */
    int prev[3], next[3]; /* ranks owning the neighbouring cells along each axis; -1 none */
} bt_cell;

/* Cells per axis of a layout on `nranks` ranks; 0 when the layout cannot
 * take that many (multipartition on a non-square count). */
int bt_layout_grid(bt_layout layout, int nranks, int grid[3]);
/* The cells `rank` owns, in NPB's cell order (cell c lies in z slab c);
 * out holds at least grid[2] cells.  Returns how many.  Pure arithmetic:
 * any rank's cells can be computed anywhere (the serial writer and the
 * per-rank reassembly do). */
int bt_cells_of(bt_layout layout, int n, int nranks, int rank, bt_cell *out);
/* NPB's cell sizes (§1.9): N div cells points each, the first N mod cells
 * one more; the smallest cell along any axis. */
int bt_smallest_cell(int n, int cells);
const char *bt_layout_name(bt_layout layout);
/* Complete `count` MPI_Requests. */
void bt_wait_all(int count, void *requests);

typedef struct bt_problem {
    int n;          /* grid points per direction */
    double dt;
    bt_layout layout;
    int ncells;     /* owned cells */
    bt_cell *cells;
    int *stage[3];  /* stage[a][s]: the owned cell that is s-th along axis a */
    long points;    /* stored points of all owned cells (u holds 5 doubles each) */
    int rank, nranks;
    void *comm;     /* MPI_Comm * */
    double *cprime; /* pipelined line solves: C' of every stored point */
    double *scratch; /* Jacobians and C' of one line, for the solves */
    double *face_out, *face_in; /* pipelined solves: every stage's faces out, one row in */
    double *face_back;          /* the backward sweep's faces out (inside face_out's block) */
    void *requests; /* MPI_Request, for the face and halo messages */
    void *layer;    /* MPI_Datatype per cell and axis: halo_layers stored layers */
    int halo_layers; /* 2: both ghost layers in one message; 1: one per round */
    /* derived constants (set_constants) */
    double dnm1, t1, t2, tt1; /* 1/(n-1), 1/dnm1^2 etc. shared by x, y, z since the grid is cubic */
    double *u, *rhs, *forcing;
    double *rho_i, *us, *vs, *ws, *square, *qs;
} bt_problem;

/* Stored point (i, j, k), global coordinates, of a cell. */
static inline long bt_at(const bt_cell *c, int i, int j, int k)
{
    return c->base + ((long)(k - c->lo[2] + 2) * c->dim[1] + (j - c->lo[1] + 2)) * c->dim[0] +
           (i - c->lo[0] + 2);
}

/* Allocate this rank's cells of the layout; 0, or -1 when out of memory. */
int bt_problem_init(bt_problem *p, int n, double dt, bt_layout layout, void *comm);
void bt_problem_free(bt_problem *p);

void bt_initialize(bt_problem *p);   /* u from the transfinite interpolation */
void bt_exact_rhs(bt_problem *p);    /* the forcing term */
void bt_step(bt_problem *p);         /* compute_rhs, x/y/z solves, add */
void bt_compute_rhs(bt_problem *p);

/* RMS error against the exact solution and RMS residual / dt. */
void bt_error_norm(const bt_problem *p, double xce[5]);
/* The same norm of a dump held in u (n^3 points x 5). */
void bt_error_norm_of(int n, const double *u, double xce[5]);
void bt_residual_norm(bt_problem *p, double xcr[5]);

/* NPB's operation count for Mop/s. */
double bt_mops(int n, int steps, double seconds);

#endif
