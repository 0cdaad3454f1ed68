// mg_coarse: the coarsest multigrid level's METHOD_MG_COARSE_ITERS damped
// Jacobi iterations (as jacobi.glsl with h = 1, from p = 0) in one pass
// instead of one pass each: the level has at most 8x8 cells, so every
// fragment runs all the iterations on the whole level in registers and
// writes its own texel (packed.glsl).
#include "packed.glsl"

uniform sampler2D u_div;   // the level's right-hand side, packed
uniform int u_iters;

const int N = SM_MG_COARSE_MAX; // METHOD_MG_COARSE_MAX (method.h)

vec4 stage()
{
    ivec2 T = cell();
    int w = u_size.x, h = u_size.y;
    float b[N * N], p[N * N], q[N * N];
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            b[j * N + i] = packed_at(u_div, ivec2(i, j));
            p[j * N + i] = 0.0;
        }
    for (int k = 0; k < u_iters; k++) {
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                float sum = 0.0, n = 0.0;
                if (i > 0) { sum += p[j * N + i - 1]; n += 1.0; }
                if (i < w - 1) { sum += p[j * N + i + 1]; n += 1.0; }
                if (j > 0) { sum += p[(j - 1) * N + i]; n += 1.0; }
                if (j < h - 1) { sum += p[(j + 1) * N + i]; n += 1.0; }
                float pc = p[j * N + i];
                float jac = (sum - b[j * N + i]) / max(n, 1.0);
                q[j * N + i] = pc + SM_JACOBI_OMEGA * (jac - pc);
            }
        for (int c = 0; c < N * N; c++) p[c] = q[c];
    }
    ivec4 i = packed_i(T), j = packed_j(T);
    bvec4 v = packed_valid(T);
    vec4 o = vec4(0.0);
    if (v.x) o.x = p[j.x * N + i.x];
    if (v.y) o.y = p[j.y * N + i.y];
    if (v.z) o.z = p[j.z * N + i.z];
    if (v.w) o.w = p[j.w * N + i.w];
    return o;
}
