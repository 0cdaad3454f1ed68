/* The window's inputs that test_window_classroom's scripted keys cannot
 * press (issue 11 point 6, "each key's effect"), through xdotool under
 * xvfb-run, in-process: one 800x480 window, one fragment-backend morph of a
 * 32x32 grid, and view_run once per check with an xdotool script running
 * beside it. The window pauses at its first frame (--keys ' '), the script
 * waits for "paused" in the title, acts, then resumes (space) or quits
 * ('q'); after view_run returns the morph is still there, so each input's
 * effect is checked on the morph itself, on view_shown() and the screenshot:
 *   - Up / Down select a parameter, Right / Left change it (viewmodel's step);
 *   - the wheel changes the selected parameter one step a click;
 *   - a click on the HUD's vd line selects vd (and the line drawn yellow is
 *     the one clicked);
 *   - a right drag adds smoke along its path, a middle drag and a shift+left
 *     drag erase it (the density read back, the HUD's mass);
 *   - 'f' and F11 toggle fullscreen: the window takes the screen, and back.
 * Covered elsewhere: a left drag stirs, PageUp / PageDown / Home
 * (test_window_view); the plain keys (test_window_classroom).
 * KEEP_TMP=1 keeps the screenshots and the scripts' files in /tmp. */
#include <GL/glew.h> /* before freeglut (text.h and glctx.h bring GL in) */
#include <GL/freeglut.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testgl.h"
#include "glctx.h"
#include "image.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"
#include "text.h"
#include "view.h"

#define G 32
#define N (G * G)
#define WIN_W 800
#define WIN_H 480
/* view.c's HUD text: TEXT_PX pixels a line, the first line's top 12 pixels
 * from the window's top (draw_hud and mouse) */

static char g_tmp[256], g_dir[4096];
static Morph *g_m;

/* A script that never reaches the window leaves it paused for ever: end the
 * test with a failure instead of hanging the run. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL test_window_inputs: a window run took over 40 s (the xdotool script "
                              "never reached it?)\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(2);
}

/* view_run of g_m (density view, HUD on) with KEYS and STEPS more steps (0:
 * until 'q'; the scripted keys take a frame of 2 steps each, so STEPS must
 * outlast them or the run ends before the script acts), a screenshot to SHOT when given, and the sh commands SCRIPT
 * beside it; in SCRIPT, `title RE` waits (up to 10 s) for a window title
 * matching RE and sets $w to the window, and $T is the temporary folder.
 * Returns view_run's status, or the script's when that failed.
 * Order: `key --window $w K` is an XSendEvent, delivered at once; mouse
 * buttons, `mousedown` and `key K` without --window go through XTEST and the
 * server's input queue, and may reach the window after a later XSendEvent.
 * So after the mouse, the script resumes or quits with `key space` or `key q`
 * (XTEST, to the window under the pointer: Xvfb has no window manager and
 * the focus follows the pointer), never `key --window`. */
static int xview(const char *keys, long steps, const char *script, const char *shot)
{
    char path[512], cmd[1024], spath[512];
    snprintf(spath, sizeof spath, "%s/%s", g_tmp, shot ? shot : "none.png");
    FILE *f = testgl_script(g_tmp, path, sizeof path);
    if (!f) return -1;
    fprintf(f,
            "T=%s\n"
            "%s"
            "geom() {\n" /* waits (up to 5 s) for the window's size $1, writes it to $T/$2 */
            "    end=$(($(date +%%s) + 5))\n"
            "    while :; do\n"
            "        g=$(xdotool getwindowgeometry $w | sed -n 's/.*Geometry: //p')\n"
            "        [ \"$g\" = \"$1\" ] && break\n"
            "        [ $(date +%%s) -lt $end ] || break\n"
            "        sleep 0.05\n"
            "    done\n"
            "    echo \"$g\" >$T/$2\n"
            "}\n"
            "%s\n",
            g_tmp, TESTGL_SH_TITLE, script);
    fclose(f);
    /* the title the last run left may say "paused": not this run's */
    glutSetWindowTitle("inputs"); /* freeglut flushes it to the server */
    snprintf(cmd, sizeof cmd, "timeout 30 sh %s >%s/script.txt 2>&1", path, g_tmp);
    FILE *p = popen(cmd, "w");
    CHECK(p != NULL, "cannot start the script");
    if (!p) return -1;
    ViewOptions vo = {.steps_per_frame = 2, .max_steps = steps ? morph_step_count(g_m) + steps : 0, .shader_dir = g_dir, .color = {1, 1, 1},
                      .screenshot = shot ? spath : NULL, .keys = keys, .view = VIEW_DENSITY};
    alarm(40);
    int rc = view_run(NULL, g_m, &vo);
    int st = pclose(p);
    alarm(0);
    int src = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (src != 0) {
        char out[2048] = "";
        snprintf(path, sizeof path, "%s/script.txt", g_tmp);
        testlib_read_text(path, out, sizeof out);
        printf("  the script exited %d: %s\n", src, out);
    }
    CHECK(rc == 0 && src == 0, "view_run exited %d, the script %d", rc, src);
    return rc ? rc : src;
}

/* The field's rectangle (GL's, y up) with the HUD on: where the density
 * view (HUD on) put it, from a first run that only quits. */
static ViewRect field_rect(void)
{
    static ViewRect r;
    if (r.w == 0) {
        ViewOptions vo = {.steps_per_frame = 2, .shader_dir = g_dir, .color = {1, 1, 1}, .keys = "q",
                          .view = VIEW_DENSITY};
        CHECK(view_run(NULL, g_m, &vo) == 0, "a run for the layout");
        r = view_shown()->layout.field;
    }
    return r;
}

/* Cell (x, y) (row 0 at the top) to window pixel (from the top-left). */
static void cell_px(double cx, double cy, int *x, int *y)
{
    ViewRect r = field_rect();
    *x = r.x + (int)lround(cx * r.w / G);
    *y = (WIN_H - r.y - r.h) + (int)lround(cy * r.h / G);
}

static void restore(const SolverParams *p0)
{
    SolverParams p = *p0;
    CHECK(morph_set_params(g_m, &p) == 0, "parameters back");
}

/* The HUD line of parameter i is marked and shows its value. */
static void check_hud_line(int i, const SolverParams *p, const char *what)
{
    char v[32];
    viewmodel_param_value(p, i, v, sizeof v);
    const char *line = view_shown()->hud[viewmodel_hud_param_line(i)];
    CHECK(line[0] == '>' && strstr(line, viewmodel_param_label(i)) && strstr(line, v),
          "%s: the HUD's line of %s is '%s', not marked with %s", what, viewmodel_param_label(i), line, v);
}

/* Up (from vf: wraps to the force mode) Down (back to vf) Down Down (vg),
 * Right (vg up), Up (vd), Left Left (vd down twice): the selection and the
 * values are what viewmodel's steps give. */
static void test_arrow_keys(void)
{
    SolverParams p0 = *morph_params(g_m), want = p0;
    CHECK(viewmodel_param_adjust(&want, 2, +1) == 0 && viewmodel_param_adjust(&want, 1, -1) == 0 &&
              viewmodel_param_adjust(&want, 1, -1) == 0,
          "viewmodel's steps of vg and vd");
    if (xview(" ", 4, "title paused\nxdotool key --window $w Up Down Down Down Right Up Left Left\n"
                      "xdotool key --window $w space", "arrows.png") == 0) {
        const SolverParams *p = morph_params(g_m);
        const ViewShown *sh = view_shown();
        printf("  Up Down Down Down Right Up Left Left: selected %d (%s), vg %g -> %g, vd %g -> %g\n", sh->selected,
               viewmodel_param_label(sh->selected), p0.vg, p->vg, p0.vd, p->vd);
        CHECK(sh->selected == 1, "the arrows selected %d, not vd", sh->selected);
        CHECK(p->vg == want.vg && p->vd == want.vd && p->vf == p0.vf && p->dt == p0.dt,
              "vg %g (want %g), vd %g (want %g), vf %g, dt %g", p->vg, want.vg, p->vd, want.vd, p->vf, p->dt);
        CHECK(sh->params.vg == p->vg && sh->params.vd == p->vd, "the HUD's parameters are the morph's");
        check_hud_line(1, p, "arrows");
    }
    restore(&p0);
}

/* Tab x4 selects dt; the wheel up, up, down over the field: dt one step up
 * (down ignored or the wheel reversed would give another value). */
static void test_wheel(void)
{
    SolverParams p0 = *morph_params(g_m), want = p0, rev = p0;
    CHECK(viewmodel_param_adjust(&want, 4, +1) == 0, "dt one step up");
    viewmodel_param_adjust(&rev, 4, -1);
    int x, y;
    cell_px(G / 2.0, G / 2.0, &x, &y);
    char script[512];
    snprintf(script, sizeof script,
             "title paused\nxdotool mousemove --window $w %d %d\n"
             "xdotool click 4 click 4 click 5\n"
             "xdotool key space", x, y);
    if (xview("\t\t\t\t ", 12, script, "wheel.png") == 0) {
        const SolverParams *p = morph_params(g_m);
        printf("  wheel up, up, down on dt: %g -> %g (one step up: %g)\n", p0.dt, p->dt, want.dt);
        CHECK(view_shown()->selected == 4, "Tab x4 then the wheel: selected %d, not dt", view_shown()->selected);
        CHECK(p->dt == want.dt && want.dt != p0.dt && want.dt != rev.dt,
              "after the wheel up, up, down dt is %g, not one step up (%g) from %g", p->dt, want.dt, p0.dt);
        check_hud_line(4, p, "wheel");
    }
    restore(&p0);
}

/* A click on the HUD's vd line selects vd; the line drawn yellow (the
 * selected one) is the line clicked; the click does not stir. */
static void test_hud_click(void)
{
    field_rect(); /* a first run: the layout and the font's size */
    const ViewLayout *lay = &view_shown()->layout;
    int ch = lay->ts.ch, top0 = WIN_H - (lay->hud_text.y + lay->hud_text.h), hud_w = lay->hud.w;
    int line = viewmodel_hud_param_line(1), y0 = top0 + line * ch, y = y0 + ch / 2;
    char script[512];
    snprintf(script, sizeof script,
             "title paused\nxdotool mousemove --window $w 40 %d click 1\n"
             "xdotool key space", y);
    if (xview(" ", 2, script, "click.png") == 0) {
        const ViewShown *sh = view_shown();
        printf("  click at row %d (line %d, %d pixels a line): selected %d (%s)\n", y, line, ch, sh->selected,
               viewmodel_param_label(sh->selected));
        CHECK(sh->selected == 1, "a click on the vd line selected %d", sh->selected);
        check_hud_line(1, morph_params(g_m), "click");
        char path[512];
        snprintf(path, sizeof path, "%s/click.png", g_tmp);
        Image *r = testlib_load(path, IMAGE_CHANNEL_R), *g = testlib_load(path, IMAGE_CHANNEL_G),
              *b = testlib_load(path, IMAGE_CHANNEL_B);
        CHECK(r && g && b, "load the screenshot");
        if (r && g && b) { /* yellow (1, 0.85, 0.3) text in the HUD's panel, rows from the top */
            int lo = WIN_H, hi = -1, n = 0;
            for (int j = 0; j < WIN_H; j++)
                for (int i = 0; i < hud_w; i++) {
                    int k = j * WIN_W + i;
                    if (r->px[k] > 0.8f && g->px[k] > 0.6f && b->px[k] < 0.5f && r->px[k] - b->px[k] > 0.4f) {
                        n++;
                        if (j < lo) lo = j;
                        if (j > hi) hi = j;
                    }
                }
            printf("  yellow text: %d pixels in rows %d..%d; the vd line is rows %d..%d\n", n, lo, hi, y0,
                   y0 + ch - 1);
            CHECK(n > 20 && lo >= y0 && hi < y0 + ch, "the line drawn selected (rows %d..%d) is not the one "
                  "clicked (rows %d..%d)", lo, hi, y0, y0 + ch - 1);
        }
        image_free(r);
        image_free(g);
        image_free(b);
    }
}

static double sum(const float *f)
{
    double s = 0.0;
    for (int k = 0; k < N; k++) s += f[k];
    return s;
}

/* Paused at step 0 after a reset, a drag with BUTTON (held with shift when
 * SHIFT) from cell (x0, cy) to (x1, cy), then 'q' half a second later:
 * d = density after - before, and the HUD's and the morph's mass after. */
static int drag(int button, bool shift, double x0, double x1, double cy, float *d, double *hud_mass, double *mass)
{
    static float before[N];
    CHECK(morph_reset(g_m) == 0 && morph_read_density(g_m, before) == 0, "reset and read the start back");
    char script[1024], moves[512] = "";
    int len = 0;
    for (int s = 1; s <= 6; s++) {
        int x, y;
        cell_px(x0 + (x1 - x0) * s / 6.0, cy, &x, &y);
        len += snprintf(moves + len, sizeof moves - (size_t)len, " mousemove --window $w %d %d", x, y);
    }
    int x, y;
    cell_px(x0, cy, &x, &y);
    snprintf(script, sizeof script,
             "title paused\nxdotool mousemove --window $w %d %d%s mousedown %d%s mouseup %d%s\n"
             "sleep 0.5\nxdotool key q", x, y, shift ? " keydown shift" : "", button, moves, button,
             shift ? " keyup shift" : "");
    if (xview(" ", 0, script, NULL) != 0) return -1;
    CHECK(morph_step_count(g_m) == 0, "paused at step 0 (%ld)", morph_step_count(g_m));
    CHECK(morph_read_density(g_m, d) == 0 && morph_metrics(g_m, mass, NULL, NULL) == 0, "read back");
    for (int k = 0; k < N; k++) d[k] -= before[k];
    *hud_mass = view_shown()->metrics.mass;
    return 0;
}

/* Where d changed: the centroid (cells, row 0 at the top) of |d|. */
static void changed_at(const float *d, double *cx, double *cy)
{
    double s = 0.0, sx = 0.0, sy = 0.0;
    for (int j = 0; j < G; j++)
        for (int i = 0; i < G; i++) {
            double v = fabs(d[j * G + i]);
            s += v, sx += v * (i + 0.5), sy += v * (j + 0.5);
        }
    *cx = s > 0.0 ? sx / s : -1.0;
    *cy = s > 0.0 ? sy / s : -1.0;
}

/* A right drag across row 6 (cells 8..24) adds smoke along it, nowhere
 * else, and the HUD's mass (paused) is the morph's. */
static void test_right_drag_adds(void)
{
    static float d[N];
    double hm, m, cx, cy;
    if (drag(3, false, 8, 24, 6, d, &hm, &m) != 0) return;
    double lo = 0.0;
    for (int k = 0; k < N; k++) lo = fmin(lo, d[k]);
    changed_at(d, &cx, &cy);
    printf("  right drag: mass +%.4g (least change %.3g) around cell (%.1f, %.1f); HUD mass %.6g, morph %.6g\n",
           sum(d), lo, cx, cy, hm, m);
    CHECK(sum(d) > 1.0 && lo > -1e-6, "a right drag added %g of smoke (least change %g)", sum(d), lo);
    CHECK(fabs(cx - 16.0) < 2.0 && fabs(cy - 6.0) < 1.5, "the smoke went to cell (%.1f, %.1f), not along row 6",
          cx, cy);
    CHECK(fabs(hm - m) <= 5e-6 * m, "the HUD's mass %g after adding smoke, paused, is not the morph's %g", hm, m);
}

/* A middle drag, and a shift+left drag, across the start's smoke (row 16,
 * cells 8..24) erase it along the path; nothing anywhere rises. */
static void test_erase(void)
{
    static float d[N];
    static const struct {
        int button;
        bool shift;
        const char *name;
    } how[2] = {{2, false, "middle drag"}, {1, true, "shift+left drag"}};
    for (int h = 0; h < 2; h++) {
        double hm, m, cx, cy;
        if (drag(how[h].button, how[h].shift, 8, 24, 16, d, &hm, &m) != 0) continue;
        double hi = 0.0;
        for (int k = 0; k < N; k++) hi = fmax(hi, d[k]);
        changed_at(d, &cx, &cy);
        printf("  %s: mass %.4g (most rise %.3g) around cell (%.1f, %.1f); HUD mass %.6g, morph %.6g\n",
               how[h].name, sum(d), hi, cx, cy, hm, m);
        CHECK(sum(d) < -1.0 && hi < 1e-6, "a %s removed %g of smoke (most rise %g)", how[h].name, -sum(d), hi);
        CHECK(fabs(cx - 16.0) < 4.0 && fabs(cy - 16.0) < 1.5, "a %s erased around cell (%.1f, %.1f), not along "
              "row 16", how[h].name, cx, cy);
        CHECK(fabs(hm - m) <= 5e-6 * m, "%s: the HUD's mass %g is not the morph's %g", how[h].name, hm, m);
    }
}

/* 'f' takes the screen (the Xvfb screen's size), F11 gives the window back
 * its size, F11 takes the screen again; the screenshot at the end is the
 * screen's size (the view follows). Then 'f' (scripted) back to 800x480.
 * Xvfb runs no window manager, so freeglut's glutFullScreenToggle takes its
 * fallback, resizing the window to the screen and back; the EWMH request
 * (_NET_WM_STATE_FULLSCREEN) a desktop's window manager would act on is not
 * driven here. */
static void test_fullscreen(void)
{
    const char *script =
        "title paused\n"
        "S=$(xdotool getdisplaygeometry | tr ' ' x)\n"
        "echo $S >$T/screen.txt\n"
        "geom 800x480 g0.txt\n"
        "xdotool key --window $w f\ngeom $S g1.txt\n"
        "xdotool key --window $w F11\ngeom 800x480 g2.txt\n"
        "xdotool key --window $w F11\ngeom $S g3.txt\n"
        "xdotool key --window $w space";
    if (xview(" ", 4, script, "full.png") == 0) {
        char screen[64] = "", g[4][64];
        char path[512];
        snprintf(path, sizeof path, "%s/screen.txt", g_tmp);
        testlib_read_text(path, screen, sizeof screen);
        screen[strcspn(screen, "\n")] = 0;
        int sw = 0, sh = 0;
        sscanf(screen, "%dx%d", &sw, &sh);
        static const char *const what[4] = {"at the start", "after 'f'", "after F11", "after F11 again"};
        for (int k = 0; k < 4; k++) {
            snprintf(path, sizeof path, "%s/g%d.txt", g_tmp, k);
            g[k][0] = 0;
            testlib_read_text(path, g[k], sizeof g[k]);
            g[k][strcspn(g[k], "\n")] = 0;
            printf("  %s: %s (screen %s)\n", what[k], g[k], screen);
            CHECK(!strcmp(g[k], k % 2 ? screen : "800x480"), "%s the window is '%s', not %s", what[k], g[k],
                  k % 2 ? screen : "800x480");
        }
        snprintf(path, sizeof path, "%s/full.png", g_tmp);
        Image *im = testlib_load(path, IMAGE_CHANNEL_R);
        CHECK(im && im->w == sw && im->h == sh, "the fullscreen screenshot is %dx%d, the screen %dx%d",
              im ? im->w : 0, im ? im->h : 0, sw, sh);
        image_free(im);
    }
    /* back: 'f' (a key of the list) restores the window's size */
    if (xview(" f", 0, "title paused\ngeom 800x480 back.txt\nxdotool key --window $w q", NULL) == 0) {
        char back[64] = "", path[512];
        snprintf(path, sizeof path, "%s/back.txt", g_tmp);
        testlib_read_text(path, back, sizeof back);
        back[strcspn(back, "\n")] = 0;
        printf("  after 'f' again: %s\n", back);
        CHECK(!strcmp(back, "800x480"), "'f' did not give the window its size back: '%s'", back);
    }
}

static void run_tests(void)
{
    RUN(test_arrow_keys);
    RUN(test_wheel);
    RUN(test_hud_click);
    RUN(test_right_drag_adds);
    RUN(test_erase);
    RUN(test_fullscreen);
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    testlib_tmpdir(g_tmp, sizeof g_tmp, "smokemorph_inputs");
    GlCtx *ctx;
    g_m = testgl_window_morph(&argc, argv, WIN_W, WIN_H, "inputs", G, g_dir, sizeof g_dir, &ctx);
    if (g_m) run_tests();
    return testgl_window_done(g_m, ctx, g_tmp);
}
