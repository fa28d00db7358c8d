#include "json.h"

#include <fcntl.h>
#include <unistd.h>

#include "safe_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void json_init(json *j, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->pretty = pretty;
    j->cap = 4096;
    j->buf = malloc(j->cap);
    if (!j->buf)
        abort();
    j->buf[0] = '\0';
}

void json_free(json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

static void put(json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        while (j->len + n + 1 > j->cap)
            j->cap *= 2;
        j->buf = realloc(j->buf, j->cap);
        if (!j->buf)
            abort();
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(json *j, const char *s) { put(j, s, strlen(s)); }

static void indent(json *j)
{
    if (!j->pretty)
        return;
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++)
        put(j, "  ", 2);
}

static void escaped(json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(tmp, sizeof tmp, "\\u%04x", *p);
                puts_(j, tmp);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    put(j, "\"", 1);
}

/* Comma, newline and key before every value. */
static void begin_value(json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->has_items[j->depth])
            put(j, ",", 1);
        j->has_items[j->depth] = true;
        indent(j);
    }
    if (key) {
        escaped(j, key);
        put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
    }
}

static void open_container(json *j, const char *key, char c)
{
    begin_value(j, key);
    put(j, &c, 1);
    if (j->depth + 1 >= JSON_MAX_DEPTH)
        abort();
    j->depth++;
    j->has_items[j->depth] = false;
}

static void close_container(json *j, char c)
{
    bool had = j->has_items[j->depth];
    j->depth--;
    if (had)
        indent(j);
    put(j, &c, 1);
}

void json_object_begin(json *j, const char *key) { open_container(j, key, '{'); }
void json_object_end(json *j) { close_container(j, '}'); }
void json_array_begin(json *j, const char *key) { open_container(j, key, '['); }
void json_array_end(json *j) { close_container(j, ']'); }

void json_string(json *j, const char *key, const char *value)
{
    begin_value(j, key);
    if (value)
        escaped(j, value);
    else
        puts_(j, "null");
}

void json_double(json *j, const char *key, double value)
{
    char tmp[40];
    begin_value(j, key);
    if (!isfinite(value)) {
        puts_(j, "null");
        return;
    }
    snprintf(tmp, sizeof tmp, "%.17g", value);
    /* keep it a JSON number even for integral values */
    puts_(j, tmp);
}

void json_int(json *j, const char *key, int64_t value)
{
    char tmp[32];
    begin_value(j, key);
    snprintf(tmp, sizeof tmp, "%lld", (long long)value);
    puts_(j, tmp);
}

void json_uint(json *j, const char *key, uint64_t value)
{
    char tmp[32];
    begin_value(j, key);
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)value);
    puts_(j, tmp);
}

void json_bool(json *j, const char *key, bool value)
{
    begin_value(j, key);
    puts_(j, value ? "true" : "false");
}

void json_null(json *j, const char *key)
{
    begin_value(j, key);
    puts_(j, "null");
}

const char *json_text(const json *j) { return j->buf; }

int json_save(const json *j, const char *path)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return ENOMEM;
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    /* the temporary name is created exclusively, never through a symlink */
    owned_file who = {0};
    int fd = create_exclusive(tmp, O_WRONLY, &who);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = fd < 0 ? -fd : errno;
        if (fd >= 0) {
            close(fd);
            remove_if_ours(tmp, &who);
        }
        free(tmp);
        return e;
    }
    size_t w = fwrite(j->buf, 1, j->len, f);
    int e = (w == j->len && fputc('\n', f) != EOF) ? 0 : errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    /* link(2), not rename(2): a name that appeared since check_output_file
     * (a file pario did not create) is refused, never replaced. */
    if (!e && link(tmp, path) != 0)
        e = errno;
    remove_if_ours(tmp, &who);
    free(tmp);
    return e;
}
