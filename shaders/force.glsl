// force: driving force and damping on the faces (seed 003, eq. for F):
//   u = clamp((u + dt·vf·ρ̃ ∂ρ̃* / max(ρ̃*, eps)) / (1 + dt·vd), ±umax)
// ρ̃ is the coarse blurred current density sampled at the face; ρ̃* and its
// difference come from the two cells beside the face.
#include "sim.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform sampler2D u_rblur;
uniform int u_factor;
uniform ivec2 u_csize;
uniform float u_k;     // dt·vf/h
uniform float u_damp;  // 1/(1 + dt·vd)
uniform float u_umax;
uniform float u_eps;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec2 vel = texelFetch(u_vel, c, 0).rg;
    float tc = texelFetch(u_dens, c, 0).b;
    float nu = 0.0, nv = 0.0;
    if (i > 0) {
        float tl = texelFetch(u_dens, ivec2(i - 1, j), 0).b;
        float rb = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i), float(j) + 0.5));
        float tf = max(0.5 * (tl + tc), u_eps);
        nu = clamp((vel.x + u_k * rb * (tc - tl) / tf) * u_damp, -u_umax, u_umax);
    }
    if (j > 0) {
        float tb = texelFetch(u_dens, ivec2(i, j - 1), 0).b;
        float rb = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i) + 0.5, float(j)));
        float tf = max(0.5 * (tb + tc), u_eps);
        nv = clamp((vel.y + u_k * rb * (tc - tb) / tf) * u_damp, -u_umax, u_umax);
    }
    o_out = vec4(nu, nv, 0.0, 0.0);
}
