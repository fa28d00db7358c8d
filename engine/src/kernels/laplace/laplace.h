/* The 2-D Laplace solver of the SGI 750 report's Figure 8: Jacobi sweeps
 * on an N×N grid of unknowns held between fixed boundaries (the edge above
 * row 0 at 1, the other three at 0), split over the ranks in blocks of
 * whole rows with one ghost row above and below.
 *
 * Each point's update is 0.25·(north + south + west + east), added in that
 * order on every rank count, so the grid after k sweeps is the same bit for
 * bit however it was split: a serial reader can recompute it and compare a
 * checkpoint exactly. */
#ifndef PARIO_LAPLACE_H
#define PARIO_LAPLACE_H

#include <stdint.h>

#define LAPLACE_TOP_EDGE 1.0

typedef struct laplace_block {
    int n;          /* grid is n × n */
    int row0, rows; /* this block's first row and row count */
    double *u, *next; /* (rows + 2) × (n + 2), ghost rows and columns included */
} laplace_block;

/* The rows of rank r of p (the first n mod p ranks get one more). */
void laplace_split(int n, int p, int r, int *row0, int *rows);

int laplace_block_init(laplace_block *b, int n, int row0, int rows); /* 0 or ENOMEM */
void laplace_block_free(laplace_block *b);

/* Pointer to interior point (i, j) of the block, i relative to row0. */
static inline double *laplace_at(const laplace_block *b, double *a, int i, int j)
{
    return &a[(long)(i + 1) * (b->n + 2) + (j + 1)];
}

/* One Jacobi sweep over the block's interior from u into next, then swap;
 * the ghost rows must be current.  Returns the largest change. */
double laplace_sweep(laplace_block *b);

#endif
