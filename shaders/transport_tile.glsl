// transport_tile: one whole substep of density transport in one compute
// dispatch (the compute backend; the fragment backend runs advect_ratio
// then advect_density). The maths is transport.glsl's, as on the fragment
// path; only the data flow differs. Each work group stages its tile of ρ
// with a 3-cell halo in shared memory, computes every face flux of the tile
// and a 1-cell ring once, then every ratio of the tile and the ring, then
// the tile's new densities: one read of ρ and the face speeds, one write.
// A face or ratio on a tile's edge is computed by both work groups beside
// it with the same code from the same inputs, so the two agree bit for bit
// and Σρ stays conserved.
//
// In: u_rho .r = ρ (the density field on the first substep, the R32F
// substep field after), u_vel face speeds (.r left face, .g bottom face).
// u_last: the last substep writes the density field, ρ*, ρ̃* from u_dens
// (before it, u_dens is u_rho: nothing more to read).
// u_dynamic: the stage's substep count is the GPU's (substep_plan, an
// indirect dispatch): k and the count come from the plan buffer, this is
// substep u_index, and the last one writes u_out_dens (ρ*, ρ̃* from u_dens,
// the density field) instead of u_out.
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
// SOLVER_TRANSPORT_GX/GY in gpu_solver.c)
#define TX SM_TRANSPORT_GX
#define TY SM_TRANSPORT_GY
// ρ of cells x0-3 .. x0+TX+2 by y0-3 .. y0+TY+2
shared float s_rho[TY + 6][TX + 6];
// x fluxes: the left faces of cells x0-1 .. x0+TX+1, rows y0-1 .. y0+TY
shared float s_fx[TY + 2][TX + 3];
// y fluxes: the bottom faces of rows y0-1 .. y0+TY+1, columns x0-1 .. x0+TX
shared float s_fy[TY + 3][TX + 2];
// ratios of cells x0-1 .. x0+TX by y0-1 .. y0+TY
shared float s_ratio[TY + 2][TX + 2];
// 1 when some ρ of the tile and its halo is not 0
shared uint s_any;

void main()
{
    ivec2 o = ivec2(gl_WorkGroupID.xy) * ivec2(TX, TY);
    float k = u_dynamic != 0 ? p_k : u_k;
    bool last = u_dynamic != 0 ? u_index == int(p_n) - 1 : u_last != 0;
    int lid = int(gl_LocalInvocationIndex);
    const int n = TX * TY;  // invocations
    if (lid == 0) s_any = 0u;
    barrier();
    for (int q = lid; q < (TX + 6) * (TY + 6); q += n) {
        int a = q % (TX + 6), b = q / (TX + 6);
        ivec2 c = clamp(o + ivec2(a - 3, b - 3), ivec2(0), u_size - 1);
        float r = texelFetch(u_rho, c, 0).r;
        s_rho[b][a] = r;
        if (r != 0.0) s_any = 1u;
    }
    barrier();
    // Empty smoke (ρ = 0 on the tile and its halo): every flux is 0, so the
    // tile stays 0; skip the face speeds and the maths (most of a sparse
    // image's tiles). The whole work group takes the same branch.
    if (s_any == 0u) {
        for (int q = lid; q < TX * TY; q += n) {
            ivec2 c = o + ivec2(q % TX, q / TX);
            if (any(greaterThanEqual(c, u_size))) continue;
            vec4 v = vec4(0.0);
            if (last) {
                vec4 d = texelFetch(u_dens, c, 0);
                v = vec4(0.0, d.g, d.b, 0.0);
            }
            if (last && u_dynamic != 0) imageStore(u_out_dens, c, v);
            else imageStore(u_out, c, v);
        }
        return;
    }
    for (int q = lid; q < (TX + 3) * (TY + 2); q += n) {
        int a = q % (TX + 3), b = q / (TX + 3);
        int i = o.x - 1 + a, j = o.y - 1 + b;  // face (i-1 | i) of row j
        float f = 0.0;
        if (j >= 0 && j < u_size.y)
            f = transport_flux(k, u_umax, Uf(u_vel, i, j), s_rho[b + 2][a], s_rho[b + 2][a + 1],
                               s_rho[b + 2][a + 2], s_rho[b + 2][a + 3]);
        s_fx[b][a] = f;
    }
    for (int q = lid; q < (TX + 2) * (TY + 3); q += n) {
        int a = q % (TX + 2), b = q / (TX + 2);
        int i = o.x - 1 + a, j = o.y - 1 + b;  // face (j-1 | j) of column i
        float f = 0.0;
        if (i >= 0 && i < u_size.x)
            f = transport_flux(k, u_umax, Vf(u_vel, i, j), s_rho[b][a + 2], s_rho[b + 1][a + 2],
                               s_rho[b + 2][a + 2], s_rho[b + 3][a + 2]);
        s_fy[b][a] = f;
    }
    barrier();
    for (int q = lid; q < (TX + 2) * (TY + 2); q += n) {
        int a = q % (TX + 2), b = q / (TX + 2);
        s_ratio[b][a] = transport_ratio(s_rho[b + 2][a + 2], s_fx[b][a], s_fx[b][a + 1], s_fy[b][a],
                                        s_fy[b + 1][a]);
    }
    barrier();
    for (int q = lid; q < TX * TY; q += n) {
        ivec2 l = ivec2(q % TX, q / TX);
        ivec2 c = o + l;
        if (any(greaterThanEqual(c, u_size))) continue;
        int a = l.x + 1, b = l.y + 1;
        float r = transport_apply(s_rho[b + 2][a + 2], s_fx[b][a], s_fx[b][a + 1], s_fy[b][a],
                                  s_fy[b + 1][a], s_ratio[b][a], s_ratio[b][a - 1], s_ratio[b][a + 1],
                                  s_ratio[b - 1][a], s_ratio[b + 1][a]);
        vec4 v = vec4(r, 0.0, 0.0, 0.0);
        if (last) {
            vec4 d = texelFetch(u_dens, c, 0);
            v = vec4(r, d.g, d.b, 0.0);
        }
        if (last && u_dynamic != 0) imageStore(u_out_dens, c, v);
        else imageStore(u_out, c, v);
    }
}
