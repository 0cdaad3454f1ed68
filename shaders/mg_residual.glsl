// mg_residual: r = h²·b − Σ(x_n − x_c) over the neighbours inside the box
// (the residual of the pressure equation on one multigrid level; h = 1 and
// b = the restricted residual on the coarse levels), four cells per fragment
// (packed.glsl).
#include "packed.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;

vec4 stage() { return packed_residual(u_p, u_div, cell(), u_h); }
