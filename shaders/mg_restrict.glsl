// mg_restrict: coarse right-hand side = ½ Σ of the up to four fine children's
// residuals (u_size is the FINE level's size here).
#include "sim.glsl"

uniform sampler2D u_r;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    float sum = 0.0;
    for (int j = 2 * c.y; j < 2 * c.y + 2 && j < u_size.y; j++)
        for (int i = 2 * c.x; i < 2 * c.x + 2 && i < u_size.x; i++)
            sum += texelFetch(u_r, ivec2(i, j), 0).r;
    o_out = vec4(0.5 * sum, 0.0, 0.0, 0.0);
}
