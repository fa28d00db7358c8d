/* The opening every pario.result/1 document shares: the schema, the tool,
 * the engine command and the system it ran on (rank 0's host: kernel, CPU).
 * The caller closes the object. */
#ifndef PARIO_RESULT_DOC_H
#define PARIO_RESULT_DOC_H

#include "json.h"

void result_doc_begin(json *j, const char *command);

/* Keys describing the mount behind dir (mount_point, mount_source,
 * mount_type, mount_options, device), written into the open object. */
void result_doc_mount(json *j, const char *dir);

#endif
