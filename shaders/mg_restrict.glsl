// mg_restrict: coarse right-hand side = Σ of the up to four fine children's
// residuals (ref_pass_mg_restrict). Both levels are packed (packed.glsl); u_size is the COARSE
// level's size. Coarse cell (I, J) has the fine cells of fine texel (I, J),
// padding included, which is 0.
#include "packed.glsl"

uniform sampler2D u_r;

float children(ivec2 c)
{
    vec4 r = packed_texel(u_r, c);
    return r.x + r.y + r.z + r.w;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 b = vec4(children(ivec2(i.x, j.x)), children(ivec2(i.y, j.y)),
                  children(ivec2(i.z, j.z)), children(ivec2(i.w, j.w)));
    return packed_sel(packed_valid(T), b);
}
