// gather_ratio: each cell's positivity ratio min(1, ρ0 / outflow) for the
// gathering fluxes; gather_apply scales every flux a cell donates by it.
#include "gather_flux.glsl"


float ratio(ivec2 c)
{
    float out_ = 0.0;
    for (int q = 0; q < 4; q++) {
        ivec2 n = c + NB[q];
        if (!inside(n)) continue;
        out_ += max(flux(c, n), 0.0);
    }
    float r = texelFetch(u_dens, c, 0).r;
    return out_ > r ? r / out_ : 1.0;
}

vec4 stage()
{
    return vec4(ratio(cell()), 0.0, 0.0, 0.0);
}
