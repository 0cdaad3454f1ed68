// force: driving force and damping on the faces (seed 003, eq. for F):
//   u = clamp((u + dt·vf·ρ̃ ∂ρ̃* / max(ρ̃*, eps)) / (1 + dt·vd), ±umax)
// ρ̃ is the coarse blurred current density sampled at the face; ρ̃* and its
// difference come from the two cells beside the face.
// With u_balance, the balance force (cpu_solver.h): Fattal's term is weighted
// by min(ρ̃, ρ̃*) instead of ρ̃ (plus u_off of the surplus off a one-part
// target, off_weight), and u_kb·ρ̃·∂φ of the deficit potential φ
// (packed, from potential_rhs and a multigrid solve) is added; on a
// compression (u_attract > 0) its surplus is weighed by the cells' own ρ
// above u_rd·c·ρ* as the gathering joins (sharp_pull).
// With u_noise > 0, the driving force on each face is scaled by
// 1 + u_noise·n, n the smooth value noise of method_noise (the same hash) at
// the face in lattice units (u_nl per cell) of seed u_seed.
// With u_swirl > 0, vorticity confinement dt·ε·L·(N × ω) is added too, ω
// the smoothed corner vorticity in u_curl.
#include "packed.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform sampler2D u_rblur;
uniform int u_factor;
uniform ivec2 u_csize;
uniform float u_k;     // dt·vf/h
uniform float u_damp;  // 1/(1 + dt·vd)
uniform float u_umax;
uniform float u_eps;
uniform int u_balance;
uniform sampler2D u_phi;
uniform float u_kb;
uniform float u_attract; // the trip's share of Fattal's pull beyond min(ρ̃, ρ̃*) (SolverParams.attract)
uniform float u_off;     // the trip's share of the pull on the surplus off the target (SolverParams.off_pull)
uniform float u_off_lo;  // METHOD_OFF_LO, METHOD_OFF_HI
uniform float u_off_hi;
uniform float u_c;       // the target's scale to the smoke's mass (c·ρ*)
uniform float u_rg;      // this step's gathering and drift fade-ins (MethodStep rg, rd)
uniform float u_rd;
uniform float u_sharp;   // the sharp surplus's weight (METHOD_SHARP_PULL)
uniform float u_swirl; // dt·ε·L (METHOD_SWIRL_LENGTH) of vorticity confinement (0: off); ref_swirl_force
uniform float u_noise; // the force's noise amplitude this step (method_noise_amp; 0: off)
uniform float u_nl;    // the noise lattice's units per cell: h / noise_scale
uniform int u_seed;   // the noise's seed (--noise-seed)

// the surplus off the target, ρ̃ − ρ̃* where ρ̃* is under u_off_lo of ρ̃,
// none from u_off_hi: method_off_weight in method.c
float off_weight(float rb, float tf)
{
    if (!(rb > tf)) return 0.0;
    float x = clamp((tf / rb - u_off_lo) / (u_off_hi - u_off_lo), 0.0, 1.0);
    return (rb - tf) * (1.0 - x * x * (3.0 - 2.0 * x));
}

// the balance force's share of Fattal's term, over ρ̃: balance_pull in cpu_solver.c
float balance_pull(float rb, float tf)
{
    float m = min(rb, tf);
    float off = u_off > 0.0 ? (1.0 - u_attract) * u_off * off_weight(rb, tf) : 0.0;
    return (m + u_attract * (rb - m) + off) / max(rb, u_eps);
}

// the balance force on a compression (u_attract > 0), over ρ̃: sharp_pull in
// cpu_solver.c (method.h, METHOD_DRIFT_WAIT); rf the face's ρ, tg its c·ρ*,
// gl its ∂ρ̃*/ρ̃*, dphi its u_kb·∂φ
float sharp_pull(float rb, float tf, float rf, float tg, float gl, float dphi)
{
    float m = min(rb, tf), a = u_attract;
    float wt = m + a * ((1.0 - u_rg) * (rb - m) + u_sharp * u_rg * max(0.0, rf - u_rd * tg));
    if (u_off > 0.0) wt += (1.0 - a) * u_off * off_weight(rb, tf);
    return (wt * gl + (rb + a * u_rg * (rf - rb)) * dphi) / max(rb, u_eps);
}

// method_noise's lattice hash and value noise, in uint arithmetic as in C
uint noise_hash(uint x, uint y)
{
    uint v = x * 374761393u + y * 668265263u + uint(u_seed) * 2246822519u;
    v = (v ^ (v >> 13)) * 1274126177u;
    return v ^ (v >> 16);
}

float noise_lattice(int x, int y) { return float(noise_hash(uint(x), uint(y)) & 0xffffu) / 32767.5 - 1.0; }

float noise_at(vec2 p)
{
    vec2 f = floor(p);
    ivec2 q = ivec2(f);
    vec2 t = p - f;
    t = t * t * (3.0 - 2.0 * t);
    float a = noise_lattice(q.x, q.y), b = noise_lattice(q.x + 1, q.y);
    float c = noise_lattice(q.x, q.y + 1), d = noise_lattice(q.x + 1, q.y + 1);
    float lo = a + t.x * (b - a), hi = c + t.x * (d - c);
    return lo + t.y * (hi - lo);
}

// The smoothed corner vorticity (curl.glsl, then blur.glsl): corner (i, j)
// at texel (i, j) of (W+1) x (H+1), 0 off it.
uniform sampler2D u_curl;

int g_i, g_j;

// corner (g_i + di, g_j + dj)
float curl_at(int di, int dj)
{
    int ci = g_i + di, cj = g_j + dj;
    if (ci < 0 || cj < 0 || ci > u_size.x || cj > u_size.y) return 0.0;
    return texelFetch(u_curl, ivec2(ci, cj), 0).r;
}

// Vorticity confinement on a face (ref_swirl_force): axis 0 the x face
// (i-1 | i), 1 the y face (j-1 | j); the curls from u_curl around (g_i, g_j).
float swirl_force(int axis)
{
    float om, gx, gy;
    if (axis == 0) {
        om = 0.5 * (curl_at(0, 0) + curl_at(0, 1));
        gy = abs(curl_at(0, 1)) - abs(curl_at(0, 0));
        gx = 0.25 * ((abs(curl_at(1, 0)) + abs(curl_at(1, 1))) - (abs(curl_at(-1, 0)) + abs(curl_at(-1, 1))));
    } else {
        om = 0.5 * (curl_at(0, 0) + curl_at(1, 0));
        gx = abs(curl_at(1, 0)) - abs(curl_at(0, 0));
        gy = 0.25 * ((abs(curl_at(0, 1)) + abs(curl_at(1, 1))) - (abs(curl_at(0, -1)) + abs(curl_at(1, -1))));
    }
    float len = sqrt(gx * gx + gy * gy);
    if (!(len > 1e-20)) return 0.0;
    return axis == 0 ? u_swirl * (gy / len) * om : -u_swirl * (gx / len) * om;
}

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec2 vel = texelFetch(u_vel, c, 0).rg;
    vec4 dc = texelFetch(u_dens, c, 0); // .r ρ, .g ρ*, .b ρ̃*
    float tc = dc.b;
    bool sharp = u_balance != 0 && u_attract > 0.0;
    float nu = 0.0, nv = 0.0;
    g_i = i;
    g_j = j;
    if (i > 0) {
        vec4 dn = texelFetch(u_dens, ivec2(i - 1, j), 0);
        float tl = dn.b;
        float rb = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i), float(j) + 0.5));
        float tf = max(0.5 * (tl + tc), u_eps);
        float g = (tc - tl) / tf;
        if (sharp)
            g = sharp_pull(rb, tf, 0.5 * (dc.r + dn.r), u_c * (0.5 * (dc.g + dn.g)), g,
                           u_kb * (packed_at(u_phi, c) - packed_at(u_phi, ivec2(i - 1, j))));
        else if (u_balance != 0)
            g = g * balance_pull(rb, tf) + u_kb * (packed_at(u_phi, c) - packed_at(u_phi, ivec2(i - 1, j)));
        if (u_noise > 0.0) g *= 1.0 + u_noise * noise_at(vec2(float(i), float(j) + 0.5) * u_nl);
        float f = u_swirl > 0.0 ? swirl_force(0) : 0.0;
        nu = clamp((vel.x + u_k * rb * g + f) * u_damp, -u_umax, u_umax);
    }
    if (j > 0) {
        vec4 dn = texelFetch(u_dens, ivec2(i, j - 1), 0);
        float tb = dn.b;
        float rb = sample_coarse(u_rblur, u_factor, u_csize, vec2(float(i) + 0.5, float(j)));
        float tf = max(0.5 * (tb + tc), u_eps);
        float g = (tc - tb) / tf;
        if (sharp)
            g = sharp_pull(rb, tf, 0.5 * (dc.r + dn.r), u_c * (0.5 * (dc.g + dn.g)), g,
                           u_kb * (packed_at(u_phi, c) - packed_at(u_phi, ivec2(i, j - 1))));
        else if (u_balance != 0)
            g = g * balance_pull(rb, tf) + u_kb * (packed_at(u_phi, c) - packed_at(u_phi, ivec2(i, j - 1)));
        if (u_noise > 0.0) g *= 1.0 + u_noise * noise_at(vec2(float(i) + 0.5, float(j)) * u_nl);
        float f = u_swirl > 0.0 ? swirl_force(1) : 0.0;
        nv = clamp((vel.y + u_k * rb * g + f) * u_damp, -u_umax, u_umax);
    }
    return vec4(nu, nv, 0.0, 0.0);
}
