/* cpu_solver: the discrete morph step on the CPU; see cpu_solver.h. */
#include "cpu_solver.h"
#include "log.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */

#define IDX(i, j) ((size_t)(j) * (size_t)w + (size_t)(i))

static inline int clampi(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }
static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
/* A sample position clamped into the lattice, NaN to lo: a non-finite
 * velocity must never index outside an array (issue 21: it crashed). */
static inline float clampc(float x, float lo, float hi) { return x >= lo ? (x <= hi ? x : hi) : lo; }

/* Face velocities with the closed-box walls: u at i == 0 and i == w is 0. */
static inline float U(int w, int h, const float *u, int i, int j)
{
    (void)h;
    return (i <= 0 || i >= w) ? 0.0f : u[IDX(i, j)];
}
static inline float V(int w, int h, const float *v, int i, int j)
{
    return (j <= 0 || j >= h) ? 0.0f : v[IDX(i, j)];
}

static inline float cell_size(int w, int h) { return 1.0f / (float)(w < h ? w : h); }

/* ---------------------------------------------------------------------- */
/* Blur                                                                   */

void ref_pass_downsample(int w, int h, const BlurSpec *spec, const float *in, float *coarse)
{
    int f = spec->factor;
    for (int J = 0; J < spec->ch; J++)
        for (int I = 0; I < spec->cw; I++) {
            float sum = 0.0f;
            int n = 0;
            for (int j = J * f; j < J * f + f && j < h; j++)
                for (int i = I * f; i < I * f + f && i < w; i++) {
                    sum += in[IDX(i, j)];
                    n++;
                }
            coarse[(size_t)J * spec->cw + I] = sum / (float)n;
        }
}

/* The blur along one line of n samples, read from c with a stride: the line
 * is copied with its ends repeated r times (the clamped border) into pad,
 * then every tap reads pad straight. The taps are summed in the order 0, ±1,
 * ±2 …, as the clamped loop without pad (and the shader) does. */
static void blur_line(const float *wt, int r, int n, const float *c, size_t stride, float *pad, float *o)
{
    for (int q = -r; q < n + r; q++) pad[q + r] = c[(size_t)clampi(q, 0, n - 1) * stride];
    int q = 0;
    for (; q + 8 <= n; q += 8) { /* eight outputs at once: eight sums in flight, each in its own order */
        const float *m = pad + q + r;
        float acc[8];
        for (int e = 0; e < 8; e++) acc[e] = wt[0] * m[e];
        for (int k = 1; k <= r; k++)
            for (int e = 0; e < 8; e++) acc[e] += wt[k] * (m[e - k] + m[e + k]);
        for (int e = 0; e < 8; e++) o[(size_t)(q + e) * stride] = acc[e];
    }
    for (; q < n; q++) {
        const float *m = pad + q + r;
        float acc = wt[0] * m[0];
        for (int k = 1; k <= r; k++) acc += wt[k] * (m[-k] + m[k]);
        o[(size_t)q * stride] = acc;
    }
}

void ref_pass_blur_1d(const BlurSpec *spec, int axis, const float *in, float *out)
{
    int cw = spec->cw, ch = spec->ch, r = spec->radius;
    int n = axis == 0 ? cw : ch, lines = axis == 0 ? ch : cw; /* along the blur, and across */
    size_t stride = axis == 0 ? 1 : (size_t)cw, step = axis == 0 ? (size_t)cw : 1;
    if (n <= REF_BLUR_LINE_MAX) {
        float pad[REF_BLUR_LINE_MAX + 2 * (METHOD_BLUR_TAPS - 1)];
        for (int l = 0; l < lines; l++) blur_line(spec->weights, r, n, in + l * step, stride, pad, out + l * step);
        return;
    }
    for (int l = 0; l < lines; l++)
        for (int q = 0; q < n; q++) {
            const float *c = in + l * step;
            float acc = spec->weights[0] * c[(size_t)q * stride];
            for (int k = 1; k <= r; k++)
                acc += spec->weights[k] *
                       (c[(size_t)clampi(q - k, 0, n - 1) * stride] + c[(size_t)clampi(q + k, 0, n - 1) * stride]);
            out[l * step + (size_t)q * stride] = acc;
        }
}

/* The uniform cubic B-spline's four weights at t ∈ [0, 1) (sim.glsl's
 * bspline_w the same). */
static inline void bspline_w(float t, float wt[4])
{
    float t2 = t * t, t3 = t2 * t, u = 1.0f - t;
    wt[0] = u * u * u / 6.0f;
    wt[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) / 6.0f;
    wt[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) / 6.0f;
    wt[3] = t3 / 6.0f;
}

/* Where a fine coordinate x reads one axis of the coarse lattice (n coarse
 * cells): its first of four cells (factor > 1: the B-spline's) and their
 * weights, or its two cells (bilinear) and the second's weight in w[0]. A
 * position is one per axis, so that a row of samples shares its y and
 * several fields sampled at one position share both (ref_sample_coarse,
 * drift_flow_limit). */
typedef struct {
    int i0, i1;
    float w[4];
} CoarseAxis;

static inline void coarse_axis(const BlurSpec *spec, float x, int n, CoarseAxis *a)
{
    float f = (float)spec->factor;
    if (spec->factor > 1) {
        float cx = x / f - 0.5f;
        a->i0 = (int)floorf(cx);
        a->i1 = a->i0; /* unused */
        bspline_w(cx - (float)a->i0, a->w);
        return;
    }
    float cx = clampc(x / f - 0.5f, 0.0f, (float)(n - 1));
    a->i0 = (int)floorf(cx);
    a->i1 = a->i0 + 1 < n ? a->i0 + 1 : a->i0;
    a->w[0] = cx - (float)a->i0;
}

static inline float coarse_read(const BlurSpec *spec, const CoarseAxis *ax, const CoarseAxis *ay,
                                const float *coarse)
{
    size_t cw = (size_t)spec->cw;
    if (spec->factor > 1) {
        float s = 0.0f;
        for (int b = 0; b < 4; b++) {
            int jj = ay->i0 - 1 + b;
            jj = jj < 0 ? 0 : (jj > spec->ch - 1 ? spec->ch - 1 : jj);
            float r = 0.0f;
            for (int a = 0; a < 4; a++) {
                int ii = ax->i0 - 1 + a;
                ii = ii < 0 ? 0 : (ii > spec->cw - 1 ? spec->cw - 1 : ii);
                r += ax->w[a] * coarse[(size_t)jj * cw + (size_t)ii];
            }
            s += ay->w[b] * r;
        }
        return s;
    }
    size_t i0 = (size_t)ax->i0, i1 = (size_t)ax->i1, j0 = (size_t)ay->i0, j1 = (size_t)ay->i1;
    float tx = ax->w[0], ty = ay->w[0];
    float a = coarse[j0 * cw + i0] + tx * (coarse[j0 * cw + i1] - coarse[j0 * cw + i0]);
    float b = coarse[j1 * cw + i0] + tx * (coarse[j1 * cw + i1] - coarse[j1 * cw + i0]);
    return a + ty * (b - a);
}

float ref_sample_coarse(const BlurSpec *spec, const float *coarse, float x, float y)
{
    CoarseAxis ax, ay;
    coarse_axis(spec, x, spec->cw, &ax);
    coarse_axis(spec, y, spec->ch, &ay);
    return coarse_read(spec, &ax, &ay, coarse);
}

void ref_pass_upsample(int w, int h, const BlurSpec *spec, const float *coarse, float *out)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            out[IDX(i, j)] = ref_sample_coarse(spec, coarse, (float)i + 0.5f, (float)j + 0.5f);
}

/* in -> coarse blurred (cw*ch), using tmp (cw*ch) */
static void blur_coarse(int w, int h, const BlurSpec *spec, const float *in, float *coarse,
                        float *tmp)
{
    ref_pass_downsample(w, h, spec, in, coarse);
    ref_pass_blur_1d(spec, 0, coarse, tmp);
    ref_pass_blur_1d(spec, 1, tmp, coarse);
}

void ref_pass_blur(int w, int h, const BlurSpec *spec, const float *in, float *out)
{
    size_t n = (size_t)spec->cw * spec->ch;
    float *c = malloc(n * sizeof *c), *t = malloc(n * sizeof *t);
    if (!c || !t) {
        free(c);
        free(t);
        memset(out, 0, (size_t)w * h * sizeof *out);
        return;
    }
    blur_coarse(w, h, spec, in, c, t);
    ref_pass_upsample(w, h, spec, c, out);
    free(c);
    free(t);
}

/* ---------------------------------------------------------------------- */
/* Momentum                                                               */

/* The vorticity at corner (i, j), shared by cells (i-1, j-1) .. (i, j), in
 * 1/time: (∂v/∂x − ∂u/∂y) from the four faces around it, the velocity 0
 * outside the box (the corners run 0..W, 0..H; outside them 0). */
static float corner_curl(int w, int h, const float *u, const float *v, int i, int j, float inv_h)
{
    if (i < 0 || j < 0 || i > w || j > h) return 0.0f;
    float vr = (i < w && j > 0 && j < h) ? v[IDX(i, j)] : 0.0f;
    float vl = (i > 0 && j > 0 && j < h) ? v[IDX(i - 1, j)] : 0.0f;
    float ut = (j < h && i > 0 && i < w) ? u[IDX(i, j)] : 0.0f;
    float ub = (j > 0 && i > 0 && i < w) ? u[IDX(i, j - 1)] : 0.0f;
    return ((vr - vl) - (ut - ub)) * inv_h;
}

void ref_pass_curl(int w, int h, const float *u, const float *v, float *curl)
{
    float inv_h = 1.0f / cell_size(w, h);
    for (int j = 0; j <= h; j++)
        for (int i = 0; i <= w; i++) curl[(size_t)j * (w + 1) + i] = corner_curl(w, h, u, v, i, j, inv_h);
}

void ref_swirl_curl(int w, int h, const float *u, const float *v, float *curl, float *tmp)
{
    BlurSpec spec;
    method_swirl_spec(w, h, &spec);
    ref_pass_curl(w, h, u, v, curl);
    ref_pass_blur_1d(&spec, 0, curl, tmp);
    ref_pass_blur_1d(&spec, 1, tmp, curl);
}

/* corner (i, j) of the (w+1) x (h+1) curl field, 0 off it */
static inline float curl_at(int w, int h, const float *curl, int i, int j)
{
    return (i < 0 || j < 0 || i > w || j > h) ? 0.0f : curl[(size_t)j * (w + 1) + i];
}

/* Vorticity confinement (Fedkiw, Stam & Jensen 2001) on a face: ε·L·(N × ω)
 * with ω the face's smoothed vorticity (the mean of its two corners) and N =
 * ∇|ω| / |∇|ω|| from the six corners around it; axis 0 gives the x
 * component on the x face (i-1 | i), axis 1 the y component on the y face
 * (j-1 | j). Shaders compute the same in force.glsl. */
float ref_swirl_force(int w, int h, const float *curl, int i, int j, int axis, float eps_h)
{
#define AC(a, b) fabsf(curl_at(w, h, curl, (a), (b)))
    float om, gx, gy;
    if (axis == 0) { /* corners (i, j) and (i, j+1) */
        om = 0.5f * (curl_at(w, h, curl, i, j) + curl_at(w, h, curl, i, j + 1));
        gy = AC(i, j + 1) - AC(i, j);
        gx = 0.25f * ((AC(i + 1, j) + AC(i + 1, j + 1)) - (AC(i - 1, j) + AC(i - 1, j + 1)));
    } else { /* corners (i, j) and (i+1, j) */
        om = 0.5f * (curl_at(w, h, curl, i, j) + curl_at(w, h, curl, i + 1, j));
        gx = AC(i + 1, j) - AC(i, j);
        gy = 0.25f * ((AC(i, j + 1) + AC(i + 1, j + 1)) - (AC(i, j - 1) + AC(i + 1, j - 1)));
    }
#undef AC
    float len = sqrtf(gx * gx + gy * gy);
    if (!(len > 1e-20f)) return 0.0f;
    return axis == 0 ? eps_h * (gy / len) * om : -eps_h * (gx / len) * om;
}

/* The balance force's share of Fattal's ∇log ρ̃* term, over ρ̃: min(ρ̃, ρ̃*)/ρ̃,
 * the trip's attract share of the rest, up to ρ̃/ρ̃, and the off_pull share of
 * the surplus off the target (method.h, METHOD_OFF_LO). */
static inline float balance_pull(float rb, float tf, const SolverParams *p)
{
    float m = fminf(rb, tf);
    float off = p->off_pull > 0.0f ? (1.0f - p->attract) * p->off_pull * method_off_weight(rb, tf) : 0.0f;
    return (m + p->attract * (rb - m) + off) / fmaxf(rb, p->eps);
}

/* The balance force on a compression, over ρ̃ as balance_pull (method.h,
 * METHOD_DRIFT_WAIT): Fattal's pull weighted by min(ρ̃, ρ̃*) and by the
 * attract share of the surplus, ρ̃'s above min(ρ̃, ρ̃*) fading into the
 * face's own density above rd·ρ* (times METHOD_SHARP_PULL) as the gathering joins, and φ's term
 * (dphi = kb·∂φ) weighted by ρ̃ fading into ρ as far. rf the face's ρ, tg
 * its c·ρ*, gl the face's ∂ρ̃* over ρ̃*. */
static inline float sharp_pull(float rb, float tf, float rf, float tg, float gl, float dphi, const SolverParams *p,
                               const ForceSharp *sh)
{
    float m = fminf(rb, tf), a = p->attract;
    float wt = m + a * ((1.0f - sh->rg) * (rb - m) + METHOD_SHARP_PULL * sh->rg * fmaxf(0.0f, rf - sh->rd * tg));
    if (p->off_pull > 0.0f) wt += (1.0f - a) * p->off_pull * method_off_weight(rb, tf);
    return (wt * gl + (rb + a * sh->rg * (rf - rb)) * dphi) / fmaxf(rb, p->eps);
}

void ref_pass_force(int w, int h, const SolverParams *p, const BlurSpec *spec,
                    const float *rho_blur_coarse, const float *tgt_blur, const float *phi,
                    float kb, float noise, const float *curl, const float *u, const float *v, float *u_out,
                    float *v_out)
{
    ref_pass_force_sharp(w, h, p, spec, rho_blur_coarse, tgt_blur, phi, kb, noise, curl, NULL, u, v, u_out, v_out);
}

void ref_pass_force_sharp(int w, int h, const SolverParams *p, const BlurSpec *spec,
                          const float *rho_blur_coarse, const float *tgt_blur, const float *phi,
                          float kb, float noise, const float *curl, const ForceSharp *sharp, const float *u,
                          const float *v, float *u_out, float *v_out)
{
    if (sharp && !(p->attract > 0.0f && phi)) sharp = NULL; /* a compression's balance force only */
    float hh = cell_size(w, h);
    float nl = noise > 0.0f ? hh / p->noise_scale : 0.0f; /* the noise's lattice units per cell */
    unsigned seed = (unsigned)p->noise_seed;
    float damp = 1.0f / (1.0f + p->dt * p->vd);
    float k = p->dt * p->vf / hh;
    float sw = curl ? p->dt * p->swirl * METHOD_SWIRL_LENGTH : 0.0f; /* dt·ε·L */
    /* where each column's faces (x = i) and centres (x = i + 0.5) read ρ̃,
     * once (ref_sample_coarse's, split by axis) */
    CoarseAxis *xs = malloc(2 * (size_t)w * sizeof *xs), xf, xc;
    for (int i = 0; i < w && xs; i++) {
        coarse_axis(spec, (float)i, spec->cw, &xs[2 * i]);
        coarse_axis(spec, (float)i + 0.5f, spec->cw, &xs[2 * i + 1]);
    }
    for (int j = 0; j < h; j++) {
        CoarseAxis yc, yf;
        coarse_axis(spec, (float)j + 0.5f, spec->ch, &yc);
        coarse_axis(spec, (float)j, spec->ch, &yf);
        for (int i = 0; i < w; i++) {
            if (!xs) {
                coarse_axis(spec, (float)i, spec->cw, &xf);
                coarse_axis(spec, (float)i + 0.5f, spec->cw, &xc);
            }
            const CoarseAxis *axf = xs ? &xs[2 * i] : &xf, *axc = xs ? &xs[2 * i + 1] : &xc;
            /* x face between (i-1, j) and (i, j) */
            float nu = 0.0f, nv = 0.0f;
            if (i > 0) {
                float tl = tgt_blur[IDX(i - 1, j)], tr = tgt_blur[IDX(i, j)];
                float rb = coarse_read(spec, axf, &yc, rho_blur_coarse);
                float tf = fmaxf(0.5f * (tl + tr), p->eps);
                float g = (tr - tl) / tf;
                if (sharp)
                    g = sharp_pull(rb, tf, 0.5f * (sharp->rho[IDX(i, j)] + sharp->rho[IDX(i - 1, j)]),
                                   sharp->c * (0.5f * (sharp->tgt[IDX(i, j)] + sharp->tgt[IDX(i - 1, j)])), g,
                                   kb * (phi[IDX(i, j)] - phi[IDX(i - 1, j)]), p, sharp);
                else if (phi)
                    g = g * balance_pull(rb, tf, p) + kb * (phi[IDX(i, j)] - phi[IDX(i - 1, j)]);
                if (noise > 0.0f) g *= 1.0f + noise * method_noise((float)i * nl, ((float)j + 0.5f) * nl, seed);
                float f = sw > 0.0f ? ref_swirl_force(w, h, curl, i, j, 0, sw) : 0.0f;
                nu = clampf((u[IDX(i, j)] + k * rb * g + f) * damp, -p->umax, p->umax);
            }
            if (j > 0) {
                float tb = tgt_blur[IDX(i, j - 1)], tt = tgt_blur[IDX(i, j)];
                float rb = coarse_read(spec, axc, &yf, rho_blur_coarse);
                float tf = fmaxf(0.5f * (tb + tt), p->eps);
                float g = (tt - tb) / tf;
                if (sharp)
                    g = sharp_pull(rb, tf, 0.5f * (sharp->rho[IDX(i, j)] + sharp->rho[IDX(i, j - 1)]),
                                   sharp->c * (0.5f * (sharp->tgt[IDX(i, j)] + sharp->tgt[IDX(i, j - 1)])), g,
                                   kb * (phi[IDX(i, j)] - phi[IDX(i, j - 1)]), p, sharp);
                else if (phi)
                    g = g * balance_pull(rb, tf, p) + kb * (phi[IDX(i, j)] - phi[IDX(i, j - 1)]);
                if (noise > 0.0f) g *= 1.0f + noise * method_noise(((float)i + 0.5f) * nl, (float)j * nl, seed);
                float f = sw > 0.0f ? ref_swirl_force(w, h, curl, i, j, 1, sw) : 0.0f;
                nv = clampf((v[IDX(i, j)] + k * rb * g + f) * damp, -p->umax, p->umax);
            }
            u_out[IDX(i, j)] = nu;
            v_out[IDX(i, j)] = nv;
        }
    }
    free(xs);
}

/* Bilinear sample of the u lattice (points at (i, j + 0.5)) at fine position (x, y). */
static float sample_u(int w, int h, const float *u, float x, float y)
{
    float fx = clampc(x, 0.0f, (float)w), fy = clampc(y - 0.5f, 0.0f, (float)(h - 1));
    int i0 = (int)floorf(fx), j0 = (int)floorf(fy);
    if (i0 > w - 1) i0 = w - 1;
    if (j0 > h - 1) j0 = h - 1;
    int j1 = j0 + 1 < h ? j0 + 1 : j0;
    float tx = fx - (float)i0, ty = fy - (float)j0;
    float a = U(w, h, u, i0, j0) + tx * (U(w, h, u, i0 + 1, j0) - U(w, h, u, i0, j0));
    float b = U(w, h, u, i0, j1) + tx * (U(w, h, u, i0 + 1, j1) - U(w, h, u, i0, j1));
    return a + ty * (b - a);
}

/* Bilinear sample of the v lattice (points at (i + 0.5, j)). */
static float sample_v(int w, int h, const float *v, float x, float y)
{
    float fx = clampc(x - 0.5f, 0.0f, (float)(w - 1)), fy = clampc(y, 0.0f, (float)h);
    int i0 = (int)floorf(fx), j0 = (int)floorf(fy);
    if (i0 > w - 1) i0 = w - 1;
    if (j0 > h - 1) j0 = h - 1;
    int i1 = i0 + 1 < w ? i0 + 1 : i0;
    float tx = fx - (float)i0, ty = fy - (float)j0;
    float a = V(w, h, v, i0, j0) + tx * (V(w, h, v, i1, j0) - V(w, h, v, i0, j0));
    float b = V(w, h, v, i0, j0 + 1) + tx * (V(w, h, v, i1, j0 + 1) - V(w, h, v, i0, j0 + 1));
    return a + ty * (b - a);
}

void ref_pass_advect_vel(int w, int h, float dt, const float *u, const float *v,
                         float *u_out, float *v_out)
{
    float s = dt / cell_size(w, h); /* velocity (domain/time) -> cells per step */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float nu = 0.0f, nv = 0.0f;
            if (i > 0) {
                float uu = U(w, h, u, i, j);
                float vv = 0.25f * (V(w, h, v, i - 1, j) + V(w, h, v, i, j) +
                                    V(w, h, v, i - 1, j + 1) + V(w, h, v, i, j + 1));
                nu = sample_u(w, h, u, (float)i - s * uu, (float)j + 0.5f - s * vv);
            }
            if (j > 0) {
                float vv = V(w, h, v, i, j);
                float uu = 0.25f * (U(w, h, u, i, j - 1) + U(w, h, u, i + 1, j - 1) +
                                    U(w, h, u, i, j) + U(w, h, u, i + 1, j));
                nv = sample_v(w, h, v, (float)i + 0.5f - s * uu, (float)j - s * vv);
            }
            u_out[IDX(i, j)] = nu;
            v_out[IDX(i, j)] = nv;
        }
}

void ref_pass_divergence(int w, int h, const float *u, const float *v, float *div)
{
    float inv_h = 1.0f / cell_size(w, h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            div[IDX(i, j)] = (U(w, h, u, i + 1, j) - U(w, h, u, i, j) + V(w, h, v, i, j + 1) -
                              V(w, h, v, i, j)) * inv_h;
}

/* One Jacobi cell with whatever neighbours are inside the grid (the walls). */
static inline float jacobi_cell(int w, int h, float h2, const float *p, const float *div, int i, int j)
{
    float sum = 0.0f;
    int n = 0;
    if (i > 0) { sum += p[IDX(i - 1, j)]; n++; }
    if (i < w - 1) { sum += p[IDX(i + 1, j)]; n++; }
    if (j > 0) { sum += p[IDX(i, j - 1)]; n++; }
    if (j < h - 1) { sum += p[IDX(i, j + 1)]; n++; }
    float jac = n ? (sum - h2 * div[IDX(i, j)]) / (float)n : 0.0f;
    return p[IDX(i, j)] + METHOD_JACOBI_OMEGA * (jac - p[IDX(i, j)]);
}

void ref_pass_jacobi_h(int w, int h, float hh, const float *p, const float *div, float *p_out)
{
    float h2 = hh * hh;
    for (int j = 0; j < h; j++) {
        if (j == 0 || j == h - 1 || w < 3) {
            for (int i = 0; i < w; i++) p_out[IDX(i, j)] = jacobi_cell(w, h, h2, p, div, i, j);
            continue;
        }
        /* an inner row: its ends by the walls' rule, the rest with four
         * neighbours each, summed in jacobi_cell's order (the same bits) */
        p_out[IDX(0, j)] = jacobi_cell(w, h, h2, p, div, 0, j);
        const float *restrict c = p + IDX(0, j), *restrict dn = c - w, *restrict up = c + w;
        const float *restrict d = div + IDX(0, j);
        float *restrict o = p_out + IDX(0, j);
        for (int i = 1; i < w - 1; i++) {
            float sum = 0.0f;
            sum += c[i - 1];
            sum += c[i + 1];
            sum += dn[i];
            sum += up[i];
            float jac = (sum - h2 * d[i]) / 4.0f;
            o[i] = c[i] + METHOD_JACOBI_OMEGA * (jac - c[i]);
        }
        p_out[IDX(w - 1, j)] = jacobi_cell(w, h, h2, p, div, w - 1, j);
    }
}

void ref_pass_jacobi(int w, int h, const float *p, const float *div, float *p_out)
{
    ref_pass_jacobi_h(w, h, cell_size(w, h), p, div, p_out);
}

/* ---- multigrid: residual, restriction, prolongation ---- */

void ref_pass_mg_residual(int w, int h, float hh, const float *x, const float *b, float *r)
{
    float h2 = hh * hh;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float xc = x[IDX(i, j)], lap = 0.0f;
            if (i > 0) lap += x[IDX(i - 1, j)] - xc;
            if (i < w - 1) lap += x[IDX(i + 1, j)] - xc;
            if (j > 0) lap += x[IDX(i, j - 1)] - xc;
            if (j < h - 1) lap += x[IDX(i, j + 1)] - xc;
            r[IDX(i, j)] = h2 * b[IDX(i, j)] - lap;
        }
}

void ref_residual_norms(int w, int h, const float *x, const float *b, double *max, double *rms)
{
    double hh = cell_size(w, h), inv = 1.0 / (hh * hh), m = 0.0, sq = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double xc = x[IDX(i, j)], lap = 0.0;
            if (i > 0) lap += x[IDX(i - 1, j)] - xc;
            if (i < w - 1) lap += x[IDX(i + 1, j)] - xc;
            if (j > 0) lap += x[IDX(i, j - 1)] - xc;
            if (j < h - 1) lap += x[IDX(i, j + 1)] - xc;
            double r = fabs(lap * inv - b[IDX(i, j)]);
            if (r > m) m = r;
            sq += r * r;
        }
    if (max) *max = m;
    if (rms) *rms = sqrt(sq / ((double)w * h));
}

void ref_pass_mg_restrict(int w, int h, const float *r, float *bc)
{
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    for (int J = 0; J < ch; J++)
        for (int I = 0; I < cw; I++) {
            float sum = 0.0f;
            for (int j = 2 * J; j < 2 * J + 2 && j < h; j++)
                for (int i = 2 * I; i < 2 * I + 2 && i < w; i++) sum += r[IDX(i, j)];
            bc[(size_t)J * cw + I] = sum;
        }
}

void ref_pass_mg_prolong(int w, int h, const float *x, const float *xc, float *x_out)
{
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            /* bilinear between the four nearest coarse centres: 9/16 for the
             * parent, 3/16 for each side neighbour, 1/16 for the diagonal;
             * past a wall the parent stands in (Neumann) */
            int I = i / 2, J = j / 2;
            int In = I + ((i & 1) ? 1 : -1), Jn = J + ((j & 1) ? 1 : -1);
            if (In < 0 || In >= cw) In = I;
            if (Jn < 0 || Jn >= ch) Jn = J;
            float c = xc[(size_t)J * cw + I], cx = xc[(size_t)J * cw + In];
            float cy = xc[(size_t)Jn * cw + I], cd = xc[(size_t)Jn * cw + In];
            x_out[IDX(i, j)] = x[IDX(i, j)] + (9.0f * c + 3.0f * (cx + cy) + cd) * (1.0f / 16.0f);
        }
}

void ref_pass_subtract_grad(int w, int h, const float *p, const float *u, const float *v,
                            float *u_out, float *v_out)
{
    float inv_h = 1.0f / cell_size(w, h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            u_out[IDX(i, j)] = i > 0 ? u[IDX(i, j)] - (p[IDX(i, j)] - p[IDX(i - 1, j)]) * inv_h : 0.0f;
            v_out[IDX(i, j)] = j > 0 ? v[IDX(i, j)] - (p[IDX(i, j)] - p[IDX(i, j - 1)]) * inv_h : 0.0f;
        }
}

/* ---------------------------------------------------------------------- */
/* Density                                                                */

static inline float minmod(float a, float b)
{
    if (a > 0.0f && b > 0.0f) return fminf(a, b);
    if (a < 0.0f && b < 0.0f) return fmaxf(a, b);
    return 0.0f;
}

static inline float rho_at(int w, int h, const float *rho, int i, int j)
{
    return rho[IDX(clampi(i, 0, w - 1), clampi(j, 0, h - 1))];
}

/* Upwind, slope-limited density on the x face (i-1 | i), given face speed a. */
static float face_rho_x(int w, int h, const float *rho, int i, int j, float a)
{
    int c = a > 0.0f ? i - 1 : i;
    float rc = rho_at(w, h, rho, c, j);
    float s = minmod(rc - rho_at(w, h, rho, c - 1, j), rho_at(w, h, rho, c + 1, j) - rc);
    return a > 0.0f ? rc + 0.5f * s : rc - 0.5f * s;
}

static float face_rho_y(int w, int h, const float *rho, int i, int j, float a)
{
    int c = a > 0.0f ? j - 1 : j;
    float rc = rho_at(w, h, rho, i, c);
    float s = minmod(rc - rho_at(w, h, rho, i, c - 1), rho_at(w, h, rho, i, c + 1) - rc);
    return a > 0.0f ? rc + 0.5f * s : rc - 0.5f * s;
}

/* Upwind mass flux (cell-density units) through the x face (i-1 | i) and the
 * y face (i, j-1 | j), before the positivity ratio; also reports the donor. */
static float flux_x(int w, int h, const float *u, const float *rho, int i, int j, float umax,
                    float k, int *donor)
{
    float a = clampf(U(w, h, u, i, j), -umax, umax);
    *donor = a > 0.0f ? i - 1 : i;
    return a == 0.0f ? 0.0f : k * a * face_rho_x(w, h, rho, i, j, a);
}

static float flux_y(int w, int h, const float *v, const float *rho, int i, int j, float umax,
                    float k, int *donor)
{
    float a = clampf(V(w, h, v, i, j), -umax, umax);
    *donor = a > 0.0f ? j - 1 : j;
    return a == 0.0f ? 0.0f : k * a * face_rho_y(w, h, rho, i, j, a);
}

/* The fluxes of one transport substep: k = dt/h, and each inner face's flux
 * once in fx, fy when they are given (x face (i-1 | i) at IDX(i, j), y face
 * (i, j-1 | j) at IDX(i, j)), else computed where read. */
typedef struct {
    int w, h;
    float umax, k;
    const float *u, *v, *rho;
    float *fx, *fy;
} Fluxes;

static void fluxes_fill(Fluxes *F)
{
    int w = F->w, h = F->h, d;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            F->fx[IDX(i, j)] = i > 0 ? flux_x(w, h, F->u, F->rho, i, j, F->umax, F->k, &d) : 0.0f;
            F->fy[IDX(i, j)] = j > 0 ? flux_y(w, h, F->v, F->rho, i, j, F->umax, F->k, &d) : 0.0f;
        }
}

/* the flux through x face (i-1 | i) (0 on the walls) and its donor cell's i */
static inline float flux_xf(const Fluxes *F, int i, int j, int *donor)
{
    int w = F->w;
    if (!F->fx || i <= 0 || i >= w) return flux_x(w, F->h, F->u, F->rho, i, j, F->umax, F->k, donor);
    *donor = clampf(F->u[IDX(i, j)], -F->umax, F->umax) > 0.0f ? i - 1 : i;
    return F->fx[IDX(i, j)];
}

static inline float flux_yf(const Fluxes *F, int i, int j, int *donor)
{
    int w = F->w;
    if (!F->fy || j <= 0 || j >= F->h) return flux_y(w, F->h, F->v, F->rho, i, j, F->umax, F->k, donor);
    *donor = clampf(F->v[IDX(i, j)], -F->umax, F->umax) > 0.0f ? j - 1 : j;
    return F->fy[IDX(i, j)];
}

/* Positivity ratio of cell (i, j): the share of its planned outflow it can
 * afford, min(1, ρ / outflow). Applied to every flux the cell donates, it keeps
 * ρ ≥ 0 while every flux stays antisymmetric, so mass is conserved exactly. */
static float advect_ratio(const Fluxes *F, int i, int j)
{
    int d, w = F->w;
    float out = 0.0f;
    float f;
    f = flux_xf(F, i, j, &d);     if (f < 0.0f) out -= f;
    f = flux_xf(F, i + 1, j, &d); if (f > 0.0f) out += f;
    f = flux_yf(F, i, j, &d);     if (f < 0.0f) out -= f;
    f = flux_yf(F, i, j + 1, &d); if (f > 0.0f) out += f;
    float r = F->rho[IDX(i, j)];
    return out > r ? r / out : 1.0f;
}

static void advect_ratio_all(const Fluxes *F, float *ratio)
{
    int w = F->w;
    for (int j = 0; j < F->h; j++)
        for (int i = 0; i < w; i++) ratio[IDX(i, j)] = advect_ratio(F, i, j);
}

static void advect_apply_all(const Fluxes *F, const float *ratio, float *rho_out)
{
    int w = F->w;
    for (int j = 0; j < F->h; j++)
        for (int i = 0; i < w; i++) {
            float out = F->rho[IDX(i, j)];
            int d;
            float f;
            /* a positive flux on the left/bottom face enters this cell */
            f = flux_xf(F, i, j, &d);
            if (f != 0.0f) out += f * ratio[IDX(d, j)];
            f = flux_xf(F, i + 1, j, &d);
            if (f != 0.0f) out -= f * ratio[IDX(d, j)];
            f = flux_yf(F, i, j, &d);
            if (f != 0.0f) out += f * ratio[IDX(i, d)];
            f = flux_yf(F, i, j + 1, &d);
            if (f != 0.0f) out -= f * ratio[IDX(i, d)];
            rho_out[IDX(i, j)] = fmaxf(out, 0.0f);
        }
}

float ref_pass_speed(int w, int h, float cap, const float *u, const float *v)
{
    float m = 0.0f;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float c = method_cell_speed(U(w, h, u, i, j), U(w, h, u, i + 1, j), V(w, h, v, i, j),
                                        V(w, h, v, i, j + 1), cap);
            if (c > m) m = c;
        }
    return m;
}

void ref_pass_advect_ratio(int w, int h, float dt_sub, float umax, const float *u,
                           const float *v, const float *rho, float *ratio)
{
    Fluxes F = {w, h, umax, dt_sub / cell_size(w, h), u, v, rho, NULL, NULL};
    advect_ratio_all(&F, ratio);
}

void ref_pass_advect_apply(int w, int h, float dt_sub, float umax, const float *u,
                           const float *v, const float *rho, const float *ratio, float *rho_out)
{
    Fluxes F = {w, h, umax, dt_sub / cell_size(w, h), u, v, rho, NULL, NULL};
    advect_apply_all(&F, ratio, rho_out);
}

void ref_pass_advect_density(int w, int h, float dt_sub, float umax, const float *u,
                             const float *v, const float *rho, float *rho_out)
{
    float *ratio = malloc((size_t)w * h * sizeof *ratio);
    if (!ratio) {
        memcpy(rho_out, rho, (size_t)w * h * sizeof *rho);
        return;
    }
    ref_pass_advect_ratio(w, h, dt_sub, umax, u, v, rho, ratio);
    ref_pass_advect_apply(w, h, dt_sub, umax, u, v, rho, ratio, rho_out);
    free(ratio);
}

/* ---------------------------------------------------------------------- */
/* Gathering drift (see cpu_solver.h)                                      */

static inline float log_ratio(float t, float rb, float eps) { return logf(fmaxf(t, eps)) - logf(fmaxf(rb, eps)); }

static inline float drift_log_ratio(const BlurSpec *spec, const float *rbc, const float *tb,
                                    int w, int i, int j, float eps)
{
    return log_ratio(tb[IDX(i, j)], ref_sample_coarse(spec, rbc, (float)i + 0.5f, (float)j + 0.5f), eps);
}

/* The balance drift's mobility on the face between cells (i,j) and (k,l):
 * the log-ratio drift's m where the target is, and 1 − ρ̃/haze where the
 * smoke is thin, so haze anywhere is pulled in while a dense body away from
 * the target is not spread by its own potential (see cpu_solver.h). */
static inline float drift_mob_phi(float ra, float rb, float m, float haze)
{
    return fmaxf(m, 1.0f - fminf(1.0f, 0.5f * (ra + rb) / haze));
}

typedef struct {
    int w, h;
    const SolverParams *p;
    const BlurSpec *spec;
    const float *phi, *rbc, *tb;
    float inv_h, eps, mob, kw, haze;
    /* each cell's ρ̃ at its centre and its drift_log_ratio, once per pass
     * (NULL: from the coarse field at every face) */
    const float *rs, *lr;
} DriftCtx;

static inline float drift_rs(const DriftCtx *c, int i, int j)
{
    int w = c->w;
    return c->rs ? c->rs[IDX(i, j)] : ref_sample_coarse(c->spec, c->rbc, (float)i + 0.5f, (float)j + 0.5f);
}

static inline float drift_lr(const DriftCtx *c, int i, int j)
{
    int w = c->w;
    return c->lr ? c->lr[IDX(i, j)] : drift_log_ratio(c->spec, c->rbc, c->tb, w, i, j, c->eps);
}

/* The drift's speed on the face between cells (i,j) and (k,l) = its lower or
 * left neighbour, before the cap; 0 on the walls (k or l outside). */
static float drift_raw(const DriftCtx *c, int i, int j, int k, int l)
{
    int w = c->w;
    if (k < 0 || l < 0 || i >= c->w || j >= c->h) return 0.0f;
    float lc = drift_lr(c, i, j);
    float ln = drift_lr(c, k, l);
    float m = fminf(1.0f, 0.5f * (c->tb[IDX(i, j)] + c->tb[IDX(k, l)]) / c->mob);
    float g = c->p->vk * m * (lc - ln) * c->inv_h;
    if (c->phi)
        g += drift_mob_phi(drift_rs(c, i, j), drift_rs(c, k, l), m, c->haze) * c->kw *
             (c->phi[IDX(i, j)] - c->phi[IDX(k, l)]);
    return g;
}

static float drift_raw_u(const DriftCtx *c, int i, int j) { return drift_raw(c, i, j, i - 1, j); }
static float drift_raw_v(const DriftCtx *c, int i, int j) { return drift_raw(c, i, j, i, j - 1); }

/* The cap on the speed vector, not on each component: the face's own speed
 * and the other component averaged from the four faces around it. Capping
 * each component alone let smoke move √2 times faster along the diagonals
 * (a square drawn into a disc showed bright rays along the axes). */
static float drift_capped(float a, float t, float cap)
{
    float mag = sqrtf(a * a + t * t);
    return mag > cap ? a * (cap / mag) : a;
}

/* The flow's limit on the drift (issue 20): the drift adds to the flow, and
 * the flow's local envelope plus the drift stays within ±umax, the speed
 * limit of the force and the drift, so smoke does not outrun what the flow
 * could carry. The limit reads the flow's local statistics
 * (METHOD_FLOW_ENV_K): w ≤ umax − fhi and w ≥ −umax − flo, fhi and flo the
 * mean ± K times the spread, so it is even over small swirls rather than
 * their pattern. A face faster than its envelope (a lone spike, a jet
 * narrower than the blur) may so run past umax, but never past the
 * transport's cap (METHOD_FLOW_GUARD·umax, method_transport_cap), which
 * the substeps are planned for. Where the face's flow runs faster than
 * umax the drift can only slow it.
 * f is the flow as the transport moves smoke by it, r·u with r =
 * flowmax/umax (a long key's pace: the whole flow slowed, not clamped at
 * flowmax), u within ±the cap. */
static float drift_limited(float f, float fhi, float flo, float w, float umax, float cap)
{
    float lo = f < -umax ? 0.0f : fmaxf(-umax - flo, -cap - f), hi = f > umax ? 0.0f : fminf(umax - fhi, cap - f);
    return f + clampf(w, lo < 0.0f ? lo : 0.0f, hi > 0.0f ? hi : 0.0f);
}

/* The flow's coarse statistics for the drift's limit: st[0..3] (each
 * spec->cw x spec->ch) the blurred coarse means of u, v, u² and v² (the
 * blur of ρ̃, blur_coarse; gpu_solver.c's pass_flow_stats). 0, or -1 out of
 * memory. */
static int flow_stats(int w, int h, const BlurSpec *spec, const float *u, const float *v, float *st[4])
{
    size_t n = (size_t)w * h, nc = (size_t)spec->cw * spec->ch;
    float *q = malloc(n * sizeof *q), *t = malloc(nc * sizeof *t);
    if (!q || !t) {
        free(q);
        free(t);
        return -1;
    }
    for (int ch = 0; ch < 4; ch++) {
        const float *src = ch % 2 == 0 ? u : v;
        for (size_t k = 0; k < n; k++) q[k] = ch < 2 ? src[k] : src[k] * src[k];
        blur_coarse(w, h, spec, q, st[ch], t);
    }
    free(q);
    free(t);
    return 0;
}

/* The mean ± K times the spread of the flow where ax, ay read (a cell's
 * centre) from the coarse mean m and mean square m2 (drift_vel.glsl's, in the same order). */
static void flow_bounds(const BlurSpec *spec, const CoarseAxis *ax, const CoarseAxis *ay, const float *m,
                        const float *m2, float *hi, float *lo)
{
    float mu = coarse_read(spec, ax, ay, m), sq = coarse_read(spec, ax, ay, m2);
    float mm = mu * mu;
    float var = (sq - mm) - METHOD_FLOW_ENV_FLOOR * sq;
    float sd = sqrtf(var > 0.0f ? var : 0.0f), k = METHOD_FLOW_ENV_K * sd;
    *hi = mu + k;
    *lo = mu - k;
}

static void drift_flow_limit(int w, int h, float flowmax, const SolverParams *p, const BlurSpec *spec,
                             const float *u, const float *v, float *wu, float *wv)
{
    float umax = p->umax, cap = method_transport_cap(p), r = method_flow_share(flowmax, umax);
    size_t nc = (size_t)spec->cw * spec->ch;
    float *sbuf = (u && v) ? malloc(4 * nc * sizeof *sbuf) : NULL, *st[4] = {0};
    for (int c = 0; c < 4 && sbuf; c++) st[c] = sbuf + (size_t)c * nc;
    bool stats = sbuf && flow_stats(w, h, spec, u, v, st) == 0;
    CoarseAxis *xs = stats ? malloc((size_t)w * sizeof *xs) : NULL; /* each column's x, once */
    for (int i = 0; i < w && xs; i++) coarse_axis(spec, (float)i + 0.5f, spec->cw, &xs[i]);
    for (int j = 0; j < h; j++) {
        CoarseAxis ay, axi;
        coarse_axis(spec, (float)j + 0.5f, spec->ch, &ay);
        for (int i = 0; i < w; i++) {
            size_t k = (size_t)j * w + i;
            float uc = u ? r * clampf(u[k], -cap, cap) : 0.0f, vc = v ? r * clampf(v[k], -cap, cap) : 0.0f;
            float uh = uc, ul = uc, vh = vc, vl = vc; /* no statistics: the face's own flow */
            if (stats) {
                const CoarseAxis *ax = xs ? &xs[i] : &axi;
                if (!xs) coarse_axis(spec, (float)i + 0.5f, spec->cw, &axi);
                flow_bounds(spec, ax, &ay, st[0], st[2], &uh, &ul);
                flow_bounds(spec, ax, &ay, st[1], st[3], &vh, &vl);
                uh = r * clampf(uh, -cap, cap), ul = r * clampf(ul, -cap, cap);
                vh = r * clampf(vh, -cap, cap), vl = r * clampf(vl, -cap, cap);
            }
            wu[k] = drift_limited(uc, uh, ul, wu[k], umax, cap);
            wv[k] = drift_limited(vc, vh, vl, wv[k], umax, cap);
        }
    }
    free(xs);
    free(sbuf);
}

static void drift_speeds(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                         const float *rho_blur_coarse, const float *tgt_blur, float dscale,
                         float r, float *wu, float *wv);

float ref_drift_cover(int w, int h, const BlurSpec *spec, const float *rho_blur_coarse, const float *tgt_blur)
{
    int f = spec->factor;
    float num = 0.0f, den = 0.0f;
    for (int cj = 0; cj < spec->ch; cj++) {
        int j = cj * f + f / 2 < h - 1 ? cj * f + f / 2 : h - 1;
        float rn = 0.0f, rd = 0.0f;
        for (int ci = 0; ci < spec->cw; ci++) {
            int i = ci * f + f / 2 < w - 1 ? ci * f + f / 2 : w - 1;
            float t = tgt_blur[IDX(i, j)], rb = rho_blur_coarse[(size_t)cj * spec->cw + ci];
            if (t > 0.0f) {
                rn += t * fminf(1.0f, rb / (METHOD_DRIFT_COVER * t));
                rd += t;
            }
        }
        num += rn;
        den += rd;
    }
    return den > 0.0f ? num / den : 1.0f;
}

void ref_pass_drift_vel_paced(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                              const float *rho_blur_coarse, const float *tgt_blur, float dscale, float r,
                              float flowmax, const float *u, const float *v, float *wu, float *wv)
{
    drift_speeds(w, h, p, spec, phi, rho_blur_coarse, tgt_blur, dscale, r, wu, wv);
    drift_flow_limit(w, h, flowmax, p, spec, u, v, wu, wv);
}

void ref_pass_drift_vel(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                        const float *rho_blur_coarse, const float *tgt_blur, float dscale, float r,
                        const float *u, const float *v, float *wu, float *wv)
{
    ref_pass_drift_vel_paced(w, h, p, spec, phi, rho_blur_coarse, tgt_blur, dscale, r, p->umax, u, v, wu, wv);
}

static void drift_speeds(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                         const float *rho_blur_coarse, const float *tgt_blur, float dscale,
                         float r, float *wu, float *wv)
{
    DriftCtx c = {w, h, p, spec, phi, rho_blur_coarse, tgt_blur, 0, 0, 0, 0, 0, NULL, NULL};
    c.inv_h = 1.0f / cell_size(w, h);
    c.eps = METHOD_DRIFT_LOG_EPS * dscale;
    c.mob = METHOD_DRIFT_MOB * dscale;
    c.kw = phi ? p->vw / dscale * c.inv_h : 0.0f;
    if (phi) { /* the balance drift waits for the smoke: c² (METHOD_DRIFT_COVER) */
        float cov = ref_drift_cover(w, h, spec, rho_blur_coarse, tgt_blur);
        c.kw *= cov * cov;
    }
    c.haze = METHOD_DRIFT_HAZE * dscale;
    float cap = p->wmax * r;
    size_t n = (size_t)w * h;
    float *su = malloc(n * sizeof *su);
    if (!su) { /* no scratch: every face's raw speed from scratch, up to 5 times */
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                float vt = 0.25f * (drift_raw_v(&c, i, j) + drift_raw_v(&c, i - 1, j) +
                                    drift_raw_v(&c, i, j + 1) + drift_raw_v(&c, i - 1, j + 1));
                float ut = 0.25f * (drift_raw_u(&c, i, j) + drift_raw_u(&c, i + 1, j) +
                                    drift_raw_u(&c, i, j - 1) + drift_raw_u(&c, i + 1, j - 1));
                wu[IDX(i, j)] = drift_capped(drift_raw_u(&c, i, j), vt, cap);
                wv[IDX(i, j)] = drift_capped(drift_raw_v(&c, i, j), ut, cap);
            }
        return;
    }
    /* each cell's ρ̃ and log-ratio once (each is read by four faces), when
     * there is room for them */
    float *cache = malloc(2 * n * sizeof *cache);
    if (cache) {
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                float rb = ref_sample_coarse(spec, rho_blur_coarse, (float)i + 0.5f, (float)j + 0.5f);
                cache[IDX(i, j)] = rb;
                cache[n + IDX(i, j)] = log_ratio(tgt_blur[IDX(i, j)], rb, c.eps);
            }
        c.rs = cache, c.lr = cache + n;
    }
    /* each face's raw speed once (walls 0), then the caps: u into su from the
     * raw fields, v in place (it reads only raw u and its own raw v) */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            wu[IDX(i, j)] = drift_raw_u(&c, i, j);
            wv[IDX(i, j)] = drift_raw_v(&c, i, j);
        }
#define RAW_U(i, j) (((i) < w && (j) >= 0 && (j) < h) ? wu[IDX(i, j)] : 0.0f)
#define RAW_V(i, j) (((i) >= 0 && (i) < w && (j) < h) ? wv[IDX(i, j)] : 0.0f)
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float vt = 0.25f * (RAW_V(i, j) + RAW_V(i - 1, j) + RAW_V(i, j + 1) + RAW_V(i - 1, j + 1));
            su[IDX(i, j)] = drift_capped(wu[IDX(i, j)], vt, cap);
        }
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float ut = 0.25f * (RAW_U(i, j) + RAW_U(i + 1, j) + RAW_U(i, j - 1) + RAW_U(i + 1, j - 1));
            wv[IDX(i, j)] = drift_capped(wv[IDX(i, j)], ut, cap);
        }
#undef RAW_U
#undef RAW_V
    memcpy(wu, su, n * sizeof *su);
    free(su);
    free(cache);
}

/* ---------------------------------------------------------------------- */
/* Subgrid mixing (method.h, METHOD_PASS_MIX)                             */

/* The flow's strain rate |S| = √((∂u/∂x − ∂v/∂y)² + (∂u/∂y + ∂v/∂x)²) at
 * the centre of cell (i, j): the normal rates from the cell's own faces, the
 * shear from the neighbours' centred velocities (one-sided at the walls). */
static float strain_at(int w, int h, const float *u, const float *v, float hh, int i, int j)
{
    float ux = (U(w, h, u, i + 1, j) - U(w, h, u, i, j)) / hh;
    float vy = (V(w, h, v, i, j + 1) - V(w, h, v, i, j)) / hh;
    int jm = j > 0 ? j - 1 : j, jp = j < h - 1 ? j + 1 : j;
    int im = i > 0 ? i - 1 : i, ip = i < w - 1 ? i + 1 : i;
    float ucp = 0.5f * (U(w, h, u, i, jp) + U(w, h, u, i + 1, jp));
    float ucm = 0.5f * (U(w, h, u, i, jm) + U(w, h, u, i + 1, jm));
    float vcp = 0.5f * (V(w, h, v, ip, j) + V(w, h, v, ip, j + 1));
    float vcm = 0.5f * (V(w, h, v, im, j) + V(w, h, v, im, j + 1));
    float uy = (ucp - ucm) / ((float)(jp - jm) * hh), vx = (vcp - vcm) / ((float)(ip - im) * hh);
    float a = ux - vy, b = uy + vx;
    return sqrtf(a * a + b * b);
}

/* How far the smoke near a cell is from its target: |ρ̃ − ρ̃*|/(ρ̃ + ρ̃*) of
 * the blurred fields, 0 where they match (and where neither has smoke), 1
 * where only one has. Blurred, so that smoke still on its way into a shape
 * is mixed while it gathers, and the target's own fine detail (where ρ and
 * ρ* differ cell by cell long after the smoke has arrived) does not keep it
 * mixing. */
static inline float mix_mismatch(float r, float t)
{
    float sum = r + t;
    return sum > 0.0f ? fminf(fabsf(r - t) / sum, 1.0f) : 0.0f;
}

/* Whether cell c is where the target is: min(1, q·ρ̃* ÷ (METHOD_MIX_NEAR·s)),
 * s the target's density scale, q the step's method_mix_near, and at least
 * METHOD_MIX_TRANSIT far from the target (smoke in transit: the flow
 * carries it nearly whole, full mixing would spread it on the way; a
 * twentieth keeps its filaments smoke). */
static inline float mix_near(float tb, float inv, float q)
{
    return fmaxf(fminf(q * tb * inv, 1.0f), METHOD_MIX_TRANSIT);
}

/* The sum of f over the cell's neighbours inside the grid; *nn their count. */
static inline float mix_neighbours(int w, int h, const float *f, int i, int j, int *nn)
{
    float s = 0.0f;
    *nn = 0;
    if (i > 0) s += f[IDX(i - 1, j)], ++*nn;
    if (i < w - 1) s += f[IDX(i + 1, j)], ++*nn;
    if (j > 0) s += f[IDX(i, j - 1)], ++*nn;
    if (j < h - 1) s += f[IDX(i, j + 1)], ++*nn;
    return s;
}

/* The cell's discrete Laplacian: the sum over its neighbours inside the grid
 * of (f_n − f_c) (a wall adds nothing), as Σ f_n − count·f_c
 * (mix_coef.glsl the same). */
static inline float mix_laplacian(int w, int h, const float *f, int i, int j)
{
    int nn;
    float s = mix_neighbours(w, h, f, i, j, &nn);
    return s - (float)nn * f[IDX(i, j)];
}

/* How much sharper the smoke is at cell (i, j) than its target there:
 * (|∇²ρ| − |∇²ρ*|)₊ ÷ (|∇²ρ| + |∇²ρ*| + METHOD_MIX_EDGE_EPS·s), 0 where the
 * smoke is no sharper than the target (its own edges, and smoke that has
 * arrived), up to 1 at an edge the target does not have there (method.h). */
static inline float mix_edge(int w, int h, const float *rho, const float *tgt, float eps, int i, int j)
{
    float lr = fabsf(mix_laplacian(w, h, rho, i, j)), lt = fabsf(mix_laplacian(w, h, tgt, i, j));
    float den = lr + lt + eps;
    return den > 0.0f ? fmaxf(lr - lt, 0.0f) / den : 0.0f;
}

/* Whether the smoke at cell (i, j) is much thinner than the mixing's
 * length L (lh2 = (L/h)²): smoothstep(METHOD_MIX_FINE_LO, METHOD_MIX_FINE_HI,
 * f), f = |∇²ρ|·lh2 ÷ (max(ρ, ρ̄) + eps), ρ̄ the mean of the neighbours inside
 * the grid; 1 on a filament narrower than about L/3, 0 on an edge as soft
 * as L (method.h). */
static inline float mix_fine(int w, int h, const float *rho, float eps, float lh2, int i, int j)
{
    int nn;
    float c = rho[IDX(i, j)], s = mix_neighbours(w, h, rho, i, j, &nn);
    if (nn == 0) return 0.0f;
    float f = fabsf(s - (float)nn * c) * lh2 / (fmaxf(c, s / (float)nn) + eps);
    float t = fminf(fmaxf((f - METHOD_MIX_FINE_LO) / (METHOD_MIX_FINE_HI - METHOD_MIX_FINE_LO), 0.0f), 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

/* The transport's rate at cell (i, j): its strain plus its compression
 * |∇·w| (ref_pass_mix_coef). */
static float transport_rate_at(int w, int h, const float *wu, const float *wv, float hh, int i, int j)
{
    float div = (U(w, h, wu, i + 1, j) - U(w, h, wu, i, j) + V(w, h, wv, i, j + 1) - V(w, h, wv, i, j)) / hh;
    return strain_at(w, h, wu, wv, hh, i, j) + fabsf(div);
}

void ref_pass_mix_coef(int w, int h, float k, float hh, const float *u, const float *v, const float *wu,
                       const float *wv, const BlurSpec *spec, const float *rho_blur_coarse, const float *tgt_blur,
                       const float *rho, const float *tgt, float edge_w, float near_w, float dscale, float *d)
{
    float inv = dscale > 0.0f ? 1.0f / (METHOD_MIX_NEAR * dscale) : 0.0f;
    float eps = METHOD_MIX_EDGE_EPS * dscale;
    float lh = method_mix_length(w, h), lh2 = lh * lh;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            size_t c = IDX(i, j);
            float rb = ref_sample_coarse(spec, rho_blur_coarse, (float)i + 0.5f, (float)j + 0.5f);
            float g = mix_mismatch(rb, tgt_blur[c]);
            if (rho && tgt && edge_w > 0.0f) g = fmaxf(g, edge_w * mix_edge(w, h, rho, tgt, eps, i, j));
            float near = mix_near(tgt_blur[c], inv, near_w);
            if (rho && near < 1.0f) near = fmaxf(near, mix_fine(w, h, rho, eps, lh2, i, j));
            g *= near;
            float rate = strain_at(w, h, u, v, hh, i, j);
            if (wu && wv) rate = fmaxf(rate, transport_rate_at(w, h, wu, wv, hh, i, j));
            d[c] = fminf(k * rate * g, METHOD_MIX_CAP);
        }
}

void ref_pass_mix_iter(int w, int h, const float *d, const float *rho0, const float *delta, bool first,
                       float *delta_out)
{
    static const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float rc = rho0[IDX(i, j)], ec = first ? 0.0f : delta[IDX(i, j)], dc = d[IDX(i, j)], acc = 0.0f;
            for (int q = 0; q < 4; q++) {
                int ni = i + di[q], nj = j + dj[q];
                if (ni < 0 || ni >= w || nj < 0 || nj >= h) continue;
                float en = first ? 0.0f : delta[IDX(ni, nj)];
                acc += 0.5f * (dc + d[IDX(ni, nj)]) * ((rho0[IDX(ni, nj)] - rc) + (en - ec));
            }
            delta_out[IDX(i, j)] = ec + acc;
        }
}

void ref_pass_mix_apply(int w, int h, const float *rho0, const float *delta, float *rho_out)
{
    for (size_t c = 0; c < (size_t)w * h; c++) rho_out[c] = rho0[c] + delta[c];
}

/* ---------------------------------------------------------------------- */
/* Gathering: implicit on e = ρ − ρ*, coefficient D = ρ0·ρ̃* lagged.      */

static inline float coefD(int w, const float *rho0, const float *tb, int i, int j)
{
    return rho0[IDX(i, j)] * tb[IDX(i, j)];
}

/* One gathering Jacobi cell with whatever neighbours are inside the grid. */
static inline float gather_jacobi_cell(int w, int h, float a, const float *rho0, const float *tgt,
                                       const float *tgt_blur, const float *e, int i, int j)
{
    static const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    float dc = coefD(w, rho0, tgt_blur, i, j);
    float num = rho0[IDX(i, j)] - tgt[IDX(i, j)], den = 1.0f;
    for (int q = 0; q < 4; q++) {
        int ni = i + di[q], nj = j + dj[q];
        if (ni < 0 || ni >= w || nj < 0 || nj >= h) continue;
        float df = a * 0.5f * (dc + coefD(w, rho0, tgt_blur, ni, nj));
        num += df * e[IDX(ni, nj)];
        den += df;
    }
    return num / den;
}

void ref_pass_gather_jacobi(int w, int h, float a, const float *rho0, const float *tgt,
                            const float *tgt_blur, const float *e, float *e_out)
{
    float ah = a * 0.5f;
    for (int j = 0; j < h; j++) {
        if (j == 0 || j == h - 1 || w < 3) {
            for (int i = 0; i < w; i++) e_out[IDX(i, j)] = gather_jacobi_cell(w, h, a, rho0, tgt, tgt_blur, e, i, j);
            continue;
        }
        /* an inner row: the ends by the walls' rule, the rest with four
         * neighbours in gather_jacobi_cell's order (the same bits) */
        e_out[IDX(0, j)] = gather_jacobi_cell(w, h, a, rho0, tgt, tgt_blur, e, 0, j);
        size_t r = IDX(0, j);
        const float *restrict r0 = rho0 + r, *restrict tb = tgt_blur + r, *restrict t = tgt + r, *restrict ec = e + r;
        float *restrict o = e_out + r;
        for (int i = 1; i < w - 1; i++) {
            float dc = r0[i] * tb[i];
            float dl = ah * (dc + r0[i - 1] * tb[i - 1]), dr = ah * (dc + r0[i + 1] * tb[i + 1]);
            float dd = ah * (dc + r0[i - w] * tb[i - w]), du = ah * (dc + r0[i + w] * tb[i + w]);
            float num = r0[i] - t[i], den = 1.0f;
            num += dl * ec[i - 1];
            den += dl;
            num += dr * ec[i + 1];
            den += dr;
            num += dd * ec[i - w];
            den += dd;
            num += du * ec[i + w];
            den += du;
            o[i] = num / den;
        }
        e_out[IDX(w - 1, j)] = gather_jacobi_cell(w, h, a, rho0, tgt, tgt_blur, e, w - 1, j);
    }
}

/* Flux from cell (i,j) into neighbour q, from the solved error e. */
static inline float gather_flux(int w, float a, const float *rho0, const float *tb,
                                const float *e, int i, int j, int ni, int nj)
{
    float df = a * 0.5f * (coefD(w, rho0, tb, i, j) + coefD(w, rho0, tb, ni, nj));
    return df * (e[IDX(i, j)] - e[IDX(ni, nj)]);
}

/* Positivity ratio of a cell for the gathering fluxes (see advect_ratio). */
static float gather_ratio(int w, int h, float a, const float *rho0, const float *tb,
                          const float *e, int i, int j)
{
    static const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    float out = 0.0f;
    for (int q = 0; q < 4; q++) {
        int ni = i + di[q], nj = j + dj[q];
        if (ni < 0 || ni >= w || nj < 0 || nj >= h) continue;
        out += fmaxf(gather_flux(w, a, rho0, tb, e, i, j, ni, nj), 0.0f);
    }
    float r = rho0[IDX(i, j)];
    return out > r ? r / out : 1.0f;
}

void ref_pass_gather_ratio(int w, int h, float a, const float *rho0, const float *tgt_blur,
                           const float *e, float *ratio)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) ratio[IDX(i, j)] = gather_ratio(w, h, a, rho0, tgt_blur, e, i, j);
}

void ref_pass_gather_flux(int w, int h, float a, const float *rho0, const float *tgt_blur,
                          const float *e, const float *ratio, float *rho_out)
{
    static const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float r = rho0[IDX(i, j)];
            for (int q = 0; q < 4; q++) {
                int ni = i + di[q], nj = j + dj[q];
                if (ni < 0 || ni >= w || nj < 0 || nj >= h) continue;
                float f = gather_flux(w, a, rho0, tgt_blur, e, i, j, ni, nj);
                if (f > 0.0f) r -= f * ratio[IDX(i, j)];
                else if (f < 0.0f) r -= f * ratio[IDX(ni, nj)];
            }
            rho_out[IDX(i, j)] = fmaxf(r, 0.0f);
        }
}

void ref_pass_gather_apply(int w, int h, float a, const float *rho0, const float *tgt_blur,
                           const float *e, float *rho_out)
{
    float *ratio = malloc((size_t)w * h * sizeof *ratio);
    if (!ratio) {
        memcpy(rho_out, rho0, (size_t)w * h * sizeof *rho0);
        return;
    }
    ref_pass_gather_ratio(w, h, a, rho0, tgt_blur, e, ratio);
    ref_pass_gather_flux(w, h, a, rho0, tgt_blur, e, ratio, rho_out);
    free(ratio);
}

/* ---------------------------------------------------------------------- */
/* The solver object                                                      */

struct RefSolver {
    int w, h;
    SolverParams p;
    BlurSpec blur;
    float blur_sigma;            /* the σ of blur and tgt_blur (method_sigma: coarse to fine; 0: none yet) */
    size_t c_cap;                /* c0's and c1's size in floats */
    float *rho, *tgt, *tgt_blur, *u, *v, *pr;
    float *phi;                  /* the deficit potential: ∇²φ = ρ − c·ρ* */
    float *eg;                   /* the last gathering solve's e: the next one's start */
    float *wu, *wv;              /* the transport's face speeds, flow + drift (METHOD_PASS_DRIFT_VEL) */
    float *mixd;                 /* the subgrid mixing's coefficient d of each cell (METHOD_PASS_MIX) */
    float *curl, *curl_tmp;      /* the smoothed corner vorticity, (w+1) x (h+1) (the force's confinement) */
    float flow_share;            /* the last transport's flow share (method_transport_share: the motion vectors) */
    bool drift_ran;              /* this (the last) step ran the drift: the transport moved by wu, wv */
    float pot_c;                 /* c: the target scaled to the density's mass */
    float dscale;                /* the target's density scale Σρ*²/Σρ* */
    long nstep;                  /* steps since ref_set_density: the fade-ins' clock */
    long kstep;                  /* steps since the target was set: the arrival's clock */
    MethodPass last;             /* the last pass run (METHOD_PASS_COUNT: none this step) */
    int nsub;                    /* the transport stage's substeps (ref_pass_speed) */
    MethodStep plan;             /* this step's, for ref_step_parts's later parts */
    float *t0, *t1, *t2, *t3;    /* full-grid scratch */
    float *fx, *fy;              /* the transport's face fluxes (Fluxes) */
    float *c0, *c1;              /* coarse scratch */
    int nlev, lw[METHOD_MG_MAX_LEVELS], lh[METHOD_MG_MAX_LEVELS];
    float *mx[METHOD_MG_MAX_LEVELS], *mx2[METHOD_MG_MAX_LEVELS], *mb[METHOD_MG_MAX_LEVELS],
        *mr[METHOD_MG_MAX_LEVELS];  /* multigrid levels (level 0 uses pr/t3/t2) */
};

RefSolver *ref_create(int w, int h, const SolverParams *p, char *err, size_t errlen)
{
    if (w < 2 || h < 2 || w > 16384 || h > 16384) {
        snprintf(err, errlen, "grid %dx%d out of range", w, h);
        return NULL;
    }
    RefSolver *s = calloc(1, sizeof *s);
    if (!s) goto fail_alloc;
    s->w = w;
    s->h = h;
    s->last = METHOD_PASS_COUNT;
    s->p = *p;
    method_params_settle(&s->p);
    method_blur_spec(w, h, s->p.sigma, &s->blur);
    s->blur_sigma = s->p.sigma;
    size_t n = (size_t)w * h, nc = (size_t)s->blur.cw * s->blur.ch;
    s->c_cap = nc;
    float **full[] = {&s->rho, &s->tgt, &s->tgt_blur, &s->u, &s->v, &s->pr, &s->phi, &s->eg,
                      &s->t0, &s->t1, &s->t2, &s->t3, &s->wu, &s->wv, &s->mixd, &s->fx, &s->fy};
    for (size_t k = 0; k < sizeof full / sizeof full[0]; k++)
        if (!(*full[k] = calloc(n, sizeof(float)))) goto fail_fields;
    if (!(s->c0 = calloc(nc, sizeof(float))) || !(s->c1 = calloc(nc, sizeof(float))))
        goto fail_fields;
    size_t ncorner = (size_t)(w + 1) * (h + 1);
    if (!(s->curl = calloc(ncorner, sizeof(float))) || !(s->curl_tmp = calloc(ncorner, sizeof(float))))
        goto fail_fields;
    s->nlev = method_mg_levels(w, h, s->lw, s->lh);
    for (int l = 0; l < s->nlev; l++) {
        size_t nl = (size_t)s->lw[l] * s->lh[l];
        if (!(s->mr[l] = calloc(nl, sizeof(float)))) goto fail_fields;
        if (l == 0) continue;
        if (!(s->mx[l] = calloc(nl, sizeof(float))) || !(s->mx2[l] = calloc(nl, sizeof(float))) ||
            !(s->mb[l] = calloc(nl, sizeof(float))))
            goto fail_fields;
    }
    return s;

fail_fields:
    ref_free(s);
fail_alloc:
    snprintf(err, errlen, "not enough memory for a %dx%d grid", w, h);
    return NULL;
}

void ref_free(RefSolver *s)
{
    if (!s) return;
    float *all[] = {s->rho, s->tgt, s->tgt_blur, s->u, s->v, s->pr, s->phi, s->eg,
                    s->t0, s->t1, s->t2, s->t3, s->c0, s->c1, s->wu, s->wv, s->mixd, s->curl, s->curl_tmp,
                    s->fx, s->fy};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
    for (int l = 0; l < METHOD_MG_MAX_LEVELS; l++) {
        free(s->mx[l]);
        free(s->mx2[l]);
        free(s->mb[l]);
        free(s->mr[l]);
    }
    free(s);
}

/* The blur spec (and coarse scratch) for blur width sigma; true if it
 * changed. Out of memory for a larger coarse grid, it keeps the one it has. */
static bool blur_spec_for(RefSolver *s, float sigma)
{
    if (sigma == s->blur_sigma) return false;
    BlurSpec nb;
    method_blur_spec(s->w, s->h, sigma, &nb);
    size_t nc = (size_t)nb.cw * nb.ch;
    if (nc > s->c_cap) { /* the coarse size grew: reallocate scratch */
        float *c0 = calloc(nc, sizeof(float)), *c1 = calloc(nc, sizeof(float));
        if (!c0 || !c1) {
            free(c0);
            free(c1);
            log_error("solver", "out of memory for a blur of width %g: kept %g", (double)sigma,
                      (double)s->blur_sigma);
            return false;
        }
        free(s->c0);
        free(s->c1);
        s->c0 = c0;
        s->c1 = c1;
        s->c_cap = nc;
    }
    s->blur = nb;
    s->blur_sigma = sigma;
    return true;
}

/* The blur (spec and the target's blurred field) for the σ of the next
 * step, kstep (method_sigma: coarse to fine): made again where that σ
 * differs from the one it has, or always with `again` (a new target). */
static void blur_for_next_step(RefSolver *s, bool again)
{
    if (blur_spec_for(s, method_sigma(&s->p, s->kstep)) || again)
        ref_pass_blur(s->w, s->h, &s->blur, s->tgt, s->tgt_blur);
}

void ref_set_params(RefSolver *s, const SolverParams *p)
{
    s->p = *p;
    method_params_settle(&s->p);
    blur_for_next_step(s, false);
}

const SolverParams *ref_params(const RefSolver *s) { return &s->p; }
int ref_width(const RefSolver *s) { return s->w; }
int ref_height(const RefSolver *s) { return s->h; }

void ref_set_density(RefSolver *s, const float *rho)
{
    size_t n = (size_t)s->w * s->h;
    memcpy(s->rho, rho, n * sizeof(float));
    memset(s->u, 0, n * sizeof(float));
    memset(s->v, 0, n * sizeof(float));
    memset(s->pr, 0, n * sizeof(float));
    memset(s->phi, 0, n * sizeof(float));
    memset(s->eg, 0, n * sizeof(float));
    s->nstep = 0;
    s->kstep = 0;
    s->drift_ran = false; /* no step has moved this density yet */
}

int ref_set_target(RefSolver *s, const float *target, bool mass_match)
{
    size_t n = (size_t)s->w * s->h;
    double mt = 0.0, mr = 0.0;
    for (size_t k = 0; k < n; k++) {
        mt += target[k];
        mr += s->rho[k];
    }
    if (!(mt > 0.0)) return -1;
    float scale = (mass_match && mr > 0.0) ? (float)(mr / mt) : 1.0f;
    return ref_set_target_scaled(s, target, scale, mr, false);
}

int ref_set_target_scaled(RefSolver *s, const float *target, float scale, double smoke_mass,
                          bool keep_e)
{
    size_t n = (size_t)s->w * s->h;
    double mt = 0.0, m2 = 0.0;
    for (size_t k = 0; k < n; k++) mt += target[k];
    if (!(mt > 0.0)) return -1;
    for (size_t k = 0; k < n; k++) {
        s->tgt[k] = target[k] * scale;
        m2 += (double)s->tgt[k] * s->tgt[k];
    }
    s->pot_c = smoke_mass > 0.0 ? (float)(smoke_mass / (mt * scale)) : 1.0f;
    if (!keep_e) { /* another target: e = ρ − ρ* of it, and its arrival's clock */
        memset(s->eg, 0, n * sizeof(float));
        s->kstep = 0;
    }
    s->dscale = (float)(m2 / (mt * scale));
    blur_for_next_step(s, true);
    return 0;
}

void ref_set_potential_scale(RefSolver *s, float c) { s->pot_c = c; }

void ref_add_source(RefSolver *s, const float *weights, float amount)
{
    size_t n = (size_t)s->w * s->h;
    for (size_t k = 0; k < n; k++) s->rho[k] += amount * weights[k];
}

#define SWAP(a, b) do { float *t_ = (a); (a) = (b); (b) = t_; } while (0)

/* One multigrid V-cycle for Σ(x_n − x_c) = h²·b on level l (level 0: x is
 * the pressure, b the divergence, h the cell size; coarser levels: h = 1 and
 * b the restricted residual). Damped Jacobi smooths; restriction sums the
 * children's residuals, prolongation is bilinear (see cpu_solver.h). */
static void vcycle(RefSolver *s, int l, float **x, float **xt, const float *b, float hh)
{
    int w = s->lw[l], h = s->lh[l];
    int nu = l == s->nlev - 1 ? METHOD_MG_COARSE_ITERS : METHOD_MG_SMOOTH;
    for (int k = 0; k < nu; k++) {
        ref_pass_jacobi_h(w, h, hh, *x, b, *xt);
        SWAP(*x, *xt);
    }
    if (l == s->nlev - 1) return;
    ref_pass_mg_residual(w, h, hh, *x, b, s->mr[l]);
    ref_pass_mg_restrict(w, h, s->mr[l], s->mb[l + 1]);
    memset(s->mx[l + 1], 0, (size_t)s->lw[l + 1] * s->lh[l + 1] * sizeof(float));
    vcycle(s, l + 1, &s->mx[l + 1], &s->mx2[l + 1], s->mb[l + 1], 1.0f);
    ref_pass_mg_prolong(w, h, *x, s->mx[l + 1], *xt);
    SWAP(*x, *xt);
    for (int k = 0; k < METHOD_MG_SMOOTH; k++) {
        ref_pass_jacobi_h(w, h, hh, *x, b, *xt);
        SWAP(*x, *xt);
    }
}

/* One pass of the step (method.h's list; method_run calls it in order).
 * Fields: ρ̃ (coarse) in c0; the force and the advection each write u, v
 * through t0, t1 and swap (so the velocity is in u, v after every pass: the
 * fields sharing one velocity pass it on between the step's parts); the
 * divergence and every right-hand side live in t2; the gathering iterates e
 * in t0/t1. */
/* One transport substep of ρ by the face speeds (u, v), within ±umax (the
 * caller passes method_transport_cap, a guard the projected flow stays in):
 * the donors' ratios into t1, the update through t0 (the velocity's and the
 * drift's substeps alike). */
static void transport(RefSolver *s, const float *u, const float *v, float umax, float dt_sub)
{
    Fluxes F = {s->w, s->h, umax, dt_sub / cell_size(s->w, s->h), u, v, s->rho, s->fx, s->fy};
    fluxes_fill(&F); /* each face's flux once: the ratio and the update each read it twice */
    advect_ratio_all(&F, s->t1);
    advect_apply_all(&F, s->t1, s->t0);
    SWAP(s->rho, s->t0);
}

/* ref_pass's force: one field's, added to u, v. */
static void ref_force(RefSolver *s, const MethodStep *st)
{
    int w = s->w, h = s->h;
    const SolverParams *p = &st->p;
    SolverParams q = *p; /* a field's force that is not the last: no damping, no clamp */
    if (st->force_partial) q.vd = 0.0f, q.umax = FLT_MAX, q.swirl = 0.0f; /* the last field's adds it */
    bool swirl = q.swirl > 0.0f;
    if (swirl) ref_swirl_curl(w, h, s->u, s->v, s->curl, s->curl_tmp);
    ForceSharp sharp = {s->rho, s->tgt, s->pot_c, st->rg, st->rd};
    ref_pass_force_sharp(w, h, &q, &s->blur, s->c0, s->tgt_blur, st->balance ? s->phi : NULL, st->kb, st->noise,
                         swirl ? s->curl : NULL, &sharp, s->u, s->v, s->t0, s->t1);
    SWAP(s->u, s->t0); /* the velocity with the force in u, v (for the next field's) */
    SWAP(s->v, s->t1);
}

/* ref_pass's density transport, repetition k: the substeps the speed needs (method.h),
 * counted at k == 0, by u or u + w. */
static void ref_advect_density(RefSolver *s, const MethodStep *st, int k, float hh)
{
    int w = s->w, h = s->h;
    const SolverParams *p = &st->p;
    const float *tu = s->drift_ran ? s->wu : s->u, *tv = s->drift_ran ? s->wv : s->v;
    float tdt = p->dt * method_transport_share(st, s->drift_ran); /* a long key's pace: slow motion */
    if (k == 0) s->flow_share = method_transport_share(st, false);
    float cap = method_transport_cap(p); /* the projected flow as it is: a guard only */
    if (k == 0)
        s->nsub = method_substeps_for(ref_pass_speed(w, h, cap, tu, tv), method_speed_scale(tdt, hh),
                                      method_advect_substeps(w, h, p));
    if (k < s->nsub) transport(s, tu, tv, cap, tdt / (float)s->nsub);
}

static int ref_pass(void *self, MethodPass pass, int k, const MethodStep *st)
{
    RefSolver *s = self;
    int w = s->w, h = s->h;
    const SolverParams *p = &st->p;
    size_t n = (size_t)w * h;
    float hh = method_grid(w, h).cell;
    s->last = pass;
    switch (pass) {
    case METHOD_PASS_BLUR_RHO:
        blur_coarse(w, h, &s->blur, s->rho, s->c0, s->c1);
        break;
    case METHOD_PASS_POTENTIAL_RHS:
        for (size_t c = 0; c < n; c++) s->t2[c] = s->rho[c] - s->pot_c * s->tgt[c];
        break;
    case METHOD_PASS_POTENTIAL_VCYCLE:
        vcycle(s, 0, &s->phi, &s->t3, s->t2, hh);
        break;
    case METHOD_PASS_FORCE:
        ref_force(s, st);
        break;
    case METHOD_PASS_ADVECT_VEL:
        ref_pass_advect_vel(w, h, p->dt, s->u, s->v, s->t0, s->t1);
        SWAP(s->u, s->t0);
        SWAP(s->v, s->t1);
        break;
    case METHOD_PASS_DIVERGENCE:
        ref_pass_divergence(w, h, s->u, s->v, s->t2);
        break;
    case METHOD_PASS_PRESSURE_VCYCLE:
        vcycle(s, 0, &s->pr, &s->t3, s->t2, hh);
        break;
    case METHOD_PASS_PRESSURE_JACOBI:
        ref_pass_jacobi(w, h, s->pr, s->t2, s->t3);
        SWAP(s->pr, s->t3);
        break;
    case METHOD_PASS_SUBTRACT_GRAD:
        ref_pass_subtract_grad(w, h, s->pr, s->u, s->v, s->t0, s->t1);
        SWAP(s->u, s->t0);
        SWAP(s->v, s->t1);
        break;
    case METHOD_PASS_DRIFT_VEL: /* from ρ̃ of the step's first pass: the density before its transport */
        ref_pass_drift_vel_paced(w, h, p, &s->blur, st->balance ? s->phi : NULL, s->c0, s->tgt_blur,
                                 s->dscale, st->rd, st->umax_flow, s->u, s->v, s->wu, s->wv);
        s->drift_ran = true;
        break;
    case METHOD_PASS_ADVECT_DENSITY: /* the substeps the speed needs (method.h), by u or u + w */
        ref_advect_density(s, st, k, hh);
        break;
    case METHOD_PASS_MIX: { /* by the flow's strain, in the flow's share of the step */
        int count = method_stage_count(st, pass);
        if (k == 0)
            ref_pass_mix_coef(w, h, method_mix_k(w, h, st, count), hh, s->u, s->v, s->drift_ran ? s->wu : NULL,
                              s->drift_ran ? s->wv : NULL, &s->blur, s->c0,
                              s->tgt_blur, s->rho, s->tgt, st->mix_edge_w, method_mix_near(st), s->dscale, s->mixd);
        ref_pass_mix_iter(w, h, s->mixd, s->rho, s->t0, k == 0, s->t1);
        SWAP(s->t0, s->t1);
        if (k == count - 1) {
            ref_pass_mix_apply(w, h, s->rho, s->t0, s->t2);
            SWAP(s->rho, s->t2);
        }
        break;
    }
    case METHOD_PASS_GATHER_BEGIN:
        memcpy(s->t0, s->eg, n * sizeof(float));
        break;
    case METHOD_PASS_GATHER_JACOBI:
        ref_pass_gather_jacobi(w, h, st->gather_a, s->rho, s->tgt, s->tgt_blur, s->t0, s->t1);
        SWAP(s->t0, s->t1);
        break;
    case METHOD_PASS_GATHER_APPLY: { /* substep k of method_gather_substeps: a/count from the density now */
        float as = st->gather_a / (float)method_stage_count(st, pass);
        if (k == 0) memcpy(s->eg, s->t0, n * sizeof(float));
        ref_pass_gather_ratio(w, h, as, s->rho, s->tgt_blur, s->t0, s->t1);
        ref_pass_gather_flux(w, h, as, s->rho, s->tgt_blur, s->t0, s->t1, s->t2);
        SWAP(s->rho, s->t2);
        break;
    }
    case METHOD_PASS_COUNT:
        break;
    }
    (void)k;
    return 0;
}

/* 6. gathering: implicit solve for e, conservative positive application.
 * The Jacobi solve starts from the last step's e (zero after
 * ref_set_density or ref_set_target), not from ρ0 − ρ*: the fluxes are
 * a·D·∇e, so whatever part of e has not converged is multiplied by a·D.
 * From e = ρ0 − ρ* a mode becomes (1 − (aℓ)²μ)/(1 + aℓ) of itself, with
 * μ = λ^k, and the checkerboard mode, whose Jacobi factor λ is near −1
 * once a·D ≳ 1, grows every step (at 256² with the defaults a = 1.3 and
 * the target fills with a checkerboard). From e = 0 a mode becomes
 * (1 + aℓμ)/(1 + aℓ), never more than itself, but the slow modes barely
 * converge: at 256² a square drawn into a small dense disc showed rings
 * in the disc's core for 200 steps (4 iterations) and they needed 8; at
 * 512², 32 (docs/FIDELITY.md). From the last step's e the solve carries
 * on where it stopped. Per mode, (d, e_prev) -> (d', e) has determinant μ
 * and trace 1 + μ − aℓ(1 − μ)/(1 + aℓ): stable for every aℓ when μ ≥ 0,
 * unstable near μ = −1. So k is even (method_gather_iters), which makes
 * μ = λ^k ≥ 0 for every mode. */
void ref_step(RefSolver *s) { ref_step_parts(s, METHOD_PART_ALL, false); }

void ref_step_parts(RefSolver *s, unsigned parts, bool force_partial)
{
    if (parts & METHOD_PART_FORCE) ref_step_begin(s, &s->plan); /* a new step: its plan, for every part */
    s->plan.force_partial = force_partial;
    method_run_parts(&s->plan, parts, ref_pass, s);
}

void ref_copy_velocity(RefSolver *dst, const RefSolver *src)
{
    size_t n = (size_t)src->w * src->h * sizeof(float);
    memcpy(dst->u, src->u, n);
    memcpy(dst->v, src->v, n);
}

void ref_step_begin(RefSolver *s, MethodStep *st)
{
    blur_for_next_step(s, false); /* coarse to fine: this step's σ */
    method_plan(&s->p, method_grid(s->w, s->h), s->nstep++, s->kstep++, s->dscale, st);
    s->nsub = 0;
    s->drift_ran = false;
    s->last = METHOD_PASS_COUNT;
}

int ref_step_pass(RefSolver *s, MethodPass pass, int k, const MethodStep *st)
{
    return ref_pass(s, pass, k, st);
}

int ref_read_output(const RefSolver *s, MethodOut f, float *a, float *b)
{
    int w = s->w, h = s->h;
    size_t bytes = (size_t)w * h * sizeof(float);
    MethodPass last = s->last;
    switch (f) {
    case METHOD_OUT_RHO_BLUR: ref_pass_upsample(w, h, &s->blur, s->c0, a); return 0;
    case METHOD_OUT_POTENTIAL_RHS:
    case METHOD_OUT_DIVERGENCE: memcpy(a, s->t2, bytes); return 0;
    case METHOD_OUT_POTENTIAL: memcpy(a, s->phi, bytes); return 0;
    case METHOD_OUT_PRESSURE: memcpy(a, s->pr, bytes); return 0;
    case METHOD_OUT_DENSITY: memcpy(a, s->rho, bytes); return 0;
    case METHOD_OUT_VELOCITY: /* every velocity pass leaves it in u, v */
        memcpy(a, s->u, bytes);
        memcpy(b, s->v, bytes);
        return 0;
    case METHOD_OUT_DRIFT:
        memcpy(a, s->wu, bytes);
        memcpy(b, s->wv, bytes);
        return 0;
    case METHOD_OUT_GATHER_E: /* iterated in t0 until the apply keeps it */
        memcpy(a, last == METHOD_PASS_GATHER_BEGIN || last == METHOD_PASS_GATHER_JACOBI ? s->t0 : s->eg,
               bytes);
        return 0;
    case METHOD_OUT_COUNT: break;
    }
    return -1;
}

int ref_substeps(const RefSolver *s, int stage) { return stage == 0 ? s->nsub : -1; }


/* The persistent fields in MethodField's order. */
static void state_fields(const RefSolver *s, float *f[METHOD_FIELD_COUNT])
{
    float *all[METHOD_FIELD_COUNT] = {s->rho, s->tgt, s->tgt_blur, s->u, s->v, s->pr, s->phi, s->eg};
    memcpy(f, all, sizeof all);
}

void ref_get_state(const RefSolver *s, MethodState *st)
{
    float *f[METHOD_FIELD_COUNT];
    state_fields(s, f);
    size_t n = (size_t)s->w * s->h;
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) memcpy(st->field[k], f[k], n * sizeof(float));
    st->pot_c = s->pot_c;
    st->dscale = s->dscale;
    st->nstep = s->nstep;
    st->kstep = s->kstep;
}

void ref_set_state(RefSolver *s, const MethodState *st)
{
    float *f[METHOD_FIELD_COUNT];
    state_fields(s, f);
    size_t n = (size_t)s->w * s->h;
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) memcpy(f[k], st->field[k], n * sizeof(float));
    s->pot_c = st->pot_c;
    s->dscale = st->dscale;
    s->nstep = st->nstep;
    s->kstep = st->kstep;
    /* its target blur is of the last step it ran (or of its target's setting):
     * the next step blurs again where its σ differs, as it would have */
    blur_spec_for(s, method_sigma(&s->p, s->kstep > 0 ? s->kstep - 1 : 0));
}

const float *ref_density(const RefSolver *s) { return s->rho; }
const float *ref_target(const RefSolver *s) { return s->tgt; }
const float *ref_target_blur(const RefSolver *s) { return s->tgt_blur; }
const float *ref_velocity_u(const RefSolver *s) { return s->u; }
const float *ref_velocity_v(const RefSolver *s) { return s->v; }

int ref_read_motion(const RefSolver *s, float *u, float *v)
{
    size_t n = (size_t)s->w * s->h;
    float um = method_transport_cap(&s->p), r = s->flow_share > 0.0f ? s->flow_share : 1.0f;
    for (size_t k = 0; k < n; k++) { /* the flow as the transport moved smoke by it (a long key: slowed) */
        u[k] = s->drift_ran ? s->wu[k] : r * clampf(s->u[k], -um, um);
        v[k] = s->drift_ran ? s->wv[k] : r * clampf(s->v[k], -um, um);
    }
    return 0;
}
float *ref_velocity_u_mut(RefSolver *s) { return s->u; }
float *ref_velocity_v_mut(RefSolver *s) { return s->v; }
float *ref_density_mut(RefSolver *s) { return s->rho; }

double ref_mass(const RefSolver *s)
{
    double m = 0.0;
    size_t n = (size_t)s->w * s->h;
    for (size_t k = 0; k < n; k++) m += s->rho[k];
    return m;
}

double ref_error(const RefSolver *s)
{
    double e = 0.0, t = 0.0;
    size_t n = (size_t)s->w * s->h;
    for (size_t k = 0; k < n; k++) {
        e += fabs((double)s->rho[k] - s->tgt[k]);
        t += s->tgt[k];
    }
    return t > 0.0 ? e / t : 0.0;
}

double ref_max_div(const RefSolver *s)
{
    int w = s->w, h = s->h;
    float inv_h = 1.0f / cell_size(w, h);
    double m = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double d = fabs((U(w, h, s->u, i + 1, j) - U(w, h, s->u, i, j) +
                             V(w, h, s->v, i, j + 1) - V(w, h, s->v, i, j)) * inv_h);
            if (d > m) m = d;
        }
    return m;
}

/* The force the next step of this state adds; see cpu_solver.h. */
int ref_force_field(const MethodState *st, const SolverParams *p, int w, int h, float *fu, float *fv)
{
    MethodStep plan;
    method_plan(p, method_grid(w, h), st->nstep, st->kstep, st->dscale, &plan);
    SolverParams q = plan.p; /* vf eased */
    q.dt = 1.0f;
    q.vd = 0.0f;
    q.umax = 1e30f;
    BlurSpec spec;
    method_blur_spec(w, h, q.sigma, &spec);
    size_t n = (size_t)w * h, nc = (size_t)spec.cw * spec.ch;
    float *coarse = malloc(nc * sizeof(float)), *tmp = malloc(nc * sizeof(float));
    float *zero = calloc(n, sizeof(float));
    int rc = -1;
    if (!coarse || !tmp || !zero) goto done;
    ref_pass_downsample(w, h, &spec, st->field[METHOD_FIELD_DENSITY], coarse);
    ref_pass_blur_1d(&spec, 0, coarse, tmp);
    ref_pass_blur_1d(&spec, 1, tmp, coarse);
    ForceSharp sharp = {st->field[METHOD_FIELD_DENSITY], st->field[METHOD_FIELD_TARGET], st->pot_c, plan.rg, plan.rd};
    ref_pass_force_sharp(w, h, &q, &spec, coarse, st->field[METHOD_FIELD_TARGET_BLUR],
                         plan.balance ? st->field[METHOD_FIELD_POTENTIAL] : NULL, plan.balance ? plan.kb : 0.0f,
                         plan.noise, NULL, &sharp, zero, zero, fu, fv); /* from rest: no vorticity to confine */
    rc = 0;
done:
    free(coarse);
    free(tmp);
    free(zero);
    return rc;
}
