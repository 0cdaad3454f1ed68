/* morph: a morph on any backend through one table of operations; see morph.h. */
#include "morph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "cpu_solver.h"
#include "gpu_solver.h"

/* What a backend supplies. b is its own state (a RefSolver or a Solver). */
typedef struct {
    void (*destroy)(void *b);
    int (*set_density)(void *b, const float *rho);
    int (*set_target)(void *b, const float *tgt, bool mass_match);
    int (*step)(void *b);
    int (*observe)(void *b, float *rho, double *mass, double *error, double *max_div);
    int (*read_velocity)(void *b, float *u, float *v); /* MAC faces, W*H each */
    const SolverParams *(*params)(const void *b);
    int (*set_params)(void *b, const SolverParams *p);
    int (*stir)(void *b, float x, float y, float fx, float fy, float radius);
    unsigned (*density_texture)(const void *b);
    unsigned (*velocity_texture)(const void *b);
    int (*get_state)(void *b, MethodState *st);
    int (*set_state)(void *b, const MethodState *st);
    /* schedules: the target with its scale given (no read-back), the deficit
     * potential's c, the sources' weights (once) and one source's smoke */
    int (*set_target_scaled)(void *b, const float *tgt, float scale, double smoke_mass, bool keep_e);
    void (*set_potential_scale)(void *b, float c);
    int (*set_sources)(void *b, const float *const *w, int n);
    int (*add_source)(void *b, int k, const float *w, float amount);
    /* smoke fields sharing one velocity: part of a step, and the copy */
    int (*step_parts)(void *b, unsigned parts, bool force_partial);
    int (*copy_velocity)(void *dst, const void *src);
    int (*splat_density)(void *b, float x, float y, float amount, float radius); /* morph_splat_density */
    /* observe with the error's sums: Σ|ρ−ρ*| and Σρ* */
    int (*observe_sums)(void *b, float *rho, double *mass, double *diff, double *target,
                        double *max_div);
    /* one step a pass at a time (morph_pass_next), what a pass wrote, and
     * the substeps a transport stage takes this step */
    void (*step_begin)(void *b, MethodStep *st);
    int (*step_pass)(void *b, MethodPass pass, int k, const MethodStep *st);
    int (*step_end)(void *b);
    int (*read_output)(void *b, MethodOut f, float *a, float *b2);
    int (*substeps)(void *b, int stage);
    /* observe_sums in two halves (an asynchronous read-back); NULL: the
     * backend observes at once (morph_observe_start keeps the result) */
    int (*observe_start)(void *b, int slot, bool max_div);
    const float *(*observe_map)(void *b, int slot, bool *div); /* RGBA: ρ, ρ*, |∇·u| */
    void (*observe_unmap)(void *b, int slot);
    int (*read_motion)(void *b, float *u, float *v); /* MAC faces: what moved the smoke */
} MorphOps;

struct Morph {
    int w, h;
    bool mass_match;
    MorphBackend backend;
    float *start, *target;
    long steps;
    /* keyframe schedule: key 1 is target, keys k >= 2 are keys[(k-2)*W*H];
     * key is the one the backend holds; sched[k-1] is key k's step and
     * parameters (NULL without a schedule); base the parameters given to
     * morph_create (or the last morph_set_params outside a schedule),
     * resolved and timed for the pair's trip, given them as given */
    float *keys;
    int nkeys, key;
    long key_every;
    struct MorphKeyRun {
        long step;
        SolverParams params;
        bool moving;
        float move_from[2], move_to[2], scale_from, scale_to; /* scales: 0 made 1 */
    } *sched;
    /* sources: weights[W*H] (copied, or the disc drawn), their sum */
    struct MorphSrc {
        float *w;
        double sum;
        float rate;
        long from, to;
    } *src;
    int nsrc;
    /* a schedule's masses: the smoke's as the morph follows it (read at
     * each key switch, plus what sources added since), the active key's
     * matched mass, and the target's as the backend holds it */
    double mass_now, key_mass, tmass;
    float *moved; /* W*H: a moving key's target at this step's pose */
    SolverParams base;
    SolverParams given; /* base as given: --pace 0 and --gather-from 0 still automatic */
    /* a step run a pass at a time: its plan, the cursor, the last pass */
    bool pass_active;
    MethodStep plan;
    MethodCursor cursor;
    MethodPass last_pass;   /* METHOD_PASS_COUNT: none since the last whole step */
    /* a step of several fields run a pass at a time (morph_pass_next_fields):
     * every field points at the group's first, which holds the group and the
     * segment of the step (fields_segment) whose passes run, -1 before the first */
    Morph *group_lead;
    Morph *group[MORPH_MAX_FIELDS];
    int group_n, group_seg;
    const MorphOps *ops;
    void *b;
    /* morph_observe_start on a backend without asynchronous read-backs:
     * the observation made at the start, kept a slot each */
    struct MorphObs {
        float *rho;
        double mass, error, max_div, each[MORPH_MAX_FIELDS];
    } obs[MORPH_OBSERVE_SLOTS];
};

/* ---- the CPU reference ---------------------------------------------------- */

static void cpu_destroy(void *b) { ref_free(b); }
static int cpu_set_density(void *b, const float *rho)
{
    ref_set_density(b, rho);
    return 0;
}
static int cpu_set_target(void *b, const float *tgt, bool mm) { return ref_set_target(b, tgt, mm); }
static int cpu_step(void *b)
{
    ref_step(b);
    return 0;
}
static int cpu_observe(void *b, float *rho, double *mass, double *error, double *max_div)
{
    RefSolver *r = b;
    if (rho) memcpy(rho, ref_density(r), (size_t)ref_width(r) * ref_height(r) * sizeof(float));
    if (mass) *mass = ref_mass(r);
    if (error) *error = ref_error(r);
    if (max_div) *max_div = ref_max_div(r);
    return 0;
}
static int cpu_read_velocity(void *b, float *u, float *v)
{
    RefSolver *r = b;
    size_t n = (size_t)ref_width(r) * ref_height(r) * sizeof(float);
    memcpy(u, ref_velocity_u(r), n);
    memcpy(v, ref_velocity_v(r), n);
    return 0;
}
static const SolverParams *cpu_params(const void *b) { return ref_params(b); }
static int cpu_set_params(void *b, const SolverParams *p)
{
    ref_set_params(b, p);
    return 0;
}
static int cpu_stir(void *b, float x, float y, float fx, float fy, float radius)
{
    (void)b, (void)x, (void)y, (void)fx, (void)fy, (void)radius;
    return -1;
}
static unsigned no_texture(const void *b)
{
    (void)b;
    return 0;
}

static int cpu_get_state(void *b, MethodState *st)
{
    ref_get_state(b, st);
    return 0;
}
static int cpu_set_state(void *b, const MethodState *st)
{
    ref_set_state(b, st);
    return 0;
}

static int cpu_set_target_scaled(void *b, const float *tgt, float scale, double smoke_mass, bool keep_e)
{
    return ref_set_target_scaled(b, tgt, scale, smoke_mass, keep_e);
}
static void cpu_set_potential_scale(void *b, float c) { ref_set_potential_scale(b, c); }
static int cpu_set_sources(void *b, const float *const *w, int n)
{
    (void)b, (void)w, (void)n; /* the morph keeps the weights */
    return 0;
}
static int cpu_add_source(void *b, int k, const float *w, float amount)
{
    (void)k;
    ref_add_source(b, w, amount);
    return 0;
}

static int cpu_step_parts(void *b, unsigned parts, bool partial)
{
    ref_step_parts(b, parts, partial);
    return 0;
}
static int cpu_copy_velocity(void *dst, const void *src)
{
    ref_copy_velocity(dst, src);
    return 0;
}
static int cpu_splat_density(void *b, float x, float y, float amount, float radius)
{
    RefSolver *r = b;
    int w = ref_width(r), h = ref_height(r);
    float *rho = ref_density_mut(r);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float dx = (float)i + 0.5f - x, dy = (float)j + 0.5f - y;
            float *c = &rho[(size_t)j * w + i];
            *c = fmaxf(*c + amount * expf(-(dx * dx + dy * dy) / (radius * radius)), 0.0f);
        }
    return 0;
}

static int cpu_observe_sums(void *b, float *rho, double *mass, double *diff, double *target,
                            double *max_div)
{
    RefSolver *r = b;
    size_t n = (size_t)ref_width(r) * ref_height(r);
    const float *d = ref_density(r), *t = ref_target(r);
    double e = 0.0, ts = 0.0;
    for (size_t k = 0; k < n; k++) {
        e += fabs((double)d[k] - t[k]);
        ts += t[k];
    }
    *diff = e;
    *target = ts;
    return cpu_observe(b, rho, mass, NULL, max_div);
}

static void cpu_step_begin(void *b, MethodStep *st) { ref_step_begin(b, st); }
static int cpu_step_pass(void *b, MethodPass pass, int k, const MethodStep *st)
{
    return ref_step_pass(b, pass, k, st);
}
static int cpu_step_end(void *b)
{
    (void)b;
    return 0;
}
static int cpu_read_output(void *b, MethodOut f, float *a, float *b2) { return ref_read_output(b, f, a, b2); }
static int cpu_substeps(void *b, int stage) { return ref_substeps(b, stage); }
static int cpu_read_motion(void *b, float *u, float *v) { return ref_read_motion(b, u, v); }

static const MorphOps cpu_ops = {
    .destroy = cpu_destroy,
    .set_density = cpu_set_density,
    .set_target = cpu_set_target,
    .step = cpu_step,
    .observe = cpu_observe,
    .read_velocity = cpu_read_velocity,
    .params = cpu_params,
    .set_params = cpu_set_params,
    .stir = cpu_stir,
    .density_texture = no_texture,
    .velocity_texture = no_texture,
    .get_state = cpu_get_state,
    .set_state = cpu_set_state,
    .set_target_scaled = cpu_set_target_scaled,
    .set_potential_scale = cpu_set_potential_scale,
    .set_sources = cpu_set_sources,
    .add_source = cpu_add_source,
    .step_parts = cpu_step_parts,
    .copy_velocity = cpu_copy_velocity,
    .splat_density = cpu_splat_density,
    .observe_sums = cpu_observe_sums,
    .step_begin = cpu_step_begin,
    .step_pass = cpu_step_pass,
    .step_end = cpu_step_end,
    .read_output = cpu_read_output,
    .substeps = cpu_substeps,
    .read_motion = cpu_read_motion,
};

/* ---- the GPU solver (fragment or compute passes) -------------------------- */

static void gpu_destroy(void *b) { solver_free(b); }
static int gpu_set_density(void *b, const float *rho) { return solver_set_density(b, rho); }
static int gpu_set_target(void *b, const float *tgt, bool mm) { return solver_set_target(b, tgt, mm); }
static int gpu_step(void *b) { return solver_step(b); }
static int gpu_observe(void *b, float *rho, double *mass, double *error, double *max_div)
{
    return solver_observe(b, rho, mass, error, max_div);
}
static int gpu_read_velocity(void *b, float *u, float *v) { return solver_read_velocity(b, u, v); }
static const SolverParams *gpu_params(const void *b) { return solver_params(b); }
static int gpu_set_params(void *b, const SolverParams *p) { return solver_set_params(b, p); }
static int gpu_stir(void *b, float x, float y, float fx, float fy, float radius)
{
    return solver_stir(b, x, y, fx, fy, radius);
}
static unsigned gpu_density_texture(const void *b) { return solver_density_texture(b); }
static unsigned gpu_velocity_texture(const void *b) { return solver_velocity_texture(b); }

static int gpu_get_state(void *b, MethodState *st) { return solver_get_state(b, st); }
static int gpu_set_state(void *b, const MethodState *st) { return solver_set_state(b, st); }

static int gpu_set_target_scaled(void *b, const float *tgt, float scale, double smoke_mass, bool keep_e)
{
    return solver_set_target_scaled(b, tgt, scale, smoke_mass, keep_e);
}
static void gpu_set_potential_scale(void *b, float c) { solver_set_potential_scale(b, c); }
static int gpu_set_sources(void *b, const float *const *w, int n) { return solver_set_sources(b, w, n); }
static int gpu_add_source(void *b, int k, const float *w, float amount)
{
    (void)w; /* uploaded once by gpu_set_sources */
    return solver_add_source(b, k, amount);
}

static int gpu_step_parts(void *b, unsigned parts, bool partial) { return solver_step_parts(b, parts, partial); }
static int gpu_copy_velocity(void *dst, const void *src) { return solver_copy_velocity(dst, src); }
static int gpu_splat_density(void *b, float x, float y, float amount, float radius)
{
    return solver_splat_density(b, x, y, amount, radius);
}
static int gpu_observe_sums(void *b, float *rho, double *mass, double *diff, double *target,
                            double *max_div)
{
    return solver_observe_sums(b, rho, mass, diff, target, max_div);
}
static void gpu_step_begin(void *b, MethodStep *st) { solver_step_begin(b, st); }
static int gpu_step_pass(void *b, MethodPass pass, int k, const MethodStep *st)
{
    return solver_step_pass(b, pass, k, st);
}
static int gpu_step_end(void *b) { return solver_step_end(b); }
/* ρ̃ comes back on its coarse grid: upsampled as the force samples it */
static int gpu_read_output(void *b, MethodOut f, float *a, float *b2)
{
    if (f != METHOD_OUT_RHO_BLUR) return solver_read_output(b, f, a, b2);
    int w = solver_width(b), h = solver_height(b);
    BlurSpec spec = *solver_blur(b); /* this step's (coarse to fine) */
    float *c = malloc((size_t)spec.cw * spec.ch * sizeof *c);
    int rc = c ? solver_read_output(b, f, c, NULL) : -1;
    if (rc == 0) ref_pass_upsample(w, h, &spec, c, a);
    free(c);
    return rc;
}
static int gpu_substeps(void *b, int stage) { return solver_substeps(b, stage); }
static int gpu_observe_start(void *b, int slot, bool max_div) { return solver_observe_start(b, slot, max_div); }
static const float *gpu_observe_map(void *b, int slot, bool *div) { return solver_observe_map(b, slot, div); }
static void gpu_observe_unmap(void *b, int slot) { solver_observe_unmap(b, slot); }
static int gpu_read_motion(void *b, float *u, float *v) { return solver_read_motion(b, u, v); }

static const MorphOps gpu_ops = {
    .destroy = gpu_destroy,
    .set_density = gpu_set_density,
    .set_target = gpu_set_target,
    .step = gpu_step,
    .observe = gpu_observe,
    .read_velocity = gpu_read_velocity,
    .params = gpu_params,
    .set_params = gpu_set_params,
    .stir = gpu_stir,
    .density_texture = gpu_density_texture,
    .velocity_texture = gpu_velocity_texture,
    .get_state = gpu_get_state,
    .set_state = gpu_set_state,
    .set_target_scaled = gpu_set_target_scaled,
    .set_potential_scale = gpu_set_potential_scale,
    .set_sources = gpu_set_sources,
    .add_source = gpu_add_source,
    .step_parts = gpu_step_parts,
    .copy_velocity = gpu_copy_velocity,
    .splat_density = gpu_splat_density,
    .observe_sums = gpu_observe_sums,
    .step_begin = gpu_step_begin,
    .step_pass = gpu_step_pass,
    .step_end = gpu_step_end,
    .read_output = gpu_read_output,
    .substeps = gpu_substeps,
    .observe_start = gpu_observe_start,
    .observe_map = gpu_observe_map,
    .observe_unmap = gpu_observe_unmap,
    .read_motion = gpu_read_motion,
};

/* ---- the morph -------------------------------------------------------------- */

const char *morph_backend_name(MorphBackend b)
{
    switch (b) {
    case MORPH_CPU: return "cpu";
    case MORPH_FRAGMENT: return "fragment";
    case MORPH_COMPUTE: return "compute";
    }
    return "?";
}

static int load_state(Morph *m, const float *rho, const float *tgt)
{
    if (m->ops->set_density(m->b, rho) < 0) return -1;
    return m->ops->set_target(m->b, tgt, m->mass_match);
}

Morph *morph_create(int w, int h, const SolverParams *p, const float *start, const float *target,
                    bool mass_match, MorphBackend backend, const char *shader_dir, char *err,
                    size_t errlen)
{
    return morph_create_opts(w, h, p, NULL, start, target, mass_match, backend, shader_dir, err, errlen);
}

/* A single pair's parameters: P as given, resolved, timed for its trip from
 * `from` to `to` (kept as given for the next trip: morph_swap). */
static void base_set(Morph *m, const SolverParams *p, const float *from, const float *to)
{
    m->given = *p;
    m->base = *p;
    method_params_resolve(&m->base);
    method_time_trip(&m->base, m->w, m->h, from, to, true); /* its trip's automatic settings */
}

Morph *morph_create_opts(int w, int h, const SolverParams *p, const SolverOptions *o, const float *start,
                         const float *target, bool mass_match, MorphBackend backend,
                         const char *shader_dir, char *err, size_t errlen)
{
    size_t n = (size_t)w * h;
    Morph *m = calloc(1, sizeof *m);
    if (!m || !(m->start = malloc(n * sizeof(float))) || !(m->target = malloc(n * sizeof(float)))) {
        snprintf(err, errlen, "out of memory for a %dx%d grid", w, h);
        goto fail;
    }
    m->w = w;
    m->h = h;
    m->mass_match = mass_match;
    m->backend = backend;
    m->nkeys = m->key = 1;
    m->last_pass = METHOD_PASS_COUNT;
    base_set(m, p, start, target);
    p = &m->base;
    memcpy(m->start, start, n * sizeof(float));
    memcpy(m->target, target, n * sizeof(float));
    if (backend == MORPH_CPU) {
        m->ops = &cpu_ops;
        m->b = ref_create(w, h, p, err, errlen);
    } else {
        m->ops = &gpu_ops;
        m->b = solver_create_opts(w, h, p, o, backend == MORPH_COMPUTE ? SOLVER_COMPUTE : SOLVER_FRAGMENT,
                                  shader_dir, err, errlen);
    }
    if (!m->b) goto fail;
    double target_mass = 0.0;
    for (size_t k = 0; k < n; k++) target_mass += target[k];
    if (!(target_mass > 0.0)) {
        snprintf(err, errlen, "the target image is empty (all zero): nothing to morph to");
        goto fail;
    }
    /* with a target, what fails here is memory: a read-back buffer, or the
     * GL's own (whose GL error gl_check has already printed) */
    if (load_state(m, start, target) < 0) {
        snprintf(err, errlen, "out of memory loading the images into a %dx%d grid", w, h);
        goto fail;
    }
    return m;
fail:
    morph_free(m);
    return NULL;
}

static void free_sources(struct MorphSrc *src, int n)
{
    for (int k = 0; k < n && src; k++) free(src[k].w);
    free(src);
}

void morph_free(Morph *m)
{
    if (!m) return;
    if (m->b) m->ops->destroy(m->b);
    free(m->start);
    free(m->target);
    free(m->keys);
    free(m->sched);
    free_sources(m->src, m->nsrc);
    free(m->moved);
    for (int k = 0; k < MORPH_OBSERVE_SLOTS; k++) free(m->obs[k].rho);
    free(m);
}

/* Key k's image (k from 1). */
static const float *key_image(const Morph *m, int k)
{
    return k <= 1 ? m->target : m->keys + (size_t)(k - 2) * m->w * m->h;
}

/* ---- schedules: ranges, sources, moving targets ------------------------------- */

/* Key k's range of steps: keys[k-2].step+1 .. keys[k-1].step (key 1 from 1). */
static void key_range(const struct MorphKeyRun *sched, int k, long *first, long *last)
{
    *first = k <= 1 ? 1 : sched[k - 2].step + 1;
    *last = sched[k - 1].step;
}

/* What source S adds to each cell a step, over its weights: the float
 * rate·dt, as every backend multiplies it. */
static float source_amount(const struct MorphSrc *S, float dt) { return S->rate * dt; }

/* The smoke the sources add in steps a..b, each source rate·dt·Σw a step in
 * its steps from+1..to. */
static double source_mass(const Morph *m, long a, long b, float dt)
{
    double sum = 0.0;
    for (int k = 0; k < m->nsrc; k++) {
        const struct MorphSrc *S = &m->src[k];
        long lo = a > S->from + 1 ? a : S->from + 1, hi = b < S->to ? b : S->to;
        if (hi >= lo) sum += (double)(hi - lo + 1) * (double)source_amount(S, dt) * S->sum;
    }
    return sum;
}

/* Key K's pose at `step` (its range first..last): the translation d in
 * cells and the scale, linear from the first step to the last (a range of
 * one step takes the end pose), the end pose after it. */
static void key_pose(const struct MorphKeyRun *K, long first, long last, long step, int w, int h,
                     float d[2], float *sc)
{
    double t = last > first ? (double)(step - first) / (double)(last - first) : 1.0;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    double cells = w < h ? w : h; /* domain units to cells */
    for (int c = 0; c < 2; c++)
        d[c] = (float)((K->move_from[c] + t * (K->move_to[c] - K->move_from[c])) * cells);
    *sc = (float)(K->scale_from + t * (K->scale_to - K->scale_from));
}

/* out = img moved: cell (i, j) samples img at c + (p − c − d)/sc, p its
 * centre and c the grid's centre (in cells), bilinearly, 0 outside the
 * image (so at d = 0, sc = 1 out is img exactly). Returns Σout. */
static double resample(int w, int h, const float *img, const float d[2], float sc, float *out)
{
    float cx = 0.5f * (float)w, cy = 0.5f * (float)h, inv = 1.0f / sc;
    double sum = 0.0;
    for (int j = 0; j < h; j++) {
        /* clamped just outside the image (where a sample is 0 anyway), so a
         * tiny scale or a far move never casts an out-of-range float */
        float y = fminf(fmaxf(cy + ((float)j + 0.5f - cy - d[1]) * inv - 0.5f, -2.0f), (float)h + 1.0f);
        float yf = floorf(y);
        int j0 = (int)yf;
        float fy = y - yf;
        bool r0 = j0 >= 0 && j0 < h, r1 = j0 + 1 >= 0 && j0 + 1 < h;
        const float *row0 = img + (size_t)(r0 ? j0 : 0) * w, *row1 = img + (size_t)(r1 ? j0 + 1 : 0) * w;
        for (int i = 0; i < w; i++) {
            float x = fminf(fmaxf(cx + ((float)i + 0.5f - cx - d[0]) * inv - 0.5f, -2.0f), (float)w + 1.0f);
            float xf = floorf(x);
            int i0 = (int)xf;
            float fx = x - xf;
            bool c0 = i0 >= 0 && i0 < w, c1 = i0 + 1 >= 0 && i0 + 1 < w;
            float a00 = r0 && c0 ? row0[i0] : 0.0f, a10 = r0 && c1 ? row0[i0 + 1] : 0.0f;
            float a01 = r1 && c0 ? row1[i0] : 0.0f, a11 = r1 && c1 ? row1[i0 + 1] : 0.0f;
            float a = a00 + fx * (a10 - a00), b = a01 + fx * (a11 - a01);
            float v = a + fy * (b - a);
            out[(size_t)j * w + i] = v;
            sum += v;
        }
    }
    return sum;
}

double morph_key_pose_image(const Morph *m, int k, long step, float *out)
{
    size_t n = (size_t)m->w * m->h;
    if (k < 1 || k > m->nkeys) return -1.0;
    const float *img = key_image(m, k);
    if (!m->sched || !m->sched[k - 1].moving) {
        double sum = 0.0;
        memcpy(out, img, n * sizeof(float));
        for (size_t c = 0; c < n; c++) sum += out[c];
        return sum;
    }
    long first, last;
    float d[2], sc;
    key_range(m->sched, k, &first, &last);
    key_pose(&m->sched[k - 1], first, last, step, m->w, m->h, d, &sc);
    return resample(m->w, m->h, img, d, sc, out);
}

/* img (W*H) as the target, scaled to the active key's matched mass. */
static int set_target_image(Morph *m, const float *img, bool keep_e)
{
    size_t n = (size_t)m->w * m->h;
    double mt = 0.0;
    for (size_t k = 0; k < n; k++) mt += img[k];
    if (!(mt > 0.0)) return -1;
    float scale = m->key_mass > 0.0 ? (float)(m->key_mass / mt) : 1.0f;
    if (m->ops->set_target_scaled(m->b, img, scale, m->mass_now, keep_e) < 0) return -1;
    m->tmass = mt * scale;
    return 0;
}

/* Key k's target at `step` (its pose there, for a moving key). keep_e: the
 * same key moved on (the gathering keeps its warm start); a pose that has
 * left the grid entirely keeps the last one. */
static int set_key_target(Morph *m, int k, long step, bool keep_e)
{
    const struct MorphKeyRun *K = &m->sched[k - 1];
    if (!K->moving) return set_target_image(m, key_image(m, k), keep_e);
    long first, last;
    float d[2], sc;
    key_range(m->sched, k, &first, &last);
    key_pose(K, first, last, step, m->w, m->h, d, &sc);
    if (!(resample(m->w, m->h, key_image(m, k), d, sc, m->moved) > 0.0)) return keep_e ? 0 : -1;
    return set_target_image(m, m->moved, keep_e);
}

/* Make key k the goal before step steps+1: its parameters (if they
 * differ), then its target, matched to the smoke's mass now (one
 * read-back) plus what the sources add up to the key's step. */
static int switch_key(Morph *m, int k)
{
    const SolverParams *p = &m->sched[k - 1].params;
    if (!method_params_equal(p, m->ops->params(m->b)) && m->ops->set_params(m->b, p) < 0)
        return -1;
    long s = m->steps + 1, first, last;
    key_range(m->sched, k, &first, &last);
    double mass;
    if (m->ops->observe(m->b, NULL, &mass, NULL, NULL) < 0) return -1;
    m->mass_now = mass;
    if (m->mass_match) {
        m->key_mass = mass + source_mass(m, s, last, p->dt);
    } else {
        const float *img = key_image(m, k);
        m->key_mass = 0.0;
        for (size_t c = 0; c < (size_t)m->w * m->h; c++) m->key_mass += img[c];
    }
    if (set_key_target(m, k, s, false) < 0) return -1;
    m->key = k;
    return 0;
}

/* Before step s's passes: a moving key's new pose, then the sources' smoke
 * (and the deficit potential's c, which follows the smoke's mass). */
static int schedule_before_step(Morph *m, long s)
{
    const struct MorphKeyRun *K = &m->sched[m->key - 1];
    long first, last;
    key_range(m->sched, m->key, &first, &last);
    if (K->moving && s > first && s <= last && set_key_target(m, m->key, s, true) < 0) return -1;
    float dt = m->ops->params(m->b)->dt;
    bool added = false;
    for (int k = 0; k < m->nsrc; k++) {
        const struct MorphSrc *S = &m->src[k];
        if (s <= S->from || s > S->to) continue;
        float a = source_amount(S, dt);
        if (m->ops->add_source(m->b, k, S->w, a) < 0) return -1;
        m->mass_now += (double)a * S->sum;
        added = true;
    }
    if (added && m->tmass > 0.0) m->ops->set_potential_scale(m->b, (float)(m->mass_now / m->tmass));
    return 0;
}

/* What comes before step s's passes: the key switch, a moving key's pose
 * and the sources (morph.h, "one step s in a schedule"). */
static int before_step(Morph *m, long s)
{
    int want = morph_key_at(m, s);
    if (want != m->key && switch_key(m, want) < 0) return -1;
    if (m->sched && schedule_before_step(m, s) < 0) return -1;
    return 0;
}

/* A step of several fields begun a pass at a time is dropped (every
 * field's part of it) when one of them is reset or given a state. */
static void group_dropped(Morph *m)
{
    Morph *lead = m->group_lead;
    if (!lead) return;
    for (int i = 0; i < lead->group_n; i++) {
        lead->group[i]->pass_active = false;
        lead->group[i]->group_lead = NULL;
    }
    lead->group_n = 0;
}

/* A step begun a pass at a time is finished (its remaining passes) before
 * anything that needs a whole step; 0 or -1. */
static int finish_pending(Morph *m)
{
    MorphPassInfo info;
    if (m->group_lead) { /* one field of a step of several: the whole step */
        Morph *lead = m->group_lead;
        int f;
        while (lead->group_lead)
            if (morph_pass_next_fields(lead->group, lead->group_n, &info, &f) < 0) return -1;
        return 0;
    }
    while (m->pass_active)
        if (morph_pass_next(m, &info) < 0) return -1;
    return 0;
}

int morph_step(Morph *m)
{
    if (m->pass_active || m->group_lead) return finish_pending(m); /* the step begun is this one */
    if (before_step(m, m->steps + 1) < 0) return -1;
    m->steps++;
    m->last_pass = METHOD_PASS_COUNT;
    return m->ops->step(m->b);
}

const char *morph_fields_check(Morph *const *ms, int n)
{
    if (n < 1 || n > MORPH_MAX_FIELDS) return "1 to 4 smoke fields";
    for (int i = 1; i < n; i++) {
        const Morph *a = ms[0], *b = ms[i];
        const SolverParams *p = morph_params(a), *q = morph_params(b);
        if (b->w != a->w || b->h != a->h) return "the fields' grids differ";
        if (b->backend != a->backend) return "the fields' backends differ";
        if (b->steps != a->steps) return "the fields' step counts differ";
        if (q->dt != p->dt || q->vd != p->vd || q->umax != p->umax)
            return "the fields share one velocity: their dt, vd and umax must agree";
    }
    return NULL;
}

/* The step of n fields sharing one velocity, its order written once (for
 * morph_step_fields, a segment at a time, and morph_pass_next_fields, a
 * pass at a time). The velocity is shared: field 0 holds it between steps.
 * Segment s is
 *   s < n:      field s's force part (the velocity handed on from field
 *               s - 1; every field but the last adds its force undamped,
 *               the last damps and clamps),
 *   s == n:     the last field's flow part (it advects and projects the
 *               velocity that has every force),
 *   s > n:      field s - n - 1's density part (every field given the
 *               last's velocity first: each moves its own smoke by it). */
typedef struct {
    int field;
    unsigned part; /* METHOD_PART_* */
} FieldsSegment;

static bool fields_segment(int n, int s, FieldsSegment *out)
{
    if (s < 0 || s > 2 * n) return false;
    if (s < n) *out = (FieldsSegment){s, METHOD_PART_FORCE};
    else if (s == n) *out = (FieldsSegment){n - 1, METHOD_PART_FLOW};
    else *out = (FieldsSegment){s - n - 1, METHOD_PART_DENSITY};
    return true;
}

static void plan_step(Morph *m);
static unsigned pass_peek_part(const Morph *m);

/* What comes before segment s: the velocity handed on (to field s from the
 * one before; to every field from the last before the density parts). A
 * step run a pass at a time (passwise) also makes a field's plan when its
 * force part begins, and passes the other fields' cursors over the flow's
 * passes, which the last field alone runs. 0 or -1. */
static int fields_enter(Morph *const *ms, int n, int s, bool passwise)
{
    if (s < n) {
        Morph *m = ms[s];
        if (s > 0 && m->ops->copy_velocity(m->b, ms[s - 1]->b) < 0) return -1;
        if (passwise) {
            plan_step(m);
            m->plan.force_partial = s < n - 1;
        }
        return 0;
    }
    if (s != n + 1) return 0;
    Morph *last = ms[n - 1];
    for (int i = 0; i < n - 1; i++) {
        if (ms[i]->ops->copy_velocity(ms[i]->b, last->b) < 0) return -1;
        while (passwise && pass_peek_part(ms[i]) == METHOD_PART_FLOW) {
            MethodPass p;
            int k;
            method_next(&ms[i]->plan, &ms[i]->cursor, &p, &k, NULL);
        }
    }
    return 0;
}

int morph_step_fields(Morph *const *ms, int n)
{
    if (n == 1) return morph_step(ms[0]);
    if (n >= 1 && n <= MORPH_MAX_FIELDS && ms[0]->group_lead) return finish_pending(ms[0]); /* the step begun */
    if (morph_fields_check(ms, n)) return -1;
    for (int i = 0; i < n; i++)
        if (before_step(ms[i], ms[i]->steps + 1) < 0) return -1;
    int rc = 0;
    FieldsSegment seg;
    for (int s = 0; fields_segment(n, s, &seg); s++) {
        Morph *m = ms[seg.field];
        if (fields_enter(ms, n, s, false) < 0) return -1;
        rc = m->ops->step_parts(m->b, seg.part, seg.part == METHOD_PART_FORCE && seg.field < n - 1);
        if (rc < 0 && seg.part != METHOD_PART_DENSITY) return -1;
        if (rc < 0) break; /* a density part failed: the step is counted, as the others moved */
    }
    for (int i = 0; i < n; i++) ms[i]->steps++;
    return rc;
}

/* ---- pass by pass ------------------------------------------------------------ */

bool morph_pass_active(const Morph *m) { return m->pass_active || m->group_lead; }

/* The next step's plan, the cursor at its first pass. */
static void plan_step(Morph *m)
{
    m->ops->step_begin(m->b, &m->plan);
    m->cursor = (MethodCursor){0};
    m->last_pass = METHOD_PASS_COUNT;
    m->pass_active = true;
}

int morph_pass_begin(Morph *m)
{
    if (m->group_lead) return -1; /* a field of several: morph_pass_next_fields */
    if (m->pass_active) return 0;
    if (before_step(m, m->steps + 1) < 0) return -1;
    plan_step(m);
    return 0;
}

/* The transport stage's index for ops->substeps (0), or -1. */
static int transport_stage(MethodPass pass)
{
    return pass == METHOD_PASS_ADVECT_DENSITY ? 0 : -1;
}

/* Run the pass at m's cursor (a transport stage: with the repetitions past
 * the substeps its speed takes) into *info; the step's end is the caller's. */
static int pass_run_one(Morph *m, MorphPassInfo *info)
{
    MorphPassInfo in = {0};
    MethodPass pass;
    int k, count;
    if (!method_next(&m->plan, &m->cursor, &pass, &k, &count)) return -1;
    in.pass = pass;
    in.name = method_pass_name(pass);
    in.k = k;
    in.count = in.bound = count;
    in.index = m->cursor.index - 1;
    in.total = method_pass_total(&m->plan);
    in.out = method_pass_output(pass);
    in.step = m->steps + 1;
    in.vf = m->plan.p.vf;
    in.rg = m->plan.rg;
    in.swirl = m->plan.p.swirl;
    in.noise = m->plan.noise;
    in.gather_from = m->plan.p.gather_from;
    in.arrive = m->plan.p.arrive > 0.0f && m->plan.p.force == SOLVER_FORCE_BALANCE;
    in.fattal = m->plan.p.force == SOLVER_FORCE_FATTAL;
    in.drift = false;
    for (int q = 0; q < m->plan.n; q++) in.drift = in.drift || m->plan.stage[q].pass == METHOD_PASS_DRIFT_VEL;
    if (m->ops->step_pass(m->b, pass, k, &m->plan) < 0) return -1;
    m->last_pass = pass;
    /* a transport stage takes the substeps its speed needs (method.h), fewer
     * than the plan's bound: the repetitions past them change nothing (on
     * the tiled compute backend they still run, empty), and run here */
    int ts = transport_stage(pass);
    if (ts >= 0) {
        int n = m->ops->substeps(m->b, ts);
        if (n > 0 && n < count) in.count = n;
        if (k + 1 >= in.count)
            for (int q = k + 1; q < count; q++) {
                MethodPass p2;
                int k2;
                method_next(&m->plan, &m->cursor, &p2, &k2, NULL);
                if (m->ops->step_pass(m->b, p2, k2, &m->plan) < 0) return -1;
            }
    }
    *info = in;
    return 0;
}

/* The part (METHOD_PART_*) of the pass at m's cursor; 0 at the step's end. */
static unsigned pass_peek_part(const Morph *m)
{
    MethodCursor peek = m->cursor;
    MethodPass p;
    int k;
    return method_next(&m->plan, &peek, &p, &k, NULL) ? method_pass_part(p) : 0u;
}

/* The step's last pass ran: close it. */
static int pass_end(Morph *m)
{
    m->pass_active = false;
    m->steps++;
    return m->ops->step_end(m->b);
}

int morph_pass_next(Morph *m, MorphPassInfo *out)
{
    if (m->group_lead) return -1; /* a field of several: morph_pass_next_fields */
    if (!m->pass_active && morph_pass_begin(m) < 0) return -1;
    MorphPassInfo info;
    if (pass_run_one(m, &info) < 0) return -1;
    if (!pass_peek_part(m)) { /* the step's last pass */
        info.last = true;
        if (pass_end(m) < 0) return -1;
    }
    if (out) *out = info;
    return 0;
}

/* Begin a step of several fields a pass at a time: as morph_step_fields,
 * every field's key switch and sources first; each field's plan is made
 * when its force part begins (after its velocity copy), as step_parts does. */
static int fields_begin(Morph *const *ms, int n)
{
    for (int i = 0; i < n; i++)
        if (ms[i]->pass_active || ms[i]->group_lead) return -1; /* a field's own step begun */
    for (int i = 0; i < n; i++)
        if (before_step(ms[i], ms[i]->steps + 1) < 0) return -1;
    Morph *lead = ms[0];
    for (int i = 0; i < n; i++) {
        lead->group[i] = ms[i];
        ms[i]->group_lead = lead;
    }
    lead->group_n = n;
    lead->group_seg = -1;
    return 0;
}

int morph_pass_next_fields(Morph *const *ms, int n, MorphPassInfo *out, int *field)
{
    if (n == 1) {
        if (field) *field = 0;
        return morph_pass_next(ms[0], out);
    }
    Morph *lead = ms[0];
    if (n < 1 || n > MORPH_MAX_FIELDS) return -1;
    /* a step begun: the fields' step counts differ while their density parts end */
    if (!lead->group_lead && (morph_fields_check(ms, n) || fields_begin(ms, n) < 0)) return -1;
    if (lead->group_n != n) return -1;
    for (int i = 0; i < n; i++)
        if (lead->group[i] != ms[i]) return -1; /* another group's step is begun */
    /* the segment of the next pass: this one's, or the next one's, entered */
    FieldsSegment seg;
    int s = lead->group_seg;
    if (s < 0 || !fields_segment(n, s, &seg) || pass_peek_part(ms[seg.field]) != seg.part) {
        s++;
        if (!fields_segment(n, s, &seg) || fields_enter(ms, n, s, true) < 0 ||
            pass_peek_part(ms[seg.field]) != seg.part) { /* not reached */
            group_dropped(lead);
            return -1;
        }
        lead->group_seg = s;
    }
    int f = seg.field;
    unsigned part = seg.part;
    MorphPassInfo info;
    if (pass_run_one(ms[f], &info) < 0) { group_dropped(lead); return -1; }
    if (part == METHOD_PART_DENSITY && !pass_peek_part(ms[f])) { /* this field's step is done */
        if (pass_end(ms[f]) < 0) { group_dropped(lead); return -1; }
        if (f == n - 1) {
            info.last = true;
            group_dropped(lead);
        }
    }
    if (out) *out = info;
    if (field) *field = f;
    return 0;
}

int morph_pass_read(Morph *m, MethodOut f, float *a, float *b)
{
    if ((unsigned)f >= METHOD_OUT_COUNT || !a || (method_out_is_vector(f) && !b)) return -1;
    return m->ops->read_output(m->b, f, a, b);
}

int morph_pass_residual(Morph *m, double *max, double *rms)
{
    MethodOut x, b;
    switch (m->last_pass) {
    case METHOD_PASS_POTENTIAL_RHS:
    case METHOD_PASS_POTENTIAL_VCYCLE: x = METHOD_OUT_POTENTIAL, b = METHOD_OUT_POTENTIAL_RHS; break;
    case METHOD_PASS_DIVERGENCE:
    case METHOD_PASS_PRESSURE_VCYCLE:
    case METHOD_PASS_PRESSURE_JACOBI: x = METHOD_OUT_PRESSURE, b = METHOD_OUT_DIVERGENCE; break;
    default: return -1;
    }
    size_t n = (size_t)m->w * m->h;
    float *xv = malloc(2 * n * sizeof *xv);
    if (!xv) return -1;
    int rc = morph_pass_read(m, x, xv, NULL) < 0 || morph_pass_read(m, b, xv + n, NULL) < 0 ? -1 : 0;
    if (rc == 0) ref_residual_norms(m->w, m->h, xv, xv + n, max, rms);
    free(xv);
    return rc;
}

MorphBackend morph_backend(const Morph *m) { return m->backend; }
long morph_step_count(const Morph *m) { return m->steps; }
const float *morph_start(const Morph *m) { return m->start; }
const SolverParams *morph_params(const Morph *m) { return m->ops->params(m->b); }
double morph_time(const Morph *m) { return (double)m->steps * morph_params(m)->dt; }
int morph_width(const Morph *m) { return m->w; }
int morph_height(const Morph *m) { return m->h; }

int morph_read_density(Morph *m, float *rho) { return m->ops->observe(m->b, rho, NULL, NULL, NULL); }

/* Face speeds from read (MAC; the wall faces i == 0, j == 0 and the
 * implicit i == W, j == H are 0), each cell's two faces averaged. */
static int read_centred(Morph *m, int (*read)(void *, float *, float *), float *vx, float *vy)
{
    int w = m->w, h = m->h;
    size_t n = (size_t)w * h;
    float *u = malloc(2 * n * sizeof(float));
    if (!u) return -1;
    float *v = u + n;
    int rc = read(m->b, u, v);
    if (rc == 0) {
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                size_t k = (size_t)j * w + i;
                float ur = i + 1 < w ? u[k + 1] : 0.0f, vb = j + 1 < h ? v[k + (size_t)w] : 0.0f;
                vx[k] = 0.5f * ((i > 0 ? u[k] : 0.0f) + ur);
                vy[k] = 0.5f * ((j > 0 ? v[k] : 0.0f) + vb);
            }
    }
    free(u);
    return rc;
}

int morph_read_velocity(Morph *m, float *vx, float *vy)
{
    return read_centred(m, m->ops->read_velocity, vx, vy);
}

int morph_read_motion(Morph *m, float *vx, float *vy)
{
    return read_centred(m, m->ops->read_motion, vx, vy);
}

int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div)
{
    return m->ops->observe(m->b, rho, mass, error, max_div);
}

int morph_observe_fields(Morph *const *ms, int n, float *const *rho, double *mass_each, double *mass,
                         double *error, double *max_div)
{
    if (n == 1) { /* morph_observe's own numbers */
        double m1;
        if (morph_observe(ms[0], rho ? rho[0] : NULL, &m1, error, max_div) < 0) return -1;
        if (mass_each) mass_each[0] = m1;
        if (mass) *mass = m1;
        return 0;
    }
    double msum = 0.0, esum = 0.0, tsum = 0.0;
    for (int i = 0; i < n; i++) {
        double mi, e, t;
        if (ms[i]->ops->observe_sums(ms[i]->b, rho ? rho[i] : NULL, &mi, &e, &t,
                                     i == 0 ? max_div : NULL) < 0)
            return -1;
        if (mass_each) mass_each[i] = mi;
        msum += mi;
        esum += e;
        tsum += t;
    }
    if (mass) *mass = msum;
    if (error) *error = tsum > 0.0 ? esum / tsum : 0.0;
    return 0;
}

int morph_observe_start(Morph *const *ms, int n, int slot, bool rho, bool max_div)
{
    if (slot < 0 || slot >= MORPH_OBSERVE_SLOTS || n < 1 || n > MORPH_MAX_FIELDS) return -1;
    if (ms[0]->ops->observe_start) {
        for (int i = 0; i < n; i++)
            if (ms[i]->ops->observe_start(ms[i]->b, slot, max_div && i == 0) < 0) return -1;
        return 0;
    }
    /* observed now, kept in field 0's slot (each field's density in its own) */
    struct MorphObs *o = &ms[0]->obs[slot];
    float *r[MORPH_MAX_FIELDS] = {NULL};
    for (int i = 0; rho && i < n; i++) {
        struct MorphObs *oi = &ms[i]->obs[slot];
        if (!oi->rho && !(oi->rho = malloc((size_t)ms[i]->w * ms[i]->h * sizeof(float)))) return -1;
        r[i] = oi->rho;
    }
    o->max_div = 0.0;
    return morph_observe_fields(ms, n, rho ? r : NULL, o->each, &o->mass, &o->error,
                                max_div ? &o->max_div : NULL);
}

/* A read-back's sums, band by band: each band's own, then added in band
 * order, so the numbers do not depend on how many threads ran. */
#define OBS_BANDS 64
typedef struct {
    const float *d;
    float *rho;
    int w, h, nb;
    bool div;
    double m[OBS_BANDS], e[OBS_BANDS], t[OBS_BANDS], md[OBS_BANDS];
} ObsSum;

static void obs_band(void *ctx, int b, int slot)
{
    (void)slot;
    ObsSum *o = ctx;
    size_t k0 = (size_t)o->w * (size_t)(o->h * b / o->nb), k1 = (size_t)o->w * (size_t)(o->h * (b + 1) / o->nb);
    double m = 0.0, e = 0.0, t = 0.0, md = 0.0;
    const float *d = o->d;
    for (size_t k = k0; k < k1; k++) {
        if (o->rho) o->rho[k] = d[4 * k];
        m += d[4 * k];
        e += fabs((double)d[4 * k] - d[4 * k + 1]);
        t += d[4 * k + 1];
        if (o->div && d[4 * k + 2] > md) md = d[4 * k + 2];
    }
    o->m[b] = m;
    o->e[b] = e;
    o->t[b] = t;
    o->md[b] = md;
}

int morph_observe_finish(Morph *const *ms, int n, int slot, float *const *rho, double *mass_each,
                         double *mass, double *error, double *max_div, Pool *pool)
{
    if (slot < 0 || slot >= MORPH_OBSERVE_SLOTS || n < 1 || n > MORPH_MAX_FIELDS) return -1;
    if (!ms[0]->ops->observe_map) {
        struct MorphObs *o = &ms[0]->obs[slot];
        for (int i = 0; rho && i < n; i++) {
            if (!rho[i]) continue;
            if (!ms[i]->obs[slot].rho) return -1;
            memcpy(rho[i], ms[i]->obs[slot].rho, (size_t)ms[i]->w * ms[i]->h * sizeof(float));
        }
        if (mass_each) memcpy(mass_each, o->each, (size_t)n * sizeof *mass_each);
        if (mass) *mass = o->mass;
        if (error) *error = o->error;
        if (max_div) *max_div = o->max_div;
        return 0;
    }
    /* the sums as morph_observe_fields makes them, each field's in bands on
     * the pool's threads (the read-back is memory: any thread may read it) */
    ObsSum o;
    double msum = 0.0, esum = 0.0, tsum = 0.0;
    for (int i = 0; i < n; i++) {
        bool div = false;
        const float *d = ms[i]->ops->observe_map(ms[i]->b, slot, &div);
        if (!d) return -1;
        o.d = d;
        o.rho = rho ? rho[i] : NULL;
        o.w = ms[i]->w;
        o.h = ms[i]->h;
        o.nb = o.h < OBS_BANDS ? o.h : OBS_BANDS;
        o.div = div && i == 0 && max_div;
        pool_for(pool, o.nb, obs_band, &o);
        ms[i]->ops->observe_unmap(ms[i]->b, slot);
        double mi = 0.0, e = 0.0, t = 0.0, md = 0.0;
        for (int b = 0; b < o.nb; b++) {
            mi += o.m[b];
            e += o.e[b];
            t += o.t[b];
            if (o.md[b] > md) md = o.md[b];
        }
        if (i == 0 && max_div) *max_div = md;
        if (mass_each) mass_each[i] = mi;
        msum += mi;
        esum += e;
        tsum += t;
    }
    if (mass) *mass = msum;
    if (error) *error = tsum > 0.0 ? esum / tsum : 0.0;
    return 0;
}

int morph_metrics(Morph *m, double *mass, double *error, double *max_div)
{
    return morph_observe(m, NULL, mass, error, max_div);
}

int morph_reset(Morph *m)
{
    group_dropped(m);
    m->pass_active = false; /* a step begun a pass at a time is dropped */
    m->last_pass = METHOD_PASS_COUNT;
    m->steps = 0;
    m->key = 1;
    if (!m->sched) return load_state(m, m->start, m->target);
    if (m->ops->set_density(m->b, m->start) < 0) return -1;
    return switch_key(m, 1);
}

int morph_swap(Morph *m)
{
    if (finish_pending(m) < 0) return -1;
    float *t = m->start;
    m->start = m->target;
    m->target = t;
    if (!m->sched) { /* the way back is a trip of its own: a compression's is a spreading */
        SolverParams given = m->given;
        base_set(m, &given, m->start, m->target);
        if (m->ops->set_params(m->b, &m->base) < 0) return -1;
        return m->ops->set_target(m->b, m->target, m->mass_match);
    }
    /* in a schedule: matched to the mass now (the sources' smoke to come is
     * not the swap's), until the next key */
    double mass;
    if (m->ops->observe(m->b, NULL, &mass, NULL, NULL) < 0) return -1;
    m->mass_now = mass;
    m->key_mass = 0.0;
    for (size_t c = 0; c < (size_t)m->w * m->h; c++) m->key_mass += m->target[c];
    if (m->mass_match) m->key_mass = mass;
    return set_target_image(m, m->target, false);
}

/* ---- keyframe sequences (issue 9) ------------------------------------------ */

int morph_set_target(Morph *m, const float *target)
{
    if (finish_pending(m) < 0) return -1;
    return m->ops->set_target(m->b, target, m->mass_match);
}

static bool finite2(const float v[2]) { return isfinite(v[0]) && isfinite(v[1]); }

/* Source S's weights into w (W*H): its image, or its disc with a soft edge
 * one cell wide (clamp(1/2 − (r_c − radius)/h, 0, 1), r_c the distance of
 * the cell's centre from the disc's, h the cell). Returns Σw. */
static double source_weights(const MorphSource *S, int w, int h, float *out)
{
    size_t n = (size_t)w * h;
    double sum = 0.0;
    if (S->image) {
        memcpy(out, S->image, n * sizeof(float));
    } else {
        double cell = 1.0 / (w < h ? w : h);
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                double dx = (i + 0.5) * cell - S->cx, dy = (j + 0.5) * cell - S->cy;
                double v = 0.5 - (sqrt(dx * dx + dy * dy) - S->radius) / cell;
                out[(size_t)j * w + i] = (float)(v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v);
            }
    }
    for (size_t k = 0; k < n; k++) sum += out[k];
    return sum;
}

/* One line into err for source k (from 1), or NULL: a source as
 * morph_set_schedule takes it. */
static const char *source_check(const MorphSource *S, char *why, size_t n)
{
    if (!isfinite(S->rate) || S->rate < 0.0f)
        snprintf(why, n, "its rate (%g) must be finite and at least 0", (double)S->rate);
    else if (S->from >= S->to)
        snprintf(why, n, "its first step (from %ld) must be before its last (to %ld)", S->from, S->to);
    else if (!S->image && !(isfinite(S->cx) && isfinite(S->cy)))
        snprintf(why, n, "the disc's centre (%g, %g) must be finite", (double)S->cx, (double)S->cy);
    else if (!S->image && !(S->radius > 0.0f && isfinite(S->radius)))
        snprintf(why, n, "the disc's radius (%g) must be more than 0", (double)S->radius);
    else
        return NULL;
    return why;
}

/* A schedule's keys and sources checked before anything is made: steps in
 * order, moves finite, parameters in range, targets with smoke. 0, or -1
 * with one line in err; *any_moving: a key's target moves or scales. */
static int schedule_check(const Morph *m, const MorphKey *keys, int n, const MorphSource *sources,
                          int nsources, bool *any_moving, char *err, size_t errlen)
{
    size_t cells = (size_t)m->w * m->h;
    char why[160];
    if (n < 1) return snprintf(err, errlen, "a schedule needs at least one key"), -1;
    if (nsources < 0 || (nsources > 0 && !sources))
        return snprintf(err, errlen, "%d sources given without a list", nsources), -1;
    *any_moving = false;
    for (int k = 0; k < n; k++) {
        const MorphKey *K = &keys[k];
        if (K->step < 1 || (k > 0 && K->step <= keys[k - 1].step))
            return snprintf(err, errlen, "key %d: its step (%ld) must be at least 1 and after key %d's (%ld)",
                            k + 1, K->step, k, k > 0 ? keys[k - 1].step : 0L), -1;
        if (!finite2(K->move_from) || !finite2(K->move_to) || !isfinite(K->scale_from) ||
            !isfinite(K->scale_to) || K->scale_from < 0.0f || K->scale_to < 0.0f)
            return snprintf(err, errlen, "key %d: its move must be finite and its scales finite and at "
                            "least 0 (0 means 1)", k + 1), -1;
        *any_moving |= K->move_from[0] || K->move_from[1] || K->move_to[0] || K->move_to[1] ||
                       (K->scale_from && K->scale_from != 1.0f) || (K->scale_to && K->scale_to != 1.0f);
        const char *bad = K->params ? method_params_check(K->params) : NULL;
        if (bad) return snprintf(err, errlen, "key %d: %s", k + 1, bad), -1;
        double mass = 0.0;
        for (size_t i = 0; i < cells; i++) mass += K->target[i];
        if (!(mass > 0.0))
            return snprintf(err, errlen, "key %d: the target is empty (all zero): nothing to morph to", k + 1), -1;
    }
    for (int k = 0; k < nsources; k++)
        if (source_check(&sources[k], why, sizeof why))
            return snprintf(err, errlen, "source %d: %s", k + 1, why), -1;
    return 0;
}

/* Each source's weights on the grid into src[k]. 0, or -1 with one line
 * in err (-2: out of memory). */
static int sources_make(const Morph *m, const MorphSource *sources, int nsources, struct MorphSrc *src,
                        char *err, size_t errlen)
{
    size_t cells = (size_t)m->w * m->h;
    for (int k = 0; k < nsources; k++) {
        const MorphSource *S = &sources[k];
        if (!(src[k].w = malloc(cells * sizeof(float)))) return -2;
        src[k].sum = source_weights(S, m->w, m->h, src[k].w);
        src[k].rate = S->rate;
        src[k].from = S->from;
        src[k].to = S->to;
        if (!(src[k].sum > 0.0) || !isfinite(src[k].sum)) {
            snprintf(err, errlen, "source %d: %s", k + 1,
                     S->image ? "the image is empty (all zero) or not finite" : "the disc covers no cell of the grid");
            return -1;
        }
    }
    return 0;
}

/* Each key as the morph runs it (sched[k]); a moving target must keep some
 * of itself on the grid at both ends of its range (moved: scratch). 0, or
 * -1 with one line in err. */
static int keys_make(const Morph *m, const MorphKey *keys, int n, struct MorphKeyRun *sched, float *moved,
                     char *err, size_t errlen)
{
    for (int k = 0; k < n; k++) {
        struct MorphKeyRun *R = &sched[k];
        const MorphKey *K = &keys[k];
        R->step = K->step;
        R->params = K->params ? *K->params : m->given;
        method_params_resolve(&R->params);
        /* a timed key arrives at its step: its arrival time is its range */
        if (R->params.arrive != 0.0f) /* timed, or auto (within --arrive's range: a checkpoint keeps it) */
            R->params.arrive = fminf(1e4f, (float)(K->step - (k ? keys[k - 1].step : 0)) * R->params.dt);
        /* and a force noise, pace and gathering start that follow its trip
         * (and its length: --pace 0, --gather-from 0) */
        method_time_trip(&R->params, m->w, m->h, k ? keys[k - 1].target : m->start, K->target, false);
        memcpy(R->move_from, K->move_from, sizeof R->move_from);
        memcpy(R->move_to, K->move_to, sizeof R->move_to);
        R->scale_from = K->scale_from ? K->scale_from : 1.0f;
        R->scale_to = K->scale_to ? K->scale_to : 1.0f;
        R->moving = R->move_from[0] || R->move_from[1] || R->move_to[0] || R->move_to[1] ||
                    R->scale_from != 1.0f || R->scale_to != 1.0f;
        if (!R->moving) continue;
        long first, last;
        key_range(sched, k + 1, &first, &last);
        for (int e = 0; e < 2; e++) {
            float d[2], sc;
            key_pose(R, first, last, e ? last : first, m->w, m->h, d, &sc);
            if (!(resample(m->w, m->h, K->target, d, sc, moved) > 0.0)) {
                snprintf(err, errlen, "key %d: the moving target leaves the grid at its %s step (%ld)", k + 1,
                         e ? "last" : "first", e ? last : first);
                return -1;
            }
        }
    }
    return 0;
}

/* The sources' weights on the backend, once. 0 or -1. */
static int sources_upload(Morph *m, const struct MorphSrc *src, int nsources)
{
    const float **w = nsources > 0 ? malloc((size_t)nsources * sizeof *w) : NULL;
    if (nsources > 0 && !w) return -1;
    for (int k = 0; k < nsources; k++) w[k] = src[k].w;
    int rc = m->ops->set_sources(m->b, w, nsources);
    free(w);
    return rc;
}

int morph_set_schedule(Morph *m, const MorphKey *keys, int n, const MorphSource *sources,
                       int nsources, char *err, size_t errlen)
{
    size_t cells = (size_t)m->w * m->h;
    char dummy[8];
    if (!err) err = dummy, errlen = sizeof dummy;
    bool any_moving;
    if (schedule_check(m, keys, n, sources, nsources, &any_moving, err, errlen) < 0) return -1;
    float *more = NULL, *moved = NULL;
    struct MorphSrc *src = NULL;
    struct MorphKeyRun *sched = malloc((size_t)n * sizeof *sched);
    if (!sched || (n > 1 && !(more = malloc((size_t)(n - 1) * cells * sizeof(float)))) ||
        (any_moving && !(moved = malloc(cells * sizeof(float)))) ||
        (nsources > 0 && !(src = calloc((size_t)nsources, sizeof *src))))
        goto fail_memory;
    int made = sources_make(m, sources, nsources, src, err, errlen);
    if (made == -2) goto fail_memory;
    if (made < 0 || keys_make(m, keys, n, sched, moved, err, errlen) < 0) goto fail;
    for (int k = 1; k < n; k++) memcpy(more + (size_t)(k - 1) * cells, keys[k].target, cells * sizeof(float));
    if (sources_upload(m, src, nsources) < 0) {
        snprintf(err, errlen, "out of memory (or a GL error) uploading %d sources", nsources);
        goto fail;
    }
    memcpy(m->target, keys[0].target, cells * sizeof(float));
    free(m->keys);
    free(m->sched);
    free_sources(m->src, m->nsrc);
    free(m->moved);
    m->keys = more;
    m->sched = sched;
    m->src = src;
    m->nsrc = nsources;
    m->moved = moved;
    m->nkeys = n;
    m->key_every = 0;
    if (switch_key(m, morph_key_at(m, m->steps + 1)) < 0) {
        snprintf(err, errlen, "out of memory (or a GL error) setting key %d", morph_key_at(m, m->steps + 1));
        return -1;
    }
    return 0;
fail_memory:
    snprintf(err, errlen, "out of memory for %d keys and %d sources of a %dx%d grid", n, nsources, m->w, m->h);
fail:
    free_sources(src, nsources);
    free(moved);
    free(more);
    free(sched);
    return -1;
}

int morph_set_keys(Morph *m, const float *const *keys, int n, long every)
{
    if (n < 1 || every < 1 || n > 100000) return -1;
    MorphKey *k = calloc((size_t)n, sizeof *k);
    if (!k) return -1;
    for (int i = 0; i < n; i++) {
        k[i].step = (long)(i + 1) * every;
        k[i].target = keys[i];
    }
    int rc = morph_set_schedule(m, k, n, NULL, 0, NULL, 0);
    free(k);
    if (rc == 0) m->key_every = every;
    return rc;
}

int morph_key(const Morph *m) { return m->key; }
int morph_key_count(const Morph *m) { return m->nkeys; }
long morph_key_every(const Morph *m) { return m->key_every; }
bool morph_has_schedule(const Morph *m) { return m->sched != NULL; }
long morph_key_step(const Morph *m, int k)
{
    return m->sched && k >= 1 && k <= m->nkeys ? m->sched[k - 1].step : 0;
}

int morph_key_at(const Morph *m, long step)
{
    if (!m->sched || step <= 1) return 1;
    int k = 1;
    while (k < m->nkeys && step > m->sched[k - 1].step) k++;
    return k;
}

/* Jump to key k (the window's next / previous key): key k becomes the goal
 * now (its target, scaled to the smoke's mass now, and its parameters), and
 * the step count goes to the step before key k's range (0 for key 1), so
 * the next step is the range's first and the schedule goes on from there.
 * The density and the velocity carry over. */
int morph_goto_key(Morph *m, int k)
{
    if (k < 1 || k > m->nkeys || finish_pending(m) < 0) return -1;
    long was = m->steps;
    m->steps = k > 1 ? morph_key_step(m, k - 1) : 0;
    int rc = m->sched ? switch_key(m, k) : m->ops->set_target(m->b, m->target, m->mass_match);
    if (rc < 0) m->steps = was;
    return rc;
}

const float *morph_key_target(const Morph *m, int k)
{
    return k >= 1 && k <= m->nkeys ? key_image(m, k) : NULL;
}

int morph_set_params(Morph *m, const SolverParams *p)
{
    if (finish_pending(m) < 0) return -1;
    if (!m->sched) {
        /* the timed values read from morph_params and given back (the
         * window changes one setting of them) stay automatic */
        SolverParams q = *p;
        if (m->given.pace == 0.0f && q.pace == m->base.pace) q.pace = 0.0f;
        if (m->given.gather_from == 0.0f && q.gather_from == m->base.gather_from) q.gather_from = 0.0f;
        if (m->given.arrive == SETTING_AUTO && q.arrive == m->base.arrive) q.arrive = SETTING_AUTO;
        base_set(m, &q, m->start, m->target);
        p = &m->base;
    }
    return m->ops->set_params(m->b, p);
}

int morph_stir(Morph *m, float x, float y, float fx, float fy, float radius)
{
    if (finish_pending(m) < 0) return -1;
    return m->ops->stir(m->b, x, y, fx, fy, radius);
}

int morph_splat_density(Morph *m, float x, float y, float amount, float radius)
{
    if (!(radius > 0.0f) || !isfinite(amount) || !isfinite(x) || !isfinite(y)) return -1;
    /* mid-step the density may live in a substep field a later pass
     * overwrites (tiled compute): the step is finished first, as for a stir */
    if (finish_pending(m) < 0) return -1;
    if (m->ops->splat_density(m->b, x, y, amount, radius) < 0) return -1;
    if (m->sched && m->ops->observe(m->b, NULL, &m->mass_now, NULL, NULL) < 0) return -1;
    return 0;
}

unsigned morph_density_texture(const Morph *m) { return m->ops->density_texture(m->b); }
unsigned morph_velocity_texture(const Morph *m) { return m->ops->velocity_texture(m->b); }

/* FNV-1a, 64 bits, over n bytes */
static unsigned long long fnv(unsigned long long h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++) {
        h ^= b[k];
        h *= 1099511628211ull;
    }
    return h;
}

unsigned long long morph_schedule_sum(const Morph *m)
{
    if (!m->sched) return 0;
    size_t cells = (size_t)m->w * m->h;
    unsigned long long h = 14695981039346656037ull;
    h = fnv(h, &m->nkeys, sizeof m->nkeys);
    for (int k = 1; k <= m->nkeys; k++) {
        const struct MorphKeyRun *K = &m->sched[k - 1];
        float pose[6] = {K->move_from[0], K->move_from[1], K->move_to[0], K->move_to[1], K->scale_from,
                         K->scale_to};
        h = fnv(h, &K->step, sizeof K->step);
        h = fnv(h, pose, sizeof pose);
        h = fnv(h, key_image(m, k), cells * sizeof(float));
    }
    h = fnv(h, &m->nsrc, sizeof m->nsrc);
    for (int k = 0; k < m->nsrc; k++) {
        const struct MorphSrc *S = &m->src[k];
        h = fnv(h, &S->rate, sizeof S->rate);
        h = fnv(h, &S->from, sizeof S->from);
        h = fnv(h, &S->to, sizeof S->to);
        h = fnv(h, S->w, cells * sizeof(float));
    }
    return h;
}

const char *morph_state_schedule_check(const Morph *m, const MorphState *st, char *why, size_t n)
{
    if (st->nkeys == 0 && !m->sched) return NULL;
    if (st->nkeys == 0)
        snprintf(why, n, "the state has no schedule, the morph has one of %d keys", m->nkeys);
    else if (!m->sched)
        snprintf(why, n, "the state has a schedule of %d keys, the morph none", st->nkeys);
    else if (st->nkeys != m->nkeys)
        snprintf(why, n, "the state has %d keys, the morph %d", st->nkeys, m->nkeys);
    else if (st->last_key_step != morph_key_step(m, m->nkeys))
        snprintf(why, n, "the state's last key is at step %ld, the morph's at %ld", st->last_key_step,
                 morph_key_step(m, m->nkeys));
    else if (st->key < 1 || st->key > m->nkeys)
        snprintf(why, n, "the state's active key %d is not one of the morph's %d", st->key, m->nkeys);
    else if (st->schedule_sum != morph_schedule_sum(m))
        snprintf(why, n, "the keys' images, moves or sources differ from the morph's");
    else if (!isfinite(st->mass_now) || !isfinite(st->key_mass) || !isfinite(st->tmass))
        snprintf(why, n, "the state's masses are not finite");
    else
        return NULL;
    return why;
}

int morph_get_state(Morph *m, MorphState *st)
{
    size_t n = (size_t)m->w * m->h;
    if (finish_pending(m) < 0) return -1;
    if (m->ops->get_state(m->b, &st->solver) < 0) return -1;
    st->params = *morph_params(m);
    st->mass_match = m->mass_match;
    st->steps = m->steps;
    memcpy(st->start, m->start, n * sizeof(float));
    memcpy(st->target, m->target, n * sizeof(float));
    bool s = m->sched != NULL;
    st->nkeys = s ? m->nkeys : 0;
    st->key = s ? m->key : 0;
    st->key_every = s ? m->key_every : 0;
    st->last_key_step = s ? morph_key_step(m, m->nkeys) : 0;
    st->schedule_sum = morph_schedule_sum(m);
    st->mass_now = s ? m->mass_now : 0.0;
    st->key_mass = s ? m->key_mass : 0.0;
    st->tmass = s ? m->tmass : 0.0;
    return 0;
}

int morph_set_state(Morph *m, const MorphState *st)
{
    size_t n = (size_t)m->w * m->h;
    char why[160];
    if (method_params_check(&st->params) || morph_state_schedule_check(m, st, why, sizeof why)) return -1;
    group_dropped(m);
    m->pass_active = false; /* a step begun a pass at a time is dropped */
    m->last_pass = METHOD_PASS_COUNT;
    /* the arrival's clock (not in checkpoints): steps since the target of
     * the key in force was set, before its range's first step */
    MethodState ms = st->solver;
    ms.kstep = st->steps;
    if (m->sched && st->key > 1) {
        long first, last;
        key_range(m->sched, st->key, &first, &last);
        ms.kstep = st->steps - (first - 1);
    }
    if (m->ops->set_params(m->b, &st->params) < 0 || m->ops->set_state(m->b, &ms) < 0)
        return -1;
    m->mass_match = st->mass_match;
    m->steps = st->steps;
    if (m->sched) {
        /* the key as it was: no switch, so no new mass match (its target
         * and parameters came with the fields and st->params) */
        m->key = st->key;
        m->mass_now = st->mass_now;
        m->key_mass = st->key_mass;
        m->tmass = st->tmass;
    } else {
        /* no schedule: the masses from the state (the target holds the key's) */
        m->mass_now = m->tmass = 0.0;
        for (size_t k = 0; k < n; k++) {
            m->mass_now += st->solver.field[METHOD_FIELD_DENSITY][k];
            m->tmass += st->solver.field[METHOD_FIELD_TARGET][k];
        }
        m->key_mass = m->tmass;
    }
    memcpy(m->start, st->start, n * sizeof(float));
    memcpy(m->target, st->target, n * sizeof(float));
    return 0;
}
