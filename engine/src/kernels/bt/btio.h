/* The NHT-1 / BTIO checkpoint file: every dump of u in serial (Fortran)
 * order, one file.  The writer is used inside BT's timed loop; the reader
 * is the report's serial post-processing program. */
#ifndef PARIO_BTIO_H
#define PARIO_BTIO_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "../../util/safe_file.h"
#include "bt.h"

/* How BT writes its dumps: one table of modes, like the io backends.  A
 * mode works on the rank's cells (bt_cells.c), so the same code writes z
 * slabs and NPB's multi-partition; every shared-file mode writes the same
 * bytes (§2.3's layout) whatever the decomposition and rank count.
 *   posix       pwrite per (cell, j, k) row from every rank
 *   fortran     pwrite per point: NPB "fortran"'s 40-byte direct-access
 *               records, record point + dump N^3
 *   independent MPI_File_write_at per (cell, j, k) row (NPB "simple")
 *   collective  one MPI_File_write_at_all per dump through a file view of
 *               the rank's cells (NPB "full")
 *   per-rank    one file per rank, per dump one Fortran record per cell
 *               (NPB "epio"): not the serial order; btio_read_check
 *               reassembles the dumps from every rank's file
 *   serial      gather to rank 0, which writes (a single writer) */
typedef struct btio_ctx {
    const struct btio_mode *mode;
    char path[4200]; /* the shared file, or this rank's file for per-rank */
    int fd;
    MPI_File fh;
    MPI_Info info;
    MPI_Comm comm;
    int rank, nranks;
    double *gathered; /* serial: rank 0's whole dump */
    MPI_Datatype *from; /* serial, rank 0: where each rank's points go in a dump */
    MPI_Request *pending;
    MPI_Datatype point, filetype, memtype; /* collective: etype, view, u's cell interiors */
    uint64_t local_points; /* collective: etypes this rank writes per dump */
    char *record;          /* per-rank: one framed cell record */
    uint64_t epio_dump_bytes; /* per-rank: one dump's records */
    double sync_seconds; /* close: the part spent making the file durable
                          * (fsync, MPI_File_sync), which NPB's close does
                          * not do: reported beside the I/O time */
    owned_file mine;  /* the file this run created: the only one it removes */
    char why[512];    /* an MPI-IO failure in the library's words, else "" */
} btio_ctx;

typedef struct btio_mode {
    const char *name;
    const char *npb;   /* NPB BTIO's subtype name for the same thing, or NULL */
    bool serial_order;
    int record_points; /* posix family: points per pwrite, 0 = a whole row */
    bool rank0_writes; /* serial: rank 0 alone writes (the others only send it their cells) */
    int (*open)(btio_ctx *c, const bt_problem *p);
    int (*view)(btio_ctx *c, const bt_problem *p); /* MPI-IO: set the file view after open */
    int (*write_dump)(btio_ctx *c, const bt_problem *p, int dump);
    int (*close)(btio_ctx *c);
} btio_mode;

const btio_mode *btio_mode_find(const char *name);

/* Open for a run: creates the file(s) with O_EXCL (never an existing file).
 * base is DIR/NAME; per-rank appends .RRRR. Returns 0 or an errno value. */
int btio_open(btio_ctx *c, const btio_mode *m, const char *base, MPI_Info info,
              const bt_problem *p);


/* Read `dumps` dumps of an n^3 grid from path, one at a time; the mean over
 * dumps of the RMS error norm goes to xce_mean, the last dump's (the final
 * solution, written after the last step at any interval) to xce_last when
 * it is not NULL.  With diag, print the diagonal u(m,i,i,i) of every dump
 * there.  Returns 0, or -1 with why set. */
int btio_read_check(const char *path, int n, int dumps, double xce_mean[5], double xce_last[5],
                    FILE *diag, char *why, size_t why_len);

/* The same for per-rank (epio) files base.RRRR written by `nranks` ranks
 * in `layout`: each dump is put back together from every rank's cell
 * records (the record markers checked) before its norm is taken. */
int btio_read_check_per_rank(const char *base, int n, bt_layout layout, int nranks, int dumps,
                             double xce_mean[5], double xce_last[5], FILE *diag, char *why,
                             size_t why_len);

/* Remove the file(s) this run created (rank 0 the shared file, every rank
 * its own per-rank file), only while the name still names them. */
void btio_remove(btio_ctx *c);

#endif
