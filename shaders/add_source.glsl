// add_source: a source's smoke for one step, ρ += u_amount · w, with w the
// source's weights (uploaded once, morph.h's MorphSource) and u_amount its
// rate·dt; ρ*, ρ̃* pass through. As ref_add_source.
#include "sim.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_src;
uniform float u_amount;

vec4 stage()
{
    ivec2 c = cell();
    vec4 d = texelFetch(u_dens, c, 0);
    return vec4(d.r + u_amount * texelFetch(u_src, c, 0).r, d.gba);
}
