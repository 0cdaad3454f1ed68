// packed.glsl: the pressure-solve fields (divergence, pressure, and every
// multigrid level) are stored 2x2 cells to an RGBA texel, so a pass runs one
// fragment per four cells and a Jacobi iteration fetches 1.5 texels per cell
// instead of 6. Texel (I, J) holds the cells
//   .x (2I, 2J)   .y (2I+1, 2J)   .z (2I, 2J+1)   .w (2I+1, 2J+1).
// u_size is the level's size in cells; cells past it (odd sizes) are padding
// and always 0.
#include "sim.glsl"

// The four cells of texel T, as ivec4 columns and rows.
ivec4 packed_i(ivec2 T) { return 2 * T.x + ivec4(0, 1, 0, 1); }
ivec4 packed_j(ivec2 T) { return 2 * T.y + ivec4(0, 0, 1, 1); }

// Texel T of a packed field, clamped to the texture.
vec4 packed_texel(sampler2D t, ivec2 T)
{
    return texelFetch(t, clamp(T, ivec2(0), textureSize(t, 0) - 1), 0);
}

// The value of cell c in a packed field.
float packed_at(sampler2D t, ivec2 c)
{
    vec4 v = texelFetch(t, c >> 1, 0);
    return v[(c.x & 1) + 2 * (c.y & 1)];
}

// v where m, else 0.
vec4 packed_sel(bvec4 m, vec4 v) { return mix(vec4(0.0), v, m); }

// The true cells of texel T (false for padding).
bvec4 packed_valid(ivec2 T)
{
    bvec4 a = lessThan(packed_i(T), ivec4(u_size.x)), b = lessThan(packed_j(T), ivec4(u_size.y));
    return bvec4(a.x && b.x, a.y && b.y, a.z && b.z, a.w && b.w);
}

// The four neighbours of each cell of texel T (left, right, down = j-1,
// up = j+1) and whether each lies inside the box (Neumann walls: a
// neighbour outside does not count).
struct PackedNb {
    vec4 l, r, d, u;
    bvec4 hl, hr, hd, hu;
};

PackedNb packed_neighbours(sampler2D t, ivec2 T, vec4 C)
{
    vec4 L = packed_texel(t, T - ivec2(1, 0)), R = packed_texel(t, T + ivec2(1, 0));
    vec4 B = packed_texel(t, T - ivec2(0, 1)), U = packed_texel(t, T + ivec2(0, 1));
    ivec4 i = packed_i(T), j = packed_j(T);
    PackedNb n;
    n.l = vec4(L.y, C.x, L.w, C.z);
    n.r = vec4(C.y, R.x, C.w, R.z);
    n.d = vec4(B.z, B.w, C.x, C.y);
    n.u = vec4(C.z, C.w, U.x, U.y);
    n.hl = greaterThan(i, ivec4(0));
    n.hr = lessThan(i, ivec4(u_size.x - 1));
    n.hd = greaterThan(j, ivec4(0));
    n.hu = lessThan(j, ivec4(u_size.y - 1));
    return n;
}
