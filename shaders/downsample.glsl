// downsample: first stage of the blur. Coarse cell (I, J) = mean of the
// factor x factor block of fine cells it covers (clipped at the edges).
// Reads channel u_chan of u_src (0 = ρ, 1 = ρ*). Output: coarse .r.
#include "sim.glsl"

uniform sampler2D u_src;
uniform int u_chan;
uniform int u_factor;

vec4 stage()
{
    ivec2 c = cell();
    int f = u_factor;
    float sum = 0.0;
    int n = 0;
    for (int j = c.y * f; j < c.y * f + f && j < u_size.y; j++)
        for (int i = c.x * f; i < c.x * f + f && i < u_size.x; i++) {
            sum += texelFetch(u_src, ivec2(i, j), 0)[u_chan];
            n++;
        }
    return vec4(sum / float(n), 0.0, 0.0, 0.0);
}
