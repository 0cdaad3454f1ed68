// drift_cover: the balance drift's coverage (ref_drift_cover in
// src/cpu_solver.c), Σ ρ̃*·min(1, ρ̃/(u_cover·ρ̃*)) ÷ Σ ρ̃* over the blur's coarse
// cells, ρ̃ the coarse sample and ρ̃* the full grid's at the cell
// min(c·f + f/2, size − 1): how much of the target the blurred smoke has
// reached. Two modes, as the CPU sums: u_mode 0 writes row j's two sums to
// texel (0, j) (rows past the coarse grid: 0); u_mode 1 sums u_rows' first
// u_csize.y texels into the coverage (1 where the target is empty), .r of
// texel (0, 0), which drift_vel.glsl reads.
#include "sim.glsl"

uniform int u_mode;
uniform sampler2D u_dens;  // .b: ρ̃*
uniform sampler2D u_rblur; // ρ̃, coarse
uniform sampler2D u_rows;  // mode 1: the row sums (.r, .g) of mode 0
uniform int u_factor;
uniform ivec2 u_csize;
uniform float u_cover;     // METHOD_DRIFT_COVER

vec4 stage()
{
    ivec2 c = cell();
    if (u_mode == 0) {
        int cj = c.y;
        float rn = 0.0, rd = 0.0;
        if (cj < u_csize.y) {
            int j = min(cj * u_factor + u_factor / 2, u_size.y - 1);
            for (int ci = 0; ci < u_csize.x; ci++) {
                int i = min(ci * u_factor + u_factor / 2, u_size.x - 1);
                float t = texelFetch(u_dens, ivec2(i, j), 0).b;
                float rb = texelFetch(u_rblur, ivec2(ci, cj), 0).r;
                if (t > 0.0) {
                    rn += t * min(1.0, rb / (u_cover * t));
                    rd += t;
                }
            }
        }
        return vec4(rn, rd, 0.0, 0.0);
    }
    float num = 0.0, den = 0.0;
    for (int cj = 0; cj < u_csize.y; cj++) {
        vec2 r = texelFetch(u_rows, ivec2(0, cj), 0).rg;
        num += r.x;
        den += r.y;
    }
    return vec4(den > 0.0 ? num / den : 1.0, 0.0, 0.0, 0.0);
}
