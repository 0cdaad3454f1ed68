// jacobi_tile: up to SM_JACOBI_TILE iterations of jacobi.glsl's damped
// Jacobi iteration in one compute dispatch (the compute backend). Each work
// group stages its tile of packed texels with a halo of SM_JACOBI_TILE texels
// in shared memory and iterates there: after k iterations the texels k from
// the region's edge are exact, so the tile (SM_JACOBI_TILE in) is. The maths
// is packed_jacobi (packed.glsl), as on the fragment path; u_zero starts
// from p = 0 as jacobi.glsl does, and u_prolong first adds the coarse
// level's correction as mg_prolong does (packed_prolong): a V-cycle's
// prolongation and post-smoothing in one dispatch. u_restrict then also
// writes the next level's right-hand side into image unit 1 (u_coarse_out,
// u_csize cells), as mg_restrict_residual does: each texel's residual
// (packed_residual_at, 1 texel of halo more than the iterations need, so
// u_iters < SM_JACOBI_TILE) summed into its coarse cell: a V-cycle's
// pre-smoothing and restriction in one dispatch.
#define SM_OWN_MAIN 1
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
uniform int u_zero;
uniform int u_iters;  // 1 .. SM_JACOBI_TILE
uniform int u_prolong;
uniform sampler2D u_coarse;
uniform int u_restrict;
uniform ivec2 u_csize;

layout(local_size_x = SM_LOCAL_X, local_size_y = SM_LOCAL_Y) in;
layout(binding = 0) writeonly uniform image2D u_out;
layout(binding = 1) writeonly uniform image2D u_coarse_out;

#if (SM_LOCAL_X % 2) != 0 || (SM_LOCAL_Y % 2) != 0
#error "u_restrict needs an even work group: a tile's coarse texels are half its own"
#endif
#define K SM_JACOBI_TILE
#define RX (SM_LOCAL_X + 2 * K)
#define RY (SM_LOCAL_Y + 2 * K)
shared vec4 s_p[2][RY][RX];
shared vec4 s_b[RY][RX];
shared float s_r[SM_LOCAL_Y][SM_LOCAL_X];  // u_restrict: each tile texel's residual, summed

void main()
{
    ivec2 o = ivec2(gl_WorkGroupID.xy) * ivec2(SM_LOCAL_X, SM_LOCAL_Y) - K;  // the region's first texel
    ivec2 tsize = textureSize(u_p, 0);
    int lid = int(gl_LocalInvocationIndex);
    const int n = SM_LOCAL_X * SM_LOCAL_Y;
    for (int q = lid; q < RX * RY; q += n) {
        int a = q % RX, b = q / RX;
        ivec2 T = clamp(o + ivec2(a, b), ivec2(0), tsize - 1);
        vec4 x = u_zero != 0 ? vec4(0.0) : texelFetch(u_p, T, 0);
        if (u_prolong != 0) x = packed_sel(packed_valid(T), x + packed_prolong(u_coarse, T));
        s_p[0][b][a] = x;
        s_b[b][a] = texelFetch(u_div, T, 0);
    }
    barrier();
    int cur = 0;
    for (int it = 0; it < u_iters; it++) {
        int m = it + 1;  // texels closer than m to the region's edge are not needed any more
        for (int q = lid; q < RX * RY; q += n) {
            int a = q % RX, b = q / RX;
            if (a < m || b < m || a >= RX - m || b >= RY - m) continue;
            ivec2 T = o + ivec2(a, b);
            vec4 C = s_p[cur][b][a];
            // a neighbour past the texture is the texel itself (packed_texel's clamp)
            vec4 L = T.x > 0 ? s_p[cur][b][a - 1] : C, R = T.x < tsize.x - 1 ? s_p[cur][b][a + 1] : C;
            vec4 B = T.y > 0 ? s_p[cur][b - 1][a] : C, U = T.y < tsize.y - 1 ? s_p[cur][b + 1][a] : C;
            s_p[1 - cur][b][a] = packed_jacobi(T, C, packed_nb(T, C, L, R, B, U), s_b[b][a], u_h);
        }
        cur = 1 - cur;
        barrier();
    }
    ivec2 l = ivec2(gl_LocalInvocationID.xy);
    ivec2 T = o + K + l;
    int a = l.x + K, b = l.y + K;
    vec4 C = s_p[cur][b][a];
    if (u_restrict != 0) {  // the same for every invocation: the barrier below is uniform
        vec4 L = T.x > 0 ? s_p[cur][b][a - 1] : C, R = T.x < tsize.x - 1 ? s_p[cur][b][a + 1] : C;
        vec4 B = T.y > 0 ? s_p[cur][b - 1][a] : C, U = T.y < tsize.y - 1 ? s_p[cur][b + 1][a] : C;
        vec4 r = packed_residual_at(T, C, packed_nb(T, C, L, R, B, U), s_b[b][a], u_h, u_size);
        s_r[l.y][l.x] = r.x + r.y + r.z + r.w;
        barrier();
        // coarse texel Tc's cells are fine texels 2Tc .. 2Tc + 1 (the last
        // one past the level clamped to it, as mg_restrict_residual's), all
        // in this tile: its origin o + K is even
        ivec2 Tc = (o + K) / 2 + l;
        if (all(lessThan(l, ivec2(SM_LOCAL_X, SM_LOCAL_Y) / 2)) &&
            all(lessThan(Tc, imageSize(u_coarse_out)))) {
            ivec4 i = packed_i(Tc), j = packed_j(Tc);
            vec4 sum;
            for (int c = 0; c < 4; c++) {
                ivec2 F = min(ivec2(i[c], j[c]), tsize - 1) - (o + K);
                sum[c] = s_r[F.y][F.x];
            }
            bvec4 in_x = lessThan(i, ivec4(u_csize.x)), in_y = lessThan(j, ivec4(u_csize.y));
            imageStore(u_coarse_out, Tc, packed_sel(bvec4(in_x.x && in_y.x, in_x.y && in_y.y,
                                                          in_x.z && in_y.z, in_x.w && in_y.w), sum));
        }
    }
    if (any(greaterThanEqual(T, tsize))) return;
    imageStore(u_out, T, C);
}
