/* gpu_solver: the morph step on the GPU, one GLSL fragment pass per stage of the
 * reference solver (cpu_solver.h has the discrete equations; the passes
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
/* The same with how it runs the method (method.h; NULL: the defaults). */
Solver *solver_create_opts(int w, int h, const SolverParams *p, const SolverOptions *o, SolverKind kind,
                           const char *shader_dir, char *err, size_t errlen);
SolverKind solver_kind(const Solver *s);
void solver_free(Solver *s);
int solver_width(const Solver *s);
int solver_height(const Solver *s);
const SolverParams *solver_params(const Solver *s);
/* The blur the last step ran with, or the next one after a new target
 * (its width: method_sigma, coarse to fine). */
const BlurSpec *solver_blur(const Solver *s);
/* Change parameters; a new sigma re-blurs the target. */
int solver_set_params(Solver *s, const SolverParams *p);

/* Upload W*H densities; velocity and pressure are reset. */
int solver_set_density(Solver *s, const float *rho);
/* Upload a target; with mass_match it is scaled to the density's mass (read
 * back once). Returns -1 for an all-zero target. Blurs it on the GPU. */
int solver_set_target(Solver *s, const float *tgt, bool mass_match);

/* The same with the scale given (no read-back): ρ* = tgt·scale, the
 * deficit potential's c = smoke_mass / Σρ*, ρ̃* blurred again; keep_e keeps
 * the gathering's warm start (a moving target). As ref_set_target_scaled. */
int solver_set_target_scaled(Solver *s, const float *tgt, float scale, double smoke_mass, bool keep_e);
/* c alone (ref_set_potential_scale), once sources have added smoke. */
void solver_set_potential_scale(Solver *s, float c);

/* Sources (morph.h): n weight fields (W*H floats each) uploaded once,
 * replacing any before; solver_add_source adds amount·weights[k] to ρ in a
 * pass (add_source.glsl), no upload or read-back. */
int solver_set_sources(Solver *s, const float *const *weights, int n);
int solver_add_source(Solver *s, int k, float amount);

/* One step, every pass on the GPU. Returns 0, or -1 on a GL error. */
int solver_step(Solver *s);

/* Part of a step (method.h's METHOD_PART_*) for smoke fields sharing one
 * velocity, as ref_step_parts; solver_step is all three. */
int solver_step_parts(Solver *s, unsigned parts, bool force_partial);
/* dst's velocity := src's (same size): the shared velocity between parts. */
int solver_copy_velocity(Solver *dst, const Solver *src);
/* One step a pass at a time (the pass-by-pass mode): solver_step_begin
 * plans the next step into st as solver_step does, solver_step_pass runs
 * one pass of it (a pressure Jacobi pass is always one iteration, where a
 * tiled compute step runs several a dispatch), solver_step_end closes the
 * step (the queue's bound, the timers) as solver_step does. All the passes
 * of st in method_next's order make solver_step. Each 0 or -1 (GL error). */
void solver_step_begin(Solver *s, MethodStep *st);
int solver_step_pass(Solver *s, MethodPass pass, int k, const MethodStep *st);
int solver_step_end(Solver *s);
/* What a pass wrote (method_pass_output), read back as the last pass left
 * it: W*H floats into a (b: a vector's second component), except ρ̃, which
 * is its coarse grid (method_blur_spec's cw x ch). 0 or -1. */
int solver_read_output(Solver *s, MethodOut f, float *a, float *b);

/* Stir: add a velocity (fx, fy) (domain units/time) in a Gaussian of the
 * given radius (cells) around (x, y) (cell units, row 0 at the top). */
int solver_stir(Solver *s, float x, float y, float fx, float fy, float radius);

/* Add (amount > 0) or erase (< 0) smoke: ρ += amount·exp(−d²/r²) around
 * (x, y) (cell units, row 0 at the top; d from the cell centres), ρ kept
 * >= 0; the mass changes (the window's add and erase buttons). */
int solver_splat_density(Solver *s, float x, float y, float amount, float radius);

/* Read-backs (W*H floats each). */
int solver_read_density(Solver *s, float *rho);
int solver_read_fields(Solver *s, float *rho, float *tgt, float *tgt_blur);
int solver_read_velocity(Solver *s, float *u, float *v);
/* The face speeds that moved the smoke in the last step: the flow as the
 * transport clamps it plus the drift's when the step ran it (cpu_solver.h's
 * ref_read_motion). 0 or -1. */
int solver_read_motion(Solver *s, float *u, float *v);

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
/* The same with the error's two sums: Σ|ρ−ρ*| (diff) and Σρ* (target). */
int solver_observe_sums(Solver *s, float *rho, double *mass, double *diff, double *target,
                        double *max_div);
/* solver_observe_sums in two halves, for read-backs that do not stall the
 * steps: start queues the observing pass (with max_div) and an asynchronous
 * read-back into slot (0..SOLVER_OBSERVE_SLOTS-1; a pixel buffer object
 * with a fence) and returns; finish, after any number of later steps, waits
 * for that copy and gives what solver_observe_sums would have given at the
 * start. */
#define SOLVER_OBSERVE_SLOTS 3
int solver_observe_start(Solver *s, int slot, bool max_div);
int solver_observe_finish(Solver *s, int slot, float *rho, double *mass, double *diff, double *target,
                          double *max_div);
/* finish's read-back itself: the W*H RGBA texels (ρ, ρ*, |∇·u| with
 * max_div, -) once the copy is done, valid until unmap (the caller sums
 * them, on several threads); whether the start gathered |∇·u| in *div. */
const float *solver_observe_map(Solver *s, int slot, bool *div);
void solver_observe_unmap(Solver *s, int slot);
/* All three metrics (one read-back). */
int solver_metrics(Solver *s, double *mass, double *error, double *max_div);

/* GL texture names for drawing (density RGBA: ρ, ρ*, ρ̃*; velocity RG). */
unsigned solver_density_texture(const Solver *s);
unsigned solver_velocity_texture(const Solver *s);

/* GPU time per pass group (ms, summed since enabled), with timer queries,
 * and the bytes each group moved (summed; pass_bytes() in field.h: every
 * texture a pass samples read once, its target written once). */
typedef struct {
    double blur, force, advect_vel, divergence, jacobi, subtract, advect_density;
    double drift;  /* the transport's face speeds: the clamped flow plus the drift */
    double gather; /* the implicit gathering: its start, Jacobi iterations and fluxes */
    double bytes[9]; /* in the order of the times above */
    long steps;
} SolverTimes;
void solver_enable_timing(Solver *s, bool on);
int solver_times(Solver *s, SolverTimes *out);
/* Seconds solver_step has spent waiting for the GPU (the bound on queued
 * steps) since creation: what is left of a step's wall time is the CPU's
 * cost of submitting it. */
double solver_wait_seconds(const Solver *s);

/* The substeps the last step's transport stage took (stage 0, the only one:
 * the density's, by the flow and the drift; 0 before its first step; -1 for
 * another stage): the count follows the actual speed (method.h). A
 * read-back: for reports. */
int solver_substeps(Solver *s, int stage);

/* Whether a compute solver made now in this context runs the tiled passes
 * (transport_tile, jacobi_tile, mg_restrict_residual: shared memory and
 * barriers): yes on a GPU, no on a software renderer, where llvmpipe runs
 * them slower than one pass a stage (2 cores, 256²: 6.6 steps/s tiled, 12.5
 * not, the fragment backend 8.7-11; docs/PERFORMANCE.md).
 * The options' tiles (--compute-tiles on or off) decide instead (the pass
 * tests turn them on, so CI checks the tiled passes on llvmpipe). */
bool solver_tiles_wanted(const SolverOptions *o);

#endif
