/* method: parameters, grid, schedules, constants and the step's list of
 * passes; see method.h. GL-free. */
#include "method.h"

#include <stdint.h>
#include <math.h>
#include <float.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MethodGrid method_grid(int w, int h)
{
    MethodGrid g = {.w = w, .h = h, .cell = 1.0f / (float)(w < h ? w : h)};
    return g;
}

#define SETTING_GROUP(ID, TITLE)

/* Every parameter's default, from settings.def's DEF column. */
#define METHOD_DEF_P(MEMBER, DEF) p->MEMBER = DEF;
#define METHOD_DEF_C(MEMBER, DEF)
#define METHOD_DEF_S(MEMBER, DEF)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, ...) METHOD_DEF_##WHERE(MEMBER, DEF)
void method_params_default(SolverParams *p)
{
#include "settings.def"
    p->set = METHOD_SET(METHOD_PARAM_COUNT) - 1ull;
}
#undef SETTING

void method_params_resolve(SolverParams *p)
{
    SolverParams d;
    method_params_default(&d);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        if (!(p->set & METHOD_SET(k)) && method_param_get(p, k) == 0.0)
            method_param_set(p, k, method_param_get(&d, k));
    p->set = d.set;
}

void method_params_settle(SolverParams *p)
{
    method_params_resolve(p);
    if (p->arrive == SETTING_AUTO) p->arrive = METHOD_PACE_TIME;
}

bool method_params_equal(const SolverParams *a, const SolverParams *b)
{
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        if (method_param_get(a, k) != method_param_get(b, k)) return false;
    return true;
}

/* The message of a parameter out of its range: "--dt must be in (0, 1]", or
 * with no option "eps must be in [1e-35, 1)"; in a buffer of the calling
 * thread's, valid until its next call. */
static const char *range_message(const char *opt, const char *name, const char *verb, const char *range)
{
    static _Thread_local char buf[160];
    snprintf(buf, sizeof buf, "%s%s must %s %s", opt ? "--" : "", opt ? opt : name, verb, range);
    return buf;
}

/* Each parameter's range, from settings.def's LO, HI, RANGE and FLAGS
 * columns; compared in the member's own type. */
#define METHOD_RANGE_SK_FLOAT(OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)                             \
    if (!(((FLAGS) & SF_AUTO) && p->MEMBER == SETTING_AUTO) &&                                    \
        (!(((FLAGS) & SF_LO_OPEN) ? p->MEMBER > LO : p->MEMBER >= LO) ||                          \
         !(((FLAGS) & SF_HI_OPEN) ? p->MEMBER < HI : p->MEMBER <= HI)))                           \
        return range_message(OPT, KEY, ((FLAGS) & SF_AUTO) ? "be auto or in" : "be in", RANGE);
#define METHOD_RANGE_SK_INT METHOD_RANGE_SK_FLOAT
#define METHOD_RANGE_SK_ENUM(OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)                              \
    if (p->MEMBER < LO || p->MEMBER > HI) return range_message(OPT, KEY, "be", RANGE);
#define METHOD_RANGE_SK_NOT(OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)
#define METHOD_RANGE_SK_BOOL METHOD_RANGE_SK_NOT
#define METHOD_RANGE_P(KIND, OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)                              \
    METHOD_RANGE_##KIND(OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)
#define METHOD_RANGE_C(KIND, OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)
#define METHOD_RANGE_S(KIND, OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    METHOD_RANGE_##WHERE(KIND, OPT, KEY, MEMBER, LO, HI, RANGE, FLAGS)
const char *method_params_check(const SolverParams *given)
{
    SolverParams r = *given, *p = &r;
    method_params_resolve(p);
#include "settings.def"
    if (p->jacobi == 0 && p->vcycles == 0) return "--jacobi and --vcycles cannot both be 0 (no projection)";
    return NULL;
}
#undef SETTING

void method_swirl_spec(int w, int h, BlurSpec *out)
{
    int r = METHOD_SWIRL_SMOOTH;
    out->factor = 1;
    out->cw = w + 1;
    out->ch = h + 1;
    out->radius = r;
    /* C(2r, r + k) / 2^(2r): r passes of [1 2 1]/4 in one kernel */
    double c = 1.0, sum = 0.0, wk[METHOD_BLUR_TAPS];
    for (int k = 0; k <= 2 * r; k++) {
        if (k >= r) wk[k - r] = c;
        c = c * (double)(2 * r - k) / (double)(k + 1);
    }
    for (int k = 0; k <= r; k++) sum += k == 0 ? wk[k] : 2.0 * wk[k];
    for (int k = 0; k <= r; k++) out->weights[k] = (float)(wk[k] / sum);
    for (int k = r + 1; k < METHOD_BLUR_TAPS; k++) out->weights[k] = 0.0f;
}

void method_blur_spec(int w, int h, float sigma, BlurSpec *out)
{
    float sc = sigma * (float)(w < h ? w : h); /* sigma in fine cells */
    int f = 1;
    while (sc / (float)(2 * f) >= 2.0f && f < 1024) f *= 2;
    out->factor = f;
    out->cw = (w + f - 1) / f;
    out->ch = (h + f - 1) / f;
    float s = sc / (float)f;
    /* the B-spline that samples the coarse field adds a variance of 1/3
     * coarse cell² (ref_sample_coarse): the Gaussian gives the rest */
    if (f > 1) s = sqrtf(s * s - METHOD_BLUR_BSPLINE_VAR);
    /* The kernel reaches until its weight falls below 1e-30 of the centre
     * (11.75 sigma), not the usual 3 sigma: the driving force uses
     * ∇ρ̃* / ρ̃* = ∇ log ρ̃*, which still points at the target from far away
     * as long as the Gaussian's tail is there (a truncated tail is exactly 0
     * and smoke further off would never be pulled). */
    int r = (int)ceilf(11.75f * s);
    if (r < 1) r = 1;
    if (r > METHOD_BLUR_TAPS - 1) r = METHOD_BLUR_TAPS - 1;
    out->radius = r;
    double sum = 0.0;
    for (int k = 0; k <= r; k++) {
        double wk = exp(-(double)k * k / (2.0 * (double)s * s));
        out->weights[k] = (float)wk;
        sum += k == 0 ? wk : 2.0 * wk;
    }
    for (int k = 0; k <= r; k++) out->weights[k] = (float)(out->weights[k] / sum);
    for (int k = r + 1; k < METHOD_BLUR_TAPS; k++) out->weights[k] = 0.0f;
}

int method_mg_levels(int w, int h, int *lw, int *lh)
{
    int n = 0;
    while (n < METHOD_MG_MAX_LEVELS) {
        lw[n] = w;
        lh[n] = h;
        n++;
        if (w <= 4 || h <= 4) break;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    return n;
}

int method_gather_iters(int w, int h, const SolverParams *p)
{
    int n = p->gather_iters > 0 ? p->gather_iters : (w < h ? w : h) / 64;
    if (p->gather_iters <= 0) n = n < 4 ? 4 : (n > METHOD_GATHER_ITERS_MAX ? METHOD_GATHER_ITERS_MAX : n);
    return n + (n & 1); /* even: the warm start is stable only then */
}

float method_transport_cap(const SolverParams *p) { return METHOD_FLOW_GUARD * p->umax; }

int method_gather_substeps(int w, int h, const SolverParams *p)
{
    if (w < 1 || h < 1) return 1;
    double n = ceil((double)METHOD_GATHER_SPEED * p->dt / method_grid(w, h).cell - 1e-4);
    double most = floor(METHOD_GATHER_WORK / ((double)w * (double)h));
    if (most > METHOD_GATHER_SUB_MAX) most = METHOD_GATHER_SUB_MAX;
    if (n > most) n = most;
    return n < 1.0 ? 1 : (int)n;
}

int method_advect_substeps(int w, int h, const SolverParams *p)
{
    float cfl = 2.0f * method_transport_cap(p) * p->dt / method_grid(w, h).cell; /* |c_x| + |c_y| at the guard */
    int n = (int)ceilf(cfl / METHOD_ADVECT_CFL - 1e-4f);
    return n < 1 ? 1 : n;
}

float method_speed_scale(float dt, float cell) { return dt / (cell * METHOD_ADVECT_CFL); }

int method_substeps_for(float speed, float scale, int bound)
{
    float c = speed * scale - 1e-4f;
    if (!(c > 1.0f)) return 1; /* also NaN */
    if (c >= (float)bound) return bound;
    int n = (int)ceilf(c);
    return n > bound ? bound : n;
}

/* The arrival's clock: kstep over the arrival's steps, round(arrive/dt)
 * (at least 1), so a key's range and the same time given as --arrive reach
 * 1 at the same whole step. */
static float arrival_tau(const SolverParams *p, long kstep)
{
    float n = roundf(p->arrive / p->dt);
    return (float)kstep / (n < 1.0f ? 1.0f : n);
}

/* Whether a trip is paced (arrive > METHOD_PACE_TIME, the balance force),
 * and then how far its pace has risen at kstep: x from 0 at METHOD_PACE_UP
 * of the way to 1 at METHOD_PACE_FULL (the smoothstep of x is the rise). */
static bool pace_x(const SolverParams *p, long kstep, float *x)
{
    if (!(p->arrive > METHOD_PACE_TIME) || p->force != SOLVER_FORCE_BALANCE) return false;
    float v = (arrival_tau(p, kstep) - METHOD_PACE_UP) / (METHOD_PACE_FULL - METHOD_PACE_UP);
    *x = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    return true;
}

float method_pace(const SolverParams *p, long kstep)
{
    float x;
    if (!pace_x(p, kstep, &x)) return 1.0f;
    float r = p->pace > 0.0f ? p->pace : powf(METHOD_PACE_TIME / p->arrive, METHOD_PACE_POWER);
    return r + (1.0f - r) * x * x * (3.0f - 2.0f * x);
}

#define PACE_BINS 512
#define PACE_DIRS 8

float method_travel_distance(int w, int h, const float *from, const float *to)
{
    double cell = method_grid(w, h).cell, len = hypot((double)w, (double)h) * cell, worst = 0.0;
    double *ha = calloc(2 * PACE_BINS, sizeof *ha), *hb = ha ? ha + PACE_BINS : NULL;
    if (!ha) return 0.0f;
    for (int d = 0; d < PACE_DIRS; d++) {
        double th = 3.14159265358979323846 * d / PACE_DIRS, cx = cos(th), cy = sin(th), ma = 0.0, mb = 0.0;
        memset(ha, 0, 2 * PACE_BINS * sizeof *ha);
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                size_t k = (size_t)j * w + i;
                double a = from[k] > 0.0f && isfinite(from[k]) ? from[k] : 0.0;
                double b = to[k] > 0.0f && isfinite(to[k]) ? to[k] : 0.0;
                if (a == 0.0 && b == 0.0) continue;
                double x = ((i + 0.5) * cx + (j + 0.5) * cy) * cell; /* within [-len, len] */
                int q = (int)((x + len) / (2.0 * len) * PACE_BINS);
                q = q < 0 ? 0 : (q >= PACE_BINS ? PACE_BINS - 1 : q);
                ha[q] += a, hb[q] += b, ma += a, mb += b;
            }
        if (!(ma > 0.0) || !(mb > 0.0)) { worst = 0.0; break; }
        double ca = 0.0, cb = 0.0, w1 = 0.0;
        for (int q = 0; q < PACE_BINS; q++) {
            ca += ha[q] / ma, cb += hb[q] / mb;
            w1 += fabs(ca - cb);
        }
        /* the limit is per axis (each face's speed within ±umax): a move s
         * takes max(|s_x|, |s_y|)/umax, the largest over directions n of
         * s·n/(|n_x| + |n_y|); a diagonal trip is √2 faster than its length */
        w1 *= 2.0 * len / PACE_BINS / (fabs(cx) + fabs(cy));
        if (w1 > worst) worst = w1;
    }
    free(ha);
    return (float)worst;
}

/* A trip's measures, each taken at most once: every automatic setting of a
 * trip (method_time_trip) reads them, and each is a pass or more over both
 * images (at 4096² the distance took 0.33 s and the squeeze 0.11 s, and
 * the four settings read them six times). */
typedef struct {
    int w, h;
    const float *from, *to;
    float distance, squeeze; /* < 0: not measured yet */
    bool summed;             /* sums: Σρ and Σρ² of from, then of to */
    double sums[4];
    int parts;               /* to's connected parts (trip_parts); < 0: not counted yet */
} Trip;

static Trip trip_of(int w, int h, const float *from, const float *to)
{
    Trip t = {w, h, from, to, -1.0f, -1.0f, false, {0.0, 0.0, 0.0, 0.0}, -1};
    return t;
}

static float trip_distance(Trip *t)
{
    if (t->distance < 0.0f) t->distance = method_travel_distance(t->w, t->h, t->from, t->to);
    return t->distance;
}

static float squeeze_share(Trip *t);
static float arrive_for(const SolverParams *p, Trip *t);

/* p with an automatic arrival timed for trip t, as method_time_trip times it
 * first (a lone pair's from its trip, a key's METHOD_PACE_TIME): what the
 * functions of one trip setting read. */
static SolverParams trip_timed(const SolverParams *p, Trip *t, bool lone)
{
    SolverParams q = *p;
    if (q.arrive == SETTING_AUTO) q.arrive = lone ? arrive_for(&q, t) : METHOD_PACE_TIME;
    return q;
}

static float pace_for(const SolverParams *p, Trip *trip)
{
    float T = p->arrive;
    if (!(T > METHOD_PACE_TIME) || p->force != SOLVER_FORCE_BALANCE || !trip->from || !trip->to ||
        !(p->umax > 0.0f))
        return 0.0f;
    float r = powf(METHOD_PACE_TIME / T, METHOD_PACE_POWER);
    /* the way covered by METHOD_PACE_ARRIVE of the key, in units of
     * METHOD_PACE_SPEED·umax·T: r until METHOD_PACE_UP, the smoothstep's
     * mean (r + 1)/2 to METHOD_PACE_FULL, then 1 */
    float up = METHOD_PACE_UP, ramp = METHOD_PACE_FULL - METHOD_PACE_UP, late = METHOD_PACE_ARRIVE - METHOD_PACE_FULL;
    float need = trip_distance(trip) / (METHOD_PACE_SPEED * p->umax * T);
    float rt = (need - 0.5f * ramp - late) / (up + 0.5f * ramp); /* r·up + (r + 1)/2·ramp + late = need */
    r = rt > r ? rt : r;
    r = r < 1.0f ? r : 1.0f;
    /* a compression's change is the gathering's, which the pace does not
     * slow: a slowed flow only leaves it less of the key */
    return r + (1.0f - r) * squeeze_share(trip);
}

float method_pace_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, true);
    return pace_for(&q, &t);
}

/* Σρ and Σρ² of an image, the finite positive cells only. */
static void density_sums(int w, int h, const float *rho, double *s, double *s2)
{
    *s = 0.0, *s2 = 0.0;
    for (size_t k = 0; k < (size_t)w * h; k++) {
        double a = rho[k] > 0.0f && isfinite(rho[k]) ? rho[k] : 0.0;
        *s += a, *s2 += a * a;
    }
}

/* The trip's sums, taken once: from's Σρ, Σρ², to's Σρ, Σρ² */
static const double *trip_sums(Trip *t)
{
    if (!t->summed) {
        density_sums(t->w, t->h, t->from, &t->sums[0], &t->sums[1]);
        density_sums(t->w, t->h, t->to, &t->sums[2], &t->sums[3]);
        t->summed = true;
    }
    return t->sums;
}

/* (Σρ)²/Σρ²: the number of cells a flat image covers, fewer where the
 * density is uneven; the squeeze is from's over to's */
static float squeeze_of(const double *sums)
{
    double a = sums[1] > 0.0 ? sums[0] * sums[0] / sums[1] : 0.0;
    double b = sums[3] > 0.0 ? sums[2] * sums[2] / sums[3] : 0.0;
    return a > 0.0 && b > 0.0 ? (float)(a / b) : 1.0f;
}

float method_squeeze(int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    return squeeze_of(trip_sums(&t));
}

/* 0 for a squeeze of at most METHOD_SQUEEZE_LOW, 1 from METHOD_SQUEEZE_HIGH,
 * between them on the ratio's logarithm */
static float squeeze_share(Trip *t)
{
    if (t->squeeze < 0.0f) t->squeeze = squeeze_of(trip_sums(t));
    float q = t->squeeze;
    float x = logf(q / METHOD_SQUEEZE_LOW) / logf(METHOD_SQUEEZE_HIGH / METHOD_SQUEEZE_LOW);
    return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; /* also a NaN ratio: 0 */
}

static float gather_from_for(const SolverParams *p, Trip *t, bool lone)
{
    if (!(p->arrive > 0.0f) || p->force != SOLVER_FORCE_BALANCE || !t->from || !t->to) return 0.0f;
    float late = lone ? METHOD_GATHER_LATE_PAIR : p->arrive > METHOD_PACE_TIME ? METHOD_GATHER_LATE : 0.0f;
    if (late == 0.0f) return 0.0f;
    return late + (METHOD_ARRIVE_ON - late) * squeeze_share(t);
}

float method_gather_from_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to, bool lone)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, lone);
    return gather_from_for(&q, &t, lone);
}

static float attract_for(const SolverParams *p, Trip *t)
{
    if (p->force != SOLVER_FORCE_BALANCE || !t->from || !t->to) return 0.0f;
    return squeeze_share(t);
}

float method_attract_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, true);
    return attract_for(&q, &t);
}

/* The connected parts (8 neighbours) of an image's smoke over
 * METHOD_PART_LEVEL of its peak, those of at least METHOD_PART_MIN of that
 * smoke's cells; 0 without smoke, -1 out of memory. */
int method_parts(int w, int h, const float *rho)
{
    size_t n = (size_t)w * (size_t)h;
    float peak = 0.0f;
    for (size_t k = 0; k < n; k++)
        if (isfinite(rho[k]) && rho[k] > peak) peak = rho[k];
    if (!(peak > 0.0f)) return 0;
    float level = METHOD_PART_LEVEL * peak;
    size_t cells = 0;
    for (size_t k = 0; k < n; k++) cells += isfinite(rho[k]) && rho[k] > level;
    if (n > UINT32_MAX) return -1; /* grids are at most CONFIG_GRID_MAX² */
    /* the stack holds each cell over the level at most once, 4 bytes each:
     * a disc over 28% of a 4096² box took 19 MB, not the 134 MB of a
     * size_t for every cell */
    unsigned char *seen = calloc(n, 1);
    uint32_t *stack = malloc((cells ? cells : 1) * sizeof *stack);
    if (!seen || !stack) {
        free(seen), free(stack);
        return -1;
    }
    int parts = 0;
    for (size_t k0 = 0; k0 < n; k0++) {
        if (seen[k0] || !(isfinite(rho[k0]) && rho[k0] > level)) continue;
        size_t top = 0, size = 0;
        seen[k0] = 1, stack[top++] = (uint32_t)k0;
        while (top) { /* a flood fill, its stack on the heap: each cell is pushed once */
            size_t k = stack[--top];
            size++;
            int i = (int)(k % (size_t)w), j = (int)(k / (size_t)w);
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int x = i + di, y = j + dj;
                    if (x < 0 || y < 0 || x >= w || y >= h) continue;
                    size_t q = (size_t)y * (size_t)w + (size_t)x;
                    if (!seen[q] && isfinite(rho[q]) && rho[q] > level) seen[q] = 1, stack[top++] = (uint32_t)q;
                }
        }
        if ((double)size >= METHOD_PART_MIN * (double)cells) parts++;
    }
    free(seen), free(stack);
    return parts;
}

static int trip_parts(Trip *t)
{
    if (t->parts < 0) t->parts = method_parts(t->w, t->h, t->to);
    return t->parts;
}

static float off_pull_for(const SolverParams *p, Trip *t, bool lone)
{
    if (p->force != SOLVER_FORCE_BALANCE || !t->from || !t->to || !(p->umax > 0.0f) || trip_parts(t) != 1)
        return 0.0f;
    /* the trip over the way the limit covers in the arrival (METHOD_OFF_FAR);
     * a single pair's in at most METHOD_PACE_TIME, as its pull is whole from
     * the start (off_ramp 0): --arrive auto plans a far trip at half the
     * limit, which would read every far trip as near */
    float T = p->arrive > 0.0f ? p->arrive : METHOD_PACE_TIME;
    if (lone && T > METHOD_PACE_TIME) T = METHOD_PACE_TIME;
    float x = (trip_distance(t) / (p->umax * T) - METHOD_OFF_FAR_FROM) / (METHOD_OFF_FAR_TO - METHOD_OFF_FAR_FROM);
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); /* also NaN: 0 */
    return 1.0f - x * x * (3.0f - 2.0f * x);
}

float method_off_pull_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, true);
    return off_pull_for(&q, &t, true);
}

float method_off_ramp(const SolverParams *p, long kstep)
{
    float x;
    if (!(p->off_ramp > 0.0f)) return 1.0f; /* a single pair's: whole from the start */
    return pace_x(p, kstep, &x) ? x * x * (3.0f - 2.0f * x) : 1.0f;
}

float method_off_weight(float rb, float tf)
{
    if (!(rb > tf)) return 0.0f; /* no surplus (also NaN) */
    float x = (tf / rb - METHOD_OFF_LO) / (METHOD_OFF_HI - METHOD_OFF_LO);
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return (rb - tf) * (1.0f - x * x * (3.0f - 2.0f * x));
}

static float gather_gain_for(const SolverParams *p, Trip *t)
{
    float a = attract_for(p, t);
    if (!(a > 0.0f)) return 1.0f;
    const double *s = trip_sums(t); /* the mean densities Σρ²/Σρ, the target's at the start's mass */
    double ms = s[0], ms2 = s[1], mt = s[2], mt2 = s[3];
    double prod = ms > 0.0 && mt > 0.0 ? (ms2 / ms) * (mt2 / mt) * (ms / mt) : 0.0;
    double g = prod > 0.0 ? 1.0 / prod : 1.0;
    g = g < 1.0 ? 1.0 : (g > METHOD_GATHER_GAIN_MAX ? METHOD_GATHER_GAIN_MAX : g);
    return 1.0f + a * (float)(g - 1.0);
}

float method_gather_gain_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, true);
    return gather_gain_for(&q, &t);
}

static float drift_wait_for(const SolverParams *p, Trip *t, bool lone)
{
    if (!lone || !(p->arrive > 0.0f) || p->force != SOLVER_FORCE_BALANCE) return 0.0f;
    float a = attract_for(p, t);
    return a > 0.0f ? a * METHOD_DRIFT_WAIT * fminf(1.0f, p->arrive / METHOD_PACE_TIME) : 0.0f;
}

float method_drift_wait_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to, bool lone)
{
    Trip t = trip_of(w, h, from, to);
    SolverParams q = trip_timed(p, &t, lone);
    return drift_wait_for(&q, &t, lone);
}

float method_drift_fade(const SolverParams *p, long kstep, float rg)
{
    float wait = p->drift_wait;
    if (!(wait > 0.0f)) return rg;
    float x = ((float)kstep * p->dt - wait) / (wait * (METHOD_DRIFT_RISE / METHOD_DRIFT_WAIT));
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return rg * x * x * (3.0f - 2.0f * x);
}

static float noise_for(Trip *t)
{
    if (!t->from || !t->to) return 1.0f;
    float x = (trip_distance(t) - METHOD_NOISE_NEAR) / (METHOD_NOISE_FAR - METHOD_NOISE_NEAR);
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return 1.0f - x * x * (3.0f - 2.0f * x);
}

static float arrive_for(const SolverParams *p, Trip *t)
{
    if (!t->from || !t->to || !(p->umax > 0.0f)) return METHOD_PACE_TIME;
    float T = trip_distance(t) / (METHOD_ARRIVE_AUTO_SPEED * p->umax);
    return T > METHOD_ARRIVE_AUTO_MAX ? METHOD_ARRIVE_AUTO_MAX : (T > METHOD_PACE_TIME ? T : METHOD_PACE_TIME);
}

float method_arrive_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    return arrive_for(p, &t);
}

void method_time_trip(SolverParams *q, int w, int h, const float *from, const float *to, bool lone)
{
    Trip t = trip_of(w, h, from, to);
    *q = trip_timed(q, &t, lone);
    q->noise_trip = q->force_noise > 0.0f ? noise_for(&t) : 1.0f;
    q->attract = attract_for(q, &t);
    q->drift_wait = drift_wait_for(q, &t, lone);
    q->gather_gain = gather_gain_for(q, &t);
    q->off_pull = off_pull_for(q, &t, lone);
    q->off_ramp = lone ? 0.0f : 1.0f;
    if (!(q->arrive > 0.0f)) return;
    if (q->pace == 0.0f) q->pace = pace_for(q, &t);
    if (q->gather_from == 0.0f) q->gather_from = gather_from_for(q, &t, lone);
}

void method_ease(const SolverParams *p, long nstep, long kstep, float *vf, float *rg)
{
    float t = (float)nstep * p->dt;
    float xf = p->framp > 0.0f ? fminf(1.0f, t / p->framp) : 1.0f;
    *vf = p->vf * xf;
    if (p->arrive > 0.0f && p->force == SOLVER_FORCE_BALANCE) {
        float tau = arrival_tau(p, kstep);
        float on = METHOD_ARRIVE_ON, full = METHOD_ARRIVE_FULL;
        /* --gather-from 0.3 given is the default start, to the bit */
        if (p->gather_from > 0.0f && p->gather_from != METHOD_ARRIVE_ON)
            on = p->gather_from, full = METHOD_GATHER_FULL_AT + METHOD_GATHER_FULL_SLOPE * on;
        float x = full > on ? (tau - on) / (full - on) : (tau >= on ? 1.0f : 0.0f);
        x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
        *rg = x * x * (3.0f - 2.0f * x);
        return;
    }
    float xg = p->tramp > 0.0f ? fminf(1.0f, t / p->tramp) : 1.0f;
    *rg = xg * xg;
}

/* A 32-bit integer hash of a lattice point (the same in force.glsl). */
static unsigned noise_hash(unsigned x, unsigned y, unsigned seed)
{
    unsigned v = x * 374761393u + y * 668265263u + seed * 2246822519u;
    v = (v ^ (v >> 13)) * 1274126177u;
    return v ^ (v >> 16);
}

static float noise_lattice(int x, int y, unsigned seed)
{
    return (float)(noise_hash((unsigned)x, (unsigned)y, seed) & 0xffffu) / 32767.5f - 1.0f;
}

float method_noise(float x, float y, unsigned seed)
{
    float fx = floorf(x), fy = floorf(y);
    int x0 = (int)fx, y0 = (int)fy;
    float tx = x - fx, ty = y - fy;
    tx = tx * tx * (3.0f - 2.0f * tx);
    ty = ty * ty * (3.0f - 2.0f * ty);
    float a = noise_lattice(x0, y0, seed), b = noise_lattice(x0 + 1, y0, seed);
    float c = noise_lattice(x0, y0 + 1, seed), d = noise_lattice(x0 + 1, y0 + 1, seed);
    float lo = a + tx * (b - a), hi = c + tx * (d - c);
    return lo + ty * (hi - lo);
}

float method_noise_trip(int w, int h, const float *from, const float *to)
{
    Trip t = trip_of(w, h, from, to);
    return noise_for(&t);
}

float method_noise_amp(const SolverParams *p, long kstep)
{
    if (p->force != SOLVER_FORCE_BALANCE || !(p->force_noise > 0.0f) || !(p->noise_trip > 0.0f)) return 0.0f;
    float span = METHOD_NOISE_FADE * METHOD_PACE_TIME;
    float x = (float)kstep * p->dt / span;
    if (x >= 1.0f) return 0.0f;
    x = x < 0.0f ? 0.0f : x;
    return p->force_noise * p->noise_trip * (1.0f - x * x * (3.0f - 2.0f * x));
}

float method_sigma(const SolverParams *p, long kstep)
{
    if (p->force != SOLVER_FORCE_BALANCE || !(p->coarse > 1.0f)) return p->sigma;
    float x = (float)kstep * p->dt / METHOD_COARSE_TIME;
    if (x >= 1.0f) return p->sigma;
    x = x < 0.0f ? 0.0f : x;
    float q = roundf(4.0f * log2f(p->coarse) * (1.0f - x * x * (3.0f - 2.0f * x)));
    if (!(q > 0.0f)) return p->sigma;
    float s = p->sigma * exp2f(q / 4.0f);
    return s < 1.0f ? s : 1.0f; /* --sigma's range: (0, 1] */
}

float method_flow_share(float umax_flow, float umax)
{
    return umax_flow < umax && umax > 0.0f ? umax_flow / umax : 1.0f;
}

float method_transport_share(const MethodStep *st, bool drift_ran)
{
    return drift_ran ? 1.0f : method_flow_share(st->umax_flow, st->p.umax);
}

int method_mix_iters(int w, int h, const SolverParams *p)
{
    if (!(p->subgrid > 0.0f) || p->force != SOLVER_FORCE_BALANCE || w < 1 || h < 1) return 0;
    double l = (double)(w < h ? w : h) / METHOD_MIX_SCALE; /* L in cells */
    double need = ceil((double)p->subgrid * l * l * METHOD_MIX_STRAIN / METHOD_MIX_CAP);
    double most = floor(METHOD_MIX_WORK / ((double)w * (double)h)); /* 0 from 4096²: off */
    if (most > METHOD_MIX_ITERS_MAX) most = METHOD_MIX_ITERS_MAX;
    if (need > most) need = most;
    return need < 1 ? 0 : (int)need;
}

float method_mix_length(int w, int h)
{
    return (float)(w < h ? w : h) / (float)METHOD_MIX_SCALE;
}

float method_mix_k(int w, int h, const MethodStep *st, int iters)
{
    if (iters < 1) return 0.0f;
    float l = method_mix_length(w, h);
    return st->p.subgrid * l * l * st->p.dt * method_transport_share(st, false) / (float)iters;
}

float method_mix_near(const MethodStep *st)
{
    float q = 1.0f - st->p.attract * (st->rg - st->rd); /* 1 unless a compression's drift waits */
    return q < 0.0f ? 0.0f : (q > 1.0f ? 1.0f : q);
}

float method_mix_edge_w(const SolverParams *p, long kstep, float rg)
{
    if (!(p->arrive > 0.0f) || p->force != SOLVER_FORCE_BALANCE) return rg;
    float x = (arrival_tau(p, kstep) - METHOD_MIX_EDGE_LATE_ON) / (METHOD_MIX_EDGE_LATE_OFF - METHOD_MIX_EDGE_LATE_ON);
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return rg * (1.0f - x * x * (3.0f - 2.0f * x));
}

static const char *const pass_names[METHOD_PASS_COUNT] = {
    "blur rho", "potential rhs", "potential V-cycle", "force + damping", "advect velocity",
    "divergence", "pressure V-cycle", "pressure Jacobi", "subtract gradient",
    "transport speeds (flow + drift)", "advect density", "subgrid mixing", "gather begin", "gather Jacobi", "gather apply",
};

const char *method_pass_name(MethodPass pass)
{
    return (unsigned)pass < METHOD_PASS_COUNT ? pass_names[pass] : "?";
}

static void add(MethodStep *st, MethodPass pass, int count)
{
    if (count > 0) st->stage[st->n++] = (MethodStage){pass, count};
}

void method_plan(const SolverParams *given, MethodGrid g, long nstep, long kstep, float dscale,
                 MethodStep *st)
{
    memset(st, 0, sizeof *st);
    SolverParams resolved = *given; /* a zeroed field means its default (the set mask) */
    method_params_settle(&resolved);
    const SolverParams *p = &resolved;
    st->p = resolved;
    method_ease(p, nstep, kstep, &st->p.vf, &st->rg);
    st->rd = method_drift_fade(p, kstep, st->rg);
    st->umax_flow = p->umax * method_pace(p, kstep);
    st->p.off_pull = p->off_pull * method_off_ramp(p, kstep);
    st->balance = p->force == SOLVER_FORCE_BALANCE && p->vb > 0.0f;
    st->kb = st->balance && dscale > 0.0f ? p->vb / dscale : 0.0f;
    st->noise = method_noise_amp(p, kstep);
    st->mix_edge_w = method_mix_edge_w(p, kstep, st->rg);
    st->p.sigma = method_sigma(p, kstep);
    int ns = method_advect_substeps(g.w, g.h, p);
    st->gather_a = st->rg * p->dt * p->vg * p->gather_gain / (g.cell * g.cell); /* gain: method.h */
    bool drift = p->gather && (p->vk > 0.0f || (st->balance && p->vw > 0.0f)) && p->wmax > 0.0f &&
                 st->rd > 0.0f;
    bool gather = p->gather && p->vg > 0.0f && st->rg > 0.0f;

    add(st, METHOD_PASS_BLUR_RHO, 1);                               /* 1. ρ̃ */
    add(st, METHOD_PASS_POTENTIAL_RHS, st->balance);                /* 2. the force */
    add(st, METHOD_PASS_POTENTIAL_VCYCLE, st->balance ? p->bcycles : 0);
    add(st, METHOD_PASS_FORCE, 1);
    add(st, METHOD_PASS_ADVECT_VEL, 1);                             /* 3. advection */
    add(st, METHOD_PASS_DIVERGENCE, 1);                             /* 4. projection */
    add(st, METHOD_PASS_PRESSURE_VCYCLE, p->vcycles);
    add(st, METHOD_PASS_PRESSURE_JACOBI, p->jacobi);
    add(st, METHOD_PASS_SUBTRACT_GRAD, 1);
    add(st, METHOD_PASS_DRIFT_VEL, drift);                          /* 5. density transport: by the flow */
    add(st, METHOD_PASS_ADVECT_DENSITY, ns);                        /*    (+ drift): at most ns substeps */
    add(st, METHOD_PASS_MIX, method_mix_iters(g.w, g.h, p));        /*    filaments the grid can't carry */
    add(st, METHOD_PASS_GATHER_BEGIN, gather);                      /* 6. the gathering term */
    add(st, METHOD_PASS_GATHER_JACOBI, gather ? method_gather_iters(g.w, g.h, p) : 0);
    add(st, METHOD_PASS_GATHER_APPLY, gather ? method_gather_substeps(g.w, g.h, p) : 0); /* in substeps */
}

static const volatile sig_atomic_t *g_cancel;

void method_set_cancel_flag(const volatile sig_atomic_t *flag) { g_cancel = flag; }

unsigned method_pass_part(MethodPass pass)
{
    if (pass <= METHOD_PASS_FORCE) return METHOD_PART_FORCE;
    if (pass <= METHOD_PASS_SUBTRACT_GRAD) return METHOD_PART_FLOW;
    return METHOD_PART_DENSITY;
}

bool method_next(const MethodStep *st, MethodCursor *c, MethodPass *pass, int *k, int *count)
{
    while (c->stage < st->n && c->k >= st->stage[c->stage].count) c->stage++, c->k = 0;
    if (c->stage >= st->n) return false;
    *pass = st->stage[c->stage].pass;
    *k = c->k;
    if (count) *count = st->stage[c->stage].count;
    c->k++;
    c->index++;
    return true;
}

int method_stage_count(const MethodStep *st, MethodPass pass)
{
    for (int s = 0; s < st->n; s++)
        if (st->stage[s].pass == pass) return st->stage[s].count;
    return 0;
}

int method_pass_total(const MethodStep *st)
{
    int n = 0;
    for (int s = 0; s < st->n; s++) n += st->stage[s].count;
    return n;
}

int method_run(const MethodStep *st, MethodPassFn fn, void *self)
{
    return method_run_parts(st, METHOD_PART_ALL, fn, self);
}

int method_run_parts(const MethodStep *st, unsigned parts, MethodPassFn fn, void *self)
{
    MethodCursor c = {0};
    MethodPass pass;
    int k;
    while (method_next(st, &c, &pass, &k, NULL)) {
        if (!(method_pass_part(pass) & parts)) continue;
        if (g_cancel && *g_cancel) return METHOD_CANCELLED;
        int rc = fn(self, pass, k, st);
        if (rc) return rc;
    }
    return 0;
}

MethodOut method_pass_output(MethodPass pass)
{
    switch (pass) {
    case METHOD_PASS_BLUR_RHO: return METHOD_OUT_RHO_BLUR;
    case METHOD_PASS_POTENTIAL_RHS: return METHOD_OUT_POTENTIAL_RHS;
    case METHOD_PASS_POTENTIAL_VCYCLE: return METHOD_OUT_POTENTIAL;
    case METHOD_PASS_FORCE:
    case METHOD_PASS_ADVECT_VEL:
    case METHOD_PASS_SUBTRACT_GRAD: return METHOD_OUT_VELOCITY;
    case METHOD_PASS_DIVERGENCE: return METHOD_OUT_DIVERGENCE;
    case METHOD_PASS_PRESSURE_VCYCLE:
    case METHOD_PASS_PRESSURE_JACOBI: return METHOD_OUT_PRESSURE;
    case METHOD_PASS_DRIFT_VEL: return METHOD_OUT_DRIFT;
    case METHOD_PASS_GATHER_BEGIN: /* the warm start e (and, on the GPU, D and ρ − ρ*) */
    case METHOD_PASS_GATHER_JACOBI: return METHOD_OUT_GATHER_E;
    case METHOD_PASS_ADVECT_DENSITY:
    case METHOD_PASS_MIX:
    case METHOD_PASS_GATHER_APPLY:
    case METHOD_PASS_COUNT: break;
    }
    return METHOD_OUT_DENSITY;
}

const char *method_out_name(MethodOut f)
{
    static const char *const names[METHOD_OUT_COUNT] = {
        "blurred density", "potential rhs", "potential", "velocity", "divergence",
        "pressure", "density", "transport speeds", "gathering error"};
    return (unsigned)f < METHOD_OUT_COUNT ? names[f] : "?";
}

bool method_out_is_vector(MethodOut f) { return f == METHOD_OUT_VELOCITY || f == METHOD_OUT_DRIFT; }

bool method_out_is_signed(MethodOut f)
{
    return f != METHOD_OUT_RHO_BLUR && f != METHOD_OUT_DENSITY;
}

const char *method_glsl_defines(char *buf, size_t n)
{
    snprintf(buf, n,
             "#define SM_JACOBI_OMEGA %.9g\n"
             "#define SM_BLUR_TAPS %d\n"
             "#define SM_MG_COARSE_MAX %d\n"
             "#define SM_MG_MAX_LEVELS %d\n"
             "#define SM_MG_SMOOTH %d\n"
             "#define SM_MG_COARSE_ITERS %d\n",
             (double)METHOD_JACOBI_OMEGA, METHOD_BLUR_TAPS, METHOD_MG_COARSE_MAX,
             METHOD_MG_MAX_LEVELS, METHOD_MG_SMOOTH, METHOD_MG_COARSE_ITERS);
    return buf;
}

/* ---- the state and the parameters by name ----------------------------------- */

const char *method_field_name(MethodField f)
{
    static const char *const names[METHOD_FIELD_COUNT] = {
        "density", "target", "target_blur", "velocity_u", "velocity_v",
        "pressure", "potential", "gather_e"};
    return (unsigned)f < METHOD_FIELD_COUNT ? names[f] : "?";
}

#define METHOD_KIND_SK_FLOAT 'f'
#define METHOD_KIND_SK_INT 'i'
#define METHOD_KIND_SK_NOT 'b'
#define METHOD_KIND_SK_BOOL 'b'
#define METHOD_KIND_SK_ENUM 'e'
#define METHOD_INFO_P(SLOT, KEY, OPT, KIND, FLAGS) \
    [SLOT] = {KEY, OPT, METHOD_KIND_##KIND, ((FLAGS) & SF_EXTRA) != 0, ((FLAGS) & SF_AUTO) != 0},
#define METHOD_INFO_C(SLOT, KEY, OPT, KIND, FLAGS)
#define METHOD_INFO_S(SLOT, KEY, OPT, KIND, FLAGS)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    METHOD_INFO_##WHERE(SLOT, KEY, OPT, KIND, FLAGS)
const MethodParamInfo method_param_info[METHOD_PARAM_COUNT] = {
#include "settings.def"
};
#undef SETTING

/* The members in method_param_info's order: a float, an int or a bool each. */
#define METHOD_PTR_P(SLOT, MEMBER) [SLOT] = &p->MEMBER,
#define METHOD_PTR_C(SLOT, MEMBER)
#define METHOD_PTR_S(SLOT, MEMBER)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, ...) METHOD_PTR_##WHERE(SLOT, MEMBER)
static void *param_ptr(SolverParams *p, int k)
{
    void *m[METHOD_PARAM_COUNT] = {
#include "settings.def"
    };
    return (unsigned)k < METHOD_PARAM_COUNT ? m[k] : NULL;
}
#undef SETTING

double method_param_get(const SolverParams *p, int k)
{
    const void *m = param_ptr((SolverParams *)p, k);
    if (!m) return 0.0;
    switch (method_param_info[k].kind) {
    case 'f': return (double)*(const float *)m;
    case 'b': return *(const bool *)m ? 1.0 : 0.0;
    default: return (double)*(const int *)m;
    }
}

void method_param_set(SolverParams *p, int k, double v)
{
    void *m = param_ptr(p, k);
    if (!m) return;
    switch (method_param_info[k].kind) {
    case 'f': *(float *)m = (float)v; break;
    case 'b': *(bool *)m = v != 0.0; break;
    default: *(int *)m = v >= -2147483648.0 && v <= 2147483647.0 ? (int)v : -1; break;
    }
}

int method_param_index(const char *n)
{
    for (int k = 0; n && k < METHOD_PARAM_COUNT; k++) {
        const char *cand[2] = {method_param_info[k].name, method_param_info[k].option};
        for (int c = 0; c < 2; c++) {
            const char *x = cand[c], *y = n;
            if (!x || strncmp(x, "no-", 3) == 0) continue; /* gather=0, not no-gather=1 */
            while (*x && *y && (*x == *y || ((*x == '-' || *x == '_') && (*y == '-' || *y == '_')))) x++, y++;
            if (!*x && !*y) return k;
        }
    }
    return -1;
}

int method_param_parse(int k, const char *v, double *out)
{
    static const char *const yes[] = {"1", "on", "true", "yes"}, *const no[] = {"0", "off", "false", "no"};
    if ((unsigned)k >= METHOD_PARAM_COUNT || !v) return -1;
    char kind = method_param_info[k].kind;
    if (kind == 'b') {
        for (int j = 0; j < 4; j++) {
            if (strcasecmp(v, yes[j]) == 0) return *out = 1.0, 0;
            if (strcasecmp(v, no[j]) == 0) return *out = 0.0, 0;
        }
        return -1;
    }
    if (kind == 'e') {
        if (strcasecmp(v, "balance") == 0) return *out = SOLVER_FORCE_BALANCE, 0;
        if (strcasecmp(v, "fattal") == 0) return *out = SOLVER_FORCE_FATTAL, 0;
        return -1;
    }
    if (method_param_info[k].autov && strcasecmp(v, "auto") == 0) return *out = SETTING_AUTO, 0;
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end) return -1;
    if (!isfinite(d)) return -1;
    if (method_param_info[k].autov && d < 0.0) d = 2.0 * SETTING_AUTO; /* out of range, not "auto" */
    /* an integer parameter must be whole and within int's range before any cast */
    if (kind == 'i' && (d < -2147483648.0 || d > 2147483647.0 || d != floor(d))) return -1;
    if (kind == 'f' && fabs(d) > FLT_MAX) return -1; /* a float parameter: within float's range */
    *out = d;
    return 0;
}
