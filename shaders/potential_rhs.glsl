// potential_rhs: the right-hand side of the balance force's deficit
// potential, ∇²φ = ρ − c·ρ* (cpu_solver.h, ref_pass_force), written packed
// (packed.glsl) for the multigrid solve: four cells per fragment.
#include "packed.glsl"

uniform sampler2D u_dens;  // .r ρ, .g ρ*
uniform float u_c;         // c: the target scaled to the density's mass

float rhs_at(int i, int j)
{
    vec2 d = texelFetch(u_dens, ivec2(min(i, u_size.x - 1), min(j, u_size.y - 1)), 0).rg;
    return d.x - u_c * d.y;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 b = vec4(rhs_at(i.x, j.x), rhs_at(i.y, j.y), rhs_at(i.z, j.z), rhs_at(i.w, j.w));
    return packed_sel(packed_valid(T), b);
}
