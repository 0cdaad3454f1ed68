/* view: the live window; see view.h.
 * freeglut drives the loop: every displayed frame advances the morph by
 * steps_per_frame fixed-dt steps (unless paused), draws the chosen view
 * letterboxed to keep the grid's aspect, and once a second reads the error
 * back for the title bar. */
#include "view.h"

#include <GL/glew.h>
#include <GL/freeglut.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "field.h"
#include "image.h"
#include "log.h"
#include "shader.h"

enum { MODE_DENSITY, MODE_TARGET, MODE_TARGET_BLUR, MODE_SPEED, MODE_FIG2, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {
    "density", "target", "blurred target", "speed |u|", "morph, start and target"};

static struct {
    Morph *m;
    ViewOptions o;
    Shader *display;
    Field *start_tex;
    int win_w, win_h;
    bool paused, single;
    int mode;
    int rc;
    /* title bar */
    double last_title;
    long last_title_steps;
    double rate, error;
    /* mouse */
    bool dragging;
    int mx, my;
    /* scripted keys (demos and tests) */
    const char *keys;
} V;

static void print_keys(void)
{
    printf("smokemorph keys:\n"
           "  space  pause / resume          s  single step\n"
           "  r      reset to the start      t  swap start and target (morph back)\n"
           "  ]  [   driving force up / down g  gathering on / off\n"
           "  v      cycle the view (density, target, blurred target, speed, start+target)\n"
           "  h      this list               q  Esc  quit\n"
           "  mouse drag: stir the smoke\n");
    fflush(stdout);
}

static int upload_start(void)
{
    return field_upload(V.start_tex, morph_start(V.m));
}

/* The largest rectangle of aspect aw:ah centred in the window. */
static void fit(float aw, float ah, int *x, int *y, int *w, int *h)
{
    float s = (float)V.win_w / aw < (float)V.win_h / ah ? (float)V.win_w / aw : (float)V.win_h / ah;
    *w = (int)(aw * s);
    *h = (int)(ah * s);
    *x = (V.win_w - *w) / 2;
    *y = (V.win_h - *h) / 2;
}

static void draw_field(int mode, int x, int y, int w, int h)
{
    Shader *sh = V.display;
    shader_use(sh);
    shader_set_texture(sh, "u_dens", 0, morph_density_texture(V.m));
    shader_set_texture(sh, "u_vel", 1, morph_velocity_texture(V.m));
    shader_set_texture(sh, "u_img", 2, field_texture(V.start_tex));
    shader_set_ivec2(sh, "u_size", morph_width(V.m), morph_height(V.m));
    shader_set_vec4(sh, "u_rect", (float)x, (float)y, (float)w, (float)h);
    shader_set_int(sh, "u_mode", mode);
    shader_set_float(sh, "u_gain", mode == MODE_SPEED ? 1.0f / morph_params(V.m)->umax : 1.0f);
    shader_set_vec3(sh, "u_color", V.o.color[0], V.o.color[1], V.o.color[2]);
    shader_set_vec3(sh, "u_bg", 0.0f, 0.0f, 0.0f);
    pass_draw_screen(x, y, w, h);
}

static void draw(void)
{
    int gw = morph_width(V.m), gh = morph_height(V.m);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, V.win_w, V.win_h);
    glClearColor(0.08f, 0.08f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    int x, y, w, h;
    if (V.mode == MODE_FIG2) {
        /* seed 003 Fig. 2: the morph above, start and target small below */
        fit((float)gw, (float)gh * 1.5f, &x, &y, &w, &h);
        int top = h * 2 / 3, small = h - top;
        int sw = small * gw / gh;
        draw_field(MODE_DENSITY, x + (w - top * gw / gh) / 2, y + small, top * gw / gh, top);
        draw_field(4, x + w / 2 - sw - 2, y, sw, small);
        draw_field(MODE_TARGET, x + w / 2 + 2, y, sw, small);
    } else {
        fit((float)gw, (float)gh, &x, &y, &w, &h);
        draw_field(V.mode, x, y, w, h);
    }
}

static void quit(int rc)
{
    V.rc = rc;
    glutLeaveMainLoop();
}

static void update_title(bool force)
{
    double now = export_now();
    if (!force && now - V.last_title < 1.0) return;
    long steps = morph_step_count(V.m);
    if (now > V.last_title) V.rate = (double)(steps - V.last_title_steps) / (now - V.last_title);
    V.last_title = now;
    V.last_title_steps = steps;
    if (morph_observe(V.m, NULL, NULL, &V.error, NULL) < 0) { /* one read-back a second */
        log_error("view", "cannot read the density back from the GPU");
        quit(1);
        return;
    }
    /* a sequence (issue 9): the active key and the steps to the next */
    char key[96] = "";
    long every = morph_key_every(V.m);
    int nk = morph_key_count(V.m), kk = morph_key(V.m);
    if (every > 0 && kk < nk)
        snprintf(key, sizeof key, "  key %d/%d (%ld to next)", kk, nk, (long)kk * every - steps);
    else if (every > 0)
        snprintf(key, sizeof key, "  key %d/%d", kk, nk);
    char title[352];
    snprintf(title, sizeof title, "smokemorph  step %ld%s  %.0f steps/s  error %.3f  [%s]%s  (h: keys)",
             steps, key, V.rate, V.error, mode_names[V.mode], V.paused ? "  paused" : "");
    glutSetWindowTitle(title);
}

static void key(unsigned char k, int x, int y)
{
    (void)x;
    (void)y;
    SolverParams p = *morph_params(V.m);
    int rc = 0;
    switch (k) {
    case ' ': V.paused = !V.paused; break;
    case 's': V.paused = true; V.single = true; break;
    case 'r': rc = morph_reset(V.m) < 0 || upload_start() < 0 ? -1 : 0; break;
    case 't': rc = morph_swap(V.m) < 0 || upload_start() < 0 ? -1 : 0; break;
    case ']':
    case '[':
        p.vf = k == ']' ? p.vf * 1.25f : p.vf / 1.25f;
        rc = morph_set_params(V.m, &p);
        log_info("view", "driving force vf = %g", p.vf);
        break;
    case 'g':
        p.gather = !p.gather;
        rc = morph_set_params(V.m, &p);
        log_info("view", "gathering %s", p.gather ? "on" : "off");
        break;
    case 'v': V.mode = (V.mode + 1) % MODE_COUNT; break;
    case 'h': print_keys(); break;
    case 'q': case 27: quit(0); return;
    default: return;
    }
    if (rc < 0) { /* the GPU refused new fields: nothing sensible left to show */
        log_error("view", "cannot apply the '%c' key on the GPU", k);
        quit(1);
        return;
    }
    update_title(true);
    glutPostRedisplay();
}

static void mouse(int button, int state, int x, int y)
{
    if (button != GLUT_LEFT_BUTTON) return;
    V.dragging = state == GLUT_DOWN;
    V.mx = x;
    V.my = y;
}

/* A drag adds the mouse's velocity to the smoke around the pointer. */
static void motion(int x, int y)
{
    if (!V.dragging || V.mode == MODE_FIG2) return;
    int gw = morph_width(V.m), gh = morph_height(V.m);
    int rx, ry, rw, rh;
    fit((float)gw, (float)gh, &rx, &ry, &rw, &rh);
    float cx = (float)(x - rx) * (float)gw / (float)rw;     /* cells, row 0 at the top */
    float cy = (float)(y - (V.win_h - ry - rh)) * (float)gh / (float)rh;
    float dx = (float)(x - V.mx) * (float)gw / (float)rw, dy = (float)(y - V.my) * (float)gh / (float)rh;
    const SolverParams *p = morph_params(V.m);
    float cell = 1.0f / (float)(gw < gh ? gw : gh);
    float k = cell / (p->dt * (float)V.o.steps_per_frame); /* cells per frame -> domain/time */
    morph_stir(V.m, cx, cy, dx * k, dy * k, 0.03f / cell);
    V.mx = x;
    V.my = y;
}

static int save_screenshot(const char *path)
{
    Image *im = image_create(V.win_w, V.win_h, 4);
    float *buf = malloc((size_t)V.win_w * V.win_h * 4 * sizeof(float));
    char err[512];
    int rc = -1;
    if (!im || !buf) goto done;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, V.win_w, V.win_h, GL_RGBA, GL_FLOAT, buf);
    if (gl_check("view", "reading the window back") < 0) goto done;
    /* GL rows start at the bottom; PNG rows at the top */
    for (int j = 0; j < V.win_h; j++)
        memcpy(im->px + (size_t)j * V.win_w * 4, buf + (size_t)(V.win_h - 1 - j) * V.win_w * 4,
               (size_t)V.win_w * 4 * sizeof(float));
    if (image_save_png(path, im, 8, err, sizeof err) < 0) {
        log_error("view", "%s", err);
        goto done;
    }
    rc = 0;
done:
    free(buf);
    image_free(im);
    return rc;
}

static void display(void)
{
    if (V.keys && *V.keys) key((unsigned char)*V.keys++, 0, 0);
    if (!V.paused || V.single) {
        int n = V.single ? 1 : V.o.steps_per_frame;
        for (int k = 0; k < n; k++) {
            if (V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps) break;
            if (morph_step(V.m) < 0) {
                log_error("view", "a GL error in the simulation step");
                quit(1);
                return;
            }
        }
        V.single = false;
    }
    draw();
    bool done = V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps &&
                (!V.keys || !*V.keys);
    if (done && V.o.screenshot) {
        if (save_screenshot(V.o.screenshot) < 0) {
            quit(1);
            return;
        }
    }
    glutSwapBuffers();
    if (gl_check("view", "drawing") < 0) {
        quit(1);
        return;
    }
    update_title(false);
    if (done) quit(0);
}

static void reshape(int w, int h)
{
    V.win_w = w > 0 ? w : 1;
    V.win_h = h > 0 ? h : 1;
    glutPostRedisplay();
}

static void idle(void) { glutPostRedisplay(); }

int view_run(GlCtx *ctx, Morph *m, const ViewOptions *o)
{
    char err[512];
    (void)ctx;
    memset(&V, 0, sizeof V);
    V.m = m;
    V.o = *o;
    if (V.o.steps_per_frame < 1) V.o.steps_per_frame = 1;
    V.keys = o->keys;
    if (!morph_density_texture(m)) {
        log_error("view", "the window needs a GPU backend (--backend fragment or compute), not %s",
                  morph_backend_name(morph_backend(m)));
        return 1;
    }
    if (!(V.display = shader_load(o->shader_dir, "display.glsl", err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (!(V.start_tex = field_create(morph_width(m), morph_height(m), 1, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        shader_free(V.display);
        return 1;
    }
    upload_start();
    V.win_w = glutGet(GLUT_WINDOW_WIDTH);
    V.win_h = glutGet(GLUT_WINDOW_HEIGHT);
    glutSetOption(GLUT_ACTION_ON_WINDOW_CLOSE, GLUT_ACTION_GLUTMAINLOOP_RETURNS);
    glutDisplayFunc(display);
    glutReshapeFunc(reshape);
    glutKeyboardFunc(key);
    glutMouseFunc(mouse);
    glutMotionFunc(motion);
    glutIdleFunc(idle);
    V.last_title = export_now();
    if (V.o.verbose_keys) print_keys();
    glutMainLoop();
    field_free(V.start_tex);
    shader_free(V.display);
    return V.rc;
}
