// mg_residual: r = h²·b − Σ(x_n − x_c) over the neighbours inside the box
// (the residual of the pressure equation on one multigrid level; h = 1 and
// b = the restricted residual on the coarse levels), four cells per fragment
// (packed.glsl).
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;

vec4 stage()
{
    ivec2 T = cell();
    vec4 xc = texelFetch(u_p, T, 0);
    PackedNb nb = packed_neighbours(u_p, T, xc);
    vec4 lap = packed_sel(nb.hl, nb.l - xc) + packed_sel(nb.hr, nb.r - xc) +
               packed_sel(nb.hd, nb.d - xc) + packed_sel(nb.hu, nb.u - xc);
    return packed_sel(packed_valid(T), u_h * u_h * texelFetch(u_div, T, 0) - lap);
}
