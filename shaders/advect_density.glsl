// advect_density: one conservative flux-form substep of density transport.
// Face flux = k·a·ρ_face (k = dt_sub/h, a = face speed clamped to ±umax,
// ρ_face = upwind value with a minmod-limited slope). Each cell scales all
// the fluxes it donates by its ratio min(1, ρ/outflow), so ρ stays ≥ 0 and
// every flux leaves one cell exactly as it enters the next: Σρ is conserved.
// ρ* and ρ̃* (.g, .b) pass through.
#include "sim.glsl"

uniform sampler2D u_vel;
uniform sampler2D u_dens;
uniform float u_k;
uniform float u_umax;
out vec4 o_out;

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

float ratio(int i, int j)
{
    int d;
    float out_ = 0.0, f;
    f = flux_x(i, j, d);     if (f < 0.0) out_ -= f;
    f = flux_x(i + 1, j, d); if (f > 0.0) out_ += f;
    f = flux_y(i, j, d);     if (f < 0.0) out_ -= f;
    f = flux_y(i, j + 1, d); if (f > 0.0) out_ += f;
    float r = rho_at(i, j);
    return out_ > r ? r / out_ : 1.0;
}

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec4 d0 = texelFetch(u_dens, c, 0);
    float rc = ratio(i, j);
    float r = d0.r;
    int d;
    float f;
    f = flux_x(i, j, d);
    if (f != 0.0) r += f * (d == i ? rc : ratio(d, j));
    f = flux_x(i + 1, j, d);
    if (f != 0.0) r -= f * (d == i ? rc : ratio(d, j));
    f = flux_y(i, j, d);
    if (f != 0.0) r += f * (d == j ? rc : ratio(i, d));
    f = flux_y(i, j + 1, d);
    if (f != 0.0) r -= f * (d == j ? rc : ratio(i, d));
    o_out = vec4(max(r, 0.0), d0.g, d0.b, 0.0);
}
