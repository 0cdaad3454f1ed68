/* test_window_cli: the binary ($SMOKEMORPH_BIN, default build/smokemorph)
 * under a display; run under xvfb-run (tests/run.sh does). --gl-info must
 * report the path a run with the same options takes: the window when there
 * is a display, headless with --headless, --cpu or a display that cannot be
 * opened. Children run with cwd in a mkdtemp directory, stdout and stderr
 * captured to files; test_cli covers the same without a display. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

#define MAXARGS 32

static char bin[PATH_MAX];
static char tmp[256];  /* holds work */
static char work[512]; /* cwd of every child */

/* The last run: exit status (or -1), terminating signal (or 0), stdout, stderr. */
static TestlibResult R;

static int count_entries(const char *dir) { return testlib_count_entries(dir, NULL, NULL); }

static int count_lines(const char *s) { return testlib_count_lines(s); }

/* Run the binary with the NULL-terminated arguments; `display` replaces
 * $DISPLAY for the child (NULL: keep xvfb-run's), `env` is one extra
 * NAME=VALUE or NULL. Fills R. */
static void run(const char *display, const char *env, ...)
{
    const char *argv[MAXARGS + 2], *head[] = {bin, NULL};
    va_list ap;
    va_start(ap, env);
    testlib_argv(argv, MAXARGS, head, va_arg(ap, const char *), ap);
    va_end(ap);

    char disp[128];
    const char *envs[3] = {NULL, NULL, NULL};
    int n = 0;
    if (display) {
        snprintf(disp, sizeof disp, "DISPLAY=%s", display);
        envs[n++] = disp;
    }
    if (env) envs[n++] = env;
    TestlibRunOpts o = {0};
    o.cwd = work;
    o.env = envs;
    testlib_run(argv, &o, &R);
}

/* --gl-info succeeded, its first line is "path:" and a path starting with
 * `path`, and it wrote no file. */
static void expect_gl_info(int line, const char *what, const char *path)
{
    CHECK(R.signal == 0 && R.code == 0, "line %d (%s): exit %d signal %d; stderr:\n%s", line,
          what, R.code, R.signal, R.err);
    char want[128];
    snprintf(want, sizeof want, "path:     %s", path);
    CHECK(strncmp(R.out, want, strlen(want)) == 0, "line %d (%s): expected '%s...', got:\n%s",
          line, what, want, R.out);
    CHECK(strstr(R.out, "renderer: ") && strstr(R.out, "version:  "),
          "line %d (%s): no renderer or version:\n%s", line, what, R.out);
    CHECK(count_entries(work) == 0, "line %d (%s): --gl-info wrote files", line, what);
}

static void test_gl_info_path(void)
{
    /* a plain run here opens the window, so --gl-info reports the window */
    run(NULL, NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info with a display", "window (freeglut)");
    CHECK(R.err[0] == '\0', "--gl-info with a display wrote to stderr:\n%s", R.err);
    /* the window runs the compute backend where the context has 4.3 (Mesa
     * gives 4.5), the fragment one on request, and never the CPU (auto picks
     * the CPU on llvmpipe only headless) */
    int major = 0, minor = 0;
    const char *v = strstr(R.out, "version:  ");
    bool has43 = v && sscanf(v + 10, "%d.%d", &major, &minor) == 2 && (major > 4 || (major == 4 && minor >= 3));
    CHECK(strstr(R.out, has43 ? "backend:  compute (auto)" : "backend:  fragment (auto)") != NULL,
          "--gl-info in a window, GL %d.%d: not the expected backend:\n%s", major, minor, R.out);
    run(NULL, NULL, "--gl-info", "--backend", "fragment", NULL);
    CHECK(R.code == 0 && strstr(R.out, "backend:  fragment\n") != NULL,
          "--gl-info --backend fragment in a window:\n%s", R.out);
    run(NULL, NULL, "--gl-info", "--headless", NULL);
    CHECK(R.code == 0 && (strstr(R.out, "llvmpipe") ? strstr(R.out, "backend:  cpu (auto)")
                                                     : strstr(R.out, "backend:  c")) != NULL,
          "--gl-info --headless: auto's backend on this renderer:\n%s", R.out);

    /* the options that make a run headless make --gl-info headless */
    run(NULL, NULL, "--gl-info", "--headless", NULL);
    expect_gl_info(__LINE__, "--gl-info --headless", "headless EGL");
    run(NULL, NULL, "--headless", "--gl-info", NULL);
    expect_gl_info(__LINE__, "--headless --gl-info", "headless EGL");
    run(NULL, NULL, "--gl-info", "--cpu", NULL);
    expect_gl_info(__LINE__, "--gl-info --cpu", "headless EGL");

    /* a display that cannot be opened: a run goes headless, so does --gl-info */
    run(":4093", NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info, DISPLAY naming no server", "headless EGL");
    run("", NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info, DISPLAY empty", "headless EGL");
}

/* A window on a driver older than 3.3 (Mesa capped at 3.0): one line in
 * the project's voice (not Xlib's five-line GLXBadFBConfig report), saying
 * 3.3 is needed and the ways around it, exit 1, nothing written. */
static void test_old_gl_window(void)
{
    static const char *const gl_info[9] = {"--gl-info", NULL};
    static const char *const morph[9] = {"--grid", "32", "--steps", "4", "--frames", "F",
                                        "--metrics", "m.csv", NULL};
    const char *const *cases[] = {gl_info, morph};
    for (int k = 0; k < 2; k++) {
        const char *const *a = cases[k];
        run(NULL, "MESA_GL_VERSION_OVERRIDE=3.0", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
            NULL);
        CHECK(R.signal == 0 && R.code == 1, "GL 3.0 window %s: exit %d signal %d", a[0], R.code,
              R.signal);
        CHECK(count_lines(R.err) == 1, "GL 3.0 window %s: %d lines on stderr, expected one:\n%s",
              a[0], count_lines(R.err), R.err);
        CHECK(strncmp(R.err, "glctx: OpenGL 3.3 or newer is needed", 36) == 0 &&
                  strstr(R.err, "--headless") && strstr(R.err, "--cpu"),
              "GL 3.0 window %s: not the 3.3 message with --headless and --cpu:\n%s", a[0], R.err);
        CHECK(R.out[0] == '\0', "GL 3.0 window %s: printed on stdout: %s", a[0], R.out);
        CHECK(count_entries(work) == 0, "GL 3.0 window %s: %d files written", a[0],
              count_entries(work));
    }
}

/* --cpu with a display runs headless (the window needs a GPU backend) and
 * says so in one line; a window-only option with it is a usage error. */
static void test_cpu_with_display(void)
{
    run(NULL, NULL, "--cpu", "--grid", "32", "--steps", "2", "--frames", "F", NULL);
    CHECK(R.signal == 0 && R.code == 0, "--cpu with a display: exit %d:\n%s", R.code, R.err);
    CHECK(strstr(R.err, "--cpu runs without a window") != NULL,
          "--cpu with a display does not say it runs headless:\n%s", R.err);
    char f[700];
    snprintf(f, sizeof f, "%s/F", work);
    int nf = 0;
    testlib_count_entries(f, "frame_", &nf); /* besides run.json */
    CHECK(nf == 2, "--cpu with a display: %d frames, expected steps 0 and 2", nf);
    testlib_rm_rf(f);
    run(NULL, NULL, "--cpu", "--keys", "v", "--grid", "32", "--steps", "2", NULL);
    CHECK(R.code == 2 && count_lines(R.err) == 1 && strstr(R.err, "--keys needs a window") &&
              strstr(R.err, "--cpu"),
          "--cpu --keys with a display: exit %d:\n%s", R.code, R.err);
    CHECK(count_entries(work) == 0, "--cpu --keys: files written");
}

/* --checkpoint-every is for headless runs: in a window it is a usage error
 * (exit 2, one line naming --headless), before any window opens. */
static void test_checkpoint_in_window(void)
{
    run(NULL, NULL, "--checkpoint-every", "10", NULL);
    CHECK(R.signal == 0 && R.code == 2 && count_lines(R.err) == 1 && strstr(R.err, "--headless"),
          "--checkpoint-every in a window: exit %d:\n%s", R.code, R.err);
    CHECK(count_entries(work) == 0, "--checkpoint-every in a window wrote files");
}

/* --lesson is read before the window opens: with a GL too old for the
 * window (MESA_GL_VERSION_OVERRIDE=3.0, the window's own error otherwise),
 * a bad lesson is one line naming it (exit 1), and --lesson with
 * --compare-preset a usage error (exit 2), neither the window's error. */
static void test_lesson_before_window(void)
{
    char bad[700];
    snprintf(bad, sizeof bad, "%s/bad.json", tmp);
    const char *text = "{\"steps\": [{\"view\": \"warp\"}]}";
    CHECK(testlib_write_file(bad, text, strlen(text)) == 0, "write %s", bad);
    run(NULL, "MESA_GL_VERSION_OVERRIDE=3.0", "--grid", "32", "--lesson", bad, NULL);
    CHECK(R.signal == 0 && R.code == 1 && count_lines(R.err) == 1 && strstr(R.err, "lesson: ") &&
              strstr(R.err, "bad.json:1:21: steps[0].view: unknown view 'warp'"),
          "a bad lesson before the window: exit %d:\n%s", R.code, R.err);
    run(NULL, "MESA_GL_VERSION_OVERRIDE=3.0", "--grid", "32", "--lesson", bad, "--compare-preset", "force", NULL);
    CHECK(R.signal == 0 && R.code == 2 && count_lines(R.err) == 1 && strstr(R.err, "--lesson") &&
              strstr(R.err, "--compare-preset"),
          "--lesson with --compare-preset: exit %d:\n%s", R.code, R.err);
    run(NULL, NULL, "--grid", "32", "--lesson", bad, "--compare", "gather=0", NULL);
    CHECK(R.signal == 0 && R.code == 2 && count_lines(R.err) == 1 && strstr(R.err, "--lesson") &&
              strstr(R.err, "--compare"),
          "--lesson with --compare: exit %d:\n%s", R.code, R.err);
    CHECK(count_entries(work) == 0, "--lesson refused: files written");
}

int main(void)
{
    const char *d = getenv("DISPLAY");
    if (!d || !*d) {
        testlib_setup_failed("DISPLAY is not set: run under xvfb-run (tests/run.sh does)");
    }
    testlib_cli_start("test_window_cli", bin, tmp, sizeof tmp, work, sizeof work, NULL);
    RUN(test_gl_info_path);
    RUN(test_old_gl_window);
    RUN(test_cpu_with_display);
    RUN(test_checkpoint_in_window);
    RUN(test_lesson_before_window);
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
