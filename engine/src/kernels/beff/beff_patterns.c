/* The five b_eff_io pattern types.  Call i of rank r with chunk size l:
 *   0 scatter    shared file, strided: (i·P + r)·l, through a file view and
 *                the individual file pointer, collective
 *   1 shared     shared file, strided the same way, through the shared file
 *                pointer in rank order (MPI_File_write_ordered), collective
 *   2 separate   one file per process, contiguous, non-collective
 *   3 segmented  shared file, rank r's own segment: (r·n + i)·l,
 *                non-collective (explicit offsets)
 *   4 seg-coll   the same segments, collective
 * where n is the segment's capacity in calls. */
#include "beff.h"

/* All l bytes moved: ompio reports a write the disk could not take as
 * success with a short count, named from the free space (mpi_fail.h). */
static int count_ok(MPI_Status *st, const beff_file *f, bool write, mpi_why *w, const char *what)
{
    int got = -1;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (got == (int)f->l)
        return 0;
    if (write)
        mpi_why_short_write(w, f->l - (uint64_t)(got > 0 ? got : 0), "%s wrote %d of %llu bytes", what, got,
                            (unsigned long long)f->l);
    else
        mpi_why_set(w, "%s read %d of %llu bytes: the file is shorter than its write left it", what, got,
                    (unsigned long long)f->l);
    return 1;
}

/* --- 0 scatter ----------------------------------------------------------- */
static int scatter_region(beff_file *f, mpi_why *w)
{
    MPI_Datatype chunk, strided;
    MPI_Type_contiguous((int)f->l, MPI_BYTE, &chunk);
    MPI_Type_create_resized(chunk, 0, (MPI_Aint)(f->l * (uint64_t)f->nranks), &strided);
    MPI_Type_commit(&strided);
    int rc = MPI_File_set_view(f->fh, (MPI_Offset)(f->base + (uint64_t)f->rank * f->l), MPI_BYTE, strided,
                               "native", MPI_INFO_NULL);
    MPI_Type_free(&chunk);
    MPI_Type_free(&strided);
    return mpi_failed(rc, w, "setting the strided view");
}

static int scatter_call(beff_file *f, bool write, void *buf, long i, mpi_why *w)
{
    MPI_Status st;
    int rc = write ? MPI_File_write_all(f->fh, buf, (int)f->l, MPI_BYTE, &st)
                   : MPI_File_read_all(f->fh, buf, (int)f->l, MPI_BYTE, &st);
    if (mpi_failed(rc, w, write ? "MPI_File_write_all (scatter)" : "MPI_File_read_all (scatter)"))
        return 1;
    return count_ok(&st, f, write, w, "scatter");
}

/* --- 1 shared ------------------------------------------------------------ */
static int shared_region(beff_file *f, mpi_why *w)
{
    if (mpi_failed(MPI_File_set_view(f->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), w,
                   "setting the byte view"))
        return 1;
    return mpi_failed(MPI_File_seek_shared(f->fh, (MPI_Offset)f->base, MPI_SEEK_SET), w,
                      "MPI_File_seek_shared");
}

static int shared_call(beff_file *f, bool write, void *buf, long i, mpi_why *w)
{
    MPI_Status st;
    int rc = write ? MPI_File_write_ordered(f->fh, buf, (int)f->l, MPI_BYTE, &st)
                   : MPI_File_read_ordered(f->fh, buf, (int)f->l, MPI_BYTE, &st);
    if (mpi_failed(rc, w, write ? "MPI_File_write_ordered (shared)" : "MPI_File_read_ordered (shared)"))
        return 1;
    return count_ok(&st, f, write, w, "shared");
}

/* --- 2 separate, 3 segmented, 4 seg-coll: explicit offsets --------------- */
static int plain_region(beff_file *f, mpi_why *w)
{
    return mpi_failed(MPI_File_set_view(f->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), w,
                      "setting the byte view");
}

static int separate_call(beff_file *f, bool write, void *buf, long i, mpi_why *w)
{
    MPI_Status st;
    const MPI_Offset at = (MPI_Offset)(f->base + (uint64_t)i * f->l);
    int rc = write ? MPI_File_write_at(f->fh, at, buf, (int)f->l, MPI_BYTE, &st)
                   : MPI_File_read_at(f->fh, at, buf, (int)f->l, MPI_BYTE, &st);
    if (mpi_failed(rc, w, write ? "MPI_File_write_at (separate)" : "MPI_File_read_at (separate)"))
        return 1;
    return count_ok(&st, f, write, w, "separate");
}

static MPI_Offset segment_at(const beff_file *f, long i)
{
    return (MPI_Offset)(f->base + ((uint64_t)f->rank * (uint64_t)f->capacity + (uint64_t)i) * f->l);
}

static int segmented_call(beff_file *f, bool write, void *buf, long i, mpi_why *w)
{
    MPI_Status st;
    int rc = write ? MPI_File_write_at(f->fh, segment_at(f, i), buf, (int)f->l, MPI_BYTE, &st)
                   : MPI_File_read_at(f->fh, segment_at(f, i), buf, (int)f->l, MPI_BYTE, &st);
    if (mpi_failed(rc, w, write ? "MPI_File_write_at (segmented)" : "MPI_File_read_at (segmented)"))
        return 1;
    return count_ok(&st, f, write, w, "segmented");
}

static int segcoll_call(beff_file *f, bool write, void *buf, long i, mpi_why *w)
{
    MPI_Status st;
    int rc = write ? MPI_File_write_at_all(f->fh, segment_at(f, i), buf, (int)f->l, MPI_BYTE, &st)
                   : MPI_File_read_at_all(f->fh, segment_at(f, i), buf, (int)f->l, MPI_BYTE, &st);
    if (mpi_failed(rc, w, write ? "MPI_File_write_at_all (seg-coll)" : "MPI_File_read_at_all (seg-coll)"))
        return 1;
    return count_ok(&st, f, write, w, "seg-coll");
}

const beff_pattern beff_patterns[BEFF_NPATTERNS] = {
    {0, "scatter", false, false, scatter_region, scatter_call},
    {1, "shared", false, false, shared_region, shared_call},
    {2, "separate", true, false, plain_region, separate_call},
    {3, "segmented", false, true, plain_region, segmented_call},
    {4, "seg-coll", false, true, plain_region, segcoll_call},
};

uint64_t beff_region_bytes(const beff_pattern *p, const beff_file *f, long n)
{
    if (p->per_rank_file)
        return (uint64_t)n * f->l;
    if (p->segmented)
        return (uint64_t)f->nranks * (uint64_t)f->capacity * f->l;
    return (uint64_t)f->nranks * (uint64_t)n * f->l;
}
