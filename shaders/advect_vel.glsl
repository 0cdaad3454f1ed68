// advect_vel: semi-Lagrangian self-advection of the staggered velocity.
// Each face traces back by dt·u/h cells and samples its own component
// bilinearly on its own lattice (u at (i, j+0.5), v at (i+0.5, j)).
#include "sim.glsl"

uniform sampler2D u_vel;
uniform float u_s;   // dt/h

float sample_u(float x, float y)
{
    float fx = clamp(x, 0.0, float(u_size.x)), fy = clamp(y - 0.5, 0.0, float(u_size.y - 1));
    int i0 = min(int(floor(fx)), u_size.x - 1), j0 = min(int(floor(fy)), u_size.y - 1);
    int j1 = min(j0 + 1, u_size.y - 1);
    float tx = fx - float(i0), ty = fy - float(j0);
    float a = Uf(u_vel, i0, j0) + tx * (Uf(u_vel, i0 + 1, j0) - Uf(u_vel, i0, j0));
    float b = Uf(u_vel, i0, j1) + tx * (Uf(u_vel, i0 + 1, j1) - Uf(u_vel, i0, j1));
    return a + ty * (b - a);
}

float sample_v(float x, float y)
{
    float fx = clamp(x - 0.5, 0.0, float(u_size.x - 1)), fy = clamp(y, 0.0, float(u_size.y));
    int i0 = min(int(floor(fx)), u_size.x - 1), j0 = min(int(floor(fy)), u_size.y - 1);
    int i1 = min(i0 + 1, u_size.x - 1);
    float tx = fx - float(i0), ty = fy - float(j0);
    float a = Vf(u_vel, i0, j0) + tx * (Vf(u_vel, i1, j0) - Vf(u_vel, i0, j0));
    float b = Vf(u_vel, i0, j0 + 1) + tx * (Vf(u_vel, i1, j0 + 1) - Vf(u_vel, i0, j0 + 1));
    return a + ty * (b - a);
}

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    float nu = 0.0, nv = 0.0;
    if (i > 0) {
        float uu = Uf(u_vel, i, j);
        float vv = 0.25 * (Vf(u_vel, i - 1, j) + Vf(u_vel, i, j) +
                           Vf(u_vel, i - 1, j + 1) + Vf(u_vel, i, j + 1));
        nu = sample_u(float(i) - u_s * uu, float(j) + 0.5 - u_s * vv);
    }
    if (j > 0) {
        float vv = Vf(u_vel, i, j);
        float uu = 0.25 * (Uf(u_vel, i, j - 1) + Uf(u_vel, i + 1, j - 1) +
                           Uf(u_vel, i, j) + Uf(u_vel, i + 1, j));
        nv = sample_v(float(i) + 0.5 - u_s * uu, float(j) - u_s * vv);
    }
    return vec4(nu, nv, 0.0, 0.0);
}
