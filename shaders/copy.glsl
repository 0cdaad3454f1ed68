// copy: out = u_src * u_scale, cell by cell (tests and simple transfers).
#include "common.glsl"

uniform sampler2D u_src;
uniform float u_scale;
out vec4 o_out;

void main()
{
    o_out = texelFetch(u_src, cell(), 0) * u_scale;
}
