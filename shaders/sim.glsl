// sim.glsl: what every simulation pass shares. Mirrors the helpers of
// src/cpu_solver.c so a pass computes the same numbers as the CPU oracle.
//
// Grid: u_size = (W, H) cells of size u_h (domain units). Fragment (i, j)
// is cell (i, j); row 0 is the top row of the images.
// Velocity texture (MAC): .r = u on the face (i-1 | i), .g = v on the face
// (j-1 | j); faces on the walls are 0 (closed box).
// Density texture: .r = ρ, .g = ρ* (target), .b = ρ̃* (blurred target).

uniform ivec2 u_size;
uniform float u_h;

// The cell this invocation writes: the fragment's pixel, or the compute
// invocation's global id (the loader defines SM_COMPUTE for compute shaders).
#ifdef SM_COMPUTE
ivec2 cell() { return ivec2(gl_GlobalInvocationID.xy); }
#else
ivec2 cell() { return ivec2(gl_FragCoord.xy); }
#endif

float Uf(sampler2D vel, int i, int j)
{
    return (i <= 0 || i >= u_size.x) ? 0.0 : texelFetch(vel, ivec2(i, j), 0).r;
}

float Vf(sampler2D vel, int i, int j)
{
    return (j <= 0 || j >= u_size.y) ? 0.0 : texelFetch(vel, ivec2(i, j), 0).g;
}

// ∇·u of cell (i, j): the net outflow through its four faces, over h.
float divergence_at(sampler2D vel, int i, int j)
{
    return (Uf(vel, i + 1, j) - Uf(vel, i, j) + Vf(vel, i, j + 1) - Vf(vel, i, j)) / u_h;
}

// The uniform cubic B-spline's four weights at t in [0, 1) (bspline_w in
// src/cpu_solver.c).
vec4 bspline_w(float t)
{
    float t2 = t * t, t3 = t2 * t, u = 1.0 - t;
    return vec4(u * u * u, 3.0 * t3 - 6.0 * t2 + 4.0, -3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0, t3) / 6.0;
}

// A coarse field (cw x ch = csize, coarsened by factor) at a position in
// fine cell units (fine cell centres at i + 0.5), all four channels: with
// factor > 1 the cubic B-spline of the 4x4 samples around it, indices
// clamped (its gradient is continuous: method.h, METHOD_BLUR_BSPLINE_VAR);
// at factor 1 bilinear. Mirrors ref_sample_coarse.
vec4 sample_coarse4(sampler2D t, int factor, ivec2 csize, vec2 p)
{
    if (factor > 1) {
        vec2 c = p / float(factor) - 0.5;
        ivec2 c0 = ivec2(floor(c));
        vec4 wx = bspline_w(c.x - float(c0.x)), wy = bspline_w(c.y - float(c0.y));
        vec4 s = vec4(0.0);
        for (int b = 0; b < 4; b++) {
            int jj = clamp(c0.y - 1 + b, 0, csize.y - 1);
            vec4 r = vec4(0.0);
            for (int a = 0; a < 4; a++)
                r += wx[a] * texelFetch(t, ivec2(clamp(c0.x - 1 + a, 0, csize.x - 1), jj), 0);
            s += wy[b] * r;
        }
        return s;
    }
    float cx = clamp(p.x - 0.5, 0.0, float(csize.x - 1));
    float cy = clamp(p.y - 0.5, 0.0, float(csize.y - 1));
    int i0 = int(floor(cx)), j0 = int(floor(cy));
    int i1 = min(i0 + 1, csize.x - 1), j1 = min(j0 + 1, csize.y - 1);
    float tx = cx - float(i0), ty = cy - float(j0);
    vec4 a00 = texelFetch(t, ivec2(i0, j0), 0), a10 = texelFetch(t, ivec2(i1, j0), 0);
    vec4 a01 = texelFetch(t, ivec2(i0, j1), 0), a11 = texelFetch(t, ivec2(i1, j1), 0);
    vec4 a = a00 + tx * (a10 - a00);
    vec4 b = a01 + tx * (a11 - a01);
    return a + ty * (b - a);
}

// Its first channel (the blurred densities): the compiler drops the other
// three's arithmetic.
float sample_coarse(sampler2D t, int factor, ivec2 csize, vec2 p)
{
    return sample_coarse4(t, factor, csize, p).r;
}
