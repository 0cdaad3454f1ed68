// substep_plan: a transport stage's substep count on the GPU, without a
// read-back (the tiled compute backend). From S (speed_max's last texel):
// n = method_substeps_for(S) (src/method.c, the same float operations),
// each substep's k = (dt / n) / h, and the indirect dispatch arguments of
// substeps 0 .. u_bound-1: the tile grid for the first n, no groups after.
// u_reduce = 1 (a small grid): S is not read from speed_max's last texel
// but reduced here, over the face speeds u_speed (a velocity or drift
// field; u_size the grid, u_cap each axis' clamp), by the work group's
// invocations: one dispatch instead of speed_max's chain and this one.
// The largest of the same transport_cell_speed values, so the same S.
#define SM_OWN_MAIN 1
#include "sim.glsl"
#include "transport.glsl"

uniform sampler2D u_speed;
uniform int u_reduce;
uniform float u_cap;
uniform float u_scale;   // method_speed_scale(dt, h)
uniform float u_dt;
uniform int u_bound;     // the stage's substeps at the speed limit
uniform ivec2 u_groups;  // the tile grid of one substep

#define NT 1024
layout(local_size_x = NT) in;
shared float s_max[NT];
layout(std430, binding = 1) buffer Plan {
    uint p_n;
    float p_k;
    uint p_total;  // substeps run since the buffer was made (bench's byte count)
    uint p_pad1;
    uint p_args[];
};

void main()
{
    uint i0 = gl_LocalInvocationIndex;
    float S;
    if (u_reduce != 0) {
        float m = 0.0;
        for (int q = int(i0); q < u_size.x * u_size.y; q += NT) {
            int x = q % u_size.x, y = q / u_size.x;
            m = max(m, transport_cell_speed(Uf(u_speed, x, y), Uf(u_speed, x + 1, y),
                                            Vf(u_speed, x, y), Vf(u_speed, x, y + 1), u_cap));
        }
        s_max[i0] = m;
        barrier();
        for (uint h = NT / 2; h > 0u; h /= 2u) {
            if (i0 < h) s_max[i0] = max(s_max[i0], s_max[i0 + h]);
            barrier();
        }
        S = s_max[0];
    } else {
        S = texelFetch(u_speed, ivec2(0, 0), 0).r;
    }
    float c = S * u_scale - 1e-4;
    int n = 1;
    if (c > 1.0) n = c >= float(u_bound) ? u_bound : min(int(ceil(c)), u_bound);
    if (i0 == 0u) {
        p_n = uint(n);
        p_k = (u_dt / float(n)) / u_h;
        p_total += uint(n);
    }
    for (int i = int(i0); i < u_bound; i += NT) {
        bool on = i < n;
        p_args[3 * i] = on ? uint(u_groups.x) : 0u;
        p_args[3 * i + 1] = on ? uint(u_groups.y) : 0u;
        p_args[3 * i + 2] = 1u;
    }
}
