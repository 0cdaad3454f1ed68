/* GPU passes against the CPU reference (tier 2: headless GL, llvmpipe in CI).
 * Every fragment pass is fed the same random fields as its cpu_solver
 * counterpart and must agree within 1e-4 relative L2; then 20 whole steps of
 * a morph; then mass over a 2,000-step GPU morph; then the bundled morph at
 * 128² and 512² alike. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testgl.h"
#include "glctx.h"
#include "image.h"
#include "fidelity.h"
#include "cpu_solver.h"
#include "shader.h"
#include "gpu_solver.h"
#include "gpu_solver_debug.h"

#define TOL 1e-4

static char g_dir[4096];
static SolverKind g_kind = SOLVER_FRAGMENT;
/* the compute backend's tiled passes (what it runs on a GPU), which a
 * software renderer would otherwise leave out (solver_tiles_wanted) */
static SolverOptions g_opts = {.tiles = 1};
static int W = 64, H = 48;

static uint32_t rng = 12345u;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (float)(rng & 0xffffff) / (float)0x1000000;
}

/* relative L2 of a against reference b, over n values with stride */
static double rel_l2(const float *a, const float *b, size_t n, int stride_a, int stride_b)
{
    double num = 0.0, den = 0.0;
    for (size_t k = 0; k < n; k++) {
        double d = (double)a[k * stride_a] - b[k * stride_b];
        num += d * d;
        den += (double)b[k * stride_b] * b[k * stride_b];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

typedef struct {
    float *rho, *tgt, *tb, *u, *v, *p, *div, *e;
    float *dens4, *vel4;
} Fields;

static void fields_random(Fields *f, float vel_scale)
{
    size_t n = (size_t)W * H;
    f->rho = malloc(n * 4); f->tgt = malloc(n * 4); f->tb = malloc(n * 4);
    f->u = malloc(n * 4); f->v = malloc(n * 4); f->p = malloc(n * 4);
    f->div = malloc(n * 4); f->e = malloc(n * 4);
    f->dens4 = calloc(n * 4, 4); f->vel4 = calloc(n * 4, 4);
    for (size_t k = 0; k < n; k++) {
        /* densities with exact zeros in places, as smoke has */
        f->rho[k] = frand() < 0.2f ? 0.0f : frand();
        f->tgt[k] = frand() < 0.2f ? 0.0f : frand();
        f->tb[k] = 0.01f + frand();
        f->u[k] = (frand() - 0.5f) * vel_scale;
        f->v[k] = (frand() - 0.5f) * vel_scale;
        f->p[k] = frand() - 0.5f;
        f->div[k] = (frand() - 0.5f) * 10.0f;
        f->e[k] = frand() - 0.5f;
        f->dens4[4 * k] = f->rho[k];
        f->dens4[4 * k + 1] = f->tgt[k];
        f->dens4[4 * k + 2] = f->tb[k];
        f->vel4[4 * k] = f->u[k];
        f->vel4[4 * k + 1] = f->v[k];
    }
}

static void fields_free(Fields *f)
{
    float *all[] = {f->rho, f->tgt, f->tb, f->u, f->v, f->p, f->div, f->e, f->dens4, f->vel4};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
}

static Solver *make_solver_size(int w, int h, const SolverParams *p)
{
    char err[1024];
    Solver *s = solver_create_opts(w, h, p, &g_opts, g_kind, g_dir, err, sizeof err);
    CHECK(s != NULL, "solver_create: %s", err);
    return s;
}

static Solver *make_solver(const SolverParams *p) { return make_solver_size(W, H, p); }

static void upload_all(Solver *s, const Fields *f)
{
    CHECK(solver_debug_upload(s, SOLVER_FIELD_DENSITY, f->dens4) == 0, "upload density");
    CHECK(solver_debug_upload(s, SOLVER_FIELD_VELOCITY, f->vel4) == 0, "upload velocity");
    CHECK(solver_debug_upload(s, SOLVER_FIELD_PRESSURE, f->p) == 0, "upload pressure");
    CHECK(solver_debug_upload(s, SOLVER_FIELD_GATHER_E, f->e) == 0, "upload e");
}

static void check_vel(Solver *s, const float *u, const float *v, const char *what)
{
    size_t n = (size_t)W * H;
    float *g = malloc(n * 16);
    solver_debug_read(s, SOLVER_FIELD_VELOCITY, g);
    double eu = rel_l2(g, u, n, 4, 1), ev = rel_l2(g + 1, v, n, 4, 1);
    CHECK(eu <= TOL && ev <= TOL, "%s: velocity rel L2 u %.3g v %.3g (tolerance %g)", what, eu, ev, TOL);
    printf("  %-26s rel L2 u %.2e v %.2e\n", what, eu, ev);
    free(g);
}

static void check_scalar(Solver *s, SolverField fld, int channels, const float *ref, size_t n,
                         const char *what)
{
    float *g = malloc(n * 4 * (size_t)channels);
    solver_debug_read(s, fld, g);
    double e = rel_l2(g, ref, n, channels, 1);
    CHECK(e <= TOL, "%s: rel L2 %.3g (tolerance %g)", what, e, TOL);
    printf("  %-26s rel L2 %.2e\n", what, e);
    free(g);
}

static void test_passes_one(float sigma)
{
    SolverParams p;
    method_params_default(&p);
    p.sigma = sigma;
    p.dt = 0.02f;
    p.coarse = 1.0f; /* each pass at this sigma (the schedule: whole_steps, "coarse to fine") */
    Fields f;
    fields_random(&f, 0.6f);
    size_t n = (size_t)W * H;
    Solver *s = make_solver(&p);
    if (!s) return;
    BlurSpec bs;
    method_blur_spec(W, H, p.sigma, &bs);
    printf("  sigma %g: blur factor %d, coarse %dx%d, radius %d\n", (double)sigma, bs.factor, bs.cw,
           bs.ch, bs.radius);
    size_t nc = (size_t)bs.cw * bs.ch;
    float *c0 = malloc(nc * 4), *c1 = malloc(nc * 4);
    float *o0 = malloc(n * 4), *o1 = malloc(n * 4);

    /* blur of ρ on the coarse grid */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_BLUR_DENSITY, false);
    ref_pass_downsample(W, H, &bs, f.rho, c0);
    ref_pass_blur_1d(&bs, 0, c0, c1);
    ref_pass_blur_1d(&bs, 1, c1, c0);
    check_scalar(s, SOLVER_FIELD_RHO_BLUR, 1, c0, nc, "blur (coarse rho~)");

    /* driving force + damping (after the same blur) */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_FORCE, false);
    if (p.force == SOLVER_FORCE_BALANCE) { /* pass by pass needs φ: see whole_steps */
        SolverParams pf = p;
        pf.force = SOLVER_FORCE_FATTAL;
        solver_set_params(s, &pf);
        upload_all(s, &f);
        solver_debug_pass(s, SOLVER_PASS_FORCE, false);
        solver_set_params(s, &p);
    }
    /* with the confinement (the default swirl) on the smoothed curl */
    float *curl = malloc((size_t)(W + 1) * (H + 1) * 4), *ctmp = malloc((size_t)(W + 1) * (H + 1) * 4);
    ref_swirl_curl(W, H, f.u, f.v, curl, ctmp);
    ref_pass_force(W, H, &p, &bs, c0, f.tb, NULL, 0.0f, 0.0f /* a single pass: unfaded, no noise */, p.swirl > 0.0f ? curl : NULL, f.u, f.v, o0, o1);
    check_vel(s, o0, o1, "force + damping");
    free(curl);
    free(ctmp);

    /* velocity advection */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_ADVECT_VEL, false);
    ref_pass_advect_vel(W, H, p.dt, f.u, f.v, o0, o1);
    check_vel(s, o0, o1, "advect velocity");

    /* divergence */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_DIVERGENCE, false);
    ref_pass_divergence(W, H, f.u, f.v, o0);
    check_scalar(s, SOLVER_FIELD_DIVERGENCE, 1, o0, n, "divergence");

    /* one Jacobi iteration, from a known divergence */
    upload_all(s, &f);
    solver_debug_upload(s, SOLVER_FIELD_DIVERGENCE, f.div);
    solver_debug_pass(s, SOLVER_PASS_JACOBI, false);
    ref_pass_jacobi(W, H, f.p, f.div, o0);
    check_scalar(s, SOLVER_FIELD_PRESSURE, 1, o0, n, "jacobi");

    /* gradient subtraction */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_SUBTRACT_GRAD, false);
    ref_pass_subtract_grad(W, H, f.p, f.u, f.v, o0, o1);
    check_vel(s, o0, o1, "subtract gradient");

    /* density transport: the substeps its speed asks for (method.h) */
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_ADVECT_DENSITY, false);
    float tcap = method_transport_cap(&p); /* the projected flow as it is: a guard only */
    int ns = method_substeps_for(ref_pass_speed(W, H, tcap, f.u, f.v),
                                 method_speed_scale(p.dt, 1.0f / (float)(W < H ? W : H)),
                                 method_advect_substeps(W, H, &p));
    {
        float *r0 = malloc(n * sizeof(float));
        memcpy(r0, f.rho, n * sizeof(float));
        for (int k = 0; k < ns; k++) {
            ref_pass_advect_ratio(W, H, p.dt / (float)ns, tcap, f.u, f.v, r0, o1);
            ref_pass_advect_apply(W, H, p.dt / (float)ns, tcap, f.u, f.v, r0, o1, o0);
            memcpy(r0, o0, n * sizeof(float));
        }
        free(r0);
    }
    if (solver_kind(s) == SOLVER_FRAGMENT) /* compute: one tiled dispatch keeps no ratios */
        check_scalar(s, SOLVER_FIELD_RATIO, 1, o1, n, "advect ratio");
    check_scalar(s, SOLVER_FIELD_DENSITY, 4, o0, n, "advect density");

    /* gathering: first Jacobi iteration (from ρ − ρ*), a later one, apply */
    float hh = 1.0f / (float)(W < H ? W : H);
    float a = p.dt * 50.0f / (hh * hh); /* a stiff v_g, as implicit must cope */
    p.vg = 50.0f;
    solver_set_params(s, &p);
    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_GATHER_JACOBI, true);
    memset(o1, 0, n * sizeof *o1); /* the first iteration starts from e = 0 */
    ref_pass_gather_jacobi(W, H, a, f.rho, f.tgt, f.tb, o1, o0);
    check_scalar(s, SOLVER_FIELD_GATHER_E, 1, o0, n, "gather jacobi (first)");

    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_GATHER_JACOBI, false);
    ref_pass_gather_jacobi(W, H, a, f.rho, f.tgt, f.tb, f.e, o0);
    check_scalar(s, SOLVER_FIELD_GATHER_E, 1, o0, n, "gather jacobi");

    upload_all(s, &f);
    solver_debug_pass(s, SOLVER_PASS_GATHER_APPLY, false);
    ref_pass_gather_apply(W, H, a, f.rho, f.tb, f.e, o0);
    check_scalar(s, SOLVER_FIELD_DENSITY, 4, o0, n, "gather apply");

    /* the drift's face speeds: log-ratio and balance drift, from a given φ
     * (the target set through solver_set_target for the density scale) */
    p.vk = 0.001f;
    p.vw = 300.0f;
    p.wmax = 0.5f; /* some faces at the cap, most not */
    p.umax = 100.0f; /* the flow's limit far off: the cap's test */
    float *phi = malloc(n * 4);
    /* drift speeds of order the cap: kw·∂φ ∝ 1/h */
    float phs = 4e-6f * 48.0f / (float)(W < H ? W : H);
    for (size_t k = 0; k < n; k++) phi[k] = f.div[k] * phs;
    solver_set_params(s, &p);
    CHECK(solver_set_target(s, f.tgt, false) == 0, "set target");
    upload_all(s, &f);
    CHECK(solver_debug_upload(s, SOLVER_FIELD_POTENTIAL, phi) == 0, "upload phi");
    solver_debug_pass(s, SOLVER_PASS_DRIFT_VEL, false);
    double st = 0.0, st2 = 0.0;
    for (size_t k = 0; k < n; k++) st += f.tgt[k], st2 += (double)f.tgt[k] * f.tgt[k];
    float dscale = (float)(st2 / st);
    ref_pass_drift_vel(W, H, &p, &bs, phi, c0, f.tb, dscale, 1.0f, f.u, f.v, o0, o1);
    {
        float *g = malloc(n * 16);
        solver_debug_read(s, SOLVER_FIELD_DRIFT, g);
        double eu = rel_l2(g, o0, n, 4, 1), ev = rel_l2(g + 1, o1, n, 4, 1);
        /* the faces the cap changed: against the same speeds uncapped */
        SolverParams pu = p;
        pu.wmax = 1e30f;
        float *ru = malloc(n * 4), *rv = malloc(n * 4);
        ref_pass_drift_vel(W, H, &pu, &bs, phi, c0, f.tb, dscale, 1.0f, f.u, f.v, ru, rv);
        int capped = 0;
        for (size_t k = 0; k < n; k++) capped += fabsf(o0[k]) < fabsf(ru[k]) * (1.0f - 1e-6f);
        printf("  %-26s rel L2 u %.2e v %.2e (%d of %zu x faces at the cap)\n", "drift face speeds", eu,
               ev, capped, n);
        CHECK(eu <= TOL && ev <= TOL, "drift face speeds: rel L2 u %.3g v %.3g", eu, ev);
        CHECK(capped > 0 && capped < (int)n / 2, "drift: %d of %zu faces capped", capped, n);
        /* without the balance drift the speeds differ: the test sees φ */
        SolverParams p0 = p;
        p0.vw = 0.0f;
        ref_pass_drift_vel(W, H, &p0, &bs, phi, c0, f.tb, dscale, 1.0f, f.u, f.v, o0, o1);
        double d = rel_l2(g, o0, n, 4, 1);
        CHECK(d > 100 * TOL, "drift: the balance drift changes the speeds only by %.3g", d);
        /* the flow's limit: with umax at the drift's cap, the flow's
         * envelope (its blurred mean ± its spread, METHOD_FLOW_ENV_K) holds
         * some faces' drift back and leaves others whole, the same on the
         * GPU (at a quarter of the cap the random flow's spread took every
         * face's drift to 0, and the comparison saw nothing) */
        SolverParams pl = p;
        pl.umax = p.wmax;
        solver_set_params(s, &pl);
        solver_debug_pass(s, SOLVER_PASS_DRIFT_VEL, false);
        solver_debug_read(s, SOLVER_FIELD_DRIFT, g);
        ref_pass_drift_vel(W, H, &pl, &bs, phi, c0, f.tb, dscale, 1.0f, f.u, f.v, o0, o1);
        eu = rel_l2(g, o0, n, 4, 1);
        ev = rel_l2(g + 1, o1, n, 4, 1);
        ref_pass_drift_vel(W, H, &pl, &bs, phi, c0, f.tb, dscale, 1.0f, NULL, NULL, ru, rv);
        int limited = 0, moving = 0;
        float fcap = method_transport_cap(&pl);
        for (size_t k = 0; k < n; k++) {
            float added = o0[k] - fminf(fmaxf(f.u[k], -fcap), fcap); /* the drift the limit let through */
            limited += fabsf(added - ru[k]) > 1e-6f;
            moving += fabsf(added) > 1e-6f;
        }
        printf("  %-26s rel L2 u %.2e v %.2e (%d of %zu x faces limited by the flow, %d with a drift)\n",
               "drift within the flow", eu, ev, limited, n, moving);
        CHECK(eu <= TOL && ev <= TOL, "drift within the flow's limit: rel L2 u %.3g v %.3g", eu, ev);
        CHECK(limited > 0 && moving > (int)n / 10, "drift: the flow's limit changed %d faces, %d with a drift",
              limited, moving);
        solver_set_params(s, &p);
        free(ru);
        free(rv);
        free(g);
    }
    free(phi);

    free(c0); free(c1); free(o0); free(o1);
    fields_free(&f);
    solver_free(s);
}

static void test_passes(void)
{
    test_passes_one(0.04f); /* factor 1 at this size */
    test_passes_one(0.12f); /* a coarse blur grid */
    test_passes_one(1.0f);  /* factor 16: the downsampling in two dispatches (8 x 8 sums) */
}

/* a smooth disc and a box, in domain units */
/* with shapes_line, the start also has a line one cell wide beside the disc */
static bool shapes_line = false;

static void shapes(float *start, float *target)
{
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            float x = ((float)i + 0.5f) / (float)H, y = ((float)j + 0.5f) / (float)H;
            float d = sqrtf((x - 0.45f) * (x - 0.45f) + (y - 0.7f) * (y - 0.7f));
            start[j * W + i] = fminf(1.0f, fmaxf(0.0f, (0.2f - d) * 40.0f));
            if (shapes_line && i == W / 5 && y > 0.4f && y < 0.95f) start[j * W + i] = 1.0f;
            target[j * W + i] = (fabsf(x - 0.75f) < 0.2f && fabsf(y - 0.4f) < 0.25f) ? 1.0f : 0.0f;
        }
}

/* The CPU's velocity after 20 steps differs between parameters a and b, so
 * that whole_steps' agreement with the CPU sees what a setting changes. */
static void cpu_differs(const SolverParams *a, const SolverParams *b, const char *what)
{
    size_t n = (size_t)W * H;
    float *start = malloc(n * 4), *target = malloc(n * 4);
    const SolverParams *ps[2] = {a, b};
    char err[512];
    RefSolver *r[2] = {NULL, NULL};
    if (!start || !target) goto done;
    shapes(start, target);
    for (int k = 0; k < 2; k++) {
        r[k] = ref_create(W, H, ps[k], err, sizeof err);
        if (!r[k]) goto done;
        ref_set_density(r[k], start);
        ref_set_target(r[k], target, true);
        for (int s = 0; s < 20; s++) ref_step(r[k]);
    }
    double d = rel_l2(ref_velocity_u(r[1]), ref_velocity_u(r[0]), n, 1, 1);
    CHECK(d > 100 * TOL, "%s changes the CPU's velocity after 20 steps only by %.3g", what, d);
done:
    for (int k = 0; k < 2; k++)
        if (r[k]) ref_free(r[k]);
    free(start);
    free(target);
}

/* attract 0 and 1 differ: the cases of whole_steps see the GPU's u_attract */
static void attract_matters(void)
{
    SolverParams a, b;
    method_params_default(&a);
    b = a;
    a.attract = 0.0f;
    b.attract = 1.0f;
    cpu_differs(&a, &b, "attract 1");
}

/* the drift's wait changes a compression's first 20 steps: whole_steps'
 * cases see rd in the force and the drift */
static void wait_matters(void)
{
    SolverParams a, b;
    method_params_default(&a);
    a.attract = 1.0f;
    a.arrive = 0.0f;
    a.tramp = 0.0f;
    a.framp = 0.0f;
    b = a;
    b.drift_wait = 0.1f;
    cpu_differs(&a, &b, "a drift wait of 0.1 s");
}

/* the coarse start differs from none: whole_steps' cases see the schedule */
static void coarse_matters(void)
{
    SolverParams a, b;
    method_params_default(&a);
    b = a;
    a.coarse = 1.0f;
    b.coarse = 3.0f;
    cpu_differs(&a, &b, "coarse 3");
}

static void whole_steps(const SolverParams *pp, const char *what)
{
    SolverParams p = *pp;
    size_t n = (size_t)W * H;
    float *start = malloc(n * 4), *target = malloc(n * 4);
    float *g = malloc(n * 4), *gu = malloc(n * 4), *gv = malloc(n * 4);
    shapes(start, target);
    char err[512];
    RefSolver *r = ref_create(W, H, &p, err, sizeof err);
    Solver *s = make_solver(&p);
    if (!r || !s) goto done;
    ref_set_density(r, start);
    ref_set_target(r, target, true);
    solver_set_density(s, start);
    solver_set_target(s, target, true);
    solver_read_fields(s, NULL, g, NULL);
    CHECK(rel_l2(g, ref_target(r), n, 1, 1) <= 1e-6, "mass-matched target differs");
    solver_read_fields(s, NULL, NULL, g);
    double etb = rel_l2(g, ref_target_blur(r), n, 1, 1);
    CHECK(etb <= TOL, "blurred target rel L2 %.3g", etb);
    for (int k = 0; k < 20; k++) {
        ref_step(r);
        CHECK(solver_step(s) == 0, "solver_step %d", k);
    }
    solver_read_density(s, g);
    solver_read_velocity(s, gu, gv);
    double ed = rel_l2(g, ref_density(r), n, 1, 1);
    double eu = rel_l2(gu, ref_velocity_u(r), n, 1, 1), ev = rel_l2(gv, ref_velocity_v(r), n, 1, 1);
    printf("  20 steps (%s): density %.2e, u %.2e, v %.2e, blurred target %.2e\n", what, ed, eu, ev, etb);
    CHECK(ed <= TOL, "20 steps (%s): density rel L2 %.3g", what, ed);
    CHECK(eu <= TOL && ev <= TOL, "20 steps (%s): velocity rel L2 %.3g %.3g", what, eu, ev);
    /* the metrics of an exported frame, from the GPU's one read-back */
    double gm = 0, ge = 0, gd = 0, rm = ref_mass(r), re = ref_error(r), rd = ref_max_div(r);
    CHECK(solver_observe(s, g, &gm, &ge, &gd) == 0, "solver_observe");
    CHECK(rel_l2(g, ref_density(r), n, 1, 1) <= TOL, "20 steps (%s): observed density", what);
    /* max|∇·u| after the projection is a small difference of large terms:
     * float rounding (the GPU sums in another order) shows in it at about
     * 1e-6 of max|u|/h, so it is compared to that scale as well as to itself */
    double vs = 0.0;
    for (size_t k = 0; k < n; k++)
        vs = fmax(vs, fmax(fabs(ref_velocity_u(r)[k]), fabs(ref_velocity_v(r)[k])));
    vs *= (double)(W < H ? W : H);
    CHECK(fabs(gm - rm) <= 1e-5 * rm && fabs(ge - re) <= 1e-4 * re &&
              fabs(gd - rd) <= 1e-3 * rd + 1e-5 * vs,
          "20 steps (%s): GPU metrics mass %.7g error %.7g max_div %.7g, CPU %.7g %.7g %.7g", what,
          gm, ge, gd, rm, re, rd);
    /* the motion vectors, what moved the smoke in the last step (on a long
     * key the flow slowed by its pace; with the drift, flow + drift) */
    float *ru = malloc(n * 4), *rv = malloc(n * 4);
    if (ru && rv && solver_read_motion(s, gu, gv) == 0 && ref_read_motion(r, ru, rv) == 0) {
        double mu = rel_l2(gu, ru, n, 1, 1), mv = rel_l2(gv, rv, n, 1, 1);
        CHECK(mu <= TOL && mv <= TOL, "20 steps (%s): motion vectors rel L2 %.3g %.3g", what, mu, mv);
    }
    free(ru);
    free(rv);
done:
    ref_free(r);
    solver_free(s);
    free(start); free(target); free(g); free(gu); free(gv);
}

static void test_whole_steps(void)
{
    SolverParams p;
    method_params_default(&p);
    whole_steps(&p, "defaults");
    p.vcycles = 2;
    p.jacobi = 5;
    p.gather_iters = 9;
    whole_steps(&p, "2 V-cycles + 5 Jacobi");
    p.vcycles = 1;
    p.jacobi = 0;
    whole_steps(&p, "1 V-cycle only");
    /* both forces, whichever is the default */
    method_params_default(&p);
    p.force = SOLVER_FORCE_BALANCE;
    whole_steps(&p, "balance force");
    p.bcycles = 1;
    p.vb = 2000.0f;
    whole_steps(&p, "balance force, vb 2000, 1 V-cycle for phi");
    /* a compression's share of Fattal's pull (SolverParams.attract) */
    method_params_default(&p);
    p.attract = 1.0f;
    whole_steps(&p, "balance force with Fattal's whole pull (attract 1)");
    p.attract = 0.4f;
    whole_steps(&p, "balance force, attract 0.4");
    attract_matters();
    /* a compression with the gathering on from step 1 (untimed, no ease):
     * the force weighs the surplus by the cells' own density (rg 1, method.h
     * METHOD_DRIFT_WAIT), with the drift at once (rd = rg) and waiting 0.1 s
     * (rd 0 until step 10, rising to 1 by step 13) */
    method_params_default(&p);
    p.attract = 1.0f;
    p.arrive = 0.0f;
    p.tramp = 0.0f;
    p.framp = 0.0f;
    whole_steps(&p, "attract 1, the gathering from step 1: the sharp surplus");
    p.drift_wait = 0.1f;
    whole_steps(&p, "attract 1, the drift waiting 0.1 s");
    wait_matters();
    /* the gathering's fluxes in substeps (method_gather_substeps): 3 at
     * 64x48 with dt 0.08, the gathering strong and on from step 1 */
    method_params_default(&p);
    p.dt = 0.08f;
    p.arrive = 0.0f;
    p.tramp = 0.0f;
    p.framp = 0.0f;
    p.vg = 0.05f;
    CHECK(method_gather_substeps(W, H, &p) == 3, "dt 0.08 at 64x48: 3 gathering substeps (%d)",
          method_gather_substeps(W, H, &p));
    whole_steps(&p, "the gathering in 3 substeps (dt 0.08, vg 0.05)");
    p.gather_gain = 4.0f; /* a faint compression's gain (method_gather_gain_for_trip) */
    whole_steps(&p, "the gathering's gain 4, in 3 substeps");
    method_params_default(&p);
    p.off_pull = 1.0f; /* the pull on the smoke off a one-part target (method_off_pull_for_trip) */
    whole_steps(&p, "the pull on smoke off a one-part target");
    method_params_default(&p);
    p.coarse = 8.0f;
    whole_steps(&p, "coarse to fine from 8 sigma");
    p.dt = 0.02f; /* 0.4 s: through the schedule's end */
    p.coarse = 3.0f;
    whole_steps(&p, "coarse to fine from 3 sigma, to its end");
    p.coarse = 1.0f;
    whole_steps(&p, "no coarse start");
    coarse_matters();
    /* the force's noise: another amplitude, pattern size and seed; and none */
    method_params_default(&p);
    p.force_noise = 0.6f;
    p.noise_scale = 0.1f;
    p.noise_seed = 977;
    whole_steps(&p, "force noise 0.6, scale 0.1, seed 977");
    p.force_noise = 0.0f;
    whole_steps(&p, "no force noise");
    p.force = SOLVER_FORCE_FATTAL;
    whole_steps(&p, "Fattal's force");
    /* the gathering drift at full strength from the first step, no easing */
    method_params_default(&p);
    p.tramp = 0.0f;
    p.arrive = 0.0f; /* untimed: from step 1 */
    p.framp = 0.0f;
    p.vk = 0.01f;
    whole_steps(&p, "drift at full strength, no easing");
    p.vk = 0.0f;
    whole_steps(&p, "balance drift alone, no easing");
    p.vw = 0.0f;
    whole_steps(&p, "no drift, no easing");
    /* the balance drift's mobility where the smoke is dense and thin */
    method_params_default(&p);
    p.tramp = 0.0f;
    p.arrive = 0.0f; /* untimed: from step 1 */
    p.vw = 1000.0f;
    p.wmax = 1.0f;
    whole_steps(&p, "balance drift 1000, cap 1");
    /* a long key's pace (issue 20): the flow in slow motion (the transport's
     * time dt·pace), then with the drift added to the slowed flow */
    method_params_default(&p);
    p.arrive = 10.0f;
    p.framp = 0.0f;
    whole_steps(&p, "paced flow, 10 s");
    p.gather_from = 0.001f;
    whole_steps(&p, "paced flow and the drift from the start, 10 s");
    /* the subgrid mixing (issue 20 point 2): its coefficient from the flow's
     * strain, the mismatch and the target's nearness, its iterations on the
     * packed increment; strong (2 iterations at this grid), then paced */
    method_params_default(&p);
    p.subgrid = 8.0f;
    p.arrive = 0.0f;
    p.framp = 0.0f;
    whole_steps(&p, "subgrid mixing 8");
    /* ... with the gathering at full strength from the first step, so the
     * edge gate (weighed by rg) is fully on throughout */
    p.tramp = 0.0f;
    whole_steps(&p, "subgrid mixing 8, the edge gate from step 1");
    /* ... at 256², where the fine gate can fire (L = 2 cells), with a line
     * one cell wide in transit that it mixes whole */
    {
        int w0 = W, h0 = H;
        W = H = 256;
        shapes_line = true;
        whole_steps(&p, "subgrid mixing 8, a line one cell wide at 256^2");
        shapes_line = false;
        W = w0;
        H = h0;
    }
    p.tramp = 1.0f;
    p.arrive = 10.0f;
    whole_steps(&p, "subgrid mixing 8, paced flow, 10 s");
    /* ... with an arrival of 3 steps, so that the 20 steps run through the
     * edge gate's fade from 4 to 6 arrivals (method_mix_edge_w) */
    p.arrive = 0.03f;
    whole_steps(&p, "subgrid mixing 8, the edge gate fading out (arrival 0.03 s)");
}

/* The stripes of issue 7 on the GPU: a disc into the same disc in the
 * opposite corner, 200 whole steps at 192^2 with either force; the stripe
 * measure stays at the start image's level. */
static void test_diagonal_stripes(void)
{
    CHECK_LONG_RUN("test_diagonal_stripes");
    int w = 192;
    size_t n = (size_t)w * w;
    float *a = malloc(n * 4), *b = malloc(n * 4), *g = malloc(n * 4);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            float x = ((float)i + 0.5f) / (float)w, y = ((float)j + 0.5f) / (float)w;
            float da = sqrtf((x - 0.25f) * (x - 0.25f) + (y - 0.75f) * (y - 0.75f));
            float db = sqrtf((x - 0.75f) * (x - 0.75f) + (y - 0.25f) * (y - 0.25f));
            a[(size_t)j * w + i] = fminf(1.0f, fmaxf(0.0f, (0.12f - da) * (float)w * 0.5f + 0.5f));
            b[(size_t)j * w + i] = fminf(1.0f, fmaxf(0.0f, (0.12f - db) * (float)w * 0.5f + 0.5f));
        }
    int w0 = W, h0 = H;
    W = H = w;
    for (int f = 0; f < 2; f++) {
        SolverParams p;
        method_params_default(&p);
        p.force = f == 0 ? SOLVER_FORCE_FATTAL : SOLVER_FORCE_BALANCE;
        Solver *s = make_solver(&p);
        if (!s) break;
        solver_set_density(s, a);
        solver_set_target(s, b, true);
        double s0 = fidelity_stripes(a, w, w), worst = 0.0;
        for (int k = 1; k <= 200; k++) {
            CHECK(solver_step(s) == 0, "step %d", k);
            if (k % 20 == 0 && solver_read_density(s, g) == 0) {
                double r = fidelity_stripe_ratio(fidelity_stripes(g, w, w), s0);
                if (r > worst) worst = r;
            }
        }
        printf("  GPU diagonal morph at %d^2 (%s): stripes at most %.2fx the start's\n", w,
               f == 0 ? "fattal" : "balance", worst);
        CHECK(worst <= 1.6, "GPU diagonal morph (%s): stripes %.2fx the start's",
              f == 0 ? "fattal" : "balance", worst);
        solver_free(s);
    }
    W = w0;
    H = h0;
    free(a); free(b); free(g);
}

/* Odd sizes: the pressure solve packs 2x2 cells to a texel, so every level of
 * a 37x29 grid (37x29, 19x15, 10x8, 5x4) has padding cells that must stay out
 * of the sums. And a flat grid whose coarsest level is too large for the
 * one-pass coarse solve. */
static void test_odd_size(void)
{
    int w0 = W, h0 = H;
    W = 67; /* factor 32 at 67x65: the two-dispatch downsampling's clipped blocks */
    H = 65;
    test_passes_one(1.0f);
    W = 37;
    H = 29;
    test_passes_one(0.04f);
    SolverParams p;
    method_params_default(&p);
    whole_steps(&p, "37x29, defaults");
    p.vcycles = 3;
    p.jacobi = 0;
    whole_steps(&p, "37x29, 3 V-cycles only");
    p.force = p.force == SOLVER_FORCE_BALANCE ? SOLVER_FORCE_FATTAL : SOLVER_FORCE_BALANCE;
    whole_steps(&p, "37x29, the other force");
    /* a coarsest level too large for the one-pass coarse solve: 80x12 ->
     * 40x6 -> 20x3, iterated pass by pass */
    W = 80;
    H = 12;
    whole_steps(&p, "80x12, 3 V-cycles only");
    W = w0;
    H = h0;
}

/* whole_steps with the default parameters at each size, with each of n
 * solver options in turn (what: their meaning, and label[g] each one's,
 * for the messages); g_opts, W and H restored after. */
static void option_runs(const SolverOptions *opts, const char *what, const char *const *label, int n,
                        const int (*sizes)[2], int nsizes)
{
    int w0 = W, h0 = H;
    SolverOptions o0 = g_opts;
    SolverParams p;
    method_params_default(&p);
    for (int g = 0; g < n; g++) {
        g_opts = opts[g];
        g_opts.tiles = o0.tiles;
        for (int z = 0; z < nsizes; z++) {
            char msg[96];
            W = sizes[z][0];
            H = sizes[z][1];
            snprintf(msg, sizeof msg, "%dx%d, %s %s", W, H, what, label[g]);
            whole_steps(&p, msg);
        }
    }
    g_opts = o0;
    W = w0;
    H = h0;
}

/* The compute backend's transport_tile with other work-group shapes
 * (--transport-group, for bench sweeps): whole runs still agree with the
 * CPU on an odd grid, where tiles overhang both edges, and on one smaller
 * than a tile. */
static void test_transport_group(void)
{
    static const char *const groups[] = {"32x16", "8x8", "64x16", "16x8"};
    static const SolverOptions o[] = {{.transport_gx = 32, .transport_gy = 16},
                                      {.transport_gx = 8, .transport_gy = 8},
                                      {.transport_gx = 64, .transport_gy = 16},
                                      {.transport_gx = 16, .transport_gy = 8}};
    static const int sizes[][2] = {{37, 29}, {24, 12}};
    option_runs(o, "transport group", groups, 4, sizes, 2);
}

/* --mg-bottom's values as SolverOptions.mg_bottom: the index of auto, 0, 4,
 * 8, 16, 32 */
static int mg_bottom_index(int side)
{
    return side == 0 ? 1 : side == 4 ? 2 : side == 8 ? 3 : side == 16 ? 4 : 5;
}

/* The compute backend's mg_bottom (the rest of a V-cycle from a small level
 * in one work group) with each bound --mg-bottom allows, none included,
 * and without the restriction fused into the pre-smoothing (--no-mg-fuse):
 * whole runs still agree with the CPU. At 96x72 (levels 96, 48, 24, 12, 6,
 * 3 cells a side) it starts at level 1 (32 texels), 2 (16), 3 (8) or 4 (4);
 * at 37x29 from level 1 (32, 16), 2 (8) or 3 (4). test_solve_fields checks
 * the solves' own fields. */
static void test_mg_bottom(void)
{
    static const char *const sides[] = {"0", "4", "8", "16", "32"}, *const off[] = {"off"};
    SolverOptions o[5] = {{0}};
    for (int g = 0; g < 5; g++) o[g].mg_bottom = mg_bottom_index(atoi(sides[g]));
    static const int sizes[][2] = {{96, 72}, {37, 29}};
    option_runs(o, "V-cycle bottom", sides, 5, sizes, 2);
    SolverOptions nofuse = {.no_fuse = true};
    option_runs(&nofuse, "fusions", off, 1, sizes, 1);
}

/* The solves' own fields after a few steps, against the CPU's: the
 * pressure after one V-cycle a step and no Jacobi iterations, the deficit
 * potential after one V-cycle, the gathering's e after 10 iterations (4, 4
 * and 2 a dispatch when tiled) at full strength and 100 times the default
 * coefficient (at the default the solve converges within a few iterations,
 * so a missing one would not show). A whole run's density
 * hides a solve's error in the next steps; these fields show it at once.
 * With mg_bottom at each bound, none, and the restriction and the gathering
 * iterations in their own dispatches (--no-mg-fuse). */
static void test_solve_fields(void)
{
    static const char *const sides[] = {"32", "16", "4", "0"};
    int w0 = W, h0 = H;
    W = 96;
    H = 72;
    SolverParams p;
    method_params_default(&p);
    p.vcycles = 1;
    p.jacobi = 0;
    p.bcycles = 1;
    p.gather_iters = 10;
    p.vg = 0.2f; /* a = dt·vg/h² ≈ 10: the solve far from converged in 10 iterations */
    p.tramp = 0.0f;
    p.arrive = 0.0f; /* untimed: from step 1 */
    p.framp = 0.0f;
    size_t n = (size_t)W * H;
    float *start = malloc(n * 4), *target = malloc(n * 4);
    float *cpu = malloc(n * 4 * METHOD_FIELD_COUNT), *gpu = malloc(n * 4 * METHOD_FIELD_COUNT);
    shapes(start, target);
    MethodState cs = {0}, gs = {0};
    for (int f = 0; f < METHOD_FIELD_COUNT; f++) {
        cs.field[f] = cpu + (size_t)f * n;
        gs.field[f] = gpu + (size_t)f * n;
    }
    char err[512];
    RefSolver *r = ref_create(W, H, &p, err, sizeof err);
    if (r) {
        ref_set_density(r, start);
        ref_set_target(r, target, true);
        for (int k = 0; k < 5; k++) ref_step(r);
        ref_get_state(r, &cs);
    }
    SolverOptions o0 = g_opts;
    for (int g = 0; g < 5 && r; g++) {
        g_opts = o0;
        if (g < 4) g_opts.mg_bottom = mg_bottom_index(atoi(sides[g]));
        else g_opts.no_fuse = true;
        Solver *s = make_solver(&p);
        if (!s) break;
        solver_set_density(s, start);
        solver_set_target(s, target, true);
        for (int k = 0; k < 5; k++) CHECK(solver_step(s) == 0, "solver_step %d", k);
        CHECK(solver_get_state(s, &gs) == 0, "solver_get_state");
        const char *what = g < 4 ? sides[g] : "32, restriction and gathering iterations apart";
        static const MethodField fs[] = {METHOD_FIELD_PRESSURE, METHOD_FIELD_POTENTIAL,
                                         METHOD_FIELD_GATHER_E, METHOD_FIELD_DENSITY};
        for (int q = 0; q < 4; q++) {
            double e = rel_l2(gs.field[fs[q]], cs.field[fs[q]], n, 1, 1);
            CHECK(e <= TOL, "5 steps, bottom %s: %s rel L2 %.3g", what, method_field_name(fs[q]), e);
            if (q == 0) printf("  5 steps, bottom %s: %s %.2e", what, method_field_name(fs[q]), e);
            else printf(", %s %.2e", method_field_name(fs[q]), e);
        }
        printf("\n");
        solver_free(s);
    }
    g_opts = o0;
    ref_free(r);
    free(start); free(target); free(cpu); free(gpu);
    W = w0;
    H = h0;
}

/* The mouse stir (window): a Gaussian push around a point, clamped to umax,
 * walls untouched. */
static void test_stir(void)
{
    SolverParams p;
    method_params_default(&p);
    size_t n = (size_t)W * H;
    Solver *s = make_solver(&p);
    float *z = calloc(n * 4, sizeof *z), *u = malloc(n * 4), *v = malloc(n * 4);
    if (!s) goto done;
    solver_debug_upload(s, SOLVER_FIELD_VELOCITY, z);
    CHECK(solver_stir(s, 20.0f, 24.0f, 0.1f, 0.0f, 4.0f) == 0, "stir");
    solver_read_velocity(s, u, v);
    float near = u[24 * W + 20], far = u[5 * W + 60], vmax = 0.0f, wall = 0.0f;
    for (size_t k = 0; k < n; k++) vmax = fmaxf(vmax, fabsf(v[k]));
    for (int j = 0; j < H; j++) wall = fmaxf(wall, fabsf(u[j * W]));
    printf("  stir: u near %.4f, far %.2g, max |v| %.2g, wall %.2g\n", near, far, vmax, wall);
    CHECK(fabsf(near - 0.1f * expf(-0.25f / 16.0f)) < 1e-5f, "stir: u at the point %.5f", near);
    CHECK(fabsf(far) < 1e-6f && vmax < 1e-6f && wall == 0.0f, "stir leaked: far %g, v %g, wall %g",
          far, vmax, wall);
    CHECK(solver_stir(s, 20.0f, 24.0f, 50.0f, -50.0f, 4.0f) == 0, "stir hard");
    solver_read_velocity(s, u, v);
    float umax = 0.0f;
    for (size_t k = 0; k < n; k++) umax = fmaxf(umax, fmaxf(fabsf(u[k]), fabsf(v[k])));
    CHECK(umax <= p.umax + 1e-6f, "stir exceeds umax: %g", umax);
done:
    solver_free(s);
    free(z);
    free(u);
    free(v);
}

/* A bundled target resampled to n x n as smokemorph does (NULL: CHECK failed). */
static Image *bundled(const char *name, int n)
{
    char path[256], err[512];
    snprintf(path, sizeof path, "targets/%s", name);
    ImageLoadOpts o = {0};
    Image *im = image_load(path, &o, err, sizeof err);
    CHECK(im != NULL, "%s", err);
    if (!im) return NULL;
    Image *g = image_resample(im, n, n);
    image_free(im);
    return g;
}

#define RES_LO 64
#define RES_HI 256
/* Parameters are in domain units, so the bundled morph looks alike on a
 * grid 4 times finer: the 256² density at steps 50, 100 and 150 (arrived at
 * --arrive 1.2), area-averaged to 64², differs from the 64² density by at
 * most 10% mid-morph and 5% once arrived (relative L1; issue 7's bound),
 * while steps 50 -> 100 of the 64² run change it by 15% or more, so the
 * bounds would catch a morph running at another speed. Measured on
 * llvmpipe (compute, 2026-11-29): 3.4%, 3.5% and 1.3%, and 61.4% from step
 * 50 to 100. (Until then it ran 128² against 512²: 2.9%, 0.7% and 0.4%,
 * but its 150 steps at 512² took 360 of this file's 946 s in CI; the
 * suite's 128² against 512² is measured on the GPU, `fidelity --compare`,
 * docs/FIDELITY.md.) */
static void test_resolution(void)
{
    CHECK_LONG_RUN("test_resolution");
    enum { NR = 2, NCHK = 3 };
    const int sides[NR] = {RES_LO, RES_HI}, at[NCHK] = {50, 100, 150};
    float *rho[NR][NCHK] = {{0}};
    double err_at[NR][NCHK] = {{0}};
    for (int r = 0; r < NR; r++) {
        int n = sides[r];
        Image *a = bundled("blob.png", n), *b = bundled("star.png", n);
        SolverParams p;
        method_params_default(&p);
        p.arrive = 1.2f; /* arrived by step 150, the last compared (the default 3 s: step 300) */
        Solver *s = a && b ? make_solver_size(n, n, &p) : NULL;
        if (s) {
            solver_set_density(s, a->px);
            solver_set_target(s, b->px, true);
            for (int c = 0; c < NCHK; c++) {
                for (int k = c ? at[c - 1] : 0; k < at[c]; k++) solver_step(s);
                float *full = malloc((size_t)n * n * sizeof(float));
                double mass;
                solver_observe(s, full, &mass, &err_at[r][c], NULL);
                Image src = {n, n, 1, full};
                Image *small = image_resample(&src, RES_LO, RES_LO);
                rho[r][c] = small ? small->px : NULL;
                if (small) small->px = NULL;
                image_free(small);
                free(full);
            }
        }
        solver_free(s);
        image_free(a);
        image_free(b);
    }
    size_t nn = (size_t)RES_LO * RES_LO;
    for (int c = 0; c < NCHK; c++) {
        if (!rho[0][c] || !rho[1][c]) continue;
        double d = 0.0, m = 0.0;
        for (size_t k = 0; k < nn; k++) {
            d += fabs((double)rho[1][c][k] - rho[0][c][k]);
            m += rho[0][c][k];
        }
        printf("  step %d: error %.3f at %d^2, %.3f at %d^2; densities differ by %.1f%%\n", at[c], err_at[0][c],
               RES_LO, err_at[1][c], RES_HI, 100.0 * d / m);
        /* issue 7: the two runs agree within 0.05 normalised L1 once
         * arrived (step 150); mid-morph (steps 50, 100) within 10% */
        if (c == NCHK - 1)
            CHECK(d <= 0.05 * m, "step %d: the %d^2 morph differs from the %d^2 one by %.1f%%",
                  at[c], RES_HI, RES_LO, 100.0 * d / m);
        else
            CHECK(d <= 0.10 * m, "step %d: the %d^2 morph differs from the %d^2 one by %.1f%%",
                  at[c], RES_HI, RES_LO, 100.0 * d / m);
        if (c == 1) {
            double e = 0.0;
            for (size_t k = 0; k < nn; k++) e += fabs((double)rho[0][c][k] - rho[0][c - 1][k]);
            printf("  %d^2, steps %d -> %d: the density changes by %.1f%%\n", RES_LO, at[c - 1], at[c],
                   100.0 * e / m);
            CHECK(e >= 0.15 * m, "%d^2 changes only %.1f%% from step %d to %d: the bounds above "
                  "mean little", RES_LO, 100.0 * e / m, at[c - 1], at[c]);
        }
    }
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NCHK; c++) free(rho[r][c]);
}

static void test_gpu_mass_2000(void)
{
    SolverParams p;
    method_params_default(&p);
    size_t n = (size_t)W * H;
    float *start = malloc(n * 4), *target = malloc(n * 4);
    shapes(start, target);
    Solver *s = make_solver(&p);
    if (!s) goto done;
    solver_set_density(s, start);
    solver_set_target(s, target, true);
    double m0, e0, d0, m, e, d;
    solver_metrics(s, &m0, &e0, &d0);
    bool finite = true;
    for (int k = 1; k <= 2000; k++) {
        solver_step(s);
        if (k % 500 == 0) {
            solver_metrics(s, &m, &e, &d);
            finite = finite && isfinite(m) && isfinite(e);
        }
    }
    solver_metrics(s, &m, &e, &d);
    double drift = fabs(m - m0) / m0;
    printf("  2000 GPU steps: mass drift %.2e, error %.3f -> %.3f (%.0f%%), max div %.3g\n", drift,
           e0, e, 100.0 * e / e0, d);
    CHECK(finite, "NaN/Inf in a 2000-step GPU morph");
    CHECK(drift <= 1e-5, "mass drift %.3g over 2000 GPU steps", drift);
    CHECK(e <= 0.25 * e0, "GPU morph error %.3f is not <= 25%% of its start %.3f", e, e0);
done:
    solver_free(s);
    free(start);
    free(target);
}

/* Reading the state between steps changes nothing: a run observed after every
 * step (density read back, metrics, the max|div| pass into a scratch field)
 * ends bit for bit where a run never read until its end does. The solver also
 * bounds how many steps it queues ahead of the GPU: on the lent H100 a deep
 * unsynchronised queue once came back corrupt (docs/FIDELITY.md). */
static void test_unobserved_run(void)
{
    SolverParams p;
    method_params_default(&p);
    size_t n = (size_t)W * H;
    float *start = malloc(n * 4), *target = malloc(n * 4), *a = malloc(n * 4), *b = malloc(n * 4);
    shapes(start, target);
    Solver *s[2] = {make_solver(&p), make_solver(&p)};
    if (!s[0] || !s[1]) goto done;
    for (int k = 0; k < 2; k++) {
        solver_set_density(s[k], start);
        solver_set_target(s[k], target, true);
    }
    int failed = 0;
    for (int step = 1; step <= 300; step++) {
        failed |= solver_step(s[0]) != 0;
        double m, e, d;
        failed |= solver_observe(s[0], a, &m, &e, &d) != 0;
    }
    for (int step = 1; step <= 300; step++) failed |= solver_step(s[1]) != 0;
    CHECK(!failed, "the steps and read-backs succeed");
    solver_read_density(s[0], a);
    solver_read_density(s[1], b);
    size_t differ = 0;
    for (size_t k = 0; k < n; k++) differ += memcmp(&a[k], &b[k], sizeof a[k]) != 0;
    CHECK(differ == 0, "%zu of %zu cells differ between the observed and the unobserved run", differ, n);
done:
    solver_free(s[0]);
    solver_free(s[1]);
    free(start);
    free(target);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    (void)argc;
    GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
    if (!ctx) return check_done();
    /* every test on both GPU backends: the fragment passes, then the same
     * stage functions as compute passes (GL 4.3; llvmpipe has it) */
    static const SolverKind kinds[] = {SOLVER_FRAGMENT, SOLVER_COMPUTE};
    const char *only = getenv("TEST_GPU_BACKEND");
    for (int k = 0; k < 2; k++) {
        g_kind = kinds[k];
        /* TEST_GPU_BACKEND=fragment or compute: that backend only, every test */
        if (only && strcmp(only, g_kind == SOLVER_COMPUTE ? "compute" : "fragment") != 0) continue;
#if defined(__SANITIZE_ADDRESS__)
        /* the compute backend runs the same C as the fragment one but for
         * the dispatch primitive: no memory checking to add (CI time) */
        if (g_kind == SOLVER_COMPUTE && !only) {
            printf("SKIP compute backend under AddressSanitizer: the fragment run checked the same C; "
                   "make test runs it\n");
            continue;
        }
#endif
        if (g_kind == SOLVER_COMPUTE && !shader_compute_available()) {
            TESTLIB_NO_GL(4, 3, "compute backend: this context has OpenGL %s, compute needs 4.3",
                          glctx_version(ctx));
            break;
        }
        printf("  backend: %s\n", g_kind == SOLVER_COMPUTE ? "compute" : "fragment");
        RUN(test_passes);
        RUN(test_whole_steps);
        RUN(test_odd_size);
        if (g_kind == SOLVER_COMPUTE) RUN(test_transport_group);
        if (g_kind == SOLVER_COMPUTE) RUN(test_mg_bottom);
        RUN(test_solve_fields);
        RUN(test_stir);
        RUN(test_unobserved_run);
        /* the long behavioural runs once, on the backend a GPU runs by
         * default (compute where there is 4.3): the runs above show both
         * backends give the CPU reference's numbers pass by pass and step by
         * step, so these would only repeat themselves (CI time) */
        bool last = only || k == 1 || !shader_compute_available();
#if defined(__SANITIZE_ADDRESS__)
        last = true; /* the compute pass is skipped: the long runs print their SKIP here */
#endif
        if (last) {
            RUN(test_diagonal_stripes);
            RUN(test_gpu_mass_2000);
            RUN(test_resolution);
        }
    }
    glctx_destroy(ctx);
    return check_done();
}
