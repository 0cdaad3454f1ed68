/* budget: the run's memory budget (--max-memory), reckoned before anything
 * big is allocated, so a run that cannot fit is refused at start in one line
 * naming its biggest item, instead of failing (or swapping) half way.
 * GL-free: libc and method (the step's schedules).
 *
 *   Budget b;
 *   budget_init(&b, budget_limit_bytes(c.max_memory_mb));
 *   budget_add(&b, "the start image a.png (16384x16384)", bytes);
 *   budget_add(&b, "the simulation fields (256x256)", fields);
 *   if (budget_check(&b, err, sizeof err) < 0) die(...);  // "needs about 7.2 GiB ..."
 *   int k = budget_frames_in_flight(&b, frame_bytes, 8);  // writers may hold k frames
 *
 * Estimates, not measurements: each item is what its largest buffers take
 * (libc's and the libraries' own overheads are not counted), so the limit is
 * a bound on what smokemorph asks for, not on the process's resident size. */
#ifndef SMOKEMORPH_BUDGET_H
#define SMOKEMORPH_BUDGET_H

#include <stddef.h>

#include "method.h"

#define BUDGET_ITEMS_MAX 48
#define BUDGET_NAME_MAX 160
/* --max-memory's range, MiB */
#define BUDGET_MB_MIN 16L
#define BUDGET_MB_MAX (16L * 1024 * 1024) /* 16 TiB */
/* The default: this share (percent) of the machine's physical memory, and
 * never under BUDGET_DEFAULT_MIN_MB (a machine that reports none: that). */
#define BUDGET_DEFAULT_PERCENT 50
#define BUDGET_DEFAULT_MIN_MB 1024L

typedef struct {
    char name[BUDGET_NAME_MAX];
    unsigned long long bytes;
} BudgetItem;

typedef struct {
    unsigned long long limit;  /* bytes */
    int n;                     /* items; further ones are added to the last */
    BudgetItem item[BUDGET_ITEMS_MAX];
} Budget;

/* The machine's physical memory in bytes (0: unknown). */
unsigned long long budget_physical_bytes(void);
/* The default limit in MiB: BUDGET_DEFAULT_PERCENT of physical memory, at
 * least BUDGET_DEFAULT_MIN_MB. */
long budget_default_mb(void);
/* MB MiB in bytes; mb <= 0: the default. */
unsigned long long budget_limit_bytes(long mb);

void budget_init(Budget *b, unsigned long long limit);
/* Add an item (a printf-style name); sums saturate, never wrap. */
void budget_add(Budget *b, unsigned long long bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
unsigned long long budget_total(const Budget *b);
/* What the limit leaves after the items (0 when over). */
unsigned long long budget_left(const Budget *b);
/* The largest item, or NULL with none. */
const BudgetItem *budget_biggest(const Budget *b);
/* 0 when the items fit the limit, else -1 with one line in err: "this run
 * needs about 7.2 GiB, over --max-memory 4096 MiB; the biggest item: NAME
 * (6.0 GiB)". */
int budget_check(const Budget *b, char *err, size_t errlen);
/* How many buffers of BYTES each fit in what is left, at most WANT (at least
 * 1 when even one does not: the run itself was checked to fit with one).
 * For frames in flight (export's writers). */
int budget_frames_in_flight(const Budget *b, unsigned long long bytes, int want);
/* Time: the work of one CPU step, in units of one pressure Jacobi
 * iteration per cell, from the bounds the parameters and the grid allow
 * (not the speeds a flow happens to have): the transport's substep bounds
 * (method_advect_substeps: dt, umax and the grid; the drift moves the smoke
 * in the same substeps), the Jacobi, V-cycle and gathering iterations. The unit costs were
 * measured at 256² on the reference machine (2 cores): a Jacobi iteration
 * 0.165 ms, a gathering iteration 3.4 of them, a V-cycle 9, a transport
 * substep 31, the rest of a step 150. The substep bound goes into *advect when
 * not NULL. */
double budget_cpu_step_units(int w, int h, const SolverParams *params, int *advect);
/* The most a CPU step may cost: about 2 s at 256² on the reference machine
 * (12000 units of 2.5 ns a cell); a run whose bound is over is refused. */
#define BUDGET_CPU_STEP_UNITS 12000.0
#define BUDGET_UNIT_SECONDS_PER_CELL 2.5e-9
/* BYTES as "512 KiB", "7.2 GiB" into buf; returns buf. */
const char *budget_format(unsigned long long bytes, char *buf, size_t n);

#endif
