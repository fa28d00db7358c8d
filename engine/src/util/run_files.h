/* The names of the files a kernel creates.  Every kernel takes --name
 * (OPTION_NAME_ROW): its files are then DIR/NAME and DIR/NAME followed by
 * '.' or '_' and a suffix of its own (NAME.t2.0003, NAME_hdf5_chk_0000),
 * never anything else.  `pario run` gives each point a name no other run
 * shares, so when it has to kill a point (Ctrl-C, kill -9 of pario and its
 * watchdog) it knows, and removes, exactly that point's files.  Without
 * --name the base is PREFIX.<pid>.<time>, unique enough by hand. */
#ifndef PARIO_RUN_FILES_H
#define PARIO_RUN_FILES_H

#include <stddef.h>

/* Room for --name's value (a plain file name of at most 200 characters). */
enum { RUN_NAME_MAX = 201 };

/* DIR/NAME when name is non-empty, else DIR/PREFIX.<pid>.<time> from
 * stamp; then suffix (NULL: none). */
void run_file_base(const char *dir, const char *name, const char *prefix, const long stamp[2],
                   const char *suffix, char *out, size_t len);

/* The one wording, in every kernel, of a name that is taken when the run
 * creates its file (exclusively: EEXIST): "PATH already exists: pario
 * never overwrites or removes a file it did not create; remove it or
 * choose another --name". */
void run_file_taken(const char *path, char *out, size_t len);

#endif
