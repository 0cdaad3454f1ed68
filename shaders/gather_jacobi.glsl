// gather_jacobi: one Jacobi iteration of the implicit gathering solve
//   e − a ∇·(D ∇e) = ρ0 − ρ*,   a = dt·vg/h²,  D = ρ0·ρ̃* (lagged),
// face D = mean of the two cells, no flux through the walls.
// With u_first = 1 the previous iterate is e = 0: starting from zero keeps
// every mode's factor (1 + aℓλᵏ)/(1 + aℓ) within 1 for any iteration count;
// starting from ρ0 − ρ* lets the unconverged checkerboard mode grow.
#include "sim.glsl"

uniform sampler2D u_dens;  // ρ0, ρ*, ρ̃*
uniform sampler2D u_e;
uniform int u_first;
uniform float u_a;
out vec4 o_out;

float e_at(ivec2 p)
{
    return u_first != 0 ? 0.0 : texelFetch(u_e, p, 0).r;
}

void main()
{
    ivec2 c = cell();
    vec4 d0 = texelFetch(u_dens, c, 0);
    float dc = d0.r * d0.b;
    float num = d0.r - d0.g, den = 1.0;
    ivec2 nb[4] = ivec2[4](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1));
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + nb[q];
        if (n.x < 0 || n.x >= u_size.x || n.y < 0 || n.y >= u_size.y) continue;
        vec4 dn = texelFetch(u_dens, n, 0);
        float df = u_a * 0.5 * (dc + dn.r * dn.b);
        num += df * e_at(n);
        den += df;
    }
    o_out = vec4(num / den, 0.0, 0.0, 0.0);
}
