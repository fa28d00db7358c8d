#include "mpiio_view.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct placed {
    uint64_t offset;
    uint64_t index; /* position of the block in the slice buffer */
} placed;

static int by_offset(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* One block as a type: bytes when the count fits an int, else 8-byte
 * words (blocks are multiples of 8). */
static int block_type(size_t block, MPI_Datatype *t)
{
    int e = block <= INT_MAX ? MPI_Type_contiguous((int)block, MPI_BYTE, t)
                             : MPI_Type_contiguous((int)(block / 8), MPI_UINT64_T, t);
    return e == MPI_SUCCESS ? 0 : EINVAL;
}

static int commit(MPI_Datatype *t, int e)
{
    if (e != MPI_SUCCESS)
        return EINVAL;
    return MPI_Type_commit(t) == MPI_SUCCESS ? 0 : EINVAL;
}

static int build_indexed(mpiio_view *v, const uint64_t *offsets, int n, size_t block,
                         MPI_Datatype bt)
{
    placed *p = malloc(sizeof *p * (size_t)n);
    MPI_Aint *fdisp = malloc(sizeof *fdisp * (size_t)n);
    MPI_Aint *mdisp = malloc(sizeof *mdisp * (size_t)n);
    int e = 0;
    if (!p || !fdisp || !mdisp) {
        e = ENOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++)
        p[i] = (placed){offsets[i], (uint64_t)i};
    qsort(p, (size_t)n, sizeof *p, by_offset);
    bool in_order = true;
    for (int i = 0; i < n; i++) {
        if (i && p[i].offset < p[i - 1].offset + block) {
            e = EINVAL; /* overlapping blocks cannot form a view */
            goto out;
        }
        fdisp[i] = (MPI_Aint)(p[i].offset - p[0].offset);
        mdisp[i] = (MPI_Aint)(p[i].index * block);
        in_order = in_order && p[i].index == (uint64_t)i;
    }
    v->disp = (MPI_Offset)p[0].offset;
    v->shape = "indexed";
    if ((e = commit(&v->filetype, MPI_Type_create_hindexed_block(n, 1, fdisp, bt, &v->filetype))))
        goto out;
    if (in_order)
        e = commit(&v->memtype, MPI_Type_contiguous(n, bt, &v->memtype));
    else
        e = commit(&v->memtype, MPI_Type_create_hindexed_block(n, 1, mdisp, bt, &v->memtype));
out:
    free(p);
    free(fdisp);
    free(mdisp);
    return e;
}

int mpiio_view_build(mpiio_view *v, const uint64_t *offsets, uint64_t count, size_t block)
{
    *v = (mpiio_view){.filetype = MPI_DATATYPE_NULL, .memtype = MPI_DATATYPE_NULL,
                      .shape = "empty"};
    if (count == 0)
        return 0;
    if (count > INT_MAX)
        return EINVAL;
    const int n = (int)count;
    MPI_Datatype bt;
    int e = block_type(block, &bt);
    if (e)
        return e;

    /* Equal steps between consecutive offsets: contiguous or a vector. */
    uint64_t step = n > 1 ? offsets[1] - offsets[0] : block;
    bool regular = n == 1 || offsets[1] > offsets[0];
    for (int i = 1; i < n && regular; i++)
        regular = offsets[i] > offsets[i - 1] && offsets[i] - offsets[i - 1] == step;
    if (regular && step >= block) {
        v->disp = (MPI_Offset)offsets[0];
        if (step == block) {
            v->shape = "contiguous";
            e = commit(&v->filetype, MPI_Type_contiguous(n, bt, &v->filetype));
        } else {
            v->shape = "vector";
            e = commit(&v->filetype,
                       MPI_Type_create_hvector(n, 1, (MPI_Aint)step, bt, &v->filetype));
        }
        if (!e)
            e = commit(&v->memtype, MPI_Type_contiguous(n, bt, &v->memtype));
    } else {
        e = build_indexed(v, offsets, n, block, bt);
    }
    MPI_Type_free(&bt);
    if (e)
        mpiio_view_free(v);
    return e;
}

void mpiio_view_free(mpiio_view *v)
{
    if (v->filetype != MPI_DATATYPE_NULL)
        MPI_Type_free(&v->filetype);
    if (v->memtype != MPI_DATATYPE_NULL)
        MPI_Type_free(&v->memtype);
}
