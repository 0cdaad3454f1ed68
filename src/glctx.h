/* glctx: an OpenGL 3.3 core context, headless (EGL, no surface) or in a
 * window (freeglut), with GLEW loaded and the features the solver needs
 * checked up front.
 *
 *   char err[512];
 *   GlCtx *gl = glctx_display_available()
 *             ? glctx_create_window(&argc, argv, 512, 512, "smokemorph", err, sizeof err)
 *             : glctx_create_headless(err, sizeof err);
 *   if (!gl) die("main", "%s", err);   // err: "glctx: OpenGL 3.3 or newer is needed, ..."
 *   log_info("glctx", "%s: %s, OpenGL %s", glctx_path(gl), glctx_renderer(gl), glctx_version(gl));
 *   ...
 *   glctx_destroy(gl);
 *
 * Error strings in err carry the "glctx: " tag. Only this module includes
 * EGL and freeglut headers. One context per process at a time; the window
 * path calls glutInit, so a window context must be created before any other
 * freeglut call. Window callbacks and the main loop belong to `view`.
 *
 * SMOKEMORPH_GL_DEBUG=1 in the environment asks for a debug context and
 * prints KHR_debug messages through log (where the driver offers KHR_debug).
 */
#ifndef SMOKEMORPH_GLCTX_H
#define SMOKEMORPH_GLCTX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct GlCtx GlCtx;

/* True only when an X display named by $DISPLAY can really be opened
 * (freeglut exits the process when it cannot open one). */
bool glctx_display_available(void);

/* Headless context: EGL device platform (a hardware device first), then Mesa
 * surfaceless, then a software EGL device. Current on return. */
GlCtx *glctx_create_headless(char *err, size_t errlen);

/* A double-buffered RGBA window of w x h through freeglut; current on return.
 * Check glctx_display_available() first. argc/argv go to glutInit. */
GlCtx *glctx_create_window(int *argc, char **argv, int w, int h, const char *title,
                           char *err, size_t errlen);

void glctx_destroy(GlCtx *ctx);

/* "headless EGL device", "headless EGL surfaceless (Mesa)" or "window (freeglut)". */
const char *glctx_path(const GlCtx *ctx);

/* The freeglut window id (0 for a headless context). */
int glctx_window_id(const GlCtx *ctx);

/* GL_RENDERER, GL_VERSION ("?" without a context) and GL_MAX_TEXTURE_SIZE
 * (0 without a context). ctx must be the current context. */
const char *glctx_renderer(const GlCtx *ctx);
const char *glctx_version(const GlCtx *ctx);
int glctx_max_texture_size(const GlCtx *ctx);

#endif
