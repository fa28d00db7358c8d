#include "result_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../version.h"
#include "fail.h"
#include "fsinfo.h"

/* The CPU's model name, from the first "model name" line of /proc/cpuinfo
 * (x86; other architectures may not have one: then ""). */
static void cpu_model(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, len, "%s", v);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

void result_doc_begin(json *j, const char *command)
{
    json_object_begin(j, NULL);
    json_string(j, "schema", "pario.result/1");
    json_object_begin(j, "tool");
    json_string(j, "name", "pario-engine");
    json_string(j, "version", PARIO_VERSION);
    json_object_end(j);
    json_string(j, "command", command);

    struct utsname u;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    json_object_begin(j, "system");
    if (uname(&u) == 0) {
        json_string(j, "hostname", u.nodename);
        json_string(j, "kernel", u.sysname);
        json_string(j, "kernel_release", u.release);
        json_string(j, "kernel_version", u.version);
        json_string(j, "machine", u.machine);
    }
    json_string(j, "cpu_model", cpu);
    json_uint(j, "memory_bytes", node_memory_bytes());
    json_object_end(j);
}

void result_doc_run(json *j, int argc, char **argv, const char *started_utc,
                    const char *finished_utc)
{
    json_array_begin(j, "argv");
    for (int i = 0; i < argc; i++)
        json_string(j, NULL, argv[i]);
    json_array_end(j);
    json_string(j, "started_utc", started_utc);
    json_string(j, "finished_utc", finished_utc);
    json_string(j, "status", "ok");
}

void result_doc_target(json *j, const char *dir, const char *file, const fs_facts *fs,
                       uint64_t node_memory)
{
    json_object_begin(j, "target");
    json_string(j, "dir", dir);
    if (file)
        json_string(j, "file", file);
    json_string(j, "fs_type", fs->type);
    char magic[24];
    snprintf(magic, sizeof magic, "0x%llx", (unsigned long long)fs->magic);
    json_string(j, "fs_magic", magic);
    json_bool(j, "memory_backed", fs->memory_backed);
    json_uint(j, "node_memory_bytes", node_memory);
    fs_mount m;
    int e = fs_mount_of(dir, &m);
    json_string(j, "device", m.device[0] ? m.device : NULL);
    json_string(j, "mount_point", e ? NULL : m.point);
    json_string(j, "mount_source", e ? NULL : m.source);
    json_string(j, "mount_type", e ? NULL : m.type);
    json_string(j, "mount_options", e ? NULL : m.options);
    json_object_end(j);
}

void result_where_gather(result_where *w, MPI_Comm comm)
{
    int rank, len;
    memset(w, 0, sizeof *w);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &w->nranks);
    MPI_Get_library_version(w->library, &len);
    MPI_Get_version(&w->version, &w->subversion);
    host_info me;
    host_info_mine(&me);
    if (rank == 0)
        w->hosts = calloc((size_t)w->nranks, sizeof *w->hosts);
    MPI_Gather(&me, sizeof me, MPI_BYTE, w->hosts, sizeof me, MPI_BYTE, 0, comm);
    if (rank == 0) {
        w->host_of = malloc(sizeof(int) * (size_t)w->nranks);
        hosts_place(w->hosts, w->nranks, w->host_of);
    }
}

void result_doc_where(json *j, result_where *w, const char *dir, const char *file)
{
    hosts_write_mpi_json(j, w->library, w->version, w->subversion, w->hosts, w->host_of, w->nranks);
    if (dir) {
        fs_facts fs = {0};
        if (fs_facts_of(dir, &fs) != 0)
            snprintf(fs.type, sizeof fs.type, "unknown");
        result_doc_target(j, dir, file, &fs, w->hosts[0].memory_bytes);
    }
    result_where_free(w);
}

void result_where_free(result_where *w)
{
    free(w->hosts);
    free(w->host_of);
    w->hosts = NULL;
    w->host_of = NULL;
}

int result_doc_close(json *j, const char *const *warnings, int n, const char *path)
{
    json_array_begin(j, "warnings");
    for (int i = 0; i < n; i++)
        if (warnings[i])
            json_string(j, NULL, warnings[i]);
    json_array_end(j);
    json_object_end(j);
    int e = json_save(j, path);
    json_free(j);
    return e;
}

void result_doc_close_verified(json *j, bool ok, const char *const *warnings, int n, const char *path)
{
    json_object_begin(j, "verification");
    json_bool(j, "performed", true);
    json_bool(j, "ok", ok);
    json_object_end(j);
    int e = result_doc_close(j, warnings, n, path);
    if (e)
        fail_exit(EXIT_RUN_FAILED, 1, "cannot write --json %s: %s", path, strerror(e));
}
