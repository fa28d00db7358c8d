/* The opening every pario.result/1 document shares: the schema, the tool,
 * the engine command and the system it ran on (rank 0's host: kernel, CPU).
 * The caller closes the object. */
#ifndef PARIO_RESULT_DOC_H
#define PARIO_RESULT_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include "fsinfo.h"
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

/* The closing every document shares: the "warnings" array (the n strings
 * of `warnings`, NULL ones left out), the end of the object, the document
 * saved to `path` and freed.  0, or the errno of the save. */
int result_doc_close(json *j, const char *const *warnings, int n, const char *path);

/* A kernel's closing: "verification" {performed, ok} (the kernel read back
 * what it wrote), then result_doc_close; a save that fails ends the run
 * in one line naming --json. */
void result_doc_close_verified(json *j, bool ok, const char *const *warnings, int n, const char *path);

#endif
