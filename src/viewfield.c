/* viewfield: the classroom views' fields from a morph's state; see
 * viewfield.h. GL-free. */
#include "viewfield.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_solver.h"

#define IDX(i, j) ((size_t)(j) * (size_t)w + (size_t)(i))

#define VIEWKIND_NAME(ID, NAME) NAME,
static const char *const names[VIEW_COUNT] = {VIEWKIND_LIST(VIEWKIND_NAME)};
#undef VIEWKIND_NAME
static const char *const titles[VIEW_COUNT] = {
    "density \xcf\x81",
    "target \xcf\x81*",
    "blurred target (\xcf\x83)",
    "velocity u over \xcf\x81",
    "speed |u|",
    "vorticity \xcf\x89 (+: counter-clockwise)",
    "pressure p",
    "divergence \xe2\x88\x87\xc2\xb7u, before | after projection",
    ("driving force vf\xc2\xb7" "F"), /* parenthesised: one string (clang warns of a missing comma) */
    "gathering vg\xc2\xb7G",
    "Fig. 2: the morph, the start and the target"};

const char *viewfield_name(int view) { return view >= 0 && view < VIEW_COUNT ? names[view] : "?"; }
const char *viewfield_title(int view) { return view >= 0 && view < VIEW_COUNT ? titles[view] : "?"; }

int viewfield_parse(const char *name)
{
    for (int k = 0; name && k < VIEW_COUNT; k++)
        if (strcmp(name, names[k]) == 0) return k;
    return -1;
}

const char *viewfield_names(void)
{
    return "density, target, blurred, velocity, speed, vorticity, pressure, divergence, force, "
           "gathering, fig2";
}

bool viewfield_computed(int view)
{
    return view == VIEW_VELOCITY || view == VIEW_SPEED || view == VIEW_VORTICITY || view == VIEW_PRESSURE ||
           view == VIEW_DIVERGENCE || view == VIEW_FORCE || view == VIEW_GATHERING;
}

float viewfield_nice(float x)
{
    if (!(x > 0.0f) || !isfinite(x)) return 1.0f;
    double e = floor(log10((double)x)), b = pow(10.0, e);
    static const double steps[] = {1.0, 2.0, 5.0, 10.0};
    for (int k = 0; k < 4; k++)
        if (steps[k] * b >= (double)x * (1.0 - 1e-6)) return (float)(steps[k] * b);
    return (float)(10.0 * b);
}

ViewRange viewfield_range(const float *v, size_t n, bool sign)
{
    float m = 0.0f;
    for (size_t k = 0; k < n; k++) {
        float a = sign ? fabsf(v[k]) : v[k];
        if (a > m) m = a; /* NaN compares false: skipped */
    }
    float hi = viewfield_nice(m);
    return (ViewRange){sign ? -hi : 0.0f, hi, sign};
}

/* Cell-centred velocity (domain units per time, y down) from the faces. */
static void centred(int w, int h, const float *u, const float *v, float *cx, float *cy)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float ul = i > 0 ? u[IDX(i, j)] : 0.0f, ur = i + 1 < w ? u[IDX(i + 1, j)] : 0.0f;
            float vt = j > 0 ? v[IDX(i, j)] : 0.0f, vb = j + 1 < h ? v[IDX(i, j + 1)] : 0.0f;
            cx[IDX(i, j)] = 0.5f * (ul + ur);
            cy[IDX(i, j)] = 0.5f * (vt + vb);
        }
}

/* vec (interleaved) and |vec| into mag; returns max |vec| */
static float interleave(size_t n, const float *cx, const float *cy, float *vec, float *mag)
{
    float m = 0.0f;
    for (size_t k = 0; k < n; k++) {
        vec[2 * k] = cx[k];
        vec[2 * k + 1] = cy[k];
        float a = sqrtf(cx[k] * cx[k] + cy[k] * cy[k]);
        if (mag) mag[k] = a;
        if (a > m) m = a;
    }
    return m;
}

/* ∂f/∂x and ∂f/∂y (rows) at cell (i, j): central, one-sided at the walls */
static float dx(int w, const float *f, int i, int j, float hh)
{
    int a = i > 0 ? i - 1 : i, b = i + 1 < w ? i + 1 : i;
    return b > a ? (f[IDX(b, j)] - f[IDX(a, j)]) / ((float)(b - a) * hh) : 0.0f;
}
static float dy(int w, int h, const float *f, int i, int j, float hh)
{
    int a = j > 0 ? j - 1 : j, b = j + 1 < h ? j + 1 : j;
    return b > a ? (f[IDX(i, b)] - f[IDX(i, a)]) / ((float)(b - a) * hh) : 0.0f;
}

static double max_abs(const float *f, size_t n)
{
    double m = 0.0;
    for (size_t k = 0; k < n; k++) m = fmax(m, fabs((double)f[k]));
    return m;
}

/* The divergence before the projection (scalar) and after it (scalar2),
 * a, b scratch. 0, or -1 out of memory. */
static int view_divergence(ViewField *f, const MethodState *st, int w, int h, float *a, float *b)
{
    size_t n = (size_t)w * h;
    const float *u = st->field[METHOD_FIELD_VEL_U], *v = st->field[METHOD_FIELD_VEL_V];
    float *np = malloc(n * sizeof(float));
    if (!np || !(f->scalar2 = malloc(n * sizeof(float)))) {
        free(np);
        return -1;
    }
    /* before = after with ∇p added back: subtract_grad with -p */
    for (size_t k = 0; k < n; k++) np[k] = -st->field[METHOD_FIELD_PRESSURE][k];
    ref_pass_subtract_grad(w, h, np, u, v, a, b);
    free(np);
    ref_pass_divergence(w, h, a, b, f->scalar);
    ref_pass_divergence(w, h, u, v, f->scalar2);
    f->max1 = max_abs(f->scalar, n);
    f->max2 = max_abs(f->scalar2, n);
    float m = (float)fmax(f->max1, f->max2);
    f->range = viewfield_range(&m, 1, true);
    return 0;
}

/* The force the next step adds (cpu_solver's), centred, as arrows and its
 * magnitude; a, b scratch. 0, or -1 out of memory. */
static int view_force(ViewField *f, const MethodState *st, const SolverParams *p, int w, int h, float *a,
                      float *b)
{
    size_t n = (size_t)w * h;
    if (ref_force_field(st, p, w, h, a, b) < 0) return -1;
    float *cx = malloc(n * sizeof(float)), *cy = malloc(n * sizeof(float));
    int rc = -1;
    if (cx && cy && (f->vec = malloc(n * 2 * sizeof(float)))) {
        centred(w, h, a, b, cx, cy);
        f->vmax = interleave(n, cx, cy, f->vec, f->scalar);
        rc = 0;
    }
    free(cx);
    free(cy);
    return rc;
}

/* The gathering term vg·∇·[ρρ̃* ∇(ρ − ρ*)], the coefficients the mean of
 * the two cells' ρρ̃*, walls no flux; a, b scratch. */
static void view_gathering(ViewField *f, const MethodState *st, const SolverParams *p, int w, int h, float *a,
                           float *b)
{
    size_t n = (size_t)w * h;
    float hh = method_grid(w, h).cell;
    const float *rho = st->field[METHOD_FIELD_DENSITY], *tgt = st->field[METHOD_FIELD_TARGET];
    const float *tb = st->field[METHOD_FIELD_TARGET_BLUR];
    SolverParams q = *p;
    method_params_settle(&q);
    float k = q.gather ? q.vg * q.gather_gain / (hh * hh) : 0.0f;
    for (size_t c = 0; c < n; c++) a[c] = rho[c] * tb[c], b[c] = rho[c] - tgt[c];
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double s = 0.0;
            static const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
            for (int q4 = 0; q4 < 4; q4++) {
                int x = i + di[q4], y = j + dj[q4];
                if (x < 0 || x >= w || y < 0 || y >= h) continue;
                double d = 0.5 * ((double)a[IDX(i, j)] + a[IDX(x, y)]);
                s += d * ((double)b[IDX(x, y)] - b[IDX(i, j)]);
            }
            f->scalar[IDX(i, j)] = (float)(k * s);
        }
}

int viewfield_compute(int view, const MethodState *st, const SolverParams *p, int w, int h, ViewField *f,
                      char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    f->h = h;
    if (!viewfield_computed(view)) {
        snprintf(err, errlen, "viewfield: the %s view computes no field", viewfield_name(view));
        return -1;
    }
    size_t n = (size_t)w * h;
    float hh = method_grid(w, h).cell;
    const float *rho = st->field[METHOD_FIELD_DENSITY];
    const float *u = st->field[METHOD_FIELD_VEL_U], *v = st->field[METHOD_FIELD_VEL_V];
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    f->scalar = malloc(n * sizeof(float));
    bool sign = false;
    if (!a || !b || !f->scalar) goto oom;
    switch (view) {
    case VIEW_VELOCITY:
    case VIEW_SPEED:
        centred(w, h, u, v, a, b);
        if (!(f->vec = malloc(n * 2 * sizeof(float)))) goto oom;
        f->vmax = interleave(n, a, b, f->vec, f->scalar);
        f->range = viewfield_range(f->scalar, n, false); /* the speed's: the colour bar */
        if (view == VIEW_VELOCITY) memcpy(f->scalar, rho, n * sizeof(float));
        else {
            free(f->vec);
            f->vec = NULL;
        }
        break;
    case VIEW_VORTICITY:
        centred(w, h, u, v, a, b);
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) f->scalar[IDX(i, j)] = dy(w, h, a, i, j, hh) - dx(w, b, i, j, hh);
        sign = true;
        break;
    case VIEW_PRESSURE:
        memcpy(f->scalar, st->field[METHOD_FIELD_PRESSURE], n * sizeof(float));
        sign = true;
        break;
    case VIEW_DIVERGENCE:
        if (view_divergence(f, st, w, h, a, b) < 0) goto oom;
        goto done;
    case VIEW_FORCE:
        if (view_force(f, st, p, w, h, a, b) < 0) goto oom;
        break;
    case VIEW_GATHERING:
        view_gathering(f, st, p, w, h, a, b);
        sign = true;
        break;
    }
    f->max1 = max_abs(f->scalar, n);
    if (view != VIEW_VELOCITY && view != VIEW_SPEED) f->range = viewfield_range(f->scalar, n, sign);
done:
    free(a);
    free(b);
    return 0;
oom:
    free(a);
    free(b);
    viewfield_free(f);
    snprintf(err, errlen, "viewfield: out of memory for the %s view (%dx%d)", viewfield_name(view), w, h);
    return -1;
}

void viewfield_free(ViewField *f)
{
    free(f->scalar);
    free(f->scalar2);
    free(f->vec);
    f->scalar = f->scalar2 = f->vec = NULL;
}
