/* The classroom's window hooks (tier 3, under xvfb-run): --compare-preset
 * splits the window, A's density left and B's right, each the density its
 * run holds (a headless compare on the same backend writes the same two
 * fields); the '.' key runs the step pass by pass and names each pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "image.h"
#include "testlib.h"

static char g_tmp[] = "/tmp/test_window_compare_XXXXXX";
static TestlibResult R;

static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "timeout 60 %s %s 2>&1", testlib_bin(), args);
    return testlib_run_sh(cmd, NULL, &R);
}

/* The sum of the pixels of im (luma) in columns x0..x1-1. */
static double column_sum(const Image *im, int x0, int x1)
{
    double s = 0.0;
    for (int j = 0; j < im->h; j++)
        for (int i = x0; i < x1; i++) s += im->px[(size_t)j * im->w + i];
    return s;
}

static void test_split_screen(void)
{
    char args[1024], shot[512];
    snprintf(shot, sizeof shot, "%s/split.png", g_tmp);
    snprintf(args, sizeof args, "--backend fragment --grid 64 --window 520x300 --steps 30 --compare-preset gather "
             "--screenshot %s", shot);
    int rc = run(args);
    CHECK(rc == 0, "the split window ran: exit %d: %s", rc, R.out);
    CHECK(strstr(R.out, "A: gathering on | B: gathering off") != NULL, "both runs named: %s", R.out);
    Image *im = testlib_load(shot, IMAGE_CHANNEL_LUMA);
    CHECK(im != NULL && im->w == 520 && im->h == 300, "the screenshot");
    if (!im) return;
    double left = column_sum(im, 0, im->w / 2 - 4), right = column_sum(im, im->w / 2 + 4, im->w);
    double gap = column_sum(im, im->w / 2 - 2, im->w / 2 + 2) / (4.0 * im->h);
    printf("  smoke left %.0f, right %.0f, the gap's mean %.3f\n", left, right, gap);
    CHECK(left > 100.0 && right > 100.0, "smoke in both halves (%g, %g)", left, right);
    CHECK(fabs(left - right) < 0.2 * left, "the same start, about as much smoke (%g, %g)", left, right);
    CHECK(gap < 0.15, "the halves are apart (the gap %g)", gap);
    image_free(im);
}

static void test_pass_by_pass(void)
{
    /* three passes of step 1, then quit: blur ρ, the potential's right-hand
     * side, its first V-cycle (with a residual) */
    int rc = run("--backend fragment --grid 48 --window 256x256 --keys '...q'");
    CHECK(rc == 0, "pass by pass ran: exit %d: %s", rc, R.out);
    CHECK(strstr(R.out, "step 1  pass 1/") && strstr(R.out, "blur rho -> blurred density"), "pass 1 named: %s", R.out);
    CHECK(strstr(R.out, "pass 2/") && strstr(R.out, "potential rhs -> potential rhs"), "pass 2 named");
    CHECK(strstr(R.out, "pass 3/") && strstr(R.out, "potential V-cycle 1/4 -> potential") &&
              strstr(R.out, "residual"), "pass 3 named, with its residual");
}

int main(void)
{
    if (!mkdtemp(g_tmp)) {
        CHECK(0, "mkdtemp");
        return check_done();
    }
    RUN(test_split_screen);
    RUN(test_pass_by_pass);
    testlib_result_free(&R);
    testlib_rm_rf(g_tmp);
    return check_done();
}
