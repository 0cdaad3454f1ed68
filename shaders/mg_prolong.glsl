// mg_prolong: x += the coarse correction, bilinear between the four nearest
// coarse cell centres (ref_pass_mg_prolong): 9/16 for the parent, 3/16 for
// each side neighbour, 1/16 for the diagonal one; past a wall the parent
// stands in (Neumann). Both levels are packed (packed.glsl): the four cells
// of fine texel T share the parent, coarse cell T. u_size is the FINE size.
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_coarse;

float at(int i, int j) { return packed_at(u_coarse, ivec2(i, j)); }

float bilinear(float c, float cx, float cy, float cd)
{
    return (9.0 * c + 3.0 * (cx + cy) + cd) * (1.0 / 16.0);
}

vec4 stage()
{
    ivec2 T = cell();
    ivec2 cs = (u_size + 1) / 2;
    int xl = T.x > 0 ? T.x - 1 : T.x, xr = T.x < cs.x - 1 ? T.x + 1 : T.x;
    int yd = T.y > 0 ? T.y - 1 : T.y, yu = T.y < cs.y - 1 ? T.y + 1 : T.y;
    float c = at(T.x, T.y);
    float cl = at(xl, T.y), cr = at(xr, T.y), cd = at(T.x, yd), cu = at(T.x, yu);
    vec4 corr = vec4(bilinear(c, cl, cd, at(xl, yd)), bilinear(c, cr, cd, at(xr, yd)),
                     bilinear(c, cl, cu, at(xl, yu)), bilinear(c, cr, cu, at(xr, yu)));
    return packed_sel(packed_valid(T), texelFetch(u_p, T, 0) + corr);
}
