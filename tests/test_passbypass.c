/* test_passbypass: the pass-by-pass mode on the CPU reference (tier 1, no
 * GL): the passes come in the method's one list (names and counts), every
 * pass of a step run one by one gives morph_step's state bit for bit, the
 * pressure residual falls over the V-cycles, and the plot's series. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "passbypass.h"
#include "cpu_solver.h"
#include "testlib.h"

#define W 48
#define H 40
#define N (W * H)

static float start[N], target[N];

static void shapes(void)
{
    TestlibShape s = {.domain = true, .width = 0.02};
    testlib_disc(start, W, H, &s, 0.35, 0.4, 0.2, 1.0);
    testlib_box(target, W, H, &s, 0.8, 0.5, 0.18, 0.25, 1.0);
}

static Morph *make(const SolverParams *p)
{
    Morph *m = testlib_morph(W, H, p, start, target, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    return m;
}

typedef struct {
    MorphState st;
    float *buf;
} State;

static void state_alloc(State *s)
{
    s->buf = malloc((size_t)(METHOD_FIELD_COUNT + 2) * N * sizeof(float));
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) s->st.solver.field[k] = s->buf + (size_t)k * N;
    s->st.start = s->buf + (size_t)METHOD_FIELD_COUNT * N;
    s->st.target = s->st.start + N;
}

/* Every field of two states bit for bit; the first that differs. */
static int state_diff(Morph *a, Morph *b)
{
    State x, y;
    state_alloc(&x);
    state_alloc(&y);
    int bad = -2;
    if (morph_get_state(a, &x.st) == 0 && morph_get_state(b, &y.st) == 0) {
        bad = -1;
        for (int k = 0; k < METHOD_FIELD_COUNT && bad < 0; k++)
            if (memcmp(x.st.solver.field[k], y.st.solver.field[k], N * sizeof(float)) != 0) bad = k;
        if (bad < 0 && (x.st.solver.nstep != y.st.solver.nstep || x.st.steps != y.st.steps)) bad = 100;
    }
    free(x.buf);
    free(y.buf);
    return bad;
}

/* One step pass by pass; returns its passes (or -1). */
static int step_by_pass(Morph *m, MorphPassInfo *log, int max)
{
    int n = 0;
    MorphPassInfo pi;
    do {
        if (morph_pass_next(m, &pi) < 0) return -1;
        if (log && n < max) log[n] = pi;
        n++;
    } while (!pi.last && n < 100000);
    return n;
}

/* The passes reported follow method_plan's list: each stage in order, its
 * repetitions 0.. count−1 (a transport stage's count the substeps its speed
 * took, at most the plan's), named by method_pass_name. */
static void check_order(Morph *m, const SolverParams *p, const char *what)
{
    State s;
    state_alloc(&s);
    morph_get_state(m, &s.st);
    MethodStep plan;
    method_plan(p, method_grid(W, H), s.st.solver.nstep, s.st.solver.kstep, s.st.solver.dscale, &plan);
    free(s.buf);
    MorphPassInfo log[4096];
    int n = step_by_pass(m, log, 4096);
    CHECK(n > 0 && n <= 4096, "%s: %d passes", what, n);
    if (n <= 0 || n > 4096) return;
    int at = 0, total = method_pass_total(&plan);
    for (int q = 0; q < plan.n; q++) {
        MethodStage st = plan.stage[q];
        CHECK(at < n && log[at].pass == st.pass, "%s: stage %d is %s, the pass reported %s", what, q,
              method_pass_name(st.pass), at < n ? log[at].name : "none");
        if (at >= n || log[at].pass != st.pass) return;
        int count = log[at].count;
        bool transport = st.pass == METHOD_PASS_ADVECT_DENSITY;
        CHECK(transport ? count >= 1 && count <= st.count : count == st.count,
              "%s: %s count %d, the plan's %d", what, method_pass_name(st.pass), count, st.count);
        for (int k = 0; k < count; k++, at++) {
            CHECK(at < n && log[at].pass == st.pass && log[at].k == k && log[at].bound == st.count &&
                      strcmp(log[at].name, method_pass_name(st.pass)) == 0 && log[at].total == total &&
                      log[at].out == method_pass_output(st.pass),
                  "%s: pass %d: %s %d/%d", what, at, at < n ? log[at].name : "none", k, count);
        }
    }
    CHECK(at == n, "%s: %d passes reported, the plan's list has %d", what, n, at);
    CHECK(log[n - 1].last && !morph_pass_active(m), "%s: the last pass ends the step", what);
}

static void test_order(void)
{
    SolverParams p;
    method_params_default(&p);
    Morph *m = make(&p);
    if (!m) return;
    /* step 1 (gathering faded out), then steps with the drift and gathering */
    for (int s = 0; s < 4; s++) {
        char what[32];
        snprintf(what, sizeof what, "step %d", s + 1);
        check_order(m, &p, what);
        CHECK(morph_step_count(m) == s + 1, "step count %ld after step %d", morph_step_count(m), s + 1);
    }
    morph_free(m);
    /* Fattal's force, Jacobi only, gathering off: other stages */
    SolverParams q = p;
    q.force = SOLVER_FORCE_FATTAL;
    q.vcycles = 0;
    q.set = METHOD_SET(METHOD_PARAM_COUNT) - 1ull;
    q.gather = false;
    q.jacobi = 25;
    if (!(m = make(&q))) return;
    morph_step(m);
    check_order(m, &q, "fattal, jacobi 25, no gathering");
    morph_free(m);
}

/* morph_step against every pass one by one, bit for bit, for several steps,
 * and a step begun pass by pass finished by morph_step. */
static void check_same(const SolverParams *p, const char *what)
{
    Morph *a = make(p), *b = make(p);
    if (!a || !b) goto done;
    for (int s = 0; s < 6; s++) {
        morph_step(a);
        int n = step_by_pass(b, NULL, 0);
        CHECK(n > 10, "%s: step %d: %d passes", what, s + 1, n);
        int d = state_diff(a, b);
        CHECK(d == -1, "%s: step %d: field %s differs", what, s + 1, d >= 0 && d < METHOD_FIELD_COUNT ? method_field_name(d) : "(steps)");
    }
    /* half a step by passes, the rest by morph_step */
    morph_step(a);
    MorphPassInfo pi;
    for (int k = 0; k < 7; k++) morph_pass_next(b, &pi);
    CHECK(morph_pass_active(b), "%s: a step is under way", what);
    morph_step(b);
    CHECK(!morph_pass_active(b), "%s: morph_step finished it", what);
    CHECK(state_diff(a, b) == -1, "%s: a step finished by morph_step", what);
    /* a reset drops a step under way */
    for (int k = 0; k < 5; k++) morph_pass_next(b, &pi);
    morph_reset(a);
    morph_reset(b);
    CHECK(!morph_pass_active(b) && morph_step_count(b) == 0, "%s: reset", what);
    morph_step(a);
    step_by_pass(b, NULL, 0);
    CHECK(state_diff(a, b) == -1, "%s: after a reset", what);
done:
    morph_free(a);
    morph_free(b);
}

static void test_same_state(void)
{
    SolverParams p;
    method_params_default(&p);
    check_same(&p, "defaults");
    SolverParams q = p;
    q.force = SOLVER_FORCE_FATTAL;
    q.gather = false;
    check_same(&q, "fattal, no gathering");
    SolverParams r = p;
    r.tramp = 0.0f;
    r.arrive = 0.0f; /* untimed: from step 1 */
    r.framp = 0.0f;
    r.set = METHOD_SET(METHOD_PARAM_COUNT) - 1ull;
    r.dt = 0.05f;
    check_same(&r, "no easing, dt 0.05 (several substeps)");
}

/* The outputs read back are the fields the passes wrote. */
static void test_outputs(void)
{
    SolverParams p;
    method_params_default(&p);
    p.arrive = 0.02f; /* arrived by the third step: every pass runs in it */
    Morph *m = make(&p);
    if (!m) return;
    morph_step(m);
    morph_step(m);
    static float a[N], b[N], rho[N];
    MorphPassInfo pi;
    bool seen[METHOD_OUT_COUNT] = {false};
    do {
        morph_pass_next(m, &pi);
        CHECK(morph_pass_read(m, pi.out, a, b) == 0, "read %s after %s", method_out_name(pi.out), pi.name);
        bool finite = true;
        for (int k = 0; k < N; k++) finite &= isfinite(a[k]);
        CHECK(finite, "%s after %s: finite", method_out_name(pi.out), pi.name);
        seen[pi.out] = true;
        if (pi.pass == METHOD_PASS_GATHER_APPLY) {
            morph_read_density(m, rho);
            CHECK(memcmp(rho, a, sizeof rho) == 0, "gather apply wrote the density");
        }
    } while (!pi.last);
    for (int f = 0; f < METHOD_OUT_COUNT; f++)
        CHECK(seen[f], "a default step shows %s", method_out_name((MethodOut)f));
    CHECK(morph_pass_read(m, METHOD_OUT_VELOCITY, a, NULL) < 0, "a vector needs b");
    morph_free(m);
}

/* On a known problem (a random velocity field) the pressure residual after
 * each V-cycle is below the one before, and 3 V-cycles cut it 10-fold. */
static void test_residual_falls(void)
{
    SolverParams p;
    method_params_default(&p);
    p.vcycles = 4;
    Morph *m = make(&p);
    if (!m) return;
    State s;
    state_alloc(&s);
    morph_get_state(m, &s.st);
    unsigned r = 7;
    for (int k = 0; k < N; k++) {
        r = r * 1103515245u + 12345u;
        s.st.solver.field[METHOD_FIELD_VEL_U][k] = k % W ? 0.1f * ((float)(r >> 16 & 0x7fff) / 32768.0f - 0.5f) : 0.0f;
        r = r * 1103515245u + 12345u;
        s.st.solver.field[METHOD_FIELD_VEL_V][k] = k >= W ? 0.1f * ((float)(r >> 16 & 0x7fff) / 32768.0f - 0.5f) : 0.0f;
    }
    morph_set_state(m, &s.st);
    free(s.buf);
    PassbypassPlot plot = {0};
    MorphPassInfo pi;
    double vc[8];
    int nv = 0;
    double r0 = -1.0;
    do {
        morph_pass_next(m, &pi);
        int got = passbypass_record(&plot, m, &pi);
        bool solve = pi.pass == METHOD_PASS_DIVERGENCE || pi.pass == METHOD_PASS_PRESSURE_VCYCLE ||
                     pi.pass == METHOD_PASS_PRESSURE_JACOBI || pi.pass == METHOD_PASS_POTENTIAL_RHS ||
                     pi.pass == METHOD_PASS_POTENTIAL_VCYCLE;
        CHECK(got == (solve ? 1 : 0), "%s: recorded %d", pi.name, got);
        double mx;
        if (pi.pass == METHOD_PASS_DIVERGENCE) morph_pass_residual(m, &r0, NULL);
        if (pi.pass == METHOD_PASS_PRESSURE_VCYCLE && morph_pass_residual(m, &mx, NULL) == 0 && nv < 8)
            vc[nv++] = mx;
        if (!solve) CHECK(morph_pass_residual(m, &mx, NULL) < 0, "no residual after %s", pi.name);
    } while (!pi.last);
    CHECK(nv == 4 && r0 > 0.0, "4 V-cycles (%d), a residual before them (%g)", nv, r0);
    printf("  residual max: %.3g", r0);
    for (int k = 0; k < nv; k++) printf(" -> %.3g", vc[k]);
    printf("\n");
    for (int k = 0; k < nv; k++) CHECK(vc[k] < (k ? vc[k - 1] : r0), "V-cycle %d: %g, before %g", k + 1, vc[k], k ? vc[k - 1] : r0);
    CHECK(nv == 4 && vc[2] < 0.1 * r0, "3 V-cycles: %g of %g", nv == 4 ? vc[2] : 0.0, r0);
    /* the series: the warm start, 4 V-cycles, the Jacobi iterations */
    CHECK(plot.pressure.n == 1 + 4 + p.jacobi, "pressure series %d points", plot.pressure.n);
    CHECK(plot.pressure.max[0] == r0 && plot.pressure.pass[1] == METHOD_PASS_PRESSURE_VCYCLE,
          "the series starts at the warm start");
    CHECK(plot.potential.n == 1 + p.bcycles, "potential series %d points", plot.potential.n);
    /* its log plot: inside the rectangle, the first point highest */
    float xy[2 * PASSBYPASS_SERIES_MAX];
    double lo, hi;
    int n = passbypass_points(&plot.pressure, false, 10, 20, 100, 50, xy, &lo, &hi);
    CHECK(n == plot.pressure.n && lo > 0.0 && hi > lo && lo <= vc[nv - 1] && hi >= r0, "plot range %g..%g", lo, hi);
    bool inside = true;
    for (int k = 0; k < n; k++) inside &= xy[2 * k] >= 10 && xy[2 * k] <= 110 && xy[2 * k + 1] >= 20 && xy[2 * k + 1] <= 70;
    CHECK(inside && xy[0] == 10 && xy[2 * (n - 1)] == 110 && xy[1] > xy[2 * 4 + 1], "plot points");
    /* the next step starts the series again */
    morph_pass_next(m, &pi);
    do morph_pass_next(m, &pi); while (pi.pass != METHOD_PASS_DIVERGENCE);
    passbypass_record(&plot, m, &pi);
    CHECK(plot.pressure.n == 1 && plot.pressure.step == 2, "a new step's series");
    morph_free(m);
}

static void test_label_normalize(void)
{
    MorphPassInfo pi = {.pass = METHOD_PASS_PRESSURE_VCYCLE, .name = "pressure V-cycle", .k = 1, .count = 3,
                        .index = 8, .total = 31, .out = METHOD_OUT_PRESSURE, .step = 3};
    char buf[128];
    passbypass_label(&pi, buf, sizeof buf);
    CHECK(strcmp(buf, "step 3  pass 9/31  pressure V-cycle 2/3 -> pressure") == 0, "label: %s", buf);
    float a[4] = {-2, 0, 1, 2}, b[4] = {0, 0, 0, 0}, o[4];
    double lo, hi;
    passbypass_normalize(METHOD_OUT_PRESSURE, a, NULL, 4, o, &lo, &hi);
    CHECK(o[0] == 0.0f && o[1] == 0.5f && o[2] == 0.75f && o[3] == 1.0f && lo == -2 && hi == 2, "signed");
    passbypass_normalize(METHOD_OUT_DENSITY, b, NULL, 4, o, &lo, &hi);
    CHECK(o[0] == 0.0f && hi == 0.0, "all zero");
    float u[2] = {3, 0}, v[2] = {4, 1};
    passbypass_normalize(METHOD_OUT_VELOCITY, u, v, 2, o, &lo, &hi);
    CHECK(o[0] == 1.0f && fabsf(o[1] - 0.2f) < 1e-6f && hi == 5.0, "vector");
}

/* The force pass's words name the force's noise while it acts (the first
 * 0.6 s of a reshape) and not after its fade. */
static void test_explain_noise(void)
{
    MorphPassInfo pi = {.pass = METHOD_PASS_FORCE, .vf = 0.5f, .rg = 0.0f, .swirl = 2.0f, .noise = 0.3f,
                        .arrive = true};
    char with[512], without[512];
    passbypass_explain(&pi, with, sizeof with);
    pi.noise = 0.0f;
    passbypass_explain(&pi, without, sizeof without);
    printf("  info: with the noise: %s\n  info: after it: %s\n", with, without);
    CHECK(strstr(with, "noise 0.3") && strstr(with, "confinement"), "the force pass's words miss the noise: %s",
          with);
    CHECK(!strstr(without, "noise") && strstr(without, "confinement"), "the noise named after its fade: %s",
          without);
}

int main(void)
{
    shapes();
    RUN(test_order);
    RUN(test_same_state);
    RUN(test_outputs);
    RUN(test_residual_falls);
    RUN(test_label_normalize);
    RUN(test_explain_noise);
    return check_done();
}
