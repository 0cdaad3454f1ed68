// mix_coef: the subgrid mixing's coefficient d = min(k·|S|·g·n, cap) of every
// cell, |S| the flow's strain rate at the cell's centre, g = |ρ̃ − ρ̃*|/(ρ̃ +
// ρ̃*) how far the smoke near the cell is from its target, of the blurred
// fields (ρ̃ sampled from the coarse field at the cell's centre; 0 where they
// match), n = max(min(1, u_near_w·ρ̃*·u_near), u_transit) whether it is where
// the target is (u_transit, a twentieth, in transit; u_near_w the step's
// method_mix_near, 0 while a compression's drift waits), packed 2x2 cells to a texel (packed.glsl); once per step, for the
// iterations of mix.glsl.
// With u_has_drift, |S| is the larger of the flow's strain and the
// transport's (u_drift: flow + drift, drift_vel.glsl) strain plus |∇·w|.
// g is at least u_edge_w times the edge excess (|∇²ρ| − |∇²ρ*|)₊ ÷ (|∇²ρ| +
// |∇²ρ*| + u_edge_eps): how much sharper the smoke is than its target at the cell.
// n is at least the fine gate smoothstep(u_fine_lo, u_fine_hi, |∇²ρ|·u_fine_l2 ÷
// (max(ρ, ρ̄) + u_edge_eps)), ρ̄ the mean of the neighbours: smoke much thinner
// than the mixing's length L is mixed whole wherever it is (mix_fine).
// Mirrors strain_at, transport_rate_at, mix_edge, mix_fine and ref_pass_mix_coef in src/cpu_solver.c.
#include "packed.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_drift; // the transport's face speeds, flow + drift (read with u_has_drift)
uniform int u_has_drift;
uniform sampler2D u_dens;  // ρ, ρ*, ρ̃*
uniform sampler2D u_rblur; // ρ̃, coarse (from the step's first pass)
uniform int u_factor;      // the coarse field's factor and size (sample_coarse)
uniform ivec2 u_csize;
uniform float u_transit;   // METHOD_MIX_TRANSIT: n's floor away from the target
uniform float u_near;      // 1/(METHOD_MIX_NEAR·s), s the target's density scale
uniform float u_near_w;    // method_mix_near: the share of the target's nearness
uniform float u_k;    // method_mix_k: C·(L/h)²·dt·(the flow's share)/iterations
uniform float u_cap;  // METHOD_MIX_CAP
uniform float u_edge_eps; // METHOD_MIX_EDGE_EPS·s
uniform float u_edge_w;   // the edge excess's weight: the step's mix_edge_w (method_mix_edge_w; 0: not read)
uniform float u_fine_l2;  // (L/h)², L the mixing's length (METHOD_MIX_SCALE)
uniform float u_fine_lo, u_fine_hi; // METHOD_MIX_FINE_LO, METHOD_MIX_FINE_HI

float strain_at(sampler2D vel, int i, int j)
{
    float ux = (Uf(vel, i + 1, j) - Uf(vel, i, j)) / u_h;
    float vy = (Vf(vel, i, j + 1) - Vf(vel, i, j)) / u_h;
    int jm = j > 0 ? j - 1 : j, jp = j < u_size.y - 1 ? j + 1 : j;
    int im = i > 0 ? i - 1 : i, ip = i < u_size.x - 1 ? i + 1 : i;
    float ucp = 0.5 * (Uf(vel, i, jp) + Uf(vel, i + 1, jp));
    float ucm = 0.5 * (Uf(vel, i, jm) + Uf(vel, i + 1, jm));
    float vcp = 0.5 * (Vf(vel, ip, j) + Vf(vel, ip, j + 1));
    float vcm = 0.5 * (Vf(vel, im, j) + Vf(vel, im, j + 1));
    float uy = (ucp - ucm) / (float(jp - jm) * u_h), vx = (vcp - vcm) / (float(ip - im) * u_h);
    float a = ux - vy, b = uy + vx;
    return sqrt(a * a + b * b);
}

// the rate the mixing answers: the flow's strain, or the transport's strain
// plus its compression where the drift ran
float rate_at(int i, int j)
{
    float r = strain_at(u_vel, i, j);
    if (u_has_drift != 0) {
        float div = (Uf(u_drift, i + 1, j) - Uf(u_drift, i, j) + Vf(u_drift, i, j + 1) - Vf(u_drift, i, j)) / u_h;
        r = max(r, strain_at(u_drift, i, j) + abs(div));
    }
    return r;
}

// the sums over the cell's neighbours inside the grid of ρ and ρ* (rg) and
// their count (a)
vec3 neighbours(int i, int j)
{
    vec3 s = vec3(0.0);
    if (i > 0) s += vec3(texelFetch(u_dens, ivec2(i - 1, j), 0).rg, 1.0);
    if (i < u_size.x - 1) s += vec3(texelFetch(u_dens, ivec2(i + 1, j), 0).rg, 1.0);
    if (j > 0) s += vec3(texelFetch(u_dens, ivec2(i, j - 1), 0).rg, 1.0);
    if (j < u_size.y - 1) s += vec3(texelFetch(u_dens, ivec2(i, j + 1), 0).rg, 1.0);
    return s;
}

// g·n: the mismatch g (the larger of mix_mismatch and mix_edge) times the
// target's nearness n (mix_near), at least the fine gate (mix_fine)
float gate(int i, int j)
{
    vec3 d = texelFetch(u_dens, ivec2(i, j), 0).rgb;
    float tb = d.b;
    float rb = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i) + 0.5, float(j) + 0.5));
    float sum = rb + tb;
    float g = sum > 0.0 ? min(abs(rb - tb) / sum, 1.0) : 0.0;
    vec3 nb = neighbours(i, j);
    // the Laplacians of ρ and ρ*: Σ (f_n − f_c) over the neighbours (mix_laplacian)
    vec2 l = abs(nb.xy - nb.z * d.rg);
    if (u_edge_w > 0.0) {
        float den = l.x + l.y + u_edge_eps;
        g = max(g, u_edge_w * (den > 0.0 ? max(l.x - l.y, 0.0) / den : 0.0));
    }
    float n = max(min(tb * u_near * u_near_w, 1.0), u_transit);
    if (n < 1.0 && nb.z > 0.0) {
        float f = l.x * u_fine_l2 / (max(d.r, nb.x / nb.z) + u_edge_eps);
        n = max(n, smoothstep(u_fine_lo, u_fine_hi, f));
    }
    return g * n;
}

float coef(int i, int j)
{
    if (i >= u_size.x || j >= u_size.y) return 0.0;
    return min(u_k * rate_at(i, j) * gate(i, j), u_cap);
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 D = vec4(coef(i.x, j.x), coef(i.y, j.y), coef(i.z, j.z), coef(i.w, j.w));
    return packed_sel(packed_valid(T), D);
}
