/* A small JSON writer into a growing memory buffer.
 *
 * The document is built whole in memory and written to disk in one go
 * (json_save writes a temporary file and links it into place), so a result file is
 * either absent or complete, valid JSON: never half a document.  Keys are
 * given with each value; pass NULL inside arrays. */
#ifndef PARIO_JSON_H
#define PARIO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 32

typedef struct json {
    char *buf;
    size_t len, cap;
    int depth;
    bool has_items[JSON_MAX_DEPTH];
    bool pretty;
} json;

void json_init(json *j, bool pretty);
void json_free(json *j);

void json_object_begin(json *j, const char *key);
void json_object_end(json *j);
void json_array_begin(json *j, const char *key);
void json_array_end(json *j);

void json_string(json *j, const char *key, const char *value); /* NULL -> null */
void json_double(json *j, const char *key, double value);      /* NaN/Inf -> null */
void json_int(json *j, const char *key, int64_t value);
void json_uint(json *j, const char *key, uint64_t value);
void json_bool(json *j, const char *key, bool value);
void json_null(json *j, const char *key);

/* The finished text (NUL-terminated). */
const char *json_text(const json *j);

/* Write atomically to path, which must not exist (EEXIST: never replaced);
 * returns 0 or an errno value. */
int json_save(const json *j, const char *path);

#endif
