/* fuzz_step: the CPU solver (cpu_solver) stepping on what a file can give it
 * (issue 21: a NaN velocity crashed sample_v, and no harness ran the
 * solver). Two kinds of input, by the first byte's low bit:
 *   0: the rest is a checkpoint (checkpoint_parse, its CRC-32 made right so
 *      mutations reach the arrays); one accepted and of at most 32x32 cells
 *      runs 3 steps of field 0 from its state, with its parameters;
 *   1: the rest picks every parameter at an end of its range, its default,
 *      or a value in between (the scenes' numeric extremes), a 16x16 grid
 *      and a density with extreme values, and runs 2 steps; combinations
 *      the CPU time bound refuses (budget_cpu_step_units) are skipped, as
 *      the program refuses them.
 * Properties: no crash, no out-of-bounds access, no undefined behaviour
 * (ASan, UBSan's float-cast-overflow included); the mass and error are
 * computed (finite or not: the program stops on non-finite ones). Seeds:
 * fuzz/corpus/step (checkpoints written by smokemorph, with a 0 byte before
 * them, and parameter picks). (Built by `make fuzz`.) */
#include "fuzz.h"

#include <math.h>
#include <zlib.h>

#include "budget.h"
#include "checkpoint.h"
#include "method.h"
#include "cpu_solver.h"

static void run_checkpoint(const uint8_t *data, size_t size)
{
    if (size < 4 || size > (1u << 22)) return;
    uint8_t *d = malloc(size);
    if (!d) return;
    memcpy(d, data, size);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), d, (uInt)(size - 4));
    for (int k = 0; k < 4; k++) d[size - 4 + k] = (uint8_t)(crc >> (8 * k));
    Checkpoint c;
    char err[512] = "";
    if (checkpoint_parse(d, size, &c, err, sizeof err) < 0) {
        FUZZ_ONE_LINE(err);
        free(d);
        return;
    }
    free(d);
    if ((long)c.w * c.h <= 32 * 32 &&
        budget_cpu_step_units(c.w, c.h, &c.state.params, NULL) <= BUDGET_CPU_STEP_UNITS) {
        RefSolver *s = ref_create(c.w, c.h, &c.state.params, err, sizeof err);
        if (s) {
            ref_set_state(s, &c.state.solver);
            for (int k = 0; k < 3; k++) ref_step(s);
            (void)ref_mass(s);
            (void)ref_error(s);
            (void)ref_max_div(s);
            ref_free(s);
        }
    }
    checkpoint_free(&c);
}

/* A float from 4 bytes, or 0 past the end. */
static float take_f32(const uint8_t **p, const uint8_t *end)
{
    float f = 0.0f;
    if (end - *p >= 4) memcpy(&f, *p, 4);
    *p += end - *p >= 4 ? 4 : end - *p;
    return f;
}

static void run_extremes(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    SolverParams lo, hi, def;
    method_params_default(&def);
    SolverParams q = def;
    /* each parameter: its default, 0 (its low end: method_params_check
     * refuses what is below), a large value, or a fuzzed one */
    for (int k = 0; k < METHOD_PARAM_COUNT && p < end; k++) {
        uint8_t pick = *p++;
        double v = method_param_get(&def, k);
        switch (pick & 3) {
        case 0: break;
        case 1: v = method_param_info[k].kind == 'f' ? 1e-9 : 0.0; break;
        case 2: v = method_param_info[k].kind == 'f' ? 1e5 : 10000.0; break;
        case 3: v = (double)take_f32(&p, end); break;
        }
        method_param_set(&q, k, v);
    }
    (void)lo;
    (void)hi;
    /* clamp into the accepted ranges the way the program's checks demand:
     * what method_params_check refuses is never run */
    if (method_params_check(&q) != NULL) return;
    if (budget_cpu_step_units(16, 16, &q, NULL) > BUDGET_CPU_STEP_UNITS) return;
    char err[256];
    RefSolver *s = ref_create(16, 16, &q, err, sizeof err);
    if (!s) return;
    float rho[256], tgt[256];
    for (int k = 0; k < 256; k++) {
        float a = take_f32(&p, end);
        rho[k] = isfinite(a) && a >= 0.0f && a <= 1e6f ? a : (k % 3) ? 0.0f : 1.0f;
        tgt[k] = (k / 16 - 8) * (k / 16 - 8) + (k % 16 - 8) * (k % 16 - 8) < 20 ? 1.0f : 0.0f;
    }
    ref_set_density(s, rho);
    ref_set_target(s, tgt, true);
    ref_step(s);
    ref_step(s);
    (void)ref_mass(s);
    (void)ref_error(s);
    ref_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1) run_extremes(data + 1, size - 1);
    else run_checkpoint(data + 1, size - 1);
    return 0;
}
