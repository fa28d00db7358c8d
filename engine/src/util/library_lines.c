#include "library_lines.h"

#include <stdbool.h>

#include "stderr_capture.h"

static stderr_capture library;
static int library_files;   /* open files holding stderr */
static bool library_failed; /* a call failed: pario's line says it */
static long long library_seen; /* held bytes already looked at by library_lines_after */

void library_lines_hold(void)
{
    if (library_files++ == 0) {
        library_failed = false;
        library_seen = 0;
        stderr_capture_begin(&library); /* on failure it holds nothing: lines pass */
    }
}

int library_lines_reason(int e)
{
    if (!e)
        return 0;
    library_failed = true;
    char line[400];
    return stderr_capture_said(&library, line, sizeof line) ? stderr_capture_errno(line, e) : e;
}

void library_lines_release(void)
{
    if (library_files > 0 && --library_files == 0)
        stderr_capture_end(&library, !library_failed);
}

void library_lines_give_back(void)
{
    if (library_files > 0) {
        library_files = 0;
        stderr_capture_end(&library, !library_failed);
    }
}

void library_lines_release_failed(void)
{
    library_failed = true;
    library_lines_release();
}

int library_lines_after(int e)
{
    if (e)
        return library_lines_reason(e);
    char text[1024];
    if (!stderr_capture_said_since(&library, &library_seen, text, sizeof text))
        return 0;
    int named = stderr_capture_errno(text, 0);
    if (named)
        library_failed = true;
    return named;
}
