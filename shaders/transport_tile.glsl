// transport_tile: up to SM_TRANSPORT_STEPS whole substeps of density
// transport in one compute dispatch (the compute backend; the fragment
// backend runs advect_ratio then advect_density a substep). The maths is
// transport.glsl's, as on the fragment path; only the data flow differs.
// Each work group stages its tile of ρ and the face speeds with a halo of
// 3 cells a substep in shared memory; a substep computes every face flux,
// then every ratio, then the new densities of the region, in place. A cell
// 3 from the region's edge is exact after one substep, 6 after two, so the
// tile is after the last: one read of ρ and the face speeds and one write
// for several substeps. A face or ratio that two work groups both compute
// comes from the same code and inputs, so they agree bit for bit and Σρ
// stays conserved. Cells past the grid are never staged: a read there
// takes the nearest cell in the grid (the clamp of the one-substep passes),
// and their faces are walls (speed 0).
//
// In: u_rho .r = ρ (the density field on the first substep, the R32F
// substep field after), u_vel face speeds (.r left face, .g bottom face).
// u_steps substeps a dispatch at most (≤ SM_TRANSPORT_STEPS).
// u_dynamic = 0: u_steps substeps of u_k; u_last: they end the stage, so
// the result goes to u_out with ρ*, ρ̃* from u_dens (before it, u_dens is
// u_rho: nothing more to read).
// u_dynamic = 1: the stage's substep count n and k come from the plan
// buffer (substep_plan); this dispatch runs substeps u_index·u_steps ..
// min(n, (u_index + 1)·u_steps) − 1, and the one with the last writes
// u_out_dens (ρ*, ρ̃* from u_dens, the density field) instead of u_out.
#define SM_OWN_MAIN 1
#include "sim.glsl"
#include "transport.glsl"

uniform sampler2D u_rho;
uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform int u_last;
uniform float u_k;
uniform float u_umax;
uniform int u_dynamic;
uniform int u_index;
uniform int u_steps;

layout(local_size_x = SM_TRANSPORT_GX, local_size_y = SM_TRANSPORT_GY) in;
layout(binding = 0) writeonly uniform image2D u_out;
layout(binding = 1) writeonly uniform image2D u_out_dens;
layout(std430, binding = 1) readonly buffer Plan {
    uint p_n;
    float p_k;
    uint p_pad0;
    uint p_pad1;
    uint p_args[];
};

// a work group writes TX x TY cells, one an invocation (its size from C:
// SOLVER_TRANSPORT_GX/GY in solver.c); its region has a halo of G cells
#define TX SM_TRANSPORT_GX
#define TY SM_TRANSPORT_GY
#define G (3 * SM_TRANSPORT_STEPS)
#define RX (TX + 2 * G)
#define RY (TY + 2 * G)
shared float s_rho[RY][RX];
shared float s_u[RY][RX + 1];  // the left face of region cell a: [b][a]
shared float s_v[RY + 1][RX];  // the bottom face of region cell b: [b][a]
shared float s_fx[RY][RX + 1]; // their fluxes
shared float s_fy[RY + 1][RX];
shared float s_ratio[RY][RX];

ivec2 g_lo, g_hi;  // the region's cells in the grid

float rho(int a, int b) { return s_rho[clamp(b, g_lo.y, g_hi.y)][clamp(a, g_lo.x, g_hi.x)]; }

void main()
{
    ivec2 o = ivec2(gl_WorkGroupID.xy) * ivec2(TX, TY) - G;  // the region's first cell
    g_lo = max(-o, ivec2(0));
    g_hi = min(u_size - 1 - o, ivec2(RX - 1, RY - 1));
    float k = u_dynamic != 0 ? p_k : u_k;
    int n = u_steps, first = 0;
    bool last = u_last != 0;
    if (u_dynamic != 0) {
        first = u_index * u_steps;
        n = min(u_steps, int(p_n) - first);
        last = first + n == int(p_n);
    }
    int lid = int(gl_LocalInvocationIndex);
    const int nt = TX * TY;  // invocations
    for (int q = lid; q < RX * RY; q += nt) {
        int a = q % RX, b = q / RX;
        ivec2 c = o + ivec2(a, b);
        if (all(greaterThanEqual(c, ivec2(0))) && all(lessThan(c, u_size)))
            s_rho[b][a] = texelFetch(u_rho, c, 0).r;
    }
    for (int q = lid; q < (RX + 1) * RY; q += nt) {
        int a = q % (RX + 1), b = q / (RX + 1);
        ivec2 c = o + ivec2(a, b);
        s_u[b][a] = c.y >= 0 && c.y < u_size.y ? Uf(u_vel, c.x, c.y) : 0.0;
    }
    for (int q = lid; q < RX * (RY + 1); q += nt) {
        int a = q % RX, b = q / RX;
        ivec2 c = o + ivec2(a, b);
        s_v[b][a] = c.x >= 0 && c.x < u_size.x ? Vf(u_vel, c.x, c.y) : 0.0;
    }
    barrier();
    for (int s = 0; s < n; s++) {
        // this substep's new ρ is needed m = 3(s+1) cells in from the
        // region's edge: the ratios m-1 in, the fluxes of their faces
        int m = 3 * (s + 1);
        for (int q = lid; q < (RX + 1) * RY; q += nt) {
            int a = q % (RX + 1), b = q / (RX + 1);  // face (a-1 | a) of row b
            if (a < m - 1 || a > RX - m + 1 || b < m - 1 || b > RY - m) continue;
            s_fx[b][a] = transport_flux(k, u_umax, s_u[b][a], rho(a - 2, b), rho(a - 1, b),
                                        rho(a, b), rho(a + 1, b));
        }
        for (int q = lid; q < RX * (RY + 1); q += nt) {
            int a = q % RX, b = q / RX;  // face (b-1 | b) of column a
            if (a < m - 1 || a > RX - m || b < m - 1 || b > RY - m + 1) continue;
            s_fy[b][a] = transport_flux(k, u_umax, s_v[b][a], rho(a, b - 2), rho(a, b - 1),
                                        rho(a, b), rho(a, b + 1));
        }
        barrier();
        for (int q = lid; q < RX * RY; q += nt) {
            int a = q % RX, b = q / RX;
            if (a < m - 1 || a > RX - m || b < m - 1 || b > RY - m) continue;
            s_ratio[b][a] = transport_ratio(rho(a, b), s_fx[b][a], s_fx[b][a + 1], s_fy[b][a],
                                            s_fy[b + 1][a]);
        }
        barrier();
        for (int q = lid; q < RX * RY; q += nt) {
            int a = q % RX, b = q / RX;
            if (a < m || a >= RX - m || b < m || b >= RY - m) continue;
            s_rho[b][a] = transport_apply(s_rho[b][a], s_fx[b][a], s_fx[b][a + 1], s_fy[b][a],
                                          s_fy[b + 1][a], s_ratio[b][a], s_ratio[b][a - 1],
                                          s_ratio[b][a + 1], s_ratio[b - 1][a], s_ratio[b + 1][a]);
        }
        barrier();
    }
    ivec2 l = ivec2(gl_LocalInvocationID.xy);
    ivec2 c = o + G + l;
    if (any(greaterThanEqual(c, u_size))) return;
    float r = s_rho[G + l.y][G + l.x];
    vec4 v = vec4(r, 0.0, 0.0, 0.0);
    if (last) {
        vec4 d = texelFetch(u_dens, c, 0);
        v = vec4(r, d.g, d.b, 0.0);
    }
    if (last && u_dynamic != 0) imageStore(u_out_dens, c, v);
    else imageStore(u_out, c, v);
}
