// advect_density: one conservative flux-form substep of density transport.
// Face flux = k·a·ρ_face (k = dt_sub/h, a = face speed clamped to ±umax,
// ρ_face = upwind value with a minmod-limited slope), scaled by the donor's
// ratio from advect_ratio, so ρ stays ≥ 0 and every flux leaves one cell
// exactly as it enters the next: Σρ is conserved. ρ*, ρ̃* (.g, .b) pass through.
#include "advect_flux.glsl"

uniform sampler2D u_ratio;
out vec4 o_out;

float ratio_at(int i, int j) { return texelFetch(u_ratio, ivec2(i, j), 0).r; }

void main()
{
    ivec2 c = cell();
    int i = c.x, j = c.y;
    vec4 d0 = texelFetch(u_dens, c, 0);
    float r = d0.r;
    int d;
    float f;
    f = flux_x(i, j, d);
    if (f != 0.0) r += f * ratio_at(d, j);
    f = flux_x(i + 1, j, d);
    if (f != 0.0) r -= f * ratio_at(d, j);
    f = flux_y(i, j, d);
    if (f != 0.0) r += f * ratio_at(i, d);
    f = flux_y(i, j + 1, d);
    if (f != 0.0) r -= f * ratio_at(i, d);
    o_out = vec4(max(r, 0.0), d0.g, d0.b, 0.0);
}
