// gather_apply: ρ = ρ0 − Σ a·D_f·(e_c − e_n) over the four faces, each flux
// scaled by its donor's ratio from gather_ratio: conservative and positive
// however far the Jacobi iterations for e went.
#include "gather_flux.glsl"

uniform sampler2D u_ratio;

vec4 stage()
{
    ivec2 c = cell();
    vec4 d0 = texelFetch(u_dens, c, 0);
    float r = d0.r;
    float rc = texelFetch(u_ratio, c, 0).r;
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + NB[q];
        if (!inside(n)) continue;
        float f = flux(c, n);
        if (f > 0.0) r -= f * rc;
        else if (f < 0.0) r -= f * texelFetch(u_ratio, n, 0).r;
    }
    return vec4(max(r, 0.0), d0.g, d0.b, 0.0);
}
