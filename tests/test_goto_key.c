/* test_goto_key: morph_goto_key, the window's next / previous key (issue 9,
 * point 4), on the CPU reference (no GL). Key k becomes the goal at once,
 * with the step count at the step before key k's range; the density and the
 * velocity carry over; the schedule goes on from there (uneven keys too);
 * key parameters follow; out-of-range keys are refused. Tier 1: a 32x32
 * grid, a few dozen steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "testlib.h"

#define W 32
#define H 32
#define N (W * H)

static float disc[N], square[N], ring[N];

/* An uneven schedule: key 1 for steps 1..4, key 2 for 5..11, key 3 for 12..20. */
static const long steps[3] = {4, 11, 20};

static void make_shapes(void) { testlib_key_shapes(W, H, NULL, disc, square, ring); }

/* disc -> square (4) -> ring (11) -> disc (20); key 2 with vf 0.8 when
 * vf2 is set. */
static Morph *make(bool vf2)
{
    SolverParams p, p2;
    method_params_default(&p);
    p2 = p;
    p2.vf = 0.8f;
    Morph *m = testlib_morph(W, H, &p, disc, square, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    if (!m) return NULL;
    char err[256] = "";
    MorphKey k[3] = {{.step = steps[0], .target = square},
                     {.step = steps[1], .target = ring, .params = vf2 ? &p2 : NULL},
                     {.step = steps[2], .target = disc}};
    int rc = morph_set_schedule(m, k, 3, NULL, 0, err, sizeof err);
    CHECK(rc == 0, "morph_set_schedule: %s", err);
    if (rc) {
        morph_free(m);
        return NULL;
    }
    return m;
}

static double sum(const float *f) { return testlib_sum(f, N); }

static bool same(const float *a, const float *b) { return memcmp(a, b, N * sizeof(float)) == 0; }

static void run_to(Morph *m, long step)
{
    while (morph_step_count(m) < step) CHECK(morph_step(m) == 0, "step %ld", morph_step_count(m) + 1);
}

/* The state (density, velocity) of M into buf (3N floats). */
static void state(Morph *m, float *buf)
{
    CHECK(morph_read_density(m, buf) == 0 && morph_read_velocity(m, buf + N, buf + 2 * N) == 0,
          "read the state back");
}

/* A jump forward: the target and the step count change, nothing else; then
 * the schedule goes on from the new key's range. */
static void test_next(void)
{
    Morph *m = make(false);
    float *before = malloc(3 * N * sizeof(float)), *after = malloc(3 * N * sizeof(float));
    if (!m || !before || !after) goto done;
    run_to(m, 7); /* key 2 (5..11) */
    CHECK(morph_key(m) == 2, "key 2 at step 7, got %d", morph_key(m));
    state(m, before);
    double mass0, mass1, err;
    morph_observe(m, NULL, &mass0, NULL, NULL);
    CHECK(morph_goto_key(m, 3) == 0, "goto key 3");
    CHECK(morph_key(m) == 3 && morph_step_count(m) == steps[1],
          "goto 3: key %d at step %ld, expected key 3 at step %ld", morph_key(m), morph_step_count(m),
          steps[1]);
    CHECK(morph_key_at(m, morph_step_count(m) + 1) == 3, "the next step is key 3's first");
    state(m, after);
    CHECK(same(before, after) && same(before + N, after + N) && same(before + 2 * N, after + 2 * N),
          "the density and the velocity carry over");
    /* the goal is key 3 (the disc), scaled to the smoke's mass: the error
     * is against it */
    morph_observe(m, after, &mass1, &err, NULL);
    double s = mass1 / sum(disc), e = 0.0, t = 0.0;
    for (int k = 0; k < N; k++) {
        e += fabs(after[k] - s * disc[k]);
        t += s * disc[k];
    }
    CHECK(fabs(err - e / t) <= 1e-5 * (e / t), "error %.8g, against key 3 %.8g", err, e / t);
    CHECK(fabs(mass1 - mass0) <= 1e-6 * mass0, "mass %.8g before, %.8g after", mass0, mass1);
    /* the last key: no key after it; the step count goes on past its step */
    run_to(m, steps[2] + 3);
    CHECK(morph_key(m) == 3, "the last key stays the goal");
    CHECK(morph_goto_key(m, 4) < 0 && morph_key(m) == 3 && morph_step_count(m) == steps[2] + 3,
          "goto 4 of 3 is refused and changes nothing");
    CHECK(morph_goto_key(m, 0) < 0 && morph_goto_key(m, -1) < 0, "goto 0 and -1 are refused");
done:
    free(before);
    free(after);
    morph_free(m);
}

/* A jump back: to key 2 from key 3 sets the step count to key 1's step, and
 * key 3 comes back at its step; key 1 goes to step 0 without a reset. */
static void test_previous(void)
{
    Morph *m = make(false);
    float *before = malloc(3 * N * sizeof(float)), *after = malloc(3 * N * sizeof(float));
    if (!m || !before || !after) goto done;
    run_to(m, 15); /* key 3 */
    CHECK(morph_goto_key(m, 2) == 0 && morph_key(m) == 2 && morph_step_count(m) == steps[0],
          "goto 2: key %d at step %ld, expected key 2 at step %ld", morph_key(m), morph_step_count(m),
          steps[0]);
    for (long s = steps[0] + 1; s <= steps[1] + 1; s++) {
        morph_step(m);
        int want = s <= steps[1] ? 2 : 3;
        CHECK(morph_key(m) == want, "after the jump back, step %ld: key %d, expected %d", s, morph_key(m),
              want);
    }
    state(m, before);
    CHECK(morph_goto_key(m, 1) == 0 && morph_key(m) == 1 && morph_step_count(m) == 0,
          "goto 1: key %d at step %ld, expected key 1 at step 0", morph_key(m), morph_step_count(m));
    state(m, after);
    CHECK(same(before, after) && same(before + N, after + N) && same(before + 2 * N, after + 2 * N),
          "goto 1 is not a reset: the density and the velocity carry over");
    CHECK(!same(after, disc), "the smoke is not the start image again");
    run_to(m, steps[0] + 1);
    CHECK(morph_key(m) == 2, "key 2 again at step %ld", steps[0] + 1);
done:
    free(before);
    free(after);
    morph_free(m);
}

/* A jump to a key's range at the step where the schedule switches anyway
 * changes nothing: the run equals, bit for bit, one without it. */
static void test_goto_at_switch(void)
{
    Morph *a = make(false), *b = make(false);
    float *sa = malloc(3 * N * sizeof(float)), *sb = malloc(3 * N * sizeof(float));
    if (!a || !b || !sa || !sb) goto done;
    run_to(a, steps[0]);
    run_to(b, steps[0]);
    CHECK(morph_goto_key(a, 2) == 0 && morph_step_count(a) == steps[0], "goto 2 at step %ld", steps[0]);
    run_to(a, 14);
    run_to(b, 14);
    state(a, sa);
    state(b, sb);
    CHECK(morph_key(a) == 3 && morph_key(b) == 3, "both at key 3");
    CHECK(same(sa, sb) && same(sa + N, sb + N) && same(sa + 2 * N, sb + 2 * N),
          "a goto at the switch is the switch itself");
done:
    free(sa);
    free(sb);
    morph_free(a);
    morph_free(b);
}

/* A key's own parameters come with it, and go with it. */
static void test_key_params(void)
{
    Morph *m = make(true);
    if (!m) return;
    float base = morph_params(m)->vf;
    run_to(m, 2);
    CHECK(morph_goto_key(m, 2) == 0 && fabsf(morph_params(m)->vf - 0.8f) < 1e-7f,
          "goto 2: vf %g, expected key 2's 0.8", morph_params(m)->vf);
    CHECK(morph_goto_key(m, 3) == 0 && morph_params(m)->vf == base, "goto 3: vf %g, expected the base %g",
          morph_params(m)->vf, base);
    CHECK(morph_goto_key(m, 1) == 0 && morph_params(m)->vf == base, "goto 1: vf %g, expected the base %g",
          morph_params(m)->vf, base);
    morph_free(m);
}

/* Without a schedule there is key 1 only; morph_key_target gives the keys
 * as given. */
static void test_one_target_and_images(void)
{
    Morph *m = testlib_morph(W, H, NULL, disc, square, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    if (!m) return;
    run_to(m, 3);
    CHECK(morph_goto_key(m, 2) < 0 && morph_step_count(m) == 3, "no schedule: goto 2 is refused");
    CHECK(morph_goto_key(m, 1) == 0 && morph_step_count(m) == 0 && morph_key(m) == 1,
          "no schedule: goto 1 goes to step 0");
    CHECK(morph_key_target(m, 1) && same(morph_key_target(m, 1), square) && !morph_key_target(m, 2) &&
              !morph_key_target(m, 0), "one target: key 1 is the target");
    morph_free(m);
    m = make(false);
    if (!m) return;
    CHECK(morph_key_target(m, 1) && same(morph_key_target(m, 1), square) && morph_key_target(m, 2) &&
              same(morph_key_target(m, 2), ring) && morph_key_target(m, 3) &&
              same(morph_key_target(m, 3), disc) && !morph_key_target(m, 4),
          "a schedule: keys 1..3 as given");
    morph_free(m);
}

int main(void)
{
    make_shapes();
    RUN(test_next);
    RUN(test_previous);
    RUN(test_goto_at_switch);
    RUN(test_key_params);
    RUN(test_one_target_and_images);
    return check_done();
}
