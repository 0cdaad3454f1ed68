// advect_ratio: the first half of one substep of density transport. For
// each cell: the upwind, slope-limited fluxes through its left and bottom
// faces and its positivity ratio min(1, ρ / outflow) over all four faces
// (flux_x, flux_y and advect_ratio in src/refsolver.c). Out: .r ratio,
// .g flux through the left face (i-1 | i), .b through the bottom face
// (j-1 | j); advect_density reads a cell's right and top fluxes from its
// neighbours. Face flux = k·a·ρ_face, k = dt_sub/h, a = the face speed
// clamped to ±umax, ρ_face the upwind value with a minmod-limited slope.
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

// The flux through a face with speed a (before clamping) whose four cells
// along the axis hold r0 r1 | r2 r3: upwind from r1 (a > 0) or r2.
float flux(float a, float r0, float r1, float r2, float r3)
{
    a = clamp(a, -u_umax, u_umax);
    if (a == 0.0) return 0.0;
    float f = a > 0.0 ? r1 + 0.5 * minmod(r1 - r0, r2 - r1) : r2 - 0.5 * minmod(r2 - r1, r3 - r2);
    return u_k * a * f;
}

vec4 stage()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    // each density once: the row i-2..i+2 and the column j-2..j+2
    float x0 = rho_at(i - 2, j), x1 = rho_at(i - 1, j), rc = rho_at(i, j);
    float x3 = rho_at(i + 1, j), x4 = rho_at(i + 2, j);
    float y0 = rho_at(i, j - 2), y1 = rho_at(i, j - 1), y3 = rho_at(i, j + 1), y4 = rho_at(i, j + 2);
    float fl = flux(Uf(u_vel, i, j), x0, x1, rc, x3);
    float fr = flux(Uf(u_vel, i + 1, j), x1, rc, x3, x4);
    float fb = flux(Vf(u_vel, i, j), y0, y1, rc, y3);
    float ft = flux(Vf(u_vel, i, j + 1), y1, rc, y3, y4);
    float out_ = 0.0;
    if (fl < 0.0) out_ -= fl;
    if (fr > 0.0) out_ += fr;
    if (fb < 0.0) out_ -= fb;
    if (ft > 0.0) out_ += ft;
    return vec4(out_ > rc ? rc / out_ : 1.0, fl, fb, 0.0);
}
