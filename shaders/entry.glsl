// entry.glsl: the two thin entry points of every simulation pass. A pass file
// defines `vec4 stage()`, the value of the cell cell() for the field it
// writes; the loader appends this file (shader_load_pass), so one stage
// function runs either as a fragment shader (drawn over the output's
// framebuffer) or as a compute shader (one invocation per texel of the
// output, bound as image unit 0). SM_LOCAL_X/Y, the work-group size, come
// from C (shader.h), never typed here. A compute-only pass with shared
// memory (transport_tile) defines SM_OWN_MAIN and its own main.
#if defined(SM_COMPUTE) && defined(SM_OWN_MAIN)
// the file has its own main (a tiled pass with shared memory)
#elif defined(SM_COMPUTE)
layout(local_size_x = SM_LOCAL_X, local_size_y = SM_LOCAL_Y) in;
layout(binding = 0) writeonly uniform image2D u_out;

void main()
{
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(c, imageSize(u_out)))) return;
    imageStore(u_out, c, stage());
}
#else
out vec4 o_out;

void main() { o_out = stage(); }
#endif
