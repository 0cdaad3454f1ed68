// curl: the vorticity ω = ∂v/∂x − ∂u/∂y at every cell corner, (W+1) x (H+1)
// texels (corner (i, j) shared by cells (i-1, j-1) .. (i, j)), from the four
// faces around it, the velocity 0 outside the box; in 1/time. blur.glsl
// then smooths it (METHOD_SWIRL_SMOOTH) for the confinement in force.glsl.
// Mirrors corner_curl and ref_pass_curl in src/cpu_solver.c.
#include "sim.glsl"

uniform sampler2D u_vel;

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y, w = u_size.x, h = u_size.y;
    if (i > w || j > h) return vec4(0.0);
    float vr = (i < w && j > 0 && j < h) ? texelFetch(u_vel, ivec2(i, j), 0).g : 0.0;
    float vl = (i > 0 && j > 0 && j < h) ? texelFetch(u_vel, ivec2(i - 1, j), 0).g : 0.0;
    float ut = (j < h && i > 0 && i < w) ? texelFetch(u_vel, ivec2(i, j), 0).r : 0.0;
    float ub = (j > 0 && i > 0 && i < w) ? texelFetch(u_vel, ivec2(i, j - 1), 0).r : 0.0;
    return vec4(((vr - vl) - (ut - ub)) * (1.0 / u_h), 0.0, 0.0, 0.0);
}
