/* test_robust: issue 10's "nothing lost, nothing stale", "hostile files" and
 * "input hints", in the library and through the binary ($SMOKEMORPH_BIN,
 * default build/smokemorph). Every run is on the CPU backend at a 32² to 48²
 * grid (the aspect test's one step at the default cell count excepted), with
 * DISPLAY unset and cwd in a mkdtemp directory. */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "exr.h"
#include "export.h"
#include "image.h"
#include "testlib.h"

static char bin[PATH_MAX];
static char tmp[256];  /* fixtures */
static char work[512]; /* cwd of every child */
static TestlibResult R;
static TestlibRunOpts next; /* options of the next run only */

static void reset_work(void) { testlib_fresh_dir(work); }
static bool has(const char *hay, const char *needle) { return testlib_has(hay, needle); }
static int count_lines(const char *s) { return testlib_count_lines(s); }
static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    testlib_path(buf, n, dir, name);
}

/* Run the binary in `work` with DISPLAY unset; fills R. */
static void run(const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    testlib_run_headless_va((const char *[]){bin, NULL}, first, ap, work, &next, &R);
    va_end(ap);
    memset(&next, 0, sizeof next);
}

/* ------------------------------------------------------------- fixtures */

static char disc[600], logo_rgba[600], black_on_white[600], wide[600], white[600], big[600],
    jpeg[600];

static int save(const char *path, Image *im)
{
    char err[512];
    int rc = image_save_png(path, im, 8, err, sizeof err);
    if (rc < 0) printf("fixture: %s\n", err);
    image_free(im);
    return rc;
}

static Image *disc_image(int w, int h, double v)
{
    Image *im = image_create(w, h, 1);
    static const TestlibShape domain = {.domain = true};
    if (im) testlib_disc(im->px, w, h, &domain, 0.45, 0.5, 0.25, v);
    return im;
}

static int make_fixtures(void)
{
    char *const buf[] = {disc, logo_rgba, black_on_white, wide, white, big, jpeg};
    static const char *const name[] = {"disc.png", "logo-rgba.png", "black-on-white.png", "wide.png",
                                       "white.png", "big.png", "photo.jpg"};
    for (size_t k = 0; k < sizeof buf / sizeof buf[0]; k++) path_in(buf[k], sizeof disc, tmp, name[k]);
    if (save(disc, disc_image(32, 32, 1.0)) < 0) return -1;
    if (save(wide, disc_image(64, 48, 1.0)) < 0) return -1;
    if (save(big, disc_image(1024, 1024, 1.0)) < 0) return -1;
    Image *im = disc_image(32, 32, 1.0); /* black on white: 1 - disc */
    if (!im) return -1;
    for (int k = 0; k < 32 * 32; k++) im->px[k] = 1.0f - im->px[k];
    if (save(black_on_white, im) < 0) return -1;
    im = image_create(32, 32, 1);
    if (!im) return -1;
    for (int k = 0; k < 32 * 32; k++) im->px[k] = 1.0f;
    if (save(white, im) < 0) return -1;
    /* a black logo on transparency: RGB 0 everywhere, alpha the disc */
    Image *d = disc_image(32, 32, 1.0);
    im = image_create(32, 32, 4);
    if (!d || !im) return -1;
    for (int k = 0; k < 32 * 32; k++) im->px[4 * k + 3] = d->px[k];
    image_free(d);
    if (save(logo_rgba, im) < 0) return -1;
    static const unsigned char jfif[] = {0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1};
    return testlib_write_file(jpeg, jfif, sizeof jfif);
}

/* ---------------------------------------------------- PNG bytes by hand */

static uint32_t crc32_png(const unsigned char *p, size_t n) { return testlib_crc32(p, n); }

static size_t put32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
    return 4;
}

/* A chunk with its CRC; `claimed` is the length field written (the data
 * that follows is `n` bytes, so a lie makes the file end early). */
static size_t chunk(unsigned char *b, const char *type, const unsigned char *d, size_t n,
                    uint32_t claimed)
{
    size_t p = put32(b, claimed);
    memcpy(b + p, type, 4);
    if (n) memcpy(b + p + 4, d, n);
    p += 4 + n;
    if (claimed == n) p += put32(b + p, crc32_png(b + 4, 4 + n));
    return p;
}

/* Signature and IHDR: 13 + 12 + 8 = 33 bytes. */
static size_t png_head(unsigned char *b, uint32_t w, uint32_t h, int bits, int ctype, int interlace)
{
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13];
    put32(ihdr, w);
    put32(ihdr + 4, h);
    ihdr[8] = (unsigned char)bits;
    ihdr[9] = (unsigned char)ctype;
    ihdr[10] = ihdr[11] = 0;
    ihdr[12] = (unsigned char)interlace;
    return 8 + chunk(b + 8, "IHDR", ihdr, 13, 13);
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ------------------------------------------------------ hostile files */

/* A 44-byte PNG whose text chunk claims 2^31 - 1 bytes: fails at once as a
 * truncated file, without allocating the claim (it cost 2.1 GB). The same
 * for the other text chunks, an ICC profile and an unknown chunk. */
static void test_huge_chunk_claims(void)
{
    static const char *const types[] = {"tEXt", "zTXt", "iTXt", "iCCP", "abCd", "eXIf"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        unsigned char b[64];
        size_t n = png_head(b, 1, 1, 8, 0, 0);
        n += chunk(b + n, types[t], (const unsigned char *)"abc", 3, 0x7fffffffu);
        if (t == 0) CHECK(n == 44, "the tEXt file is %zu bytes, expected 44", n);
        long before = maxrss_kb();
        double t0 = check_now();
        char err[512] = "";
        Image *im = image_load_mem(b, n, "claim.png", NULL, NULL, err, sizeof err);
        double dt = check_now() - t0;
        long grew = maxrss_kb() - before;
        CHECK(!im && (has(err, "truncated") || has(err, "corrupt")) && has(err, "claim.png"),
              "%s claiming 2^31-1 bytes: '%s'", types[t], err);
        CHECK(grew < 100 * 1024, "%s claiming 2^31-1 bytes: resident memory grew by %ld MiB",
              types[t], grew / 1024);
        CHECK(dt < 1.0, "%s claiming 2^31-1 bytes took %.2f s", types[t], dt);
        image_free(im);
    }
}

/* The budget is checked from IHDR: a 16384² 16-bit RGBA interlaced header
 * (3 GiB to decode) is refused with the numbers and the option; a real
 * 1024² image loads within 8 MiB and not within 1 MiB (4 MiB of floats). */
static void test_memory_budget(void)
{
    unsigned char b[128];
    size_t n = png_head(b, 16384, 16384, 16, 6, 1);
    n += chunk(b + n, "IDAT", (const unsigned char *)"\x78\x9c\x03\0\0\0\0\x01", 8, 8);
    n += chunk(b + n, "IEND", NULL, 0, 0);
    char err[512] = "";
    long before = maxrss_kb();
    Image *im = image_load_mem(b, n, "huge.png", NULL, NULL, err, sizeof err);
    CHECK(!im && has(err, "huge.png") && has(err, "16384x16384") && has(err, "interlaced") &&
              has(err, "3073 MiB") && has(err, "2048 MiB") && has(err, "--max-image-mb"),
          "16384² 16-bit RGBA interlaced: '%s'", err);
    CHECK(maxrss_kb() - before < 100 * 1024, "the refused header cost %ld MiB",
          (maxrss_kb() - before) / 1024);
    image_free(im);

    ImageLoadOpts o = {.max_mb = 1};
    im = image_load(big, &o, err, sizeof err);
    CHECK(!im && has(err, "big.png") && has(err, "1 MiB limit"), "1024² in 1 MiB: '%s'", err);
    image_free(im);
    o.max_mb = 8;
    im = image_load(big, &o, err, sizeof err);
    CHECK(im && im->w == 1024, "1024² in 8 MiB: '%s'", err);
    image_free(im);

    /* RAW too: 1024² u8 is 4 MiB of floats */
    size_t rn = 1024 * 1024;
    unsigned char *raw = calloc(rn, 1);
    ImageLoadOpts ro = {.raw = true, .raw_w = 1024, .raw_h = 1024, .max_mb = 2};
    im = raw ? image_load_mem(raw, rn, "r.raw", &ro, NULL, err, sizeof err) : NULL;
    CHECK(!im && has(err, "r.raw") && has(err, "2 MiB limit"), "RAW 1024² in 2 MiB: '%s'", err);
    image_free(im);
    free(raw);
}

/* Other formats are named, with a hint; --channel a needs alpha. */
static void test_format_and_channel(void)
{
    static const struct {
        const char *bytes;
        size_t n;
        const char *name;
    } cases[] = {
        {"\xff\xd8\xff\xe0\0\x10JFIF", 10, "JPEG"},
        {"GIF89a\x01\0\x01\0", 10, "GIF"},
        {"BM\x3a\0\0\0\0\0\0\0", 10, "BMP"},
        {"II*\0\x08\0\0\0\0\0", 10, "TIFF"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char err[512] = "";
        Image *im = image_load_mem(cases[k].bytes, cases[k].n, "pic", NULL, NULL, err, sizeof err);
        CHECK(!im && has(err, "not a PNG file") && has(err, cases[k].name) && has(err, "convert"),
              "%s: '%s'", cases[k].name, err);
        image_free(im);
    }
    char err[512] = "";
    Image *im = image_load_mem("plain text, no image", 20, "notes", NULL, NULL, err, sizeof err);
    CHECK(!im && has(err, "not a PNG file") && !has(err, "convert"), "text: '%s'", err);
    image_free(im);
    im = image_load_mem(NULL, 0, "nothing", NULL, NULL, err, sizeof err);
    CHECK(!im && has(err, "empty file"), "no bytes: '%s'", err);
    image_free(im);

    ImageLoadOpts a = {.channel = IMAGE_CHANNEL_A};
    im = image_load(disc, &a, err, sizeof err);
    CHECK(!im && has(err, "disc.png") && has(err, "no alpha channel") && has(err, "grey"),
          "--channel a on grey: '%s'", err);
    image_free(im);
    ImageLoadOpts ra = {.channel = IMAGE_CHANNEL_A, .raw = true, .raw_w = 2, .raw_h = 2};
    im = image_load_mem("abcd", 4, "r.raw", &ra, NULL, err, sizeof err);
    CHECK(!im && has(err, "no alpha channel"), "--channel a on RAW: '%s'", err);
    image_free(im);
    im = image_load(logo_rgba, &a, err, sizeof err);
    CHECK(im && image_sum(im) > 10.0, "--channel a on RGBA: '%s'", err);
    image_free(im);
}

/* ImageInfo: alpha and transparency as seen; a load from memory equals the
 * load from the file. */
static void test_image_info(void)
{
    ImageInfo info;
    char err[512];
    Image *im = image_load_info(logo_rgba, NULL, &info, err, sizeof err);
    CHECK(im && info.w == 32 && info.h == 32 && info.has_alpha && info.transparent,
          "RGBA logo: %dx%d alpha %d transparent %d", info.w, info.h, info.has_alpha,
          info.transparent);
    image_free(im);
    im = image_load_info(disc, NULL, &info, err, sizeof err);
    CHECK(im && !info.has_alpha && !info.transparent, "grey disc: alpha %d transparent %d",
          info.has_alpha, info.transparent);
    size_t n = 0;
    char *bytes = testlib_read_file(disc, &n);
    Image *mem = bytes ? image_load_mem(bytes, n, "disc", NULL, NULL, err, sizeof err) : NULL;
    CHECK(im && mem && mem->w == im->w && mem->h == im->h &&
              memcmp(mem->px, im->px, sizeof(float) * 32 * 32) == 0,
          "the disc from memory differs from the disc from the file");
    image_free(mem);
    image_free(im);
    free(bytes);
}

/* Fuzzing's findings, kept as regressions. fuzz_config: an option holding a
 * newline made a two-line error; errors are one line whatever a path or an
 * option holds. */
static void test_fuzz_findings(void)
{
    char a0[] = "smokemorph", a1[] = "--cpu", a2[] = "--gsteps\n\xcf", a3[] = "a.png", a4[] = "b.png";
    char *argv[] = {a0, a1, a2, a3, a4, NULL};
    Config c;
    char err[512];
    CHECK(config_parse(&c, 5, argv, err, sizeof err) < 0 && !strchr(err, '\n') &&
              has(err, "unknown option '--gsteps?"),
          "an option with a newline: '%s'", err);
    char g0[] = "smokemorph", g1[] = "--grid", g2[] = "12\r\n34";
    char *argv2[] = {g0, g1, g2, NULL};
    CHECK(config_parse(&c, 3, argv2, err, sizeof err) < 0 && !strchr(err, '\n') && !strchr(err, '\r'),
          "--grid with a newline: '%s'", err);
    Image *im = image_load("no\nsuch.png", NULL, err, sizeof err);
    CHECK(!im && !strchr(err, '\n') && has(err, "no?such.png"), "a path with a newline: '%s'", err);
    image_free(im);
}

/* fuzz_roundtrip: a 4x4 float ZIP chunk that zlib made exactly as large as
 * its 64 raw bytes was stored compressed, and read back (by any reader: a
 * chunk of the raw size is raw) as its zlib stream. exr_write stores such a
 * chunk raw; every sample reads back bit for bit, with ZIP and PIZ. */
static void test_fuzz_exr_raw_size_chunk(void)
{
    /* the fuzzer's input's samples, little-endian (the machine's order) */
    static const unsigned char bits[64] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x80, 0x3f, 0x8f, 0xaa, 0xaa, 0x3e,
        0xbd, 0x37, 0x86, 0x35, 0x59, 0xd9, 0x00, 0x33, 0x00, 0x0b, 0x16, 0xc0, 0x00, 0xe0, 0x7f, 0x47,
        0x7f, 0x47, 0x00, 0xef, 0x00, 0x33, 0x00, 0x00, 0x20, 0xc0, 0x00, 0xe0, 0x7f, 0x47, 0x00, 0xef,
        0x7f, 0x47, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    float px[16];
    memcpy(px, bits, sizeof px);
    ExrChannel ch = {"Y", px};
    static const ImageExrCompression comp[2] = {IMAGE_EXR_ZIP, IMAGE_EXR_PIZ};
    for (int k = 0; k < 2; k++) {
        char path[600], err[512];
        path_in(path, sizeof path, tmp, k ? "raw-size-piz.exr" : "raw-size-zip.exr");
        ExrWrite d = {.w = 4, .h = 4, .x0 = 0, .y0 = 0, .x1 = 3, .y1 = 3, .channels = &ch,
                      .nchannels = 1, .pixel = IMAGE_EXR_FLOAT, .compression = comp[k]};
        CHECK(exr_write(path, &d, err, sizeof err) == 0, "%s: %s", path, err);
        TestlibExr *e = testlib_load_exr(path);
        const float *y = e ? testlib_exr_channel(e, "Y") : NULL;
        CHECK(y && memcmp(y, px, sizeof px) == 0, "%s: the samples did not read back bit for bit%s", path,
              y ? "" : " (no file or channel)");
        if (y && memcmp(y, px, sizeof px))
            printf("  pixel 0: %g read back, %g written\n", (double)y[0], (double)px[0]);
        testlib_exr_free(e);
    }
}

/* ---------------------------------------------------- nothing stale */

/* A pid that was alive and is gone (a reaped child). */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    int st;
    waitpid(p, &st, 0);
    return (long)p;
}

static void touch(const char *dir, const char *name)
{
    char p[800];
    path_in(p, sizeof p, dir, name);
    testlib_write_file(p, "x", 1);
}

/* An earlier run's frame: a PNG with smokemorph's mark (the disc, written by
 * image_save_png), which a run may replace (issue 21: nothing else). */
static void old_frame(const char *dir, const char *name)
{
    char p[800];
    size_t n;
    char *b = testlib_read_file(disc, &n);
    path_in(p, sizeof p, dir, name);
    if (b) testlib_write_file(p, b, n);
    free(b);
}

/* export_clean removes every frame from first_frame on and the temporaries
 * of dead processes, and nothing else. */
static void test_export_clean(void)
{
    char dir[600], name[128];
    path_in(dir, sizeof dir, tmp, "clean");
    testlib_rm_rf(dir);
    float rgb[3] = {1, 1, 1};
    char err[512];
    Exporter *x = export_open(dir, 0, 0, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open: %s", err);
    if (!x) return;
    for (int k = 1; k <= 5; k++) {
        snprintf(name, sizeof name, "frame_%05d.png", k);
        touch(dir, name);
    }
    long dead = dead_pid();
    snprintf(name, sizeof name, "frame_00003.png.tmp.%ld.0", dead);
    touch(dir, name);
    snprintf(name, sizeof name, "frame_00004.png.tmp.%ld.7", (long)getpid());
    touch(dir, name); /* a live process's: kept */
    touch(dir, "notes.txt");
    touch(dir, "frame_1.png");
    int temps = -1;
    CHECK(export_clean(x, 3, &temps) == 3 && temps == 1, "export_clean(3): temps %d", temps);
    CHECK(testlib_count_entries(dir, NULL, NULL) == 5, "%d entries left, expected frames 1-2, "
          "the live temporary, notes.txt, frame_1.png", testlib_count_entries(dir, NULL, NULL));
    CHECK(export_clean(x, 1, &temps) == 2 && temps == 0, "export_clean(1): temps %d", temps);
    int m = 0;
    testlib_count_entries(dir, ".tmp.", &m);
    CHECK(m == 1, "the live process's temporary was removed");
    export_close(x);
    testlib_rm_rf(dir);
}

/* metrics_open keeps the temporaries of dead processes beside the file as
 * FILE.killed-PID (issue 21: their rows were deleted);
 * a row that fails leaves the complete rows, one line of error. */
static void test_metrics_rows_kept(void)
{
    char dir[600], p[800], t[900], live[900];
    path_in(dir, sizeof dir, tmp, "metrics");
    testlib_rm_rf(dir);
    mkdir(dir, 0777);
    path_in(p, sizeof p, dir, "m.csv");
    long dpid = dead_pid();
    snprintf(t, sizeof t, "%s.tmp%ld", p, dpid);
    snprintf(live, sizeof live, "%s.tmp%ld", p, (long)getppid());
    testlib_write_file(t, "step,ti", 7);
    testlib_write_file(live, "x", 1);
    char err[512];
    Metrics *m = metrics_open(p, err, sizeof err);
    char kept[1000], krows[64];
    snprintf(kept, sizeof kept, "%s.killed-%ld", p, dpid);
    testlib_read_text(kept, krows, sizeof krows);
    CHECK(m && !testlib_exists(t) && testlib_exists(live) && !strcmp(krows, "step,ti"),
          "metrics_open: the dead run's temporary is %s (its rows kept: '%s'), the live one's %s",
          testlib_exists(t) ? "there" : "gone", krows, testlib_exists(live) ? "there" : "gone");
    unlink(kept);
    if (m) metrics_close(m, 0, err, sizeof err);
    unlink(live);

    /* a child writes rows under a 300-byte file size limit until one fails */
    pid_t c = fork();
    if (c == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {300, 300};
        setrlimit(RLIMIT_FSIZE, &rl);
        Metrics *w = metrics_open(p, err, sizeof err);
        if (!w) _exit(101);
        int k = 0;
        while (k < 100 && metrics_row(w, k, 0.01 * k, 0.123456789, 1234.5678, 0.001, 1) == 0) k++;
        const char *why = metrics_error(w);
        bool good = k < 100 && strstr(why, "m.csv") && strstr(why, "too large") && !strchr(why, '\n');
        if (metrics_row(w, 999, 0, 0, 0, 0, 1) == 0) good = false; /* refused after a failure */
        if (metrics_close(w, 1, err, sizeof err) < 0) _exit(102);
        _exit(good ? k : 103);
    }
    int st = 0;
    waitpid(c, &st, 0);
    int rows = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CHECK(rows >= 1 && rows < 100, "the child: status %d", rows);
    size_t n = 0;
    char *s = testlib_read_file(p, &n);
    CHECK(s && n > 0 && s[n - 1] == '\n' && n <= 300, "the kept file: %zu bytes, last '%c'", n,
          s && n ? s[n - 1] : '?');
    CHECK(s && count_lines(s) == rows + 1, "the kept file has %d lines, the child wrote %d rows",
          s ? count_lines(s) : -1, rows);
    free(s);
    testlib_rm_rf(dir);
}

/* ------------------------------------------------------ through the binary */

#define SMALL "--cpu", "--grid", "32", "--steps", "4", "--every", "2"

/* An old, longer run and a killed run's temporaries in F: a new run removes
 * them first, says so, and leaves its own frames only. */
static void test_rerun_cleans(void)
{
    reset_work();
    char f[700], name[128];
    path_in(f, sizeof f, work, "F");
    mkdir(f, 0777);
    for (int k = 1; k <= 9; k++) {
        snprintf(name, sizeof name, "frame_%05d.png", k);
        old_frame(f, name);
    }
    snprintf(name, sizeof name, "frame_00005.png.tmp.%ld.3", dead_pid());
    touch(f, name);
    snprintf(name, sizeof name, "m.csv.tmp%ld", dead_pid());
    touch(work, name);
    run(SMALL, "--frames", "F", "--metrics", "m.csv", disc, disc, NULL);
    CHECK(R.code == 0, "exit %d:\n%s", R.code, R.err);
    CHECK(has(R.err, "removed 9 frames of an earlier run and 1 temporary files"), "stderr:\n%s",
          R.err);
    int nf = 0;
    testlib_count_entries(f, "frame_", &nf); /* and the run's run.json (test_farm) */
    CHECK(nf == 3 && testlib_count_entries(f, NULL, NULL) == 4, "%d frames in F, expected frames 1-3",
          nf);
    CHECK(testlib_count_entries(work, NULL, NULL) == 3, "%d entries in the work directory, "
          "expected F, m.csv and the killed run's rows m.csv.killed-PID",
          testlib_count_entries(work, NULL, NULL));
}

/* SIGTERM inside one long step (10,000 pressure iterations and 40 V-cycles
 * a step: several seconds a step at 512², within the CPU time bound (issue
 * 21 refuses 10,000 gathering iterations too); --dt 1 --umax 100 is no
 * longer slow, its substeps follow the flow) ends the run within a second, exit 143,
 * one line saying what the folder holds: this run's frame 1 only (an old run's
 * frames were removed at the start), and the metrics row of step 0. */
static void test_signal_inside_a_step(void)
{
    int sigs[2] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        reset_work();
        char f[700], m[700];
        path_in(f, sizeof f, work, "F");
        path_in(m, sizeof m, work, "m.csv");
        mkdir(f, 0777);
        for (int i = 1; i <= 6; i++) {
            char name[64];
            snprintf(name, sizeof name, "frame_%05d.png", i);
            old_frame(f, name);
        }
        next.kill_after_ms = 600;
        next.kill_signal = sigs[k];
        double t0 = check_now();
        run("-q", "--cpu", "--grid", "512", "--jacobi", "10000", "--vcycles", "40", "--steps", "3", "--every", "1", "--frames", "F", "--metrics", "m.csv", disc, disc, NULL);
        double took = check_now() - t0 - 0.6;
        CHECK(R.signal == 0 && R.code == 128 + sigs[k], "signal %d: exit %d signal %d:\n%s",
              sigs[k], R.code, R.signal, R.err);
        CHECK(took < 1.0, "signal %d: the run took %.2f s to stop", sigs[k], took);
        CHECK(count_lines(R.err) == 1 && has(R.err, "interrupted by SIG") &&
                  has(R.err, "at step 0") && has(R.err, "F holds this run's frames 1..1 (steps 0..0)") &&
                  has(R.err, "m.csv holds 1 metrics rows"),
              "signal %d: stderr:\n%s", sigs[k], R.err);
        int nf = 0;
        testlib_count_entries(f, "frame_", &nf); /* and the run's run.json (test_farm) */
        CHECK(nf == 1 && testlib_count_entries(f, NULL, NULL) == 2, "signal %d: %d frames in F",
              sigs[k], nf);
        char buf[256];
        testlib_read_text(m, buf, sizeof buf);
        CHECK(strncmp(buf, "step,time,error,mass,max_div,key\n0,0,", 37) == 0 && count_lines(buf) == 2,
              "signal %d: m.csv:\n%s", sigs[k], buf);
    }
}

/* A metrics file that cannot grow (the file size limit, as a full disk):
 * one line with the reason, exit 1, the complete rows kept. /dev/full fails
 * at the header, before anything is written: one line with the reason. */
static void test_metrics_write_fails(void)
{
    reset_work();
    next.rlimit_set = true;
    next.rlimit_resource = RLIMIT_FSIZE;
    next.rlimit_value = 400;
    run("--cpu", "--grid", "32", "--steps", "40", "--every", "1", "--metrics", "m.csv", disc, disc,
        NULL);
    CHECK(R.signal == 0 && R.code == 1, "exit %d signal %d:\n%s", R.code, R.signal, R.err);
    const char *e = strstr(R.err, "export:");
    CHECK(e && count_lines(e) == 1 && has(e, "cannot write m.csv: File too large"),
          "not one export line with the reason:\n%s", R.err);
    char p[700];
    path_in(p, sizeof p, work, "m.csv");
    size_t n = 0;
    char *s = testlib_read_file(p, &n);
    CHECK(s && n > 40 && s[n - 1] == '\n' && strncmp(s, "step,", 5) == 0,
          "m.csv after the failure: %zu bytes", n);
    free(s);

    reset_work();
    run("--cpu", "--grid", "32", "--steps", "2", "--metrics", "/dev/full", disc, disc, NULL);
    CHECK(R.code == 1 && count_lines(R.err) == 1 && has(R.err, "/dev/full") &&
              has(R.err, "No space left"),
          "--metrics /dev/full: exit %d:\n%s", R.code, R.err);
}

/* Hints: one line each, naming the option. */
static void test_hints(void)
{
    reset_work();
    run(SMALL, "--frames", "F", logo_rgba, disc, NULL);
    CHECK(R.code == 1, "an RGBA logo on black transparency by luma is empty: exit %d", R.code);
    CHECK(has(R.err, "logo-rgba.png has transparency") && has(R.err, "logo-rgba.png:channel=a"),
          "no transparency hint:\n%s", R.err);
    reset_work();
    run(SMALL, "--frames", "F", "--channel", "a", logo_rgba, logo_rgba, NULL);
    CHECK(R.code == 0 && !has(R.err, "transparency"), "--channel a on the logo: exit %d:\n%s",
          R.code, R.err);

    reset_work();
    run(SMALL, "--frames", "F", black_on_white, disc, NULL);
    CHECK(R.code == 0 && has(R.err, "black-on-white.png is mostly bright with a dark shape") &&
              has(R.err, "black-on-white.png:invert makes the dark shape the smoke"),
          "no invert hint: exit %d:\n%s", R.code, R.err);
    /* a file given twice (the same options) is hinted once */
    reset_work();
    run(SMALL, "--frames", "F", black_on_white, black_on_white, NULL);
    int hints = 0;
    for (const char *p = R.err; p && (p = strstr(p, "is mostly bright")); p++) hints++;
    CHECK(R.code == 0 && hints == 1, "a file given twice: %d hints, not 1: exit %d:\n%s", hints, R.code, R.err);
    reset_work();
    run(SMALL, "--frames", "F", "--invert", black_on_white, black_on_white, NULL);
    CHECK(R.code == 0 && !has(R.err, "mostly bright"), "--invert: a hint left:\n%s", R.err);
    reset_work();
    run(SMALL, "--frames", "F", disc, disc, NULL);
    CHECK(R.code == 0 && !has(R.err, "image:"), "a plain disc got a hint:\n%s", R.err);

    /* aspect: --grid given, a 4:3 image: the hint names a grid that fits */
    reset_work();
    run(SMALL, "--frames", "F", wide, disc, NULL);
    CHECK(R.code == 0 && has(R.err, "wide.png is 64x48, the grid 32x32") &&
              has(R.err, "--grid 37x28 keeps its shape"),
          "no aspect hint:\n%s", R.err);
    /* no --grid: the grid takes the start image's aspect at the default's
     * cell count (256² = 65536: 296x222), and the square target is hinted */
    reset_work();
    run("--cpu", "--steps", "1", "--every", "1", "--frames", "F", wide, disc, NULL);
    CHECK(R.code == 0 && has(R.err, "296x222 grid") && has(R.err, "disc.png is 32x32") &&
              !has(R.err, "wide.png is"),
          "no --grid, a 4:3 start:\n%s", R.err);
}

/* Issue 23: each image its own channel and invert (IMAGE:invert,
 * IMAGE:channel=a), and the hints name what works for that image alone: a
 * black-on-white logo into a white-on-black word, and an RGBA logo (alpha)
 * into a grey word (luma). */
static void test_per_image(void)
{
    char spec[700], wspec[700], f1[700], f2[700];
    snprintf(spec, sizeof spec, "%s:invert", black_on_white);
    /* the logo inverted, the word as it is: no hint, and the logo's density
     * is the one --invert gives it (frame 1 is the start, --density-scale 1) */
    reset_work();
    run(SMALL, "--density-scale", "1", "--frames", "A", spec, disc, NULL);
    CHECK(R.code == 0 && !has(R.err, "image:"), "logo:invert into the word: exit %d:\n%s", R.code, R.err);
    run(SMALL, "--density-scale", "1", "--frames", "B", "--invert", black_on_white, black_on_white, NULL);
    path_in(f1, sizeof f1, work, "A/frame_00001.png");
    path_in(f2, sizeof f2, work, "B/frame_00001.png");
    CHECK(R.code == 0 && testlib_same_file(f1, f2), "logo:invert starts as --invert does");
    /* --invert for both: the word's hint says what keeps it, and that works */
    reset_work();
    run(SMALL, "--frames", "F", "--invert", black_on_white, disc, NULL);
    CHECK(R.code == 0 && has(R.err, "disc.png is mostly bright") &&
              has(R.err, "disc.png:invert=0 keeps it as it is") && !has(R.err, "black-on-white.png is"),
          "--invert for both: the word's hint:\n%s", R.err);
    snprintf(wspec, sizeof wspec, "%s:invert=0", disc);
    reset_work();
    run(SMALL, "--frames", "F", "--invert", black_on_white, wspec, NULL);
    CHECK(R.code == 0 && !has(R.err, "image:"), "the hint followed: exit %d:\n%s", R.code, R.err);
    /* --channel a for both fails on the word without alpha, naming the way
     * out; the logo's own channel=a works */
    reset_work();
    run(SMALL, "--frames", "F", "--channel", "a", logo_rgba, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "disc.png") && has(R.err, "no alpha channel") &&
              has(R.err, "IMAGE:channel=a"),
          "--channel a on the word: exit %d:\n%s", R.code, R.err);
    snprintf(spec, sizeof spec, "%s:channel=a", logo_rgba);
    reset_work();
    run(SMALL, "--frames", "F", spec, disc, NULL);
    CHECK(R.code == 0 && !has(R.err, "image:"), "logo:channel=a into the word: exit %d:\n%s", R.code,
          R.err);
    /* a ':' that is no options is part of the name; an empty suffix names a
     * file whose own name would parse */
    char odd[700], odd_spec[720];
    path_in(odd, sizeof odd, tmp, "take:invert");
    CHECK(testlib_sh(testlib_fmt("cp '%s' '%s'", disc, odd)) == 0, "cp");
    path_in(f1, sizeof f1, tmp, "shot:01.png");
    CHECK(testlib_sh(testlib_fmt("cp '%s' '%s'", disc, f1)) == 0, "cp");
    reset_work();
    run(SMALL, "--frames", "F", f1, disc, NULL);
    CHECK(R.code == 0, "shot:01.png is a file name: exit %d:\n%s", R.code, R.err);
    snprintf(odd_spec, sizeof odd_spec, "%s:", odd);
    run(SMALL, "--frames", "F", odd_spec, disc, NULL);
    CHECK(R.code == 0, "take:invert: names the file take:invert: exit %d:\n%s", R.code, R.err);
    run(SMALL, "--frames", "F", odd, disc, NULL);
    CHECK(R.code == 1 && has(R.err, "take") && !has(R.err, "take:invert"),
          "take:invert is the file take, inverted (there is none): exit %d:\n%s", R.code, R.err);
}

/* Errors: one line, exit 1, nothing written. */
static void test_input_errors(void)
{
    static const struct {
        const char *opt, *start, *target;
        const char *k1, *k2;
    } cases[] = {
        {"--channel", NULL, NULL, "disc.png", "no alpha channel"},
        {NULL, NULL, NULL, "white.png is uniform", "no shape"},
        {NULL, NULL, NULL, "photo.jpg", "JPEG"},
        {"--max-image-mb", "1", NULL, "big.png", "--max-image-mb"},
    };
    const char *starts[] = {disc, disc, jpeg, big};
    const char *targets[] = {disc, white, disc, disc};
    for (int k = 0; k < 4; k++) {
        reset_work();
        if (k == 0)
            run(SMALL, "--frames", "F", "--channel", "a", starts[k], targets[k], NULL);
        else if (k == 3)
            run(SMALL, "--frames", "F", "--max-image-mb", "1", starts[k], targets[k], NULL);
        else
            run(SMALL, "--frames", "F", starts[k], targets[k], NULL);
        CHECK(R.code == 1 && count_lines(R.err) == 1 && has(R.err, cases[k].k1) &&
                  has(R.err, cases[k].k2),
              "case %d: exit %d:\n%s", k, R.code, R.err);
        CHECK(testlib_count_entries(work, NULL, NULL) == 0, "case %d: files written", k);
    }
    reset_work();
    run(SMALL, "--max-image-mb", "0", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "--max-image-mb"), "--max-image-mb 0: exit %d:\n%s", R.code,
          R.err);
}

/* Window-only options headless: --keys, --window and --steps-per-frame are
 * usage errors; --screenshot writes the last frame. */
static void test_window_options_headless(void)
{
    static const char *const opts[3][2] = {
        {"--keys", "v"}, {"--window", "100x100"}, {"--steps-per-frame", "3"}};
    for (int k = 0; k < 3; k++) {
        reset_work();
        run(SMALL, opts[k][0], opts[k][1], disc, disc, NULL);
        CHECK(R.code == 2 && count_lines(R.err) == 1 && has(R.err, opts[k][0]) &&
                  has(R.err, "needs a window") && has(R.err, "headless"),
              "%s headless: exit %d:\n%s", opts[k][0], R.code, R.err);
        CHECK(testlib_count_entries(work, NULL, NULL) == 0, "%s headless: files written",
              opts[k][0]);
    }
    reset_work();
    run(SMALL, "--frames", "F", "--size", "40x24", "--screenshot", "shot.png", disc, disc, NULL);
    CHECK(R.code == 0 && has(R.err, "step 4 saved to shot.png"), "--screenshot headless: exit %d:\n%s",
          R.code, R.err);
    char s[700], f[700];
    path_in(s, sizeof s, work, "shot.png");
    path_in(f, sizeof f, work, "F/frame_00003.png");
    Image *a = testlib_load(s, IMAGE_CHANNEL_A), *b = testlib_load(f, IMAGE_CHANNEL_A);
    CHECK(a && b && a->w == 40 && a->h == 24 && b->w == 40 &&
              memcmp(a->px, b->px, sizeof(float) * 40 * 24) == 0,
          "the screenshot is not the last frame");
    image_free(a);
    image_free(b);
    /* --screenshot alone writes no frames directory */
    reset_work();
    run(SMALL, "-q", "--screenshot", "shot.png", disc, disc, NULL);
    CHECK(R.code == 0 && testlib_count_entries(work, NULL, NULL) == 1,
          "--screenshot alone: exit %d, %d entries:\n%s", R.code,
          testlib_count_entries(work, NULL, NULL), R.err);
}

int main(void)
{
    testlib_cli_start("test_robust", bin, tmp, sizeof tmp, work, sizeof work, make_fixtures);
    RUN(test_huge_chunk_claims);
    RUN(test_memory_budget);
    RUN(test_format_and_channel);
    RUN(test_image_info);
    RUN(test_fuzz_findings);
    RUN(test_fuzz_exr_raw_size_chunk);
    RUN(test_export_clean);
    RUN(test_metrics_rows_kept);
    RUN(test_rerun_cleans);
    RUN(test_signal_inside_a_step);
    RUN(test_metrics_write_fails);
    RUN(test_hints);
    RUN(test_per_image);
    RUN(test_input_errors);
    RUN(test_window_options_headless);
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
