// text: a block of monospaced text over the rectangle u_rect (window pixels,
// x, y, w, h; y up). u_grid holds one texel a character cell (.r = the
// glyph's index in the atlas, 0 = blank; row 0 is the top line); u_atlas
// holds every glyph's coverage in a cell of u_cell pixels, u_cols cells a
// row, row 0 of a glyph's cell at the top. Output: u_color with the
// coverage as alpha (drawn with blending).
uniform sampler2D u_atlas;
uniform sampler2D u_grid;
uniform vec4 u_rect;
uniform ivec2 u_cell;
uniform int u_cols;
uniform vec3 u_color;
out vec4 o_out;

void main()
{
    ivec2 p = ivec2(floor(gl_FragCoord.xy - u_rect.xy));
    int top = int(u_rect.w) - 1 - p.y;              // pixel rows from the block's top
    ivec2 c = ivec2(p.x / u_cell.x, top / u_cell.y); // the character cell
    int g = int(texelFetch(u_grid, c, 0).r + 0.5);
    if (g <= 0) discard;
    ivec2 l = ivec2(p.x - c.x * u_cell.x, top - c.y * u_cell.y);
    ivec2 a = ivec2((g % u_cols) * u_cell.x + l.x, (g / u_cols) * u_cell.y + l.y);
    float cov = texelFetch(u_atlas, a, 0).r;
    if (cov <= 0.0) discard;
    o_out = vec4(u_color, cov);
}
