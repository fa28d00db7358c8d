/* A rank's slice of blocks as MPI datatypes, for one collective call: the
 * file type of a view (blocks in increasing file order, as a view needs)
 * and the memory type that takes the blocks out of the slice's buffer in
 * that same order.  The shape follows the offsets, not the layout's name:
 *
 *   consecutive offsets (partitioned)      one contiguous run
 *   equal strides (interleaved)            a vector (hvector)
 *   anything else (random)                 an indexed type (hindexed_block),
 *                                          after sorting the offsets; memory
 *                                          is permuted to match with a
 *                                          second indexed type, so no byte is
 *                                          copied by pario. */
#ifndef PARIO_MPIIO_VIEW_H
#define PARIO_MPIIO_VIEW_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mpiio_view {
    MPI_Offset disp;        /* file offset of the first block (the view's displacement) */
    MPI_Datatype filetype;  /* from disp; MPI_DATATYPE_NULL when count == 0 */
    MPI_Datatype memtype;   /* one instance covers the whole slice buffer */
    const char *shape;      /* "contiguous", "vector", "indexed", "empty" */
} mpiio_view;

/* Build the types for count blocks of `block` bytes at offsets[0..count)
 * whose data lie at buf + i*block.  Returns 0 or ENOMEM / EINVAL. */
int mpiio_view_build(mpiio_view *v, const uint64_t *offsets, uint64_t count, size_t block);

void mpiio_view_free(mpiio_view *v);

#endif
