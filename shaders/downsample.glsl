// downsample: first stage of the blur. Coarse cell (I, J) = mean of the
// factor x factor block of fine cells it covers (clipped at the edges).
// Reads channel u_chan of u_src (0 = ρ, 1 = ρ*). Output: coarse .r.
// A large factor (over SOLVER_DOWNSAMPLE_SPLIT, gpu_solver.c) goes in two dispatches, so that
// no invocation sums thousands of texels one after another (4096 at 4096²
// by default): u_mode 1 writes each 8 x 8 block's sum and count (.r, .g)
// from the fine grid, u_mode 2 the coarse mean from those (u_src the sums,
// u_src_size their grid, u_factor the factor over 8). u_mode 0: one go.
#include "sim.glsl"

uniform sampler2D u_src;
uniform int u_chan;
uniform int u_factor;
uniform int u_mode;
uniform ivec2 u_src_size;

vec4 stage()
{
    ivec2 c = cell();
    int f = u_factor;
    float sum = 0.0;
    if (u_mode == 2) {
        float n = 0.0;
        for (int j = c.y * f; j < c.y * f + f && j < u_src_size.y; j++)
            for (int i = c.x * f; i < c.x * f + f && i < u_src_size.x; i++) {
                vec2 s = texelFetch(u_src, ivec2(i, j), 0).rg;
                sum += s.r;
                n += s.g;
            }
        return vec4(sum / n, 0.0, 0.0, 0.0);
    }
    int n = 0;
    for (int j = c.y * f; j < c.y * f + f && j < u_size.y; j++)
        for (int i = c.x * f; i < c.x * f + f && i < u_size.x; i++) {
            sum += texelFetch(u_src, ivec2(i, j), 0)[u_chan];
            n++;
        }
    if (u_mode == 1) return vec4(sum, float(n), 0.0, 0.0);
    return vec4(sum / float(n), 0.0, 0.0, 0.0);
}
