/* s3: every block is one object of an S3 bucket (libs3), the way IOR's and
 * elbencho's object modes measure an object store: a write is one PUT of
 * a block, a read one GET.  The file the loop names (DIR/NAME) becomes the
 * key prefix "DIR/NAME/" (without the leading slash) and block k's key ends
 * in its file offset as 16 hex digits, so any layout, any rank count and
 * the verifier see the same bytes at the same offsets as in a file.
 *
 * There is no file and no page cache on this node: the table's exists and
 * remove do what lstat and unlink do for files (listing and deleting the
 * prefix's objects), and BACKEND_CAP_OBJECTS tells the loop not to evict
 * or measure residency.  A PUT is durable when it returns, so sync is empty.
 *
 * Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, never
 * from the command line (which the result document records).  Debian's
 * libs3 2.0 signs requests with AWS signature version 2, which object
 * stores that insist on version 4 refuse. */
#include "backend.h"

#include <errno.h>
#include <libs3.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fail.h"
#include "../util/json.h"

typedef struct s3_config {
    char endpoint[256]; /* host[:port] */
    char bucket[256];
    bool https;
    uint64_t retries; /* learnt while running: requests sent again (this rank) */
} s3_config;

enum { OPT_ENDPOINT, OPT_BUCKET, OPT_HTTPS };

static const backend_option s3_options[] = {
    {"s3-endpoint", "HOST[:PORT]", "the object store's address (required with --api s3)", OPT_ENDPOINT},
    {"s3-bucket", "NAME", "an existing bucket to write the objects into (required)", OPT_BUCKET},
    {"s3-https", NULL, "talk HTTPS (default: plain HTTP)", OPT_HTTPS},
};

static void copy_option(char *dst, size_t size, const char *opt, const char *arg)
{
    if (!arg[0] || strlen(arg) >= size)
        fail_usage("--%s '%s' must be 1 to %zu characters", opt, arg, size - 1);
    strcpy(dst, arg);
}

static void s3_config_set(void *cfg, int id, const char *opt, const char *arg)
{
    s3_config *c = cfg;
    if (id == OPT_ENDPOINT)
        copy_option(c->endpoint, sizeof c->endpoint, opt, arg);
    else if (id == OPT_BUCKET)
        copy_option(c->bucket, sizeof c->bucket, opt, arg);
    else if (id == OPT_HTTPS)
        c->https = true;
}

/* HOST[:PORT], as libs3 takes it: a URL's scheme or path, or a port that
 * is none, would reach the store as a host name that never answers. */
static void check_endpoint(const char *e)
{
    const char *scheme = strstr(e, "://");
    if (scheme)
        fail_usage("--s3-endpoint '%s' takes HOST[:PORT], without a scheme: give --s3-endpoint %s%s", e,
                   scheme + 3, strncmp(e, "https", 5) == 0 ? " --s3-https" : "");
    if (strchr(e, '/'))
        fail_usage("--s3-endpoint '%s' takes HOST[:PORT], without a path: give the store's address alone", e);
    if (strpbrk(e, " \t@"))
        fail_usage("--s3-endpoint '%s' takes HOST[:PORT], without spaces or a user@: give the store's "
                   "address alone (credentials come from AWS_ACCESS_KEY_ID)", e);
    const char *colon = strrchr(e, ':');
    if (colon && strchr(e, ':') != colon)
        fail_usage("--s3-endpoint '%s': an IPv6 address is not an address libs3 takes: give a host name "
                   "or an IPv4 address", e);
    if (e[0] == ':')
        fail_usage("--s3-endpoint '%s' has no host: give HOST:PORT, e.g. 127.0.0.1%s", e, e);
    if (colon) {
        char *end;
        errno = 0;
        long port = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || errno || port < 1 || port > 65535)
            fail_usage("--s3-endpoint '%s': '%s' is not a port: give HOST:PORT with a port from 1 to 65535",
                       e, colon + 1);
    }
}

static void s3_config_check(const void *cfg, const backend_run_facts *run)
{
    const s3_config *c = cfg;
    if (!c->endpoint[0] || !c->bucket[0])
        fail_usage("--api s3 needs --s3-endpoint HOST[:PORT] and --s3-bucket NAME: give both");
    check_endpoint(c->endpoint);
    if (S3_validate_bucket_name(c->bucket, S3UriStylePath) != S3StatusOK)
        fail_usage("--s3-bucket '%s' is not a valid bucket name: use 3 to 255 letters, digits, "
                   "'.', '-' or '_'", c->bucket);
    if (!getenv("AWS_ACCESS_KEY_ID") || !getenv("AWS_SECRET_ACCESS_KEY"))
        fail_usage("--api s3 takes its credentials from AWS_ACCESS_KEY_ID and "
                   "AWS_SECRET_ACCESS_KEY: set both in the environment");
}

static void s3_describe(const void *cfg, struct json *j)
{
    const s3_config *c = cfg;
    json_string(j, "endpoint", c->endpoint);
    json_string(j, "bucket", c->bucket);
    json_string(j, "protocol", c->https ? "https" : "http");
    json_string(j, "objects", "one per block, key PREFIX/<offset as 16 hex digits>");
    json_uint(j, "retried_requests_rank0", c->retries);
}

/* ---- one request at a time, synchronously ---- */

static bool initialized;

static int s3_init(const s3_config *c)
{
    if (initialized)
        return 0;
    if (S3_initialize("pario-engine", S3_INIT_ALL, c->endpoint) != S3StatusOK)
        return EIO;
    initialized = true;
    return 0;
}

static S3BucketContext context_of(const s3_config *c)
{
    return (S3BucketContext){.hostName = c->endpoint,
                             .bucketName = c->bucket,
                             .protocol = c->https ? S3ProtocolHTTPS : S3ProtocolHTTP,
                             .uriStyle = S3UriStylePath,
                             .accessKeyId = getenv("AWS_ACCESS_KEY_ID"),
                             .secretAccessKey = getenv("AWS_SECRET_ACCESS_KEY")};
}

typedef struct request {
    S3Status status;
    char *buf;          /* PUT source or GET destination */
    size_t len, done;
    /* listing */
    char (*keys)[1024];
    int nkeys, maxkeys;
    bool truncated;
    char marker[1024];
} request;

static S3Status on_properties(const S3ResponseProperties *p, void *data) { return S3StatusOK; }

/* The last request that failed, for s3_why: an errno cannot say what the
 * store answered (NoSuchBucket) or that TLS met a plain-HTTP server. */
static S3Status last_failure = S3StatusOK;

static void on_complete(S3Status status, const S3ErrorDetails *error, void *data)
{
    ((request *)data)->status = status;
    if (status != S3StatusOK)
        last_failure = status;
}

/* A request the store or the connection failed in passing (libs3 calls
 * the status retryable) is sent again, as S3 clients do; the time it costs
 * stays in the measured call, and the count goes into the result. */
enum { S3_TRIES = 4 };

static bool again(S3Status status, int *tries, s3_config *c)
{
    if (status == S3StatusOK || ++*tries >= S3_TRIES)
        return false;
    if (!S3_status_is_retryable(status))
        return false;
    c->retries++;
    return true;
}

static int put_data(int size, char *buffer, void *data)
{
    request *r = data;
    size_t n = r->len - r->done < (size_t)size ? r->len - r->done : (size_t)size;
    memcpy(buffer, r->buf + r->done, n);
    r->done += n;
    return (int)n;
}

static S3Status get_data(int size, const char *buffer, void *data)
{
    request *r = data;
    if (r->done + (size_t)size > r->len)
        return S3StatusAbortedByCallback; /* the object is longer than a block */
    memcpy(r->buf + r->done, buffer, (size_t)size);
    r->done += (size_t)size;
    return S3StatusOK;
}

static S3Status list_data(int truncated, const char *next, int count, const S3ListBucketContent *contents,
                          int nprefixes, const char **prefixes, void *data)
{
    request *r = data;
    for (int i = 0; i < count && r->nkeys < r->maxkeys; i++)
        snprintf(r->keys[r->nkeys++], sizeof r->keys[0], "%s", contents[i].key);
    r->truncated = truncated;
    if (count > 0)
        snprintf(r->marker, sizeof r->marker, "%s", next ? next : contents[count - 1].key);
    return S3StatusOK;
}

static int errno_of(S3Status s)
{
    switch (s) {
    case S3StatusOK: return 0;
    case S3StatusErrorNoSuchKey:
    case S3StatusHttpErrorNotFound: return ENOENT;
    case S3StatusErrorNoSuchBucket: return ENXIO;
    case S3StatusErrorAccessDenied:
    case S3StatusHttpErrorForbidden:
    case S3StatusErrorInvalidAccessKeyId:
    case S3StatusErrorSignatureDoesNotMatch: return EACCES;
    case S3StatusOutOfMemory: return ENOMEM;
    case S3StatusFailedToConnect:
    case S3StatusNameLookupError: return ECONNREFUSED;
    case S3StatusConnectionFailed: return ECONNRESET;
    default: return EIO;
    }
}

static const char *s3_why(int e, const void *cfg)
{
    static char text[900];
    const s3_config *c = cfg;
    const char *name = S3_get_status_name(last_failure);
    switch (last_failure) {
    case S3StatusOK:
        return NULL;
    case S3StatusErrorNoSuchBucket:
        snprintf(text, sizeof text, "bucket '%s' does not exist at %s (NoSuchBucket): create it or "
                 "name another with --s3-bucket", c->bucket, c->endpoint);
        break;
    case S3StatusErrorAccessDenied:
    case S3StatusHttpErrorForbidden:
    case S3StatusErrorInvalidAccessKeyId:
    case S3StatusErrorSignatureDoesNotMatch:
        snprintf(text, sizeof text, "%s refused the credentials (%s): check AWS_ACCESS_KEY_ID and "
                 "AWS_SECRET_ACCESS_KEY", c->endpoint, name);
        break;
    case S3StatusNameLookupError: /* errno is another call's then */
        snprintf(text, sizeof text, "%s did not answer (NameLookupError: its host name does not "
                 "resolve): check --s3-endpoint", c->endpoint);
        break;
    case S3StatusFailedToConnect:
    case S3StatusConnectionFailed:
        snprintf(text, sizeof text, "%s did not answer (%s, %s): check --s3-endpoint and that the "
                 "store is running", c->endpoint, name, strerror(e));
        break;
    default:
        if (c->https && last_failure < S3StatusErrorAccessDenied) /* no S3 answer at all */
            snprintf(text, sizeof text, "%s did not answer HTTPS (%s): drop --s3-https if it "
                     "serves plain HTTP", c->endpoint, name);
        else
            snprintf(text, sizeof text, "%s answered %s", c->endpoint, name);
    }
    return text;
}

/* "/dir/name" -> "dir/name/" */
static void prefix_of(const char *path, char *out, size_t size)
{
    while (*path == '/')
        path++;
    snprintf(out, size, "%s/", path);
}

static void key_of(const char *prefix, uint64_t offset, char *out, size_t size)
{
    snprintf(out, size, "%s%016llx", prefix, (unsigned long long)offset);
}

static void s3_stored_as(const char *path, const void *cfg, char *out, size_t size)
{
    const s3_config *c = cfg;
    char prefix[PATH_MAX];
    prefix_of(path, prefix, sizeof prefix);
    snprintf(out, size, "the objects under s3://%s/%s at %s are", c->bucket, prefix, c->endpoint);
}

typedef struct s3_handle {
    S3BucketContext ctx;
    char prefix[PATH_MAX];
    s3_config *config;
} s3_handle;

static int s3_open(const backend_open_args *a, void **handle)
{
    const s3_config *c = a->config;
    int e = s3_init(c);
    if (e)
        return e;
    s3_handle *h = calloc(1, sizeof *h);
    if (!h)
        return ENOMEM;
    h->ctx = context_of(c);
    h->config = a->config;
    prefix_of(a->path, h->prefix, sizeof h->prefix);
    if (a->create) { /* what a Ctrl-C leaves: a handler cannot delete objects */
        char what[PATH_MAX + 600];
        s3_stored_as(a->path, c, what, sizeof what);
        owned_elsewhere_note(what);
    }
    *handle = h;
    return 0;
}

static int s3_write_at(void *hp, const void *buf, size_t len, uint64_t offset)
{
    s3_handle *h = hp;
    char key[PATH_MAX + 32];
    key_of(h->prefix, offset, key, sizeof key);
    S3PutObjectHandler handler = {{on_properties, on_complete}, put_data};
    request r;
    int tries = 0;
    do {
        r = (request){.status = S3StatusInternalError, .buf = (char *)buf, .len = len};
        S3_put_object(&h->ctx, key, len, NULL, NULL, &handler, &r);
    } while (again(r.status, &tries, h->config));
    return errno_of(r.status);
}

static int s3_read_at(void *hp, void *buf, size_t len, uint64_t offset)
{
    s3_handle *h = hp;
    char key[PATH_MAX + 32];
    key_of(h->prefix, offset, key, sizeof key);
    S3GetObjectHandler handler = {{on_properties, on_complete}, get_data};
    request r;
    int tries = 0;
    do {
        r = (request){.status = S3StatusInternalError, .buf = buf, .len = len};
        S3_get_object(&h->ctx, key, NULL, 0, 0, NULL, &handler, &r);
    } while (again(r.status, &tries, h->config));
    int e = errno_of(r.status);
    if (e == ENOENT || (!e && r.done != len))
        return ENODATA; /* no such block, or a short one: the "file" ends here */
    return e;
}

static int s3_sync(void *h) { return 0; /* a PUT is stored when it returns */ }

static int s3_close(void *h)
{
    free(h);
    return 0;
}

/* Up to `max` keys under the prefix of `path`; the count, or -errno. */
static int list_keys(const s3_config *c, const char *path, char (*keys)[1024], int max)
{
    int e = s3_init(c);
    if (e)
        return -e;
    S3BucketContext ctx = context_of(c);
    char prefix[PATH_MAX];
    prefix_of(path, prefix, sizeof prefix);
    request r = {.keys = keys, .maxkeys = max};
    S3ListBucketHandler handler = {{on_properties, on_complete}, list_data};
    s3_config uncounted = *c;
    do {
        int tries = 0, had = r.nkeys;
        do {
            r.status = S3StatusInternalError;
            r.truncated = false;
            r.nkeys = had;
            S3_list_bucket(&ctx, prefix, r.marker[0] ? r.marker : NULL, NULL, 0, NULL, &handler, &r);
        } while (again(r.status, &tries, &uncounted));
        if ((e = errno_of(r.status)))
            return -e;
    } while (r.truncated && r.nkeys < max);
    return r.nkeys;
}

static int s3_exists(const char *path, const void *cfg)
{
    char key[1][1024];
    int n = list_keys(cfg, path, key, 1);
    return n < 0 ? n : n > 0;
}

static int s3_remove(const char *path, const void *cfg)
{
    enum { BATCH = 1000 };
    char (*keys)[1024] = malloc(BATCH * sizeof *keys);
    if (!keys)
        return ENOMEM;
    S3BucketContext ctx = context_of(cfg);
    s3_config uncounted = *(const s3_config *)cfg;
    int n, removed = 0, e = 0;
    while (!e && (n = list_keys(cfg, path, keys, BATCH)) > 0) {
        for (int i = 0; i < n && !e; i++) {
            S3ResponseHandler handler = {on_properties, on_complete};
            request r;
            int tries = 0;
            do {
                r = (request){.status = S3StatusInternalError};
                S3_delete_object(&ctx, keys[i], NULL, &handler, &r);
            } while (again(r.status, &tries, &uncounted));
            e = errno_of(r.status);
            removed++;
        }
    }
    free(keys);
    if (!e && n < 0)
        e = -n;
    if (!e)
        owned_elsewhere_clear();
    return e ? e : (removed ? 0 : ENOENT);
}

const backend_ops backend_s3 = {
    .name = "s3",
    .why = s3_why,
    .summary = "one object per block in an S3 bucket (libs3: PUT, GET)",
    .caps = BACKEND_CAP_PER_CALL | BACKEND_CAP_GROUPABLE | BACKEND_CAP_OBJECTS,
    .options = s3_options,
    .noptions = sizeof s3_options / sizeof s3_options[0],
    .config_size = sizeof(s3_config),
    .config_set = s3_config_set,
    .config_check = s3_config_check,
    .describe = s3_describe,
    .open = s3_open,
    .write_at = s3_write_at,
    .read_at = s3_read_at,
    .sync = s3_sync,
    .close = s3_close,
    .exists = s3_exists,
    .remove = s3_remove,
    .stored_as = s3_stored_as,
};
