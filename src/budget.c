/* budget: see budget.h. */
#include "budget.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

unsigned long long budget_physical_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return 0;
    return (unsigned long long)pages * (unsigned long long)size;
}

long budget_default_mb(void)
{
    unsigned long long mb = budget_physical_bytes() / 100 * BUDGET_DEFAULT_PERCENT >> 20;
    if (mb < (unsigned long long)BUDGET_DEFAULT_MIN_MB) return BUDGET_DEFAULT_MIN_MB;
    if (mb > (unsigned long long)BUDGET_MB_MAX) return BUDGET_MB_MAX;
    return (long)mb;
}

unsigned long long budget_limit_bytes(long mb)
{
    if (mb <= 0) mb = budget_default_mb();
    return (unsigned long long)mb << 20;
}

void budget_init(Budget *b, unsigned long long limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit;
}

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
    return a + b < a ? ~0ULL : a + b;
}

void budget_add(Budget *b, unsigned long long bytes, const char *fmt, ...)
{
    if (b->n == BUDGET_ITEMS_MAX) { /* no room: counted with the last */
        b->item[b->n - 1].bytes = sat_add(b->item[b->n - 1].bytes, bytes);
        return;
    }
    BudgetItem *it = &b->item[b->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->name, sizeof it->name, fmt, ap);
    va_end(ap);
    it->bytes = bytes;
}

unsigned long long budget_total(const Budget *b)
{
    unsigned long long t = 0;
    for (int i = 0; i < b->n; i++) t = sat_add(t, b->item[i].bytes);
    return t;
}

unsigned long long budget_left(const Budget *b)
{
    unsigned long long t = budget_total(b);
    return t >= b->limit ? 0 : b->limit - t;
}

const BudgetItem *budget_biggest(const Budget *b)
{
    const BudgetItem *big = NULL;
    for (int i = 0; i < b->n; i++)
        if (!big || b->item[i].bytes > big->bytes) big = &b->item[i];
    return big;
}

const char *budget_format(unsigned long long bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, n, "%llu bytes", bytes);
    else snprintf(buf, n, v < 10.0 ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

int budget_check(const Budget *b, char *err, size_t errlen)
{
    unsigned long long t = budget_total(b);
    if (t <= b->limit) return 0;
    char need[32], big[32];
    const BudgetItem *bi = budget_biggest(b);
    snprintf(err, errlen, "this run needs about %s, over --max-memory %llu MiB; the biggest item: "
             "%s (%s)", budget_format(t, need, sizeof need), b->limit >> 20, bi->name,
             budget_format(bi->bytes, big, sizeof big));
    return -1;
}

int budget_frames_in_flight(const Budget *b, unsigned long long bytes, int want)
{
    if (want < 1) return 1;
    if (bytes == 0) return want;
    unsigned long long k = budget_left(b) / bytes;
    if (k < 1) return 1;
    return k < (unsigned long long)want ? (int)k : want;
}

double budget_cpu_step_units(int w, int h, const SolverParams *params, int *advect)
{
    SolverParams p = *params;
    method_params_settle(&p);
    int na = method_advect_substeps(w, h, &p);
    int ng = p.gather ? method_gather_iters(w, h, &p) : 0;
    if (advect) *advect = na;
    return 150.0 + (double)p.jacobi + 9.0 * (double)(p.vcycles + p.bcycles) + 3.4 * (double)ng +
           31.0 * (double)na;
}
