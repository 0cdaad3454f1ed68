/* test_window_glctx: the freeglut window path; run under xvfb-run (tests/run.sh
 * does) from the source tree root. */
#include <GL/glew.h>

#include "check.h"
#include "field.h"
#include "glctx.h"
#include "shader.h"

#include <stdlib.h>
#include <string.h>

#define W 64
#define H 48

static char *saved_display;

static void test_display_detection(void)
{
    CHECK(saved_display != NULL, "DISPLAY is set (run under xvfb-run)");
    CHECK(glctx_display_available(), "display available with DISPLAY=%s", saved_display ? saved_display : "");
    unsetenv("DISPLAY");
    CHECK(!glctx_display_available(), "no display without DISPLAY");
    setenv("DISPLAY", "", 1);
    CHECK(!glctx_display_available(), "no display with DISPLAY empty");
    setenv("DISPLAY", ":4093", 1);
    CHECK(!glctx_display_available(), "no display with DISPLAY naming no server");
    char err[256] = "";
    GlCtx *none = glctx_create_window(NULL, NULL, W, H, "none", err, sizeof err);
    CHECK(none == NULL && strstr(err, "glctx: cannot open X display ':4093'") == err,
          "window without a display fails with a message: '%s'", err);
    if (saved_display) setenv("DISPLAY", saved_display, 1);
    CHECK(glctx_display_available(), "display available again");
}

static int near(unsigned char a, int b) { return abs((int)a - b) <= 1; }

static void test_window(void)
{
    char name[] = "test_window_glctx";
    char *argv[] = {name, NULL};
    int argc = 1;
    char err[512] = "";
    GlCtx *ctx = glctx_create_window(&argc, argv, W, H, "test", err, sizeof err);
    CHECK(ctx != NULL, "window context: %s", err);
    if (!ctx) return;
    printf("   path: %s\n   renderer: %s\n   version: %s\n", glctx_path(ctx), glctx_renderer(ctx),
           glctx_version(ctx));
    CHECK(strcmp(glctx_path(ctx), "window (freeglut)") == 0, "path");
    CHECK(glctx_window_id(ctx) > 0, "window id");
    CHECK(glctx_max_texture_size(ctx) > 0, "max texture size");

    GlCtx *second = glctx_create_window(&argc, argv, W, H, "again", err, sizeof err);
    CHECK(second == NULL && strstr(err, "glctx: ") == err, "a second window context is refused: '%s'", err);

    /* clear the back buffer and read it back */
    unsigned char px[W * H * 4];
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, W, H);
    glClearColor(0.25f, 0.5f, 0.75f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    memset(px, 0, sizeof px);
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, px);
    CHECK(gl_check("test", "reading the back buffer") == 0, "read back without GL errors");
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += !(near(px[4 * i], 64) && near(px[4 * i + 1], 128) && near(px[4 * i + 2], 191));
    CHECK(bad == 0, "back buffer is the clear colour (%d wrong; first %d,%d,%d)", bad, px[0], px[1], px[2]);

    /* a field drawn into the window by the copy shader (one pixel per cell) */
    Shader *copy = shader_load("shaders", "copy.glsl", err, sizeof err);
    Field *f = field_create(W, H, 4, err, sizeof err);
    CHECK(copy && f, "copy shader and field in the window context: %s", err);
    if (copy && f) {
        float *v = malloc(sizeof(float) * W * H * 4);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float *p = v + 4 * (y * W + x);
                p[0] = x < W / 2 ? 1.0f : 0.0f;
                p[1] = y < H / 2 ? 1.0f : 0.0f;
                p[2] = 0.0f;
                p[3] = 1.0f;
            }
        field_upload(f, v);
        free(v);
        shader_use(copy);
        shader_set_texture(copy, "u_src", 0, field_texture(f));
        shader_set_float(copy, "u_scale", 1.0f);
        pass_draw_screen(0, 0, W, H);
        glReadBuffer(GL_BACK);
        glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, px);
        bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const unsigned char *p = px + 4 * (y * W + x);
                bad += p[0] != (x < W / 2 ? 255 : 0) || p[1] != (y < H / 2 ? 255 : 0) || p[2] != 0;
            }
        CHECK(bad == 0, "window shows the field, pixel (x, y) = cell (x, y) (%d wrong)", bad);
        CHECK(gl_check("test", "drawing into the window") == 0, "no GL errors");
    }
    field_free(f);
    shader_free(copy);
    pass_release();
    glctx_destroy(ctx);
}

int main(void)
{
    const char *d = getenv("DISPLAY");
    saved_display = d ? strdup(d) : NULL;
    RUN(test_display_detection);
    if (saved_display) RUN(test_window);
    free(saved_display);
    return check_done();
}
