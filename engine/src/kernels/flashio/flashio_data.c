/* FLASH's block data in memory and the three views the files take of it. */
#include <errno.h>
#include <stdlib.h>

#include "flashio.h"

const char *const flash_var_names[FLASH_NVAR] = {
    "dens", "velx", "vely", "velz", "pres", "ener", "temp", "gamc", "game", "enuc", "gpot", "f1",
    "f2",   "f3",   "f4",   "f5",   "f6",   "f7",   "f8",   "f9",   "f10",  "f11",  "f12",  "f13"};

/* 0-based indices of dens, temp, pres and the first species */
const int flash_plot_vars[FLASH_NPLOT] = {0, 6, 4, 11};

static int edge(const flash_mesh *m) { return m->nxb + 2 * FLASH_NGUARD; }

static size_t at(const flash_mesh *m, int b, int k, int j, int i, int v)
{
    const size_t e = (size_t)edge(m);
    return (size_t)v + FLASH_NVAR * ((size_t)i + e * ((size_t)j + e * ((size_t)k + e * (size_t)b)));
}

int flash_mesh_init(flash_mesh *m, int nxb, int base_blocks, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    m->nxb = nxb;
    m->lnblocks = base_blocks + rank % 3; /* FLASH-IO's imbalance */
    long long mine = m->lnblocks;
    MPI_Exscan(&mine, &m->offset, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (rank == 0)
        m->offset = 0; /* MPI_Exscan leaves rank 0's result undefined */
    MPI_Allreduce(&mine, &m->total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    const size_t e = (size_t)edge(m), n = (size_t)m->lnblocks * e * e * e * FLASH_NVAR;
    m->unk = malloc(n * sizeof(double));
    if (!m->unk)
        return ENOMEM;
    for (size_t c = 0; c < n / FLASH_NVAR; c++)
        for (int v = 0; v < FLASH_NVAR; v++)
            m->unk[c * FLASH_NVAR + (size_t)v] = (double)(v + 1); /* unk(v, ...) = v, guards too */
    return 0;
}

void flash_mesh_free(flash_mesh *m)
{
    free(m->unk);
    m->unk = NULL;
}

void flash_interior(const flash_mesh *m, int var, double *out)
{
    const int g = FLASH_NGUARD, n = m->nxb;
    for (int b = 0; b < m->lnblocks; b++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    *out++ = m->unk[at(m, b, k + g, j + g, i + g, var)];
}

void flash_interior_float(const flash_mesh *m, int var, float *out)
{
    const int g = FLASH_NGUARD, n = m->nxb;
    for (int b = 0; b < m->lnblocks; b++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    *out++ = (float)m->unk[at(m, b, k + g, j + g, i + g, var)];
}

void flash_corners(const flash_mesh *m, int var, float *out)
{
    /* corner (i, j, k) lies between cells g+i-1 and g+i in each direction;
     * at the block's faces one of them is a guard cell */
    const int g = FLASH_NGUARD, n = m->nxb;
    for (int b = 0; b < m->lnblocks; b++)
        for (int k = 0; k <= n; k++)
            for (int j = 0; j <= n; j++)
                for (int i = 0; i <= n; i++) {
                    double sum = 0;
                    for (int dk = 0; dk < 2; dk++)
                        for (int dj = 0; dj < 2; dj++)
                            for (int di = 0; di < 2; di++)
                                sum += m->unk[at(m, b, g + k - 1 + dk, g + j - 1 + dj, g + i - 1 + di, var)];
                    *out++ = (float)(0.125 * sum);
                }
}
