#include "hosts.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsinfo.h"

#define PAGE_REPORTING_ORDER "/sys/module/page_reporting/parameters/page_reporting_order"
#define BALLOON_DRIVER "/sys/bus/virtio/drivers/virtio_balloon"
#define BALLOON_F_REPORTING 5 /* the virtio-balloon feature bit of free page reporting */

/* The largest order of the buddy allocator: /proc/buddyinfo lists a free
 * count per order from 0, so its columns after "Node N, zone NAME"; -1
 * when it cannot be read. */
static int largest_free_order(void)
{
    FILE *f = fopen("/proc/buddyinfo", "r");
    if (!f)
        return -1;
    char line[1024];
    int orders = -1;
    if (fgets(line, sizeof line, f)) {
        char *zone = strstr(line, "zone");
        if (zone) {
            orders = 0;
            char *save = NULL;
            strtok_r(zone, " \t\n", &save); /* "zone" */
            strtok_r(NULL, " \t\n", &save); /* its name */
            while (strtok_r(NULL, " \t\n", &save))
                orders++;
        }
    }
    fclose(f);
    return orders > 0 ? orders - 1 : -1;
}

/* Whether a virtio balloon device bound here negotiated free page
 * reporting: its "features" file is one character per feature bit. */
static bool balloon_reports_free_pages(void)
{
    DIR *d = opendir(BALLOON_DRIVER);
    if (!d)
        return false;
    bool reports = false;
    struct dirent *e;
    while (!reports && (e = readdir(d))) {
        if (strncmp(e->d_name, "virtio", 6) != 0)
            continue;
        char path[512], bits[256] = "";
        snprintf(path, sizeof path, "%s/%s/features", BALLOON_DRIVER, e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            reports = fgets(bits, sizeof bits, f) && strlen(bits) > BALLOON_F_REPORTING &&
                      bits[BALLOON_F_REPORTING] == '1';
            fclose(f);
        }
    }
    closedir(d);
    return reports;
}

/* The order from which free blocks are reported and the allocator's
 * largest, in `me`, or -1 for both: a balloon that reports, and an order
 * the allocator has (above its largest order the kernel reports nothing). */
static void free_page_reporting(host_info *me)
{
    me->free_page_reporting_order = me->largest_free_order = -1;
    if (!balloon_reports_free_pages())
        return;
    FILE *f = fopen(PAGE_REPORTING_ORDER, "r");
    int order = -1;
    if (f) {
        if (fscanf(f, "%d", &order) != 1)
            order = -1;
        fclose(f);
    }
    const int largest = largest_free_order();
    if (order >= 0 && largest >= 0 && order <= largest) {
        me->free_page_reporting_order = order;
        me->largest_free_order = largest;
    }
}

bool hosts_free_page_reporting_warning(const host_info *hosts, const int *host_of, int nranks,
                                       char *out, size_t n)
{
    for (int i = 0; i < nranks; i++) {
        if (host_of[i] != i || hosts[i].free_page_reporting_order < 0)
            continue;
        snprintf(out, n,
                 "%s hands free memory back to its hypervisor (free page reporting, blocks of order "
                 "%d and up): memory taken again after it sat free for a few seconds (file pages, "
                 "buffers) costs a host fault per page, so the same phase can run several times "
                 "slower from one trial to the next; for steady storage figures, as root: echo %d > "
                 PAGE_REPORTING_ORDER " (echo %d to restore)",
                 hosts[i].name, hosts[i].free_page_reporting_order, hosts[i].largest_free_order + 1,
                 hosts[i].free_page_reporting_order);
        return true;
    }
    return false;
}

void host_info_mine(host_info *me)
{
    int len;
    memset(me, 0, sizeof *me);
    MPI_Get_processor_name(me->name, &len);
    me->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    me->memory_bytes = node_memory_bytes();
    free_page_reporting(me);
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
        if (hosts[i].free_page_reporting_order >= 0)
            json_int(j, "free_page_reporting_order", hosts[i].free_page_reporting_order);
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
