/* test_schedule_gpu: a schedule with sources and a moving key on the GPU
 * backends against the CPU reference (tier 2: headless GL, llvmpipe in
 * CI): the density, the target and the mass after every few steps agree
 * within 1e-4 relative L2, as test_gpu_passes's whole steps do.
 * TEST_GPU_BACKEND=fragment or compute runs one backend only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testgl.h"
#include "glctx.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"

#define TOL 1e-4
#define W 48
#define H 40
#define N (W * H)
#define STEPS 24

static char g_dir[4096];
static float start[N], square[N], disc[N], puff[N];

static double rel_l2(const float *a, const float *b) { return testlib_rel_l2(a, b, (size_t)N); }

typedef TestlibState State;

static bool state_read(Morph *m, State *s) { return testlib_state_read(m, (size_t)N, s); }

static Morph *make(MorphBackend b)
{
    SolverParams p;
    method_params_default(&p);
    char err[512] = "";
    SolverOptions o = {.tiles = 1}; /* the tiled passes, as test_gpu_passes */
    Morph *m = morph_create_opts(W, H, &p, &o, start, square, true, b, g_dir, err, sizeof err);
    CHECK(m != NULL, "morph_create (%s): %s", morph_backend_name(b), err);
    if (!m) return NULL;
    /* key 1 still; key 2 (steps 7..18) moves and grows; key 3 after;
     * an image source across keys 1 and 2, a disc inside key 2 and 3 */
    SolverParams p2 = p;
    p2.vf = p.vf * 1.5f;
    MorphKey keys[3] = {{.step = 6, .target = square},
                        {.step = 18, .target = disc, .params = &p2, .move_from = {0.15f, -0.05f},
                         .move_to = {-0.1f, 0.08f}, .scale_from = 0.7f, .scale_to = 1.1f},
                        {.step = 30, .target = square}};
    MorphSource src[2] = {{.image = puff, .rate = 2.0f, .from = 2, .to = 12},
                          {.cx = 0.8f, .cy = 0.6f, .radius = 0.1f, .rate = 1.5f, .from = 8, .to = 22}};
    CHECK(morph_set_schedule(m, keys, 3, src, 2, err, sizeof err) == 0, "set_schedule (%s): %s",
          morph_backend_name(b), err);
    return m;
}

static void test_schedule_agrees(MorphBackend backend)
{
    Morph *c = make(MORPH_CPU), *g = make(backend);
    State sc = {0}, sg = {0};
    if (!c || !g) goto done;
    const char *name = morph_backend_name(backend);
    for (int step = 1; step <= STEPS; step++) {
        CHECK(morph_step(c) == 0 && morph_step(g) == 0, "%s: step %d", name, step);
        if (step % 3 && step != 7 && step != 18) continue;
        if (!state_read(c, &sc) || !state_read(g, &sg)) {
            CHECK(false, "%s: reading the state at step %d", name, step);
            break;
        }
        const float *const *fc = (const float *const *)sc.st.solver.field;
        const float *const *fg = (const float *const *)sg.st.solver.field;
        double ed = rel_l2(fg[METHOD_FIELD_DENSITY], fc[METHOD_FIELD_DENSITY]);
        double et = rel_l2(fg[METHOD_FIELD_TARGET], fc[METHOD_FIELD_TARGET]);
        double eb = rel_l2(fg[METHOD_FIELD_TARGET_BLUR], fc[METHOD_FIELD_TARGET_BLUR]);
        CHECK(ed <= TOL, "%s, step %d: density rel L2 %.3g", name, step, ed);
        CHECK(et <= TOL && eb <= TOL, "%s, step %d: target rel L2 %.3g, blurred %.3g", name, step, et, eb);
        double mc, mg;
        morph_metrics(c, &mc, NULL, NULL);
        morph_metrics(g, &mg, NULL, NULL);
        CHECK(fabs(mg - mc) <= 1e-5 * mc, "%s, step %d: mass %.9g, the CPU's %.9g", name, step, mg, mc);
    }
done:
    free(sc.buf);
    free(sg.buf);
    morph_free(c);
    morph_free(g);
}

static void test_fragment(void) { test_schedule_agrees(MORPH_FRAGMENT); }
static void test_compute(void) { test_schedule_agrees(MORPH_COMPUTE); }

int main(int argc, char **argv)
{
    (void)argc;
    static const TestlibShape s = {.domain = true, .width = 0.05};
    testlib_disc(start, W, H, &s, 0.4, 0.5, 0.22, 1.0);
    testlib_box(square, W, H, &s, 0.75, 0.45, 0.2, 0.2, 1.0);
    testlib_disc(disc, W, H, &s, 0.6, 0.5, 0.2, 1.0);
    testlib_disc(puff, W, H, &s, 0.3, 0.3, 0.1, 0.5);
    GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
    if (!ctx) return check_done();
    const char *only = getenv("TEST_GPU_BACKEND");
    if (!only || strcmp(only, "fragment") == 0) RUN(test_fragment);
    if (!only || strcmp(only, "compute") == 0) {
        if (shader_compute_available()) RUN(test_compute);
        else TESTLIB_NO_GL(4, 3, "compute backend: this context has OpenGL %s, compute needs 4.3", glctx_version(ctx));
    }
    glctx_destroy(ctx);
    return check_done();
}
