/* field: a float texture with its framebuffer, the unit every pass reads and
 * writes; ping-pong pairs; upload and read-back; the one draw primitive.
 *
 *   char err[256];
 *   FieldPair vel;
 *   if (field_pair_create(&vel, 256, 256, 2, err, sizeof err) != 0) die("main", "%s", err);
 *   field_upload(vel.read, data);                 // w*h*2 floats, row y = 0 first
 *   shader_use(advect);
 *   shader_set_texture(advect, "u_vel", 0, field_texture(vel.read));
 *   pass_draw(vel.write);                         // full-screen triangle into vel.write
 *   field_pair_swap(&vel);                        // the result is vel.read now
 *   field_read(vel.read, out);
 *   field_pair_free(&vel);
 *
 * Layout on the CPU (upload and read): value c of texel (x, y) is
 * data[(y * w + x) * channels + c], tightly packed; y = 0 is the first row in
 * memory and texelFetch(t, ivec2(x, 0)) in a shader (OpenGL's bottom row).
 * Turning that into an image with row 0 at the top is the caller's choice.
 *
 * Textures are GL_R32F / GL_RG32F / GL_RGBA32F, GL_NEAREST, CLAMP_TO_EDGE,
 * cleared to zero on creation. Passes assume blending, scissor and depth test
 * are off (the GL defaults). Errors in err carry the "field: " tag.
 *
 * Debug: with SMOKEMORPH_GL_DEBUG=1 (or field_set_debug(true)) pass_draw()
 * checks glGetError after every draw and that the pass samples no texture
 * it draws into (a feedback loop; the next gl_check fails), and shaders
 * loaded from then on return NaN from a texelFetch outside the texture
 * (shader.h). Creation, upload, read and clear always check.
 */
#ifndef SMOKEMORPH_FIELD_H
#define SMOKEMORPH_FIELD_H

#include <GL/glew.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct Field Field;

/* channels is 1, 2 or 4. NULL with err filled on a bad size, a size beyond
 * GL_MAX_TEXTURE_SIZE, an incomplete framebuffer or GL_OUT_OF_MEMORY. */
Field *field_create(int w, int h, int channels, char *err, size_t errlen);
void field_free(Field *f);

int field_width(const Field *f);
int field_height(const Field *f);
int field_channels(const Field *f);
GLuint field_texture(const Field *f);
GLuint field_framebuffer(const Field *f);

/* w*h*channels floats in, or out; 0 or -1 (logged with the GL error). */
int field_upload(Field *f, const float *data);
int field_read(const Field *f, float *out);

/* Asynchronous read-back (a pixel buffer object and a fence): start copies
 * the field into the buffer in the GL command stream and returns at once;
 * the passes queued after it run while the copy waits; map waits for the
 * fence (the copy, not the later passes) and gives the w*h*channels floats,
 * valid until unmap. One read-back in flight a FieldReadback: keep two or
 * three for double or triple buffering.
 *
 *   FieldReadback *rb = field_readback_create();
 *   field_readback_start(rb, dens.read);   // step k's density
 *   ... steps k+1, k+2 queued ...
 *   const float *d = field_readback_map(rb); use(d); field_readback_unmap(rb);
 */
typedef struct FieldReadback FieldReadback;
FieldReadback *field_readback_create(void);
int field_readback_start(FieldReadback *rb, const Field *f);
const float *field_readback_map(FieldReadback *rb); /* NULL: a GL error (logged) */
void field_readback_unmap(FieldReadback *rb);
void field_readback_free(FieldReadback *rb);

/* Every texel to (r, g, b, a), truncated to the field's channels. 0 or -1. */
int field_clear(Field *f, float r, float g, float b, float a);

/* Ping-pong: passes read `read` and write `write`, then swap. */
typedef struct {
    Field *read, *write;
} FieldPair;

int field_pair_create(FieldPair *p, int w, int h, int channels, char *err, size_t errlen);
void field_pair_free(FieldPair *p); /* both fields, pointers set to NULL */
void field_pair_swap(FieldPair *p);

/* Draw a full-screen triangle into target with the current program: binds its
 * framebuffer, sets the viewport to its size, binds the shared empty VAO. */
void pass_draw(Field *target);

/* The same with the current program a compute shader (shader_load_pass with
 * SHADER_COMPUTE): binds target as image unit 0, dispatches one invocation
 * per texel, then a memory barrier so later passes and read-backs see it. */
void pass_dispatch(Field *target);
/* The same for a pass whose work group writes a tile_w x tile_h tile of the
 * target (several cells an invocation): one group a tile. */
void pass_dispatch_tiles(Field *target, int tile_w, int tile_h);
/* The same with the work-group counts read by the GPU from buf at offset
 * (glDispatchComputeIndirect: three GLuints, 0 groups making it empty).
 * Its bytes are not counted: the CPU does not know whether it ran. */
void pass_dispatch_indirect(Field *target, GLuint buf, GLintptr offset);
/* Bind f as a write-only image on unit (a compute pass's second output). */
void field_bind_image(Field *f, int unit);
/* Makes every dispatch's image stores so far visible to read-backs, uploads,
 * clears, blits and draws through a field's FBO (a dispatch's own barrier
 * covers only the next passes' texture fetches and image access). field.c's
 * read, upload, clear and pass_draw call it; so must any other GL use of a
 * field's texture or FBO, as a blit (cheap when nothing is pending). */
void field_sync(void);
/* The compute passes' work-group size (shader.c writes it into the source). */
#ifndef PASS_LOCAL_X /* -D at build time, for bench sweeps */
#define PASS_LOCAL_X 16
#endif
#ifndef PASS_LOCAL_Y
#define PASS_LOCAL_Y 8
#endif

/* Byte accounting for the benchmark: while on, every pass adds the bytes it
 * moves at least (each texture it samples read once, its target written
 * once) to a running total. Off by default: it queries GL on every pass. */
void pass_count_bytes(bool on);
unsigned long long pass_bytes(void);

/* A debug check outside this module failed (and logged why): the next
 * gl_check returns -1. */
void field_flag_error(void);

/* How many pass_draw() calls this process has made (for the benchmark's
 * passes per step). */
unsigned long pass_draw_count(void);

/* The same triangle into the default framebuffer (the window), viewport
 * (x, y, w, h) in window pixels, origin bottom-left. */
void pass_draw_screen(int x, int y, int w, int h);

/* Delete the shared VAO; call before destroying the GL context if another
 * context will be made in this process. pass_draw() makes a new one as needed. */
void pass_release(void);

/* glGetError until clear; each error logged as "tag: GL_INVALID_OPERATION after
 * what". Returns 0, or -1 when there was an error or (debug) a pass since the
 * last check sampled its own output. */
int gl_check(const char *tag, const char *what);

/* Checks at every pass boundary (pass_draw) on or off; initially on when
 * SMOKEMORPH_GL_DEBUG is set to something other than 0. */
void field_set_debug(bool on);
bool field_debug(void);

#endif
