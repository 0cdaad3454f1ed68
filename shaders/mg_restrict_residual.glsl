// mg_restrict_residual: mg_residual and mg_restrict in one pass (the
// compute backend): coarse cell (I, J)'s right-hand side is the sum of the
// residuals of fine texel (I, J)'s four cells, each computed here by
// packed_residual instead of read from a residual field. u_size is the FINE
// level's size (for the residual's walls), u_csize the coarse one's.
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
uniform ivec2 u_csize;

float children(ivec2 F)
{
    vec4 r = packed_residual(u_p, u_div, clamp(F, ivec2(0), textureSize(u_p, 0) - 1), u_h);
    return r.x + r.y + r.z + r.w;
}

vec4 stage()
{
    ivec2 T = cell();
    ivec4 i = packed_i(T), j = packed_j(T);
    vec4 b = vec4(children(ivec2(i.x, j.x)), children(ivec2(i.y, j.y)),
                  children(ivec2(i.z, j.z)), children(ivec2(i.w, j.w)));
    bvec4 a = lessThan(i, ivec4(u_csize.x)), c = lessThan(j, ivec4(u_csize.y));
    return packed_sel(bvec4(a.x && c.x, a.y && c.y, a.z && c.z, a.w && c.w), b);
}
