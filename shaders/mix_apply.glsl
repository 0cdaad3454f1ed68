// mix_apply: the subgrid mixing's increment δ (packed, from mix.glsl) added
// to the density once: ρ = ρ0 + δ; ρ*, ρ̃* pass through. Mirrors
// ref_pass_mix_apply in src/cpu_solver.c.
#include "packed.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*, ρ̃*
uniform sampler2D u_delta; // packed

vec4 stage()
{
    ivec2 c = cell();
    vec4 d0 = texelFetch(u_dens, c, 0);
    return vec4(d0.r + packed_at(u_delta, c), d0.g, d0.b, d0.a);
}
