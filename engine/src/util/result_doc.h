/* The opening every pario.result/1 document shares: the schema, the tool,
 * the engine command and the system it ran on (rank 0's host: kernel, CPU).
 * The caller closes the object. */
#ifndef PARIO_RESULT_DOC_H
#define PARIO_RESULT_DOC_H

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

#endif
