/* pool: worker threads; see pool.h.
 *
 * One mutex guards the task queue and the open pool_for loops; a worker
 * helps a loop with items left before it starts the next task (a frame
 * already begun finishes sooner, and its memory goes back sooner). Items are
 * taken one at a time under the mutex: an item is a chunk of a frame
 * (milliseconds), so the lock is never what bounds the speed. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Task {
    void (*fn)(void *arg);
    void *arg;
    struct Task *next;
} Task;

typedef struct For {
    int n, next, done, members, slots;
    void (*fn)(void *ctx, int item, int slot);
    void *ctx;
    struct For *link;
} For;

struct Pool {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a task or a loop's item is there, or stop */
    pthread_cond_t fin;   /* a loop's item finished, or a member left */
    Task *head, *tail;
    For *loops;
    bool stop;
    int nthreads;
    pthread_t *threads;
};

/* Set on a thread while it runs a pool_for item: a nested loop runs alone. */
static _Thread_local bool t_in_for;

int pool_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The first loop with items left, or NULL (the mutex held). */
static For *open_loop(Pool *p)
{
    for (For *f = p->loops; f; f = f->link)
        if (f->next < f->n) return f;
    return NULL;
}

/* Run items of f until none is left; the mutex held on entry and exit. */
static void help(Pool *p, For *f)
{
    int slot = f->slots++;
    f->members++;
    bool was = t_in_for;
    t_in_for = true;
    while (f->next < f->n) {
        int i = f->next++;
        pthread_mutex_unlock(&p->mu);
        f->fn(f->ctx, i, slot);
        pthread_mutex_lock(&p->mu);
        f->done++;
    }
    t_in_for = was;
    f->members--;
    pthread_cond_broadcast(&p->fin);
}

/* Workers run a little below the thread that feeds them (nice + 4 for this
 * thread alone, Linux's per-thread niceness): with as many workers as
 * cores, the simulation's thread still gets a core when it wants one. */
static void lower_priority(void)
{
#ifdef SYS_gettid
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0) setpriority(PRIO_PROCESS, tid, now + 4 > 19 ? 19 : now + 4);
#endif
}

static void *worker(void *arg)
{
    Pool *p = arg;
    lower_priority();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        For *f = open_loop(p);
        if (f) {
            help(p, f);
            continue;
        }
        Task *t = p->head;
        if (t) {
            p->head = t->next;
            if (!p->head) p->tail = NULL;
            pthread_mutex_unlock(&p->mu);
            t->fn(t->arg);
            free(t);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->stop) break;
        pthread_cond_wait(&p->work, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

Pool *pool_create(int threads, char *err, size_t errlen)
{
    if (threads < 1 || threads > POOL_MAX_THREADS) {
        snprintf(err, errlen, "%d writer threads: expected 1..%d", threads, POOL_MAX_THREADS);
        return NULL;
    }
    Pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc((size_t)threads, sizeof *p->threads))) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->fin, NULL);
    for (int k = 0; k < threads; k++) {
        int rc = pthread_create(&p->threads[k], NULL, worker, p);
        if (rc != 0) {
            snprintf(err, errlen, "cannot start writer thread %d of %d: %s", k + 1, threads,
                     strerror(rc));
            pool_free(p);
            return NULL;
        }
        p->nthreads++;
    }
    return p;
}

int pool_threads(const Pool *p) { return p->nthreads; }
int pool_slots(const Pool *p) { return p->nthreads + 1; }

int pool_submit(Pool *p, void (*fn)(void *arg), void *arg)
{
    Task *t = malloc(sizeof *t);
    if (!t) return -1;
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void pool_for(Pool *p, int n, void (*fn)(void *ctx, int item, int slot), void *ctx)
{
    if (n <= 0) return;
    if (!p || t_in_for || n == 1) {
        for (int i = 0; i < n; i++) fn(ctx, i, 0);
        return;
    }
    For f = {.n = n, .fn = fn, .ctx = ctx};
    pthread_mutex_lock(&p->mu);
    f.link = p->loops;
    p->loops = &f;
    pthread_cond_broadcast(&p->work);
    help(p, &f);
    /* the last items may still run on workers: wait for them to leave */
    while (f.done < f.n || f.members > 0) pthread_cond_wait(&p->fin, &p->mu);
    For **q = &p->loops;
    while (*q != &f) q = &(*q)->link;
    *q = f.link;
    pthread_mutex_unlock(&p->mu);
}

void pool_free(Pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < p->nthreads; k++) pthread_join(p->threads[k], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->fin);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}
