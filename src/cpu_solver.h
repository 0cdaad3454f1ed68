/* cpu_solver: the whole discrete morph step on the CPU, in plain C.
 * It is the oracle the GPU passes are tested against and the --cpu backend.
 * Never touches GL.
 *
 *   SolverParams p; method_params_default(&p);
 *   RefSolver *s = ref_create(256, 256, &p, err, sizeof err);
 *   ref_set_density(s, cur->px);  ref_set_target(s, tgt->px, true);
 *   for (...) ref_step(s);
 *   ref_free(s);
 *
 * Grid: W x H cells, cell size h = 1 / min(W, H) (the shorter side is 1).
 * Row j = 0 is the top row of the images. Staggered (MAC) velocity:
 *   u[j*W + i] is the x-velocity on the face between cells (i-1, j) and (i, j);
 *   v[j*W + i] is the y-velocity on the face between cells (i, j-1) and (i, j);
 * faces on the walls (i == 0 for u, j == 0 for v, and the implicit i == W,
 * j == H) are always 0: a closed box. Positive v points to larger j.
 *
 * One step (seed 003 §3.5), each a function below with explicit input/output:
 *   blur ρ -> ρ̃ ; force+damping on u ; advect u ; divergence ; Jacobi p ;
 *   subtract ∇p ; advect ρ (flux form) ; gathering (implicit, conservative).
 */
#ifndef SMOKEMORPH_REFSOLVER_H
#define SMOKEMORPH_REFSOLVER_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"

typedef struct RefSolver RefSolver;

RefSolver *ref_create(int w, int h, const SolverParams *p, char *err, size_t errlen);
void ref_free(RefSolver *s);
void ref_set_params(RefSolver *s, const SolverParams *p);
const SolverParams *ref_params(const RefSolver *s);
int ref_width(const RefSolver *s);
int ref_height(const RefSolver *s);

/* Copy W*H densities in; velocity and pressure are reset to zero by set_density. */
void ref_set_density(RefSolver *s, const float *rho);
/* Set the target; with mass_match the target is scaled to the density's mass.
 * Returns -1 when the target is all zero (nothing to morph to). */
int ref_set_target(RefSolver *s, const float *target, bool mass_match);

/* The same with the scale given: ρ* = target·scale (the caller matched its
 * mass), c (the deficit potential's ∇²φ = ρ − c·ρ*) = smoke_mass / Σρ*, ρ̃*
 * blurred again; keep_e keeps the gathering's warm start (a moving target:
 * the same shape, moved a little). -1 when the target is all zero. */
int ref_set_target_scaled(RefSolver *s, const float *target, float scale, double smoke_mass,
                          bool keep_e);
/* c alone, once sources have added smoke (morph.h): the smoke's mass over
 * the target's, so that ρ − c·ρ* keeps a zero mean. */
void ref_set_potential_scale(RefSolver *s, float c);
/* A source (morph.h): ρ += amount·weights (W*H), before a step's passes. */
void ref_add_source(RefSolver *s, const float *weights, float amount);

void ref_step(RefSolver *s);
/* Part of a step (method.h's METHOD_PART_*), for smoke fields that share
 * one velocity: METHOD_PART_FORCE starts the step (its plan and clock); with
 * force_partial this field's force is added to the velocity undamped and
 * unclamped (another field's force pass comes after). ref_step is all three. */
void ref_step_parts(RefSolver *s, unsigned parts, bool force_partial);
/* dst's velocity (u, v) := src's: the shared velocity between the parts. */
void ref_copy_velocity(RefSolver *dst, const RefSolver *src);

/* One step a pass at a time (the pass-by-pass mode): ref_step_begin plans
 * the next step into st exactly as ref_step does, and ref_step_pass runs
 * one pass of it (ref_step's own pass function). Running every pass of st
 * in method_next's order is ref_step, bit for bit. */
void ref_step_begin(RefSolver *s, MethodStep *st);
int ref_step_pass(RefSolver *s, MethodPass pass, int k, const MethodStep *st);
/* What a pass wrote (method_pass_output), as the last pass left it, into a
 * (W*H floats; b, for a vector output, the second component, else unused).
 * ρ̃ is upsampled from its coarse grid as the force samples it. An output is
 * read right after the pass that writes it, or later in its stage: the
 * divergence and the potential's right-hand side share a buffer with the
 * drift speeds. 0, or -1 for an unknown output. */
int ref_read_output(const RefSolver *s, MethodOut f, float *a, float *b);
/* The substeps the last step's transport stage took (stage 0, the only one:
 * the density's, by the flow and the drift; 0 when it did not run; -1 for
 * another stage): they follow the actual speed,
 * method_substeps_for(ref_pass_speed(...)). */
int ref_substeps(const RefSolver *s, int stage);


/* The whole state a step depends on besides the parameters (method.h):
 * copied out into, or in from, the caller's W*H arrays. A solver given a
 * state steps exactly as the one it was taken from (checkpoints). */
void ref_get_state(const RefSolver *s, MethodState *st);
void ref_set_state(RefSolver *s, const MethodState *st);

/* Read-only views of the fields (W*H floats each). */
const float *ref_density(const RefSolver *s);
const float *ref_target(const RefSolver *s);
const float *ref_target_blur(const RefSolver *s);   /* ρ̃*, full grid */
const float *ref_velocity_u(const RefSolver *s);
const float *ref_velocity_v(const RefSolver *s);
/* The face speeds that moved the smoke in the last step: the flow as the
 * transport clamps it (±umax) plus the drift's speeds when the step ran the
 * drift: the motion vectors (W*H each, on the faces like u, v). 0. */
int ref_read_motion(const RefSolver *s, float *u, float *v);
float *ref_velocity_u_mut(RefSolver *s);
float *ref_velocity_v_mut(RefSolver *s);
float *ref_density_mut(RefSolver *s);

/* Metrics */
double ref_mass(const RefSolver *s);
double ref_error(const RefSolver *s);     /* Σ|ρ−ρ*| / Σρ* */
double ref_max_div(const RefSolver *s);   /* max |∇·u| (1/time) */

/* ---- the passes, on plain arrays (for tests and for GPU comparison) ---- */

/* Gaussian blur of a W x H field through the coarse grid of spec: box-average
 * f x f blocks, separable Gaussian (clamped edges), read back up by
 * ref_sample_coarse. */
void ref_pass_blur(int w, int h, const BlurSpec *spec, const float *in, float *out);
/* Coarse stages alone (coarse arrays are cw x ch): */
void ref_pass_downsample(int w, int h, const BlurSpec *spec, const float *in, float *coarse);
/* The separable blur along axis 0 (x) or 1 (y), the ends clamped; in and
 * out must differ. Lines of up to REF_BLUR_LINE_MAX samples (a side of
 * ref_create's largest grid, plus the curl's corner) are padded on the
 * stack and read straight; longer ones read the clamped taps one by one,
 * with the same sums. */
#define REF_BLUR_LINE_MAX 16385
void ref_pass_blur_1d(const BlurSpec *spec, int axis, const float *in, float *out);
void ref_pass_upsample(int w, int h, const BlurSpec *spec, const float *coarse, float *out);

/* A coarse (cw x ch) field at a position given in fine cell units (fine
 * cell centres at i + 0.5): with factor > 1 the uniform cubic B-spline of
 * the 4x4 coarse samples around it (indices clamped at the edges), whose
 * gradient is continuous, so the force's and the drift's differences of
 * ρ̃ and ρ̃* have no jumps where a coarse sample sits (bilinear, they jumped
 * there every factor cells, and the smoke took a lattice of that period:
 * method.h, METHOD_BLUR_BSPLINE); at factor 1 the samples themselves
 * (bilinear between them). */
float ref_sample_coarse(const BlurSpec *spec, const float *coarse, float x, float y);
/* u,v = (u,v + dt·vf·ρ̃ ∂ρ̃* / max(ρ̃*, eps)) / (1 + dt·vd) on interior faces:
 * driving force and (implicit) damping. rho_blur_coarse is ρ̃ on the coarse
 * grid of spec, read at the face by ref_sample_coarse; tgt_blur is ρ̃* on the full
 * grid. That is Fattal's force (phi NULL). With phi, the balance force:
 *   F = vf·( min(ρ̃, ρ̃*) ∇log ρ̃* + kb·ρ̃ ∇φ ),   ∇²φ = ρ − c·ρ*  (Neumann walls)
 * φ is the potential of the deficit: it has its maxima where the target
 * still lacks smoke and its minima where smoke is in surplus, at any
 * distance, so smoke in an over-full part is pushed toward an empty one
 * (Fattal's force alone only pulls up ∇log ρ̃*, and smoke that has filled
 * the nearest part of a split target stays there). Where the smoke already
 * exceeds the blurred target (ρ̃ > ρ̃*) Fattal's term becomes ∇ρ̃*, a pure
 * gradient the projection removes, so it no longer holds surplus smoke in
 * place against the balance term. kb = vb / (the target's density scale). */
void ref_pass_force(int w, int h, const SolverParams *p, const BlurSpec *spec,
                    const float *rho_blur_coarse, const float *tgt_blur, const float *phi,
                    float kb, float noise, const float *curl, const float *u, const float *v, float *u_out,
                    float *v_out);
/* The same with, on a compression (p->attract > 0, phi given), the sharp
 * surplus of method.h (METHOD_DRIFT_WAIT): the cell densities ρ and ρ*
 * (as held; c·ρ* is the target at the smoke's mass) and this step's rg and
 * rd. sharp NULL, attract 0 or phi NULL: ref_pass_force. */
typedef struct {
    const float *rho, *tgt;
    float c, rg, rd;
} ForceSharp;
void ref_pass_force_sharp(int w, int h, const SolverParams *p, const BlurSpec *spec,
                          const float *rho_blur_coarse, const float *tgt_blur, const float *phi,
                          float kb, float noise, const float *curl, const ForceSharp *sharp, const float *u,
                          const float *v, float *u_out, float *v_out);
/* With noise = A > 0 (the step's method_noise_amp), the driving force on each
 * face (Fattal's and the balance term, not the confinement) is scaled by
 * 1 + A·n, n = method_noise at the face's position in lattice units of
 * p->noise_scale, from p->noise_seed. */
/* With p->swirl = ε > 0 and curl given, the force pass also adds dt·ε·L·(N ×
 * ω), vorticity confinement (Fedkiw, Stam & Jensen 2001): ω the smoothed
 * vorticity at the cell corners (curl, from ref_swirl_curl), N = ∇|ω|/|∇|ω||
 * (issue 20: travelling smoke keeps its small swirls instead of sliding as
 * one blob). curl NULL: no confinement. */
/* The vorticity at the (w+1) x (h+1) cell corners, ∂v/∂x − ∂u/∂y from the
 * four faces around each (the velocity 0 outside the box), in 1/time: */
void ref_pass_curl(int w, int h, const float *u, const float *v, float *curl);
/* ... smoothed by method_swirl_spec's kernel (two ref_pass_blur_1d passes,
 * tmp the same size): what the confinement reads (METHOD_SWIRL_SMOOTH). */
void ref_swirl_curl(int w, int h, const float *u, const float *v, float *curl, float *tmp);
/* One face's confinement from the smoothed curl with eps_h = dt·ε·L
 * (METHOD_SWIRL_LENGTH): axis 0 the x face (i-1 | i), 1 the y face (j-1 | j). */
float ref_swirl_force(int w, int h, const float *curl, int i, int j, int axis, float eps_h);
/* v_f·F on the faces (fu, fv: W*H each) as the force pass of the next step
 * of state st computes it (its plan: v_f eased, the balance term when on;
 * its blurred density), with dt 1, no damping, no clamp, from zero velocity:
 * what the classroom's force view shows (viewfield). 0, or -1 out of memory. */
int ref_force_field(const MethodState *st, const SolverParams *p, int w, int h, float *fu, float *fv);
/* Semi-Lagrangian advection of the staggered velocity by itself. */
void ref_pass_advect_vel(int w, int h, float dt, const float *u, const float *v,
                         float *u_out, float *v_out);
/* div = (u(i+1)-u(i) + v(j+1)-v(j)) / h, walls zero. */
void ref_pass_divergence(int w, int h, const float *u, const float *v, float *div);
/* One damped Jacobi iteration of ∇²p = ∇·u (p absorbs dt), Neumann walls:
 * p += ω·(p_jacobi − p), ω = METHOD_JACOBI_OMEGA (method.h). Plain Jacobi
 * (ω = 1) never damps the checkerboard mode (its eigenvalue is −1 in a
 * closed box); ω = 0.8 does. */
void ref_pass_jacobi(int w, int h, const float *p, const float *div, float *p_out);
/* The same with an explicit cell size (1 on the coarse multigrid levels). */
void ref_pass_jacobi_h(int w, int h, float hh, const float *p, const float *div, float *p_out);

/* The residual of ∇²x = b (x, b on the grid, cell h = 1 / min(W, H), the
 * solves' Neumann operator): the max and the RMS over the cells of
 * |∇²x − b|, in b's units. */
void ref_residual_norms(int w, int h, const float *x, const float *b, double *max, double *rms);
/* r = h²·b − Σ(x_n − x_c) */
void ref_pass_mg_residual(int w, int h, float hh, const float *x, const float *b, float *r);
/* bc (ceil(w/2) x ceil(h/2)) = ½ Σ of the up to four children of r */
void ref_pass_mg_restrict(int w, int h, const float *r, float *bc);
/* x_out = x + xc(i/2, j/2) */
void ref_pass_mg_prolong(int w, int h, const float *x, const float *xc, float *x_out);
/* u -= ∂p on interior faces. */
void ref_pass_subtract_grad(int w, int h, const float *p, const float *u, const float *v,
                            float *u_out, float *v_out);
/* Density advection is flux form: per substep, the flux through a face is
 * k·a·ρ_face with a the face speed within ±umax (the solver passes
 * method_transport_cap: the projected flow as it is), ρ_face the upwind value
 * reconstructed with a minmod-limited slope (MUSCL), k = dt_sub/h; each cell
 * donates at most what it holds (a per-cell ratio scales all its outgoing
 * fluxes), so ρ stays ≥ 0 and Σρ is conserved. The update is unsplit: a
 * cell sees its x and y faces at once, so what must stay in the scheme's
 * stable range is the sum |c_x| + |c_y| of the two axes' CFL numbers
 * (c = a·dt_sub/h), not each one. Forward-Euler MUSCL with minmod is
 * total-variation diminishing only up to a sum of 1/2, and the positivity
 * limiter at a front needs more margin still: with the old per-face bound
 * of 1/2 (a sum up to 1) a disc moving diagonally broke into comb stripes
 * two or three cells apart (the stripe measure grew 38× in 150 steps at
 * 256²); with a sum of 1/2 the front still frayed at 512² (1.5×); with
 * 1/4 it stays smooth at every grid measured (≤ 1.0×). Substeps keep
 * 2·cap·dt_sub/h ≤ METHOD_ADVECT_CFL (method.h), the worst case being both
 * face speeds at the transport's guard. */
void ref_pass_advect_density(int w, int h, float dt_sub, float umax, const float *u,
                             const float *v, const float *rho, float *rho_out);
/* The transport's speed S (method_cell_speed's max over the cells, with
 * the stage's clamp cap): its substep count is method_substeps_for(S). */
float ref_pass_speed(int w, int h, float cap, const float *u, const float *v);
/* ... which is two passes: each cell's ratio, then the limited fluxes. */
void ref_pass_advect_ratio(int w, int h, float dt_sub, float umax, const float *u,
                           const float *v, const float *rho, float *ratio);
void ref_pass_advect_apply(int w, int h, float dt_sub, float umax, const float *u,
                           const float *v, const float *rho, const float *ratio, float *rho_out);
/* Gathering drift: the conservative flux ρ·w, on faces
 *   w = clamp(κ·m·∂log(max(ρ̃*, ε)/max(ρ̃, ε)), ±wmax·r),
 *   m = min(1, ρ̃*_face / (METHOD_DRIFT_MOB·s)), ε = METHOD_DRIFT_LOG_EPS·s,
 * s the target's density scale Σρ*²/Σρ*, r the fade-in factor. It moves
 * smoke up the ratio of the blurred target to the blurred smoke: faint smoke
 * (haze) that the divergence-free flow cannot compress and that Fattal's
 * gathering (coefficient ρρ̃* ≈ 0 there) barely moves drifts into the target,
 * and w vanishes once ρ̃ = ρ̃* (so the target is still the fixed point). The
 * flux goes through the density advection's own ratio/apply passes (MUSCL,
 * positive, conservative) with the face field w as velocity.
 *
 * With the balance force (phi non-NULL) the drift gains a term from the same
 * deficit potential φ (∇²φ = ρ − c·ρ*):
 *   w += c²·m_φ·(vw/s)·∂φ,  m_φ = max(m, 1 − min(1, ρ̃_face/(METHOD_DRIFT_HAZE·s))),
 * c the target's coverage (ref_drift_cover, below: the drift waits for the smoke).
 * The divergence-free flow cannot change density levels: smoke that is
 * over-full in one part of the target (a crescent into two bars) or spread
 * thin over a large area (a square into a small blob) stays so. This term
 * moves it from excess to deficit along ∇φ, compressing or spreading it, as
 * a flux through the target's surroundings (no teleporting). Its mobility m_φ
 * is 1 inside the target's blur and for thin smoke (haze, wisps) anywhere,
 * but 0 for a dense body away from the target: there φ's own bowl would
 * spread it into a trail behind it (a disc travelling to the opposite corner
 * left a haze that the drift then took 3000 steps to gather), and the
 * divergence-free flow carries it instead. METHOD_DRIFT_HAZE = 0.2: at 128² the
 * four far/compressing pairs of the suite (diagonal, corners, square-blob,
 * wide) reach 3% by 3000 steps with 0.2; with 0.5 none does, with 0 (the
 * target's m alone) square-blob's corner wisps stay (0.098 at step 3000). */
/* Last, the flow's limit (issue 20): the drift adds to the flow (u, v, the
 * projected velocity; NULL: none), so each face's drift is clamped to keep
 * the flow's local envelope plus w within ±umax (its blurred mean ± K times
 * its spread, METHOD_FLOW_ENV_K; f = clamp(u, ±the transport's cap), on a
 * long key r times that, r its pace: ref_pass_drift_vel_paced), and f + w
 * within ±the cap: smoke does not move faster than the flow's own speed
 * limit, so nothing arrives ahead of what the flow could carry. Out (wu,
 * wv): the transport's face speeds, f + w, by which the density's one
 * transport stage moves the smoke this step (so the drift takes no substeps
 * of its own: the flow's bound, the cap, holds for the sum). */
void ref_pass_drift_vel(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                        const float *rho_blur_coarse, const float *tgt_blur, float dscale, float r,
                        const float *u, const float *v, float *wu, float *wv);
/* ... with the flow slowed to flowmax (MethodStep.umax_flow: a long key's
 * pace), clamp(u, ±umax)·flowmax/umax, before the drift is added; flow +
 * drift still within p->umax. */
void ref_pass_drift_vel_paced(int w, int h, const SolverParams *p, const BlurSpec *spec, const float *phi,
                              const float *rho_blur_coarse, const float *tgt_blur, float dscale, float r,
                              float flowmax, const float *u, const float *v, float *wu, float *wv);
/* The balance drift's coverage c (METHOD_DRIFT_COVER): Σ ρ̃*·min(1,
 * ρ̃/(METHOD_DRIFT_COVER·ρ̃*)) ÷ Σ ρ̃* over the coarse cells of spec, ρ̃ the
 * coarse sample and ρ̃* tgt_blur at the cell min(c·f + f/2, W − 1) (likewise
 * in y) of the full grid; summed in floats row by row, then the rows, as
 * drift_cover.glsl does. 1 where the blurred target is empty. The drift
 * scales the balance term by c². */
float ref_drift_cover(int w, int h, const BlurSpec *spec, const float *rho_blur_coarse, const float *tgt_blur);
/* Subgrid mixing (method.h): each cell's d = min(k·|S|·g·n, METHOD_MIX_CAP),
 * |S| the flow's strain rate at its centre (or the transport's, below;
 * k: method_mix_k; hh the cell
 * size), g = |ρ̃ − ρ̃*|/(ρ̃ + ρ̃*) how far the smoke near the cell is from
 * its target, of the blurred fields (ρ̃ from the coarse rho_blur_coarse, at
 * the cell's centre; 0 where they match: arrived smoke is left to the
 * gathering, the target stays the fixed point, and its fine detail, where ρ
 * and ρ* differ cell by cell after the smoke has arrived, does not keep it
 * mixing), n = max(min(1, near_w·ρ̃* ÷ (METHOD_MIX_NEAR·dscale)),
 * METHOD_MIX_TRANSIT) whether the target is there (a twentieth for smoke in
 * transit; near_w the step's method_mix_near, 0 while a compression's drift
 * waits). Then the explicit iterations ρ += Σ_faces ½(d_c + d_n)
 * (ρ_n − ρ_c), carried on the increment δ = ρ − ρ0 (first: δ = 0) and
 * added to ρ0 once: the face fluxes cancel in pairs (mass kept) and take at
 * most 4·METHOD_MIX_CAP of a cell (ρ ≥ 0). (Iterating on ρ itself lost the
 * flux a dense cell gives where it is under half an ulp of its density,
 * while the faint cell it goes to kept it: the mass grew by about 1e-9 an
 * iteration, 9e-5 over 3000 steps at 512².) */
void ref_pass_mix_coef(int w, int h, float k, float hh, const float *u, const float *v, const float *wu,
                       const float *wv, const BlurSpec *spec, const float *rho_blur_coarse, const float *tgt_blur,
                       const float *rho, const float *tgt, float edge_w, float near_w, float dscale, float *d);
/* With rho and tgt (ρ and ρ*, the step's density before the mixing and the
 * target; NULL: the blurred mismatch alone), g is the larger of the blurred
 * mismatch and edge_w times how much sharper the smoke is than its target
 * at the cell: (|∇²ρ| − |∇²ρ*|)₊ ÷ (|∇²ρ| + |∇²ρ*| +
 * METHOD_MIX_EDGE_EPS·dscale), ∇² the 5-point Laplacian without the wall's
 * terms. So an edge the target does not have there (the rim of a level
 * printed before the rest of the shape has come, a front, a moat) is mixed
 * even where the blurred fields match, and the target's own edges, and
 * smoke that has arrived, are not. edge_w is the step's mix_edge_w
 * (MethodStep): its rg, since the edges this answers are the gathering's
 * and the drift's and they join the morph together, faded out long after
 * the arrival (method_mix_edge_w). With rho, n is also at least how much
 * thinner than the mixing's length L the smoke is at the cell (the fine gate:
 * smoothstep(METHOD_MIX_FINE_LO, METHOD_MIX_FINE_HI, |∇²ρ|·(L/h)² ÷
 * (max(ρ, ρ̄) + METHOD_MIX_EDGE_EPS·dscale)), ρ̄ the mean of the neighbours
 * inside the grid), so a filament in transit that the strain thins below
 * about L/2 is mixed whole (method.h; never at L ≤ h). */
/* With the drift's transport speeds wu, wv (flow + drift, the step's
 * METHOD_PASS_DRIFT_VEL; NULL when it did not run), |S| is the larger of
 * the flow's strain rate and the transport's own: its strain plus its
 * compression |∇·w|. The drift is not divergence-free: where it converges
 * it thins the smoke into fronts as a strain does (a small dense disc
 * spread into a large faint square left a sharp-edged plateau in its middle,
 * 2.70x the greater of start's and target's stripes at 512²). */
void ref_pass_mix_iter(int w, int h, const float *d, const float *rho0, const float *delta, bool first,
                       float *delta_out);
void ref_pass_mix_apply(int w, int h, const float *rho0, const float *delta, float *rho_out);
/* Implicit gathering: e − a∇·(D∇e) = ρ0 − ρ*, a = dt·vg/h², D = ρ0·ρ̃*
 * (face D = mean of the two cells), walls no-flux. One Jacobi iteration: */
void ref_pass_gather_jacobi(int w, int h, float a, const float *rho0, const float *tgt,
                            const float *tgt_blur, const float *e, float *e_out);
/* Then ρ = ρ0 − Σ fluxes a·D_f·(e_c − e_n), each limited by its donor's
 * positivity ratio: conservative and positive however far e has converged. */
void ref_pass_gather_apply(int w, int h, float a, const float *rho0, const float *tgt_blur,
                           const float *e, float *rho_out);
/* ... which is two passes: each cell's ratio, then the limited fluxes. */
void ref_pass_gather_ratio(int w, int h, float a, const float *rho0, const float *tgt_blur,
                           const float *e, float *ratio);
void ref_pass_gather_flux(int w, int h, float a, const float *rho0, const float *tgt_blur,
                          const float *e, const float *ratio, float *rho_out);

#endif
