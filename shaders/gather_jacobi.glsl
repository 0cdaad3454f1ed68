// gather_jacobi: one Jacobi iteration of the implicit gathering solve
//   e − a ∇·(D ∇e) = ρ0 − ρ*,   a = dt·vg/h²,  D = ρ0·ρ̃* (lagged),
// face D = mean of the two cells, no flux through the walls. e and D are
// packed, four cells per fragment (packed.glsl); D comes from gather_coef,
// the right-hand side from gather_rhs.
// The step's solve starts from the last step's e (ref_step says why, and
// why the count is even); with u_first = 1 (single-pass tests) the previous
// iterate is e = 0.
#include "packed.glsl"

uniform sampler2D u_rhs;   // ρ0 − ρ*, packed
uniform sampler2D u_coef;  // D, packed
uniform sampler2D u_e;     // e, packed
uniform int u_first;
uniform float u_a;

vec4 stage()
{
    ivec2 T = cell();
    vec4 dc = texelFetch(u_coef, T, 0);
    PackedNb D = packed_neighbours(u_coef, T, dc);
    vec4 num = texelFetch(u_rhs, T, 0);
    vec4 den = vec4(1.0);
    vec4 fl = packed_sel(D.hl, u_a * 0.5 * (dc + D.l)), fr = packed_sel(D.hr, u_a * 0.5 * (dc + D.r));
    vec4 fd = packed_sel(D.hd, u_a * 0.5 * (dc + D.d)), fu = packed_sel(D.hu, u_a * 0.5 * (dc + D.u));
    if (u_first == 0) {
        PackedNb e = packed_neighbours(u_e, T, texelFetch(u_e, T, 0));
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
