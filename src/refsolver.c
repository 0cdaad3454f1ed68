/* refsolver: the discrete morph step on the CPU; see refsolver.h. */
#include "refsolver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void solver_params_default(SolverParams *p)
{
    p->dt = 0.01f;
    p->vf = 0.5f;
    p->vd = 2.0f;
    p->vg = 0.002f;
    p->sigma = 0.04f;
    p->jacobi = 40;
    p->gather_iters = 10;
    p->umax = 0.5f;
    p->eps = 1e-4f;
    p->gather = true;
}

const char *solver_params_check(const SolverParams *p)
{
    if (!(p->dt > 0.0f && p->dt <= 1.0f)) return "--dt must be in (0, 1]";
    if (!(p->vf >= 0.0f && p->vf <= 1e4f)) return "--vf must be in [0, 10000]";
    if (!(p->vd >= 0.0f && p->vd <= 1e4f)) return "--vd must be in [0, 10000]";
    if (!(p->vg >= 0.0f && p->vg <= 1e4f)) return "--vg must be in [0, 10000]";
    if (!(p->sigma > 0.0f && p->sigma <= 1.0f)) return "--sigma must be in (0, 1] (domain units)";
    if (p->jacobi < 1 || p->jacobi > 10000) return "--jacobi must be in [1, 10000]";
    if (p->gather_iters < 1 || p->gather_iters > 10000) return "--gather-iters must be in [1, 10000]";
    if (!(p->umax > 0.0f && p->umax <= 100.0f)) return "--umax must be in (0, 100]";
    if (!(p->eps > 0.0f && p->eps < 1.0f)) return "eps must be in (0, 1)";
    return NULL;
}
