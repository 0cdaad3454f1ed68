// hud: the window's overlays, each drawn over its rectangle u_rect (window
// pixels x, y, w, h; y up), with blending. u_mode:
//   0 a panel: u_color at opacity u_alpha;
//   1 a vertical colour bar: the colour map u_stops (5 stops evenly spaced,
//     viewmodel.h's) from the bottom (0) to the top (1), a 1-pixel frame;
//   2 the plot: u_plot (u_n texels, .r and .g the two series' heights 0..1,
//     oldest first) as lines in u_color (.r) and u_color2 (.g) across the
//     width, over a panel with a line at every 1/u_decades of the height.
uniform vec4 u_rect;
uniform int u_mode;
uniform vec3 u_color;
uniform vec3 u_color2;
uniform float u_alpha;
uniform vec3 u_stops[5];
uniform sampler2D u_plot;
uniform int u_n;
uniform int u_decades;
out vec4 o_out;

vec3 colormap(float t)
{
    float x = clamp(t, 0.0, 1.0) * 4.0;
    int k = min(int(x), 3);
    return mix(u_stops[k], u_stops[k + 1], x - float(k));
}

// the series' height (pixels) at column x, linear between its points
float height_at(int chan, float x)
{
    float fx = clamp(x / max(u_rect.z - 1.0, 1.0), 0.0, 1.0) * float(u_n - 1);
    int k = int(floor(fx));
    float h0 = texelFetch(u_plot, ivec2(clamp(k, 0, u_n - 1), 0), 0)[chan];
    float h1 = texelFetch(u_plot, ivec2(clamp(k + 1, 0, u_n - 1), 0), 0)[chan];
    return mix(h0, h1, fx - float(k)) * (u_rect.w - 1.0);
}

// how far (pixels) pixel row y is from the line across column x
float near_line(int chan, float x, float y)
{
    float y0 = height_at(chan, x - 0.5), y1 = height_at(chan, x + 0.5);
    float lo = min(y0, y1), hi = max(y0, y1);
    return y < lo ? lo - y : y > hi ? y - hi : 0.0;
}

void main()
{
    vec2 q = gl_FragCoord.xy - u_rect.xy;
    if (u_mode == 0) {
        o_out = vec4(u_color, u_alpha);
    } else if (u_mode == 1) {
        bool frame = q.x < 1.0 || q.y < 1.0 || q.x > u_rect.z - 1.0 || q.y > u_rect.w - 1.0;
        o_out = vec4(frame ? vec3(0.85) : colormap((q.y - 0.5) / (u_rect.w - 1.0)), 1.0);
    } else {
        vec4 c = vec4(0.0, 0.0, 0.0, 0.55);
        float dy = (u_rect.w - 1.0) / float(max(u_decades, 1));
        if (abs(q.y - 0.5 - dy * floor((q.y - 0.5) / dy + 0.5)) < 0.5) c = vec4(0.35, 0.35, 0.4, 0.9);
        if (u_n > 1) {
            if (near_line(1, q.x - 0.5, q.y - 0.5) < 1.0) c = vec4(u_color2, 1.0);
            if (near_line(0, q.x - 0.5, q.y - 0.5) < 1.0) c = vec4(u_color, 1.0);
        }
        o_out = c;
    }
}
