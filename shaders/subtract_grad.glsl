// subtract_grad: u -= ∇p on the interior faces; wall faces stay zero. The
// pressure is packed (packed.glsl).
#include "packed.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_p;

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec2 vel = texelFetch(u_vel, c, 0).rg;
    float pc = packed_at(u_p, c);
    float nu = i > 0 ? vel.x - (pc - packed_at(u_p, ivec2(i - 1, j))) / u_h : 0.0;
    float nv = j > 0 ? vel.y - (pc - packed_at(u_p, ivec2(i, j - 1))) / u_h : 0.0;
    return vec4(nu, nv, 0.0, 0.0);
}
