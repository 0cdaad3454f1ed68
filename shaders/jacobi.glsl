// jacobi: one damped Jacobi iteration of the pressure Poisson equation
// ∇²p = ∇·u (p absorbs dt), Neumann walls: only neighbours inside the box
// count. p += ω (p_jacobi − p), ω = 0.8 (REF_JACOBI_OMEGA): plain Jacobi
// leaves the checkerboard mode undamped in a closed box.
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
    float pc = texelFetch(u_p, c, 0).r;
    float jac = (sum - u_h * u_h * div) / float(n);
    o_out = vec4(pc + 0.8 * (jac - pc), 0.0, 0.0, 0.0);
}
