/* solver: the morph step on the GPU, one GLSL fragment pass per stage of the
 * reference solver (refsolver.h has the discrete equations; the passes
 * compute the same numbers), run as fragment or compute shaders. Needs a
 * current GL 3.3 context (4.3 for compute).
 *
 *   Solver *s = solver_create(256, 256, &params, SOLVER_COMPUTE, shader_dir, err, sizeof err);
 *   solver_set_density(s, rho);            // W*H floats; velocity reset
 *   solver_set_target(s, tgt, true);       // mass-matched to the density
 *   for (...) solver_step(s);              // nothing comes back to the CPU
 *   solver_read_density(s, out);           // for export / metrics
 *
 * Fields: velocity RGBA32F ping-pong (.r = u, .g = v on MAC faces), density
 * RGBA32F ping-pong (.r = ρ, .g = ρ*, .b = ρ̃*), pressure, divergence, the
 * gathering error e and the coarse blur grids R32F.
 */
#ifndef SMOKEMORPH_SOLVER_H
#define SMOKEMORPH_SOLVER_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"

typedef struct Solver Solver;

/* The GPU backends: the same passes as fragment shaders (GL 3.3, the
 * mission's pixel-shader design) or as compute shaders (GL 4.3; far faster
 * on data-centre GPUs). */
typedef enum { SOLVER_FRAGMENT, SOLVER_COMPUTE } SolverKind;

Solver *solver_create(int w, int h, const SolverParams *p, SolverKind kind, const char *shader_dir,
                      char *err, size_t errlen);
SolverKind solver_kind(const Solver *s);
void solver_free(Solver *s);
int solver_width(const Solver *s);
int solver_height(const Solver *s);
const SolverParams *solver_params(const Solver *s);
/* Change parameters; a new sigma re-blurs the target. */
int solver_set_params(Solver *s, const SolverParams *p);

/* Upload W*H densities; velocity and pressure are reset. */
int solver_set_density(Solver *s, const float *rho);
/* Upload a target; with mass_match it is scaled to the density's mass (read
 * back once). Returns -1 for an all-zero target. Blurs it on the GPU. */
int solver_set_target(Solver *s, const float *tgt, bool mass_match);

/* One step, every pass on the GPU. Returns 0, or -1 on a GL error. */
int solver_step(Solver *s);

/* Stir: add a velocity (fx, fy) (domain units/time) in a Gaussian of the
 * given radius (cells) around (x, y) (cell units, row 0 at the top). */
int solver_stir(Solver *s, float x, float y, float fx, float fy, float radius);

/* Read-backs (W*H floats each). */
int solver_read_density(Solver *s, float *rho);
int solver_read_fields(Solver *s, float *rho, float *tgt, float *tgt_blur);
int solver_read_velocity(Solver *s, float *u, float *v);

/* The whole state a step depends on besides the parameters (method.h),
 * read back into or uploaded from the caller's W*H arrays, whatever the
 * fields' layout on the GPU. A solver given a state steps exactly as the
 * one it was taken from (checkpoints). */
int solver_get_state(Solver *s, MethodState *st);
int solver_set_state(Solver *s, const MethodState *st);

/* What export needs, from one read-back: ρ (rho may be NULL), Σρ,
 * Σ|ρ−ρ*|/Σρ*, and max|∇·u| when max_div is non-NULL (then a pass first
 * gathers ρ, ρ* and |∇·u| into one texture). */
int solver_observe(Solver *s, float *rho, double *mass, double *error, double *max_div);
/* All three metrics (one read-back). */
int solver_metrics(Solver *s, double *mass, double *error, double *max_div);

/* GL texture names for drawing (density RGBA: ρ, ρ*, ρ̃*; velocity RG). */
unsigned solver_density_texture(const Solver *s);
unsigned solver_velocity_texture(const Solver *s);

/* GPU time per pass group (ms, summed since enabled), with timer queries,
 * and the bytes each group moved (summed; pass_bytes() in field.h: every
 * texture a pass samples read once, its target written once). */
typedef struct {
    double blur, force, advect_vel, divergence, jacobi, subtract, advect_density, gather;
    double bytes[8]; /* in the order of the times above */
    long steps;
} SolverTimes;
void solver_enable_timing(Solver *s, bool on);
int solver_times(Solver *s, SolverTimes *out);
/* Seconds solver_step has spent waiting for the GPU (the bound on queued
 * steps) since creation: what is left of a step's wall time is the CPU's
 * cost of submitting it. */
double solver_wait_seconds(const Solver *s);

/* Whether a compute solver made now in this context runs the tiled passes
 * (transport_tile, jacobi_tile, mg_restrict_residual: shared memory and
 * barriers): yes on a GPU, no on a software renderer, where llvmpipe runs
 * them slower than one pass a stage (2 cores, 256²: 6.6 steps/s tiled, 12.5
 * not, the fragment backend 8.7-11; docs/PERFORMANCE.md).
 * SMOKEMORPH_COMPUTE_TILES=1 or 0 decides instead (the pass tests set 1, so
 * CI checks the tiled passes on llvmpipe). */
bool solver_tiles_wanted(void);

#endif
