// substep_plan: a transport stage's substep count on the GPU, without a
// read-back (the tiled compute backend). From S (speed_max's last texel):
// n = method_substeps_for(S) (src/method.c, the same float operations),
// each substep's k = (dt / n) / h, and the indirect dispatch arguments of
// substeps 0 .. u_bound-1: the tile grid for the first n, no groups after.
#define SM_OWN_MAIN 1
#include "sim.glsl"

uniform sampler2D u_speed;
uniform float u_scale;   // method_speed_scale(dt, h)
uniform float u_dt;
uniform int u_bound;     // the stage's substeps at the speed limit
uniform ivec2 u_groups;  // the tile grid of one substep

layout(local_size_x = 64) in;
layout(std430, binding = 1) buffer Plan {
    uint p_n;
    float p_k;
    uint p_total;  // substeps run since the buffer was made (bench's byte count)
    uint p_pad1;
    uint p_args[];
};

void main()
{
    float c = texelFetch(u_speed, ivec2(0, 0), 0).r * u_scale - 1e-4;
    int n = 1;
    if (c > 1.0) n = c >= float(u_bound) ? u_bound : min(int(ceil(c)), u_bound);
    uint i0 = gl_LocalInvocationIndex;
    if (i0 == 0u) {
        p_n = uint(n);
        p_k = (u_dt / float(n)) / u_h;
        p_total += uint(n);
    }
    for (int i = int(i0); i < u_bound; i += 64) {
        bool on = i < n;
        p_args[3 * i] = on ? uint(u_groups.x) : 0u;
        p_args[3 * i + 1] = on ? uint(u_groups.y) : 0u;
        p_args[3 * i + 2] = 1u;
    }
}
