/* test_motion: the motion vectors (morph_read_motion, the EXR's velocity.*)
 * are the smoke's motion (issue 20, point 6): moving frame t by them
 * predicts frame t+1 better than not moving it, on the CPU backend and on
 * the GPU's compute and fragment backends, at a step where the gathering
 * drift moves smoke too. And they are the flow plus the drift: where the
 * drift ran, they differ from the flow alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "testgl.h"
#include "testlib.h"

enum { N = 64 };
static char g_dir[4096];

/* ρ moved one step by the cell-centred velocity (domain units per time):
 * a conservative upwind transport over substeps, so a cell's smoke goes
 * where the velocity says (the prediction; any consistent scheme will do,
 * it only has to beat "no motion"). */
static void advect(const float *rho, const float *vx, const float *vy, float dt, float *out)
{
    static float a[N * N], b[N * N];
    memcpy(a, rho, sizeof a);
    int sub = 8;
    float k = dt * (float)N / (float)sub; /* cells per substep per unit speed */
    for (int s = 0; s < sub; s++) {
        memcpy(b, a, sizeof b);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                /* the face between (i, j) and (i+1, j): the mean velocity */
                if (i + 1 < N) {
                    float u = 0.5f * (vx[j * N + i] + vx[j * N + i + 1]) * k;
                    float f = u > 0 ? u * a[j * N + i] : u * a[j * N + i + 1];
                    b[j * N + i] -= f;
                    b[j * N + i + 1] += f;
                }
                if (j + 1 < N) {
                    float v = 0.5f * (vy[j * N + i] + vy[(j + 1) * N + i]) * k;
                    float f = v > 0 ? v * a[j * N + i] : v * a[(j + 1) * N + i];
                    b[j * N + i] -= f;
                    b[(j + 1) * N + i] += f;
                }
            }
        memcpy(a, b, sizeof a);
    }
    memcpy(out, a, sizeof a);
}

static double l1(const float *a, const float *b)
{
    double s = 0;
    for (int k = 0; k < N * N; k++) s += fabs((double)a[k] - b[k]);
    return s;
}

/* arrive 0.4: the drift and the gathering from step 16; arrive 10: a long
 * key's pace, the flow slowed (the motion vectors are the slowed flow; the
 * flow alone moves the frame too far) */
static void check_backend(MorphBackend be, const char *dir, float arrive)
{
    static float start[N * N], target[N * N], r0[N * N], r1[N * N], pred[N * N];
    static float mx[N * N], my[N * N], fx[N * N], fy[N * N];
    static const TestlibShape dom = {.domain = true, .width = 1.0};
    memset(start, 0, sizeof start);
    memset(target, 0, sizeof target);
    testlib_disc(start, N, N, &dom, 0.3, 0.35, 0.15, 1.0);
    testlib_disc(target, N, N, &dom, 0.65, 0.6, 0.12, 1.0);
    SolverParams p;
    method_params_default(&p);
    p.arrive = arrive;
    char err[512];
    Morph *m = morph_create(N, N, &p, start, target, true, be, dir, err, sizeof err);
    CHECK(m != NULL, "%s: %s", morph_backend_name(be), err);
    if (!m) return;
    int wins = 0, tries = 0;
    double gain = 0.0, gain_flow = 0.0;
    for (int step = 1; step <= 60; step++) {
        morph_read_density(m, r0);
        CHECK(morph_step(m) == 0, "step");
        if (step < 25 || step % 5) continue;
        morph_read_density(m, r1);
        CHECK(morph_read_motion(m, mx, my) == 0 && morph_read_velocity(m, fx, fy) == 0, "read");
        advect(r0, mx, my, p.dt, pred);
        double still = l1(r1, r0), moved = l1(r1, pred);
        tries++;
        wins += moved < still;
        gain += moved / still;
        advect(r0, fx, fy, p.dt, pred);
        gain_flow += l1(r1, pred) / still;
    }
    CHECK(wins == tries, "%s, arrive %g: moving frame t by the motion vectors predicted frame t+1 better in %d of %d "
          "steps", morph_backend_name(be), (double)arrive, wins, tries);
    /* while the drift runs, the flow alone predicts worse: the drift's
     * share belongs in the motion vectors; paced, the flow alone moves too far */
    CHECK(gain < 0.9 * gain_flow, "%s, arrive %g: the motion vectors predict no better than the flow alone (%.3f vs %.3f)",
          morph_backend_name(be), (double)arrive, gain / tries, gain_flow / tries);
    printf("  info: %s, arrive %g: prediction error / no motion: %.3f with the motion vectors, %.3f with the flow "
           "alone (mean of %d steps)\n", morph_backend_name(be), (double)arrive, gain / tries, gain_flow / tries, tries);
    morph_free(m);
}

static void test_cpu(void) { check_backend(MORPH_CPU, NULL, 0.4f), check_backend(MORPH_CPU, NULL, 10.0f); }
static void test_compute(void) { check_backend(MORPH_COMPUTE, g_dir, 0.4f), check_backend(MORPH_COMPUTE, g_dir, 10.0f); }
static void test_fragment(void) { check_backend(MORPH_FRAGMENT, g_dir, 0.4f), check_backend(MORPH_FRAGMENT, g_dir, 10.0f); }

int main(int argc, char **argv)
{
    (void)argc;
    RUN(test_cpu);
    GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
    if (!ctx) return check_done();
    RUN(test_compute);
    RUN(test_fragment);
    glctx_destroy(ctx);
    return check_done();
}
