// observe: what an exported frame's metrics need, in one texture, so one
// read-back serves the frame, the error, the mass and max|∇·u|:
// .r ρ, .g ρ*, .b |∇·u| of the staggered velocity (walls zero).
#include "sim.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_vel;

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec4 d = texelFetch(u_dens, c, 0);
    return vec4(d.r, d.g, abs(divergence_at(u_vel, i, j)), 0.0);
}
