/* text: strings drawn in the window with FreeType, from a monospaced font
 * (DejaVu Sans Mono, Debian's fonts-dejavu-core). The glyphs are rendered
 * once into an atlas texture; a block of lines is drawn in one pass
 * (shaders/text.glsl) over its rectangle: each pixel finds its character
 * cell, the character there, and that glyph's coverage in the atlas, so
 * text is the project's one draw primitive, with no vertex buffers. Needs
 * a current GL 3.3 context.
 *
 *   Text *t = text_create(TEXT_DEFAULT_FONT, 18, shader_dir, err, sizeof err);
 *   if (!t) fprintf(stderr, "%s\n", err);    // the window runs without text
 *   const char *lines[] = {"step 12", "error 0.31"};
 *   text_draw(t, 10, 700, lines, 2, (float[3]){1, 1, 1});  // top-left at (10, 700), y up
 *   text_free(t);
 *
 * Text is UTF-8; characters outside the atlas (ASCII and the few symbols
 * the classroom labels use: Greek letters, ∇, ·, arrows, −, ², subscripts)
 * are drawn as '?'. Colours: a small palette, one per text_draw call. */
#ifndef SMOKEMORPH_TEXT_H
#define SMOKEMORPH_TEXT_H

#include <stddef.h>

#define TEXT_DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
#define TEXT_FONT_PACKAGE "fonts-dejavu-core"

typedef struct Text Text;

/* The font at px pixels a line (FT_Set_Pixel_Sizes), its atlas and the
 * text shader. NULL with err filled ("text: cannot open the font PATH
 * (install fonts-dejavu-core): ..."). The font path: font (--font),
 * else TEXT_DEFAULT_FONT. */
Text *text_create(const char *font, int px, const char *shader_dir, char *err, size_t errlen);
void text_free(Text *t);

/* A character cell: every character advances cell_w pixels, a line cell_h. */
int text_cell_w(const Text *t);
int text_cell_h(const Text *t);
/* Characters (code points) in s, the width in cells of the longest line. */
int text_columns(const char *s);

/* lines[0..n-1], the first line's top-left corner at (x, y_top) in window
 * pixels (y up from the bottom), each line cell_h below the last, in rgb
 * with alpha blending over what is there. 0, or -1 on a GL error. */
int text_draw(Text *t, int x, int y_top, const char *const *lines, int n, const float rgb[3]);

#endif
