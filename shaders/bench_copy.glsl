// bench_copy: the copy ceiling of tools/bench, one RGBA32F texel read and one
// written per cell, as a pass like any other (fragment or compute entry).
#include "sim.glsl"

uniform sampler2D u_src;

vec4 stage() { return texelFetch(u_src, cell(), 0); }
