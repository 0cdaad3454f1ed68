/* fidelity: how close, how smoke-like and how smooth a morph is, measured on
 * plain density arrays (W*H floats, row-major, row 0 at the top). Pure
 * functions; never touches GL, freeglut or libpng. tools/fidelity runs the
 * suite of pairs and prints these numbers; docs/FIDELITY.md explains them.
 *
 *   double e  = fidelity_error(rho, tgt, n);                 // Σ|ρ−ρ*| / Σρ*
 *   double s;
 *   double bd = fidelity_blend_distance(rho, start, tgt, n, &s);
 *   double r  = fidelity_stripe_ratio(fidelity_stripes(rho, w, h),
 *                                     fidelity_stripes(start, w, h));
 *   double d  = fidelity_distance_resampled(rho128, 128, 128, rho512, 512, 512);
 *
 * Sums are taken in double. A measure that is undefined for its input (an
 * empty target, mismatched aspects, no memory) returns NaN.
 */
#ifndef SMOKEMORPH_FIDELITY_H
#define SMOKEMORPH_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>

/* The morph's error: Σ|ρ − ρ*| / Σρ* over n cells (normalised L1; 0 is a
 * perfect match, 1 is e.g. all the smoke where the target has none, when
 * both hold the same mass). NaN when Σρ* <= 0. */
double fidelity_error(const float *rho, const float *tgt, size_t n);

/* The blend distance: how far ρ is from every linear cross-fade of start and
 * target,
 *     min over s in [0, 1] of  Σ|ρ − ((1 − s)·start + s·tgt)| / Σtgt.
 * A morph that only cross-fades reads 0 (at its blend weight s); smoke that
 * has moved reads well above 0. The sum is convex and piecewise linear in s,
 * with a breakpoint per cell where start ≠ tgt, so the minimum is exact: the
 * weighted median of the breakpoints (weights |tgt − start|), clamped to
 * [0, 1]. s_best (may be NULL) receives the minimising s. Pass the target at
 * the start's mass (as the morph uses it). NaN when Σtgt <= 0 or out of
 * memory. */
double fidelity_blend_distance(const float *rho, const float *start, const float *tgt, size_t n,
                               double *s_best);

/* The stripe measure: high-frequency content along both diagonals,
 *     mean over interior cells (0 < i < w−1, 0 < j < h−1) of
 *         |ρ(i+1,j+1) − 2ρ(i,j) + ρ(i−1,j−1)| + |ρ(i+1,j−1) − 2ρ(i,j) + ρ(i−1,j+1)|
 *     divided by the mean density over all cells,
 * so it does not depend on the density scale (stripes(c·ρ) = stripes(ρ)).
 * Constant and linear fields read 0; a smooth soft-edged shape reads little,
 * and less on a finer grid; diagonal stripes a few cells apart read O(1) and
 * more (stripes of period 4 cells along i+j, 0 and 1, read exactly 4). Its
 * blind spot: the one-cell checkerboard (−1)^(i+j) has equal diagonal
 * neighbours and reads 0. 0 for a grid with a side < 3 or a zero field. */
double fidelity_stripes(const float *rho, int w, int h);

/* stripes / stripes_start: how much a frame's stripes exceed the start's
 * (1 = no more than the start image). When stripes_start <= 0: 1 if
 * stripes <= 0 too, else +infinity. */
double fidelity_stripe_ratio(double stripes, double stripes_start);

/* The distance between two densities of the same aspect on different grids
 * (e.g. the same morph run at 128² and 512²): the finer one is area-averaged
 * down to the coarser grid (exact box overlaps, so any size ratio works),
 * each is normalised to unit mass, and the result is Σ|â − b̂| over the
 * coarse grid, in [0, 2] (0: the same picture, 2: no overlap at all). Equal
 * sizes compare directly. NaN when the aspects differ (aw·bh ≠ ah·bw), a
 * field has no mass, or out of memory. */
double fidelity_distance_resampled(const float *a, int aw, int ah, const float *b, int bw, int bh);

/* When a run without a step count stops: the morph has arrived when its
 * error is at most FIDELITY_ARRIVED, and has settled when the error has not
 * fallen by FIDELITY_SETTLE_GAIN (relative) of its best for
 * FIDELITY_SETTLE_STEPS steps. Zero the struct, then feed it every observed
 * (step, error); it returns FIDELITY_RUNNING, FIDELITY_ARRIVED_AT or
 * FIDELITY_SETTLED_AT. */
#define FIDELITY_ARRIVED 0.03
#define FIDELITY_SETTLE_GAIN 0.01
#define FIDELITY_SETTLE_STEPS 500L
typedef struct {
    bool started;
    double best;     /* the best error so far */
    long best_step;  /* the step of the last gain of FIDELITY_SETTLE_GAIN */
} FidelitySettle;
enum { FIDELITY_RUNNING = 0, FIDELITY_ARRIVED_AT = 1, FIDELITY_SETTLED_AT = 2 };
int fidelity_settle_update(FidelitySettle *s, long step, double error);

/* ---- does the flow carry the smoke? (issue 20) ------------------------------ */

/* The print-through index P = corr(H(ρ) − H(start), H(tgt)), H(x) = x − G*x
 * with G a Gaussian of FIDELITY_PRINT_SIGMA cells (edges clamped): whether
 * the fine detail that appeared since the start has the shape of the
 * target's fine detail. Smoke that has not arrived reads about 0, a target
 * printed in where the smoke stands reads up to 1. Pearson's correlation
 * over all cells; 0 when either side has no fine detail; NaN when out of
 * memory. */
#define FIDELITY_PRINT_SIGMA 1.5
double fidelity_print_through(const float *rho, const float *start, const float *tgt, int w, int h);

/* The flow share: how much of the density's change a flow explains.
 * Feed it every step (rho0 -> rho1, moved by the velocity ux, uy at the cell
 * centres, in cells per step): it adds
 *     r = (ρ1 − ρ0) + ∇·(ρ0 u)   (centred differences, 0 outside the grid)
 * to U's sums Σ|r| and Σ|ρ1 − ρ0|, and the same with r and ρ1 − ρ0 both
 * blurred by a Gaussian of FIDELITY_COARSE_SIGMA of the shorter side (Uc's:
 * local compression drops out, long-range transport stays; the blur runs
 * on a grid box-averaged so that the Gaussian is about 4 cells there). With
 * enstrophy on, also the mean enstrophy ½Σω²h² (ω = ∂v/∂x − ∂u/∂y in 1/time,
 * h the cell, the velocity given in cells per step and turned into domain
 * units per time with cell and dt). 0, or -1 when out of memory. */
#define FIDELITY_COARSE_SIGMA 0.1
typedef struct {
    double r, d;       /* Σ|r|, Σ|Δρ| */
    double rc, dc;     /* the same, blurred */
    double enstrophy;  /* Σ over the steps of ½Σω²h² */
    long steps;
} FidelityFlow;
int fidelity_flow_add(FidelityFlow *f, const float *rho0, const float *rho1, const float *ux,
                      const float *uy, int w, int h, double cell, double dt);
/* U = Σ|r| / Σ|Δρ| and Uc likewise (NaN before any change); the mean
 * enstrophy over the steps added (NaN before any). */
double fidelity_flow_u(const FidelityFlow *f);
double fidelity_flow_uc(const FidelityFlow *f);
double fidelity_flow_enstrophy(const FidelityFlow *f);
/* Add b's sums to a (b: other steps' fidelity_flow_add, e.g. one step's,
 * counted into two windows). */
void fidelity_flow_merge(FidelityFlow *a, const FidelityFlow *b);

/* The front: smoke must never be visible farther from where smoke was at
 * the start than the flow's speed limit could have carried it, plus the
 * blur's width. The limit clamps each component of the velocity (umax on
 * each axis), so what the flow can reach in time t is a square of half-side
 * umax·t around each start cell: the distance is the chessboard one,
 * max(|Δi|, |Δj|). fidelity_front_map gives each cell's distance, in cells,
 * to the nearest cell where start > thresh (a malloc'd W*H array; NULL when
 * out of memory; +inf everywhere when no cell is);
 * fidelity_front_excess the largest (distance − reach) over the cells where
 * rho > thresh, in cells, 0 when no visible cell is beyond the reach. The
 * suite's thresh is FIDELITY_FRONT_VISIBLE of the start's peak. */
#define FIDELITY_FRONT_VISIBLE 0.02
float *fidelity_front_map(const float *start, int w, int h, float thresh);
double fidelity_front_excess(const float *rho, const float *map, int w, int h, float thresh,
                             double reach);

#endif
