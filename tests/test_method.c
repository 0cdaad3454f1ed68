/* test_method: the method module's parameters as a zeroed struct (issue 8
 * point 1: a zeroed SolverParams means the defaults, as in sokol). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "method.h"
#include "cpu_solver.h"
#include "testlib.h"

/* Issue 20, point 3: a long timed key's flow starts slow and speeds up to
 * the full limit for the approach; 3-s morphs, --arrive 0 and Fattal's
 * method are not paced; --pace sets the start. */
static void test_pace(void)
{
    SolverParams p;
    method_params_default(&p);
    p.dt = 0.01f;
    p.arrive = METHOD_PACE_TIME; /* the default is auto: a single pair's trip times it (test_arrive_auto) */
    CHECK(method_pace(&p, 0) == 1.0f && method_pace(&p, 150) == 1.0f, "3 s: unpaced");
    p.arrive = 10.0f; /* 1000 steps */
    float r = powf(METHOD_PACE_TIME / 10.0f, METHOD_PACE_POWER);
    CHECK(fabsf(method_pace(&p, 0) - r) < 1e-6f && fabsf(method_pace(&p, 400) - r) < 1e-6f,
          "10 s: starts at %g, got %g and %g", (double)r, (double)method_pace(&p, 0), (double)method_pace(&p, 400));
    CHECK(method_pace(&p, 700) == 1.0f && method_pace(&p, 2000) == 1.0f, "the full limit from %g of the key",
          (double)METHOD_PACE_FULL);
    float last = 0.0f;
    bool rising = true;
    for (long k = 0; k <= 1000; k += 10) {
        rising = rising && method_pace(&p, k) >= last;
        last = method_pace(&p, k);
    }
    CHECK(rising, "the pace never slows down within a key");
    p.pace = 0.5f;
    CHECK(method_pace(&p, 0) == 0.5f, "--pace 0.5 starts at 0.5: %g", (double)method_pace(&p, 0));
    p.pace = 0.0f;
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_pace(&p, 0) == 1.0f, "Fattal's method: unpaced");
    p.force = SOLVER_FORCE_BALANCE;
    p.arrive = 0.0f;
    CHECK(method_pace(&p, 0) == 1.0f, "untimed: unpaced");
    /* the plan: the flow's limit paced, the flow plus drift's not */
    p.arrive = 10.0f;
    MethodStep st;
    method_plan(&p, method_grid(32, 32), 0, 0, 1.0f, &st);
    CHECK(fabsf(st.umax_flow - r * p.umax) < 1e-6f && st.p.umax == p.umax, "plan: flow %g, all %g",
          (double)st.umax_flow, (double)st.p.umax);
}

/* The trip's length: a disc moved by a quarter of the box reads a quarter
 * (the direction of the move), the same image 0; a far trip is paced less. */
static void test_travel_distance(void)
{
    enum { W = 64 };
    static float a[W * W], b[W * W];
    for (int j = 0; j < W; j++)
        for (int i = 0; i < W; i++) {
            float y = (j + 0.5f) / W - 0.5f, xa = (i + 0.5f) / W - 0.3f, xb = (i + 0.5f) / W - 0.55f;
            a[j * W + i] = xa * xa + y * y < 0.01f ? 1.0f : 0.0f;
            b[j * W + i] = xb * xb + y * y < 0.01f ? 1.0f : 0.0f;
        }
    float d = method_travel_distance(W, W, a, b), z = method_travel_distance(W, W, a, a);
    CHECK(fabsf(d - 0.25f) < 0.01f, "a disc moved by 0.25: %g", (double)d);
    static float c[W * W]; /* the disc moved by (0.25, 0.25): a diagonal trip, as long as (0.25, 0) */
    for (int j = 0; j < W; j++)
        for (int i = 0; i < W; i++) {
            float y = (j + 0.5f) / W - 0.75f, x = (i + 0.5f) / W - 0.55f;
            c[j * W + i] = x * x + y * y < 0.01f ? 1.0f : 0.0f;
        }
    float dd = method_travel_distance(W, W, a, c);
    CHECK(fabsf(dd - 0.25f) < 0.015f, "a disc moved by (0.25, 0.25) reads its time at the per-axis limit: %g",
          (double)dd);
    CHECK(z < 1e-6f, "the same image: %g", (double)z);
    SolverParams p;
    method_params_default(&p);
    p.arrive = 10.0f;
    static float e[W * W]; /* the disc moved by 0.5: far enough to be paced less */
    for (int j = 0; j < W; j++)
        for (int i = 0; i < W; i++) {
            float y = (j + 0.5f) / W - 0.5f, x = (i + 0.5f) / W - 0.8f;
            e[j * W + i] = x * x + y * y < 0.01f ? 1.0f : 0.0f;
        }
    float near = method_pace_for_trip(&p, W, W, a, a), far = method_pace_for_trip(&p, W, W, a, e);
    CHECK(near == powf(METHOD_PACE_TIME / 10.0f, METHOD_PACE_POWER) && far > near && far <= 1.0f,
          "pace: %g in place, %g for the trip", (double)near, (double)far);
    p.arrive = 3.0f;
    CHECK(method_pace_for_trip(&p, W, W, a, b) == 0.0f, "3 s: not paced (automatic)");
    /* the force's noise is for reshapes in place: whole at home, none on a
     * trip of 0.5, part of it at 0.25 (between METHOD_NOISE_NEAR and _FAR) */
    float whole = method_noise_trip(W, W, a, a), none = method_noise_trip(W, W, a, e);
    float part = method_noise_trip(W, W, a, b);
    CHECK(whole == 1.0f && none == 0.0f && part > 0.0f && part < 1.0f,
          "the noise's share: %g in place, %g for a trip of 0.25, %g for one of 0.5", (double)whole, (double)part,
          (double)none);
    p.noise_trip = part;
    CHECK(fabsf(method_noise_amp(&p, 0) - p.force_noise * part) < 1e-7f, "the amplitude takes the trip's share");
    p.noise_trip = 0.0f;
    CHECK(method_noise_amp(&p, 0) == 0.0f, "a far trip: no noise");
}

/* --arrive auto, the default: a single pair arrives when its trip, at
 * METHOD_ARRIVE_AUTO_SPEED of --umax, is over, within [METHOD_PACE_TIME,
 * METHOD_ARRIVE_AUTO_MAX]; a key at METHOD_PACE_TIME (its range replaces
 * it: morph.c); a solver without a trip at METHOD_PACE_TIME; "auto" is a
 * value of its own, a negative number is out of range. */
static void test_arrive_auto(void)
{
    enum { W = 64, LW = 256, LH = 64 };
    static float a[W * W], near[W * W], mid[W * W], far[W * W], la[LW * LH], lb[LW * LH];
    TestlibShape sharp = {.domain = true};
    testlib_disc(a, W, W, &sharp, 0.25, 0.5, 0.1, 1.0);
    testlib_disc(near, W, W, &sharp, 0.45, 0.5, 0.1, 1.0); /* a trip of 0.2: 2.2 s at half of 0.18 */
    testlib_disc(mid, W, W, &sharp, 0.6, 0.5, 0.1, 1.0);   /* 0.35: 3.9 s */
    testlib_disc(far, W, W, &sharp, 0.8, 0.5, 0.1, 1.0);   /* 0.55: 6.1 s */
    testlib_disc(la, LW, LH, &sharp, 0.3, 0.5, 0.15, 1.0);
    testlib_disc(lb, LW, LH, &sharp, 3.7, 0.5, 0.15, 1.0); /* 3.4: 38 s, more than the most */
    SolverParams p;
    method_params_default(&p);
    CHECK(p.arrive == SETTING_AUTO, "the default arrival is auto: %g", (double)p.arrive);
    CHECK(method_params_check(&p) == NULL, "auto passes the range check");
    float tn = method_arrive_for_trip(&p, W, W, a, near), tf = method_arrive_for_trip(&p, W, W, a, far);
    float df = method_travel_distance(W, W, a, far), want = df / (METHOD_ARRIVE_AUTO_SPEED * p.umax);
    CHECK(tn == METHOD_PACE_TIME, "a near trip arrives at the floor, %g s: %g", (double)METHOD_PACE_TIME, (double)tn);
    CHECK(fabsf(df - 0.55f) < 0.02f && fabsf(tf - want) < 1e-4f * want && tf > 5.5f && tf < 6.7f,
          "a trip of %g arrives at %g s, want %g", (double)df, (double)tf, (double)want);
    float tl = method_arrive_for_trip(&p, LW, LH, la, lb);
    CHECK(tl == METHOD_ARRIVE_AUTO_MAX, "a trip of 3.4 arrives at the most, %g s: %g",
          (double)METHOD_ARRIVE_AUTO_MAX, (double)tl);
    SolverParams slow = p;
    slow.umax = p.umax / 2.0f;
    float t1 = method_arrive_for_trip(&p, W, W, a, mid), ts = method_arrive_for_trip(&slow, W, W, a, mid);
    CHECK(t1 > METHOD_PACE_TIME && fabsf(ts - 2.0f * t1) < 1e-3f * t1,
          "half the speed limit, twice the time: %g against %g", (double)ts, (double)t1);
    /* method_time_trip: a lone pair's auto from its trip, a key's the floor
     * (its range replaces it), a given arrival and untimed kept */
    SolverParams q = p, k = p, g = p, u = p;
    method_time_trip(&q, W, W, a, far, true);
    method_time_trip(&k, W, W, a, far, false);
    g.arrive = 2.0f;
    method_time_trip(&g, W, W, a, far, true);
    u.arrive = 0.0f;
    method_time_trip(&u, W, W, a, far, true);
    CHECK(q.arrive == tf && k.arrive == METHOD_PACE_TIME && g.arrive == 2.0f && u.arrive == 0.0f,
          "timed for the trip: lone %g, key %g, given 2 -> %g, untimed 0 -> %g", (double)q.arrive,
          (double)k.arrive, (double)g.arrive, (double)u.arrive);
    SolverParams want_q = p;
    want_q.arrive = tf;
    method_time_trip(&want_q, W, W, a, far, true);
    CHECK(want_q.pace == q.pace && want_q.gather_from == q.gather_from && want_q.drift_wait == q.drift_wait &&
              q.pace > 0.0f,
          "auto times the rest as that arrival given: pace %g, gather from %g", (double)q.pace,
          (double)q.gather_from);
    /* a solver given auto without a trip: the floor */
    SolverParams s = p;
    method_params_settle(&s);
    CHECK(s.arrive == METHOD_PACE_TIME, "settled: %g", (double)s.arrive);
    MethodStep st;
    method_plan(&p, method_grid(32, 32), 10, 10, 1.0f, &st);
    CHECK(st.p.arrive == METHOD_PACE_TIME, "the plan of auto without a trip: %g", (double)st.p.arrive);
    /* by name: "auto", a number, and a negative number out of range */
    int ka = method_param_index("arrive");
    double v = 0.0;
    CHECK(ka >= 0 && method_param_parse(ka, "auto", &v) == 0 && (float)v == SETTING_AUTO, "arrive=auto: %g", v);
    CHECK(method_param_parse(ka, "4.5", &v) == 0 && v == 4.5, "arrive=4.5: %g", v);
    SolverParams n = p;
    CHECK(method_param_parse(ka, "-1", &v) == 0, "arrive=-1 parses");
    method_param_set(&n, ka, v);
    const char *why = method_params_check(&n);
    CHECK(why && strstr(why, "auto or in"), "arrive=-1 is out of range, not auto: %s", why ? why : "(passed)");
}

/* Issue 20, point 3: where the gathering and the drift join a timed morph.
 * The default from 30% to 70% of the way; --gather-from F from F to
 * 0.5 + 2F/3, never before F and fully on from there; untimed and Fattal's
 * methods keep their own easing. */
/* The subgrid mixing's iterations (method.h): on by default (C = 4), off
 * at C = 0, with Fattal's force and from the work bound's grid; C·(L/h)²
 * by the strain bound, capped. */
static void test_mix_iters(void)
{
    SolverParams p;
    method_params_default(&p);
    CHECK(p.subgrid == 4.0f && method_mix_iters(128, 128, &p) == 4, "on by default, C 4: %g, %d iterations",
          (double)p.subgrid, method_mix_iters(128, 128, &p));
    p.subgrid = 0.0f;
    CHECK(method_mix_iters(128, 128, &p) == 0, "--subgrid 0: off: %d", method_mix_iters(128, 128, &p));
    p.subgrid = 4.0f;
    CHECK(method_mix_iters(128, 128, &p) == 4, "128^2, C 4: %d (want 4)", method_mix_iters(128, 128, &p));
    CHECK(method_mix_iters(256, 256, &p) == 16, "256^2: %d (want 16)", method_mix_iters(256, 256, &p));
    CHECK(method_mix_iters(512, 512, &p) == METHOD_MIX_ITERS_MAX, "512^2: capped at %d: %d", METHOD_MIX_ITERS_MAX,
          method_mix_iters(512, 512, &p));
    CHECK(method_mix_iters(2048, 2048, &p) == 2, "2048^2: the work bound, 2: %d", method_mix_iters(2048, 2048, &p));
    CHECK(method_mix_iters(4096, 4096, &p) == 0, "4096^2: off: %d", method_mix_iters(4096, 4096, &p));
    CHECK(method_mix_iters(64, 32, &p) == 1, "a small grid: at least one: %d", method_mix_iters(64, 32, &p));
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_mix_iters(128, 128, &p) == 0, "Fattal's method: off");
    p.force = SOLVER_FORCE_BALANCE;
    MethodStep st;
    method_plan(&p, method_grid(128, 128), 0, 0, 1.0f, &st);
    float k = method_mix_k(128, 128, &st, 4);
    CHECK(fabsf(k - 4.0f * st.p.dt * method_transport_share(&st, false) / 4.0f) < 1e-9f, "k at 128^2: %g", (double)k);
    bool planned = false;
    for (int i = 0; i < st.n; i++)
        if (st.stage[i].pass == METHOD_PASS_MIX) planned = st.stage[i].count == 4;
    CHECK(planned, "the plan runs the mixing 4 times at 128^2");
}

/* The gathering's substeps (method_gather_substeps): ceil(METHOD_GATHER_SPEED·dt/h),
 * one at 128² and below at the default dt, within the work bound; the plan
 * applies the fluxes that many times, and none without the gathering. */
static int planned_apply(const SolverParams *p, int w, int h)
{
    MethodStep st;
    method_plan(p, method_grid(w, h), 0, 0, 1.0f, &st);
    for (int i = 0; i < st.n; i++)
        if (st.stage[i].pass == METHOD_PASS_GATHER_APPLY) return st.stage[i].count;
    return 0;
}

/* The gathering's gain on a faint compression (method.h): 1/(ρ_s·ρ_t) by
 * the squeeze's share, between 1 and METHOD_GATHER_GAIN_MAX; the plan's a
 * takes it. */
static void test_gather_gain(void)
{
    enum { W = 64 };
    static float haze[W * W], faint[W * W], dense[W * W], small[W * W], other[W * W], mid[W * W];
    TestlibShape sharp = {.domain = true};
    testlib_disc(dense, W, W, &sharp, 0.5, 0.5, 0.3, 1.0);
    testlib_disc(small, W, W, &sharp, 0.5, 0.5, 0.1, 1.0); /* 9 times smaller: attract 1 */
    testlib_disc(other, W, W, &sharp, 0.4, 0.6, 0.28, 1.0);
    for (int k = 0; k < W * W; k++) haze[k] = 0.02f * dense[k], faint[k] = 0.25f * dense[k];
    SolverParams p;
    method_params_default(&p);
    /* the densities as the gain reads them: Σρ²/Σρ, the target at the start's mass */
    double ms = 0, ms2 = 0, mt = 0, mt2 = 0;
    for (int k = 0; k < W * W; k++) {
        ms += faint[k], ms2 += (double)faint[k] * faint[k];
        mt += small[k], mt2 += (double)small[k] * small[k];
    }
    double rs = ms2 / ms, rt = mt2 / mt * (ms / mt), want = 1.0 / (rs * rt);
    CHECK(want > 1.5 && want < METHOD_GATHER_GAIN_MAX, "the case lies between the bounds: %g", want);
    CHECK(fabs(want - 1.0 / (0.25 * 0.25 * 9.0)) < 0.1 * want, "about 1/(0.25 x 0.25 x 9): %g", want);
    float g = method_gather_gain_for_trip(&p, W, W, faint, small);
    CHECK(fabs(g - want) < 1e-3 * want, "a faint compression gathers %g times as fast, got %g", want, (double)g);
    CHECK(method_gather_gain_for_trip(&p, W, W, haze, small) == METHOD_GATHER_GAIN_MAX, "a haze: the cap");
    CHECK(method_gather_gain_for_trip(&p, W, W, dense, small) == 1.0f, "a dense compression keeps 1");
    CHECK(method_gather_gain_for_trip(&p, W, W, haze, other) == 1.0f, "no compression (attract 0) keeps 1");
    CHECK(method_gather_gain_for_trip(&p, W, W, NULL, small) == 1.0f, "no start: 1");
    SolverParams q = p;
    q.force = SOLVER_FORCE_FATTAL;
    CHECK(method_gather_gain_for_trip(&q, W, W, haze, small) == 1.0f, "Fattal's method: 1");
    /* a squeeze between the bounds takes its share of the gain */
    float area = 0.0f;
    for (int k = 0; k < W * W; k++) area += small[k];
    float sq = sqrtf(METHOD_SQUEEZE_LOW * METHOD_SQUEEZE_HIGH); /* the share is on the ratio's log: 1/2 */
    testlib_disc(mid, W, W, &sharp, 0.5, 0.5, sqrt(sq * area / 3.14159265358979) / W, 1.0);
    for (int k = 0; k < W * W; k++) mid[k] *= 0.02f;
    float a = method_attract_for_trip(&p, W, W, mid, small);
    float gm = method_gather_gain_for_trip(&p, W, W, mid, small);
    CHECK(a > 0.3f && a < 0.7f && fabsf(gm - (1.0f + a * (METHOD_GATHER_GAIN_MAX - 1.0f))) < 1e-4f,
          "attract %g: gain 1 + a(max - 1), got %g", (double)a, (double)gm);
    /* the trip's settings carry it, and the plan's a takes it */
    q = p;
    method_time_trip(&q, W, W, faint, small, true);
    CHECK(q.gather_gain == g, "method_time_trip sets the gain: %g", (double)q.gather_gain);
    q.arrive = 0.0f, q.tramp = 0.0f;
    SolverParams u = q;
    u.gather_gain = 1.0f;
    MethodStep st1, st2;
    method_plan(&u, method_grid(W, W), 10, 10, 1.0f, &st1);
    method_plan(&q, method_grid(W, W), 10, 10, 1.0f, &st2);
    CHECK(st1.gather_a > 0.0f && fabsf(st2.gather_a - g * st1.gather_a) < 1e-6f * st2.gather_a,
          "the plan's a times the gain: %g and %g", (double)st1.gather_a, (double)st2.gather_a);
}

/* Smoke off a one-part target is pulled to it (method.h, METHOD_OFF_LO):
 * the parts, the trip's share and the surplus weight. */
static void test_off_pull(void)
{
    enum { W = 64 };
    static float one[W * W], two[W * W], none[W * W], speck[W * W], near[W * W], far[W * W];
    TestlibShape sharp = {.domain = true};
    testlib_disc(one, W, W, &sharp, 0.5, 0.5, 0.15, 1.0);
    testlib_disc(two, W, W, &sharp, 0.25, 0.5, 0.1, 1.0);
    testlib_disc(far, W, W, &sharp, 0.75, 0.5, 0.1, 1.0); /* far: scratch here */
    for (int k = 0; k < W * W; k++) two[k] = fmaxf(two[k], far[k]);
    memcpy(speck, one, sizeof speck);
    speck[3 * W + 3] = 1.0f; /* one cell: under METHOD_PART_MIN of the smoke */
    testlib_disc(near, W, W, &sharp, 0.4, 0.5, 0.15, 1.0);
    CHECK(method_parts(W, W, one) == 1, "a disc: one part (%d)", method_parts(W, W, one));
    CHECK(method_parts(W, W, two) == 2, "two discs: two parts (%d)", method_parts(W, W, two));
    CHECK(method_parts(W, W, none) == 0, "no smoke: 0 (%d)", method_parts(W, W, none));
    CHECK(method_parts(W, W, speck) == 1, "a speck is not a part (%d)", method_parts(W, W, speck));
    /* a second disc under METHOD_PART_LEVEL of the peak is no part; over it, one */
    testlib_disc(speck, W, W, &sharp, 0.25, 0.5, 0.1, 1.0);
    for (int k = 0; k < W * W; k++) speck[k] = fmaxf(speck[k], 0.05f * far[k]);
    CHECK(method_parts(W, W, speck) == 1, "a disc at 0.05 of the peak is no part (%d)", method_parts(W, W, speck));
    for (int k = 0; k < W * W; k++) speck[k] = fmaxf(speck[k], 0.2f * far[k]);
    CHECK(method_parts(W, W, speck) == 2, "a disc at 0.2 of the peak is one (%d)", method_parts(W, W, speck));
    SolverParams p;
    method_params_default(&p);
    p.arrive = METHOD_PACE_TIME; /* a 3-s trip: the bounds below read its arrival */
    CHECK(method_off_pull_for_trip(&p, W, W, near, one) == 1.0f, "a short trip to one part: 1 (%g)",
          (double)method_off_pull_for_trip(&p, W, W, near, one));
    CHECK(method_off_pull_for_trip(&p, W, W, near, two) == 0.0f, "a split: 0");
    CHECK(method_off_pull_for_trip(&p, W, W, NULL, one) == 0.0f, "no start: 0");
    SolverParams q = p;
    q.force = SOLVER_FORCE_FATTAL;
    CHECK(method_off_pull_for_trip(&q, W, W, near, one) == 0.0f, "Fattal's method: 0");
    q = p;
    q.arrive = 2.0f * METHOD_PACE_TIME; /* a paced trip: the share, joining as the pace rises */
    CHECK(method_off_pull_for_trip(&q, W, W, near, one) == 1.0f, "a paced trip: 1 (%g)",
          (double)method_off_pull_for_trip(&q, W, W, near, one));
    {
        long n = lroundf(q.arrive / q.dt), up = lroundf(METHOD_PACE_UP * (float)n);
        long full = lroundf(METHOD_PACE_FULL * (float)n), midk = (up + full) / 2;
        CHECK(method_off_ramp(&q, 0) == 0.0f && method_off_ramp(&q, up) == 0.0f, "paced: none until the pace rises");
        CHECK(fabsf(method_off_ramp(&q, midk) - 0.5f) < 0.02f, "half as it is half risen (%g)",
              (double)method_off_ramp(&q, midk));
        CHECK(method_off_ramp(&q, full) == 1.0f && method_off_ramp(&q, n) == 1.0f, "whole from METHOD_PACE_FULL");
        SolverParams r = p; /* 3 s: not paced, whole from the start */
        CHECK(method_off_ramp(&r, 0) == 1.0f, "unpaced: whole from step 0");
        r.force = SOLVER_FORCE_FATTAL, r.arrive = q.arrive;
        CHECK(method_off_ramp(&r, 0) == 1.0f, "Fattal's force: not paced");
        /* a single pair's pull is whole from the start, however long its
         * arrival (off_ramp 0, as method_time_trip sets it for a lone trip) */
        SolverParams lone = q, key = q;
        method_time_trip(&lone, W, W, near, one, true);
        method_time_trip(&key, W, W, near, one, false);
        CHECK(lone.off_ramp == 0.0f && key.off_ramp == 1.0f && method_off_ramp(&lone, 0) == 1.0f &&
                  method_off_ramp(&key, 0) == 0.0f,
              "paced: a single pair's pull from step 0 (%g), a key's as the pace rises (%g)",
              (double)method_off_ramp(&lone, 0), (double)method_off_ramp(&key, 0));
        /* method_plan hands the backends the step's share */
        SolverParams z = q;
        z.off_pull = 0.8f;
        MethodStep st;
        method_plan(&z, method_grid(W, W), 0, 0, 1.0f, &st);
        CHECK(st.p.off_pull == 0.0f, "the plan at step 0 of a paced key: 0 (%g)", (double)st.p.off_pull);
        method_plan(&z, method_grid(W, W), midk, midk, 1.0f, &st);
        CHECK(fabsf(st.p.off_pull - 0.8f * method_off_ramp(&z, midk)) < 1e-6f && st.p.off_pull > 0.3f,
              "the plan half risen: 0.8 times the ramp (%g)", (double)st.p.off_pull);
        method_plan(&z, method_grid(W, W), n, n, 1.0f, &st);
        CHECK(st.p.off_pull == 0.8f, "the plan at the key: 0.8 (%g)", (double)st.p.off_pull);
    }
    q = p;
    /* the trip's length over the limit's way in the arrival: whole to
     * METHOD_OFF_FAR_FROM, none from METHOD_OFF_FAR_TO */
    float d = method_travel_distance(W, W, near, one);
    CHECK(d > 0.05f && d < 0.15f, "the trip is 0.1 long (%g)", (double)d);
    q = p;
    q.umax = d / (q.arrive * METHOD_OFF_FAR_TO) * 0.99f;
    CHECK(method_off_pull_for_trip(&q, W, W, near, one) == 0.0f, "a trip beyond the far bound: 0 (%g)",
          (double)method_off_pull_for_trip(&q, W, W, near, one));
    q.umax = d / (q.arrive * 0.5f * (METHOD_OFF_FAR_FROM + METHOD_OFF_FAR_TO));
    float mid = method_off_pull_for_trip(&q, W, W, near, one);
    CHECK(fabsf(mid - 0.5f) < 0.01f, "half way between the bounds: 1/2 (%g)", (double)mid);
    /* a single pair's share reads its trip against the limit's way in 3 s at
     * any arrival (its pull is whole from the start; --arrive auto would
     * read every far trip as near); a key's against its own arrival */
    SolverParams l10 = q, k10 = q;
    l10.arrive = k10.arrive = 10.0f;
    float lone10 = method_off_pull_for_trip(&l10, W, W, near, one);
    method_time_trip(&l10, W, W, near, one, true);
    method_time_trip(&k10, W, W, near, one, false);
    CHECK(lone10 == mid && l10.off_pull == mid && k10.off_pull == 1.0f,
          "10 s: a single pair's share as at 3 s (%g, %g), a key's whole (%g)", (double)lone10, (double)l10.off_pull,
          (double)k10.off_pull);
    q = p;
    method_time_trip(&q, W, W, near, one, true);
    CHECK(q.off_pull == 1.0f, "method_time_trip sets off_pull (%g)", (double)q.off_pull);
    method_time_trip(&q, W, W, near, two, true);
    CHECK(q.off_pull == 0.0f, "and clears it for a split (%g)", (double)q.off_pull);
    /* the surplus weight */
    CHECK(method_off_weight(0.5f, 0.5f) == 0.0f && method_off_weight(0.2f, 0.5f) == 0.0f, "no surplus: 0");
    CHECK(method_off_weight(1.0f, 0.1f) == 0.9f, "off the target: the whole surplus (%g)",
          (double)method_off_weight(1.0f, 0.1f));
    CHECK(method_off_weight(1.0f, METHOD_OFF_HI) == 0.0f && method_off_weight(1.0f, 0.9f) == 0.0f,
          "arrived: none");
    float h = method_off_weight(1.0f, 0.5f * (METHOD_OFF_LO + METHOD_OFF_HI));
    CHECK(fabsf(h - 0.5f * (1.0f - 0.5f * (METHOD_OFF_LO + METHOD_OFF_HI))) < 1e-6f, "half the surplus half way (%g)",
          (double)h);
    CHECK(method_off_weight(NAN, 0.1f) == 0.0f, "NaN: 0");
}

static void test_gather_substeps(void)
{
    SolverParams p;
    method_params_default(&p);
    p.arrive = 0.0f; /* untimed, no easing: the gathering in step 0's plan */
    p.tramp = 0.0f;
    static const struct { int w, h, want; } c[] = {
        {32, 32, 1}, {64, 64, 1}, {128, 128, 1}, {256, 256, 2}, {512, 512, 4}, {512, 256, 2},
        {1024, 1024, 8}, {2048, 2048, 2}, {4096, 4096, 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int n = method_gather_substeps(c[i].w, c[i].h, &p);
        CHECK(n == c[i].want, "%dx%d at dt 0.01: %d gathering substeps (want %d)", c[i].w, c[i].h, n, c[i].want);
        CHECK(planned_apply(&p, c[i].w, c[i].h) == c[i].want, "%dx%d: the plan applies the fluxes %d times",
              c[i].w, c[i].h, planned_apply(&p, c[i].w, c[i].h));
    }
    p.dt = 0.02f;
    CHECK(method_gather_substeps(128, 128, &p) == 2 && method_gather_substeps(64, 64, &p) == 1,
          "dt 0.02: 2 at 128^2, 1 at 64^2");
    p.dt = 0.001f;
    CHECK(method_gather_substeps(512, 512, &p) == 1, "dt 0.001: 1 at 512^2");
    p.dt = 0.01f;
    p.gather = false;
    CHECK(planned_apply(&p, 512, 512) == 0, "no gathering: no fluxes applied");
}

static void test_gather_from(void)
{
    SolverParams p;
    method_params_default(&p);
    p.arrive = 10.0f;
    long n = lroundf(p.arrive / p.dt);
    float vf, rg, last = 0.0f;
    bool rising = true;
    for (long k = 0; k <= n; k++) {
        method_ease(&p, k, k, &vf, &rg);
        float tau = (float)k / (float)n;
        if (tau <= METHOD_ARRIVE_ON) CHECK(rg == 0.0f, "default: off at %g of the way, got %g", (double)tau, (double)rg);
        if (tau >= METHOD_ARRIVE_FULL + 1e-4f) CHECK(rg == 1.0f, "default: on at %g, got %g", (double)tau, (double)rg);
        rising = rising && rg >= last, last = rg;
    }
    SolverParams given = p;
    given.gather_from = METHOD_ARRIVE_ON;
    bool same = true;
    for (long k = 0; k <= n; k++) {
        float rg0, rg1;
        method_ease(&p, k, k, &vf, &rg0);
        method_ease(&given, k, k, &vf, &rg1);
        same = same && rg0 == rg1;
    }
    CHECK(same, "--gather-from 0.3 given is the automatic default start, to the bit");
    p.gather_from = 0.45f;
    float full = METHOD_GATHER_FULL_AT + METHOD_GATHER_FULL_SLOPE * 0.45f;
    CHECK(fabsf(full - 0.8f) < 1e-6f, "0.45: fully on at 0.8 of the way, %g", (double)full);
    for (long k = 0; k <= n; k++) {
        method_ease(&p, k, k, &vf, &rg);
        float tau = (float)k / (float)n;
        if (tau <= 0.45f) CHECK(rg == 0.0f, "0.45: off at %g of the way, got %g", (double)tau, (double)rg);
        if (tau > 0.46f && tau < 0.79f) CHECK(rg > 0.0f && rg < 1.0f, "0.45: rising at %g, got %g", (double)tau, (double)rg);
        if (tau >= full + 1e-4f) CHECK(rg == 1.0f, "0.45: on at %g, got %g", (double)tau, (double)rg);
        rising = rising && (k == 0 || rg >= last), last = rg;
    }
    CHECK(rising, "rg never falls within a key");
    p.gather_from = METHOD_GATHER_FROM_MAX; /* the latest: fully on at the key's step */
    method_ease(&p, n, n, &vf, &rg);
    float at_end = rg;
    method_ease(&p, n - 1, n - 1, &vf, &rg);
    CHECK(at_end == 1.0f && rg < 1.0f, "%g: on at the key's step (%g), not before (%g)", (double)METHOD_GATHER_FROM_MAX,
          (double)at_end, (double)rg);
    p.force = SOLVER_FORCE_FATTAL; /* the paper's method: untimed, the ease-gather ramp */
    method_ease(&p, 0, 0, &vf, &rg);
    float r0 = rg;
    method_ease(&p, n, n, &vf, &rg);
    CHECK(r0 == 0.0f && rg == 1.0f, "Fattal's method: --ease-gather's ramp, %g and %g", (double)r0, (double)rg);
}

/* The compression a key needs, and where its gathering joins: a disc into
 * one of half the radius squeezes 4×; the same image 1; a key that needs
 * little compression joins late, one that squeezes 4× at the default,
 * between them on the ratio's logarithm; 3-s and Fattal's keys 0. */
static void test_squeeze(void)
{
    enum { W = 64 };
    static float big[W * W], small[W * W], mid[W * W];
    TestlibShape sharp = {.domain = true};
    testlib_disc(big, W, W, &sharp, 0.5, 0.5, 0.3, 1.0);
    testlib_disc(small, W, W, &sharp, 0.5, 0.5, 0.15, 1.0);
    testlib_disc(mid, W, W, &sharp, 0.5, 0.5, 0.3 / sqrt(2.8), 1.0);
    float q = method_squeeze(W, W, big, small), one = method_squeeze(W, W, big, big);
    CHECK(fabsf(q - 4.0f) < 0.2f, "a disc into half its radius: %g", (double)q);
    CHECK(fabsf(one - 1.0f) < 1e-6f, "the same image: %g", (double)one);
    CHECK(fabsf(method_squeeze(W, W, small, big) - 0.25f) < 0.02f, "an expansion reads below 1");
    static float faint[W * W];
    for (int k = 0; k < W * W; k++) faint[k] = 0.01f * big[k];
    CHECK(fabsf(method_squeeze(W, W, faint, big) - 1.0f) < 1e-5f, "the density's scale does not count");
    SolverParams p;
    method_params_default(&p);
    p.arrive = 10.0f;
    float same = method_gather_from_for_trip(&p, W, W, big, big, false);
    float squeeze = method_gather_from_for_trip(&p, W, W, big, small, false);
    float between = method_gather_from_for_trip(&p, W, W, big, mid, false);
    float wider = method_gather_from_for_trip(&p, W, W, small, big, false);
    CHECK(same == METHOD_GATHER_LATE && wider == METHOD_GATHER_LATE, "little compression: late, %g and %g",
          (double)same, (double)wider);
    CHECK(fabsf(squeeze - METHOD_ARRIVE_ON) < 0.01f, "4x: at the default, %g", (double)squeeze);
    CHECK(between < METHOD_GATHER_LATE - 0.02f && between > METHOD_ARRIVE_ON + 0.02f, "2.8x: between, %g",
          (double)between);
    static float empty[W * W];
    CHECK(method_gather_from_for_trip(&p, W, W, empty, big, false) == METHOD_GATHER_LATE, "an empty start: late");
    /* the pace: a compression's change is the gathering's, so its flow is
     * not slowed; the same trip without one is paced at the time's share */
    static float tiny[W * W]; /* a squeeze of about 9: well past METHOD_SQUEEZE_HIGH */
    testlib_disc(tiny, W, W, &sharp, 0.5, 0.5, 0.1, 1.0);
    CHECK(method_squeeze(W, W, big, tiny) > 2.0f * METHOD_SQUEEZE_HIGH, "the tiny disc squeezes %g",
          (double)method_squeeze(W, W, big, tiny));
    float rq = method_pace_for_trip(&p, W, W, big, tiny), rs = method_pace_for_trip(&p, W, W, big, big);
    CHECK(rq == 1.0f && fabsf(rs - powf(METHOD_PACE_TIME / 10.0f, METHOD_PACE_POWER)) < 1e-6f,
          "pace: %g squeezing 4x, %g in place", (double)rq, (double)rs);
    p.arrive = 3.0f;
    CHECK(method_gather_from_for_trip(&p, W, W, big, small, false) == 0.0f, "3 s: the default (0)");
    /* a lone pair of 3 s: late by the same squeeze, from METHOD_GATHER_LATE_PAIR */
    float lsame = method_gather_from_for_trip(&p, W, W, big, big, true);
    float lsq = method_gather_from_for_trip(&p, W, W, big, small, true);
    float lbet = method_gather_from_for_trip(&p, W, W, big, mid, true);
    CHECK(lsame == METHOD_GATHER_LATE_PAIR && method_gather_from_for_trip(&p, W, W, small, big, true) == METHOD_GATHER_LATE_PAIR,
          "3 s, a lone pair, little compression: %g", (double)lsame);
    CHECK(fabsf(lsq - METHOD_ARRIVE_ON) < 0.01f, "3 s, a lone pair, 4x: at the default, %g", (double)lsq);
    CHECK(lbet < METHOD_GATHER_LATE_PAIR - 0.02f && lbet > METHOD_ARRIVE_ON + 0.02f, "3 s, a lone pair, 2.8x: between, %g",
          (double)lbet);
    CHECK(METHOD_GATHER_LATE_PAIR <= METHOD_GATHER_FROM_MAX, "within --gather-from's range");
    p.arrive = 10.0f; /* a lone pair of any arrival, paced too: late (twenty-sixth round) */
    CHECK(method_gather_from_for_trip(&p, W, W, big, big, true) == METHOD_GATHER_LATE_PAIR &&
              fabsf(method_gather_from_for_trip(&p, W, W, big, small, true) - METHOD_ARRIVE_ON) < 0.01f,
          "10 s, a lone pair: late as at 3 s, %g", (double)method_gather_from_for_trip(&p, W, W, big, big, true));
    p.arrive = 0.0f;
    CHECK(method_gather_from_for_trip(&p, W, W, big, big, true) == 0.0f, "untimed (0)");
    /* the share of Fattal's pull: a compression's */
    p.arrive = 3.0f;
    CHECK(method_attract_for_trip(&p, W, W, big, big) == 0.0f && method_attract_for_trip(&p, W, W, small, big) == 0.0f,
          "attract: none in place or spreading");
    float atq = method_attract_for_trip(&p, W, W, big, small), atm = method_attract_for_trip(&p, W, W, big, mid);
    CHECK(fabsf(atq - 1.0f) < 0.03f && method_attract_for_trip(&p, W, W, big, tiny) == 1.0f,
          "attract: whole for a 4x squeeze (%g) and a 9x one", (double)atq);
    CHECK(atm > 0.1f && atm < 0.9f, "attract: 2.8x, between: %g", (double)atm);
    p.arrive = 0.0f;
    CHECK(method_attract_for_trip(&p, W, W, big, tiny) == 1.0f, "attract: untimed too");
    CHECK(method_attract_for_trip(&p, W, W, NULL, tiny) == 0.0f, "attract: no start, none");
    p.arrive = 10.0f, p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_gather_from_for_trip(&p, W, W, big, small, false) == 0.0f, "Fattal's method: untimed (0)");
    CHECK(method_attract_for_trip(&p, W, W, big, tiny) == 0.0f, "Fattal's method: its term is whole anyway (0)");
}

/* The pace slows the whole flow: the transport's time is dt·umax_flow/umax
 * without the drift (the same fluxes as the flow times the pace), dt with
 * it (flow + drift already slowed); 1 when not paced. */
static void test_transport_share(void)
{
    SolverParams p;
    method_params_default(&p);
    p.arrive = 10.0f;
    MethodStep st;
    method_plan(&p, method_grid(64, 64), 1, 1, 1.0f, &st);
    float r = method_pace(&p, 1);
    CHECK(r < 1.0f && fabsf(method_transport_share(&st, false) - r) < 1e-6f, "paced: %g, the pace %g",
          (double)method_transport_share(&st, false), (double)r);
    CHECK(method_transport_share(&st, true) == 1.0f, "with the drift: 1");
    p.arrive = 3.0f;
    method_plan(&p, method_grid(64, 64), 1, 1, 1.0f, &st);
    CHECK(method_transport_share(&st, false) == 1.0f, "3 s: not paced");
}

static void test_zeroed_is_default(void)
{
    SolverParams z, d;
    memset(&z, 0, sizeof z);
    method_params_default(&d);
    CHECK(method_params_check(&z) == NULL, "a zeroed struct passes the checks: %s", method_params_check(&z));
    method_params_resolve(&z);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        CHECK(method_param_get(&z, k) == method_param_get(&d, k), "%s: %g, default %g",
              method_param_info[k].name, method_param_get(&z, k), method_param_get(&d, k));
    CHECK(z.set == d.set, "every bit set after resolving");
}

static void test_partial_and_explicit_zero(void)
{
    SolverParams d;
    method_params_default(&d);
    SolverParams p = {.dt = 0.02f, .jacobi = 7};
    method_params_resolve(&p);
    CHECK(p.dt == 0.02f && p.jacobi == 7, "given members kept: dt %g jacobi %d", p.dt, p.jacobi);
    CHECK(p.vd == d.vd && p.sigma == d.sigma && p.gather == d.gather, "the rest default");
    SolverParams q = {.vd = 0.0f, .gather = false, .set = METHOD_SET(METHOD_P_VD) | METHOD_SET(METHOD_P_GATHER)};
    method_params_resolve(&q);
    CHECK(q.vd == 0.0f, "vd 0 on purpose stays 0 (got %g)", q.vd);
    CHECK(!q.gather, "gather off on purpose stays off");
    CHECK(q.vf == d.vf, "vf left 0 without its bit: the default %g (got %g)", d.vf, q.vf);
    SolverParams again = q;
    method_params_resolve(&again);
    CHECK(memcmp(&again, &q, sizeof q) == 0, "resolving twice changes nothing");
    /* the checks see resolved values: a bad value given is still refused */
    SolverParams bad = {.dt = -1.0f};
    CHECK(method_params_check(&bad) != NULL, "dt -1 refused");
    SolverParams nojac = {.jacobi = 0, .vcycles = 0,
                          .set = METHOD_SET(METHOD_P_JACOBI) | METHOD_SET(METHOD_P_VCYCLES)};
    CHECK(method_params_check(&nojac) != NULL, "jacobi 0 and vcycles 0 on purpose: no projection, refused");
}

/* The CPU reference made from a zeroed struct steps exactly as one made
 * from the defaults. */
static void test_backend_resolves(void)
{
    enum { N = 32 };
    static float a[N * N], b[N * N];
    TestlibShape soft = {.domain = true, .width = 0.05};
    testlib_disc(a, N, N, &soft, 0.35, 0.35, 0.2, 1.0);
    testlib_box(b, N, N, &soft, 0.65, 0.6, 0.2, 0.15, 1.0);
    SolverParams z, d;
    memset(&z, 0, sizeof z);
    method_params_default(&d);
    char err[256];
    RefSolver *r0 = ref_create(N, N, &z, err, sizeof err), *r1 = ref_create(N, N, &d, err, sizeof err);
    CHECK(r0 && r1, "ref_create: %s", err);
    if (r0 && r1) {
        ref_set_density(r0, a);
        ref_set_density(r1, a);
        ref_set_target(r0, b, true);
        ref_set_target(r1, b, true);
        for (int k = 0; k < 10; k++) {
            ref_step(r0);
            ref_step(r1);
        }
        CHECK(memcmp(ref_density(r0), ref_density(r1), sizeof a) == 0,
              "a zeroed struct's run equals the defaults' run bit for bit");
        CHECK(ref_params(r0)->dt == d.dt, "ref_params holds the resolved dt");
    }
    ref_free(r0);
    ref_free(r1);
}

/* method_plan from a partly zeroed struct plans the step of its resolved
 * parameters: the same passes and counts as from the defaults with that
 * member given (it read vf, the solves and the gathering from the struct
 * as given, so {.dt = 0.02} planned no pressure solve and no gathering). */
static void test_plan_resolves(void)
{
    SolverParams z = {.dt = 0.02f}, d;
    method_params_default(&d);
    d.dt = 0.02f;
    MethodGrid g = method_grid(64, 48);
    for (long step = 0; step < 400; step += 133) {
        MethodStep a, b;
        method_plan(&z, g, step, step, 1.0f, &a);
        method_plan(&d, g, step, step, 1.0f, &b);
        bool same = a.n == b.n && a.p.vf == b.p.vf && a.rg == b.rg && a.gather_a == b.gather_a &&
                    a.kb == b.kb && a.balance == b.balance;
        for (int s = 0; same && s < a.n; s++)
            same = a.stage[s].pass == b.stage[s].pass && a.stage[s].count == b.stage[s].count;
        CHECK(same, "step %ld: {.dt = 0.02} plans %d stages (%d passes), the defaults %d (%d)", step, a.n,
              method_pass_total(&a), b.n, method_pass_total(&b));
    }
}

/* The force's noise (issue 20, points 1 and 4): a smooth value noise in
 * [−1, 1], the lattice's values at its points, continuous between them,
 * about zero on average, the same for the same seed and another for
 * another; its amplitude fades over the first METHOD_NOISE_FADE of
 * METHOD_PACE_TIME and is 0 for Fattal's method. */
static void test_noise(void)
{
    double sum = 0.0, sq = 0.0, jump = 0.0, differ = 0.0;
    float lo = 1.0f, hi = -1.0f;
    int n = 0;
    for (int j = 0; j < 200; j++)
        for (int i = 0; i < 200; i++) {
            float x = 0.173f * (float)i, y = 0.131f * (float)j;
            float a = method_noise(x, y, 1);
            lo = fminf(lo, a);
            hi = fmaxf(hi, a);
            sum += a;
            sq += (double)a * a;
            n++;
            jump = fmax(jump, fabs((double)method_noise(x + 1e-3f, y, 1) - a));
            differ += fabs((double)method_noise(x, y, 2) - a);
        }
    double mean = sum / n, sd = sqrt(sq / n - mean * mean);
    printf("  info: noise over 200x200 samples: %.3f..%.3f, mean %.4f, sd %.3f, largest change over 1e-3 "
           "of a lattice unit %.4f, mean |seed 2 - seed 1| %.3f\n",
           (double)lo, (double)hi, mean, sd, jump, differ / n);
    CHECK(lo >= -1.0f && hi <= 1.0f, "noise out of [-1, 1]: %g..%g", (double)lo, (double)hi);
    CHECK(hi - lo > 1.5f, "noise spans only %g..%g", (double)lo, (double)hi);
    CHECK(fabs(mean) < 0.05 && sd > 0.2, "noise mean %.3f, sd %.3f: not centred, or flat", mean, sd);
    CHECK(jump < 0.01, "noise not continuous: %.4f over 1e-3 of a lattice unit", jump);
    CHECK(differ / n > 0.2, "seed 2 gives the same pattern (mean |difference| %.3f)", differ / n);
    CHECK(method_noise(3.0f, 7.0f, 5) == method_noise(3.0f, 7.0f, 5), "noise not repeatable");
    /* at a lattice point: its own value, whichever cell it is approached from */
    float at = method_noise(4.0f, 9.0f, 3), near = method_noise(4.0f - 1e-6f, 9.0f - 1e-6f, 3);
    CHECK(fabsf(at - near) < 1e-4f, "the lattice point (4, 9): %g, just below it %g", (double)at, (double)near);

    SolverParams p;
    method_params_default(&p);
    p.force_noise = 0.2f;
    p.dt = 0.01f;
    p.arrive = 3.0f; /* fades over METHOD_NOISE_FADE of METHOD_PACE_TIME (3 s): 60 steps */
    long span = lroundf(METHOD_NOISE_FADE * METHOD_PACE_TIME / p.dt);
    CHECK(method_noise_amp(&p, 0) == 0.2f, "at the start: the whole noise, got %g", (double)method_noise_amp(&p, 0));
    CHECK(fabsf(method_noise_amp(&p, span / 2) - 0.1f) < 1e-6f, "half way through its fade: half, got %g",
          (double)method_noise_amp(&p, span / 2));
    CHECK(method_noise_amp(&p, span) == 0.0f && method_noise_amp(&p, 5000) == 0.0f,
          "after its fade: none, got %g and %g", (double)method_noise_amp(&p, span),
          (double)method_noise_amp(&p, 5000));
    p.arrive = 10.0f; /* a seed: the same fade on a long key */
    CHECK(fabsf(method_noise_amp(&p, span / 2) - 0.1f) < 1e-6f && method_noise_amp(&p, span) == 0.0f,
          "10 s: half at step %ld, got %g", span / 2, (double)method_noise_amp(&p, span / 2));
    p.arrive = 0.0f; /* untimed: over METHOD_NOISE_FADE of METHOD_PACE_TIME */
    CHECK(fabsf(method_noise_amp(&p, span / 2) - 0.1f) < 1e-6f, "untimed: half at step %ld, got %g", span / 2,
          (double)method_noise_amp(&p, span / 2));
    p.arrive = 3.0f;
    MethodStep st;
    method_plan(&p, method_grid(64, 64), 0, 0, 1.0f, &st);
    CHECK(st.noise == 0.2f, "the plan's noise at the start %g", (double)st.noise);
    method_plan(&p, method_grid(64, 64), 1000, 1000, 1.0f, &st);
    CHECK(st.noise == 0.0f, "arrived (step 1000 of a 3-s morph): noise %g", (double)st.noise);
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_noise_amp(&p, 0) == 0.0f, "Fattal's method has no noise");
}

/* Coarse to fine (--coarse): the blur width of each step after a target is
 * set, and the plan's σ */
static void test_coarse_sigma(void)
{
    SolverParams p;
    method_params_default(&p);
    CHECK(p.coarse > 1.0f, "coarse to fine is on by default, got %g", (double)p.coarse);
    p.sigma = 0.05f;
    p.coarse = 2.0f;
    p.dt = 0.01f;
    long end = lroundf(METHOD_COARSE_TIME / p.dt);
    CHECK(fabsf(method_sigma(&p, 0) - 0.1f) < 1e-6f, "at the start: 2 sigma, got %g", (double)method_sigma(&p, 0));
    float last = method_sigma(&p, 0);
    int levels = 1;
    bool quarter = true, falls = true;
    for (long k = 1; k <= end + 5; k++) {
        float s = method_sigma(&p, k);
        falls = falls && s <= last;
        if (s != last) levels++;
        float q = 4.0f * log2f(s / p.sigma); /* whole quarter octaves */
        quarter = quarter && fabsf(q - roundf(q)) < 1e-4f;
        last = s;
    }
    CHECK(falls, "the width never grows again");
    CHECK(quarter, "every width is sigma times 2^(k/4)");
    CHECK(levels == 5, "2 sigma down to sigma in quarter octaves: 5 widths, got %d", levels);
    CHECK(method_sigma(&p, end) == p.sigma && method_sigma(&p, 100000) == p.sigma,
          "from %g s on: sigma itself", (double)METHOD_COARSE_TIME);
    CHECK(method_sigma(&p, end / 2) > p.sigma, "half way: still coarser, got %g", (double)method_sigma(&p, end / 2));
    /* time, not steps: at dt 0.02 half as many steps */
    SolverParams q = p;
    q.dt = 0.02f;
    CHECK(method_sigma(&q, 6) == method_sigma(&p, 12) && method_sigma(&q, 6) != method_sigma(&p, 6),
          "the same width at the same time (0.12 s)");
    q = p;
    q.coarse = 1.0f;
    CHECK(method_sigma(&q, 0) == q.sigma, "coarse 1: off");
    q = p;
    q.force = SOLVER_FORCE_FATTAL;
    CHECK(method_sigma(&q, 0) == q.sigma, "Fattal's method as published: no schedule");
    q = p;
    q.sigma = 0.6f;
    CHECK(method_sigma(&q, 0) == 1.0f, "never wider than 1, got %g", (double)method_sigma(&q, 0));
    /* the plan carries it: every pass of step k blurs at method_sigma */
    MethodStep st;
    method_plan(&p, method_grid(64, 64), 0, 0, 1.0f, &st);
    CHECK(st.p.sigma == method_sigma(&p, 0), "the plan of step 0: %g", (double)st.p.sigma);
    method_plan(&p, method_grid(64, 64), end, end, 1.0f, &st);
    CHECK(st.p.sigma == p.sigma, "the plan after the schedule: %g", (double)st.p.sigma);
}

/* method_time_trip, which measures a trip once, sets what the functions
 * for each setting give, bit for bit: single pairs and keys, 3 s and
 * 10 s, near and far, a compression, given settings kept, untimed and
 * Fattal's. */
static void test_time_trip(void)
{
    enum { W = 64 };
    static float big[W * W], small[W * W], far[W * W];
    TestlibShape sharp = {.domain = true};
    testlib_disc(big, W, W, &sharp, 0.5, 0.5, 0.3, 1.0);
    testlib_disc(small, W, W, &sharp, 0.5, 0.5, 0.15, 1.0);
    testlib_disc(far, W, W, &sharp, 0.8, 0.2, 0.12, 1.0);
    const float *from[] = {big, big, small, big};
    const float *to[] = {big, small, far, far};
    const float arrive[] = {3.0f, 10.0f, 0.0f};
    int cases = 0, same = 0;
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 3; a++)
            for (int lone = 0; lone < 2; lone++)
                for (int f = 0; f < 3; f++) {
                    SolverParams p;
                    method_params_default(&p);
                    p.arrive = arrive[a];
                    if (f == 1) p.force = SOLVER_FORCE_FATTAL;
                    if (f == 2) p.pace = 0.5f, p.gather_from = 0.6f; /* given: kept */
                    SolverParams q = p;
                    method_time_trip(&q, W, W, from[c], to[c], lone);
                    float nt = method_noise_trip(W, W, from[c], to[c]);
                    float at = method_attract_for_trip(&p, W, W, from[c], to[c]);
                    float pc = p.arrive > 0.0f && p.pace == 0.0f ? method_pace_for_trip(&p, W, W, from[c], to[c]) : p.pace;
                    float gf = p.arrive > 0.0f && p.gather_from == 0.0f
                                   ? method_gather_from_for_trip(&p, W, W, from[c], to[c], lone)
                                   : p.gather_from;
                    float dw = method_drift_wait_for_trip(&p, W, W, from[c], to[c], lone);
                    cases++;
                    same += q.noise_trip == nt && q.attract == at && q.pace == pc && q.gather_from == gf &&
                            q.drift_wait == dw;
                }
    CHECK(same == cases, "method_time_trip agrees with the functions in %d of %d cases", same, cases);
    /* and the cases differ among themselves: the check compares something */
    SolverParams a, b;
    method_params_default(&a);
    method_params_default(&b);
    a.arrive = b.arrive = 10.0f;
    method_time_trip(&a, W, W, big, big, true);
    method_time_trip(&b, W, W, small, far, true);
    CHECK(a.noise_trip != b.noise_trip && a.pace != b.pace, "a reshape and a far trip get other settings");
    SolverParams c;
    method_params_default(&c);
    c.force_noise = 0.0f;
    method_time_trip(&c, W, W, small, far, true); /* b's trip, whose share is below 1 */
    CHECK(c.noise_trip == 1.0f && b.noise_trip < 1.0f, "no force noise: the share is not measured (1), got %g",
          (double)c.noise_trip);
}

/* A single pair that must compress: its drift waits for the flow (method.h,
 * METHOD_DRIFT_WAIT); a key, a reshape, Fattal's force and an untimed run
 * do not wait; the fade starts at the wait and is rg once risen. */
static void test_drift_wait(void)
{
    enum { W = 64 };
    static float big[W * W], small[W * W], other[W * W];
    TestlibShape sharp = {.domain = true};
    testlib_disc(big, W, W, &sharp, 0.5, 0.5, 0.3, 1.0);
    testlib_disc(small, W, W, &sharp, 0.5, 0.5, 0.1, 1.0);   /* 9 times smaller: attract 1 */
    testlib_disc(other, W, W, &sharp, 0.4, 0.6, 0.28, 1.0); /* a reshape: attract 0 */
    SolverParams p;
    method_params_default(&p);
    CHECK(method_attract_for_trip(&p, W, W, big, small) == 1.0f, "the squeeze's share is 1");
    float w3 = method_drift_wait_for_trip(&p, W, W, big, small, true);
    CHECK(fabsf(w3 - METHOD_DRIFT_WAIT) < 1e-6f, "a lone compression at 3 s waits %g s, got %g",
          (double)METHOD_DRIFT_WAIT, (double)w3);
    CHECK(method_drift_wait_for_trip(&p, W, W, big, small, false) == 0.0f, "a key does not wait");
    CHECK(method_drift_wait_for_trip(&p, W, W, big, other, true) == 0.0f, "a reshape does not wait");
    SolverParams q = p;
    q.arrive = 1.5f;
    float w15 = method_drift_wait_for_trip(&q, W, W, big, small, true);
    CHECK(fabsf(w15 - 0.5f * METHOD_DRIFT_WAIT) < 1e-6f, "at 1.5 s half as long, got %g", (double)w15);
    q.arrive = 10.0f;
    CHECK(method_drift_wait_for_trip(&q, W, W, big, small, true) == w3, "at 10 s as long as at 3 s");
    q.arrive = 0.0f;
    CHECK(method_drift_wait_for_trip(&q, W, W, big, small, true) == 0.0f, "untimed: no wait");
    q = p;
    q.force = SOLVER_FORCE_FATTAL;
    CHECK(method_drift_wait_for_trip(&q, W, W, big, small, true) == 0.0f, "Fattal's method: no wait");
    /* the fade: 0 until the wait, rg once risen, between in between */
    q = p;
    q.drift_wait = 2.0f;
    float rise = 2.0f * METHOD_DRIFT_RISE / METHOD_DRIFT_WAIT;
    long at_wait = lroundf(2.0f / q.dt), risen = lroundf((2.0f + rise) / q.dt);
    CHECK(method_drift_fade(&q, at_wait - 1, 1.0f) == 0.0f && method_drift_fade(&q, at_wait, 0.7f) == 0.0f,
          "no drift before the wait");
    float mid = method_drift_fade(&q, (at_wait + risen) / 2, 1.0f);
    CHECK(mid > 0.3f && mid < 0.7f, "half way through the rise about half, got %g", (double)mid);
    CHECK(method_drift_fade(&q, risen + 1, 0.7f) == 0.7f, "risen: rg");
    q.drift_wait = 0.0f;
    CHECK(method_drift_fade(&q, 0, 0.25f) == 0.25f, "no wait: rg");
    /* the plan: the gathering on, the drift not yet */
    q = p;
    q.arrive = 0.0f; /* untimed: rg = 1 from step 1 */
    q.tramp = 0.0f;
    q.drift_wait = 2.0f;
    MethodStep st;
    method_plan(&q, method_grid(W, W), 10, 10, 1.0f, &st);
    bool drift = false, gather = false;
    for (int k = 0; k < st.n; k++) {
        drift = drift || st.stage[k].pass == METHOD_PASS_DRIFT_VEL;
        gather = gather || st.stage[k].pass == METHOD_PASS_GATHER_APPLY;
    }
    CHECK(st.rg == 1.0f && st.rd == 0.0f && gather && !drift, "step 10 of a 2-s wait: gathering %d, drift %d, rd %g",
          gather, drift, (double)st.rd);
    method_plan(&q, method_grid(W, W), risen + 1, risen + 1, 1.0f, &st);
    drift = false;
    for (int k = 0; k < st.n; k++) drift = drift || st.stage[k].pass == METHOD_PASS_DRIFT_VEL;
    CHECK(st.rd == 1.0f && drift, "after the rise: the drift runs at rd 1, got %g", (double)st.rd);
    /* the mixing while the drift waits: none of the target's nearness on a
     * lone compression (method_mix_near 0), all of it once the drift has
     * joined, on a reshape (attract 0) and on a key (rd = rg); the strength
     * k the same throughout */
    MethodStep m;
    method_plan(&p, method_grid(W, W), 500, 500, 1.0f, &m); /* the rest of a real step */
    m.p.attract = 1.0f;
    m.rg = 1.0f;
    m.rd = 1.0f;
    float full = method_mix_near(&m), k_full = method_mix_k(W, W, &m, 4);
    m.rd = 0.0f;
    float waiting = method_mix_near(&m), k_wait = method_mix_k(W, W, &m, 4);
    m.rd = 0.25f;
    float rising = method_mix_near(&m);
    m.rd = 0.0f;
    m.p.attract = 0.0f;
    float reshape = method_mix_near(&m);
    m.p.attract = 0.5f;
    float half = method_mix_near(&m);
    m.p.attract = 1.0f;
    m.rg = 0.0f;
    float before = method_mix_near(&m);
    CHECK(full == 1.0f && waiting == 0.0f && before == 1.0f,
          "the nearness a compression's mixing takes: %g once the drift joined, %g while it waits, %g before the "
          "gathering",
          (double)full, (double)waiting, (double)before);
    CHECK(fabsf(rising - 0.25f) < 1e-6f && reshape == 1.0f && fabsf(half - 0.5f) < 1e-6f,
          "while the drift rises (rd 0.25) %g, a reshape %g, attract 0.5 %g", (double)rising, (double)reshape,
          (double)half);
    CHECK(k_full > 0.0f && k_wait == k_full, "the mixing's strength does not wait: %g and %g", (double)k_wait,
          (double)k_full);
}

/* The mixing's edge excess fades out long after the arrival
 * (method_mix_edge_w): rg to the bit until METHOD_MIX_EDGE_LATE_ON
 * arrivals, none from METHOD_MIX_EDGE_LATE_OFF, falling in between; the
 * arrival's own steps count (a 6-s arrival fades twice as late); untimed
 * runs and Fattal's force keep rg; method_plan hands it on. */
static void test_mix_edge_late(void)
{
    enum { W = 64 };
    SolverParams p;
    method_params_default(&p);
    p.dt = 0.01f;
    p.arrive = 3.0f; /* 300 steps */
    float rg = 0.7f;
    CHECK(method_mix_edge_w(&p, 0, rg) == rg && method_mix_edge_w(&p, 1200, rg) == rg,
          "until 4 arrivals the weight is rg: %g at step 0, %g at step 1200", (double)method_mix_edge_w(&p, 0, rg),
          (double)method_mix_edge_w(&p, 1200, rg));
    float a = method_mix_edge_w(&p, 1300, 1.0f), b = method_mix_edge_w(&p, 1500, 1.0f),
          c = method_mix_edge_w(&p, 1700, 1.0f);
    CHECK(a < 1.0f && a > b && b > c && c > 0.0f && fabsf(b - 0.5f) < 1e-6f,
          "between 4 and 6 arrivals it falls: %g, %g (half way), %g at steps 1300, 1500, 1700", (double)a, (double)b,
          (double)c);
    CHECK(method_mix_edge_w(&p, 1800, 1.0f) == 0.0f && method_mix_edge_w(&p, 100000, 1.0f) == 0.0f,
          "from 6 arrivals none: %g at step 1800", (double)method_mix_edge_w(&p, 1800, 1.0f));
    p.arrive = 6.0f;
    CHECK(method_mix_edge_w(&p, 2400, 1.0f) == 1.0f && fabsf(method_mix_edge_w(&p, 3000, 1.0f) - 0.5f) < 1e-6f,
          "a 6-s arrival: whole at step 2400, half at 3000 (%g)", (double)method_mix_edge_w(&p, 3000, 1.0f));
    p.arrive = 0.0f;
    CHECK(method_mix_edge_w(&p, 100000, rg) == rg, "untimed: rg (%g)", (double)method_mix_edge_w(&p, 100000, rg));
    p.arrive = 3.0f;
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_mix_edge_w(&p, 100000, rg) == rg, "Fattal's force: rg (%g)",
          (double)method_mix_edge_w(&p, 100000, rg));
    method_params_default(&p);
    p.dt = 0.01f;
    p.arrive = 3.0f;
    MethodStep st;
    method_plan(&p, method_grid(W, W), 200, 200, 1.0f, &st);
    CHECK(st.mix_edge_w == st.rg, "the plan at step 200: the weight %g is rg %g", (double)st.mix_edge_w,
          (double)st.rg);
    method_plan(&p, method_grid(W, W), 5000, 1500, 1.0f, &st);
    CHECK(st.rg == 1.0f && fabsf(st.mix_edge_w - 0.5f) < 1e-6f,
          "the plan reads the arrival's clock (kstep 1500 of a target set at step 3500): %g", (double)st.mix_edge_w);
}

int main(void)
{
    RUN(test_pace);
    RUN(test_travel_distance);
    RUN(test_arrive_auto);
    RUN(test_mix_iters);
    RUN(test_gather_from);
    RUN(test_gather_substeps);
    RUN(test_gather_gain);
    RUN(test_off_pull);
    RUN(test_mix_edge_late);
    RUN(test_squeeze);
    RUN(test_transport_share);
    RUN(test_zeroed_is_default);
    RUN(test_partial_and_explicit_zero);
    RUN(test_backend_resolves);
    RUN(test_plan_resolves);
    RUN(test_noise);
    RUN(test_coarse_sigma);
    RUN(test_time_trip);
    RUN(test_drift_wait);
    return check_done();
}
