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

/* ---- the classroom views (issue 11): layout, colours, parameters, HUD ----- */

/* Overlays (the view's name, its colour bar, the HUD, the key help) are
 * drawn only in a window at least this large; a smaller one shows the
 * field alone, as before (and as the pixel tests of small windows expect). */
#define VIEWMODEL_OVERLAY_MIN_W 480
#define VIEWMODEL_OVERLAY_MIN_H 360
/* The HUD panel's width, the colour bar's strip (bar and labels) and the
 * title line's height, in pixels. */
#define VIEWMODEL_HUD_W 330
#define VIEWMODEL_BAR_W 110
#define VIEWMODEL_TITLE_H 40

/* Where everything goes in a win_w x win_h window for a gw x gh grid.
 * Without overlays: the field fitted to the window (field2 w = 0). With
 * them: the HUD panel on the left (hud, when hud_on; w = 0 otherwise),
 * the colour bar's strip on the right, the title line on top, and the
 * field fitted to the rest (two panels side by side, 8 pixels apart, when
 * two: the divergence before and after). plot is the HUD's bottom part. */
typedef struct {
    bool overlay;
    ViewRect area;          /* what the field (or the Fig. 2 layout) may fill */
    ViewRect field, field2; /* field2.w == 0 unless two */
    ViewRect title, bar, hud, plot;
} ViewLayout;
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
 * σ, dt, Jacobi iterations, V-cycles, the force mode. */
#define VIEWMODEL_NPARAMS 8
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
    int nfields;         /* > 1: error and mass are over every field (morph_observe_fields:
                          * Σ_f Σ|ρ_f − ρ*_f| / Σ_f Σρ*_f and Σ_f mass), and the HUD says
                          * "(N fields)" after them; 0 or 1: the one field's */
} ViewMetrics;

/* The HUD's lines into lines[max][VIEWMODEL_LINE]: the numbers, then a line
 * per parameter (the selected one marked with '>'). Returns the count; the
 * parameter i's line is lines[viewmodel_hud_param_line(i)]. */
#define VIEWMODEL_LINE 64
#define VIEWMODEL_HUD_LINES 16
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
