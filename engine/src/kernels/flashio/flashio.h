/* FLASH-IO (REFERENCE-FACTS 3): the I/O of the FLASH code as its benchmark
 * gives it.  Every rank holds 80 + (rank mod 3) blocks of nxb³ zones with
 * 4 guard cells a side and 24 variables (variable index fastest, 8-byte
 * reals, unk(v, ...) = v), and writes three files through parallel HDF5:
 * a checkpoint (all 24 variables, 8-byte), a plotfile of 4 variables as
 * 4-byte floats, and the same 4 at the block corners (the average of the
 * 8 cells sharing each corner), each with FLASH's metadata datasets. */
#ifndef PARIO_FLASHIO_H
#define PARIO_FLASHIO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../util/safe_file.h"

#define FLASH_NGUARD 4
#define FLASH_NVAR 24
#define FLASH_NDIM 3
#define FLASH_NGID 15 /* 6 faces + 1 parent + 8 children */
#define FLASH_NPLOT 4

extern const char *const flash_var_names[FLASH_NVAR]; /* "dens" ... "f13" */
extern const int flash_plot_vars[FLASH_NPLOT];        /* dens, temp, pres, f1 */

typedef struct flash_mesh {
    int nxb;          /* zones per block edge (8, the original's) */
    int lnblocks;     /* this rank's blocks */
    long long offset; /* blocks on lower ranks */
    long long total;  /* blocks on all ranks */
    double *unk;      /* [block][k][j][i][var], guard cells included */
} flash_mesh;

int flash_mesh_init(flash_mesh *m, int nxb, int base_blocks, MPI_Comm comm); /* 0 or ENOMEM */
void flash_mesh_free(flash_mesh *m);

/* Interior zones of one variable, all local blocks: [block][z][y][x]. */
void flash_interior(const flash_mesh *m, int var, double *out);
void flash_interior_float(const flash_mesh *m, int var, float *out);
/* Corner values of one variable: [block][z][y][x], (nxb+1)³ per block. */
void flash_corners(const flash_mesh *m, int var, float *out);

/* The three files, in FLASH-IO's order. */
enum flash_file { FLASH_CHECKPOINT, FLASH_PLOT_CENTERS, FLASH_PLOT_CORNERS, FLASH_NFILES };

typedef struct flash_write_result {
    double seconds;   /* this rank: create to close */
    uint64_t bytes;   /* this rank's bytes put: data and metadata */
    bool created;     /* the file exists because this call made it */
    owned_file who;   /* which file that is (noted as soon as it was created) */
    char why[512];    /* empty on success */
    int err;          /* why's cause as an errno value, 0 when only HDF5's text names it */
} flash_write_result;

/* Collective: create path exclusively and write one file.  collective
 * chooses the transfer property of the block data. */
void flash_write_file(const flash_mesh *m, enum flash_file which, const char *path, bool collective,
                      MPI_Comm comm, flash_write_result *r);

/* Serial, untimed: open the file (only while it is still the one who
 * noted: HDF5 would follow a symlink planted at the name) and check every dataset's shape and
 * values.  Returns true, or false with a reason. */
bool flash_check_file(const char *path, const owned_file *who, enum flash_file which, int nxb,
                      long long total, char *why, size_t len);

const char *flash_file_suffix(enum flash_file which);

#endif
