/* Output files named on the command line (--json and the like) are checked
 * before any work, so a run never computes for minutes and then finds it
 * cannot say what it measured. */
#ifndef PARIO_OUT_PATH_H
#define PARIO_OUT_PATH_H

/* Exits with one usage line when path cannot be written as a new file: its
 * directory missing or not writable, or path already there (a file, which
 * pario never overwrites, a directory, a symlink or a special file). opt
 * names the option. */
void check_output_file(const char *opt, const char *path);

#endif
