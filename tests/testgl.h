/* testgl.h: the start every headless GPU test shares (include after
 * check.h): a headless GL context, its renderer printed, and the shader
 * folder found beside the test binary. NULL (with a failed CHECK) when
 * either is missing.
 *
 *   GlCtx *ctx = testgl_start(argv[0], g_dir, sizeof g_dir);
 *   if (!ctx) return check_done();
 */
#ifndef SMOKEMORPH_TESTGL_H
#define SMOKEMORPH_TESTGL_H

#include "glctx.h"
#include "shader.h"

static inline GlCtx *testgl_start(const char *argv0, char *dir, size_t n)
{
    char err[1024];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    CHECK(ctx != NULL, "no headless GL context: %s", err);
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

#endif
