/* test_farm: render-farm runs end to end through the binary
 * ($SMOKEMORPH_BIN): checkpoints, resume, frame ranges, the JSON sidecar,
 * exit codes and JSON progress lines; key sequences checkpointed and resumed
 * (and the refusals of a mismatched one); scenes of 1 and 2 smoke fields
 * likewise. Every resumed run's frames must equal
 * an uninterrupted run's byte for byte (CPU; the fragment and compute
 * backends headless on llvmpipe). Children run with DISPLAY unset in a
 * mkdtemp directory. Small grids: the whole program takes seconds. */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "method.h"
#include "image.h"
#include "testlib.h"

static char bin[PATH_MAX];
static char tmp[128];  /* fixtures */
static char work[256]; /* every child's cwd */
static char disc[300], square[300], dot[300];
static char scene2[300], scene2b[300], scene1[300], scene1b[300]; /* scenes of 2 fields, and of 1 */
static TestlibResult R;
static int g_kill_ms, g_kill_sig;

static void reset_work(void) { testlib_fresh_dir(work); }

static void run(const char *first, ...)
{
    TestlibRunOpts o = {.kill_after_ms = g_kill_ms, .kill_signal = g_kill_sig};
    va_list ap;
    va_start(ap, first);
    testlib_run_headless_va((const char *[]){bin, NULL}, first, ap, work, &o, &R);
    va_end(ap);
    g_kill_ms = 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    return n;
}

static void expect_ok(int line)
{
    CHECK(R.signal == 0 && R.code == 0, "line %d: exit %d signal %d; stderr:\n%s", line, R.code,
          R.signal, R.err);
}

/* exit `code`, one line on stderr holding each key word, nothing on stdout */
static void expect_fail(int line, int code, ...)
{
    CHECK(R.signal == 0 && R.code == code, "line %d: exit %d (expected %d) signal %d; stderr:\n%s",
          line, R.code, code, R.signal, R.err);
    CHECK(count_lines(R.err) == 1, "line %d: %d lines on stderr, expected one:\n%s", line,
          count_lines(R.err), R.err);
    va_list ap;
    va_start(ap, code);
    for (const char *k = va_arg(ap, const char *); k; k = va_arg(ap, const char *))
        CHECK(strstr(R.err, k) != NULL, "line %d: stderr lacks '%s':\n%s", line, k, R.err);
    va_end(ap);
    CHECK(R.out[0] == '\0', "line %d: stdout: %s", line, R.out);
}

static void in_work(char *buf, size_t n, const char *rel) { snprintf(buf, n, "%s/%s", work, rel); }

static int diff_frames(const char *a, const char *b, int from, int to)
{
    return testlib_diff_frames(work, a, b, from, to);
}

static bool exists_in_work(const char *rel)
{
    char p[600];
    in_work(p, sizeof p, rel);
    return testlib_exists(p);
}

/* Frames FROM..TO of the run in work/DIR removed: lost after its
 * checkpoint, as by a run killed there. */
static void remove_frames(const char *dir, int from, int to)
{
    for (int k = from; k <= to; k++) {
        char rel[64], p[600];
        snprintf(rel, sizeof rel, "%s/frame_%05d.png", dir, k);
        in_work(p, sizeof p, rel);
        unlink(p);
    }
}

static json_t *load_json(const char *rel)
{
    char p[600];
    in_work(p, sizeof p, rel);
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    if (!j) printf("  %s: %s (line %d)\n", p, e.text, e.line);
    return j;
}

#define RUN48 "--grid", "48", "--steps", "40", "--every", "5"

/* TEST(backend) for each GPU backend, given as its option */
static void on_gpu_backends(void (*test)(const char *backend))
{
    static const char *const be[] = {"--backend=fragment", "--backend=compute"};
    for (int k = 0; k < 2; k++) test(be[k]);
}

/* ---- CPU: checkpoints and resume ------------------------------------------------ */

/* An uninterrupted run A; the same run with checkpoints B (checkpointing
 * changes nothing); resumed from B's checkpoint into C (a frame range: the
 * frames from its step on) and into B after its later frames were lost. */
static void test_resume_cpu(void)
{
    reset_work();
    run("--cpu", RUN48, "--frames", "A", disc, square, NULL);
    expect_ok(__LINE__);
    run("--cpu", RUN48, "--frames", "B", "--checkpoint-every", "15", disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "B", 1, 9) == 0, "checkpointing changed the frames");
    CHECK(exists_in_work("B/checkpoint_000015.smc") && exists_in_work("B/checkpoint_000030.smc") &&
              !exists_in_work("B/checkpoint_000045.smc"),
          "checkpoints are not named by their step");
    int ntmp = 0;
    char b[600];
    in_work(b, sizeof b, "B");
    testlib_count_entries(b, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files in B", ntmp);

    /* a frame range from the checkpoint: the same command line, plus --resume */
    run("--cpu", RUN48, "--frames", "C", "--resume", "B/checkpoint_000015.smc", disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(strstr(R.err, "resumed at step 15 from B/checkpoint_000015.smc"), "start line:\n%s", R.err);
    CHECK(!exists_in_work("C/frame_00003.png") && exists_in_work("C/frame_00004.png"),
          "the frame range does not start at the checkpoint's step (15: frame 4)");
    CHECK(diff_frames("A", "C", 4, 9) == 0, "resumed frames differ from the uninterrupted run's");
    CHECK(!exists_in_work("C/frame_00010.png"), "a frame past --steps");

    /* --steps and --every default to the checkpoint's run; a longer --steps
     * goes on (frames past the first run's end) */
    run("--cpu", "--frames", "D", "--resume", "B/checkpoint_000030.smc", NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "D", 7, 9) == 0 && !exists_in_work("D/frame_00010.png"),
          "resume without --steps/--every: not the checkpoint's run");
    run("--cpu", "--steps", "50", "--frames", "E", "--resume", "B/checkpoint_000030.smc", NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "E", 7, 9) == 0 && exists_in_work("E/frame_00011.png") &&
              !exists_in_work("E/frame_00012.png"),
          "resume with a longer --steps");

    /* a run killed after its checkpoint: the later frames gone, resumed in place */
    remove_frames("B", 7, 9);
    run("--cpu", RUN48, "--frames", "B", "--resume", "B/checkpoint_000030.smc", disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "B", 1, 9) == 0, "resumed in place: frames differ");

    /* the metrics of a resumed run start at its step */
    run("--cpu", RUN48, "--metrics", "m.csv", "--resume", "B/checkpoint_000030.smc", NULL);
    expect_ok(__LINE__);
    char m[600], text[512];
    in_work(m, sizeof m, "m.csv");
    testlib_read_text(m, text, sizeof text);
    const char *row = strchr(text, '\n'); /* the header, then step 30's row */
    CHECK(strncmp(text, "step,", 5) == 0 && row && strncmp(row + 1, "30,", 3) == 0, "metrics:\n%s",
          text);
}

/* With no --steps the run goes until the morph arrives or settles: the
 * checkpoint keeps the settle watch, so the resumed run stops at the same
 * step. Without mass matching the error cannot reach 3%: the morph settles
 * (at step 1080 at 16², its last 1% gain at 580), and a resumed run that had
 * lost the watch would start it again at 700 and stop later. */
static void test_resume_until_settled(void)
{
    reset_work();
    run("--cpu", "--grid", "16", "--no-mass-match", "--every", "50", "--frames", "U", disc, square,
        NULL);
    expect_ok(__LINE__);
    CHECK(strstr(R.err, "the morph settled"), "the first run did not settle:\n%s", R.err);
    run("-q", "--cpu", "--grid", "16", "--no-mass-match", "--every", "50", "--frames", "V",
        "--checkpoint-every", "700", disc, square, NULL);
    expect_ok(__LINE__);
    run("-q", "--cpu", "--frames", "W", "--resume", "V/checkpoint_000700.smc", NULL);
    expect_ok(__LINE__);
    char u[600];
    in_work(u, sizeof u, "U");
    int n = 0;
    testlib_count_entries(u, "frame_", &n);
    CHECK(n > 16, "%d frames until settled: fewer than the checkpoint's step", n);
    CHECK(diff_frames("U", "W", 15, n) == 0, "until settled: resumed frames differ");
    char rel[64];
    snprintf(rel, sizeof rel, "W/frame_%05d.png", n + 1);
    CHECK(!exists_in_work(rel), "the resumed run went on past the first run's end");
}

/* SIGTERM mid-run with checkpoints: exit 143, and the message names the
 * checkpoint to resume from (the last one written, at or before the step
 * reached: a signal within a step leaves part of a step, which is not
 * saved); resumed in place, the folder equals an uninterrupted run's. */
static void test_interrupt_resume(void)
{
    reset_work();
    g_kill_ms = 1200;
    g_kill_sig = SIGTERM;
    run("-q", "--cpu", "--grid", "32", "--steps", "1000000", "--every", "50", "--frames", "K",
        "--checkpoint-every", "200", disc, square, NULL);
    CHECK(R.signal == 0 && R.code == 143, "exit %d signal %d:\n%s", R.code, R.signal, R.err);
    const char *at = strstr(R.err, "at step ");
    const char *hint = strstr(R.err, "resume with --resume K/checkpoint_");
    CHECK(count_lines(R.err) == 1 && hint && at, "stderr:\n%s", R.err);
    if (!hint || !at) return;
    long reached = strtol(at + 8, NULL, 10);
    long step = strtol(hint + strlen("resume with --resume K/checkpoint_"), NULL, 10);
    CHECK(step > 0 && step <= reached && (step % 200 == 0 || step == reached),
          "checkpoint step %ld, interrupted at %ld", step, reached);
    json_t *j = load_json("K/run.json");
    json_t *cks = j ? json_object_get(j, "checkpoints") : NULL;
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "status")), "interrupted") &&
              json_integer_value(json_object_get(j, "exit_code")) == 143 &&
              json_array_size(cks) >= 1 &&
              json_integer_value(json_object_get(json_array_get(cks, json_array_size(cks) - 1),
                                                 "step")) == step,
          "the interrupted run's sidecar");
    json_decref(j);
    char total[32], ck[64];
    snprintf(total, sizeof total, "%ld", step + 60);
    snprintf(ck, sizeof ck, "K/checkpoint_%06ld.smc", step);
    run("-q", "--cpu", "--grid", "32", "--steps", total, "--every", "50", "--frames", "K", "--resume",
        ck, disc, square, NULL);
    expect_ok(__LINE__);
    run("-q", "--cpu", "--grid", "32", "--steps", total, "--every", "50", "--frames", "U", disc,
        square, NULL);
    expect_ok(__LINE__);
    int last = (int)((step + 60 + 49) / 50) + 1;
    CHECK(diff_frames("U", "K", 1, last) == 0, "interrupted and resumed: frames differ (of %d)", last);
    CHECK(!exists_in_work("K/frame_00000.png") && exists_in_work("K/frame_00001.png"), "frames");
}

/* ---- key sequences ------------------------------------------------------------------ */

/* START K1 K2 K3 --key-every 10: checkpoints inside key 2 (step 14) and at
 * key 2's step (20), resumed with the same images, give an uninterrupted
 * run's frames; a different count of TARGETs, --key-every, other images or
 * none are one line each, naming what to give. */
static void test_resume_sequence(const char *backend)
{
    reset_work();
    const char *be = backend ? backend : "--cpu";
    const char *hl = backend ? "--headless" : "-q";
    run(be, hl, "--grid", "32", "--key-every", "10", "--every", "2", "--frames", "A", disc, square,
        disc, square, NULL);
    if (backend && R.code != 0 && (strstr(R.err, "OpenGL") || strstr(R.err, "EGL"))) {
        TESTLIB_NO_GL(3, 3, "test_resume_sequence %s: %s", backend, R.err);
        return;
    }
    expect_ok(__LINE__);
    run(be, hl, "--grid", "32", "--key-every", "10", "--every", "2", "--frames", "B",
        "--checkpoint-every", "7", disc, square, disc, square, NULL);
    expect_ok(__LINE__);
    run(be, hl, "--grid", "32", "--key-every", "10", "--every", "2", "--frames", "C",
        "--checkpoint-every", "10", disc, square, disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "B", 1, 16) == 0 && diff_frames("A", "C", 1, 16) == 0,
          "checkpointing a sequence changed its frames");
    /* inside key 2, in place after the later frames were lost */
    remove_frames("B", 9, 16);
    run(be, hl, "--grid", "32", "--key-every", "10", "--every", "2", "--frames", "B", "--resume",
        "B/checkpoint_000014.smc", disc, square, disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "B", 1, 16) == 0, "%s: resumed inside key 2: frames differ", be);
    /* at key 2's step, --key-every and --steps from the checkpoint */
    run(be, hl, "--frames", "D", "--resume", "C/checkpoint_000020.smc", disc, square, disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(!exists_in_work("D/frame_00010.png") && exists_in_work("D/frame_00011.png"),
          "the resumed frames do not start at step 20");
    CHECK(diff_frames("A", "D", 11, 16) == 0 && !exists_in_work("D/frame_00017.png"),
          "%s: resumed at key 2's step: frames differ", be);
    if (backend) return;

    /* the refusals: one line, exit 1, nothing created */
    run("--cpu", "--frames", "F", "--resume", "C/checkpoint_000020.smc", disc, square, disc, NULL);
    expect_fail(__LINE__, 1, "C/checkpoint_000020.smc", "3 keys", "2 TARGETs", "give the same 3 TARGETs",
                NULL);
    run("--cpu", "--frames", "F", "--key-every", "12", "--resume", "C/checkpoint_000020.smc", disc, square,
        disc, square, NULL);
    expect_fail(__LINE__, 1, "10 steps apart", "--key-every says 12", "give --key-every 10", NULL);
    run("--cpu", "--frames", "F", "--resume", "C/checkpoint_000020.smc", NULL);
    expect_fail(__LINE__, 1, "sequence of 3 keys", "give CURRENT and the 3 TARGETs", NULL);
    run("--cpu", "--frames", "F", "--resume", "C/checkpoint_000020.smc", disc, square, square, disc, NULL);
    expect_fail(__LINE__, 1, "the TARGETs differ", NULL);
    run("--cpu", "--frames", "F", "--resume", "C/checkpoint_000020.smc", square, square, disc, square,
        NULL);
    expect_fail(__LINE__, 1, "CURRENT", "differs", NULL);
    CHECK(!exists_in_work("F"), "a refused resume created its frames directory");
    /* a single target's checkpoint takes no sequence */
    run("--cpu", "--grid", "32", "--steps", "10", "--frames", "G", "--checkpoint-every", "5", disc,
        square, NULL);
    expect_ok(__LINE__);
    run("--cpu", "--frames", "F", "--resume", "G/checkpoint_000005.smc", disc, square, disc, NULL);
    expect_fail(__LINE__, 1, "one target", "leave out the extra TARGETs and --key-every", NULL);
    run("--cpu", "--frames", "F", "--key-every", "5", "--resume", "G/checkpoint_000005.smc", NULL);
    expect_fail(__LINE__, 1, "one target", NULL);
    CHECK(!exists_in_work("F"), "a refused resume created its frames directory");
}

static void test_resume_sequence_cpu(void) { test_resume_sequence(NULL); }

/* Keys longer than 3 s are timed by their trips (issue 20): key 2 squeezes
 * the square into a dot (unpaced, the gathering from 30%), key 3 spreads it
 * back (paced, the gathering from 45%). Resumed inside key 2, key 3 still
 * takes its own timing: the frames equal an uninterrupted run's. */
static void test_resume_paced_sequence(void)
{
    reset_work();
    run("--cpu", "-q", "--grid", "32", "--key-every", "310", "--every", "100", "--frames", "A", disc, square,
        dot, square, NULL);
    expect_ok(__LINE__);
    run("--cpu", "-q", "--grid", "32", "--key-every", "310", "--every", "100", "--frames", "B",
        "--checkpoint-every", "400", disc, square, dot, square, NULL);
    expect_ok(__LINE__);
    remove_frames("B", 5, 10);
    run("--cpu", "-q", "--grid", "32", "--key-every", "310", "--every", "100", "--frames", "B", "--resume",
        "B/checkpoint_000400.smc", disc, square, dot, square, NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "B", 1, 10) == 0, "resumed inside a paced sequence's key 2: frames differ");
}
static void test_resume_sequence_gpu(void) { on_gpu_backends(test_resume_sequence); }

/* ---- the GPU backends on llvmpipe ---------------------------------------------------- */

static void test_resume_gpu(void)
{
    static const char *const be[2] = {"fragment", "compute"};
    for (int k = 0; k < 2; k++) {
        reset_work();
        run("--backend", be[k], "--headless", "--grid", "32", "--steps", "16", "--every", "4",
            "--frames", "A", "--checkpoint-every", "8", disc, square, NULL);
        if (R.code != 0 && (strstr(R.err, "OpenGL") || strstr(R.err, "EGL"))) {
            TESTLIB_NO_GL(k ? 4 : 3, 3, "test_resume_gpu %s: %s", be[k], R.err);
            continue;
        }
        expect_ok(__LINE__);
        run("--backend", be[k], "--headless", "--grid", "32", "--steps", "16", "--every", "4",
            "--frames", "B", "--resume", "A/checkpoint_000008.smc", disc, square, NULL);
        expect_ok(__LINE__);
        CHECK(diff_frames("A", "B", 3, 5) == 0, "%s: resumed frames differ", be[k]);
        json_t *j = load_json("B/run.json");
        const char *r = j ? json_string_value(json_object_get(j, "renderer")) : NULL;
        CHECK(r && strcmp(r, "cpu") && r[0], "%s: renderer '%s'", be[k], r ? r : "(none)");
        CHECK(j && !strcmp(json_string_value(json_object_get(j, "backend")), be[k]), "%s: backend",
              be[k]);
        json_decref(j);
        /* on another backend it runs, and says the frames cannot be identical */
        run("--cpu", "--frames", "C", "--resume", "A/checkpoint_000008.smc", NULL);
        expect_ok(__LINE__);
        CHECK(strstr(R.err, "written by the") && strstr(R.err, "bit-identical"), "%s on cpu:\n%s",
              be[k], R.err);
    }
}

/* ---- scenes ---------------------------------------------------------------------------- */

/* The metrics' rows of `a` from the one for step `from` on equal `b`'s rows
 * (after the header); returns whether they do. */
static bool same_metrics_from(const char *a, const char *b, long from)
{
    char pa[600], pb[600];
    in_work(pa, sizeof pa, a);
    in_work(pb, sizeof pb, b);
    char *x = testlib_read_file(pa, NULL), *y = testlib_read_file(pb, NULL);
    bool ok = false;
    if (x && y) {
        char *ya = strchr(y, '\n'); /* b's rows */
        char key[32];
        snprintf(key, sizeof key, "\n%ld,", from);
        char *xa = strstr(x, key);
        ok = xa && ya && strcmp(xa + 1, ya + 1) == 0;
        if (!ok) printf("  metrics differ:\n%s\n--\n%s\n", x, y);
    }
    free(x);
    free(y);
    return ok;
}

/* The sidecar's frame rows of b equal a's from the same step on. */
static bool same_rows(const char *a, const char *b)
{
    json_t *x = load_json(a), *y = load_json(b);
    json_t *fx = json_object_get(x, "frames"), *fy = json_object_get(y, "frames");
    bool ok = fx && fy && json_array_size(fy) > 0;
    json_int_t first = ok ? json_integer_value(json_object_get(json_array_get(fy, 0), "step")) : 0;
    size_t k0 = 0;
    while (ok && k0 < json_array_size(fx) &&
           json_integer_value(json_object_get(json_array_get(fx, k0), "step")) != first)
        k0++;
    ok = ok && json_array_size(fx) == k0 + json_array_size(fy);
    for (size_t k = 0; ok && k < json_array_size(fy); k++)
        ok = json_equal(json_array_get(fx, k0 + k), json_array_get(fy, k));
    if (!ok) printf("  %s's frame rows differ from %s's\n", b, a);
    json_decref(x);
    json_decref(y);
    return ok;
}

/* A scene of 2 smoke fields (one velocity, morph_step_fields), and one of 1
 * with a source and a moving key: checkpointed and resumed, the frames,
 * metrics and sidecar rows are an uninterrupted run's. */
static void test_resume_scene(const char *backend)
{
    const char *be = backend ? backend : "--cpu";
    const char *hl = backend ? "--headless" : "-q";
    const char *const scenes[2] = {scene2, scene1};
    for (int s = 0; s < 2; s++) {
        reset_work();
        const char *sc = scenes[s];
        run(be, hl, "--scene", sc, "--grid", "32", "--steps", "30", "--every", "5", "--frames", "A",
            "--metrics", "A.csv", NULL);
        if (backend && R.code != 0 && (strstr(R.err, "OpenGL") || strstr(R.err, "EGL"))) {
            TESTLIB_NO_GL(3, 3, "test_resume_scene %s: %s", backend, R.err);
            return;
        }
        expect_ok(__LINE__);
        run(be, hl, "--scene", sc, "--grid", "32", "--steps", "30", "--every", "5", "--frames", "B",
            "--checkpoint-every", "10", NULL);
        expect_ok(__LINE__);
        CHECK(diff_frames("A", "B", 1, 7) == 0, "%s, scene %d: checkpointing changed the frames", be, s);
        CHECK(exists_in_work("B/checkpoint_000010.smc") && exists_in_work("B/checkpoint_000020.smc"),
              "%s, scene %d: no checkpoints", be, s);
        /* at step 10 (an output step), the grid and --steps from the checkpoint */
        run(be, hl, "--scene", sc, "--frames", "C", "--metrics", "C.csv", "--resume",
            "B/checkpoint_000010.smc", NULL);
        expect_ok(__LINE__);
        CHECK(!exists_in_work("C/frame_00002.png") && exists_in_work("C/frame_00003.png") &&
                  !exists_in_work("C/frame_00008.png"),
              "%s, scene %d: the resumed frames are not steps 10..30", be, s);
        CHECK(diff_frames("A", "C", 3, 7) == 0, "%s, scene %d: resumed frames differ", be, s);
        CHECK(same_metrics_from("A.csv", "C.csv", 10), "%s, scene %d: resumed metrics differ", be, s);
        CHECK(same_rows("A/run.json", "C/run.json"), "%s, scene %d: resumed sidecar rows differ", be, s);
        /* in place, at step 20 (key 2 of field a's begins at 21) */
        for (int k = 5; k <= 7; k++) {
            char rel[64], p[600];
            snprintf(rel, sizeof rel, "B/frame_%05d.png", k);
            in_work(p, sizeof p, rel);
            unlink(p);
        }
        run(be, hl, "--scene", sc, "--grid", "32", "--frames", "B", "--resume", "B/checkpoint_000020.smc",
            NULL);
        expect_ok(__LINE__);
        CHECK(diff_frames("A", "B", 1, 7) == 0, "%s, scene %d: resumed in place: frames differ", be, s);
        CHECK(same_rows("A/run.json", "B/run.json"), "%s, scene %d: resumed sidecar rows differ", be, s);
    }
    if (backend) return;

    /* the refusals: one line naming what to give, exit 1, nothing created */
    run("--cpu", "--scene", scene2, "--grid", "32", "--steps", "30", "--every", "5", "--frames", "B",
        "--checkpoint-every", "10", NULL);
    expect_ok(__LINE__);
    run("--cpu", "--frames", "F", "--scene", scene1, "--resume", "B/checkpoint_000010.smc", NULL);
    expect_fail(__LINE__, 1, "B/checkpoint_000010.smc", "2 smoke fields", "has 1",
                "give the same --scene FILE", NULL);
    run("--cpu", "--frames", "F", "--scene", scene2b, "--resume", "B/checkpoint_000010.smc", NULL);
    expect_fail(__LINE__, 1, "smoke field b's keys differ", "give the same --scene FILE", NULL);
    run("--cpu", "--frames", "F", "--resume", "B/checkpoint_000010.smc", NULL);
    expect_fail(__LINE__, 1, "a scene's (2 smoke fields)", "give the same --scene FILE", NULL);
    run("--cpu", "--frames", "F", "--resume", "B/checkpoint_000010.smc", disc, square, NULL);
    expect_fail(__LINE__, 1, "a scene's", "give the same --scene FILE", NULL);
    run("--cpu", "--grid", "32", "--steps", "10", "--frames", "G", "--checkpoint-every", "5", disc,
        square, NULL);
    expect_ok(__LINE__);
    run("--cpu", "--frames", "F", "--scene", scene1, "--resume", "G/checkpoint_000005.smc", NULL);
    expect_fail(__LINE__, 1, "no --scene", "leave out --scene", NULL);
    /* the 1-field scene's checkpoint, with the other start image */
    run("--cpu", "--scene", scene1, "--grid", "32", "--steps", "10", "--frames", "H",
        "--checkpoint-every", "5", NULL);
    expect_ok(__LINE__);
    run("--cpu", "--frames", "F", "--scene", scene1b, "--resume", "H/checkpoint_000005.smc", NULL);
    expect_fail(__LINE__, 1, "start image differs", "give the same --scene FILE", NULL);
    CHECK(!exists_in_work("F"), "a refused resume created its frames directory");
}

static void test_resume_scene_cpu(void) { test_resume_scene(NULL); }
static void test_resume_scene_gpu(void) { on_gpu_backends(test_resume_scene); }

/* ---- refusals ----------------------------------------------------------------------- */

static void test_refusals(void)
{
    reset_work();
    run("--cpu", "--grid", "16", "--steps", "10", "--every", "5", "--frames", "A",
        "--checkpoint-every", "5", disc, square, NULL);
    expect_ok(__LINE__);
    char good[600], bad[600];
    in_work(good, sizeof good, "A/checkpoint_000005.smc");
    in_work(bad, sizeof bad, "bad.smc");
    size_t len = 0;
    char *b = testlib_read_file(good, &len);
    CHECK(b && len > 200, "no checkpoint to damage");
    if (!b) return;

    struct {
        const char *why;
        size_t cut;   /* keep this many bytes (0: all) */
        long flip;    /* xor a byte here (-1: none) */
    } cases[] = {
        {"truncated", 150, -1},
        {"checksum", 0, (long)len - 100},
        {"not a smokemorph checkpoint", 0, 0},
        {"version", 0, 8},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *d = malloc(len);
        memcpy(d, b, len);
        if (cases[k].flip >= 0) d[cases[k].flip] ^= 0x41;
        testlib_write_file(bad, d, cases[k].cut ? cases[k].cut : len);
        free(d);
        run("--cpu", "--frames", "F", "--resume", "bad.smc", NULL);
        expect_fail(__LINE__, 1, "bad.smc", cases[k].why, NULL);
        CHECK(!exists_in_work("F"), "a refused resume created its frames directory");
    }
    free(b);
    run("--cpu", "--frames", "F", "--resume", disc, NULL);
    expect_fail(__LINE__, 1, "disc.png", "not a smokemorph checkpoint", NULL);
    run("--cpu", "--frames", "F", "--resume", "missing.smc", NULL);
    expect_fail(__LINE__, 1, "missing.smc", "No such file", NULL);
    run("--cpu", "--grid", "32", "--frames", "F", "--resume", "A/checkpoint_000005.smc", NULL);
    expect_fail(__LINE__, 1, "grid is 16x16", "--grid says 32x32", NULL);
    run("--cpu", "--steps", "3", "--frames", "F", "--resume", "A/checkpoint_000005.smc", NULL);
    expect_fail(__LINE__, 1, "at step 5", "--steps 3", NULL);
    CHECK(!exists_in_work("F"), "a refused resume created its frames directory");

    /* the parameters: the checkpoint's win; one given overrides, and is named */
    run("--cpu", "--vf", "0.5", "--frames", "G", "--resume", "A/checkpoint_000005.smc", NULL);
    expect_ok(__LINE__);
    CHECK(!strstr(R.err, "overrides"), "the same --vf named:\n%s", R.err);
    CHECK(diff_frames("A", "G", 2, 3) == 0, "frames differ with the same --vf");
    /* --arrive auto is what the checkpoint's run had: no override, the same
     * frames, the arrival its trip's again (it was settled to 3 s) */
    run("--cpu", "--arrive", "auto", "--frames", "J", "--resume", "A/checkpoint_000005.smc", NULL);
    expect_ok(__LINE__);
    CHECK(!strstr(R.err, "overrides") && strstr(R.err, "from the trip's length (--arrive auto)"),
          "--arrive auto on resume:\n%s", R.err);
    CHECK(diff_frames("A", "J", 2, 3) == 0, "frames differ with --arrive auto");
    run("--cpu", "--vf", "0.9", "--frames", "H", "--resume", "A/checkpoint_000005.smc", NULL);
    expect_ok(__LINE__);
    CHECK(strstr(R.err, "--vf 0.9 overrides the checkpoint's 0.5"), "stderr:\n%s", R.err);
    CHECK(diff_frames("A", "H", 2, 2) == 0 && diff_frames("A", "H", 3, 3) == 1,
          "--vf 0.9 should change the frames after the checkpoint's only");
    run("--cpu", "--no-gather", "--force", "fattal", "--frames", "I", "--resume",
        "A/checkpoint_000005.smc", NULL);
    expect_ok(__LINE__);
    CHECK(strstr(R.err, "--no-gather overrides the checkpoint's gather on") &&
              strstr(R.err, "--force fattal overrides the checkpoint's balance") &&
              strstr(R.err, "--force fattal sets drift 0, overriding the checkpoint's 0.002"),
          "stderr:\n%s", R.err);
    json_t *j = load_json("H/run.json");
    json_t *vf = j ? json_object_get(json_object_get(j, "parameters"), "vf") : NULL;
    CHECK(vf && json_real_value(vf) == 0.9, "the sidecar's vf");
    json_decref(j);
}

/* ---- the sidecar -------------------------------------------------------------------- */

static void test_sidecar(void)
{
    reset_work();
    run("--cpu", RUN48, "--frames", "A", "--checkpoint-every", "20", "--checkpoint-dir", "ck/sub",
        "--vf", "0.45", disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(exists_in_work("ck/sub/checkpoint_000020.smc") && !exists_in_work("A/checkpoint_000020.smc"),
          "--checkpoint-dir");
    json_t *j = load_json("A/run.json");
    CHECK(j != NULL, "A/run.json");
    if (!j) return;
    run("--version", NULL);
    char version[64] = "";
    sscanf(R.out, "smokemorph %63s", version);
    CHECK(!strcmp(json_string_value(json_object_get(j, "smokemorph")), version), "version");
    CHECK(!strcmp(json_string_value(json_object_get(j, "status")), "complete") &&
              json_integer_value(json_object_get(j, "exit_code")) == 0,
          "status");
    CHECK(!strcmp(json_string_value(json_object_get(j, "backend")), "cpu") &&
              !strcmp(json_string_value(json_object_get(j, "renderer")), "cpu"),
          "backend, renderer");
    json_t *g = json_object_get(j, "grid");
    CHECK(json_integer_value(json_object_get(g, "w")) == 48 &&
              json_integer_value(json_object_get(g, "h")) == 48 &&
              json_integer_value(json_object_get(j, "steps")) == 40 &&
              json_integer_value(json_object_get(j, "every")) == 5 &&
              json_integer_value(json_object_get(j, "last_step")) == 40,
          "grid, steps");
    json_t *p = json_object_get(j, "parameters");
    CHECK(json_real_value(json_object_get(p, "vf")) == 0.45 &&
              json_real_value(json_object_get(p, "dt")) == 0.01 &&
              !strcmp(json_string_value(json_object_get(p, "force")), "balance") &&
              json_is_true(json_object_get(p, "gather")) &&
              json_integer_value(json_object_get(p, "jacobi")) == 10 &&
              json_object_size(p) == METHOD_PARAM_COUNT,
          "parameters");
    json_t *cks = json_object_get(j, "checkpoints");
    CHECK(json_array_size(cks) == 2 &&
              json_integer_value(json_object_get(json_array_get(cks, 1), "step")) == 40,
          "checkpoints");
    json_t *fr = json_object_get(j, "frames");
    CHECK(json_array_size(fr) == 9, "%zu frame rows, expected 9", json_array_size(fr));
    for (size_t k = 0; k < json_array_size(fr); k++) {
        json_t *f = json_array_get(fr, k);
        char name[32];
        snprintf(name, sizeof name, "frame_%05zu.png", k + 1);
        CHECK(json_integer_value(json_object_get(f, "step")) == (json_int_t)(5 * k) &&
                  json_integer_value(json_object_get(f, "frame")) == (json_int_t)(k + 1) &&
                  !strcmp(json_string_value(json_object_get(f, "file")), name) &&
                  json_real_value(json_object_get(f, "mass")) > 0.0 &&
                  json_is_real(json_object_get(f, "error")) && json_is_real(json_object_get(f, "max_div")),
              "frame row %zu", k);
    }
    json_decref(j);

    /* --sidecar FILE: a metrics-only run's record */
    run("--cpu", "--grid", "16", "--steps", "4", "--every", "2", "--metrics", "m.csv", "--sidecar",
        "rec.json", disc, square, NULL);
    expect_ok(__LINE__);
    j = load_json("rec.json");
    CHECK(j && json_array_size(json_object_get(j, "frames")) == 3 &&
              json_is_null(json_object_get(j, "frames_dir")) &&
              !json_object_get(json_array_get(json_object_get(j, "frames"), 0), "frame"),
          "--sidecar with metrics only");
    json_decref(j);
    /* chunks of one render (--frame-range) keep a record each */
    run("--cpu", "--grid", "16", "--every", "2", "--frame-range", "2-3", "--frames", "P", disc, square,
        NULL);
    expect_ok(__LINE__);
    CHECK(exists_in_work("P/run_2-3.json") && !exists_in_work("P/run.json"), "a chunk's record");
    /* a chunk from a checkpoint: its frames are the full run's */
    run("--cpu", RUN48, "--frames", "Q", "--frame-range", "6-8", "--resume",
        "ck/sub/checkpoint_000020.smc", NULL);
    expect_ok(__LINE__);
    CHECK(diff_frames("A", "Q", 6, 8) == 0 && !exists_in_work("Q/frame_00005.png") &&
              !exists_in_work("Q/frame_00009.png"),
          "--frame-range from a checkpoint");
    /* a sidecar that cannot be written fails the run with one line */
    run("--cpu", "--grid", "16", "--steps", "4", "--frames", "F", "--sidecar", "no/dir/rec.json",
        disc, square, NULL);
    expect_fail(__LINE__, 1, "no/dir/rec.json", NULL);
    CHECK(!exists_in_work("F"), "an unwritable sidecar: frames written first");
}

/* ---- exit codes and progress --------------------------------------------------------- */

static void test_exit_codes(void)
{
    reset_work();
    run("--help", NULL);
    expect_ok(__LINE__);
    CHECK(strstr(R.out, "Exit status: 0") && strstr(R.out, "2 bad") && strstr(R.out, "128+N"),
          "--help ends without the exit codes");
    run("--checkpoint-every", "0", NULL);
    expect_fail(__LINE__, 2, "--checkpoint-every", NULL);
    run("--progress-format", "xml", NULL);
    expect_fail(__LINE__, 2, "--progress-format", "'xml'", NULL);
    run("--no-such-option", NULL);
    expect_fail(__LINE__, 2, "--no-such-option", NULL);
    run("--cpu", "missing1.png", "missing2.png", NULL);
    expect_fail(__LINE__, 1, "missing1.png", NULL);
}

static void test_progress_json(void)
{
    reset_work();
    run("-q", "--cpu", "--grid", "16", "--steps", "30", "--every", "10", "--frames", "F",
        "--progress-format", "json", disc, square, NULL);
    expect_ok(__LINE__);
    int lines = 0, bad = 0;
    json_t *last = NULL;
    for (char *s = R.err; *s;) {
        char *e = strchr(s, '\n');
        if (!e) break;
        *e = '\0';
        json_error_t je;
        json_t *o = json_loads(s, 0, &je);
        bool ok = o && !strcmp(json_string_value(json_object_get(o, "event")), "progress") &&
                  json_is_integer(json_object_get(o, "step")) &&
                  json_integer_value(json_object_get(o, "total")) == 30 &&
                  json_is_integer(json_object_get(o, "frames")) &&
                  json_is_number(json_object_get(o, "elapsed")) &&
                  json_is_number(json_object_get(o, "eta")) && json_is_number(json_object_get(o, "error"));
        if (!ok) {
            printf("  not a progress line: %s\n", s);
            bad++;
        }
        lines++;
        json_decref(last);
        last = o;
        *e = '\n';
        s = e + 1;
    }
    CHECK(lines >= 2 && bad == 0, "%d progress lines, %d bad:\n%s", lines, bad, R.err);
    CHECK(last && json_integer_value(json_object_get(last, "step")) == 30 &&
              json_integer_value(json_object_get(last, "frames")) == 4,
          "the last progress line is not step 30 with 4 frames");
    json_decref(last);
    run("-q", "--cpu", "--grid", "16", "--steps", "30", "--frames", "F", "--progress-format", "json",
        "--no-progress", disc, square, NULL);
    expect_ok(__LINE__);
    CHECK(R.err[0] == '\0', "--no-progress with json: %s", R.err);
}

int main(void)
{
    testlib_cli_start("test_farm", bin, tmp, sizeof tmp, work, sizeof work, NULL);
    snprintf(disc, sizeof disc, "%s/disc.png", tmp);
    snprintf(square, sizeof square, "%s/square.png", tmp);
    snprintf(dot, sizeof dot, "%s/dot.png", tmp);
    Image *a = image_create(48, 48, 1), *b = image_create(48, 48, 1);
    char err[256];
    static const TestlibShape dom = {.domain = true, .width = 0.02};
    testlib_disc(a->px, 48, 48, &dom, 0.35, 0.4, 0.2, 1.0);
    testlib_box(b->px, 48, 48, &dom, 0.65, 0.6, 0.2, 0.15, 1.0);
    Image *d = image_create(48, 48, 1);
    if (d) testlib_disc(d->px, 48, 48, &dom, 0.5, 0.5, 0.07, 1.0);
    if (!d || image_save_png(dot, d, 8, err, sizeof err) < 0) {
        printf("FAIL fixtures: %s\n0 passed, 1 failed\n", d ? err : "out of memory");
        return 1;
    }
    image_free(d);
    if (image_save_png(disc, a, 8, err, sizeof err) < 0 || image_save_png(square, b, 8, err, sizeof err) < 0) {
        printf("FAIL fixtures: %s\n0 passed, 1 failed\n", err);
        return 1;
    }
    image_free(a);
    image_free(b);
    /* scenes: 2 fields (field a's 2 keys, b's 1), the same with b's keys
     * other, and 1 field with a disc source and a moving key */
    snprintf(scene2, sizeof scene2, "%s/two.json", tmp);
    snprintf(scene2b, sizeof scene2b, "%s/two-b.json", tmp);
    snprintf(scene1, sizeof scene1, "%s/one.json", tmp);
    snprintf(scene1b, sizeof scene1b, "%s/one-b.json", tmp);
    char text[2048];
    for (int k = 0; k < 2; k++) {
        snprintf(text, sizeof text,
                 "{\"fields\": [\n"
                 " {\"name\": \"a\", \"start\": \"%s\", \"keys\": [{\"step\": 20, \"target\": \"%s\"},\n"
                 "   {\"step\": 40, \"target\": \"%s\"}]},\n"
                 " {\"name\": \"b\", \"color\": \"#3a8cff\", \"start\": \"%s\",\n"
                 "  \"keys\": [{\"step\": %d, \"target\": \"%s\"}]}]}\n",
                 disc, square, disc, square, k ? 35 : 40, disc);
        testlib_write_file(k ? scene2b : scene2, text, strlen(text));
    }
    for (int k = 0; k < 2; k++) { /* one-b.json: the other start */
        snprintf(text, sizeof text,
                 "{\"fields\": [{\"start\": \"%s\", \"keys\": [{\"step\": 12, \"target\": \"%s\"},\n"
                 "  {\"step\": 30, \"target\": \"%s\", \"move\": {\"from\": [0, 0], \"to\": [-0.1, 0.05]}}],\n"
                 " \"sources\": [{\"disc\": {\"center\": [0.5, 0.8], \"radius\": 0.1}, \"rate\": 2,\n"
                 "   \"from\": 0, \"to\": 25}]}]}\n",
                 k ? square : disc, square, square);
        testlib_write_file(k ? scene1b : scene1, text, strlen(text));
    }
    RUN(test_resume_cpu);
    RUN(test_resume_until_settled);
    RUN(test_interrupt_resume);
    RUN(test_resume_gpu);
    RUN(test_resume_sequence_cpu);
    RUN(test_resume_paced_sequence);
    RUN(test_resume_sequence_gpu);
    RUN(test_resume_scene_cpu);
    RUN(test_resume_scene_gpu);
    RUN(test_refusals);
    RUN(test_sidecar);
    RUN(test_exit_codes);
    RUN(test_progress_json);
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
