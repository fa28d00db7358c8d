#include "out_path.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "safe_file.h"

void check_output_file(const char *opt, const char *path)
{
    if (!path || !path[0])
        fail_usage("%s needs a file name", opt);
    if (strcmp(path, "-") == 0) /* fio's and IOR's users read it as standard output */
        fail_usage("%s -: the result document goes to a file, not standard output (which carries "
                   "the tables): give a file name, e.g. %s result.json", opt, opt);
    if (strlen(path) >= PATH_MAX - 32)
        fail_usage("%s: the path is longer than this system allows (%d bytes)", opt, PATH_MAX);
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    const char *parent = dirname(copy);
    struct stat st;
    const int e = stat(parent, &st) != 0 ? errno : 0;
    if (e && e != ENOENT && e != ENOTDIR) /* there, but out of reach: a mount to check */
        fail_usage("%s %s: directory %s: %s: %s", opt, path, parent, strerror(e), fail_dir_fix(e));
    if (e || !S_ISDIR(st.st_mode))
        fail_usage("%s %s: directory %s does not exist: create it or choose another path", opt,
                   path, parent);
    if (access(parent, W_OK | X_OK) != 0)
        fail_usage("%s %s: directory %s is not writable: choose another path", opt, path, parent);
    /* access() says yes to root where every write fails (/proc, a read-only
     * mount): create and remove a file of our own to be sure. */
    char probe[PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/.pario-probe.%ld", parent, (long)getpid());
    owned_file who = {0};
    int fd = create_exclusive(probe, O_WRONLY, &who);
    if (fd < 0)
        fail_usage("%s %s: cannot create a file in %s (%s): choose another path", opt, path,
                   parent, strerror(-fd));
    close(fd);
    remove_if_ours(probe, &who);
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            fail_usage("%s %s is a directory: give a file name", opt, path);
        if (!S_ISREG(st.st_mode))
            fail_usage("%s %s is a symlink or special file: pario writes only regular files; "
                       "choose another path",
                       opt, path);
        /* json_save links its file into place and never replaces one: say
         * so now, before the work, not after it. */
        fail_usage("%s %s already exists: pario never overwrites a file it did not create; "
                   "remove it or choose another path",
                   opt, path);
    }
}
