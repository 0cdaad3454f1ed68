// splat_density: adds or erases smoke: ρ += u_amount · exp(−d²/r²) around
// u_point (fine cell units, cell centres at i + 0.5), never below 0; the
// target and the blurred target (.g, .b) pass through. Mass changes here on
// purpose (the window's add and erase buttons).
#include "sim.glsl"

uniform sampler2D u_dens;
uniform vec2 u_point;
uniform float u_amount;
uniform float u_radius;

vec4 stage()
{
    ivec2 c = cell();
    vec4 d = texelFetch(u_dens, c, 0);
    vec2 f = vec2(c) + 0.5 - u_point;
    d.r = max(d.r + u_amount * exp(-dot(f, f) / (u_radius * u_radius)), 0.0);
    return d;
}
