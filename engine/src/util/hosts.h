/* Where the ranks ran: one record per rank, which ranks share a host, and
 * the "mpi" object of the result document built from them.  Every MPI
 * command (io, probe) gathers and writes these the same way, so a fact
 * added here (a Slurm node, say) reaches every result document. */
#ifndef PARIO_HOSTS_H
#define PARIO_HOSTS_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

typedef struct host_info {
    char name[MPI_MAX_PROCESSOR_NAME];
    int cores;
    uint64_t memory_bytes;
    char slurm_node[64]; /* SLURMD_NODENAME when srun placed this rank, else "" */
    /* The smallest order of the free blocks this host's kernel hands back
     * to its hypervisor (virtio-balloon free page reporting), -1 when it
     * hands back none: memory taken after it sat free for a few seconds
     * costs the host a fault per page again. */
    int free_page_reporting_order;
    int largest_free_order; /* the buddy allocator's, set with the above: one more stops it */
} host_info;

/* This rank's host. */
void host_info_mine(host_info *me);

/* host_of[i] = the first rank on rank i's host; returns the number of
 * hosts.  O(ranks x hosts), so thousands of ranks stay cheap. */
int hosts_place(const host_info *hosts, int nranks, int *host_of);

/* The warning for the first host whose kernel reports free memory to its
 * hypervisor, in `out` (n bytes); false when none does. */
bool hosts_free_page_reporting_warning(const host_info *hosts, const int *host_of, int nranks,
                                       char *out, size_t n);

/* The "mpi" object: library, standard, ranks, hosts with their ranks, and
 * the Slurm job step when srun launched the ranks. */
void hosts_write_mpi_json(json *j, const char *library, int version, int subversion,
                          const host_info *hosts, const int *host_of, int nranks);

#endif
