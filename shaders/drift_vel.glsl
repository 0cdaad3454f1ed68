// drift_vel: the gathering drift's face speeds (ref_pass_drift_vel in
// src/cpu_solver.c): w = κ·m·∂log(max(ρ̃*, ε)/max(ρ̃, ε)) on the faces
// (i-1 | i) and (j-1 | j), m = min(1, ρ̃*_face / mob), with the speed
// vector's length capped (the other component from the four faces around). ρ̃ is the coarse
// blurred density sampled at the cell centres, ρ̃* is density.b. Last the
// flow's limit: each face's drift keeps |clamp(flow, ±umax) + drift| <= umax
// (issue 20). Out: the transport's face speeds, clamped flow + drift (.r on
// the x faces, .g on the y faces), laid out like the velocity: the density's
// one transport stage moves ρ by them this step.
// With u_balance, the balance drift is added: m_φ·u_kw·∂φ of the deficit
// potential φ (packed, from the force's multigrid solve this step), with
// m_φ = max(m, 1 − min(1, ρ̃_face/u_haze)) (METHOD_DRIFT_HAZE in cpu_solver.h).
#include "packed.glsl"

uniform sampler2D u_dens;
uniform sampler2D u_rblur;
uniform int u_factor;
uniform ivec2 u_csize;
uniform float u_vk;    // κ
uniform float u_cap;   // wmax times the fade-in
uniform float u_eps;   // METHOD_DRIFT_LOG_EPS times the density scale
uniform float u_mob;   // METHOD_DRIFT_MOB times the density scale
uniform int u_balance;
uniform sampler2D u_phi;
uniform float u_kw;    // vw / (density scale) / h
uniform float u_haze;  // METHOD_DRIFT_HAZE times the density scale
uniform sampler2D u_vel; // the flow (projected): the drift keeps |flow + drift| <= u_umax
uniform float u_flowmax; // the flow's own limit this step (the pace of a long key; else u_umax)
uniform float u_umax;

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

// The speed on the face between cell (i, j) and (k, l), its lower or left
// neighbour, before the cap (ref_pass_drift_vel's drift_raw); 0 on walls.
float raw(int i, int j, int k, int l)
{
    if (k < 0 || l < 0 || i >= u_size.x || j >= u_size.y) return 0.0;
    float m = min(1.0, 0.5 * (tb_at(i, j) + tb_at(k, l)) / u_mob);
    float g = u_vk * m * (log_ratio(i, j) - log_ratio(k, l)) * (1.0 / u_h);
    return g + balance(ivec2(i, j), ivec2(k, l), m);
}

float raw_u(int i, int j) { return raw(i, j, i - 1, j); }
float raw_v(int i, int j) { return raw(i, j, i, j - 1); }

// The cap on the speed vector: a is the face's speed, t the other component
// averaged from the four faces around it.
float capped(float a, float t)
{
    float mag = sqrt(a * a + t * t);
    return mag > u_cap ? a * (u_cap / mag) : a;
}

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float a = raw_u(i, j), b = raw_v(i, j);
    float vt = 0.25 * (raw_v(i, j) + raw_v(i - 1, j) + raw_v(i, j + 1) + raw_v(i - 1, j + 1));
    float ut = 0.25 * (raw_u(i, j) + raw_u(i + 1, j) + raw_u(i, j - 1) + raw_u(i + 1, j - 1));
    // the flow's limit (cpu_solver.c's drift_flow_limit)
    vec2 f = clamp(texelFetch(u_vel, c, 0).rg, -u_flowmax, u_flowmax);
    return vec4(f.x + clamp(capped(a, vt), -u_umax - f.x, u_umax - f.x),
                f.y + clamp(capped(b, ut), -u_umax - f.y, u_umax - f.y), 0.0, 0.0);
}
