// divergence: ∇·u of the staggered velocity per cell, walls zero.
#include "sim.glsl"

uniform sampler2D u_vel;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float d = (Uf(u_vel, i + 1, j) - Uf(u_vel, i, j) + Vf(u_vel, i, j + 1) - Vf(u_vel, i, j)) / u_h;
    o_out = vec4(d, 0.0, 0.0, 0.0);
}
