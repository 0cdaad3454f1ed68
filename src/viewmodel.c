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
static void fig2_rows(int win_w, int win_h, int gw, int gh, int np, int lh, ViewRect *morph, ViewRect *panels)
{
    const int g = 2 * VIEWMODEL_MARK;
    int rows = 1, cols = np, pw = 0;
    for (int r = 1; r <= np; r++) {
        int c = (np + r - 1) / r;
        int by_w = win_w / c - g, by_h = (int)((long)(win_h / 3 / r - g - lh) * gw / gh);
        int w = by_w < by_h ? by_w : by_h;
        if (w > pw) pw = w, rows = r, cols = c;
    }
    if (pw < 1) pw = 1;
    int ph = (int)((long)pw * gh / gw);
    if (ph < 1) ph = 1;
    int band = rows * (ph + g + lh);
    ViewRect m = fit(win_w, win_h - band > 1 ? win_h - band : 1, (float)gw, (float)gh);
    int y0 = (win_h - m.h - band) / 2, x0 = (win_w - cols * (pw + g)) / 2;
    *morph = (ViewRect){m.x, y0 + band, m.w, m.h};
    for (int i = 0; i < np; i++) {
        int row = i / cols, col = i % cols;
        panels[i] = (ViewRect){x0 + col * (pw + g) + VIEWMODEL_MARK,
                               y0 + band - (row + 1) * (ph + g + lh) + lh + VIEWMODEL_MARK, pw, ph};
    }
}

void viewmodel_fig2_labelled(int win_w, int win_h, int gw, int gh, int npanels, int label_h, ViewRect *morph,
                             ViewRect *panels)
{
    if (label_h < 0) label_h = 0;
    if (npanels > 2) {
        fig2_rows(win_w, win_h, gw, gh, npanels, label_h, morph, panels);
        return;
    }
    /* seed 003's Fig. 2: the morph in the top 2/3, the start and the
     * target below it, each half its size, 4 pixels apart (and their
     * labels below them) */
    int h = win_h - label_h > 1 ? win_h - label_h : 1;
    ViewRect r = fit(win_w, h, (float)gw, (float)gh * 1.5f);
    r.y += label_h;
    int top = r.h * 2 / 3, small = r.h - top;
    int mw = top * gw / gh, sw = small * gw / gh;
    *morph = (ViewRect){r.x + (r.w - mw) / 2, r.y + small, mw, top};
    int x0 = r.x + r.w / 2 - (npanels == 2 ? sw + 2 : sw / 2);
    for (int i = 0; i < npanels; i++) panels[i] = (ViewRect){x0 + i * (sw + 4), r.y, sw, small};
}

void viewmodel_fig2(int win_w, int win_h, int gw, int gh, int npanels, ViewRect *morph, ViewRect *panels)
{
    viewmodel_fig2_labelled(win_w, win_h, gw, gh, npanels, 0, morph, panels);
}

/* ---- the classroom views ---------------------------------------------------- */

static ViewRect fit_in(ViewRect a, float aw, float ah)
{
    ViewRect r = fit(a.w > 1 ? a.w : 1, a.h > 1 ? a.h : 1, aw, ah);
    r.x += a.x;
    r.y += a.y;
    return r;
}

int viewmodel_text_px(int win_w, int win_h, int zoom)
{
    if (zoom < VIEWMODEL_ZOOM_MIN) zoom = VIEWMODEL_ZOOM_MIN;
    if (zoom > VIEWMODEL_ZOOM_MAX) zoom = VIEWMODEL_ZOOM_MAX;
    double a = (double)win_h / 36.0, b = (double)win_w / 48.0;
    double px = (a < b ? a : b) * pow(1.15, zoom);
    /* zoomed in, at most what leaves the HUD half the width and the field
     * room beside it (HUD_COLS + 2 characters of 0.6 em in W/2) */
    double most = fmin((double)win_w / (2.0 * (VIEWMODEL_HUD_COLS + 2) * 0.6), (double)win_h / 16.0);
    if (zoom > 0 && px > most) px = fmax(most, (a < b ? a : b));
    int p = (int)lround(px);
    return p < VIEWMODEL_TEXT_PX_MIN ? VIEWMODEL_TEXT_PX_MIN : p > VIEWMODEL_TEXT_PX_MAX ? VIEWMODEL_TEXT_PX_MAX : p;
}

int viewmodel_title_px(int text_px) { return (int)lround(text_px * 1.35); }

/* DejaVu Sans Mono: advance 1233/2048 em, ascender 1901, descender 483
 * (text.c: cw the advance, ch ascender + descender + 1, each rounded down
 * from FreeType's 26.6 metrics, about as here) */
static void cells(int px, int *cw, int *ch)
{
    *cw = (int)(px * 1233.0 / 2048.0 + 0.5);
    *ch = (int)ceil(px * 1901.0 / 2048.0) + (int)ceil(px * 483.0 / 2048.0) + 1;
    if (*cw < 1) *cw = 1;
}

ViewTextSize viewmodel_text_size(int text_px, int title_px)
{
    ViewTextSize t;
    cells(text_px, &t.cw, &t.ch);
    cells(title_px, &t.tcw, &t.tch);
    return t;
}

int viewmodel_columns(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}

/* Bytes of the first n characters of s. */
static size_t bytes_of(const char *s, int n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (int c = 0; p[i] && c <= n; i++)
        if ((p[i] & 0xC0) != 0x80 && ++c > n) break;
    return i;
}

int viewmodel_wrap(const char *s, int cols, char lines[][4 * VIEWMODEL_WRAP_COLS], int max)
{
    int n = 0;
    if (!s || max <= 0) return 0;
    if (cols < 1) cols = 1;
    if (cols > VIEWMODEL_WRAP_COLS) cols = VIEWMODEL_WRAP_COLS;
    while (*s == ' ') s++;
    while (*s && n < max) {
        const char *nl = strchr(s, '\n');
        size_t para = nl ? (size_t)(nl - s) : strlen(s);
        size_t fit = bytes_of(s, cols), take;
        if (fit >= para) {
            take = para; /* the rest of the paragraph fits */
        } else {
            take = fit;
            while (take > 0 && s[take] != ' ') take--; /* break at the last space that fits */
            if (take == 0) take = fit;                  /* a word longer than a line: cut */
        }
        size_t len = take;
        while (len > 0 && s[len - 1] == ' ') len--;
        bool last = n == max - 1, more = s[take] && (s[take] != '\n' || s[take + 1]);
        if (last && more) { /* the text goes on: "..." at the end of the last line */
            size_t room = bytes_of(s, cols - 3 > 0 ? cols - 3 : 0);
            if (len > room) len = room;
            while (len > 0 && s[len - 1] == ' ') len--;
            snprintf(lines[n], 4 * VIEWMODEL_WRAP_COLS, "%.*s...", (int)len, s);
        } else {
            snprintf(lines[n], 4 * VIEWMODEL_WRAP_COLS, "%.*s", (int)len, s);
        }
        n++;
        s += take;
        if (*s == '\n') s++;
        while (*s == ' ') s++;
    }
    return n;
}

/* f (and f2 beside it, 'gap' apart, when two) fitted in r below a label
 * strip of label_h (then label, label2 over each). */
static void place(ViewRect r, int gw, int gh, bool two, int label_h, int gap, ViewRect *f, ViewRect *f2,
                  ViewRect *lab, ViewRect *lab2)
{
    ViewRect a = r;
    if (label_h > 0) a.h -= label_h;
    if (a.h < 1) a.h = 1;
    if (!two) {
        *f = fit_in(a, (float)gw, (float)gh);
        *f2 = (ViewRect){0, 0, 0, 0};
    } else {
        ViewRect both = fit_in((ViewRect){a.x, a.y, a.w - gap > 1 ? a.w - gap : 1, a.h}, 2.0f * (float)gw, (float)gh);
        int pw = both.w / 2;
        *f = (ViewRect){both.x, both.y, pw, both.h};
        *f2 = (ViewRect){both.x + pw + gap, both.y, pw, both.h};
    }
    if (label_h > 0) {
        /* the fields sit at the bottom of the strip's room, the labels on them */
        int dy = (a.h - f->h) / 2;
        f->y = a.y + dy;
        if (two) f2->y = f->y;
        *lab = (ViewRect){f->x, f->y + f->h, f->w, label_h};
        if (lab2) *lab2 = two ? (ViewRect){f2->x, f2->y + f2->h, f2->w, label_h} : (ViewRect){0, 0, 0, 0};
    }
}

/* The cells the layout measures in: the HUD's and the title's characters,
 * and the margin. */
typedef struct {
    int cw, ch, tcw, tch, m;
} LayoutCells;

/* A window too small for text: the fields (two halves when comparing) fill it. */
static void layout_bare(int win_w, int win_h, int gw, int gh, const ViewLayoutIn *in, ViewLayout *o)
{
    ViewRect a = {0, 0, win_w, win_h};
    o->area = a;
    if (in->compare) {
        ViewRect ha = {0, 0, (win_w - 8) / 2, win_h}, hb = {win_w - (win_w - 8) / 2, 0, (win_w - 8) / 2, win_h};
        place(ha, gw, gh, in->two, 0, 8, &o->field, &o->field2, NULL, NULL);
        place(hb, gw, gh, in->two, 0, 8, &o->field_b, &o->field2_b, NULL, NULL);
    } else {
        place(a, gw, gh, in->two, 0, 8, &o->field, &o->field2, NULL, NULL);
    }
}

/* The HUD down the left (its lines, the plot's caption, the plot), when on
 * and not comparing: the width it takes (0 without it). */
static int layout_hud(int win_w, int win_h, const ViewLayoutIn *in, LayoutCells c, ViewLayout *o)
{
    if (!in->hud_on || in->compare) return 0;
    const int cw = c.cw, ch = c.ch, m = c.m;
    int hw = VIEWMODEL_HUD_COLS * cw + 2 * m;
    if (hw > win_w / 2) hw = win_w / 2;
    o->hud = (ViewRect){0, 0, hw, win_h};
    int nh = in->nhud > 0 ? in->nhud : 0;
    o->hud_text = (ViewRect){m, win_h - m - nh * ch, hw - 2 * m, nh * ch};
    int lw = VIEWMODEL_PLOT_LABEL_COLS * cw;
    int room = o->hud_text.y - m - 2 * ch - m / 2 - m; /* under the lines and the caption */
    int pw = hw - 2 * m - lw, ph = room < pw ? room : pw;
    if (ph >= 2 * ch + 2 && pw > 8) {
        o->plot = (ViewRect){m + lw, m, pw, ph};
        o->plot_caption = (ViewRect){m, m + ph + m / 2, hw - 2 * m, 2 * ch};
    }
    return hw;
}

/* The title and subtitle from the top at tx, tw wide, wrapped: where the
 * text ends (the title's rectangle spans it). */
static int layout_titles(int win_h, int tx, int tw, const ViewLayoutIn *in, LayoutCells c, ViewLayout *o)
{
    int top = win_h - c.m;
    if (in->title && *in->title) {
        ViewTextBlock *b = &o->title_text;
        b->n = viewmodel_wrap(in->title, tw / c.tcw, b->line, 2);
        b->r = (ViewRect){tx, top - b->n * c.tch, tw, b->n * c.tch};
        top = b->r.y;
    }
    if (in->subtitle && *in->subtitle) {
        ViewTextBlock *b = &o->sub_text;
        b->n = viewmodel_wrap(in->subtitle, tw / c.cw, b->line, 2);
        b->r = (ViewRect){tx, top - b->n * c.ch, tw, b->n * c.ch};
        top = b->r.y;
    }
    o->title = (ViewRect){tx, top, tw, win_h - top};
    return top;
}

/* The caption along the bottom: where the room above it begins. */
static int layout_caption(int tx, int tw, const ViewLayoutIn *in, LayoutCells c, ViewLayout *o)
{
    const int m = c.m;
    if (!in->caption || !*in->caption) return m;
    ViewTextBlock *b = &o->caption_text;
    b->n = viewmodel_wrap(in->caption, tw / c.cw, b->line, VIEWMODEL_WRAP_LINES);
    b->r = (ViewRect){tx, m, tw, b->n * c.ch};
    return m + b->n * c.ch + m;
}

/* The colour bar and its labels on the right, between bottom and top:
 * where the room left of it ends. */
static int layout_bar(int win_w, int top, int bottom, const ViewLayoutIn *in, LayoutCells c, ViewLayout *o)
{
    const int cw = c.cw, ch = c.ch, m = c.m;
    if (!in->bar) return win_w - m;
    int bw = ch > 12 ? ch : 12, lw = VIEWMODEL_BAR_COLS * cw;
    int strip = m + bw + m / 2 + lw + m;
    int h = top - bottom - ch;
    o->bar = (ViewRect){win_w - strip + m, bottom + ch / 2, bw, h > 3 * ch ? h : 3 * ch};
    o->bar_labels = (ViewRect){o->bar.x + bw + m / 2, bottom, lw, top - bottom};
    return win_w - strip;
}

/* Comparing: the area in two halves, A left and B right, each with its
 * label block over its fields. */
static void layout_halves(int gw, int gh, const ViewLayoutIn *in, LayoutCells c, ViewLayout *o)
{
    const int ch = c.ch, m = c.m, gap = 2 * m;
    int lh = c.tch + (in->hud_on ? 2 * ch : 0) + m / 2;
    int hw = (o->area.w - gap) / 2;
    ViewRect ha = {o->area.x, o->area.y, hw, o->area.h}, hb = {o->area.x + o->area.w - hw, o->area.y, hw, o->area.h};
    place(ha, gw, gh, in->two, lh, m, &o->field, &o->field2, &o->label, NULL);
    place(hb, gw, gh, in->two, lh, m, &o->field_b, &o->field2_b, &o->label_b, NULL);
    /* a half's label spans its fields */
    if (in->two) {
        o->label.w = o->field2.x + o->field2.w - o->field.x;
        o->label_b.w = o->field2_b.x + o->field2_b.w - o->field_b.x;
    }
    /* the label blocks as wide as their half, when the field is narrower */
    o->label.x = ha.x, o->label.w = ha.w;
    o->label_b.x = hb.x, o->label_b.w = hb.w;
}

void viewmodel_layout_for(int win_w, int win_h, int gw, int gh, const ViewLayoutIn *in, ViewLayout *o)
{
    memset(o, 0, sizeof *o);
    o->ts = in->ts;
    o->overlay = win_w >= VIEWMODEL_OVERLAY_MIN_W && win_h >= VIEWMODEL_OVERLAY_MIN_H;
    LayoutCells c;
    c.cw = in->ts.cw > 0 ? in->ts.cw : 1, c.ch = in->ts.ch > 0 ? in->ts.ch : 1;
    c.tcw = in->ts.tcw > 0 ? in->ts.tcw : c.cw, c.tch = in->ts.tch > 0 ? in->ts.tch : c.ch;
    const int m = c.m = c.ch / 3 > 4 ? c.ch / 3 : 4;
    o->margin = m;
    if (!o->overlay) {
        layout_bare(win_w, win_h, gw, gh, in, o);
        return;
    }
    int left = layout_hud(win_w, win_h, in, c, o);
    int tx = left + m, tw = win_w - tx - m;
    int top = layout_titles(win_h, tx, tw, in, c, o) - m;
    int bottom = layout_caption(tx, tw, in, c, o);
    int right = layout_bar(win_w, top, bottom, in, c, o);
    o->area = (ViewRect){tx, bottom, right - tx > 1 ? right - tx : 1, top - bottom > 1 ? top - bottom : 1};
    if (in->compare) {
        layout_halves(gw, gh, in, c, o);
        return;
    }
    place(o->area, gw, gh, in->two, in->field_labels ? c.ch + m / 2 : 0, 2 * m, &o->field, &o->field2, &o->label,
          &o->label2);
}

void viewmodel_layout(int win_w, int win_h, int gw, int gh, bool hud_on, bool two, ViewLayout *out)
{
    int px = viewmodel_text_px(win_w, win_h, 0);
    ViewLayoutIn in = {.hud_on = hud_on, .two = two, .bar = true, .field_labels = two, .nhud = 16,
                       .ts = viewmodel_text_size(px, viewmodel_title_px(px))};
    viewmodel_layout_for(win_w, win_h, gw, gh, &in, out);
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
    {METHOD_P_VCYCLES, "V-cycles", 0.0f}, {METHOD_P_SWIRL, "swirl", 0.5f},
    {METHOD_P_FORCE, "force mode", 0.0f},
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
    method_params_settle(&q);
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
    else if (mt->nkeys <= 1 && p && p->arrive > 0.0f) /* a single pair: when it arrives (from its target's setting: a swap sets it again) */
        snprintf(key, sizeof key, "arrives %.2f s after its target", (double)p->arrive);
    else snprintf(key, sizeof key, "key %d of %d", mt->key, mt->nkeys);
    char rate[32];
    snprintf(rate, sizeof rate, "%.1f steps/s", mt->rate);
    char all[VIEWMODEL_HUD_LINES][VIEWMODEL_LINE];
    int n = 0;
    if (mt->pass > 0) snprintf(all[n++], VIEWMODEL_LINE, "step %ld  pass %d/%d", mt->step, mt->pass, mt->npass);
    else snprintf(all[n++], VIEWMODEL_LINE, "step %ld  t %.3f", mt->step, mt->time);
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
    "R         record a video on / off",
    "Ctrl + -  text and plot larger / smaller",
    "a lesson: space next step, Backspace back",
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
