// target_blur: last stage of the target's blur. Writes the density texture
// back with .b = ρ̃*, the coarse blurred target read by sample_coarse (its
// B-spline above factor 1) at the cell centre (ρ and ρ* pass through).
#include "sim.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_coarse;
uniform int u_factor;
uniform ivec2 u_csize;

vec4 stage()
{
    ivec2 c = cell();
    vec4 d = texelFetch(u_dens, c, 0);
    float tb = sample_coarse(u_coarse, u_factor, u_csize, vec2(c) + 0.5);
    return vec4(d.r, d.g, tb, 0.0);
}
