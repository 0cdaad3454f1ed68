/* test_substeps: the transport's substeps follow the flow's actual speed
 * (issue 10 point 5; method.h): the rule itself, the CPU reference taking
 * exactly the count its velocity asks for, a setting whose bound would
 * stall a step (--dt 1 --umax 100) taking only what the flow needs, and
 * every GPU backend (fragment; compute with and without the tiled passes,
 * whose count the GPU makes itself) choosing the CPU's count step by step
 * and ending at the CPU's density. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glctx.h"
#include "cpu_solver.h"
#include "shader.h"
#include "gpu_solver.h"
#include "testlib.h"

#define N 96
#define STEPS 40

static float g_start[N * N], g_target[N * N];

static void shapes(void)
{
    TestlibShape soft = {.domain = true, .width = 0.02};
    testlib_disc(g_start, N, N, &soft, 0.3, 0.65, 0.18, 1.0);
    testlib_box(g_target, N, N, &soft, 0.65, 0.35, 0.2, 0.15, 1.0);
}

/* faster than the defaults, so both stages' bounds are several substeps */
static void params(SolverParams *p)
{
    method_params_default(p);
    p->dt = 0.02f;
}

static void test_rule(void)
{
    float scale = method_speed_scale(0.01f, 1.0f / 256.0f); /* dt/(h·CFL) = 10.24 */
    CHECK(fabsf(scale - 10.24f) < 1e-4f, "speed scale %g, expected 10.24", scale);
    CHECK(method_substeps_for(0.0f, scale, 4) == 1, "no flow: 1 substep");
    CHECK(method_substeps_for(0.05f, scale, 4) == 1, "S·scale 0.51: 1 substep");
    CHECK(method_substeps_for(0.1f, scale, 4) == 2, "S·scale 1.02: 2 substeps");
    CHECK(method_substeps_for(0.36f, scale, 4) == 4, "at the clamp on both axes: the bound");
    CHECK(method_substeps_for(10.0f, scale, 4) == 4, "never above the bound");
    CHECK(method_substeps_for(NAN, scale, 4) == 1, "NaN: 1 (never a huge count)");
    CHECK(method_substeps_for(1e30f, 1e30f, 51200) == 51200, "an overflowing product: the bound");
    /* a cell's speed: the larger |face speed| of each axis, each clamped */
    CHECK(method_cell_speed(-0.1f, 0.05f, 0.02f, -0.03f, 1.0f) == 0.1f + 0.03f, "cell speed");
    CHECK(method_cell_speed(-5.0f, 0.0f, 0.0f, 7.0f, 0.18f) == 0.36f, "cell speed clamped per axis");
    /* ref_pass_speed: walls are 0, interior faces count */
    float u[4 * 3] = {0}, v[4 * 3] = {0};
    u[1 * 4 + 2] = -0.07f; /* the face between cells (1,1) and (2,1) */
    v[2 * 4 + 3] = 0.04f;  /* the face between cells (3,1) and (3,2) */
    u[0] = 9.0f;           /* a wall face: ignored */
    float S = ref_pass_speed(4, 3, 1.0f, u, v);
    CHECK(fabsf(S - 0.07f) < 1e-7f, "ref_pass_speed %g, expected 0.07 (the wall face ignored)", S);
}

/* The CPU takes exactly the count its transport's face speeds (the
 * projected flow, clamped, plus the drift once it runs: what the density's
 * one transport stage moves by, ref_read_motion) ask for, and fewer than the
 * bound once the flow has slowed. */
static void test_cpu_follows_speed(void)
{
    SolverParams p;
    params(&p);
    char err[256];
    RefSolver *r = ref_create(N, N, &p, err, sizeof err);
    CHECK(r != NULL, "ref_create: %s", err);
    if (!r) return;
    ref_set_density(r, g_start);
    ref_set_target(r, g_target, true);
    int bound = method_advect_substeps(N, N, &p), below = 0, above1 = 0, drifted = 0;
    CHECK(bound >= 3, "the test needs a bound of several substeps (got %d)", bound);
    float *mu = malloc(2 * N * N * sizeof(float)), *mv = mu ? mu + N * N : NULL;
    for (int s = 0; mu && s < 300; s++) {
        ref_step(r);
        ref_read_motion(r, mu, mv);
        float cap = method_transport_cap(&p); /* the projected flow as it is */
        float S = ref_pass_speed(N, N, cap, mu, mv);
        drifted += S != ref_pass_speed(N, N, cap, ref_velocity_u(r), ref_velocity_v(r));
        int want = method_substeps_for(S, method_speed_scale(p.dt, 1.0f / N), bound);
        if (ref_substeps(r, 0) != want) {
            CHECK(0, "step %d: %d substeps, the speed %g asks for %d", s + 1, ref_substeps(r, 0), S, want);
            break;
        }
        below += want < bound;
        above1 += want > 1;
    }
    CHECK(below > 0, "the count never fell below the bound (%d) in 300 steps", bound);
    CHECK(above1 > 0, "the count never rose above 1: the test says nothing");
    CHECK(drifted > 0, "the drift never changed the transport's speed: the test says nothing of it");
    CHECK(ref_substeps(r, 1) == -1, "one transport stage: the drift has none of its own (%d)", ref_substeps(r, 1));
    free(mu);
    ref_free(r);
}

/* --dt 1 --umax 100: the bound is 2·1.5·100·1·64/0.25 = 76800 substeps a step
 * (planned for the transport's guard, METHOD_FLOW_GUARD·umax)
 * at 64²; the flow of a morph's first steps is far slower, so it takes a
 * handful (the step does not stall). */
static void test_no_stall(void)
{
    SolverParams p;
    method_params_default(&p);
    p.dt = 1.0f;
    p.umax = 100.0f;
    int n = 64;
    float *a = calloc((size_t)n * n, sizeof(float)), *b = calloc((size_t)n * n, sizeof(float));
    TestlibShape soft = {.domain = true, .width = 0.03};
    testlib_disc(a, n, n, &soft, 0.3, 0.3, 0.15, 1.0);
    testlib_disc(b, n, n, &soft, 0.7, 0.7, 0.15, 1.0);
    char err[256];
    RefSolver *r = ref_create(n, n, &p, err, sizeof err);
    CHECK(r != NULL, "ref_create: %s", err);
    if (r) {
        ref_set_density(r, a);
        ref_set_target(r, b, true);
        int bound = method_advect_substeps(n, n, &p);
        CHECK(bound == 76800, "bound %d, expected 76800", bound);
        ref_step(r); /* the first step: the force is eased in from 0 */
        CHECK(ref_substeps(r, 0) == 1, "first step: %d substeps (the flow starts at rest)", ref_substeps(r, 0));
        ref_step(r);
        float S = ref_pass_speed(n, n, method_transport_cap(&p), ref_velocity_u(r), ref_velocity_v(r));
        int want = method_substeps_for(S, method_speed_scale(p.dt, 1.0f / n), bound);
        CHECK(ref_substeps(r, 0) == want && want < bound / 10,
              "second step: %d substeps (speed %g asks %d of the bound %d)", ref_substeps(r, 0), S, want,
              bound);
        ref_free(r);
    }
    free(a);
    free(b);
}


/* A GPU backend chooses the CPU's count at every step and ends where the
 * CPU does. */
static void gpu_agrees(const char *dir, SolverKind kind, const char *tiles, const char *label)
{
    SolverOptions o = {.tiles = strcmp(tiles, "1") == 0 ? 1 : 2}; /* --compute-tiles on | off */
    SolverParams p;
    params(&p);
    char err[1024];
    Solver *s = solver_create_opts(N, N, &p, &o, kind, dir, err, sizeof err);
    RefSolver *r = ref_create(N, N, &p, err, sizeof err);
    CHECK(s != NULL && r != NULL, "%s: create: %s", label, err);
    float *rho = malloc(N * N * sizeof(float));
    if (s && r && rho) {
        solver_set_density(s, g_start);
        solver_set_target(s, g_target, true);
        ref_set_density(r, g_start);
        ref_set_target(r, g_target, true);
        int differ = 0, varied = 0, first = -1;
        for (int k = 0; k < STEPS; k++) {
            CHECK(solver_step(s) == 0, "%s: step %d", label, k + 1);
            ref_step(r);
            int a = solver_substeps(s, 0), b = ref_substeps(r, 0);
            if (a != b) {
                differ++;
                if (first < 0) first = k + 1;
            }
            varied += b > 1;
        }
        CHECK(differ == 0, "%s: %d stage counts differ from the CPU's (first at step %d)", label, differ, first);
        CHECK(varied > 0, "%s: the density's count never rose above 1: the check says nothing", label);
        CHECK(solver_read_density(s, rho) == 0, "%s: read back", label);
        double e = testlib_rel_l2(rho, ref_density(r), (size_t)N * N);
        CHECK(e < 1e-4, "%s: density after %d steps: rel L2 %.3g from the CPU's", label, STEPS, e);
    }
    free(rho);
    solver_free(s);
    ref_free(r);
}

static char g_dir[4096];

static void test_gpu_fragment(void) { gpu_agrees(g_dir, SOLVER_FRAGMENT, "0", "fragment"); }
static void test_gpu_compute(void) { gpu_agrees(g_dir, SOLVER_COMPUTE, "0", "compute"); }
static void test_gpu_compute_tiled(void)
{
    gpu_agrees(g_dir, SOLVER_COMPUTE, "1", "compute, tiled (the GPU's own count)");
}

int main(int argc, char **argv)
{
    (void)argc;
    shapes();
    RUN(test_rule);
    RUN(test_cpu_follows_speed);
    RUN(test_no_stall);
    char err[1024];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) TESTLIB_NO_GL(3, 3, "no headless GL context: %s", err);
    if (!ctx) return check_done();
    int rc = shader_find_dir(NULL, argv[0], g_dir, sizeof g_dir, err, sizeof err);
    CHECK(rc == 0, "shader dir: %s", err);
    if (rc != 0) return check_done();
    RUN(test_gpu_fragment);
    if (shader_compute_available()) {
        RUN(test_gpu_compute);
        RUN(test_gpu_compute_tiled);
    } else {
        TESTLIB_NO_GL(4, 3, "compute backend: this context has OpenGL %s", glctx_version(ctx));
    }
    glctx_destroy(ctx);
    return check_done();
}
