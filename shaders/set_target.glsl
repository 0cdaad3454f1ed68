// set_target: keep ρ, take a new target ρ* (scaled by u_scale) from u_tgt.r;
// ρ̃* is filled in afterwards by downsample / blur / target_blur.
#include "sim.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_tgt;
uniform float u_scale;

vec4 stage()
{
    ivec2 c = cell();
    return vec4(texelFetch(u_dens, c, 0).r, texelFetch(u_tgt, c, 0).r * u_scale, 0.0, 0.0);
}
