/* viewfield: the classroom views' fields, computed GL-free from a morph's
 * state (method.h's MethodState, as morph_get_state reads it back on any
 * backend), so that every view is the same numbers on the CPU reference and
 * on the GPU, and tests without a window.
 *
 *   ViewField vf;                       // W*H scalars, optional W*H*2 vectors
 *   viewfield_compute(VIEW_PRESSURE, &st.solver, &params, w, h, &vf, err, n);
 *   ...                                 // vf.scalar, vf.range, vf.label
 *   viewfield_free(&vf);
 *
 * The fields, W*H floats each, row 0 at the top, at the cell centres:
 *   speed      |u| of the cell-centred velocity (the mean of its two faces);
 *   velocity   the density ρ, with the cell-centred velocity as vectors;
 *   vorticity  ω = ∂u/∂y − ∂v/∂x in rows (y down), that is the curl with y
 *              up: positive turns counter-clockwise on screen; central
 *              differences of the cell-centred velocity (one-sided at walls);
 *   pressure   p, the projection's solution as the step left it (it is the
 *              next step's warm start);
 *   divergence ∇·u after the projection (the velocity the step left), and
 *              before it: the same velocity with ∇p added back on every
 *              interior face (the projection subtracted exactly that), so
 *              both come from the state without re-running the step;
 *   force      v_f·F, the driving force the next step applies to this state
 *              (cpu_solver's force pass with dt = 1, no damping and no clamp:
 *              Fattal's ρ̃ ∇ρ̃* / ρ̃*, or the balance force with the deficit
 *              potential φ), its magnitude at the cell centres and its
 *              vectors; v_f eased as method_plan eases it at this step;
 *   gathering  v_g·G = v_g ∇·[ρ ρ̃* ∇(ρ − ρ*)] on this state, explicit
 *              (the step solves it implicitly), 0 with gathering off; face
 *              coefficients the mean of the two cells' ρρ̃*, walls no flux.
 */
#ifndef SMOKEMORPH_VIEWFIELD_H
#define SMOKEMORPH_VIEWFIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"

#include "viewkind.h" /* ViewKind: the views, in the order the `v` key cycles them */

/* "density", "target", "blurred", "velocity", "speed", "vorticity",
 * "pressure", "divergence", "force", "gathering", "fig2": --view's names. */
const char *viewfield_name(int view);
/* The label drawn in the window ("pressure p", ...). */
const char *viewfield_title(int view);
/* The view named NAME, or -1. */
int viewfield_parse(const char *name);
/* Every name, comma-separated (for messages and --help). */
const char *viewfield_names(void);
/* Whether the view draws a colour-mapped field computed here (speed,
 * vorticity, pressure, divergence, force, gathering; velocity draws the
 * density with arrows), rather than the density texture as it is. */
bool viewfield_computed(int view);

/* A colour bar's range: [lo, hi], lo = -hi for a signed field. */
typedef struct {
    float lo, hi;
    bool sign;
} ViewRange;

/* The range of n values: 0..nice(max) (sign: -nice(max|v|)..nice(max|v|)),
 * nice(x) the smallest 1, 2 or 5 times a power of ten >= x; a field of
 * zeros (or NaN) gets 0..1 (-1..1). */
ViewRange viewfield_range(const float *v, size_t n, bool sign);
/* nice() alone. */
float viewfield_nice(float x);

typedef struct {
    int w, h;
    float *scalar;   /* W*H: what the colour map shows */
    float *scalar2;  /* W*H: the divergence view's second panel (after); else NULL */
    float *vec;      /* W*H*2 (x right, y down, domain units per time): arrows; else NULL */
    ViewRange range; /* of scalar (and scalar2: the divergence view shares one) */
    float vmax;      /* max |vec| (0 without vectors) */
    double max1, max2; /* max|scalar|, max|scalar2| (the divergence view's labels) */
} ViewField;

/* The field of a computed view (or velocity) from the state st of a W x H
 * morph with parameters p. 0, or -1 with err filled (out of memory, or a
 * view that computes nothing). f is overwritten; free it with
 * viewfield_free. */
int viewfield_compute(int view, const MethodState *st, const SolverParams *p, int w, int h, ViewField *f,
                      char *err, size_t errlen);
void viewfield_free(ViewField *f);

#endif
