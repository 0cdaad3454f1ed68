// advect_density: the second half of one substep of density transport on
// the fragment backend: each face flux from advect_ratio scaled by its
// donor's ratio (transport.glsl). ρ*, ρ̃* (.g, .b) pass through.
#include "sim.glsl"
#include "transport.glsl"

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
    // a donor left of or below the field never donates (its face is a wall)
    float rl = me.g > 0.0 ? texelFetch(u_ratio, ivec2(i - 1, j), 0).r : 1.0;
    float rb = me.b > 0.0 ? texelFetch(u_ratio, ivec2(i, j - 1), 0).r : 1.0;
    float r = transport_apply(d0.r, me.g, rt.g, me.b, up.b, me.r, rl, rt.r, rb, up.r);
    return vec4(r, d0.g, d0.b, 0.0);
}
