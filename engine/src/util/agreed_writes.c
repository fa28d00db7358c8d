#include "agreed_writes.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "library_lines.h"

/* The registered files: a few at a time (one per open HDF5 file). */
typedef struct agreed_file {
    MPI_File fh;
    MPI_Comm comm; /* this module's own duplicate: its agreements never meet pario's */
    bool failed;   /* a collective write failed on some rank: agreed, so the same on all */
} agreed_file;

static agreed_file *files;
static int nfiles, capacity;

static int find(MPI_File fh)
{
    for (int i = 0; i < nfiles; i++)
        if (files[i].fh == fh)
            return i;
    return -1;
}

static bool room_for_one(void)
{
    if (nfiles < capacity)
        return true;
    int more = capacity ? 2 * capacity : 4;
    agreed_file *grown = realloc(files, sizeof *files * (size_t)more);
    if (!grown)
        return false;
    files = grown;
    capacity = more;
    return true;
}

int agreed_writes_register(MPI_File fh, MPI_Comm comm)
{
    /* all register or none: a rank without the entry would skip the agreement */
    int ok = room_for_one(), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all)
        return ENOMEM;
    MPI_Comm own;
    if (MPI_Comm_dup(comm, &own) != MPI_SUCCESS)
        return EIO;
    files[nfiles++] = (agreed_file){fh, own, false};
    return 0;
}

static void remove_at(int i)
{
    files[i] = files[--nfiles];
}

void agreed_writes_forget(MPI_File fh)
{
    int i = find(fh);
    if (i < 0)
        return;
    MPI_Comm_free(&files[i].comm);
    remove_at(i);
}

void agreed_writes_drop(MPI_File fh)
{
    int i = find(fh);
    if (i >= 0)
        remove_at(i);
}

/* A write failed, moved fewer items than asked, or the library printed
 * that it failed (ompio's aggregator can return success on a full disk,
 * with what fit or with its line alone: library_lines.h). */
static int write_fell_short(int rc, const MPI_Status *st, int count, MPI_Datatype type)
{
    if (rc != MPI_SUCCESS)
        return 1;
    int done = 0;
    if (MPI_Get_count(st, type, &done) != MPI_SUCCESS || done != count)
        return 1;
    return library_lines_after(0) != 0;
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_File_write_at_all(fh, offset, buf, count, datatype, st);
    int i = find(fh);
    if (i < 0)
        return rc;
    int mine = write_fell_short(rc, st, count, datatype), any = mine;
    PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, files[i].comm);
    if (any && rc == MPI_SUCCESS)
        rc = MPI_ERR_IO; /* another rank's write (or this one's) fell short */
    files[i].failed |= any != 0;
    return rc;
}

/* After a failed collective write the file is lost (the run removes it),
 * and ompio's own later collectives on it no longer agree: a rank whose
 * failed write left a request pending returns from MPI_File_sync at once
 * (MPI_ERR_OTHER) while the others wait in the sync's barrier for it.  So
 * on a failed file these calls fail at once on every rank, without
 * entering the library; otherwise they run and their outcome is agreed. */
static int collective_after_writes(MPI_File fh, int (*call)(MPI_File, MPI_Offset), MPI_Offset arg)
{
    int i = find(fh);
    if (i < 0)
        return call(fh, arg);
    if (files[i].failed)
        return MPI_ERR_IO;
    int rc = call(fh, arg);
    int mine = rc != MPI_SUCCESS, any = mine;
    PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, files[i].comm);
    files[i].failed |= any != 0;
    return any && rc == MPI_SUCCESS ? MPI_ERR_IO : rc;
}

static int sync_file(MPI_File fh, MPI_Offset unused)
{
    (void)unused;
    return PMPI_File_sync(fh);
}

int MPI_File_sync(MPI_File fh)
{
    return collective_after_writes(fh, sync_file, 0);
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return collective_after_writes(fh, PMPI_File_set_size, size);
}

bool agreed_writes_active(void)
{
    /* Resolve the name as a run-time-loaded library would; it must be ours. */
    return dlsym(RTLD_DEFAULT, "MPI_File_write_at_all") == (void *)MPI_File_write_at_all &&
           dlsym(RTLD_DEFAULT, "MPI_File_sync") == (void *)MPI_File_sync &&
           dlsym(RTLD_DEFAULT, "MPI_File_set_size") == (void *)MPI_File_set_size;
}
