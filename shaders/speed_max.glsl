// speed_max: the transport's speed S, reduced a block of u_block x u_block
// cells to a texel (src/gpu_solver.c chains it down to one texel). Mode 0 reads
// face speeds (u_src a velocity or drift field, .r left face, .g bottom
// face; u_size the grid) and takes each cell's transport_cell_speed; mode 1
// takes the largest .r of a reduced field of u_src_size texels. The
// transport's substep count follows S (method_substeps_for, src/method.c).
#include "sim.glsl"
#include "transport.glsl"

uniform sampler2D u_src;
uniform int u_mode;
uniform ivec2 u_src_size;
uniform int u_block;
uniform float u_cap;

vec4 stage()
{
    ivec2 o = cell() * u_block;
    float m = 0.0;
    for (int b = 0; b < u_block; b++)
        for (int a = 0; a < u_block; a++) {
            ivec2 q = o + ivec2(a, b);
            if (u_mode == 0) {
                if (q.x >= u_size.x || q.y >= u_size.y) continue;
                m = max(m, transport_cell_speed(Uf(u_src, q.x, q.y), Uf(u_src, q.x + 1, q.y),
                                                Vf(u_src, q.x, q.y), Vf(u_src, q.x, q.y + 1), u_cap));
            } else {
                if (q.x >= u_src_size.x || q.y >= u_src_size.y) continue;
                m = max(m, texelFetch(u_src, q, 0).r);
            }
        }
    return vec4(m, 0.0, 0.0, 0.0);
}
