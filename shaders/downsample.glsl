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

// u_chan 4: the flow's statistics for the drift's limit (gpu_solver.c's
// pass_flow_stats, cpu_solver.c's flow_stats): u_src the velocity, the
// means of (u, v, u², v²); u_mode 1 writes the four sums (no count), u_mode 2
// counts the fine cells itself (u_full the whole factor, u_fine_size the
// fine grid).
uniform int u_full;
uniform ivec2 u_fine_size;

vec4 stats(ivec2 c, int f)
{
    vec4 sum = vec4(0.0);
    if (u_mode == 2) {
        for (int j = c.y * f; j < c.y * f + f && j < u_src_size.y; j++)
            for (int i = c.x * f; i < c.x * f + f && i < u_src_size.x; i++) sum += texelFetch(u_src, ivec2(i, j), 0);
        ivec2 lo = c * u_full, hi = min(lo + u_full, u_fine_size);
        return sum / float((hi.x - lo.x) * (hi.y - lo.y));
    }
    int n = 0;
    for (int j = c.y * f; j < c.y * f + f && j < u_size.y; j++)
        for (int i = c.x * f; i < c.x * f + f && i < u_size.x; i++) {
            vec2 q = texelFetch(u_src, ivec2(i, j), 0).rg;
            sum += vec4(q, q * q);
            n++;
        }
    return u_mode == 1 ? sum : sum / float(n);
}

vec4 stage()
{
    ivec2 c = cell();
    int f = u_factor;
    if (u_chan == 4) return stats(c, f);
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
