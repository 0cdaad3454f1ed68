// jacobi: one damped Jacobi iteration of the pressure Poisson equation
// ∇²p = ∇·u (p absorbs dt) on one multigrid level (level 0 is the grid, with
// u_h the cell size; coarser levels use u_h = 1), four cells per fragment
// (packed.glsl). Neumann walls: only neighbours inside the box count.
// p += ω (p_jacobi − p), ω = SM_JACOBI_OMEGA (METHOD_JACOBI_OMEGA in method.h, injected by the loader): plain Jacobi leaves the
// checkerboard mode undamped in a closed box. With u_zero = 1 the previous
// iterate is p = 0 (a coarse level's first iteration of a V-cycle), so the
// level needs no clearing. The compute backend runs several iterations a
// dispatch with jacobi_tile, on the same packed_jacobi.
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
uniform int u_zero;

vec4 stage()
{
    ivec2 T = cell();
    vec4 pc = texelFetch(u_p, T, 0);
    PackedNb nb = packed_neighbours(u_p, T, pc);
    if (u_zero != 0) {
        pc = nb.l = nb.r = nb.d = nb.u = vec4(0.0);
    }
    return packed_jacobi(T, pc, nb, texelFetch(u_div, T, 0), u_h);
}
