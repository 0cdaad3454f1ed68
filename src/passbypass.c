/* passbypass: the pass-by-pass mode's view model; see passbypass.h. GL-free. */
#include "passbypass.h"

#include <math.h>
#include <stdio.h>

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
