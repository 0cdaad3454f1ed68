// mg_prolong: x += the coarse correction of the parent cell (piecewise
// constant prolongation).
#include "sim.glsl"

uniform sampler2D u_p;
uniform sampler2D u_coarse;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    o_out = vec4(texelFetch(u_p, c, 0).r + texelFetch(u_coarse, c / 2, 0).r, 0.0, 0.0, 0.0);
}
