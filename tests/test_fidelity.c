/* test_fidelity: the fidelity measures (src/fidelity.h) on fields whose
 * answers are known in closed form, then a quick run of tools/fidelity.
 *
 * The tool is $SMOKEMORPH_BUILD/tools/fidelity (default build/tools/fidelity);
 * it runs on the CPU at 32² for 20 steps, so this stays fast. Its output goes
 * to a fresh temporary directory. */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fidelity.h"
#include "image.h"
#include "method.h"
#include "testlib.h"

static float *field(size_t n) { return testlib_floats(n); }

/* A soft disc of radius r at (cx, cy) in cell units, value v inside, added
 * to f: a ramp one cell wide at the edge. */
static void disc(float *f, int w, int h, double cx, double cy, double r, double v)
{
    static const TestlibShape soft = {.width = 1.0, .add = true};
    testlib_disc(f, w, h, &soft, cx, cy, r, v);
}

static double sum(const float *f, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; k++) s += f[k];
    return s;
}

/* ------------------------------------------------------------ the error */

static void test_error(void)
{
    enum { N = 8 };
    float rho[N] = {1, 1, 0, 0, 0, 0, 0, 0}, tgt[N] = {0, 0, 1, 1, 0, 0, 0, 0};
    CHECK(fidelity_error(rho, rho, N) == 0.0, "a field against itself: 0");
    CHECK(fabs(fidelity_error(rho, tgt, N) - 2.0) < 1e-12, "disjoint, equal mass: 2, got %g",
          fidelity_error(rho, tgt, N));
    float half[N] = {0, 0, 0.5f, 0.5f, 0, 0, 0, 0};
    /* |0.5 − 1|·2 / 2 = 0.5 */
    CHECK(fabs(fidelity_error(half, tgt, N) - 0.5) < 1e-12, "half the target: 0.5, got %g",
          fidelity_error(half, tgt, N));
    float zero[N] = {0};
    CHECK(isnan(fidelity_error(rho, zero, N)), "an empty target: NaN");
}

/* ---------------------------------------------------- the blend distance */

/* Brute force: the minimum of the blend L1 over a fine grid of s. */
static double blend_grid(const float *rho, const float *a, const float *b, size_t n, int steps)
{
    double best = INFINITY, den = sum(b, n);
    for (int q = 0; q <= steps; q++) {
        double s = (double)q / steps, v = 0;
        for (size_t k = 0; k < n; k++) v += fabs(rho[k] - ((1 - s) * a[k] + s * b[k]));
        if (v < best) best = v;
    }
    return best / den;
}

static void test_blend_exact(void)
{
    int w = 48, h = 40;
    size_t n = (size_t)w * h;
    float *a = field(n), *b = field(n), *rho = field(n);
    disc(a, w, h, 14, 12, 8, 1.0);
    disc(b, w, h, 30, 26, 9, 0.7);
    /* overlapping discs, so the breakpoints are not all at 0 and 1 */
    disc(b, w, h, 16, 14, 5, 0.4);
    const double weights[] = {0.0, 0.3, 0.5, 0.77, 1.0};
    for (int q = 0; q < 5; q++) {
        double s = weights[q], sb = -1;
        for (size_t k = 0; k < n; k++) rho[k] = (float)((1 - s) * a[k] + s * b[k]);
        double d = fidelity_blend_distance(rho, a, b, n, &sb);
        CHECK(d >= 0 && d < 1e-6, "an exact blend at s=%g: distance 0, got %g", s, d);
        CHECK(fabs(sb - s) < 1e-4, "an exact blend at s=%g: s_best %g", s, sb);
    }
    free(a);
    free(b);
    free(rho);
}

static void test_blend_known(void)
{
    enum { N = 12 };
    /* start on cells 0-3, target on 4-7, ρ on 8-11: all of equal mass 4.
     * Every blend misses ρ's mass entirely and holds mass 4: distance
     * (4 + 4) / 4 = 2 for every s. */
    float a[N] = {1, 1, 1, 1}, b[N] = {0, 0, 0, 0, 1, 1, 1, 1}, rho[N] = {0};
    for (int k = 8; k < 12; k++) rho[k] = 1;
    double s;
    double d = fidelity_blend_distance(rho, a, b, N, &s);
    CHECK(fabs(d - 2.0) < 1e-12, "smoke elsewhere: 2, got %g", d);
    CHECK(s >= 0 && s <= 1, "s_best in [0,1]: %g", s);

    /* ρ = 1.5·b − 0.5·a is the blend at s = 1.5, outside [0, 1]. On a's
     * cells |−0.5 − (1 − s)| = 1.5 − s, on b's |1.5 − s|, so on [0, 1]
     * f(s) = 8·(1.5 − s), least at s = 1: 4, over Σb = 4 gives 1. */
    for (int k = 0; k < N; k++) rho[k] = 1.5f * b[k] - 0.5f * a[k];
    d = fidelity_blend_distance(rho, a, b, N, &s);
    CHECK(fabs(d - 1.0) < 1e-12, "extrapolated blend: 1, got %g", d);
    CHECK(s == 1.0, "extrapolated blend: s_best clamps to 1, got %g", s);

    /* ρ = a exactly, and ρ = b exactly */
    d = fidelity_blend_distance(a, a, b, N, &s);
    CHECK(d == 0.0 && s == 0.0, "rho = start: 0 at s=0, got %g at %g", d, s);
    d = fidelity_blend_distance(b, a, b, N, &s);
    CHECK(d == 0.0 && s == 1.0, "rho = target: 0 at s=1, got %g at %g", d, s);

    float zero[N] = {0};
    CHECK(isnan(fidelity_blend_distance(rho, a, zero, N, NULL)), "an empty target: NaN");
}

/* Random fields: the exact minimum is never above a fine grid search's and
 * within the grid's resolution of it; and it is not the answer at s = 0.5. */
static void test_blend_random(void)
{
    size_t n = 3000;
    float *a = field(n), *b = field(n), *rho = field(n);
    srand(7);
    for (int trial = 0; trial < 5; trial++) {
        for (size_t k = 0; k < n; k++) {
            a[k] = (float)rand() / RAND_MAX;
            b[k] = (float)rand() / RAND_MAX * (k % 3 ? 1.0f : 0.1f);
            rho[k] = (float)(0.2 + trial * 0.15) * b[k] + (float)rand() / RAND_MAX * 0.3f;
        }
        double s, d = fidelity_blend_distance(rho, a, b, n, &s);
        double g = blend_grid(rho, a, b, n, 20000);
        CHECK(d <= g + 1e-9, "trial %d: exact %g above the grid's %g", trial, d, g);
        CHECK(g - d < 1e-4, "trial %d: exact %g far below the grid's %g", trial, d, g);
        /* the minimiser: f(s ± 0.01) is not smaller */
        double den = sum(b, n);
        for (int side = -1; side <= 1; side += 2) {
            double t = s + side * 0.01;
            if (t < 0 || t > 1) continue;
            double v = 0;
            for (size_t k = 0; k < n; k++) v += fabs(rho[k] - ((1 - t) * a[k] + t * b[k]));
            CHECK(v / den >= d - 1e-9, "trial %d: f(%g) = %g below f(s_best) = %g", trial, t, v / den, d);
        }
    }
    free(a);
    free(b);
    free(rho);
}

/* ----------------------------------------------------------- the stripes */

static void test_stripes(void)
{
    int w = 40, h = 32;
    size_t n = (size_t)w * h;
    float *f = field(n);
    for (size_t k = 0; k < n; k++) f[k] = 0.6f;
    CHECK(fidelity_stripes(f, w, h) == 0.0, "a constant: 0, got %g", fidelity_stripes(f, w, h));
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) f[(size_t)j * w + i] = 1.0f + 0.01f * i + 0.02f * j;
    CHECK(fidelity_stripes(f, w, h) < 1e-6, "a linear ramp: 0, got %g", fidelity_stripes(f, w, h));

    /* diagonal stripes of period 4 cells along i + j (values 0, 0, 1, 1):
     * along (1,1) every second difference is ±2, along (1,−1) 0; the mean
     * density is 1/2 (w and h multiples of 4), so exactly 2 / 0.5 = 4 */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) f[(size_t)j * w + i] = (float)(((i + j) / 2) % 2);
    double st = fidelity_stripes(f, w, h);
    CHECK(fabs(st - 4.0) < 1e-9, "diagonal stripes: 4, got %g", st);
    /* and the same stripes the other way (along i − j) */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) f[(size_t)j * w + i] = (float)(((i - j + 64) / 2) % 2);
    CHECK(fabs(fidelity_stripes(f, w, h) - 4.0) < 1e-9, "anti-diagonal stripes: 4, got %g",
          fidelity_stripes(f, w, h));
    /* scale invariance */
    for (size_t k = 0; k < n; k++) f[k] *= 3.5f;
    CHECK(fabs(fidelity_stripes(f, w, h) - 4.0) < 1e-6, "stripes ×3.5: still 4, got %g",
          fidelity_stripes(f, w, h));
    /* the blind spot, pinned: the one-cell checkerboard reads 0 */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) f[(size_t)j * w + i] = (float)((i + j) % 2);
    CHECK(fidelity_stripes(f, w, h) == 0.0, "one-cell checkerboard: 0, got %g", fidelity_stripes(f, w, h));

    /* a smooth disc reads far less than a striped one, and a finer grid of
     * the same picture reads less than a coarser one */
    float *g = field(n);
    memset(f, 0, n * sizeof *f);
    disc(f, w, h, 20, 16, 9, 1.0);
    memcpy(g, f, n * sizeof *f);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            if (((i + j) / 2) % 2) g[(size_t)j * w + i] *= 0.2f;
    double smooth = fidelity_stripes(f, w, h), striped = fidelity_stripes(g, w, h);
    CHECK(striped > 3 * smooth, "striped disc %g vs smooth %g", striped, smooth);
    int W = 4 * w, H = 4 * h;
    float *big = field((size_t)W * H);
    disc(big, W, H, 80, 64, 36, 1.0);
    CHECK(fidelity_stripes(big, W, H) < smooth, "finer grid: %g, coarse %g", fidelity_stripes(big, W, H),
          smooth);
    free(big);
    free(g);

    memset(f, 0, n * sizeof *f);
    CHECK(fidelity_stripes(f, w, h) == 0.0, "a zero field: 0");
    CHECK(fidelity_stripes(f, 2, 2) == 0.0, "a grid too small: 0");
    free(f);

    CHECK(fidelity_stripe_ratio(3.0, 1.5) == 2.0, "ratio 3/1.5");
    CHECK(fidelity_stripe_ratio(0.0, 0.0) == 1.0, "ratio 0/0: 1");
    CHECK(isinf(fidelity_stripe_ratio(1.0, 0.0)), "ratio 1/0: inf");
}


/* ------------------------------------------ does the flow carry the smoke */

/* P: no change reads 0; the target's own detail added reads 1; a disc
 * moved by a cell (detail that is not the target's) reads little. */
static void test_print_through(void)
{
    int w = 48, h = 40;
    size_t n = (size_t)w * h;
    float *start = field(n), *tgt = field(n), *rho = field(n);
    disc(start, w, h, 16, 20, 8, 1.0);
    for (int j = 8; j < 32; j++) /* a thin cross: fine detail */
        for (int i = 30; i < 42; i++)
            if (j == 20 || j == 21 || i == 35 || i == 36) tgt[(size_t)j * w + i] = 1.0f;
    memcpy(rho, start, n * sizeof *rho);
    CHECK(fabs(fidelity_print_through(rho, start, tgt, w, h)) < 1e-12, "no change: 0, got %g",
          fidelity_print_through(rho, start, tgt, w, h));
    for (size_t k = 0; k < n; k++) rho[k] = start[k] + 0.01f * tgt[k];
    double p = fidelity_print_through(rho, start, tgt, w, h);
    CHECK(p > 0.999, "the target printed in faintly: 1, got %g", p);
    memset(rho, 0, n * sizeof *rho);
    disc(rho, w, h, 17, 20, 8, 1.0);
    p = fidelity_print_through(rho, start, tgt, w, h);
    CHECK(fabs(p) < 0.05, "a disc moved a cell, away from the cross: about 0, got %g", p);
    free(start);
    free(tgt);
    free(rho);
}

/* U and Uc: a change that a flow carried reads near 0, one that appeared
 * where no flow was reads 1; the swirl of a solid rotation is known. */
static void test_flow_share(void)
{
    int w = 64, h = 64;
    size_t n = (size_t)w * h;
    float *a = field(n), *b = field(n), *ux = field(n), *uy = field(n);
    /* a wide Gaussian moved by 0.2 cells to the right: ρ1 − ρ0 ≈ −0.2·∂ρ/∂x */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double x0 = i - 30.0, x1 = i - 30.2, y = j - 32.0;
            a[(size_t)j * w + i] = (float)exp(-(x0 * x0 + y * y) / 72.0);
            b[(size_t)j * w + i] = (float)exp(-(x1 * x1 + y * y) / 72.0);
            ux[(size_t)j * w + i] = 0.2f;
        }
    FidelityFlow f = {0};
    CHECK(isnan(fidelity_flow_u(&f)) && isnan(fidelity_flow_uc(&f)) && isnan(fidelity_flow_enstrophy(&f)),
          "nothing added: NaN");
    CHECK(fidelity_flow_add(&f, a, b, ux, uy, w, h, 1.0 / 64, 0.01) == 0, "add");
    CHECK(fidelity_flow_u(&f) < 0.05, "a translation carried by its flow: U about 0, got %g",
          fidelity_flow_u(&f));
    CHECK(fidelity_flow_uc(&f) < 0.05, "Uc about 0, got %g", fidelity_flow_uc(&f));
    CHECK(fabs(fidelity_flow_enstrophy(&f)) < 1e-9, "a uniform flow has no swirl");
    /* the same change with no flow: all of it unexplained */
    FidelityFlow g = {0};
    memset(ux, 0, n * sizeof *ux);
    fidelity_flow_add(&g, a, b, ux, uy, w, h, 1.0 / 64, 0.01);
    CHECK(fabs(fidelity_flow_u(&g) - 1.0) < 1e-9, "no flow: U = 1, got %g", fidelity_flow_u(&g));
    CHECK(fabs(fidelity_flow_uc(&g) - 1.0) < 1e-9, "no flow: Uc = 1, got %g", fidelity_flow_uc(&g));
    /* a flow carries a disc 2 cells while it is also pulled together by a
     * cell with no flow: the compression is fine-scale, so it weighs far
     * less at the coarse scale (Uc) than cell by cell (U) */
    FidelityFlow c = {0};
    memset(a, 0, n * sizeof *a);
    memset(b, 0, n * sizeof *b);
    disc(a, w, h, 24, 32, 10, 0.5);
    disc(b, w, h, 26, 32, 9, 0.5 * 100.0 / 81.0);
    for (size_t k = 0; k < n; k++) ux[k] = 2.0f;
    fidelity_flow_add(&c, a, b, ux, uy, w, h, 1.0 / 64, 0.01);
    CHECK(fidelity_flow_uc(&c) < 0.5 * fidelity_flow_u(&c), "local compression: Uc %g, U %g",
          fidelity_flow_uc(&c), fidelity_flow_u(&c));
    memset(ux, 0, n * sizeof *ux);
    /* solid rotation u = Ω × r: ω = 2Ω everywhere inside; cells per step
     * -> domain units per time: × h/dt */
    double om = 0.5, cell = 1.0 / 64, dt = 0.01; /* Ω in 1/time */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            ux[(size_t)j * w + i] = (float)(-om * (j - 32) * dt);
            uy[(size_t)j * w + i] = (float)(om * (i - 32) * dt);
        }
    FidelityFlow r = {0};
    fidelity_flow_add(&r, a, a, ux, uy, w, h, cell, dt);
    double expect = 0.5 * (2 * om) * (2 * om) * cell * cell * (double)(w - 2) * (h - 2);
    CHECK(fabs(fidelity_flow_enstrophy(&r) - expect) < 1e-6 * expect, "solid rotation: %g, expected %g",
          fidelity_flow_enstrophy(&r), expect);
    free(a);
    free(b);
    free(ux);
    free(uy);
}

/* The front: chessboard distances from the start's cells, and the excess
 * of visible smoke beyond the reach. */
static void test_front(void)
{
    int w = 20, h = 10;
    size_t n = (size_t)w * h;
    float *s = field(n), *rho = field(n);
    s[(size_t)5 * w + 4] = 1.0f;
    float *m = fidelity_front_map(s, w, h, 0.5f);
    CHECK(m != NULL, "map");
    CHECK(m[(size_t)5 * w + 4] == 0.0f, "a seed: 0");
    CHECK(m[(size_t)5 * w + 10] == 6.0f, "6 cells right: 6, got %g", m[(size_t)5 * w + 10]);
    CHECK(m[(size_t)8 * w + 7] == 3.0f, "3 diagonally: 3 (chessboard), got %g", m[(size_t)8 * w + 7]);
    CHECK(m[(size_t)0 * w + 19] == 15.0f, "corner: max(15, 5) = 15, got %g", m[19]);
    rho[(size_t)5 * w + 10] = 1.0f;
    CHECK(fidelity_front_excess(rho, m, w, h, 0.5f, 6.0) == 0.0, "within the reach: 0");
    CHECK(fidelity_front_excess(rho, m, w, h, 0.5f, 4.5) == 1.5, "1.5 beyond");
    CHECK(fidelity_front_excess(rho, m, w, h, 1.5f, 0.0) == 0.0, "invisible smoke does not count");
    free(m);
    memset(s, 0, n * sizeof *s);
    m = fidelity_front_map(s, w, h, 0.5f);
    CHECK(m && isinf(m[0]) && isinf(m[n - 1]), "no start smoke: infinitely far");
    free(m);
    free(s);
    free(rho);
}

/* ------------------------------------------------- the resampled distance */

static void test_resampled(void)
{
    int w = 24, h = 12;
    size_t n = (size_t)w * h;
    float *a = field(n);
    disc(a, w, h, 8, 6, 4, 1.0);
    disc(a, w, h, 17, 5, 3, 0.5);
    CHECK(fidelity_distance_resampled(a, w, h, a, w, h) == 0.0, "a field against itself: 0");

    /* its exact 2x2 upsampling, at 3x the mass: 0, both argument orders */
    int W = 2 * w, H = 2 * h;
    float *up = field((size_t)W * H);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) up[(size_t)j * W + i] = 3.0f * a[(size_t)(j / 2) * w + i / 2];
    double d1 = fidelity_distance_resampled(a, w, h, up, W, H);
    double d2 = fidelity_distance_resampled(up, W, H, a, w, h);
    CHECK(d1 < 1e-6, "2x upsampling: 0, got %g", d1);
    CHECK(d2 < 1e-6, "2x upsampling, reversed: 0, got %g", d2);

    /* a 3x upsampling against a 2x one (a size ratio of 1.5): 0 */
    int W3 = 3 * w, H3 = 3 * h;
    float *up3 = field((size_t)W3 * H3);
    for (int j = 0; j < H3; j++)
        for (int i = 0; i < W3; i++) up3[(size_t)j * W3 + i] = a[(size_t)(j / 3) * w + i / 3];
    double d3 = fidelity_distance_resampled(up3, W3, H3, up, W, H);
    CHECK(d3 < 1e-6, "3x vs 2x upsampling: 0, got %g", d3);

    /* partial overlaps, by hand: 3x3 with 1 at (0,0) and (1,1) averaged to
     * 2x2 (cells of 1.5 fine cells): (0,0) gets 1·(1/1.5)² + 1·(0.5/1.5)²
     * = 5/9, each other cell 1·(0.5/1.5)² = 1/9; normalised 5/8, 1/8, 1/8,
     * 1/8. Against [1, 0, 0, 0]: 3/8 + 3/8 = 0.75; against [5, 1, 1, 1]: 0. */
    float f3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0}, c2[4] = {1, 0, 0, 0}, c2b[4] = {5, 1, 1, 1};
    CHECK(fabs(fidelity_distance_resampled(f3, 3, 3, c2, 2, 2) - 0.75) < 1e-9, "3x3 to 2x2: 0.75, got %g",
          fidelity_distance_resampled(f3, 3, 3, c2, 2, 2));
    CHECK(fidelity_distance_resampled(c2b, 2, 2, f3, 3, 3) < 1e-9, "3x3 to 2x2: 0, got %g",
          fidelity_distance_resampled(c2b, 2, 2, f3, 3, 3));

    /* left half against right half: no overlap, 2 */
    float *l = field(n), *r = field((size_t)W * H);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w / 2; i++) l[(size_t)j * w + i] = 1;
    for (int j = 0; j < H; j++)
        for (int i = W / 2; i < W; i++) r[(size_t)j * W + i] = 1;
    CHECK(fabs(fidelity_distance_resampled(l, w, h, r, W, H) - 2.0) < 1e-9, "disjoint halves: 2, got %g",
          fidelity_distance_resampled(l, w, h, r, W, H));
    /* the left half against everything: half the unit mass moved, 1 */
    for (size_t k = 0; k < (size_t)W * H; k++) r[k] = 1;
    CHECK(fabs(fidelity_distance_resampled(l, w, h, r, W, H) - 1.0) < 1e-9, "half vs all: 1, got %g",
          fidelity_distance_resampled(l, w, h, r, W, H));

    CHECK(isnan(fidelity_distance_resampled(a, w, h, up, W, H + 2)), "different aspects: NaN");
    float *z = field(n);
    CHECK(isnan(fidelity_distance_resampled(a, w, h, z, w, h)), "no mass: NaN");
    free(z);
    free(l);
    free(r);
    free(up3);
    free(up);
    free(a);
}

/* ---------------------------------------------------------- the tool */

static char tool[1024], dir[256];

/* The last run's exit status, stdout and stderr. */
static TestlibResult R;

/* Run the tool with ARGS (quoted for sh) through sh; its stdout and stderr
 * go to R. The exit status, or -1. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s", tool, args);
    return testlib_run_sh(cmd, NULL, &R);
}

/* The text of DIR/NAME ("" when there is none); good until the second call after. */
static const char *slurp(const char *name)
{
    static char *buf[2];
    static int which;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    which ^= 1;
    free(buf[which]);
    buf[which] = testlib_read_file(path, NULL);
    return buf[which] ? buf[which] : "";
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* The table's row for PAIR split into cells (without the outer bars);
 * returns the number of cells. */
static int row_cells(const char *table, const char *pair, char cells[24][64])
{
    char key[128];
    snprintf(key, sizeof key, "| %s |", pair);
    const char *p = strstr(table, key);
    if (!p) return 0;
    const char *end = strchr(p, '\n');
    int n = 0;
    p++;
    while (p < end && n < 24) {
        const char *q = strchr(p, '|');
        if (!q || q > end) break;
        int len = (int)(q - p);
        while (len > 0 && p[0] == ' ') p++, len--;
        while (len > 0 && p[len - 1] == ' ') len--;
        snprintf(cells[n++], 64, "%.*s", len, p);
        p = q + 1;
    }
    return n;
}

static void test_tool(void)
{
    const char *args = "--cpu --grid 32 --steps 20 --pairs diagonal,crescent-bars";
    int rc = run(testlib_fmt("%s --csv '%s/f.csv' --strips '%s/strips'", args, dir, dir));
    CHECK(rc == 0, "a small run exits 0, got %d: %s", rc, R.err);
    const char *out = R.out;
    char single[65536]; /* the table, for --jobs 2 below */
    snprintf(single, sizeof single, "%s", out);
    CHECK(count_lines(out) == 4, "header, rule and 2 rows, got:\n%s", out);
    CHECK(strncmp(out, "| pair | grid | err@10 | err@300 | err@1000 | err@3000 | steps to 10% | steps to 3% "
                       "| mass drift | blend dist @ half | stripes (max/start) | 128 vs 512 |\n",
                  140) == 0,
          "the header: %s", out);
    char c[24][64];
    const char *names[2] = {"diagonal", "crescent-bars"};
    for (int k = 0; k < 2; k++) {
        int n = row_cells(out, names[k], c);
        CHECK(n == 19, "%s: 19 cells, got %d", names[k], n);
        if (n != 19) continue;
        /* issue 20's columns: U, Uc (a share, 0 .. a few), P5, P10, P20
         * (correlations), the front (domain units, >= 0), the swirl */
        CHECK(atof(c[12]) >= 0.0 && atof(c[12]) < 5.0 && strcmp(c[12], "-"), "%s: U %s", names[k], c[12]);
        CHECK(atof(c[13]) >= 0.0 && atof(c[13]) < 5.0 && strcmp(c[13], "-"), "%s: Uc %s", names[k], c[13]);
        for (int q = 14; q <= 16; q++)
            CHECK(strcmp(c[q], "-") && fabs(atof(c[q])) <= 1.0, "%s: P column %d: %s", names[k], q, c[q]);
        CHECK(strcmp(c[17], "-") && atof(c[17]) >= 0.0, "%s: front %s", names[k], c[17]);
        CHECK(strcmp(c[18], "-") && atof(c[18]) >= 0.0, "%s: swirl %s", names[k], c[18]);
        CHECK(!strcmp(c[1], "32²"), "%s: grid %s", names[k], c[1]);
        double e10 = atof(c[2]);
        CHECK(e10 > 0.5 && e10 <= 2.0, "%s: err@10 %s", names[k], c[2]);
        for (int q = 3; q <= 5; q++) CHECK(!strcmp(c[q], "-"), "%s: column %d beyond the run: %s", names[k], q, c[q]);
        CHECK(atof(c[8]) < 1e-4 && strchr(c[8], 'e'), "%s: mass drift %s", names[k], c[8]);
        CHECK(atof(c[10]) >= 1.0, "%s: stripes ratio %s", names[k], c[10]);
        CHECK(!strcmp(c[11], "-"), "%s: no --compare: %s", names[k], c[11]);
    }
    /* the diagonal disc cannot reach its target in 20 steps: error stays ~2 */
    if (row_cells(out, "diagonal", c) == 19) CHECK(atof(c[2]) > 1.9, "diagonal err@10 %s", c[2]);
    const char *err = R.err;
    CHECK(strstr(err, "[2/2] crescent-bars"), "progress lines: %s", err);

    const char *csv = slurp("f.csv");
    CHECK(count_lines(csv) == 3 && !strncmp(csv, "pair,grid_w,grid_h,steps,err0,", 30), "csv:\n%s", csv);
    CHECK(strstr(csv, "\ndiagonal,32,32,20,"), "csv diagonal row:\n%s", csv);

    /* the strip: frames at steps 0, 5, 10 and 20, then the target, 2 px apart */
    char path[512];
    snprintf(path, sizeof path, "%s/strips/crescent-bars.png", dir);
    Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
    CHECK(im && im->w == 5 * 32 + 4 * 2 && im->h == 32, "strip %dx%d", im ? im->w : 0, im ? im->h : 0);
    if (im) {
        /* the first panel is the crescent: smoke at the left of the disc
         * (the carved disc is offset right and up), none in the corner */
        CHECK(im->px[16 * im->w + 8] > 0.5f && im->px[1 * im->w + 1] < 0.05f, "strip's first panel");
        /* the gap is grey */
        CHECK(fabsf(im->px[5 * im->w + 32] - 0.3f) < 0.01f, "strip's gap %g", im->px[5 * im->w + 32]);
    }
    image_free(im);

    /* --jobs 2 (forked children) gives the same table as one process */
    rc = run(testlib_fmt("%s --jobs 2", args));
    CHECK(rc == 0, "--jobs 2 exits 0, got %d: %s", rc, R.err);
    CHECK(!strcmp(R.out, single), "--jobs 2 table differs:\n%s\nvs\n%s", R.out, single);

    /* --compare fills the last column: the same morph at 128 and 512 after
     * 10 steps, close */
    rc = run("--cpu --grid 32 --steps 10 --pairs diagonal --compare");
    CHECK(rc == 0, "--compare exits 0, got %d: %s", rc, R.err);
    out = R.out;
    if (row_cells(out, "diagonal", c) == 19) {
        double d = atof(c[11]);
        CHECK(strcmp(c[11], "-") && d >= 0 && d < 0.2, "128 vs 512 after 10 steps: %s", c[11]);
    } else
        CHECK(0, "--compare row: %s", out);

    /* --compare-step moves the compared step (the CSV's compare_step) */
    rc = run(testlib_fmt("--cpu --grid 32 --steps 10 --pairs diagonal --compare --compare-step 5 --csv '%s/cs.csv'", dir));
    CHECK(rc == 0, "--compare-step 5 exits 0: %s", R.err);
    const char *cs = slurp("cs.csv");
    const char *csrow = strstr(cs, "\ndiagonal,");
    int col = 0;
    const char *cp = csrow ? csrow + 1 : NULL;
    while (cp && col < 20) { /* compare_step is the 21st column */
        cp = strchr(cp, ',');
        if (cp) cp++;
        col++;
    }
    CHECK(cp && !strncmp(cp, "5,", 2), "compare_step 5 in the csv: %s", csrow ? csrow : cs);
    rc = run("--cpu --grid 32 --steps 10 --pairs diagonal --compare-step 1000");
    CHECK(rc != 0 && strstr(R.err, "give --compare"), "--compare-step without --compare: %d %s", rc, R.err);

    /* --pair adds a pair of the user's own: the diagonal's shapes under
     * another name give the diagonal's row; without --pairs only the added
     * pairs run, with it the named ones; an ASPECT of 2 runs on 2N x N */
    {
        char d[24][64];
        int dn = row_cells(single, "diagonal", d);
        rc = run("--cpu --grid 32 --steps 20 --pair 'mine|disc:0.25,0.75,0.12|disc:0.75,0.25,0.12'");
        CHECK(rc == 0 && count_lines(R.out) == 3, "--pair: exit 0 and one row, got %d:\n%s%s", rc, R.out, R.err);
        int n = row_cells(R.out, "mine", c);
        CHECK(n == 19 && dn == 19, "--pair: 19 cells, got %d", n);
        for (int q = 1; q < n && q < dn; q++)
            CHECK(!strcmp(c[q], d[q]), "--pair: column %d is %s, the diagonal's %s", q, c[q], d[q]);
        rc = run("--cpu --grid 32 --steps 10 --pair 'w|disc:0.3,0.5,0.2|disc:1.5,0.5,0.2|2' --pairs w,diagonal");
        CHECK(rc == 0 && count_lines(R.out) == 4 && row_cells(R.out, "diagonal", c) == 19,
              "--pair with --pairs: both rows, got %d:\n%s%s", rc, R.out, R.err);
        CHECK(row_cells(R.out, "w", c) == 19 && !strcmp(c[1], "64×32"), "--pair's aspect 2: grid %s", c[1]);
        const char *badp[] = {"--cpu --pair 'x|disc:0.5,0.5,0.2'", "--cpu --pair 'diagonal|disc:0.5,0.5,0.2|disc:0.5,0.5,0.1'",
                              "--cpu --pair 'a b|disc:0.5,0.5,0.2|disc:0.5,0.5,0.1'",
                              "--cpu --pair 'x|disc:0.5,0.5,0.2|disc:0.5,0.5,0.1|9'", "--cpu --pair 'x||disc:0.5,0.5,0.1'",
                              "--cpu --grid 32 --steps 5 --pair 'x|disc:0.5|disc:0.5,0.5,0.1'",
                              "--keys --cpu --pair 'x|disc:0.5,0.5,0.2|disc:0.5,0.5,0.1'"};
        for (size_t k = 0; k < sizeof badp / sizeof badp[0]; k++) {
            rc = run(badp[k]);
            CHECK(rc == 1 && strstr(R.err, "fidelity: ") && R.out[0] == '\0', "'%s': exit 1 and a message, got %d:\n%s",
                  badp[k], rc, R.err);
        }
    }

    /* --list names every pair, at least 14 */
    rc = run("--list");
    CHECK(rc == 0 && count_lines(R.out) >= 14 && strstr(R.out, "ring-word"),
          "--list: %d\n%s", rc, R.out);
    rc = run("--help");
    CHECK(rc == 0 && strstr(R.out, "--compare") && strstr(R.out, "blend dist"),
          "--help: %d", rc);

    /* errors: exit 1, nothing on stdout, one line "fidelity: ..." */
    const char *bad[] = {"--bogus", "--cpu --pairs nosuch", "--cpu --grid 3", "--cpu --steps x",
                         "--jobs 2", "--cpu --param vf=-1", "--cpu --param nope=1", "--cpu --grid",
                         "--cpu --mktargets /nonexistent/mktargets"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rc = run(bad[k]);
        const char *e = R.err;
        CHECK(rc == 1, "'%s': exit 1, got %d", bad[k], rc);
        CHECK(!strncmp(e, "fidelity: ", 10) && count_lines(e) == 1, "'%s': one message, got:\n%s", bad[k], e);
        CHECK(R.out[0] == '\0', "'%s': nothing on stdout", bad[k]);
    }
    /* no GL at all (glvnd finds no EGL vendor) and no --cpu: one line that
     * names --cpu */
    setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent.json", 1);
    rc = run("--grid 32 --steps 10 --pairs diagonal");
    unsetenv("__EGL_VENDOR_LIBRARY_FILENAMES");
    const char *e = R.err;
    CHECK(rc == 1 && !strncmp(e, "fidelity: no GPU: ", 18) && strstr(e, "--cpu") && count_lines(e) == 1,
          "no GL: exit 1 and one line, got %d:\n%s", rc, e);
}

/* The CSV's field `col` (from 0) of the line that starts with `key`, as a
 * string in out (64 chars); 0, or -1 when there is no such line or field. */
static int csv_field(const char *csv, const char *key, int col, char out[64])
{
    const char *p = strstr(csv, key);
    if (!p) return -1;
    if (*p == '\n') p++;
    for (int c = 0; c < col; c++) {
        p = strpbrk(p, ",\n");
        if (!p || *p == '\n') return -1;
        p++;
    }
    size_t len = strcspn(p, ",\n");
    snprintf(out, 64, "%.*s", (int)len, p);
    return 0;
}

/* --keys (issue 9, point 5): 3-key sequences. At 32², 505 steps a key (off
 * the 10-step observation grid on purpose; each key arrives at its step,
 * issue 20, and the flow carries smoke at most umax a time unit, so a key
 * needs seconds), split-merge and logo-text: each key's error is read at
 * exactly k*505, against that key (the tool fails the run if the morph's
 * own metric, which is against the target it holds, disagrees at any
 * observed step), and it falls from where the range started to within 6%
 * by the key's step (measured 0.012-0.039 against 1.26-1.71 at the range's
 * start). */
/* --strip-steps picks the strips' frames (observed even where the suite
 * would not look: step 255 is past every-step observation and not a
 * multiple of 10); --curve writes each pair's error at every observed step,
 * whole or not at all, the same from --jobs' children */
static void test_strip_steps_curve(void)
{
    /* a strip wider than an image may be: one line saying so, before any
     * step is run (it said "out of memory") */
    int big = run(testlib_fmt("--cpu --grid 2048 --steps 2 --pairs wide --strips '%s/sbig' --strip-steps 1,2", dir));
    CHECK(big != 0 && strstr(R.err, "16390x2048 pixels") && strstr(R.err, "fewer --strip-steps") &&
              !strstr(R.err, "out of memory"),
          "a strip too wide: exit %d: %s", big, R.err);
    const char *args = "--cpu --grid 32 --steps 260 --pairs blob-star,one-three";
    int rc = run(testlib_fmt("%s --strips '%s/ss' --strip-steps 15,255 --curve '%s/cv' --csv '%s/g.csv'", args, dir,
                             dir, dir));
    CHECK(rc == 0, "--strip-steps and --curve exit 0, got %d: %s", rc, R.err);
    char path[512];
    snprintf(path, sizeof path, "%s/ss/blob-star.png", dir);
    Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
    /* frames at 0, 15 and 255, then the target */
    CHECK(im && im->w == 4 * 32 + 3 * 2 && im->h == 32, "strip %dx%d", im ? im->w : 0, im ? im->h : 0);
    if (im && im->w == 4 * 32 + 3 * 2) {
        int x255 = 2 * (32 + 2);
        CHECK(im->px[1 * im->w + x255 + 1] < 0.05f, "the frame at step 255 was put (its empty corner %g, not the gap's grey)",
              (double)im->px[1 * im->w + x255 + 1]);
        float peak = 0.0f;
        for (int j = 0; j < 32; j++)
            for (int i = 0; i < 32; i++) peak = fmaxf(peak, im->px[(size_t)j * im->w + x255 + i]);
        CHECK(peak > 0.1f, "the frame at step 255 has smoke: peak %g", (double)peak);
    }
    image_free(im);

    const char *cv = slurp("cv/one-three-32x32.csv");
    CHECK(!strncmp(cv, "step,error\n0,", 13), "curve header and step 0: %.40s", cv);
    int lines = count_lines(cv);
    /* every step to 200, then every 10 (and every step until the error halves) */
    CHECK(lines >= 1 + 201 + 6 && lines <= 1 + 261, "curve rows: %d", lines);
    const char *last = cv + strlen(cv);
    if (last > cv) last--;
    while (last > cv && last[-1] != '\n') last--;
    CHECK(!strncmp(last, "260,", 4), "the curve ends at step 260: %s", last);
    double e_curve = atof(last + 4);
    char *csv = testlib_read_file(testlib_fmt("%s/g.csv", dir), NULL);
    const char *row = csv ? strstr(csv, "\none-three,") : NULL;
    double e_end = -1.0;
    if (row) { /* err_end: the 10th column */
        const char *p = row + 1;
        for (int c = 0; c < 9 && p; c++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        if (p) e_end = atof(p);
    }
    CHECK(e_end > 0.0 && fabs(e_curve - e_end) <= 1e-6 * e_end, "the curve's last error %g is the csv's err_end %g",
          e_curve, e_end);
    free(csv);
    int left = 0; /* no DIR/PAIR-WxH.csv.tmp.PID left behind */
    DIR *d = opendir(testlib_fmt("%s/cv", dir));
    for (struct dirent *e; d && (e = readdir(d));) left += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    CHECK(d && left == 0, "%d temporary files left in cv/", left);

    /* --jobs 2: the children write the same curves */
    char *one = testlib_read_file(testlib_fmt("%s/cv/blob-star-32x32.csv", dir), NULL);
    rc = run(testlib_fmt("%s --jobs 2 --strips '%s/ss3' --strip-steps 15,255 --curve '%s/cv2'", args, dir, dir));
    CHECK(rc == 0, "--jobs 2 --curve exits 0: %s", R.err);
    char *two = testlib_read_file(testlib_fmt("%s/cv2/blob-star-32x32.csv", dir), NULL);
    CHECK(one && two && !strcmp(one, two), "--jobs 2 writes the same curve");
    free(one);
    free(two);

    /* wrong use: one message, a non-zero exit, nothing written */
    rc = run(testlib_fmt("%s --strips '%s/ss2' --strip-steps 20,10", args, dir));
    CHECK(rc != 0 && strstr(R.err, "increasing"), "steps out of order: %d %s", rc, R.err);
    rc = run(testlib_fmt("%s --strip-steps 5", args));
    CHECK(rc != 0 && strstr(R.err, "--strips DIR"), "--strip-steps without --strips: %d %s", rc, R.err);
    rc = run(testlib_fmt("%s --strips '%s/ss2' --strip-steps 5,", args, dir));
    CHECK(rc != 0 && strstr(R.err, "comma"), "a trailing comma: %d %s", rc, R.err);
    rc = run(testlib_fmt("%s --curve '%s/g.csv'", args, dir));
    CHECK(rc != 0 && strstr(R.err, "not a directory"), "--curve at a file: %d %s", rc, R.err);
    rc = run(testlib_fmt("--cpu --keys --curve '%s/cv3'", dir));
    CHECK(rc != 0 && strstr(R.err, "--keys"), "--curve with --keys: %d %s", rc, R.err);
    CHECK(!testlib_exists(testlib_fmt("%s/ss2", dir)) && !testlib_exists(testlib_fmt("%s/cv3", dir)),
          "a refused run makes no directory");
}

static void test_tool_keys(void)
{
    const char *args = "--keys --cpu --grid 32 --key-every 505 --sequences split-merge,logo-text";
    int rc = run(testlib_fmt("%s --csv '%s/k.csv' --strips '%s/kstrips'", args, dir, dir));
    CHECK(rc == 0, "a small key run exits 0, got %d: %s", rc, R.err);
    char table[8192];
    snprintf(table, sizeof table, "%s", R.out);
    CHECK(count_lines(table) == 8, "header, rule and 2 x 3 rows, got:\n%s", table);
    CHECK(!strncmp(table, "| sequence | grid | key | target | step | err from | err half way | half / from "
                          "| err at key | steps to 5% | mass drift | stripes (max/start) | stripes (max/from or key) "
                          "| fastest fall | <= 5% |\n",
                  195),
          "the header: %s", table);
    CHECK(strstr(R.err, "[2/2] logo-text 32x32: 3 keys of 505 steps"), "progress lines: %s", R.err);
    const char *csv = slurp("k.csv");
    CHECK(count_lines(csv) == 7 && !strncmp(csv, "sequence,grid_w,grid_h,key_every,key,target,key_step,", 53),
          "csv:\n%s", csv);
    static const char *seqs[2] = {"split-merge", "logo-text"};
    for (int q = 0; q < 2; q++) {
        double prev_key = 0;
        for (int k = 1; k <= 3; k++) {
            /* sequence,grid_w,grid_h,key_every,key,target,key_step,key_held,err_from,err_mid,
             * err_key,morph_err_key,steps_to_5,mass_drift,... */
            char key[64], f[24][64];
            snprintf(key, sizeof key, "\n%s,32,32,505,%d,", seqs[q], k);
            bool found = true;
            for (int c = 6; c <= 13; c++) found = found && csv_field(csv, key, c, f[c]) == 0;
            for (int c = 14; c <= 23; c++) found = found && csv_field(csv, key, c, f[c]) == 0;
            CHECK(found, "%s key %d: no csv row:\n%s", seqs[q], k, csv);
            if (!found) continue;
            long step = atol(f[6]);
            double from = atof(f[8]), mid = atof(f[9]), at = atof(f[10]), morph_at = atof(f[11]),
                   drift = atof(f[13]);
            /* the key is reached on its beat, not long before: half way the
             * smoke is still on its way, the quarter (5-s keys at
             * 32², paced, the gathering joining by the key's squeeze: 0.40-0.68
             * of the error at the range's start; 0.20-0.42 with it at 30% of
             * every key, --gather-from 0.3; docs/FIDELITY.md has the suite's) */
            CHECK(mid >= 0.25 * from, "%s key %d: error %.3f half way, from %.3f", seqs[q], k, mid, from);
            /* and nothing pops in: the error falls at most 12% of its start
             * in 10 steps (0.041-0.056 measured; untimed, --arrive 0, pops
             * in at up to 0.23) */
            double fall = atof(f[19]);
            CHECK(fall > 0.0 && fall <= 0.12, "%s key %d: the error fell %.3f of its start in 10 steps", seqs[q],
                  k, fall);
            printf("  info: %s key %d at step %ld (held %s): error %.3f -> %.3f, drift %.1e\n", seqs[q], k,
                   step, f[7], from, at, drift);
            CHECK(step == 505L * k, "%s key %d: read at step %ld, not %ld", seqs[q], k, step, 505L * k);
            CHECK(atoi(f[7]) == k, "%s key %d: the morph held key %s at its step", seqs[q], k, f[7]);
            CHECK(fabs(morph_at - at) <= 1e-5, "%s key %d: the morph's error %g, the tool's %g", seqs[q], k,
                  morph_at, at);
            CHECK(from > 1.0, "%s key %d: the smoke starts far from the key (%.3f)", seqs[q], k, from);
            /* within 6.1% at 32² (logo-text key 1: 0.059, 0.0601 since the
             * drift's limit reads the flow's statistics, twenty-fifth round;
             * the suite's keys at 128²-512² are within the 5%,
             * docs/FIDELITY.md) */
            CHECK(at <= 0.061 && at <= from / 10, "%s key %d: error %.3f at the key (from %.3f)", seqs[q], k,
                  at, from);
            CHECK(drift <= 1e-5, "%s key %d: mass drift %g", seqs[q], k, drift);
            /* the key's stripes are read against the greater of the range's
             * start and the key itself, as a pair's against the greater of
             * its start and target: the last column is max ÷ that */
            double smax = atof(f[15]), sfrom = atof(f[21]), skey = atof(f[22]), sref = atof(f[23]);
            double greater = sfrom > skey ? sfrom : skey;
            CHECK(sfrom > 0.0 && skey > 0.0 && fabs(sref - smax / greater) <= 1e-5 * (sref + 1.0),
                  "%s key %d: stripes max %g, from %g, key %g, ratio %g", seqs[q], k, smax, sfrom, skey, sref);
            if (k == 1) CHECK(fabs(sfrom - atof(f[14])) <= 1e-9 * sfrom, "%s key 1 starts at step 0", seqs[q]);
            /* the next key starts far from where this one ended: the keys differ */
            if (k > 1) CHECK(from > 10 * prev_key, "%s key %d: from %.3f", seqs[q], k, from);
            prev_key = at;
        }
        /* the table's rows agree: the step and a verdict */
        char row[128];
        snprintf(row, sizeof row, "| %s | 32² | 3 |", seqs[q]);
        const char *line = strstr(table, row);
        CHECK(line && strstr(line, "| 1515 |"), "%s: the table's third key row:\n%s", seqs[q], table);
    }
    /* the strip: 2 rows of 13 panels (step 0; a quarter, half and three
     * quarters into each key and its step), keys under the key frames,
     * grey elsewhere */
    char path[512];
    snprintf(path, sizeof path, "%s/kstrips/split-merge.png", dir);
    Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
    CHECK(im && im->w == 13 * 32 + 12 * 2 && im->h == 2 * 32 + 2, "key strip %dx%d", im ? im->w : 0,
          im ? im->h : 0);
    if (im && im->w == 440 && im->h == 66) {
        const float *bottom = im->px + (size_t)34 * im->w;
        CHECK(fabsf(bottom[16 * im->w + 16] - 0.3f) < 0.01f, "under step 0: grey");
        for (int q = 1; q <= 3; q++) { /* the quarters of key 1: frames of smoke, grey under them */
            float top = 0.0f;
            for (int j = 0; j < 32; j++)
                for (int i = 0; i < 32; i++) top = fmaxf(top, im->px[(size_t)j * im->w + q * 34 + i]);
            CHECK(top > 0.5f && fabsf(bottom[16 * im->w + q * 34 + 16] - 0.3f) < 0.01f,
                  "panel %d: smoke up to %g, %g under it", q, top, bottom[16 * im->w + q * 34 + 16]);
        }
        /* key 1 (three discs) under the frame at step 505: the big disc at
         * (0.28, 0.3) is dense in both */
        int x = 4 * 34 + 9, y = 10;
        CHECK(bottom[y * im->w + x] > 0.5f && im->px[y * im->w + x] > 0.2f, "key 1 %g, frame %g",
              bottom[y * im->w + x], im->px[y * im->w + x]);
    }
    image_free(im);

    /* --jobs 2 gives the same table */
    rc = run(testlib_fmt("%s --jobs 2", args));
    CHECK(rc == 0 && !strcmp(R.out, table), "--jobs 2: %d\n%s\nvs\n%s", rc, R.out, table);

    rc = run("--keys --list");
    CHECK(rc == 0 && strstr(R.out, "split-merge") && strstr(R.out, "key 3 (HI)") && !strstr(R.out, "diagonal"),
          "--keys --list: %d\n%s", rc, R.out);
    const char *bad[] = {"--keys --cpu --steps 100", "--keys --cpu --compare", "--keys --cpu --pairs diagonal",
                         "--cpu --sequences nosuch", "--cpu --key-every 1", "--cpu --key-every x"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rc = run(bad[k]);
        CHECK(rc == 1 && !strncmp(R.err, "fidelity: ", 10) && count_lines(R.err) == 1 && !R.out[0],
              "'%s': exit 1 and one line, got %d:\n%s", bad[k], rc, R.err);
    }
}

/* The stopping rule of a run with no --steps. */
static void test_settle(void)
{
    FidelitySettle z = {0}, s = z;
    CHECK(fidelity_settle_update(&s, 0, 1.0) == FIDELITY_RUNNING, "start");
    CHECK(fidelity_settle_update(&s, 400, 0.5) == FIDELITY_RUNNING, "falling");
    CHECK(fidelity_settle_update(&s, 899, 0.498) == FIDELITY_RUNNING, "within the window");
    CHECK(fidelity_settle_update(&s, 900, 0.497) == FIDELITY_SETTLED_AT,
          "no 1%% gain for 500 steps settles");
    s = z;
    fidelity_settle_update(&s, 0, 1.0);
    CHECK(fidelity_settle_update(&s, 600, 0.8) == FIDELITY_RUNNING, "a gain restarts the window");
    CHECK(fidelity_settle_update(&s, 1000, 0.79) == FIDELITY_RUNNING, "a gain restarts the window");
    CHECK(fidelity_settle_update(&s, 1200, 0.03) == FIDELITY_ARRIVED_AT, "3%% arrives");
    s = z;
    CHECK(fidelity_settle_update(&s, 0, 0.01) == FIDELITY_ARRIVED_AT, "already there");
}

/* The CSV's numbers after the pair's name, from a row's leading newline:
 * v[1..n-1] (v[0] 0) */
static void csv_numbers(const char *row, double *v, int n)
{
    for (int c = 0; c < n; c++) v[c] = 0.0;
    const char *p = strchr(row + 1, ',');
    for (int c = 1; c < n && p; c++) {
        v[c] = atof(p + 1);
        p = strchr(p + 1, ',');
    }
}

/* The first n numbers of pair's row in a --csv file's text (csv_numbers);
 * false, and a failed check, when there is no such row. */
static bool pair_numbers(const char *csv, const char *pair, double *v, int n)
{
    const char *row = csv ? strstr(csv, testlib_fmt("\n%s,", pair)) : NULL;
    CHECK(row != NULL, "no csv row for %s", pair);
    if (row) csv_numbers(row, v, n);
    return row != NULL;
}

/* Issue 7's bounds on the whole suite, at a size CI affords (64², the CPU
 * reference, 1000 steps, the defaults): no stamp-in (error after 10 steps at
 * least 95% of the start), no cross-fade (blend distance at half-way at least
 * 0.15), error at most 10% by step 1000, mass drift at most 1e-4, and the
 * stripe measure at most 2x the greater of the start's and the target's. A
 * shape that gathers into sharper parts reads above its start without any
 * stripes: thin text (ring-word's target 3.3x its start), a square
 * compressed into a small disc (square-blob 4.6x), a ring (disc-ring 2.5x);
 * hatching reads above both (the largest at 64², 1000 steps: 1.7x, the
 * filaments of blob-square). The full sweep at 128², 256² and 512² is a
 * benchmark: docs/FIDELITY.md. */
static void test_suite_bounds(void)
{
    CHECK_LONG_RUN("test_suite_bounds");
    static const char *pairs[] = {"diagonal", "crescent-bars", "one-three", "three-one",
                                  "ring-word", "word-ring", "corners", "blob-square",
                                  "square-blob", "disc-ring", "heart-cross", "blob-star",
                                  "ring-hi", "grey", "wide"};
    static const bool far[] = {false, false, false, false, false, false, true, false,
                               false, false, false, false, false, false, true};
    int rc = run(testlib_fmt("--cpu --grid 64 --steps 1000 --jobs 2 --csv '%s/b.csv'", dir));
    CHECK(rc == 0, "the suite at 64^2 exits 0, got %d: %s", rc, R.err);
    const char *csv = slurp("b.csv");
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        char key[64];
        snprintf(key, sizeof key, "\n%s,", pairs[k]);
        const char *row = strstr(csv, key);
        CHECK(row != NULL, "no csv row for %s", pairs[k]);
        if (!row) continue;
        /* pair,grid_w,grid_h,steps,err0,err10,err300,err1000,err3000,err_end,steps_to_10,
         * steps_to_3,mass_drift,half_step,blend_dist,blend_s,stripes0,stripes_max,... */
        /* ..., compare_step, d128_512, u, uc, p5, p10, p20, front, swirl, seconds */
        double v[31];
        csv_numbers(row, v, 31);
        double e0 = v[4], e10 = v[5], e1000 = v[7], drift = v[12], blend = v[14];
        double s0 = v[16], smax = v[17], st = v[29], sref = s0 > st ? s0 : st;
        printf("  info: %-12s 64^2: err %.3f -> %.3f at 10 (%.1f%%), %.3f at 1000, blend %.2f, "
               "drift %.1e, stripes %.2fx (of start or target)\n", pairs[k], e0, e10, 100.0 * e10 / e0, e1000,
               blend, drift, sref > 0 ? smax / sref : 0.0);
        CHECK(e10 >= 0.95 * e0, "%s: stamp-in: error %.3f after 10 steps, %.3f at the start", pairs[k], e10, e0);
        /* the flow carries smoke at most umax (0.18) a time unit: the trips
         * of a domain's length (wide: 1.05 between the centres) take 6 s and
         * more, and --arrive auto plans them at half of umax: corners
         * arrives at 7.4 s, wide at 10 s, step 1000 itself, where its error
         * measured 0.158 (0.15 at the fixed 3 s); so those two get 0.2 at
         * step 1000 (wide is within 3% by step 1280 at 128²-512², corners
         * by 860, docs/FIDELITY.md) */
        double e_bound = far[k] ? 0.20 : 0.10;
        /* a compression is drawn in by the flow for a·9 s before its drift
         * joins (method.h, METHOD_DRIFT_WAIT): square-blob is still drawing
         * in at step 1000 and is held to 3% by step 3000 below */
        if (strcmp(pairs[k], "square-blob") == 0)
            e_bound = 0.9;
        CHECK(e1000 <= e_bound, "%s: error %.3f at step 1000 (at most %.2f)", pairs[k], e1000, e_bound);
        /* issue 20: no target printed in where the smoke stands (P at steps
         * 5, 10, 20: the suite's bound is 0.10 from 128² up; at 64² the
         * 1.5-cell high pass sees the flow's own edges move, up to 0.17 on
         * heart-cross, so 0.2 here), no smoke ahead of what the flow could
         * carry (front, domain units: within a cell at 64²) */
        for (int q = 24; q <= 26; q++)
            CHECK(v[q] <= 0.2, "%s: print-through %.3f at step %d", pairs[k], v[q], q == 24 ? 5 : q == 25 ? 10 : 20);
        CHECK(v[27] <= 1.0 / 64, "%s: smoke %.3f beyond the flow's reach", pairs[k], v[27]);
        CHECK(blend >= 0.15, "%s: blend distance %.3f at half-way (a cross-fade reads 0)", pairs[k], blend);
        CHECK(drift <= 1e-4, "%s: mass drift %.2e", pairs[k], drift);
        CHECK(s0 > 0 && st > 0 && smax <= 2.0 * sref, "%s: stripes %.2fx the greater of the start's and the "
              "target's", pairs[k], smax / sref);
    }
    /* the compression reaches 3% by step 3000, the bound of a single pair
     * (issue 20, point 5), having halved its error later than step 300: the
     * flow drew it in first (the eighteenth round's 128²: half way at step
     * 674, before it at 246) */
    rc = run(testlib_fmt("--cpu --grid 64 --steps 3000 --pairs square-blob --csv '%s/c.csv'", dir));
    CHECK(rc == 0, "square-blob to step 3000 exits 0, got %d: %s", rc, R.err);
    csv = slurp("c.csv");
    double v[31];
    if (pair_numbers(csv, "square-blob", v, 16)) {
        double e3000 = v[8], half = v[13];
        printf("  info: square-blob 64^2: error %.4f at step 3000, half way at step %.0f\n", e3000, half);
        CHECK(e3000 <= 0.03, "square-blob: error %.3f at step 3000 (at most 0.03)", e3000);
        CHECK(half > 300, "square-blob halved its error at step %.0f, before the flow could draw it in", half);
    }
    /* a faint haze over most of the box into a heart at the start's mass
     * (about 7 times denser) gathers at a dense compression's rate
     * (method_gather_gain_for_trip): its fingers draw it half way before
     * the drift joins at 9 s (step 900); with the gathering at the faint
     * smoke's own rate it waited for the drift (half way at step 1080 at
     * 64², Uc 0.67, 0.32 with the gain) */
    rc = run(testlib_fmt("--cpu --grid 64 --steps 1500 --pair "
                         "'haze-heart|rect:0.08,0.08,0.92,0.92:v=0.15|heart:0.5,0.52,0.2' --csv '%s/h.csv'", dir));
    CHECK(rc == 0, "haze-heart to step 1500 exits 0, got %d: %s", rc, R.err);
    csv = slurp("h.csv");
    if (pair_numbers(csv, "haze-heart", v, 31)) {
        double s3 = v[11], half = v[13], uc = v[23];
        printf("  info: haze-heart 64^2: half way at step %.0f, 3%% at %.0f, Uc %.3f\n", half, s3, uc);
        CHECK(half > 300 && half < 900, "haze-heart half way at step %.0f (the flow's, before the drift's 900)", half);
        CHECK(uc <= 0.45, "haze-heart: Uc %.3f (the drift moved it)", uc);
        CHECK(s3 > 0 && s3 <= 1500, "haze-heart within 3%% by step %.0f", s3);
    }
}

/* U and Uc on a paced single pair (--arrive 6 > METHOD_PACE_TIME): the
 * pace slows the transport (slow motion, method_pace), so the flow that
 * moved the smoke is r·u, not u. Read as u, the flow "carried" about three
 * times the change and the rest read as residual: U 1.65-1.85 and Uc
 * 1.77-1.82 on blob-star and word-ring at 64², where the flow did the work
 * (measured with the scaled flow: U 0.24 and 0.48, Uc 0.03 and 0.07). */
static void test_paced_flow_share(void)
{
    int rc = run(testlib_fmt("--cpu --grid 64 --steps 500 --pairs blob-star,word-ring --param arrive=6 --jobs 2 "
                             "--csv '%s/pace.csv'", dir));
    CHECK(rc == 0, "a paced suite run exits 0, got %d: %s", rc, R.err);
    const char *csv = slurp("pace.csv");
    static const char *pairs[] = {"blob-star", "word-ring"};
    for (int k = 0; k < 2; k++) {
        double v[31];
        if (!pair_numbers(csv, pairs[k], v, 31)) continue;
        double u = v[22], uc = v[23];
        printf("  info: %s 64^2, --arrive 6: U %.3f, Uc %.3f\n", pairs[k], u, uc);
        CHECK(u >= 0.0 && u <= 0.8, "%s paced: U %.3f (the flow as the transport moved it)", pairs[k], u);
        CHECK(uc >= 0.0 && uc <= 0.3, "%s paced: Uc %.3f", pairs[k], uc);
    }
}

/* Smoke off a one-part target is pulled to it (method.h, METHOD_OFF_LO),
 * as the flow: eight dots around a heart, a bar below a ring, a disc on
 * the diagonal (CPU, 64², 1000 steps, at --arrive 3, where these were
 * measured: --arrive auto gives base-ring 5.8 s and diagonal 5.6 s).
 * Measured: dots-heart within 3% by step 630, base-ring by 590 with Uc
 * 0.08, diagonal by 490; without the pull (the build before it) 1110, 870
 * with Uc 0.17, and 860. */
static void test_off_target_pull(void)
{
    CHECK_LONG_RUN("test_off_target_pull");
    int rc = run(testlib_fmt(
        "--cpu --grid 64 --steps 1000 --jobs 2 --param arrive=3 --pairs dots-heart,base-ring,diagonal --csv '%s/off.csv' "
        "--pair 'dots-heart|disc:0.2,0.2,0.05:v=0.4 disc:0.5,0.15,0.05:v=0.4 disc:0.8,0.2,0.05:v=0.4 "
        "disc:0.15,0.5,0.05:v=0.4 disc:0.85,0.5,0.05:v=0.4 disc:0.2,0.8,0.05:v=0.4 disc:0.5,0.85,0.05:v=0.4 "
        "disc:0.8,0.8,0.05:v=0.4|heart:0.5,0.5,0.15' "
        "--pair 'base-ring|rect:0.1,0.82,0.9,0.92|ring:0.5,0.35,0.2,0.06'",
        dir));
    CHECK(rc == 0, "the off-target pairs exit 0, got %d: %s", rc, R.err);
    const char *csv = slurp("off.csv");
    static const struct { const char *pair; double by, uc; } want[] = {
        {"dots-heart", 850, 0.30}, {"base-ring", 750, 0.12}, {"diagonal", 700, 0.10}};
    for (int k = 0; k < 3; k++) {
        double v[31];
        if (!pair_numbers(csv, want[k].pair, v, 31)) continue;
        double s3 = v[11], uc = v[23], front = v[27];
        printf("  info: %s 64^2: 3%% at step %.0f, Uc %.3f, front %.3f\n", want[k].pair, s3, uc, front);
        CHECK(s3 > 0 && s3 <= want[k].by, "%s within 3%% by step %.0f (at most %.0f: the flow carries it)",
              want[k].pair, s3, want[k].by);
        CHECK(uc >= 0.0 && uc <= want[k].uc, "%s: Uc %.3f (at most %.2f)", want[k].pair, uc, want[k].uc);
        CHECK(front == 0.0, "%s: smoke ahead of the flow by %.3f", want[k].pair, front);
    }
}

/* The CSV's u3 and uc3: U and Uc over every step until the error is
 * within 3% (all steps if never), after seconds. Run short of halving they
 * are U and Uc to the bit (the same steps); blob-star at 64² halves at
 * step 71 and is within 3% by 258, so the longer window reads otherwise
 * (measured U 0.28 against 0.18 at 128²: the condensing after the halving
 * counts too). */
static void test_flow_share_to_3(void)
{
    CHECK_LONG_RUN("test_flow_share_to_3");
    int rc = run(testlib_fmt("--cpu --grid 64 --steps 20 --pairs diagonal --csv '%s/u3a.csv'", dir));
    CHECK(rc == 0, "a short run exits 0, got %d: %s", rc, R.err);
    const char *csv = slurp("u3a.csv");
    CHECK(csv && strstr(csv, ",seconds,u3,uc3,arrive\n"), "the header ends seconds,u3,uc3,arrive");
    double v[34];
    if (pair_numbers(csv, "diagonal", v, 34)) {
        CHECK(v[31] == v[22] && v[32] == v[23], "20 steps, no halving: u3 %g = u %g, uc3 %g = uc %g", v[31], v[22],
              v[32], v[23]);
        /* the arrival the morph planned: diagonal's trip of 0.5 is longer
         * than --arrive auto's floor; a given arrival is kept */
        CHECK(v[33] > METHOD_PACE_TIME && v[33] <= METHOD_ARRIVE_AUTO_MAX, "diagonal's automatic arrival: %g s",
              v[33]);
    }
    rc = run(testlib_fmt("--cpu --grid 64 --steps 2 --pairs diagonal --param arrive=4 --csv '%s/u3c.csv'", dir));
    csv = rc == 0 ? slurp("u3c.csv") : NULL;
    CHECK(csv && pair_numbers(csv, "diagonal", v, 34) && v[33] == 4.0, "--param arrive=4: %g (exit %d)",
          csv ? v[33] : -1.0, rc);
    rc = run(testlib_fmt("--cpu --grid 64 --steps 400 --pairs blob-star --csv '%s/u3b.csv'", dir));
    CHECK(rc == 0, "blob-star exits 0, got %d: %s", rc, R.err);
    csv = slurp("u3b.csv");
    if (pair_numbers(csv, "blob-star", v, 33)) {
        printf("  info: blob-star 64^2: half at %.0f, 3%% at %.0f, U %.3f -> %.3f, Uc %.3f -> %.3f to 3%%\n", v[13],
               v[11], v[22], v[31], v[23], v[32]);
        CHECK(v[13] > 0 && v[11] > v[13], "blob-star halves (%.0f) before it is within 3%% (%.0f)", v[13], v[11]);
        CHECK(v[31] > 0.0 && v[31] != v[22] && v[32] >= 0.0 && v[32] != v[23],
              "the window to 3%% is longer: u3 %g (u %g), uc3 %g (uc %g)", v[31], v[22], v[32], v[23]);
    }
}

int main(void)
{
    snprintf(tool, sizeof tool, "%s/tools/fidelity", testlib_build_dir());
    testlib_tmpdir(dir, sizeof dir, "test_fidelity");
    RUN(test_error);
    RUN(test_settle);
    RUN(test_blend_exact);
    RUN(test_blend_known);
    RUN(test_blend_random);
    RUN(test_stripes);
    RUN(test_resampled);
    RUN(test_print_through);
    RUN(test_flow_share);
    RUN(test_front);
    RUN(test_tool);
    RUN(test_strip_steps_curve);
    RUN(test_tool_keys);
    RUN(test_paced_flow_share);
    RUN(test_off_target_pull);
    RUN(test_flow_share_to_3);
    RUN(test_suite_bounds);
    testlib_rm_rf(dir);
    testlib_result_free(&R);
    return check_done();
}
