/* The live window (tier 3, under xvfb-run): it opens, steps, draws, answers
 * keys, and what it shows is the field the GPU holds. Each key is checked
 * against a run that must give the same picture; the mouse, a resize and the
 * title bar through xdotool, on a window paused at a known step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testgl.h"
#include "image.h"
#include "testlib.h"

static char g_tmp[256];

/* The last run's exit status and output (stdout and stderr together, in R.out). */
static TestlibResult R;

static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "timeout 30 %s %s 2>&1", testlib_bin(), args);
    return testlib_run_sh(cmd, NULL, &R);
}

static Image *load(const char *name, ImageChannel ch)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    Image *im = testlib_load(path, ch);
    CHECK(im != NULL, "load %s", name);
    return im;
}

static double max_diff(const Image *a, const Image *b)
{
    double m = 0.0;
    for (int k = 0; k < a->w * a->h; k++) m = fmax(m, fabs(a->px[k] - b->px[k]));
    return m;
}

/* At most N - 1 bytes of NAME in g_tmp into BUF (empty when there is none). */
static void slurp(const char *name, char *buf, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    testlib_read_text(path, buf, n);
}

/* A bundled target resampled to W x H, as smokemorph loads it. */
static Image *bundled(const char *name, int w, int h)
{
    Image *g = testlib_bundled(name, w, h);
    CHECK(g != NULL, "bundled target %s", name);
    return g;
}

/* The target the solver holds: the star scaled to the blob's mass, and
 * clamped to 1 as the display clamps. */
static Image *matched_target(int w, int h)
{
    Image *s = bundled("blob.png", w, h), *t = bundled("star.png", w, h);
    if (s && t) {
        double scale = image_sum(s) / image_sum(t);
        for (int k = 0; k < w * h; k++) t->px[k] = fminf(1.0f, (float)(t->px[k] * scale));
    }
    image_free(s);
    return t;
}

/* The W x H block of IM (one channel) at X, Y (rows from the top). */
static Image *crop(const Image *im, int x, int y, int w, int h)
{
    Image *c = image_create(w, h, 1);
    if (!c) return NULL;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) c->px[j * w + i] = im->px[(y + j) * im->w + x + i];
    return c;
}

/* A 64x64 window over a 64x64 grid shows each cell on one pixel: after 10
 * steps the screenshot must be the density a headless GPU run of the same 10
 * steps writes (white smoke on black: grey = alpha = density). */
static void test_screenshot_matches_density(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --steps 10 --screenshot %s/shot.png", g_tmp);
    int rc = run(args);
    CHECK(rc == 0, "window run exited %d", rc);
    snprintf(args, sizeof args, "--headless --grid 64 --steps 10 --every 10 --density-scale 1 --frames %s/frames", g_tmp);
    rc = run(args);
    CHECK(rc == 0, "headless run exited %d", rc);
    Image *shot = load("shot.png", IMAGE_CHANNEL_R);
    Image *frame = load("frames/frame_00002.png", IMAGE_CHANNEL_A);
    if (shot && frame) {
        CHECK(shot->w == 64 && shot->h == 64, "screenshot is %dx%d", shot->w, shot->h);
        double d = max_diff(shot, frame);
        printf("  screenshot vs read-back density: max diff %.4f (%.1f/255)\n", d, d * 255.0);
        CHECK(d <= 2.0 / 255.0 + 1e-6, "screenshot differs from the density by %.1f/255", d * 255.0);
        CHECK(image_sum(shot) > 10.0, "the screenshot is empty");
    }
    image_free(shot);
    image_free(frame);
}

/* 'v' switches to the target view: the screenshot is the mass-matched target. */
static void test_key_view_target(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --keys v --steps 1 --screenshot %s/target.png", g_tmp);
    int rc = run(args);
    CHECK(rc == 0, "window run exited %d", rc);
    Image *shot = load("target.png", IMAGE_CHANNEL_R);
    Image *t = matched_target(64, 64);
    if (shot && t) {
        double d = max_diff(shot, t);
        printf("  target view vs mass-matched target: max diff %.1f/255\n", d * 255.0);
        CHECK(d <= 2.0 / 255.0 + 1e-6, "the target view differs from the target by %.1f/255", d * 255.0);
    }
    image_free(shot);
    image_free(t);
}

/* 'q' quits at once (no --steps: it would run until quit). 'h' prints keys. */
static void test_keys_quit_and_help(void)
{
    int rc = run("--grid 32 --window 64x64 --keys hq");
    CHECK(rc == 0, "--keys hq exited %d (not quit by 'q'?)", rc);
    CHECK(strstr(R.out, "space") && strstr(R.out, "pause"), "'h' did not print the key list: %s",
          R.out);
}

/* Each key sequence ends in a clean exit with a screenshot of the window's
 * size; what each key does is checked below, against equivalent runs. */
static void test_keys_run_through(void)
{
    const char *seqs[] = {"  ", "s ", "r", "t", "g", "][", "vvvvv", "vvvv", "V", "vvvvvvvvvvv"};
    for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
        char args[1024];
        snprintf(args, sizeof args, "%s/k.png", g_tmp);
        remove(args);
        snprintf(args, sizeof args, "--grid 32 --window 96x64 --keys '%s' --steps 4 --screenshot %s/k.png",
                 seqs[k], g_tmp);
        int rc = run(args);
        CHECK(rc == 0, "--keys '%s' exited %d", seqs[k], rc);
        Image *im = load("k.png", IMAGE_CHANNEL_R);
        if (im) CHECK(im->w == 96 && im->h == 64, "window resized? %dx%d", im->w, im->h);
        image_free(im);
    }
}

/* ---- keys against equivalent runs -------------------------------------------
 * display() presses one key, then takes --steps-per-frame steps (2) unless
 * paused; 's' takes one. A key therefore acts before the frame's steps: a
 * first key acts at step 0, after "h" (a key that leaves the simulation
 * alone) at step 2, after "hh" at step 4. --steps stops the stepping, and the
 * screenshot waits for the keys to run out. 'r' zeroes the step count, so
 * --steps more steps follow it. On a 64x64 grid in a 64x64 window the
 * screenshot is the density, bit for bit (test_screenshot_matches_density). */
#define KEY_STEPS 30

/* A 64x64 window over a 64x64 grid: --keys KEYS (NULL: none), KEY_STEPS
 * steps, OPTS, then the screenshot NAME. */
static int window_shot(const char *keys, const char *opts, const char *name)
{
    char args[1024], k[64] = "";
    if (keys) snprintf(k, sizeof k, "--keys '%s'", keys);
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --steps %d %s %s --screenshot %s/%s",
             KEY_STEPS, k, opts, g_tmp, name);
    int rc = run(args);
    CHECK(rc == 0, "window run --keys '%s' %s exited %d", keys ? keys : "", opts, rc);
    return rc;
}

/* The density after KEY_STEPS headless GPU steps on a 64x64 grid (a --grid
 * in OPTS overrides it) with OPTS, written to DIR as frame_00002.png. Each
 * DIR is computed once. --density-scale 1: alpha is the density, as the
 * window shows it (by default a target denser than 1 scales the alpha). */
static int headless_frame(const char *opts, const char *dir)
{
    char args[1024], path[512];
    snprintf(path, sizeof path, "%s/%s/frame_00002.png", g_tmp, dir);
    if (access(path, R_OK) == 0) return 0;
    snprintf(args, sizeof args,
             "--headless --grid 64 --steps %d --every %d --density-scale 1 %s --frames %s/%s",
             KEY_STEPS, KEY_STEPS, opts, g_tmp, dir);
    int rc = run(args);
    CHECK(rc == 0, "headless run %s exited %d", opts, rc);
    return rc;
}

/* Max difference between two PNGs in g_tmp, each through its channel (a
 * window screenshot is grey: red; a frame is white smoke: alpha); -1 when
 * either is missing or the sizes differ. */
static double png_diff(const char *a, ImageChannel ca, const char *b, ImageChannel cb)
{
    Image *x = load(a, ca), *y = load(b, cb);
    double d = -1.0;
    if (x && y && x->w == y->w && x->h == y->h) d = max_diff(x, y);
    image_free(x);
    image_free(y);
    return d;
}

#define SHOT IMAGE_CHANNEL_R
#define FRAME IMAGE_CHANNEL_A
/* 8-bit PNGs: equal but for rounding. The screenshot is the display's
 * 8-bit conversion, the frame the writer's: a density on a rounding
 * boundary can land one step apart (star -> blob at 64², 30 steps: one
 * pixel, 1/255, with or without keys); a key that did anything moves many
 * pixels by more than VISIBLE. */
#define SAME (1.0 / 255.0 + 1e-6)
#define VISIBLE (4.0 / 255.0)

/* The window run with KEYS must equal the headless run with OPTS, and the
 * key must matter: the plain run differs. */
static void check_key_as_option_in(const char *keys, const char *base, const char *opts, const char *dir,
                                   const char *plain_dir)
{
    char shot[64], with[512];
    snprintf(shot, sizeof shot, "key_%s.png", dir);
    snprintf(with, sizeof with, "%s %s", base, opts);
    if (window_shot(keys, base, shot) || headless_frame(with, dir) || headless_frame(base, plain_dir)) return;
    char frame[128];
    snprintf(frame, sizeof frame, "%s/frame_00002.png", dir);
    double same = png_diff(shot, SHOT, frame, FRAME);
    char plain_frame[128];
    snprintf(plain_frame, sizeof plain_frame, "%s/frame_00002.png", plain_dir);
    double plain = png_diff(shot, SHOT, plain_frame, FRAME);
    printf("  --keys '%s' vs headless %s: max diff %.1f/255 (vs the plain run %.1f/255)\n", keys, opts,
           same * 255.0, plain * 255.0);
    CHECK(same >= 0.0 && same <= SAME, "--keys '%s' differs from headless %s by %.1f/255", keys, opts,
          same * 255.0);
    CHECK(plain >= VISIBLE, "--keys '%s' looks like the plain run (%.1f/255): the key did nothing", keys,
          plain * 255.0);
}

static void check_key_as_option(const char *keys, const char *opts, const char *dir)
{
    check_key_as_option_in(keys, "", opts, dir, "plain");
}

/* 'g' before the first step: gathering off, as --no-gather (with an arrival
 * 0.1 s away, so the gathering runs from step 4 of the 30). */
static void test_key_gather(void)
{
    check_key_as_option_in("g", "--arrive 0.1", "--no-gather", "nogather", "plain_arrive");
}

/* ']' and '[' scale the driving force by 1.25: 0.5 becomes 0.625 and 0.4. */
static void test_keys_driving_force(void)
{
    check_key_as_option("]", "--vf 0.625", "vf0625");
    check_key_as_option("[", "--vf 0.4", "vf04");
}

/* 't' then 'r' at step 4: the swap makes the target the start image, the
 * reset goes back to it with step 0: the morph from the star to the blob, as
 * a headless run with the two images swapped. A 'r' that did nothing, or kept
 * the velocity or the step count, would not match. */
static void test_keys_swap_then_reset(void)
{
    check_key_as_option("hhtr", "targets/star.png targets/blob.png", "swapped");
}

/* Mean difference between A and IMG, of the same size. */
static double mean_diff(const Image *a, const Image *img)
{
    double s = 0.0;
    for (int k = 0; k < img->w * img->h; k++) s += fabs(a->px[k] - img->px[k]);
    return s / (img->w * img->h);
}

/* 't' swaps start and target: the smoke turns back to the start image (the
 * blob). Swapped at step 50 (10 steps a frame, after "hhhhh"), 90 steps
 * later it is nearer the blob than at the swap, and much nearer than
 * without it. (The way back is a reshape that takes the force's noise for
 * its first 0.6 s, which wobbles it, and starts from the target's coarse
 * shape for 0.3 s (--coarse); swapped at step 30, when the coarse start
 * had barely moved the smoke, it came back 3% in 90 steps.) */
static void test_key_swap_flows_back(void)
{
    if (window_shot("hhhhht", "--steps-per-frame 10 --steps 140", "back.png") ||
        headless_frame("--steps 50 --every 50", "plain50") || headless_frame("--steps 140 --every 140", "plain140"))
        return;
    Image *blob = bundled("blob.png", 64, 64);
    Image *back = load("back.png", SHOT), *at = load("plain50/frame_00002.png", FRAME),
          *on = load("plain140/frame_00002.png", FRAME);
    if (blob && back && at && on) {
        double db = mean_diff(back, blob), da = mean_diff(at, blob), dn = mean_diff(on, blob);
        printf("  mean distance to the blob: at the swap (step 50) %.4f, at step 140 %.4f, without the "
               "swap %.4f\n", da, db, dn);
        CHECK(db < 0.92 * da && db < 0.5 * dn, "after 't' the smoke does not flow back to the blob: %.4f at "
              "the swap, %.4f after, %.4f without", da, db, dn);
    }
    image_free(blob);
    image_free(back);
    image_free(at);
    image_free(on);
}

/* 's' takes one step and pauses, space pauses and resumes: "sst " and "h t "
 * swap at step 2, as "ht" does; "hht" (at step 4) shows that the step of the
 * swap is visible. */
static void test_keys_single_step_and_pause(void)
{
    if (window_shot("ht", "", "swap2.png") || window_shot("hht", "", "swap4.png")) return;
    double d24 = png_diff("swap2.png", SHOT, "swap4.png", SHOT);
    printf("  swap at step 2 vs at step 4: max diff %.1f/255\n", d24 * 255.0);
    CHECK(d24 >= VISIBLE, "a swap at step 2 looks like one at step 4 (%.1f/255)", d24 * 255.0);
    const char *seqs[] = {"sst ", "h t "};
    for (int k = 0; k < 2; k++) {
        if (window_shot(seqs[k], "", "seq.png")) continue;
        double d = png_diff("seq.png", SHOT, "swap2.png", SHOT);
        printf("  --keys '%s' vs 'ht': max diff %.1f/255\n", seqs[k], d * 255.0);
        CHECK(d >= 0.0 && d <= SAME, "--keys '%s' does not swap at step 2 as 'ht' does: %.1f/255", seqs[k],
              d * 255.0);
    }
}

/* The bottom row of the Fig. 2 layout in a 200x192 window over a 64x64 grid:
 * the layout (64 wide, 96 high) scales by 2 to 128x192 at x = 36; the morph
 * fills the top 128 rows, the start and the target one cell per pixel below
 * it, 2 pixels either side of the middle: columns 34 and 102 from row 128.
 * Sets the largest difference of each to the start (the blob) and to the
 * mass-matched target (the star). */
static int fig2_bottom(const char *keys, const char *name, double *d_start, double *d_target)
{
    char args[1024];
    snprintf(args, sizeof args, "--grid 64 --window 200x192 --keys %s --steps 1 --screenshot %s/%s", keys,
             g_tmp, name);
    int rc = run(args);
    CHECK(rc == 0, "--keys %s exited %d", keys, rc);
    Image *im = load(name, IMAGE_CHANNEL_R);
    Image *blob = bundled("blob.png", 64, 64), *star = matched_target(64, 64);
    Image *left = im ? crop(im, 34, 128, 64, 64) : NULL, *right = im ? crop(im, 102, 128, 64, 64) : NULL;
    rc = -1;
    if (left && right && blob && star) {
        *d_start = max_diff(left, blob);
        *d_target = max_diff(right, star);
        rc = 0;
    }
    image_free(im);
    image_free(blob);
    image_free(star);
    image_free(left);
    image_free(right);
    return rc;
}

/* "V" (the view before density: the last) shows the Fig. 2 layout: the start image below left, the target
 * below right, each as it is. The plain density view ("Vv", the cycle
 * back) shows neither there. */
static void test_fig2_layout(void)
{
    double ds, dt;
    if (fig2_bottom("V", "fig2.png", &ds, &dt) == 0) {
        printf("  Fig. 2 layout: below left vs the start %.1f/255, below right vs the target %.1f/255\n",
               ds * 255.0, dt * 255.0);
        CHECK(ds <= 1.0 / 255.0 + 1e-6, "Fig. 2 layout: below left is not the start image (%.1f/255)",
              ds * 255.0);
        CHECK(dt <= 1.0 / 255.0 + 1e-6, "Fig. 2 layout: below right is not the target (%.1f/255)",
              dt * 255.0);
    }
    /* the morph above at twice the size: output pixels 2j and 2j+1 sample
     * cell j -/+ 1/4, bilinearly, so each 2x2 block averages to the density
     * filtered by (1/8, 3/4, 1/8) along each axis (clamped at the walls) */
    char args[1024];
    snprintf(args, sizeof args, "--headless --grid 64 --steps 1 --every 1 --density-scale 1 --frames %s/step1", g_tmp);
    int rc = run(args);
    CHECK(rc == 0, "headless run of 1 step exited %d", rc);
    Image *im = load("fig2.png", IMAGE_CHANNEL_R), *rho = load("step1/frame_00002.png", IMAGE_CHANNEL_A);
    if (im && rho) {
        double d = 0.0;
        for (int j = 0; j < 64; j++)
            for (int i = 0; i < 64; i++) {
                double block = 0.0, want = 0.0;
                for (int b = 0; b < 2; b++)
                    for (int a = 0; a < 2; a++) block += im->px[(2 * j + b) * im->w + 36 + 2 * i + a] / 4.0;
                for (int b = -1; b <= 1; b++)
                    for (int a = -1; a <= 1; a++) {
                        int x = i + a < 0 ? 0 : (i + a > 63 ? 63 : i + a);
                        int y = j + b < 0 ? 0 : (j + b > 63 ? 63 : j + b);
                        want += (a ? 0.125 : 0.75) * (b ? 0.125 : 0.75) * rho->px[y * 64 + x];
                    }
                d = fmax(d, fabs(block - want));
            }
        printf("  Fig. 2 layout: above vs the density, filtered: max diff %.1f/255\n", d * 255.0);
        CHECK(d <= 2.0 / 255.0, "Fig. 2 layout: above is not the morph (%.1f/255)", d * 255.0);
    }
    image_free(im);
    image_free(rho);
    if (fig2_bottom("Vv", "dens.png", &ds, &dt) == 0) {
        printf("  density view: the same places vs the start %.1f/255, vs the target %.1f/255\n", ds * 255.0,
               dt * 255.0);
        CHECK(ds > 0.25 && dt > 0.25, "the density view passes for the Fig. 2 layout (%.1f/255, %.1f/255)",
              ds * 255.0, dt * 255.0);
    }
}

/* ---- mouse, resize and title through xdotool --------------------------------
 * The window starts paused (--keys ' ') at a known step; the script waits for
 * "paused" in the title, acts, and resumes with space: what it does lands
 * between the same two steps in every run. */

/* Runs smokemorph ARGS in the background and the sh commands SCRIPT beside
 * it; in SCRIPT, `title RE` waits until the window's title matches the
 * extended regex RE (for up to 10 s) and sets $w to the window. Returns
 * smokemorph's exit status, 3 when the title never came. */
static int xrun(const char *args, const char *script)
{
    char path[512], cmd[1024];
    FILE *f = testgl_script(g_tmp, path, sizeof path);
    if (!f) return -1;
    fprintf(f,
            "%s %s >%s/out.txt 2>&1 &\n"
            "pid=$!\n"
            "%s"
            "%s\n"
            "wait $pid\n",
            testlib_bin(), args, g_tmp, TESTGL_SH_TITLE, script);
    fclose(f);
    snprintf(cmd, sizeof cmd, "timeout 30 sh %s 2>&1", path);
    int rc = testlib_run_sh(cmd, NULL, &R);
    if (rc != 0) printf("  the script said: %.2047s\n", R.out);
    return rc;
}

/* The centre of mass of IM's values, in cells (row 0 at the top). */
static void centroid(const Image *im, double *cx, double *cy)
{
    double s = 0.0, sx = 0.0, sy = 0.0;
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            double v = im->px[y * im->w + x];
            s += v;
            sx += v * x;
            sy += v * y;
        }
    *cx = s > 0.0 ? sx / s : 0.0;
    *cy = s > 0.0 ? sy / s : 0.0;
}

/* A drag to the right and down through the blob, at step 0, in a 96x64
 * window (the 64x64 grid one cell per pixel from x = 16): the picture after
 * 30 steps changes around the stroke, from cell (22, 40) to (42, 50), and
 * the smoke moves the way of the drag. Rows mirrored or the pillarbox
 * offset ignored would stir elsewhere (rows 13..23 hold no smoke). */
static void test_mouse_drag_stirs(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--grid 64 --window 96x64 --keys ' ' --steps %d --screenshot %s/drag.png",
             KEY_STEPS, g_tmp);
    int rc = xrun(args, "title paused\n"
                        "xdotool mousemove --window $w 38 40 mousedown 1 mousemove --window $w 43 42 "
                        "mousemove --window $w 48 45 mousemove --window $w 53 47 mousemove --window $w 58 50 "
                        "mouseup 1 key --window $w space");
    CHECK(rc == 0, "drag run exited %d", rc);
    if (rc != 0 || headless_frame("", "plain")) return;
    Image *shot = load("drag.png", SHOT), *plain = load("plain/frame_00002.png", FRAME);
    Image *drag = shot ? crop(shot, 16, 0, 64, 64) : NULL, *diff = image_create(64, 64, 1);
    if (drag && plain && diff) {
        for (int k = 0; k < 64 * 64; k++) diff->px[k] = fabsf(drag->px[k] - plain->px[k]);
        double d = max_diff(drag, plain), dx, dy, px, py, ax, ay;
        centroid(diff, &dx, &dy);
        centroid(drag, &ax, &ay);
        centroid(plain, &px, &py);
        printf("  drag vs no drag: max diff %.1f/255 around cell (%.1f, %.1f); the smoke moved by (%.3f, "
               "%.3f) cells\n", d * 255.0, dx, dy, ax - px, ay - py);
        CHECK(d >= 0.1, "the drag did not change the picture (%.1f/255)", d * 255.0);
        CHECK(fabs(dx - 32.0) < 6.0 && fabs(dy - 45.0) < 6.0,
              "the drag changed the picture around cell (%.1f, %.1f), not along the stroke", dx, dy);
        CHECK(ax - px > 0.05 && ay - py > 0.05, "the drag right and down moved the smoke by (%.3f, %.3f)",
              ax - px, ay - py);
    }
    image_free(shot);
    image_free(plain);
    image_free(drag);
    image_free(diff);
}

/* A 64x32 grid in a 64x32 window, paused at step 0, resized to W x H, then
 * resumed: the screenshot is W x H and shows the grid one cell per pixel at
 * X, Y (the largest rectangle of the grid's aspect, centred) and the clear
 * colour (0.08) around it. */
static void check_resize(int w, int h, int x, int y)
{
    char args[1024], script[512];
    snprintf(args, sizeof args,
             "--grid 64x32 --window 64x32 --keys ' ' --steps %d --screenshot %s/resized.png", KEY_STEPS,
             g_tmp);
    snprintf(script, sizeof script,
             "title paused\nxdotool windowsize --sync $w %d %d key --window $w space", w, h);
    int rc = xrun(args, script);
    CHECK(rc == 0, "resize run to %dx%d exited %d", w, h, rc);
    if (rc != 0 || headless_frame("--grid 64x32", "plain64x32")) return;
    Image *shot = load("resized.png", SHOT), *rho = load("plain64x32/frame_00002.png", FRAME);
    if (!shot || !rho) goto done;
    CHECK(shot->w == w && shot->h == h, "resized to %dx%d, the screenshot is %dx%d", w, h, shot->w, shot->h);
    if (shot->w != w || shot->h != h) goto done;
    double grid = 0.0, around = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double v = shot->px[j * w + i];
            if (i >= x && i < x + 64 && j >= y && j < y + 32)
                grid = fmax(grid, fabs(v - rho->px[(j - y) * 64 + i - x]));
            else
                around = fmax(around, fabs(v - 0.08));
        }
    printf("  resized to %dx%d: the grid at (%d, %d) vs the density %.1f/255, around it vs the clear colour "
           "%.1f/255\n", w, h, x, y, grid * 255.0, around * 255.0);
    CHECK(grid <= SAME, "resized to %dx%d: the picture at (%d, %d) is not the density (%.1f/255)", w, h, x, y,
          grid * 255.0);
    CHECK(around <= 1.0 / 255.0, "resized to %dx%d: the bars around the picture are not clear (%.1f/255)", w,
          h, around * 255.0);
done:
    image_free(shot);
    image_free(rho);
}

/* Taller: bars above and below; wider: bars left and right. */
static void test_resize_keeps_aspect(void)
{
    check_resize(64, 96, 0, 32);
    check_resize(128, 32, 32, 0);
}

/* The title bar: "sss" steps three times, one step each, and pauses; "V"
 * after them forces a title with the Fig. 2 view's name, so the first title
 * naming it and "paused" is read at step 3: it shows step 3 and the error a
 * headless run reports after 3 steps. Resumed, within about a second it
 * shows a rate above zero and no "paused"; 'q' quits. */
static void test_title_bar(void)
{
    char args[1024], script[1024], title[512], later[512];
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --keys sssV");
    snprintf(script, sizeof script,
             "title 'target]  paused'\n"
             "xdotool getwindowname $w >%s/title.txt\n"
             "xdotool key --window $w space\n"
             "title ' [1-9][0-9]* steps/s .*target]  [(]'\n"
             "xdotool getwindowname $w >%s/later.txt\n"
             "xdotool key --window $w q",
             g_tmp, g_tmp);
    int rc = xrun(args, script);
    CHECK(rc == 0, "title run exited %d", rc);
    slurp("title.txt", title, sizeof title);
    slurp("later.txt", later, sizeof later);
    printf("  paused: %s  running: %s", title, later);
    long step = -1, step2 = -1;
    double rate = -1.0, err = -1.0, rate2 = -1.0, err2 = -1.0;
    int n = sscanf(title, "smokemorph step %ld %lf steps/s error %lf", &step, &rate, &err);
    CHECK(n == 3 && step == 3 && strstr(title, "paused"), "the paused title is not at step 3: '%s'", title);
    n = sscanf(later, "smokemorph step %ld %lf steps/s error %lf", &step2, &rate2, &err2);
    CHECK(n == 3 && step2 > 3 && rate2 > 0.0 && !strstr(later, "paused"),
          "the running title shows no progress: '%s'", later);

    char csv[4096], *row;
    snprintf(args, sizeof args, "--headless --grid 64 --steps 3 --every 1 --metrics %s/m.csv", g_tmp);
    rc = run(args);
    CHECK(rc == 0, "headless run with --metrics exited %d", rc);
    slurp("m.csv", csv, sizeof csv);
    double want = -1.0;
    if ((row = strstr(csv, "\n3,")) && sscanf(row, "\n3,%*[^,],%lf", &want) == 1) {
        printf("  error after 3 steps: title %.3f, headless %.6f\n", err, want);
        CHECK(fabs(err - want) <= 0.0005 + 1e-9, "the title's error %.3f is not the error %.6f", err, want);
    } else {
        CHECK(0, "no step 3 in the metrics: %s", csv);
    }
}

/* A sequence (issue 9) in the window: 3 keys of 2 steps, "sss" steps three
 * times and pauses, so the title at step 3 shows key 2 of 3, 1 step to the
 * next, and the error a headless run of the same sequence reports at step 3
 * (against key 2): the keys switch at the same steps. */
static void test_title_sequence(void)
{
    const char *seq = "--key-every 2 targets/blob.png targets/star.png targets/ring.png "
                      "targets/blob.png";
    char args[1024], script[1024], title[512];
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --keys sssV %s", seq);
    snprintf(script, sizeof script,
             "title 'target]  paused'\n"
             "xdotool getwindowname $w >%s/title.txt\n"
             "xdotool key --window $w q",
             g_tmp);
    int rc = xrun(args, script);
    CHECK(rc == 0, "sequence title run exited %d", rc);
    slurp("title.txt", title, sizeof title);
    printf("  sequence, paused: %s", title);
    long step = -1;
    double err = -1.0;
    int n = sscanf(title, "smokemorph step %ld key 2/3 (1 to next) %*f steps/s error %lf", &step, &err);
    CHECK(n == 2 && step == 3, "the title at step 3 is not at key 2/3, 1 to next: '%s'", title);

    char csv[4096], *row;
    snprintf(args, sizeof args, "--headless --grid 64 --steps 3 --every 1 --metrics %s/m.csv %s", g_tmp,
             seq);
    rc = run(args);
    CHECK(rc == 0, "headless sequence with --metrics exited %d", rc);
    slurp("m.csv", csv, sizeof csv);
    double want = -1.0;
    int key = 0;
    if ((row = strstr(csv, "\n3,")) && sscanf(row, "\n3,%*[^,],%lf,%*[^,],%*[^,],%d", &want, &key) == 2) {
        printf("  error at step 3: title %.3f, headless %.6f (key %d)\n", err, want, key);
        CHECK(key == 2 && fabs(err - want) <= 0.0005 + 1e-9, "the title's error %.3f is not the "
              "headless error %.6f against key %d", err, want, key);
    } else {
        CHECK(0, "no step 3 in the metrics: %s", csv);
    }
}

/* ---- keys of a sequence (issue 9, point 4) ----------------------------------
 * 3 keys, 5 steps each: key 1 (star) for steps 1..5, key 2 (ring) 6..10,
 * key 3 (blob) from 11. 'n' / 'p' (PageDown / PageUp) make the next /
 * previous key the goal now, with the step count at the step before its
 * range; the smoke and the velocity carry over. */
/* (no vorticity confinement: it feeds on the flow's smallest differences,
 * and ' np ' must come back to the plain sequence to the last 8-bit step,
 * while the goal's mass is read back at each switch) */
#define SEQ "--swirl 0 --key-every 5 targets/blob.png targets/star.png targets/ring.png targets/blob.png"

/* The title at a known step, then after PageDown, PageUp, 'p' and Home: the
 * active key, the step count and the steps to the next key follow. */
static void test_title_next_previous(void)
{
    char args[1024], script[2048], title[512], t[4][512];
    snprintf(args, sizeof args, "--grid 64 --window 64x64 --keys sssnV " SEQ);
    snprintf(script, sizeof script,
             "title 'target]  paused'\n"
             "xdotool getwindowname $w >%s/t0.txt\n"
             "xdotool key --window $w Page_Down\n"
             "title 'step 10  key 3/3  '\n"
             "xdotool getwindowname $w >%s/t1.txt\n"
             "xdotool key --window $w Page_Up\n"
             "title 'step 5  key 2/3 '\n"
             "xdotool getwindowname $w >%s/t2.txt\n"
             "xdotool key --window $w p\n"
             "title 'step 0  key 1/3 '\n"
             "xdotool getwindowname $w >%s/t3.txt\n"
             "xdotool key --window $w n key --window $w n\n"
             "title 'step 10  key 3/3  '\n"
             "xdotool key --window $w Home\n"
             "title 'step 0  key 1/3 '\n"
             "xdotool getwindowname $w >%s/t4.txt\n"
             "xdotool key --window $w q",
             g_tmp, g_tmp, g_tmp, g_tmp, g_tmp);
    int rc = xrun(args, script);
    CHECK(rc == 0, "next / previous title run exited %d", rc);
    slurp("t0.txt", title, sizeof title);
    printf("  after 'sssn': %s", title);
    /* 3 single steps (key 1), then 'n': key 2 at step 5, 5 steps to key 3 */
    CHECK(strncmp(title, "smokemorph  step 5  key 2/3 (5 to next)  ", 41) == 0,
          "after 3 steps and 'n' the title is not step 5, key 2/3, 5 to next: '%s'", title);
    static const char *const want[4] = {"smokemorph  step 10  key 3/3  ",
                                        "smokemorph  step 5  key 2/3 (5 to next)  ",
                                        "smokemorph  step 0  key 1/3 (5 to next)  ",
                                        "smokemorph  step 0  key 1/3 (5 to next)  "};
    static const char *const what[4] = {"PageDown", "PageUp", "'p'", "Home"};
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "t%d.txt", k + 1);
        slurp(name, t[k], sizeof t[k]);
        printf("  after %s: %s", what[k], t[k]);
        CHECK(strncmp(t[k], want[k], strlen(want[k])) == 0, "after %s the title is '%s', expected '%s...'",
              what[k], t[k], want[k]);
        /* the rate counts the steps taken, not the step count a jump moved */
        CHECK(strstr(t[k], " steps/s") && !strstr(t[k], " -"), "after %s a negative rate: '%s'", what[k], t[k]);
    }
}

/* A headless GPU run on a 64x64 grid with OPTS and --steps STEPS: its
 * density at STEPS in DIR/frame_00002.png, as the window shows it. */
static int headless_at(const char *opts, long steps, const char *dir)
{
    char args[1024];
    snprintf(args, sizeof args,
             "--headless --grid 64 --steps %ld --every %ld --density-scale 1 %s --frames %s/%s", steps, steps,
             opts, g_tmp, dir);
    int rc = run(args);
    CHECK(rc == 0, "headless run %s exited %d", opts, rc);
    return rc;
}

/* 'n' at step 0: key 2 is the goal at once, at step 5: the window's 25
 * further steps are the headless sequence start -> ring -> blob over 25
 * steps. ' np ' (paused, so that no steps come between) goes there and
 * back: the plain sequence, as if nothing happened. 'n' and the plain
 * sequence differ. */
static void test_keys_next_previous(void)
{
    if (window_shot("n", SEQ, "next.png") || window_shot(" np ", SEQ, "nextprev.png") ||
        headless_at("--swirl 0 --key-every 5 targets/blob.png targets/ring.png targets/blob.png", KEY_STEPS - 5,
                    "seq_next") ||
        headless_at(SEQ, KEY_STEPS, "seq_plain"))
        return;
    double next = png_diff("next.png", SHOT, "seq_next/frame_00002.png", FRAME);
    double back = png_diff("nextprev.png", SHOT, "seq_plain/frame_00002.png", FRAME);
    double apart = png_diff("next.png", SHOT, "seq_plain/frame_00002.png", FRAME);
    printf("  'n' vs the sequence from key 2 %.1f/255, ' np ' vs the plain sequence %.1f/255, 'n' vs the plain "
           "sequence %.1f/255\n", next * 255.0, back * 255.0, apart * 255.0);
    CHECK(next >= 0.0 && next <= SAME, "'n' at step 0 is not the sequence from key 2 (%.1f/255)", next * 255.0);
    CHECK(back >= 0.0 && back <= SAME, "' np ' at step 0 is not the plain sequence (%.1f/255)", back * 255.0);
    CHECK(apart >= VISIBLE, "'n' looks like the plain sequence (%.1f/255): the key did nothing", apart * 255.0);
}

/* The Fig. 2 layout of a 3-key sequence, 32x32 grid in a 144x180 window:
 * the morph above (0..143 from the top), and below it a panel per image,
 * one cell per pixel: the start, then keys 1..3 as given, at x = 2 + 36 i,
 * rows 146..177 from the top; a 2-pixel mark in the gap around the active
 * key's panel only ('V' at step 1: key 1; 'Vnn': key 3). */
static void check_fig2_sequence(const char *keys, int active)
{
    char args[1024];
    snprintf(args, sizeof args, "--grid 32 --window 144x180 --keys %s --steps 1 --screenshot %s/fig2seq.png "
             SEQ, keys, g_tmp);
    int rc = run(args);
    CHECK(rc == 0, "--keys %s exited %d", keys, rc);
    Image *im = load("fig2seq.png", IMAGE_CHANNEL_R);
    if (!im) return;
    CHECK(im->w == 144 && im->h == 180, "the window is %dx%d", im->w, im->h);
    static const char *const names[4] = {"blob.png", "star.png", "ring.png", "blob.png"};
    for (int p = 0; p < 4 && im->w == 144 && im->h == 180; p++) {
        int x = 2 + 36 * p, y = 146;
        Image *want = bundled(names[p], 32, 32), *got = crop(im, x, y, 32, 32);
        double d = want && got ? max_diff(got, want) : 1.0;
        /* the 2-pixel ring around the panel */
        double mark_min = 1.0, mark_max = 0.0;
        for (int j = y - 2; j < y + 34; j++)
            for (int i = x - 2; i < x + 34; i++) {
                if (i >= x && i < x + 32 && j >= y && j < y + 32) continue;
                double v = im->px[j * im->w + i];
                mark_min = fmin(mark_min, v);
                mark_max = fmax(mark_max, v);
            }
        printf("  --keys %s, panel %d (%s): vs the image %.1f/255; around it %.3f..%.3f\n", keys, p, names[p],
               d * 255.0, mark_min, mark_max);
        CHECK(d <= 1.0 / 255.0 + 1e-6, "--keys %s: panel %d is not %s (%.1f/255)", keys, p, names[p], d * 255.0);
        if (p == active)
            CHECK(mark_min >= 254.0 / 255.0, "--keys %s: the active key %d has no mark around it (min %.3f)", keys,
                  active, mark_min);
        else
            CHECK(fabs(mark_min - 0.08) <= 1.0 / 255.0 && fabs(mark_max - 0.08) <= 1.0 / 255.0,
                  "--keys %s: panel %d (key %d not active) is marked (%.3f..%.3f)", keys, p, active, mark_min,
                  mark_max);
        image_free(want);
        image_free(got);
    }
    /* the morph above: the smoke, not the clear colour */
    double above = 0.0;
    for (int j = 0; j < 144 && im->h == 180; j++)
        for (int i = 0; i < 144 && im->w == 144; i++) above = fmax(above, im->px[j * im->w + i]);
    CHECK(above > 0.5, "--keys %s: no smoke above the panels (max %.3f)", keys, above);
    image_free(im);
}

static void test_fig2_sequence(void)
{
    check_fig2_sequence("V", 1);
    check_fig2_sequence("Vnn", 3);
}

int main(void)
{
    testlib_tmpdir(g_tmp, sizeof g_tmp, "smokemorph-win");
    RUN(test_screenshot_matches_density);
    RUN(test_key_view_target);
    RUN(test_keys_quit_and_help);
    RUN(test_keys_run_through);
    RUN(test_fig2_layout);
    RUN(test_title_sequence);
    RUN(test_title_next_previous);
    RUN(test_keys_next_previous);
    RUN(test_fig2_sequence);
    RUN(test_key_gather);
    RUN(test_keys_driving_force);
    RUN(test_keys_swap_then_reset);
    RUN(test_key_swap_flows_back);
    RUN(test_keys_single_step_and_pause);
    RUN(test_mouse_drag_stirs);
    RUN(test_resize_keeps_aspect);
    RUN(test_title_bar);
    testlib_rm_rf(g_tmp);
    testlib_result_free(&R);
    return check_done();
}
