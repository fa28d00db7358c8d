#include "result_doc.h"

#include "../version.h"

void result_doc_begin(json *j, const char *command)
{
    json_object_begin(j, NULL);
    json_string(j, "schema", "pario.result/1");
    json_object_begin(j, "tool");
    json_string(j, "name", "pario-engine");
    json_string(j, "version", PARIO_VERSION);
    json_object_end(j);
    json_string(j, "command", command);
}
