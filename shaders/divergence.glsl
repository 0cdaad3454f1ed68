// divergence: ∇·u of the staggered velocity per cell, walls zero, written
// packed (packed.glsl) for the pressure solve: four cells per fragment.
#include "packed.glsl"

uniform sampler2D u_vel;

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 d = vec4(divergence_at(u_vel, i.x, j.x), divergence_at(u_vel, i.y, j.y),
                  divergence_at(u_vel, i.z, j.z), divergence_at(u_vel, i.w, j.w));
    return packed_sel(packed_valid(T), d);
}
