/* test_export: numbered RGBA frames, --size resampling, directory errors,
 * no temporary files left, the metrics CSV (kept / discarded / bad path /
 * symlink / pipe), an earlier run's frames removed, and a silent progress
 * line; 16-bit and premultiplied PNG, EXR read back through OpenEXRCore,
 * name patterns and numbers, the density scale, and the video (a fake
 * ffmpeg for its failures; the real one, when there, for its files); several
 * fields composited. No GL. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "export.h"
#include "exr.h"
#include "image.h"
#include "testlib.h"

/* An empty file DIR/NAMES[k] for each of the N names. */
static void touch_all(const char *dir, const char *const *names, size_t n)
{
    for (size_t k = 0; k < n; k++) testlib_write_file(testlib_fmt("%s/%s", dir, names[k]), "", 0);
}

/* Every file of KEEP is still in DIR, none of OLD is. */
static void kept_removed(const char *dir, const char *const *keep, size_t nkeep,
                         const char *const *old, size_t nold)
{
    for (size_t k = 0; k < nkeep; k++)
        CHECK(testlib_exists(testlib_fmt("%s/%s", dir, keep[k])), "%s was removed", keep[k]);
    for (size_t k = 0; k < nold; k++)
        CHECK(!testlib_exists(testlib_fmt("%s/%s", dir, old[k])), "%s was kept", old[k]);
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    testlib_tmpdir(tmpdir, sizeof tmpdir, "test_export");
}

/* metrics_open(PATH), CHECKed to open (ERR: its message). */
static Metrics *open_metrics(const char *path, char *err, size_t n)
{
    Metrics *m = metrics_open(path, err, n);
    CHECK(m != NULL, "metrics_open %s: %s", path, err);
    return m;
}

/* The folder NAME made in tmpdir, its path in DIR. */
static void make_dir(char *dir, size_t n, const char *name)
{
    snprintf(dir, n, "%s/%s", tmpdir, name);
    mkdir(dir, 0777);
}


static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Density ramp with values below 0 and above 1, so the clamp shows. */
static float *make_density(int w, int h)
{
    float *rho = malloc((size_t)w * h * sizeof *rho);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            rho[y * w + x] = -0.25f + 1.5f * (float)(x + y * w) / (float)(w * h - 1);
    return rho;
}

static float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

static void test_open_nested(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/a/b/c", tmpdir);
    char err[512] = "";
    const float rgb[3] = {1, 1, 1};
    Exporter *x = export_open(dir, 0, 0, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open(%s) failed: %s", dir, err);
    CHECK(is_dir(dir), "nested directory %s not created", dir);
    if (x) {
        CHECK(export_count(x) == 0, "fresh exporter counts %d frames", export_count(x));
        CHECK(strcmp(export_dir(x), dir) == 0, "export_dir is '%s'", export_dir(x));
    }
    export_close(x);
    /* opening again (directory exists) is fine */
    x = export_open(dir, 0, 0, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open on an existing directory failed: %s", err);
    export_close(x);
}

static void test_frames(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frames", tmpdir);
    char err[512] = "";
    const float rgb[3] = {1.0f, 128.0f / 255.0f, 0.0f};
    const int w = 16, h = 12;
    Exporter *x = export_open(dir, 0, 0, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open: %s", err);
    if (!x) return;
    float *rho = make_density(w, h);
    for (int k = 0; k < 3; k++) {
        int rc = export_frame(x, rho, w, h, err, sizeof err);
        CHECK(rc == 0, "export_frame %d: %s", k + 1, err);
    }
    CHECK(export_count(x) == 3, "export_count %d, expected 3", export_count(x));
    export_close(x);

    char path[600];
    for (int k = 1; k <= 3; k++) {
        snprintf(path, sizeof path, "%s/frame_%05d.png", dir, k);
        CHECK(testlib_exists(path), "%s missing", path);
    }
    snprintf(path, sizeof path, "%s/frame_00004.png", dir);
    CHECK(!testlib_exists(path), "%s should not exist", path);
    snprintf(path, sizeof path, "%s/frame_00000.png", dir);
    CHECK(!testlib_exists(path), "numbering starts at 1, but %s exists", path);

    int ntmp = 0, n = testlib_count_entries(dir, ".tmp", &ntmp);
    CHECK(n == 3, "%d entries in %s, expected 3 frames", n, dir);
    CHECK(ntmp == 0, "%d temporary files left in %s", ntmp, dir);

    /* read frame 2 back: RGBA 8-bit, colour constant, alpha = clamp(rho) */
    snprintf(path, sizeof path, "%s/frame_00002.png", dir);
    Image *a = testlib_load(path, IMAGE_CHANNEL_A);
    Image *r = testlib_load(path, IMAGE_CHANNEL_R);
    Image *g = testlib_load(path, IMAGE_CHANNEL_G);
    Image *b = testlib_load(path, IMAGE_CHANNEL_B);
    CHECK(a && r && g && b, "cannot load %s back", path);
    if (a && r && g && b) {
        CHECK(a->w == w && a->h == h, "frame is %dx%d, expected %dx%d", a->w, a->h, w, h);
        float ea = 0, er = 0, eg = 0, eb = 0;
        for (int k = 0; k < w * h; k++) {
            ea = fmaxf(ea, fabsf(a->px[k] - clamp01(rho[k])));
            er = fmaxf(er, fabsf(r->px[k] - rgb[0]));
            eg = fmaxf(eg, fabsf(g->px[k] - rgb[1]));
            eb = fmaxf(eb, fabsf(b->px[k] - rgb[2]));
        }
        const float tol = 0.5f / 255.0f + 1e-6f; /* 8-bit rounding */
        CHECK(ea <= tol, "alpha differs from clamp(density) by %g", ea);
        CHECK(er <= tol && eg <= tol && eb <= tol, "colour off by r %g g %g b %g", er, eg, eb);
        CHECK(a->px[0] == 0.0f, "negative density gives alpha %g, expected 0", a->px[0]);
        CHECK(a->px[w * h - 1] == 1.0f, "density > 1 gives alpha %g, expected 1",
              a->px[w * h - 1]);
        /* 8-bit: every sample is a multiple of 1/255 */
        bool q8 = true;
        for (int k = 0; k < w * h; k++) {
            float v = a->px[k] * 255.0f;
            if (fabsf(v - roundf(v)) > 1e-3f) q8 = false;
        }
        CHECK(q8, "alpha samples are not 8-bit");
    }
    image_free(a);
    image_free(r);
    image_free(g);
    image_free(b);

    /* the file itself: a PNG signature, colour type 6 (RGBA), bit depth 8 */
    FILE *f = fopen(path, "rb");
    unsigned char hdr[33] = {0};
    size_t got = f ? fread(hdr, 1, sizeof hdr, f) : 0;
    if (f) fclose(f);
    CHECK(got == sizeof hdr && memcmp(hdr, "\x89PNG\r\n\x1a\n", 8) == 0 &&
              memcmp(hdr + 12, "IHDR", 4) == 0,
          "%s is not a PNG", path);
    CHECK(hdr[24] == 8 && hdr[25] == 6, "IHDR bit depth %d colour type %d, expected 8 and 6",
          hdr[24], hdr[25]);
    free(rho);
}

static void test_size(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sized", tmpdir);
    char err[512] = "";
    const float rgb[3] = {1, 1, 1};
    const int w = 32, h = 32, ow = 50, oh = 20;
    /* a soft blob well inside [0, 1], so resampling keeps the mean */
    float *rho = malloc((size_t)w * h * sizeof *rho);
    double mean = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float dx = (x + 0.5f) / w - 0.5f, dy = (y + 0.5f) / h - 0.5f;
            rho[y * w + x] = 0.8f * expf(-(dx * dx + dy * dy) / 0.03f);
            mean += rho[y * w + x];
        }
    mean /= (double)(w * h);
    Exporter *x = export_open(dir, ow, oh, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open: %s", err);
    if (!x) {
        free(rho);
        return;
    }
    CHECK(export_frame(x, rho, w, h, err, sizeof err) == 0, "export_frame: %s", err);
    export_close(x);
    char path[600];
    snprintf(path, sizeof path, "%s/frame_00001.png", dir);
    Image *a = testlib_load(path, IMAGE_CHANNEL_A);
    CHECK(a != NULL, "cannot load %s", path);
    if (a) {
        CHECK(a->w == ow && a->h == oh, "frame is %dx%d, expected %dx%d", a->w, a->h, ow, oh);
        double m = image_sum(a) / (double)(a->w * a->h);
        CHECK(fabs(m - mean) < 2.0 / 255.0, "mean alpha %g, grid mean %g", m, mean);
        float mx = 0;
        for (int k = 0; k < a->w * a->h; k++) mx = fmaxf(mx, a->px[k]);
        CHECK(mx > 0.6f && mx <= 0.81f, "peak alpha %g, expected about 0.8", mx);
    }
    image_free(a);
    int ntmp = 0;
    testlib_count_entries(dir, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files left in %s", ntmp, dir);
    free(rho);
}

static void test_open_on_file(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plainfile", tmpdir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("not a directory\n", f);
        fclose(f);
    }
    char err[512] = "";
    const float rgb[3] = {1, 1, 1};
    Exporter *x = export_open(path, 0, 0, rgb, err, sizeof err);
    CHECK(x == NULL, "export_open on a regular file succeeded");
    CHECK(strstr(err, path) != NULL, "message does not name %s: '%s'", path, err);
    CHECK(strstr(err, "not a directory") || strstr(err, "Not a directory"),
          "message does not say why: '%s'", err);
    CHECK(!strchr(err, '\n'), "message spans lines: '%s'", err);
    export_close(x);

    /* a regular file in the middle of the path */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/deeper/frames", path);
    err[0] = '\0';
    x = export_open(sub, 0, 0, rgb, err, sizeof err);
    CHECK(x == NULL, "export_open under a regular file succeeded");
    CHECK(strstr(err, path) != NULL, "message does not name %s: '%s'", path, err);
    export_close(x);
}

static void test_metrics_keep(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/m/metrics.csv", tmpdir);
    char dir[512];
    make_dir(dir, sizeof dir, "m");
    char err[512] = "";
    Metrics *m = open_metrics(path, err, sizeof err);
    if (!m) return;
    CHECK(!testlib_exists(path), "%s exists before metrics_close", path);
    CHECK(metrics_row(m, 0, 0.0, 0.9, 12.5, 0.0, 1) == 0, "metrics_row 0");
    CHECK(metrics_row(m, 10, 0.1, 0.5, 12.5, 0.003, 1) == 0, "metrics_row 10");
    CHECK(metrics_row(m, 20, 0.2, 0.25, 12.5, 0.002, 2) == 0, "metrics_row 20");
    CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    char *s = testlib_read_file(path, NULL);
    CHECK(s != NULL, "%s missing after metrics_close(keep=1)", path);
    if (s) {
        CHECK(strncmp(s, "step,time,error,mass,max_div,key\n", 33) == 0, "header: '%.40s'", s);
        int lines = 0;
        for (char *p = s; *p; p++) lines += *p == '\n';
        CHECK(lines == 4, "%d lines, expected header + 3 rows", lines);
        long st[3];
        double t[3], e[3], ms[3], dv[3];
        int key[3] = {0, 0, 0};
        char *p = strchr(s, '\n');
        for (int k = 0; k < 3 && p; k++) {
            int got = sscanf(p + 1, "%ld,%lf,%lf,%lf,%lf,%d", &st[k], &t[k], &e[k], &ms[k], &dv[k],
                             &key[k]);
            CHECK(got == 6, "row %d has %d fields", k, got);
            p = strchr(p + 1, '\n');
        }
        CHECK(st[0] == 0 && st[1] == 10 && st[2] == 20, "steps %ld %ld %ld", st[0], st[1], st[2]);
        CHECK(key[0] == 1 && key[1] == 1 && key[2] == 2, "key column %d %d %d", key[0], key[1], key[2]);
        CHECK(fabs(t[1] - 0.1) < 1e-9 && fabs(e[2] - 0.25) < 1e-9 && fabs(ms[1] - 12.5) < 1e-9 &&
                  fabs(dv[1] - 0.003) < 1e-9,
              "values do not round-trip");
    }
    free(s);
    int ntmp = 0, n = testlib_count_entries(dir, ".tmp", &ntmp);
    CHECK(n == 1 && ntmp == 0, "%d entries (%d temporary) in %s, expected only the CSV", n, ntmp,
          dir);
}

static void test_metrics_discard(void)
{
    char dir[512], path[600];
    make_dir(dir, sizeof dir, "md");
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    char err[512] = "";
    Metrics *m = open_metrics(path, err, sizeof err);
    if (!m) return;
    metrics_row(m, 0, 0.0, 1.0, 1.0, 0.0, 1);
    CHECK(metrics_close(m, 0, err, sizeof err) == 0, "metrics_close(keep=0): %s", err);
    CHECK(!testlib_exists(path), "%s exists after metrics_close(keep=0)", path);
    int n = testlib_count_entries(dir, NULL, NULL);
    CHECK(n == 0, "%d files left in %s after a discarded metrics file", n, dir);
    CHECK(metrics_close(NULL, 1, err, sizeof err) == 0, "metrics_close(NULL) is a no-op");
}

static void test_metrics_missing_dir(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/metrics.csv", tmpdir);
    char err[512] = "";
    Metrics *m = metrics_open(path, err, sizeof err);
    CHECK(m == NULL, "metrics_open in a missing directory succeeded");
    CHECK(strstr(err, path) != NULL, "message does not name %s: '%s'", path, err);
    CHECK(!strchr(err, '\n'), "message spans lines: '%s'", err);
    if (m) metrics_close(m, 0, err, sizeof err);

    /* a directory: refused at open (not at the final rename, after a whole run) */
    char dir[512];
    make_dir(dir, sizeof dir, "adir");
    err[0] = '\0';
    m = metrics_open(dir, err, sizeof err);
    CHECK(m == NULL, "metrics_open on a directory succeeded");
    CHECK(strstr(err, dir) && strstr(err, "directory"), "message: '%s'", err);
    if (m) metrics_close(m, 0, err, sizeof err);
    int ntmp = 0;
    testlib_count_entries(tmpdir, "adir.tmp", &ntmp);
    CHECK(ntmp == 0, "metrics_open on a directory left a temporary file");
}

/* A symlink as the metrics path keeps pointing at the (new) file; no
 * temporary file is left beside the link or the target. */
static void test_metrics_symlink(void)
{
    char dir[512], target[600], link[600];
    make_dir(dir, sizeof dir, "ms");
    snprintf(target, sizeof target, "%s/real.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *f = fopen(target, "w");
    if (f) fclose(f);
    CHECK(symlink("real.csv", link) == 0, "symlink");
    char err[512] = "";
    Metrics *m = open_metrics(link, err, sizeof err);
    if (!m) return;
    metrics_row(m, 0, 0.0, 0.5, 2.0, 0.0, 1);
    CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "%s is no longer a symlink", link);
    char *s = testlib_read_file(target, NULL);
    CHECK(s && strncmp(s, "step,time,error,mass,max_div,key\n0,", 35) == 0, "target holds '%.40s'",
          s ? s : "(nothing)");
    free(s);
    int ntmp = 0, n = testlib_count_entries(dir, ".tmp", &ntmp);
    CHECK(n == 2 && ntmp == 0, "%d entries (%d temporary) in %s", n, ntmp, dir);
}

/* A pipe (as /dev/stdout may be) is written in place: a temporary file and a
 * rename would replace it with a plain file. */
static void test_metrics_fifo(void)
{
    char fifo[512], out[600];
    snprintf(fifo, sizeof fifo, "%s/pipe", tmpdir);
    snprintf(out, sizeof out, "%s/pipe.out", tmpdir);
    CHECK(mkfifo(fifo, 0666) == 0, "mkfifo");
    pid_t pid = fork();
    if (pid == 0) { /* the reader: copy the pipe into a file */
        char cmd[1300];
        snprintf(cmd, sizeof cmd, "timeout 10 cat '%s' > '%s'", fifo, out);
        _exit(system(cmd) == 0 ? 0 : 1);
    }
    char err[512] = "";
    Metrics *m = open_metrics(fifo, err, sizeof err);
    if (m) {
        metrics_row(m, 0, 0.0, 0.5, 2.0, 0.0, 1);
        metrics_row(m, 10, 0.1, 0.4, 2.0, 0.001, 1);
        CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "%s is no longer a fifo", fifo);
    char *s = testlib_read_file(out, NULL);
    int lines = 0;
    for (char *p = s; p && *p; p++) lines += *p == '\n';
    CHECK(s && strncmp(s, "step,time,error,mass,max_div,key\n", 33) == 0 && lines == 3,
          "the reader got %d lines: '%.60s'", lines, s ? s : "(nothing)");
    free(s);
    int ntmp = 0;
    testlib_count_entries(tmpdir, "pipe.tmp", &ntmp);
    CHECK(ntmp == 0, "a temporary file was left beside the fifo");
}

/* After a shorter run into the same directory, the frames numbered past its
 * last are an earlier run's: export_remove_stale deletes exactly those. */
static void test_remove_stale(void)
{
    char dir[512];
    make_dir(dir, sizeof dir, "stale");
    const char *keep[] = {"frame_00001.png", "frame_00002.png", "frame_7.png", "frame_00009.png.bak",
                          "notes.txt", "frame_000010.png"};
    const char *old[] = {"frame_00003.png", "frame_00004.png", "frame_00012.png", "frame_123456.png"};
    touch_all(dir, keep, sizeof keep / sizeof keep[0]);
    touch_all(dir, old, sizeof old / sizeof old[0]);
    char err[512];
    float rgb[3] = {1, 1, 1};
    Exporter *x = export_open(dir, 0, 0, rgb, err, sizeof err);
    CHECK(x != NULL, "export_open: %s", err);
    if (!x) return;
    float *rho = make_density(8, 8);
    CHECK(export_frame(x, rho, 8, 8, err, sizeof err) == 0, "frame 1: %s", err);
    CHECK(export_frame(x, rho, 8, 8, err, sizeof err) == 0, "frame 2: %s", err);
    int removed = export_remove_stale(x);
    CHECK(removed == 4, "removed %d stale frames, expected 4", removed);
    kept_removed(dir, keep, sizeof keep / sizeof keep[0], old, sizeof old / sizeof old[0]);
    free(rho);
    export_close(x);
}

/* Run the progress calls with stderr going to a temporary file; return
 * what was written (caller frees). */
static char *progress_output(int enabled)
{
    FILE *tmp = tmpfile();
    if (!tmp) return NULL;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    Progress p;
    progress_begin(&p, 10, enabled);
    for (long k = 1; k <= 10; k++) progress_update(&p, k, 0.5);
    progress_end(&p);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    char *buf = calloc(1, 4096);
    size_t n = fread(buf, 1, 4095, tmp);
    buf[n] = '\0';
    fclose(tmp);
    return buf;
}

static void test_progress(void)
{
    char *s = progress_output(0);
    CHECK(s && s[0] == '\0', "progress with enabled=0 printed '%s'", s ? s : "(null)");
    free(s);
    /* the control: enabled, not a terminal -> plain lines mentioning the steps */
    s = progress_output(1);
    CHECK(s && strstr(s, "10/10"), "progress with enabled=1 printed '%s'", s ? s : "(null)");
    CHECK(s && !strchr(s, '\r'), "progress to a file uses carriage returns: '%s'", s ? s : "");
    free(s);
    /* total 0: nothing to report */
    Progress p;
    progress_begin(&p, 0, 1);
    CHECK(!p.enabled, "progress with total 0 is enabled");
}


/* ---- issue 10: formats, names, numbers, video ------------------------------- */

/* A field of smoke in a box (x 5..12, y 3..8 of 20x12), with values above
 * 1 and a faint wisp, zero elsewhere. */
static float *make_box(int w, int h)
{
    float *rho = calloc((size_t)w * h, sizeof *rho);
    for (int y = 3; y <= 8; y++)
        for (int x = 5; x <= 12; x++) rho[y * w + x] = 0.1f * (float)(x - 4) + 0.2f * (float)(y - 3);
    rho[5 * w + 6] = 3.3f;   /* denser than alpha 1 can show */
    rho[4 * w + 11] = 2e-4f; /* a faint wisp: 0 in 8 bits, not in 16 */
    return rho;
}

static float srgb_lin(float c) { return c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f); }

/* PNG16, premultiplied, a density scale: every sample read back. */
static void test_png16_premultiplied(void)
{
    const int w = 20, h = 12;
    char dir[512], path[700], err[512] = "";
    snprintf(dir, sizeof dir, "%s/png16", tmpdir);
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.format = IMAGE_FORMAT_PNG16;
    o.alpha = IMAGE_ALPHA_PREMULTIPLIED;
    o.density_scale = 0.5f;
    o.rgb[0] = 1.0f, o.rgb[1] = 0.5f, o.rgb[2] = 0.25f;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x != NULL, "export_create: %s", err);
    if (!x) return;
    float *rho = make_box(w, h);
    CHECK(export_frame(x, rho, w, h, err, sizeof err) == 0, "frame: %s", err);
    export_close(x);
    snprintf(path, sizeof path, "%s/frame_00001.png", dir);
    unsigned char hdr[26] = {0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(hdr, 1, sizeof hdr, f) : 0;
    if (f) fclose(f);
    CHECK(got == sizeof hdr && hdr[24] == 16 && hdr[25] == 6, "%s: bit depth %d colour type %d, "
          "expected 16-bit RGBA", path, hdr[24], hdr[25]);
    Image *ch[4];
    const ImageChannel which[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B, IMAGE_CHANNEL_A};
    for (int c = 0; c < 4; c++) ch[c] = testlib_load(path, which[c]);
    CHECK(ch[0] && ch[1] && ch[2] && ch[3], "cannot load %s", path);
    if (ch[0] && ch[1] && ch[2] && ch[3]) {
        float e = 0.0f;
        for (int k = 0; k < w * h; k++) {
            float a = clamp01(rho[k] * 0.5f);
            e = fmaxf(e, fabsf(ch[3]->px[k] - a));
            for (int c = 0; c < 3; c++) e = fmaxf(e, fabsf(ch[c]->px[k] - o.rgb[c] * a));
        }
        CHECK(e <= 0.5f / 65535.0f + 1e-6f, "16-bit premultiplied RGBA off by %g", e);
        CHECK(ch[3]->px[4 * w + 11] > 0.0f, "the faint wisp (alpha 1e-4) is 0 in 16 bits");
        CHECK(ch[3]->px[5 * w + 6] == 1.0f, "density 3.3 x 0.5 is alpha %g, expected 1",
              ch[3]->px[5 * w + 6]);
    }
    for (int c = 0; c < 4; c++) image_free(ch[c]);
    free(rho);
}

/* sRGB <-> linear, as the exporter converts (export.h, several fields). */


/* Several fields: PNG16 straight and premultiplied, and EXR (float), each
 * pixel against the formula; each field's raw density as density.NAME; the
 * data window around every field's smoke; one field through
 * export_write_fields is export_write's frame; names must be unique. */
static void test_fields_composite(void)
{
    const int w = 16, h = 10, n = w * h;
    char dir[512], path[700], err[512] = "";
    float *r0 = calloc(n, sizeof *r0), *r1 = calloc(n, sizeof *r1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            /* field 0 on the left, field 1 on the right, overlapping in the
             * middle columns; row 0 empty; a clipped cell */
            if (y > 0 && x < 10) r0[y * w + x] = 0.1f * (float)(x + 1) * (float)y / (float)h;
            if (y > 0 && x > 5) r1[y * w + x] = 0.15f * (float)(w - x) * (float)y / (float)h;
        }
    r0[5 * w + 8] = 4.0f;
    const float *rho[2] = {r0, r1};
    const double rgb[2][3] = {{1.0, 0.4, 0.1}, {0.1, 0.5, 1.0}};
    const float s = 0.8f;
    static const struct {
        ImageFormat format;
        ImageAlpha alpha;
        const char *sub;
    } cases[] = {{IMAGE_FORMAT_PNG16, IMAGE_ALPHA_STRAIGHT, "f-straight"},
                 {IMAGE_FORMAT_PNG16, IMAGE_ALPHA_PREMULTIPLIED, "f-pre"},
                 {IMAGE_FORMAT_EXR, IMAGE_ALPHA_STRAIGHT, "f-exr"}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        snprintf(dir, sizeof dir, "%s/%s", tmpdir, cases[t].sub);
        ExportOptions o = export_defaults();
        o.dir = dir;
        o.format = cases[t].format;
        o.alpha = cases[t].alpha;
        o.exr_pixel = IMAGE_EXR_FLOAT;
        o.density_scale = s;
        o.nfields = 2;
        o.fields[0] = (ExportField){.name = "warm", .rgb = {(float)rgb[0][0], (float)rgb[0][1], (float)rgb[0][2]}};
        o.fields[1] = (ExportField){.name = "cool", .rgb = {(float)rgb[1][0], (float)rgb[1][1], (float)rgb[1][2]}};
        Exporter *x = export_create(&o, err, sizeof err);
        CHECK(x != NULL, "%s: export_create: %s", cases[t].sub, err);
        if (!x) continue;
        CHECK(export_write_fields(x, -1, rho, NULL, NULL, w, h, err, sizeof err) == 0, "%s: write: %s",
              cases[t].sub, err);
        CHECK(export_write(x, -1, r0, NULL, NULL, w, h, err, sizeof err) < 0 &&
                  strstr(err, "export_write of one field to an exporter of 2"),
              "export_write to two fields: '%s'", err);
        export_close(x);
        bool exr = cases[t].format == IMAGE_FORMAT_EXR;
        bool pre = cases[t].alpha == IMAGE_ALPHA_PREMULTIPLIED;
        snprintf(path, sizeof path, "%s/frame_00001.%s", dir, exr ? "exr" : "png");
        float *got[4] = {NULL};
        Image *ch[4] = {NULL};
        TestlibExr *e = NULL;
        if (exr) {
            e = testlib_load_exr(path);
            CHECK(e != NULL, "cannot read %s", path);
            if (!e) continue;
            const char *names[4] = {"R", "G", "B", "A"};
            for (int c = 0; c < 4; c++) got[c] = (float *)testlib_exr_channel(e, names[c]);
            const float *dw = testlib_exr_channel(e, "density.warm"), *dc = testlib_exr_channel(e, "density.cool");
            CHECK(dw && dc && e->nch == 6, "the EXR's channels: %d, density.warm %s, density.cool %s", e->nch,
                  dw ? "there" : "missing", dc ? "there" : "missing");
            bool raw = dw && dc;
            for (int k = 0; raw && k < n; k++) raw = dw[k] == r0[k] && dc[k] == r1[k];
            CHECK(raw, "density.warm and density.cool hold each field's raw density");
            CHECK(e->x0 == 0 && e->x1 == w - 1 && e->y0 == 1 && e->y1 == h - 1,
                  "the data window covers both fields' smoke: (%d,%d)-(%d,%d)", e->x0, e->y0, e->x1, e->y1);
        } else {
            const ImageChannel which[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B,
                                           IMAGE_CHANNEL_A};
            for (int c = 0; c < 4; c++) {
                ch[c] = testlib_load(path, which[c]);
                got[c] = ch[c] ? ch[c]->px : NULL;
            }
        }
        CHECK(got[0] && got[1] && got[2] && got[3], "%s: the RGBA channels", path);
        if (got[0] && got[1] && got[2] && got[3]) {
            double worst = 0.0;
            int overlap = 0;
            for (int k = 0; k < n; k++) {
                double A, cs[3], cl[3];
                testlib_composite(2, rho, rgb, s, k, &A, cs, cl);
                if (r0[k] > 0.0f && r1[k] > 0.0f) overlap++;
                worst = fmax(worst, fabs(got[3][k] - A));
                for (int c = 0; c < 3; c++) {
                    double want = exr ? cl[c] * A : pre ? cs[c] * A : cs[c];
                    worst = fmax(worst, fabs(got[c][k] - want));
                }
            }
            double tol = exr ? 1e-6 : 0.5 / 65535.0 + 1e-6;
            CHECK(worst <= tol && overlap > 10, "%s: off the formula by %g (%d cells overlap)",
                  cases[t].sub, worst, overlap);
            /* two half-covering smokes: 0.75 */
            double A, cs[3], cl[3];
            float h0 = 0.5f / s, h1 = 0.5f / s, *hr[2] = {&h0, &h1};
            testlib_composite(2, (const float *const *)hr, rgb, s, 0, &A, cs, cl);
            CHECK(fabs(A - 0.75) < 1e-6, "two alphas of 0.5 make %g", A);
        }
        for (int c = 0; c < 4; c++) image_free(ch[c]);
        testlib_exr_free(e);
    }

    /* one field through export_write_fields: export_write's bytes */
    char a[700], b[700];
    for (int t = 0; t < 2; t++) {
        snprintf(dir, sizeof dir, "%s/one-%d", tmpdir, t);
        ExportOptions o = export_defaults();
        o.dir = dir;
        o.density_scale = s;
        memcpy(o.rgb, rgb[0], sizeof o.rgb);
        Exporter *x = export_create(&o, err, sizeof err);
        if (!x) continue;
        if (t == 0) export_write(x, -1, r0, NULL, NULL, w, h, err, sizeof err);
        else export_write_fields(x, -1, rho, NULL, NULL, w, h, err, sizeof err);
        export_close(x);
    }
    snprintf(a, sizeof a, "%s/one-0/frame_00001.png", tmpdir);
    snprintf(b, sizeof b, "%s/one-1/frame_00001.png", tmpdir);
    size_t la = 0, lb = 0;
    char *fa = testlib_read_file(a, &la), *fb = testlib_read_file(b, &lb);
    CHECK(fa && fb && la == lb && !memcmp(fa, fb, la), "one field: export_write_fields is export_write");
    free(fa);
    free(fb);

    /* the names are EXR channels: unique, not empty */
    ExportOptions o = export_defaults();
    o.nfields = 2;
    o.fields[0] = (ExportField){.name = "same"};
    o.fields[1] = (ExportField){.name = "same"};
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(!x && !strcmp(err, "internal error: the fields' names ('same') must be unique and not empty"),
          "two fields of one name: '%s'", err);
    export_close(x);
    free(r0);
    free(r1);
}

/* The EXR, read back through OpenEXRCore by the test: channels, the data
 * window around the smoke, the display window, premultiplied linear RGBA,
 * the raw density, the velocity in pixels per frame, the compression and
 * the frame rate. Half and float, each compression. */
static void test_exr_roundtrip(void)
{
    const int w = 20, h = 12;
    char dir[512], path[700], err[512] = "";
    snprintf(dir, sizeof dir, "%s/exr", tmpdir);
    float *rho = make_box(w, h);
    float *vx = calloc((size_t)w * h, sizeof *vx), *vy = calloc((size_t)w * h, sizeof *vy);
    for (int k = 0; k < w * h; k++) {
        vx[k] = 0.25f;
        vy[k] = -0.5f * (float)(k % w) / (float)w;
    }
    static const struct {
        ImageExrPixel px;
        ImageExrCompression comp;
        int code; /* EXR_COMPRESSION_* */
    } cases[] = {{IMAGE_EXR_HALF, IMAGE_EXR_ZIP, 3}, {IMAGE_EXR_FLOAT, IMAGE_EXR_ZIP, 3},
                 {IMAGE_EXR_HALF, IMAGE_EXR_PIZ, 4}, {IMAGE_EXR_FLOAT, IMAGE_EXR_NONE, 0},
                 {IMAGE_EXR_HALF, IMAGE_EXR_DWAA, 8}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        bool half = cases[t].px == IMAGE_EXR_HALF, lossy = cases[t].comp == IMAGE_EXR_DWAA;
        if (!exr_compression_available(cases[t].comp)) {
            /* OpenEXR 3.1's C library: the writer says so, in one line, and
             * leaves nothing */
            ExrChannel c1 = {"A", rho};
            ExrWrite d = {.w = w, .h = h, .x1 = w - 1, .y1 = h - 1, .channels = &c1, .nchannels = 1,
                          .compression = cases[t].comp};
            snprintf(path, sizeof path, "%s/dwaa.exr", tmpdir);
            CHECK(exr_write(path, &d, err, sizeof err) < 0 && strstr(err, "dwaa.exr") &&
                      !strchr(err, '\n') && !testlib_exists(path),
                  "DWAA without an encoder: '%s'", err);
            printf("  info: OpenEXR %s has no DWAA encoder in C: that case is refused\n",
                   exr_library_version());
            continue;
        }
        ExportOptions o = export_defaults();
        o.dir = dir;
        o.prefix = "smoke.";
        o.digits = 4;
        o.format = IMAGE_FORMAT_EXR;
        o.exr_pixel = cases[t].px;
        o.exr_compression = cases[t].comp;
        o.velocity = true;
        o.density_scale = 0.5f;
        o.rgb[0] = 1.0f, o.rgb[1] = 0.5f, o.rgb[2] = 0.0f;
        o.fps = 25.0;
        o.frame_time = 0.04;
        o.frame_start = 1001;
        Exporter *x = export_create(&o, err, sizeof err);
        CHECK(x != NULL, "export_create: %s", err);
        if (!x) continue;
        CHECK(export_write(x, -1, rho, vx, vy, w, h, err, sizeof err) == 0, "EXR frame: %s", err);
        export_close(x);
        snprintf(path, sizeof path, "%s/smoke.1001.exr", dir);
        TestlibExr *e = testlib_load_exr(path);
        CHECK(e != NULL, "case %zu: cannot read %s back", t, path);
        if (!e) continue;
        static const char *names[] = {"A", "B", "G", "R", "density.smoke", "velocity.x", "velocity.y"};
        CHECK(e->nch == 7, "case %zu: %d channels, expected 7", t, e->nch);
        for (int k = 0; k < 7 && k < e->nch; k++)
            CHECK(!strcmp(e->name[k], names[k]) && e->type[k] == (half ? 1 : 2),
                  "case %zu: channel %d is %s of type %d", t, k, e->name[k], e->type[k]);
        CHECK(e->w == w && e->h == h, "display window %dx%d", e->w, e->h);
        CHECK(e->x0 == 5 && e->y0 == 3 && e->x1 == 12 && e->y1 == 8,
              "case %zu: data window (%d,%d)-(%d,%d), expected the smoke's (5,3)-(12,8)", t, e->x0,
              e->y0, e->x1, e->y1);
        CHECK(e->compression == cases[t].code, "case %zu: compression %d, expected %d", t,
              e->compression, cases[t].code);
        CHECK(fabs(e->fps - 25.0) < 1e-9, "framesPerSecond %g", e->fps);
        const float *A = testlib_exr_channel(e, "A"), *R = testlib_exr_channel(e, "R"),
                    *G = testlib_exr_channel(e, "G"), *B = testlib_exr_channel(e, "B"),
                    *D = testlib_exr_channel(e, "density.smoke"),
                    *VX = testlib_exr_channel(e, "velocity.x"), *VY = testlib_exr_channel(e, "velocity.y");
        if (A && R && G && B && D && VX && VY) {
            /* half keeps 11 bits; DWAA is lossy, so only roughly */
            double rel = lossy ? 0.05 : (half ? 1.0 / 1024.0 : 1e-7);
            double ea = 0, ec = 0, ed = 0, ev = 0;
            float lg = srgb_lin(0.5f);
            float vs = (float)(h * 0.04); /* a grid cell: 1/min(w,h) of the domain */
            for (int k = 0; k < w * h; k++) {
                float a = clamp01(rho[k] * 0.5f);
                ea = fmax(ea, fabs(A[k] - a) / fmax(a, 1e-3));
                ec = fmax(ec, fabs(R[k] - a) + fabs(G[k] - lg * a) + fabs(B[k]));
                ed = fmax(ed, fabs(D[k] - rho[k]) / fmax(rho[k], 1e-3));
                if (rho[k] > 0.0f)
                    ev = fmax(ev, fabs(VX[k] - vx[k] * vs) + fabs(VY[k] - vy[k] * vs));
            }
            CHECK(ea <= rel, "case %zu: alpha off by %g relative", t, ea);
            CHECK(ec <= 2.0 * rel + (lossy ? 0.05 : 0.0), "case %zu: RGB is not linear colour x alpha (off by %g)", t, ec);
            CHECK(ed <= rel, "case %zu: raw density off by %g relative", t, ed);
            CHECK(ev <= (lossy ? 0.05 : 2e-3), "case %zu: velocity (pixels per frame) off by %g", t, ev);
            CHECK(fabsf(D[5 * w + 6] - 3.3f) < (half ? 2e-3f : 1e-6f) && A[5 * w + 6] == 1.0f,
                  "case %zu: density 3.3 kept raw (%g) under alpha 1 (%g)", t, D[5 * w + 6], A[5 * w + 6]);
        }
        testlib_exr_free(e);
    }
    int ntmp = 0;
    testlib_count_entries(dir, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files left by the EXR writer", ntmp);

    /* no smoke at all: a one-pixel data window, still a valid file */
    float *none = calloc((size_t)w * h, sizeof *none);
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.format = IMAGE_FORMAT_EXR;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x && export_frame(x, none, w, h, err, sizeof err) == 0, "empty EXR frame: %s", err);
    export_close(x);
    snprintf(path, sizeof path, "%s/frame_00001.exr", dir);
    TestlibExr *e = testlib_load_exr(path);
    CHECK(e && e->x0 == 0 && e->y0 == 0 && e->x1 == 0 && e->y1 == 0 && e->nch == 5,
          "empty frame: not a one-pixel window of 5 channels");
    testlib_exr_free(e);
    /* a directory in the way of the file: one line naming the file */
    snprintf(path, sizeof path, "%s/frame_00002.exr", dir);
    mkdir(path, 0777);
    x = export_create(&o, err, sizeof err);
    CHECK(x && export_frame(x, rho, w, h, err, sizeof err) == 0, "frame 1: %s", err);
    CHECK(x && export_frame(x, rho, w, h, err, sizeof err) < 0 && strstr(err, "frame_00002.exr") &&
              !strchr(err, '\n'), "writing over a directory: '%s'", err);
    export_close(x);
    free(none);
    free(rho);
    free(vx);
    free(vy);
}

/* Names from a pattern, numbers from frame_start or given, and stale
 * removal that keeps to the pattern. */
static void test_pattern_numbers(void)
{
    char dir[512], path[700], err[512] = "";
    make_dir(dir, sizeof dir, "pattern");
    const char *keep[] = {"s.0099.png", "s.0100.png", "s.0101.png", "s.102.png", "t.0200.png",
                          "s.0200.png.tmp", "s.0200.exr"};
    const char *old[] = {"s.0103.png", "s.0200.png", "s.12345.png"};
    touch_all(dir, keep, sizeof keep / sizeof keep[0]);
    touch_all(dir, old, sizeof old / sizeof old[0]);
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.prefix = "s.";
    o.digits = 4;
    o.suffix = ".png";
    o.frame_start = 100;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x != NULL, "export_create: %s", err);
    if (!x) return;
    float *rho = make_density(8, 8);
    CHECK(export_frame(x, rho, 8, 8, err, sizeof err) == 0, "frame 100: %s", err);
    CHECK(export_write(x, 102, rho, NULL, NULL, 8, 8, err, sizeof err) == 0, "frame 102: %s", err);
    CHECK(export_count(x) == 2 && export_first(x) == 100 && export_last(x) == 102,
          "count %d first %ld last %ld", export_count(x), export_first(x), export_last(x));
    CHECK(export_frame_path(x, 7, path, sizeof path) == 0 && strstr(path, "/pattern/s.0007.png"),
          "frame path '%s'", path);
    snprintf(path, sizeof path, "%s/s.0102.png", dir);
    CHECK(testlib_exists(path), "s.0102.png not written");
    int removed = export_remove_stale(x);
    CHECK(removed == 3, "removed %d stale frames, expected 3", removed);
    kept_removed(dir, keep, sizeof keep / sizeof keep[0], old, sizeof old / sizeof old[0]);
    char hint[8192];
    CHECK(export_video_hint(x, hint, sizeof hint) == 0 && strstr(hint, "-framerate 24 ") &&
              strstr(hint, "-start_number 100 ") && strstr(hint, "/pattern/s.%04d.png"),
          "hint: %s", hint);
    export_close(x);
    free(rho);
}

static void test_auto_scale(void)
{
    float s[4] = {1.0f, 1.0f, 0.0f, 0.0f}, t[4] = {0.0f, 0.0f, 0.0f, 0.5f};
    /* the target matched to the start's mass is 2 at its densest */
    CHECK(fabsf(export_auto_scale(s, t, 4, true) - 0.5f) < 1e-6f, "auto scale %g, expected 0.5",
          export_auto_scale(s, t, 4, true));
    CHECK(export_auto_scale(s, t, 4, false) == 1.0f, "unmatched: nothing above 1, scale 1");
    float faint[4] = {0.2f, 0.2f, 0.0f, 0.0f};
    CHECK(export_auto_scale(faint, faint, 4, true) == 1.0f, "faint images are never brightened");
    float dense[4] = {4.0f, 0.0f, 0.0f, 0.0f};
    CHECK(fabsf(export_auto_scale(dense, faint, 4, false) - 0.25f) < 1e-6f, "a dense start: 1/4");
}

/* A directory on PATH with an "ffmpeg" that is a shell script. */
/* The fake's script runs with PATH set to the fake's folder alone (no
 * ffmpeg anywhere else), so it names its own tools' folders: without
 * them, `cat` was not found, the script exited at once, and a frame
 * written after that met a closed pipe (a failure that came and went). */
#define FAKE_SH "#!/bin/sh\nPATH=/usr/bin:/bin\n"

static void fake_ffmpeg(const char *bindir, const char *script)
{
    mkdir(bindir, 0777);
    char path[700];
    snprintf(path, sizeof path, "%s/ffmpeg", bindir);
    testlib_write_file(path, script, strlen(script));
    chmod(path, 0755);
}

/* --video: no ffmpeg is one line before anything is written; a failing
 * ffmpeg leaves no video file, nor its temporary. Runs without ffmpeg. */
static void test_video_failures(void)
{
    char dir[512], bindir[512], video[700], err[512] = "";
    snprintf(dir, sizeof dir, "%s/vfail", tmpdir);
    snprintf(bindir, sizeof bindir, "%s/vbin", tmpdir);
    mkdir(bindir, 0777);
    snprintf(video, sizeof video, "%s/out.mp4", tmpdir);
    char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", bindir, 1); /* an empty directory: no ffmpeg */
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.video = video;
    o.out_w = 9, o.out_h = 7;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x == NULL && strstr(err, "ffmpeg is not installed") && strstr(err, "out.mp4") &&
              !strchr(err, '\n'), "no ffmpeg: '%s'", err);
    CHECK(!is_dir(dir), "the frames directory was made although the video cannot be");
    export_close(x);
    o.out_w = o.out_h = 0; /* the size from the first frame: PATH is searched at once */
    x = export_create(&o, err, sizeof err);
    CHECK(x == NULL && strstr(err, "ffmpeg is not installed"), "no ffmpeg, no size: '%s'", err);
    export_close(x);

    /* an ffmpeg that reads a little and fails */
    fake_ffmpeg(bindir, FAKE_SH "head -c 10 >/dev/null\necho 'first line' >&2\n"
                        "echo 'fake encoder: it broke' >&2\nexit 1\n");
    o.out_w = 9, o.out_h = 7;
    o.dir = NULL;
    x = export_create(&o, err, sizeof err);
    CHECK(x != NULL, "export_create with the fake ffmpeg: %s", err);
    if (x) {
        float *rho = make_density(9, 7);
        int rc = 0;
        for (int k = 0; k < 200 && rc == 0; k++) rc = export_frame(x, rho, 9, 7, err, sizeof err);
        if (rc == 0) rc = export_finish(x, err, sizeof err);
        CHECK(rc < 0 && strstr(err, "fake encoder: it broke") && strstr(err, "out.mp4"),
              "a failing ffmpeg: rc %d '%s'", rc, err);
        export_close(x);
        free(rho);
    }
    CHECK(!testlib_exists(video), "a failed video left %s", video);
    int ntmp = 0;
    testlib_count_entries(tmpdir, "out.mp4", &ntmp);
    CHECK(ntmp == 0, "a failed video left %d files named out.mp4*", ntmp);

    /* abandoned (export_close without export_finish: an interrupted run) */
    fake_ffmpeg(bindir, FAKE_SH "cat >/dev/null\necho done > \"$(eval echo \\${$#})\"\n");
    x = export_create(&o, err, sizeof err);
    if (x) {
        float *rho = make_density(9, 7);
        CHECK(export_frame(x, rho, 9, 7, err, sizeof err) == 0, "frame: %s", err);
        export_close(x);
        free(rho);
    }
    testlib_count_entries(tmpdir, "out.mp4", &ntmp);
    CHECK(ntmp == 0, "an abandoned video left %d files named out.mp4*", ntmp);
    /* the control: the same fake, finished, leaves the file */
    x = export_create(&o, err, sizeof err);
    if (x) {
        float *rho = make_density(9, 7);
        CHECK(export_frame(x, rho, 9, 7, err, sizeof err) == 0 && export_finish(x, err, sizeof err) == 0,
              "finished video: %s", err);
        export_close(x);
        free(rho);
    }
    CHECK(testlib_exists(video), "a finished video is not at %s", video);
    unlink(video);
    if (saved) setenv("PATH", saved, 1);
    free(saved);
}

/* --video with the real ffmpeg (SKIP without it): .mp4 is H.264 yuv420p
 * padded to even sides, the smoke over the background; .mov ProRes 4444
 * with alpha. */
static void test_video_ffmpeg(void)
{
    if (testlib_sh("command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1") != 0) {
        printf("SKIP test_video_ffmpeg: no ffmpeg here (the project does not need it)\n");
        return;
    }
    const char *ext[2] = {"mp4", "mov"};
    const char *want[2] = {"h264,34,18,yuv420p,3", "prores,33,17,yuva444p12le,3"};
    for (int v = 0; v < 2; v++) {
        char video[700], err[512] = "", cmd[2048], out[256];
        snprintf(video, sizeof video, "%s/v.%s", tmpdir, ext[v]);
        ExportOptions o = export_defaults();
        o.video = video;
        o.out_w = 33, o.out_h = 17;
        o.background[2] = 1.0f; /* blue under white smoke */
        Exporter *x = export_create(&o, err, sizeof err);
        CHECK(x != NULL, "%s: %s", ext[v], err);
        if (!x) continue;
        float *rho = make_box(20, 12);
        for (int k = 0; k < 3; k++) CHECK(export_frame(x, rho, 20, 12, err, sizeof err) == 0, "%s", err);
        CHECK(export_finish(x, err, sizeof err) == 0, "%s: %s", ext[v], err);
        export_close(x);
        free(rho);
        snprintf(cmd, sizeof cmd, "ffprobe -v error -count_frames -show_entries "
                 "stream=codec_name,width,height,pix_fmt,nb_read_frames -of csv=p=0 '%s' > '%s/probe'",
                 video, tmpdir);
        CHECK(testlib_sh(cmd) == 0, "ffprobe %s failed", video);
        snprintf(cmd, sizeof cmd, "%s/probe", tmpdir);
        testlib_read_text(cmd, out, sizeof out);
        out[strcspn(out, "\n")] = '\0';
        CHECK(strcmp(out, want[v]) == 0, "%s: '%s', expected '%s'", ext[v], out, want[v]);
        if (v == 0) {
            /* a corner is the background (blue), the smoke's middle white */
            snprintf(cmd, sizeof cmd, "ffmpeg -v error -i '%s' -frames:v 1 -f rawvideo -pix_fmt rgb24 "
                     "'%s/frame.rgb'", video, tmpdir);
            CHECK(testlib_sh(cmd) == 0, "decoding %s failed", video);
            snprintf(cmd, sizeof cmd, "%s/frame.rgb", tmpdir);
            size_t n = 0;
            unsigned char *px = (unsigned char *)testlib_read_file(cmd, &n);
            CHECK(px && n == 34 * 18 * 3 && px[2] > 200 && px[0] < 40,
                  "the .mp4's corner is not the blue background");
            free(px);
        }
    }
}

int main(void)
{
    make_tmpdir();
    RUN(test_open_nested);
    RUN(test_frames);
    RUN(test_size);
    RUN(test_open_on_file);
    RUN(test_metrics_keep);
    RUN(test_metrics_discard);
    RUN(test_metrics_missing_dir);
    RUN(test_metrics_symlink);
    RUN(test_metrics_fifo);
    RUN(test_remove_stale);
    RUN(test_progress);
    RUN(test_png16_premultiplied);
    RUN(test_exr_roundtrip);
    RUN(test_fields_composite);
    RUN(test_pattern_numbers);
    RUN(test_auto_scale);
    RUN(test_video_failures);
    RUN(test_video_ffmpeg);
    testlib_rm_rf(tmpdir);
    return check_done();
}
