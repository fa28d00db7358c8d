/* The opening every pario.result/1 document shares: the schema, the tool,
 * the engine command and the system it ran on (rank 0's host: kernel, CPU).
 * The caller closes the object. */
#ifndef PARIO_RESULT_DOC_H
#define PARIO_RESULT_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "fsinfo.h"
#include "hosts.h"
#include "json.h"

void result_doc_begin(json *j, const char *command);

/* The command line as given (argv), when the run started and finished
 * (UTC), and status "ok". */
void result_doc_run(json *j, int argc, char **argv, const char *started_utc,
                    const char *finished_utc);

/* The "target" object: the directory measured (and the file, when not
 * NULL), its file system (type, magic, memory_backed), the node's memory
 * and the mount behind it (mount_point, mount_source, mount_type,
 * mount_options, device). */
void result_doc_target(json *j, const char *dir, const char *file, const fs_facts *fs,
                       uint64_t node_memory);

/* Where a command ran, for the provenance every document carries the same
 * way (io's and probe's fields): the MPI library and standard, each rank's
 * host, and --dir's file system.  Gathered from every rank of comm (call
 * it on all of them at a point all reach), written by rank 0. */
typedef struct result_where {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int version, subversion, nranks;
    host_info *hosts; /* rank 0 only */
    int *host_of;     /* rank 0 only */
} result_where;

void result_where_gather(result_where *w, MPI_Comm comm);

/* Rank 0: the "mpi" object, then (dir not NULL) the "target" of dir (and
 * file, when not NULL) as result_doc_target writes it; frees the gather. */
void result_doc_where(json *j, result_where *w, const char *dir, const char *file);

/* What the gather allocated, when no document is written after all. */
void result_where_free(result_where *w);

/* The closing every document shares: the "warnings" array (the n strings
 * of `warnings`, NULL ones left out), the end of the object, the document
 * saved to `path` and freed.  0, or the errno of the save. */
int result_doc_close(json *j, const char *const *warnings, int n, const char *path);

/* A kernel's closing: "verification" {performed, ok} (the kernel read back
 * what it wrote), then result_doc_close; a save that fails ends the run
 * in one line naming --json. */
void result_doc_close_verified(json *j, bool ok, const char *const *warnings, int n, const char *path);

#endif
