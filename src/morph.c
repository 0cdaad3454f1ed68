/* morph: a morph on either backend; see morph.h. */
#include "morph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Morph {
    int w, h;
    bool mass_match;
    float *start, *target;
    long steps;
    Solver *gpu;
    RefSolver *cpu;
};

static int load_state(Morph *m, const float *rho, const float *tgt)
{
    if (m->gpu) {
        if (solver_set_density(m->gpu, rho) < 0) return -1;
        return solver_set_target(m->gpu, tgt, m->mass_match);
    }
    ref_set_density(m->cpu, rho);
    return ref_set_target(m->cpu, tgt, m->mass_match);
}

Morph *morph_create(int w, int h, const SolverParams *p, const float *start, const float *target,
                    bool mass_match, const char *shader_dir, char *err, size_t errlen)
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
    memcpy(m->start, start, n * sizeof(float));
    memcpy(m->target, target, n * sizeof(float));
    if (shader_dir) {
        if (!(m->gpu = solver_create(w, h, p, shader_dir, err, errlen))) goto fail;
    } else {
        if (!(m->cpu = ref_create(w, h, p, err, errlen))) goto fail;
    }
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
    solver_free(m->gpu);
    ref_free(m->cpu);
    free(m->start);
    free(m->target);
    free(m);
}

int morph_step(Morph *m)
{
    m->steps++;
    if (m->gpu) return solver_step(m->gpu);
    ref_step(m->cpu);
    return 0;
}

long morph_step_count(const Morph *m) { return m->steps; }
const float *morph_start(const Morph *m) { return m->start; }
const SolverParams *morph_params(const Morph *m)
{
    return m->gpu ? solver_params(m->gpu) : ref_params(m->cpu);
}
double morph_time(const Morph *m) { return (double)m->steps * morph_params(m)->dt; }
int morph_width(const Morph *m) { return m->w; }
int morph_height(const Morph *m) { return m->h; }
Solver *morph_gpu(Morph *m) { return m->gpu; }
RefSolver *morph_cpu(Morph *m) { return m->cpu; }

int morph_read_density(Morph *m, float *rho)
{
    if (m->gpu) return solver_read_density(m->gpu, rho);
    memcpy(rho, ref_density(m->cpu), (size_t)m->w * m->h * sizeof(float));
    return 0;
}

int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div)
{
    if (m->gpu) return solver_observe(m->gpu, rho, mass, error, max_div);
    if (rho) memcpy(rho, ref_density(m->cpu), (size_t)m->w * m->h * sizeof(float));
    if (mass) *mass = ref_mass(m->cpu);
    if (error) *error = ref_error(m->cpu);
    if (max_div) *max_div = ref_max_div(m->cpu);
    return 0;
}

int morph_metrics(Morph *m, double *mass, double *error, double *max_div)
{
    return morph_observe(m, NULL, mass, error, max_div);
}

int morph_reset(Morph *m)
{
    m->steps = 0;
    return load_state(m, m->start, m->target);
}

int morph_swap(Morph *m)
{
    float *t = m->start;
    m->start = m->target;
    m->target = t;
    if (m->gpu) return solver_set_target(m->gpu, m->target, m->mass_match);
    return ref_set_target(m->cpu, m->target, m->mass_match);
}

int morph_set_params(Morph *m, const SolverParams *p)
{
    if (m->gpu) return solver_set_params(m->gpu, p);
    ref_set_params(m->cpu, p);
    return 0;
}
