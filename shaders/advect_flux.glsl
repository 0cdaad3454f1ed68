// advect_flux.glsl: the upwind, slope-limited face fluxes of density
// transport, shared by advect_ratio and advect_density (as flux_x, flux_y,
// face_rho_* and advect_ratio in src/refsolver.c).
#include "sim.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform float u_k;
uniform float u_umax;

float rho_at(int i, int j)
{
    return texelFetch(u_dens, ivec2(clamp(i, 0, u_size.x - 1), clamp(j, 0, u_size.y - 1)), 0).r;
}

float minmod(float a, float b)
{
    if (a > 0.0 && b > 0.0) return min(a, b);
    if (a < 0.0 && b < 0.0) return max(a, b);
    return 0.0;
}

float face_rho_x(int i, int j, float a)
{
    int c = a > 0.0 ? i - 1 : i;
    float rc = rho_at(c, j);
    float s = minmod(rc - rho_at(c - 1, j), rho_at(c + 1, j) - rc);
    return a > 0.0 ? rc + 0.5 * s : rc - 0.5 * s;
}

float face_rho_y(int i, int j, float a)
{
    int c = a > 0.0 ? j - 1 : j;
    float rc = rho_at(i, c);
    float s = minmod(rc - rho_at(i, c - 1), rho_at(i, c + 1) - rc);
    return a > 0.0 ? rc + 0.5 * s : rc - 0.5 * s;
}

float flux_x(int i, int j, out int donor)
{
    float a = clamp(Uf(u_vel, i, j), -u_umax, u_umax);
    donor = a > 0.0 ? i - 1 : i;
    return a == 0.0 ? 0.0 : u_k * a * face_rho_x(i, j, a);
}

float flux_y(int i, int j, out int donor)
{
    float a = clamp(Vf(u_vel, i, j), -u_umax, u_umax);
    donor = a > 0.0 ? j - 1 : j;
    return a == 0.0 ? 0.0 : u_k * a * face_rho_y(i, j, a);
}

