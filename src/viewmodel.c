/* viewmodel: the window's GL-free decisions; see viewmodel.h. */
#include "viewmodel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void viewmodel_key_label(const Morph *m, char *buf, size_t n)
{
    if (n == 0) return;
    buf[0] = '\0';
    if (!morph_has_schedule(m)) return;
    int k = morph_key(m), nk = morph_key_count(m);
    if (k < nk)
        snprintf(buf, n, "  key %d/%d (%ld to next)", k, nk, morph_key_step(m, k) - morph_step_count(m));
    else
        snprintf(buf, n, "  key %d/%d", k, nk);
}

int viewmodel_jump_key(const Morph *m, int dir)
{
    if (!morph_has_schedule(m) || dir == 0) return 0;
    int k = morph_key(m), nk = morph_key_count(m);
    if (dir > 0) return k < nk ? k + 1 : 0;
    return k > 1 ? k - 1 : 1;
}

/* The largest rectangle of aspect aw:ah centred in the window (as the other
 * views fit the grid). */
static ViewRect fit(int win_w, int win_h, float aw, float ah)
{
    float sx = (float)win_w / aw, sy = (float)win_h / ah, s = sx < sy ? sx : sy;
    ViewRect r = {0, 0, (int)(aw * s), (int)(ah * s)};
    r.x = (win_w - r.w) / 2;
    r.y = (win_h - r.h) / 2;
    return r;
}

/* A sequence: panels in rows below the morph, each in a cell with room
 * for its mark (M all round, so a gap of 2M between panels); the rows take
 * at most a third of the window's height, and as many rows as make the
 * panels largest (1 for a few keys); the morph fits in the rest. */
static void fig2_rows(int win_w, int win_h, int gw, int gh, int np, ViewRect *morph, ViewRect *panels)
{
    const int g = 2 * VIEWMODEL_MARK;
    int rows = 1, cols = np, pw = 0;
    for (int r = 1; r <= np; r++) {
        int c = (np + r - 1) / r;
        int by_w = win_w / c - g, by_h = (int)((long)(win_h / 3 / r - g) * gw / gh);
        int w = by_w < by_h ? by_w : by_h;
        if (w > pw) pw = w, rows = r, cols = c;
    }
    if (pw < 1) pw = 1;
    int ph = (int)((long)pw * gh / gw);
    if (ph < 1) ph = 1;
    int band = rows * (ph + g);
    ViewRect m = fit(win_w, win_h - band > 1 ? win_h - band : 1, (float)gw, (float)gh);
    int y0 = (win_h - m.h - band) / 2, x0 = (win_w - cols * (pw + g)) / 2;
    *morph = (ViewRect){m.x, y0 + band, m.w, m.h};
    for (int i = 0; i < np; i++) {
        int row = i / cols, col = i % cols;
        panels[i] = (ViewRect){x0 + col * (pw + g) + VIEWMODEL_MARK,
                               y0 + band - (row + 1) * (ph + g) + VIEWMODEL_MARK, pw, ph};
    }
}

void viewmodel_fig2(int win_w, int win_h, int gw, int gh, int npanels, ViewRect *morph,
                    ViewRect *panels)
{
    if (npanels > 2) {
        fig2_rows(win_w, win_h, gw, gh, npanels, morph, panels);
        return;
    }
    /* seed 003's Fig. 2: the morph in the top 2/3, the start and the
     * target below it, each half its size, 4 pixels apart */
    ViewRect r = fit(win_w, win_h, (float)gw, (float)gh * 1.5f);
    int top = r.h * 2 / 3, small = r.h - top;
    int mw = top * gw / gh, sw = small * gw / gh;
    *morph = (ViewRect){r.x + (r.w - mw) / 2, r.y + small, mw, top};
    int x0 = r.x + r.w / 2 - (npanels == 2 ? sw + 2 : sw / 2);
    for (int i = 0; i < npanels; i++) panels[i] = (ViewRect){x0 + i * (sw + 4), r.y, sw, small};
}

/* ---- the classroom views ---------------------------------------------------- */

static ViewRect fit_in(ViewRect a, float aw, float ah)
{
    ViewRect r = fit(a.w > 1 ? a.w : 1, a.h > 1 ? a.h : 1, aw, ah);
    r.x += a.x;
    r.y += a.y;
    return r;
}

void viewmodel_layout(int win_w, int win_h, int gw, int gh, bool hud_on, bool two, ViewLayout *o)
{
    memset(o, 0, sizeof *o);
    o->overlay = win_w >= VIEWMODEL_OVERLAY_MIN_W && win_h >= VIEWMODEL_OVERLAY_MIN_H;
    ViewRect a = {0, 0, win_w, win_h};
    if (o->overlay) {
        int left = hud_on ? VIEWMODEL_HUD_W : 0;
        if (hud_on) {
            o->hud = (ViewRect){0, 0, VIEWMODEL_HUD_W, win_h};
            int ph = win_h / 4 < 200 ? win_h / 4 : 200;
            o->plot = (ViewRect){12, 12, VIEWMODEL_HUD_W - 24, ph};
        }
        o->bar = (ViewRect){win_w - VIEWMODEL_BAR_W + 12, 40, 26, win_h - VIEWMODEL_TITLE_H - 80};
        o->title = (ViewRect){left + 8, win_h - VIEWMODEL_TITLE_H, win_w - left - 16, VIEWMODEL_TITLE_H};
        a = (ViewRect){left + 4, 4, win_w - left - VIEWMODEL_BAR_W - 8, win_h - VIEWMODEL_TITLE_H - 8};
    }
    o->area = a;
    if (!two) {
        o->field = fit_in(a, (float)gw, (float)gh);
        return;
    }
    const int gap = 8;
    ViewRect both = fit_in((ViewRect){a.x, a.y, a.w - gap, a.h}, 2.0f * (float)gw, (float)gh);
    int pw = both.w / 2;
    o->field = (ViewRect){both.x, both.y, pw, both.h};
    o->field2 = (ViewRect){both.x + pw + gap, both.y, pw, both.h};
}

static const float map_stops[VIEWMODEL_MAP_COUNT][3 * VIEWMODEL_MAP_STOPS] = {
    /* SEQ: black, violet, red, orange, pale yellow (inferno-like) */
    {0.0f, 0.0f, 0.02f, 0.34f, 0.06f, 0.43f, 0.80f, 0.18f, 0.25f, 0.98f, 0.58f, 0.05f, 0.99f, 0.98f, 0.70f},
    /* DIV: light blue, blue, near black, orange-red, pale orange */
    {0.55f, 0.80f, 1.0f, 0.15f, 0.35f, 0.85f, 0.06f, 0.06f, 0.08f, 0.85f, 0.30f, 0.10f, 1.0f, 0.80f, 0.45f},
};

const float *viewmodel_map_stops(int map)
{
    return map_stops[map >= 0 && map < VIEWMODEL_MAP_COUNT ? map : 0];
}

void viewmodel_colormap(int map, float t, float rgb[3])
{
    const float *s = viewmodel_map_stops(map);
    if (!(t > 0.0f)) t = 0.0f; /* NaN too */
    if (t > 1.0f) t = 1.0f;
    float x = t * (float)(VIEWMODEL_MAP_STOPS - 1);
    int k = (int)x;
    if (k > VIEWMODEL_MAP_STOPS - 2) k = VIEWMODEL_MAP_STOPS - 2;
    float f = x - (float)k;
    for (int c = 0; c < 3; c++) rgb[c] = s[3 * k + c] + (s[3 * (k + 1) + c] - s[3 * k + c]) * f;
}

static const struct {
    int member;
    const char *label;
    float floor; /* vf, vd, vg: below it down goes to 0, and 0 up goes to it */
} params[VIEWMODEL_NPARAMS] = {
    {METHOD_P_VF, "vf (force)", 0.01f},   {METHOD_P_VD, "vd (damping)", 0.05f},
    {METHOD_P_VG, "vg (gather)", 1e-4f},  {METHOD_P_SIGMA, "sigma (blur)", 0.0f},
    {METHOD_P_DT, "dt", 0.0f},            {METHOD_P_JACOBI, "Jacobi iters", 0.0f},
    {METHOD_P_VCYCLES, "V-cycles", 0.0f}, {METHOD_P_FORCE, "force mode", 0.0f},
};

int viewmodel_param_member(int i) { return i >= 0 && i < VIEWMODEL_NPARAMS ? params[i].member : -1; }
const char *viewmodel_param_label(int i) { return i >= 0 && i < VIEWMODEL_NPARAMS ? params[i].label : "?"; }

void viewmodel_param_value(const SolverParams *p, int i, char *buf, size_t n)
{
    int k = viewmodel_param_member(i);
    if (k < 0) {
        snprintf(buf, n, "?");
        return;
    }
    double v = method_param_get(p, k);
    if (k == METHOD_P_FORCE) snprintf(buf, n, "%s", (int)v == SOLVER_FORCE_FATTAL ? "fattal" : "balance");
    else if (method_param_info[k].kind == 'i') snprintf(buf, n, "%d", (int)v);
    else snprintf(buf, n, "%.4g", v);
}

int viewmodel_param_adjust(SolverParams *p, int i, int dir)
{
    int k = viewmodel_param_member(i);
    if (k < 0 || dir == 0) return -1;
    SolverParams q = *p;
    method_params_resolve(&q);
    double v = method_param_get(&q, k), nv = v;
    if (k == METHOD_P_FORCE) {
        nv = (int)v == SOLVER_FORCE_FATTAL ? SOLVER_FORCE_BALANCE : SOLVER_FORCE_FATTAL;
    } else if (k == METHOD_P_VCYCLES) {
        nv = v + (dir > 0 ? 1 : -1);
    } else if (k == METHOD_P_JACOBI) {
        int a = (int)v, d = (int)(a * 0.5);
        if (dir > 0) nv = a + (d > 1 ? d : 1);
        else nv = a - ((int)(a / 3.0) > 1 ? (int)(a / 3.0) : 1);
    } else {
        float fl = params[i].floor;
        nv = dir > 0 ? v * 1.25 : v / 1.25;
        if (fl > 0.0f && dir > 0 && v < fl) nv = fl;
        if (fl > 0.0f && dir < 0 && v <= fl * 1.0001) nv = 0.0;
        if ((k == METHOD_P_SIGMA || k == METHOD_P_DT) && nv > 1.0) nv = 1.0;
    }
    if (nv == v) return -1;
    method_param_set(&q, k, nv);
    if (method_params_check(&q)) return -1;
    *p = q;
    return 0;
}

/* the numbers' lines, then a blank and a heading: the parameters start here */
#define HUD_PARAM0 8

int viewmodel_hud_param_line(int i) { return HUD_PARAM0 + i; }

int viewmodel_hud_param_at(int y, int top0, int line_h)
{
    if (line_h <= 0 || y < top0) return -1;
    int i = (y - top0) / line_h - HUD_PARAM0;
    return i >= 0 && i < VIEWMODEL_NPARAMS ? i : -1;
}

int viewmodel_hud_lines(const ViewMetrics *mt, const SolverParams *p, int selected,
                        char lines[][VIEWMODEL_LINE], int max)
{
    char key[VIEWMODEL_LINE];
    if (mt->to_next >= 0) snprintf(key, sizeof key, "key %d of %d (%ld to next)", mt->key, mt->nkeys, mt->to_next);
    else snprintf(key, sizeof key, "key %d of %d", mt->key, mt->nkeys);
    char rate[32];
    snprintf(rate, sizeof rate, "%.1f steps/s", mt->rate);
    char all[VIEWMODEL_HUD_LINES][VIEWMODEL_LINE];
    int n = 0;
    snprintf(all[n++], VIEWMODEL_LINE, "step %ld  t %.3f", mt->step, mt->time);
    snprintf(all[n++], VIEWMODEL_LINE, "%s", key);
    if (mt->nfields > 1) { /* several fields: the sums over them all (morph_observe_fields) */
        snprintf(all[n++], VIEWMODEL_LINE, "error %.4f (%d fields)", mt->error, mt->nfields);
        snprintf(all[n++], VIEWMODEL_LINE, "mass  %.6g (%d fields)", mt->mass, mt->nfields);
    } else {
        snprintf(all[n++], VIEWMODEL_LINE, "error %.4f", mt->error);
        snprintf(all[n++], VIEWMODEL_LINE, "mass  %.6g", mt->mass);
    }
    snprintf(all[n++], VIEWMODEL_LINE, "max|\xe2\x88\x87\xc2\xb7u| %.3g", mt->max_div);
    snprintf(all[n++], VIEWMODEL_LINE, "%s", mt->paused ? "paused" : rate);
    snprintf(all[n++], VIEWMODEL_LINE, " ");
    snprintf(all[n++], VIEWMODEL_LINE, "parameters (\xe2\x86\x91\xe2\x86\x93 +\xe2\x88\x92 wheel)");
    for (int i = 0; i < VIEWMODEL_NPARAMS; i++) {
        char v[32];
        viewmodel_param_value(p, i, v, sizeof v);
        snprintf(all[n++], VIEWMODEL_LINE, "%c %-13s %s", i == selected ? '>' : ' ', params[i].label, v);
    }
    int c = n < max ? n : max;
    for (int k = 0; k < c; k++) memcpy(lines[k], all[k], VIEWMODEL_LINE);
    return c;
}

static const char *const help[] = {
    "space     pause / resume",
    "s         one step",
    "r  Home   restart",
    "t         swap start and target",
    "n  p      next / previous key (PgDn PgUp)",
    "v  V      next / previous view",
    "up down   select a parameter (also Tab)",
    "+  -      change it (also = _ right left)",
    "]  [      driving force vf up / down",
    "g         gathering on / off",
    ".         pass by pass: the next pass",
    "i         HUD on / off",
    "h         this help on / off",
    "c         save a screenshot",
    "f  F11    fullscreen on / off",
    "q  Esc    quit",
    "mouse: left drag stirs, right drag adds",
    "smoke, middle (or shift+left) erases it;",
    "wheel changes the selected parameter,",
    "a click on one in the HUD selects it",
};

int viewmodel_help_lines(const char *const **lines)
{
    *lines = help;
    return (int)(sizeof help / sizeof help[0]);
}

void viewmodel_plot_reset(ViewPlot *pl) { memset(pl, 0, sizeof *pl); }

void viewmodel_plot_add(ViewPlot *pl, long step, double err, double max_div)
{
    if (pl->n > 0) {
        int last = (pl->head + pl->n - 1) % VIEWMODEL_PLOT_N;
        if (step <= pl->step[last]) viewmodel_plot_reset(pl);
    }
    int at = (pl->head + pl->n) % VIEWMODEL_PLOT_N;
    pl->step[at] = step;
    pl->err[at] = (float)err;
    pl->div[at] = (float)max_div;
    if (pl->n < VIEWMODEL_PLOT_N) pl->n++;
    else pl->head = (pl->head + 1) % VIEWMODEL_PLOT_N;
}

int viewmodel_log_heights(const double *a, const double *b, int n, float *ya, float *yb, int *lo, int *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < n; k++) {
        double v[2] = {a[k], b[k]};
        for (int s = 0; s < 2; s++)
            if (v[s] > 0.0 && isfinite(v[s])) mn = fmin(mn, log10(v[s])), mx = fmax(mx, log10(v[s]));
    }
    if (!(mn <= mx)) mn = -1.0, mx = 0.0;
    *lo = (int)floor(mn);
    *hi = (int)ceil(mx);
    if (*hi <= *lo) *hi = *lo + 1;
    double span = (double)(*hi - *lo);
    for (int k = 0; k < n; k++) {
        double v[2] = {a[k], b[k]};
        float *y[2] = {ya, yb};
        for (int s = 0; s < 2; s++)
            y[s][k] = v[s] > 0.0 && isfinite(v[s]) ? (float)((log10(v[s]) - *lo) / span) : 0.0f;
    }
    return n;
}

int viewmodel_plot_points(const ViewPlot *pl, float *y_err, float *y_div, int *lo, int *hi)
{
    double e[VIEWMODEL_PLOT_N], d[VIEWMODEL_PLOT_N];
    for (int k = 0; k < pl->n; k++) {
        int at = (pl->head + k) % VIEWMODEL_PLOT_N;
        e[k] = pl->err[at];
        d[k] = pl->div[at];
    }
    return viewmodel_log_heights(e, d, pl->n, y_err, y_div, lo, hi);
}
