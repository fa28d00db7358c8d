#include "group_token.h"

#include <sched.h>
#include <string.h>

enum { TOKEN_TAG = 7001 };

/* Whether the MPI library's own progress already yields the core when a
 * poll finds nothing (Open MPI's mpi_yield_when_idle, which it turns on by
 * itself when a node has more ranks than slots), read through the MPI
 * tool interface; false where the library has no such variable (MPICH
 * spins).  The wait below then yields only once per poll: yielding again
 * after a poll that yielded doubles the context switches of every
 * hand-over (measured on 2 cores, shared machine, the engine's ring of 4
 * ranks in 2 groups, 2 per core: 5.9 us per hand-over, 3.2 us with Open
 * MPI's yield off; two ranks on one core 4.7 us with it on, 1.8 us off). */
static bool query_library_yields_when_idle(void)
{
    int provided, n = 0;
    bool yields = false;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return false;
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n; i++) {
        char name[128], desc[8];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope, count, size;
        MPI_Datatype type;
        MPI_T_enum values;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &values, desc, &desc_len,
                                &bind, &scope) != MPI_SUCCESS ||
            strcmp(name, "mpi_yield_when_idle") != 0 || bind != MPI_T_BIND_NO_OBJECT)
            continue;
        unsigned char value[16] = {0};
        MPI_T_cvar_handle h;
        if (MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0 && size <= (int)sizeof value &&
            MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS) {
            if (count == 1 && MPI_T_cvar_read(h, value) == MPI_SUCCESS)
                for (int b = 0; b < size; b++)
                    yields = yields || value[b];
            MPI_T_cvar_handle_free(&h);
        }
        break;
    }
    MPI_T_finalize();
    return yields;
}

/* The answer cannot change within a process, so the library is asked once
 * and the answer kept.  The MPI standard lets MPI_T be initialized again
 * after MPI_T_finalize, but MPICH 4.0 crashes when it is: its first
 * MPI_T_finalize frees the control variables (MPI_Init does not count as an
 * MPI_T user there), and the next MPI_T_cvar_get_num reads freed memory --
 * every token test of the MPICH probe died in it. */
static bool library_yields_when_idle(void)
{
    static int yields = -1; /* -1: not asked yet */
    if (yields < 0)
        yields = query_library_yields_when_idle();
    return yields;
}

void token_ring_init(token_ring *t, int rank, int nranks, int group, enum group_unit unit,
                     MPI_Comm comm)
{
    t->active = false;
    t->comm = comm;
    t->per_call = unit == GROUP_PER_CALL;
    if (group <= 0 || group >= nranks)
        return;
    int g = rank % group;
    int members = (nranks - g + group - 1) / group; /* g, g+G, g+2G, ... < nranks */
    if (members < 2)
        return;
    int last_member = g + (members - 1) * group;
    t->active = true;
    t->first = rank == g;
    t->last = rank == last_member;
    t->prev = t->first ? last_member : rank - group;
    t->next = t->last ? g : rank + group;
    t->mpi_yields = library_yields_when_idle();
}

/* Wait without spinning on the CPU: with more ranks than cores, a waiting
 * rank that busy-polls in MPI_Recv takes the core the token holder needs
 * (measured here: 4 ranks on 2 cores, G=1, 4 KiB calls: 2 MiB/s spinning,
 * about 1000 MiB/s yielding).  One yield per poll: the library's own, where
 * it makes one (library_yields_when_idle), else ours. */
static void wait_token(const token_ring *t)
{
    MPI_Request req;
    int done = 0;
    MPI_Irecv(NULL, 0, MPI_BYTE, t->prev, TOKEN_TAG, t->comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (!t->mpi_yields)
            sched_yield();
    }
}

static void pass_token(const token_ring *t)
{
    MPI_Send(NULL, 0, MPI_BYTE, t->next, TOKEN_TAG, t->comm);
}

void token_enter_share(const token_ring *t)
{
    if (t->active && !t->per_call && !t->first)
        wait_token(t);
}

void token_leave_share(const token_ring *t)
{
    if (t->active && !t->per_call && !t->last)
        pass_token(t);
}

void token_enter_call(const token_ring *t, uint64_t k)
{
    /* The first member starts the ring; afterwards it waits for the last. */
    if (t->active && t->per_call && !(t->first && k == 0))
        wait_token(t);
}

void token_leave_call(const token_ring *t, uint64_t k, uint64_t n)
{
    /* Every member makes the same number of calls, so the ring closes
     * exactly when the last member finishes its last call. */
    if (t->active && t->per_call && !(t->last && k + 1 == n))
        pass_token(t);
}
