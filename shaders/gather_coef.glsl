// gather_coef: the gathering coefficient D = ρ0·ρ̃* of every cell, packed
// 2x2 cells to a texel (packed.glsl), once per step for the Jacobi
// iterations of gather_jacobi.
#include "packed.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*, ρ̃*

float coef(int i, int j)
{
    vec4 d = texelFetch(u_dens, ivec2(i, j), 0);
    return d.r * d.b;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 D = vec4(coef(i.x, j.x), coef(i.y, j.y), coef(i.z, j.z), coef(i.w, j.w));
    return packed_sel(packed_valid(T), D);
}
