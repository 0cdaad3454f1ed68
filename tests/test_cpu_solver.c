/* test_cpu_solver: tier-1 (no GL) properties of the CPU reference solver.
 *
 * Every check compares a measured quantity with a threshold and prints the
 * measured value when it fails; lines starting with "  info:" report the
 * measured numbers of the main properties even when they pass. */
#include "check.h"
#include "fidelity.h"
#include "cpu_solver.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */

static uint32_t rng_state = 2463534242u;

static void rng_seed(uint32_t s) { rng_state = s ? s : 2463534242u; }

static uint32_t xorshift32(void)
{
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

/* uniform in [0, 1) */
static float frand(void) { return (float)(xorshift32() >> 8) * (1.0f / 16777216.0f); }
/* uniform in [-1, 1) */
static float srand1(void) { return 2.0f * frand() - 1.0f; }

static float *falloc(size_t n) { return testlib_floats(n); }

#define AT(a, w, i, j) ((a)[(size_t)(j) * (size_t)(w) + (size_t)(i)])

/* Smooth disc / box in domain units (the shorter side is 1), edges
 * 0.5 (1 - tanh(d / width)). */
static void draw_disc(int w, int h, float cx, float cy, float r, float width, float *out)
{
    const TestlibShape s = {.domain = true, .width = width, .tanh_edge = true};
    testlib_disc(out, w, h, &s, cx, cy, r, 1.0);
}

static void draw_box(int w, int h, float cx, float cy, float hx, float hy, float width,
                     float *out)
{
    const TestlibShape s = {.domain = true, .width = width, .tanh_edge = true};
    testlib_box(out, w, h, &s, cx, cy, hx, hy, 1.0);
}

static double sumf(const float *a, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; k++) s += a[k];
    return s;
}

static float maxf(const float *a, size_t n)
{
    float m = -INFINITY;
    for (size_t k = 0; k < n; k++) m = a[k] > m ? a[k] : m;
    return m;
}

static float minf(const float *a, size_t n)
{
    float m = INFINITY;
    for (size_t k = 0; k < n; k++) m = a[k] < m ? a[k] : m;
    return m;
}

static float maxabsf(const float *a, size_t n)
{
    float m = 0.0f;
    for (size_t k = 0; k < n; k++) m = fabsf(a[k]) > m ? fabsf(a[k]) : m;
    return m;
}

static bool all_finite(const float *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(a[k])) return false;
    return true;
}

static float maxdiff(const float *a, const float *b, size_t n)
{
    float m = 0.0f;
    for (size_t k = 0; k < n; k++) {
        float d = fabsf(a[k] - b[k]);
        if (!(d <= m)) m = d; /* NaN propagates */
    }
    return m;
}

/* Centre of mass in domain units. */
static void centroid(int w, int h, const float *rho, double *cx, double *cy)
{
    double hc = 1.0 / (double)(w < h ? w : h), m = 0.0, sx = 0.0, sy = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double r = AT(rho, w, i, j);
            m += r;
            sx += r * ((double)i + 0.5) * hc;
            sy += r * ((double)j + 0.5) * hc;
        }
    *cx = m > 0.0 ? sx / m : 0.0;
    *cy = m > 0.0 ? sy / m : 0.0;
}

/* max |∇·u| through the public divergence pass */
static float max_div(int w, int h, const float *u, const float *v, float *scratch)
{
    ref_pass_divergence(w, h, u, v, scratch);
    return maxabsf(scratch, (size_t)w * h);
}

/* Random MAC velocity in [-amp, amp], wall faces zero. */
static void random_velocity(int w, int h, float amp, float *u, float *v)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = i > 0 ? amp * srand1() : 0.0f;
            AT(v, w, i, j) = j > 0 ? amp * srand1() : 0.0f;
        }
}

static void swap(float **a, float **b)
{
    float *t = *a;
    *a = *b;
    *b = t;
}

/* The centroid (*cx, *cy) of a w x w field v on the y faces (x at i + 0.5,
 * y at j). */
static void v_centroid(int w, const float *v, double *cx, double *cy)
{
    double m = 0.0, x = 0.0, y = 0.0;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            m += AT(v, w, i, j);
            x += AT(v, w, i, j) * ((double)i + 0.5);
            y += AT(v, w, i, j) * (double)j;
        }
    *cx = x / m;
    *cy = y / m;
}

/* Projection: divergence, iters Jacobi iterations from p = 0, gradient subtraction. */
static void project(int w, int h, int iters, const float *u, const float *v, float *u_out,
                    float *v_out)
{
    size_t n = (size_t)w * h;
    float *div = falloc(n), *p = falloc(n), *q = falloc(n);
    ref_pass_divergence(w, h, u, v, div);
    for (int k = 0; k < iters; k++) {
        ref_pass_jacobi(w, h, p, div, q);
        swap(&p, &q);
    }
    ref_pass_subtract_grad(w, h, p, u, v, u_out, v_out);
    free(div);
    free(p);
    free(q);
}

static bool walls_zero(int w, int h, const float *u, const float *v)
{
    for (int j = 0; j < h; j++)
        if (AT(u, w, 0, j) != 0.0f) return false;
    for (int i = 0; i < w; i++)
        if (AT(v, w, i, 0) != 0.0f) return false;
    return true;
}

/* ---------------------------------------------------------------------- */
/* 1. Blur                                                                */

static void test_blur_spec(void)
{
    static const int grids[][2] = {{64, 64}, {128, 128}, {256, 256}, {1024, 1024},
                                   {100, 60}, {512, 256}, {33, 77}, {2048, 1024}};
    static const float sigmas[] = {0.002f, 0.01f, 0.02f, 0.03f, 0.04f, 0.08f, 0.2f, 0.5f, 1.0f};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (size_t q = 0; q < sizeof sigmas / sizeof sigmas[0]; q++) {
            int w = grids[g][0], h = grids[g][1];
            float sg = sigmas[q];
            BlurSpec b;
            method_blur_spec(w, h, sg, &b);
            int f = b.factor;
            CHECK(f >= 1 && (f & (f - 1)) == 0, "blur %dx%d sigma %g: factor %d not a power of 2",
                  w, h, sg, f);
            CHECK(b.cw == (w + f - 1) / f && b.ch == (h + f - 1) / f,
                  "blur %dx%d sigma %g: coarse %dx%d for factor %d", w, h, sg, b.cw, b.ch, f);
            float s = sg * (float)(w < h ? w : h) / (float)f; /* coarse sigma, cells */
            if (f > 1)
                CHECK(s >= 2.0f - 1e-4f && s < 4.0f, "blur %dx%d sigma %g: coarse sigma %g cells "
                      "(factor %d) not in [2, 4)", w, h, sg, s, f);
            else
                CHECK(s < 4.0f, "blur %dx%d sigma %g: factor 1 but sigma %g cells", w, h, sg, s);
            CHECK(b.radius >= 1 && b.radius < 64 && (float)b.radius >= 3.0f * s - 1e-3f,
                  "blur %dx%d sigma %g: radius %d for coarse sigma %g", w, h, sg, b.radius, s);
            double sum = b.weights[0];
            bool decreasing = true;
            for (int k = 1; k <= b.radius; k++) {
                sum += 2.0 * b.weights[k];
                if (!(b.weights[k] <= b.weights[k - 1] && b.weights[k] >= 0.0f)) decreasing = false;
            }
            bool tail_zero = true;
            for (int k = b.radius + 1; k < 64; k++)
                if (b.weights[k] != 0.0f) tail_zero = false;
            CHECK(fabs(sum - 1.0) <= 1e-6, "blur %dx%d sigma %g: w0 + 2 sum wk = %.9f", w, h, sg,
                  sum);
            CHECK(decreasing && tail_zero, "blur %dx%d sigma %g: weights not a non-increasing "
                  "non-negative profile with zero tail", w, h, sg);
            /* the discrete kernel's variance and, above factor 1, the
             * B-spline's that samples it (METHOD_BLUR_BSPLINE_VAR) make the
             * coarse sigma's */
            double var = 0.0;
            for (int k = 1; k <= b.radius; k++) var += 2.0 * b.weights[k] * k * k;
            if (f > 1) var += METHOD_BLUR_BSPLINE_VAR;
            if (s >= 1.0f)
                CHECK(fabs(sqrt(var) / s - 1.0) < 0.03, "blur %dx%d sigma %g: kernel std %g "
                      "vs coarse sigma %g", w, h, sg, sqrt(var), s);
        }
}

static int clampi_t(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* The blur as a plain loop: every tap clamped into the line, summed in the
 * order 0, ±1, ±2 … (the shader's). */
static void blur_1d_plain(const BlurSpec *b, int axis, const float *in, float *out)
{
    for (int J = 0; J < b->ch; J++)
        for (int I = 0; I < b->cw; I++) {
            float acc = b->weights[0] * in[J * b->cw + I];
            for (int k = 1; k <= b->radius; k++) {
                int i0 = axis == 0 ? clampi_t(I - k, 0, b->cw - 1) : I, i1 = axis == 0 ? clampi_t(I + k, 0, b->cw - 1) : I;
                int j0 = axis == 1 ? clampi_t(J - k, 0, b->ch - 1) : J, j1 = axis == 1 ? clampi_t(J + k, 0, b->ch - 1) : J;
                acc += b->weights[k] * (in[j0 * b->cw + i0] + in[j1 * b->cw + i1]);
            }
            out[J * b->cw + I] = acc;
        }
}

/* ref_pass_blur_1d pads each line and reads it straight (and reads lines
 * longer than its pad tap by tap): the same sums as the plain clamped loop,
 * bit for bit, along both axes, with radii shorter and longer than the
 * line, and on a line longer than the pad. */
static void test_blur_1d_plain(void)
{
    static const int sizes[][3] = {{1, 1, 1}, {5, 3, 2}, {17, 9, 4}, {20, 33, 47}, {64, 64, 63},
                                   {REF_BLUR_LINE_MAX + 5, 1, 9}, {1, REF_BLUR_LINE_MAX + 5, 9}};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        BlurSpec b = {.factor = 1, .cw = sizes[t][0], .ch = sizes[t][1], .radius = sizes[t][2]};
        for (int k = 0; k <= b.radius; k++) b.weights[k] = 1.0f / (float)(k + 2) + 1e-3f * (float)k;
        size_t n = (size_t)b.cw * b.ch;
        float *in = malloc(n * sizeof *in), *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
        if (!in || !got || !want) {
            CHECK(0, "out of memory");
            free(in), free(got), free(want);
            return;
        }
        unsigned x = 12345u;
        for (size_t k = 0; k < n; k++) x = x * 1664525u + 1013904223u, in[k] = (float)(x >> 8) / 16777216.0f;
        for (int axis = 0; axis < 2; axis++) {
            ref_pass_blur_1d(&b, axis, in, got);
            blur_1d_plain(&b, axis, in, want);
            size_t bad = 0;
            for (size_t k = 0; k < n; k++) bad += memcmp(&got[k], &want[k], sizeof got[k]) != 0;
            CHECK(bad == 0, "%dx%d radius %d axis %d: %zu of %zu samples differ from the plain clamped loop", b.cw,
                  b.ch, b.radius, axis, bad, n);
        }
        free(in), free(got), free(want);
    }
}

/* The coarse fields are read through a cubic B-spline above factor 1, so
 * their gradient has no jumps at the coarse samples (method.h,
 * METHOD_BLUR_BSPLINE_VAR): a coarse field quadratic in x, read at every
 * fine cell centre, has the same second difference everywhere inside
 * (2/f², the B-spline reproduces quadratics up to a constant); read
 * bilinearly it would be 0 between the samples and 2/f at each one. */
static void test_sample_coarse_smooth(void)
{
    for (int f = 2; f <= 16; f *= 2) {
        BlurSpec b = {.factor = f, .cw = 24, .ch = 3, .radius = 1};
        float c[24 * 3];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 24; k++) c[j * 24 + k] = (float)(k * k) * 0.01f;
        int w = 24 * f;
        float want = 0.02f / (float)(f * f), lo = 1e30f, hi = -1e30f;
        for (int i = 3 * f; i < w - 3 * f; i++) {
            float d2 = ref_sample_coarse(&b, c, (float)i + 1.5f, 1.5f * (float)f) -
                       2.0f * ref_sample_coarse(&b, c, (float)i + 0.5f, 1.5f * (float)f) +
                       ref_sample_coarse(&b, c, (float)i - 0.5f, 1.5f * (float)f);
            lo = fminf(lo, d2);
            hi = fmaxf(hi, d2);
        }
        CHECK(fabsf(lo - want) < 0.02f * want && fabsf(hi - want) < 0.02f * want,
              "factor %d: a quadratic's second difference %g..%g (want %g everywhere: no kinks at the samples)",
              f, (double)lo, (double)hi, (double)want);
        /* a constant stays itself, edges included */
        for (int k = 0; k < 24 * 3; k++) c[k] = 0.7f;
        float worst = 0.0f;
        for (int i = 0; i < w; i++) worst = fmaxf(worst, fabsf(ref_sample_coarse(&b, c, (float)i + 0.5f, 0.5f) - 0.7f));
        CHECK(worst < 1e-6f, "factor %d: a constant read back within %g", f, (double)worst);
    }
}

static void test_blur_constant_and_mean(void)
{
    static const int grids[][2] = {{64, 64}, {128, 128}, {100, 60}, {33, 77}};
    static const float sigmas[] = {0.01f, 0.04f, 0.1f};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (size_t q = 0; q < sizeof sigmas / sizeof sigmas[0]; q++) {
            int w = grids[g][0], h = grids[g][1];
            size_t n = (size_t)w * h;
            BlurSpec b;
            method_blur_spec(w, h, sigmas[q], &b);
            float *in = falloc(n), *out = falloc(n);
            for (size_t k = 0; k < n; k++) in[k] = 0.7f;
            ref_pass_blur(w, h, &b, in, out);
            float d = maxdiff(in, out, n);
            CHECK(d <= 1e-5f, "blur of constant 0.7 at %dx%d sigma %g: max deviation %g", w, h,
                  sigmas[q], d);
            free(in);
            free(out);
        }

    /* mean of a centred blob */
    static const int ns[] = {64, 128, 256};
    for (size_t g = 0; g < 3; g++) {
        int w = ns[g];
        size_t n = (size_t)w * w;
        float *in = falloc(n), *out = falloc(n);
        draw_disc(w, w, 0.5f, 0.5f, 0.15f, 0.01f, in);
        for (float sg = 0.02f; sg < 0.1f; sg *= 2.0f) {
            BlurSpec b;
            method_blur_spec(w, w, sg, &b);
            ref_pass_blur(w, w, &b, in, out);
            double r = sumf(out, n) / sumf(in, n);
            CHECK(fabs(r - 1.0) <= 0.02, "blur mean of a centred disc at %d^2 sigma %g: "
                  "ratio %.5f", w, sg, r);
            if (w == 128 && sg == 0.04f) printf("  info: blur mean ratio (128^2, sigma 0.04): %.6f\n", r);
        }
        free(in);
        free(out);
    }
}

static void test_blur_delta(void)
{
    int w = 128;
    size_t n = (size_t)w * w;
    float *in = falloc(n), *out = falloc(n);
    /* a 2x2 "delta" on the grid centre (a block boundary for every factor) */
    AT(in, w, 63, 63) = AT(in, w, 64, 63) = AT(in, w, 63, 64) = AT(in, w, 64, 64) = 1.0f;
    static const float sigmas[] = {0.01f, 0.02f, 0.04f, 0.08f};
    double prev = 0.0;
    for (size_t q = 0; q < 4; q++) {
        BlurSpec b;
        method_blur_spec(w, w, sigmas[q], &b);
        ref_pass_blur(w, w, &b, in, out);
        float peak = maxabsf(out, n), asym = 0.0f;
        for (int j = 0; j < w; j++)
            for (int i = 0; i < w; i++) {
                float a = AT(out, w, i, j);
                float d = fmaxf(fmaxf(fabsf(a - AT(out, w, w - 1 - i, j)),
                                      fabsf(a - AT(out, w, i, w - 1 - j))),
                                fabsf(a - AT(out, w, j, i)));
                asym = fmaxf(asym, d);
            }
        CHECK(asym <= 1e-6f * peak, "blur of a delta, sigma %g: asymmetry %g (peak %g)",
              sigmas[q], asym, peak);
        /* spread: standard deviation along x around the centre (64 cells) */
        double m = 0.0, sxx = 0.0;
        for (int j = 0; j < w; j++)
            for (int i = 0; i < w; i++) {
                double x = (double)i + 0.5 - 64.0;
                m += AT(out, w, i, j);
                sxx += AT(out, w, i, j) * x * x;
            }
        double sd = sqrt(sxx / m), expect = sigmas[q] * w;
        CHECK(sd > prev, "blur of a delta: spread %g at sigma %g not larger than %g", sd,
              sigmas[q], prev);
        CHECK(sd / expect > 0.85 && sd / expect < 1.25, "blur of a delta, sigma %g: spread %g "
              "cells, expected about %g", sigmas[q], sd, expect);
        printf("  info: delta spread at sigma %.2f (128^2, factor %d): %.3f cells (sigma %.2f)\n",
               sigmas[q], b.factor, sd, expect);
        prev = sd;
    }
    free(in);
    free(out);
}

static void test_blur_resolution(void)
{
    /* the same disc at 64^2 and 128^2, compared at the 64^2 cell centres */
    static const float sigmas[] = {0.02f, 0.04f, 0.08f};
    for (size_t q = 0; q < 3; q++) {
        int a = 64, b2 = 128;
        float *ia = falloc((size_t)a * a), *oa = falloc((size_t)a * a);
        float *ib = falloc((size_t)b2 * b2), *ob = falloc((size_t)b2 * b2);
        draw_disc(a, a, 0.45f, 0.55f, 0.2f, 0.02f, ia);
        draw_disc(b2, b2, 0.45f, 0.55f, 0.2f, 0.02f, ib);
        BlurSpec sa, sb;
        method_blur_spec(a, a, sigmas[q], &sa);
        method_blur_spec(b2, b2, sigmas[q], &sb);
        ref_pass_blur(a, a, &sa, ia, oa);
        ref_pass_blur(b2, b2, &sb, ib, ob);
        float peak = maxabsf(oa, (size_t)a * a), d = 0.0f;
        for (int j = 0; j < a; j++)
            for (int i = 0; i < a; i++) {
                /* the 128^2 value at the 64^2 cell centre: mean of its 2x2 cells */
                float vb = 0.25f * (AT(ob, b2, 2 * i, 2 * j) + AT(ob, b2, 2 * i + 1, 2 * j) +
                                    AT(ob, b2, 2 * i, 2 * j + 1) + AT(ob, b2, 2 * i + 1, 2 * j + 1));
                d = fmaxf(d, fabsf(AT(oa, a, i, j) - vb));
            }
        CHECK(d <= 0.03f * peak, "blur 64^2 vs 128^2, sigma %g: max difference %g of peak %g "
              "(%.2f%%)", sigmas[q], d, peak, 100.0 * d / peak);
        printf("  info: blur 64^2 vs 128^2 at sigma %.2f (factors %d, %d): max diff %.3f%% of peak\n",
               sigmas[q], sa.factor, sb.factor, 100.0 * d / peak);
        free(ia);
        free(oa);
        free(ib);
        free(ob);
    }
}

/* ---------------------------------------------------------------------- */
/* 2. Force and damping                                                   */

/* The smoothed corner curl of (u, v) the force pass's confinement reads
 * (ref_swirl_curl), in a buffer of its own: valid until the next call. */
static const float *curl_of(int w, int h, const float *u, const float *v)
{
    static float *curl, *tmp;
    static size_t cap;
    size_t n = (size_t)(w + 1) * (h + 1);
    if (n > cap) {
        free(curl);
        free(tmp);
        curl = malloc(n * sizeof(float));
        tmp = malloc(n * sizeof(float));
        cap = n;
    }
    ref_swirl_curl(w, h, u, v, curl, tmp);
    return curl;
}

typedef struct {
    int w, h;
    BlurSpec spec;
    float *tgt, *tgt_blur, *rho, *rho_c, *tmp_c;
} ForceSetup;

static void force_setup(ForceSetup *f, int w, const SolverParams *p)
{
    f->w = f->h = w;
    size_t n = (size_t)w * w;
    method_blur_spec(w, w, p->sigma, &f->spec);
    size_t nc = (size_t)f->spec.cw * f->spec.ch;
    f->tgt = falloc(n);
    f->tgt_blur = falloc(n);
    f->rho = falloc(n);
    f->rho_c = falloc(nc);
    f->tmp_c = falloc(nc);
}

/* The force tests' target: a disc of radius 0.15 in the middle, and its blur. */
static void force_disc_target(ForceSetup *f)
{
    draw_disc(f->w, f->h, 0.5f, 0.5f, 0.15f, 0.02f, f->tgt);
    ref_pass_blur(f->w, f->h, &f->spec, f->tgt, f->tgt_blur);
}

static void force_blur_rho(ForceSetup *f)
{
    ref_pass_downsample(f->w, f->h, &f->spec, f->rho, f->rho_c);
    ref_pass_blur_1d(&f->spec, 0, f->rho_c, f->tmp_c);
    ref_pass_blur_1d(&f->spec, 1, f->tmp_c, f->rho_c);
}

static void force_free(ForceSetup *f)
{
    free(f->tgt);
    free(f->tgt_blur);
    free(f->rho);
    free(f->rho_c);
    free(f->tmp_c);
}

static void test_force_direction(void)
{
    SolverParams p;
    method_params_default(&p);
    int w = 64;
    size_t n = (size_t)w * w;
    ForceSetup f;
    force_setup(&f, w, &p);
    force_disc_target(&f);
    for (size_t k = 0; k < n; k++) f.rho[k] = 1.0f;
    force_blur_rho(&f);
    float *u = falloc(n), *v = falloc(n), *uo = falloc(n), *vo = falloc(n);
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, uo, vo);

    /* faces at x = i (u) and y = j (v) in cell units; the centre is at 32 */
    int wrong = 0, toward = 0;
    for (int j = 0; j < w; j++)
        for (int i = 1; i < w; i++) {
            float du = AT(uo, w, i, j) * (32.0f - (float)i);
            float dv = AT(vo, w, j, i) * (32.0f - (float)i); /* v face (j, i) at y = i */
            if (du < -1e-7f || dv < -1e-7f) wrong++;
            if (du > 0.0f) toward++;
            if (dv > 0.0f) toward++;
        }
    CHECK(wrong == 0, "force: %d faces point away from the target centre", wrong);
    CHECK(toward > (int)n, "force: only %d faces point toward the target centre", toward);
    /* the four sides of the blob (edge at 32 +- 9.6 cells) */
    float left = AT(uo, w, 22, 32), right = AT(uo, w, 42, 32);
    float top = AT(vo, w, 32, 22), bottom = AT(vo, w, 32, 42);
    CHECK(left > 1e-4f && right < -1e-4f && top > 1e-4f && bottom < -1e-4f,
          "force on the four sides: left u %g (>0), right u %g (<0), top v %g (>0), bottom v %g (<0)",
          left, right, top, bottom);
    /* symmetric blob, uniform density: |force| is mirror symmetric */
    CHECK(fabsf(left + AT(uo, w, 42, 32)) <= 1e-3f * fabsf(left) + 1e-7f &&
          fabsf(top - left) <= 1e-3f * fabsf(left) + 1e-7f,
          "force not symmetric: left %g right %g top %g", left, right, top);
    CHECK(walls_zero(w, w, uo, vo), "force: wall faces not zero");
    printf("  info: force on the blob sides: u(22,32) = %.5f, u(42,32) = %.5f, v(32,22) = %.5f\n",
           left, right, top);

    /* no smoke, no force: density zero everywhere */
    memset(f.rho, 0, n * sizeof(float));
    force_blur_rho(&f);
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, uo, vo);
    CHECK(maxabsf(uo, n) == 0.0f && maxabsf(vo, n) == 0.0f,
          "force with no smoke: max |u| %g, |v| %g", maxabsf(uo, n), maxabsf(vo, n));

    /* local: ρ̃ (the pass's input on the coarse grid) is a blob's blur on the
     * left half and exactly 0 on the right half; where the sampled ρ̃ is 0
     * the face stays 0 */
    draw_disc(w, w, 0.15f, 0.5f, 0.08f, 0.005f, f.rho);
    force_blur_rho(&f);
    for (int J = 0; J < f.spec.ch; J++)
        for (int I = f.spec.cw / 2; I < f.spec.cw; I++) AT(f.rho_c, f.spec.cw, I, J) = 0.0f;
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, uo, vo);
    int zero_faces = 0, bad = 0;
    for (int j = 0; j < w; j++)
        for (int i = 1; i < w; i++) {
            if (ref_sample_coarse(&f.spec, f.rho_c, (float)i, (float)j + 0.5f) == 0.0f) {
                zero_faces++;
                if (AT(uo, w, i, j) != 0.0f) bad++;
            }
            if (ref_sample_coarse(&f.spec, f.rho_c, (float)j + 0.5f, (float)i) == 0.0f) {
                zero_faces++;
                if (AT(vo, w, j, i) != 0.0f) bad++;
            }
        }
    CHECK(zero_faces > (int)n / 2 && bad == 0,
          "force where rho~ = 0: %d of %d smoke-free faces moved", bad, zero_faces);
    CHECK(maxabsf(uo, n) > 0.0f, "force: the smoke on the left gets no force at all");
    force_free(&f);
    free(u);
    free(v);
    free(uo);
    free(vo);
}

static void test_force_walls_clamp_damping(void)
{
    SolverParams p;
    method_params_default(&p);
    p.swirl = 0.0f; /* the force and the damping alone (vorticity confinement: test_swirl) */
    int w = 64;
    size_t n = (size_t)w * w;
    ForceSetup f;
    force_setup(&f, w, &p);
    draw_box(w, w, 0.6f, 0.4f, 0.1f, 0.15f, 0.02f, f.tgt);
    ref_pass_blur(w, w, &f.spec, f.tgt, f.tgt_blur);
    rng_seed(7);
    for (size_t k = 0; k < n; k++) f.rho[k] = frand();
    force_blur_rho(&f);
    float *u = falloc(n), *v = falloc(n), *uo = falloc(n), *vo = falloc(n);

    /* garbage on the wall faces of the input, speeds 10x umax, strong force */
    for (size_t k = 0; k < n; k++) {
        u[k] = 10.0f * p.umax * srand1();
        v[k] = 10.0f * p.umax * srand1();
    }
    SolverParams ps = p;
    ps.vf = 100.0f;
    ref_pass_force(w, w, &ps, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, uo, vo);
    CHECK(walls_zero(w, w, uo, vo), "force: wall faces not zero with garbage input");
    float mu = fmaxf(maxabsf(uo, n), maxabsf(vo, n));
    CHECK(mu <= p.umax && all_finite(uo, n) && all_finite(vo, n),
          "force: max face speed %g exceeds umax %g", mu, p.umax);

    /* damping alone: exactly 1/(1 + dt vd) per pass */
    SolverParams pd = p;
    pd.vf = 0.0f;
    pd.vd = 7.0f;
    pd.dt = 0.02f;
    random_velocity(w, w, 0.5f * p.umax, u, v);
    float *u0 = falloc(n), *v0 = falloc(n);
    memcpy(u0, u, n * sizeof(float));
    memcpy(v0, v, n * sizeof(float));
    double damp = 1.0 / (1.0 + (double)pd.dt * pd.vd), worst1 = 0.0, worstn = 0.0;
    int passes = 10;
    for (int it = 1; it <= passes; it++) {
        ref_pass_force(w, w, &pd, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, uo, vo);
        double expect = pow(damp, it);
        for (size_t k = 0; k < n; k++) {
            if (u0[k] == 0.0f && v0[k] == 0.0f) continue;
            double eu = u0[k] != 0.0f ? fabs(uo[k] / (u0[k] * expect) - 1.0) : 0.0;
            double ev = v0[k] != 0.0f ? fabs(vo[k] / (v0[k] * expect) - 1.0) : 0.0;
            double e = fmax(eu, ev);
            if (it == 1) worst1 = fmax(worst1, e);
            worstn = fmax(worstn, e);
        }
        memcpy(u, uo, n * sizeof(float));
        memcpy(v, vo, n * sizeof(float));
    }
    CHECK(worst1 <= 1e-6, "damping: one pass off 1/(1+dt vd) = %.6f by relative %g", damp, worst1);
    CHECK(worstn <= 1e-5, "damping: %d passes off (1+dt vd)^-n by relative %g", passes, worstn);
    printf("  info: damping factor %.6f per pass, worst relative error %.2e (1 pass), %.2e (%d passes)\n",
           damp, worst1, worstn, passes);
    force_free(&f);
    free(u);
    free(v);
    free(uo);
    free(vo);
    free(u0);
    free(v0);
}

/* ---------------------------------------------------------------------- */
/* 3. Projection                                                          */

/* Plain Jacobi with Neumann walls has the eigenvalue -1 exactly: on the
 * bipartite grid the checkerboard (-1)^(i+j) maps to minus itself. So the
 * checkerboard part of a white-noise divergence is never removed, and the
 * reduction saturates (about 220x at 64^2); the smooth part is gone after a
 * few thousand iterations. 6000 gives ~195x. */
#define PROJ_ITERS 6000

/* share of the squared field in the checkerboard mode */
static double checkerboard_share(int w, int h, const float *a)
{
    double c = 0.0, l2 = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double x = AT(a, w, i, j);
            c += ((i + j) & 1) ? -x : x;
            l2 += x * x;
        }
    return l2 > 0.0 ? c * c / (l2 * (double)w * h) : 0.0;
}

static void test_projection_random(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float *u = falloc(n), *v = falloc(n), *uo = falloc(n), *vo = falloc(n), *s = falloc(n);
    rng_seed(12345);
    random_velocity(w, w, 1.0f, u, v);
    float d0 = max_div(w, w, u, v, s);
    static const int iters[] = {40, 500, 2000, PROJ_ITERS, 20000};
    float fac_used = 0.0f, fac_last = 0.0f;
    printf("  info: projection of a random 64^2 field, max|div| %.1f reduced by", d0);
    for (size_t q = 0; q < sizeof iters / sizeof iters[0]; q++) {
        project(w, w, iters[q], u, v, uo, vo);
        float d1 = max_div(w, w, uo, vo, s);
        printf(" %.0fx (%d it)", d0 / d1, iters[q]);
        if (iters[q] == PROJ_ITERS) fac_used = d0 / d1;
        fac_last = d0 / d1;
        CHECK(walls_zero(w, w, uo, vo), "projection: wall faces not zero");
        CHECK(all_finite(uo, n) && all_finite(vo, n), "projection: non-finite velocity");
    }
    printf("\n  info: what is left after 20000 iterations is %.1f%% checkerboard\n",
           100.0 * checkerboard_share(w, w, s));
    CHECK(fac_used >= 100.0f, "projection with %d Jacobi iterations: max|div| only reduced %gx",
          PROJ_ITERS, fac_used);
    CHECK(fac_last >= fac_used * 0.999f, "projection: more iterations made it worse (%g vs %g)",
          fac_last, fac_used);

    /* a smooth random field (blurred noise): no checkerboard to get stuck on */
    BlurSpec b;
    method_blur_spec(w, w, 0.05f, &b);
    random_velocity(w, w, 1.0f, uo, vo);
    ref_pass_blur(w, w, &b, uo, u);
    ref_pass_blur(w, w, &b, vo, v);
    for (int k = 0; k < w; k++) AT(u, w, 0, k) = AT(v, w, k, 0) = 0.0f;
    d0 = max_div(w, w, u, v, s);
    project(w, w, 1000, u, v, uo, vo);
    float f1 = d0 / max_div(w, w, uo, vo, s);
    CHECK(f1 >= 100.0f, "projection of a smooth random field, 1000 iterations: max|div| only "
          "reduced %gx", f1);
    printf("  info: smooth random field: max|div| reduced %.0fx by 1000 iterations\n", f1);
    free(u);
    free(v);
    free(uo);
    free(vo);
    free(s);
}

static void test_projection_gradient_and_curl(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float hc = 1.0f / (float)w;
    float *u = falloc(n), *v = falloc(n), *uo = falloc(n), *vo = falloc(n), *s = falloc(n);
    float *phi = falloc(n);

    /* pure gradient: u = ∇φ on interior faces (walls 0): removed almost entirely */
    rng_seed(99);
    for (size_t k = 0; k < n; k++) phi[k] = srand1();
    /* without its checkerboard part, which plain Jacobi never removes (see
     * PROJ_ITERS): a white-noise φ keeps 1.4% of max|u| through it */
    double cb = 0.0;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) cb += ((i + j) & 1) ? -AT(phi, w, i, j) : AT(phi, w, i, j);
    cb /= (double)n;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) AT(phi, w, i, j) -= (float)(((i + j) & 1) ? -cb : cb);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = i > 0 ? (AT(phi, w, i, j) - AT(phi, w, i - 1, j)) / hc : 0.0f;
            AT(v, w, i, j) = j > 0 ? (AT(phi, w, i, j) - AT(phi, w, i, j - 1)) / hc : 0.0f;
        }
    float m0 = fmaxf(maxabsf(u, n), maxabsf(v, n));
    project(w, w, PROJ_ITERS, u, v, uo, vo);
    float m1 = fmaxf(maxabsf(uo, n), maxabsf(vo, n));
    CHECK(m1 <= 0.01f * m0, "projection of a pure gradient: max|u| %g -> %g (%.3f%% left)", m0,
          m1, 100.0 * m1 / m0);
    printf("  info: pure gradient after %d Jacobi iterations: %.4f%% of max|u| left\n", PROJ_ITERS,
           100.0 * m1 / m0);

    /* discrete curl of a stream function on the nodes, ψ = 0 on the boundary */
    int wn = w + 1;
    float *psi = falloc((size_t)wn * wn);
    for (int j = 1; j < w; j++)
        for (int i = 1; i < w; i++) AT(psi, wn, i, j) = srand1();
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = (AT(psi, wn, i, j + 1) - AT(psi, wn, i, j)) / hc;
            AT(v, w, i, j) = -(AT(psi, wn, i + 1, j) - AT(psi, wn, i, j)) / hc;
        }
    CHECK(walls_zero(w, w, u, v), "stream function: wall faces not zero (test setup)");
    float um = fmaxf(maxabsf(u, n), maxabsf(v, n));
    float dd = max_div(w, w, u, v, s);
    CHECK(dd <= 1e-5f * um / hc, "curl field: max|div| %g relative to max|u|/h %g", dd, um / hc);
    project(w, w, PROJ_ITERS, u, v, uo, vo);
    float ch = fmaxf(maxdiff(u, uo, n), maxdiff(v, vo, n));
    CHECK(ch <= 1e-4f * um, "projection changed a divergence-free field by %g (max|u| %g, "
          "relative %g)", ch, um, ch / um);
    CHECK(walls_zero(w, w, uo, vo), "projection of a curl field: wall faces not zero");
    printf("  info: divergence-free field: max|div|/(max|u|/h) %.2e, projection change %.2e relative\n",
           dd * hc / um, ch / um);
    free(psi);
    free(u);
    free(v);
    free(uo);
    free(vo);
    free(s);
    free(phi);
}

/* One projection with the real solver on a random field: one ref_step with
 * no force (vf = 0), no gathering and dt = 1e-6 is a projection with the
 * step's own V-cycles and Jacobi iterations (damping and advection then
 * change the field by ~1e-6). The field is white noise in ±umax/2 with zero
 * wall faces, so the force pass neither clamps it to umax nor zeroes walls:
 * max|∇·u| before is that of the field the projection gets. (Measured on a
 * field in ±0.5 with random wall faces, as mg_reduction did, the clamp to
 * umax = 0.18 and the zeroed walls take part of the divergence away before
 * the projection, and the reduction reads about twice too high.)
 * Returns max|∇·u| before / after; *ok is false on non-finite output or
 * non-zero wall faces. */
static double step_projection(int n, int vcycles, int jacobi, uint32_t seed, bool *ok)
{
    SolverParams p;
    method_params_default(&p);
    if (vcycles >= 0) {
        p.vcycles = vcycles;
        p.jacobi = jacobi;
    }
    p.vf = 0.0f;
    p.gather = false;
    p.dt = 1e-6f;
    size_t nn = (size_t)n * n;
    char err[128];
    RefSolver *s = ref_create(n, n, &p, err, sizeof err);
    if (!s) {
        printf("  ref_create %dx%d: %s\n", n, n, err);
        *ok = false;
        return 0.0;
    }
    float *z = falloc(nn), *t = falloc(nn), *div = falloc(nn);
    t[0] = 1.0f;
    ref_set_density(s, z);
    ref_set_target(s, t, false);
    rng_seed(seed);
    float *u = ref_velocity_u_mut(s), *v = ref_velocity_v_mut(s);
    random_velocity(n, n, 0.5f * p.umax, u, v);
    double d0 = max_div(n, n, u, v, div);
    ref_step(s);
    const float *uo = ref_velocity_u(s), *vo = ref_velocity_v(s);
    double d1 = max_div(n, n, uo, vo, div);
    *ok = walls_zero(n, n, uo, vo) && all_finite(uo, nn) && all_finite(vo, nn) && d1 > 0.0;
    ref_free(s);
    free(z);
    free(t);
    free(div);
    return d1 > 0.0 ? d0 / d1 : INFINITY;
}

/* The projection as ref_step runs it with the defaults (3 V-cycles, then 10
 * damped Jacobi iterations) lowers max|∇·u| of a random field at least 100x
 * at every grid size (the issue's bar). The max norm of white noise depends on
 * the few largest cells, so the reduction varies with the field: 143..201x at
 * 64², 152..180x at 128², 138..165x at 256² for the four fields below. For
 * scale, with 2 V-cycles + 10 Jacobi (the earlier defaults) it was 75..142x
 * over 32 fields, with one V-cycle + 10 Jacobi ≈ 50..60x, 10 Jacobi alone
 * ≈ 25x, 40 Jacobi alone ≈ 85..105x. */
static void test_projection_defaults(void)
{
    SolverParams d;
    method_params_default(&d);
    CHECK(d.vcycles == 3 && d.jacobi == 10,
          "defaults changed to %d V-cycles + %d Jacobi: revisit this test's bounds", d.vcycles,
          d.jacobi);
    static const int sizes[] = {64, 128, 256};
    enum { NSEED = 4 };
    for (size_t q = 0; q < 3; q++) {
        int n = sizes[q];
        double r[NSEED], lg = 0.0, lo = INFINITY;
        bool ok_all = true;
        for (int k = 0; k < NSEED; k++) {
            bool ok = false;
            r[k] = step_projection(n, -1, 0, 5000u + 17u * (uint32_t)k, &ok);
            ok_all = ok_all && ok;
            lg += log(r[k]);
            lo = fmin(lo, r[k]);
        }
        double gm = exp(lg / NSEED);
        printf("  info: defaults (%d V-cycles + %d Jacobi) at %d^2: max|div| reduced %.0fx "
               "(fields: %.0fx %.0fx %.0fx %.0fx)\n", d.vcycles, d.jacobi, n, gm, r[0], r[1],
               r[2], r[3]);
        CHECK(ok_all, "projection at %d^2: non-finite velocity or non-zero wall faces", n);
        CHECK(lo >= 100.0, "projection with the defaults at %d^2: a random field's max|div| only "
              "reduced %.0fx (want >= 100x each)", n, lo);
    }
}

/* ---------------------------------------------------------------------- */
/* 4. Velocity advection                                                  */

static void test_advect_velocity(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float *u = falloc(n), *v = falloc(n), *uo = falloc(n), *vo = falloc(n);

    ref_pass_advect_vel(w, w, 0.05f, u, v, uo, vo);
    CHECK(maxabsf(uo, n) == 0.0f && maxabsf(vo, n) == 0.0f, "advecting zero velocity gives %g",
          fmaxf(maxabsf(uo, n), maxabsf(vo, n)));

    rng_seed(4242);
    random_velocity(w, w, 1.0f, u, v);
    ref_pass_advect_vel(w, w, 0.0f, u, v, uo, vo);
    float d = fmaxf(maxdiff(u, uo, n), maxdiff(v, vo, n));
    CHECK(d == 0.0f, "velocity advection with dt = 0 changed the field by %g", d);

    /* bounded: bilinear interpolation never overshoots; several steps,
     * displacements of a few cells */
    float mu0 = maxabsf(u, n), mv0 = maxabsf(v, n);
    bool ok = true;
    for (int it = 0; it < 20; it++) {
        ref_pass_advect_vel(w, w, 0.03f, u, v, uo, vo);
        float mu = maxabsf(uo, n), mv = maxabsf(vo, n);
        if (!(mu <= mu0 + 1e-6f && mv <= mv0 + 1e-6f) || !all_finite(uo, n) ||
            !all_finite(vo, n)) {
            CHECK(0, "velocity advection step %d: max|u| %g (was %g), max|v| %g (was %g)", it,
                  mu, mu0, mv, mv0);
            ok = false;
            break;
        }
        mu0 = mu;
        mv0 = mv;
        memcpy(u, uo, n * sizeof(float));
        memcpy(v, vo, n * sizeof(float));
    }
    CHECK(ok && walls_zero(w, w, uo, vo), "velocity advection: unbounded or walls moved");

    /* a small smooth v bump carried by a uniform interior u = U0 */
    float U0 = 1.0f, dt = 0.3f / (float)w / U0; /* 0.3 cells per step */
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = i > 0 ? U0 : 0.0f;
            float x = (float)i + 0.5f - 24.0f, y = (float)j - 32.0f;
            AT(v, w, i, j) = j > 0 ? 0.01f * expf(-(x * x + y * y) / (2.0f * 16.0f)) : 0.0f;
        }
    double x0, y0, x1, y1;
    v_centroid(w, v, &x0, &y0);
    int steps = 40;
    for (int it = 0; it < steps; it++) {
        ref_pass_advect_vel(w, w, dt, u, v, uo, vo);
        memcpy(u, uo, n * sizeof(float));
        memcpy(v, vo, n * sizeof(float));
    }
    v_centroid(w, v, &x1, &y1);
    double shift = x1 - x0, expect = 0.3 * steps, yshift = y1 - y0;
    CHECK(fabs(shift / expect - 1.0) <= 0.1 && fabs(yshift) <= 0.2,
          "velocity advection: v bump moved %g cells in x (expected %g), %g in y", shift, expect,
          yshift);
    printf("  info: v bump carried by u: moved %.3f cells (expected %.1f), y drift %.4f\n", shift,
           expect, yshift);
    free(u);
    free(v);
    free(uo);
    free(vo);
}

/* ---------------------------------------------------------------------- */
/* 5. Density advection                                                   */

/* Runs `steps` substeps; checks positivity/finiteness each substep; returns
 * the relative mass drift. */
static double advect_run(int w, float dt_sub, float umax, const float *u, const float *v,
                         float *rho, int steps, const char *what)
{
    size_t n = (size_t)w * w;
    float *t = falloc(n);
    double m0 = sumf(rho, n);
    for (int it = 0; it < steps; it++) {
        ref_pass_advect_density(w, w, dt_sub, umax, u, v, rho, t);
        memcpy(rho, t, n * sizeof(float));
        float mn = minf(rho, n);
        if (!(mn >= 0.0f) || !all_finite(rho, n)) {
            CHECK(0, "density advection (%s), substep %d: min %g or non-finite", what, it, mn);
            break;
        }
    }
    free(t);
    return fabs(sumf(rho, n) / m0 - 1.0);
}

/* A soft disc of radius r at (cx, cy) (domain units) on a w x h grid, its
 * edge a linear ramp two cells wide. */
static void soft_disc(int w, int h, float cx, float cy, float r, float *rho)
{
    const TestlibShape s = {.domain = true, .width = 2.0 / (w < h ? w : h)};
    testlib_disc(rho, w, h, &s, cx, cy, r, 1.0);
}

/* Moves a soft disc diagonally at the speed limit on every face (the worst
 * case of the substep rule) with the substeps a step of dt would take, for
 * 0.45 domain units; returns the largest stripe ratio seen. dt_scale > 1
 * takes longer substeps than the rule allows. */
static double diagonal_stripes(int w, float dt_scale)
{
    size_t n = (size_t)w * w;
    SolverParams p;
    method_params_default(&p);
    float *u = falloc(n), *v = falloc(n), *rho = falloc(n), *t = falloc(n);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = i > 0 ? p.umax : 0.0f;
            AT(v, w, i, j) = j > 0 ? -p.umax : 0.0f; /* up and to the right */
        }
    soft_disc(w, w, 0.25f, 0.75f, 0.12f, rho);
    double s0 = fidelity_stripes(rho, w, w), worst = 0.0;
    /* the count the rule takes for this speed (the bound is planned for the
     * transport's guard, 1.5·umax: method_transport_cap) */
    int ns = method_substeps_for(ref_pass_speed(w, w, method_transport_cap(&p), u, v),
                                 method_speed_scale(p.dt, 1.0f / (float)w), method_advect_substeps(w, w, &p));
    float dt_sub = p.dt / (float)ns * dt_scale;
    int total = (int)(0.45f / (p.umax * dt_sub));
    for (int k = 1; k <= total; k++) {
        ref_pass_advect_density(w, w, dt_sub, p.umax, u, v, rho, t);
        memcpy(rho, t, n * sizeof(float));
        if (k % 8 == 0 || k == total) {
            double r = fidelity_stripe_ratio(fidelity_stripes(rho, w, w), s0);
            if (r > worst) worst = r;
        }
    }
    free(u); free(v); free(rho); free(t);
    return worst;
}

/* Issue: a front moving diagonally broke into comb stripes. The substep rule
 * keeps |c_x| + |c_y| <= METHOD_ADVECT_CFL; with substeps 4x longer (the old
 * rule's per-face 1/2) the stripes come back, so this test can fail. */
static void test_advect_diagonal(void)
{
    for (int w = 128; w <= 256; w *= 2) {
        double r = diagonal_stripes(w, 1.0f);
        printf("  info: disc moved diagonally at %d^2: stripes at most %.2fx the start's\n", w, r);
        CHECK(r <= 1.2, "diagonal transport at %d^2: stripes %.2fx the start's (at most 1.2x)", w, r);
    }
    double bad = diagonal_stripes(128, 4.0f);
    printf("  info: ... with substeps 4x too long: %.2fx\n", bad);
    CHECK(bad > 2.0, "substeps past the stable range should stripe (%.2fx): the measure is blind", bad);
}

/* The morph that showed the stripes: a disc into the same disc in the
 * opposite corner, whole steps with the defaults, either force. */
static void test_morph_diagonal(void)
{
    CHECK_LONG_RUN("test_morph_diagonal");
    int w = 256;
    size_t n = (size_t)w * w;
    float *a = falloc(n), *b = falloc(n);
    soft_disc(w, w, 0.25f, 0.75f, 0.12f, a);
    soft_disc(w, w, 0.75f, 0.25f, 0.12f, b);
    for (int f = 0; f < 2; f++) {
        SolverParams p;
        method_params_default(&p);
        p.force = f == 0 ? SOLVER_FORCE_FATTAL : SOLVER_FORCE_BALANCE;
        char err[256];
        RefSolver *s = ref_create(w, w, &p, err, sizeof err);
        if (!s) { CHECK(0, "%s", err); break; }
        ref_set_density(s, a);
        ref_set_target(s, b, true);
        double s0 = fidelity_stripes(ref_density(s), w, w), worst = 0.0;
        for (int k = 1; k <= 200; k++) { /* the stripes showed from step 50 to 250 */
            ref_step(s);
            if (k % 10 == 0) {
                double r = fidelity_stripe_ratio(fidelity_stripes(ref_density(s), w, w), s0);
                if (r > worst) worst = r;
            }
        }
        printf("  info: diagonal morph at %d^2 (%s): stripes at most %.2fx the start's, error %.3f\n",
               w, f == 0 ? "fattal" : "balance", worst, ref_error(s));
        CHECK(worst <= 1.6, "diagonal morph (%s): stripes %.2fx the start's", f == 0 ? "fattal" : "balance", worst);
        ref_free(s);
    }
    free(a); free(b);
}

/* A disc driven across the box keeps its density while it travels (issue
 * 20: the flow carries the smoke). The projected flow runs faster than umax
 * where it turns around the disc; clamping each face at umax made the
 * transported flow compressible there: the disc's rear half thinned behind a
 * sharp front across its middle and its front rim piled up above the start's
 * density (method_transport_cap; docs/FIDELITY.md). Over the first 100
 * steps at 128², while nothing has arrived, no cell rises above the start's
 * peak (measured 1.000; the drift and the gathering leave smoke in transit
 * alone) and the area at 90% of the peak or more keeps 0.75 of the start's
 * or more (0.84: the disc stretches into a lens, its edge softens), and the
 * flow did exceed umax (1.15x; else the test says nothing). With the clamp
 * (METHOD_FLOW_GUARD 1) it reads 1.038 and 0.61. */
/* the x of the centre of mass, in domain units (the cell side 1/w) */
static double centroid_x(int w, const float *rho)
{
    double m = 0.0, mx = 0.0;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            m += rho[(size_t)j * w + i];
            mx += rho[(size_t)j * w + i] * (i + 0.5) / w;
        }
    return m > 0.0 ? mx / m : 0.0;
}

static void test_travel_keeps_density(void)
{
    enum { STEPS = 100 };
    int w = 128;
    size_t n = (size_t)w * w;
    float *a = falloc(n), *b = falloc(n);
    soft_disc(w, w, 0.25f, 0.5f, 0.13f, a);
    soft_disc(w, w, 0.75f, 0.5f, 0.13f, b);
    SolverParams p;
    method_params_default(&p);
    char err[256];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    if (s) {
        ref_set_density(s, a);
        ref_set_target(s, b, true);
        const float *rho = ref_density(s);
        float peak = 0.0f;
        for (size_t k = 0; k < n; k++) peak = fmaxf(peak, rho[k]);
        size_t area0 = 0;
        for (size_t k = 0; k < n; k++) area0 += rho[k] >= 0.9f * peak;
        double lo = 1.0, hi = 0.0, fastest = 0.0, x0 = centroid_x(w, rho);
        for (int step = 1; step <= STEPS; step++) {
            ref_step(s);
            rho = ref_density(s);
            const float *u = ref_velocity_u(s), *v = ref_velocity_v(s);
            for (size_t k = 0; k < n; k++) fastest = fmax(fastest, fmax(fabsf(u[k]), fabsf(v[k])));
            size_t area = 0;
            for (size_t k = 0; k < n; k++) area += rho[k] >= 0.9f * peak;
            lo = fmin(lo, (double)area / (double)area0);
            for (size_t k = 0; k < n; k++) hi = fmax(hi, rho[k] / peak);
        }
        double moved = centroid_x(w, rho) - x0;
        printf("  info: a travelling disc at %d^2: the area at 90%% of its peak at least %.2f of the start's "
               "over %d steps, its density at most %.3f of the peak; the flow up to %.2f umax; moved %.3f\n",
               w, lo, STEPS, hi, fastest / p.umax, moved);
        CHECK(fastest > 1.05 * p.umax, "the flow stayed within umax (%.3f): the test says nothing", fastest / p.umax);
        CHECK(hi <= 1.005, "the travelling disc piled up: %.3f of its start's peak", hi);
        CHECK(lo >= 0.75, "the travelling disc thinned: its dense area fell to %.2f of the start's", lo);
        CHECK(moved > 0.05, "the disc did not travel (%.3f)", moved);
        ref_free(s);
    }
    free(a);
    free(b);
}

/* The force's noise (issue 20, points 1 and 4), as cpu_solver.h defines
 * it: each face's driving force scaled by 1 + A·n at the face. */
static void test_force_noise_faces(void)
{
    SolverParams p;
    method_params_default(&p);
    p.umax = 1e30f; /* no clamp: the faces compare as they are */
    p.swirl = 0.0f;
    int w = 64;
    size_t n = (size_t)w * w;
    ForceSetup f;
    force_setup(&f, w, &p);
    force_disc_target(&f);
    draw_disc(w, w, 0.4f, 0.45f, 0.2f, 0.02f, f.rho);
    force_blur_rho(&f);
    float *u = falloc(n), *v = falloc(n), *u0 = falloc(n), *v0 = falloc(n), *u1 = falloc(n), *v1 = falloc(n);
    const float a = 0.25f, nl = (1.0f / (float)w) / p.noise_scale;
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, 0.0f, NULL, u, v, u0, v0);
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, NULL, 0.0f, a, NULL, u, v, u1, v1);
    double worst = 0.0, big = 0.0, changed = 0.0;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            float nu = 1.0f + a * method_noise((float)i * nl, ((float)j + 0.5f) * nl, (unsigned)p.noise_seed);
            float nv = 1.0f + a * method_noise(((float)i + 0.5f) * nl, (float)j * nl, (unsigned)p.noise_seed);
            worst = fmax(worst, fabs((double)AT(u1, w, i, j) - (double)AT(u0, w, i, j) * nu));
            worst = fmax(worst, fabs((double)AT(v1, w, i, j) - (double)AT(v0, w, i, j) * nv));
            big = fmax(big, fmax(fabs((double)AT(u0, w, i, j)), fabs((double)AT(v0, w, i, j))));
            changed = fmax(changed, fabs((double)AT(u1, w, i, j) - (double)AT(u0, w, i, j)));
        }
    printf("  info: force noise %.2f: faces within %.2e of (1 + A n) times the plain force (largest %.3e, "
           "largest change %.3e)\n", (double)a, worst, big, changed);
    CHECK(big > 0.0 && worst <= 1e-6 * big, "a face is not (1 + A n) times the plain force: %.3e of %.3e", worst, big);
    CHECK(changed > 0.02 * big, "the noise changed no face (%.3e of %.3e)", changed, big);
    force_free(&f);
    free(u); free(v); free(u0); free(v0); free(u1); free(v1);
}

/* The balance force on a compression (method.h, METHOD_DRIFT_WAIT): once
 * the gathering has joined it weighs the surplus by the cells' own density,
 * so smoke condensed into fine stripes is pulled in by stripe (denser
 * stripes harder: the fingers' buoyancy), where the blurred density saw
 * them alike; before the gathering it is the old force; with attract 0 it
 * is the old force to the bit; and smoke that has arrived (ρ = c·ρ*) is not
 * pulled once the drift has joined. */
/* test_sharp_force's vertical pull |v| summed over the dense and the thin
 * columns (stripes two cells wide) in the square's upper and lower quarters */
static void stripe_pull(int w, const float *v, double *dense, double *thin)
{
    for (int j = w / 8; j < w - w / 8; j++) {
        if (j > w / 3 && j < w - w / 3) continue;
        for (int i = w / 10 + 2; i < w - w / 10 - 2; i++) {
            double a = fabs((double)AT(v, w, i, j));
            if ((i / 2) % 2) *thin += a;
            else *dense += a;
        }
    }
}

static void test_sharp_force(void)
{
    SolverParams p;
    method_params_default(&p);
    p.umax = 1e30f; /* no clamp: the faces compare as they are */
    p.swirl = 0.0f;
    p.attract = 1.0f;
    int w = 64;
    size_t n = (size_t)w * w;
    ForceSetup f;
    force_setup(&f, w, &p);
    force_disc_target(&f);
    /* a faint square 0.1..0.9 in stripes two cells wide: 0.45 and 0.15 */
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            bool in = i >= w / 10 && i < w - w / 10 && j >= w / 10 && j < w - w / 10;
            AT(f.rho, w, i, j) = in ? ((i / 2) % 2 ? 0.15f : 0.45f) : 0.0f;
        }
    force_blur_rho(&f);
    float *phi = falloc(n), *zero = falloc(n);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            float x = ((float)i + 0.5f) / (float)w - 0.5f, y = ((float)j + 0.5f) / (float)w - 0.5f;
            AT(phi, w, i, j) = -(x * x + y * y); /* a deficit bowl: highest where the target is */
        }
    float *u0 = falloc(n), *v0 = falloc(n), *u1 = falloc(n), *v1 = falloc(n);
    ForceSharp sh = {f.rho, f.tgt, 1.0f, 0.0f, 0.0f};
    const float kb = 0.5f;
    /* attract 0: the old force, to the bit */
    SolverParams p0 = p;
    p0.attract = 0.0f;
    sh.rg = 1.0f;
    ref_pass_force(w, w, &p0, &f.spec, f.rho_c, f.tgt_blur, phi, kb, 0.0f, NULL, zero, zero, u0, v0);
    ref_pass_force_sharp(w, w, &p0, &f.spec, f.rho_c, f.tgt_blur, phi, kb, 0.0f, NULL, &sh, zero, zero, u1, v1);
    CHECK(memcmp(u0, u1, n * 4) == 0 && memcmp(v0, v1, n * 4) == 0, "attract 0: not the old force to the bit");
    /* before the gathering (rg 0): the old force within rounding */
    sh.rg = 0.0f;
    ref_pass_force(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, phi, kb, 0.0f, NULL, zero, zero, u0, v0);
    ref_pass_force_sharp(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, phi, kb, 0.0f, NULL, &sh, zero, zero, u1, v1);
    double d0 = testlib_rel_l2(u1, u0, n) + testlib_rel_l2(v1, v0, n);
    CHECK(d0 < 1e-5, "rg 0: the force differs from the old one by %.3g", d0);
    /* the vertical pull in dense and in thin columns, old force and rg 1 */
    double dense[2] = {0, 0}, thin[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        sh.rg = (float)r;
        ref_pass_force_sharp(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, phi, kb, 0.0f, NULL, &sh, zero, zero, u1, v1);
        stripe_pull(w, v1, &dense[r], &thin[r]);
    }
    printf("  info: pull on dense over thin columns: %.2f with rho~ (rg 0), %.2f with rho (rg 1)\n",
           dense[0] / thin[0], dense[1] / thin[1]);
    CHECK(dense[0] < 1.2 * thin[0], "rg 0 tells the stripes apart: %.3g vs %.3g", dense[0], thin[0]);
    CHECK(dense[1] > 2.0 * thin[1], "rg 1 pulls dense stripes no harder: %.3g vs %.3g", dense[1], thin[1]);
    /* φ's term alone (a flat target: no ∇log ρ̃*), weighted by ρ as far */
    float *flat = falloc(n);
    for (size_t k = 0; k < n; k++) flat[k] = 0.5f;
    double pd[2] = {0, 0}, pt[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        sh.rg = (float)r;
        ref_pass_force_sharp(w, w, &p, &f.spec, f.rho_c, flat, phi, kb, 0.0f, NULL, &sh, zero, zero, u1, v1);
        stripe_pull(w, v1, &pd[r], &pt[r]);
    }
    printf("  info: phi's pull on dense over thin columns: %.2f (rg 0), %.2f (rg 1)\n", pd[0] / pt[0], pd[1] / pt[1]);
    CHECK(pd[0] < 1.2 * pt[0] && pd[1] > 2.0 * pt[1], "phi's term: dense over thin %.3g (rg 0), %.3g (rg 1)",
          pd[0] / pt[0], pd[1] / pt[1]);
    free(flat);
    /* arrived smoke (ρ = c·ρ*), the drift on (rd 1), no φ term: Fattal's
     * term weighs min(ρ̃, ρ̃*) alone, as with attract 0 */
    const float c = 2.0f;
    for (size_t k = 0; k < n; k++) f.rho[k] = c * f.tgt[k];
    force_blur_rho(&f);
    sh.c = c;
    sh.rg = sh.rd = 1.0f;
    ref_pass_force(w, w, &p0, &f.spec, f.rho_c, f.tgt_blur, phi, 0.0f, 0.0f, NULL, zero, zero, u0, v0);
    ref_pass_force_sharp(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, phi, 0.0f, 0.0f, NULL, &sh, zero, zero, u1, v1);
    double da = testlib_rel_l2(u1, u0, n) + testlib_rel_l2(v1, v0, n);
    sh.rd = 0.0f; /* the same smoke before the drift: all of it pulled */
    ref_pass_force_sharp(w, w, &p, &f.spec, f.rho_c, f.tgt_blur, phi, 0.0f, 0.0f, NULL, &sh, zero, zero, u1, v1);
    double db = testlib_rel_l2(u1, u0, n) + testlib_rel_l2(v1, v0, n);
    printf("  info: arrived smoke: %.2e from the min-only force with rd 1, %.2f with rd 0\n", da, db);
    CHECK(da < 1e-5, "arrived smoke is still pulled with the drift on (%.3g)", da);
    CHECK(db > 0.1, "rd 0 pulls arrived smoke no more than rd 1 (%.3g)", db);
    force_free(&f);
    free(phi); free(zero); free(u0); free(v0); free(u1); free(v1);
}

/* A disc pushed evenly outward into a ring around it (the suite's
 * disc-ring): the force is a potential's gradient and the projection
 * removes it, so without the noise the flow barely starts; with it the push
 * has a curl and grows fingers that move the smoke out (issue 20, point 1:
 * the flow, not the gathering, carries it). Over the flow's own time (the
 * first 30% of a 3-s arrival: rg 0) at 64². */
static double ring_flow(float noise, double *outward)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float *a = falloc(n), *b = falloc(n), *inner = falloc(n);
    soft_disc(w, w, 0.5f, 0.5f, 0.2f, a);
    soft_disc(w, w, 0.5f, 0.5f, 0.34f, b);
    soft_disc(w, w, 0.5f, 0.5f, 0.26f, inner);
    for (size_t k = 0; k < n; k++) b[k] -= inner[k];
    SolverParams p;
    method_params_default(&p);
    p.force_noise = noise;
    char err[256];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    double fastest = 0.0;
    *outward = 0.0;
    if (s) {
        ref_set_density(s, a);
        ref_set_target(s, b, true);
        double m0 = 0.0, far = 0.0;
        for (int step = 1; step <= 90; step++) {
            ref_step(s);
            const float *u = ref_velocity_u(s), *v = ref_velocity_v(s);
            for (size_t k = 0; k < n; k++) fastest = fmax(fastest, fmax(fabsf(u[k]), fabsf(v[k])));
        }
        const float *rho = ref_density(s);
        for (int j = 0; j < w; j++)
            for (int i = 0; i < w; i++) {
                double x = ((double)i + 0.5) / w - 0.5, y = ((double)j + 0.5) / w - 0.5;
                m0 += a[(size_t)j * w + i];
                if (x * x + y * y > 0.22 * 0.22) far += rho[(size_t)j * w + i];
            }
        *outward = far / m0;
        ref_free(s);
    }
    free(a);
    free(b);
    free(inner);
    return fastest / p.umax;
}

static void test_force_noise_ring(void)
{
    SolverParams d;
    method_params_default(&d);
    double out0, out1;
    double f0 = ring_flow(0.0f, &out0), f1 = ring_flow(d.force_noise, &out1);
    printf("  info: a disc pushed out toward a ring, 90 steps at 64^2: the flow up to %.3f umax without the "
           "noise, %.3f with the default %g; smoke beyond r = 0.22: %.3f and %.3f of the mass\n", f0, f1,
           (double)d.force_noise, out0, out1);
    CHECK(f1 > 0.3 && f1 > 5.0 * f0, "the noise did not start the flow: %.3f umax (%.3f without)", f1, f0);
    CHECK(out1 > out0 + 0.05, "the noise's flow moved no more smoke out: %.3f of the mass (%.3f without)", out1,
          out0);
}

static void test_advect_density(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float hc = 1.0f / (float)w, umax = 0.25f;
    float dt_sub = 0.5f * METHOD_ADVECT_CFL * hc / umax; /* largest substep allowed */
    float *u = falloc(n), *v = falloc(n), *rho = falloc(n), *up = falloc(n), *vp = falloc(n);

    rng_seed(31337);
    for (size_t k = 0; k < n; k++) rho[k] = frand();
    random_velocity(w, w, umax, u, v);
    double drift = advect_run(w, dt_sub, umax, u, v, rho, 300, "random velocity");
    CHECK(drift <= 1e-5, "density advection, random velocity: mass drift %.3e", drift);
    printf("  info: density advection 300 substeps, random field: mass drift %.2e, max rho %.2f\n",
           drift, maxabsf(rho, n));

    for (size_t k = 0; k < n; k++) rho[k] = frand();
    project(w, w, 500, u, v, up, vp);
    drift = advect_run(w, dt_sub, umax, up, vp, rho, 300, "projected velocity");
    CHECK(drift <= 1e-5, "density advection, projected velocity: mass drift %.3e", drift);

    /* face speeds 10x umax: clamped, still conservative and positive */
    for (size_t k = 0; k < n; k++) rho[k] = frand();
    random_velocity(w, w, 10.0f * umax, u, v);
    drift = advect_run(w, dt_sub, umax, u, v, rho, 300, "10x umax");
    CHECK(drift <= 1e-5, "density advection, speeds 10x umax: mass drift %.3e", drift);
    printf("  info: density advection 300 substeps, speeds 10x umax: mass drift %.2e\n", drift);

    /* sparse smoke (many empty cells): the positivity limiter is active */
    for (size_t k = 0; k < n; k++) rho[k] = frand() < 0.2f ? frand() : 0.0f;
    drift = advect_run(w, dt_sub, umax, u, v, rho, 300, "sparse, 10x umax");
    CHECK(drift <= 1e-5, "density advection, sparse smoke: mass drift %.3e", drift);

    /* a blob in a uniform interior flow moves by U0 t */
    float U0 = 0.2f, T = 1.0f;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            AT(u, w, i, j) = i > 0 ? U0 : 0.0f;
            AT(v, w, i, j) = 0.0f;
        }
    draw_disc(w, w, 0.3f, 0.5f, 0.1f, 0.01f, rho);
    for (size_t k = 0; k < n; k++)
        if (rho[k] < 1e-4f) rho[k] = 0.0f;
    double cx0, cy0, cx1, cy1;
    centroid(w, w, rho, &cx0, &cy0);
    int steps = (int)lroundf(T / dt_sub);
    drift = advect_run(w, T / (float)steps, umax, u, v, rho, steps, "uniform flow");
    centroid(w, w, rho, &cx1, &cy1);
    double shift = cx1 - cx0;
    CHECK(fabs(shift / (U0 * T) - 1.0) <= 0.3 && fabs(cy1 - cy0) < 0.01,
          "density advection: blob moved (%g, %g), expected (%g, 0)", shift, cy1 - cy0, U0 * T);
    CHECK(fabs(shift / (U0 * T) - 1.0) <= 0.05, "density advection: blob moved %g, expected %g "
          "(within 5%%)", shift, U0 * T);
    CHECK(drift <= 1e-5, "density advection, uniform flow: mass drift %.3e", drift);
    printf("  info: blob in uniform flow moved %.4f (expected %.4f), y %.2e\n", shift, U0 * T,
           cy1 - cy0);
    free(u);
    free(v);
    free(rho);
    free(up);
    free(vp);
}

/* ---------------------------------------------------------------------- */
/* 6. Gathering                                                           */

static double l1diff(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; k++) s += fabs((double)a[k] - b[k]);
    return s;
}

/* One gathering application with `iters` Jacobi iterations from e = 0, as
 * ref_step does. */
static void gather_once(int w, float a, int iters, const float *rho, const float *tgt,
                        const float *tb, float *rho_out)
{
    size_t n = (size_t)w * w;
    float *e = falloc(n), *e2 = falloc(n);
    for (int it = 0; it < iters; it++) {
        ref_pass_gather_jacobi(w, w, a, rho, tgt, tb, e, e2);
        swap(&e, &e2);
    }
    ref_pass_gather_apply(w, w, a, rho, tb, e, rho_out);
    free(e);
    free(e2);
}

static void test_gathering(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float *rho = falloc(n), *tgt = falloc(n), *tb = falloc(n), *out = falloc(n);
    rng_seed(2024);
    for (size_t k = 0; k < n; k++) {
        rho[k] = frand();
        tgt[k] = frand() * frand();
    }
    double s = sumf(rho, n) / sumf(tgt, n);
    for (size_t k = 0; k < n; k++) tgt[k] *= (float)s;
    BlurSpec b;
    method_blur_spec(w, w, 0.04f, &b);
    ref_pass_blur(w, w, &b, tgt, tb);

    /* a = 0 is the identity */
    gather_once(w, 0.0f, 5, rho, tgt, tb, out);
    CHECK(maxdiff(rho, out, n) == 0.0f, "gathering with a = 0 changed rho by %g",
          maxdiff(rho, out, n));

    /* a = dt vg / h^2 = 100, few iterations, repeated */
    float a = 100.0f;
    double m0 = sumf(rho, n), e0 = l1diff(rho, tgt, n), eprev = e0, worst = 0.0;
    int increases = 0, reps = 30;
    for (int r = 0; r < reps; r++) {
        gather_once(w, a, 3, rho, tgt, tb, out);
        memcpy(rho, out, n * sizeof(float));
        double drift = fabs(sumf(rho, n) / m0 - 1.0), e = l1diff(rho, tgt, n);
        worst = fmax(worst, drift);
        CHECK(minf(rho, n) >= 0.0f && all_finite(rho, n), "gathering rep %d: min rho %g", r,
              minf(rho, n));
        if (e > eprev * (1.0 + 1e-6)) increases++;
        eprev = e;
    }
    CHECK(worst <= 1e-5, "gathering (a = 100, 3 iterations): mass drift %.3e", worst);
    CHECK(increases == 0, "gathering: L1 error rose in %d of %d applications", increases, reps);
    CHECK(eprev <= 0.5 * e0, "gathering: L1 error %g -> %g after %d applications", e0, eprev,
          reps);
    printf("  info: gathering a = 100, 3 Jacobi its x %d: mass drift %.2e, L1 error %.1f -> %.1f (%.1f%%)\n",
           reps, worst, e0, eprev, 100.0 * eprev / e0);

    /* not converged at all: 1 iteration, and an arbitrary huge e */
    rng_seed(77);
    for (size_t k = 0; k < n; k++) rho[k] = frand() < 0.3f ? 0.0f : frand();
    m0 = sumf(rho, n);
    gather_once(w, a, 1, rho, tgt, tb, out);
    double d1 = fabs(sumf(out, n) / m0 - 1.0);
    CHECK(d1 <= 1e-5 && minf(out, n) >= 0.0f, "gathering, 1 iteration: drift %.3e, min %g", d1,
          minf(out, n));
    float *e = falloc(n);
    for (size_t k = 0; k < n; k++) e[k] = 1000.0f * srand1();
    ref_pass_gather_apply(w, w, a, rho, tb, e, out);
    double d2 = fabs(sumf(out, n) / m0 - 1.0);
    CHECK(d2 <= 1e-5 && minf(out, n) >= 0.0f && all_finite(out, n),
          "gathering with an arbitrary e: drift %.3e, min %g", d2, minf(out, n));
    printf("  info: gathering unconverged: drift %.2e (1 iteration), %.2e (random e)\n", d1, d2);
    free(e);
    free(rho);
    free(tgt);
    free(tb);
    free(out);
}

/* Gathering through ref_step (vf = 0: no force, so the velocity stays zero
 * and the step is gathering alone): stiff a, the default-like few iterations. */
static void test_gathering_step(void)
{
    int w = 64;
    size_t n = (size_t)w * w;
    float hc = 1.0f / (float)w;
    SolverParams p;
    method_params_default(&p);
    p.vf = 0.0f;
    p.gather_iters = 3;
    p.vg = 100.0f * hc * hc / p.dt; /* a = dt vg / h^2 = 100 */
    p.arrive = 0.0f; /* untimed: the gathering from the first step */
    char err[128];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    if (!s) return;
    float *rho = falloc(n), *tgt = falloc(n);
    rng_seed(555);
    for (size_t k = 0; k < n; k++) {
        rho[k] = frand();
        tgt[k] = frand() * frand();
    }
    ref_set_density(s, rho);
    ref_set_target(s, tgt, true);
    double m0 = ref_mass(s), e0 = ref_error(s), eprev = e0, drift = 0.0;
    int rises = 0, steps = 30;
    bool positive = true;
    for (int k = 0; k < steps; k++) {
        ref_step(s);
        double e = ref_error(s);
        if (e > eprev * (1.0 + 1e-6)) rises++;
        eprev = e;
        drift = fmax(drift, fabs(ref_mass(s) / m0 - 1.0));
        if (!(minf(ref_density(s), n) >= 0.0f) || !all_finite(ref_density(s), n)) positive = false;
    }
    CHECK(maxabsf(ref_velocity_u(s), n) == 0.0f && maxabsf(ref_velocity_v(s), n) == 0.0f,
          "vf = 0: the velocity moved");
    CHECK(positive, "gathering steps: negative or non-finite density");
    CHECK(drift <= 1e-5, "gathering steps (a = 100, 3 iterations): mass drift %.3e", drift);
    CHECK(rises == 0, "gathering steps: error rose in %d of %d steps", rises, steps);
    CHECK(eprev <= 0.5 * e0, "gathering steps: error %g -> %g", e0, eprev);
    printf("  info: ref_step gathering only, a = 100, 3 iterations x %d: error %.3f -> %.3f, "
           "mass drift %.2e\n", steps, e0, eprev, drift);
    ref_free(s);
    free(rho);
    free(tgt);
}

static void soft_disc(int w, int h, float cx, float cy, float r, float *rho);

/* The gathering's fluxes in substeps (method_gather_substeps): a faint box of
 * smoke drawn into a small dense disc by the gathering alone. Each flux is
 * limited to what its cell holds, so one application moves smoke a cell a
 * step; in n = ceil(METHOD_GATHER_SPEED·dt/h) substeps it crosses n cells,
 * one speed in domain units. At dt 0.02 that is one substep at 64² and two
 * at 128², and the disc gains the same share of the mass at both (0.648,
 * with the solve for e converged; with one substep at 128² it gained 0.496). */
static double gathered_into_disc(int w, int steps)
{
    size_t n = (size_t)w * w;
    SolverParams p;
    method_params_default(&p);
    p.dt = 0.02f;
    p.vf = 0.0f;
    p.arrive = 0.0f; /* untimed */
    p.tramp = 0.0f;  /* the gathering from the first step */
    p.vk = 0.0f;
    p.vw = 0.0f;
    p.swirl = 0.0f;
    p.subgrid = 0.0f;
    p.force_noise = 0.0f;
    p.vg = 0.2f;     /* strong: the cells' content limits the fluxes */
    p.gather_iters = 64;
    char err[128];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    if (!s) return 0.0;
    float *rho = falloc(n), *tgt = falloc(n);
    const TestlibShape shape = {.domain = true, .width = 1.0 / 32.0};
    testlib_disc(rho, w, w, &shape, 0.5, 0.5, 0.2, 1.0); /* a ring around the target */
    testlib_disc(tgt, w, w, &shape, 0.5, 0.5, 0.1, 1.0);
    for (size_t k = 0; k < n; k++) rho[k] -= tgt[k];
    ref_set_density(s, rho);
    ref_set_target(s, tgt, true);
    double m0 = ref_mass(s);
    for (int k = 0; k < steps; k++) ref_step(s);
    const float *d = ref_density(s);
    double in = 0.0;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++) {
            double x = (i + 0.5) / w - 0.5, y = (j + 0.5) / w - 0.5;
            if (x * x + y * y < 0.1 * 0.1) in += d[j * w + i];
        }
    CHECK(fabs(ref_mass(s) / m0 - 1.0) < 1e-5, "%d²: gathering substeps kept the mass (%.3e)", w,
          ref_mass(s) / m0 - 1.0);
    CHECK(minf(d, n) >= 0.0f, "%d²: gathering substeps kept the density positive", w);
    ref_free(s);
    free(rho);
    free(tgt);
    return in / m0;
}

static void test_gather_substeps(void)
{
    SolverParams p;
    method_params_default(&p);
    p.dt = 0.02f;
    CHECK(method_gather_substeps(64, 64, &p) == 1 && method_gather_substeps(128, 128, &p) == 2,
          "dt 0.02: 1 substep at 64², 2 at 128² (%d, %d)", method_gather_substeps(64, 64, &p),
          method_gather_substeps(128, 128, &p));
    double a = gathered_into_disc(64, 10), b = gathered_into_disc(128, 10);
    printf("  info: gathering alone, 0.2 time units at dt 0.02: the disc holds %.4f of the mass at 64², "
           "%.4f at 128²\n", a, b);
    CHECK(a > 0.2, "the gathering drew smoke in at 64² (%.4f)", a);
    CHECK(fabs(b / a - 1.0) < 0.05, "the disc gains the same at 64² and 128² (%.4f, %.4f)", a, b);
}

/* Subgrid mixing (issue 20 point 2, method.h): the iterations keep the mass
 * (carried on the increment: iterating on ρ itself lost ~1e-9 of it an
 * iteration where dense cells gave less than half an ulp) and the density
 * positive; the coefficient follows the blurred mismatch |ρ̃ − ρ̃*|/(ρ̃ + ρ̃*),
 * is 0 without strain, where the blurred smoke matches its target and away
 * from the target, capped elsewhere. */
static void test_mix_passes(void)
{
    int w = 48, h = 40;
    size_t n = (size_t)w * h;
    float *rho = falloc(n), *d = falloc(n), *e0 = falloc(n), *e1 = falloc(n), *out = falloc(n);
    rng_seed(2024);
    for (size_t k = 0; k < n; k++) {
        rho[k] = (k % 3 == 0) ? 0.0f : (k % 5 == 0 ? 1.0f : frand()); /* plateaus at 1 and empty cells */
        d[k] = METHOD_MIX_CAP * frand();
    }
    double m0 = 0.0;
    for (size_t k = 0; k < n; k++) m0 += rho[k];
    bool positive = true;
    for (int step = 0; step < 200; step++) {
        for (int it = 0; it < 8; it++) {
            ref_pass_mix_iter(w, h, d, rho, e0, it == 0, e1);
            float *t = e0;
            e0 = e1;
            e1 = t;
        }
        ref_pass_mix_apply(w, h, rho, e0, out);
        memcpy(rho, out, n * sizeof *rho);
        if (!(minf(rho, n) >= 0.0f)) positive = false;
    }
    double m1 = 0.0;
    for (size_t k = 0; k < n; k++) m1 += rho[k];
    /* 5e-9 measured; iterating on ρ itself (the increment added every
     * iteration) loses 2.7e-7 on the same field */
    CHECK(fabs(m1 / m0 - 1.0) < 5e-8, "mixing: mass %.9g -> %.9g (1600 iterations)", m0, m1);
    CHECK(positive, "mixing: a negative density");
    CHECK(maxf(rho, n) < 0.99f, "mixing at d up to the cap smooths the field: max %g", (double)maxf(rho, n));

    /* the coefficient: a shear u = y, the blurred smoke off its blurred
     * target, the target near; ρ̃ is read from the coarse field */
    float hh = 1.0f / (float)(w < h ? w : h);
    float *u = falloc(n), *v = falloc(n), *tb = falloc(n);
    BlurSpec bs;
    method_blur_spec(w, h, 0.04f, &bs);
    size_t nc = (size_t)bs.cw * bs.ch;
    float *rb = falloc(nc);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) AT(u, w, i, j) = i > 0 ? (float)j * hh : 0.0f;
    for (size_t k = 0; k < nc; k++) rb[k] = 1.0f;
    for (size_t k = 0; k < n; k++) tb[k] = 0.5f;
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    float mid = AT(d, w, w / 2, h / 2);
    CHECK(fabsf(mid - 0.05f * (1.0f / 3.0f)) < 1e-4f, "shear 1, mismatch 1/3, near: d %g (want %g)", (double)mid,
          0.05 / 3.0);
    /* near_w (method_mix_near) scales the target's density the nearness
     * sees (here ρ̃* = 5·METHOD_MIX_NEAR·s), not the floor: 0.1 gives half of
     * it; while a compression's drift waits (0) smoke near the target is
     * mixed as smoke in transit */
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 0.1f, 1.0f, d);
    float mid_half = AT(d, w, w / 2, h / 2);
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 0.0f, 1.0f, d);
    float mid_wait = AT(d, w, w / 2, h / 2);
    CHECK(fabsf(mid_half - 0.5f * mid) < 1e-6f && fabsf(mid_wait - METHOD_MIX_TRANSIT * mid) < 1e-6f,
          "near_w 0.1 and 0: d %g and %g (want %g and %g)", (double)mid_half, (double)mid_wait, 0.5 * mid,
          (double)METHOD_MIX_TRANSIT * mid);
    ref_pass_mix_coef(w, h, 100.0f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    CHECK(maxf(d, n) == METHOD_MIX_CAP, "d is capped at %g: %g", (double)METHOD_MIX_CAP, (double)maxf(d, n));
    /* the gate follows the blurred mismatch cell by cell: ρ̃ rising from 0.5
     * (matched) on the left to 1.5 on the right, ρ̃* = 0.5 everywhere */
    for (int j = 0; j < bs.ch; j++)
        for (int i = 0; i < bs.cw; i++) rb[(size_t)j * bs.cw + i] = 0.5f + (float)i / (float)(bs.cw - 1);
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    float worst = 0.0f;
    for (int j = 1; j < h - 1; j++)
        for (int i = 1; i < w - 1; i++) {
            float r = ref_sample_coarse(&bs, rb, (float)i + 0.5f, (float)j + 0.5f);
            float want = 0.05f * 1.0f * fabsf(r - 0.5f) / (r + 0.5f); /* strain 1, near */
            worst = fmaxf(worst, fabsf(AT(d, w, i, j) - want));
        }
    CHECK(worst < 1e-4f, "the gate follows the blurred mismatch |rb - tb|/(rb + tb): worst %g", (double)worst);
    CHECK(AT(d, w, 1, h / 2) < AT(d, w, w - 2, h / 2), "more mixing where the blurred smoke is farther off: %g %g",
          (double)AT(d, w, 1, h / 2), (double)AT(d, w, w - 2, h / 2));
    for (size_t k = 0; k < nc; k++) rb[k] = 0.5f;
    ref_pass_mix_coef(w, h, 100.0f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    CHECK(maxf(d, n) == 0.0f, "smoke that matches its target (blurred) is not mixed: %g", (double)maxf(d, n));
    for (size_t k = 0; k < nc; k++) rb[k] = 1.0f;
    for (size_t k = 0; k < n; k++) tb[k] = 0.0f;
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    /* smoke away from the target (in transit) is mixed at METHOD_MIX_TRANSIT
     * of the strength near it: g = 1, n = the floor, strain 1 */
    float tw = 0.0f;
    for (int j = 1; j < h - 1; j++)
        for (int i = 1; i < w - 1; i++) tw = fmaxf(tw, fabsf(AT(d, w, i, j) - 0.05f * METHOD_MIX_TRANSIT));
    CHECK(METHOD_MIX_TRANSIT > 0.0f && METHOD_MIX_TRANSIT <= 0.1f && tw < 1e-6f,
          "smoke in transit is mixed at %g of the strength near the target: worst %g", (double)METHOD_MIX_TRANSIT,
          (double)tw);
    for (size_t k = 0; k < n; k++) tb[k] = 0.5f;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) AT(u, w, i, j) = i > 0 ? 0.3f : 0.0f; /* a uniform flow: no strain inside */
    ref_pass_mix_coef(w, h, 100.0f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    CHECK(AT(d, w, w / 2, h / 2) == 0.0f, "a uniform flow strains nothing: %g", (double)AT(d, w, w / 2, h / 2));
    /* the drift's transport speeds: a uniform compression wu = -0.5 (x -
     * 1/2), wv = -0.5 (y - 1/2) (|∇·w| 1, no strain) on top of the uniform
     * flow mixes at rate 1 (the flow alone: 0); a shear drift w = (y, 0) at
     * its strain 1 */
    float *wu = falloc(n), *wv = falloc(n);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            AT(wu, w, i, j) = i > 0 ? 0.3f - 0.5f * ((float)i * hh - 0.5f) : 0.0f;
            AT(wv, w, i, j) = j > 0 ? -0.5f * ((float)j * hh - 0.5f) : 0.0f;
        }
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, wu, wv, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    float dc = AT(d, w, w / 2, h / 2), want = 0.05f * 1.0f * (1.0f / 3.0f); /* rate 1, mismatch 1/3, near */
    CHECK(fabsf(dc - want) < 1e-4f, "a converging drift mixes at its compression |div w| = 1: d %g (want %g)",
          (double)dc, (double)want);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            AT(wu, w, i, j) = i > 0 ? (float)j * hh : 0.0f;
            AT(wv, w, i, j) = 0.0f;
        }
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, wu, wv, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    dc = AT(d, w, w / 2, h / 2);
    CHECK(fabsf(dc - want) < 1e-4f, "a shearing drift mixes at its strain 1: d %g (want %g)", (double)dc,
          (double)want);
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    CHECK(AT(d, w, w / 2, h / 2) == 0.0f, "without the drift's speeds, the uniform flow alone: %g",
          (double)AT(d, w, w / 2, h / 2));
    free(wu); free(wv);

    /* the edge excess (thirteenth round): where the blurred fields match
     * (ρ̃ = ρ̃* = 0.5: that gate 0) and the shear strains at 1, a step in ρ
     * (1 left of x = w/2, 0 right of it) is mixed on its two sides where ρ*
     * is flat, at (|∇²ρ| − |∇²ρ*|)₊/(|∇²ρ| + |∇²ρ*| + eps·s), and not at all
     * where ρ* has the same edge or ρ is flat */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) AT(u, w, i, j) = i > 0 ? (float)j * hh : 0.0f;
    for (size_t k = 0; k < nc; k++) rb[k] = 0.5f;
    float *rr = falloc(n), *tt = falloc(n);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            AT(rr, w, i, j) = i < w / 2 ? 1.0f : 0.0f;
            AT(tt, w, i, j) = 0.5f;
        }
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rr, tt, 1.0f, 1.0f, 1.0f, d);
    float de = AT(d, w, w / 2 - 1, h / 2), dr = AT(d, w, w / 2, h / 2), want_e = 0.05f / (1.0f + METHOD_MIX_EDGE_EPS);
    CHECK(fabsf(de - want_e) < 1e-5f && fabsf(dr - want_e) < 1e-5f,
          "an edge the target lacks is mixed on both sides: d %g, %g (want %g)", (double)de, (double)dr,
          (double)want_e);
    CHECK(AT(d, w, w / 4, h / 2) == 0.0f && AT(d, w, 3 * w / 4, h / 2) == 0.0f,
          "flat smoke where the blurred fields match is not mixed: %g, %g", (double)AT(d, w, w / 4, h / 2),
          (double)AT(d, w, 3 * w / 4, h / 2));
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, NULL, NULL, 1.0f, 1.0f, 1.0f, d);
    CHECK(AT(d, w, w / 2 - 1, h / 2) == 0.0f, "without ρ and ρ*, the blurred gate alone: %g",
          (double)AT(d, w, w / 2 - 1, h / 2));
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rr, tt, 0.5f, 1.0f, 1.0f, d);
    CHECK(fabsf(AT(d, w, w / 2 - 1, h / 2) - 0.5f * want_e) < 1e-5f,
          "the edge excess weighed by the gathering's ease-in (0.5): d %g (want %g)",
          (double)AT(d, w, w / 2 - 1, h / 2), 0.5 * (double)want_e);
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rr, tt, 0.0f, 1.0f, 1.0f, d);
    CHECK(AT(d, w, w / 2 - 1, h / 2) == 0.0f, "before the gathering joins, the blurred gate alone: %g",
          (double)AT(d, w, w / 2 - 1, h / 2));
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) AT(tt, w, i, j) = i < w / 2 ? 0.5f : 0.0f; /* the same edge, half as high */
    ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rr, tt, 1.0f, 1.0f, 1.0f, d);
    want_e = 0.05f * 0.5f / (1.5f + METHOD_MIX_EDGE_EPS);
    CHECK(fabsf(AT(d, w, w / 2 - 1, h / 2) - want_e) < 1e-5f,
          "an edge twice as sharp as the target's is mixed at its excess: d %g (want %g)",
          (double)AT(d, w, w / 2 - 1, h / 2), (double)want_e);
    memcpy(tt, rr, n * sizeof *tt);
    ref_pass_mix_coef(w, h, 100.0f, hh, u, v, NULL, NULL, &bs, rb, tb, rr, tt, 1.0f, 1.0f, 1.0f, d);
    CHECK(maxf(d, n) == 0.0f, "smoke with its target's own edges is not mixed: %g", (double)maxf(d, n));
    free(rr); free(tt);
    free(rho); free(d); free(e0); free(e1); free(out); free(u); free(v); free(tb); free(rb);
}

/* The mixing's fine gate (fourteenth round): smoke in transit (ρ̃* = 0, so
 * n is METHOD_MIX_TRANSIT) under a shear of rate 1 is mixed whole where it
 * is much thinner than L = 1/METHOD_MIX_SCALE of the box, and at the
 * transit's twentieth where its edge is as soft as L; at 128² (L = h) the
 * gate never fires. */
static void test_mix_fine(void)
{
    for (int w = 128; w <= 256; w *= 2) {
        int h = w;
        size_t n = (size_t)w * h;
        float hh = 1.0f / (float)w, lh = (float)w / (float)METHOD_MIX_SCALE;
        float *u = falloc(n), *v = falloc(n), *tb = falloc(n), *rho = falloc(n), *d = falloc(n);
        BlurSpec bs;
        method_blur_spec(w, h, 0.04f, &bs);
        size_t nc = (size_t)bs.cw * bs.ch;
        float *rb = falloc(nc);
        for (size_t k = 0; k < nc; k++) rb[k] = 1.0f; /* g = 1: the blurred smoke, no target */
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                AT(u, w, i, j) = i > 0 ? (float)j * hh : 0.0f;
                /* a line one cell wide at x = w/4; a band from w/2 to 3w/4
                 * with edges softened by a Gaussian of σ = L */
                float a = ((float)i - 0.5f * (float)w) / lh, b = ((float)i - 0.75f * (float)w) / lh;
                AT(rho, w, i, j) = i == w / 4 ? 1.0f : 0.5f * (erfcf(-a / sqrtf(2.0f)) - erfcf(-b / sqrtf(2.0f)));
            }
        ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rho, NULL, 0.0f, 1.0f, 1.0f, d);
        float line = AT(d, w, w / 4 - 1, h / 2), edge = 0.0f, empty = AT(d, w, w / 8, h / 2);
        for (int i = w / 4 + 2; i < w; i++)
            if (AT(rho, w, i, h / 2) > 0.01f) edge = fmaxf(edge, AT(d, w, i, h / 2));
        float whole = 0.05f, transit = 0.05f * METHOD_MIX_TRANSIT;
        if (w == 256) {
            CHECK(fabsf(line - whole) < 1e-5f, "%d^2: beside a line one cell wide in transit, mixed whole: d %g (want %g)",
                  w, (double)line, (double)whole);
            CHECK(AT(d, w, w / 4, h / 2) > 4.0f * transit,
                  "%d^2: the line itself (f = 8: half way) more than the transit's: d %g", w,
                  (double)AT(d, w, w / 4, h / 2));
        } else {
            CHECK(fabsf(line - transit) < 1e-6f, "%d^2 (L = h): the line at the transit's twentieth only: d %g (want %g)",
                  w, (double)line, (double)transit);
        }
        CHECK(fabsf(edge - transit) < 1e-6f, "%d^2: an edge as soft as L at the transit's twentieth: d %g (want %g)", w,
              (double)edge, (double)transit);
        CHECK(fabsf(empty - transit) < 1e-6f, "%d^2: empty cells at the transit's twentieth: d %g", w, (double)empty);
        /* near the target (ρ̃* high: n = 1) the gate changes nothing */
        for (size_t k = 0; k < n; k++) tb[k] = 0.5f;
        for (size_t k = 0; k < nc; k++) rb[k] = 1.5f;
        ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rho, NULL, 0.0f, 1.0f, 1.0f, d);
        CHECK(fabsf(AT(d, w, w / 4 - 1, h / 2) - AT(d, w, w / 8, h / 2)) < 1e-6f,
              "%d^2: near the target the line is mixed as the empty cells are: %g, %g", w,
              (double)AT(d, w, w / 4 - 1, h / 2), (double)AT(d, w, w / 8, h / 2));
        /* while a compression's drift waits (near_w 0) smoke near the target
         * is mixed as in transit: the fine gate again, the floor elsewhere
         * (g = |1.5 - 0.5| / 2) */
        ref_pass_mix_coef(w, h, 0.05f, hh, u, v, NULL, NULL, &bs, rb, tb, rho, NULL, 0.0f, 0.0f, 1.0f, d);
        float wline = AT(d, w, w / 4 - 1, h / 2), wempty = AT(d, w, w / 8, h / 2);
        CHECK(fabsf(wempty - 0.5f * transit) < 1e-6f && fabsf(wline - (w == 256 ? 0.5f * whole : 0.5f * transit)) < 1e-5f,
              "%d^2, near_w 0: beside the line d %g, empty %g (want %g, %g)", w, (double)wline, (double)wempty,
              w == 256 ? 0.5 * whole : 0.5 * transit, 0.5 * transit);
        free(u); free(v); free(tb); free(rho); free(d); free(rb);
    }
}

/* The mixing's point (issue 20 point 2): a dense disc drawn into a large
 * faint square strains into a thin X (the stripe measure's peak); with
 * --subgrid the X stays smoke: its peak stripes fall, the mass stays and
 * the target is still reached. Fails with the mixing off (same run). */
static void test_mix_filaments(void)
{
    int w = 96;
    size_t n = (size_t)w * w;
    float *a = falloc(n), *b = falloc(n);
    soft_disc(w, w, 0.5f, 0.5f, 0.1f, a);
    const TestlibShape sq = {.domain = true, .width = 2.0 / w};
    testlib_box(b, w, w, &sq, 0.5, 0.5, 0.35, 0.35, 0.3);
    double peak[2] = {0, 0}, err[2] = {0, 0}, drift[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        SolverParams p;
        method_params_default(&p);
        p.subgrid = on ? 4.0f : 0.0f;
        char e[128];
        RefSolver *s = ref_create(w, w, &p, e, sizeof e);
        CHECK(s != NULL, "ref_create: %s", e);
        if (!s) break;
        ref_set_density(s, a);
        ref_set_target(s, b, true);
        double s0 = fidelity_stripes(ref_density(s), w, w), m0 = ref_mass(s);
        for (int k = 1; k <= 400; k++) {
            ref_step(s);
            if (k % 10 == 0) {
                double r = fidelity_stripe_ratio(fidelity_stripes(ref_density(s), w, w), s0);
                if (r > peak[on]) peak[on] = r;
                drift[on] = fmax(drift[on], fabs(ref_mass(s) / m0 - 1.0));
            }
        }
        err[on] = ref_error(s);
        ref_free(s);
    }
    CHECK(peak[1] < 0.8 * peak[0], "the mixing softens the X: stripes %.2f (off %.2f)", peak[1], peak[0]);
    CHECK(err[1] <= 0.03 && drift[1] <= 1e-5, "and still arrives: error %.3f, mass drift %.1e", err[1], drift[1]);
    printf("  info: blob -> square at %d^2, 400 steps: peak stripes %.2f with --subgrid 4, %.2f without; "
           "error %.3f / %.3f\n", w, peak[1], peak[0], err[1], err[0]);
    free(a);
    free(b);
}

/* ---------------------------------------------------------------------- */
/* 7. The whole solver                                                    */

static void test_solver_api(void)
{
    SolverParams p;
    method_params_default(&p);
    char err[128] = "";
    RefSolver *bad = ref_create(1, 64, &p, err, sizeof err);
    CHECK(bad == NULL && err[0] != '\0', "ref_create(1x64) should fail with a reason");
    ref_free(NULL);

    int w = 48, h = 32;
    size_t n = (size_t)w * h;
    RefSolver *s = ref_create(w, h, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create(48x32): %s", err);
    if (!s) return;
    CHECK(ref_width(s) == w && ref_height(s) == h, "ref size %dx%d", ref_width(s), ref_height(s));
    float *rho = falloc(n), *tgt = falloc(n);
    draw_disc(w, h, 0.5f, 0.5f, 0.2f, 0.02f, rho);
    ref_set_density(s, rho);
    CHECK(maxdiff(ref_density(s), rho, n) == 0.0f, "set_density did not copy");
    CHECK(maxabsf(ref_velocity_u(s), n) == 0.0f && maxabsf(ref_velocity_v(s), n) == 0.0f,
          "set_density did not zero the velocity");
    CHECK(ref_set_target(s, tgt, true) == -1, "an all-zero target should return -1");
    draw_box(w, h, 0.9f, 0.4f, 0.15f, 0.1f, 0.02f, tgt);
    for (size_t k = 0; k < n; k++) tgt[k] *= 0.37f;
    CHECK(ref_set_target(s, tgt, false) == 0, "set_target failed");
    CHECK(maxdiff(ref_target(s), tgt, n) == 0.0f, "set_target without mass match changed it");
    CHECK(ref_set_target(s, tgt, true) == 0, "set_target (mass match) failed");
    double mt = sumf(ref_target(s), n), mr = ref_mass(s);
    CHECK(fabs(mt / mr - 1.0) <= 1e-5, "mass match: target %g vs density %g", mt, mr);
    CHECK(fabs(mr / sumf(rho, n) - 1.0) <= 1e-12, "ref_mass %g vs sum %g", mr, sumf(rho, n));
    double er = ref_error(s), em = l1diff(rho, ref_target(s), n) / mt;
    CHECK(fabs(er / em - 1.0) <= 1e-6, "ref_error %g vs measured %g", er, em);
    float *tb = falloc(n);
    BlurSpec b;
    method_blur_spec(w, h, method_sigma(&p, 0), &b); /* the first step's width (coarse to fine) */
    ref_pass_blur(w, h, &b, ref_target(s), tb);
    CHECK(maxdiff(tb, ref_target_blur(s), n) <= 1e-6f, "ref_target_blur is not the blurred target");
    /* a non-square grid steps and stays sane */
    for (int k = 0; k < 50; k++) ref_step(s);
    CHECK(all_finite(ref_density(s), n) && fabs(ref_mass(s) / mr - 1.0) <= 1e-4 &&
          minf(ref_density(s), n) >= 0.0f, "48x32: 50 steps: mass %g (was %g), min %g",
          ref_mass(s), mr, minf(ref_density(s), n));
    ref_free(s);
    free(rho);
    free(tgt);
    free(tb);
}

static double region_mass(const float *rho, const unsigned char *mask, size_t n)
{
    double m = 0.0;
    for (size_t k = 0; k < n; k++)
        if (mask[k]) m += rho[k];
    return m;
}

/* The reference morph at 64² for 1500 steps, two solvers (72 s of this
 * file's 156 at -O2, 199 s under AddressSanitizer, measured): the method's
 * behaviour, which make test checks; the memory of the same step is
 * checked under the sanitizers by the shorter runs above and below. */
static void test_morph(void)
{
    CHECK_LONG_RUN("test_morph");
    SolverParams p;
    method_params_default(&p);
    int w = 64;
    size_t n = (size_t)w * w;
    char err[128];
    float *rho0 = falloc(n), *tgt = falloc(n), *cf = falloc(n);
    /* disjoint shapes, centres 0.34 apart. (With the blur kernel cut at 3 sigma,
     * shapes 0.51 apart, 0.3,0.32 -> 0.66,0.68, left most of the disc without
     * force: 44% of the error was left at step 1500; with the long tail, 7%.) */
    draw_disc(w, w, 0.38f, 0.40f, 0.14f, 0.015f, rho0);
    draw_box(w, w, 0.64f, 0.62f, 0.13f, 0.1f, 0.015f, tgt);

    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    RefSolver *sa = ref_create(w, w, &p, err, sizeof err); /* advection only */
    CHECK(s && sa, "ref_create: %s", err);
    if (!s || !sa) return;
    ref_set_density(s, rho0);
    CHECK(ref_set_target(s, tgt, true) == 0, "set_target");
    SolverParams pa = p;
    pa.gather = false;
    ref_set_params(sa, &pa);
    ref_set_density(sa, rho0);
    ref_set_target(sa, tgt, true);
    const float *ts = ref_target(s);

    /* the region between the shapes: neither source nor target holds smoke */
    unsigned char *between = calloc(n, 1);
    float pk0 = maxabsf(rho0, n), pkt = maxabsf(ts, n);
    for (size_t k = 0; k < n; k++) between[k] = rho0[k] < 0.01f * pk0 && ts[k] < 0.01f * pkt;

    double m0 = ref_mass(s), e0 = ref_error(s), ea0 = ref_error(sa);
    double tx, ty, cx, cy;
    centroid(w, w, ts, &tx, &ty);
    centroid(w, w, rho0, &cx, &cy);
    double dist0 = hypot(cx - tx, cy - ty), dprev = dist0;
    double worst_drift = 0.0, peak_speed = 0.0, max_div = 0.0, max_div_late = 0.0;
    double best_flow = 0.0, best_flow_cf = 0.0, best_diff = 0.0;
    int best_step = 0, non_monotone = 0;
    bool finite = true, positive = true;
    int steps = 1500;
    printf("  info: morph 64^2 disc -> box, default parameters\n");
    printf("  info:   step  error   centroid-dist  mass-between  (cross-fade)  max|u|  max_div\n");
    for (int k = 1; k <= steps; k++) {
        ref_step(s);
        ref_step(sa);
        const float *r = ref_density(s);
        double sp = fmax(maxabsf(ref_velocity_u(s), n), maxabsf(ref_velocity_v(s), n));
        peak_speed = fmax(peak_speed, sp);
        worst_drift = fmax(worst_drift, fabs(ref_mass(s) / m0 - 1.0));
        double md = ref_max_div(s);
        max_div = fmax(max_div, md);
        if (k > steps / 2) max_div_late = fmax(max_div_late, md);
        if (k % 25 == 0 || k == steps) {
            if (!all_finite(r, n) || !all_finite(ref_velocity_u(s), n) ||
                !all_finite(ref_velocity_v(s), n))
                finite = false;
            if (!(minf(r, n) >= 0.0f)) positive = false;
            /* the cross-fade (1-t) rho0 + t rho* with the same error */
            double e = ref_error(s), t = 1.0 - e / e0;
            if (t < 0.0) t = 0.0;
            for (size_t q = 0; q < n; q++) cf[q] = (float)((1.0 - t) * rho0[q] + t * ts[q]);
            double fm = region_mass(r, between, n) / m0;
            double fc = region_mass(cf, between, n) / m0;
            double diff = l1diff(r, cf, n) / sumf(ts, n);
            if (fm > best_flow) {
                best_flow = fm;
                best_flow_cf = fc;
                best_step = k;
            }
            best_diff = fmax(best_diff, diff);
            if (k % 150 == 0) {
                centroid(w, w, r, &cx, &cy);
                double dist = hypot(cx - tx, cy - ty);
                if (dist > dprev + 0.005) non_monotone++;
                dprev = dist;
                printf("  info:   %4d  %.4f  %.4f         %.4f        (%.4f)      %.4f  %.3g\n",
                       k, e, dist, fm, fc, sp, md);
            }
        }
    }
    double e1 = ref_error(s), ea1 = ref_error(sa);
    printf("  info: morph: error %.4f -> %.4f (%.1f%%), mass drift %.2e, peak speed %.4f, "
           "max_div %.3g (second half %.3g)\n", e0, e1, 100.0 * e1 / e0, worst_drift, peak_speed,
           max_div, max_div_late);
    printf("  info: morph: centroid distance %.4f -> %.4f; mass between the shapes %.1f%% at step "
           "%d (cross-fade %.2f%%); max L1 distance from the cross-fade %.3f\n", dist0, dprev,
           100.0 * best_flow, best_step, 100.0 * best_flow_cf, best_diff);
    printf("  info: advection alone (no gathering): error %.4f -> %.4f (%.1f%%)\n", ea0, ea1,
           100.0 * ea1 / ea0);
    CHECK(finite, "morph: non-finite field");
    CHECK(positive, "morph: negative density");
    /* measured: 2.3e-7 (float sums over 1500 steps) */
    CHECK(worst_drift <= 1e-5, "morph: mass drift %.3e (measured 2.3e-7)", worst_drift);
    CHECK(e1 <= 0.25 * e0, "morph: error %g -> %g (%.1f%%)", e0, e1, 100.0 * e1 / e0);
    /* max_div is the maximum over all the steps, the second half's included,
     * so only the second half's own bound can fail. Measured: 4.9e-4 over
     * the run (its first steps), 2.2e-5 in the second half, where the flow
     * has settled: the projection keeps up. */
    CHECK(max_div <= 0.5 * p.umax * w, "morph: max_div %g, bound umax/(2h) = %g", max_div,
          0.5 * p.umax * w);
    CHECK(max_div_late <= 1e-4, "morph: max_div in the second half %g (measured 2.2e-5, over the "
          "run %g)", max_div_late, max_div);
    CHECK(non_monotone == 0 && dprev <= 0.25 * dist0,
          "morph: centroid distance to target %g -> %g, %d non-monotone checkpoints", dist0,
          dprev, non_monotone);
    CHECK(peak_speed > 0.02, "morph: peak speed %g (the smoke should flow)", peak_speed);
    CHECK(best_flow >= 0.05 && best_flow >= 5.0 * best_flow_cf,
          "morph: smoke between the shapes %.3f of the mass (cross-fade %.3f): no flow", best_flow,
          best_flow_cf);
    CHECK(ea1 <= 0.7 * ea0, "morph, advection alone: error %g -> %g (%.1f%%)", ea0, ea1,
          100.0 * ea1 / ea0);

    /* keep going to 5000 steps: still finite, positive, conservative */
    for (int k = steps; k < 5000; k++) ref_step(s);
    const float *r = ref_density(s);
    double drift = fabs(ref_mass(s) / m0 - 1.0);
    CHECK(all_finite(r, n) && all_finite(ref_velocity_u(s), n) && all_finite(ref_velocity_v(s), n),
          "morph: non-finite after 5000 steps");
    CHECK(minf(r, n) >= 0.0f && drift <= 1e-4, "morph, 5000 steps: min %g, mass drift %.3e",
          minf(r, n), drift);
    CHECK(ref_error(s) <= e1 * 1.2, "morph, 5000 steps: error %g (at 1500: %g)", ref_error(s), e1);
    printf("  info: 5000 steps: error %.4f, mass drift %.2e, max_div %.3g\n", ref_error(s), drift,
           ref_max_div(s));
    free(between);
    ref_free(s);
    ref_free(sa);
    free(rho0);
    free(tgt);
    free(cf);
}

/* ---------------------------------------------------------------------- */
/* 8. Parameters                                                          */

/* Coarse to fine (--coarse): each step blurs the target and the smoke at
 * method_sigma of its step after the target was set, and a new target
 * starts the schedule again. */
static void test_coarse_start(void)
{
    SolverParams p;
    method_params_default(&p);
    p.coarse = 3.0f;
    int w = 64;
    size_t n = (size_t)w * w;
    char err[128];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    if (!s) return;
    float *rho = falloc(n), *tgt = falloc(n), *ref = falloc(n);
    draw_disc(w, w, 0.35f, 0.5f, 0.15f, 0.02f, rho);
    draw_disc(w, w, 0.65f, 0.5f, 0.1f, 0.02f, tgt);
    ref_set_density(s, rho);
    long end = lroundf(METHOD_COARSE_TIME / p.dt);
    for (int round = 0; round < 2; round++) {
        ref_set_target(s, tgt, true);
        int widths = 0, off = 0;
        float last = -1.0f;
        for (long k = 0; k <= end + 2; k++) {
            if (k > 0) ref_step(s);
            /* after k steps: the width of the last step run (none yet: the first's) */
            float sg = method_sigma(&p, k > 0 ? k - 1 : 0);
            BlurSpec b;
            method_blur_spec(w, w, sg, &b);
            ref_pass_blur(w, w, &b, ref_target(s), ref);
            off += maxdiff(ref, ref_target_blur(s), n) > 1e-6f;
            widths += sg != last;
            last = sg;
        }
        CHECK(off == 0, "round %d: the target blur was off its step's width at %d steps", round, off);
        CHECK(widths >= 5 && last == p.sigma, "round %d: %d widths, the last %g", round, widths, (double)last);
    }
    /* the schedule changes the step: the same step at coarse 1 differs */
    SolverParams q = p;
    q.coarse = 1.0f;
    RefSolver *a = ref_create(w, w, &p, err, sizeof err), *c = ref_create(w, w, &q, err, sizeof err);
    if (a && c) {
        ref_set_density(a, rho);
        ref_set_density(c, rho);
        ref_set_target(a, tgt, true);
        ref_set_target(c, tgt, true);
        for (int k = 0; k < 10; k++) ref_step(a), ref_step(c);
        CHECK(maxdiff(ref_velocity_u(a), ref_velocity_u(c), n) > 1e-4f, "coarse 3 and 1 step alike");
    }
    ref_free(a);
    ref_free(c);
    ref_free(s);
    free(rho);
    free(tgt);
    free(ref);
}

static void test_params(void)
{
    SolverParams p;
    method_params_default(&p);
    CHECK(method_params_check(&p) == NULL, "defaults rejected: %s", method_params_check(&p));
    struct {
        const char *name, *word;
        SolverParams q;
    } bad[16];
    int nb = 0;
#define BAD(field, value, w)                                                \
    do {                                                                    \
        bad[nb].q = p;                                                      \
        bad[nb].q.field = (value);                                          \
        bad[nb].name = #field " = " #value;                                 \
        bad[nb].word = (w);                                                 \
        nb++;                                                               \
    } while (0)
    BAD(dt, 0.0f, "dt");
    BAD(dt, NAN, "dt");
    BAD(dt, -0.01f, "dt");
    BAD(vf, -1.0f, "vf");
    BAD(sigma, 0.0f, "sigma");
    BAD(jacobi, -1, "jacobi");
    BAD(vcycles, -1, "vcycles");
    BAD(umax, 0.0f, "umax");
    BAD(gather_iters, -1, "gather-iters");
    BAD(vg, NAN, "vg");
    BAD(eps, 0.0f, "eps");
#undef BAD
    {
        SolverParams q;
        method_params_default(&q);
        q.jacobi = 0;
        q.vcycles = 0;
        const char *m = method_params_check(&q);
        CHECK(m != NULL && strstr(m, "no projection") != NULL, "jacobi 0 + vcycles 0 accepted");
    }
    for (int k = 0; k < nb; k++) {
        const char *m = method_params_check(&bad[k].q);
        CHECK(m != NULL && strstr(m, bad[k].word) != NULL, "params %s: check says \"%s\"",
              bad[k].name, m ? m : "(accepted)");
    }

    /* ref_set_params with a new sigma re-blurs the target; sizes of the
     * coarse grid change (factor 1 -> 4 -> 2); each at its own width, not
     * the coarse start's (that schedule: test_coarse_start) */
    p.coarse = 1.0f;
    int w = 64;
    size_t n = (size_t)w * w;
    char err[128];
    RefSolver *s = ref_create(w, w, &p, err, sizeof err);
    CHECK(s != NULL, "ref_create: %s", err);
    if (!s) return;
    float *rho = falloc(n), *tgt = falloc(n), *tb0 = falloc(n), *ref = falloc(n);
    draw_disc(w, w, 0.35f, 0.5f, 0.15f, 0.02f, rho);
    draw_disc(w, w, 0.65f, 0.5f, 0.1f, 0.02f, tgt);
    ref_set_density(s, rho);
    ref_set_target(s, tgt, true);
    memcpy(tb0, ref_target_blur(s), n * sizeof(float));
    double m0 = ref_mass(s);
    const float sigmas[] = {0.01f, 0.2f, 0.5f * (0.01f + 0.2f), p.sigma}; /* ends at the default */
    for (int q = 0; q < 4; q++) {
        SolverParams p2 = p;
        p2.sigma = sigmas[q];
        ref_set_params(s, &p2);
        CHECK(ref_params(s)->sigma == sigmas[q], "ref_params sigma %g", ref_params(s)->sigma);
        BlurSpec b;
        method_blur_spec(w, w, sigmas[q], &b);
        ref_pass_blur(w, w, &b, ref_target(s), ref);
        float d = maxdiff(ref, ref_target_blur(s), n), d0 = maxdiff(tb0, ref_target_blur(s), n);
        CHECK(d <= 1e-6f, "set_params sigma %g: target blur off its own blur by %g", sigmas[q], d);
        if (sigmas[q] != p.sigma)
            CHECK(d0 >= 1e-3f, "set_params sigma %g: target blur unchanged (max change %g)",
                  sigmas[q], d0);
        for (int k = 0; k < 30; k++) ref_step(s);
        const float *r = ref_density(s);
        CHECK(all_finite(r, n) && minf(r, n) >= 0.0f && fabs(ref_mass(s) / m0 - 1.0) <= 1e-4,
              "after set_params sigma %g: mass %g (was %g), min %g", sigmas[q], ref_mass(s), m0,
              minf(r, n));
    }
    /* back at the default sigma: the same blur as at the start */
    CHECK(maxdiff(tb0, ref_target_blur(s), n) <= 1e-7f,
          "set_params back to sigma %g: target blur differs by %g", p.sigma,
          maxdiff(tb0, ref_target_blur(s), n));
    ref_free(s);
    free(rho);
    free(tgt);
    free(tb0);
    free(ref);
}

/* Multigrid: V-cycles reduce the divergence of a random field by about the
 * same factor at every grid size (what Jacobi alone cannot do). Measured by
 * step_projection on the field the projection gets; before, with a field in
 * ±0.5 that the force pass clamped to umax first, the factors read about
 * twice as high. */
static double mg_reduction(int n, int vcycles)
{
    bool ok = false;
    double r = step_projection(n, vcycles, 0, 99u, &ok);
    CHECK(ok, "%d V-cycles at %d^2: non-finite velocity or non-zero wall faces", vcycles, n);
    return r;
}

static void test_multigrid(void)
{
    double r64 = mg_reduction(64, 4), r256 = mg_reduction(256, 4), r2 = mg_reduction(256, 2);
    printf("  info: 4 V-cycles reduce max|div| of a random field %.0fx at 64^2, %.0fx at 256^2; "
           "2 V-cycles %.0fx at 256^2\n", r64, r256, r2);
    CHECK(r64 >= 100.0 && r256 >= 100.0, "4 V-cycles: only %.0fx / %.0fx", r64, r256);
    CHECK(r256 >= 0.5 * r64, "multigrid is not resolution independent: %.0fx at 64^2, %.0fx at 256^2",
          r64, r256);
    CHECK(r2 >= 20.0, "2 V-cycles at 256^2: only %.0fx", r2);
}

/* The drift tests' fixture: a w x h grid with the target everywhere (ρ̃* =
 * 1, the density scale 1), the blurred smoke at the target's level over all
 * of it (coverage 1: the balance drift at full strength, and no haze), the
 * log-ratio drift off and the balance drift at v_w = 1 with cap wmax;
 * drift_ramp sets φ so that the raw balance drift is g on both axes, along
 * +x and +y. */
typedef struct {
    int w, h;
    SolverParams p;
    BlurSpec bs;
    float *rbc, *tb, *phi, *wu, *wv;
} DriftFixture;

static void drift_fixture(DriftFixture *f, int w, int h, float wmax)
{
    size_t n = (size_t)w * h;
    f->w = w, f->h = h;
    method_params_default(&f->p);
    f->p.vk = 0.0f;
    f->p.vw = 1.0f;
    f->p.wmax = wmax;
    method_blur_spec(w, h, f->p.sigma, &f->bs);
    size_t nc = (size_t)f->bs.cw * f->bs.ch;
    f->rbc = falloc(nc);
    f->tb = falloc(n), f->phi = falloc(n), f->wu = falloc(n), f->wv = falloc(n);
    for (size_t k = 0; k < n; k++) f->tb[k] = 1.0f;
    for (size_t k = 0; k < nc; k++) f->rbc[k] = 1.0f;
}

static void drift_ramp(DriftFixture *f, float g)
{
    float hh = 1.0f / (float)f->w;
    for (int j = 0; j < f->h; j++)
        for (int i = 0; i < f->w; i++) f->phi[(size_t)j * f->w + i] = g * hh * (float)(i + j); /* s = 1, vw = 1 */
}

static void drift_fixture_free(DriftFixture *f)
{
    free(f->rbc); free(f->tb); free(f->phi); free(f->wu); free(f->wv);
}

/* The drift's speed cap bounds the speed vector, not each component: a
 * drift along the diagonal at 10x the cap comes out at cap/√2 per component
 * (capping each component alone gave the full cap on both, √2 times too
 * fast along the diagonals, and rays in compressing smoke). Below the cap the
 * speeds pass unchanged. */
static void test_drift_cap_isotropic(void)
{
    DriftFixture f;
    drift_fixture(&f, 32, 32, 0.2f);
    int w = f.w, h = f.h;
    const SolverParams *pp = &f.p;
    for (int pass = 0; pass < 2; pass++) {
        /* raw speed vw/s·∂φ = g on both axes: 10x the cap, then half of it */
        float g = pass == 0 ? 10.0f * pp->wmax : 0.5f * pp->wmax / sqrtf(2.0f);
        drift_ramp(&f, g);
        ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, NULL, NULL, f.wu, f.wv);
        float want = pass == 0 ? pp->wmax / sqrtf(2.0f) : g, worst = 0.0f;
        for (int j = 2; j < h - 2; j++)
            for (int i = 2; i < w - 2; i++) {
                worst = fmaxf(worst, fabsf(f.wu[(size_t)j * w + i] - want));
                worst = fmaxf(worst, fabsf(f.wv[(size_t)j * w + i] - want));
            }
        printf("  info: diagonal drift %s the cap: faces %.5f, want %.5f (worst |diff| %.2e)\n",
               pass == 0 ? "above" : "below", (double)f.wu[(size_t)16 * w + 16], (double)want,
               (double)worst);
        CHECK(worst <= 1e-5f * pp->wmax, "drift cap (%s): worst face off by %g from %g",
              pass == 0 ? "above" : "below", (double)worst, (double)want);
    }
    drift_fixture_free(&f);
}

/* The drift adds to the flow within the flow's limit (drift_flow_limit):
 * where the projected flow is within umax, |flow + drift| ≤ umax; where it
 * runs faster (the transport carries it as it is, up to
 * method_transport_cap), the drift can only slow it, never push it further,
 * and the flow itself is not cut back to umax (the transport used to clamp
 * it there, which made it compressible). A drift of 10x the cap along +x
 * and +y (the vector capped at wmax = umax: umax/√2 a component) on a flow
 * of 1.3 umax along +x and 0.5 umax along +y: the x faces stay at 1.3 umax,
 * the y faces, which would reach 1.21 umax, are held at umax; a drift the
 * other way slows the fast faces. With the old limit (the flow clamped at
 * umax first) the x faces read umax. */
static void test_drift_flow_limit(void)
{
    SolverParams d;
    method_params_default(&d);
    DriftFixture f;
    drift_fixture(&f, 32, 32, d.umax); /* the drift alone may reach the limit */
    int w = f.w, h = f.h;
    size_t n = (size_t)w * h;
    const SolverParams *pp = &f.p;
    float umax = pp->umax, *u = falloc(n), *v = falloc(n);
    drift_ramp(&f, 10.0f * pp->wmax); /* the drift pushes along +x and +y */
    for (size_t k = 0; k < n; k++) {
        u[k] = 1.3f * umax; /* faster than the limit, along the push */
        v[k] = 0.5f * umax; /* within it, along the push */
    }
    ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, u, v, f.wu, f.wv);
    float worst_u = 0.0f, worst_v = 0.0f;
    for (int j = 2; j < h - 2; j++)
        for (int i = 2; i < w - 2; i++) {
            size_t k = (size_t)j * w + i;
            worst_u = fmaxf(worst_u, fabsf(f.wu[k] - 1.3f * umax)); /* not pushed further, not cut */
            worst_v = fmaxf(worst_v, fabsf(f.wv[k] - umax));        /* 0.5 umax + drift, held at umax */
        }
    printf("  info: drift on a flow of 1.3 umax (x) and 0.5 umax (y): faces %.4f and %.4f, umax %.2f\n",
           (double)f.wu[(size_t)16 * w + 16], (double)f.wv[(size_t)16 * w + 16], (double)umax);
    CHECK(worst_u <= 1e-6f, "a face faster than umax: the drift changed it by up to %g (pushed or cut)",
          (double)worst_u);
    CHECK(worst_v <= 1e-6f, "a face within umax: flow + drift off umax by %g", (double)worst_v);
    /* a drift against the fast flow slows it */
    drift_ramp(&f, -10.0f * pp->wmax);
    ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, u, v, f.wu, f.wv);
    float c = f.wu[(size_t)16 * w + 16];
    CHECK(c < 1.3f * umax - 0.1f * umax && c >= -umax - 1e-6f,
          "a drift against a face faster than umax slows it within the limit: %g", (double)c);
    free(u); free(v);
    drift_fixture_free(&f);
}

/* The limit reads the flow's local statistics (METHOD_FLOW_ENV_K,
 * twenty-fifth round): its blurred mean m and spread s. On small swirls, a
 * shear u = ±A alternating row by row (its blurred mean about 0, its spread
 * A), a drift along +x at 10x the cap (wmax = umax) is held at umax − K·A
 * on every face, to 1% of A: the drift keeps next to no trace of the
 * swirls, and no face's flow + drift exceeds umax by more. Read from each face's own flow, it was cut to
 * umax − f where the swirl ran along it and left whole where it ran against
 * it: a drift of the swirls' pattern, which compresses (wide-fog's chevron
 * ridges, docs/FIDELITY.md). Near a lone fast face the drift is held back,
 * far from it not, and the face itself stays within the transport's cap; a
 * drift against the stream is held by the lower bound. */
static void test_drift_flow_envelope(void)
{
    SolverParams d;
    method_params_default(&d);
    DriftFixture f;
    drift_fixture(&f, 32, 32, d.umax);
    int w = f.w, h = f.h;
    size_t n = (size_t)w * h;
    const SolverParams *pp = &f.p;
    float umax = pp->umax, a = 0.4f * umax, *u = falloc(n), *v = falloc(n);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            f.phi[(size_t)j * w + i] = 10.0f * pp->wmax * (float)i / (float)w; /* along +x only */
            u[(size_t)j * w + i] = j % 2 ? -a : a;
            v[(size_t)j * w + i] = 0.0f;
        }
    ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, u, v, f.wu, f.wv);
    float lo = 1e9f, hi = -1e9f, top = -1e9f, want = umax - METHOD_FLOW_ENV_K * a;
    for (int j = 4; j < h - 4; j++)
        for (int i = 4; i < w - 4; i++) {
            size_t k = (size_t)j * w + i;
            float added = f.wu[k] - u[k];
            lo = fminf(lo, added);
            hi = fmaxf(hi, added);
            top = fmaxf(top, f.wu[k]);
        }
    printf("  info: drift on swirls of ±%.3f: added %.5f..%.5f, fastest face %.5f (umax %.2f)\n", (double)a,
           (double)lo, (double)hi, (double)top, (double)umax);
    CHECK(hi - lo <= 0.01f * a, "the drift on small swirls varies with them: %g..%g", (double)lo, (double)hi);
    CHECK(fabsf(lo - want) <= 0.01f * a, "the drift on swirls of ±%g: %g, want umax - K·%g = %g", (double)a,
          (double)lo, (double)a, (double)want);
    CHECK(top <= umax + 0.01f * a, "flow + drift %g over umax %g", (double)top, (double)umax);
    /* a lone fast face: the drift around it held back, far from it not */
    for (size_t k = 0; k < n; k++) u[k] = 0.0f;
    size_t c = (size_t)16 * w + 16;
    u[c] = 0.9f * umax;
    ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, u, v, f.wu, f.wv);
    printf("  info: a lone face at 0.9 umax: itself %.5f, its neighbour's drift %.5f, a far face's %.5f\n",
           (double)f.wu[c], (double)f.wu[c + 1], (double)f.wu[c + 12]);
    /* the spike itself outruns its envelope, but never the transport's cap
     * that the substeps are planned for: here 0.9 umax plus the drift its
     * envelope lets through (its neighbours' is 0.76 umax) would pass 1.5 umax */
    float tcap = method_transport_cap(pp);
    CHECK(fabsf(f.wu[c] - tcap) <= 1e-6f, "the lone face at 0.9 umax: %g, want the cap %g", (double)f.wu[c],
          (double)tcap);
    CHECK(f.wu[c + 1] < umax - 0.05f * umax && f.wu[c + 1] > 0.0f,
          "next to a lone face at 0.9 umax the drift is held back: %g (umax %g)", (double)f.wu[c + 1],
          (double)umax);
    CHECK(fabsf(f.wu[c + 12] - umax) <= 1e-6f, "far from it the drift is whole: %g, want umax",
          (double)f.wu[c + 12]);
    /* the drift against the stream: held by the lower bound, as much */
    float along = f.wu[c + 1];
    u[c] = -0.9f * umax;
    for (size_t k = 0; k < n; k++) f.phi[k] = -f.phi[k];
    ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, u, v, f.wu, f.wv);
    CHECK(fabsf(f.wu[c + 1] + along) <= 1e-6f && fabsf(f.wu[c + 12] + umax) <= 1e-6f,
          "a drift along −x by a lone face at −0.9 umax: %g and %g, want %g and %g", (double)f.wu[c + 1],
          (double)f.wu[c + 12], (double)-along, (double)-umax);
    free(u); free(v);
    drift_fixture_free(&f);
}

/* The balance drift waits for the smoke (METHOD_DRIFT_COVER): its strength
 * is c² of the coverage c = Σ ρ̃*·min(1, ρ̃/(k·ρ̃*)) ÷ Σ ρ̃* over the coarse
 * cells. No blurred smoke on the target: no balance drift; a quarter of
 * the target's level or more everywhere: all of it; an eighth: c = 1/2, a
 * quarter of the drift; the target's left half reached: 1/2; no target: 1.
 * On a 256² grid (coarse factor f > 1) ρ̃* is read at each coarse cell's
 * centre cell f·c + f/2: a target only in those cells is all of it. */
static void test_drift_cover(void)
{
    DriftFixture f;
    drift_fixture(&f, 32, 32, 10.0f);
    int w = f.w, h = f.h;
    size_t nc = (size_t)f.bs.cw * f.bs.ch, n = (size_t)w * h;
    const SolverParams *pp = &f.p;
    float g = 0.01f, k = METHOD_DRIFT_COVER; /* below the cap */
    drift_ramp(&f, g);
    const float levels[] = {0.0f, k, 2.0f * k, 0.5f * k};
    const float want_c[] = {0.0f, 1.0f, 1.0f, 0.5f};
    for (int q = 0; q < 4; q++) {
        for (size_t c = 0; c < nc; c++) f.rbc[c] = levels[q];
        float cov = ref_drift_cover(w, h, &f.bs, f.rbc, f.tb);
        ref_pass_drift_vel(w, h, pp, &f.bs, f.phi, f.rbc, f.tb, 1.0f, 1.0f, NULL, NULL, f.wu, f.wv);
        /* m_φ = 1 at every level here (m = 1: ρ̃* = 1 is above the mobility's scale) */
        float face = f.wu[(size_t)16 * w + 16], want = g * want_c[q] * want_c[q];
        printf("  info: coverage at rho~ = %.4f: %.4f (want %.2f), balance drift %.6f (want %.6f)\n",
               (double)levels[q], (double)cov, (double)want_c[q], (double)face, (double)want);
        CHECK(fabsf(cov - want_c[q]) < 1e-6f, "coverage at %g: %g, want %g", (double)levels[q], (double)cov,
              (double)want_c[q]);
        CHECK(fabsf(face - want) < 1e-4f * g, "balance drift at coverage %g: %g, want %g", (double)want_c[q],
              (double)face, (double)want);
    }
    /* the left half of the coarse cells reached */
    for (int cj = 0; cj < f.bs.ch; cj++)
        for (int ci = 0; ci < f.bs.cw; ci++) f.rbc[(size_t)cj * f.bs.cw + ci] = ci < f.bs.cw / 2 ? 1.0f : 0.0f;
    float cov = ref_drift_cover(w, h, &f.bs, f.rbc, f.tb);
    CHECK(fabsf(cov - 0.5f) < 1e-6f, "the target's left half reached: %g, want 0.5", (double)cov);
    /* no target: 1 */
    for (size_t c = 0; c < n; c++) f.tb[c] = 0.0f;
    cov = ref_drift_cover(w, h, &f.bs, f.rbc, f.tb);
    CHECK(cov == 1.0f, "no target: %g, want 1", (double)cov);
    drift_fixture_free(&f);

    /* 256²: the blur's factor f > 1 (method_blur_spec), ρ̃* read at cell f·c + f/2 */
    BlurSpec bs;
    SolverParams d;
    method_params_default(&d);
    int W = 256;
    method_blur_spec(W, W, d.sigma, &bs);
    int fc = bs.factor;
    CHECK(fc > 1, "256²'s blur factor: %d, want more than 1 (the test reads its centre cells)", fc);
    float *tb = falloc((size_t)W * W), *rbc = falloc((size_t)bs.cw * bs.ch);
    for (int j = 0; j < W; j++)
        for (int i = 0; i < W; i++) tb[(size_t)j * W + i] = (i % fc == fc / 2 && j % fc == fc / 2) ? 1.0f : 0.0f;
    for (size_t c = 0; c < (size_t)bs.cw * bs.ch; c++) rbc[c] = 0.0f;
    rbc[0] = 1.0f; /* one coarse cell of cw·ch reached */
    cov = ref_drift_cover(W, W, &bs, rbc, tb);
    float want = 1.0f / (float)(bs.cw * bs.ch);
    CHECK(fabsf(cov - want) < 1e-6f, "256²: one coarse cell of %d reached: %g, want %g", bs.cw * bs.ch,
          (double)cov, (double)want);
    free(tb);
    free(rbc);
}

/* Vorticity confinement (ref_swirl_force, the force pass's swirl term):
 * none without vorticity (a uniform flow, no flow) nor at the grid's own
 * scale (smoothed away, METHOD_SWIRL_SMOOTH); on a smooth vortex it
 * spins the core up (the curl at the centre grows) and leaves the mean
 * velocity alone, by the same amount either way round. */
static float centre_curl(int w, const float *u, const float *v)
{
    int c = w / 2; /* the corner at the grid's centre */
    return (v[c * w + c] - v[c * w + c - 1]) - (u[c * w + c] - u[(c - 1) * w + c]);
}

static void test_swirl(void)
{
    int w = 48;
    size_t n = (size_t)w * w;
    float hh = 1.0f / (float)w;
    float *u = falloc(n), *v = falloc(n), *u2 = falloc(n), *v2 = falloc(n);
    SolverParams p;
    method_params_default(&p);
    p.vf = 0.0f; /* the swirl term alone */
    p.vd = 0.0f;
    p.umax = 100.0f;
    BlurSpec bs;
    method_blur_spec(w, w, p.sigma, &bs);
    float *zero = falloc(n), *coarse = falloc((size_t)bs.cw * bs.ch);
    for (size_t k = 0; k < n; k++) zero[k] = 1.0f;
    /* no flow, and a uniform flow: no force */
    float worst = 0.0f;
    const float *curl = curl_of(w, w, u, v);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < w; i++)
            for (int ax = 0; ax < 2; ax++) worst = fmaxf(worst, fabsf(ref_swirl_force(w, w, curl, i, j, ax, 1.0f)));
    for (int j = 0; j < w; j++)
        for (int i = 1; i < w; i++) u[(size_t)j * w + i] = 0.1f;
    /* (the box's walls stop the flow: vorticity there, spread by the
     * smoothing METHOD_SWIRL_SMOOTH cells in, so the faces beyond are checked) */
    curl = curl_of(w, w, u, v);
    int m = METHOD_SWIRL_SMOOTH + 3;
    for (int j = m; j < w - m; j++)
        for (int i = m; i < w - m; i++)
            for (int ax = 0; ax < 2; ax++) worst = fmaxf(worst, fabsf(ref_swirl_force(w, w, curl, i, j, ax, 1.0f)));
    CHECK(worst == 0.0f, "no vorticity, yet a swirl force of %g", worst);

    /* vorticity at the grid's own scale (a shear that changes sign every
     * row: the rim teeth's seed) is not confined: the smoothing takes it
     * out, where the raw corner curl would drive it at full strength */
    for (int j = 0; j < w; j++)
        for (int i = 1; i < w; i++) u[(size_t)j * w + i] = (j % 2 ? 0.05f : -0.05f) * (1.0f + 0.01f * (float)i);
    float *raw = falloc((size_t)(w + 1) * (w + 1));
    ref_pass_curl(w, w, u, v, raw);
    curl = curl_of(w, w, u, v);
    float fs = 0.0f, fr = 0.0f;
    for (int j = m; j < w - m; j++)
        for (int i = m; i < w - m; i++)
            for (int ax = 0; ax < 2; ax++) {
                fs = fmaxf(fs, fabsf(ref_swirl_force(w, w, curl, i, j, ax, 1.0f)));
                fr = fmaxf(fr, fabsf(ref_swirl_force(w, w, raw, i, j, ax, 1.0f)));
            }
    CHECK(fr > 1.0f && fs < 1e-3f * fr, "grid-scale vorticity confined: %g smoothed, %g raw", (double)fs,
          (double)fr);
    printf("  info: a shear changing sign every row: confinement %.3g smoothed, %.3g raw\n", (double)fs,
           (double)fr);
    free(raw);
    memset(u, 0, n * sizeof *u);
    for (int sign = -1; sign <= 1; sign += 2) {
        /* a Gaussian vortex at the centre: u = -s(y-c)g, v = s(x-c)g on the faces */
        for (int j = 0; j < w; j++)
            for (int i = 0; i < w; i++) {
                float xu = (float)i - 0.5f * w, yu = (float)j + 0.5f - 0.5f * w;
                float xv = (float)i + 0.5f - 0.5f * w, yv = (float)j - 0.5f * w;
                u[(size_t)j * w + i] = i > 0 ? -sign * 0.02f * yu * expf(-(xu * xu + yu * yu) / 50.0f) : 0.0f;
                v[(size_t)j * w + i] = j > 0 ? sign * 0.02f * xv * expf(-(xv * xv + yv * yv) / 50.0f) : 0.0f;
            }
        float c0 = centre_curl(w, u, v);
        p.swirl = 5.0f;
        ref_pass_force(w, w, &p, &bs, coarse, zero, NULL, 0.0f, 0.0f, curl_of(w, w, u, v), u, v, u2, v2);
        float c1 = centre_curl(w, u2, v2);
        double mu = 0.0, mv = 0.0;
        for (size_t k = 0; k < n; k++) mu += u2[k] - u[k], mv += v2[k] - v[k];
        CHECK(sign * c0 > 0.0f && sign * (c1 - c0) > 1e-4f * fabsf(c0),
              "swirl %+d: the core's curl %g -> %g (it should grow)", sign, c0, c1);
        CHECK(fabs(mu) < 1e-4 && fabs(mv) < 1e-4, "swirl: the mean velocity moved (%g, %g)", mu, mv);
        printf("  info: vortex %+d: centre curl %.5f -> %.5f with swirl 5 (one step at 48^2)\n", sign, c0, c1);
    }
    (void)hh;
    free(u);
    free(v);
    free(u2);
    free(v2);
    free(zero);
    free(coarse);
}

int main(void)
{
    RUN(test_multigrid);
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_blur_spec);
    RUN(test_blur_1d_plain);
    RUN(test_blur_constant_and_mean);
    RUN(test_sample_coarse_smooth);
    RUN(test_blur_delta);
    RUN(test_blur_resolution);
    RUN(test_force_direction);
    RUN(test_force_walls_clamp_damping);
    RUN(test_swirl);
    RUN(test_projection_random);
    RUN(test_projection_gradient_and_curl);
    RUN(test_projection_defaults);
    RUN(test_advect_velocity);
    RUN(test_advect_density);
    RUN(test_advect_diagonal);
    RUN(test_morph_diagonal);
    RUN(test_travel_keeps_density);
    RUN(test_force_noise_faces);
    RUN(test_sharp_force);
    RUN(test_force_noise_ring);
    RUN(test_gathering);
    RUN(test_gathering_step);
    RUN(test_gather_substeps);
    RUN(test_mix_passes);
    RUN(test_mix_fine);
    RUN(test_mix_filaments);
    RUN(test_solver_api);
    RUN(test_morph);
    RUN(test_params);
    RUN(test_coarse_start);
    RUN(test_drift_cap_isotropic);
    RUN(test_drift_flow_limit);
    RUN(test_drift_flow_envelope);
    RUN(test_drift_cover);
    return check_done();
}
