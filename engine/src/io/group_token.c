#include "group_token.h"

#include <sched.h>

enum { TOKEN_TAG = 7001 };

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
}

/* Wait without spinning on the CPU: with more ranks than cores, a waiting
 * rank that busy-polls in MPI_Recv takes the core the token holder needs
 * (measured here: 4 ranks on 2 cores, G=1, 4 KiB calls: 2 MiB/s spinning,
 * about 1000 MiB/s yielding). */
static void wait_token(const token_ring *t)
{
    MPI_Request req;
    int done = 0;
    MPI_Irecv(NULL, 0, MPI_BYTE, t->prev, TOKEN_TAG, t->comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
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
