// drift_vel: the gathering drift's face speeds (ref_pass_drift_vel in
// src/cpu_solver.c): w = κ·m·∂log(max(ρ̃*, ε)/max(ρ̃, ε)) on the faces
// (i-1 | i) and (j-1 | j), m = min(1, ρ̃*_face / mob), with the speed
// vector's length capped (the other component from the four faces around). ρ̃ is the coarse
// blurred density sampled at the cell centres, ρ̃* is density.b. Last the
// flow's limit: the flow's envelope plus the drift within ±umax, and each
// face's f + drift within ±u_fcap (the transport's cap); f the
// flow as the transport moves smoke by it, u_flowscale·clamp(flow, ±u_fcap)
// (the projected flow as it is, u_fcap only a guard: method_transport_cap; a
// long key's pace slows it; issue 20), read from the flow's local
// statistics (METHOD_FLOW_ENV_K): u_stats, the blurred coarse means of
// (u, v, u², v²) (downsample.glsl's u_chan 4, then blur.glsl), read at the
// cell centre: mean m, spread s = √(B(f²) − m²), and the drift keeps
// m ± u_env_k·s + drift within ±umax, so it does not take on the small
// swirls' pattern; a face faster than umax is only slowed. Out: the
// transport's face speeds, f + drift (.r on the x faces, .g on the y
// faces), laid out like the velocity: the density's one transport stage
// moves ρ by them this step.
// With u_balance, the balance drift is added: m_φ·u_kw·∂φ of the deficit
// potential φ (packed, from the force's multigrid solve this step), with
// m_φ = max(m, 1 − min(1, ρ̃_face/u_haze)) (METHOD_DRIFT_HAZE in cpu_solver.h),
// u_kw scaled by c², c the coverage drift_cover.glsl wrote this step
// (METHOD_DRIFT_COVER: the balance drift waits for the smoke).
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
uniform sampler2D u_cover; // .r of texel (0, 0): the coverage c (read with u_balance)
float g_kw;            // u_kw·c²
uniform float u_haze;  // METHOD_DRIFT_HAZE times the density scale
uniform sampler2D u_vel; // the flow (projected): the drift keeps its envelope + drift within ±u_umax
uniform float u_flowscale; // the pace of a long key: the flow slowed, umax_flow/umax (else 1)
uniform float u_umax;
uniform float u_fcap;  // method_transport_cap: the flow's faces within ±u_fcap (a guard)
uniform sampler2D u_stats; // the flow's statistics (coarse, like u_rblur)
uniform float u_env_k;    // METHOD_FLOW_ENV_K
uniform float u_env_floor; // METHOD_FLOW_ENV_FLOOR

// The 3x3 cells around the cell (i, j) this invocation writes, each read
// once: ρ̃* (g_tb), ρ̃ (g_rb), the log ratio and φ. Every face speed below
// uses only these (formerly about 200 fetches and 40 logs a cell).
// (Offsets are literal constants at every call, so after inlining the
// arrays are indexed by constants and stay in registers.)
int g_i, g_j;
float g_tb[9], g_rb[9], g_lr[9], g_phi[9];

// Above factor 1, ρ̃ at the 3x3 cells is the B-spline of sample_coarse from
// the 5x5 coarse samples they share (the cells span at most two fine cells,
// so their B-splines' 4x4 samples start at most one coarse cell apart): 25
// fetches instead of 9 x 16, each row interpolated along x first, then the
// rows along y, as sample_coarse sums; every index a constant (ox, oy pick
// the 4 of 5 by a select, not by an index, so nothing spills).
void block_rb(int ci, int cj)
{
    float f = float(u_factor);
    ivec2 c0 = clamp(ivec2(ci - 1, cj - 1), ivec2(0), u_size - 1);
    int bi = int(floor((float(c0.x) + 0.5) / f - 0.5)) - 1;
    int bj = int(floor((float(c0.y) + 0.5) / f - 0.5)) - 1;
    vec4 wx[3], wy[3];
    bool ox[3], oy[3];
    for (int a = 0; a < 3; a++) {
        ivec2 c = clamp(ivec2(ci - 1 + a, cj - 1 + a), ivec2(0), u_size - 1);
        vec2 q = (vec2(c) + 0.5) / f - 0.5;
        vec2 q0 = floor(q);
        wx[a] = bspline_w(q.x - q0.x);
        wy[a] = bspline_w(q.y - q0.y);
        ox[a] = int(q0.x) - 1 > bi;
        oy[a] = int(q0.y) - 1 > bj;
    }
    float hx[15]; // hx[a * 5 + n]: row n along x at the a-th column of cells
    for (int n = 0; n < 5; n++) {
        int jj = clamp(bj + n, 0, u_csize.y - 1);
        float v[5];
        for (int m = 0; m < 5; m++) v[m] = texelFetch(u_rblur, ivec2(clamp(bi + m, 0, u_csize.x - 1), jj), 0).r;
        vec4 lo = vec4(v[0], v[1], v[2], v[3]), hi = vec4(v[1], v[2], v[3], v[4]);
        for (int a = 0; a < 3; a++) hx[a * 5 + n] = dot(wx[a], ox[a] ? hi : lo);
    }
    for (int b = 0; b < 3; b++)
        for (int a = 0; a < 3; a++) {
            vec4 lo = vec4(hx[a * 5], hx[a * 5 + 1], hx[a * 5 + 2], hx[a * 5 + 3]);
            vec4 hi = vec4(hx[a * 5 + 1], hx[a * 5 + 2], hx[a * 5 + 3], hx[a * 5 + 4]);
            g_rb[b * 3 + a] = dot(wy[b], oy[b] ? hi : lo);
        }
}

void load_cells(int ci, int cj)
{
    g_i = ci;
    g_j = cj;
    bool blk = u_factor > 1;
    if (blk) block_rb(ci, cj);
    for (int b = 0; b < 3; b++)
        for (int a = 0; a < 3; a++) {
            ivec2 c = clamp(ivec2(ci - 1 + a, cj - 1 + b), ivec2(0), u_size - 1);
            int k = b * 3 + a;
            g_tb[k] = texelFetch(u_dens, c, 0).b;
            if (!blk) g_rb[k] = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(c.x) + 0.5, float(c.y) + 0.5));
            g_lr[k] = log(max(g_tb[k], u_eps)) - log(max(g_rb[k], u_eps));
            g_phi[k] = u_balance != 0 ? packed_at(u_phi, c) : 0.0;
        }
}

// The speed on the face between cell (g_i + dx, g_j + dy) and its left
// (axis 0) or lower (axis 1) neighbour, before the cap (ref_pass_drift_vel's
// drift_raw); 0 on walls. With the balance force, the balance drift's share.
float raw(int dx, int dy, int axis)
{
    int i = g_i + dx, j = g_j + dy;
    int k = axis == 0 ? i - 1 : i, l = axis == 0 ? j : j - 1;
    if (k < 0 || l < 0 || i >= u_size.x || j >= u_size.y) return 0.0;
    int c = (dy + 1) * 3 + dx + 1, n = axis == 0 ? c - 1 : c - 3;
    float m = min(1.0, 0.5 * (g_tb[c] + g_tb[n]) / u_mob);
    float g = u_vk * m * (g_lr[c] - g_lr[n]) * (1.0 / u_h);
    if (u_balance == 0) return g + 0.0;
    float mp = max(m, 1.0 - min(1.0, 0.5 * (g_rb[c] + g_rb[n]) / u_haze));
    return g + mp * g_kw * (g_phi[c] - g_phi[n]);
}

float raw_u(int dx, int dy) { return raw(dx, dy, 0); }
float raw_v(int dx, int dy) { return raw(dx, dy, 1); }

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
    float cov = u_balance != 0 ? texelFetch(u_cover, ivec2(0), 0).r : 0.0;
    g_kw = u_kw * (cov * cov);
    load_cells(i, j);
    float a = raw_u(0, 0), b = raw_v(0, 0);
    float vt = 0.25 * (raw_v(0, 0) + raw_v(-1, 0) + raw_v(0, 1) + raw_v(-1, 1));
    float ut = 0.25 * (raw_u(0, 0) + raw_u(1, 0) + raw_u(0, -1) + raw_u(1, -1));
    // the flow's limit (cpu_solver.c's drift_flow_limit)
    vec2 f0 = texelFetch(u_vel, c, 0).rg; // the statistics (cpu_solver.c's flow_bounds)
    vec4 st = sample_coarse4(u_stats, u_factor, u_csize, vec2(float(i) + 0.5, float(j) + 0.5));
    vec2 mm = st.xy * st.xy;
    vec2 var = (st.zw - mm) - u_env_floor * st.zw;
    vec2 k = u_env_k * sqrt(max(var, vec2(0.0)));
    vec2 fh = st.xy + k, fl = st.xy - k;
    vec2 f = u_flowscale * clamp(f0, -u_fcap, u_fcap);
    fh = u_flowscale * clamp(fh, -u_fcap, u_fcap);
    fl = u_flowscale * clamp(fl, -u_fcap, u_fcap);
    vec2 lo = min(vec2(0.0), max(-u_umax - fl, -u_fcap - f)), hi = max(vec2(0.0), min(u_umax - fh, u_fcap - f));
    lo = mix(lo, vec2(0.0), lessThan(f, vec2(-u_umax))); // faster flow: only slowed
    hi = mix(hi, vec2(0.0), greaterThan(f, vec2(u_umax)));
    return vec4(f.x + clamp(capped(a, vt), lo.x, hi.x), f.y + clamp(capped(b, ut), lo.y, hi.y), 0.0, 0.0);
}
