// jacobi_tile: up to SM_JACOBI_TILE iterations of jacobi.glsl's damped
// Jacobi iteration in one compute dispatch (the compute backend). Each work
// group stages its tile of packed texels with a halo of SM_JACOBI_TILE texels
// in shared memory and iterates there: after k iterations the texels k from
// the region's edge are exact, so the tile (SM_JACOBI_TILE in) is. The maths
// is packed_jacobi (packed.glsl), as on the fragment path; u_zero starts
// from p = 0 as jacobi.glsl does, and u_prolong first adds the coarse
// level's correction as mg_prolong does (packed_prolong): a V-cycle's
// prolongation and post-smoothing in one dispatch.
#define SM_OWN_MAIN 1
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
uniform int u_zero;
uniform int u_iters;  // 1 .. SM_JACOBI_TILE
uniform int u_prolong;
uniform sampler2D u_coarse;

layout(local_size_x = SM_LOCAL_X, local_size_y = SM_LOCAL_Y) in;
layout(binding = 0) writeonly uniform image2D u_out;

#define K SM_JACOBI_TILE
#define RX (SM_LOCAL_X + 2 * K)
#define RY (SM_LOCAL_Y + 2 * K)
shared vec4 s_p[2][RY][RX];
shared vec4 s_b[RY][RX];

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
    if (any(greaterThanEqual(T, tsize))) return;
    imageStore(u_out, T, s_p[cur][l.y + K][l.x + K]);
}
