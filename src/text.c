/* text: FreeType glyphs in an atlas, drawn a block at a time; see text.h. */
#include "text.h"

#include <GL/glew.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "shader.h"

#define ATLAS_COLS 16
#define GRID_COLS 192 /* the most characters a line and lines a block */
#define GRID_ROWS 96

/* The atlas's characters: index 0 is blank (space), then printable ASCII,
 * then the symbols the labels use. */
static const unsigned extra[] = {
    0x3C1, 0x3C3, 0x3C9, 0x3C6, 0x394, 0x2207, 0xB7, 0x2191, 0x2193, 0x2190, 0x2192,
    0x2212, 0xB2, 0xD7, 0x2248, 0x2264, 0x2265, 0x2082, 0x2080, 0x2081, 0x2092, 0x1D65,
};
#define NASCII (126 - 33 + 1)
#define NGLYPH (1 + NASCII + (int)(sizeof extra / sizeof extra[0]))

struct Text {
    int cw, ch;
    GLuint atlas, grid;
    Shader *sh;
    float *cells; /* GRID_COLS * GRID_ROWS */
};

/* Index of code point c in the atlas; '?' for one it lacks. */
static int glyph_of(unsigned c)
{
    if (c == ' ' || c == '\t') return 0;
    if (c >= 33 && c <= 126) return 1 + (int)(c - 33);
    for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++)
        if (extra[k] == c) return 1 + NASCII + (int)k;
    return 1 + ('?' - 33);
}

static unsigned code_of(int g) { return g <= 0 ? ' ' : g <= NASCII ? (unsigned)(33 + g - 1) : extra[g - 1 - NASCII]; }

/* The next code point of UTF-8 s (advanced); a bad byte is '?'. */
static unsigned next_utf8(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    unsigned c = p[0];
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) {
        *s += 1;
        return '?';
    }
    c &= n == 0 ? 0x7F : n == 1 ? 0x1F : n == 2 ? 0x0F : 0x07;
    for (int k = 1; k <= n; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *s += k;
            return '?';
        }
        c = (c << 6) | (p[k] & 0x3F);
    }
    *s += n + 1;
    return c;
}

int text_columns(const char *s)
{
    int best = 0, cur = 0;
    while (*s) {
        unsigned c = next_utf8(&s);
        if (c == '\n') cur = 0;
        else if (c >= 0x300 && c < 0x370) continue; /* combining marks take no cell */
        else if (++cur > best) best = cur;
    }
    return best;
}

int text_cell_w(const Text *t) { return t->cw; }
int text_cell_h(const Text *t) { return t->ch; }

/* Each glyph's bitmap into its cell of the atlas pix (aw pixels wide); a character the
 * font lacks stays blank. */
static void atlas_draw(FT_Face face, const Text *t, int asc, int aw, unsigned char *pix)
{
    for (int g = 1; g < NGLYPH; g++) {
        unsigned c = code_of(g);
        if (!FT_Get_Char_Index(face, c) || FT_Load_Char(face, c, FT_LOAD_RENDER)) continue; /* blank */
        FT_Bitmap *b = &face->glyph->bitmap;
        int x0 = (g % ATLAS_COLS) * t->cw + face->glyph->bitmap_left;
        int y0 = (g / ATLAS_COLS) * t->ch + asc - face->glyph->bitmap_top;
        int cx0 = (g % ATLAS_COLS) * t->cw, cy0 = (g / ATLAS_COLS) * t->ch;
        for (unsigned r = 0; r < b->rows; r++)
            for (unsigned q = 0; q < b->width; q++) {
                int x = x0 + (int)q, y = y0 + (int)r;
                if (x < cx0 || x >= cx0 + t->cw || y < cy0 || y >= cy0 + t->ch) continue; /* its cell only */
                pix[(size_t)y * aw + x] = b->buffer[(size_t)r * (size_t)b->pitch + q];
            }
    }
}

/* The atlas (aw x ah, one byte a pixel) and the empty character grid into textures. */
static void text_upload(Text *t, const unsigned char *pix, int aw, int ah)
{
    glGenTextures(1, &t->atlas);
    glBindTexture(GL_TEXTURE_2D, t->atlas);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, aw, ah, 0, GL_RED, GL_UNSIGNED_BYTE, pix);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glGenTextures(1, &t->grid);
    glBindTexture(GL_TEXTURE_2D, t->grid);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, GRID_COLS, GRID_ROWS, 0, GL_RED, GL_FLOAT, t->cells);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
}

Text *text_create(const char *font, int px, const char *shader_dir, char *err, size_t errlen)
{
    if (!font || !*font) font = TEXT_DEFAULT_FONT;
    FT_Library lib = NULL;
    FT_Face face = NULL;
    unsigned char *pix = NULL;
    Text *t = calloc(1, sizeof *t);
    if (!t || !(t->cells = calloc((size_t)GRID_COLS * GRID_ROWS, sizeof(float)))) {
        snprintf(err, errlen, "text: out of memory");
        goto fail;
    }
    if (FT_Init_FreeType(&lib)) {
        snprintf(err, errlen, "text: cannot start FreeType");
        goto fail;
    }
    FT_Error fe = FT_New_Face(lib, font, 0, &face);
    if (fe) {
        snprintf(err, errlen, "text: cannot open the font %s (install %s): %s", font, TEXT_FONT_PACKAGE,
                 fe == FT_Err_Cannot_Open_Resource ? "no such file or unreadable" : "not a font FreeType reads");
        goto fail;
    }
    if (FT_Set_Pixel_Sizes(face, 0, (FT_UInt)px) || FT_Load_Char(face, 'M', FT_LOAD_DEFAULT)) {
        snprintf(err, errlen, "text: the font %s has no %d-pixel size", font, px);
        goto fail;
    }
    int asc = (int)(face->size->metrics.ascender >> 6), desc = (int)(-face->size->metrics.descender >> 6);
    t->cw = (int)(face->glyph->advance.x >> 6);
    t->ch = asc + desc + 1;
    if (t->cw < 1 || t->ch < 2) {
        snprintf(err, errlen, "text: the font %s gives %dx%d-pixel characters", font, t->cw, t->ch);
        goto fail;
    }
    int rows = (NGLYPH + ATLAS_COLS - 1) / ATLAS_COLS, aw = ATLAS_COLS * t->cw, ah = rows * t->ch;
    if (!(pix = calloc((size_t)aw * ah, 1))) {
        snprintf(err, errlen, "text: out of memory");
        goto fail;
    }
    atlas_draw(face, t, asc, aw, pix);
    FT_Done_Face(face);
    face = NULL;
    FT_Done_FreeType(lib);
    lib = NULL;
    if (!(t->sh = shader_load(shader_dir, "text.glsl", err, errlen))) goto fail;
    text_upload(t, pix, aw, ah);
    free(pix);
    pix = NULL;
    if (gl_check("text", "making the glyph atlas") < 0) {
        snprintf(err, errlen, "text: a GL error making the glyph atlas (%dx%d)", aw, ah);
        goto fail;
    }
    return t;
fail:
    free(pix);
    if (face) FT_Done_Face(face);
    if (lib) FT_Done_FreeType(lib);
    text_free(t);
    return NULL;
}

void text_free(Text *t)
{
    if (!t) return;
    if (t->atlas) glDeleteTextures(1, &t->atlas);
    if (t->grid) glDeleteTextures(1, &t->grid);
    shader_free(t->sh);
    free(t->cells);
    free(t);
}

int text_draw(Text *t, int x, int y_top, const char *const *lines, int n, const float rgb[3])
{
    if (n > GRID_ROWS) n = GRID_ROWS;
    int cols = 1;
    for (int r = 0; r < n; r++) {
        int c = 0;
        const char *s = lines[r];
        while (*s && c < GRID_COLS) {
            unsigned cp = next_utf8(&s);
            if (cp >= 0x300 && cp < 0x370) continue; /* combining marks: dropped */
            t->cells[r * GRID_COLS + c++] = (float)glyph_of(cp);
        }
        for (int k = c; k < GRID_COLS; k++) t->cells[r * GRID_COLS + k] = 0.0f;
        if (c > cols) cols = c;
    }
    if (n <= 0) return 0;
    glBindTexture(GL_TEXTURE_2D, t->grid);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, GRID_COLS);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, cols, n, GL_RED, GL_FLOAT, t->cells);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    int w = cols * t->cw, h = n * t->ch;
    shader_use(t->sh);
    shader_set_texture(t->sh, "u_atlas", 0, t->atlas);
    shader_set_texture(t->sh, "u_grid", 1, t->grid);
    shader_set_vec4(t->sh, "u_rect", (float)x, (float)(y_top - h), (float)w, (float)h);
    shader_set_ivec2(t->sh, "u_cell", t->cw, t->ch);
    shader_set_int(t->sh, "u_cols", ATLAS_COLS);
    shader_set_vec3(t->sh, "u_color", rgb[0], rgb[1], rgb[2]);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    pass_draw_screen(x, y_top - h, w, h);
    glDisable(GL_BLEND);
    return gl_check("text", "drawing text");
}
