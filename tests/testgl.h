/* testgl.h: the start every headless GPU test shares (include after
 * check.h): a headless GL context, its renderer printed, and the shader
 * folder found beside the test binary. NULL (with a failed CHECK, or a SKIP
 * under SMOKEMORPH_TEST_GL=none: testlib.h) when either is missing.
 *
 *   GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
 *   if (!ctx) return check_done();
 */
#ifndef SMOKEMORPH_TESTGL_H
#define SMOKEMORPH_TESTGL_H

#include "glctx.h"
#include "shader.h"
#include "testlib.h"

static inline GlCtx *testgl_start(const char *argv0, char *dir, size_t n)
{
    char err[1024];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) TESTLIB_NO_GL(3, 3, "no headless GL context: %s", err);
    if (!ctx) return NULL;
    printf("  renderer: %s\n", glctx_renderer(ctx));
    int rc = shader_find_dir(NULL, argv0, dir, n, err, sizeof err);
    CHECK(rc == 0, "shader dir: %s", err);
    if (rc != 0) {
        glctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

/* A shell function for the window tests' xdotool scripts: `title RE` waits
 * (up to 10 s) until a window's title matches RE and sets $w to it; when it
 * never comes it says so, kills $pid (when set) and exits 3. Plain text:
 * give it to printf as an argument ("%s"), not as the format. */
#define TESTGL_SH_TITLE                                                                         \
    "title() {\n"                                                                               \
    "    end=$(($(date +%s) + 10))\n"                                                           \
    "    until w=$(xdotool search --name \"$1\") && [ -n \"$w\" ]; do\n"                          \
    "        [ $(date +%s) -lt $end ] || { echo \"no window titled '$1'\"; ${pid:+kill $pid;} exit 3; }\n" \
    "        sleep 0.02\n"                                                                      \
    "    done\n"                                                                                \
    "}\n"

/* The window tests' xdotool script DIR/x.sh (its path into PATH), opened
 * for writing; NULL (with a failed CHECK) when it cannot be. */
static inline FILE *testgl_script(const char *dir, char *path, size_t n)
{
    snprintf(path, n, "%s/x.sh", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    return f;
}

/* The window tests' start: a window of w x h titled TITLE (*ctx), the
 * shader folder in DIR, and the bundled morph (blob.png -> star.png on a
 * g x g grid, the fragment backend, the defaults). NULL (with a failed
 * CHECK) when any of them fails; *ctx is NULL when the window is. */
static inline Morph *testgl_window_morph(int *argc, char **argv, int w, int h, const char *title,
                                         int g, char *dir, size_t n, GlCtx **ctx)
{
    char err[512] = "";
    *ctx = glctx_create_window(argc, argv, w, h, title, err, sizeof err);
    CHECK(*ctx != NULL, "window: %s", err);
    if (!*ctx) return NULL;
    CHECK(shader_find_dir(NULL, argv[0], dir, n, err, sizeof err) == 0, "%s", err);
    Image *a = testlib_bundled("blob.png", g, g), *b = testlib_bundled("star.png", g, g);
    Morph *m = a && b ? testlib_morph(g, g, NULL, a->px, b->px, true, MORPH_FRAGMENT, dir) : NULL;
    CHECK(m != NULL, "the bundled morph");
    image_free(a);
    image_free(b);
    return m;
}

/* The window tests' end: the morph M, the window CTX and the folder TMP
 * (kept where KEEP_TMP is set, to look at) gone; check_done()'s status. */
static inline int testgl_window_done(Morph *m, GlCtx *ctx, const char *tmp)
{
    morph_free(m);
    glctx_destroy(ctx);
    if (!getenv("KEEP_TMP")) testlib_rm_rf(tmp);
    return check_done();
}

#endif
