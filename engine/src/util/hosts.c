#include "hosts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsinfo.h"

void host_info_mine(host_info *me)
{
    int len;
    memset(me, 0, sizeof *me);
    MPI_Get_processor_name(me->name, &len);
    me->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    me->memory_bytes = node_memory_bytes();
    const char *slurm_node = getenv("SLURMD_NODENAME"); /* set by slurmd for each task it starts */
    if (slurm_node)
        snprintf(me->slurm_node, sizeof me->slurm_node, "%s", slurm_node);
}

int hosts_place(const host_info *hosts, int nranks, int *host_of)
{
    /* first[] lists the first rank of each host seen so far */
    int *first = malloc(sizeof(int) * (size_t)nranks), nhosts = 0;
    for (int i = 0; i < nranks; i++) {
        int h = 0;
        while (h < nhosts && strcmp(hosts[first[h]].name, hosts[i].name) != 0)
            h++;
        if (h == nhosts)
            first[nhosts++] = i;
        host_of[i] = first[h];
    }
    free(first);
    return nhosts;
}

void hosts_write_mpi_json(json *j, const char *library, int version, int subversion,
                          const host_info *hosts, const int *host_of, int nranks)
{
    json_object_begin(j, "mpi");
    json_string(j, "library", library);
    char std[16];
    snprintf(std, sizeof std, "%d.%d", version, subversion);
    json_string(j, "standard", std);
    json_int(j, "ranks", nranks);
    json_array_begin(j, "hosts");
    for (int i = 0; i < nranks; i++) {
        if (host_of[i] != i)
            continue;
        json_object_begin(j, NULL);
        json_string(j, "name", hosts[i].name);
        json_int(j, "cores", hosts[i].cores);
        json_uint(j, "memory_bytes", hosts[i].memory_bytes);
        if (hosts[i].slurm_node[0])
            json_string(j, "slurm_node", hosts[i].slurm_node);
        json_array_begin(j, "ranks");
        for (int k = 0; k < nranks; k++)
            if (host_of[k] == i)
                json_int(j, NULL, k);
        json_array_end(j);
        json_object_end(j);
    }
    json_array_end(j);
    /* Which Slurm job step placed the ranks, when srun launched them. */
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    if (job && step) {
        json_object_begin(j, "slurm");
        json_string(j, "job_id", job);
        json_string(j, "step_id", step);
        json_object_end(j);
    }
    json_object_end(j);
}
