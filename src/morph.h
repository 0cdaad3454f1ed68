/* morph: one morph from a start density to a target, on either backend (the
 * GPU solver or the CPU reference). Keeps the start and target images so the
 * morph can be reset or reversed. Never includes GL itself.
 *
 *   Morph *m = morph_create(w, h, &params, start, target, true, shader_dir, err, n);
 *   //           shader_dir NULL: the CPU reference solver (--cpu)
 *   while (...) morph_step(m);
 *   morph_read_density(m, rho);
 */
#ifndef SMOKEMORPH_MORPH_H
#define SMOKEMORPH_MORPH_H

#include <stdbool.h>
#include <stddef.h>

#include "refsolver.h"
#include "solver.h"

typedef struct Morph Morph;

Morph *morph_create(int w, int h, const SolverParams *p, const float *start, const float *target,
                    bool mass_match, const char *shader_dir, char *err, size_t errlen);
void morph_free(Morph *m);

int morph_step(Morph *m);
long morph_step_count(const Morph *m);
double morph_time(const Morph *m);
int morph_width(const Morph *m);
int morph_height(const Morph *m);

int morph_read_density(Morph *m, float *rho);
int morph_metrics(Morph *m, double *mass, double *error, double *max_div);
/* Density (rho may be NULL), mass, error and (max_div non-NULL) max|∇·u|:
 * on the GPU from one read-back. */
int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div);

/* Back to the start image, zero velocity, the original target. */
int morph_reset(Morph *m);
/* Morph back: the current smoke stays, the start image becomes the target
 * (and the old target the start for the next reset). */
int morph_swap(Morph *m);

/* The start image (W*H), as given or after morph_swap. */
const float *morph_start(const Morph *m);

const SolverParams *morph_params(const Morph *m);
int morph_set_params(Morph *m, const SolverParams *p);

/* The backend in use: exactly one is non-NULL. */
Solver *morph_gpu(Morph *m);
RefSolver *morph_cpu(Morph *m);

#endif
