// splat: stirs the smoke: adds u_force · exp(−d²/r²) to the face velocities
// around u_point (fine cell units), clamped to ±u_umax. Walls stay zero.
#include "sim.glsl"

uniform sampler2D u_vel;
uniform vec2 u_point;
uniform vec2 u_force;
uniform float u_radius;
uniform float u_umax;

vec4 stage()
{
    ivec2 c = cell();
    vec2 vel = texelFetch(u_vel, c, 0).rg;
    vec2 fu = vec2(float(c.x), float(c.y) + 0.5) - u_point;
    vec2 fv = vec2(float(c.x) + 0.5, float(c.y)) - u_point;
    float r2 = u_radius * u_radius;
    float nu = c.x > 0 ? clamp(vel.x + u_force.x * exp(-dot(fu, fu) / r2), -u_umax, u_umax) : 0.0;
    float nv = c.y > 0 ? clamp(vel.y + u_force.y * exp(-dot(fv, fv) / r2), -u_umax, u_umax) : 0.0;
    return vec4(nu, nv, 0.0, 0.0);
}
