// mg_prolong: x += the coarse correction, bilinear between the four nearest
// coarse cell centres (ref_pass_mg_prolong): 9/16 for the parent, 3/16 for
// each side neighbour, 1/16 for the diagonal one; past a wall the parent
// stands in (Neumann). Both levels are packed (packed.glsl): the four cells
// of fine texel T share the parent, coarse cell T. u_size is the FINE size.
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_coarse;

vec4 stage()
{
    ivec2 T = cell();
    return packed_sel(packed_valid(T), texelFetch(u_p, T, 0) + packed_prolong(u_coarse, T));
}
