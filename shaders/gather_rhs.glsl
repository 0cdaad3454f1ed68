// gather_rhs: the gathering solve's right-hand side ρ0 − ρ* of every cell,
// packed 2x2 cells to a texel (packed.glsl), once per step: each Jacobi
// iteration of gather_jacobi then reads a quarter of what the density field
// would cost it.
#include "packed.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*

float rhs(int i, int j)
{
    vec4 d = texelFetch(u_dens, ivec2(i, j), 0);
    return d.r - d.g;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 b = vec4(rhs(i.x, j.x), rhs(i.y, j.y), rhs(i.z, j.z), rhs(i.w, j.w));
    return packed_sel(packed_valid(T), b);
}
