#include "bt_overlap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/clock.h"

static void *writer_main(void *arg)
{
    overlap_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->stop)
            pthread_cond_wait(&w->changed, &w->lock);
        if (!w->busy && w->stop)
            break;
        int dump = w->dump;
        pthread_mutex_unlock(&w->lock);
        double t = clock_now();
        int e = w->err ? 0 : w->io->mode->write_dump(w->io, &w->snapshot, dump);
        double took = clock_now() - t;
        pthread_mutex_lock(&w->lock);
        w->dump_seconds[dump] = took;
        if (e && !w->err)
            w->err = e;
        w->busy = false;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static size_t stored_doubles(const bt_problem *p)
{
    return 5u * (size_t)p->points;
}

int overlap_start(overlap_writer *w, btio_ctx *io, const bt_problem *p, double *dump_seconds)
{
    memset(w, 0, sizeof *w);
    w->io = io;
    w->dump_seconds = dump_seconds;
    w->snapshot = *p;
    w->snapshot.u = malloc(sizeof(double) * stored_doubles(p));
    if (!w->snapshot.u)
        return ENOMEM;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
    return pthread_create(&w->thread, NULL, writer_main, w);
}

void overlap_submit(overlap_writer *w, const bt_problem *p, int dump)
{
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->changed, &w->lock);
    memcpy(w->snapshot.u, p->u, sizeof(double) * stored_doubles(p));
    w->dump = dump;
    w->busy = true;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
}

int overlap_finish(overlap_writer *w)
{
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->changed, &w->lock);
    w->stop = true;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->changed);
    free(w->snapshot.u);
    return w->err;
}
