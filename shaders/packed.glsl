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

// The true cells of texel T of a level of `size` cells (false for padding);
// packed_valid: of u_size's level. (The *_at functions below take the
// level's size, for mg_bottom, which runs several levels in one dispatch.)
bvec4 packed_valid_at(ivec2 T, ivec2 size)
{
    bvec4 a = lessThan(packed_i(T), ivec4(size.x)), b = lessThan(packed_j(T), ivec4(size.y));
    return bvec4(a.x && b.x, a.y && b.y, a.z && b.z, a.w && b.w);
}

bvec4 packed_valid(ivec2 T) { return packed_valid_at(T, u_size); }

// The four neighbours of each cell of texel T (left, right, down = j-1,
// up = j+1) and whether each lies inside the box (Neumann walls: a
// neighbour outside does not count).
struct PackedNb {
    vec4 l, r, d, u;
    bvec4 hl, hr, hd, hu;
};

// The same from texel T's own value C and its left, right, lower and upper
// neighbour texels (as packed_texel gives them).
PackedNb packed_nb_at(ivec2 T, vec4 C, vec4 L, vec4 R, vec4 B, vec4 U, ivec2 size)
{
    ivec4 i = packed_i(T), j = packed_j(T);
    PackedNb n;
    n.l = vec4(L.y, C.x, L.w, C.z);
    n.r = vec4(C.y, R.x, C.w, R.z);
    n.d = vec4(B.z, B.w, C.x, C.y);
    n.u = vec4(C.z, C.w, U.x, U.y);
    n.hl = greaterThan(i, ivec4(0));
    n.hr = lessThan(i, ivec4(size.x - 1));
    n.hd = greaterThan(j, ivec4(0));
    n.hu = lessThan(j, ivec4(size.y - 1));
    return n;
}

PackedNb packed_nb(ivec2 T, vec4 C, vec4 L, vec4 R, vec4 B, vec4 U)
{
    return packed_nb_at(T, C, L, R, B, U, u_size);
}

PackedNb packed_neighbours(sampler2D t, ivec2 T, vec4 C)
{
    return packed_nb(T, C, packed_texel(t, T - ivec2(1, 0)), packed_texel(t, T + ivec2(1, 0)),
                     packed_texel(t, T - ivec2(0, 1)), packed_texel(t, T + ivec2(0, 1)));
}

// One damped Jacobi iteration of the pressure Poisson equation for the four
// cells of texel T: pc their values, nb their neighbours, b their
// right-hand side (the divergence), h the level's cell size.
vec4 packed_jacobi_at(ivec2 T, vec4 pc, PackedNb nb, vec4 b, float h, ivec2 size)
{
    vec4 sum = packed_sel(nb.hl, nb.l) + packed_sel(nb.hr, nb.r) + packed_sel(nb.hd, nb.d) +
               packed_sel(nb.hu, nb.u);
    vec4 n = vec4(nb.hl) + vec4(nb.hr) + vec4(nb.hd) + vec4(nb.hu);
    vec4 jac = (sum - h * h * b) / max(n, vec4(1.0));
    return packed_sel(packed_valid_at(T, size), pc + SM_JACOBI_OMEGA * (jac - pc));
}

vec4 packed_jacobi(ivec2 T, vec4 pc, PackedNb nb, vec4 b, float h)
{
    return packed_jacobi_at(T, pc, nb, b, h, u_size);
}

// The residual h²·b − Σ(x_n − x_c) of texel T's four cells, from their
// values xc, neighbours nb and right-hand side b.
vec4 packed_residual_at(ivec2 T, vec4 xc, PackedNb nb, vec4 b, float h, ivec2 size)
{
    vec4 lap = packed_sel(nb.hl, nb.l - xc) + packed_sel(nb.hr, nb.r - xc) +
               packed_sel(nb.hd, nb.d - xc) + packed_sel(nb.hu, nb.u - xc);
    return packed_sel(packed_valid_at(T, size), h * h * b - lap);
}

// The same from the fields (mg_residual).
vec4 packed_residual(sampler2D x, sampler2D b, ivec2 T, float h)
{
    vec4 xc = texelFetch(x, T, 0);
    return packed_residual_at(T, xc, packed_neighbours(x, T, xc), texelFetch(b, T, 0), h, u_size);
}

// The coarse correction of fine texel T's four cells (mg_prolong), from the
// coarse level's packed field; u_size is the fine level's size.
// Fine texel T's four cells lie around coarse cell T: the coarse cells it
// interpolates from are T and its neighbours, clamped to the coarse level
// (cs cells). Returns (left, right, down, up) columns and rows.
ivec4 packed_prolong_cells(ivec2 T, ivec2 cs)
{
    return ivec4(T.x > 0 ? T.x - 1 : T.x, T.x < cs.x - 1 ? T.x + 1 : T.x,
                 T.y > 0 ? T.y - 1 : T.y, T.y < cs.y - 1 ? T.y + 1 : T.y);
}

// The bilinear weights of the correction from the coarse cells: c (the
// centre), cl cr cd cu (beside it), dld drd dlu dru (its corners).
vec4 packed_prolong_mix(float c, float cl, float cr, float cd, float cu, float dld, float drd,
                        float dlu, float dru)
{
    const float s = 1.0 / 16.0;
    return vec4((9.0 * c + 3.0 * (cl + cd) + dld) * s, (9.0 * c + 3.0 * (cr + cd) + drd) * s,
                (9.0 * c + 3.0 * (cl + cu) + dlu) * s, (9.0 * c + 3.0 * (cr + cu) + dru) * s);
}

vec4 packed_prolong(sampler2D coarse, ivec2 T)
{
    ivec4 n = packed_prolong_cells(T, (u_size + 1) / 2);
    return packed_prolong_mix(
        packed_at(coarse, T), packed_at(coarse, ivec2(n.x, T.y)), packed_at(coarse, ivec2(n.y, T.y)),
        packed_at(coarse, ivec2(T.x, n.z)), packed_at(coarse, ivec2(T.x, n.w)),
        packed_at(coarse, n.xz), packed_at(coarse, n.yz), packed_at(coarse, n.xw),
        packed_at(coarse, n.yw));
}
