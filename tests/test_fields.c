/* test_fields: several smoke fields in one simulation, sharing one
 * velocity (issue 9 point 3): the forces add (a field with no force leaves
 * another field's run unchanged, bit for bit), each field keeps its mass,
 * every field reaches its own target, the checks that make fields share,
 * the GPU backends (fragment, compute) against the CPU reference for 2
 * and 4 fields, and several fields a pass at a time
 * (morph_pass_next_fields): the same state as whole steps, bit for bit on
 * the CPU, in the order the fields' parts run, and each pass's output on
 * the GPU against the CPU's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glctx.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"

#define N 48
#define CELLS ((size_t)N * N)

static float g_start[4][N * N], g_target[4][N * N];
static char g_dir[4096];

static void shapes(void)
{
    TestlibShape soft = {.domain = true, .width = 0.04};
    /* four blobs in the corners, each to go to the next corner round (a
     * carousel: four fields crossing at the centre would push against each
     * other and stay, as real smokes would) */
    const double c[4][2] = {{0.25, 0.25}, {0.75, 0.25}, {0.75, 0.75}, {0.25, 0.75}};
    for (int f = 0; f < 4; f++) {
        const double *t = c[(f + 1) % 4];
        testlib_disc(g_start[f], N, N, &soft, c[f][0], c[f][1], 0.14, 1.0);
        testlib_box(g_target[f], N, N, &soft, t[0], t[1], 0.12, 0.1, 1.0);
    }
}

static double mass(const float *a)
{
    double m = 0.0;
    for (size_t k = 0; k < CELLS; k++) m += a[k];
    return m;
}

static double err_to(const float *a, const float *t)
{
    double d = 0.0, s = 0.0, ma = mass(a), mt = mass(t);
    for (size_t k = 0; k < CELLS; k++) {
        d += fabs(a[k] - t[k] * ma / mt);
        s += t[k] * ma / mt;
    }
    return d / s;
}

static double rel_l2(const float *a, const float *b) { return testlib_rel_l2(a, b, (size_t)CELLS); }

static Morph *make(int f, const SolverParams *p, MorphBackend b)
{
    Morph *m = testlib_morph(N, N, p, g_start[f], g_target[f], true, b, g_dir);
    CHECK(m != NULL, "morph_create field %d", f);
    return m;
}

/* Fields 0..n-1 of P twice: on backend A into MA and on B into MB; false
 * when any of them could not be made. */
static bool make_both(int n, const SolverParams *p, MorphBackend a, Morph **ma, MorphBackend b, Morph **mb)
{
    bool ok = true;
    for (int f = 0; f < n; f++) {
        ok = (ma[f] = make(f, p, a)) && ok;
        ok = (mb[f] = make(f, p, b)) && ok;
    }
    return ok;
}

static void free_both(int n, Morph **ma, Morph **mb)
{
    for (int f = 0; f < n; f++) {
        morph_free(ma[f]);
        morph_free(mb[f]);
    }
}

/* A field with no force of its own (vf 0, no balance, no gathering or
 * drift) adds nothing to the shared velocity: field A's run is the same
 * with it as alone, bit for bit, and the passive field is carried along,
 * its mass kept. */
static void test_forces_add(void)
{
    SolverParams p, q;
    method_params_default(&p);
    /* vorticity confinement is the shared flow's, added once by the last
     * field's force pass from the velocity with every force in: alone, it
     * would see the velocity before A's force */
    p.swirl = 0.0f;
    q = p;
    q.vf = 0.0f;
    q.vb = 0.0f;
    q.vk = 0.0f;
    q.gather = false;
    Morph *alone = make(0, &p, MORPH_CPU), *a = make(0, &p, MORPH_CPU), *b = make(1, &q, MORPH_CPU);
    if (!alone || !a || !b) goto done;
    Morph *pair[2] = {a, b};
    CHECK(morph_fields_check(pair, 2) == NULL, "the two fields can share: %s", morph_fields_check(pair, 2));
    for (int s = 0; s < 60; s++) {
        morph_step(alone);
        CHECK(morph_step_fields(pair, 2) == 0, "step %d", s + 1);
    }
    static float ra[N * N], rb[N * N], r1[N * N];
    morph_read_density(alone, r1);
    morph_read_density(a, ra);
    morph_read_density(b, rb);
    CHECK(memcmp(ra, r1, sizeof ra) == 0, "field A with a forceless field B: the same run as alone");
    double m0 = mass(g_start[1]), m1 = mass(rb);
    CHECK(fabs(m1 - m0) / m0 < 1e-5, "the carried field keeps its mass: %.8g -> %.8g", m0, m1);
    CHECK(rel_l2(rb, g_start[1]) > 1e-3, "the carried field moved with the shared flow (rel change %.3g)",
          rel_l2(rb, g_start[1]));
    CHECK(morph_step_count(a) == 60 && morph_step_count(b) == 60, "each field counts the steps");
done:
    morph_free(alone);
    morph_free(a);
    morph_free(b);
}

/* 2 and 4 fields: each keeps its mass to 1e-4 and gets closer to its own
 * target. */
static void test_mass_and_arrival(void)
{
    SolverParams p;
    method_params_default(&p);
    for (int n = 2; n <= 4; n += 2) {
        Morph *ms[4] = {0};
        bool ok = true;
        for (int f = 0; f < n; f++) ok = (ms[f] = make(f, &p, MORPH_CPU)) && ok;
        if (ok) {
            for (int s = 0; s < 400; s++)
                if (morph_step_fields(ms, n) < 0) {
                    CHECK(0, "%d fields: step %d failed", n, s + 1);
                    break;
                }
            for (int f = 0; f < n; f++) {
                static float r[N * N];
                morph_read_density(ms[f], r);
                double m0 = mass(g_start[f]), m1 = mass(r);
                CHECK(fabs(m1 - m0) / m0 < 1e-4, "%d fields: field %d's mass %.8g -> %.8g", n, f, m0, m1);
                double e0 = err_to(g_start[f], g_target[f]), e1 = err_to(r, g_target[f]);
                CHECK(e1 < 0.5 * e0, "%d fields: field %d's error %.3f -> %.3f (not halved)", n, f, e0, e1);
            }
        }
        for (int f = 0; f < n; f++) morph_free(ms[f]);
    }
}

/* Fields sharing one flow each time their own trip (docs/SCENES.md): with
 * --arrive auto, a field going a short way arrives after the shortest time
 * (3 s) and one crossing the box later, each what method_arrive_for_trip
 * gives for its own start and target, before and after steps together; a
 * number given is every field's. */
static void test_own_trips(void)
{
    static float from[2][N * N], to[2][N * N];
    TestlibShape soft = {.domain = true, .width = 0.04};
    testlib_disc(from[0], N, N, &soft, 0.45, 0.5, 0.12, 1.0); /* a step aside */
    testlib_box(to[0], N, N, &soft, 0.55, 0.5, 0.1, 0.1, 1.0);
    testlib_disc(from[1], N, N, &soft, 0.15, 0.15, 0.1, 1.0); /* corner to corner */
    testlib_box(to[1], N, N, &soft, 0.85, 0.85, 0.08, 0.08, 1.0);
    for (int given = 0; given < 2; given++) {
        SolverParams p;
        method_params_default(&p);
        if (given) p.arrive = 4.5f;
        CHECK(given || p.arrive == SETTING_AUTO, "the default arrival is auto (%g)", (double)p.arrive);
        Morph *ms[2] = {0};
        bool ok = true;
        for (int f = 0; f < 2; f++) {
            ms[f] = testlib_morph(N, N, &p, from[f], to[f], true, MORPH_CPU, g_dir);
            ok = ms[f] && ok;
        }
        float want[2];
        for (int f = 0; f < 2 && ok; f++) want[f] = given ? 4.5f : method_arrive_for_trip(&p, N, N, from[f], to[f]);
        for (int round = 0; round < 2 && ok; round++) {
            for (int f = 0; f < 2; f++) {
                float got = morph_params(ms[f])->arrive;
                CHECK(fabsf(got - want[f]) < 1e-6f, "%s, %s: field %d arrives at %g s, its trip's is %g s",
                      given ? "4.5 s given" : "auto", round ? "after 5 steps" : "made", f, (double)got,
                      (double)want[f]);
            }
            for (int k = 0; k < 5 && round == 0; k++) ok = morph_step_fields(ms, 2) == 0 && ok;
        }
        if (ok && !given) printf("  auto: the fields arrive at %.2f and %.2f s\n", (double)want[0], (double)want[1]);
        if (ok && !given)
            CHECK(want[0] == 3.0f && want[1] > want[0] + 1.0f,
                  "auto: the short trip's arrival %g s (want 3), the long one's %g s (want later)", (double)want[0],
                  (double)want[1]);
        for (int f = 0; f < 2; f++) morph_free(ms[f]);
    }
}

static void test_check(void)
{
    SolverParams p, q;
    method_params_default(&p);
    q = p;
    q.dt = 0.02f;
    Morph *a = make(0, &p, MORPH_CPU), *b = make(1, &q, MORPH_CPU);
    if (a && b) {
        Morph *pair[2] = {a, b};
        const char *why = morph_fields_check(pair, 2);
        CHECK(why && strstr(why, "dt"), "different dt refused: %s", why ? why : "(accepted)");
        CHECK(morph_step_fields(pair, 2) < 0, "and not stepped");
        CHECK(morph_fields_check(pair, 0) != NULL && morph_fields_check(pair, 5) != NULL, "1 to 4 fields");
    }
    morph_free(a);
    morph_free(b);
}

/* The field and part of every pass of one step of n fields, a pass at a
 * time: each field's force part in turn, the flow on the last field, each
 * field's density part in turn; the last pass says so. */
static int fields_pass_step(Morph **ms, int n, const char *what, MorphPassInfo *info, int *fields, int max)
{
    int np = 0, f = 0;
    MorphPassInfo pi = {0};
    do {
        if (morph_pass_next_fields(ms, n, &pi, &f) < 0) {
            CHECK(0, "%s: pass %d failed", what, np + 1);
            return -1;
        }
        if (np < max) info[np] = pi, fields[np] = f;
        np++;
    } while (!pi.last && np < 100000);
    return np;
}

static void test_pass_by_pass_cpu(void)
{
    SolverParams p;
    method_params_default(&p);
    p.tramp = p.framp = 0.0f; /* the drift and gathering from step 1 */
    p.arrive = 0.0f; /* untimed: from step 1 */
    for (int n = 1; n <= 4; n++) {
        Morph *a[4] = {0}, *b[4] = {0};
        bool ok = make_both(n, &p, MORPH_CPU, a, MORPH_CPU, b);
        static MorphPassInfo info[4096];
        static int fields[4096];
        for (int s = 0; ok && s < 4; s++) {
            CHECK(morph_step_fields(a, n) == 0, "%d fields: whole step %d", n, s + 1);
            int np = fields_pass_step(b, n, "cpu", info, fields, 4096);
            if (np < 0) break;
            /* the order: force parts by field, the flow on the last, density parts by field */
            int bad = -1, prev_f = 0;
            unsigned prev_part = METHOD_PART_FORCE;
            for (int k = 0; k < np && k < 4096 && bad < 0; k++) {
                unsigned part = method_pass_part(info[k].pass);
                int f = fields[k];
                bool next_part = part != prev_part;
                if (part < prev_part || (part == METHOD_PART_FLOW && f != n - 1) ||
                    (!next_part && f < prev_f) || (next_part && part == METHOD_PART_DENSITY && f != 0) ||
                    (info[k].last != (k == np - 1)) || info[k].step != s + 1)
                    bad = k;
                prev_part = part, prev_f = f;
            }
            CHECK(bad < 0, "%d fields, step %d: pass %d (%s of field %d) out of order", n, s + 1, bad + 1,
                  bad >= 0 ? info[bad].name : "", bad >= 0 ? fields[bad] : -1);
            CHECK(fields[0] == 0 && method_pass_part(info[0].pass) == METHOD_PART_FORCE &&
                      fields[np - 1] == n - 1 && method_pass_part(info[np - 1].pass) == METHOD_PART_DENSITY,
                  "%d fields: the step begins with field 0's force and ends with field %d's density", n, n - 1);
            for (int f = 0; f < n; f++) {
                CHECK(morph_step_count(b[f]) == s + 1 && !morph_pass_active(b[f]),
                      "%d fields: field %d has stepped %ld times, done", n, f, morph_step_count(b[f]));
                static float ra[CELLS], rb[CELLS], ua[CELLS], va[CELLS], ub[CELLS], vb[CELLS];
                morph_read_density(a[f], ra);
                morph_read_density(b[f], rb);
                morph_read_velocity(a[f], ua, va);
                morph_read_velocity(b[f], ub, vb);
                CHECK(memcmp(ra, rb, sizeof ra) == 0, "%d fields, step %d: field %d's density bit for bit", n,
                      s + 1, f);
                CHECK(memcmp(ua, ub, sizeof ua) == 0 && memcmp(va, vb, sizeof va) == 0,
                      "%d fields, step %d: field %d's velocity bit for bit", n, s + 1, f);
            }
        }
        /* a step begun so is finished by morph_step_fields, or by a whole
         * step of any one field, and a field's own pass-by-pass refuses */
        if (ok && n > 1) {
            MorphPassInfo pi;
            int f;
            for (int k = 0; k < 5; k++) morph_pass_next_fields(b, n, &pi, &f);
            CHECK(morph_pass_active(b[n - 1]), "%d fields: the step is begun for every field", n);
            CHECK(morph_pass_next(b[0], &pi) < 0 && morph_pass_begin(b[1]) < 0,
                  "%d fields: a field's own pass by pass refuses mid-step", n);
            CHECK(morph_step(b[n - 1]) == 0, "%d fields: morph_step of one field finishes the step", n);
            CHECK(morph_step_fields(a, n) == 0, "%d fields: and the whole one", n);
            for (int fi = 0; fi < n; fi++) {
                static float ra[CELLS], rb[CELLS];
                morph_read_density(a[fi], ra);
                morph_read_density(b[fi], rb);
                CHECK(morph_step_count(b[fi]) == morph_step_count(a[fi]) && !morph_pass_active(b[fi]) &&
                          memcmp(ra, rb, sizeof ra) == 0,
                      "%d fields: field %d after the finished step is the whole step's", n, fi);
            }
            for (int k = 0; k < 3; k++) morph_pass_next_fields(b, n, &pi, &f);
            CHECK(morph_step_fields(b, n) == 0 && morph_step_fields(a, n) == 0, "%d fields: finished again", n);
            static float ra[CELLS], rb[CELLS];
            morph_read_density(a[0], ra);
            morph_read_density(b[0], rb);
            CHECK(memcmp(ra, rb, sizeof ra) == 0 && !morph_pass_active(b[0]),
                  "%d fields: morph_step_fields finishes a step begun pass by pass", n);
            for (int k = 0; k < 3; k++) morph_pass_next_fields(b, n, &pi, &f);
            CHECK(morph_reset(b[0]) == 0 && !morph_pass_active(b[1]), "%d fields: a reset drops the step", n);
        }
        free_both(n, a, b);
    }
}

/* Several fields a pass at a time on a GPU backend: after every pass of 2
 * steps, the output the pass wrote (of the field it ran on) against the CPU
 * reference's within 1e-4 relative L2, as test_passbypass_gpu does for one. */
static void gpu_passes_agree(MorphBackend backend, int n, const char *label)
{
    SolverParams p;
    method_params_default(&p);
    p.tramp = p.framp = 0.0f;
    p.arrive = 0.0f; /* untimed: from step 1 */
    Morph *g[4] = {0}, *c[4] = {0};
    bool ok = make_both(n, &p, backend, g, MORPH_CPU, c);
    static float ga[CELLS], gb[CELLS], ca[CELLS], cb[CELLS];
    double worst = 0.0;
    int passes = 0;
    for (int s = 0; ok && s < 2; s++) {
        MorphPassInfo pg, pc;
        int fg, fc;
        do {
            if (morph_pass_next_fields(g, n, &pg, &fg) < 0 || morph_pass_next_fields(c, n, &pc, &fc) < 0) {
                CHECK(0, "%s, %d fields: a pass failed", label, n);
                ok = false;
                break;
            }
            passes++;
            if (pg.pass != pc.pass || fg != fc || pg.k != pc.k) {
                CHECK(0, "%s, %d fields: %s %d of field %d on the GPU, %s %d of field %d on the CPU", label, n,
                      pg.name, pg.k + 1, fg, pc.name, pc.k + 1, fc);
                ok = false;
                break;
            }
            if (morph_pass_read(g[fg], pg.out, ga, gb) < 0 || morph_pass_read(c[fc], pc.out, ca, cb) < 0) {
                CHECK(0, "%s, %d fields: read %s", label, n, method_out_name(pg.out));
                ok = false;
                break;
            }
            double e = rel_l2(ga, ca);
            if (method_out_is_vector(pg.out)) e = fmax(e, rel_l2(gb, cb));
            if (e > worst) worst = e;
            CHECK(e <= 1e-4, "%s, %d fields, step %d: after %s %d/%d of field %d: %s differs by %.3g", label, n,
                  s + 1, pg.name, pg.k + 1, pg.count, fg, method_out_name(pg.out), e);
        } while (!pg.last);
    }
    printf("  %s, %d fields: %d passes, each output against the CPU's: largest relative L2 %.3g\n", label, n,
           passes, worst);
    free_both(n, g, c);
}

/* The GPU backends against the CPU reference, every field. */
static void gpu_agrees(MorphBackend backend, int n, const char *label)
{
    SolverParams p;
    method_params_default(&p);
    Morph *g[4] = {0}, *c[4] = {0};
    bool ok = make_both(n, &p, backend, g, MORPH_CPU, c);
    if (ok) {
        for (int s = 0; s < 40; s++) {
            CHECK(morph_step_fields(g, n) == 0, "%s, %d fields: step %d", label, n, s + 1);
            morph_step_fields(c, n);
        }
        for (int f = 0; f < n; f++) {
            static float rg[N * N], rc[N * N];
            morph_read_density(g[f], rg);
            morph_read_density(c[f], rc);
            double e = rel_l2(rg, rc);
            CHECK(e < 1e-4, "%s, %d fields: field %d differs from the CPU's by rel L2 %.3g", label, n, f, e);
        }
    }
    free_both(n, g, c);
}

static void test_gpu(void)
{
    char err[1024];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) TESTLIB_NO_GL(3, 3, "no headless GL context: %s", err);
    if (!ctx) return;
    if (shader_find_dir(NULL, testlib_bin(), g_dir, sizeof g_dir, err, sizeof err) < 0 &&
        shader_find_dir(NULL, "build/smokemorph", g_dir, sizeof g_dir, err, sizeof err) < 0) {
        CHECK(0, "shader dir: %s", err);
        glctx_destroy(ctx);
        return;
    }
    for (int n = 2; n <= 4; n += 2) {
        gpu_agrees(MORPH_FRAGMENT, n, "fragment");
        if (shader_compute_available()) gpu_agrees(MORPH_COMPUTE, n, "compute");
    }
    for (int n = 2; n <= 4; n++) {
        gpu_passes_agree(MORPH_FRAGMENT, n, "fragment");
        if (shader_compute_available()) gpu_passes_agree(MORPH_COMPUTE, n, "compute");
    }
    glctx_destroy(ctx);
}

int main(void)
{
    shapes();
    RUN(test_forces_add);
    RUN(test_mass_and_arrival);
    RUN(test_own_trips);
    RUN(test_check);
    RUN(test_pass_by_pass_cpu);
    RUN(test_gpu);
    return check_done();
}
