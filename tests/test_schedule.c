/* test_schedule: schedules through the morph API (issue 9) on the CPU
 * reference (no GL): keys at uneven steps switch exactly there; a key's
 * parameters hold in its range and the base's come back after a reset;
 * sources add rate·dt·Σw a step in from+1..to and nothing else; the mass
 * match counts the sources' smoke up to the key's step; a moving target's
 * pose at the first and last step of its range; a source or a move refused
 * with one line. Tier 1: a 40x32 grid, a few dozen steps.
 * (tests/test_schedule_gpu.c runs the same kind of schedule on the GPU.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "testlib.h"

#define W 40
#define H 32
#define N (W * H)
#define CELL (1.0 / H) /* the shorter side is 1 */

static float disc[N], square[N], ring[N], puff[N];

static void make_shapes(void)
{
    static const TestlibKeyShapes at = {{0.5, 0.45}, {0.8, 0.6}, {0.6, 0.5}, false};
    testlib_key_shapes(W, H, &at, disc, square, ring);
    static const TestlibShape s = {.domain = true, .width = 0.05};
    testlib_disc(puff, W, H, &s, 0.3, 0.3, 0.1, 0.5);
}

static SolverParams base(void)
{
    SolverParams p;
    method_params_default(&p);
    return p;
}

/* every parameter equal (memcmp would compare the padding) */
/* Every parameter but the arrival, which each key takes from its range
 * (test_key_params checks it on its own), and the share of the force noise,
 * which each key takes from its trip (test_keys: test_noise_for_trip). */
static bool same_params(const SolverParams *a, const SolverParams *b)
{
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        if (k != METHOD_P_ARRIVE && k != METHOD_P_NOISE_TRIP && method_param_get(a, k) != method_param_get(b, k))
            return false;
    return true;
}

static Morph *make(const float *start, const float *target, bool mass_match)
{
    SolverParams p = base();
    Morph *m = testlib_morph(W, H, &p, start, target, mass_match, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    return m;
}

static double sum(const float *f) { return testlib_sum(f, N); }

/* The morph's whole state (morph_get_state), its target and blurred target
 * among it. */
typedef TestlibState State;

static bool state_read(Morph *m, State *s) { return testlib_state_read(m, (size_t)N, s); }

static const float *state_target(const State *s) { return s->st.solver.field[METHOD_FIELD_TARGET]; }
static const float *state_target_blur(const State *s) { return s->st.solver.field[METHOD_FIELD_TARGET_BLUR]; }

/* max |a − s·b| / max|s·b| with s = Σa/Σb: a is b up to a scale */
static double shape_diff(const float *a, const float *b)
{
    double s = sum(a) / sum(b), d = 0.0, top = 0.0;
    for (int k = 0; k < N; k++) {
        d = fmax(d, fabs(a[k] - s * b[k]));
        top = fmax(top, fabs(s * b[k]));
    }
    return d / top;
}

/* Keys at uneven steps: each key is the goal (and the target the solver
 * holds) exactly in its range, the last one after it. */
static void test_uneven_steps(void)
{
    Morph *m = make(disc, square, true);
    State s = {0};
    if (!m) return;
    static const long at[] = {3, 10, 11, 25};
    const float *img[] = {square, ring, disc, puff};
    MorphKey keys[4] = {{0}};
    for (int k = 0; k < 4; k++) keys[k].step = at[k], keys[k].target = img[k];
    char err[256] = "";
    CHECK(morph_set_schedule(m, keys, 4, NULL, 0, err, sizeof err) == 0, "set_schedule: %s", err);
    CHECK(morph_key_count(m) == 4 && morph_key_step(m, 3) == 11, "4 keys, key 3 at step 11");
    for (long step = 1; step <= 30; step++) {
        int want = step <= 3 ? 1 : step <= 10 ? 2 : step <= 11 ? 3 : 4;
        CHECK(morph_key_at(m, step) == want, "morph_key_at(%ld) = %d, expected %d", step, morph_key_at(m, step),
              want);
        CHECK(morph_step(m) == 0, "step %ld", step);
        CHECK(morph_key(m) == want, "after step %ld: key %d, expected %d", step, morph_key(m), want);
        if (state_read(m, &s)) {
            double d = shape_diff(state_target(&s), img[want - 1]);
            CHECK(d < 1e-5, "after step %ld: the target is key %d's image (off by %g)", step, want, d);
        }
    }
    free(s.buf);
    morph_free(m);
}

/* A key's parameters hold in its range; a key without its own has the
 * base's; a reset brings back key 1's, the base's. */
static void test_key_params(void)
{
    Morph *m = make(disc, square, true);
    if (!m) return;
    SolverParams b = base(), p2 = b, p3 = b;
    p2.vf = 0.9f;
    p2.sigma = b.sigma * 1.5f;
    p3.vd = b.vd + 1.0f;
    MorphKey keys[4] = {{.step = 4, .target = square}, {.step = 9, .target = ring, .params = &p2},
                        {.step = 12, .target = disc, .params = &p3}, {.step = 20, .target = square}};
    char err[256] = "";
    CHECK(morph_set_schedule(m, keys, 4, NULL, 0, err, sizeof err) == 0, "set_schedule: %s", err);
    for (long step = 1; step <= 22; step++) {
        CHECK(morph_step(m) == 0, "step %ld", step);
        const SolverParams *want = step > 4 && step <= 9 ? &p2 : step > 9 && step <= 12 ? &p3 : &b;
        const SolverParams *got = morph_params(m);
        CHECK(same_params(got, want), "step %ld: vf %g sigma %g vd %g, expected %g %g %g", step,
              (double)got->vf, (double)got->sigma, (double)got->vd, (double)want->vf, (double)want->sigma,
              (double)want->vd);
        /* each key arrives at its step: its arrival is its range (4, 5, 3, 8 steps) */
        long range = step <= 4 ? 4 : step <= 9 ? 5 : step <= 12 ? 3 : 8;
        CHECK(fabsf(got->arrive - (float)range * got->dt) < 1e-6f, "step %ld: arrive %g, expected %g", step,
              (double)got->arrive, (double)((float)range * got->dt));
        if (step == 6) { /* in key 2's range: a reset goes back to the base's */
            CHECK(morph_reset(m) == 0 && morph_step_count(m) == 0 && morph_key(m) == 1, "reset");
            CHECK(same_params(morph_params(m), &b), "after a reset in key 2: the base's parameters");
            for (long k = 1; k <= 6; k++) morph_step(m);
        }
    }
    morph_free(m);
}

/* Sources: the mass grows by exactly rate·dt·Σw in each step from+1..to
 * (the passes conserve it to float rounding), by nothing in the others;
 * a disc's weights are its coverage with a one-cell edge. */
static void test_source_mass(void)
{
    Morph *m = make(disc, square, false);
    if (!m) return;
    float dt = morph_params(m)->dt;
    MorphKey key = {.step = 40, .target = square};
    MorphSource src[2] = {{.image = puff, .rate = 3.0f, .from = 5, .to = 12},
                          {.cx = 0.7f, .cy = 0.5f, .radius = 0.12f, .rate = 2.0f, .from = 10, .to = 20}};
    /* the disc's weights, as morph.h defines them */
    double disc_w = 0.0;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            double r = hypot((i + 0.5) * CELL - 0.7, (j + 0.5) * CELL - 0.5);
            float v = (float)fmin(1.0, fmax(0.0, 0.5 - (r - 0.12) / CELL));
            disc_w += v;
        }
    double area = 3.14159265358979 * 0.12 * 0.12 / (CELL * CELL);
    CHECK(fabs(disc_w - area) <= 0.02 * area, "the disc's weights %g, its area %g cells", disc_w, area);
    char err[256] = "";
    CHECK(morph_set_schedule(m, &key, 1, src, 2, err, sizeof err) == 0, "set_schedule: %s", err);
    double prev, mass;
    morph_metrics(m, &prev, NULL, NULL);
    CHECK(fabs(prev - sum(disc)) <= 1e-6 * prev, "step 0: the start's mass (%.9g, %.9g)", prev, sum(disc));
    for (long step = 1; step <= 25; step++) {
        CHECK(morph_step(m) == 0, "step %ld", step);
        morph_metrics(m, &mass, NULL, NULL);
        double want = 0.0;
        if (step > 5 && step <= 12) want += (double)(3.0f * dt) * sum(puff);
        if (step > 10 && step <= 20) want += (double)(2.0f * dt) * disc_w;
        CHECK(fabs(mass - prev - want) <= 2e-7 * mass, "step %ld: the mass grew by %.9g, expected %.9g", step,
              mass - prev, want);
        prev = mass;
    }
    morph_free(m);
}

/* With mass matching, each key's target holds the smoke's mass at its
 * switch plus the sources' smoke up to its step, and the smoke arrives at
 * that mass at the key's step. */
static void test_source_key_mass(void)
{
    Morph *m = make(disc, square, true);
    State s = {0};
    if (!m) return;
    float dt = morph_params(m)->dt;
    SolverParams p2 = base();
    p2.dt = dt * 0.5f; /* key 2's sources at its own dt */
    MorphKey keys[3] = {{.step = 8, .target = square}, {.step = 20, .target = ring, .params = &p2},
                        {.step = 30, .target = disc}};
    /* one across keys 1 and 2, one inside key 2, one after the last key */
    MorphSource src[3] = {{.image = puff, .rate = 2.0f, .from = 3, .to = 14},
                          {.cx = 0.4f, .cy = 0.6f, .radius = 0.1f, .rate = 1.5f, .from = 15, .to = 17},
                          {.image = puff, .rate = 1.0f, .from = 35, .to = 38}};
    char err[256] = "";
    CHECK(morph_set_schedule(m, keys, 3, src, 3, err, sizeof err) == 0, "set_schedule: %s", err);
    /* key 1 from step 0: the start's mass + puff's smoke of steps 4..8 */
    double m0 = sum(disc), puff1 = (double)(2.0f * dt) * sum(puff);
    if (state_read(m, &s)) {
        double t = sum(state_target(&s)), want = m0 + 5 * puff1;
        CHECK(fabs(t - want) <= 1e-6 * want, "key 1's target mass %.9g, expected %.9g", t, want);
    }
    double at_switch = 0.0;
    for (long step = 1; step <= 40; step++) {
        if (step == 9 || step == 21) morph_metrics(m, &at_switch, NULL, NULL);
        CHECK(morph_step(m) == 0, "step %ld", step);
        if (!state_read(m, &s)) continue;
        double t = sum(state_target(&s)), rho = sum(s.st.solver.field[METHOD_FIELD_DENSITY]);
        if (step == 9) { /* key 2: puff at dt/2 in 9..14, the disc in 16..17 */
            double disc_w = 0.0;
            for (int j = 0; j < H; j++)
                for (int i = 0; i < W; i++) {
                    double r = hypot((i + 0.5) * CELL - 0.4, (j + 0.5) * CELL - 0.6);
                    disc_w += (float)fmin(1.0, fmax(0.0, 0.5 - (r - 0.1) / CELL));
                }
            double want = at_switch + 6 * (double)(2.0f * p2.dt) * sum(puff) + 2 * (double)(1.5f * p2.dt) * disc_w;
            CHECK(fabs(t - want) <= 1e-6 * want, "key 2's target mass %.9g, expected %.9g", t, want);
        }
        if (step == 21)
            CHECK(fabs(t - at_switch) <= 1e-6 * t, "key 3's target mass %.9g: no sources in its range, %.9g", t,
                  at_switch);
        if (step == 8 || step == 20 || step == 30)
            CHECK(fabs(rho - t) <= 2e-6 * t, "step %ld (a key's): the smoke's mass %.9g, the target's %.9g", step,
                  rho, t);
        if (step > 35)
            CHECK(rho > t * 1.001, "step %ld: after the last key a source's smoke is more than the target", step);
    }
    free(s.buf);
    morph_free(m);
}

/* The centre of mass (domain units) and the radius of gyration of f. */
static void moments(const float *f, double *cx, double *cy, double *rg)
{
    double s = sum(f), x = 0.0, y = 0.0, r = 0.0;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            x += f[j * W + i] * (i + 0.5) * CELL;
            y += f[j * W + i] * (j + 0.5) * CELL;
        }
    x /= s, y /= s;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            double dx = (i + 0.5) * CELL - x, dy = (j + 0.5) * CELL - y;
            r += f[j * W + i] * (dx * dx + dy * dy);
        }
    *cx = x, *cy = y, *rg = sqrt(r / s);
}

/* A moving key: at its range's first step the image moved by move_from
 * and scaled by scale_from about the grid's centre, at its last by move_to
 * and scale_to, in between neither, after it still the end pose; its mass
 * the key's matched mass; ρ̃* follows. */
static void test_moving_target(void)
{
    /* one blur width throughout: a coarse start (--coarse) blurs the disc
     * near the wall wider, which moves ρ̃*'s centre off the pose's by 0.4
     * cells at this 40-cell grid (its own test: test_cpu_solver) */
    SolverParams p = base();
    p.coarse = 1.0f;
    Morph *m = testlib_morph(W, H, &p, disc, square, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    State s = {0};
    if (!m) return;
    /* key 2 (steps 6..16): disc at (0.5, 0.45) r 0.2 */
    MorphKey keys[2] = {{.step = 5, .target = square},
                        {.step = 16, .target = disc, .move_from = {0.1f, -0.05f}, .move_to = {-0.15f, 0.1f},
                         .scale_from = 0.8f, .scale_to = 1.2f}};
    char err[256] = "";
    CHECK(morph_set_schedule(m, keys, 2, NULL, 0, err, sizeof err) == 0, "set_schedule: %s", err);
    double gx = 0.5 * W * CELL, gy = 0.5 * H * CELL; /* the grid's centre */
    double ix, iy, ir;
    moments(disc, &ix, &iy, &ir);
    float prev[N];
    for (long step = 1; step <= 20; step++) {
        CHECK(morph_step(m) == 0, "step %ld", step);
        if (!state_read(m, &s)) continue;
        const float *t = state_target(&s);
        if (step < 6) continue;
        double u = step >= 16 ? 1.0 : (step - 6) / 10.0;
        double dx = 0.1 + u * (-0.25), dy = -0.05 + u * 0.15, sc = 0.8 + u * 0.4;
        double cx, cy, rg, wx = gx + (ix - gx) * sc + dx, wy = gy + (iy - gy) * sc + dy;
        moments(t, &cx, &cy, &rg);
        if (step == 6 || step == 16 || step == 20) {
            CHECK(fabs(cx - wx) <= 0.02 * CELL && fabs(cy - wy) <= 0.02 * CELL,
                  "step %ld: the target's centre (%.5f, %.5f), expected (%.5f, %.5f)", step, cx, cy, wx, wy);
            CHECK(fabs(rg - ir * sc) <= 0.02 * ir * sc, "step %ld: its radius of gyration %.5f, expected %.5f", step,
                  rg, ir * sc);
            double bx, by, br;
            moments(state_target_blur(&s), &bx, &by, &br);
            CHECK(fabs(bx - wx) <= 0.2 * CELL && fabs(by - wy) <= 0.2 * CELL,
                  "step %ld: ρ̃*'s centre (%.5f, %.5f) follows (%.5f, %.5f)", step, bx, by, wx, wy);
        }
        /* the mass matched at the switch (no sources: the smoke's) */
        double tm = sum(t), rho = sum(s.st.solver.field[METHOD_FIELD_DENSITY]);
        CHECK(fabs(tm - rho) <= 2e-6 * rho, "step %ld: the moving target's mass %.9g, the smoke's %.9g", step, tm,
              rho);
        if (step > 6 && step <= 16)
            CHECK(memcmp(prev, t, sizeof prev) != 0, "step %ld: the target moved on", step);
        if (step > 16) CHECK(memcmp(prev, t, sizeof prev) == 0, "step %ld: the end pose stays", step);
        memcpy(prev, t, sizeof prev);
    }
    /* a still pose is the image itself */
    MorphKey still[1] = {{.step = 5, .target = ring, .move_from = {0.0f, 0.0f}, .move_to = {0.25f, 0.0f}}};
    CHECK(morph_reset(m) == 0 && morph_set_schedule(m, still, 1, NULL, 0, err, sizeof err) == 0, "%s", err);
    if (state_read(m, &s))
        CHECK(shape_diff(state_target(&s), ring) < 1e-6, "move_from 0: the first pose is the image");
    free(s.buf);
    morph_free(m);
}

/* Refusals: one line each, naming the source or key; the schedule before
 * stays. */
static void test_refused(void)
{
    Morph *m = make(disc, square, true);
    if (!m) return;
    float empty[N] = {0};
    MorphKey key = {.step = 10, .target = square};
    const struct {
        MorphSource s;
        const char *msg;
    } bad[] = {
        {{.image = puff, .rate = -1.0f, .from = 0, .to = 5}, "source 1: its rate (-1) must be finite and at least 0"},
        {{.image = puff, .rate = NAN, .from = 0, .to = 5}, "source 1: its rate (nan) must be finite and at least 0"},
        {{.image = puff, .rate = 1.0f, .from = 5, .to = 5},
         "source 1: its first step (from 5) must be before its last (to 5)"},
        {{.cx = 0.5f, .cy = 0.5f, .radius = 0.0f, .rate = 1.0f, .to = 5},
         "source 1: the disc's radius (0) must be more than 0"},
        {{.image = empty, .rate = 1.0f, .to = 5}, "source 1: the image is empty (all zero) or not finite"},
        {{.cx = 5.0f, .cy = 5.0f, .radius = 0.1f, .rate = 1.0f, .to = 5},
         "source 1: the disc covers no cell of the grid"},
    };
    char err[256];
    MorphSource ok = {.image = puff, .rate = 1.0f, .from = 0, .to = 3};
    CHECK(morph_set_schedule(m, &key, 1, &ok, 1, err, sizeof err) == 0, "a good source: %s", err);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = 0;
        CHECK(morph_set_schedule(m, &key, 1, &bad[k].s, 1, err, sizeof err) < 0, "refused: %s", bad[k].msg);
        CHECK(strcmp(err, bad[k].msg) == 0 && !strchr(err, '\n'), "message '%s', expected '%s'", err, bad[k].msg);
    }
    MorphSource two[2] = {ok, bad[0].s};
    CHECK(morph_set_schedule(m, &key, 1, two, 2, err, sizeof err) < 0 && strncmp(err, "source 2: ", 10) == 0,
          "the second source named: %s", err);
    MorphKey off = {.step = 10, .target = square, .move_to = {3.0f, 0.0f}};
    CHECK(morph_set_schedule(m, &off, 1, NULL, 0, err, sizeof err) < 0 &&
              strcmp(err, "key 1: the moving target leaves the grid at its last step (10)") == 0,
          "a target moved off the grid: %s", err);
    MorphKey neg = {.step = 10, .target = square, .scale_to = -1.0f};
    CHECK(morph_set_schedule(m, &neg, 1, NULL, 0, err, sizeof err) < 0 && strncmp(err, "key 1: ", 7) == 0,
          "a negative scale: %s", err);
    /* a vanishing scale and a far move: sampled positions far outside
     * the image (once cast to int unchecked), refused in one line */
    MorphKey tiny = {.step = 10, .target = square, .scale_from = 1e-7f, .scale_to = 1.0f};
    CHECK(morph_set_schedule(m, &tiny, 1, NULL, 0, err, sizeof err) < 0 && strncmp(err, "key 1: ", 7) == 0 &&
              !strchr(err, '\n'),
          "a vanishing scale: %s", err);
    MorphKey far = {.step = 10, .target = square, .move_to = {1e9f, -1e9f}};
    CHECK(morph_set_schedule(m, &far, 1, NULL, 0, err, sizeof err) < 0 && strncmp(err, "key 1: ", 7) == 0,
          "a target moved 1e9 away: %s", err);
    /* the good schedule stays: its source still adds smoke in steps 1..3 */
    double m0, m1;
    morph_metrics(m, &m0, NULL, NULL);
    morph_step(m);
    morph_metrics(m, &m1, NULL, NULL);
    CHECK(m1 > m0 * 1.0001, "after the refusals the schedule before holds (mass %g -> %g)", m0, m1);
    morph_free(m);
}

int main(void)
{
    make_shapes();
    RUN(test_uneven_steps);
    RUN(test_key_params);
    RUN(test_source_mass);
    RUN(test_source_key_mass);
    RUN(test_moving_target);
    RUN(test_refused);
    return check_done();
}
