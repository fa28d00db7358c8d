/* The 5x5 block operations of BT's line solves (§1.6), shared by the
 * local solves and the solve pipelined across ranks. */
#ifndef PARIO_BT_BLOCKS_H
#define PARIO_BT_BLOCKS_H

#include <string.h>

#define BT_C1 1.4
#define BT_C2 0.4
#define BT_C3C4 0.1
#define BT_C1345 (1.4 * 1.4 * 0.1)
#define BT_CON43 (4.0 / 3.0)

typedef double block[5][5];

/* Flux Jacobian F and viscous Jacobian N at one point (§1.6). */
static inline void bt_jacobians(const double *u, int a, block F, block N)
{
    const double r = 1.0 / u[0], r2 = r * r, r3 = r2 * r;
    const double sq = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * r, qs = sq * r;
    const double c1 = BT_C1, c2 = BT_C2, c3c4 = BT_C3C4, c1345 = BT_C1345;
    memset(F, 0, sizeof(block));
    memset(N, 0, sizeof(block));
    const double ua = u[a];
    F[0][a] = 1.0;
    F[a][0] = -(ua * r) * (ua * r) + c2 * qs;
    F[a][a] = (2.0 - c2) * ua * r;
    F[a][4] = c2;
    F[4][0] = (2.0 * c2 * sq - c1 * u[4]) * ua * r2;
    F[4][a] = c1 * u[4] * r - c2 * (qs + ua * ua * r2);
    F[4][4] = c1 * ua * r;
    double n40 = -c1345 * r2 * u[4];
    for (int b = 1; b < 4; b++) {
        const double ks = (b == a ? BT_CON43 : 1.0) * c3c4;
        N[b][0] = -ks * r2 * u[b];
        N[b][b] = ks * r;
        N[4][b] = (ks - c1345) * r2 * u[b];
        n40 -= (ks - c1345) * r3 * u[b] * u[b];
        if (b == a)
            continue;
        F[a][b] = -c2 * u[b] * r;
        F[b][0] = -ua * u[b] * r2;
        F[b][a] = u[b] * r;
        F[b][b] = ua * r;
        F[4][b] = -c2 * ua * u[b] * r2;
    }
    N[4][0] = n40;
    N[4][4] = c1345 * r;
}

/* Gauss-Jordan without pivoting: C <- B^-1 C, r <- B^-1 r (B destroyed). */
static inline void bt_solve_block(block B, block C, double r[5])
{
    for (int p = 0; p < 5; p++) {
        const double piv = 1.0 / B[p][p];
        for (int c = p + 1; c < 5; c++)
            B[p][c] *= piv;
        for (int c = 0; c < 5; c++)
            C[p][c] *= piv;
        r[p] *= piv;
        for (int q = 0; q < 5; q++) {
            if (q == p)
                continue;
            const double f = B[q][p];
            for (int c = p + 1; c < 5; c++)
                B[q][c] -= f * B[p][c];
            for (int c = 0; c < 5; c++)
                C[q][c] -= f * C[p][c];
            r[q] -= f * r[p];
        }
    }
}


/* Row s of a line's block-tridiagonal system from the Jacobians at s-1, s,
 * s+1: A = -t2 F- - t1 N- - t1 D, B = I + 2 t1 N + 2 t1 D, C = t2 F+ - t1 N+ - t1 D. */
static inline void bt_build_row(const block Fm, const block Nm, const block N0, const block Fp,
                                const block Np, double t1, double t2, double diag, block A,
                                block B, block C)
{
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 5; y++) {
            A[x][y] = -t2 * Fm[x][y] - t1 * Nm[x][y];
            B[x][y] = 2.0 * t1 * N0[x][y];
            C[x][y] = t2 * Fp[x][y] - t1 * Np[x][y];
        }
    for (int x = 0; x < 5; x++) {
        A[x][x] -= diag;
        B[x][x] += 1.0 + 2.0 * diag;
        C[x][x] -= diag;
    }
}

/* Forward elimination of one row given the previous row's C' and r:
 * r -= A r-, B -= A C'-, then C <- B^-1 C, r <- B^-1 r. */
static inline void bt_eliminate(const block A, block B, const block Cprev, const double rprev[5],
                                block C, double r[5])
{
    for (int x = 0; x < 5; x++) {
        double acc = 0;
        for (int y = 0; y < 5; y++)
            acc += A[x][y] * rprev[y];
        r[x] -= acc;
        for (int y = 0; y < 5; y++) {
            double m = 0;
            for (int z = 0; z < 5; z++)
                m += A[x][z] * Cprev[z][y];
            B[x][y] -= m;
        }
    }
    bt_solve_block(B, C, r);
}

/* Back substitution of one row: r -= C' r+. */
static inline void bt_back_substitute(const block C, const double rnext[5], double r[5])
{
    for (int x = 0; x < 5; x++) {
        double acc = 0;
        for (int y = 0; y < 5; y++)
            acc += C[x][y] * rnext[y];
        r[x] -= acc;
    }
}

#endif
