// divergence: ∇·u of the staggered velocity per cell, walls zero, written
// packed (packed.glsl) for the pressure solve: four cells per fragment.
#include "packed.glsl"

uniform sampler2D u_vel;
out vec4 o_out;

float div_at(int i, int j)
{
    return (Uf(u_vel, i + 1, j) - Uf(u_vel, i, j) + Vf(u_vel, i, j + 1) - Vf(u_vel, i, j)) / u_h;
}

void main()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 d = vec4(div_at(i.x, j.x), div_at(i.y, j.y), div_at(i.z, j.z), div_at(i.w, j.w));
    o_out = packed_sel(packed_valid(T), d);
}
