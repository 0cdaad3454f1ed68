// advect_density: the second half of one substep of density transport
// (advect_apply in src/refsolver.c). Each face flux from advect_ratio is
// scaled by its donor's ratio, so ρ stays ≥ 0, and every flux leaves one
// cell exactly as it enters the next: Σρ is conserved. ρ*, ρ̃* (.g, .b)
// pass through.
#include "sim.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_ratio;  // .r ratio, .g left-face flux, .b bottom-face flux

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec4 d0 = texelFetch(u_dens, c, 0);
    vec4 me = texelFetch(u_ratio, c, 0);
    // the right and top faces are the neighbours' left and bottom; the walls carry nothing
    vec4 rt = i + 1 < u_size.x ? texelFetch(u_ratio, ivec2(i + 1, j), 0) : vec4(1.0, 0.0, 0.0, 0.0);
    vec4 up = j + 1 < u_size.y ? texelFetch(u_ratio, ivec2(i, j + 1), 0) : vec4(1.0, 0.0, 0.0, 0.0);
    float r = d0.r, f;
    f = me.g;  // a positive flux on the left face enters from cell i-1
    if (f != 0.0) r += f * (f > 0.0 ? texelFetch(u_ratio, ivec2(i - 1, j), 0).r : me.r);
    f = rt.g;
    if (f != 0.0) r -= f * (f > 0.0 ? me.r : rt.r);
    f = me.b;
    if (f != 0.0) r += f * (f > 0.0 ? texelFetch(u_ratio, ivec2(i, j - 1), 0).r : me.r);
    f = up.b;
    if (f != 0.0) r -= f * (f > 0.0 ? me.r : up.r);
    return vec4(max(r, 0.0), d0.g, d0.b, 0.0);
}
