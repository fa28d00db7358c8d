/* Holding a library's messages while it works for pario.
 *
 * Open MPI's ompio prints one line per failed write on a full disk (about
 * 1500 for one BT run) and still returns MPI_SUCCESS.  While an MPI-IO file
 * is open, this rank's stderr goes to an unnamed in-memory file instead:
 * anything the library writes there is taken as its report of a failure,
 * turned into pario's one line, and otherwise passed on unchanged when the
 * file is closed. */
#ifndef PARIO_STDERR_CAPTURE_H
#define PARIO_STDERR_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct stderr_capture {
    int saved; /* the real stderr, -1 when not capturing */
    int held;  /* the temporary file now on descriptor 2 */
} stderr_capture;

/* Start holding stderr. 0, or an errno value (then nothing changed). */
int stderr_capture_begin(stderr_capture *c);

/* true when anything was written since begin; its first line goes to line. */
bool stderr_capture_said(stderr_capture *c, char *line, size_t len);

/* Like stderr_capture_said, for what was written after byte *from (which
 * moves to the end): up to len-1 bytes of it, all its lines. */
bool stderr_capture_said_since(stderr_capture *c, long long *from, char *text, size_t len);

/* Give descriptor 2 back; replay what was held when asked to. */
void stderr_capture_end(stderr_capture *c, bool replay);

/* The errno whose strerror() text a library's line carries (ompio says
 * "error in (p)write(v):No space left on device" and returns a generic
 * failure), so pario's one line names the real cause; else fallback. */
int stderr_capture_errno(const char *line, int fallback);

#endif
