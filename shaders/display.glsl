// display: draws one field of the morph into a rectangle of the window.
// u_rect = (x, y, w, h) in window pixels; the field's row 0 is drawn at the
// top. u_mode: 0 density ρ, 1 target ρ*, 2 blurred target ρ̃*, 3 speed |u|,
// 4 a plain single-channel image in u_img (the start image), 5 a field in
// u_img (computed on the CPU: viewfield.h) through the colour map u_stops
// (viewmodel.h's, 5 stops evenly spaced) from u_lo to u_hi.
// 6 the composite of u_nfields (2..4) smoke fields' densities, u_dens (field
// 0) and u_dens1..u_dens3 (separate samplers: GLSL 3.30 cannot index a
// sampler array with a loop variable), colours u_fcolor (sRGB), as export.h
// composites the frames: a_i = clamp(ρ_i · u_gain), A = 1 − Π(1 − a_i), the
// colour the a_i-weighted mean of the colours in linear light, encoded to
// sRGB (where at most one field has smoke: that field's a_i and colour).
// Modes 0-4 and 6: background u_bg, smoke u_color, alpha = clamp(value * u_gain).
// With u_arrows: arrows of the vector field u_vec (RG, x right, y down) on
// a grid of u_arrow_px pixels, as long as the spacing at |v| = u_vmax,
// coloured through the colour map at |v| / u_hi, or u_arrow_color when
// u_arrow_map is 0.

uniform sampler2D u_dens;
uniform sampler2D u_vel;
uniform sampler2D u_img;
uniform sampler2D u_vec;
uniform ivec2 u_size;
uniform vec4 u_rect;
uniform int u_mode;
uniform float u_gain;
uniform vec3 u_color;
uniform vec3 u_bg;
uniform float u_lo;
uniform float u_hi;
uniform vec3 u_stops[5];
uniform int u_arrows;
uniform float u_arrow_px;
uniform float u_vmax;
uniform int u_arrow_map;
uniform vec3 u_arrow_color;
uniform sampler2D u_dens1;
uniform sampler2D u_dens2;
uniform sampler2D u_dens3;
uniform int u_nfields;
uniform vec3 u_fcolor[4];
out vec4 o_out;

// field f's density at cell c (mode 6)
float dens_at(int f, ivec2 c)
{
    c = clamp(c, ivec2(0), u_size - 1);
    if (f == 0) return texelFetch(u_dens, c, 0).r;
    if (f == 1) return texelFetch(u_dens1, c, 0).r;
    if (f == 2) return texelFetch(u_dens2, c, 0).r;
    return texelFetch(u_dens3, c, 0).r;
}

// sRGB <-> linear light, export.c's formulas
vec3 srgb_to_linear(vec3 c)
{
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), vec3(greaterThan(c, vec3(0.04045))));
}
vec3 linear_to_srgb(vec3 c)
{
    return mix(c * 12.92, 1.055 * pow(max(c, vec3(0.0)), vec3(1.0 / 2.4)) - 0.055, vec3(greaterThan(c, vec3(0.0031308))));
}

float value_at(ivec2 c)
{
    c = clamp(c, ivec2(0), u_size - 1);
    if (u_mode == 0) return texelFetch(u_dens, c, 0).r;
    if (u_mode == 1) return texelFetch(u_dens, c, 0).g;
    if (u_mode == 2) return texelFetch(u_dens, c, 0).b;
    if (u_mode == 4 || u_mode == 5) return texelFetch(u_img, c, 0).r;
    // speed at the cell centre from the four faces around it
    float ul = c.x > 0 ? texelFetch(u_vel, c, 0).r : 0.0;
    float ur = c.x + 1 < u_size.x ? texelFetch(u_vel, c + ivec2(1, 0), 0).r : 0.0;
    float vb = c.y > 0 ? texelFetch(u_vel, c, 0).g : 0.0;
    float vt = c.y + 1 < u_size.y ? texelFetch(u_vel, c + ivec2(0, 1), 0).g : 0.0;
    return length(vec2(ul + ur, vb + vt) * 0.5);
}

// the colour map at t (clamped to 0..1), linear between the stops
vec3 colormap(float t)
{
    float x = clamp(t, 0.0, 1.0) * 4.0;
    int k = min(int(x), 3);
    return mix(u_stops[k], u_stops[k + 1], x - float(k));
}

float segment_dist(vec2 p, vec2 a, vec2 b)
{
    vec2 ab = b - a;
    float t = clamp(dot(p - a, ab) / max(dot(ab, ab), 1e-6), 0.0, 1.0);
    return length(p - a - t * ab);
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
    float val = mix(a, b, t.y);
    vec3 col;
    if (u_mode == 6) {
        float t1 = 1.0, wsum = 0.0;
        vec3 acc = vec3(0.0), only_col = u_fcolor[0];
        float only_a = 0.0;
        int count = 0;
        for (int f = 0; f < 4; f++) {
            if (f >= u_nfields) break;
            float fa = mix(dens_at(f, i0), dens_at(f, i0 + ivec2(1, 0)), t.x);
            float fb = mix(dens_at(f, i0 + ivec2(0, 1)), dens_at(f, i0 + ivec2(1, 1)), t.x);
            float ai = clamp(mix(fa, fb, t.y) * u_gain, 0.0, 1.0);
            if (!(ai > 0.0)) continue;
            t1 *= 1.0 - ai;
            wsum += ai;
            acc += ai * srgb_to_linear(u_fcolor[f]);
            count++;
            only_a = ai;
            only_col = u_fcolor[f];
        }
        if (count <= 1) col = mix(u_bg, only_col, only_a);
        else col = mix(u_bg, linear_to_srgb(acc / wsum), 1.0 - t1);
    } else if (u_mode == 5) {
        col = colormap((val - u_lo) / (u_hi - u_lo));
    } else {
        float v = clamp(val * u_gain, 0.0, 1.0);
        col = mix(u_bg, u_color, v);
    }
    if (u_arrows != 0 && u_vmax > 0.0) {
        vec2 q = gl_FragCoord.xy - u_rect.xy;
        vec2 c = (floor(q / u_arrow_px) + 0.5) * u_arrow_px;
        vec2 cuv = c / u_rect.zw;
        ivec2 cell = clamp(ivec2(vec2(cuv.x, 1.0 - cuv.y) * vec2(u_size)), ivec2(0), u_size - 1);
        vec2 vel = texelFetch(u_vec, cell, 0).rg;
        float s = length(vel);
        if (s > 0.03 * u_vmax) {
            vec2 d = vec2(vel.x, -vel.y) / u_vmax * 0.45 * u_arrow_px; // half the arrow, y up
            vec2 tip = c + d, dir = normalize(d);
            float hl = min(0.35 * 2.0 * length(d), 0.3 * u_arrow_px);
            vec2 h1 = tip - hl * (mat2(0.906, 0.423, -0.423, 0.906) * dir);
            vec2 h2 = tip - hl * (mat2(0.906, -0.423, 0.423, 0.906) * dir);
            float dist = min(segment_dist(q, c - d, tip), min(segment_dist(q, tip, h1), segment_dist(q, tip, h2)));
            if (dist < 1.0) col = u_arrow_map != 0 ? colormap(s / u_hi) : u_arrow_color;
        }
    }
    o_out = vec4(col, 1.0);
}
