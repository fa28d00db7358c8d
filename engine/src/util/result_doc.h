/* The opening every pario.result/1 document shares: the schema, the tool
 * and the engine command.  The caller closes the object. */
#ifndef PARIO_RESULT_DOC_H
#define PARIO_RESULT_DOC_H

#include "json.h"

void result_doc_begin(json *j, const char *command);

#endif
