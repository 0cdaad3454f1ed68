/* fidelity: morph-quality measures on plain density arrays. See fidelity.h. */
#include "fidelity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double fidelity_error(const float *rho, const float *tgt, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t k = 0; k < n; k++) {
        num += fabs((double)rho[k] - (double)tgt[k]);
        den += tgt[k];
    }
    return den > 0.0 ? num / den : NAN;
}

/* A breakpoint of the blend distance: |e − s·d| = w·|s − t|. */
typedef struct {
    double t, w;
} Break;

static int break_cmp(const void *a, const void *b)
{
    double x = ((const Break *)a)->t, y = ((const Break *)b)->t;
    return (x > y) - (x < y);
}

/* Σ|ρ − ((1 − s)·start + s·tgt)|, in double. */
static double blend_l1(const float *rho, const float *start, const float *tgt, size_t n, double s)
{
    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += fabs((double)rho[k] - ((1.0 - s) * start[k] + s * (double)tgt[k]));
    return sum;
}

/* f(s) = Σ_k |e_k − s·d_k| with e = ρ − start, d = tgt − start. Cells with
 * d = 0 add a constant. The others add w·|s − t| with w = |d|, t = e/d. On
 * [0, 1] a breakpoint t outside [0, 1] adds w·|s − clamp(t)| plus a constant,
 * so clamping the breakpoints first leaves the minimiser alone; the minimiser
 * of Σ w·|s − t| is then any weighted median, which lies in [0, 1]. */
double fidelity_blend_distance(const float *rho, const float *start, const float *tgt, size_t n,
                               double *s_best)
{
    double den = 0.0;
    for (size_t k = 0; k < n; k++) den += tgt[k];
    if (!(den > 0.0)) return NAN;
    Break *b = malloc((n ? n : 1) * sizeof *b);
    if (!b) return NAN;
    size_t m = 0;
    double wsum = 0.0;
    for (size_t k = 0; k < n; k++) {
        double d = (double)tgt[k] - (double)start[k];
        if (d == 0.0) continue;
        double t = ((double)rho[k] - (double)start[k]) / d;
        b[m].t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
        b[m].w = fabs(d);
        wsum += b[m].w;
        m++;
    }
    double s = 0.0;
    if (m > 0) {
        qsort(b, m, sizeof *b, break_cmp);
        /* the first breakpoint where the weight to its left reaches half */
        double acc = 0.0;
        for (size_t k = 0; k < m; k++) {
            acc += b[k].w;
            if (acc >= 0.5 * wsum) {
                s = b[k].t;
                break;
            }
        }
    }
    free(b);
    double best = blend_l1(rho, start, tgt, n, s);
    /* guard against rounding in the median's choice: the ends are candidates too */
    for (int e = 0; e < 2; e++) {
        double v = blend_l1(rho, start, tgt, n, (double)e);
        if (v < best) {
            best = v;
            s = (double)e;
        }
    }
    if (s_best) *s_best = s;
    return best / den;
}

double fidelity_stripes(const float *rho, int w, int h)
{
    if (w < 3 || h < 3) return 0.0;
    double mass = 0.0;
    for (size_t k = 0; k < (size_t)w * (size_t)h; k++) mass += rho[k];
    double mean = mass / ((double)w * (double)h);
    if (!(mean > 0.0)) return 0.0;
    double sum = 0.0;
    for (int j = 1; j < h - 1; j++) {
        const float *up = rho + (size_t)(j - 1) * w, *row = rho + (size_t)j * w,
                    *dn = rho + (size_t)(j + 1) * w;
        for (int i = 1; i < w - 1; i++) {
            double c2 = 2.0 * row[i];
            sum += fabs((double)dn[i + 1] - c2 + up[i - 1]) + fabs((double)up[i + 1] - c2 + dn[i - 1]);
        }
    }
    double interior = (double)(w - 2) * (double)(h - 2);
    return sum / interior / mean;
}

double fidelity_stripe_ratio(double stripes, double stripes_start)
{
    if (stripes_start > 0.0) return stripes / stripes_start;
    return stripes > 0.0 ? INFINITY : 1.0;
}

/* Area-average src (sw x sh) down to dst (dw x dh, dw <= sw, dh <= sh): each
 * destination cell is the box-overlap weighted mean of the source cells it
 * covers, in coordinates where both grids span [0, 1] on each axis. Done as
 * two 1-D passes (x, then y). Returns 0 or -1 (no memory). */
static int area_average(const float *src, int sw, int sh, double *dst, int dw, int dh)
{
    double *tmp = calloc((size_t)dw * (size_t)sh, sizeof *tmp);
    if (!tmp) return -1;
    /* x: destination cell X covers source [X·sw/dw, (X+1)·sw/dw) */
    for (int X = 0; X < dw; X++) {
        double a = (double)X * sw / dw, b = (double)(X + 1) * sw / dw;
        int i0 = (int)floor(a), i1 = (int)ceil(b);
        if (i1 > sw) i1 = sw;
        for (int i = i0; i < i1; i++) {
            double lo = a > i ? a : i, hi = b < i + 1 ? b : i + 1;
            double wgt = (hi - lo) / (b - a);
            if (wgt <= 0.0) continue;
            for (int j = 0; j < sh; j++) tmp[(size_t)j * dw + X] += wgt * src[(size_t)j * sw + i];
        }
    }
    for (size_t k = 0; k < (size_t)dw * (size_t)dh; k++) dst[k] = 0.0;
    for (int Y = 0; Y < dh; Y++) {
        double a = (double)Y * sh / dh, b = (double)(Y + 1) * sh / dh;
        int j0 = (int)floor(a), j1 = (int)ceil(b);
        if (j1 > sh) j1 = sh;
        for (int j = j0; j < j1; j++) {
            double lo = a > j ? a : j, hi = b < j + 1 ? b : j + 1;
            double wgt = (hi - lo) / (b - a);
            if (wgt <= 0.0) continue;
            for (int X = 0; X < dw; X++) dst[(size_t)Y * dw + X] += wgt * tmp[(size_t)j * dw + X];
        }
    }
    free(tmp);
    return 0;
}

double fidelity_distance_resampled(const float *a, int aw, int ah, const float *b, int bw, int bh)
{
    if (aw <= 0 || ah <= 0 || bw <= 0 || bh <= 0) return NAN;
    if ((long long)aw * bh != (long long)ah * bw) return NAN;
    /* make a the finer one */
    if ((long long)aw * ah < (long long)bw * bh) {
        const float *t = a;
        a = b;
        b = t;
        int tw = aw, th = ah;
        aw = bw;
        ah = bh;
        bw = tw;
        bh = th;
    }
    size_t n = (size_t)bw * (size_t)bh;
    double *ad = malloc(n * sizeof *ad);
    if (!ad) return NAN;
    if (area_average(a, aw, ah, ad, bw, bh) < 0) {
        free(ad);
        return NAN;
    }
    double ma = 0.0, mb = 0.0;
    for (size_t k = 0; k < n; k++) {
        ma += ad[k];
        mb += b[k];
    }
    double d = NAN;
    if (ma > 0.0 && mb > 0.0) {
        d = 0.0;
        for (size_t k = 0; k < n; k++) d += fabs(ad[k] / ma - (double)b[k] / mb);
    }
    free(ad);
    return d;
}

int fidelity_settle_update(FidelitySettle *s, long step, double error)
{
    if (!s->started || error < s->best * (1.0 - FIDELITY_SETTLE_GAIN)) {
        s->started = true;
        s->best = error;
        s->best_step = step;
    }
    if (error <= FIDELITY_ARRIVED) return FIDELITY_ARRIVED_AT;
    if (step - s->best_step >= FIDELITY_SETTLE_STEPS) return FIDELITY_SETTLED_AT;
    return FIDELITY_RUNNING;
}

/* ---- does the flow carry the smoke? ------------------------------------------ */

/* A separable Gaussian of sigma cells, radius ceil(3σ), edges clamped, on a
 * w x h array of doubles, in place (tmp: w*h doubles). */
static void gauss_blur(double *f, double *tmp, int w, int h, double sigma)
{
    int r = (int)ceil(3.0 * sigma);
    if (r < 1) r = 1;
    double *k = malloc((size_t)(r + 1) * sizeof *k), sum = 0.0;
    if (!k) return;
    for (int q = 0; q <= r; q++) {
        k[q] = exp(-(double)q * q / (2.0 * sigma * sigma));
        sum += q ? 2.0 * k[q] : k[q];
    }
    for (int q = 0; q <= r; q++) k[q] /= sum;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double a = 0.0;
            for (int q = -r; q <= r; q++) {
                int x = i + q < 0 ? 0 : (i + q >= w ? w - 1 : i + q);
                a += k[q < 0 ? -q : q] * f[(size_t)j * w + x];
            }
            tmp[(size_t)j * w + i] = a;
        }
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double a = 0.0;
            for (int q = -r; q <= r; q++) {
                int y = j + q < 0 ? 0 : (j + q >= h ? h - 1 : j + q);
                a += k[q < 0 ? -q : q] * tmp[(size_t)y * w + i];
            }
            f[(size_t)j * w + i] = a;
        }
    free(k);
}

double fidelity_print_through(const float *rho, const float *start, const float *tgt, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *t = malloc(n * sizeof *t);
    double p = NAN;
    if (!a || !b || !t) goto out;
    for (size_t k = 0; k < n; k++) {
        a[k] = (double)rho[k] - (double)start[k];
        b[k] = tgt[k];
    }
    /* H(x) = x − G*x, linear: H(ρ) − H(start) = H(ρ − start) */
    double *ga = malloc(n * sizeof *ga), *gb = malloc(n * sizeof *gb);
    if (!ga || !gb) {
        free(ga);
        free(gb);
        goto out;
    }
    memcpy(ga, a, n * sizeof *ga);
    memcpy(gb, b, n * sizeof *gb);
    gauss_blur(ga, t, w, h, FIDELITY_PRINT_SIGMA);
    gauss_blur(gb, t, w, h, FIDELITY_PRINT_SIGMA);
    double ma = 0.0, mb = 0.0;
    for (size_t k = 0; k < n; k++) {
        a[k] -= ga[k];
        b[k] -= gb[k];
        ma += a[k];
        mb += b[k];
    }
    free(ga);
    free(gb);
    ma /= (double)n;
    mb /= (double)n;
    double sab = 0.0, saa = 0.0, sbb = 0.0;
    for (size_t k = 0; k < n; k++) {
        double x = a[k] - ma, y = b[k] - mb;
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    p = saa > 0.0 && sbb > 0.0 ? sab / sqrt(saa * sbb) : 0.0;
out:
    free(a);
    free(b);
    free(t);
    return p;
}

/* Σ|G*f| over the grid, G of sigma cells: f box-averaged by a factor q (a
 * power of two, so the Gaussian is about 4 coarse cells), blurred there,
 * each coarse cell counted as q² fine ones. f is consumed. */
static int coarse_l1(const double *f, int w, int h, double sigma, double *out)
{
    int q = 1;
    while (sigma / (2.0 * q) >= 4.0) q *= 2;
    int cw = (w + q - 1) / q, ch = (h + q - 1) / q;
    size_t nc = (size_t)cw * (size_t)ch;
    double *c = calloc(nc, sizeof *c), *t = malloc(nc * sizeof *t);
    if (!c || !t) {
        free(c);
        free(t);
        return -1;
    }
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) c[(size_t)(j / q) * cw + i / q] += f[(size_t)j * w + i];
    gauss_blur(c, t, cw, ch, sigma / q);
    double s = 0.0;
    for (size_t k = 0; k < nc; k++) s += fabs(c[k]);
    *out = s;
    free(c);
    free(t);
    return 0;
}

int fidelity_flow_add(FidelityFlow *f, const float *rho0, const float *rho1, const float *ux,
                      const float *uy, int w, int h, double cell, double dt)
{
    size_t n = (size_t)w * (size_t)h;
    double *r = malloc(n * sizeof *r), *d = malloc(n * sizeof *d);
    if (!r || !d) {
        free(r);
        free(d);
        return -1;
    }
#define FX(i, j) ((i) < 0 || (i) >= w ? 0.0 : (double)rho0[(size_t)(j) * w + (i)] * ux[(size_t)(j) * w + (i)])
#define FY(i, j) ((j) < 0 || (j) >= h ? 0.0 : (double)rho0[(size_t)(j) * w + (i)] * uy[(size_t)(j) * w + (i)])
    double sr = 0.0, sd = 0.0, ens = 0.0, vs = cell / dt; /* cells/step -> domain units/time */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            size_t k = (size_t)j * w + i;
            d[k] = (double)rho1[k] - (double)rho0[k];
            r[k] = d[k] + 0.5 * (FX(i + 1, j) - FX(i - 1, j)) + 0.5 * (FY(i, j + 1) - FY(i, j - 1));
            sr += fabs(r[k]);
            sd += fabs(d[k]);
            if (i > 0 && i < w - 1 && j > 0 && j < h - 1) {
                /* ω in 1/time: velocity·vs over 2h */
                double om = (uy[k + 1] - uy[k - 1] - ux[k + w] + ux[k - w]) * vs / (2.0 * cell);
                ens += 0.5 * om * om * cell * cell;
            }
        }
#undef FX
#undef FY
    double rc, dc;
    double sigma = FIDELITY_COARSE_SIGMA * (double)(w < h ? w : h);
    int rc_ok = coarse_l1(r, w, h, sigma, &rc), dc_ok = coarse_l1(d, w, h, sigma, &dc);
    free(r);
    free(d);
    if (rc_ok < 0 || dc_ok < 0) return -1;
    f->r += sr;
    f->d += sd;
    f->rc += rc;
    f->dc += dc;
    f->enstrophy += ens;
    f->steps++;
    return 0;
}

double fidelity_flow_u(const FidelityFlow *f) { return f->d > 0.0 ? f->r / f->d : NAN; }
double fidelity_flow_uc(const FidelityFlow *f) { return f->dc > 0.0 ? f->rc / f->dc : NAN; }
void fidelity_flow_merge(FidelityFlow *a, const FidelityFlow *b)
{
    a->r += b->r, a->d += b->d, a->rc += b->rc, a->dc += b->dc;
    a->enstrophy += b->enstrophy, a->steps += b->steps;
}

double fidelity_flow_enstrophy(const FidelityFlow *f)
{
    return f->steps > 0 ? f->enstrophy / (double)f->steps : NAN;
}

float *fidelity_front_map(const float *start, int w, int h, float thresh)
{
    size_t n = (size_t)w * (size_t)h;
    float *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) return NULL;
    for (size_t k = 0; k < n; k++) d[k] = start[k] > thresh ? 0.0f : INFINITY;
    /* the chessboard distance, exactly, by two sweeps over the 8 neighbours
     * with unit steps (a chamfer whose weights are the metric's own) */
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float *c = &d[(size_t)j * w + i];
            if (i > 0) *c = fminf(*c, c[-1] + 1.0f);
            if (j > 0) {
                const float *up = c - w;
                *c = fminf(*c, up[0] + 1.0f);
                if (i > 0) *c = fminf(*c, up[-1] + 1.0f);
                if (i < w - 1) *c = fminf(*c, up[1] + 1.0f);
            }
        }
    for (int j = h - 1; j >= 0; j--)
        for (int i = w - 1; i >= 0; i--) {
            float *c = &d[(size_t)j * w + i];
            if (i < w - 1) *c = fminf(*c, c[1] + 1.0f);
            if (j < h - 1) {
                const float *dn = c + w;
                *c = fminf(*c, dn[0] + 1.0f);
                if (i > 0) *c = fminf(*c, dn[-1] + 1.0f);
                if (i < w - 1) *c = fminf(*c, dn[1] + 1.0f);
            }
        }
    return d;
}

double fidelity_front_excess(const float *rho, const float *map, int w, int h, float thresh,
                             double reach)
{
    double worst = 0.0;
    for (size_t k = 0; k < (size_t)w * (size_t)h; k++)
        if (rho[k] > thresh && (double)map[k] - reach > worst) worst = (double)map[k] - reach;
    return worst;
}
