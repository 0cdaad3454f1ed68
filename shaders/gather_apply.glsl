// gather_apply: ρ = ρ0 − Σ a·D_f·(e_c − e_n) over the four faces, each flux
// scaled by its donor's positivity ratio min(1, ρ0/outflow): conservative and
// positive however far the Jacobi iterations for e went.
#include "sim.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*, ρ̃*
uniform sampler2D u_e;
uniform float u_a;
out vec4 o_out;

const ivec2 NB[4] = ivec2[4](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1));

bool inside(ivec2 p) { return p.x >= 0 && p.x < u_size.x && p.y >= 0 && p.y < u_size.y; }

float coefD(ivec2 p)
{
    vec4 d = texelFetch(u_dens, p, 0);
    return d.r * d.b;
}

float flux(ivec2 c, ivec2 n)
{
    float df = u_a * 0.5 * (coefD(c) + coefD(n));
    return df * (texelFetch(u_e, c, 0).r - texelFetch(u_e, n, 0).r);
}

float ratio(ivec2 c)
{
    float out_ = 0.0;
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + NB[q];
        if (!inside(n)) continue;
        out_ += max(flux(c, n), 0.0);
    }
    float r = texelFetch(u_dens, c, 0).r;
    return out_ > r ? r / out_ : 1.0;
}

void main()
{
    ivec2 c = cell();
    vec4 d0 = texelFetch(u_dens, c, 0);
    float r = d0.r;
    float rc = ratio(c);
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + NB[q];
        if (!inside(n)) continue;
        float f = flux(c, n);
        if (f > 0.0) r -= f * rc;
        else if (f < 0.0) r -= f * ratio(n);
    }
    o_out = vec4(max(r, 0.0), d0.g, d0.b, 0.0);
}
