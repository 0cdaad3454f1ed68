/* view: the live window; see view.h.
 * freeglut drives the loop: every displayed frame advances the morph by
 * steps_per_frame fixed-dt steps (unless paused), draws the chosen view
 * where viewmodel_layout puts it, its name and colour bar, the HUD (the
 * numbers, the parameters, the plot) and the key help, and once a second
 * reads the error back for the title bar. The computed views' fields come
 * from viewfield.h on a read-back of the morph's state, at most ten times
 * a second while it runs (every frame when paused or at the last step). */
#include "view.h"

#include <GL/glew.h>
#include <GL/freeglut.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "field.h"
#include "guard.h"
#include "image.h"
#include "log.h"
#include "passbypass.h"
#include "shader.h"
#include "text.h"

/* the modes of display.glsl */
enum { MODE_DENSITY, MODE_TARGET, MODE_TARGET_BLUR, MODE_SPEED, MODE_IMAGE, MODE_MAPPED, MODE_COMPOSITE };

/* the active key's mark in the Fig. 2 layout (RGB) */
#define MARK_COLOR 1.0f, 0.55f, 0.1f
/* how often (s) a running window reads the state and the metrics back */
#define REFRESH_S 0.1
/* text sizes (pixels a line): the HUD and labels, the view's name */
#define TEXT_PX 17
#define TITLE_PX 26

static const float WHITE[3] = {0.95f, 0.95f, 0.95f}, YELLOW[3] = {1.0f, 0.85f, 0.3f},
                   GREY[3] = {0.7f, 0.7f, 0.75f}, ERR_COLOR[3] = {1.0f, 0.55f, 0.2f},
                   DIV_COLOR[3] = {0.4f, 0.8f, 1.0f};

enum { DRAG_NONE, DRAG_STIR, DRAG_ADD, DRAG_ERASE };

static struct {
    Morph *m;
    ViewOptions o;
    /* several fields (ViewOptions.fields): f[0] is m; field: the density
     * view's field, -1 the composite (or the one field); scale: ρ to alpha */
    Morph *f[MORPH_MAX_FIELDS];
    int nf, field;
    float scale;
    Shader *display, *hud;
    Text *font, *big;
    Field *start_tex;
    /* a sequence's keys as given, for the Fig. 2 layout: key_tex[k-1] is key
     * k's image (NULL without a sequence); panels holds nkeys + 1 rectangles */
    Field **key_tex;
    int nkeys;
    ViewRect *panels;
    /* the computed views: the state read back, the field, its textures */
    MorphState st;
    ViewField vf;
    Field *scalar, *scalar2, *vec, *plot_tex;
    bool vf_dirty, vf_ok;
    double vf_time;
    ViewPlot plot;
    ViewMetrics mt;
    double mt_time;
    int win_w, win_h;
    bool paused, single, running;
    int view, sel;
    bool hud_on, help_on, shot_key;
    int rc;
    /* title bar */
    double last_title;
    long last_title_steps, taken; /* steps taken in this window: a reset or a jump leaves them */
    double rate, error;
    /* mouse */
    int drag;
    int mx, my;
    /* scripted keys (demos and tests) */
    const char *keys;
    ViewShown shown;
    /* issue 11, pass by pass and compare: the hooks at the end of this file */
    Field *pass_tex;          /* the last pass's output, mapped to 0..1 */
    bool pass_shown;          /* draw it instead of the view */
    char pass_line[160];
    PassbypassPlot pass_plot; /* the pressure and potential residuals, pass by pass */
    bool pass_potential;      /* the last residual was the potential's (else the pressure's) */
    /* issue 24: the recording (--record, 'R'): the video, its name, its size */
    Exporter *rec;
    char rec_path[4096];
    int rec_w, rec_h;
    double rec_next;          /* when the next frame may show (export_now's clock) */
    unsigned char *rec_buf;
} V;

static int step_once(void);
static void draw_compare(void);
static int pass_next(void);
static void title_extra(char *buf, size_t n);
static void record_toggle(void);

const ViewShown *view_shown(void) { return &V.shown; }

/* ---- several fields (issue 9 in the window) ----------------------------------
 * The views the 'v' key cycles are slots: with one field the ViewKinds; with
 * N fields the composite (VIEW_DENSITY), then "density 1".."density N", then
 * the other views. Everything but the density views shows field 0 (it holds
 * the shared velocity; its target and its force). */
static int nslots(void) { return VIEW_COUNT + (V.nf > 1 ? V.nf : 0); }

static int slot_of_view(void)
{
    if (V.view == VIEW_DENSITY) return V.field < 0 ? 0 : 1 + V.field;
    return V.view + (V.nf > 1 ? V.nf : 0);
}

static void set_slot(int s)
{
    int extra = V.nf > 1 ? V.nf : 0;
    s = (s % nslots() + nslots()) % nslots();
    V.field = -1;
    if (s == 0) V.view = VIEW_DENSITY;
    else if (s <= extra) V.view = VIEW_DENSITY, V.field = s - 1;
    else V.view = s - extra;
}

/* the field the density view (and adding or erasing smoke) acts on */
static Morph *shown_morph(void) { return V.nf > 1 && V.field >= 0 ? V.f[V.field] : V.m; }

/* a field's colour (sRGB): the one field's is ViewOptions.color */
static const float *field_rgb(int i) { return V.nf > 1 ? V.o.field_color[i] : V.o.color; }

/* the density view's field's name */
static const char *field_label(int i)
{
    const char *nm = V.nf > 1 ? V.o.field_name[i] : NULL;
    return nm && *nm ? nm : "smoke";
}

/* The view's label (UTF-8, drawn) and the title bar's (ASCII). */
static void view_label(char *b, size_t n, bool ascii)
{
    const char *base = ascii ? (V.view == VIEW_FIG2 ? "morph, start and target" : viewfield_name(V.view))
                             : viewfield_title(V.view);
    if (V.nf > 1 && V.view == VIEW_DENSITY && V.field < 0)
        snprintf(b, n, "%s (%d fields)", base, V.nf);
    else if (V.nf > 1 && V.view == VIEW_DENSITY)
        snprintf(b, n, "density %d/%d: %s", V.field + 1, V.nf, field_label(V.field));
    else if (V.nf > 1 && V.view != VIEW_FIG2 && V.view != VIEW_VELOCITY && V.view != VIEW_SPEED &&
             V.view != VIEW_VORTICITY && V.view != VIEW_PRESSURE && V.view != VIEW_DIVERGENCE)
        snprintf(b, n, "%s (field 1: %s)", base, field_label(0));
    else
        snprintf(b, n, "%s", base);
}

/* Keys that act on one morph's schedule or start (t, n, p, PageUp/Down)
 * are refused with several fields: each field has its own start and keys,
 * and acting on one would leave the fields out of step. true: refused. */
static bool refuse_fields(const char *what)
{
    if (V.nf <= 1) return false;
    log_info("view", "%s acts on one field, and this window steps %d fields together: not with "
             "several fields (r restarts them all)", what, V.nf);
    return true;
}

/* The density view's mode: the composite of several fields, or one field. */
static int density_mode(void) { return V.nf > 1 && V.field < 0 ? MODE_COMPOSITE : MODE_DENSITY; }

static void print_keys(void)
{
    const char *const *l;
    int n = viewmodel_help_lines(&l);
    printf("smokemorph keys:\n");
    for (int k = 0; k < n; k++) printf("  %s\n", l[k]);
    printf("  views (v): %s\n", viewfield_names());
    fflush(stdout);
}

/* The start image, and a sequence's keys (a swap changes the start and key 1). */
static int upload_start(void)
{
    if (field_upload(V.start_tex, morph_start(V.m)) < 0) return -1;
    for (int k = 1; V.key_tex && k <= V.nkeys; k++)
        if (field_upload(V.key_tex[k - 1], morph_key_target(V.m, k)) < 0) return -1;
    return 0;
}

static void layout(ViewLayout *l)
{
    viewmodel_layout(V.win_w, V.win_h, morph_width(V.m), morph_height(V.m), V.hud_on,
                     V.view == VIEW_DIVERGENCE, l);
}

static void set_stops(Shader *sh, const float *stops)
{
    shader_use(sh);
    GLint loc = shader_uniform(sh, "u_stops");
    if (loc >= 0) glUniform3fv(loc, VIEWMODEL_MAP_STOPS, stops);
}

/* the smoke's ramp (background to the smoke colour) as colour-map stops */
static void smoke_stops(float *s)
{
    static const float white[3] = {1.0f, 1.0f, 1.0f};
    /* the composite's bar is the alpha (white); one field's its colour */
    const float *col = V.nf > 1 && V.field < 0 ? white : field_rgb(V.field < 0 ? 0 : V.field);
    for (int k = 0; k < VIEWMODEL_MAP_STOPS; k++)
        for (int c = 0; c < 3; c++) s[3 * k + c] = col[c] * (float)k / (VIEWMODEL_MAP_STOPS - 1);
}

static int view_map(void)
{
    return V.vf.range.sign ? VIEWMODEL_MAP_DIV : VIEWMODEL_MAP_SEQ;
}

/* One field into a rectangle: a display.glsl mode; MODE_IMAGE draws IMG,
 * MODE_MAPPED the computed field IMG through the view's colour map. */
static void draw_field(int mode, const Field *img, ViewRect r, bool arrows)
{
    Shader *sh = V.display;
    shader_use(sh);
    /* the density view of one of several fields: that field's texture and colour */
    Morph *dm = V.view == VIEW_DENSITY ? shown_morph() : V.m;
    const float *rgb = field_rgb(dm == V.m ? 0 : V.field);
    shader_set_texture(sh, "u_dens", 0, morph_density_texture(dm));
    shader_set_texture(sh, "u_vel", 1, morph_velocity_texture(V.m));
    /* the composite's other fields (units 4-6; unused ones get field 0's) */
    static const char *const dn[3] = {"u_dens1", "u_dens2", "u_dens3"};
    for (int i = 1; i < MORPH_MAX_FIELDS; i++)
        shader_set_texture(sh, dn[i - 1], 3 + i, morph_density_texture(i < V.nf ? V.f[i] : V.m));
    shader_set_int(sh, "u_nfields", V.nf);
    float fc[3 * MORPH_MAX_FIELDS] = {0};
    for (int i = 0; i < V.nf && i < MORPH_MAX_FIELDS; i++) memcpy(fc + 3 * i, field_rgb(i), 3 * sizeof(float));
    GLint fl = shader_uniform(sh, "u_fcolor");
    if (fl >= 0) glUniform3fv(fl, MORPH_MAX_FIELDS, fc);
    shader_set_texture(sh, "u_img", 2, field_texture(img ? img : V.start_tex));
    shader_set_texture(sh, "u_vec", 3, field_texture(V.vec));
    shader_set_ivec2(sh, "u_size", morph_width(V.m), morph_height(V.m));
    shader_set_vec4(sh, "u_rect", (float)r.x, (float)r.y, (float)r.w, (float)r.h);
    shader_set_int(sh, "u_mode", mode);
    bool dens = mode == MODE_DENSITY || mode == MODE_TARGET || mode == MODE_TARGET_BLUR || mode == MODE_COMPOSITE;
    shader_set_float(sh, "u_gain", mode == MODE_SPEED ? 1.0f / morph_params(V.m)->umax : dens ? V.scale : 1.0f);
    shader_set_vec3(sh, "u_color", rgb[0], rgb[1], rgb[2]);
    shader_set_vec3(sh, "u_bg", 0.0f, 0.0f, 0.0f);
    shader_set_float(sh, "u_lo", V.vf.range.lo);
    shader_set_float(sh, "u_hi", V.vf.range.hi);
    set_stops(sh, viewmodel_map_stops(view_map()));
    bool on = arrows && V.vf_ok && V.vf.vec;
    shader_set_int(sh, "u_arrows", on ? 1 : 0);
    float spacing = (float)r.w / 24.0f;
    shader_set_float(sh, "u_arrow_px", spacing < 12.0f ? 12.0f : spacing);
    shader_set_float(sh, "u_vmax", on ? V.vf.vmax : 0.0f);
    shader_set_int(sh, "u_arrow_map", V.view == VIEW_VELOCITY ? 1 : 0);
    shader_set_vec3(sh, "u_arrow_color", 1.0f, 1.0f, 1.0f);
    pass_draw_screen(r.x, r.y, r.w, r.h);
}

/* hud.glsl: a panel, the colour bar, the plot */
static void draw_panel(ViewRect r, float alpha)
{
    shader_use(V.hud);
    shader_set_int(V.hud, "u_mode", 0);
    shader_set_vec4(V.hud, "u_rect", (float)r.x, (float)r.y, (float)r.w, (float)r.h);
    shader_set_vec3(V.hud, "u_color", 0.0f, 0.0f, 0.0f);
    shader_set_float(V.hud, "u_alpha", alpha);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    pass_draw_screen(r.x, r.y, r.w, r.h);
    glDisable(GL_BLEND);
}

static void text_at(Text *t, int x, int y_top, const char *s, const float *rgb)
{
    if (t) text_draw(t, x, y_top, &s, 1, rgb);
}

/* The colour bar and its labels: top, middle and bottom values. */
static void draw_bar(const ViewLayout *l, bool density)
{
    float smoke[3 * VIEWMODEL_MAP_STOPS];
    smoke_stops(smoke);
    set_stops(V.hud, density ? smoke : viewmodel_map_stops(view_map()));
    shader_set_int(V.hud, "u_mode", 1);
    shader_set_vec4(V.hud, "u_rect", (float)l->bar.x, (float)l->bar.y, (float)l->bar.w, (float)l->bar.h);
    pass_draw_screen(l->bar.x, l->bar.y, l->bar.w, l->bar.h);
    if (!V.font) return;
    float lo = density ? 0.0f : V.vf.range.lo, hi = density ? 1.0f / V.scale : V.vf.range.hi;
    int ch = text_cell_h(V.font), x = l->bar.x + l->bar.w + 6;
    char b[32];
    snprintf(b, sizeof b, "%.3g", hi);
    text_at(V.font, x, l->bar.y + l->bar.h + ch / 2, b, WHITE);
    snprintf(b, sizeof b, "%.3g", 0.5f * (lo + hi));
    text_at(V.font, x, l->bar.y + l->bar.h / 2 + ch / 2, b, WHITE);
    snprintf(b, sizeof b, "%.3g", lo);
    text_at(V.font, x, l->bar.y + ch / 2, b, WHITE);
}

/* Two series as heights 0..1 (n points, log decades lo..hi) in the plot's
 * rectangle, with their names below it under a caption. */
static void draw_series(const ViewLayout *l, const float *ya, const float *yb, int n, int lo, int hi,
                        const char *caption, const char *name_a, const float ca[3], const char *name_b,
                        const float cb[3])
{
    static float rg[2 * VIEWMODEL_PLOT_N];
    if (n > VIEWMODEL_PLOT_N) n = VIEWMODEL_PLOT_N;
    for (int k = 0; k < VIEWMODEL_PLOT_N; k++) {
        rg[2 * k] = k < n ? ya[k] : 0.0f;
        rg[2 * k + 1] = k < n ? yb[k] : 0.0f;
    }
    field_upload(V.plot_tex, rg);
    ViewRect r = l->plot;
    shader_use(V.hud);
    shader_set_int(V.hud, "u_mode", 2);
    shader_set_vec4(V.hud, "u_rect", (float)r.x, (float)r.y, (float)r.w, (float)r.h);
    shader_set_vec3(V.hud, "u_color", ca[0], ca[1], ca[2]);
    shader_set_vec3(V.hud, "u_color2", cb[0], cb[1], cb[2]);
    shader_set_texture(V.hud, "u_plot", 0, field_texture(V.plot_tex));
    shader_set_int(V.hud, "u_n", n);
    shader_set_int(V.hud, "u_decades", hi - lo);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    pass_draw_screen(r.x, r.y, r.w, r.h);
    glDisable(GL_BLEND);
    if (!V.font) return;
    int ch = text_cell_h(V.font);
    char b[32];
    snprintf(b, sizeof b, "1e%d", hi);
    text_at(V.font, r.x + 4, r.y + r.h - 2, b, GREY);
    snprintf(b, sizeof b, "1e%d", lo);
    text_at(V.font, r.x + 4, r.y + ch + 2, b, GREY);
    text_at(V.font, r.x, r.y + r.h + 2 * ch + 4, caption, WHITE);
    text_at(V.font, r.x, r.y + r.h + ch + 4, name_a, ca);
    text_at(V.font, r.x + (text_columns(name_a) + 2) * text_cell_w(V.font), r.y + r.h + ch + 4, name_b, cb);
}

static void draw_plot(const ViewLayout *l)
{
    static float ye[VIEWMODEL_PLOT_N], yd[VIEWMODEL_PLOT_N];
    int lo, hi, n = viewmodel_plot_points(&V.plot, ye, yd, &lo, &hi);
    draw_series(l, ye, yd, n, lo, hi, "log plot over the steps:", "error", ERR_COLOR,
                "max|\xe2\x88\x87\xc2\xb7u|", DIV_COLOR);
}

/* Pass by pass: the residual of the solve under way (the pressure's, or the
 * deficit potential's) after each of its V-cycles and Jacobi iterations so
 * far this step, max and RMS of |∇²x − b| on one log scale. */
static void draw_residual_plot(const ViewLayout *l)
{
    const PassbypassSeries *sr = V.pass_potential ? &V.pass_plot.potential : &V.pass_plot.pressure;
    static float ya[VIEWMODEL_PLOT_N], yb[VIEWMODEL_PLOT_N];
    int lo, hi, n = sr->n < VIEWMODEL_PLOT_N ? sr->n : VIEWMODEL_PLOT_N;
    viewmodel_log_heights(sr->max, sr->rms, n, ya, yb, &lo, &hi);
    V.shown.residual_points = n;
    draw_series(l, ya, yb, n, lo, hi,
                V.pass_potential ? "potential solve, residual a pass:" : "pressure solve, residual a pass:",
                "max", ERR_COLOR, "rms", DIV_COLOR);
}

static void draw_hud(const ViewLayout *l)
{
    draw_panel(l->hud, 0.72f);
    V.shown.nhud = viewmodel_hud_lines(&V.mt, morph_params(V.m), V.sel, V.shown.hud, VIEWMODEL_HUD_LINES);
    V.shown.metrics = V.mt;
    ViewLayout pl = *l;
    if (V.font) {
        int ch = text_cell_h(V.font);
        for (int k = 0; k < V.shown.nhud; k++) {
            bool sel = k == viewmodel_hud_param_line(V.sel);
            text_at(V.font, 12, V.win_h - 12 - k * ch, V.shown.hud[k], sel ? YELLOW : WHITE);
        }
        /* the plot and its two caption lines stay below the text: a short
         * window (under ~550 pixels) shrinks the plot, or leaves it out when
         * its two scale labels would not fit */
        int room = V.win_h - 12 - V.shown.nhud * ch - (2 * ch + 8) - pl.plot.y;
        if (room < pl.plot.h) pl.plot.h = room;
        if (pl.plot.h < 2 * ch + 4) return;
    }
    if (V.pass_shown) draw_residual_plot(&pl); /* pass by pass: the solve's residual instead */
    else draw_plot(&pl);
}

static void draw_help(const ViewLayout *l)
{
    const char *const *lines;
    int n = viewmodel_help_lines(&lines);
    if (!V.font) return;
    int ch = text_cell_h(V.font), cw = text_cell_w(V.font), w = 0;
    for (int k = 0; k < n; k++)
        if (text_columns(lines[k]) > w) w = text_columns(lines[k]);
    ViewRect r = {l->area.x + (l->area.w - (w + 2) * cw) / 2, l->area.y + (l->area.h - (n + 1) * ch) / 2,
                  (w + 2) * cw, (n + 1) * ch};
    draw_panel(r, 0.85f);
    text_draw(V.font, r.x + cw, r.y + r.h - ch / 2, lines, n, WHITE);
}

static void draw(void)
{
    int gw = morph_width(V.m), gh = morph_height(V.m);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, V.win_w, V.win_h);
    glClearColor(0.08f, 0.08f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ViewLayout l;
    layout(&l);
    V.shown.overlay = l.overlay;
    V.shown.view = V.view;
    V.shown.range = V.vf.range;
    V.shown.text = V.font != NULL;
    V.shown.selected = V.sel;
    V.shown.params = *morph_params(V.m);
    V.shown.residual_points = 0;
    V.shown.nfields = V.nf;
    V.shown.field = V.view == VIEW_DENSITY ? V.field : -1;
    view_label(V.shown.title, sizeof V.shown.title, false);
    bool density = V.view <= VIEW_BLURRED || V.view == VIEW_FIG2;
    if (V.o.compare) {
        draw_compare();
        return;
    } else if (V.pass_shown) { /* the pass's field, named, with the solve's residuals */
        snprintf(V.shown.title, sizeof V.shown.title, "%s", V.pass_line);
        draw_field(MODE_IMAGE, V.pass_tex, l.field, false);
        if (!l.overlay) return;
        text_at(V.font, l.title.x, l.title.y + l.title.h - 4, V.pass_line, WHITE);
        if (V.hud_on) draw_hud(&l);
        if (V.help_on) draw_help(&l);
        return;
    } else if (V.view == VIEW_FIG2) {
        /* seed 003 Fig. 2: the morph above, start and target small below; in
         * a sequence the start and every key in order, the active key marked */
        int np = V.key_tex ? V.nkeys + 1 : 2;
        ViewRect mr, *pr = V.panels;
        viewmodel_fig2(l.area.w, l.area.h, gw, gh, np, &mr, pr);
        mr.x += l.area.x, mr.y += l.area.y;
        for (int k = 0; k < np; k++) pr[k].x += l.area.x, pr[k].y += l.area.y;
        draw_field(density_mode(), NULL, mr, false);
        draw_field(MODE_IMAGE, V.start_tex, pr[0], false);
        if (!V.key_tex) {
            draw_field(MODE_TARGET, NULL, pr[1], false);
        } else {
            const ViewRect *a = &pr[morph_key(V.m)];
            glEnable(GL_SCISSOR_TEST);
            glScissor(a->x - VIEWMODEL_MARK, a->y - VIEWMODEL_MARK, a->w + 2 * VIEWMODEL_MARK,
                      a->h + 2 * VIEWMODEL_MARK);
            glClearColor(MARK_COLOR, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            glDisable(GL_SCISSOR_TEST);
            for (int k = 1; k <= V.nkeys; k++) draw_field(MODE_IMAGE, V.key_tex[k - 1], pr[k], false);
        }
    } else if (density) {
        /* modes 0-2 are the views 0-2; several fields' density: the composite */
        draw_field(V.view == VIEW_DENSITY ? density_mode() : V.view, NULL, l.field, false);
    } else if (V.view == VIEW_VELOCITY) {
        draw_field(density_mode(), NULL, l.field, true);
    } else if (V.vf_ok) {
        draw_field(MODE_MAPPED, V.scalar, l.field, V.view == VIEW_FORCE);
        if (V.view == VIEW_DIVERGENCE) draw_field(MODE_MAPPED, V.scalar2, l.field2, false);
    }
    if (!l.overlay) return;
    if (V.view != VIEW_FIG2) draw_bar(&l, density);
    text_at(V.big, l.title.x, l.title.y + l.title.h - 4, V.shown.title, WHITE);
    if (V.view == VIEW_DIVERGENCE && V.vf_ok && V.font) {
        char b[64];
        int ch = text_cell_h(V.font);
        snprintf(b, sizeof b, "before: max %.3g", V.vf.max1); /* above each panel */
        text_at(V.font, l.field.x, l.field.y + l.field.h + ch + 2, b, WHITE);
        snprintf(b, sizeof b, "after: max %.3g", V.vf.max2);
        text_at(V.font, l.field2.x, l.field2.y + l.field2.h + ch + 2, b, WHITE);
    }
    if (V.hud_on) draw_hud(&l);
    if (V.help_on) draw_help(&l);
}

/* Ends view_run's loop (the window stays open: freeglut's own main loop
 * would destroy it on the way out, and tests run several views in one). */
static void quit(int rc)
{
    V.rc = rc;
    V.running = false;
}

static void on_close(void) { quit(0); }

/* The title bar's view name: ASCII (X11 titles are Latin-1). */
static const char *title_name(void)
{
    static char b[96];
    view_label(b, sizeof b, true);
    return b;
}

/* Error (and mass, max|∇·u|) of every field: morph_observe_fields's sums. */
static int observe(double *mass, double *error, double *max_div)
{
    if (V.nf > 1) return morph_observe_fields(V.f, V.nf, NULL, NULL, mass, error, max_div);
    return morph_observe(V.m, NULL, mass, error, max_div);
}

static void update_title(bool force)
{
    double now = export_now();
    if (!force && now - V.last_title < 1.0) return;
    long steps = morph_step_count(V.m);
    if (now > V.last_title) V.rate = (double)(V.taken - V.last_title_steps) / (now - V.last_title);
    V.last_title = now;
    V.last_title_steps = V.taken;
    if (observe(NULL, &V.error, NULL) < 0) { /* one read-back a second (a field) */
        log_error("view", "cannot read the density back from the GPU");
        quit(1);
        return;
    }
    /* a sequence (issue 9): the active key and the steps to the next */
    char key[96];
    viewmodel_key_label(V.m, key, sizeof key);
    char title[1100], extra[256] = ""; /* room for every part whole (gcc -O1 checks) */
    title_extra(extra, sizeof extra);
    snprintf(title, sizeof title, "smokemorph  step %ld%s  %.0f steps/s  error %.3f  [%s]%s  (h: keys)",
             steps, key, V.rate, V.error, extra[0] ? extra : title_name(), V.paused ? "  paused" : "");
    glutSetWindowTitle(title);
}

/* The HUD's numbers (one read-back) and a point of the plot. */
static int refresh_metrics(void)
{
    ViewMetrics *mt = &V.mt;
    mt->step = morph_step_count(V.m);
    mt->time = morph_time(V.m);
    mt->key = morph_key(V.m);
    mt->nkeys = morph_key_count(V.m);
    mt->to_next = morph_has_schedule(V.m) && mt->key < mt->nkeys ? morph_key_step(V.m, mt->key) - mt->step : -1;
    mt->rate = V.rate;
    mt->paused = V.paused;
    mt->nfields = V.nf;
    if (observe(&mt->mass, &mt->error, &mt->max_div) < 0) return -1;
    viewmodel_plot_add(&V.plot, mt->step, mt->error, mt->max_div);
    V.mt_time = export_now();
    return 0;
}

/* The computed view's field: the state read back, viewfield, the upload. */
static int refresh_field(void)
{
    char err[256];
    /* a step begun pass by pass: reading the state back would run the
     * step's remaining passes; the pass's own field is what is shown */
    for (int f = 0; f < V.nf; f++)
        if (V.f[f] && morph_pass_active(V.f[f])) return 0;
    V.vf_dirty = false;
    V.vf_time = export_now();
    if (!viewfield_computed(V.view)) return 0;
    if (morph_get_state(V.m, &V.st) < 0) return -1;
    viewfield_free(&V.vf);
    V.vf_ok = false;
    if (viewfield_compute(V.view, &V.st.solver, morph_params(V.m), morph_width(V.m), morph_height(V.m), &V.vf,
                          err, sizeof err) < 0) {
        log_error("view", "%s", err);
        return -1;
    }
    if (field_upload(V.scalar, V.vf.scalar) < 0) return -1;
    if (V.vf.scalar2 && field_upload(V.scalar2, V.vf.scalar2) < 0) return -1;
    if (V.vf.vec && field_upload(V.vec, V.vf.vec) < 0) return -1;
    V.vf_ok = true;
    return 0;
}

/* Next (dir > 0) or previous key of a sequence: 0, or -1 on a GL error. */
static int jump_key(int dir)
{
    if (refuse_fields(dir > 0 ? "the next key (n)" : "the previous key (p)")) return 0;
    int k = viewmodel_jump_key(V.m, dir);
    if (k == 0) {
        if (morph_has_schedule(V.m))
            log_info("view", "key %d is the last: no next key", morph_key(V.m));
        else
            log_info("view", "one target: no keys to jump to");
        return 0;
    }
    if (morph_goto_key(V.m, k) < 0) return -1;
    log_info("view", "key %d/%d from step %ld", k, morph_key_count(V.m), morph_step_count(V.m));
    return 0;
}

/* Restart: back to the start image, zero velocity, key 1, step 0 (every
 * field). */
static int restart(void)
{
    V.pass_shown = false;
    if (V.o.compare && morph_reset(compare_morph(V.o.compare, 1)) < 0) return -1;
    for (int i = 1; i < V.nf; i++)
        if (morph_reset(V.f[i]) < 0) return -1;
    return morph_reset(V.m) < 0 || upload_start() < 0 ? -1 : 0;
}

/* Field 0's parameters changed from p0 to p: every other field's member k
 * (METHOD_P_*, -1: vf times vf/vf0) gets the same change (dt, vd and umax
 * must agree for morph_step_fields; the others are each field's). */
static int params_to_fields(const SolverParams *p, int what)
{
    for (int i = 1; i < V.nf; i++) {
        SolverParams q = *morph_params(V.f[i]);
        if (what == 'v') q.vf = p->vf > morph_params(V.m)->vf ? q.vf * 1.25f : q.vf / 1.25f;
        else if (what == 'g') q.gather = p->gather;
        else if (viewmodel_param_adjust(&q, V.sel, what) < 0) continue; /* at its end: stays */
        if (morph_set_params(V.f[i], &q) < 0) return -1;
    }
    return 0;
}

/* The selected parameter one step up or down (refused at its range's end). */
static int adjust(int dir)
{
    SolverParams p = *morph_params(V.m);
    char v[32];
    if (viewmodel_param_adjust(&p, V.sel, dir) < 0) {
        viewmodel_param_value(&p, V.sel, v, sizeof v);
        log_info("view", "%s stays %s (the end of its range)", viewmodel_param_label(V.sel), v);
        return 0;
    }
    viewmodel_param_value(&p, V.sel, v, sizeof v);
    log_info("view", "%s = %s%s", viewmodel_param_label(V.sel), v, V.nf > 1 ? " (field 1; every field changed alike)" : "");
    return params_to_fields(&p, dir) < 0 ? -1 : morph_set_params(V.m, &p);
}

static void select_param(int d) { V.sel = (V.sel + d + VIEWMODEL_NPARAMS) % VIEWMODEL_NPARAMS; }

static void toggle_fullscreen(void) { glutFullScreenToggle(); }

/* After a key: redraw, the title and the HUD's numbers now. */
static void after_key(int rc, const char *what)
{
    if (rc < 0) { /* the GPU refused new fields: nothing sensible left to show */
        log_error("view", "cannot apply %s on the GPU", what);
        quit(1);
        return;
    }
    V.vf_dirty = true;
    update_title(true);
    if (refresh_metrics() < 0) {
        log_error("view", "cannot read the metrics back");
        quit(1);
        return;
    }
    glutPostRedisplay();
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
    case 'r': rc = restart(); break;
    case 'n': rc = jump_key(+1); break;
    case 'p': rc = jump_key(-1); break;
    case 't':
        if (refuse_fields("swap (t)")) break;
        rc = morph_swap(V.m) < 0 || upload_start() < 0 ? -1 : 0;
        break;
    case ']':
    case '[':
        p.vf = k == ']' ? p.vf * 1.25f : p.vf / 1.25f;
        rc = params_to_fields(&p, 'v') < 0 ? -1 : morph_set_params(V.m, &p);
        log_info("view", "driving force vf = %g%s", p.vf, V.nf > 1 ? " (field 1; every field changed alike)" : "");
        break;
    case 'g':
        p.gather = !p.gather;
        rc = params_to_fields(&p, 'g') < 0 ? -1 : morph_set_params(V.m, &p);
        log_info("view", "gathering %s", p.gather ? "on" : "off");
        break;
    case 'v': set_slot(slot_of_view() + 1); break;
    case 'V': set_slot(slot_of_view() - 1); break;
    case '\t': select_param(+1); break;
    case '+': case '=': rc = adjust(+1); break;
    case '-': case '_': rc = adjust(-1); break;
    case 'i': V.hud_on = !V.hud_on; break;
    case 'c': V.shot_key = true; break;
    case 'f': toggle_fullscreen(); break;
    case 'h': V.help_on = !V.help_on; print_keys(); break;
    case '.': rc = pass_next(); break;
    case 'R': record_toggle(); break;
    case 'q': case 27: quit(0); return;
    default: return;
    }
    char what[32];
    snprintf(what, sizeof what, "the '%c' key", k);
    after_key(rc, what);
}

/* PageDown / PageUp: next / previous key; Home: restart; up / down: select
 * a parameter, right / left: change it; F11: fullscreen. */
static void special(int k, int x, int y)
{
    (void)x;
    (void)y;
    int rc = 0;
    switch (k) {
    case GLUT_KEY_PAGE_DOWN: rc = jump_key(+1); break;
    case GLUT_KEY_PAGE_UP: rc = jump_key(-1); break;
    case GLUT_KEY_HOME: rc = restart(); break;
    case GLUT_KEY_UP: select_param(-1); break;
    case GLUT_KEY_DOWN: select_param(+1); break;
    case GLUT_KEY_RIGHT: rc = adjust(+1); break;
    case GLUT_KEY_LEFT: rc = adjust(-1); break;
    case GLUT_KEY_F11: toggle_fullscreen(); break;
    default: return;
    }
    after_key(rc, "the key");
}

/* Window pixel (x, y from the top) in cells of the field's rectangle. */
static void to_cells(int x, int y, float *cx, float *cy, float *sx, float *sy)
{
    int gw = morph_width(V.m), gh = morph_height(V.m);
    ViewLayout l;
    layout(&l);
    ViewRect r = l.field;
    *sx = (float)gw / (float)r.w;
    *sy = (float)gh / (float)r.h;
    *cx = (float)(x - r.x) * *sx; /* cells, row 0 at the top */
    *cy = (float)(y - (V.win_h - r.y - r.h)) * *sy;
}

/* Add or erase smoke under the pointer: a Gaussian of 0.03 domain units. */
static void splat(int x, int y)
{
    float cx, cy, sx, sy;
    to_cells(x, y, &cx, &cy, &sx, &sy);
    int gw = morph_width(V.m), gh = morph_height(V.m);
    float cell = 1.0f / (float)(gw < gh ? gw : gh);
    if (morph_splat_density(shown_morph(), cx, cy, V.drag == DRAG_ADD ? 0.25f : -0.25f, 0.03f / cell) < 0) {
        log_error("view", "cannot add or erase smoke on the GPU");
        quit(1);
        return;
    }
    V.vf_dirty = true;
    V.mt.step = -1; /* the HUD's mass changed, at the same step (paused too) */
}

static void mouse(int button, int state, int x, int y)
{
    ViewLayout l;
    layout(&l);
    if (state == GLUT_DOWN && (button == 3 || button == 4)) { /* the wheel */
        after_key(adjust(button == 3 ? +1 : -1), "the wheel");
        return;
    }
    if (state == GLUT_DOWN && l.overlay && V.hud_on && x < l.hud.w && V.font) {
        int i = viewmodel_hud_param_at(y, 12, text_cell_h(V.font));
        if (i >= 0) V.sel = i;
        glutPostRedisplay();
        return;
    }
    if (state != GLUT_DOWN) {
        V.drag = DRAG_NONE;
        return;
    }
    bool shift = glutGetModifiers() & GLUT_ACTIVE_SHIFT;
    V.drag = button == GLUT_LEFT_BUTTON ? (shift ? DRAG_ERASE : DRAG_STIR)
             : button == GLUT_RIGHT_BUTTON ? DRAG_ADD
             : button == GLUT_MIDDLE_BUTTON ? DRAG_ERASE : DRAG_NONE;
    V.mx = x;
    V.my = y;
    if (V.view == VIEW_FIG2) V.drag = DRAG_NONE;
    if (V.drag == DRAG_ADD || V.drag == DRAG_ERASE) splat(x, y);
}

/* A drag stirs (adds the mouse's velocity around the pointer), or adds or
 * erases smoke along its path. */
static void motion(int x, int y)
{
    if (V.drag == DRAG_NONE || V.view == VIEW_FIG2) return;
    if (V.drag != DRAG_STIR) {
        splat(x, y);
        V.mx = x;
        V.my = y;
        return;
    }
    int gw = morph_width(V.m), gh = morph_height(V.m);
    float cx, cy, sx, sy;
    to_cells(x, y, &cx, &cy, &sx, &sy);
    float dx = (float)(x - V.mx) * sx, dy = (float)(y - V.my) * sy;
    const SolverParams *p = morph_params(V.m);
    float cell = 1.0f / (float)(gw < gh ? gw : gh);
    float k = cell / (p->dt * (float)V.o.steps_per_frame); /* cells per frame -> domain/time */
    morph_stir(V.m, cx, cy, dx * k, dy * k, 0.03f / cell);
    V.vf_dirty = true;
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

/* ---- the recording (issue 24): what the window shows, a video frame a
 * displayed frame, through export.h's ffmpeg pipe ------------------------------ */

/* Start recording to path (NULL: the first free smokemorph-recording-N.mp4
 * here). 0, or -1 after one line on stderr (nothing left behind). */
static int record_start(const char *path)
{
    char err[1024], name[64];
    if (!path) {
        for (int k = 1; k < 10000; k++) {
            snprintf(name, sizeof name, "smokemorph-recording-%d.mp4", k);
            if (access(name, F_OK) != 0) break;
        }
        path = name;
    }
    const char *in = guard_input_of(path);
    if (in) {
        log_error("view", "cannot record to %s: it is an input of this run (%s)", path, in);
        return -1;
    }
    free(V.rec_buf);
    if (!(V.rec_buf = malloc((size_t)V.win_w * V.win_h * 6))) { /* the frame, and GL's rows */
        log_error("view", "cannot record to %s: out of memory", path);
        return -1;
    }
    double fps = V.o.fps > 0.0 ? V.o.fps : 24.0;
    if (!(V.rec = export_video_open(path, V.win_w, V.win_h, fps, err, sizeof err))) {
        log_error("view", "%s", err);
        return -1;
    }
    snprintf(V.rec_path, sizeof V.rec_path, "%s", path);
    V.rec_w = V.win_w;
    V.rec_h = V.win_h;
    V.rec_next = export_now();
    log_info("view", "recording %dx%d at %g frames/s to %s ('R' stops)", V.rec_w, V.rec_h, fps, path);
    return 0;
}

/* Stop: the video finished and renamed into place. 0, or -1 after one line
 * (no file left). */
static int record_stop(void)
{
    if (!V.rec) return 0;
    char err[1024];
    long n = export_video_frames(V.rec);
    int rc = export_finish(V.rec, err, sizeof err);
    export_close(V.rec);
    V.rec = NULL;
    if (rc < 0) {
        log_error("view", "%s", err);
        return -1;
    }
    log_info("view", "recorded %ld frames to %s", n, V.rec_path);
    return 0;
}

/* The window's back buffer (as drawn, before the swap) down the pipe. A
 * window that changed size ends the recording (a video keeps one size). */
static int record_frame(void)
{
    if (!V.rec) return 0;
    if (V.win_w != V.rec_w || V.win_h != V.rec_h) {
        log_info("view", "the window changed size (%dx%d to %dx%d): the recording ends; 'R' starts a new one",
                 V.rec_w, V.rec_h, V.win_w, V.win_h);
        return record_stop();
    }
    char err[1024];
    int w = V.rec_w, h = V.rec_h;
    size_t row = (size_t)w * 3;
    unsigned char *gl = V.rec_buf + row * h; /* GL's rows, bottom first */
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, gl);
    for (int j = 0; j < h; j++) memcpy(V.rec_buf + row * j, gl + row * (h - 1 - j), row); /* top first */
    err[0] = '\0';
    if (gl_check("view", "reading the window back for the recording") < 0 ||
        export_video_rgb(V.rec, V.rec_buf, err, sizeof err) < 0) {
        if (!V.rec) return -1;
        log_error("view", "%s", err[0] ? err : "the recording failed");
        export_close(V.rec); /* nothing left behind */
        V.rec = NULL;
        return -1;
    }
    /* a steady rate: while recording the window shows at most fps frames a
     * second, so a video frame is 1/fps of the lesson (slower machines give
     * every frame still, the video then quicker than life) */
    double now = export_now(), fps = V.o.fps > 0.0 ? V.o.fps : 24.0;
    if (V.rec_next > now) {
        struct timespec ts = {(time_t)(V.rec_next - now), (long)(fmod(V.rec_next - now, 1.0) * 1e9)};
        nanosleep(&ts, NULL);
    } else if (now - V.rec_next > 1.0 / fps) {
        V.rec_next = now;
    }
    V.rec_next += 1.0 / fps;
    return 0;
}

/* 'R': start or stop a recording. */
static void record_toggle(void)
{
    if (V.rec) record_stop();
    else record_start(V.o.record);
}

static void display(void)
{
    if (V.keys && *V.keys) key((unsigned char)*V.keys++, 0, 0);
    if (V.rc) return; /* a key failed */
    if (!V.paused || V.single) {
        int n = V.single ? 1 : V.o.steps_per_frame;
        for (int k = 0; k < n; k++) {
            if (V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps) break;
            if (step_once() < 0) {
                log_error("view", "a GL error in the simulation step");
                quit(1);
                return;
            }
            V.taken++;
            V.vf_dirty = true;
        }
        V.single = false;
    }
    bool done = V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps &&
                (!V.keys || !*V.keys);
    double now = export_now();
    bool settled = done || V.paused;
    if (V.mt.step != morph_step_count(V.m) && (settled || now - V.mt_time >= REFRESH_S) &&
        refresh_metrics() < 0) {
        log_error("view", "cannot read the metrics back");
        quit(1);
        return;
    }
    if (V.vf_dirty && (settled || now - V.vf_time >= REFRESH_S || !V.vf_ok) && refresh_field() < 0) {
        log_error("view", "cannot read the %s view's fields back", viewfield_name(V.view));
        quit(1);
        return;
    }
    draw();
    if (done && V.o.screenshot) {
        if (save_screenshot(V.o.screenshot) < 0) {
            quit(1);
            return;
        }
    }
    if (V.rec && record_frame() < 0 && V.o.record) {
        quit(1); /* --record's video could not be made */
        return;
    }
    if (V.shot_key) {
        char path[96];
        snprintf(path, sizeof path, "smokemorph-%s-%06ld.png", viewfield_name(V.view), morph_step_count(V.m));
        V.shot_key = false;
        if (save_screenshot(path) == 0) log_info("view", "saved %s", path);
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

static int alloc_state(void)
{
    size_t n = (size_t)morph_width(V.m) * morph_height(V.m);
    for (int k = 0; k < METHOD_FIELD_COUNT; k++)
        if (!(V.st.solver.field[k] = malloc(n * sizeof(float)))) return -1;
    if (!(V.st.start = malloc(n * sizeof(float))) || !(V.st.target = malloc(n * sizeof(float)))) return -1;
    return 0;
}

static void free_state(void)
{
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) free(V.st.solver.field[k]);
    free(V.st.start);
    free(V.st.target);
}

int view_run(GlCtx *ctx, Morph *m, const ViewOptions *o)
{
    char err[512];
    (void)ctx;
    memset(&V, 0, sizeof V);
    V.m = m;
    V.o = *o;
    V.f[0] = m;
    V.nf = 1;
    V.field = -1;
    V.scale = o->density_scale > 0.0f ? o->density_scale : 1.0f;
    if (o->fields && o->nfields > 1) {
        if (o->nfields > MORPH_MAX_FIELDS || o->fields[0] != m || o->compare) {
            log_error("view", "the window shows 1..%d fields, the first the morph given, and not with a compare",
                      MORPH_MAX_FIELDS);
            return 1;
        }
        V.nf = o->nfields;
        for (int i = 1; i < V.nf; i++) V.f[i] = o->fields[i];
    }
    if (V.o.steps_per_frame < 1) V.o.steps_per_frame = 1;
    V.keys = o->keys;
    V.view = o->view >= 0 && o->view < VIEW_COUNT ? o->view : VIEW_DENSITY;
    V.hud_on = !o->no_hud;
    V.mt.step = -1;
    V.vf_dirty = true;
    bool gpu = true;
    for (int i = 0; i < V.nf; i++) gpu = gpu && morph_density_texture(V.f[i]);
    if (!gpu) {
        log_error("view", "the window needs a GPU backend (--backend fragment or compute), not %s",
                  morph_backend_name(morph_backend(m)));
        return 1;
    }
    int w = morph_width(m), h = morph_height(m), rc = 1;
    if (!(V.display = shader_load(o->shader_dir, "display.glsl", err, sizeof err)) ||
        !(V.hud = shader_load(o->shader_dir, "hud.glsl", err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        goto free_shaders;
    }
    /* text: without the font the window runs, unlabelled (docs/MANUAL.md: the views) */
    if (!(V.font = text_create(o->font, TEXT_PX, o->shader_dir, err, sizeof err)) ||
        !(V.big = text_create(o->font, TITLE_PX, o->shader_dir, err, sizeof err))) {
        log_error("view", "%s; the window runs without text", err);
        text_free(V.font);
        V.font = NULL;
    }
    if (!(V.start_tex = field_create(w, h, 1, err, sizeof err)) ||
        !(V.scalar = field_create(w, h, 1, err, sizeof err)) ||
        !(V.scalar2 = field_create(w, h, 1, err, sizeof err)) || !(V.vec = field_create(w, h, 2, err, sizeof err)) ||
        !(V.plot_tex = field_create(VIEWMODEL_PLOT_N, 1, 2, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        goto free_fields;
    }
    if (alloc_state() < 0) {
        log_error("view", "out of memory for the state of a %dx%d grid", w, h);
        goto free_keys;
    }
    /* a sequence: each key's image for the Fig. 2 layout */
    int nk = morph_has_schedule(m) && morph_key_count(m) > 1 ? morph_key_count(m) : 0;
    if (!(V.panels = calloc((size_t)nk + 2, sizeof *V.panels)) ||
        (nk && !(V.key_tex = calloc((size_t)nk, sizeof *V.key_tex)))) {
        log_error("view", "out of memory for %d keys", nk);
        goto free_keys;
    }
    for (V.nkeys = 0; V.nkeys < nk; V.nkeys++)
        if (!(V.key_tex[V.nkeys] = field_create(w, h, 1, err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            goto free_keys;
        }
    if (upload_start() < 0) {
        log_error("view", "cannot upload the start and key images to the GPU");
        goto free_keys;
    }
    V.win_w = glutGet(GLUT_WINDOW_WIDTH);
    V.win_h = glutGet(GLUT_WINDOW_HEIGHT);
    glutSetOption(GLUT_ACTION_ON_WINDOW_CLOSE, GLUT_ACTION_GLUTMAINLOOP_RETURNS);
    glutDisplayFunc(display);
    glutReshapeFunc(reshape);
    glutKeyboardFunc(key);
    glutSpecialFunc(special);
    glutMouseFunc(mouse);
    glutMotionFunc(motion);
    glutCloseFunc(on_close);
    V.last_title = export_now();
    if (V.o.verbose_keys) print_keys();
    if (o->lesson) {
        log_error("view", "--lesson %s: lessons are not in this build yet", o->lesson);
        goto free_keys;
    }
    if (o->record && record_start(o->record) < 0) goto free_keys;
    /* the loop: events, then a frame each time round (as an idle function
     * that posts a redisplay would) until quit or the window closes */
    V.running = true;
    while (V.running) {
        glutPostRedisplay();
        glutMainLoopEvent();
    }
    rc = V.rc;
    if (record_stop() < 0 && V.o.record) rc = 1;
free_keys:
    if (V.rec) export_close(V.rec); /* not finished: no file left */
    V.rec = NULL;
    free(V.rec_buf);
    field_free(V.pass_tex);
    for (int k = 0; V.key_tex && k < V.nkeys; k++) field_free(V.key_tex[k]);
    free(V.key_tex);
    free(V.panels);
    free_state();
free_fields:
    viewfield_free(&V.vf);
    field_free(V.plot_tex);
    field_free(V.vec);
    field_free(V.scalar2);
    field_free(V.scalar);
    field_free(V.start_tex);
    text_free(V.big);
    text_free(V.font);
free_shaders:
    shader_free(V.hud);
    shader_free(V.display);
    return rc;
}

/* ---- issue 11: pass by pass and compare (GL-free logic in passbypass.c and
 * compare.c; these hooks only draw what those say) ---------------------------- */

/* One step of the window: both runs when comparing. A step begun pass by
 * pass is finished by it (morph_step). */
static int step_once(void)
{
    V.pass_shown = false;
    return V.o.compare ? compare_step(V.o.compare) : V.nf > 1 ? morph_step_fields(V.f, V.nf) : morph_step(V.m);
}

/* The '.' key: pause, run the next pass of the step, show the field it
 * wrote (mapped to 0..1, passbypass_normalize) and name it in the title;
 * the residual of the pressure or potential solve goes to the log and the
 * plot's series (V.plot, for the HUD's log plot). */
static int pass_next(void)
{
    int gw = morph_width(V.m), gh = morph_height(V.m);
    size_t n = (size_t)gw * gh;
    char err[256];
    if (V.o.compare) {
        log_info("view", "pass by pass shows one run: leave out --compare");
        return 0;
    }
    V.paused = true;
    if (!V.pass_tex && !(V.pass_tex = field_create(gw, gh, 1, err, sizeof err))) {
        log_error("view", "%s", err);
        return -1;
    }
    MorphPassInfo pi;
    float *buf = malloc(3 * n * sizeof *buf);
    int rc = -1, fi = 0;
    /* several fields: the passes of morph_step_fields, each on its field */
    if (!buf || morph_pass_next_fields(V.f, V.nf, &pi, &fi) < 0 ||
        morph_pass_read(V.f[fi], pi.out, buf, buf + n) < 0)
        goto done;
    double lo, hi;
    passbypass_normalize(pi.out, buf, buf + n, n, buf + 2 * n, &lo, &hi);
    if (field_upload(V.pass_tex, buf + 2 * n) < 0) goto done;
    passbypass_label(&pi, V.pass_line, sizeof V.pass_line);
    if (V.nf > 1) { /* name the field the pass ran on */
        size_t len = strlen(V.pass_line);
        snprintf(V.pass_line + len, sizeof V.pass_line - len, "  (field %d/%d: %s)", fi + 1, V.nf, field_label(fi));
    }
    char res[64] = "";
    if (passbypass_record(&V.pass_plot, V.f[fi], &pi) > 0) {
        V.pass_potential = pi.pass < METHOD_PASS_DIVERGENCE;
        const PassbypassSeries *sr = V.pass_potential ? &V.pass_plot.potential : &V.pass_plot.pressure;
        snprintf(res, sizeof res, "  residual %.3g", sr->max[sr->n - 1]);
    }
    log_info("view", "%s  [%.3g, %.3g]%s", V.pass_line, lo, hi, res);
    V.pass_shown = true;
    if (pi.last) V.taken++;
    rc = 0;
done:
    free(buf);
    return rc;
}

/* The split screen: A's density left, B's right, each below its label's
 * strip (compare_split; the labels are in the title until the view draws
 * text: write compare_label(V.o.compare, s) into split.label[s] there). */
static void draw_compare(void)
{
    CompareSplit sp;
    compare_split(V.win_w, V.win_h, morph_width(V.m), morph_height(V.m), COMPARE_LABEL_H, &sp);
    Morph *a = V.m;
    for (int s = 0; s < 2; s++) {
        V.m = compare_morph(V.o.compare, s);
        const int *r = sp.field[s], *t = sp.label[s];
        draw_field(MODE_DENSITY, NULL, (ViewRect){r[0], r[1], r[2], r[3]}, false);
        if (V.font) text_at(V.font, t[0] + 4, t[1] + t[3] - 6, compare_label(V.o.compare, s), WHITE);
    }
    V.m = a;
}

/* What the title says in place of the view's name: the pass shown, or the
 * two runs compared with B's error. */
static void title_extra(char *buf, size_t n)
{
    if (V.pass_shown) {
        snprintf(buf, n, "%s", V.pass_line);
    } else if (V.o.compare) {
        double eb = 0.0;
        morph_observe(compare_morph(V.o.compare, 1), NULL, NULL, &eb, NULL);
        snprintf(buf, n, "%s | %s, error %.3f", compare_label(V.o.compare, 0), compare_label(V.o.compare, 1), eb);
    }
}
