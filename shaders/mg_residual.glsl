// mg_residual: r = h²·b − Σ(x_n − x_c) over the neighbours inside the box
// (the residual of the pressure equation on one multigrid level; h = 1 and
// b = the restricted residual on the coarse levels).
#include "sim.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float xc = texelFetch(u_p, c, 0).r, lap = 0.0;
    if (i > 0) lap += texelFetch(u_p, ivec2(i - 1, j), 0).r - xc;
    if (i < u_size.x - 1) lap += texelFetch(u_p, ivec2(i + 1, j), 0).r - xc;
    if (j > 0) lap += texelFetch(u_p, ivec2(i, j - 1), 0).r - xc;
    if (j < u_size.y - 1) lap += texelFetch(u_p, ivec2(i, j + 1), 0).r - xc;
    o_out = vec4(u_h * u_h * texelFetch(u_div, c, 0).r - lap, 0.0, 0.0, 0.0);
}
