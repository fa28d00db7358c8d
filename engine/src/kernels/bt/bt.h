/* BT: the NAS Parallel Benchmarks' block-tridiagonal ADI solver, written
 * from the published specification (shared/REFERENCE-FACTS.md §1): the
 * application the NHT-1 report checkpoints.
 *
 * State u is stored point-major, component fastest: u[((k*N + j)*N + i)*5 + m],
 * so a point's five unknowns are one cache line apart at most, x lines are
 * contiguous, and a slab of k-planes is exactly a run of the BTIO file.
 *
 * Decomposition: contiguous slabs of k-planes, any rank count up to N.
 * x and y lines are local; z lines are solved by a block-Thomas sweep
 * pipelined across the ranks one j-row at a time.  Chosen over NPB's
 * multi-partition because that needs a square rank count. */
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

typedef struct bt_problem {
    int n;          /* grid points per direction */
    double dt;
    /* z-slab decomposition: this rank owns planes k0 .. k0+nk-1 and stores
     * two ghost planes on each side */
    int k0, nk;
    int rank, nranks;
    void *comm;     /* MPI_Comm * */
    double *cprime; /* pipelined z solve: C' of every owned point */
    double *scratch; /* Jacobians and C' of one line, for the solves */
    /* derived constants (set_constants) */
    double dnm1, t1, t2, tt1; /* 1/(n-1), 1/dnm1^2 etc. shared by x, y, z since the grid is cubic */
    double *u, *rhs, *forcing;
    double *rho_i, *us, *vs, *ws, *square, *qs;
} bt_problem;

/* Allocate this rank's slab; 0 or -1. */
int bt_problem_init(bt_problem *p, int n, double dt, int k0, int nk, void *comm);
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
