#include "library_lines.h"

#include <stdbool.h>

#include "stderr_capture.h"

static stderr_capture library;
static int library_files;   /* open files holding stderr */
static bool library_failed; /* a call failed: pario's line says it */

void library_lines_hold(void)
{
    if (library_files++ == 0) {
        library_failed = false;
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

int library_lines_named(void)
{
    char line[400];
    if (!stderr_capture_said(&library, line, sizeof line))
        return 0;
    int e = stderr_capture_errno(line, 0);
    library_failed = library_failed || e != 0;
    return e;
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
