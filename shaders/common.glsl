// common.glsl: helpers any pass may use, with  #include "common.glsl"
// (the loader adds #version 330 core and includes each file once).
//
// Cell (i, j) of a field is texel ivec2(i, j) of its texture and the fragment
// whose gl_FragCoord is (i + 0.5, j + 0.5); row j = 0 is the first row in
// memory on the CPU (field_upload / field_read). Fetches are exact: fields
// use GL_NEAREST and these helpers use texelFetch only.

// The cell this fragment writes.
ivec2 cell() { return ivec2(gl_FragCoord.xy); }

// c clamped into t's texel range: the nearest cell inside the field, which
// makes an out-of-range neighbour a zero-gradient (Neumann) boundary.
ivec2 clamp_cell(sampler2D t, ivec2 c) { return clamp(c, ivec2(0), textureSize(t, 0) - 1); }

// True when c is a cell of a field of the given size.
bool in_field(ivec2 c, ivec2 size) { return all(greaterThanEqual(c, ivec2(0))) && all(lessThan(c, size)); }

// Channel(s) of t at cell c, coordinates clamped to the field.
float fetch1(sampler2D t, ivec2 c) { return texelFetch(t, clamp_cell(t, c), 0).r; }
vec2 fetch2(sampler2D t, ivec2 c) { return texelFetch(t, clamp_cell(t, c), 0).rg; }
vec4 fetch4(sampler2D t, ivec2 c) { return texelFetch(t, clamp_cell(t, c), 0); }

// Bilinear interpolation of t at p in texel units (texel centres at integer
// p), clamped to the field, written out with texelFetch so it matches a CPU
// lerp bit for bit where GL_LINEAR would use the GPU's low-precision weights.
vec4 lerp4(sampler2D t, vec2 p)
{
    ivec2 size = textureSize(t, 0);
    p = clamp(p, vec2(0.0), vec2(size - 1));
    ivec2 c0 = ivec2(floor(p));
    ivec2 c1 = min(c0 + 1, size - 1);
    vec2 f = p - vec2(c0);
    vec4 a00 = texelFetch(t, c0, 0), a10 = texelFetch(t, ivec2(c1.x, c0.y), 0);
    vec4 a01 = texelFetch(t, ivec2(c0.x, c1.y), 0), a11 = texelFetch(t, c1, 0);
    vec4 a = a00 + f.x * (a10 - a00);
    vec4 b = a01 + f.x * (a11 - a01);
    return a + f.y * (b - a);
}
