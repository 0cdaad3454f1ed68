/* test_safety: issue 21, "never touch what isn't ours": outputs only where
 * they belong and only over smokemorph's own files, nothing non-finite in,
 * memory and time bounded before a run starts. In the library and through
 * the binary ($SMOKEMORPH_BIN, default build/smokemorph); every run is on
 * the CPU backend at a 16² to 64² grid, with DISPLAY unset and cwd in a
 * mkdtemp directory. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <png.h>
#include <setjmp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>

#include "budget.h"
#include "export.h"
#include "exr.h"
#include "guard.h"
#include "sidecar.h"
#include "check.h"
#include "image.h"
#include "cpu_solver.h"
#include "testlib.h"

static char bin[PATH_MAX];
static char tmp[256];  /* fixtures */
static char work[512]; /* cwd of every child */
static TestlibResult R;
static TestlibRunOpts next; /* options of the next run only */
static const char *guard_secs; /* run under timeout(1) this long, NULL: not */

static void reset_work(void) { testlib_fresh_dir(work); }
static bool has(const char *hay, const char *needle) { return testlib_has(hay, needle); }
static int count_lines(const char *s) { return testlib_count_lines(s); }

/* Lines besides the one that says where the outputs go. */
static int error_lines(const char *s)
{
    return count_lines(s) - (strncmp(s, "smokemorph: outputs: ", 21) == 0);
}

/* Run the binary in `work` with DISPLAY unset; fills R. */
static void run(const char *first, ...)
{
    /* with guard_secs, a hang is killed (and the run's own exit is not waited out) */
    const char *guarded[] = {"timeout", "-s", "KILL", guard_secs, bin, NULL};
    va_list ap;
    va_start(ap, first);
    testlib_run_headless_va(guard_secs ? guarded : guarded + 4, first, ap, work, &next, &R);
    va_end(ap);
    memset(&next, 0, sizeof next);
}

/* A file in `work` (path relative to it) */
static void wpath(char *buf, size_t n, const char *rel) { testlib_path(buf, n, work, rel); }

static bool wexists(const char *rel)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    return testlib_exists(p);
}

static void wwrite(const char *rel, const char *text)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    testlib_write_file(p, text, strlen(text));
}

static char *wread(const char *rel)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    return testlib_read_file(p, NULL);
}

/* ------------------------------------------------------------- fixtures */

static char disc[600];

static int make_fixtures(void)
{
    testlib_path(disc, sizeof disc, tmp, "disc.png");
    Image *im = image_create(32, 32, 1);
    if (!im) return -1;
    static const TestlibShape domain = {.domain = true};
    testlib_disc(im->px, 32, 32, &domain, 0.45, 0.5, 0.25, 1.0);
    char err[512];
    int rc = image_save_png(disc, im, 8, err, sizeof err);
    image_free(im);
    return rc;
}

/* ------------------------------------------------------------ the budget */

static void test_budget(void)
{
    Budget b;
    budget_init(&b, 100ULL << 20);
    budget_add(&b, 10ULL << 20, "the fields (%dx%d)", 64, 64);
    budget_add(&b, 60ULL << 20, "the start image %s", "a.png");
    char err[512] = "";
    CHECK(budget_check(&b, err, sizeof err) == 0 && budget_total(&b) == 70ULL << 20 &&
              budget_left(&b) == 30ULL << 20,
          "70 MiB in 100: total %llu left %llu", budget_total(&b), budget_left(&b));
    CHECK(budget_frames_in_flight(&b, 10ULL << 20, 8) == 3, "3 frames of 10 MiB in 30 MiB: %d",
          budget_frames_in_flight(&b, 10ULL << 20, 8));
    CHECK(budget_frames_in_flight(&b, 10ULL << 20, 2) == 2, "at most what is wanted");
    CHECK(budget_frames_in_flight(&b, 50ULL << 20, 8) == 1, "at least one");
    budget_add(&b, 40ULL << 20, "a frame (%dx%d)", 4096, 4096);
    CHECK(budget_check(&b, err, sizeof err) < 0 && has(err, "110 MiB") && has(err, "100 MiB") &&
              has(err, "the start image a.png (60 MiB)") && count_lines(err) == 1,
          "over: %s", err);
    CHECK(budget_left(&b) == 0, "nothing left");
    /* sums saturate */
    budget_add(&b, ~0ULL, "huge");
    budget_add(&b, ~0ULL, "huger");
    CHECK(budget_total(&b) == ~0ULL && budget_check(&b, err, sizeof err) < 0, "saturated");
    /* more items than room: counted with the last */
    Budget c;
    budget_init(&c, 1ULL << 40);
    for (int i = 0; i < BUDGET_ITEMS_MAX + 5; i++) budget_add(&c, 1, "item %d", i);
    CHECK(c.n == BUDGET_ITEMS_MAX && budget_total(&c) == BUDGET_ITEMS_MAX + 5, "overflow items");
    CHECK(budget_default_mb() >= BUDGET_DEFAULT_MIN_MB && budget_limit_bytes(0) ==
              (unsigned long long)budget_default_mb() << 20 && budget_limit_bytes(64) == 64ULL << 20,
          "defaults");
    char buf[32];
    CHECK(!strcmp(budget_format(512, buf, sizeof buf), "512 bytes") &&
              !strcmp(budget_format(3ULL << 30, buf, sizeof buf), "3.0 GiB") &&
              !strcmp(budget_format(100ULL << 20, buf, sizeof buf), "100 MiB"),
          "format: %s", buf);
}


/* ------------------------------------------------ 1. only what we wrote */

/* a copy of the disc (an untagged PNG: not written by smokemorph's writer
 * after the copy? it was: the fixture is written by image_save_png, so
 * strip the mark by writing the bytes of a plain PNG instead) */
static void plain_png(const char *rel)
{
    /* a 1x1 grey PNG from no smokemorph writer */
    static const unsigned char png[] = {
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3a,
        0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60,
        0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x48, 0xaf, 0xa4, 0x71, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
    char p[1024];
    wpath(p, sizeof p, rel);
    testlib_write_file(p, png, sizeof png);
}

static void test_mark(void)
{
    char p[1024];
    reset_work();
    /* image_save_png marks its files; a plain PNG is not marked */
    CHECK(image_file_tagged(disc), "image_save_png's file carries the mark");
    plain_png("plain.png");
    wpath(p, sizeof p, "plain.png");
    CHECK(!image_file_tagged(p), "a plain PNG has no mark");
    wwrite("text.png", "not a png");
    wpath(p, sizeof p, "text.png");
    CHECK(!image_file_tagged(p) && !image_file_tagged("/nonexistent/x.png"), "no file, no mark");
    /* exr_write marks too */
    float px[4] = {1, 1, 1, 1};
    ExrChannel ch[] = {{"A", px}};
    ExrWrite d = {.w = 2, .h = 2, .x0 = 0, .y0 = 0, .x1 = 1, .y1 = 1, .channels = ch, .nchannels = 1};
    char err[512];
    wpath(p, sizeof p, "f.exr");
    CHECK(exr_write(p, &d, err, sizeof err) == 0 && image_file_tagged(p), "exr_write marks: %s", err);
    /* a truncated or lying header never reads out of bounds (and is not marked) */
    size_t n;
    unsigned char *b = (unsigned char *)testlib_read_file(p, &n);
    bool ok = b != NULL, seen = false;
    for (size_t k = 0; b && k < n; k++) { /* once the mark is whole, every longer prefix has it */
        bool t = image_mem_tagged(b, k);
        ok = ok && (!seen || t) && (k > 8 || !t);
        seen = seen || t;
    }
    CHECK(ok && seen && b && image_mem_tagged(b, n), "prefixes of a marked EXR");
    free(b);
    b = (unsigned char *)testlib_read_file(disc, &n);
    ok = b != NULL;
    for (size_t k = 0; b && k < n && k < 200; k++) {
        bool t = image_mem_tagged(b, k);
        ok = ok && (!t || k >= 33 + 12 + 19); /* only once the whole tEXt is there */
    }
    CHECK(ok && b && image_mem_tagged(b, n), "prefixes of a marked PNG");
    free(b);
}

static void test_plates(void)
{
    reset_work();
    mkdir(strcat(strcpy((char[1024]){0}, work), "/plates"), 0777);
    plain_png("plates/0001.png");
    plain_png("plates/4000.png");
    plain_png("plates/12345.png");
    run("--headless", "--cpu", "--grid", "16", "--steps", "8", "--frames", "plates/%04d.png", disc, disc,
        NULL);
    CHECK(R.code == 1 && has(R.err, "plates/") && has(R.err, "--overwrite") &&
              count_lines(R.err) == 1,
          "plates stop the run: %d\n%s", R.code, R.err);
    CHECK(wexists("plates/0001.png") && wexists("plates/4000.png") && wexists("plates/12345.png"),
          "the plates are all there");
    char *a = wread("plates/4000.png");
    CHECK(a && !strncmp(a, "\x89PNG", 4), "4000 untouched");
    free(a);
    /* a frame range over them: the same */
    run("--headless", "--cpu", "--grid", "16", "--steps", "8", "--every", "1", "--frames",
        "plates/%04d.png", "--frame-range", "1-2", disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "plates/0001.png") && wexists("plates/0001.png"),
          "range over a plate: %d %s", R.code, R.err);
    /* a chunk elsewhere in the sequence leaves them alone and runs */
    run("--headless", "--cpu", "--grid", "16", "--steps", "8", "--every", "1", "--frames",
        "plates/%04d.png", "--frame-range", "5-6", disc, disc, NULL);
    CHECK(R.code == 0 && wexists("plates/0005.png") && wexists("plates/0001.png") &&
              wexists("plates/4000.png"),
          "a chunk beside the plates: %d %s", R.code, R.err);
    /* --overwrite: the user said so */
    run("--headless", "--cpu", "--grid", "16", "--steps", "8", "--frames", "plates/%04d.png",
        "--overwrite", disc, disc, NULL);
    CHECK(R.code == 0 && !wexists("plates/4000.png") && wexists("plates/0001.png"),
          "--overwrite: %d %s", R.code, R.err);
    /* and now they are ours: a second run replaces them without asking */
    run("--headless", "--cpu", "--grid", "16", "--steps", "8", "--frames", "plates/%04d.png", disc, disc,
        NULL);
    CHECK(R.code == 0 && has(R.err, "removed"), "our own frames: %d %s", R.code, R.err);
}

static void test_listed_frames(void)
{
    /* a frame listed by the folder's record is an earlier run's even
     * without the mark (frames of a version before the mark) */
    reset_work();
    run("--headless", "--cpu", "--grid", "16", "--steps", "20", "--every", "10", "--frames", "out", disc,
        disc, NULL);
    CHECK(R.code == 0 && wexists("out/frame_00003.png") && wexists("out/run.json"), "first run: %s",
          R.err);
    plain_png("out/frame_00002.png");
    plain_png("out/frame_00003.png");
    run("--headless", "--cpu", "--grid", "16", "--steps", "10", "--every", "10", "--frames", "out", disc,
        disc, NULL);
    CHECK(R.code == 0 && !wexists("out/frame_00003.png"), "listed frames replaced: %d %s", R.code,
          R.err);
    /* not listed (the record now lists 1..2), not marked: in the way */
    plain_png("out/frame_00007.png");
    run("--headless", "--cpu", "--grid", "16", "--steps", "10", "--every", "10", "--frames", "out", disc,
        disc, NULL);
    CHECK(R.code == 1 && has(R.err, "frame_00007.png") && wexists("out/frame_00007.png"),
          "unlisted: %d %s", R.code, R.err);
    /* the library: names from every record in the folder */
    char dir[1024];
    wpath(dir, sizeof dir, "out");
    int n = 0;
    char **names = sidecar_listed_frames(dir, &n);
    CHECK(n == 2 && names && !strcmp(names[0], "frame_00001.png"), "listed: %d", n);
    sidecar_names_free(names, n);
    wwrite("out/run_1-2.json", "{\"smokemorph\": \"0\", \"frames\": [{\"file\": \"../x.png\"}, "
                               "{\"file\": \"frame_00009.png\"}, {\"file\": 3}]}");
    wwrite("out/run_3-4.json", "[1, 2");
    names = sidecar_listed_frames(dir, &n);
    CHECK(n == 3, "a chunk's record adds its frames, a path or a bad file none: %d", n);
    sidecar_names_free(names, n);
}

static void test_input_in_frames(void)
{
    reset_work();
    run("--headless", "--cpu", "--grid", "16", "--steps", "10", "--frames", "shots", disc, disc, NULL);
    CHECK(R.code == 0 && wexists("shots/frame_00001.png"), "first run: %s", R.err);
    char start[1024];
    wpath(start, sizeof start, "shots/frame_00002.png");
    char *before = wread("shots/frame_00002.png");
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "10", "--frames", "shots", start, disc,
        NULL);
    char *after = wread("shots/frame_00002.png");
    CHECK(R.code == 1 && has(R.err, "input") && count_lines(R.err) == 1 && before && after &&
              !strcmp(before, after),
          "an input among the frames is refused, untouched: %d\n%s", R.code, R.err);
    free(before);
    free(after);
    /* even with --overwrite */
    run("--headless", "--cpu", "--grid", "16", "--steps", "10", "--frames", "shots", "--overwrite",
        start, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "input") && wexists("shots/frame_00002.png"),
          "--overwrite never replaces an input: %d %s", R.code, R.err);
    /* the metrics, the record, the screenshot onto an input */
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--metrics", disc, disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "input"), "metrics onto an input: %d %s", R.code, R.err);
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--frames", "o2", "--sidecar", disc, disc,
        disc, NULL);
    CHECK(R.code == 1 && has(R.err, "input"), "record onto an input: %d %s", R.code, R.err);
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--screenshot", disc, disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "input") && image_file_tagged(disc), "screenshot onto an input: %d %s",
          R.code, R.err);
}

static void test_foreign_outputs(void)
{
    reset_work();
    wwrite("notes.csv", "name,phone\nann,123\n");
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--metrics", "notes.csv", disc, disc, NULL);
    char *t = wread("notes.csv");
    CHECK(R.code == 1 && has(R.err, "notes.csv") && has(R.err, "--overwrite") && count_lines(R.err) == 1 &&
              t && !strcmp(t, "name,phone\nann,123\n"),
          "a foreign CSV: %d %s", R.code, R.err);
    free(t);
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--metrics", "notes.csv", "--overwrite",
        disc, disc, NULL);
    t = wread("notes.csv");
    CHECK(R.code == 0 && has(t, "step,time"), "--overwrite: %d %s", R.code, R.err);
    free(t);
    /* ours now: replaced without asking */
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--metrics", "notes.csv", disc, disc, NULL);
    CHECK(R.code == 0, "our own metrics: %d %s", R.code, R.err);
    /* a foreign run.json in the frames folder */
    mkdir(strcat(strcpy((char[1024]){0}, work), "/f"), 0777);
    wwrite("f/run.json", "{\"name\": \"my project\"}");
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--frames", "f", disc, disc, NULL);
    t = wread("f/run.json");
    CHECK(R.code == 1 && has(R.err, "run.json") && has(t, "my project") && !wexists("f/frame_00001.png"),
          "a foreign record: %d %s", R.code, R.err);
    free(t);
    /* only our own temporaries are swept: a dead pid's name not of ours stays */
    wwrite("f/photo.png.tmp.999999.1", "x");
    wwrite("f/frame_00009.png.tmp.999999.1", "x");
    run("--headless", "--cpu", "--grid", "16", "--steps", "4", "--frames", "f", "--sidecar", "r.json",
        disc, disc, NULL);
    CHECK(R.code == 0 && wexists("f/photo.png.tmp.999999.1") && !wexists("f/frame_00009.png.tmp.999999.1"),
          "temporaries: %d %s", R.code, R.err);
}


/* ------------------------------------------------------- 6. safe opening */

static void test_fifo(void)
{
    reset_work();
    char fifo[1024];
    wpath(fifo, sizeof fifo, "pipe");
    CHECK(mkfifo(fifo, 0666) == 0, "mkfifo");
    /* each refused at once, in one line (a hang would be killed after 20 s) */
    guard_secs = "20";
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", fifo, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "not a regular file") && count_lines(R.err) == 1, "a FIFO image: %d %s",
          R.code, R.err);
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--resume", fifo, NULL);
    CHECK(R.code == 1 && has(R.err, "not a regular file"), "a FIFO --resume: %d %s", R.code, R.err);
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--scene", fifo, NULL);
    CHECK(R.code == 1 && has(R.err, "not a regular file"), "a FIFO --scene: %d %s", R.code, R.err);
    guard_secs = NULL;
    CHECK(!image_file_tagged(fifo), "a FIFO is never marked (and not waited on)");
}


/* ------------------------------------------- 3. --frames means what it says */

static void test_frames_file_name(void)
{
    reset_work();
    const char *bad[] = {"out/smoke.exr", "smoke.png", "out/Smoke.PNG", "a/b.tiff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--frames", bad[i], disc, disc, NULL);
        CHECK(R.code == 2 && has(R.err, "####") && count_lines(R.err) == 1, "--frames %s: %d %s", bad[i],
              R.code, R.err);
    }
    CHECK(!wexists("out") && !wexists("smoke.png"), "nothing made");
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--frames", "out/smoke.exr", disc, disc,
        NULL);
    CHECK(has(R.err, "out/smoke.####.exr"), "the hint: %s", R.err);
    /* a folder of that name that exists is a folder; patterns and plain names run */
    mkdir(strcat(strcpy((char[1024]){0}, work), "/shots.png"), 0777);
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--frames", "shots.png", disc, disc, NULL);
    CHECK(R.code == 0 && wexists("shots.png/frame_00001.png"), "an existing folder: %d %s", R.code, R.err);
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--frames", "o/s.####.exr", disc, disc,
        NULL);
    CHECK(R.code == 0 && wexists("o/s.0001.exr"), "a pattern: %d %s", R.code, R.err);
}


/* ---------------------------------------------- 4. nothing non-finite in */

static void write_f32(const char *rel, int w, int h, float inside)
{
    float *px = calloc((size_t)w * h, sizeof(float));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if ((x - w / 2) * (x - w / 2) + (y - h / 2) * (y - h / 2) < w * w / 16) px[y * w + x] = inside;
    char p[1024];
    wpath(p, sizeof p, rel);
    testlib_write_file(p, px, (size_t)w * h * sizeof(float));
    free(px);
}

static uint32_t get32(const unsigned char *b) { return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24; }

/* The checkpoint rel with cell 0..n-1 of field 0's array k set to v, its
 * CRC-32 made right again (a file as written, with hostile numbers). */
static void poison_checkpoint(const char *rel, int k, float v, int ncells)
{
    char p[1024];
    size_t n;
    wpath(p, sizeof p, rel);
    unsigned char *b = (unsigned char *)testlib_read_file(p, &n);
    if (!b || n < 64) {
        free(b);
        return;
    }
    uint32_t hsize = get32(b + 12), w = get32(b + 24), h = get32(b + 28);
    for (int c = 0; c < ncells; c++) {
        size_t at = hsize + ((size_t)k * w * h + (size_t)(w * h / 2 + w / 2 + (size_t)c)) * 4;
        if (at + 4 <= n - 4) memcpy(b + at, &v, 4);
    }
    uLong crc = crc32(crc32(0L, Z_NULL, 0), b, (uInt)(n - 4));
    for (int i = 0; i < 4; i++) b[n - 4 + i] = (unsigned char)(crc >> (8 * i));
    testlib_write_file(p, b, n);
    free(b);
}

static void test_non_finite(void)
{
    reset_work();
    /* the issue's 3e38 RAW: refused in one line, never a crash */
    write_f32("big.f32", 64, 64, 3e38f);
    run("--headless", "--cpu", "--grid", "64", "--steps", "2", "--raw", "64x64:f32", "big.f32", "big.f32",
        NULL);
    CHECK(R.code == 1 && R.signal == 0 && has(R.err, "1e6") && count_lines(R.err) == 1, "3e38: %d %d %s",
          R.code, R.signal, R.err);
    write_f32("ok.f32", 32, 32, 9e5f);
    run("-q", "--headless", "--cpu", "--grid", "32", "--steps", "2", "--raw", "32x32:f32", "ok.f32",
        "ok.f32", NULL);
    CHECK(R.code == 0, "9e5 is a density: %d %s", R.code, R.err);
    /* denormals: flushed, so an image of them is empty (said so) */
    write_f32("tiny.f32", 32, 32, 1e-40f);
    run("--headless", "--cpu", "--grid", "32", "--steps", "2", "--raw", "32x32:f32", "tiny.f32", "ok.f32",
        NULL);
    CHECK(R.code == 1 && has(R.err, "empty"), "denormals: %d %s", R.code, R.err);
    ImageLoadOpts lo = {.raw = true, .raw_w = 32, .raw_h = 32, .raw_type = IMAGE_RAW_F32};
    char p[1024], err[512];
    wpath(p, sizeof p, "tiny.f32");
    Image *im = image_load(p, &lo, err, sizeof err);
    CHECK(im && image_sum(im) == 0.0, "flushed to 0");
    image_free(im);

    /* the CPU solver given any state steps without a crash (the issue's
     * SIGSEGV in sample_v: a NaN position indexed outside the arrays) */
    const float hostile[] = {NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 1e-45f};
    bool alive = true;
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        SolverParams sp;
        method_params_default(&sp);
        RefSolver *rs = ref_create(24, 24, &sp, err, sizeof err);
        if (!rs) {
            alive = false;
            break;
        }
        float rho[24 * 24];
        for (int k = 0; k < 24 * 24; k++) rho[k] = (k % 5) ? 0.5f : 0.0f;
        ref_set_density(rs, rho);
        ref_set_target(rs, rho, true);
        float *u = ref_velocity_u_mut(rs), *v = ref_velocity_v_mut(rs), *d = ref_density_mut(rs);
        for (int k = 0; k < 24 * 24; k += 7) u[k] = v[k] = d[k] = hostile[i];
        ref_step(rs);
        ref_step(rs);
        (void)ref_mass(rs);
        ref_free(rs);
    }
    CHECK(alive, "the solver steps through hostile states");
    /* a checkpoint with a valid checksum and a NaN, an infinity, a huge
     * value in its velocity: refused in one line */
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "4", "--checkpoint-every", "2", "--frames",
        "ck", disc, disc, NULL);
    CHECK(R.code == 0 && wexists("ck/checkpoint_000002.smc"), "checkpoints: %s", R.err);
    const float bad[] = {NAN, INFINITY, -3e38f};
    for (int i = 0; i < 3; i++) {
        run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "4", "--checkpoint-every", "2",
            "--frames", "ck", disc, disc, NULL);
        poison_checkpoint("ck/checkpoint_000002.smc", 3, bad[i], 1);
        run("--headless", "--cpu", "--steps", "4", "--frames", "ck2", "--resume", "ck/checkpoint_000002.smc",
            NULL);
        CHECK(R.code == 1 && R.signal == 0 && has(R.err, "array 4") && count_lines(R.err) == 1,
              "poisoned checkpoint %d: %d %d %s", i, R.code, R.signal, R.err);
    }
    /* finite but absurd (1e29 densities, their products overflowing):
     * still runs, finite */
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "4", "--checkpoint-every", "2", "--frames",
        "ck", disc, disc, NULL);
    for (int k = 0; k < 3; k++) poison_checkpoint("ck/checkpoint_000002.smc", k, 9e29f, 40);
    run("-q", "--headless", "--cpu", "--steps", "40", "--every", "10", "--frames", "ck3", "--metrics",
        "m.csv", "--resume", "ck/checkpoint_000002.smc", NULL);
    char *m = wread("m.csv");
    CHECK(R.code == 0 && R.signal == 0 && m && !has(m, "nan") && !has(m, "inf"), "1e29: %d %d %s\n%s",
          R.code, R.signal, R.err, m ? m : "");
    free(m);
    /* a state that stops being finite between outputs: the run stops in one
     * line at the next check (every FINITE_CHECK_EVERY, 16, steps), no nan row */
    run("-q", "--fault-nan-step", "32", "--headless", "--cpu", "--grid", "16", "--steps", "100", "--every", "50", "--frames", "nf",
        "--metrics", "m.csv", disc, disc, NULL);
    m = wread("m.csv");
    CHECK(R.code == 1 && R.signal == 0 && has(R.err, "stopped being finite") && has(R.err, "step 32") &&
              error_lines(R.err) == 1 && m && !has(m, "nan") && count_lines(m) == 2,
          "NaN at step 32: %d %d %s\n%s", R.code, R.signal, R.err, m ? m : "");
    free(m);
    /* at an output step: the same line, no nan row */
    run("-q", "--fault-nan-step", "50", "--headless", "--cpu", "--grid", "16", "--steps", "100", "--every", "50", "--frames", "nf",
        "--metrics", "m.csv", disc, disc, NULL);
    m = wread("m.csv");
    CHECK(R.code == 1 && has(R.err, "stopped being finite") && has(R.err, "step 50") && error_lines(R.err) == 1 &&
              m && !has(m, "nan"),
          "NaN at step 50: %d %s\n%s", R.code, R.err, m ? m : "");
    free(m);
}


/* ------------------------------------- 2. a scene writes only where it may */

static void scene_file(const char *frames, const char *metrics)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"grid\": [16, 16], \"steps\": 4, %s%s%s %s%s%s \"fields\": [{\"start\": \"%s\", "
             "\"keys\": [{\"step\": 4, \"target\": \"%s\"}]}]}",
             frames ? "\"frames\": \"" : "", frames ? frames : "", frames ? "\"," : "",
             metrics ? "\"metrics\": \"" : "", metrics ? metrics : "", metrics ? "\"," : "", disc, disc);
    wwrite("scn/s.json", text);
}

static void test_scene_outputs(void)
{
    reset_work();
    char d[1024];
    const char *dirs[] = {"scn", "photos", "home"};
    for (int i = 0; i < 3; i++) {
        wpath(d, sizeof d, dirs[i]);
        mkdir(d, 0777);
    }
    plain_png("photos/IMG_0001.png");
    plain_png("photos/IMG_0417.png");
    wwrite("home/.bashrc", "alias ll='ls -l'\n");
    const char *outside[][2] = {{"../photos/IMG_####.png", NULL}, {NULL, "../home/.bashrc"},
                                {"/tmp/smokemorph-never-here/f", NULL}, {"x/../../photos/IMG_####.png", NULL}};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        scene_file(outside[i][0], outside[i][1]);
        run("-q", "--headless", "--cpu", "--scene", "scn/s.json", NULL);
        CHECK(R.code == 1 && has(R.err, "outside the scene's folder") && count_lines(R.err) == 1,
              "scene output %zu: %d %s", i, R.code, R.err);
    }
    /* a symlink inside the folder that leads out counts as out */
    char target[1024], link[1024];
    wpath(target, sizeof target, "photos");
    wpath(link, sizeof link, "scn/link");
    CHECK(symlink(target, link) == 0, "symlink");
    scene_file("link/IMG_####.png", NULL);
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", NULL);
    CHECK(R.code == 1 && has(R.err, "outside the scene's folder"), "through a symlink: %d %s", R.code, R.err);
    char *rc = wread("home/.bashrc");
    CHECK(wexists("photos/IMG_0001.png") && wexists("photos/IMG_0417.png") && rc && has(rc, "alias") &&
              !wexists("photos/run.json"),
          "nothing outside was touched");
    free(rc);
    /* inside: runs, and says where it wrote, resolved, even with -q */
    scene_file("out/s.####.png", "m.csv");
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", NULL);
    char want[4000];
    snprintf(want, sizeof want, "smokemorph: outputs: frames %s/scn/out/s.####.png; record %s/scn/out/run.json; "
             "metrics %s/scn/m.csv", work, work, work);
    char real[PATH_MAX];
    if (realpath(work, real)) /* /tmp may be a symlink */
        snprintf(want, sizeof want, "smokemorph: outputs: frames %.900s/scn/out/s.####.png; record "
                 "%.900s/scn/out/run.json; metrics %.900s/scn/m.csv", real, real, real);
    CHECK(R.code == 0 && wexists("scn/out/s.0001.png") && wexists("scn/m.csv") && has(R.out, want) &&
              count_lines(R.out) == 1 && R.err[0] == '\0',
          "inside: %d\n%s%s\nwant %s", R.code, R.out, R.err, want);
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", "--progress-format", "json", "--no-progress",
        NULL);
    CHECK(R.code == 0 && !strncmp(R.out, "{\"event\":\"outputs\",\"frames\":\"/", 30) &&
              count_lines(R.out) == 1,
          "json: %s", R.out);
    /* the user names it on the command line, or allows it */
    scene_file("../photos/IMG_####.png", NULL);
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", "--frames", "mine", NULL);
    CHECK(R.code == 0 && wexists("mine/frame_00001.png"), "--frames given: %d %s", R.code, R.err);
    scene_file("../elsewhere", NULL);
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", "--allow-scene-outputs", NULL);
    CHECK(R.code == 0 && wexists("elsewhere/frame_00001.png"), "--allow-scene-outputs: %d %s", R.code, R.err);
    /* allowed, the plates are still not touched */
    scene_file("../photos/IMG_####.png", NULL);
    run("-q", "--headless", "--cpu", "--scene", "scn/s.json", "--allow-scene-outputs", NULL);
    CHECK(R.code == 1 && wexists("photos/IMG_0001.png") && wexists("photos/IMG_0417.png"),
          "allowed, plates kept: %d %s", R.code, R.err);
    /* the library */
    char p[1024];
    CHECK(guard_resolve("/", p, sizeof p) == 0 && !strcmp(p, "/"), "resolve /: %s", p);
    CHECK(guard_resolve("/nonexistent-dir/a/./b", p, sizeof p) == 0 && !strcmp(p, "/nonexistent-dir/a/b"),
          "resolve missing: %s", p);
    CHECK(guard_resolve("/nonexistent-dir/../etc", p, sizeof p) < 0, "'..' after a missing folder");
    CHECK(guard_inside("/tmp/a/b", "/tmp") && !guard_inside("/tmpx/a", "/tmp") && guard_inside("/x", "/"),
          "inside");
}


/* ------------------------------------------- 5. memory and time bounded */

static void test_memory_and_time(void)
{
    reset_work();
    /* --size whose frame is far beyond the budget: refused at start, naming
     * the frame (whole: --strip-rows -1; in strips: test_huge_frame) */
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--size", "16384x16384", "--max-memory", "512",
        "--strip-rows", "-1", disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "--max-memory 512 MiB") && has(R.err, "a 16384x16384 frame being written") &&
              count_lines(R.err) == 1 && !wexists("smokemorph-out"),
          "--size 16384² whole: %d %s", R.code, R.err);
    /* a grid beyond it: the simulation named */
    run("--headless", "--cpu", "--grid", "4096", "--steps", "1", "--max-memory", "256", disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "the biggest item: the simulation (4096x4096"), "grid: %d %s", R.code,
          R.err);
    /* one file for many keys is decoded once: 6 keys of a 2048² image fit
     * where 7 decodes (7 × 16 MiB) would not */
    Image *im = image_create(2048, 2048, 1);
    for (int k = 0; im && k < 2048 * 2048; k++) im->px[k] = ((k / 2048 - 1024) * (k / 2048 - 1024) +
                                                            (k % 2048 - 1024) * (k % 2048 - 1024)) < 250000;
    char big[1024], err[512];
    wpath(big, sizeof big, "big.png");
    CHECK(im && image_save_png(big, im, 8, err, sizeof err) == 0, "big.png: %s", err);
    image_free(im);
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "2", "--key-every", "1", "--max-memory", "100",
        big, big, big, big, big, big, big, NULL);
    CHECK(R.code == 0, "7 references of one file in 100 MiB: %d %s", R.code, R.err);
    char big2[1024];
    wpath(big2, sizeof big2, "big2.png");
    size_t bn;
    char *bb = testlib_read_file(big, &bn);
    if (bb) testlib_write_file(big2, bb, bn);
    free(bb);
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "2", "--max-memory", "20", big, big2, NULL);
    CHECK(R.code == 1 && has(R.err, ".png decoded (2048x2048)"), "over: %d %s", R.code, R.err);
    /* time: the issue's settings are refused at start in one line */
    const char *slow[][8] = {
        {"--grid", "256", "--dt", "1", "--umax", "100", NULL},
        {"--grid", "256", "--gather-iters", "10000", NULL},
    };
    for (size_t i = 0; i < sizeof slow / sizeof slow[0]; i++) {
        const char *a[16];
        int n = 0;
        for (int k = 0; k < 8 && slow[i][k]; k++) a[n++] = slow[i][k];
        while (n < 8) a[n++] = "-q";
        run("--headless", "--cpu", "--steps", "1", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], disc, disc,
            NULL);
        CHECK(R.code == 1 && has(R.err, "CPU backend") && count_lines(R.err) == 1, "slow %zu: %d %s", i, R.code,
              R.err);
    }
    SolverParams sp;
    method_params_default(&sp);
    int na;
    CHECK(budget_cpu_step_units(2048, 2048, &sp, &na) < BUDGET_CPU_STEP_UNITS && na > 1,
          "the defaults pass at 2048² (%d substeps)", na);
    /* the drift moves the smoke in the flow's substeps: its cap costs none */
    sp.wmax = 100.0f;
    double u0 = budget_cpu_step_units(256, 256, &sp, NULL);
    sp.wmax = 0.18f;
    CHECK(u0 == budget_cpu_step_units(256, 256, &sp, NULL), "--drift-max costs no substeps");
    sp.jacobi = 10000;
    CHECK(budget_cpu_step_units(256, 256, &sp, NULL) < BUDGET_CPU_STEP_UNITS, "--jacobi 10000 passes");
}

/* Run the binary in `work` (as run(), stdout and stderr into R.err's
 * place: the file big.err there); its exit status, and its peak resident
 * memory in KiB in *kib (wait4's). */
#define MAXARGS 48
static int run_rss(long *kib, const char *const *args)
{
    char errf[1024];
    wpath(errf, sizeof errf, "big.err");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[MAXARGS + 2];
        int n = 0;
        argv[n++] = bin;
        for (int k = 0; args[k] && n < MAXARGS; k++) argv[n++] = args[k];
        argv[n] = NULL;
        int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (chdir(work) < 0 || fd < 0) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        unsetenv("DISPLAY");
        unsetenv("WAYLAND_DISPLAY");
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) return -1;
    *kib = ru.ru_maxrss;
    free(R.err);
    R.err = testlib_read_file(errf, NULL);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A PNG read a row at a time (never whole): its size and type, every row
 * decoded through the end (CRCs, zlib), the alpha of its centre pixel and
 * the first and last rows with any alpha. 0, or -1. */
typedef struct {
    png_structp png;
    png_infop info;
    FILE *f;
    unsigned char *row;
    jmp_buf jb;
} BigRead;

static void big_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    longjmp(((BigRead *)png_get_error_ptr(png))->jb, 1);
}

static int big_rows(BigRead *r, unsigned *w, unsigned *h, int *type, int *depth, int *centre, int *top,
                    int *bottom)
{
    if (setjmp(r->jb)) return -1;
    png_init_io(r->png, r->f);
    png_read_info(r->png, r->info);
    *w = png_get_image_width(r->png, r->info);
    *h = png_get_image_height(r->png, r->info);
    *type = png_get_color_type(r->png, r->info);
    *depth = png_get_bit_depth(r->png, r->info);
    if (*type != PNG_COLOR_TYPE_RGBA || *depth != 8 || *w > 65536) return -1;
    r->row = malloc(4 * (size_t)*w);
    if (!r->row) return -1;
    *top = *bottom = -1;
    for (unsigned y = 0; y < *h; y++) {
        png_read_row(r->png, r->row, NULL);
        int any = 0;
        for (unsigned x = 0; x < *w; x++) any |= r->row[4 * x + 3];
        if (any && *top < 0) *top = (int)y;
        if (any) *bottom = (int)y;
        if (y == *h / 2) *centre = r->row[4 * (*w / 2) + 3];
    }
    png_read_end(r->png, NULL);
    return 0;
}

/* issue 21: a frame far larger than --max-memory is written in strips of
 * rows: accepted, whole and right, its peak memory a strip's (about 20 MiB;
 * the frame whole would take some 800 MiB, and is refused in 64 MiB); a
 * size whose strip does not fit is refused in one line that names the
 * strip. */
static void test_huge_frame(void)
{
    reset_work();
    const char *args[] = {"-q", "--headless", "--cpu", "--grid", "32", "--steps", "1", "--frame-range", "1-1",
                          "--size", "8192x4096", "--max-memory", "64", "--frames", "big", "--threads", "2",
                          disc, disc, NULL};
    long kib = 0;
    int rc = run_rss(&kib, args);
    CHECK(rc == 0 && !has(R.err, "smokemorph: this run needs"), "8192x4096 under --max-memory 64: %d %s", rc,
          R.err);
    CHECK(kib > 0 && kib < 256 * 1024, "8192x4096: peak resident memory %ld MiB, not a strip's", kib / 1024);
    char png[1024];
    wpath(png, sizeof png, "big/frame_00001.png");
    BigRead r = {0};
    unsigned w = 0, h = 0;
    int type = -1, depth = 0, centre = -1, top = -1, bottom = -1, ok = -1;
    if ((r.f = fopen(png, "rb")) && (r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, big_error, NULL)) &&
        (r.info = png_create_info_struct(r.png)))
        ok = big_rows(&r, &w, &h, &type, &depth, &centre, &top, &bottom);
    if (r.png) png_destroy_read_struct(&r.png, r.info ? &r.info : NULL, NULL);
    if (r.f) fclose(r.f);
    free(r.row);
    /* the disc: centre (0.45, 0.5) of the domain, radius 0.25 (make_fixtures) */
    CHECK(ok == 0 && w == 8192 && h == 4096, "the 8192x4096 frame reads back: %d, %ux%u type %d depth %d", ok, w,
          h, type, depth);
    CHECK(centre > 200 && top > 4096 / 8 && top < 4096 / 3 && bottom > 4096 * 2 / 3 && bottom < 4096 * 7 / 8,
          "the disc in the 8192x4096 frame: centre alpha %d, rows %d..%d", centre, top, bottom);
    /* a strip that does not fit: refused at start, naming it */
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--size", "16384x16384", "--max-memory", "16",
        disc, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "--max-memory 16 MiB") &&
              has(R.err, "the biggest item: a 64-row strip of a 16384x16384 frame being written (--size)") &&
              count_lines(R.err) == 1 && !wexists("smokemorph-out"),
          "16384² in 16 MiB: %d %s", R.code, R.err);
}

/* Every numeric option at the ends of its range, at 16², two steps: each
 * runs, or is refused in one line; none crashes or hangs (killed after
 * 60 s). */
static void test_numeric_extremes(void)
{
    static const char *const ends[][3] = {
        {"--dt", "1e-9", "1"},          {"--vf", "0", "10000"},        {"--vd", "0", "10000"},
        {"--vg", "0", "10000"},         {"--sigma", "1e-9", "1"},      {"--jacobi", "0", "10000"},
        {"--vcycles", "0", "100"},      {"--gather-iters", "0", "10000"}, {"--umax", "1e-9", "100"},
        {"--vb", "0", "100000"},        {"--drift", "0", "10000"},     {"--drift-max", "0", "100"},
        {"--drift-balance", "0", "10000"}, {"--ease-force", "0", "10000"}, {"--ease-gather", "0", "10000"},
        {"--steps", "1", "2"},          {"--every", "1", "100000"},    {"--fps", "1e-300", "1000"},
        {"--frame-start", "0", "99999999"}, {"--density-scale", "1e-30", "1e30"},
        {"--size", "1x1", "64x64"},     {"--grid", "8", "16"},         {"--max-image-mb", "1", "65536"},
        {"--max-memory", "16", "16777216"}, {"--checkpoint-every", "1", "100000000"},
        {"--key-every", "1", "100000000"},
    };
    bool ok = true;
    guard_secs = "60";
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        for (int e = 1; e <= 2; e++) {
            reset_work();
            run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "2", ends[i][0], ends[i][e], disc, disc,
                NULL);
            bool fine = R.signal == 0 && (R.code == 0 || ((R.code == 1 || R.code == 2) && count_lines(R.err) == 1));
            if (!fine) printf("  %s %s: exit %d signal %d: %s\n", ends[i][0], ends[i][e], R.code, R.signal, R.err);
            ok = ok && fine;
        }
    guard_secs = NULL;
    CHECK(ok, "every numeric option's ends run or are refused in one line");
}


/* ------------------------------------------------- 7. the smaller points */

static void test_small_points(void)
{
    reset_work();
    /* a read-only checkpoint folder: refused at start, nothing written */
    char ro[1024];
    wpath(ro, sizeof ro, "ro");
    mkdir(ro, 0555);
    if (access(ro, W_OK) == 0) {
        printf("SKIP read-only folder: running as a user who can write anywhere\n");
    } else {
        run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "40", "--checkpoint-every", "20",
            "--checkpoint-dir", "ro", "--frames", "f", disc, disc, NULL);
        CHECK(R.code == 1 && has(R.err, "cannot write checkpoints to ro") && count_lines(R.err) == 1 &&
                  !wexists("f/frame_00001.png"),
              "read-only checkpoint folder: %d %s", R.code, R.err);
    }
    chmod(ro, 0755);
    /* metrics inside the frames folder the run makes */
    run("-q", "--headless", "--cpu", "--grid", "16", "--steps", "4", "--frames", "new/deeper", "--metrics",
        "new/deeper/m.csv", disc, disc, NULL);
    CHECK(R.code == 0 && wexists("new/deeper/m.csv") && wexists("new/deeper/frame_00001.png"),
          "metrics in a frames folder to be made: %d %s", R.code, R.err);
    /* absurd numbers are printed as numbers */
    run("--headless", "--cpu", "--grid", "16", "--steps", "2", "--fps", "1e-300", "--frames", "fps", disc, disc,
        NULL);
    const char *line = strstr(R.err, "frames at");
    CHECK(R.code == 0 && line && strcspn(line, "\n") < 60, "--fps 1e-300: %d %s", R.code, R.err);
    run("--headless", "--cpu", "--raw", "99999999999x1", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "99999999999x1") && !has(R.err, " 999999999x1"), "--raw echo: %s", R.err);
}

static void test_options(void)
{
    reset_work();
    run("--headless", "--cpu", "--max-memory", "8", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "--max-memory") && count_lines(R.err) == 1, "--max-memory 8: %d %s",
          R.code, R.err);
    run("--headless", "--cpu", "--max-memory", "99999999999", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "--max-memory"), "--max-memory huge: %d %s", R.code, R.err);
}

int main(void)
{
    testlib_cli_start("test_safety", bin, tmp, sizeof tmp, work, sizeof work, make_fixtures);
    RUN(test_budget);
    RUN(test_options);
    RUN(test_mark);
    RUN(test_plates);
    RUN(test_listed_frames);
    RUN(test_input_in_frames);
    RUN(test_foreign_outputs);
    RUN(test_fifo);
    RUN(test_frames_file_name);
    RUN(test_non_finite);
    RUN(test_scene_outputs);
    RUN(test_memory_and_time);
    RUN(test_huge_frame);
    RUN(test_numeric_extremes);
    RUN(test_small_points);
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
