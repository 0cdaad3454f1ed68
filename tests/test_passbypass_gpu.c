/* test_passbypass_gpu: the pass-by-pass mode on the GPU backends (tier 2:
 * headless GL, llvmpipe in CI): every pass of a step run one by one gives
 * morph_step's state within 1e-6 (of each field's largest value), and after
 * each pass the field it wrote, read back, agrees with the CPU reference's
 * within 1e-4 relative L2 (as test_gpu_passes's passes do), with the
 * compute backend's tiled passes (--compute-tiles 1) and without.
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

#define W 48
#define H 40
#define N (W * H)

static char g_dir[4096];
static float start[N], target[N];
static SolverOptions g_opts; /* --compute-tiles: main sets it for each backend */

static Morph *make(MorphBackend be, const SolverParams *p)
{
    char err[512] = "";
    Morph *m = morph_create_opts(W, H, p, &g_opts, start, target, true, be, g_dir, err, sizeof err);
    CHECK(m != NULL, "morph_create (%s): %s", morph_backend_name(be), err);
    return m;
}

typedef TestlibState State;

static bool state_read(Morph *m, State *s) { return testlib_state_read(m, (size_t)N, s); }

/* the largest |a − b| of any field over that field's largest |a| */
static double state_gap(State *a, State *b, int *worst)
{
    double g = 0.0;
    for (int f = 0; f < METHOD_FIELD_COUNT; f++) {
        double d = 0.0, mx = 0.0;
        for (int k = 0; k < N; k++) {
            double x = a->st.solver.field[f][k], y = b->st.solver.field[f][k];
            if (fabs(x - y) > d) d = fabs(x - y);
            if (fabs(x) > mx) mx = fabs(x);
        }
        double r = mx > 0.0 ? d / mx : d;
        if (r > g) g = r, *worst = f;
    }
    return g;
}

static double rel_l2(const float *a, const float *b) { return testlib_rel_l2(a, b, (size_t)N); }

static void check_same(MorphBackend be, const SolverParams *p, const char *what)
{
    Morph *a = make(be, p), *b = make(be, p);
    State x = {0}, y = {0};
    if (!a || !b) goto done;
    double worst = 0.0;
    int wf = 0;
    for (int s = 0; s < 5; s++) {
        morph_step(a);
        MorphPassInfo pi;
        int n = 0;
        do CHECK(morph_pass_next(b, &pi) == 0, "%s: pass %d", what, n);
        while (!pi.last && ++n < 10000);
        CHECK(state_read(a, &x) && state_read(b, &y), "%s: read the states", what);
        int f = 0;
        double g = state_gap(&x, &y, &f);
        if (g > worst) worst = g, wf = f;
        CHECK(g <= 1e-6, "%s: step %d: %s differs by %.3g of its largest value", what, s + 1,
              method_field_name(f), g);
        CHECK(morph_step_count(a) == morph_step_count(b), "%s: step counts", what);
    }
    printf("  %s: pass by pass against whole steps: largest gap %.3g (%s)\n", what, worst,
           method_field_name(wf));
done:
    free(x.buf);
    free(y.buf);
    morph_free(a);
    morph_free(b);
}

/* After every pass of 3 steps, the field it wrote on the GPU against the CPU's. */
static void check_outputs(MorphBackend be, const SolverParams *p, const char *what)
{
    Morph *g = make(be, p), *c = make(MORPH_CPU, p);
    static float ga[N], gb[N], ca[N], cb[N];
    if (!g || !c) goto done;
    double worst = 0.0, r0 = 0.0;
    for (int s = 0; s < 3; s++) {
        MorphPassInfo pg, pc;
        do {
            if (morph_pass_next(g, &pg) < 0 || morph_pass_next(c, &pc) < 0) goto done;
            CHECK(pg.pass == pc.pass && pg.k == pc.k && pg.count == pc.count, "%s: %s %d/%d on the GPU, %s %d/%d on the CPU",
                  what, pg.name, pg.k + 1, pg.count, pc.name, pc.k + 1, pc.count);
            if (pg.pass != pc.pass) goto done;
            CHECK(morph_pass_read(g, pg.out, ga, gb) == 0 && morph_pass_read(c, pc.out, ca, cb) == 0, "%s: read", what);
            double e = rel_l2(ga, ca);
            if (method_out_is_vector(pg.out)) e = fmax(e, rel_l2(gb, cb));
            if (e > worst) worst = e;
            CHECK(e <= 1e-4, "%s: step %d, after %s %d/%d: %s differs by %.3g", what, s + 1, pg.name, pg.k + 1,
                  pg.count, method_out_name(pg.out), e);
            /* the residual: within 1e-3 of the solve's first (a converged
             * residual is float rounding, which the two backends round apart) */
            double rg, rc;
            bool hg = morph_pass_residual(g, &rg, NULL) == 0, hc = morph_pass_residual(c, &rc, NULL) == 0;
            if (pg.pass == METHOD_PASS_DIVERGENCE || pg.pass == METHOD_PASS_POTENTIAL_RHS) r0 = rc;
            CHECK(hg == hc && (!hg || fabs(rg - rc) <= 1e-3 * r0), "%s: after %s: residual %g, CPU %g (first %g)",
                  what, pg.name, hg ? rg : -1.0, hc ? rc : -1.0, r0);
        } while (!pg.last);
    }
    printf("  %s: each pass's output against the CPU's: largest relative L2 %.3g\n", what, worst);
done:
    morph_free(g);
    morph_free(c);
}

static bool transport(MethodPass p) { return p == METHOD_PASS_ADVECT_DENSITY; }

/* Adding smoke between two substeps of a transport stage (a
 * right-drag while stepping pass by pass): the smoke is added, as after a
 * whole step. Mid-step the tiled compute backend keeps ρ in a substep field,
 * and a splat into the density field was overwritten by the next substep. */
static void check_splat_mid_step(MorphBackend be, const SolverParams *p, const char *what)
{
    Morph *a = make(be, p), *b = make(be, p);
    if (!a || !b) goto done;
    MorphPassInfo pi = {0};
    int guard = 0;
    do {
        CHECK(morph_pass_next(a, &pi) == 0, "%s: a pass", what);
    } while (!(transport(pi.pass) && pi.k + 1 < pi.count) && !pi.last && ++guard < 1000);
    CHECK(transport(pi.pass) && pi.k + 1 < pi.count,
          "%s: stopped inside a transport stage (pass %s, %d of %d)", what, pi.name, pi.k + 1, pi.count);
    CHECK(morph_splat_density(a, 20.0f, 20.0f, 0.5f, 3.0f) == 0, "%s: add smoke mid-step", what);
    CHECK(morph_step_count(a) == 1, "%s: the splat finished the step begun", what);
    CHECK(morph_step(b) == 0 && morph_splat_density(b, 20.0f, 20.0f, 0.5f, 3.0f) == 0, "%s: a step, then smoke",
          what);
    double ma = 0.0, mb = 0.0, m0 = 0.0;
    morph_metrics(a, &ma, NULL, NULL);
    morph_metrics(b, &mb, NULL, NULL);
    for (int k = 0; k < N; k++) m0 += start[k];
    CHECK(fabs(ma - mb) <= 1e-4 * mb && ma > m0 + 1.0, "%s: mass %g with the splat mid-step, %g after the step "
          "(%g before)", what, ma, mb, m0);
done:
    morph_free(a);
    morph_free(b);
}

int main(int argc, char **argv)
{
    (void)argc;
    TestlibShape sh = {.domain = true, .width = 0.02};
    testlib_disc(start, W, H, &sh, 0.35, 0.4, 0.2, 1.0);
    testlib_box(target, W, H, &sh, 0.8, 0.5, 0.18, 0.25, 1.0);
    GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
    if (!ctx) return check_done();
    SolverParams p, q;
    method_params_default(&p);
    q = p;
    q.tramp = q.framp = 0.0f; /* gathering and the drift from step 1, several substeps */
    q.arrive = 0.0f; /* untimed: from step 1 */
    q.dt = 0.04f;
    const char *only = getenv("TEST_GPU_BACKEND");
    static const MorphBackend be[] = {MORPH_FRAGMENT, MORPH_COMPUTE, MORPH_COMPUTE};
    for (int k = 0; k < 3; k++) {
        if (only && strcmp(only, morph_backend_name(be[k])) != 0) continue;
        if (be[k] == MORPH_COMPUTE && !shader_compute_available()) {
            TESTLIB_NO_GL(4, 3, "compute backend: OpenGL %s, compute needs 4.3", glctx_version(ctx));
            break;
        }
        g_opts.tiles = k == 2 ? 1 : 2; /* --compute-tiles on | off */
        char what[64];
        snprintf(what, sizeof what, "%s%s", morph_backend_name(be[k]), k == 2 ? " (tiled)" : "");
        char w2[96];
        snprintf(w2, sizeof w2, "%s, defaults", what);
        check_same(be[k], &p, w2);
        snprintf(w2, sizeof w2, "%s, no easing, dt 0.04", what);
        check_same(be[k], &q, w2);
        check_outputs(be[k], &q, what);
        check_splat_mid_step(be[k], &q, what);
    }
    glctx_destroy(ctx);
    return check_done();
}
