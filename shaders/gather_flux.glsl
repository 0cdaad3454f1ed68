// gather_flux.glsl: the gathering flux a·D_f·(e_c − e_n) between two cells,
// D = ρ0·ρ̃* (face value the mean of both), shared by gather_ratio and
// gather_apply (gather_flux and gather_ratio in src/cpu_solver.c). e is packed
// (packed.glsl).
#include "packed.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*, ρ̃*
uniform sampler2D u_e;     // packed
uniform float u_a;
const ivec2 NB[4] = ivec2[4](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1));

bool inside(ivec2 p) { return p.x >= 0 && p.x < u_size.x && p.y >= 0 && p.y < u_size.y; }

float coefD(ivec2 p)
{
    vec4 d = texelFetch(u_dens, p, 0);
    return d.r * d.b;
}

float flux(ivec2 c, ivec2 n)
{
    float df = u_a * 0.5 * (coefD(c) + coefD(n));
    return df * (packed_at(u_e, c) - packed_at(u_e, n));
}

