/* passbypass: the pass-by-pass mode's view model; see passbypass.h. GL-free. */
#include "passbypass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void passbypass_series_push(PassbypassSeries *s, MethodPass pass, double max, double rms)
{
    if (s->n >= PASSBYPASS_SERIES_MAX) return;
    s->max[s->n] = max;
    s->rms[s->n] = rms;
    s->pass[s->n] = pass;
    s->n++;
}

int passbypass_record(PassbypassPlot *plot, Morph *m, const MorphPassInfo *pi)
{
    PassbypassSeries *s;
    bool first;
    switch (pi->pass) {
    case METHOD_PASS_DIVERGENCE: s = &plot->pressure, first = true; break;
    case METHOD_PASS_PRESSURE_VCYCLE:
    case METHOD_PASS_PRESSURE_JACOBI: s = &plot->pressure, first = false; break;
    case METHOD_PASS_POTENTIAL_RHS: s = &plot->potential, first = true; break;
    case METHOD_PASS_POTENTIAL_VCYCLE: s = &plot->potential, first = false; break;
    default: return 0;
    }
    double max, rms;
    if (morph_pass_residual(m, &max, &rms) < 0) return -1;
    plot->shown = s == &plot->pressure ? PASSBYPASS_PRESSURE : PASSBYPASS_POTENTIAL;
    if (first || s->step != pi->step) {
        s->n = 0;
        s->step = pi->step;
    }
    passbypass_series_push(s, pi->pass, max, rms);
    return 1;
}

int passbypass_points(const PassbypassSeries *s, bool use_rms, float x, float y, float w, float h,
                      float *xy, double *lo, double *hi)
{
    const double *v = use_rms ? s->rms : s->max;
    double mn = INFINITY, mx = 0.0;
    for (int k = 0; k < s->n; k++)
        if (v[k] > 0.0 && isfinite(v[k])) {
            if (v[k] < mn) mn = v[k];
            if (v[k] > mx) mx = v[k];
        }
    double a = mx > 0.0 ? floor(log10(mn)) : 0.0, b = mx > 0.0 ? ceil(log10(mx)) : 1.0;
    if (b <= a) b = a + 1.0;
    if (lo) *lo = pow(10.0, a);
    if (hi) *hi = pow(10.0, b);
    for (int k = 0; k < s->n; k++) {
        double d = v[k] > 0.0 && isfinite(v[k]) ? log10(v[k]) : a;
        xy[2 * k] = x + (s->n > 1 ? w * (float)k / (float)(s->n - 1) : 0.0f);
        xy[2 * k + 1] = y + h * (float)((d - a) / (b - a));
    }
    return s->n;
}

void passbypass_label(const MorphPassInfo *pi, char *buf, size_t n)
{
    char rep[32] = "";
    if (pi->count > 1) snprintf(rep, sizeof rep, " %d/%d", pi->k + 1, pi->count);
    snprintf(buf, n, "step %ld  pass %d/%d  %s%s -> %s", pi->step, pi->index + 1, pi->total, pi->name, rep,
             method_out_name(pi->out));
}

void passbypass_normalize(MethodOut f, const float *a, const float *b, size_t n, float *out, double *lo,
                          double *hi)
{
    bool vec = method_out_is_vector(f) && b, sgn = !vec && method_out_is_signed(f);
    double mx = 0.0;
    for (size_t k = 0; k < n; k++) {
        double v = vec ? hypot(a[k], b[k]) : fabs(a[k]);
        if (v > mx && isfinite(v)) mx = v;
    }
    double inv = mx > 0.0 ? 1.0 / mx : 0.0;
    for (size_t k = 0; k < n; k++) {
        double v = vec ? hypot(a[k], b[k]) * inv : sgn ? 0.5 + 0.5 * a[k] * inv : a[k] * inv;
        out[k] = (float)(v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v);
    }
    if (lo) *lo = sgn ? -mx : 0.0;
    if (hi) *hi = mx;
}

void passbypass_free(PassbypassPlot *plot)
{
    free(plot->gather_e);
    plot->gather_e = NULL;
    plot->gather_n = 0;
}

int passbypass_record_gather(PassbypassPlot *plot, const MorphPassInfo *pi, const float *e, size_t n)
{
    if (pi->pass != METHOD_PASS_GATHER_BEGIN && pi->pass != METHOD_PASS_GATHER_JACOBI) return 0;
    PassbypassSeries *s = &plot->gather;
    if (plot->gather_n != n) {
        free(plot->gather_e);
        plot->gather_n = 0;
        if (!(plot->gather_e = malloc(n * sizeof *plot->gather_e))) return -1;
        plot->gather_n = n;
        s->n = 0;
    }
    plot->shown = PASSBYPASS_GATHER;
    if (pi->pass == METHOD_PASS_GATHER_BEGIN || s->step != pi->step || s->n == 0) {
        s->n = 0;
        s->step = pi->step;
        memcpy(plot->gather_e, e, n * sizeof *e);
        if (pi->pass == METHOD_PASS_GATHER_BEGIN) return 0;
    }
    double mx = 0.0, sq = 0.0;
    for (size_t k = 0; k < n; k++) {
        double d = fabs((double)e[k] - plot->gather_e[k]);
        if (isfinite(d)) {
            mx = fmax(mx, d);
            sq += d * d;
        }
    }
    memcpy(plot->gather_e, e, n * sizeof *e);
    passbypass_series_push(s, pi->pass, mx, n ? sqrt(sq / (double)n) : 0.0);
    return 1;
}

const PassbypassSeries *passbypass_shown(const PassbypassPlot *plot)
{
    return plot->shown == PASSBYPASS_GATHER ? &plot->gather
           : plot->shown == PASSBYPASS_POTENTIAL ? &plot->potential : &plot->pressure;
}

const char *passbypass_caption(const PassbypassPlot *plot)
{
    switch (plot->shown) {
    case PASSBYPASS_GATHER: return "gathering solve: change of e";
    case PASSBYPASS_POTENTIAL: return "potential solve: residual";
    default: return "pressure solve: residual";
    }
}

void passbypass_explain(const MorphPassInfo *pi, char *buf, size_t n)
{
    char arr[96] = "";
    if (pi->arrive) {
        if (pi->rg <= 0.0f)
            snprintf(arr, sizeof arr, " (off: the flow alone carries the smoke for the first %d%% of the way)",
                     (int)lround(100.0 * (pi->gather_from > 0.0f ? pi->gather_from : METHOD_ARRIVE_ON)));
        else
            snprintf(arr, sizeof arr, " at %d%% (timed arrival)", (int)lround(100.0 * pi->rg));
    } else if (pi->rg < 1.0f) {
        snprintf(arr, sizeof arr, " at %d%% (easing in)", (int)lround(100.0 * pi->rg));
    }
    switch (pi->pass) {
    case METHOD_PASS_BLUR_RHO:
        snprintf(buf, n, "the density blurred (Gaussian of width \xcf\x83) so the force reaches far from the shape");
        break;
    case METHOD_PASS_POTENTIAL_RHS:
        snprintf(buf, n, "balance force: the deficit \xcf\x81 \xe2\x88\x92 c\xcf\x81*, right-hand side of "
                 "\xe2\x88\x87\xc2\xb2\xcf\x86");
        break;
    case METHOD_PASS_POTENTIAL_VCYCLE:
        snprintf(buf, n, "balance force: one multigrid V-cycle on the deficit potential \xcf\x86");
        break;
    case METHOD_PASS_FORCE:
        if (pi->noise > 0.0f && pi->swirl > 0.0f)
            snprintf(buf, n, "u += dt\xc2\xb7vf\xc2\xb7" "F\xc2\xb7(1 + noise %.2g) (%s, vf %.3g) + vorticity "
                     "confinement (swirl %g), then damping; the noise seeds fingers and fades",
                     pi->noise, pi->fattal ? "Fattal's" : "balance force", pi->vf, pi->swirl);
        else if (pi->swirl > 0.0f)
            snprintf(buf, n, "u += dt\xc2\xb7vf\xc2\xb7" "F (%s, vf %.3g) + vorticity confinement (swirl %g), "
                     "then damping", pi->fattal ? "Fattal's" : "balance force", pi->vf, pi->swirl);
        else
            snprintf(buf, n, "u += dt\xc2\xb7vf\xc2\xb7" "F (%s, vf %.3g), then damping", pi->fattal ? "Fattal's" : "balance force",
                     pi->vf);
        break;
    case METHOD_PASS_ADVECT_VEL: snprintf(buf, n, "the velocity carried along by itself (semi-Lagrangian)"); break;
    case METHOD_PASS_DIVERGENCE: snprintf(buf, n, "\xe2\x88\x87\xc2\xb7u before the projection: what the pressure must remove"); break;
    case METHOD_PASS_PRESSURE_VCYCLE: snprintf(buf, n, "pressure solve \xe2\x88\x87\xc2\xb2p = \xe2\x88\x87\xc2\xb7u: one multigrid V-cycle"); break;
    case METHOD_PASS_PRESSURE_JACOBI: snprintf(buf, n, "pressure solve \xe2\x88\x87\xc2\xb2p = \xe2\x88\x87\xc2\xb7u: one damped Jacobi iteration"); break;
    case METHOD_PASS_SUBTRACT_GRAD: snprintf(buf, n, "u \xe2\x88\x92= \xe2\x88\x87p: the velocity is now divergence-free"); break;
    case METHOD_PASS_DRIFT_VEL:
        snprintf(buf, n, "transport speeds: the flow plus a drift that slides arrived smoke toward the target, "
                 "within --umax%s", arr);
        break;
    case METHOD_PASS_ADVECT_DENSITY:
        snprintf(buf, n, "the smoke carried by the flow%s (conservative, within --umax)",
                 pi->drift ? " and the drift" : "");
        break;
    case METHOD_PASS_MIX:
        snprintf(buf, n, "subgrid mixing: smoke strained thinner than the grid carries diffuses (mass kept)");
        break;
    case METHOD_PASS_GATHER_BEGIN:
        snprintf(buf, n, "gathering%s: its implicit solve starts from e = \xcf\x81 \xe2\x88\x92 \xcf\x81*", arr);
        break;
    case METHOD_PASS_GATHER_JACOBI:
        snprintf(buf, n, "gathering solve: one Jacobi iteration on e (not the pressure's)");
        break;
    case METHOD_PASS_GATHER_APPLY: snprintf(buf, n, "gathering: its fluxes applied (mass kept, \xcf\x81 \xe2\x89\xa5 0)"); break;
    default: snprintf(buf, n, "%s", pi->name ? pi->name : "?"); break;
    }
}

bool passbypass_values(MethodOut f, const float *a, const float *b, size_t n, float *out)
{
    bool vec = method_out_is_vector(f) && b;
    for (size_t k = 0; k < n; k++) out[k] = vec ? (float)hypot(a[k], b[k]) : a[k];
    return !vec && method_out_is_signed(f);
}
