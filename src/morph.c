/* morph: a morph on any backend through one table of operations; see morph.h. */
#include "morph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refsolver.h"
#include "solver.h"

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
} MorphOps;

struct Morph {
    int w, h;
    bool mass_match;
    MorphBackend backend;
    float *start, *target;
    long steps;
    /* keyframe sequence: key 1 is target, keys k >= 2 are keys[(k-2)*W*H];
     * key is the one the backend holds */
    float *keys;
    int nkeys, key;
    long key_every;
    const MorphOps *ops;
    void *b;
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

static const MorphOps cpu_ops = {cpu_destroy, cpu_set_density, cpu_set_target, cpu_step, cpu_observe,
                                 cpu_read_velocity, cpu_params, cpu_set_params, cpu_stir, no_texture, no_texture,
                                 cpu_get_state, cpu_set_state};

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

static const MorphOps gpu_ops = {gpu_destroy, gpu_set_density, gpu_set_target, gpu_step, gpu_observe,
                                 gpu_read_velocity, gpu_params, gpu_set_params, gpu_stir, gpu_density_texture,
                                 gpu_velocity_texture, gpu_get_state, gpu_set_state};

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
    memcpy(m->start, start, n * sizeof(float));
    memcpy(m->target, target, n * sizeof(float));
    if (backend == MORPH_CPU) {
        m->ops = &cpu_ops;
        m->b = ref_create(w, h, p, err, errlen);
    } else {
        m->ops = &gpu_ops;
        m->b = solver_create(w, h, p, backend == MORPH_COMPUTE ? SOLVER_COMPUTE : SOLVER_FRAGMENT,
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

void morph_free(Morph *m)
{
    if (!m) return;
    if (m->b) m->ops->destroy(m->b);
    free(m->start);
    free(m->target);
    free(m->keys);
    free(m);
}

/* Key k's image (k from 1). */
static const float *key_image(const Morph *m, int k)
{
    return k <= 1 ? m->target : m->keys + (size_t)(k - 2) * m->w * m->h;
}

int morph_step(Morph *m)
{
    int want = morph_key_at(m, m->steps + 1);
    if (want != m->key) { /* a new key: only the target changes */
        if (m->ops->set_target(m->b, key_image(m, want), m->mass_match) < 0) return -1;
        m->key = want;
    }
    m->steps++;
    return m->ops->step(m->b);
}

MorphBackend morph_backend(const Morph *m) { return m->backend; }
long morph_step_count(const Morph *m) { return m->steps; }
const float *morph_start(const Morph *m) { return m->start; }
const SolverParams *morph_params(const Morph *m) { return m->ops->params(m->b); }
double morph_time(const Morph *m) { return (double)m->steps * morph_params(m)->dt; }
int morph_width(const Morph *m) { return m->w; }
int morph_height(const Morph *m) { return m->h; }

int morph_read_density(Morph *m, float *rho) { return m->ops->observe(m->b, rho, NULL, NULL, NULL); }

int morph_read_velocity(Morph *m, float *vx, float *vy)
{
    /* the backends keep u and v on the cell faces (MAC; the wall faces
     * i == 0, j == 0 and the implicit i == W, j == H are 0): average each
     * cell's two faces */
    int w = m->w, h = m->h;
    size_t n = (size_t)w * h;
    float *u = malloc(2 * n * sizeof(float));
    if (!u) return -1;
    float *v = u + n;
    int rc = m->ops->read_velocity(m->b, u, v);
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

int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div)
{
    return m->ops->observe(m->b, rho, mass, error, max_div);
}

int morph_metrics(Morph *m, double *mass, double *error, double *max_div)
{
    return morph_observe(m, NULL, mass, error, max_div);
}

int morph_reset(Morph *m)
{
    m->steps = 0;
    m->key = 1;
    return load_state(m, m->start, m->target);
}

int morph_swap(Morph *m)
{
    float *t = m->start;
    m->start = m->target;
    m->target = t;
    return m->ops->set_target(m->b, m->target, m->mass_match);
}

/* ---- keyframe sequences (issue 9) ------------------------------------------ */

int morph_set_target(Morph *m, const float *target)
{
    return m->ops->set_target(m->b, target, m->mass_match);
}

int morph_set_keys(Morph *m, const float *const *keys, int n, long every)
{
    size_t cells = (size_t)m->w * m->h;
    if (n < 1 || every < 1) return -1;
    for (int k = 0; k < n; k++) {
        double mass = 0.0;
        for (size_t i = 0; i < cells; i++) mass += keys[k][i];
        if (!(mass > 0.0)) return -1;
    }
    float *more = NULL;
    if (n > 1 && !(more = malloc((size_t)(n - 1) * cells * sizeof(float)))) return -1;
    for (int k = 1; k < n; k++) memcpy(more + (size_t)(k - 1) * cells, keys[k], cells * sizeof(float));
    memcpy(m->target, keys[0], cells * sizeof(float));
    free(m->keys);
    m->keys = more;
    m->nkeys = n;
    m->key_every = every;
    m->key = morph_key_at(m, m->steps + 1);
    return morph_set_target(m, key_image(m, m->key));
}

int morph_key(const Morph *m) { return m->key; }
int morph_key_count(const Morph *m) { return m->nkeys; }
long morph_key_every(const Morph *m) { return m->key_every; }

int morph_key_at(const Morph *m, long step)
{
    if (m->nkeys <= 1 || m->key_every <= 0 || step <= 1) return 1;
    long k = (step - 1) / m->key_every + 1;
    return k >= m->nkeys ? m->nkeys : (int)k;
}

int morph_set_params(Morph *m, const SolverParams *p) { return m->ops->set_params(m->b, p); }

int morph_stir(Morph *m, float x, float y, float fx, float fy, float radius)
{
    return m->ops->stir(m->b, x, y, fx, fy, radius);
}

unsigned morph_density_texture(const Morph *m) { return m->ops->density_texture(m->b); }
unsigned morph_velocity_texture(const Morph *m) { return m->ops->velocity_texture(m->b); }

int morph_get_state(Morph *m, MorphState *st)
{
    size_t n = (size_t)m->w * m->h;
    if (m->ops->get_state(m->b, &st->solver) < 0) return -1;
    st->params = *morph_params(m);
    st->mass_match = m->mass_match;
    st->steps = m->steps;
    memcpy(st->start, m->start, n * sizeof(float));
    memcpy(st->target, m->target, n * sizeof(float));
    return 0;
}

int morph_set_state(Morph *m, const MorphState *st)
{
    size_t n = (size_t)m->w * m->h;
    if (method_params_check(&st->params)) return -1;
    if (m->ops->set_params(m->b, &st->params) < 0 || m->ops->set_state(m->b, &st->solver) < 0)
        return -1;
    m->mass_match = st->mass_match;
    m->steps = st->steps;
    memcpy(m->start, st->start, n * sizeof(float));
    memcpy(m->target, st->target, n * sizeof(float));
    return 0;
}
