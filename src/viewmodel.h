/* viewmodel: what the window shows and where, GL-free (view.c draws it).
 * The title's key label, the key the next / previous key goes to, and the
 * rectangles of the Fig. 2 layout, so that each tests without a window.
 *
 *   char label[96];
 *   viewmodel_key_label(m, label, sizeof label);   // "  key 2/3 (150 to next)"
 *   int k = viewmodel_jump_key(m, +1);             // 0: nowhere to go
 *   if (k) morph_goto_key(m, k);
 */
#ifndef SMOKEMORPH_VIEWMODEL_H
#define SMOKEMORPH_VIEWMODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "morph.h"

/* A rectangle of the window in pixels, y up from the bottom (GL's). */
typedef struct {
    int x, y, w, h;
} ViewRect;

/* The title's key part: "  key k/n (s to next)", with s = morph_key_step(k)
 * minus the step count (any schedule, not only evenly spaced keys);
 * "  key n/n" at the last key; "" without a schedule. */
void viewmodel_key_label(const Morph *m, char *buf, size_t n);

/* The key the next (dir > 0) or previous (dir < 0) key jumps to: the
 * active key + 1, or - 1 (key 1 from key 1: back to its range's start);
 * 0 when there is none: no schedule, or next at the last key. */
int viewmodel_jump_key(const Morph *m, int dir);

/* The Fig. 2 layout of a gw x gh grid in a win_w x win_h window: the morph
 * above, npanels panels below it (the start, then each key's target), in
 * reading order. With 2 panels (one target) seed 003's Fig. 2: the morph
 * takes the top 2/3 and the two panels sit side by side 4 pixels apart
 * below it, each half the morph's size. With more (a sequence), the panels
 * are in as many rows as make them largest, in at most a third of the
 * window's height, each with room for a mark VIEWMODEL_MARK pixels wide
 * all round that touches neither its neighbours nor the morph (unless the
 * window is too small for one pixel a panel); the morph fits in the rest.
 * panels holds npanels. */
#define VIEWMODEL_MARK 2
void viewmodel_fig2(int win_w, int win_h, int gw, int gh, int npanels, ViewRect *morph,
                    ViewRect *panels);
/* The same with a label line of label_h pixels below each panel (issue 24:
 * "start", "target", "key 2"), within the window. */
void viewmodel_fig2_labelled(int win_w, int win_h, int gw, int gh, int npanels, int label_h, ViewRect *morph,
                             ViewRect *panels);

/* ---- the classroom views (issue 11): layout, colours, parameters, HUD ----- */

/* Overlays (the view's name, its colour bar, the HUD, the key help) are
 * drawn only in a window at least this large; a smaller one shows the
 * field alone, as before (and as the pixel tests of small windows expect). */
#define VIEWMODEL_OVERLAY_MIN_W 480
#define VIEWMODEL_OVERLAY_MIN_H 360

/* ---- sizes that follow the window (issue 24: readable from the back of a
 * room) ------------------------------------------------------------------------
 * The HUD's and the labels' text is min(H/36, W/48) pixels a line (13 at
 * 640x480, 21 at 1024x768, 30 at 1920x1080: over 1/40 of the height), times
 * 1.15 per zoom step (Ctrl + and Ctrl -, VIEWMODEL_ZOOM_MIN..MAX; zoomed in
 * at most W/36 and H/16, so the HUD keeps to half the width), and the
 * title's 1.35 times that; everything else (the HUD's width, the colour
 * bar, the plot, the margins) is measured in their characters. */
#define VIEWMODEL_ZOOM_MIN (-4)
#define VIEWMODEL_ZOOM_MAX 8
#define VIEWMODEL_TEXT_PX_MIN 10
#define VIEWMODEL_TEXT_PX_MAX 120
int viewmodel_text_px(int win_w, int win_h, int zoom);
int viewmodel_title_px(int text_px);
/* A font's character cell (text.h's text_cell_w, text_cell_h) for the
 * labels (cw x ch) and the title (tcw x tch). */
typedef struct {
    int cw, ch, tcw, tch;
} ViewTextSize;
/* DejaVu Sans Mono's cells at these sizes (as text.c measures them, within
 * a pixel), for callers without the font. */
ViewTextSize viewmodel_text_size(int text_px, int title_px);

/* The HUD's width in characters (longer lines are cut), the colour bar's
 * labels' width, and the wrapped blocks' most lines and characters. */
#define VIEWMODEL_HUD_COLS 28
#define VIEWMODEL_BAR_COLS 8
#define VIEWMODEL_PLOT_LABEL_COLS 5
#define VIEWMODEL_WRAP_LINES 4
#define VIEWMODEL_WRAP_COLS 160

/* Characters (code points) of UTF-8 s. */
int viewmodel_columns(const char *s);
/* s broken at spaces into lines of at most cols characters (a word longer
 * than that is cut), at most max of them (the last ends in "..." when the
 * text does not fit); returns the count. */
int viewmodel_wrap(const char *s, int cols, char lines[][4 * VIEWMODEL_WRAP_COLS], int max);

/* A block of text lines and where it goes: r is its box (y up; the first
 * line's top at r.y + r.h). */
typedef struct {
    char line[VIEWMODEL_WRAP_LINES][4 * VIEWMODEL_WRAP_COLS];
    int n;
    ViewRect r;
} ViewTextBlock;

/* What the layout must make room for. */
typedef struct {
    bool hud_on;
    bool two;          /* the divergence view: two panels side by side */
    bool bar;          /* a colour bar (every view but Fig. 2) */
    bool field_labels; /* a line of text above each field (two panels, compare's halves) */
    bool compare;      /* two runs side by side: field is A's, field_b B's (two: field2, field2_b) */
    int nhud;          /* the HUD's lines */
    ViewTextSize ts;
    const char *title;    /* the view's name or the pass (wrapped), NULL: none */
    const char *subtitle; /* a line under it in the labels' size (wrapped), NULL: none */
    const char *caption;  /* a lesson's caption, across the bottom (wrapped), NULL: none */
} ViewLayoutIn;

/* Where everything goes in a win_w x win_h window for a gw x gh grid.
 * Without overlays: the field fitted to the window (field2 w = 0). With
 * them: the HUD panel on the left (hud, when hud_on; w = 0 otherwise) with
 * its lines (hud_text), the plot's two caption lines (plot_caption), its
 * scale labels left of it and the plot at its bottom; the title (and the
 * subtitle) on top right of the HUD; the colour bar's strip on the right
 * (bar, its labels right of it); a lesson's caption across the bottom; and
 * the field fitted to the rest (area), a label line above it when asked
 * (label, label2). No two of the text blocks overlap, nor any of them a
 * field, the bar or the plot (test_viewmodel and test_window_lesson check). */
typedef struct {
    bool overlay;
    int margin;
    ViewTextSize ts;
    ViewRect area;          /* what the field (or the Fig. 2 layout) may fill */
    ViewRect field, field2; /* field2.w == 0 unless two */
    ViewRect field_b, field2_b; /* compare: B's */
    ViewRect label, label2, label_b, label2_b; /* the lines above them (field_labels) */
    ViewRect title, bar, hud, plot;
    ViewRect hud_text, plot_caption;
    ViewRect bar_labels;    /* the strip right of the bar */
    ViewTextBlock title_text, sub_text, caption_text;
} ViewLayout;
void viewmodel_layout_for(int win_w, int win_h, int gw, int gh, const ViewLayoutIn *in, ViewLayout *out);
/* viewmodel_layout_for with the HUD's 16 lines, a bar, no title, and the
 * text sizes viewmodel_text_size gives at zoom 0. */
void viewmodel_layout(int win_w, int win_h, int gw, int gh, bool hud_on, bool two, ViewLayout *out);

/* The colour maps (5 stops each, evenly spaced, RGB 0..1): SEQ for fields
 * from 0 (dark) up, DIV for signed fields (blue below 0, dark at 0, orange
 * above). viewmodel_colormap(map, t) is what the shader computes (linear
 * between stops, t clamped to 0..1); the stops go to the shader from here. */
enum { VIEWMODEL_MAP_SEQ, VIEWMODEL_MAP_DIV, VIEWMODEL_MAP_COUNT };
#define VIEWMODEL_MAP_STOPS 5
const float *viewmodel_map_stops(int map); /* 3 * VIEWMODEL_MAP_STOPS floats */
void viewmodel_colormap(int map, float t, float rgb[3]);

/* The live parameters (issue 11 point 4), in the HUD's order: vf, vd, vg,
 * σ, dt, Jacobi iterations, V-cycles, the swirl (vorticity confinement), the
 * force mode. */
#define VIEWMODEL_NPARAMS 9
int viewmodel_param_member(int i);          /* METHOD_P_* */
const char *viewmodel_param_label(int i);   /* "vf", "sigma", ... as shown */
/* Its value as shown ("0.5", "10", "balance"). */
void viewmodel_param_value(const SolverParams *p, int i, char *buf, size_t n);
/* One step up (dir > 0) or down: floats times or over 1.25 (vf, vd, vg
 * reach 0 below a small floor and leave it at the floor; σ and dt stay in
 * (0, 1]), Jacobi iterations times or over 1.5 (at least 1 a step),
 * V-cycles by 1, the force mode switches. 0, or -1 when the change would
 * leave method_params_check's ranges (p unchanged). */
int viewmodel_param_adjust(SolverParams *p, int i, int dir);

/* The HUD's numbers. */
typedef struct {
    long step;
    double time;         /* step · dt */
    int key, nkeys;      /* the active key (1 of 1 without a sequence) */
    long to_next;        /* steps to the next key (-1: none) */
    double error, mass, max_div;
    double rate;         /* steps per second */
    bool paused;
    int pass, npass;     /* pass by pass: the pass shown (from 1) of the step's, after the
                          * step ("step 3  pass 9/31", as the title); 0: none */
    int nfields;         /* > 1: error and mass are over every field (morph_observe_fields:
                          * Σ_f Σ|ρ_f − ρ*_f| / Σ_f Σρ*_f and Σ_f mass), and the HUD says
                          * "(N fields)" after them; 0 or 1: the one field's */
} ViewMetrics;

/* The HUD's lines into lines[max][VIEWMODEL_LINE]: the numbers, then a line
 * per parameter (the selected one marked with '>'). Returns the count; the
 * parameter i's line is lines[viewmodel_hud_param_line(i)]. */
#define VIEWMODEL_LINE 64
#define VIEWMODEL_HUD_LINES 20
int viewmodel_hud_lines(const ViewMetrics *mt, const SolverParams *p, int selected,
                        char lines[][VIEWMODEL_LINE], int max);
int viewmodel_hud_param_line(int i);
/* The parameter whose HUD line holds window row y (pixels from the top),
 * with the HUD's text starting at top0 and line_h pixels a line; -1: none. */
int viewmodel_hud_param_at(int y, int top0, int line_h);

/* The key help, one key a line (the same text the terminal gets). */
int viewmodel_help_lines(const char *const **lines);

/* The plot's history: the error and max|∇·u| at each recorded step, the
 * last VIEWMODEL_PLOT_N, oldest dropped. */
#define VIEWMODEL_PLOT_N 256
typedef struct {
    long step[VIEWMODEL_PLOT_N];
    float err[VIEWMODEL_PLOT_N], div[VIEWMODEL_PLOT_N];
    int n, head; /* head: the oldest's index once full */
} ViewPlot;
void viewmodel_plot_reset(ViewPlot *pl);
/* Adds a point; a step at or before the last one's (a restart, a jump back)
 * starts the history again. */
void viewmodel_plot_add(ViewPlot *pl, long step, double err, double max_div);
/* Two series of n positive values on one log scale: heights 0..1 into ya,
 * yb, between the decades 10^lo and 10^hi (at least one apart); a value
 * that is not positive and finite sits at 0. Returns n. */
int viewmodel_log_heights(const double *a, const double *b, int n, float *ya, float *yb, int *lo, int *hi);
/* The points oldest first as heights 0..1 on a log axis from 10^lo to 10^hi
 * (whole decades around both series; values <= 0 drawn at the bottom) into
 * y_err, y_div (VIEWMODEL_PLOT_N each). Returns the count. */
int viewmodel_plot_points(const ViewPlot *pl, float *y_err, float *y_div, int *lo, int *hi);

#endif
