/* gpu_solver_debug: the GPU solver's test-only interface: upload or read any
 * field, run one pass of the method's list on the current fields. The pass
 * tests (tests/test_gpu_passes.c) compare these against the CPU reference's
 * passes; nothing in the program itself uses it.
 *
 *   solver_debug_upload(s, SOLVER_FIELD_VELOCITY, uv);
 *   solver_debug_pass(s, SOLVER_PASS_ADVECT_VEL, false);
 *   solver_debug_read(s, SOLVER_FIELD_VELOCITY, out);
 */
#ifndef SMOKEMORPH_SOLVER_DEBUG_H
#define SMOKEMORPH_SOLVER_DEBUG_H

#include <stdbool.h>

#include "gpu_solver.h"

typedef enum {
    SOLVER_PASS_FORCE,          /* blur ρ (downsample, blur x, blur y) then force */
    SOLVER_PASS_ADVECT_VEL,
    SOLVER_PASS_DIVERGENCE,
    SOLVER_PASS_JACOBI,         /* one iteration */
    SOLVER_PASS_VCYCLE,         /* one multigrid V-cycle on the pressure */
    SOLVER_PASS_SUBTRACT_GRAD,
    SOLVER_PASS_ADVECT_DENSITY, /* the transport stage: the substeps its speed asks (method.h) */
    SOLVER_PASS_GATHER_JACOBI,  /* one iteration; first: the first, from e = 0 */
    SOLVER_PASS_GATHER_APPLY,
    SOLVER_PASS_BLUR_DENSITY,   /* ρ̃ on the coarse grid only */
    SOLVER_PASS_DRIFT_VEL       /* blur ρ, then the drift's face speeds from the
                                   current φ (none of the drift's transport) */
} SolverPass;

typedef enum {
    SOLVER_FIELD_DENSITY,   /* 4 floats per cell: ρ, ρ*, ρ̃*, 0 */
    SOLVER_FIELD_VELOCITY,  /* 4 floats per cell: u, v, 0, 0 */
    SOLVER_FIELD_PRESSURE,  /* 1 float */
    SOLVER_FIELD_DIVERGENCE,/* 1 float */
    SOLVER_FIELD_GATHER_E,  /* 1 float */
    SOLVER_FIELD_RHO_BLUR,  /* 1 float per coarse cell */
    SOLVER_FIELD_RATIO,     /* 1 float: the last positivity ratios (read only) */
    SOLVER_FIELD_POTENTIAL, /* 1 float: the balance force's deficit potential φ */
    SOLVER_FIELD_DRIFT      /* 4 floats per cell: the drift's face speeds wu, wv, 0, 0 */
} SolverField;

int solver_debug_upload(Solver *s, SolverField f, const float *data);
int solver_debug_read(Solver *s, SolverField f, float *out);
/* Runs one pass on the current fields; first selects the first gathering
 * iteration. */
int solver_debug_pass(Solver *s, SolverPass pass, bool first);

#endif
