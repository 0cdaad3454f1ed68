// mix: one explicit iteration of the subgrid mixing on the increment
// δ = ρ − ρ0 (packed 2x2 cells to a texel, packed.glsl),
//   δ += Σ_faces ½(d_c + d_n)((ρ0_n − ρ0_c) + (δ_n − δ_c)),
// d from mix_coef (packed), ρ0 the density before the mixing; the first
// iteration starts from δ = 0. mix_apply adds δ to ρ0 once. Mirrors
// ref_pass_mix_iter in src/cpu_solver.c.
#include "packed.glsl"

uniform sampler2D u_dens;  // ρ0
uniform sampler2D u_d;     // packed
uniform sampler2D u_delta; // packed
uniform bool u_first;
const ivec2 NB[4] = ivec2[4](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1));

float delta_at(ivec2 c) { return u_first ? 0.0 : packed_at(u_delta, c); }

float iterate(int i, int j)
{
    ivec2 c = ivec2(i, j);
    if (i >= u_size.x || j >= u_size.y) return 0.0;
    float rc = texelFetch(u_dens, c, 0).r, ec = delta_at(c), dc = packed_at(u_d, c), acc = 0.0;
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + NB[q];
        if (n.x < 0 || n.x >= u_size.x || n.y < 0 || n.y >= u_size.y) continue;
        acc += 0.5 * (dc + packed_at(u_d, n)) * ((texelFetch(u_dens, n, 0).r - rc) + (delta_at(n) - ec));
    }
    return ec + acc;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 D = vec4(iterate(i.x, j.x), iterate(i.y, j.y), iterate(i.z, j.z), iterate(i.w, j.w));
    return packed_sel(packed_valid(T), D);
}
