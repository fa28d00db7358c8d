#include "mpi_file.h"

#include "fail.h"
#include "library_lines.h"
#include "run_files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void mpi_file_unique_path(MPI_Comm comm, const char *dir, const char *name, const char *prefix,
                          const char *suffix, char *out, size_t len)
{
    long stamp[2] = {(long)getpid(), (long)time(NULL)};
    MPI_Bcast(stamp, 2, MPI_LONG, 0, comm);
    run_file_base(dir, name, prefix, stamp, suffix, out, len);
}

int mpi_file_create(MPI_Comm comm, const char *path, MPI_Info info, MPI_File *fh, owned_file *who,
                    mpi_why *w)
{
    /* Rank 0 creates the file itself (exclusively, never through a link)
     * and the ledger hears of it at once; the library only opens it.
     * Created inside MPI_File_open, it existed unnoted for as long as the
     * collective open took (tens of ms under load): a rank stopped then
     * (pario stopped mid-point) left a file pario may not remove. */
    int rank, e = 0;
    MPI_Comm_rank(comm, &rank);
    const bool had = w->text[0] != 0;
    if (rank == 0) {
        int fd = create_exclusive(path, 0, who);
        if (fd < 0)
            e = -fd;
        else
            close(fd);
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, comm);
    if (e) {
        if (rank == 0) {
            mpi_why_errno(w, e, "creating %s", path);
            if (!had && e == EEXIST) /* the name is someone else's file */
                run_file_taken(path, w->text, sizeof w->text);
        }
        return MPI_ERR_FILE;
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN); /* the default for new files */
    library_lines_hold(); /* until mpi_file_close */
    errno = 0;
    int rc = MPI_File_open(comm, path, MPI_MODE_RDWR, info, fh);
    if (!mpi_failed(rc, w, "opening %s", path)) {
        /* rank 0: still the file it created; the others: the descriptor MPI opened (safe_file.h) */
        e = rank == 0 ? owned_file_check(path, who) : owned_file_note_opened(path, who);
        if (e)
            mpi_why_set(w, "%s %s", path, owned_file_reason(e));
    } else {
        library_lines_release();
    }
    return rc;
}

bool mpi_file_create_agree(const mpi_why *w, bool created, MPI_Comm comm, const char *path,
                           owned_file *who)
{
    int made = created, any;
    MPI_Allreduce(&made, &any, 1, MPI_INT, MPI_MAX, comm);
    const int first = mpi_first_failure(w, comm);
    if (first >= 0 && !any) {
        int rank;
        MPI_Comm_rank(comm, &rank);
        /* Rank 0 may have created the file before MPI failed to open it
         * (the file system turned read-only in between, a library without
         * a driver for it): the file is this run's, so it goes, or the
         * line says it is left behind.  Only its creator knows it (who). */
        const int e = remove_if_ours(path, who);
        if (e && e != ENOENT)
            mpi_fail_left_behind(path, e);
        const char *left = mpi_fail_left_behind_agree(comm);
        /* a taken name's line carries its fix; anything else is the directory's */
        fail_exit(EXIT_USAGE, rank == first, "%s%s%s", w->text, w->err == EEXIST ? "" : ": check --dir", left);
    }
    return any;
}

/* Collective: whether every rank still finds its noted file under the
 * name; a rank that does not records why. */
static bool all_still_ours(MPI_Comm comm, const char *path, const owned_file *who, mpi_why *w)
{
    int e = owned_file_check(path, who), any;
    if (e)
        mpi_why_set(w, "%s %s", path, owned_file_reason(e));
    MPI_Allreduce(&e, &any, 1, MPI_INT, MPI_MAX, comm);
    return any == 0;
}

int mpi_file_reopen(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh,
                    const owned_file *who, mpi_why *w)
{
    if (!all_still_ours(comm, path, who, w)) /* all open, or none */
        return MPI_ERR_FILE;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    library_lines_hold(); /* until mpi_file_close */
    errno = 0;
    int rc = MPI_File_open(comm, path, amode, info, fh);
    if (mpi_failed(rc, w, "opening %s", path)) {
        library_lines_release();
        return rc;
    }
    /* MPI-IO opens by name, some time into the call: a name swapped while
     * it ran may have been followed.  Nothing is written yet, and opening
     * neither truncates nor changes a file, so close it untouched. */
    if (!all_still_ours(comm, path, who, w)) {
        MPI_File_close(fh);
        library_lines_release();
        return MPI_ERR_FILE;
    }
    return rc;
}

int mpi_file_close(MPI_File *fh, mpi_why *w, const char *path)
{
    errno = 0;
    int rc = MPI_File_close(fh);
    /* closed on every rank, whatever this one's answer: a failed close
     * (ompio, a disk full at the flush) may leave the handle set, and a
     * second, collective close on some ranks only would never return */
    *fh = MPI_FILE_NULL;
    mpi_failed(rc, w, "closing %s", path);
    /* ompio can print a failed write on a rank whose own calls returned
     * success (another rank's count fell short): this rank failed too */
    const int said = w->text[0] ? 0 : library_lines_after(0);
    if (said)
        mpi_why_errno(w, said, "writing %s", path);
    library_lines_release();
    return rc;
}
