/* test_viewmodel: the window's GL-free view model (issue 9, point 4), on the
 * CPU reference (no GL, no window): the title's key label and steps to the
 * next key on an uneven schedule, where next / previous go, and the Fig. 2
 * layout's rectangles (the old layout with one target; a row of panels,
 * apart and clear of the morph, for a sequence). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "morph.h"
#include "testlib.h"
#include "viewmodel.h"
#include "viewfield.h"
#include "cpu_solver.h"
#include <math.h>
#include <stdlib.h>

#define W 32
#define H 32
#define N (W * H)

static float disc[N], square[N], ring[N];

static void make_shapes(void)
{
    static const TestlibKeyShapes at = {{0.35, 0.4}, {0.65, 0.6}, {0.5, 0.5}, .solid_ring = true};
    testlib_key_shapes(W, H, &at, disc, square, ring);
}

static Morph *make(void)
{
    Morph *m = testlib_morph(W, H, NULL, disc, square, true, MORPH_CPU, NULL);
    CHECK(m != NULL, "morph_create");
    return m;
}

static void expect_label(Morph *m, const char *want)
{
    char got[96];
    viewmodel_key_label(m, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "step %ld, key %d: label '%s', expected '%s'", morph_step_count(m),
          morph_key(m), got, want);
}

/* Key 1 for steps 1..4, key 2 for 5..11, key 3 for 12..20: the steps to
 * the next key come from each key's own step. */
static void test_label_and_jumps(void)
{
    Morph *m = make();
    if (!m) return;
    expect_label(m, "");
    CHECK(viewmodel_jump_key(m, +1) == 0 && viewmodel_jump_key(m, -1) == 0, "one target: nowhere to jump");
    MorphKey k[3] = {{.step = 4, .target = square}, {.step = 11, .target = ring}, {.step = 20, .target = disc}};
    char err[256] = "";
    CHECK(morph_set_schedule(m, k, 3, NULL, 0, err, sizeof err) == 0, "morph_set_schedule: %s", err);
    expect_label(m, "  key 1/3 (4 to next)");
    CHECK(viewmodel_jump_key(m, +1) == 2 && viewmodel_jump_key(m, -1) == 1, "key 1: next 2, previous 1");
    static const struct { long step; const char *label; } at[] = {
        {1, "  key 1/3 (3 to next)"}, {4, "  key 1/3 (0 to next)"}, {5, "  key 2/3 (6 to next)"},
        {7, "  key 2/3 (4 to next)"}, {11, "  key 2/3 (0 to next)"}, {12, "  key 3/3"}, {25, "  key 3/3"}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        while (morph_step_count(m) < at[i].step) morph_step(m);
        expect_label(m, at[i].label);
    }
    CHECK(viewmodel_jump_key(m, +1) == 0 && viewmodel_jump_key(m, -1) == 2, "key 3: no next, previous 2");
    /* the window's previous key: key 2 from step 4 */
    CHECK(morph_goto_key(m, viewmodel_jump_key(m, -1)) == 0, "goto previous");
    expect_label(m, "  key 2/3 (7 to next)");
    CHECK(morph_goto_key(m, viewmodel_jump_key(m, +1)) == 0, "goto next");
    expect_label(m, "  key 3/3");
    morph_free(m);
}

static bool rect_is(ViewRect r, int x, int y, int w, int h)
{
    return r.x == x && r.y == y && r.w == w && r.h == h;
}

static void print_rect(const char *what, ViewRect r)
{
    printf("  %s (%d, %d) %dx%d\n", what, r.x, r.y, r.w, r.h);
}

/* One target: the layout of seed 003's Fig. 2 as before sequences (the
 * window tests read it at these places: a 64x64 grid in a 200x192 window). */
static void test_fig2_one_target(void)
{
    ViewRect m, p[2];
    viewmodel_fig2(200, 192, 64, 64, 2, &m, p);
    print_rect("morph", m);
    print_rect("start", p[0]);
    print_rect("target", p[1]);
    CHECK(rect_is(m, 36, 64, 128, 128), "the morph at (%d, %d) %dx%d", m.x, m.y, m.w, m.h);
    CHECK(rect_is(p[0], 34, 0, 64, 64) && rect_is(p[1], 102, 0, 64, 64), "start and target below");
}

/* Do A and B, each grown by the mark, overlap? */
static bool marks_overlap(ViewRect a, ViewRect b)
{
    int M = VIEWMODEL_MARK;
    return a.x - M < b.x + b.w + M && b.x - M < a.x + a.w + M && a.y - M < b.y + b.h + M &&
           b.y - M < a.y + a.h + M;
}

/* A sequence: npanels in rows below the morph, in reading order, the same
 * size, each with its mark inside the window, clear of the others' marks
 * and of the morph; exact at the window test_window_view uses. */
static void test_fig2_sequence(void)
{
    ViewRect m, p[258];
    viewmodel_fig2(144, 180, 32, 32, 4, &m, p);
    CHECK(rect_is(m, 0, 36, 144, 144), "3 keys, 32x32 grid, 144x180: morph (%d, %d) %dx%d", m.x, m.y, m.w,
          m.h);
    for (int i = 0; i < 4; i++)
        CHECK(rect_is(p[i], 2 + 36 * i, 2, 32, 32), "panel %d at (%d, %d) %dx%d", i, p[i].x, p[i].y, p[i].w,
              p[i].h);
    /* many keys wrap into rows, larger than one row would allow */
    viewmodel_fig2(768, 768, 256, 256, 41, &m, p);
    print_rect("40 keys, 768x768: morph", m);
    print_rect("panel 0", p[0]);
    print_rect("panel 40", p[40]);
    CHECK(p[40].y < p[0].y && p[0].w > 768 / 41, "40 keys: rows of panels larger than one row's");
    static const struct { int ww, wh, gw, gh; } cases[] = {
        {768, 768, 256, 256}, {640, 480, 128, 64}, {300, 900, 64, 128}, {1024, 200, 256, 256}, {97, 61, 40, 30}};
    static const int counts[] = {3, 4, 6, 11, 40, 257};
    int bad = 0, tried = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t n = 0; n < sizeof counts / sizeof counts[0]; n++) {
            int np = counts[n], M = VIEWMODEL_MARK, ww = cases[c].ww, wh = cases[c].wh;
            if (np * (1 + 2 * M) * (1 + 2 * M) > ww * wh / 3) continue; /* too small a window */
            tried++;
            viewmodel_fig2(ww, wh, cases[c].gw, cases[c].gh, np, &m, p);
            bool ok = m.x >= 0 && m.y >= 0 && m.x + m.w <= ww && m.y + m.h <= wh &&
                      (m.w >= ww - 1 || 3 * m.h >= 2 * wh - 3); /* as wide or 2/3 as high */
            for (int i = 0; i < np && ok; i++) {
                ok = p[i].w >= 1 && p[i].h >= 1 && p[i].w == p[0].w && p[i].h == p[0].h;
                ok = ok && p[i].x - M >= 0 && p[i].x + p[i].w + M <= ww && p[i].y - M >= 0;
                ok = ok && p[i].y + p[i].h + M <= m.y;
                if (i > 0) /* reading order: right of the one before, or a row below */
                    ok = ok && ((p[i].y == p[i - 1].y && p[i].x > p[i - 1].x) || p[i].y < p[i - 1].y);
                for (int j = 0; j < i && ok; j++) ok = !marks_overlap(p[i], p[j]);
            }
            if (!ok) {
                bad++;
                printf("  %dx%d window, %dx%d grid, %d panels: morph (%d, %d) %dx%d, panel 0 (%d, %d) %dx%d\n",
                       ww, wh, cases[c].gw, cases[c].gh, np, m.x, m.y, m.w, m.h, p[0].x, p[0].y, p[0].w,
                       p[0].h);
            }
        }
    CHECK(bad == 0, "%d of %d layouts overlap or leave the window", bad, tried);
    CHECK(tried >= 25, "only %d layouts tried", tried);
}

/* ---- the classroom views (issue 11) ---------------------------------------- */

static void test_view_names(void)
{
    for (int v = 0; v < VIEW_COUNT; v++) {
        CHECK(viewfield_parse(viewfield_name(v)) == v, "view %d's name '%s' does not parse back", v,
              viewfield_name(v));
        CHECK(strstr(viewfield_names(), viewfield_name(v)) != NULL, "'%s' is not in the names list",
              viewfield_name(v));
        CHECK(viewfield_title(v)[0] != '?', "view %d has no title", v);
    }
    CHECK(viewfield_parse("presure") == -1 && viewfield_parse(NULL) == -1, "a misspelt view parses");
    CHECK(VIEW_FIG2 == VIEW_COUNT - 1 && VIEW_DENSITY == 0, "the cycle starts at density and ends at fig2");
}

static void test_range_and_colours(void)
{
    CHECK(viewfield_nice(0.0031f) == 0.005f, "nice(0.0031) = %g", viewfield_nice(0.0031f));
    CHECK(viewfield_nice(1.0f) == 1.0f && viewfield_nice(1.2f) == 2.0f && viewfield_nice(3.0f) == 5.0f &&
          viewfield_nice(7.0f) == 10.0f, "nice of 1, 1.2, 3, 7");
    float v[4] = {-0.3f, 0.1f, 0.02f, NAN};
    ViewRange r = viewfield_range(v, 4, true);
    CHECK(r.lo == -0.5f && r.hi == 0.5f && r.sign, "signed range of -0.3..0.1: %g..%g", r.lo, r.hi);
    r = viewfield_range(v, 4, false);
    CHECK(r.lo == 0.0f && fabsf(r.hi - 0.1f) < 1e-7f, "unsigned range of max 0.1: %g..%g", r.lo, r.hi);
    float z[3] = {0, 0, 0};
    r = viewfield_range(z, 3, true);
    CHECK(r.lo == -1.0f && r.hi == 1.0f, "a field of zeros: %g..%g", r.lo, r.hi);
    for (int map = 0; map < VIEWMODEL_MAP_COUNT; map++) {
        const float *s = viewmodel_map_stops(map);
        float a[3], b[3], c[3];
        viewmodel_colormap(map, 0.0f, a);
        viewmodel_colormap(map, 1.0f, b);
        viewmodel_colormap(map, 0.125f, c);
        CHECK(a[0] == s[0] && b[2] == s[14], "map %d's ends are its stops", map);
        CHECK(fabsf(c[1] - 0.5f * (s[1] + s[4])) < 1e-6f, "map %d at 1/8 is half way to stop 1", map);
        viewmodel_colormap(map, -3.0f, c);
        CHECK(c[0] == a[0], "map %d clamps below 0", map);
    }
    float mid[3];
    viewmodel_colormap(VIEWMODEL_MAP_DIV, 0.5f, mid);
    CHECK(mid[0] + mid[1] + mid[2] < 0.3f, "the diverging map is dark at 0");
}

static bool inside(ViewRect a, ViewRect b) /* a within b */
{
    return a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
}
static bool apart(ViewRect a, ViewRect b)
{
    return a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
}

static void test_layout(void)
{
    ViewLayout l;
    viewmodel_layout(64, 64, 64, 64, true, false, &l);
    CHECK(!l.overlay && l.field.x == 0 && l.field.y == 0 && l.field.w == 64 && l.field.h == 64 && l.hud.w == 0,
          "a small window shows the field alone, as before");
    viewmodel_layout(1024, 768, 128, 128, true, false, &l);
    ViewRect win = {0, 0, 1024, 768};
    CHECK(l.overlay && l.hud.w >= VIEWMODEL_HUD_COLS * l.ts.cw && inside(l.plot, l.hud),
          "1024x768: the HUD and its plot");
    CHECK(inside(l.field, l.area) && apart(l.field, l.hud) && apart(l.field, l.bar) && apart(l.field, l.title),
          "the field clear of the HUD, the bar and the title");
    CHECK(inside(l.bar, win) && inside(l.title, win) && l.field.w == l.field.h && l.field.w >= 450,
          "1024x768: a square field %dx%d", l.field.w, l.field.h);
    viewmodel_layout(1024, 768, 128, 128, false, false, &l);
    CHECK(l.hud.w == 0 && l.field.w > 600, "HUD off: the field grows to %d", l.field.w);
    viewmodel_layout(1024, 768, 128, 128, true, true, &l);
    CHECK(l.field.w == l.field2.w && l.field.h == l.field2.h && apart(l.field, l.field2) &&
          inside(l.field2, l.area) && l.field2.x > l.field.x, "two panels side by side");
}

/* Issue 24: at 640x480, 1024x768 and 1920x1080, with a long title, a
 * subtitle and a caption, in every arrangement (HUD on and off, two panels,
 * compare), no two of the layout's boxes overlap (the text blocks, the
 * HUD's lines and the plot's caption, the fields, the bar and its labels,
 * the plot), all inside the window, and the text is about 1/40 of the
 * height or more at 1920x1080; Ctrl +/- steps it by 1.15. */
static void test_layout_sizes(void)
{
    static const int sz[3][2] = {{640, 480}, {1024, 768}, {1920, 1080}};
    const char *title = "step 12  pass 21/41  gather Jacobi 3/8 -> gathering error";
    const char *sub = "gathering solve: one Jacobi iteration on e (not the pressure's)";
    const char *cap = "The gathering diffuses the error only where smoke and target both are: watch the "
                      "edges sharpen while the flow has already brought the smoke.";
    for (int k = 0; k < 3; k++) {
        int WW = sz[k][0], HH = sz[k][1], px = viewmodel_text_px(WW, HH, 0);
        ViewTextSize ts = viewmodel_text_size(px, viewmodel_title_px(px));
        if (k == 2) CHECK(px * 40 >= HH && ts.ch * 40 >= HH, "1920x1080: text %d px (cells %d) >= 1/40 of %d", px, ts.ch, HH);
        for (int c = 0; c < 8; c++) {
            ViewLayoutIn in = {.hud_on = c & 1, .two = (c & 2) != 0, .compare = (c & 4) != 0, .bar = true,
                               .field_labels = (c & 2) != 0, .nhud = 17, .ts = ts, .title = title,
                               .subtitle = sub, .caption = cap};
            ViewLayout l;
            viewmodel_layout_for(WW, HH, 128, 128, &in, &l);
            ViewRect b[24];
            int n = 0;
            ViewRect win = {0, 0, WW, HH};
            b[n++] = l.title_text.r, b[n++] = l.sub_text.r, b[n++] = l.caption_text.r;
            b[n++] = l.field, b[n++] = l.field2, b[n++] = l.bar, b[n++] = l.bar_labels;
            if (in.compare) b[n++] = l.field_b, b[n++] = l.field2_b, b[n++] = l.label, b[n++] = l.label_b;
            else b[n++] = l.label, b[n++] = l.label2;
            if (in.hud_on && !in.compare) b[n++] = l.hud_text, b[n++] = l.plot, b[n++] = l.plot_caption;
            int bad = 0;
            for (int i = 0; i < n; i++) {
                if (b[i].w <= 0) continue;
                if (!inside(b[i], win)) bad++, printf("  %dx%d case %d: box %d outside\n", WW, HH, c, i);
                for (int j = i + 1; j < n; j++)
                    if (b[j].w > 0 && !apart(b[i], b[j]))
                        bad++, printf("  %dx%d case %d: boxes %d and %d overlap\n", WW, HH, c, i, j);
            }
            CHECK(bad == 0, "%dx%d, case %d: %d overlaps", WW, HH, c, bad);
            CHECK(l.overlay && l.field.w >= 64, "%dx%d case %d: a field of %d pixels", WW, HH, c, l.field.w);
            if (in.hud_on && !in.compare)
                CHECK(l.plot.w > 0 && inside(l.hud_text, l.hud), "%dx%d: the plot fits under the HUD's lines", WW, HH);
        }
    }
    CHECK(viewmodel_text_px(1024, 768, 0) == 21 && viewmodel_text_px(1024, 768, 1) == 25 &&
              viewmodel_text_px(1024, 768, -1) == 19, "Ctrl +/-: 21 px, then 25 and 19");
    CHECK(viewmodel_text_px(1024, 768, 99) == viewmodel_text_px(1024, 768, VIEWMODEL_ZOOM_MAX), "the zoom's range");
    char lines[4][4 * VIEWMODEL_WRAP_COLS];
    int n = viewmodel_wrap("one two three four five", 9, lines, 4);
    CHECK(n == 3 && !strcmp(lines[0], "one two") && !strcmp(lines[1], "three") && !strcmp(lines[2], "four five"),
          "wrap: %d '%s' '%s'", n, lines[0], lines[1]);
    n = viewmodel_wrap("aaaa bbbb cccc dddd", 9, lines, 1);
    CHECK(n == 1 && !strcmp(lines[0], "aaaa b..."), "wrap to one line ends in ...: '%s'", lines[0]);
    CHECK(viewmodel_columns("\xcf\x81\xe2\x88\x87u") == 3, "columns count characters");
}

static void test_params(void)
{
    SolverParams p;
    method_params_default(&p);
    int n_vf = -1, n_sigma = -1;
    for (int i = 0; i < VIEWMODEL_NPARAMS; i++) {
        if (viewmodel_param_member(i) == METHOD_P_VF) n_vf = i;
        if (viewmodel_param_member(i) == METHOD_P_SIGMA) n_sigma = i;
    }
    CHECK(n_vf == 0 && n_sigma >= 0, "vf first, sigma listed");
    static const int want[VIEWMODEL_NPARAMS] = {METHOD_P_VF, METHOD_P_VD, METHOD_P_VG, METHOD_P_SIGMA,
                                                METHOD_P_DT, METHOD_P_JACOBI, METHOD_P_VCYCLES, METHOD_P_SWIRL,
                                                METHOD_P_FORCE};
    for (int i = 0; i < VIEWMODEL_NPARAMS; i++) {
        CHECK(viewmodel_param_member(i) == want[i], "parameter %d is member %d", i, viewmodel_param_member(i));
        SolverParams q = p;
        for (int k = 0; k < 40; k++) { /* up to the range's end and back: always in range */
            viewmodel_param_adjust(&q, i, +1);
            CHECK(method_params_check(&q) == NULL, "%s up leaves the range", viewmodel_param_label(i));
        }
        for (int k = 0; k < 80; k++) {
            viewmodel_param_adjust(&q, i, -1);
            CHECK(method_params_check(&q) == NULL, "%s down leaves the range", viewmodel_param_label(i));
        }
    }
    SolverParams q = p;
    CHECK(viewmodel_param_adjust(&q, 0, +1) == 0 && fabsf(q.vf - 0.625f) < 1e-6f, "vf up: 0.625, got %g", q.vf);
    for (int k = 0; k < 60 && q.vf > 0.0f; k++) viewmodel_param_adjust(&q, 0, -1);
    CHECK(q.vf == 0.0f, "vf reaches 0 down");
    CHECK(viewmodel_param_adjust(&q, 0, -1) == -1, "vf below 0 is refused");
    CHECK(viewmodel_param_adjust(&q, 0, +1) == 0 && q.vf == 0.01f, "vf leaves 0 at its floor 0.01: %g", q.vf);
    q = p;
    for (int k = 0; k < 30; k++) viewmodel_param_adjust(&q, n_sigma, +1);
    CHECK(q.sigma == 1.0f, "sigma stops at 1: %g", q.sigma);
    q = p;
    CHECK(viewmodel_param_adjust(&q, 8, +1) == 0 && q.force == SOLVER_FORCE_FATTAL, "force mode switches");
    CHECK(viewmodel_param_adjust(&q, 8, -1) == 0 && q.force == SOLVER_FORCE_BALANCE, "and back");
    q = p; /* the swirl: down to 0 below its floor 0.5, and back to it */
    for (int k = 0; k < 30 && q.swirl > 0.0f; k++) viewmodel_param_adjust(&q, 7, -1);
    CHECK(q.swirl == 0.0f && viewmodel_param_adjust(&q, 7, +1) == 0 && q.swirl == 0.5f, "swirl 0, then 0.5: %g",
          q.swirl);
    q = p;
    q.vcycles = 0;
    for (int k = 0; k < 30; k++) viewmodel_param_adjust(&q, 5, -1);
    CHECK(q.jacobi == 1, "no V-cycles: the Jacobi iterations stop at 1 (%d)", q.jacobi);
    char b[32];
    viewmodel_param_value(&p, 8, b, sizeof b);
    CHECK(strcmp(b, "balance") == 0, "force mode shown as '%s'", b);
    viewmodel_param_value(&p, 5, b, sizeof b);
    CHECK(strcmp(b, "10") == 0, "Jacobi shown as '%s'", b);
}

static void test_hud_and_plot(void)
{
    SolverParams p;
    method_params_default(&p);
    ViewMetrics mt = {.step = 120, .time = 1.2, .key = 2, .nkeys = 3, .to_next = 30, .error = 0.31234,
                      .mass = 812.5, .max_div = 0.00123, .rate = 42.0};
    char lines[VIEWMODEL_HUD_LINES][VIEWMODEL_LINE];
    int n = viewmodel_hud_lines(&mt, &p, 2, lines, VIEWMODEL_HUD_LINES);
    CHECK(n == viewmodel_hud_param_line(VIEWMODEL_NPARAMS - 1) + 1, "%d HUD lines", n);
    long step;
    double t, e, mass, div, rate;
    int k, nk;
    long next;
    CHECK(sscanf(lines[0], "step %ld t %lf", &step, &t) == 2 && step == 120 && t == 1.2, "'%s'", lines[0]);
    CHECK(sscanf(lines[1], "key %d of %d (%ld to next)", &k, &nk, &next) == 3 && k == 2 && nk == 3 && next == 30,
          "'%s'", lines[1]);
    CHECK(sscanf(lines[2], "error %lf", &e) == 1 && fabs(e - 0.3123) < 1e-9, "'%s'", lines[2]);
    CHECK(sscanf(lines[3], "mass %lf", &mass) == 1 && mass == 812.5, "'%s'", lines[3]);
    CHECK(strstr(lines[4], "0.00123") != NULL, "'%s'", lines[4]);
    (void)div;
    CHECK(sscanf(lines[5], "%lf steps/s", &rate) == 1 && rate == 42.0, "'%s'", lines[5]);
    CHECK(lines[viewmodel_hud_param_line(2)][0] == '>' && lines[viewmodel_hud_param_line(1)][0] == ' ' &&
          strstr(lines[viewmodel_hud_param_line(2)], "0.002"), "the selected parameter marked: '%s'",
          lines[viewmodel_hud_param_line(2)]);
    CHECK(viewmodel_hud_param_at(12 + viewmodel_hud_param_line(3) * 20 + 5, 12, 20) == 3 &&
          viewmodel_hud_param_at(12, 12, 20) == -1, "a click on a parameter's line finds it");
    mt.paused = true;
    viewmodel_hud_lines(&mt, &p, 0, lines, VIEWMODEL_HUD_LINES);
    CHECK(strcmp(lines[5], "paused") == 0, "paused: '%s'", lines[5]);
    /* a single pair: the key line says when it arrives (its --arrive, as
     * the morph timed it), or nothing to arrive at when untimed */
    ViewMetrics one = mt;
    one.key = one.nkeys = 1, one.to_next = -1;
    SolverParams timed = p;
    timed.arrive = 7.71f, timed.dt = 0.01f;
    viewmodel_hud_lines(&one, &timed, 0, lines, VIEWMODEL_HUD_LINES);
    CHECK(strcmp(lines[1], "arrives 7.71 s after its target") == 0, "a single pair's arrival: '%s'", lines[1]);
    timed.arrive = 0.0f;
    viewmodel_hud_lines(&one, &timed, 0, lines, VIEWMODEL_HUD_LINES);
    CHECK(strcmp(lines[1], "key 1 of 1") == 0, "untimed: '%s'", lines[1]);

    ViewPlot pl;
    viewmodel_plot_reset(&pl);
    float ye[VIEWMODEL_PLOT_N], yd[VIEWMODEL_PLOT_N];
    int lo, hi;
    viewmodel_plot_add(&pl, 1, 1.0, 0.001);
    viewmodel_plot_add(&pl, 2, 0.1, 0.01);
    n = viewmodel_plot_points(&pl, ye, yd, &lo, &hi);
    CHECK(n == 2 && lo == -3 && hi == 0, "2 points, decades %d..%d", lo, hi);
    CHECK(fabsf(ye[0] - 1.0f) < 1e-6f && fabsf(ye[1] - 2.0f / 3.0f) < 1e-6f && fabsf(yd[0]) < 1e-6f &&
          fabsf(yd[1] - 1.0f / 3.0f) < 1e-6f, "log heights");
    viewmodel_plot_add(&pl, 1, 0.5, 0.5); /* a restart */
    CHECK(viewmodel_plot_points(&pl, ye, yd, &lo, &hi) == 1, "a step back starts again");
    for (int s = 2; s < 2 + 2 * VIEWMODEL_PLOT_N; s++) viewmodel_plot_add(&pl, s, 1.0 / s, 0.0);
    n = viewmodel_plot_points(&pl, ye, yd, &lo, &hi);
    CHECK(n == VIEWMODEL_PLOT_N && pl.step[pl.head] == 2 + VIEWMODEL_PLOT_N, "the last %d kept, oldest first", n);
    CHECK(ye[0] > ye[n - 1] && yd[0] == 0.0f, "falling error; 0 at the bottom");
}

/* A state of W x H with zeroed fields (the caller fills some). */
static MethodState *zero_state(void)
{
    static MethodState st;
    static float buf[METHOD_FIELD_COUNT][N];
    memset(buf, 0, sizeof buf);
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) st.field[k] = buf[k];
    st.pot_c = 1.0f;
    st.dscale = 1.0f;
    st.nstep = 1000;
    return &st;
}

static void test_fields_synthetic(void)
{
    SolverParams p;
    method_params_default(&p);
    char err[256];
    ViewField f;
    MethodState *st = zero_state();
    /* a rigid rotation, counter-clockwise on screen (y up): u = -Ω y_up, v_up = Ω x,
     * in rows (y down) u = Ω (y - c), v_down = -Ω... v positive down: v = -Ω (x - c) */
    const float om = 2.0f, hh = 1.0f / W;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            float xf = (float)i * hh - 0.5f, yc = ((float)j + 0.5f) * hh - 0.5f; /* x faces */
            float xc = ((float)i + 0.5f) * hh - 0.5f, yf = (float)j * hh - 0.5f; /* y faces */
            st->field[METHOD_FIELD_VEL_U][j * W + i] = i > 0 ? om * yc : 0.0f;
            st->field[METHOD_FIELD_VEL_V][j * W + i] = j > 0 ? -om * xc : 0.0f;
            (void)xf, (void)yf;
        }
    CHECK(viewfield_compute(VIEW_VORTICITY, st, &p, W, H, &f, err, sizeof err) == 0, "%s", err);
    double d = 0.0;
    for (int j = 2; j < H - 2; j++)
        for (int i = 2; i < W - 2; i++) d = fmax(d, fabs(f.scalar[j * W + i] - 2.0 * om));
    CHECK(d < 1e-3, "a counter-clockwise rotation's vorticity is 2Ω = %g inside (off by %g)", 2.0 * om, d);
    CHECK(f.range.sign && f.range.hi >= 2.0f * om, "signed range up to %g", f.range.hi);
    viewfield_free(&f);
    CHECK(viewfield_compute(VIEW_SPEED, st, &p, W, H, &f, err, sizeof err) == 0, "%s", err);
    int c = (H / 2 + 4) * W + W / 2; /* 4.5 cells below the centre */
    CHECK(fabsf(f.scalar[c] - om * hh * hypotf(4.5f, 0.5f)) < 1e-4f, "speed %g at (0.5, 4.5) cells from the axis",
          f.scalar[c]);
    viewfield_free(&f);
    CHECK(viewfield_compute(VIEW_VELOCITY, st, &p, W, H, &f, err, sizeof err) == 0 && f.vec, "%s", err);
    CHECK(fabsf(f.vec[2 * c] - om * 4.5f * hh) < 1e-5f && fabsf(f.vec[2 * c + 1] + om * 0.5f * hh) < 1e-5f,
          "below the centre the flow goes right (%g, %g)", f.vec[2 * c], f.vec[2 * c + 1]);
    viewfield_free(&f);
    CHECK(viewfield_compute(VIEW_FIG2, st, &p, W, H, &f, err, sizeof err) == -1 && strstr(err, "fig2"),
          "fig2 computes nothing: %s", err);

    /* uniform smoke, a disc target: the force points into the disc, the
     * gathering conserves mass and fills the disc's edge */
    st = zero_state();
    static const TestlibShape sh = {.domain = true, .width = 0.05};
    testlib_disc(st->field[METHOD_FIELD_TARGET], W, H, &sh, 0.5, 0.5, 0.2, 1.0);
    BlurSpec spec;
    method_blur_spec(W, H, p.sigma, &spec);
    ref_pass_blur(W, H, &spec, st->field[METHOD_FIELD_TARGET], st->field[METHOD_FIELD_TARGET_BLUR]);
    for (int k = 0; k < N; k++) st->field[METHOD_FIELD_DENSITY][k] = 0.2f;
    p.force = SOLVER_FORCE_FATTAL;
    CHECK(viewfield_compute(VIEW_FORCE, st, &p, W, H, &f, err, sizeof err) == 0 && f.vec, "%s", err);
    int l = (H / 2) * W + 5, r = (H / 2) * W + W - 6, t = 5 * W + W / 2;
    CHECK(f.vec[2 * l] > 0.0f && f.vec[2 * r] < 0.0f && f.vec[2 * t + 1] > 0.0f && f.vmax > 0.0f,
          "Fattal's force pulls toward the disc (%g, %g, %g)", f.vec[2 * l], f.vec[2 * r], f.vec[2 * t + 1]);
    CHECK(fabsf(f.scalar[l] - hypotf(f.vec[2 * l], f.vec[2 * l + 1])) < 1e-6f, "|F| is the arrows' length");
    viewfield_free(&f);
    CHECK(viewfield_compute(VIEW_GATHERING, st, &p, W, H, &f, err, sizeof err) == 0, "%s", err);
    double sum = 0.0, amax = 0.0, inner = 0.0;
    for (int k = 0; k < N; k++) sum += f.scalar[k], amax = fmax(amax, fabs(f.scalar[k]));
    for (int k = 0; k < N; k++)
        if (st->field[METHOD_FIELD_TARGET][k] > 0.5f) inner = fmax(inner, f.scalar[k]);
    CHECK(amax > 0.0 && fabs(sum) < 1e-4 * amax * N, "gathering conserves mass: sum %g of max %g", sum, amax);
    CHECK(inner > 0.0, "gathering adds smoke inside the disc (max %g)", inner);
    viewfield_free(&f);
    p.gather = false;
    CHECK(viewfield_compute(VIEW_GATHERING, st, &p, W, H, &f, err, sizeof err) == 0 && f.max1 == 0.0,
          "gathering off: 0");
    viewfield_free(&f);
}

/* On a morph after some steps: the pressure view is the pressure; the
 * divergence after the projection is ∇·u of the velocity (its max the
 * metrics' max|∇·u|), and before it the velocity that subtract_grad turns
 * into the state's. */
static void test_fields_on_morph(void)
{
    Morph *m = make();
    if (!m) return;
    for (int k = 0; k < 12; k++) morph_step(m);
    static float fields[METHOD_FIELD_COUNT][N], start[N], target[N];
    MorphState ms = {.start = start, .target = target};
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) ms.solver.field[k] = fields[k];
    CHECK(morph_get_state(m, &ms) == 0, "state");
    char err[256];
    ViewField f;
    CHECK(viewfield_compute(VIEW_PRESSURE, &ms.solver, morph_params(m), W, H, &f, err, sizeof err) == 0, "%s", err);
    CHECK(memcmp(f.scalar, fields[METHOD_FIELD_PRESSURE], sizeof fields[0]) == 0, "the pressure view is p");
    viewfield_free(&f);
    CHECK(viewfield_compute(VIEW_DIVERGENCE, &ms.solver, morph_params(m), W, H, &f, err, sizeof err) == 0 &&
          f.scalar2, "%s", err);
    double mass, e, md;
    morph_metrics(m, &mass, &e, &md);
    CHECK(fabs(f.max2 - md) <= 1e-6 * fmax(md, 1e-9) + 1e-9, "after: max %g, the metrics' %g", f.max2, md);
    CHECK(f.max1 > 10.0 * f.max2, "the projection removes most divergence: %g -> %g", f.max1, f.max2);
    /* the velocity before: u + ∇p; subtract_grad gives the state's back */
    static float ub[N], vb[N], ua[N], va[N], np[N];
    for (int k = 0; k < N; k++) np[k] = -fields[METHOD_FIELD_PRESSURE][k];
    ref_pass_subtract_grad(W, H, np, fields[METHOD_FIELD_VEL_U], fields[METHOD_FIELD_VEL_V], ub, vb);
    ref_pass_subtract_grad(W, H, fields[METHOD_FIELD_PRESSURE], ub, vb, ua, va);
    double d = 0.0;
    for (int k = 0; k < N; k++)
        d = fmax(d, fmax(fabs(ua[k] - fields[METHOD_FIELD_VEL_U][k]), fabs(va[k] - fields[METHOD_FIELD_VEL_V][k])));
    CHECK(d < 1e-6, "subtract_grad of the velocity before gives the state's (off by %g)", d);
    static float div[N];
    ref_pass_divergence(W, H, ub, vb, div);
    CHECK(memcmp(div, f.scalar, sizeof div) == 0, "before: ∇·(u + ∇p)");
    viewfield_free(&f);
    /* adding and erasing smoke */
    TestlibAddErase s = testlib_add_erase(m, W, H);
    CHECK(s.add_rc == 0, "add smoke");
    CHECK(fabs(s.added - s.gauss) < 1e-3 * s.gauss, "adding smoke adds its Gaussian: %g of %g", s.added, s.gauss);
    CHECK(s.erase_rc == 0, "erase smoke");
    CHECK(s.m2 < s.m1 && s.nonneg && s.centre == 0.0f, "erasing removes smoke, never below 0 (%g -> %g)", s.m1,
          s.m2);
    CHECK(morph_splat_density(m, 1.0f, 1.0f, 1.0f, 0.0f) == -1, "a zero radius is refused");
    morph_free(m);
}

int main(void)
{
    make_shapes();
    RUN(test_label_and_jumps);
    RUN(test_fig2_one_target);
    RUN(test_fig2_sequence);
    RUN(test_view_names);
    RUN(test_range_and_colours);
    RUN(test_layout);
    RUN(test_layout_sizes);
    RUN(test_params);
    RUN(test_hud_and_plot);
    RUN(test_fields_synthetic);
    RUN(test_fields_on_morph);
    return check_done();
}
