// advect_ratio: the first half of one substep of density transport on the
// fragment backend (the compute backend does the whole substep in
// transport_tile). For each cell: the fluxes through its left and bottom
// faces and its positivity ratio over all four (transport.glsl). Out: .r
// ratio, .g flux through the left face (i-1 | i), .b through the bottom face
// (j-1 | j); advect_density reads a cell's right and top fluxes from its
// neighbours.
#include "sim.glsl"
#include "transport.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform float u_k;
uniform float u_umax;

float rho_at(int i, int j)
{
    return texelFetch(u_dens, ivec2(clamp(i, 0, u_size.x - 1), clamp(j, 0, u_size.y - 1)), 0).r;
}

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    // each density once: the row i-2..i+2 and the column j-2..j+2
    float x0 = rho_at(i - 2, j), x1 = rho_at(i - 1, j), rc = rho_at(i, j);
    float x3 = rho_at(i + 1, j), x4 = rho_at(i + 2, j);
    float y0 = rho_at(i, j - 2), y1 = rho_at(i, j - 1), y3 = rho_at(i, j + 1), y4 = rho_at(i, j + 2);
    float fl = transport_flux(u_k, u_umax, Uf(u_vel, i, j), x0, x1, rc, x3);
    float fr = transport_flux(u_k, u_umax, Uf(u_vel, i + 1, j), x1, rc, x3, x4);
    float fb = transport_flux(u_k, u_umax, Vf(u_vel, i, j), y0, y1, rc, y3);
    float ft = transport_flux(u_k, u_umax, Vf(u_vel, i, j + 1), y1, rc, y3, y4);
    return vec4(transport_ratio(rc, fl, fr, fb, ft), fl, fb, 0.0);
}
