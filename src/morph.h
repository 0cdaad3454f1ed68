/* morph: one morph from a start density to a target, on any backend (the CPU
 * reference, or the GPU solver's fragment or compute passes) through one
 * table of operations: nothing here or in its callers branches on the
 * backend. Keeps the start and target images so the morph can be reset or
 * reversed. Never includes GL itself.
 *
 *   Morph *m = morph_create(w, h, &params, start, target, true, MORPH_COMPUTE,
 *                           shader_dir, err, n);   // MORPH_CPU: shader_dir unused
 *   while (...) morph_step(m);
 *   morph_read_density(m, rho);
 */
#ifndef SMOKEMORPH_MORPH_H
#define SMOKEMORPH_MORPH_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"

/* The backends. The GPU ones need a current GL context (3.3 for fragment,
 * 4.3 for compute). */
typedef enum { MORPH_CPU, MORPH_FRAGMENT, MORPH_COMPUTE } MorphBackend;

/* "cpu", "fragment", "compute" */
const char *morph_backend_name(MorphBackend b);

typedef struct Morph Morph;

Morph *morph_create(int w, int h, const SolverParams *p, const float *start, const float *target,
                    bool mass_match, MorphBackend backend, const char *shader_dir, char *err,
                    size_t errlen);
void morph_free(Morph *m);

MorphBackend morph_backend(const Morph *m);

int morph_step(Morph *m);
long morph_step_count(const Morph *m);
double morph_time(const Morph *m);
int morph_width(const Morph *m);
int morph_height(const Morph *m);

int morph_read_density(Morph *m, float *rho);
int morph_metrics(Morph *m, double *mass, double *error, double *max_div);
/* The velocity at the cell centres (the mean of each cell's two faces),
 * W*H floats each, in domain units per unit time; row 0 at the top, vx
 * positive to the right, vy positive down (to larger rows). 0 or -1. */
int morph_read_velocity(Morph *m, float *vx, float *vy);
/* Density (rho may be NULL), mass, error and (max_div non-NULL) max|∇·u|:
 * on the GPU from one read-back. */
int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div);

/* Back to the start image, zero velocity, the original target. */
int morph_reset(Morph *m);
/* Morph back: the current smoke stays, the start image becomes the target
 * (and the old target the start for the next reset). */
int morph_swap(Morph *m);

/* Keyframe sequences (issue 9). Only the target changes at a key: the
 * velocity, the density and the step count carry over, and with mass
 * matching the new target is scaled to the smoke's mass at that moment, as
 * the first target is at the start.
 *
 * morph_set_target: drive the smoke to target (W*H) from now on.
 * morph_set_keys: targets keys[0..n-1] (copied), keys[0] in place of the
 * target given to morph_create: key k (from 1) is the goal for steps
 * (k-1)*every+1 .. k*every, the last key after that. morph_step switches
 * the target before the first step of each key's range, so the metrics at
 * step k*every are still against key k. Call it at step 0 (after create or
 * reset). morph_reset goes back to key 1; morph_swap swaps the start and
 * key 1, and in a sequence the schedule takes over again at the next key.
 * Each 0 or -1 (an empty target, or memory). */
int morph_set_target(Morph *m, const float *target);
int morph_set_keys(Morph *m, const float *const *keys, int n, long every);
int morph_key(const Morph *m);          /* the active key, 1..morph_key_count */
int morph_key_count(const Morph *m);    /* 1 without morph_set_keys */
long morph_key_every(const Morph *m);   /* 0 without morph_set_keys */
int morph_key_at(const Morph *m, long step); /* the goal of step `step` (1 for step 0) */

/* The start image (W*H), as given or after morph_swap. */
const float *morph_start(const Morph *m);

const SolverParams *morph_params(const Morph *m);
int morph_set_params(Morph *m, const SolverParams *p);

/* The whole morph, for checkpoints: the backend's state (method.h), the
 * parameters, the step count and the images reset and swap go back to.
 * Every array is W*H floats, allocated by the caller. A morph given a
 * state (on the same backend and machine) steps exactly as the one it was
 * taken from. */
typedef struct {
    SolverParams params;
    bool mass_match;
    long steps;               /* morph_step_count */
    MethodState solver;       /* the backend's fields and clock */
    float *start, *target;    /* morph_start's image and the target as given */
} MorphState;
int morph_get_state(Morph *m, MorphState *st);
/* Sets the parameters first, then the fields: -1 on a GL error or when the
 * parameters are refused. */
int morph_set_state(Morph *m, const MorphState *st);

/* Stir: add a velocity (fx, fy) (domain units/time) in a Gaussian of the
 * given radius (cells) around (x, y) (cell units, row 0 at the top).
 * -1 where the backend cannot (the CPU reference). */
int morph_stir(Morph *m, float x, float y, float fx, float fy, float radius);

/* GL texture names of the state, for drawing: density (RGBA: ρ, ρ*, ρ̃*) and
 * velocity (RG). 0 on a backend whose state is not on the GPU. */
unsigned morph_density_texture(const Morph *m);
unsigned morph_velocity_texture(const Morph *m);

#endif
