// drift_vel: the gathering drift's face speeds (ref_pass_drift_vel in
// src/refsolver.c): w = clamp(κ·m·∂log(max(ρ̃*, ε)/max(ρ̃, ε)), ±cap) on the
// faces (i-1 | i) and (j-1 | j), m = min(1, ρ̃*_face / mob). ρ̃ is the coarse
// blurred density sampled at the cell centres, ρ̃* is density.b. Out: .r the
// x face speed, .g the y face speed, laid out like the velocity, so the
// density transport passes move ρ by it.
// With u_balance, the balance drift is added: m_φ·u_kw·∂φ of the deficit
// potential φ (packed, from the force's multigrid solve this step), with
// m_φ = max(m, 1 − min(1, ρ̃_face/u_haze)) (REF_DRIFT_HAZE in refsolver.h).
#include "packed.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_rblur;
uniform int u_factor;
uniform ivec2 u_csize;
uniform float u_vk;    // κ
uniform float u_cap;   // wmax times the fade-in
uniform float u_eps;   // REF_DRIFT_LOG_EPS times the density scale
uniform float u_mob;   // REF_DRIFT_MOB times the density scale
uniform int u_balance;
uniform sampler2D u_phi;
uniform float u_kw;    // vw / (density scale) / h
uniform float u_haze;  // REF_DRIFT_HAZE times the density scale
out vec4 o_out;

float tb_at(int i, int j) { return texelFetch(u_dens, ivec2(i, j), 0).b; }

float rb_at(int i, int j)
{
    return sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i) + 0.5, float(j) + 0.5));
}

float log_ratio(int i, int j)
{
    return log(max(tb_at(i, j), u_eps)) - log(max(rb_at(i, j), u_eps));
}

// The balance drift's share on the face between cells c and n.
float balance(ivec2 c, ivec2 n, float m)
{
    if (u_balance == 0) return 0.0;
    float mp = max(m, 1.0 - min(1.0, 0.5 * (rb_at(c.x, c.y) + rb_at(n.x, n.y)) / u_haze));
    return mp * u_kw * (packed_at(u_phi, c) - packed_at(u_phi, n));
}

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float inv_h = 1.0 / u_h;
    float lc = log_ratio(i, j), tc = tb_at(i, j);
    float a = 0.0, b = 0.0;
    if (i > 0) {
        float m = min(1.0, 0.5 * (tc + tb_at(i - 1, j)) / u_mob);
        float g = u_vk * m * (lc - log_ratio(i - 1, j)) * inv_h + balance(c, ivec2(i - 1, j), m);
        a = clamp(g, -u_cap, u_cap);
    }
    if (j > 0) {
        float m = min(1.0, 0.5 * (tc + tb_at(i, j - 1)) / u_mob);
        float g = u_vk * m * (lc - log_ratio(i, j - 1)) * inv_h + balance(c, ivec2(i, j - 1), m);
        b = clamp(g, -u_cap, u_cap);
    }
    o_out = vec4(a, b, 0.0, 0.0);
}
