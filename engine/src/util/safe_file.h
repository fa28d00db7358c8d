/* Files pario creates, and the only files it may remove.
 *
 * pario often runs as root beside people's data, so a name in --dir is
 * never trusted between two system calls: a file is created exclusively
 * and without following a symlink, its identity (device, inode) is noted
 * right away, and a later removal goes ahead only while the name still
 * names that very file.  A symlink planted at the name is never followed
 * and never counted as ours. */
#ifndef PARIO_SAFE_FILE_H
#define PARIO_SAFE_FILE_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct owned_file {
    dev_t dev;
    ino_t ino;
    bool known; /* false: nothing created yet, nothing to remove */
} owned_file;

/* open(path, O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC|extra_flags, 0644) and note
 * the new file's identity in who.  Returns the descriptor, or -errno. */
int create_exclusive(const char *path, int extra_flags, owned_file *who);

/* Note the identity of the file a descriptor holds. 0 or an errno value. */
int owned_file_note_fd(int fd, owned_file *who);

/* The same for a file this process just created at path through fd: noted
 * from the descriptor (never from the name) and entered in the ledger. */
int owned_file_note_created(int fd, const char *path, owned_file *who);

/* For a file an MPI or HDF5 library just created at path: note the file
 * the library holds open, found among this process's descriptors
 * (/proc/self/fd: the one whose target is path, or path "(deleted)" when
 * the name was taken over since), so the name is never trusted even while
 * the library's create runs.  Without such a descriptor (a library that
 * defers its open), the name at once (owned_file_note_path).  Entered in
 * the ledger.  0 or an errno value. */
int owned_file_note_opened(const char *path, owned_file *who);

/* Note the identity of the regular file path names now (lstat: a symlink
 * is refused with ELOOP, anything but a regular file with EINVAL). */
int owned_file_note_path(const char *path, owned_file *who);

/* 0 when path (not following a symlink) is the file noted in who; ESTALE
 * when the name now names something else, ENOENT when it is gone, EXDEV
 * when it is gone because its directory is now on another device (the
 * file system it was made on was unmounted: the file is still on it). */
int owned_file_check(const char *path, const owned_file *who);

/* Unlink path only if it still names the file noted in who.  Returns 0
 * (removed, or nothing known to remove), ENOENT (already gone), ESTALE
 * (the name was replaced: left alone) or unlink's errno.  who is forgotten
 * once the file is removed or gone. */
int remove_if_ours(const char *path, owned_file *who);

/* What a failed check (ESTALE, ELOOP from the calls above) means, in the
 * words of every command's one line: "NAME was replaced during the run by
 * a symlink pario did not create: left alone; keep other writers out of
 * --dir"; ENOENT: removed by someone else; EXDEV: left on a file system
 * unmounted during the run.  Other errors (a mount that stopped
 * answering): "cannot be looked at (strerror): check the file system". */
const char *owned_file_reason(int e);

/* open(path, O_WRONLY|O_NOFOLLOW|O_CLOEXEC) of an existing file that must be
 * the one noted in who (checked through the descriptor). -errno on failure;
 * ESTALE when the name was swapped for another file. */
int open_ours(const char *path, int flags, const owned_file *who);

/* The ledger: when the environment names one (PARIO_OWNED_LEDGER, a file
 * the front end created), every file noted as created and every file
 * removed is appended to it as one line, "made DEV INO PATH" or
 * "gone DEV INO PATH" (one write each, O_APPEND: ranks do not interleave).
 * So whoever cleans up after a point (the front end, its watchdog after a
 * kill -9) removes a name only while it still holds a file the engine
 * made and did not remove itself: never a file put there in its place. */
#define OWNED_LEDGER_ENV "PARIO_OWNED_LEDGER"

/* On SIGINT or SIGTERM, remove every file this process created and has
 * not removed (each only while its name still holds that file), say so in
 * one line on stderr and exit with 128 + the signal: a run stopped by
 * Ctrl-C, mpirun or a timeout leaves none of its files behind. */
void owned_files_remove_on_signal(void);

/* What this process made outside any file system, with its verb (an
 * object store's "the objects under s3://B/P at E are"): a signal handler
 * cannot remove them, so it says, in one line, that they are left behind.
 * Cleared once they are removed. */
void owned_elsewhere_note(const char *what_are);
void owned_elsewhere_clear(void);

#endif
