// gather_jacobi: one Jacobi iteration of the implicit gathering solve
// (gather.glsl). e and D are packed, four cells per fragment (packed.glsl);
// D comes from gather_coef, the right-hand side from gather_rhs.
// The step's solve starts from the last step's e (ref_step says why, and
// why the count is even); with u_first = 1 (single-pass tests) the previous
// iterate is e = 0.
#include "gather.glsl"

uniform sampler2D u_rhs;   // ρ0 − ρ*, packed
uniform sampler2D u_coef;  // D, packed
uniform sampler2D u_e;     // e, packed
uniform int u_first;
uniform float u_a;

vec4 stage()
{
    ivec2 T = cell();
    vec4 dc = texelFetch(u_coef, T, 0);
    PackedNb e = packed_neighbours(u_e, T, texelFetch(u_e, T, 0));
    return gather_jacobi_at(T, dc, packed_neighbours(u_coef, T, dc), texelFetch(u_rhs, T, 0),
                            u_first != 0, e, u_a);
}
