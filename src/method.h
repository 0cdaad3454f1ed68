/* method: what the target-driven smoke method defines, GL-free and shared by
 * every backend (the CPU reference in cpu_solver, the GPU passes in gpu_solver):
 * the parameters with their defaults and checks, the grid, the schedules
 * (blur, multigrid levels, transport substeps, gathering iterations, easing),
 * the constants, and the step as one list of passes.
 *
 *   SolverParams p;  method_params_default(&p);
 *   const char *bad = method_params_check(&p);         // NULL: all in range
 *   MethodStep st;   method_plan(&p, method_grid(w, h), nstep, dscale, &st);
 *   method_run(&st, my_pass, backend);                  // the passes, in order
 *
 * The constants reach GLSL from here: method_glsl_defines() writes them as
 * #define lines that the shader loader puts before every pass's source, so a
 * constant is never typed twice.
 */
#ifndef SMOKEMORPH_METHOD_H
#define SMOKEMORPH_METHOD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "settings.h"

/* ---- constants ------------------------------------------------------------ */

/* Damped Jacobi weight of the pressure and potential solves: p += ω·(p_J − p).
 * Plain Jacobi (ω = 1) never damps the checkerboard mode in a closed box. */
#define METHOD_JACOBI_OMEGA 0.8f
/* The blur kernel's taps: weights[0..radius], radius ≤ METHOD_BLUR_TAPS − 1. */
#define METHOD_BLUR_TAPS 64
/* The unsplit transport's stability bound on |c_x| + |c_y| per substep
 * (cpu_solver.h, ref_pass_advect_density, says why 1/4). */
#define METHOD_ADVECT_CFL 0.25f
/* The transport carries the smoke by the projected, divergence-free flow as
 * it is: the speed limit umax bounds the force's velocity before the
 * projection and the drift, not each face of the projected flow, which runs
 * up to about 1.25·umax where the projection turns the flow around a
 * travelling shape. (Clamping each face at umax made the transported flow
 * compressible wherever it ran faster: a disc travelling at the limit thinned
 * its rear half to about 0.7 of its density behind a sharp front across its
 * middle and piled the rest on its rim; docs/FIDELITY.md.) Its faces are
 * bounded only by METHOD_FLOW_GUARD·umax, a guard against a runaway flow,
 * and the substeps are planned for that bound (method_transport_cap). */
#define METHOD_FLOW_GUARD 1.5f
/* The gathering drift's mobility and guards (cpu_solver.h, ref_pass_drift_vel). */
#define METHOD_DRIFT_HAZE 0.2f
#define METHOD_DRIFT_MOB 0.05f
#define METHOD_DRIFT_LOG_EPS 1e-12f
/* The balance drift waits for the smoke (issue 20): its strength is scaled by
 * c², c the target's coverage, Σ ρ̃*·min(1, ρ̃/(METHOD_DRIFT_COVER·ρ̃*)) ÷ Σ ρ̃*
 * over the blur's coarse cells (ref_drift_cover): 0 while no blurred smoke
 * has reached the blurred target, 1 once a quarter of the target's blurred
 * density has reached all of it. A far trip is then carried by the flow and
 * the drift gathers what the flow brought; a compression, whose faint smoke
 * already lies over the target, keeps the whole drift (docs/FIDELITY.md,
 * fifteenth round). */
#define METHOD_DRIFT_COVER 0.25f
/* The coarsest multigrid level is solved in one GPU pass, in registers, when
 * it has at most this many cells a side. */
#define METHOD_MG_COARSE_MAX 8

/* Multigrid for the pressure: levels halve (rounding up) down to a side ≤ 4.
 * A V-cycle: METHOD_MG_SMOOTH damped Jacobi iterations, residual, restriction
 * to the next level (the sum of the four children's residuals: the coarse
 * level's 5-point operator at twice the spacing, rediscretised), recursion,
 * bilinear prolongation added, METHOD_MG_SMOOTH more; METHOD_MG_COARSE_ITERS on the
 * coarsest level. Piecewise-constant prolongation (with the halved sum, its
 * Galerkin scaling), used before, converged more slowly the more levels a
 * grid has: the deficit potential φ, warm-started with 4 V-cycles a step, lagged
 * so far at 512² that blob -> star's error at step 100 was 0.34 against 0.10
 * at 128²; bilinear gives 0.081 and 0.075 (tools/fidelity --cpu --steps 100
 * --pairs blob-star --grid N). */
#define METHOD_MG_MAX_LEVELS 16
#define METHOD_MG_SMOOTH 2
#define METHOD_MG_COARSE_ITERS 20

int method_mg_levels(int w, int h, int *lw, int *lh);

/* ---- the grid ------------------------------------------------------------- */

/* W x H cells, cell size h = 1 / (shorter side): the shorter side of the
 * domain is 1. (A third dimension adds its depth here when it comes.) */
typedef struct {
    int w, h;
    float cell;
} MethodGrid;

MethodGrid method_grid(int w, int h);

/* ---- parameters and schedules ---------------------------------------------- */

/* The method's parameters: the rows of settings.def that live in
 * SolverParams (WHERE P), each a member, with its default, range, option and
 * name there. */
#define SETTING_GROUP(ID, TITLE)
#define METHOD_MEMBER_P(KIND, MEMBER) SETTING_TYPE_##KIND MEMBER;
#define METHOD_MEMBER_C(KIND, MEMBER)
#define METHOD_MEMBER_S(KIND, MEMBER)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, ...) METHOD_MEMBER_##WHERE(KIND, MEMBER)
typedef struct {
#include "settings.def"
    /* Members whose 0 is meant (bit k: method_param_info[k], METHOD_SET()).
     * A zeroed SolverParams means the defaults, as in sokol: every member
     * left 0 without its bit takes its default (method_params_resolve), so
     *   SolverParams p = {.dt = 0.02f};                         dt 0.02, the rest default
     *   SolverParams q = {.vd = 0, .set = METHOD_SET(METHOD_P_VD)};   no damping
     * method_params_default sets every bit; every backend resolves what it
     * is given. */
    unsigned long long set;
} SolverParams;
#undef SETTING

/* The members by index (method_param_info's, the checkpoint's order):
 * METHOD_P_DT, METHOD_P_VF, ... from settings.def's SLOT column. */
#define METHOD_SLOT_P(ID, SLOT) METHOD_P_##ID = SLOT,
#define METHOD_SLOT_C(ID, SLOT)
#define METHOD_SLOT_S(ID, SLOT)
#define SETTING(ID, WHERE, SLOT, ...) METHOD_SLOT_##WHERE(ID, SLOT)
enum {
#include "settings.def"
};
#undef SETTING
/* How a GPU backend runs the method, never what it computes (the results
 * agree within float rounding whatever these are): the rows of settings.def
 * that live in SolverOptions (WHERE S), given to morph_create_opts and
 * solver_create_opts; zeroed, the defaults. For benchmarks and tests. */
#define METHOD_GPU_MG_BOTTOM 32       /* mg_bottom's bound, packed texels a side */
#define METHOD_GPU_TRANSPORT_GROUP 16 /* transport_tile's work group, a side */
#define METHOD_OPTION_P(KIND, MEMBER)
#define METHOD_OPTION_C(KIND, MEMBER)
#define METHOD_OPTION_S(KIND, MEMBER) SETTING_TYPE_##KIND MEMBER;
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, ...) METHOD_OPTION_##WHERE(KIND, MEMBER)
typedef struct {
#include "settings.def"
    int transport_gy; /* with transport_gx (--transport-group WxH) */
} SolverOptions;
#undef SETTING

#define METHOD_ONE_P 1
#define METHOD_ONE_C 0
#define METHOD_ONE_S 0
#define SETTING(ID, WHERE, ...) +METHOD_ONE_##WHERE
enum { METHOD_PARAM_COUNT = 0
#include "settings.def"
};
#undef SETTING
#undef SETTING_GROUP
#define METHOD_SET(k) (1ull << (k))

enum { SOLVER_FORCE_BALANCE = 0, SOLVER_FORCE_FATTAL = 1 };

void method_params_default(SolverParams *p);
/* Every member left 0 without its METHOD_SET bit to its default; then every
 * bit set (so resolving again changes nothing). */
void method_params_resolve(SolverParams *p);
/* method_params_resolve, and an automatic arrival (SETTING_AUTO: only a
 * morph times a trip, method_time_trip) as METHOD_PACE_TIME: what a solver
 * runs. */
void method_params_settle(SolverParams *p);
/* Whether a and b have the same value in every member (not memcmp: padding). */
bool method_params_equal(const SolverParams *a, const SolverParams *b);
/* NULL if every parameter (after method_params_resolve, on a copy) is in
 * range, else a message naming the parameter. */
const char *method_params_check(const SolverParams *p);

/* The blur pyramid level: blur runs on a grid coarsened by this factor
 * (a power of two) so the Gaussian is at most ~4 cells wide there. */
typedef struct {
    int factor;      /* coarsening factor f */
    int cw, ch;      /* coarse grid size: ceil(W/f), ceil(H/f) */
    int radius;      /* kernel radius in coarse cells */
    float weights[METHOD_BLUR_TAPS]; /* normalized weights[0..radius] */
} BlurSpec;

/* The coarse blurred fields (ρ̃ and ρ̃*) are read at fine positions through
 * a uniform cubic B-spline of their samples where the factor is above 1
 * (ref_sample_coarse, sim.glsl's sample_coarse): its gradient is
 * continuous. Read bilinearly, the gradient of log ρ̃ and of ρ̃* jumped at
 * every coarse sample, so the force and the drift stepped every `factor`
 * cells (8 at 512², 64 at 4096²) and faint smoke took a plaid of that
 * period, sheared into ladders of parallel stripes (wide at 512², steps
 * 560-600: fourteenth round, docs/FIDELITY.md). The B-spline smooths by a
 * variance of METHOD_BLUR_BSPLINE_VAR coarse cell², which the Gaussian's σ
 * gives back, so --sigma keeps its width. */
#define METHOD_BLUR_BSPLINE_VAR (1.0f / 3.0f)
void method_blur_spec(int w, int h, float sigma, BlurSpec *out);
/* Gathering iterations: gather_iters, or with 0 (auto) min(W,H)/64 within
 * [4, METHOD_GATHER_ITERS_MAX], since the implicit diffusion's reach in cells
 * grows with the grid; an odd count is rounded up to even (the solve starts
 * from the last step's e, which is stable only with an even count: see
 * ref_step). The cap (issue 20, point 7): the flow and the drift carry the
 * smoke the long way, the gathering only sharpens where it has arrived, and
 * the solve is warm-started from the last step's e, so 16 iterations a step
 * suffice at 2048² and 4096² too (docs/PERFORMANCE.md), where 32 and 64
 * took most of a step. */
#define METHOD_GATHER_ITERS_MAX 16
int method_gather_iters(int w, int h, const SolverParams *p);
/* The gathering's fluxes, in substeps (twentieth round). Each flux a cell
 * gives is limited to what the cell holds (positivity), so one application
 * moves smoke at most one cell a step: h/dt, 0.78 domain units a time unit
 * at 128² and 0.20 at 512². Where the gathering draws smoke in faster (at a
 * dense target's edge it asks for several units a time unit), that limit
 * set its pace, and the pace was the grid's: a large faint square drawn
 * into a small dense disc was half way at step 694 at 128² and 859 at 512²,
 * so the two sizes' frames at step 1000 differed by 0.18 of the mass, with
 * Fattal's method at 0.09 (docs/FIDELITY.md, twentieth round). So the
 * fluxes from the solved e are applied in n substeps of a/n, each limited
 * by what the cell holds then (D from the density then): smoke crosses n
 * cells a step, n = ceil(METHOD_GATHER_SPEED·dt/h), the limit one speed in
 * domain units at every grid from 128² (below, one substep: a cell a
 * step is faster still). The substeps' work is bounded as the mixing's
 * (METHOD_GATHER_WORK cell-substeps a step, at most METHOD_GATHER_SUB_MAX):
 * 4 at 512², 8 at 1024², 2 at 2048², 1 from 4096², where the limit is the
 * cell's again (docs/PERFORMANCE.md). */
#define METHOD_GATHER_SPEED 0.78125f /* 1/128 of the box per 0.01 time units */
#define METHOD_GATHER_SUB_MAX 16
#define METHOD_GATHER_WORK (8.0 * 1024.0 * 1024.0) /* cells x substeps a step, at most */
int method_gather_substeps(int w, int h, const SolverParams *p);
/* Number of density-advection substeps n so that 2·cap·(dt/n)/h ≤ METHOD_ADVECT_CFL,
 * cap = method_transport_cap (the unsplit update's |c_x| + |c_y| bound; see
 * ref_pass_advect_density). The drift moves the smoke in the same stage: its
 * face speeds keep |u + w| ≤ max(|u|, umax) (METHOD_PASS_DRIFT_VEL), so the
 * flow's bound holds. */
int method_advect_substeps(int w, int h, const SolverParams *p);
/* The transport's bound on the flow's face speeds, METHOD_FLOW_GUARD·umax:
 * the projected flow as it is (a guard, not a limit). */
float method_transport_cap(const SolverParams *p);
/* The drift's flow limit reads the flow's local statistics (issue 20,
 * twenty-fifth round): the mean m and the spread s = √(B(f²) − m²) of the
 * flow's faces, B the blur of the step (BlurSpec, σ as it is this step: the
 * coarse means of u, v, u² and v², blurred, read at the cell centre like ρ̃).
 * The drift keeps m + K·s + w ≤ umax and m − K·s + w ≥ −umax, K =
 * METHOD_FLOW_ENV_K: held below umax by the swirls' typical speed, evenly
 * over them. Read from each face's own flow, the limit cut the drift
 * wherever a small swirl ran along it and not where it ran against it, so
 * the drift took on the swirls' pattern, which is not divergence-free: it
 * drew faint fog into chevron ridges (wide-fog's stripes at 512² 2.61 →
 * 1.71, docs/FIDELITY.md). Read from a 5x5 mean alone (K = 0) smoke outran
 * the flow where a narrow jet ran along the drift (base-ring at 64², 0.009);
 * a 5x5 mean ± 0.5 or 1 mean deviation kept it at 0, and so does this
 * blurred mean ± 1 spread. A face faster than its envelope stays within
 * the transport's cap (drift_flow_limit). */
#define METHOD_FLOW_ENV_K 1.0f
/* The spread's variance less this share of the mean square: the blur's
 * rounding (about 1e-7 of it) reads 0 on an even flow, on both backends,
 * where its square root would have made it about 3e-4 of the flow. */
#define METHOD_FLOW_ENV_FLOOR 1e-5f

/* That is a bound, for the speed limit on both axes of some cell. A
 * transport stage takes only the substeps its actual speed needs (issue
 * 10: no setting can stall a step for speeds the flow does not have):
 *   S = max over the cells of min(max|u| of its two x faces, cap)
 *                            + min(max|v| of its two y faces, cap),
 * walls 0, cap the stage's clamp (umax), and
 *   n = ceil(S · method_speed_scale(...) − 1e-4), 1 ≤ n ≤ bound,
 * so each substep keeps |c_x| + |c_y| ≤ METHOD_ADVECT_CFL, the bound's
 * condition, wherever the flow actually is. Every backend measures S on the
 * velocity the stage moves by, in the same step (the GPU backends by a
 * reduction on the GPU, the compute backend without a read-back), so they
 * agree: only an S within float rounding of a substep boundary could give
 * two backends different counts. Late in a morph the flow is slow and a
 * stage takes 1 substep where the bound asks 30 (2048²). */
float method_speed_scale(float dt, float cell);        /* dt / (h · METHOD_ADVECT_CFL) */
int method_substeps_for(float speed, float scale, int bound);
/* S of one cell from its four face speeds (left, right, bottom, top). */
static inline float method_cell_speed(float ul, float ur, float vb, float vt, float cap)
{
    float a = ul < 0.0f ? -ul : ul, b = ur < 0.0f ? -ur : ur;
    float c = vb < 0.0f ? -vb : vb, d = vt < 0.0f ? -vt : vt;
    float x = a > b ? a : b, y = c > d ? c : d;
    return (x < cap ? x : cap) + (y < cap ? y : cap);
}

/* The easing of step nstep (0 after a new start density), at t = nstep·dt,
 * and kstep steps after the target was set (a key's switch; 0 with nstep
 * for a single pair): vf = vf·min(1, t/framp) (framp 0: no easing) and rg,
 * the factor of the gathering and the drift, the terms that move smoke by
 * anything but the flow (issue 20):
 *   timed (arrive > 0, the balance force): the driving force alone carries
 *     the smoke for the first METHOD_ARRIVE_ON of the way to the arrival,
 *     rg = 0; then rg rises smoothly (smoothstep) to 1 at METHOD_ARRIVE_FULL
 *     of it, so the gathering and the drift sharpen and compress smoke that
 *     has come, and the key is reached at its time, not long before;
 *   untimed (arrive 0, or Fattal's force, the paper's method): rg =
 *     min(1, t/tramp)² from the start density (tramp 0: no easing).
 * Every backend takes it from here. */
/* Vorticity confinement's length: its force is swirl·L·(N × ω) with L this
 * many domain units (Fedkiw et al. use the cell, which makes the swirl a
 * grid's own: 16 times stronger at 32² than at 512²; a fixed length keeps
 * a morph's look the same at every grid, as every other parameter does).
 * 1/256: at 256² it is the cell. */
#define METHOD_SWIRL_LENGTH (1.0f / 256.0f)
/* The vorticity the confinement reads is smoothed first, by a binomial
 * kernel of this radius in cells (2·radius + 1 taps, σ = √(radius/2) = 2
 * cells), separably over the (W+1) x (H+1) corners, clamped at the edges.
 * Unsmoothed, the confinement fed on the vortex sheet at the rim of smoke
 * that starts to travel and grew it into a ring of teeth 2–3 cells apart
 * (diagonal at 256², steps 20–60: the stripe measure over the first 100
 * steps 1.42, 1.21 without confinement, 1.22 smoothed so; radius 2: 1.45,
 * 4: 1.32, 16: 1.21). */
#define METHOD_SWIRL_SMOOTH 8
/* The smoothing's kernel as a BlurSpec over the corners: cw = W+1, ch = H+1,
 * factor 1, radius METHOD_SWIRL_SMOOTH, binomial weights (normalized). */
void method_swirl_spec(int w, int h, BlurSpec *out);
/* The driving force's noise (--force-noise A, issue 20 points 1 and 4): the
 * force on each face is scaled by 1 + a·n(x), n a smooth value noise in
 * [−1, 1] (method_noise) on a lattice of --noise-scale domain units drawn
 * from --noise-seed, a = A·s·(1 − smoothstep(0, METHOD_NOISE_FADE·
 * METHOD_PACE_TIME, t)) at time t after the target was set, s the trip's
 * share (method_noise_trip, below) (0.6 s: a seed,
 * the same on a long key; over a fifth of a 10-s key it made a far key
 * later). A force that pushes a shape evenly outward or inward
 * (a disc into a ring around it) is the gradient of a potential, which the
 * projection removes whole: the flow never starts, and the drift and the
 * gathering made the ring where it stood (Uc 0.82 at 128²). Varied, it has a
 * curl; like a heavy fluid over a light one the push then grows fingers,
 * which go on growing by themselves once the noise has faded, and carry the
 * smoke out (docs/FIDELITY.md). It only seeds: left on, it stirred what the
 * flow was already carrying (a heart into a cross: Uc 0.20 -> 0.24), and on
 * arrived smoke it stirred forever what the gathering holds still. */
#define METHOD_NOISE_FADE 0.2f
/* The noise is for a reshape in place, not for a trip: the force of a trip
 * has a curl of its own and its flow starts without a seed, and there the
 * noise only wrinkled the travelling edges (a disc across the diagonal at
 * 512²: stripes 1.94 -> 2.06 of max(start, target)) and made a far key
 * later (0.048 -> 0.051 at its step, 128²). --force-noise applies whole to a
 * trip of method_travel_distance up to METHOD_NOISE_NEAR, not at all from
 * METHOD_NOISE_FAR, smoothly between (the suite's reshapes: 0.05-0.16; its
 * trips 0.5-1.15). */
#define METHOD_NOISE_NEAR 0.2f
#define METHOD_NOISE_FAR 0.4f
/* The share of --force-noise a trip from `from` to `to` takes (the hidden
 * parameter noise_trip, set for each trip: morph.c). */
float method_noise_trip(int w, int h, const float *from, const float *to);
/* The noise at (x, y) in lattice units: the hashed values of the four
 * lattice points around it, in [−1, 1], blended by smoothstep weights. */
float method_noise(float x, float y, unsigned seed);
/* The noise's amplitude a at step kstep after the target was set, of
 * force_noise·noise_trip (0 with Fattal's force and after its fade). */
float method_noise_amp(const SolverParams *p, long kstep);
/* Coarse to fine (--coarse M, issue 20 point 1: no printing): when a target
 * is set, the blur width σ is M times --sigma and falls to it over the
 * first METHOD_COARSE_TIME seconds of the trip (the balance force; not
 * Fattal's, the paper's method). The first flow of a reshape in place
 * shears the start's edges along the blurred target's; with the target's
 * fine σ it drew the target's own edges into the smoke within 5-20 steps
 * (a bar into three dots on it: P(20) 0.27 at 128², and still 0.18 with a
 * force 500 times weaker: a correlation does not see how little moved).
 * With a coarse σ the first flow follows the target's coarse shape and the
 * detail comes with the smoke: at M = 4, P at 128² 0.27 -> 0.091 (bar into
 * dots), 0.105 -> 0.077 (AB into CD), 0.100 -> 0.036 (a heart into a
 * cross), Uc within 0.03 (docs/FIDELITY.md). Kept short: a coarse start of
 * 0.9 s (M = 2) made a reshape's flow weaker, so the gathering did more (an
 * outline into a disc: Uc 0.14 -> 0.22) and the swirl fell by up to a
 * third. The factor falls as M^(1 − smoothstep(0, T, t)) in quarter
 * octaves (method_sigma), so a trip blurs its target again a few times
 * (8 at M = 4), not every step. */
#define METHOD_COARSE_TIME 0.3f
/* The blur width of step kstep after the target was set: p->sigma times
 * 2^(k/4), k whole, from log2(p->coarse) octaves down to 0 (at most 1). */
float method_sigma(const SolverParams *p, long kstep);
#define METHOD_ARRIVE_ON 0.3f
#define METHOD_ARRIVE_FULL 0.7f
void method_ease(const SolverParams *p, long nstep, long kstep, float *vf, float *rg);
/* Where the gathering and the drift join a timed morph (issue 20, point 3):
 * rg rises from on = --gather-from (0: METHOD_ARRIVE_ON) to 1 at
 * METHOD_GATHER_FULL_AT + METHOD_GATHER_FULL_SLOPE·on of the way
 * (METHOD_ARRIVE_FULL at the default on; 0.8 at METHOD_GATHER_LATE; 1 at
 * METHOD_GATHER_FROM_MAX, the most --gather-from takes). A paced key whose
 * change the flow can carry (the short reshapes: one disc into one disc,
 * a heart into a cross) otherwise ends long before its step, the
 * gathering's compression doing most of it from 30% of the key; a key
 * that must compress (a large faint start into a small dense target)
 * needs the gathering's time and keeps the early start. */
#define METHOD_GATHER_FULL_AT 0.5f
#define METHOD_GATHER_FULL_SLOPE (2.0f / 3.0f)
#define METHOD_GATHER_FROM_MAX 0.75f
#define METHOD_GATHER_LATE 0.45f
/* A lone pair (no key step to meet; of at most METHOD_PACE_TIME until the
 * twenty-sixth round, any arrival since --arrive auto times far trips
 * longer: at 45% of the way, as a paced key's, a star carried 0.35 into a
 * ring had Uc 0.08 against 0.02, docs/FIDELITY.md): the gathering and the
 * drift join late, at
 * METHOD_GATHER_LATE_PAIR of the way where the pair needs little compression
 * (fully on at 0.97), so that the flow has carried what it can before
 * anything else moves smoke (issue 20, sixteenth round: with 0.3, a star
 * travelling to a ring formed the ring where the smoke stood, and 15% of
 * the coarse change until the error had halved was moved by something
 * other than the flow (Uc 0.15; Fattal's 0.02); with 0.7, 10%). A key keeps METHOD_ARRIVE_ON: its step is a promise, and a
 * 3-s key joined at 0.7 missed it by up to 35%. */
#define METHOD_GATHER_LATE_PAIR 0.7f
/* The compression a key needs: its start's effective area (Σρ)²/Σρ² over
 * its target's. At most METHOD_SQUEEZE_LOW the gathering joins at
 * METHOD_GATHER_LATE, at least METHOD_SQUEEZE_HIGH at METHOD_ARRIVE_ON,
 * between them on a line in the ratio's logarithm. (The suite's keys:
 * 0.5-2.0, and 14.5 for a large square into a small disc.) */
#define METHOD_SQUEEZE_LOW 2.0f
#define METHOD_SQUEEZE_HIGH 4.0f
float method_squeeze(int w, int h, const float *from, const float *to);
/* --gather-from 0 (automatic) for a trip of arrival T from `from` to `to`,
 * with the balance force: for a lone pair (`lone`: a single pair, not a
 * key) METHOD_GATHER_LATE_PAIR to METHOD_ARRIVE_ON by the squeeze; for a
 * key, METHOD_GATHER_LATE to METHOD_ARRIVE_ON by the trip's squeeze where
 * it is paced (T > METHOD_PACE_TIME), else 0 (the default
 * METHOD_ARRIVE_ON). */
float method_gather_from_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to, bool lone);
/* The balance force keeps min(ρ̃, ρ̃*) ∇log ρ̃* of Fattal's term, so that
 * smoke in surplus over one part of a target is not held there (a split);
 * a compression keeps more of it: attract = the trip's squeeze share (0 at
 * most METHOD_SQUEEZE_LOW, 1 from METHOD_SQUEEZE_HIGH), and the term is
 * (min(ρ̃, ρ̃*) + attract·(ρ̃ − min(ρ̃, ρ̃*))) ∇log ρ̃*: Fattal's whole pull
 * on a large faint start over a small dense target, which draws its smoke
 * in from everywhere, so the flow swirls while the gathering compresses
 * (issue 20, sixteenth round: a ring and bar into a thin word, Uc 0.55 ->
 * 0.24 at 128², Fattal's 0.40; P 0.115 -> 0.033). 0 with Fattal's force
 * (its term is whole anyway) and without `from` or `to`. */
float method_attract_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to);
/* Smoke off a one-part target is pulled to it (issue 20 point 1,
 * twenty-second round). Where the balance force keeps min(ρ̃, ρ̃*) of
 * Fattal's pull, smoke lying far off the target (eight faint dots around
 * the box merging into a heart) was moved by the balance potential alone:
 * the dots in the corners stood, then faded where they stood, drawn by the
 * drift and the gathering. Fattal's whole pull on every trip holds arrived
 * smoke in the blurred target's round level sets (stars stuck at 512²) and
 * holds a split's smoke at its nearest part. So the weight gains
 * (1 − attract)·off_pull·method_off_weight(ρ̃, ρ̃*): the surplus
 * ρ̃ − ρ̃*, whole where ρ̃* is under METHOD_OFF_LO of ρ̃ (smoke off the
 * target), none from METHOD_OFF_HI (smoke that has arrived), a smoothstep
 * between; off_pull (SolverParams, set per trip) is 1 where the target is
 * one connected part (method_parts), else 0: with one part no part can hold
 * smoke another part needs. A paced key (arrive > METHOD_PACE_TIME; off_ramp
 * 1, set for each trip: a single pair's is 0 and gets the whole pull from
 * the start, twenty-sixth round) gets it only as its pace rises
 * (method_off_ramp: none to METHOD_PACE_UP of the
 * way): the pace plans the travel at METHOD_PACE_SPEED of the limit, and
 * with the whole pull from step 0 the tour's 10-s keys were within 9-23% of
 * their start's error half way through (a key is to stay above 25%), while a
 * faster planned speed left the smoke short of the key (0.7: 7.4% at the
 * first key's step); joining from METHOD_PACE_UP, the first half is as
 * without it. 0 with Fattal's force and without `from` or `to`. The parts
 * are those of the smoke over METHOD_PART_LEVEL of the peak, 8 neighbours,
 * each of at least METHOD_PART_MIN of those cells. */
#define METHOD_OFF_FAR_FROM 0.5f
#define METHOD_OFF_FAR_TO 1.5f
#define METHOD_OFF_LO 0.2f
#define METHOD_OFF_HI 0.8f
#define METHOD_PART_LEVEL 0.1f
#define METHOD_PART_MIN 0.005
/* (A single pair reads its trip against the way in at most METHOD_PACE_TIME;
 * method_off_pull_for_trip is a single pair's, method_time_trip a key's too.) */
float method_off_pull_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to);
/* The share of off_pull a step gets: 1, but on a paced trip (arrive >
 * METHOD_PACE_TIME) with off_ramp (a key's) it joins as the pace rises, by the same smoothstep from
 * METHOD_PACE_UP to METHOD_PACE_FULL of the way (method_plan multiplies
 * MethodStep p.off_pull by it). */
float method_off_ramp(const SolverParams *p, long kstep);
/* The surplus weight above for a face's ρ̃ (rb) and ρ̃* (tf); 0 where
 * ρ̃ <= ρ̃*. */
float method_off_weight(float rb, float tf);
/* The connected parts of an image's smoke (above); 0 without smoke, -1 out
 * of memory. */
int method_parts(int w, int h, const float *rho);
/* A compression is drawn in by the flow, not moved by the drift (issue 20
 * point 1, eighteenth round). A divergence-free flow keeps every density
 * value, so it cannot draw a large faint start into a small dense target
 * alone; but once the gathering has condensed smoke where the target is,
 * the faint smoke around it lies over a thinned moat, heavy over light in
 * the pull towards the target, and falls in as fingers
 * (Rayleigh-Taylor) if the force sees the density's detail. So, where
 * attract > 0 and the gathering has joined (rg), the surplus part of the
 * balance force's weight is the cell's own density above the target,
 * max(0, ρ − rd·c·ρ*) at the face (c the target's scale to the smoke's
 * mass), not ρ̃ − min(ρ̃, ρ̃*), and φ's term is weighted by it too:
 *
 *   w = min(ρ̃, ρ̃*) + a·((1 − rg)·(ρ̃ − min(ρ̃, ρ̃*)) + k·rg·max(0, ρ − rd·c·ρ*))
 *   F = w ∇log ρ̃* + (ρ̃ + a·rg·(ρ − ρ̃)) k_b ∇φ
 *
 * (rd the drift's fade-in, below: until the drift joins, all smoke is
 * heavy; once it has, only smoke above its target, so arrived smoke is
 * not pressed into the blurred target's round level sets.) And a single
 * pair's drift waits for the flow: it joins METHOD_DRIFT_WAIT·a seconds
 * after the start (scaled by T/METHOD_PACE_TIME below that arrival T),
 * rising over METHOD_DRIFT_RISE·a, so that the fingers carry what they
 * can before the drift collects the rest. A key keeps its drift (its step
 * is a promise). Measured (docs/FIDELITY.md, H100, 128², 256², 512², with
 * method_mix_near): a large faint square into a disc 15 times denser, Uc
 * 0.82 -> 0.22-0.25 (Fattal's 0.21-0.22); a faint disc into a star 8 times
 * denser, 0.87 -> 0.21-0.22 (0.15-0.16); 3% by step 2110 and 1440 instead
 * of 1040 and 620. While the drift waits, the subgrid mixing leaves out
 * its nearness to the target (method_mix_near, below). */
#define METHOD_DRIFT_WAIT 9.0f
#define METHOD_DRIFT_RISE 2.0f
/* The sharp surplus's weight k in w above (k·rg·max(0, ρ − rd·c·ρ*)): the
 * fingers' buoyancy (a large faint square into a small disc, Uc at 128²
 * and 256² on an H100: 0.31, 0.27 with 3; 0.23, 0.23 with 5; Fattal's
 * 0.22; 1 on the CPU at 256²: 0.36). */
#define METHOD_SHARP_PULL 5.0f
/* The drift wait of a trip (the parameter drift_wait): a·METHOD_DRIFT_WAIT·
 * min(1, T/METHOD_PACE_TIME) for a lone, timed pair with the balance force,
 * a its attract share; else 0. */
float method_drift_wait_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to, bool lone);
/* The gathering's gain on a faint compression (issue 20 point 1, twenty-first
 * round). The gathering ∂ρ/∂t = vg ∇·[ρ ρ̃* ∇(ρ − ρ*)] runs at a rate of
 * vg·ρ·ρ̃* / h²: twice as fast for smoke twice as dense. A compression is drawn
 * in by fingers that fall into the moat the gathering digs where the target
 * is (METHOD_DRIFT_WAIT, above); a faint start digs it slowly, the fingers
 * wait and the drift collects the smoke instead. A haze over most of the box
 * at density 0.15, drawn into a heart at density 1, had drawn in a quarter of
 * its way by flow when the drift joined at 9 s (Uc 0.61 at 128², Fattal's
 * 0.31); the same haze at 0.3, 0.30; with the gathering four times stronger,
 * 0.25 (docs/FIDELITY.md). So a trip that compresses (attract a > 0) gathers
 * at g = 1 + a·(min(METHOD_GATHER_GAIN_MAX, max(1, 1/(ρ_s·ρ_t))) − 1), ρ_s
 * the start's mean density Σρ²/Σρ and ρ_t the target's at the start's mass:
 * the rate the same compression of unit-density smoke has. Dense trips (ρ_s·ρ_t
 * ≥ 1: the suite's, a large faint square into a disc 15 times denser) keep 1. */
#define METHOD_GATHER_GAIN_MAX 8.0f
float method_gather_gain_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to);
/* The drift's fade-in at step kstep of the trip, from the gathering's rg:
 * rg·smoothstep((t − W)/R), t = kstep·dt, W = drift_wait, R = W·
 * METHOD_DRIFT_RISE/METHOD_DRIFT_WAIT; rg itself where drift_wait is 0. */
float method_drift_fade(const SolverParams *p, long kstep, float rg);
/* A trip's automatic settings, from `from` to `to`, into q (q as given,
 * resolved): its share of the force noise (method_noise_trip) and of
 * Fattal's pull (method_attract_for_trip), and on a timed morph its pace
 * (--pace 0: method_pace_for_trip) and gathering start (--gather-from 0:
 * method_gather_from_for_trip; `lone`: a single pair, not a key) and drift
 * wait (method_drift_wait_for_trip), the same numbers as those functions, with the trip's distance and squeeze measured
 * once. */
void method_time_trip(SolverParams *q, int w, int h, const float *from, const float *to, bool lone);
/* The pace of a long timed key (issue 20, point 3): the share r of its own
 * speed at which the flow carries the smoke at step kstep of the key (the
 * transport's time dt·r: method_transport_share; the flow itself, its
 * force, damping and self-advection run at full dt and --umax, only the
 * smoke's transport by it is slowed; the drift is added to the slowed flow
 * within the full --umax). The driving force carries smoke at about the
 * speed limit, which brings most shapes within a few percent in 2–4 s
 * whatever the key's length, so a 10-s key stood still for its second
 * half. With arrive = T > METHOD_PACE_TIME (and the balance force), r
 * starts at --pace, or with 0 (automatic) (METHOD_PACE_TIME/T)^
 * METHOD_PACE_POWER or more (method_pace_for_trip), and rises (smoothstep)
 * to 1 from METHOD_PACE_UP to METHOD_PACE_FULL of the key: the smoke
 * travels slowly through the key's first half and approaches at full
 * speed. 1 otherwise (an arrival of at most METHOD_PACE_TIME, --arrive 0,
 * Fattal's method). A single pair is paced by the same rule when its
 * arrival (automatic: its trip's) is longer. */
#define METHOD_PACE_TIME 3.0f
#define METHOD_PACE_POWER 1.5f
#define METHOD_PACE_UP 0.5f
#define METHOD_PACE_FULL 0.7f
float method_pace(const SolverParams *p, long kstep);
/* --pace 0 (automatic) for a key of arrival T from `from` to `to`: the
 * time's share (METHOD_PACE_TIME/T)^METHOD_PACE_POWER, or more where the
 * smoke must travel far: a trip of D covered by METHOD_PACE_ARRIVE of the
 * key, the smoke moving on average at METHOD_PACE_SPEED of the pace's limit
 * (the flow is slowed, not clamped: method_transport_share), r·umax until
 * METHOD_PACE_UP, the smoothstep's mean (r + 1)/2 to METHOD_PACE_FULL,
 * then umax. D is the largest over 8 directions of the 1-D earth mover's
 * distance between the two images' projections (each normalised to mass 1;
 * domain units), over |cos| + |sin| of the direction: the speed limit
 * holds per axis, so a diagonal trip is √2 faster (D is the trip's time at
 * the limit, in distance: a disc moved by (dx, dy) reads max(|dx|, |dy|)).
 * A key that must compress (method_squeeze) is paced less, not at all from
 * METHOD_SQUEEZE_HIGH: its change is the gathering's, which the pace does
 * not slow. 0 (automatic) when the key is not paced (T ≤ METHOD_PACE_TIME,
 * Fattal's force, untimed). */
#define METHOD_PACE_SPEED 0.42f
#define METHOD_PACE_ARRIVE 0.9f
float method_pace_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to);
float method_travel_distance(int w, int h, const float *from, const float *to);
/* --arrive auto, the default (issue 20 point 3): a single pair arrives when
 * its trip, at METHOD_ARRIVE_AUTO_SPEED of --umax, is over: D/(that speed),
 * D as above, but never before METHOD_PACE_TIME (a morph, not a cut) nor
 * after METHOD_ARRIVE_AUTO_MAX. At the fixed 3 s a far trip's last part was
 * the gathering's: the word of an ellipse into WAVE 0.7 away stood ahead of
 * the smoke at step 300 (docs/FIDELITY.md, twenty-sixth round). A key
 * arrives at its step; a solver given "auto" without a trip to time
 * (method_params_settle) at METHOD_PACE_TIME. */
#define METHOD_ARRIVE_AUTO_SPEED 0.5f
#define METHOD_ARRIVE_AUTO_MAX 10.0f
float method_arrive_for_trip(const SolverParams *p, int w, int h, const float *from, const float *to);
/* (Each method_*_for_trip function reads an automatic arrival so timed, a
 * lone pair's where it takes no `lone`.) */

/* ---- the step: one list of passes ------------------------------------------ */

/* Every pass of a step, in the order of the primary design document (seed
 * 003, §3.5): driving force, damping, velocity advection, projection,
 * density advection, gathering. Each backend supplies each pass. */
typedef enum {
    METHOD_PASS_BLUR_RHO,        /* ρ̃: the current density, blurred (coarse grid) */
    METHOD_PASS_POTENTIAL_RHS,   /* the balance force's ∇²φ = ρ − c·ρ*: its right-hand side */
    METHOD_PASS_POTENTIAL_VCYCLE,/* one multigrid V-cycle on φ (warm-started) */
    METHOD_PASS_FORCE,           /* driving force + implicit damping on the faces */
    METHOD_PASS_ADVECT_VEL,      /* semi-Lagrangian self-advection of the velocity */
    METHOD_PASS_DIVERGENCE,      /* ∇·u */
    METHOD_PASS_PRESSURE_VCYCLE, /* one multigrid V-cycle on the pressure */
    METHOD_PASS_PRESSURE_JACOBI, /* one damped Jacobi iteration on the pressure */
    METHOD_PASS_SUBTRACT_GRAD,   /* u −= ∇p */
    METHOD_PASS_DRIFT_VEL,       /* the transport's face speeds: the clamped flow plus the drift */
    METHOD_PASS_ADVECT_DENSITY,  /* one conservative transport substep of ρ (by u, or u + w) */
    METHOD_PASS_MIX,             /* one iteration of the subgrid mixing (the first: its coefficient) */
    METHOD_PASS_GATHER_BEGIN,    /* the implicit gathering's start (D, the warm e) */
    METHOD_PASS_GATHER_JACOBI,   /* one Jacobi iteration of the gathering solve */
    METHOD_PASS_GATHER_APPLY,    /* the conservative, positive gathering fluxes */
    METHOD_PASS_COUNT
} MethodPass;

/* "blur ρ", "force", ... for logs and the classroom mode. */
const char *method_pass_name(MethodPass pass);

/* One step's plan: the passes with their repeat counts, and the numbers every
 * backend's passes share this step. */
typedef struct {
    MethodPass pass;
    int count;
} MethodStage;

typedef struct {
    MethodStage stage[METHOD_PASS_COUNT];
    int n;
    SolverParams p;      /* the parameters, vf eased (p.vf is this step's v_f) */
    float rg;            /* the gathering's fade-in factor, 0..1 */
    float rd;            /* the drift's: rg, later on a lone compression (method_drift_fade) */
    float umax_flow;     /* the flow's speed limit this step: p.umax·method_pace; the
                          * transport moves smoke by the flow slowed to it
                          * (method_transport_share); the flow plus the drift
                          * stay within p.umax */
    float gather_a;      /* the implicit gathering's a = rg·dt·vg/h² */
    float kb;            /* the balance force's vb / density scale (0: off) */
    float noise;         /* the force's noise this step: method_noise_amp (0: off) */
    float mix_edge_w;    /* the subgrid mixing's edge excess's weight: method_mix_edge_w */
    bool balance;        /* the balance force is on (φ is solved) */
    /* Several smoke fields sharing one velocity (issue 9): each field's
     * force pass adds its dt·F to the velocity; only the last one damps and
     * clamps, so u ← clamp((u + dt·ΣF)/(1 + dt·vd)). force_partial marks a
     * field's pass that is not the last: no damping (vd 0), no clamp. */
    bool force_partial;
} MethodStep;

/* Subgrid mixing (--subgrid C, default 4, issue 20 point 2): where the flow strains
 * smoke into filaments thinner than the grid carries, the smoke diffuses at
 * Smagorinsky's eddy diffusivity κ = C·L²·|S|·g·n: |S| the flow's strain
 * rate (cell-centred from the faces); L = 1/METHOD_MIX_SCALE of the box's
 * shorter side, the width the bundled targets' edges are softened to, so
 * the finest smoke has one width in domain units at every grid (a filament
 * settles where strain thins it as fast as κ widens it: √C·L); g the larger
 * of |ρ̃ − ρ̃*| ÷ (ρ̃ + ρ̃*) of the blurred fields, 0 where the smoke matches
 * its target (the target stays the fixed point: arrived smoke is the
 * gathering's; blurred, because the cell's own |ρ − ρ*| ÷ (ρ + ρ*) stays
 * high on a target's fine detail long after the smoke has arrived and kept
 * it mixing: corners missed 3% at 512², 0.036 at step 3000) and rg (the
 * gathering's and the drift's ease-in, method_ease) times the edge excess
 * (|∇²ρ| − |∇²ρ*|)₊ ÷ (|∇²ρ| + |∇²ρ*| + METHOD_MIX_EDGE_EPS·s), how much
 * sharper the smoke is than its target at the cell, 0 on the target's own
 * edges and on smoke that has arrived (thirteenth round: the blurred gate
 * alone let the balance drift print a greyscale target's levels with their
 * rims while the shape was still coming in, where the blurred fields
 * already matched, 2.23x the stripes of start and target at 256², and a
 * compression's disc form behind a cell-sharp front, 2.13x at 512²; the
 * edges it answers are the gathering's and the drift's, so it joins with
 * them: on from step 0 it mixed the start's own edges while only the flow
 * moved them, which the flow share counts as moved by no flow, ring-hi's
 * Uc 0.21 -> 0.25 at 128², Fattal's 0.12; docs/FIDELITY.md); n =
 * max(min(1, q·ρ̃* ÷ (METHOD_MIX_NEAR·s)), METHOD_MIX_TRANSIT), s the
 * target's density scale, q = method_mix_near (1 but while a compression's
 * drift waits):
 * a twentieth away from the target (smoke in transit travels nearly whole:
 * mixing it fully on a long trip spread it into a haze that missed its key,
 * 0.095 instead of 0.046 at 128², and a third raised corners' Uc from 0.07
 * to 0.20; with none, a travelling disc's strained filaments read 2.5-4.2x
 * the greater of its start's and target's stripes at 512²;
 * docs/FIDELITY.md), and whole (n = 1) where the smoke is much thinner than
 * L, wherever it is: smoothstep(METHOD_MIX_FINE_LO, METHOD_MIX_FINE_HI, f),
 * f = |∇²ρ|·(L/h)² ÷ (max(ρ, ρ̄) + METHOD_MIX_EDGE_EPS·s), ρ̄ the mean of the
 * cell's neighbours (∇² and ρ̄ over those inside the grid), so a feature of
 * Gaussian width σ reads about (L/σ)² at its middle: the transit's twentieth
 * lets a strained filament settle at √(C/20)·L, about half of L (at 512²
 * two cells; at 128² less than a cell, which the grid's own cell bounds),
 * and the fine gate mixes it whole, g still gating, wherever the strain
 * thins it below L/2 (fourteenth round: wide at 512², 2.19x -> 2.07x the
 * stripes of start and target, every other pair within 0.03; an edge as
 * soft as L reads at most 3.3, its tail included). |∇²ρ| is at most
 * 4·max(ρ, ρ̄) in cells, so f ≤ 4·(L/h)²: from 256² up it can fire, at
 * 128² and below (L ≤ h) it never does. It runs after the transport, with the flow's share of the step's time (a paced key's
 * slow motion), as method_mix_iters explicit, conservative iterations whose
 * face coefficient d ≤ METHOD_MIX_CAP (positive, mass kept). They cover
 * |S|·dt ≤ METHOD_MIX_STRAIN (the largest the suite reached at the default
 * dt: 0.16-0.20 at 128² and 512²) up to METHOD_MIX_ITERS_MAX; past that d
 * is capped (weaker mixing, thinner filaments in domain units). Its cost is
 * bounded by METHOD_MIX_WORK cell-iterations a step: 8 iterations at 1024²,
 * 2 at 2048², none from 4096² (where 1/128 of the box is 32 cells and two
 * iterations cost 1.8 ms of a 23 ms step on an H100: docs/PERFORMANCE.md). */
#define METHOD_MIX_SCALE 128
#define METHOD_MIX_NEAR 0.1f
#define METHOD_MIX_TRANSIT 0.05f
#define METHOD_MIX_EDGE_EPS 0.005f
#define METHOD_MIX_FINE_LO 4.0f
#define METHOD_MIX_FINE_HI 12.0f
#define METHOD_MIX_CAP 0.2f
#define METHOD_MIX_STRAIN 0.2f
#define METHOD_MIX_ITERS_MAX 32
#define METHOD_MIX_WORK (8.0 * 1024.0 * 1024.0) /* cells x iterations a step, at most */
int method_mix_iters(int w, int h, const SolverParams *p);
/* The mixing's length L in cells of a w x h grid: min(w, h)/METHOD_MIX_SCALE. */
float method_mix_length(int w, int h);
/* The factor k with d = min(k·|S|·g·n, METHOD_MIX_CAP) per iteration:
 * C·(L/h)²·dt·(the flow's share)/iterations; 0 when the mixing is off. */
float method_mix_k(int w, int h, const MethodStep *st, int iters);
/* The share q of the target's density that the mixing's nearness sees in
 * a step: 1 − a·(rg − rd), a the trip's attract, so 1 unless a
 * compression's drift waits (the gathering on, the drift not yet), 0 while
 * a lone compression's does (rg 1, rd 0), and back to 1 as its drift rises.
 * n = max(min(1, q·ρ̃* ÷ (METHOD_MIX_NEAR·s)), METHOD_MIX_TRANSIT), then the
 * fine gate: while the drift waits, smoke near the target is mixed as smoke
 * in transit, and filaments thinner than L in whole; as the drift rises the
 * full mixing comes back from the target's dense middle outwards. Near the
 * target the full mixing (κ = C·L²·|S|, L four cells at 512², one at 128²)
 * slowed the draw-in at 512² and not at 128² (square-blob's error at step
 * 900: 0.99 at 512², 0.68 at 128²), so that the two sizes' frames at step
 * 1000 differed by 0.32 of the mass (docs/FIDELITY.md, nineteenth round).
 * It replaced the eighteenth round's half strength while a drift waits. */
float method_mix_near(const MethodStep *st);
/* The weight of the mixing's edge excess (g's second term) in a step:
 * rg, fading out by a smoothstep from METHOD_MIX_EDGE_LATE_ON to
 * METHOD_MIX_EDGE_LATE_OFF arrivals after the target was set (τ = kstep
 * over the arrival's steps, as method_ease's); rg itself when untimed
 * (arrive 0, or Fattal's force). The term keeps the drift and the
 * gathering from printing rims and levels while a shape comes in (grey at
 * 512²: 1.83x the stripes of start and target with it, 2.14x without).
 * Long after the arrival the smoke still to come is a faint residue that
 * the gathering collects into a shape already there, and the term then
 * mixed it back out of the shape's edges as fast as it came: a fog at 0.1
 * into HI at 512² swung between 0.030 and 0.036 from step 2300 and missed
 * 3% by step 3000; faded out from 4 to 6 arrivals it is within 3% by 2136,
 * as 256² is by 2210, and every other pair run is unchanged
 * (docs/FIDELITY.md, twenty-third round). A key's range ends at its
 * arrival, so keys never reach the fade. */
#define METHOD_MIX_EDGE_LATE_ON 4.0f
#define METHOD_MIX_EDGE_LATE_OFF 6.0f
float method_mix_edge_w(const SolverParams *p, long kstep, float rg);
/* How the pace slows the flow: the transport moves smoke by the projected
 * flow (within method_transport_cap) times the pace, which is the flow at its speed for
 * dt·pace (the same fluxes): the smoke rides the whole flow in slow
 * motion, the flow's shape kept (the flow itself evolves at full speed). (Clamping each face at umax·pace instead made the flow a field of
 * ±umax·pace wherever it was faster, whose convergence lines tore the
 * smoke into comb-like teeth along the edges of the first half of a long
 * key; docs/FIDELITY.md.) With the drift (flow + drift, already slowed,
 * ref_pass_drift_vel_paced) 1; else umax_flow/umax. */
float method_transport_share(const MethodStep *st, bool drift_ran);
/* The share itself: umax_flow/umax, 1 when not paced (or umax is not > 0). */
float method_flow_share(float umax_flow, float umax);

/* The plan of step nstep (0 after a new start density; kstep after the
 * target was set: method_ease) on grid g; dscale is the target's density
 * scale Σρ*²/Σρ* (for kb). */
void method_plan(const SolverParams *p, MethodGrid g, long nstep, long kstep, float dscale,
                 MethodStep *out);

/* Runs the plan: pass(self, stage pass, k, st) for k = 0..count−1 of every
 * stage in order. Stops at the first pass that returns non-zero and returns
 * that value; 0 when all ran. */
typedef int (*MethodPassFn)(void *self, MethodPass pass, int k, const MethodStep *st);
int method_run(const MethodStep *st, MethodPassFn pass, void *self);

/* The list's three parts. Several smoke fields share one velocity: each
 * field runs the force part on it (its blurred density, its potential, its
 * force: the forces add up), the flow part runs once (advection and
 * projection of the shared velocity), then each field runs the density
 * part (its transport by the shared velocity, its drift and gathering). */
enum {
    METHOD_PART_FORCE = 1,   /* blur ρ .. force */
    METHOD_PART_FLOW = 2,    /* advect velocity .. subtract gradient */
    METHOD_PART_DENSITY = 4, /* advect density .. gather apply */
    METHOD_PART_ALL = 7
};
unsigned method_pass_part(MethodPass pass);
/* method_run of the stages in `parts` only, in the list's order. */
int method_run_parts(const MethodStep *st, unsigned parts, MethodPassFn pass, void *self);

/* A cursor over the plan, for running it one pass at a time (the classroom's
 * pass-by-pass mode): method_next gives the pass at the cursor and moves it
 * on, in exactly method_run's order (method_run is built on it). A zeroed
 * cursor is at the first pass. Returns false once every pass has been given.
 *
 *   MethodCursor c = {0};  MethodPass pass;  int k, count;
 *   while (method_next(&st, &c, &pass, &k, &count)) my_pass(self, pass, k, &st);
 */
typedef struct {
    int stage, k;   /* the next pass: repetition k of stage[stage] */
    int index;      /* passes given so far */
} MethodCursor;
bool method_next(const MethodStep *st, MethodCursor *c, MethodPass *pass, int *k, int *count);
/* The passes of the plan, every repetition counted (the cursor's end index). */
int method_pass_total(const MethodStep *st);
/* The repetitions of pass in the plan (0: not in it). */
int method_stage_count(const MethodStep *st, MethodPass pass);

/* What each pass writes, for showing it (the pass-by-pass mode): one value
 * per pass of the list. */
typedef enum {
    METHOD_OUT_RHO_BLUR,      /* ρ̃ (on the blur's coarse grid) */
    METHOD_OUT_POTENTIAL_RHS, /* ρ − c·ρ*: the deficit potential's right-hand side */
    METHOD_OUT_POTENTIAL,     /* φ */
    METHOD_OUT_VELOCITY,      /* u, v on the MAC faces */
    METHOD_OUT_DIVERGENCE,    /* ∇·u before the projection */
    METHOD_OUT_PRESSURE,      /* p */
    METHOD_OUT_DENSITY,       /* ρ */
    METHOD_OUT_DRIFT,         /* the transport's face speeds: the clamped flow plus the drift */
    METHOD_OUT_GATHER_E,      /* the gathering solve's e (ρ − ρ* diffused) */
    METHOD_OUT_COUNT
} MethodOut;
MethodOut method_pass_output(MethodPass pass);
/* "blurred density", "pressure", ... */
const char *method_out_name(MethodOut f);
/* Whether the output has two components (the velocity, the drift). */
bool method_out_is_vector(MethodOut f);
/* Whether its values take both signs around 0 (shown with a diverging map). */
bool method_out_is_signed(MethodOut f);

/* Cancellation: once *flag is non-zero (a signal handler sets it), method_run
 * stops before its next pass and returns METHOD_CANCELLED, so a step with
 * thousands of substeps ends within one pass of a SIGINT or SIGTERM. The
 * state is then part of a step: the caller ends the run without using it.
 * NULL (the default) turns the check off. */
#define METHOD_CANCELLED (-99)
void method_set_cancel_flag(const volatile sig_atomic_t *flag);

/* ---- the state between steps (checkpoints) --------------------------------- */

/* Every field a step reads that the previous step left: the density with the
 * target and the blurred target as the solver holds them, the velocity, and
 * the warm starts of the iterative solves (the pressure, the deficit
 * potential φ and the gathering's e all start from the last step's). W*H
 * floats each, row 0 at the top, the velocity on its MAC faces as in
 * cpu_solver.h. The order is the checkpoint file's (checkpoint.h). */
typedef enum {
    METHOD_FIELD_DENSITY,     /* ρ */
    METHOD_FIELD_TARGET,      /* ρ*, mass-matched as the solver holds it */
    METHOD_FIELD_TARGET_BLUR, /* ρ̃* */
    METHOD_FIELD_VEL_U,       /* u on the x faces */
    METHOD_FIELD_VEL_V,       /* v on the y faces */
    METHOD_FIELD_PRESSURE,    /* p: the projection's warm start */
    METHOD_FIELD_POTENTIAL,   /* φ: the balance force's warm start */
    METHOD_FIELD_GATHER_E,    /* e: the gathering solve's warm start */
    METHOD_FIELD_COUNT
} MethodField;

/* "density", "target", ... (the sidecar's and the checkpoint's names) */
const char *method_field_name(MethodField f);

/* A backend's whole state besides its parameters: with the same parameters,
 * a solver given this state steps exactly as the one it was taken from. */
typedef struct {
    float *field[METHOD_FIELD_COUNT]; /* W*H floats each, owned by the caller */
    float pot_c;   /* the deficit potential's target scale c (∇²φ = ρ − c·ρ*) */
    float dscale;  /* the target's density scale Σρ*²/Σρ* */
    long nstep;    /* steps since the start density was set: the easing's clock */
    long kstep;    /* steps since the target was set: the arrival's clock (not in
                    * checkpoints: the morph derives it from its schedule) */
} MethodState;

/* ---- the parameters by name ------------------------------------------------- */

/* Each SolverParams member: its name (in checkpoints and the sidecar), the
 * option that sets it (NULL: none), and its kind: 'f' float, 'i' int,
 * 'b' bool, 'e' the force (SOLVER_FORCE_*); extra: an addition to the
 * paper's method (--force fattal leaves it off unless given). In the order
 * of METHOD_P_*, from settings.def. */
typedef struct {
    const char *name;
    const char *option;
    char kind;
    bool extra;
    bool autov; /* also "auto" (SF_AUTO: SETTING_AUTO) */
} MethodParamInfo;

extern const MethodParamInfo method_param_info[METHOD_PARAM_COUNT];
/* Member k as a double (exact for every kind), and back (values of an int
 * or bool member are truncated; check with method_params_check). */
double method_param_get(const SolverParams *p, int k);
void method_param_set(SolverParams *p, int k, double v);
/* NAME=VALUE (--compare, tools/fidelity --param): the parameter named n, by
 * its name or its option ('-' and '_' alike; "gather", not "no-gather"), or
 * -1; and the value text v of parameter k as a double (a bool: 1/on/true/yes
 * or 0/off/false/no; the force: balance or fattal; an int: whole), 0 or -1. */
int method_param_index(const char *n);
int method_param_parse(int k, const char *v, double *out);

/* The constants shaders need, as "#define SM_NAME value" lines, into buf.
 * Returns buf (always NUL-terminated). */
const char *method_glsl_defines(char *buf, size_t n);

#endif
