// advect_ratio: each cell's positivity ratio min(1, ρ / outflow) for one
// substep of density transport; advect_density scales every flux a cell
// donates by it.
#include "advect_flux.glsl"

out vec4 o_out;

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
    o_out = vec4(ratio(c.x, c.y), 0.0, 0.0, 0.0);
}
