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
#include "lesson.h"
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
    double rate;
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
    MorphPassInfo pass_pi;    /* the last pass run */
    /* issue 24: text that follows the window (the fonts' size, Ctrl +/-) */
    int zoom, font_px;
    bool font_failed;
    /* pass by pass: the pass's field's colour range, its step and place,
     * what it does */
    ViewRange pass_range;
    long pass_step;
    int pass_index, pass_total;
    char pass_explain[256];
    /* compare: B's computed view (A's is vf, scalar, ...) and metrics */
    ViewField vfb;
    Field *scalarb, *scalar2b, *vecb;
    bool vfb_ok;
    ViewMetrics mtb;
    long mt_at; /* the step count the metrics were read at */
    /* a lesson (lesson.h): its step shown, its caption across the bottom,
     * the step count to pause at, the passes to run then; a step comparing
     * two runs replaces the morph given (base) by its own Compare's A */
    const Lesson *lesson;
    Lesson *lesson_own; /* the lesson read here (not ViewOptions' lesson_ready) */
    SolverParams lesson_start; /* the run's parameters when the lesson began */
    int lstep;
    char caption[VIEW_CAPTION_MAX];
    long run_to;
    int lesson_passes, lesson_to_pass;
    Morph *base;
    Compare *own_cmp;
    /* issue 24: the recording (--record, 'R'): the video, its name, its size */
    Exporter *rec;
    char rec_path[4300];
    int rec_w, rec_h;
    double rec_next;          /* when the next frame may show (export_now's clock) */
    int rec_count;            /* recordings finished in this window */
    unsigned char *rec_buf;
} V;

static int step_once(void);
static long shown_step(void);
static int lesson_step(int dir);
static void draw_compare(const ViewLayout *l);
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

/* ---- text that follows the window (issue 24) ----------------------------------- */

/* The fonts at the size the window and the zoom ask for (viewmodel_text_px):
 * made again when it changes. Without the font the window runs unlabelled. */
static void fonts_for_window(void)
{
    int px = viewmodel_text_px(V.win_w, V.win_h, V.zoom);
    if (V.font_failed || (V.font && px == V.font_px)) return;
    char err[512];
    Text *f = text_create(V.o.font, px, V.o.shader_dir, err, sizeof err), *b = NULL;
    if (f) b = text_create(V.o.font, viewmodel_title_px(px), V.o.shader_dir, err, sizeof err);
    if (!f || !b) {
        log_error("view", "%s; the window runs without text", err);
        text_free(f);
        V.font_failed = true; /* not again every frame */
        return;
    }
    text_free(V.font);
    text_free(V.big);
    V.font = f;
    V.big = b;
    V.font_px = px;
}

static ViewTextSize text_size(void)
{
    if (!V.font) return viewmodel_text_size(V.font_px > 0 ? V.font_px : 17, viewmodel_title_px(17));
    return (ViewTextSize){text_cell_w(V.font), text_cell_h(V.font), text_cell_w(V.big), text_cell_h(V.big)};
}

static void add_box(int kind, ViewRect r)
{
    if (V.shown.nbox >= VIEW_BOXES || r.w <= 0 || r.h <= 0) return;
    V.shown.box[V.shown.nbox] = r;
    V.shown.box_kind[V.shown.nbox++] = (char)kind;
}

/* One line of text, its top-left at (x, y_top) (y up), cut to max_cols
 * characters (0: whole); its box recorded for the tests. */
static void put_text(Text *t, int x, int y_top, const char *s, const float *rgb, int max_cols)
{
    if (!t || !s || !*s) return;
    char buf[4 * VIEWMODEL_WRAP_COLS + 8];
    if (max_cols > 0 && viewmodel_columns(s) > max_cols) {
        char lines[1][4 * VIEWMODEL_WRAP_COLS];
        /* a single line cut: wrap into one line, ending "..." */
        if (viewmodel_wrap(s, max_cols, lines, 1) < 1) return;
        snprintf(buf, sizeof buf, "%s", lines[0]);
        s = buf;
    }
    const char *l[1] = {s};
    text_draw(t, x, y_top, l, 1, rgb);
    add_box(VIEW_BOX_TEXT, (ViewRect){x, y_top - text_cell_h(t), text_columns(s) * text_cell_w(t), text_cell_h(t)});
}

static void put_block(Text *t, const ViewTextBlock *b, const float *rgb)
{
    if (!t) return;
    int ch = text_cell_h(t), cols = b->r.w / text_cell_w(t);
    for (int k = 0; k < b->n; k++) put_text(t, b->r.x, b->r.y + b->r.h - k * ch, b->line[k], rgb, cols);
}

/* A colour bar's label: at most VIEWMODEL_BAR_COLS characters. */
static void bar_number(char *b, size_t n, double v)
{
    snprintf(b, n, "%.3g", v);
    if (strlen(b) > VIEWMODEL_BAR_COLS) snprintf(b, n, "%.2g", v);
    if (strlen(b) > VIEWMODEL_BAR_COLS) snprintf(b, n, "%.0e", v);
}

/* The title's line: the pass shown, else the view's name. */
static void current_title(char *b, size_t n)
{
    if (V.pass_shown) snprintf(b, n, "%s", V.pass_line);
    else view_label(b, n, false);
}

static void layout(ViewLayout *l)
{
    char title[256];
    current_title(title, sizeof title);
    bool two = V.view == VIEW_DIVERGENCE && !V.pass_shown;
    ViewLayoutIn in = {.hud_on = V.hud_on,
                       .two = two,
                       .bar = V.pass_shown || V.view != VIEW_FIG2,
                       .field_labels = two,
                       .compare = V.o.compare != NULL,
                       .nhud = V.shown.nhud > 0 ? V.shown.nhud : VIEWMODEL_HUD_LINES,
                       .ts = text_size(),
                       .title = V.font ? title : NULL,
                       .subtitle = V.font && V.pass_shown ? V.pass_explain : NULL,
                       .caption = V.font && V.caption[0] ? V.caption : NULL};
    viewmodel_layout_for(V.win_w, V.win_h, morph_width(V.m), morph_height(V.m), &in, l);
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

static int map_of(const ViewRange *r) { return r->sign ? VIEWMODEL_MAP_DIV : VIEWMODEL_MAP_SEQ; }

/* One field into a rectangle: a display.glsl mode; MODE_IMAGE draws IMG,
 * MODE_MAPPED the computed field IMG through the colour map of range rg
 * (NULL: the view's). */
static void draw_field(int mode, const Field *img, ViewRect r, bool arrows, const ViewRange *rg)
{
    Shader *sh = V.display;
    if (!rg) rg = &V.vf.range;
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
    shader_set_float(sh, "u_lo", rg->lo);
    shader_set_float(sh, "u_hi", rg->hi);
    set_stops(sh, viewmodel_map_stops(map_of(rg)));
    bool on = arrows && V.vf_ok && V.vf.vec;
    shader_set_int(sh, "u_arrows", on ? 1 : 0);
    float spacing = (float)r.w / 24.0f;
    shader_set_float(sh, "u_arrow_px", spacing < 12.0f ? 12.0f : spacing);
    shader_set_float(sh, "u_vmax", on ? V.vf.vmax : 0.0f);
    shader_set_int(sh, "u_arrow_map", V.view == VIEW_VELOCITY ? 1 : 0);
    shader_set_vec3(sh, "u_arrow_color", 1.0f, 1.0f, 1.0f);
    pass_draw_screen(r.x, r.y, r.w, r.h);
    add_box(VIEW_BOX_FIELD, r);
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

/* The colour bar and its labels (top, middle and bottom values) right of
 * it: the density's (0..1/scale, in the smoke's colour) or range rg's. */
static void draw_bar(const ViewLayout *l, bool density, const ViewRange *rg)
{
    if (l->bar.w <= 0) return;
    float smoke[3 * VIEWMODEL_MAP_STOPS];
    smoke_stops(smoke);
    set_stops(V.hud, density ? smoke : viewmodel_map_stops(map_of(rg)));
    shader_set_int(V.hud, "u_mode", 1);
    shader_set_vec4(V.hud, "u_rect", (float)l->bar.x, (float)l->bar.y, (float)l->bar.w, (float)l->bar.h);
    pass_draw_screen(l->bar.x, l->bar.y, l->bar.w, l->bar.h);
    add_box(VIEW_BOX_BAR, l->bar);
    V.shown.bar_range = density ? (ViewRange){0.0f, 1.0f / V.scale, false} : *rg;
    if (!V.font) return;
    float lo = V.shown.bar_range.lo, hi = V.shown.bar_range.hi;
    int ch = text_cell_h(V.font), x = l->bar_labels.x;
    char b[32];
    bar_number(b, sizeof b, hi);
    put_text(V.font, x, l->bar.y + l->bar.h + ch / 2, b, WHITE, VIEWMODEL_BAR_COLS);
    bar_number(b, sizeof b, 0.5 * (lo + hi));
    put_text(V.font, x, l->bar.y + l->bar.h / 2 + ch / 2, b, WHITE, VIEWMODEL_BAR_COLS);
    bar_number(b, sizeof b, lo);
    put_text(V.font, x, l->bar.y + ch / 2, b, WHITE, VIEWMODEL_BAR_COLS);
}

/* Two series as heights 0..1 (n points, log decades lo..hi) in the plot's
 * rectangle, its scale left of it, a caption and the series' names above. */
static void draw_series(const ViewLayout *l, const float *ya, const float *yb, int n, int lo, int hi,
                        const char *caption, const char *name_a, const float ca[3], const char *name_b,
                        const float cb[3])
{
    static float rg[2 * VIEWMODEL_PLOT_N];
    ViewRect r = l->plot;
    if (r.w <= 0) return;
    snprintf(V.shown.plot_caption, sizeof V.shown.plot_caption, "%s", caption);
    if (n > VIEWMODEL_PLOT_N) n = VIEWMODEL_PLOT_N;
    for (int k = 0; k < VIEWMODEL_PLOT_N; k++) {
        rg[2 * k] = k < n ? ya[k] : 0.0f;
        rg[2 * k + 1] = k < n ? yb[k] : 0.0f;
    }
    field_upload(V.plot_tex, rg);
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
    add_box(VIEW_BOX_PLOT, r);
    if (!V.font) return;
    int ch = text_cell_h(V.font), cw = text_cell_w(V.font), lx = l->margin;
    int cols = l->plot_caption.w / cw;
    char b[32];
    snprintf(b, sizeof b, "1e%d", hi);
    put_text(V.font, lx, r.y + r.h, b, GREY, VIEWMODEL_PLOT_LABEL_COLS - 1);
    snprintf(b, sizeof b, "1e%d", lo);
    put_text(V.font, lx, r.y + ch, b, GREY, VIEWMODEL_PLOT_LABEL_COLS - 1);
    const ViewRect *c = &l->plot_caption;
    put_text(V.font, c->x, c->y + c->h, caption, WHITE, cols);
    put_text(V.font, c->x, c->y + ch, name_a, ca, cols);
    int off = text_columns(name_a) + 2;
    if (off < cols) put_text(V.font, c->x + off * cw, c->y + ch, name_b, cb, cols - off);
}

static void draw_plot(const ViewLayout *l)
{
    static float ye[VIEWMODEL_PLOT_N], yd[VIEWMODEL_PLOT_N];
    int lo, hi, n = viewmodel_plot_points(&V.plot, ye, yd, &lo, &hi);
    draw_series(l, ye, yd, n, lo, hi, "log plot over the steps:", "error", ERR_COLOR,
                "max|\xe2\x88\x87\xc2\xb7u|", DIV_COLOR);
}

/* Pass by pass: the series of the solve under way (the pressure's or the
 * deficit potential's residual, or the gathering's change of e) after each
 * of its iterations so far this step, max and RMS on one log scale, named
 * after that solve (passbypass_caption). */
static void draw_residual_plot(const ViewLayout *l)
{
    const PassbypassSeries *sr = passbypass_shown(&V.pass_plot);
    static float ya[VIEWMODEL_PLOT_N], yb[VIEWMODEL_PLOT_N];
    int lo, hi, n = sr->n < VIEWMODEL_PLOT_N ? sr->n : VIEWMODEL_PLOT_N;
    viewmodel_log_heights(sr->max, sr->rms, n, ya, yb, &lo, &hi);
    V.shown.residual_points = n;
    draw_series(l, ya, yb, n, lo, hi, passbypass_caption(&V.pass_plot), "max", ERR_COLOR, "rms", DIV_COLOR);
}

static void draw_hud(const ViewLayout *l)
{
    draw_panel(l->hud, 0.72f);
    if (V.font) {
        int ch = text_cell_h(V.font), cols = l->hud_text.w / text_cell_w(V.font);
        for (int k = 0; k < V.shown.nhud; k++) {
            bool sel = k == viewmodel_hud_param_line(V.sel);
            put_text(V.font, l->hud_text.x, l->hud_text.y + l->hud_text.h - k * ch, V.shown.hud[k],
                     sel ? YELLOW : WHITE, cols < VIEWMODEL_HUD_COLS ? cols : VIEWMODEL_HUD_COLS);
        }
    }
    if (V.pass_shown) draw_residual_plot(l); /* pass by pass: the solve's series instead */
    else draw_plot(l);
}

static void draw_help(const ViewLayout *l)
{
    const char *const *lines;
    int n = viewmodel_help_lines(&lines);
    if (!V.font) return;
    int ch = text_cell_h(V.font), cw = text_cell_w(V.font), w = 0;
    for (int k = 0; k < n; k++)
        if (text_columns(lines[k]) > w) w = text_columns(lines[k]);
    ViewRect r = {(V.win_w - (w + 2) * cw) / 2, (V.win_h - (n + 1) * ch) / 2, (w + 2) * cw, (n + 1) * ch};
    (void)l;
    draw_panel(r, 0.85f);
    text_draw(V.font, r.x + cw, r.y + r.h - ch / 2, lines, n, WHITE);
}

/* A lesson's caption: on a panel across the bottom, in the labels' size. */
static void draw_caption(const ViewLayout *l)
{
    const ViewTextBlock *b = &l->caption_text;
    if (b->n <= 0 || !V.font) return;
    int m = l->margin / 2;
    draw_panel((ViewRect){b->r.x - m, b->r.y - m, b->r.w + 2 * m, b->r.h + 2 * m}, 0.8f);
    put_block(V.font, b, YELLOW);
}

/* Fig. 2 (seed 003): the morph above, the start and the target small below
 * it; in a sequence the start and every key in order, the active key
 * marked; with overlays each panel named below it. */
static void draw_fig2(const ViewLayout *l)
{
    int gw = morph_width(V.m), gh = morph_height(V.m);
    int np = V.key_tex ? V.nkeys + 1 : 2, lh = l->overlay && V.font ? text_cell_h(V.font) + 2 : 0;
    ViewRect mr, *pr = V.panels;
    viewmodel_fig2_labelled(l->area.w, l->area.h, gw, gh, np, lh, &mr, pr);
    mr.x += l->area.x, mr.y += l->area.y;
    for (int k = 0; k < np; k++) pr[k].x += l->area.x, pr[k].y += l->area.y;
    draw_field(density_mode(), NULL, mr, false, NULL);
    draw_field(MODE_IMAGE, V.start_tex, pr[0], false, NULL);
    if (!V.key_tex) {
        draw_field(MODE_TARGET, NULL, pr[1], false, NULL);
    } else {
        const ViewRect *a = &pr[morph_key(V.m)];
        glEnable(GL_SCISSOR_TEST);
        glScissor(a->x - VIEWMODEL_MARK, a->y - VIEWMODEL_MARK, a->w + 2 * VIEWMODEL_MARK,
                  a->h + 2 * VIEWMODEL_MARK);
        glClearColor(MARK_COLOR, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glDisable(GL_SCISSOR_TEST);
        for (int k = 1; k <= V.nkeys; k++) draw_field(MODE_IMAGE, V.key_tex[k - 1], pr[k], false, NULL);
    }
    if (!lh) return;
    int cw = text_cell_w(V.font);
    for (int k = 0; k < np; k++) {
        char b[32];
        if (k == 0) snprintf(b, sizeof b, "start");
        else if (!V.key_tex) snprintf(b, sizeof b, "target");
        else snprintf(b, sizeof b, "key %d", k);
        int cols = pr[k].w / cw, c = text_columns(b) < cols ? text_columns(b) : cols;
        if (cols < 1) continue;
        put_text(V.font, pr[k].x + (pr[k].w - c * cw) / 2, pr[k].y - VIEWMODEL_MARK, b,
                 V.key_tex && k == morph_key(V.m) ? YELLOW : WHITE, cols);
    }
}

/* The view's field(s) into the layout's rectangles (field, field2). */
static void draw_view_fields(ViewRect f, ViewRect f2)
{
    bool density = V.view <= VIEW_BLURRED;
    if (density) {
        /* modes 0-2 are the views 0-2; several fields' density: the composite */
        draw_field(V.view == VIEW_DENSITY ? density_mode() : V.view, NULL, f, false, NULL);
    } else if (V.view == VIEW_VELOCITY) {
        draw_field(density_mode(), NULL, f, true, NULL);
    } else if (V.vf_ok) {
        draw_field(MODE_MAPPED, V.scalar, f, V.view == VIEW_FORCE, NULL);
        if (V.view == VIEW_DIVERGENCE) draw_field(MODE_MAPPED, V.scalar2, f2, false, NULL);
    }
}

static void draw(void)
{
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, V.win_w, V.win_h);
    glClearColor(0.08f, 0.08f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    fonts_for_window();
    V.shown.nbox = 0;
    V.shown.plot_caption[0] = '\0';
    V.shown.nhud = viewmodel_hud_lines(&V.mt, morph_params(V.m), V.sel, V.shown.hud, VIEWMODEL_HUD_LINES);
    V.shown.metrics = V.mt;
    ViewLayout l;
    layout(&l);
    V.shown.layout = l;
    V.shown.text_px = V.font ? V.font_px : 0;
    V.shown.overlay = l.overlay;
    V.shown.view = V.view;
    V.shown.range = V.vf.range;
    V.shown.text = V.font != NULL;
    V.shown.selected = V.sel;
    V.shown.params = *morph_params(V.m);
    V.shown.residual_points = 0;
    V.shown.nfields = V.nf;
    V.shown.field = V.view == VIEW_DENSITY ? V.field : -1;
    V.shown.recording = V.rec != NULL;
    V.shown.lesson_step = V.lesson ? V.lstep + 1 : 0;
    V.shown.lesson_steps = V.lesson ? V.lesson->n : 0;
    V.shown.step = shown_step();
    snprintf(V.shown.caption, sizeof V.shown.caption, "%s", V.caption);
    snprintf(V.shown.subtitle, sizeof V.shown.subtitle, "%s", V.pass_shown ? V.pass_explain : "");
    current_title(V.shown.title, sizeof V.shown.title);
    bool density = V.view <= VIEW_BLURRED;
    if (V.o.compare) {
        draw_compare(&l);
    } else if (V.pass_shown) { /* the pass's field, named, in colour, with its range */
        V.shown.range = V.pass_range;
        draw_field(MODE_MAPPED, V.pass_tex, l.field, false, &V.pass_range);
    } else if (V.view == VIEW_FIG2) {
        draw_fig2(&l);
    } else {
        draw_view_fields(l.field, l.field2);
    }
    if (!l.overlay) return;
    if (V.pass_shown) draw_bar(&l, false, &V.pass_range);
    else if (V.view != VIEW_FIG2) draw_bar(&l, density, &V.vf.range);
    put_block(V.big, &l.title_text, WHITE);
    put_block(V.font, &l.sub_text, GREY);
    if (!V.o.compare && !V.pass_shown && V.view == VIEW_DIVERGENCE && V.vf_ok && V.font) {
        char b[64];
        int cw = text_cell_w(V.font);
        snprintf(b, sizeof b, "before: %.2g", V.vf.max1); /* above each panel */
        put_text(V.font, l.label.x, l.label.y + l.label.h, b, WHITE, l.label.w / cw);
        snprintf(b, sizeof b, "after: %.2g", V.vf.max2);
        put_text(V.font, l.label2.x, l.label2.y + l.label2.h, b, WHITE, l.label2.w / cw);
    }
    if (V.hud_on && !V.o.compare) draw_hud(&l);
    draw_caption(&l);
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

/* Mass, error and max|∇·u| of m read back from the GPU; with fields, of
 * every field (morph_observe_fields's sums). The only read-back of the
 * metrics (refresh_metrics's; the title bar and the HUD show what it read),
 * counted for the tests. */
static int read_back(Morph *m, bool fields, double *mass, double *error, double *max_div)
{
    V.shown.reads++;
    if (fields && V.nf > 1) return morph_observe_fields(V.f, V.nf, NULL, NULL, mass, error, max_div);
    return morph_observe(m, NULL, mass, error, max_div);
}

/* The step the window shows: the steps done, or pass by pass the step
 * under way (its passes' "step N"), so the title, the title bar and the
 * HUD say the same. */
static long shown_step(void) { return V.pass_shown ? V.pass_step : morph_step_count(V.m); }

static void update_title(bool force)
{
    double now = export_now();
    if (!force && now - V.last_title < 1.0) return;
    long steps = shown_step();
    if (now > V.last_title) V.rate = (double)(V.taken - V.last_title_steps) / (now - V.last_title);
    V.last_title = now;
    V.last_title_steps = V.taken;
    /* a sequence (issue 9): the active key and the steps to the next */
    char key[96];
    viewmodel_key_label(V.m, key, sizeof key);
    char title[1100], extra[256] = ""; /* room for every part whole (gcc -O1 checks) */
    title_extra(extra, sizeof extra);
    snprintf(title, sizeof title, "smokemorph  step %ld%s  %.0f steps/s  error %.3f  [%s]%s  (h: keys)",
             steps, key, V.rate, V.mt.error, extra[0] ? extra : title_name(), V.paused ? "  paused" : "");
    glutSetWindowTitle(title);
    snprintf(V.shown.title_bar, sizeof V.shown.title_bar, "%s", title);
}

/* The HUD's numbers of morph m (one read-back); A's add a point to the plot. */
static int metrics_of(Morph *m, ViewMetrics *mt, bool fields)
{
    mt->step = m == V.m ? shown_step() : morph_step_count(m);
    mt->time = morph_time(m);
    mt->key = morph_key(m);
    mt->nkeys = morph_key_count(m);
    mt->to_next = morph_has_schedule(m) && mt->key < mt->nkeys ? morph_key_step(m, mt->key) - morph_step_count(m) : -1;
    mt->rate = V.rate;
    mt->paused = V.paused;
    mt->nfields = fields ? V.nf : 1;
    mt->pass = V.pass_shown && m == V.m ? V.pass_index : 0;
    mt->npass = V.pass_total;
    return read_back(m, fields, &mt->mass, &mt->error, &mt->max_div);
}

static int refresh_metrics(void)
{
    V.shown.refreshes++;
    if (metrics_of(V.m, &V.mt, true) < 0) return -1;
    if (V.o.compare && metrics_of(compare_morph(V.o.compare, 1), &V.mtb, false) < 0) return -1;
    V.mt_at = morph_step_count(V.m);
    viewmodel_plot_add(&V.plot, V.mt_at, V.mt.error, V.mt.max_div);
    V.mt_time = export_now();
    return 0;
}

/* The computed view's field of V.m into vf and its textures. */
static int compute_view(ViewField *vf, Field *sc, Field *sc2, Field *vec, bool *ok)
{
    char err[256];
    if (morph_get_state(V.m, &V.st) < 0) return -1;
    viewfield_free(vf);
    *ok = false;
    if (viewfield_compute(V.view, &V.st.solver, morph_params(V.m), morph_width(V.m), morph_height(V.m), vf, err,
                          sizeof err) < 0) {
        log_error("view", "%s", err);
        return -1;
    }
    if (field_upload(sc, vf->scalar) < 0) return -1;
    if (vf->scalar2 && field_upload(sc2, vf->scalar2) < 0) return -1;
    if (vf->vec && field_upload(vec, vf->vec) < 0) return -1;
    *ok = true;
    return 0;
}

/* The computed view's field: the state read back, viewfield, the upload;
 * comparing, B's too, both on one range (the wider). */
static int refresh_field(void)
{
    /* a step begun pass by pass: reading the state back would run the
     * step's remaining passes; the pass's own field is what is shown */
    for (int f = 0; f < V.nf; f++)
        if (V.f[f] && morph_pass_active(V.f[f])) return 0;
    V.vf_dirty = false;
    V.vf_time = export_now();
    if (!viewfield_computed(V.view)) return 0;
    if (compute_view(&V.vf, V.scalar, V.scalar2, V.vec, &V.vf_ok) < 0) return -1;
    if (!V.o.compare) return 0;
    Morph *a = V.m;
    V.m = compare_morph(V.o.compare, 1);
    int rc = compute_view(&V.vfb, V.scalarb, V.scalar2b, V.vecb, &V.vfb_ok);
    V.m = a;
    if (rc < 0) return -1;
    ViewRange *ra = &V.vf.range, *rb = &V.vfb.range;
    if (rb->hi > ra->hi) *ra = *rb;
    else *rb = *ra;
    if (V.vfb.vmax > V.vf.vmax) V.vf.vmax = V.vfb.vmax;
    else V.vfb.vmax = V.vf.vmax;
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
    if (refresh_metrics() < 0) {
        log_error("view", "cannot read the metrics back");
        quit(1);
        return;
    }
    update_title(true); /* the numbers just read */
    glutPostRedisplay();
}

/* Ctrl + / Ctrl -: the text and the plot larger or smaller (issue 24). */
static void zoom(int d)
{
    int z = V.zoom + d;
    if (z < VIEWMODEL_ZOOM_MIN || z > VIEWMODEL_ZOOM_MAX) {
        log_info("view", "the text stays this size (the end of its range)");
        return;
    }
    V.zoom = z;
    log_info("view", "text %d pixels a line", viewmodel_text_px(V.win_w, V.win_h, z));
}

static void key_ctrl(unsigned char k, bool ctrl)
{
    SolverParams p = *morph_params(V.m);
    int rc = 0;
    if (ctrl || k == 0x1f) { /* X gives Ctrl + '_' as 0x1f */
        if (k == '+' || k == '=') zoom(+1);
        else if (k == '-' || k == '_' || k == 0x1f) zoom(-1);
        glutPostRedisplay();
        return;
    }
    switch (k) {
    case ' ':
        if (V.lesson) rc = lesson_step(+1); /* a lesson: the next step */
        else V.paused = !V.paused;
        break;
    case 8: case 127: /* Backspace: a lesson's step before */
        if (V.lesson) rc = lesson_step(-1);
        break;
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
    case 'v':
    case 'V': { /* compare has no room for Fig. 2 twice: past it */
        int d = k == 'v' ? +1 : -1;
        set_slot(slot_of_view() + d);
        if (V.o.compare && V.view == VIEW_FIG2) set_slot(slot_of_view() + d);
        break;
    }
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
static void key(unsigned char k, int x, int y)
{
    (void)x;
    (void)y;
    key_ctrl(k, (glutGetModifiers() & GLUT_ACTIVE_CTRL) != 0);
}

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
    if (state == GLUT_DOWN && l.overlay && V.hud_on && !V.o.compare && x < l.hud.w && V.font) {
        int i = viewmodel_hud_param_at(y, V.win_h - (l.hud_text.y + l.hud_text.h), text_cell_h(V.font));
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
    char err[1024], name[64], again[4200];
    if (path && V.rec_count > 0) { /* --record's name again: FILE-2.mp4, ... (the first stays) */
        size_t n = strlen(path);
        for (int k = V.rec_count + 1; k < 10000; k++) {
            snprintf(again, sizeof again, "%.*s-%d.mp4", (int)(n > 4 ? n - 4 : n), path, k);
            if (access(again, F_OK) != 0) break;
        }
        path = again;
    }
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
        if (strstr(err, "not installed"))
            log_error("view", "cannot record to %s: ffmpeg is not installed (not found on PATH); install it "
                      "(Debian: apt install ffmpeg), or leave out --record", path);
        else
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
    V.rec_count++;
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

/* ---- a lesson (issue 24): steps prepared in a file, Space for the next ----- */

/* Leave pass by pass: a step begun a pass at a time is finished. */
static int leave_passes(void)
{
    bool begun = false;
    for (int f = 0; f < V.nf; f++) begun = begun || morph_pass_active(V.f[f]);
    V.pass_shown = false;
    return begun ? step_once() : 0;
}

/* B's computed view's textures, for a compare begun by a lesson. */
static int side_b_fields(void)
{
    char err[256];
    int w = morph_width(V.m), h = morph_height(V.m);
    if (V.scalarb) return 0;
    if (!(V.scalarb = field_create(w, h, 1, err, sizeof err)) || !(V.scalar2b = field_create(w, h, 1, err, sizeof err)) ||
        !(V.vecb = field_create(w, h, 2, err, sizeof err))) {
        log_error("view", "%s", err);
        return -1;
    }
    return 0;
}

/* A lesson's "compare": the morph given and one with SPEC changed, both
 * from its start (its state's start and target), side by side. 0, or -1
 * on a GPU error (a setting that cannot be compared is logged and left). */
static int lesson_compare(const char *spec)
{
    char err[512];
    CompareSpec cs;
    if (V.nf > 1 || morph_has_schedule(V.base)) {
        log_info("lesson", "a comparison takes one field and one target: this step shows one run");
        return 0;
    }
    if (lesson_compare_spec(spec, morph_params(V.base), &cs, err, sizeof err) < 0) {
        log_error("lesson", "%s", err);
        return 0;
    }
    if (morph_get_state(V.base, &V.st) < 0 || side_b_fields() < 0) return -1;
    Compare *c = compare_create(morph_width(V.base), morph_height(V.base), &cs, V.o.solver, V.st.start,
                                V.st.target, V.st.mass_match, morph_backend(V.base), V.o.shader_dir, err, sizeof err);
    if (!c) {
        log_error("lesson", "%s", err);
        return -1;
    }
    compare_free(V.own_cmp);
    V.own_cmp = c;
    V.o.compare = c;
    V.m = V.f[0] = compare_morph(c, 0);
    log_info("compare", "%s | %s", compare_label(c, 0), compare_label(c, 1));
    return 0;
}

/* A comparison going on: both runs to the step's parameters p, B with
 * SPEC's setting over them (lesson_load checked it). 0, or -1 on a GPU
 * error. */
static int lesson_compare_params(const char *spec, const SolverParams *p)
{
    char err[512];
    CompareSpec cs;
    if (lesson_compare_spec(spec, p, &cs, err, sizeof err) < 0) {
        log_error("lesson", "%s", err);
        return 0;
    }
    for (int s = 0; s < 2; s++) {
        Morph *m = compare_morph(V.own_cmp, s);
        if (!method_params_equal(&cs.p[s], morph_params(m)) && morph_set_params(m, &cs.p[s]) < 0) return -1;
    }
    return 0;
}

static void lesson_uncompare(void)
{
    if (!V.own_cmp) return;
    V.o.compare = NULL;
    V.m = V.f[0] = V.base;
    compare_free(V.own_cmp);
    V.own_cmp = NULL;
}

/* Show step k of the lesson: its parameters, comparison, restart, view,
 * HUD and caption; then run its steps, or pause (and its passes). 0, or -1
 * on a GPU error. */
static int lesson_go(int k)
{
    const LessonStep *st = &V.lesson->step[k];
    V.lstep = k;
    if (leave_passes() < 0) return -1;
    /* the step's parameters: the run's at the start with the sets of the
     * steps up to it (going back undoes a step's set) */
    SolverParams p = V.lesson_start;
    lesson_params_at(V.lesson, k, &p);
    if (!method_params_equal(&p, morph_params(V.base)) && morph_set_params(V.base, &p) < 0) return -1;
    /* the same comparison as the step before's goes on (unless restarted),
     * both runs with the step's parameters (B with its setting changed) */
    bool same = V.own_cmp && st->compare[0] && !st->restart && k > 0 &&
                !strcmp(V.lesson->step[k - 1].compare, st->compare);
    if (same && lesson_compare_params(st->compare, &p) < 0) return -1;
    if (!same) {
        lesson_uncompare();
        if (st->compare[0] && lesson_compare(st->compare) < 0) return -1;
    }
    if (st->restart && !st->compare[0] && restart() < 0) return -1;
    if (st->restart || (st->compare[0] && !same)) viewmodel_plot_reset(&V.plot);
    if (st->view >= 0) V.view = st->view, V.field = -1;
    if (V.o.compare && V.view == VIEW_FIG2) V.view = VIEW_DENSITY; /* Fig. 2 is one run's */
    if (st->hud >= 0) V.hud_on = st->hud;
    snprintf(V.caption, sizeof V.caption, "%s%s%d/%d  %s%s", k == 0 && V.lesson->title[0] ? V.lesson->title : "",
             k == 0 && V.lesson->title[0] ? "\n" : "", k + 1, V.lesson->n, st->caption,
             k + 1 < V.lesson->n ? "  [space: next]" : "  [the end]");
    long now = morph_step_count(V.m);
    V.run_to = st->until > now ? st->until : st->run > 0 ? now + st->run : 0;
    V.paused = V.run_to == 0;
    V.lesson_passes = st->pass_by_pass == 1 ? st->passes : 0;
    V.lesson_to_pass = st->to_pass;
    V.vf_dirty = true;
    V.mt.step = -1;
    log_info("lesson", "step %d/%d: %s", k + 1, V.lesson->n, st->caption);
    return 0;
}

/* After a lesson step's run: its passes (pass by pass), then paused: so
 * many, or until its to_pass has run so many times or the step ends. */
static int lesson_passes_now(void)
{
    int n = V.lesson_passes, to = V.lesson_to_pass, seen = 0;
    V.lesson_passes = 0;
    if (n <= 0) return 0;
    for (int i = 0; i < (to >= 0 ? 1000000 : n); i++) {
        if (pass_next() < 0) return -1;
        if (to >= 0 && (int)V.pass_pi.pass == to && ++seen >= n) break;
        if (to >= 0 && V.pass_pi.last) break;
    }
    return 0;
}

/* Space in a lesson: the next step (dir +1) or Backspace the one before. */
static int lesson_step(int dir)
{
    int k = V.lstep + dir;
    if (k < 0 || k >= V.lesson->n) {
        log_info("lesson", "%s", k < 0 ? "this is the lesson's first step" : "the lesson is over ('q' quits)");
        return 0;
    }
    if (lesson_go(k) < 0) return -1;
    return V.paused ? lesson_passes_now() : 0;
}

static void display(void)
{
    if (V.keys && *V.keys) { /* '^' and a key: the key with Ctrl */
        bool ctrl = V.keys[0] == '^' && V.keys[1];
        key_ctrl((unsigned char)V.keys[ctrl ? 1 : 0], ctrl);
        V.keys += ctrl ? 2 : 1;
    }
    if (V.rc) return; /* a key failed */
    if (!V.paused || V.single) {
        int n = V.single ? 1 : V.o.steps_per_frame;
        for (int k = 0; k < n; k++) {
            if (V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps) break;
            if (V.run_to > 0 && morph_step_count(V.m) >= V.run_to) break;
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
    if (V.run_to > 0 && morph_step_count(V.m) >= V.run_to) { /* a lesson step's run is done */
        V.run_to = 0;
        V.paused = true;
        if (lesson_passes_now() < 0) {
            log_error("view", "a GL error in the simulation step");
            quit(1);
            return;
        }
        after_key(0, "the lesson");
        if (V.rc) return;
    }
    bool done = V.o.max_steps > 0 && morph_step_count(V.m) >= V.o.max_steps &&
                (!V.keys || !*V.keys);
    double now = export_now();
    bool settled = done || V.paused;
    if ((V.mt_at != morph_step_count(V.m) || V.mt.step < 0) && (settled || now - V.mt_time >= REFRESH_S) &&
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

/* view_run's first stage: the options into V, checked (the fields, the
 * view, a GPU backend). -1: refused, said. */
static int take_options(Morph *m, const ViewOptions *o)
{
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
            return -1;
        }
        V.nf = o->nfields;
        for (int i = 1; i < V.nf; i++) V.f[i] = o->fields[i];
    }
    if (V.o.steps_per_frame < 1) V.o.steps_per_frame = 1;
    V.keys = o->keys;
    V.view = o->view >= 0 && o->view < VIEW_COUNT ? o->view : VIEW_DENSITY;
    if (o->compare && V.view == VIEW_FIG2) {
        log_info("view", "Fig. 2 shows one run: comparing, the density view instead");
        V.view = VIEW_DENSITY;
    }
    V.hud_on = !o->no_hud;
    V.mt.step = -1;
    V.vf_dirty = true;
    bool gpu = true;
    for (int i = 0; i < V.nf; i++) gpu = gpu && morph_density_texture(V.f[i]);
    if (!gpu) {
        log_error("view", "the window needs a GPU backend (--backend fragment or compute), not %s",
                  morph_backend_name(morph_backend(m)));
        return -1;
    }
    return 0;
}

/* The display and HUD shaders. -1: not loaded, said. */
static int load_shaders(const ViewOptions *o)
{
    char err[512];
    if (!(V.display = shader_load(o->shader_dir, "display.glsl", err, sizeof err)) ||
        !(V.hud = shader_load(o->shader_dir, "hud.glsl", err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* The textures the views draw from (B's too when comparing). -1: not made,
 * said. */
static int make_fields(const ViewOptions *o, int w, int h)
{
    char err[512];
    if (!(V.start_tex = field_create(w, h, 1, err, sizeof err)) ||
        !(V.scalar = field_create(w, h, 1, err, sizeof err)) ||
        !(V.scalar2 = field_create(w, h, 1, err, sizeof err)) || !(V.vec = field_create(w, h, 2, err, sizeof err)) ||
        !(V.plot_tex = field_create(VIEWMODEL_PLOT_N, 1, 2, err, sizeof err)) ||
        (o->compare && (!(V.scalarb = field_create(w, h, 1, err, sizeof err)) ||
                        !(V.scalar2b = field_create(w, h, 1, err, sizeof err)) ||
                        !(V.vecb = field_create(w, h, 2, err, sizeof err))))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* The state read back, the panels, and a sequence's key images (for the
 * Fig. 2 layout), uploaded with the start. -1: failed, said. */
static int make_keys(Morph *m, int w, int h)
{
    char err[512];
    if (alloc_state() < 0) {
        log_error("view", "out of memory for the state of a %dx%d grid", w, h);
        return -1;
    }
    /* a sequence: each key's image for the Fig. 2 layout */
    int nk = morph_has_schedule(m) && morph_key_count(m) > 1 ? morph_key_count(m) : 0;
    if (!(V.panels = calloc((size_t)nk + 2, sizeof *V.panels)) ||
        (nk && !(V.key_tex = calloc((size_t)nk, sizeof *V.key_tex)))) {
        log_error("view", "out of memory for %d keys", nk);
        return -1;
    }
    for (V.nkeys = 0; V.nkeys < nk; V.nkeys++)
        if (!(V.key_tex[V.nkeys] = field_create(w, h, 1, err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
    if (upload_start() < 0) {
        log_error("view", "cannot upload the start and key images to the GPU");
        return -1;
    }
    return 0;
}

/* The window's size, fonts and callbacks. */
static void hook_window(Morph *m)
{
    V.win_w = glutGet(GLUT_WINDOW_WIDTH);
    V.win_h = glutGet(GLUT_WINDOW_HEIGHT);
    /* text: without the font the window runs, unlabelled (docs/MANUAL.md: the views) */
    fonts_for_window();
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
    V.base = m;
}

/* --lesson (or a lesson loaded before the window): loaded, at its first
 * step. -1: failed, said. */
static int open_lesson(Morph *m, const ViewOptions *o)
{
    char err[512];
    if (!o->lesson && !o->lesson_ready) return 0;
    if (o->compare) { /* main refuses it before the window: config_parse's callers */
        log_error("view", "--lesson runs one morph (a step may compare two): leave out --compare");
        return -1;
    }
    if (!(V.lesson = o->lesson_ready) &&
        !(V.lesson = V.lesson_own = lesson_load(o->lesson, morph_params(m), err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    log_info("lesson", "%s: %d steps (space: the next, Backspace: the one before)", V.lesson->file, V.lesson->n);
    V.lesson_start = *morph_params(m);
    if (lesson_go(0) < 0 || (V.paused && lesson_passes_now() < 0)) return -1;
    return 0;
}

/* The loop: events, then a frame each time round (as an idle function that
 * posts a redisplay would) until quit or the window closes. The exit
 * status. */
static int event_loop(void)
{
    V.running = true;
    while (V.running) {
        glutPostRedisplay();
        glutMainLoopEvent();
    }
    int rc = V.rc;
    if (record_stop() < 0 && V.o.record) rc = 1;
    return rc;
}

/* What make_keys, open_lesson and the loop hold. */
static void release_keys(void)
{
    lesson_uncompare();
    lesson_free(V.lesson_own);
    V.lesson = V.lesson_own = NULL;
    if (V.rec) export_close(V.rec); /* not finished: no file left */
    V.rec = NULL;
    free(V.rec_buf);
    field_free(V.pass_tex);
    for (int k = 0; V.key_tex && k < V.nkeys; k++) field_free(V.key_tex[k]);
    free(V.key_tex);
    free(V.panels);
    free_state();
}

/* What make_fields and the views hold. */
static void release_fields(void)
{
    passbypass_free(&V.pass_plot);
    viewfield_free(&V.vfb);
    field_free(V.vecb);
    field_free(V.scalar2b);
    field_free(V.scalarb);
    viewfield_free(&V.vf);
    field_free(V.plot_tex);
    field_free(V.vec);
    field_free(V.scalar2);
    field_free(V.scalar);
    field_free(V.start_tex);
    text_free(V.big);
    text_free(V.font);
}

int view_run(GlCtx *ctx, Morph *m, const ViewOptions *o)
{
    (void)ctx;
    if (take_options(m, o) < 0) return 1;
    int w = morph_width(m), h = morph_height(m), rc = 1;
    if (load_shaders(o) < 0) goto free_shaders;
    if (make_fields(o, w, h) < 0) goto free_fields;
    if (make_keys(m, w, h) < 0) goto free_keys;
    hook_window(m);
    if (open_lesson(m, o) < 0) goto free_keys;
    if (o->record && record_start(o->record) < 0) goto free_keys;
    rc = event_loop();
free_keys:
    release_keys();
free_fields:
    release_fields();
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
 * wrote (in colour, on its range: passbypass_values) and name it in the
 * title, with what it does below; the residual of the pressure or
 * potential solve (or the gathering's change of e) goes to the log and the
 * plot's series. */
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
    bool sign = passbypass_values(pi.out, buf, buf + n, n, buf + 2 * n);
    V.pass_range = viewfield_range(buf + 2 * n, n, sign);
    if (field_upload(V.pass_tex, buf + 2 * n) < 0) goto done;
    passbypass_label(&pi, V.pass_line, sizeof V.pass_line);
    passbypass_explain(&pi, V.pass_explain, sizeof V.pass_explain);
    V.pass_step = pi.step;
    V.pass_pi = pi;
    V.pass_index = pi.index + 1;
    V.pass_total = pi.total;
    if (V.nf > 1) { /* name the field the pass ran on */
        size_t len = strlen(V.pass_line);
        snprintf(V.pass_line + len, sizeof V.pass_line - len, "  (field %d/%d: %s)", fi + 1, V.nf, field_label(fi));
    }
    char res[64] = "";
    int got = passbypass_record(&V.pass_plot, V.f[fi], &pi);
    if (got == 0 && pi.out == METHOD_OUT_GATHER_E) got = passbypass_record_gather(&V.pass_plot, &pi, buf, n);
    if (got < 0) goto done;
    if (got > 0) {
        const PassbypassSeries *sr = passbypass_shown(&V.pass_plot);
        snprintf(res, sizeof res, "  %s %.3g", V.pass_plot.shown == PASSBYPASS_GATHER ? "change" : "residual",
                 sr->max[sr->n - 1]);
    }
    log_info("view", "%s  [%.3g, %.3g]%s", V.pass_line, V.pass_range.lo, V.pass_range.hi, res);
    V.pass_shown = true;
    if (pi.last) V.taken++;
    rc = 0;
done:
    free(buf);
    return rc;
}

/* Swap B's computed view in for A's (and back): the drawing reads V.vf. */
static void swap_side(void)
{
    ViewField t = V.vf;
    V.vf = V.vfb, V.vfb = t;
    Field *f = V.scalar;
    V.scalar = V.scalarb, V.scalarb = f;
    f = V.scalar2, V.scalar2 = V.scalar2b, V.scalar2b = f;
    f = V.vec, V.vec = V.vecb, V.vecb = f;
    bool ok = V.vf_ok;
    V.vf_ok = V.vfb_ok, V.vfb_ok = ok;
}

/* The split screen: A left, B right, each in the view chosen (both on one
 * colour range), each under its label block: the setting that differs,
 * and with the HUD on its step, time, error and max|∇·u|. */
static void draw_compare(const ViewLayout *l)
{
    Morph *a = V.m;
    for (int s = 0; s < 2; s++) {
        V.m = compare_morph(V.o.compare, s);
        if (s == 1) swap_side();
        ViewRect f = s ? l->field_b : l->field, f2 = s ? l->field2_b : l->field2, lab = s ? l->label_b : l->label;
        draw_view_fields(f, f2);
        if (s == 1) swap_side();
        const ViewMetrics *mt = s ? &V.mtb : &V.mt;
        char (*h)[VIEWMODEL_LINE * 2] = V.shown.half[s];
        V.shown.half_params[s] = *morph_params(V.m);
        snprintf(h[0], sizeof h[0], "%s", compare_label(V.o.compare, s));
        snprintf(h[1], sizeof h[1], "step %ld  t %.3f", mt->step, mt->time);
        snprintf(h[2], sizeof h[2], "error %.4f  max|\xe2\x88\x87\xc2\xb7u| %.2g", mt->error, mt->max_div);
        if (!l->overlay || !V.font) continue;
        int cw = text_cell_w(V.font), tcw = text_cell_w(V.big), top = lab.y + lab.h;
        put_text(V.big, lab.x, top, h[0], WHITE, lab.w / tcw);
        if (!V.hud_on) continue;
        top -= text_cell_h(V.big);
        put_text(V.font, lab.x, top, h[1], WHITE, lab.w / cw);
        put_text(V.font, lab.x, top - text_cell_h(V.font), h[2], ERR_COLOR, lab.w / cw);
    }
    V.m = a;
}

/* What the title bar says in place of the view's name: the pass shown, or
 * the two runs compared with B's error. */
static void title_extra(char *buf, size_t n)
{
    if (V.pass_shown) {
        snprintf(buf, n, "%s", V.pass_line);
    } else if (V.o.compare) {
        snprintf(buf, n, "%s | %s, error %.3f (%s)", compare_label(V.o.compare, 0), compare_label(V.o.compare, 1),
                 V.mtb.error, title_name()); /* B's error as refresh_metrics read it */
    }
}
