/* The classroom on a projector (issue 24; tier 3, under xvfb-run), in one
 * 640x480 window, in-process, with a fragment-backend morph of a 32x32 grid:
 *   - nothing overlaps at 640x480: every text line's box as drawn
 *     (view_shown's boxes) apart from every other and from the fields, the
 *     colour bar and the plot, in each mode (views, two panels, pass by
 *     pass, Fig. 2, compare, a lesson's caption, the text zoomed);
 *   - pass by pass: the title, the HUD's step and the plot's caption are
 *     those of the pass shown (the potential's, the pressure's, the
 *     gathering's solve), with the pass's colour bar and range;
 *   - compare: --view on both halves (the screenshots of two views
 *     differ), 'v', each half's label, step and error;
 *   - --record: a video whose frame count and size are the window's frames
 *     (ffprobe; without ffmpeg, the raw frames sent to a stand-in encoder), 'R' on and off, and never
 *     a file after an error (no ffmpeg, or an ffmpeg that dies);
 *   - the shipped lesson runs to its end with --keys, and a bad lesson is
 *     one line naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"
#include "glctx.h"
#include "image.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"
#include "view.h"

#define G 32
#define WIN_W 640
#define WIN_H 480
#define SHIPPED "lessons/how-target-driven-smoke-works.json"

static char g_tmp[256], g_dir[4096];
static Morph *g_m;
static const float *g_start, *g_target;

static bool apart(ViewRect a, ViewRect b)
{
    return a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
}

/* Every text box of the last frame apart from the others and from the
 * fields, the bar and the plot; all inside the window. Returns the count
 * of text boxes. */
static int check_boxes(const char *what)
{
    const ViewShown *sh = view_shown();
    int bad = 0, texts = 0;
    for (int i = 0; i < sh->nbox; i++) {
        ViewRect a = sh->box[i];
        if (a.x < 0 || a.y < 0 || a.x + a.w > WIN_W || a.y + a.h > WIN_H) {
            printf("  %s: box %d ('%c' %d,%d %dx%d) outside the window\n", what, i, sh->box_kind[i], a.x, a.y, a.w,
                   a.h);
            bad++;
        }
        if (sh->box_kind[i] != VIEW_BOX_TEXT) continue;
        texts++;
        for (int j = 0; j < sh->nbox; j++) {
            if (j == i || (sh->box_kind[j] == VIEW_BOX_TEXT && j < i)) continue;
            if (!apart(a, sh->box[j])) {
                ViewRect b = sh->box[j];
                printf("  %s: text box %d (%d,%d %dx%d) overlaps '%c' box %d (%d,%d %dx%d)\n", what, i, a.x, a.y, a.w,
                       a.h, sh->box_kind[j], j, b.x, b.y, b.w, b.h);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "%s: %d overlaps or boxes outside", what, bad);
    CHECK(texts >= 3 && sh->text, "%s: %d lines of text drawn", what, texts);
    return texts;
}

static ViewOptions opts(void)
{
    return (ViewOptions){.steps_per_frame = 2, .shader_dir = g_dir, .color = {1, 1, 1}, .view = VIEW_DENSITY};
}

static int run_view(ViewOptions *vo)
{
    int rc = view_run(NULL, vo->compare ? compare_morph(vo->compare, 0) : g_m, vo);
    CHECK(rc == 0, "view_run exited %d", rc);
    return rc;
}

/* A lesson file in the temporary folder. */
static const char *lesson_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    testlib_write_file(path, text, strlen(text));
    return path;
}

static Compare *make_compare(void)
{
    char err[512];
    CompareSpec cs;
    SolverParams p;
    method_params_default(&p);
    CHECK(compare_preset("force", &p, &cs, err, sizeof err) == 0, "%s", err);
    Compare *c = compare_create(G, G, &cs, NULL, g_start, g_target, true, MORPH_FRAGMENT, g_dir, err, sizeof err);
    CHECK(c != NULL, "compare: %s", err);
    return c;
}

static void test_no_overlap_640(void)
{
    static const struct {
        int view;
        const char *keys, *what;
    } modes[] = {
        {VIEW_DENSITY, NULL, "density, HUD"},
        {VIEW_DIVERGENCE, NULL, "divergence: two panels"},
        {VIEW_FORCE, "^+^+", "force, text zoomed twice"},
        {VIEW_DENSITY, "^+^+^+^+^+^+^+^+^+", "density, zoomed to the end"},
        {VIEW_FIG2, NULL, "Fig. 2"},
        {VIEW_DENSITY, "s.........", "pass by pass"},
        {VIEW_PRESSURE, "i", "pressure, HUD off"},
    };
    morph_reset(g_m);
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        ViewOptions vo = opts();
        vo.view = modes[k].view;
        vo.keys = modes[k].keys;
        /* pass by pass pauses after its one step ('s') */
        vo.max_steps = morph_step_count(g_m) + (modes[k].keys && modes[k].keys[0] == 's' ? 1 : 4);
        if (run_view(&vo) == 0) printf("  %-26s %d text lines apart\n", modes[k].what, check_boxes(modes[k].what));
    }
    const ViewShown *sh = view_shown();
    CHECK(sh->text_px == 13, "640x480: 13-pixel text (%d)", sh->text_px);
    /* a lesson's caption, long, across the bottom */
    ViewOptions vo = opts();
    vo.lesson = lesson_file("caption.json",
                            "{\"steps\": [{\"view\": \"vorticity\", \"run\": 4, \"caption\": \"A long caption that "
                            "must wrap over several lines at 640 by 480 without running into the field, the colour "
                            "bar or the HUD: the vorticity shows where the flow turns.\"}]}");
    vo.max_steps = morph_step_count(g_m) + 4;
    if (run_view(&vo) == 0) {
        printf("  %-26s %d text lines apart\n", "a lesson's caption", check_boxes("caption"));
        CHECK(strstr(view_shown()->caption, "1/1  A long caption") != NULL, "the caption shown: '%s'",
              view_shown()->caption);
    }
    Compare *c = make_compare();
    if (c) {
        vo = opts();
        vo.compare = c;
        vo.view = VIEW_VORTICITY;
        vo.max_steps = 4;
        if (run_view(&vo) == 0) printf("  %-26s %d text lines apart\n", "compare", check_boxes("compare"));
        compare_free(c);
    }
}

/* A lesson of one step: run 3 steps (with the timed arrival at 0.05 s and
 * the gathering from 30% of it, as a key's, it is on by then; a single pair
 * would wait until 70%), then pass by pass to the COUNT-th TO pass. */
static const ViewShown *to_pass(const char *to, int count)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"steps\": [{\"restart\": true, \"set\": {\"arrive\": 0.05, \"gather_from\": 0.3}, \"run\": 3, "
             "\"pass_by_pass\": true, "
             "\"to_pass\": \"%s\", \"passes\": %d}]}",
             to, count);
    ViewOptions vo = opts();
    vo.lesson = lesson_file("pass.json", text);
    vo.max_steps = 3;
    morph_reset(g_m);
    if (run_view(&vo)) return NULL;
    return view_shown();
}

static void test_pass_by_pass_labels(void)
{
    static const struct {
        const char *pass, *caption, *explain;
        int count;
    } cases[] = {
        {"potential V-cycle", "potential solve", "V-cycle on the deficit potential", 2},
        {"pressure Jacobi", "pressure solve", "one damped Jacobi iteration", 3},
        {"gather Jacobi", "gathering solve", "Jacobi iteration on e", 2},
        {"force + damping", "potential solve", "vorticity confinement", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ViewShown *sh = to_pass(cases[k].pass, cases[k].count);
        if (!sh) continue;
        char want[64];
        snprintf(want, sizeof want, "%s %d/", cases[k].pass, cases[k].count);
        long step = -1, hs = -1;
        int pass = 0, total = 0, hp = 0, ht = 0;
        sscanf(sh->title, "step %ld  pass %d/%d", &step, &pass, &total);
        sscanf(sh->hud[0], "step %ld  pass %d/%d", &hs, &hp, &ht);
        printf("  %-18s title '%s'; HUD '%s'; plot '%s' (%d points); bar %g..%g\n", cases[k].pass, sh->title,
               sh->hud[0], sh->plot_caption, sh->residual_points, sh->bar_range.lo, sh->bar_range.hi);
        CHECK(strstr(sh->title, cases[k].count > 1 || k == 2 ? want : cases[k].pass) != NULL, "the title names %s: '%s'",
              cases[k].pass, sh->title);
        CHECK(step == 4 && hs == step && hp == pass && ht == total && sh->step == step && pass > 1,
              "%s: the HUD's step and pass (%s) are the title's (%s)", cases[k].pass, sh->hud[0], sh->title);
        CHECK(strstr(sh->plot_caption, cases[k].caption) != NULL, "%s: the plot is the %s's: '%s'", cases[k].pass,
              cases[k].caption, sh->plot_caption);
        CHECK(strstr(sh->subtitle, cases[k].explain) != NULL, "%s: what it does: '%s'", cases[k].pass, sh->subtitle);
        CHECK(sh->bar_range.hi > 0.0f && sh->bar_range.lo == sh->range.lo && sh->bar_range.hi == sh->range.hi,
              "%s: the colour bar is the pass's field's range %g..%g", cases[k].pass, sh->range.lo, sh->range.hi);
        if (k == 1) CHECK(sh->residual_points == 1 + 3 + 3, "pressure: the warm start, 3 V-cycles, 3 Jacobi: %d points",
                          sh->residual_points);
        if (k == 2) CHECK(sh->residual_points == 2 && sh->range.sign, "gathering: 2 changes of e (%d), a signed e",
                          sh->residual_points);
        check_boxes(cases[k].pass);
    }
}

/* The field rectangles' pixels of a screenshot (luma), for a difference. */
static double field_diff(const char *a, const char *b, ViewRect r)
{
    Image *x = testlib_load(a, IMAGE_CHANNEL_R), *y = testlib_load(b, IMAGE_CHANNEL_R);
    double d = -1.0;
    if (x && y && x->w == WIN_W && y->w == WIN_W) {
        d = 0.0;
        for (int j = r.y; j < r.y + r.h; j++)
            for (int i = r.x; i < r.x + r.w; i++) {
                int row = WIN_H - 1 - j;
                d += fabs(x->px[row * WIN_W + i] - y->px[row * WIN_W + i]);
            }
        d /= (double)r.w * r.h;
    }
    image_free(x);
    image_free(y);
    return d;
}

static void test_compare_views(void)
{
    Compare *c = make_compare();
    if (!c) return;
    char shot[2][512];
    static const int views[2] = {VIEW_DENSITY, VIEW_VORTICITY};
    ViewRect fa = {0}, fb = {0};
    for (int k = 0; k < 2; k++) {
        snprintf(shot[k], sizeof shot[k], "%s/compare_%d.png", g_tmp, k);
        compare_reset(c);
        ViewOptions vo = opts();
        vo.compare = c;
        vo.view = views[k];
        vo.max_steps = 6;
        vo.screenshot = shot[k];
        if (run_view(&vo)) continue;
        const ViewShown *sh = view_shown();
        fa = sh->layout.field, fb = sh->layout.field_b;
        CHECK(sh->view == views[k], "compare shows the view asked (%d, not %d)", sh->view, views[k]);
        printf("  compare %s: '%s' | '%s' / '%s' / '%s'\n", viewfield_name(views[k]), sh->half[0][0], sh->half[1][0],
               sh->half[1][1], sh->half[1][2]);
        CHECK(strstr(sh->half[0][0], "balance") && strstr(sh->half[1][0], "Fattal") &&
                  !strcmp(sh->half[0][1], "step 6  t 0.060") && !strcmp(sh->half[1][1], "step 6  t 0.060") &&
                  !strncmp(sh->half[0][2], "error ", 6) && !strncmp(sh->half[1][2], "error ", 6),
              "each half: its setting, step and error");
    }
    double da = field_diff(shot[0], shot[1], fa), db = field_diff(shot[0], shot[1], fb);
    printf("  density vs vorticity: mean difference A %.3f, B %.3f\n", da, db);
    CHECK(da > 0.02 && db > 0.02, "--view changes both halves (%.3f, %.3f)", da, db);
    ViewOptions vo = opts();
    vo.compare = c;
    vo.keys = "vv";
    vo.max_steps = 10;
    if (run_view(&vo) == 0) CHECK(view_shown()->view == VIEW_BLURRED, "'v' twice: the blurred target on both halves");
    vo.keys = "V"; /* back from density: past Fig. 2 (one run's) to the gathering */
    vo.max_steps = 12;
    if (run_view(&vo) == 0) CHECK(view_shown()->view == VIEW_GATHERING, "'V' from density skips Fig. 2: %d", view_shown()->view);
    compare_free(c);
}

/* The title bar shows the numbers the HUD read (refresh_metrics): no
 * read-back of its own, one run or two compared, running and paused. */
static void test_title_reads(void)
{
    Compare *c = make_compare();
    for (int k = 0; k < 2; k++) {
        if (k == 0 && !c) continue;
        ViewOptions vo = opts();
        vo.compare = k == 0 ? c : NULL;
        vo.keys = "zzs.szz "; /* running, a step, a pass, a step, paused, running */
        vo.max_steps = morph_step_count(vo.compare ? compare_morph(c, 0) : g_m) + 16;
        if (run_view(&vo)) continue;
        const ViewShown *sh = view_shown();
        int per = k == 0 ? 2 : 1;
        printf("  %s: %ld read-backs, %ld refreshes; title bar '%s'\n", k == 0 ? "compare" : "one run", sh->reads,
               sh->refreshes, sh->title_bar);
        CHECK(sh->refreshes > 0 && sh->reads == per * sh->refreshes,
              "%s: %ld read-backs for %ld refreshes of the HUD's numbers (%d each)", k == 0 ? "compare" : "one run",
              sh->reads, sh->refreshes, per);
        CHECK(strstr(sh->title_bar, "error ") != NULL && (k == 1 || strstr(sh->title_bar, "Fattal")),
              "the title bar: '%s'", sh->title_bar);
    }
    compare_free(c);
}

/* A lesson's comparison keeps the run's mass matching: a morph made
 * without it (--no-mass-match) compared in a lesson shows the errors of a
 * Compare made without it (against the blob's and the star's own masses). */
static void test_lesson_compare_mass(void)
{
    char err[512], shown[2][2][VIEWMODEL_LINE * 2];
    SolverParams p;
    method_params_default(&p);
    Morph *m = morph_create(G, G, &p, g_start, g_target, false, MORPH_FRAGMENT, g_dir, err, sizeof err);
    CHECK(m != NULL, "a morph without mass matching: %s", err);
    if (!m) return;
    ViewOptions vo = opts();
    vo.lesson = lesson_file("mass.json", "{\"steps\": [{\"compare\": \"force\", \"run\": 4}]}");
    vo.max_steps = 4;
    int rc = view_run(NULL, m, &vo);
    CHECK(rc == 0, "the lesson: exit %d", rc);
    for (int h = 0; h < 2; h++) snprintf(shown[0][h], sizeof shown[0][h], "%s", view_shown()->half[h][2]);
    morph_free(m);
    CompareSpec cs;
    CHECK(compare_preset("force", &p, &cs, err, sizeof err) == 0, "%s", err);
    Compare *c = compare_create(G, G, &cs, NULL, g_start, g_target, false, MORPH_FRAGMENT, g_dir, err, sizeof err);
    CHECK(c != NULL, "compare: %s", err);
    if (!c) return;
    vo = opts();
    vo.compare = c;
    vo.max_steps = 4;
    if (run_view(&vo) == 0) {
        for (int h = 0; h < 2; h++) snprintf(shown[1][h], sizeof shown[1][h], "%s", view_shown()->half[h][2]);
        printf("  no mass matching: lesson A '%s' B '%s'; --compare-preset A '%s' B '%s'\n", shown[0][0], shown[0][1],
               shown[1][0], shown[1][1]);
        CHECK(!strcmp(shown[0][0], shown[1][0]) && !strcmp(shown[0][1], shown[1][1]) && shown[0][0][0],
              "the lesson's comparison without mass matching is --compare-preset's");
    }
    compare_free(c);
}

/* A step's parameters are the run's starting ones plus every "set" of
 * the steps up to it: Backspace undoes a step's set; a step that goes on
 * comparing gives its set to both runs on screen (B keeps its own
 * setting). */
static void test_lesson_params(void)
{
    SolverParams d;
    method_params_default(&d);
    ViewOptions vo = opts();
    vo.lesson = lesson_file("back.json", "{\"steps\": [{\"set\": {\"vf\": 3}}, {\"set\": {\"vd\": 0.5, \"vf\": 4}}, "
                                         "{\"set\": {\"vf\": 5}}]}");
    vo.keys = "  \bzq"; /* to step 3, back to step 2 */
    morph_reset(g_m);
    if (run_view(&vo) == 0) {
        const ViewShown *sh = view_shown();
        printf("  forward twice, back once: step %d, vf %g, vd %g\n", sh->lesson_step, sh->params.vf, sh->params.vd);
        CHECK(sh->lesson_step == 2 && sh->params.vf == 4.0f && sh->params.vd == 0.5f, "step 2's parameters: vf %g vd %g",
              sh->params.vf, sh->params.vd);
    }
    CHECK(morph_set_params(g_m, &d) == 0, "the run's parameters back");
    vo.keys = " \bzq"; /* to step 2 and back to step 1: its vd is the run's */
    if (run_view(&vo) == 0) {
        const ViewShown *sh = view_shown();
        printf("  forward, back: step %d, vf %g, vd %g (the run's %g)\n", sh->lesson_step, sh->params.vf, sh->params.vd,
               d.vd);
        CHECK(sh->lesson_step == 1 && sh->params.vf == 3.0f && sh->params.vd == d.vd,
              "Backspace undoes step 2's set: vf %g, vd %g (want 3, %g)", sh->params.vf, sh->params.vd, d.vd);
    }
    CHECK(morph_set_params(g_m, &d) == 0, "the run's parameters back");
    vo = opts();
    vo.lesson = lesson_file("cmpset.json", "{\"steps\": [{\"compare\": \"force\", \"run\": 2}, {\"compare\": "
                                           "\"force\", \"set\": {\"vf\": 3}, \"run\": 2}]}");
    vo.keys = " zzzq";
    if (run_view(&vo) == 0) {
        const ViewShown *sh = view_shown();
        printf("  a comparison going on with a set: A vf %g force %d, B vf %g force %d\n", sh->half_params[0].vf,
               sh->half_params[0].force, sh->half_params[1].vf, sh->half_params[1].force);
        CHECK(sh->lesson_step == 2 && sh->half_params[0].vf == 3.0f && sh->half_params[1].vf == 3.0f &&
                  sh->half_params[0].force == SOLVER_FORCE_BALANCE && sh->half_params[1].force == SOLVER_FORCE_FATTAL,
              "both runs compared take the step's set: A vf %g, B vf %g", sh->half_params[0].vf, sh->half_params[1].vf);
    }
    CHECK(morph_set_params(g_m, &d) == 0, "the run's parameters back");
}

static bool have_ffprobe(void)
{
    return testlib_sh("command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1") == 0;
}

/* The video's width, height and frames (ffprobe, decoding every frame). */
static int probe(const char *path, int *w, int *h, int *frames)
{
    char cmd[1024], out[256] = "";
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,nb_read_frames "
             "-of csv=p=0 '%s' >%s/probe.txt 2>&1",
             path, g_tmp);
    if (testlib_sh(cmd) != 0) return -1;
    snprintf(cmd, sizeof cmd, "%s/probe.txt", g_tmp);
    testlib_read_text(cmd, out, sizeof out);
    return sscanf(out, "%d,%d,%d", w, h, frames) == 3 ? 0 : -1;
}

/* Without ffmpeg (CI): a stand-in on PATH that writes the raw frames it is
 * piped to the output file and the input size it was told to size.txt, so
 * the frames' count and size are still checked (what smokemorph sends; the
 * encoding is ffmpeg's). */
static char g_path_keep[8192];

static void fake_encoder_on(void)
{
    char cmd[2048], bin[300];
    snprintf(bin, sizeof bin, "%s/rawbin", g_tmp);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && printf '#!/bin/sh\nfor a; do last=$a; done\nprev=\nfor a; do "
             "[ \"$prev\" = -s ] && echo $a >%s/size.txt; prev=$a; done\ncat >\"$last\"\n' >%s/ffmpeg && "
             "chmod +x %s/ffmpeg",
             bin, g_tmp, bin, bin);
    CHECK(testlib_sh(cmd) == 0, "a raw-frame ffmpeg stand-in");
    const char *old = getenv("PATH");
    snprintf(g_path_keep, sizeof g_path_keep, "%s", old ? old : "/usr/bin:/bin");
    char path[8600];
    snprintf(path, sizeof path, "%s:%s", bin, g_path_keep);
    setenv("PATH", path, 1);
}

/* the stand-in's video: its size (size.txt) and frames (bytes / (w·h·3)) */
static int probe_raw(const char *path, int *w, int *h, int *frames)
{
    char p[600], out[64] = "";
    snprintf(p, sizeof p, "%s/size.txt", g_tmp);
    testlib_read_text(p, out, sizeof out);
    struct stat st;
    if (sscanf(out, "%dx%d", w, h) != 2 || *w <= 0 || *h <= 0 || stat(path, &st) != 0) return -1;
    size_t frame = (size_t)*w * (size_t)*h * 3;
    *frames = (int)((size_t)st.st_size / frame);
    return (size_t)st.st_size % frame == 0 ? 0 : -1;
}

static void test_record(void)
{
    char path[512], cwd[4096];
    snprintf(path, sizeof path, "%s/lesson.mp4", g_tmp);
    int matching = 0;
    bool real = have_ffprobe();
    if (!real) {
        printf("  no ffmpeg and ffprobe here: the frames checked as sent, through a stand-in encoder\n");
        fake_encoder_on();
    }
    int (*measure)(const char *, int *, int *, int *) = real ? probe : probe_raw;
    {
        ViewOptions vo = opts();
        vo.record = path;
        vo.fps = 30;
        vo.max_steps = morph_step_count(g_m) + 10; /* 5 frames of 2 steps */
        vo.view = VIEW_VORTICITY;
        int w = 0, h = 0, n = 0;
        if (run_view(&vo) == 0) {
            CHECK(measure(path, &w, &h, &n) == 0, "%s %s", real ? "ffprobe" : "the raw frames of", path);
            printf("  --record: %dx%d, %d frames\n", w, h, n);
            CHECK(w == WIN_W && h == WIN_H && n == 5, "the video is the window's 640x480, 5 frames: %dx%d, %d", w, h, n);
        }
        /* 'R' starts (this frame), two more frames, 'R' stops: 3 frames */
        if (getcwd(cwd, sizeof cwd) && chdir(g_tmp) == 0) {
            vo = opts();
            vo.keys = "RzzRz";
            vo.max_steps = morph_step_count(g_m) + 10;
            if (run_view(&vo) == 0) {
                snprintf(path, sizeof path, "%s/smokemorph-recording-1.mp4", g_tmp);
                CHECK(measure(path, &w, &h, &n) == 0 && n == 3 && w == WIN_W, "'R' .. 'R': 3 frames, %d", n);
            }
            CHECK(chdir(cwd) == 0, "back to %s", cwd);
        }
    }
    if (!real) setenv("PATH", g_path_keep, 1);
    char fake[2048], bin[300];
    snprintf(bin, sizeof bin, "%s/fakebin", g_tmp);
    snprintf(fake, sizeof fake, "mkdir -p %s && printf '#!/bin/sh\\necho broken encoder >&2\\nexit 1\\n' >%s/ffmpeg && "
             "chmod +x %s/ffmpeg", bin, bin, bin);
    CHECK(testlib_sh(fake) == 0, "a fake ffmpeg");
    /* no ffmpeg on PATH: one line, exit 1, no file */
    const char *old = getenv("PATH");
    char keep[8192];
    snprintf(keep, sizeof keep, "%s", old ? old : "/usr/bin:/bin");
    snprintf(path, sizeof path, "%s/none.mp4", g_tmp);
    setenv("PATH", "/nonexistent", 1);
    ViewOptions vo = opts();
    vo.record = path;
    vo.max_steps = morph_step_count(g_m) + 4;
    int rc = view_run(NULL, g_m, &vo);
    CHECK(rc == 1 && !testlib_exists(path), "no ffmpeg: exit %d, no %s", rc, path);
    /* an ffmpeg that dies at once: the recording fails, nothing is left */
    setenv("PATH", bin, 1);
    snprintf(path, sizeof path, "%s/dies.mp4", g_tmp);
    vo.record = path;
    vo.max_steps = morph_step_count(g_m) + 40;
    rc = view_run(NULL, g_m, &vo);
    setenv("PATH", keep, 1);
    testlib_count_entries(g_tmp, "dies.mp4", &matching);
    CHECK(rc == 1 && matching == 0, "a dying ffmpeg: exit %d, %d files named dies.mp4* left", rc, matching);
}

static void test_lesson_to_end(void)
{
    ViewOptions vo = opts();
    vo.lesson = SHIPPED;
    char keys[64];
    memset(keys, ' ', 11);
    snprintf(keys + 11, sizeof keys - 11, "zq");
    vo.keys = keys;
    morph_reset(g_m);
    if (run_view(&vo) == 0) {
        const ViewShown *sh = view_shown();
        printf("  the shipped lesson: step %d of %d at the end: '%.60s...'\n", sh->lesson_step, sh->lesson_steps,
               sh->caption);
        CHECK(sh->lesson_steps == 12 && sh->lesson_step == 12 && strstr(sh->caption, "12/12") &&
                  strstr(sh->caption, "[the end]"),
              "the lesson ran to its end: step %d of %d", sh->lesson_step, sh->lesson_steps);
        CHECK(sh->view == VIEW_VORTICITY && strstr(sh->half[1][0], "Fattal"), "its last step compares with Fattal's");
    }
    /* a bad lesson: one line, the file named, exit 1 */
    const char *bad = lesson_file("bad.json", "{\"steps\": [{\"view\": \"warp\"}]}");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "timeout 60 %s --backend fragment --grid 32 --lesson %s", testlib_bin(), bad);
    TestlibResult r = {0};
    int rc = testlib_run_sh(cmd, NULL, &r);
    char want[600];
    snprintf(want, sizeof want, "lesson: %s:1:21: steps[0].view: unknown view 'warp'", bad);
    int lines = 0;
    for (const char *p = r.err; p && *p; p++) lines += *p == '\n';
    printf("  a bad lesson: exit %d: %s", rc, r.err);
    CHECK(rc == 1 && r.err && strstr(r.err, want) && lines == 1, "a bad lesson: exit %d, one line naming it: '%s'", rc,
          r.err ? r.err : "");
    testlib_result_free(&r);
    /* a bare name: the shipped lessons' folder, found as the bundled
     * targets are (here the source tree's, next to build/smokemorph) */
    char cwd[4096] = ".", far[8600];
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    const char *bin = testlib_bin();
    snprintf(far, sizeof far, "cd %s && timeout 60 %s%s%s --backend fragment --grid 32 --lesson "
             "how-target-driven-smoke-works.json --keys zq", g_tmp, bin[0] == '/' ? "" : cwd, bin[0] == '/' ? "" : "/", bin);
    TestlibResult r2 = {0};
    rc = testlib_run_sh(far, NULL, &r2);
    CHECK(rc == 0 && r2.err && strstr(r2.err, "12 steps"), "--lesson NAME from another folder: exit %d: %s", rc,
          r2.err ? r2.err : "");
    testlib_result_free(&r2);
}

int main(int argc, char **argv)
{
    alarm(300); /* a window that never ends its run fails the test, not CI's clock */
    snprintf(g_tmp, sizeof g_tmp, "/tmp/smokemorph_lesson_XXXXXX");
    if (!mkdtemp(g_tmp)) return 1;
    char err[512] = "";
    GlCtx *ctx = glctx_create_window(&argc, argv, WIN_W, WIN_H, "lesson", err, sizeof err);
    CHECK(ctx != NULL, "window: %s", err);
    if (!ctx) return check_done();
    CHECK(shader_find_dir(NULL, argv[0], g_dir, sizeof g_dir, err, sizeof err) == 0, "%s", err);
    Image *a = testlib_bundled("blob.png", G, G), *b = testlib_bundled("star.png", G, G);
    SolverParams p;
    method_params_default(&p);
    if (a && b) {
        g_start = a->px;
        g_target = b->px;
        g_m = morph_create(G, G, &p, a->px, b->px, true, MORPH_FRAGMENT, g_dir, err, sizeof err);
    }
    CHECK(g_m != NULL, "morph: %s", err);
    if (g_m) {
        RUN(test_no_overlap_640);
        RUN(test_pass_by_pass_labels);
        RUN(test_compare_views);
        RUN(test_title_reads);
        RUN(test_lesson_compare_mass);
        RUN(test_lesson_params);
        RUN(test_record);
        RUN(test_lesson_to_end);
        morph_free(g_m);
    }
    image_free(a);
    image_free(b);
    glctx_destroy(ctx);
    testlib_rm_rf(g_tmp);
    return check_done();
}
