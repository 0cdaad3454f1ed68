// mg_bottom: the rest of a V-cycle from a small multigrid level down to the
// coarsest and back, in one compute dispatch of one work group (the tiled
// compute backend). On small levels a pass costs its dispatch, not its
// bytes: at 256² the 7 V-cycles a step were 133 of its 171 dispatches.
// Every level from u_size's (level L, at most SM_MG_BOTTOM packed texels a
// side) down lives in shared memory, one invocation a texel; each stage is
// the same function the one-pass-a-stage path runs (packed.glsl):
//   pre-smoothing (SM_MG_SMOOTH iterations from 0), packed_residual_at and
//   the restriction as mg_restrict_residual sums it, the coarsest level's
//   SM_MG_COARSE_ITERS iterations from 0, then on the way up the
//   correction (packed_prolong_mix) and SM_MG_SMOOTH more iterations.
// A Jacobi iteration reads its neighbours, waits, then writes in place.
// In: u_div, level L's right-hand side; u_levels, the levels from L to the
// coarsest; u_h, the levels' cell size (1: below the grid). Out: level L's x.
#define SM_OWN_MAIN 1
#include "packed.glsl"

uniform sampler2D u_div;
uniform int u_levels;

#define B SM_MG_BOTTOM
layout(local_size_x = B, local_size_y = B) in;
layout(binding = 0) writeonly uniform image2D u_out;

// every level's texels one after another: level k below L has at most
// B/2^k + 1 texels a side (each halving rounds up), so all of them at most
// 4B²/3 + 4B + one a level. Level L's right-hand side is read from u_div,
// the coarser ones' kept (with B = 32, 31.2 KB: within llvmpipe's 32 KB)
#define BT (B * B * 4 / 3 + 1 + 4 * B + SM_MG_MAX_LEVELS)
shared vec4 s_x[BT];
shared vec4 s_b[BT - B * B];

ivec2 g_size[SM_MG_MAX_LEVELS]; // each level's cells
int g_off[SM_MG_MAX_LEVELS];    // and its first texel in s_x, s_b

ivec2 texels(int k) { return (g_size[k] + 1) / 2; }
int at(int k, ivec2 T) { return g_off[k] + T.y * texels(k).x + T.x; }
// texel T of level k; a neighbour past the level is the texel itself
vec4 x_at(int k, ivec2 T, vec4 C)
{
    return all(greaterThanEqual(T, ivec2(0))) && all(lessThan(T, texels(k))) ? s_x[at(k, T)] : C;
}
// cell c of level k
float cell_at(int k, ivec2 c)
{
    vec4 v = s_x[at(k, c >> 1)];
    return v[(c.x & 1) + 2 * (c.y & 1)];
}

// the right-hand side of texel T of level k
vec4 b_at(int k, ivec2 T) { return k == 0 ? texelFetch(u_div, T, 0) : s_b[at(k, T) - g_off[1]]; }

PackedNb nb_at(int k, ivec2 T, vec4 C)
{
    return packed_nb_at(T, C, x_at(k, T - ivec2(1, 0), C), x_at(k, T + ivec2(1, 0), C),
                        x_at(k, T - ivec2(0, 1), C), x_at(k, T + ivec2(0, 1), C), g_size[k]);
}

void smooth_level(int k, int iters, ivec2 T)
{
    bool mine = all(lessThan(T, texels(k)));
    for (int it = 0; it < iters; it++) {
        vec4 v = vec4(0.0);
        if (mine) {
            vec4 C = s_x[at(k, T)];
            v = packed_jacobi_at(T, C, nb_at(k, T, C), b_at(k, T), u_h, g_size[k]);
        }
        barrier();
        if (mine) s_x[at(k, T)] = v;
        barrier();
    }
}

// the fine texel F's residual, summed (mg_restrict_residual's children)
float children(int k, ivec2 F)
{
    F = clamp(F, ivec2(0), texels(k) - 1);
    vec4 C = s_x[at(k, F)];
    vec4 r = packed_residual_at(F, C, nb_at(k, F, C), b_at(k, F), u_h, g_size[k]);
    return r.x + r.y + r.z + r.w;
}

void main()
{
    ivec2 T = ivec2(gl_LocalInvocationID.xy);
    g_size[0] = u_size;
    g_off[0] = 0;
    for (int k = 1; k < u_levels; k++) {
        g_size[k] = (g_size[k - 1] + 1) / 2;
        g_off[k] = g_off[k - 1] + texels(k - 1).x * texels(k - 1).y;
    }
    if (all(lessThan(T, texels(0)))) s_x[at(0, T)] = vec4(0.0);
    barrier();
    int last = u_levels - 1;
    for (int k = 0; k < last; k++) { // down: smooth, then the next level's right-hand side
        smooth_level(k, SM_MG_SMOOTH, T);
        if (all(lessThan(T, texels(k + 1)))) {
            ivec4 i = packed_i(T), j = packed_j(T);
            vec4 b = vec4(children(k, ivec2(i.x, j.x)), children(k, ivec2(i.y, j.y)),
                          children(k, ivec2(i.z, j.z)), children(k, ivec2(i.w, j.w)));
            s_b[at(k + 1, T) - g_off[1]] = packed_sel(packed_valid_at(T, g_size[k + 1]), b);
            s_x[at(k + 1, T)] = vec4(0.0);
        }
        barrier();
    }
    smooth_level(last, SM_MG_COARSE_ITERS, T);
    for (int k = last - 1; k >= 0; k--) { // up: the correction, then smooth
        if (all(lessThan(T, texels(k)))) {
            ivec4 n = packed_prolong_cells(T, g_size[k + 1]);
            vec4 c = packed_prolong_mix(
                cell_at(k + 1, T), cell_at(k + 1, ivec2(n.x, T.y)), cell_at(k + 1, ivec2(n.y, T.y)),
                cell_at(k + 1, ivec2(T.x, n.z)), cell_at(k + 1, ivec2(T.x, n.w)), cell_at(k + 1, n.xz),
                cell_at(k + 1, n.yz), cell_at(k + 1, n.xw), cell_at(k + 1, n.yw));
            s_x[at(k, T)] = packed_sel(packed_valid_at(T, g_size[k]), s_x[at(k, T)] + c);
        }
        barrier();
        smooth_level(k, SM_MG_SMOOTH, T);
    }
    if (all(lessThan(T, texels(0)))) imageStore(u_out, T, s_x[at(0, T)]);
}
