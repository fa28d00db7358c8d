#include "result_doc.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "../version.h"
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

void result_doc_mount(json *j, const char *dir)
{
    fs_mount m;
    int e = fs_mount_of(dir, &m);
    json_string(j, "device", m.device[0] ? m.device : NULL);
    json_string(j, "mount_point", e ? NULL : m.point);
    json_string(j, "mount_source", e ? NULL : m.source);
    json_string(j, "mount_type", e ? NULL : m.type);
    json_string(j, "mount_options", e ? NULL : m.options);
}
