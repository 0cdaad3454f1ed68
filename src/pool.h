/* pool: a fixed set of worker threads for the frame writers. Tasks run in
 * the order they were submitted (first come, first started); a task may
 * split its own work with pool_for, which idle workers help with (so one
 * huge EXR frame uses every core while nothing else is queued). Never
 * touches GL.
 *
 *   Pool *p = pool_create(pool_cores(), err, sizeof err);
 *   pool_submit(p, write_frame, job);      // runs on a worker
 *   pool_for(p, nchunks, encode_chunk, ctx); // in a task or on the caller
 *   pool_free(p);                           // waits for every task
 *
 * pool_for's function gets the item and a slot, 0 <= slot < pool_slots(p),
 * unique among the threads running that pool_for at once (scratch space
 * per slot, no locks). */
#ifndef SMOKEMORPH_POOL_H
#define SMOKEMORPH_POOL_H

#include <stddef.h>

typedef struct Pool Pool;

/* The cores this process may run on (its CPU affinity), at least 1. */
int pool_cores(void);

/* N worker threads, 1..POOL_MAX_THREADS; NULL with a reason in err. */
#define POOL_MAX_THREADS 256
Pool *pool_create(int threads, char *err, size_t errlen);
int pool_threads(const Pool *p);
/* Slots of pool_for: the workers and one caller from outside. */
int pool_slots(const Pool *p);

/* Queue fn(arg) for a worker; 0, or -1 when out of memory. */
int pool_submit(Pool *p, void (*fn)(void *arg), void *arg);

/* fn(ctx, i, slot) for i in 0..n-1, on the calling thread and on idle
 * workers; returns when every item is done. Nested pool_for calls run on
 * the caller alone. */
void pool_for(Pool *p, int n, void (*fn)(void *ctx, int item, int slot), void *ctx);

/* Wait for every queued task, then stop the workers and free. */
void pool_free(Pool *p);

#endif
