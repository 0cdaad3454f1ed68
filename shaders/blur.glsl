// blur: one axis of the separable Gaussian on the coarse grid, clamped edges.
// u_weights[0..u_radius] are normalized (w0 + 2 Σ wk = 1). Every channel
// (ρ̃ uses .r; the flow's statistics all four).
#include "sim.glsl"

uniform sampler2D u_src;
uniform ivec2 u_csize;
uniform int u_axis;
uniform int u_radius;
uniform float u_weights[SM_BLUR_TAPS]; // METHOD_BLUR_TAPS (method.h)

vec4 stage()
{
    ivec2 c = cell();
    vec4 acc = u_weights[0] * texelFetch(u_src, c, 0);
    for (int k = 1; k <= u_radius; k++) {
        ivec2 a = c, b = c;
        if (u_axis == 0) {
            a.x = clamp(c.x - k, 0, u_csize.x - 1);
            b.x = clamp(c.x + k, 0, u_csize.x - 1);
        } else {
            a.y = clamp(c.y - k, 0, u_csize.y - 1);
            b.y = clamp(c.y + k, 0, u_csize.y - 1);
        }
        acc += u_weights[k] * (texelFetch(u_src, a, 0) + texelFetch(u_src, b, 0));
    }
    return acc;
}
