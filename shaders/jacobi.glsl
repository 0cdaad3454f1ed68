// jacobi: one Jacobi iteration of the pressure Poisson equation ∇²p = ∇·u
// (p absorbs dt), Neumann walls: only neighbours inside the box count.
#include "sim.glsl"

uniform sampler2D u_p;
uniform sampler2D u_div;
out vec4 o_out;

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float sum = 0.0;
    int n = 0;
    if (i > 0) { sum += texelFetch(u_p, ivec2(i - 1, j), 0).r; n++; }
    if (i < u_size.x - 1) { sum += texelFetch(u_p, ivec2(i + 1, j), 0).r; n++; }
    if (j > 0) { sum += texelFetch(u_p, ivec2(i, j - 1), 0).r; n++; }
    if (j < u_size.y - 1) { sum += texelFetch(u_p, ivec2(i, j + 1), 0).r; n++; }
    float div = texelFetch(u_div, c, 0).r;
    o_out = vec4((sum - u_h * u_h * div) / float(n), 0.0, 0.0, 0.0);
}
