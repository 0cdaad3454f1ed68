// mg_prolong: x += the coarse correction of the parent cell (piecewise
// constant prolongation). Both levels are packed (packed.glsl): the four
// cells of fine texel T share the parent, coarse cell T.
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_coarse;
out vec4 o_out;

void main()
{
    ivec2 T = cell();
    float c = packed_at(u_coarse, T);
    o_out = packed_sel(packed_valid(T), texelFetch(u_p, T, 0) + c);
}
