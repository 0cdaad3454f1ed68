// display: draws one field of the morph into a rectangle of the window.
// u_rect = (x, y, w, h) in window pixels; the field's row 0 is drawn at the
// top. u_mode: 0 density ρ, 1 target ρ*, 2 blurred target ρ̃*, 3 speed |u|,
// 4 a plain single-channel image in u_img (the start image).
// Colour: background u_bg, smoke u_color, alpha = clamp(value * u_gain).

uniform sampler2D u_dens;
uniform sampler2D u_vel;
uniform sampler2D u_img;
uniform ivec2 u_size;
uniform vec4 u_rect;
uniform int u_mode;
uniform float u_gain;
uniform vec3 u_color;
uniform vec3 u_bg;
out vec4 o_out;

float value_at(ivec2 c)
{
    c = clamp(c, ivec2(0), u_size - 1);
    if (u_mode == 0) return texelFetch(u_dens, c, 0).r;
    if (u_mode == 1) return texelFetch(u_dens, c, 0).g;
    if (u_mode == 2) return texelFetch(u_dens, c, 0).b;
    if (u_mode == 4) return texelFetch(u_img, c, 0).r;
    // speed at the cell centre from the four faces around it
    float ul = c.x > 0 ? texelFetch(u_vel, c, 0).r : 0.0;
    float ur = c.x + 1 < u_size.x ? texelFetch(u_vel, c + ivec2(1, 0), 0).r : 0.0;
    float vb = c.y > 0 ? texelFetch(u_vel, c, 0).g : 0.0;
    float vt = c.y + 1 < u_size.y ? texelFetch(u_vel, c + ivec2(0, 1), 0).g : 0.0;
    return length(vec2(ul + ur, vb + vt) * 0.5);
}

void main()
{
    vec2 uv = (gl_FragCoord.xy - u_rect.xy) / u_rect.zw;
    // cell coordinates, row 0 at the top; bilinear between cell centres
    vec2 p = vec2(uv.x, 1.0 - uv.y) * vec2(u_size) - 0.5;
    ivec2 i0 = ivec2(floor(p));
    vec2 t = p - vec2(i0);
    float a = mix(value_at(i0), value_at(i0 + ivec2(1, 0)), t.x);
    float b = mix(value_at(i0 + ivec2(0, 1)), value_at(i0 + ivec2(1, 1)), t.x);
    float v = clamp(mix(a, b, t.y) * u_gain, 0.0, 1.0);
    o_out = vec4(mix(u_bg, u_color, v), 1.0);
}
