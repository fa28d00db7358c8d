/* Files a user names for pario to read and check (verify's --file,
 * verify-laplace's checkpoint): only a regular file is read.
 *
 * The check must come before anything can block: open() of a FIFO waits
 * for a writer that may never come, so the file is opened with O_NONBLOCK
 * (which returns at once for a FIFO and changes nothing for a regular
 * file) and what was opened is examined through the descriptor, never by
 * the name again. */
#ifndef PARIO_INPUT_FILE_H
#define PARIO_INPUT_FILE_H

#include <sys/stat.h>

/* Open path read-only as a regular file, st filled from the descriptor.
 * Returns the descriptor (blocking again, close-on-exec), or -errno:
 * -EISDIR for a directory, -EINVAL for anything else that is not a regular
 * file (a FIFO, a device, a socket), nothing left open. */
int input_file_open(const char *path, struct stat *st);

/* What input_file_open's failure e (a positive errno) says of the path,
 * to follow it in a message ("%s %s"): "is a directory", "is not a regular
 * file (a FIFO, a device or a socket)", else "cannot be opened: <strerror>". */
const char *input_file_reason(int e);

#endif
