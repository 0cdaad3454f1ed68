/* The classroom views (issue 11, points 1, 3, 4) in a real window (tier 3,
 * under xvfb-run), in-process: one window, one fragment-backend morph of a
 * 32x32 grid, and view_run once per check, each returning after its
 * screenshot; the morph is then still there, so each view's pixels are
 * checked against the state read back from the GPU at the same step
 * (morph_get_state), the view's field (viewfield.h, checked on its own in
 * test_viewmodel) and the colour map; the HUD's numbers against
 * morph_metrics; each new key against its effect. Two fields in one window:
 * the composite against export.h's formula, each field's view, the keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testgl.h"
#include "glctx.h"
#include "image.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"
#include "view.h"

#define G 32
#define N (G * G)
#define WIN_W 800
#define WIN_H 480
#define STEPS 10

static char g_tmp[256], g_dir[4096];
static Morph *g_m;
static float g_fields[METHOD_FIELD_COUNT][N], g_start[N], g_target[N];
static MorphState g_st;

typedef struct {
    Image *c[3];
} Shot;

static void shot_free(Shot *s)
{
    for (int k = 0; k < 3; k++) image_free(s->c[k]), s->c[k] = NULL;
}

/* RGB of window pixel (x, y), y up from the bottom, 0..1 */
static void px(const Shot *s, int x, int y, float rgb[3])
{
    int row = s->c[0]->h - 1 - y;
    for (int k = 0; k < 3; k++) rgb[k] = s->c[k]->px[row * s->c[k]->w + x];
}

/* view_run with view V and KEYS (may be NULL) up to step max; its
 * screenshot loaded into S. 0, or -1. */
static int show(int view, const char *keys, long max, const char *name, Shot *s, bool hud)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    ViewOptions vo = {.steps_per_frame = 2, .max_steps = max, .shader_dir = g_dir, .color = {1, 1, 1},
                      .screenshot = path, .keys = keys, .view = view, .no_hud = !hud};
    int rc = view_run(NULL, g_m, &vo);
    CHECK(rc == 0, "view_run of %s exited %d", viewfield_name(view), rc);
    memset(s, 0, sizeof *s);
    if (rc) return -1;
    static const ImageChannel ch[3] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B};
    for (int k = 0; k < 3; k++)
        if (!(s->c[k] = testlib_load(path, ch[k]))) return -1;
    CHECK(s->c[0]->w == WIN_W && s->c[0]->h == WIN_H, "screenshot %dx%d", s->c[0]->w, s->c[0]->h);
    g_st.start = g_start;
    g_st.target = g_target;
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) g_st.solver.field[k] = g_fields[k];
    CHECK(morph_get_state(g_m, &g_st) == 0, "read the state back");
    return 0;
}

/* The field's value at window pixel (x, y) of rectangle r, as display.glsl
 * samples it: bilinear between cell centres, clamped at the edges. */
static float sample(const float *f, ViewRect r, int x, int y)
{
    float u = ((float)x + 0.5f - (float)r.x) / (float)r.w, v = ((float)y + 0.5f - (float)r.y) / (float)r.h;
    float p = u * G - 0.5f, q = (1.0f - v) * G - 0.5f;
    int i0 = (int)floorf(p), j0 = (int)floorf(q);
    float tx = p - (float)i0, ty = q - (float)j0;
#define AT(i, j) f[(((j) < 0 ? 0 : (j) > G - 1 ? G - 1 : (j)) * G) + ((i) < 0 ? 0 : (i) > G - 1 ? G - 1 : (i))]
    float a = AT(i0, j0) + (AT(i0 + 1, j0) - AT(i0, j0)) * tx;
    float b = AT(i0, j0 + 1) + (AT(i0 + 1, j0 + 1) - AT(i0, j0 + 1)) * tx;
#undef AT
    return a + (b - a) * ty;
}

/* The largest colour difference over a grid of pixels in r between the
 * screenshot and the colour map of f over range; pixels of the arrows
 * (white, when arrows) are skipped. Returns the max difference and counts
 * the pixels compared. */
static double compare_mapped(const Shot *s, const float *f, ViewRect r, ViewRange range, bool arrows, int *count)
{
    double d = 0.0;
    *count = 0;
    int map = range.sign ? VIEWMODEL_MAP_DIV : VIEWMODEL_MAP_SEQ;
    for (int y = r.y + 3; y < r.y + r.h - 3; y += 7)
        for (int x = r.x + 3; x < r.x + r.w - 3; x += 7) {
            float got[3], want[3];
            px(s, x, y, got);
            if (arrows && got[0] > 0.99f && got[1] > 0.99f && got[2] > 0.99f) continue;
            viewmodel_colormap(map, (sample(f, r, x, y) - range.lo) / (range.hi - range.lo), want);
            for (int k = 0; k < 3; k++) d = fmax(d, fabs(got[k] - want[k]));
            (*count)++;
        }
    return d;
}

#define TOL (2.5 / 255.0)

/* Each computed view's pixels are its field read back, through its colour
 * map and range, at ~2500 pixels; the range is the field's nice range. */
static void test_views_against_read_back(void)
{
    static const int views[] = {VIEW_SPEED, VIEW_VORTICITY, VIEW_PRESSURE, VIEW_DIVERGENCE, VIEW_FORCE,
                                VIEW_GATHERING};
    for (size_t k = 0; k < sizeof views / sizeof views[0]; k++) {
        int v = views[k];
        char name[64];
        snprintf(name, sizeof name, "view_%s.png", viewfield_name(v));
        Shot s;
        if (show(v, NULL, STEPS, name, &s, true) == 0) {
            ViewField f;
            char err[256];
            CHECK(viewfield_compute(v, &g_st.solver, morph_params(g_m), G, G, &f, err, sizeof err) == 0, "%s", err);
            const ViewShown *sh = view_shown();
            CHECK(sh->view == v && sh->overlay && sh->text, "the %s view shown with overlays and text", name);
            CHECK(sh->range.lo == f.range.lo && sh->range.hi == f.range.hi,
                  "%s: the colour bar's range %g..%g, the read-back's %g..%g", name, sh->range.lo, sh->range.hi,
                  f.range.lo, f.range.hi);
            ViewLayout l = view_shown()->layout;
            int n;
            double d = compare_mapped(&s, f.scalar, l.field, f.range, v == VIEW_FORCE, &n);
            printf("  %-10s range %g..%g, %d pixels, max diff %.1f/255\n", viewfield_name(v), f.range.lo,
                   f.range.hi, n, d * 255.0);
            CHECK(n > (v == VIEW_DIVERGENCE ? 400 : 1000) && d <= TOL, "%s: %d pixels differ from the read-back by %.1f/255", name, n, d * 255.0);
            if (v == VIEW_DIVERGENCE) {
                d = compare_mapped(&s, f.scalar2, l.field2, f.range, false, &n);
                printf("  divergence after: %d pixels, max diff %.1f/255 (max before %g, after %g)\n", n,
                       d * 255.0, f.max1, f.max2);
                CHECK(n > 400 && d <= TOL, "divergence after: differs by %.1f/255", d * 255.0);
            }
            /* the colour bar: its middle row is the map at 1/2 */
            float got[3], want[3];
            px(&s, l.bar.x + l.bar.w / 2, l.bar.y + l.bar.h / 2, got);
            viewmodel_colormap(f.range.sign ? VIEWMODEL_MAP_DIV : VIEWMODEL_MAP_SEQ,
                               ((float)(l.bar.h / 2) + 0.5f - 0.5f) / (float)(l.bar.h - 1), want);
            double bd = fmax(fabs(got[0] - want[0]), fmax(fabs(got[1] - want[1]), fabs(got[2] - want[2])));
            CHECK(bd <= 3.0 / 255.0, "%s: the colour bar's middle differs by %.1f/255", name, bd * 255.0);
            viewfield_free(&f);
        }
        shot_free(&s);
    }
}

/* The density views show the density texture as before (grey = ρ, clamped
 * to 1), now in the layout's rectangle; the velocity view is the density
 * with arrows in the speed's colours. */
static void test_density_and_velocity(void)
{
    Shot s;
    ViewLayout l;
    if (show(VIEW_DENSITY, NULL, STEPS, "density.png", &s, true) == 0) {
        l = view_shown()->layout;
        float rho[N];
        for (int k = 0; k < N; k++) rho[k] = fminf(g_fields[METHOD_FIELD_DENSITY][k], 1.0f);
        double d = 0.0;
        for (int y = l.field.y + 2; y < l.field.y + l.field.h - 2; y += 5)
            for (int x = l.field.x + 2; x < l.field.x + l.field.w - 2; x += 5) {
                float got[3];
                px(&s, x, y, got);
                d = fmax(d, fabs(got[0] - fminf(sample(rho, l.field, x, y), 1.0f)));
            }
        printf("  density view vs the density read back: max diff %.1f/255\n", d * 255.0);
        CHECK(d <= TOL, "the density view differs from the density by %.1f/255", d * 255.0);
    }
    shot_free(&s);
    if (show(VIEW_VELOCITY, NULL, STEPS, "velocity.png", &s, true) == 0) {
        l = view_shown()->layout;
        int grey = 0, arrows = 0, n = 0;
        for (int y = l.field.y; y < l.field.y + l.field.h; y++)
            for (int x = l.field.x; x < l.field.x + l.field.w; x++) {
                float got[3];
                px(&s, x, y, got);
                n++;
                if (fabsf(got[0] - got[1]) < 0.01f && fabsf(got[1] - got[2]) < 0.01f) grey++;
                else arrows++;
            }
        printf("  velocity view: %d of %d pixels grey (the density), %d coloured (arrows)\n", grey, n, arrows);
        CHECK(grey > n * 8 / 10 && arrows > 200, "the velocity view: %d grey, %d arrow pixels", grey, arrows);
    }
    shot_free(&s);
}

/* The HUD's numbers are the metrics of the step shown; its panel is there,
 * and gone with 'i'. */
static void test_hud_numbers(void)
{
    Shot s;
    if (show(VIEW_PRESSURE, NULL, STEPS + 2, "hud.png", &s, true) == 0) {
        const ViewShown *sh = view_shown();
        double mass, err, md;
        CHECK(morph_metrics(g_m, &mass, &err, &md) == 0, "metrics");
        long step = -1;
        double t = -1, e = -1, ms = -1, dv = -1;
        sscanf(sh->hud[0], "step %ld t %lf", &step, &t);
        sscanf(sh->hud[2], "error %lf", &e);
        sscanf(sh->hud[3], "mass %lf", &ms);
        const char *p = strchr(sh->hud[4], ' ');
        if (p) dv = atof(p);
        printf("  HUD: '%s' '%s' '%s' '%s'; metrics: step %ld error %.6f mass %.6g max div %.3g\n", sh->hud[0],
               sh->hud[2], sh->hud[3], sh->hud[4], morph_step_count(g_m), err, mass, md);
        CHECK(step == morph_step_count(g_m) && fabs(t - morph_time(g_m)) < 1e-3, "HUD step %ld t %g", step, t);
        CHECK(fabs(e - err) <= 0.00005 + 1e-9, "HUD error %g, metrics %g", e, err);
        CHECK(fabs(ms - mass) <= 5e-6 * mass, "HUD mass %g, metrics %g", ms, mass);
        /* the HUD shows 3 significant digits: half a unit of the third */
        CHECK(fabs(dv - md) <= 0.005 * md + 1e-12, "HUD max div %g, metrics %g", dv, md);
        /* text was drawn in the panel: bright pixels on its dark ground */
        int bright = 0;
        for (int y = WIN_H - 120; y < WIN_H; y++)
            for (int x = 0; x < 300; x++) {
                float c[3];
                px(&s, x, y, c);
                bright += c[0] > 0.5f;
            }
        CHECK(bright > 300, "the HUD's text: %d bright pixels", bright);
    }
    shot_free(&s);
    if (show(VIEW_PRESSURE, "i", STEPS + 2, "nohud.png", &s, true) == 0) {
        float c[3];
        px(&s, 100, WIN_H / 2, c);
        CHECK(fabsf(c[0] - 0.08f) < 0.01f && fabsf(c[2] - 0.1f) < 0.01f, "'i' hides the HUD (%g %g %g)", c[0],
              c[1], c[2]);
    }
    shot_free(&s);
}

/* Keys: v and V cycle, Tab selects, + and - change, h shows the help, c
 * saves a screenshot; the parameters reach the morph. */
static void test_keys(void)
{
    Shot s;
    SolverParams p0 = *morph_params(g_m);
    if (show(VIEW_DENSITY, "vvv", STEPS + 2, "k1.png", &s, true) == 0)
        CHECK(view_shown()->view == VIEW_VELOCITY, "'vvv' from density: %s", viewfield_name(view_shown()->view));
    shot_free(&s);
    if (show(VIEW_DENSITY, "VV", STEPS + 2, "k2.png", &s, true) == 0)
        CHECK(view_shown()->view == VIEW_GATHERING, "'VV' from density: %s", viewfield_name(view_shown()->view));
    shot_free(&s);
    if (show(VIEW_DENSITY, "+", STEPS + 2, "k3.png", &s, true) == 0)
        CHECK(fabsf(morph_params(g_m)->vf - p0.vf * 1.25f) < 1e-6f && view_shown()->params.vf == morph_params(g_m)->vf,
              "'+' on vf: %g", morph_params(g_m)->vf);
    shot_free(&s);
    if (show(VIEW_DENSITY, "-\t\t_=-", STEPS + 2, "k4.png", &s, true) == 0) {
        const SolverParams *p = morph_params(g_m);
        CHECK(fabsf(p->vf - p0.vf) < 1e-6f, "'-' back on vf: %g", p->vf);
        CHECK(view_shown()->selected == 2 && fabsf(p->vg - p0.vg / 1.25f) < 1e-7f,
              "Tab Tab selects vg, '_' '=' '-' leaves it %g", p->vg);
        const char *line = view_shown()->hud[viewmodel_hud_param_line(2)];
        CHECK(line[0] == '>' && strstr(line, "vg"), "the HUD marks vg: '%s'", line);
    }
    shot_free(&s);
    SolverParams back = p0;
    morph_set_params(g_m, &back);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) && chdir(g_tmp) == 0) {
        if (show(VIEW_PRESSURE, "hc", STEPS + 2, "k5.png", &s, true) == 0) {
            char path[512];
            snprintf(path, sizeof path, "%s/smokemorph-pressure-%06d.png", g_tmp, STEPS + 2);
            CHECK(testlib_exists(path), "'c' saved %s", path);
            ViewLayout l = view_shown()->layout;
            float c[3];
            int bright = 0; /* the most on one row of a band around the middle (a row
                             * may fall between two lines of text) */
            for (int y = l.area.y + l.area.h / 2 - 12; y <= l.area.y + l.area.h / 2 + 12; y++) {
                int row = 0;
                for (int x = l.area.x; x < l.area.x + l.area.w; x++) {
                    px(&s, x, y, c);
                    row += c[0] > 0.8f && c[1] > 0.8f && c[2] > 0.8f;
                }
                if (row > bright) bright = row;
            }
            CHECK(bright > 10, "'h' shows the key help over the field (%d white pixels on a row)", bright);
        }
        shot_free(&s);
        if (chdir(cwd) != 0) CHECK(0, "back to %s", cwd);
    }
}

/* Pass by pass ('.'): the window shows the pass's field and the log plot of
 * the solve's residual, a point a pass of that solve (12 passes reach the
 * pressure solve's V-cycles with the balance force's potential before it). */
static void test_pass_by_pass_plot(void)
{
    Shot s;
    /* a whole step first: the window stops at max_steps > 0 (run alone,
     * with TEST_ONLY, no earlier test has stepped) */
    if (morph_step_count(g_m) == 0) CHECK(morph_step(g_m) == 0, "a first step");
    long at = morph_step_count(g_m);
    if (show(VIEW_DENSITY, "............", at, "pass.png", &s, true) == 0) {
        const ViewShown *v = view_shown();
        CHECK(v->residual_points >= 2, "the residual plot has %d points after 12 passes", v->residual_points);
        CHECK(morph_step_count(g_m) == at + 1, "the step begun pass by pass is finished whole after (%ld)",
              morph_step_count(g_m));
    }
    shot_free(&s);
    /* the same in a view computed from the state (pressure): refreshing it
     * must not finish the step begun (it read the state back, which ran
     * the step's remaining passes, so each '.' was a whole step) */
    at = morph_step_count(g_m);
    if (show(VIEW_PRESSURE, "............", at, "pass-pressure.png", &s, true) == 0) {
        const ViewShown *v = view_shown();
        CHECK(v->residual_points >= 2, "pressure view: the residual plot has %d points after 12 passes",
              v->residual_points);
        CHECK(strstr(v->title, "pass 12/") != NULL, "pressure view: the title names pass 12: %s", v->title);
        CHECK(morph_step_count(g_m) == at + 1, "pressure view: one step begun and finished (%ld after %ld)",
              morph_step_count(g_m), at);
    }
    shot_free(&s);
    if (show(VIEW_DENSITY, "", morph_step_count(g_m), "nopass.png", &s, true) == 0)
        CHECK(view_shown()->residual_points == 0, "no residual plot outside pass by pass");
    shot_free(&s);
}

/* Adding and erasing smoke on the GPU: the Gaussian's mass, never below 0. */
static void test_splat_gpu(void)
{
    TestlibAddErase s = testlib_add_erase(g_m, G, G);
    CHECK(s.add_rc == 0, "add smoke");
    CHECK(fabs(s.added - s.gauss) < 1e-3 * s.gauss, "GPU: adding smoke adds %g of %g", s.added, s.gauss);
    CHECK(s.erase_rc == 0, "erase smoke");
    CHECK(s.m2 < s.m1 && s.centre == 0.0f, "GPU: erasing removes smoke to 0 (%g -> %g)", s.m1, s.m2);
}


/* ---- several fields (issue 9 in the window) ---------------------------------- */

static const float F_RGB[2][3] = {{1.0f, 0.376f, 0.125f}, {0.125f, 0.5f, 1.0f}};
#define F_SCALE 0.7f

static double srgb_lin(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
static double lin_srgb(double c) { return c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1.0 / 2.4) - 0.055; }

/* view_run of the two fields fm[0..1] (fm[0] the morph given), view V, KEYS,
 * up to step max; the screenshot into S and each field's density read back
 * into rho. */
static int show_fields(Morph **fm, int view, const char *keys, long max, const char *name, Shot *s,
                       float rho[2][N])
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    ViewOptions vo = {.steps_per_frame = 2, .max_steps = max, .shader_dir = g_dir, .color = {1, 1, 1},
                      .screenshot = path, .keys = keys, .view = view, .fields = fm, .nfields = 2,
                      .field_name = {"warm", "cool"}, .density_scale = F_SCALE};
    memcpy(vo.field_color, F_RGB, sizeof F_RGB);
    int rc = view_run(NULL, fm[0], &vo);
    CHECK(rc == 0, "view_run of two fields (%s) exited %d", name, rc);
    memset(s, 0, sizeof *s);
    if (rc) return -1;
    static const ImageChannel ch[3] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B};
    for (int k = 0; k < 3; k++)
        if (!(s->c[k] = testlib_load(path, ch[k]))) return -1;
    for (int f = 0; f < 2; f++) CHECK(morph_read_density(fm[f], rho[f]) == 0, "read field %d back", f);
    return 0;
}

/* The composite (export.h's formula) of the two fields at pixel (x, y) of r
 * over black: RGB into want. */
static void composite_px(float rho[2][N], ViewRect r, int x, int y, int only_field, float want[3])
{
    double a[2], t = 1.0, w = 0.0, acc[3] = {0, 0, 0};
    int count = 0, only = 0;
    for (int f = 0; f < 2; f++) {
        double v = sample(rho[f], r, x, y) * F_SCALE;
        a[f] = v > 0.0 ? (v < 1.0 ? v : 1.0) : 0.0;
        if (only_field >= 0 && f != only_field) a[f] = 0.0;
        if (!(a[f] > 0.0)) continue;
        t *= 1.0 - a[f];
        w += a[f];
        for (int c = 0; c < 3; c++) acc[c] += a[f] * srgb_lin(F_RGB[f][c]);
        count++;
        only = f;
    }
    for (int c = 0; c < 3; c++)
        want[c] = count <= 1 ? (float)(F_RGB[only][c] * a[only]) : (float)(lin_srgb(acc[c] / w) * (1.0 - t));
}

static double compare_composite(const Shot *s, float rho[2][N], ViewRect r, int only_field, int *n)
{
    double d = 0.0;
    *n = 0;
    for (int y = r.y + 2; y < r.y + r.h - 2; y += 5)
        for (int x = r.x + 2; x < r.x + r.w - 2; x += 5) {
            float got[3], want[3];
            px(s, x, y, got);
            composite_px(rho, r, x, y, only_field, want);
            for (int c = 0; c < 3; c++) d = fmax(d, fabs(got[c] - want[c]));
            (*n)++;
        }
    return d;
}

/* Two fields (yin -> yang, yang -> yin) sharing one velocity in the window:
 * both stepped; the density view is their composite as the frames are, from
 * each field's density read back; 'v' shows each alone in its colour, then
 * the target; the HUD's error and mass are morph_observe_fields's sums; 'r'
 * resets both; 't' is refused (the fields stay as they were). */
static void test_two_fields(void)
{
    Image *a = testlib_bundled("yin.png", G, G), *b = testlib_bundled("yang.png", G, G);
    SolverParams p;
    method_params_default(&p);
    char err[512] = "";
    Morph *fm[2] = {NULL, NULL};
    if (a && b) {
        fm[0] = morph_create(G, G, &p, a->px, b->px, true, MORPH_FRAGMENT, g_dir, err, sizeof err);
        if (fm[0]) fm[1] = morph_create(G, G, &p, b->px, a->px, true, MORPH_FRAGMENT, g_dir, err, sizeof err);
    }
    CHECK(fm[0] && fm[1], "two morphs: %s", err);
    static float rho[2][N];
    Shot s;
    ViewLayout l;
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, NULL, STEPS, "fields.png", &s, rho) == 0) {
        const ViewShown *sh = view_shown();
        l = sh->layout;
        CHECK(morph_step_count(fm[0]) == STEPS && morph_step_count(fm[1]) == STEPS, "both fields stepped: %ld, %ld",
              morph_step_count(fm[0]), morph_step_count(fm[1]));
        CHECK(sh->nfields == 2 && sh->field == -1 && strstr(sh->title, "(2 fields)"), "composite shown: '%s'",
              sh->title);
        int n;
        double d = compare_composite(&s, rho, l.field, -1, &n);
        int both = 0; /* pixels where both fields have smoke (the mixed colour) */
        for (int k = 0; k < N; k++) both += rho[0][k] > 0.05f && rho[1][k] > 0.05f;
        printf("  two fields' composite: %d pixels, max diff %.1f/255 (%d cells hold both)\n", n, d * 255.0, both);
        CHECK(n > 1000 && d <= TOL, "the composite differs from export.h's formula by %.1f/255", d * 255.0);
        CHECK(both > 10, "the fields overlap somewhere (%d cells)", both);
        /* the HUD: error and mass over both fields */
        double mass, e, md;
        CHECK(morph_observe_fields(fm, 2, NULL, NULL, &mass, &e, &md) == 0, "observe the fields");
        double he = -1, hm = -1;
        int hn = 0;
        sscanf(sh->hud[2], "error %lf (%d fields", &he, &hn);
        sscanf(sh->hud[3], "mass %lf", &hm);
        printf("  HUD '%s' '%s'; fields: error %.6f mass %.6g\n", sh->hud[2], sh->hud[3], e, mass);
        CHECK(hn == 2 && fabs(he - e) <= 0.00005 + 1e-9 && fabs(hm - mass) <= 5e-6 * mass,
              "HUD error %g mass %g, the fields' %g %g", he, hm, e, mass);
    }
    shot_free(&s);
    for (int f = 0; f < 2; f++) {
        char name[32];
        snprintf(name, sizeof name, "field%d.png", f);
        const char *keys = f == 0 ? "v" : "vv";
        if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, keys, STEPS + 2, name, &s, rho) == 0) {
            const ViewShown *sh = view_shown();
            char want[64];
            snprintf(want, sizeof want, "density %d/2: %s", f + 1, f ? "cool" : "warm");
            CHECK(sh->view == VIEW_DENSITY && sh->field == f && !strcmp(sh->title, want), "'%s': field %d '%s'", keys,
                  sh->field, sh->title);
            int n;
            l = sh->layout;
            double d = compare_composite(&s, rho, l.field, f, &n);
            printf("  density %d alone: %d pixels, max diff %.1f/255\n", f + 1, n, d * 255.0);
            CHECK(n > 1000 && d <= TOL, "density %d alone differs by %.1f/255", f + 1, d * 255.0);
        }
        shot_free(&s);
    }
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "vvv", STEPS + 4, "target.png", &s, rho) == 0)
        CHECK(view_shown()->view == VIEW_TARGET && view_shown()->field == -1, "'vvv': the target (%s)",
              viewfield_name(view_shown()->view));
    shot_free(&s);
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "V", STEPS + 4, "back.png", &s, rho) == 0)
        CHECK(view_shown()->view == VIEW_FIG2, "'V' from the composite: %s", viewfield_name(view_shown()->view));
    shot_free(&s);
    /* 't' refused: the start images stay */
    float s0 = a ? morph_start(fm[0])[G * G / 2 + G / 4] : 0.0f;
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "t", STEPS + 6, "swap.png", &s, rho) == 0)
        CHECK(morph_start(fm[0])[G * G / 2 + G / 4] == s0 && morph_step_count(fm[1]) == STEPS + 6,
              "'t' is refused with two fields");
    shot_free(&s);
    /* a parameter changes on both fields alike (dt must agree for them to
     * step together) */
    float dt0 = fm[0] ? morph_params(fm[0])->dt : 0.0f;
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "\t\t\t\t+", STEPS + 10, "dt.png", &s, rho) == 0) {
        CHECK(fabsf(morph_params(fm[0])->dt - dt0 * 1.25f) < 1e-7f &&
                  morph_params(fm[1])->dt == morph_params(fm[0])->dt,
              "'+' on dt: both fields' dt %g, %g (was %g)", morph_params(fm[0])->dt, morph_params(fm[1])->dt, dt0);
        CHECK(morph_step_count(fm[0]) == STEPS + 10 && morph_step_count(fm[1]) == STEPS + 10,
              "both stepped on after '+': %ld, %ld", morph_step_count(fm[0]), morph_step_count(fm[1]));
    }
    shot_free(&s);
    /* '.' with two fields: the passes of morph_step_fields, each named with
     * its field; the step stays begun for both until a whole step ends it */
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "..", STEPS + 10, "fpass.png", &s, rho) == 0) {
        const char *t = view_shown()->title;
        CHECK(strstr(t, "step ") && strstr(t, "(field 1/2: warm)"), "'..': the title names the pass and its field: '%s'", t);
        CHECK(morph_pass_active(fm[0]) && morph_pass_active(fm[1]), "the two fields' step is begun");
        CHECK(morph_step_fields(fm, 2) == 0 && morph_step_count(fm[0]) == STEPS + 11 &&
                  morph_step_count(fm[1]) == STEPS + 11 && !morph_pass_active(fm[1]),
              "morph_step_fields finishes it for both: %ld, %ld", morph_step_count(fm[0]), morph_step_count(fm[1]));
    }
    shot_free(&s);
    /* after field 1's force part, field 2's passes: the window names it */
    if (fm[0] && fm[1]) {
        long at = morph_step_count(fm[0]);
        MorphPassInfo pi;
        int fi = -1, k = 0;
        while (fi != 1 && k++ < 400 && morph_pass_next_fields(fm, 2, &pi, &fi) == 0) {}
        CHECK(fi == 1 && k < 30, "field 2's first pass is pass %d of the step", k);
        if (fi == 1 && show_fields(fm, VIEW_DENSITY, ".", at, "fpass2.png", &s, rho) == 0)
            CHECK(strstr(view_shown()->title, "(field 2/2: cool)") != NULL, "a pass of the second field named: '%s'",
                  view_shown()->title);
        shot_free(&s);
    }
    if (fm[0] && fm[1]) morph_step_fields(fm, 2);
    for (int f = 0; f < 2 && fm[f]; f++) { /* dt back */
        SolverParams q = *morph_params(fm[f]);
        q.dt = dt0;
        morph_set_params(fm[f], &q);
    }
    /* 'r' resets both: after it, both at step 2 with their start's mass */
    if (fm[0] && fm[1] && show_fields(fm, VIEW_DENSITY, "r", 2, "reset.png", &s, rho) == 0) {
        CHECK(morph_step_count(fm[0]) == 2 && morph_step_count(fm[1]) == 2, "'r' resets both: steps %ld, %ld",
              morph_step_count(fm[0]), morph_step_count(fm[1]));
        double m0 = 0, m1 = 0, s0m = 0, s1m = 0;
        for (int k = 0; k < N; k++) m0 += rho[0][k], m1 += rho[1][k], s0m += a->px[k], s1m += b->px[k];
        CHECK(fabs(m0 / s0m - 1.0) < 1e-3 && fabs(m1 / s1m - 1.0) < 1e-3, "after 'r' each field has its start's mass "
              "(%g of %g, %g of %g)", m0, s0m, m1, s1m);
    }
    shot_free(&s);
    morph_free(fm[1]);
    morph_free(fm[0]);
    image_free(a);
    image_free(b);
}

static void run_tests(void)
{
    RUN(test_views_against_read_back);
    RUN(test_density_and_velocity);
    RUN(test_hud_numbers);
    RUN(test_keys);
    RUN(test_splat_gpu);
    RUN(test_pass_by_pass_plot);
    RUN(test_two_fields);
}

int main(int argc, char **argv)
{
    testlib_tmpdir(g_tmp, sizeof g_tmp, "smokemorph_classroom");
    GlCtx *ctx;
    g_m = testgl_window_morph(&argc, argv, WIN_W, WIN_H, "classroom", G, g_dir, sizeof g_dir, &ctx);
    if (g_m) run_tests();
    return testgl_window_done(g_m, ctx, g_tmp);
}
