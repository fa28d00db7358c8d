/* The full-disk rule every writing command shares: a short write named from
 * the free space, the library's held line naming its cause, and the fix. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util/disk_full.h"
#include "util/library_lines.h"

int main(void)
{
    /* more than any file system holds: the rest cannot fit */
    CHECK(disk_short_write_errno("/", UINT64_MAX) == ENOSPC);
    /* nothing left to write fits anywhere: not a full disk */
    CHECK(disk_short_write_errno("/", 0) == EIO);
    CHECK(disk_short_write_errno("/nonexistent/pario", UINT64_MAX) == EIO); /* no file system to ask */

    char fix[128];
    disk_full_fix(ENOSPC, "/d", "--size", fix, sizeof fix);
    CHECK(strcmp(fix, ": free space on /d or lower --size") == 0);
    disk_full_fix(EDQUOT, "/d", "--grid", fix, sizeof fix);
    CHECK(strcmp(fix, ": free space on /d or lower --grid") == 0);
    disk_full_fix(EIO, "/d", "--size", fix, sizeof fix);
    CHECK(fix[0] == '\0');

    /* ompio's own line while a file is open: held, and it names the cause */
    library_lines_hold();
    fprintf(stderr, "mca_fbtl_posix_pwritev: error in (p)write(v):No space left on device\n");
    fflush(stderr);
    CHECK(library_lines_reason(0) == 0);
    CHECK(library_lines_reason(EIO) == ENOSPC);
    CHECK(library_lines_after(0) == ENOSPC);
    library_lines_release(); /* explained by pario's line: dropped, not replayed */

    /* a held line naming no system error is no failure of its own */
    library_lines_hold();
    fprintf(stderr, "some library: a note\n");
    fflush(stderr);
    CHECK(library_lines_after(0) == 0);
    CHECK(library_lines_reason(EIO) == EIO);
    library_lines_release();
    CHECK_DONE();
}
