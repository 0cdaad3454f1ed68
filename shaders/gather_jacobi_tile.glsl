// gather_jacobi_tile: up to SM_JACOBI_TILE iterations of the gathering
// solve (gather.glsl) in one compute dispatch (the tiled compute backend),
// as jacobi_tile does for the pressure: each work group stages its tile of
// packed texels of e, D and the right-hand side with a halo of
// SM_JACOBI_TILE texels in shared memory and iterates there; after k
// iterations the texels k from the region's edge are exact, so the tile is.
// Always from the last step's e (u_first is for single passes).
#define SM_OWN_MAIN 1
#include "gather.glsl"

uniform sampler2D u_rhs;   // ρ0 − ρ*, packed
uniform sampler2D u_coef;  // D, packed
uniform sampler2D u_e;     // e, packed
uniform float u_a;
uniform int u_iters;       // 1 .. SM_JACOBI_TILE

layout(local_size_x = SM_LOCAL_X, local_size_y = SM_LOCAL_Y) in;
layout(binding = 0) writeonly uniform image2D u_out;

#define K SM_JACOBI_TILE
#define RX (SM_LOCAL_X + 2 * K)
#define RY (SM_LOCAL_Y + 2 * K)
shared vec4 s_e[2][RY][RX];
shared vec4 s_d[RY][RX];
shared vec4 s_r[RY][RX];

void main()
{
    ivec2 o = ivec2(gl_WorkGroupID.xy) * ivec2(SM_LOCAL_X, SM_LOCAL_Y) - K;  // the region's first texel
    ivec2 tsize = textureSize(u_e, 0);
    int lid = int(gl_LocalInvocationIndex);
    const int n = SM_LOCAL_X * SM_LOCAL_Y;
    for (int q = lid; q < RX * RY; q += n) {
        int a = q % RX, b = q / RX;
        ivec2 T = clamp(o + ivec2(a, b), ivec2(0), tsize - 1);
        s_e[0][b][a] = texelFetch(u_e, T, 0);
        s_d[b][a] = texelFetch(u_coef, T, 0);
        s_r[b][a] = texelFetch(u_rhs, T, 0);
    }
    barrier();
    int cur = 0;
    for (int it = 0; it < u_iters; it++) {
        int m = it + 1;  // texels closer than m to the region's edge are not needed any more
        for (int q = lid; q < RX * RY; q += n) {
            int a = q % RX, b = q / RX;
            if (a < m || b < m || a >= RX - m || b >= RY - m) continue;
            ivec2 T = o + ivec2(a, b);
            // a neighbour past the texture is the texel itself (packed_texel's clamp)
            bool l = T.x > 0, r = T.x < tsize.x - 1, d = T.y > 0, u = T.y < tsize.y - 1;
            vec4 dc = s_d[b][a];
            PackedNb D = packed_nb(T, dc, l ? s_d[b][a - 1] : dc, r ? s_d[b][a + 1] : dc,
                                   d ? s_d[b - 1][a] : dc, u ? s_d[b + 1][a] : dc);
            vec4 ec = s_e[cur][b][a];
            PackedNb e = packed_nb(T, ec, l ? s_e[cur][b][a - 1] : ec, r ? s_e[cur][b][a + 1] : ec,
                                   d ? s_e[cur][b - 1][a] : ec, u ? s_e[cur][b + 1][a] : ec);
            s_e[1 - cur][b][a] = gather_jacobi_at(T, dc, D, s_r[b][a], false, e, u_a);
        }
        cur = 1 - cur;
        barrier();
    }
    ivec2 l = ivec2(gl_LocalInvocationID.xy);
    ivec2 T = o + K + l;
    if (any(greaterThanEqual(T, tsize))) return;
    imageStore(u_out, T, s_e[cur][l.y + K][l.x + K]);
}
