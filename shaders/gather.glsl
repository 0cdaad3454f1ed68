// gather.glsl: the maths of one Jacobi iteration of the implicit gathering
// solve, shared by gather_jacobi (a pass an iteration) and
// gather_jacobi_tile (several a dispatch, the tiled compute backend):
//   e − a ∇·(D ∇e) = ρ0 − ρ*,   a = dt·vg/h²,  D = ρ0·ρ̃* (lagged),
// face D = mean of the two cells, no flux through the walls; e, D and the
// right-hand side packed, four cells a texel (packed.glsl).
#include "packed.glsl"

// Texel T's new e from its D (dc) and its neighbours' (D), its right-hand
// side, and its neighbours' e (e; ignored with first: from e = 0).
vec4 gather_jacobi_at(ivec2 T, vec4 dc, PackedNb D, vec4 rhs, bool first, PackedNb e, float a)
{
    vec4 num = rhs;
    vec4 den = vec4(1.0);
    vec4 fl = packed_sel(D.hl, a * 0.5 * (dc + D.l)), fr = packed_sel(D.hr, a * 0.5 * (dc + D.r));
    vec4 fd = packed_sel(D.hd, a * 0.5 * (dc + D.d)), fu = packed_sel(D.hu, a * 0.5 * (dc + D.u));
    if (!first) {
        num += fl * e.l;
        num += fr * e.r;
        num += fd * e.d;
        num += fu * e.u;
    }
    den += fl;
    den += fr;
    den += fd;
    den += fu;
    return packed_sel(packed_valid(T), num / den);
}
