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
/* The same with how a GPU backend runs the method (method.h's SolverOptions:
 * --compute-tiles, --mg-bottom, ...; NULL: the defaults; the CPU ignores them). */
Morph *morph_create_opts(int w, int h, const SolverParams *p, const SolverOptions *o, const float *start,
                         const float *target, bool mass_match, MorphBackend backend,
                         const char *shader_dir, char *err, size_t errlen);
void morph_free(Morph *m);

MorphBackend morph_backend(const Morph *m);

int morph_step(Morph *m);

/* Several smoke fields in one simulation (issue 9), sharing one velocity:
 * one Morph a field (each its own start, keys, sources, colour, on the same
 * grid and backend), stepped together. Every field's driving force adds to
 * the shared velocity (u ← clamp((u + dt·ΣF)/(1 + dt·vd)), method.h); the
 * velocity is advected and projected once; each field's smoke is then
 * moved by it, drifted and gathered on its own, so each keeps its mass.
 * Field 0 holds the velocity between steps (stir it there). dt, vd and umax
 * must agree (morph_fields_check says what does not); the other parameters
 * are each field's. With n = 1 it is morph_step. 0 or -1. */
#define MORPH_MAX_FIELDS 4
int morph_step_fields(Morph *const *ms, int n);
const char *morph_fields_check(Morph *const *ms, int n); /* NULL when they can share */
/* morph_observe of several fields (one read-back each): each field's
 * density into rho[i] (rho or rho[i] may be NULL) and mass into
 * mass_each[i] (may be NULL); the total mass; the error of them all,
 * Σ_i Σ|ρ_i − ρ*_i| / Σ_i Σρ*_i; max|∇·u| of the shared velocity (field
 * 0's). With n = 1, morph_observe's numbers. 0 or -1. */
int morph_observe_fields(Morph *const *ms, int n, float *const *rho, double *mass_each, double *mass,
                         double *error, double *max_div);
/* morph_observe_fields in two halves, so that writing frames never stalls
 * the steps: start queues the read-backs (into slot, 0..MORPH_OBSERVE_SLOTS-1;
 * rho: the densities too; max_div: max|∇·u| too) and returns; finish, after
 * any number of later steps, gives what morph_observe_fields gave at the
 * start. On the GPU an asynchronous read-back (solver_observe_start),
 * summed and copied out in bands on pool's threads (NULL: here; the
 * numbers are the same either way); on the CPU the observation is made at
 * the start and kept. 0 or -1. */
#define MORPH_OBSERVE_SLOTS 3
int morph_observe_start(Morph *const *ms, int n, int slot, bool rho, bool max_div);
typedef struct Pool Pool;
int morph_observe_finish(Morph *const *ms, int n, int slot, float *const *rho, double *mass_each,
                         double *mass, double *error, double *max_div, Pool *pool);
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
/* What moved the smoke in the last step, at the cell centres likewise: the
 * flow as the transport clamps it (±umax) plus the gathering drift's speed
 * when the step ran the drift. The EXR's motion vectors (velocity.*), so a
 * compositor's motion blur follows the frames (issue 20). 0 or -1. */
int morph_read_motion(Morph *m, float *vx, float *vy);
/* Density (rho may be NULL), mass, error and (max_div non-NULL) max|∇·u|:
 * on the GPU from one read-back. */
int morph_observe(Morph *m, float *rho, double *mass, double *error, double *max_div);

/* ---- pass by pass (the classroom, issue 11) ----------------------------------
 * One step run a pass at a time, in the method's one list (method_plan,
 * method_next), on any backend: after each pass the caller can read back
 * the field it wrote and, within the pressure or the potential solve, the
 * residual. Running every pass of a step so gives exactly morph_step's state
 * (bit for bit on the CPU).
 *
 *   MorphPassInfo pi;
 *   morph_pass_next(m, &pi);                 // begins a step when none is begun
 *   printf("%s %d/%d\n", pi.name, pi.k + 1, pi.count);
 *   morph_pass_read(m, pi.out, a, b);        // W*H floats (b: a vector's v)
 *   double rmax;  if (morph_pass_residual(m, &rmax, NULL) == 0) ...
 *
 * A step begun so is finished (its remaining passes run) by morph_step,
 * morph_swap, morph_set_params, morph_set_target, morph_goto_key,
 * morph_stir and morph_get_state, and dropped by morph_reset and
 * morph_set_state. morph_step_count counts it once its last pass ran. */
typedef struct {
    MethodPass pass;
    const char *name;  /* method_pass_name */
    int k, count;      /* repetition k (from 0) of count: for a transport stage
                          the substeps its speed takes this step (the rest of
                          the plan's bound ran with the last, changing nothing) */
    int bound;         /* the plan's count for the stage */
    int index, total;  /* the pass's place in the step (from 0) and the step's passes */
    MethodOut out;     /* the field it wrote (method_pass_output) */
    long step;         /* the step it belongs to (morph_step_count + 1 while it runs) */
    bool last;         /* the step's last pass: the step is complete */
    /* the step's plan (issue 24, for the classroom's words): the eased vf,
     * the gathering and drift's factor (method_ease), the swirl, the
     * force's noise this step (method_noise_amp, 0 after its fade), whether
     * the arrival is timed and the force Fattal's, whether the step's plan
     * has the drift (its speeds before the transport), and the share of
     * the way at which the gathering joins (0: METHOD_ARRIVE_ON) */
    float vf, rg, swirl, noise, gather_from;
    bool arrive, fattal, drift;
} MorphPassInfo;

/* Begin the next step (its key switch and sources, then its plan); nothing
 * if one is begun. 0 or -1. */
int morph_pass_begin(Morph *m);
/* Run the next pass of the step begun (beginning one if none is); 0 or -1. */
int morph_pass_next(Morph *m, MorphPassInfo *out);
bool morph_pass_active(const Morph *m);
/* Several fields sharing one velocity (morph_step_fields), a pass at a time,
 * in morph_step_fields's order: each field's force part (the velocity
 * copied from the field before; all but the last add their force undamped),
 * the flow part on the last field, the velocity copied back to the others,
 * then each field's density part. *field is the field whose pass ran (its
 * outputs are read with morph_pass_read on ms[*field]); out->last on the
 * step's last pass. Running every pass of a step gives morph_step_fields's
 * state (bit for bit on the CPU). While such a step is begun, a field's own
 * morph_pass_next and morph_pass_begin refuse (-1); morph_step_fields,
 * and everything that finishes a step begun (above) on any of the fields,
 * finish the whole step; morph_reset and morph_set_state on one drop it.
 * n == 1 is morph_pass_next. 0 or -1. */
int morph_pass_next_fields(Morph *const *ms, int n, MorphPassInfo *out, int *field);
/* Output f as the passes have left it (method.h, MethodOut; ref_read_output
 * says when each is valid): W*H floats into a, and for a vector output the
 * second component into b. On the GPU a read-back. 0 or -1. */
int morph_pass_read(Morph *m, MethodOut f, float *a, float *b);
/* The residual of the solve the last pass belongs to (the pressure's from
 * the divergence pass through its Jacobi passes, or the deficit
 * potential's): the max and the RMS of |∇²x − b| over the cells, in b's
 * units (1/time for the pressure), computed on the CPU from read-backs.
 * -1 when the last pass is in neither solve. */
int morph_pass_residual(Morph *m, double *max, double *rms);

/* Back to the start image, zero velocity, the original target. */
int morph_reset(Morph *m);
/* Morph back: the current smoke stays, the start image becomes the target
 * (and the old target the start for the next reset). */
int morph_swap(Morph *m);

/* Keyframe sequences (issue 9). Only the target (and, where a key says so,
 * the parameters) changes at a key: the velocity, the density and the step
 * count carry over, and with mass matching the new target is scaled to the
 * smoke's mass at that moment plus what the sources will add from then up
 * to the key's step (the steps switch .. keys[k-1].step, at the key's dt),
 * so that the morph arrives at the right amount; key 1 likewise, at step 0,
 * with the sources of steps 1 .. keys[0].step. After the last key's step the
 * target's mass stays: smoke that sources add then is more than the target.
 * The switch reads the smoke's mass back once (as morph_set_target does);
 * between switches the morph follows the mass itself (the passes conserve
 * it, sources add rate·dt·Σw a step), so nothing else is read back.
 *
 * A schedule is a list of keys. Key k (from 1) is the goal for steps
 * keys[k-2].step+1 .. keys[k-1].step (key 1 from step 1), its range, and
 * the last key stays the goal after its step. morph_step switches the
 * target before the first step of each key's range, so the metrics at step
 * keys[k-1].step are still against key k.
 *
 * One step s in a schedule: (1) the key switch, if s opens a key's range;
 * (2) a moving key's target at step s's pose; (3) every source's smoke for
 * step s; (4) the step's passes (method.h). */
typedef struct {
    long step;                 /* the step by which the key is reached; > the previous key's */
    const float *target;       /* W*H, copied */
    const SolverParams *params; /* for this key's range; NULL: morph_create's (the base) */
    /* A moving target: the image translated by move_from (at the range's
     * first step) to move_to (at its last), in domain units (the shorter
     * side is 1; x to the right, y down), and scaled about the grid's
     * centre from scale_from to scale_to (0 means 1), both linear in the
     * step; after the range it stays at its end pose (a range of one step
     * takes the end pose). Cell p's target is the image at
     * c + (p − c − move)/scale (c the grid's centre), sampled bilinearly
     * with 0 outside the image, scaled to the key's matched mass (with
     * mass matching; else the image's own mass), and blurred again (ρ̃*).
     * The gathering keeps its warm start from one pose to the next. A pose
     * that has left the grid entirely keeps the last one; one that leaves
     * it at the range's first or last step is refused. All 0: still.
     * Cost: each step of the range resamples the image on the CPU and sets
     * it as the target (the backend's sums on the CPU, on the GPU an upload,
     * the set_target pass and the target's blur, 4 passes): no read-back.
     * tools/bench_schedule --parts, the best of 5x10 calls, ms a step, on
     * a shared 2-core machine (llvmpipe for the GPU passes):
     *            resample (CPU)   set the target: cpu  compute  fragment
     *   256²     0.47             2.4                  6.9      6.3
     *   1024²    8-11             22.5                 66       44
     * (on llvmpipe "set the target" is CPU work too; on a GPU the upload
     * of 4 MiB and 5 small passes remain at 1024²; not measured there: the
     * device runs only the main checkout). A source's pass: 0.03 / 1.5 ms
     * (cpu / llvmpipe) at 256², 0.5 / 16-24 ms at 1024². */
    float move_from[2], move_to[2];
    float scale_from, scale_to;
} MorphKey;

/* A source adds density: rate (density per unit time) times the image's
 * value (W*H, copied), or times the disc's coverage (image NULL: centre
 * cx, cy and radius in domain units; a cell's weight is
 * clamp(1/2 − (r − radius)/h, 0, 1), r the distance of its centre from cx,
 * cy and h the cell: 1 inside, 0 outside, a linear edge one cell wide),
 * during steps from+1 .. to: each such step adds rate·dt·weight to every
 * cell before the step's passes (dt of the step's key). On the GPU the
 * weights are uploaded once, by morph_set_schedule, and added in a pass
 * (add_source.glsl). rate ≥ 0 and finite, from < to, radius > 0, an image
 * not all zero. */
typedef struct {
    const float *image;
    float cx, cy, radius;
    float rate;
    long from, to;
} MorphSource;

/* Each 0, or -1 (with err filled, one line: an empty target, steps not
 * increasing, parameters refused, a source refused, a moving target off
 * the grid, memory). Call it at step 0 (after create or reset).
 * morph_reset goes back to key 1 (its parameters, its pose at step 1, and
 * the base's where it has none); morph_swap swaps the start and key 1,
 * and in a sequence the schedule takes over again at the next key. */
int morph_set_schedule(Morph *m, const MorphKey *keys, int nkeys, const MorphSource *sources,
                       int nsources, char *err, size_t errlen);
/* morph_set_keys: keys[0..n-1] (copied) every `every` steps: key k's step
 * is k*every. morph_set_target: drive the smoke to target (W*H) from now
 * on (outside a schedule). */
int morph_set_target(Morph *m, const float *target);
int morph_set_keys(Morph *m, const float *const *keys, int n, long every);
int morph_key(const Morph *m);          /* the active key, 1..morph_key_count */
int morph_key_count(const Morph *m);    /* 1 without a schedule */
long morph_key_every(const Morph *m);   /* morph_set_keys's every; 0 otherwise */
long morph_key_step(const Morph *m, int k); /* key k's step; 0 without a schedule */
bool morph_has_schedule(const Morph *m);
/* Key k's image at its pose of step `step` (a moving key's, resampled as
 * its target is; else the image as given), before the mass match, into
 * out (W*H). Returns its sum, or -1 for no such key. For drawing the
 * schedule and for tools/bench_schedule. */
double morph_key_pose_image(const Morph *m, int k, long step, float *out);
int morph_key_at(const Morph *m, long step); /* the goal of step `step` (1 for step 0) */
/* Jump to key k (1..morph_key_count): key k is the goal from now on (its
 * target, scaled to the smoke's mass now, and its parameters), and the step
 * count becomes the step before key k's range: morph_key_step(m, k - 1), 0
 * for key 1, so the next step is the first of key k's range. The density
 * and the velocity carry over. -1 for k out of range or a GL error. */
int morph_goto_key(Morph *m, int k);
/* Key k's target image as given (W*H, before mass matching); NULL for k
 * out of range. Key 1 is the target (after morph_swap, the old start). */
const float *morph_key_target(const Morph *m, int k);

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
    /* A schedule (morph_set_schedule, morph_set_keys); all 0 without one.
     * The morph given this state must have the same schedule (set before
     * morph_set_state): the same key count, last key's step and sum. */
    int nkeys;                /* morph_key_count; 0: no schedule */
    int key;                  /* morph_key: the active key, 1..nkeys */
    long key_every;           /* morph_key_every (0: keys set one by one) */
    long last_key_step;       /* morph_key_step(m, nkeys) */
    unsigned long long schedule_sum; /* morph_schedule_sum */
    double mass_now, key_mass, tmass; /* the masses the schedule follows */
} MorphState;
int morph_get_state(Morph *m, MorphState *st);
/* Sets the parameters first, then the fields; in a schedule, the active
 * key and its masses as they were (no switch, no new mass match), so the
 * morph steps on exactly as the one the state was taken from. -1 on a GL
 * error, when the parameters are refused, or when the state's schedule is
 * not the morph's (see morph_state_schedule_check). */
int morph_set_state(Morph *m, const MorphState *st);
/* Whether st's schedule is m's: NULL, or one line saying what differs
 * ("3 keys, the morph has 2", "the last key's step is 60, the morph's 90",
 * "the keys' images, moves or sources differ", "no schedule, the morph has
 * one" and the reverse) into why. */
const char *morph_state_schedule_check(const Morph *m, const MorphState *st, char *why, size_t n);
/* A 64-bit hash (FNV-1a) of the schedule: each key's step, image as given,
 * move and scales, and each source's weights, rate and steps; not the
 * parameters (a resumed run may override them). 0 without a schedule. */
unsigned long long morph_schedule_sum(const Morph *m);

/* Stir: add a velocity (fx, fy) (domain units/time) in a Gaussian of the
 * given radius (cells) around (x, y) (cell units, row 0 at the top).
 * -1 where the backend cannot (the CPU reference). */
int morph_stir(Morph *m, float x, float y, float fx, float fy, float radius);

/* Add (amount > 0) or erase (amount < 0) smoke in a Gaussian: ρ +=
 * amount·exp(−d²/r²) around (x, y) (cell units, row 0 at the top, d from
 * the cell centres, r = radius cells), ρ kept >= 0, on any backend. The
 * mass changes on purpose; a schedule reads the new mass back (one
 * read-back) so that the next key is matched to it. 0 or -1. */
int morph_splat_density(Morph *m, float x, float y, float amount, float radius);

/* GL texture names of the state, for drawing: density (RGBA: ρ, ρ*, ρ̃*) and
 * velocity (RG). 0 on a backend whose state is not on the GPU. */
unsigned morph_density_texture(const Morph *m);
unsigned morph_velocity_texture(const Morph *m);

#endif
