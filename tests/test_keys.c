/* test_keys: keyframe sequences through the morph API (issue 9, point 1),
 * on the CPU reference (no GL). A key switches only the target, before the
 * first step of its range; velocity and density carry over; the new target
 * is scaled to the smoke's mass at the switch; the error is against the
 * active key. Tier 1: a 32x32 grid, a few dozen steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "testlib.h"

#define W 32
#define H 32
#define N (W * H)
#define EVERY 5

static float disc[N], square[N], ring[N];

static void make_shapes(void) { testlib_key_shapes(W, H, NULL, disc, square, ring); }

static Morph *make(const float *start, const float *target)
{
    SolverParams p;
    method_params_default(&p);
    p.arrive = EVERY * p.dt; /* as each key's: it arrives at its step, EVERY steps on */
    /* the force's noise follows each key's trip (test_noise_for_trip), which
     * morph_set_target does not know: off, so that a key's switch and a
     * target set by hand compare bit for bit */
    p.force_noise = 0.0f;
    /* and the gathering's start: a lone pair gathers later than a key
     * (METHOD_GATHER_LATE_PAIR), so both are given the key's start */
    p.gather_from = METHOD_ARRIVE_ON;
    Morph *m = testlib_morph(W, H, &p, start, target, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    return m;
}

static double sum(const float *f) { return testlib_sum(f, N); }

/* Σ|ρ − s·key|/Σ s·key with s = Σρ_ref/Σkey: the error against key scaled
 * to the mass ref_mass. */
static double error_against(const float *rho, const float *key, double ref_mass)
{
    double s = ref_mass / sum(key), e = 0.0, t = 0.0;
    for (int k = 0; k < N; k++) {
        e += fabs((double)rho[k] - s * key[k]);
        t += s * key[k];
    }
    return e / t;
}

static bool same(const float *a, const float *b)
{
    return memcmp(a, b, N * sizeof(float)) == 0;
}

/* The schedule: key k is the goal of steps (k-1)N+1..kN, the last after. */
static void test_schedule(void)
{
    Morph *m = make(disc, square);
    if (!m) return;
    CHECK(morph_key_count(m) == 1 && morph_key(m) == 1 && morph_key_every(m) == 0,
          "no sequence: 1 key, key 1, every 0");
    CHECK(morph_key_at(m, 100000) == 1, "one key is the goal of every step");
    const float *keys[3] = {square, ring, disc};
    CHECK(morph_set_keys(m, keys, 3, EVERY) == 0, "morph_set_keys");
    CHECK(morph_key_count(m) == 3 && morph_key_every(m) == EVERY, "3 keys every %d", EVERY);
    static const struct { long step; int key; } at[] = {
        {0, 1}, {1, 1}, {5, 1}, {6, 2}, {10, 2}, {11, 3}, {15, 3}, {16, 3}, {1000, 3}};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
        CHECK(morph_key_at(m, at[k].step) == at[k].key, "step %ld: key %d, expected %d", at[k].step,
              morph_key_at(m, at[k].step), at[k].key);
    /* the active key follows the steps taken: key k at step kN still */
    for (long s = 1; s <= 3 * EVERY + 2; s++) {
        CHECK(morph_step(m) == 0, "step %ld", s);
        int want = s <= EVERY ? 1 : s <= 2 * EVERY ? 2 : 3;
        CHECK(morph_key(m) == want, "after step %ld: key %d, expected %d", s, morph_key(m), want);
    }
    CHECK(morph_reset(m) == 0 && morph_key(m) == 1 && morph_step_count(m) == 0,
          "reset: back to key 1 at step 0");
    /* an empty key is refused, and the sequence stays as it was */
    float empty[N] = {0};
    const float *bad[2] = {square, empty};
    CHECK(morph_set_keys(m, bad, 2, EVERY) < 0 && morph_key_count(m) == 3,
          "an empty key is refused");
    morph_free(m);
}

/* Issue 20: the force's noise seeds a reshape in place; a far trip (a
 * disc across the box) has none, a key back home has it again. */
static void test_noise_for_trip(void)
{
    static float left[N], right[N], ring[N], hole[N];
    TestlibShape soft = {.domain = true, .width = 2.0 / W};
    testlib_disc(left, W, H, &soft, 0.2, 0.5, 0.12, 1.0);
    testlib_disc(right, W, H, &soft, 0.8, 0.5, 0.12, 1.0);
    testlib_disc(ring, W, H, &soft, 0.2, 0.5, 0.2, 1.0);
    testlib_disc(hole, W, H, &soft, 0.2, 0.5, 0.14, 1.0);
    for (int k = 0; k < N; k++) ring[k] -= hole[k];
    SolverParams p;
    method_params_default(&p);
    Morph *m = testlib_morph(W, H, &p, left, right, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    if (!m) return;
    CHECK(p.force_noise > 0.0f && morph_params(m)->noise_trip == 0.0f, "across the box: noise share %g",
          (double)morph_params(m)->noise_trip);
    const float *keys[2] = {ring, right};
    CHECK(morph_set_keys(m, keys, 2, 50) == 0 && morph_step(m) == 0 &&
              morph_params(m)->noise_trip == 1.0f && morph_params(m)->force_noise == p.force_noise,
          "key 1, a ring around the disc: noise share %g", (double)morph_params(m)->noise_trip);
    for (int s = 0; s < 50; s++) morph_step(m);
    CHECK(morph_params(m)->noise_trip == 0.0f, "key 2, across the box: noise share %g",
          (double)morph_params(m)->noise_trip);
    /* read back and given back (as the window does): the share is the trip's, not compounded */
    SolverParams back = *morph_params(m);
    CHECK(morph_set_params(m, &back) == 0 && morph_params(m)->force_noise == p.force_noise,
          "given back: force noise %g", (double)morph_params(m)->force_noise);
    morph_free(m);
}

/* Issue 20, point 3: a timed morph's pace and gathering start follow its
 * trip, by the same rule for a single pair (its --arrive) as for each key
 * (its range): a large flat square into a small disc is a compression, so
 * the gathering joins at the default 30%; the way back (morph_swap) and a
 * key of the same size join late (a lone pair at METHOD_GATHER_LATE_PAIR,
 * a key at METHOD_GATHER_LATE); an explicit --gather-from is kept; a 3-s
 * morph is not paced, and as a lone pair that needs little compression it
 * gathers late, as a key it does not. */
static void test_timing_for_trip(void)
{
    static float big[N], small[N];
    TestlibShape sharp = {.domain = true};
    testlib_box(big, W, H, &sharp, 0.5, 0.5, 0.4, 0.4, 1.0);
    testlib_disc(small, W, H, &sharp, 0.5, 0.5, 0.12, 1.0);
    SolverParams p;
    method_params_default(&p);
    p.arrive = 10.0f;
    Morph *m = testlib_morph(W, H, &p, big, small, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    if (!m) return;
    float want = method_gather_from_for_trip(&p, W, H, big, small, true);
    CHECK(fabsf(want - METHOD_ARRIVE_ON) < 1e-6f, "the square into the disc squeezes: %g", (double)want);
    CHECK(morph_params(m)->gather_from == want && morph_params(m)->pace == method_pace_for_trip(&p, W, H, big, small) &&
              morph_params(m)->pace > 0.0f,
          "a single pair: gather-from %g, pace %g", (double)morph_params(m)->gather_from,
          (double)morph_params(m)->pace);
    CHECK(morph_params(m)->noise_trip == method_noise_trip(W, H, big, small) && morph_params(m)->noise_trip == 1.0f &&
              morph_params(m)->force_noise == p.force_noise,
          "a reshape in place keeps the whole force noise: %g of %g", (double)morph_params(m)->noise_trip,
          (double)morph_params(m)->force_noise);
    CHECK(morph_params(m)->attract == method_attract_for_trip(&p, W, H, big, small) && morph_params(m)->attract > 0.9f,
          "a single pair that squeezes keeps Fattal's pull: %g", (double)morph_params(m)->attract);
    CHECK(morph_swap(m) == 0 && morph_params(m)->gather_from == METHOD_GATHER_LATE_PAIR,
          "the way back spreads, a lone pair: late, %g", (double)morph_params(m)->gather_from);
    CHECK(morph_params(m)->attract == 0.0f, "the way back: none of it, %g", (double)morph_params(m)->attract);
    CHECK(morph_set_params(m, &p) == 0 && morph_params(m)->gather_from == METHOD_GATHER_LATE_PAIR,
          "set again as given, still automatic for the trip now: %g", (double)morph_params(m)->gather_from);
    /* as the window does: the parameters read back, one changed, given back;
     * the timing stays automatic (the way back spreads again) */
    SolverParams back = *morph_params(m);
    back.vf *= 1.1f;
    CHECK(morph_set_params(m, &back) == 0 && morph_swap(m) == 0 &&
              fabsf(morph_params(m)->gather_from - METHOD_ARRIVE_ON) < 1e-6f,
          "read back and given back: still automatic, the squeeze again %g", (double)morph_params(m)->gather_from);
    SolverParams q = p;
    q.gather_from = 0.6f;
    CHECK(morph_set_params(m, &q) == 0 && morph_params(m)->gather_from == 0.6f, "--gather-from 0.6 is kept");
    morph_free(m);
    /* keys of 1000 steps (10 s): each its own trip, from the key before */
    m = testlib_morph(W, H, &p, big, small, true, MORPH_CPU, NULL);
    if (!m) return;
    const float *keys[2] = {small, big};
    CHECK(morph_set_keys(m, keys, 2, 1000) == 0, "morph_set_keys");
    CHECK(morph_step(m) == 0 && fabsf(morph_params(m)->gather_from - METHOD_ARRIVE_ON) < 1e-6f,
          "key 1 squeezes: %g", (double)morph_params(m)->gather_from);
    CHECK(morph_params(m)->attract > 0.9f, "key 1 squeezes: attract %g", (double)morph_params(m)->attract);
    for (int s = 0; s < 1000; s++) morph_step(m);
    CHECK(morph_key(m) == 2 && morph_params(m)->gather_from == METHOD_GATHER_LATE, "key 2 spreads: %g",
          (double)morph_params(m)->gather_from);
    CHECK(morph_params(m)->attract == 0.0f, "key 2 spreads: attract %g", (double)morph_params(m)->attract);
    morph_free(m);
    p.arrive = 3.0f;
    m = testlib_morph(W, H, &p, big, small, true, MORPH_CPU, NULL);
    if (!m) return;
    CHECK(fabsf(morph_params(m)->gather_from - METHOD_ARRIVE_ON) < 1e-6f && morph_params(m)->pace == 0.0f,
          "3 s, a compression: not paced, the default start: %g", (double)morph_params(m)->gather_from);
    CHECK(morph_swap(m) == 0 && morph_params(m)->gather_from == METHOD_GATHER_LATE_PAIR &&
              morph_params(m)->pace == 0.0f,
          "3 s, the way back spreads: a lone pair gathers late: %g", (double)morph_params(m)->gather_from);
    morph_free(m);
    /* a lone 3-s pair that travels (a disc to a disc elsewhere) gathers late;
     * the same trip as a 3-s key keeps the default start */
    static float here[N], there[N];
    testlib_disc(here, W, H, &sharp, 0.3, 0.3, 0.12, 1.0);
    testlib_disc(there, W, H, &sharp, 0.7, 0.7, 0.12, 1.0);
    m = testlib_morph(W, H, &p, here, there, true, MORPH_CPU, NULL);
    if (!m) return;
    CHECK(morph_params(m)->gather_from == METHOD_GATHER_LATE_PAIR, "3 s, a lone trip: %g",
          (double)morph_params(m)->gather_from);
    const float *trip[2] = {there, here};
    CHECK(morph_set_keys(m, trip, 2, 300) == 0 && morph_step(m) == 0 && morph_params(m)->gather_from == 0.0f,
          "a 3-s key of the same trip: the default start, %g", (double)morph_params(m)->gather_from);
    morph_free(m);
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(method_gather_from_for_trip(&p, W, H, here, there, true) == 0.0f, "Fattal's method: untimed");
}

/* At a key only the target changes: a sequence's state after the switch
 * equals, bit for bit, a morph whose target was set by hand at that step;
 * its velocity differs from a morph that starts from the same density
 * with the second key as its target and no velocity. */
static void test_carry_over(void)
{
    Morph *a = make(disc, square), *b = make(disc, square);
    float *rho = malloc(4 * N * sizeof(float) + 4 * N * sizeof(float));
    if (!a || !b || !rho) goto done;
    float *rb = rho + N, *ua = rb + N, *va = ua + N, *ub = va + N, *vb = ub + N, *uc = vb + N,
          *vc = uc + N;
    const float *keys[2] = {square, ring};
    CHECK(morph_set_keys(a, keys, 2, EVERY) == 0, "morph_set_keys");
    for (int s = 0; s < EVERY; s++) {
        morph_step(a);
        morph_step(b);
    }
    morph_read_density(a, rho);
    morph_read_velocity(a, ua, va);
    double speed = 0.0;
    for (int k = 0; k < N; k++) speed = fmax(speed, hypot(ua[k], va[k]));
    CHECK(speed > 1e-4, "the smoke moves before the switch (max |u| %g)", speed);

    /* the smoke as it is at the switch, from rest, driven to the second key */
    Morph *c = make(rho, ring);
    CHECK(morph_set_target(b, ring) == 0, "morph_set_target");
    morph_step(a);
    morph_step(b);
    CHECK(morph_key(a) == 2 && morph_step_count(a) == EVERY + 1, "key 2 at step %d", EVERY + 1);
    morph_read_density(a, rho);
    morph_read_density(b, rb);
    morph_read_velocity(a, ua, va);
    morph_read_velocity(b, ub, vb);
    CHECK(same(rho, rb) && same(ua, ub) && same(va, vb),
          "the switch is the target alone: the state equals morph_set_target at step %d", EVERY);
    if (c) {
        morph_step(c);
        morph_read_velocity(c, uc, vc);
        double d = 0.0;
        for (int k = 0; k < N; k++) d = fmax(d, hypot(ua[k] - uc[k], va[k] - vc[k]));
        CHECK(d > 0.1 * speed, "velocity carried over: max |u - u_from_rest| %g (max |u| %g)", d,
              speed);
        morph_free(c);
    }
done:
    free(rho);
    morph_free(a);
    morph_free(b);
}

/* The error is against the active key, scaled to the mass at its switch;
 * the mass stays. */
static void test_error_active_key(void)
{
    Morph *m = make(disc, square);
    float *rho = malloc(N * sizeof(float));
    if (!m || !rho) goto done;
    const float *keys[3] = {square, ring, disc};
    CHECK(morph_set_keys(m, keys, 3, EVERY) == 0, "morph_set_keys");
    double mass0 = sum(disc), switch_mass = mass0;
    for (long s = 0; s <= 3 * EVERY + 1; s++) {
        if (s > 0) {
            if (s > 1 && s % EVERY == 1 && s <= 2 * EVERY + 1) { /* the mass a new key is scaled to */
                morph_read_density(m, rho);
                switch_mass = sum(rho);
            }
            morph_step(m);
        }
        double mass, error;
        morph_observe(m, rho, &mass, &error, NULL);
        const float *key = keys[morph_key_at(m, s) - 1];
        double want = error_against(rho, key, switch_mass);
        CHECK(fabs(error - want) <= 1e-5 * want, "step %ld: error %.8g, against key %d %.8g", s,
              error, morph_key_at(m, s), want);
        CHECK(fabs(mass - mass0) <= 1e-5 * mass0, "step %ld: mass %.8g, start %.8g", s, mass, mass0);
    }
done:
    free(rho);
    morph_free(m);
}

int main(void)
{
    make_shapes();
    RUN(test_schedule);
    RUN(test_timing_for_trip);
    RUN(test_noise_for_trip);
    RUN(test_carry_over);
    RUN(test_error_active_key);
    return check_done();
}
