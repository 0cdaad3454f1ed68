/* test_export: numbered RGBA frames, --size resampling, directory errors,
 * no temporary files left, the metrics CSV (kept / discarded / bad path /
 * symlink / pipe), an earlier run's frames removed, and a silent progress
 * line. No GL. */
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
#include "image.h"
#include "testlib.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_export.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
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
    snprintf(dir, sizeof dir, "%s/m", tmpdir);
    mkdir(dir, 0777);
    char err[512] = "";
    Metrics *m = metrics_open(path, err, sizeof err);
    CHECK(m != NULL, "metrics_open: %s", err);
    if (!m) return;
    CHECK(!testlib_exists(path), "%s exists before metrics_close", path);
    CHECK(metrics_row(m, 0, 0.0, 0.9, 12.5, 0.0) == 0, "metrics_row 0");
    CHECK(metrics_row(m, 10, 0.1, 0.5, 12.5, 0.003) == 0, "metrics_row 10");
    CHECK(metrics_row(m, 20, 0.2, 0.25, 12.5, 0.002) == 0, "metrics_row 20");
    CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    char *s = testlib_read_file(path, NULL);
    CHECK(s != NULL, "%s missing after metrics_close(keep=1)", path);
    if (s) {
        CHECK(strncmp(s, "step,time,error,mass,max_div\n", 29) == 0, "header: '%.40s'", s);
        int lines = 0;
        for (char *p = s; *p; p++) lines += *p == '\n';
        CHECK(lines == 4, "%d lines, expected header + 3 rows", lines);
        long st[3];
        double t[3], e[3], ms[3], dv[3];
        char *p = strchr(s, '\n');
        for (int k = 0; k < 3 && p; k++) {
            int got = sscanf(p + 1, "%ld,%lf,%lf,%lf,%lf", &st[k], &t[k], &e[k], &ms[k], &dv[k]);
            CHECK(got == 5, "row %d has %d fields", k, got);
            p = strchr(p + 1, '\n');
        }
        CHECK(st[0] == 0 && st[1] == 10 && st[2] == 20, "steps %ld %ld %ld", st[0], st[1], st[2]);
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
    snprintf(dir, sizeof dir, "%s/md", tmpdir);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    char err[512] = "";
    Metrics *m = metrics_open(path, err, sizeof err);
    CHECK(m != NULL, "metrics_open: %s", err);
    if (!m) return;
    metrics_row(m, 0, 0.0, 1.0, 1.0, 0.0);
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
    snprintf(dir, sizeof dir, "%s/adir", tmpdir);
    mkdir(dir, 0777);
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
    snprintf(dir, sizeof dir, "%s/ms", tmpdir);
    mkdir(dir, 0777);
    snprintf(target, sizeof target, "%s/real.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *f = fopen(target, "w");
    if (f) fclose(f);
    CHECK(symlink("real.csv", link) == 0, "symlink");
    char err[512] = "";
    Metrics *m = metrics_open(link, err, sizeof err);
    CHECK(m != NULL, "metrics_open on a symlink: %s", err);
    if (!m) return;
    metrics_row(m, 0, 0.0, 0.5, 2.0, 0.0);
    CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "%s is no longer a symlink", link);
    char *s = testlib_read_file(target, NULL);
    CHECK(s && strncmp(s, "step,time,error,mass,max_div\n0,", 31) == 0, "target holds '%.40s'",
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
    Metrics *m = metrics_open(fifo, err, sizeof err);
    CHECK(m != NULL, "metrics_open on a fifo: %s", err);
    if (m) {
        metrics_row(m, 0, 0.0, 0.5, 2.0, 0.0);
        metrics_row(m, 10, 0.1, 0.4, 2.0, 0.001);
        CHECK(metrics_close(m, 1, err, sizeof err) == 0, "metrics_close: %s", err);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "%s is no longer a fifo", fifo);
    char *s = testlib_read_file(out, NULL);
    int lines = 0;
    for (char *p = s; p && *p; p++) lines += *p == '\n';
    CHECK(s && strncmp(s, "step,time,error,mass,max_div\n", 29) == 0 && lines == 3,
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
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/stale", tmpdir);
    mkdir(dir, 0777);
    const char *keep[] = {"frame_00001.png", "frame_00002.png", "frame_7.png", "frame_00009.png.bak",
                          "notes.txt", "frame_000010.png"};
    const char *old[] = {"frame_00003.png", "frame_00004.png", "frame_00012.png", "frame_123456.png"};
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
        FILE *f = fopen(path, "w");
        if (f) fclose(f);
    }
    for (size_t k = 0; k < sizeof old / sizeof old[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, old[k]);
        FILE *f = fopen(path, "w");
        if (f) fclose(f);
    }
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
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
        CHECK(testlib_exists(path), "%s was removed", keep[k]);
    }
    for (size_t k = 0; k < sizeof old / sizeof old[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, old[k]);
        CHECK(!testlib_exists(path), "%s was kept", old[k]);
    }
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
    testlib_rm_rf(tmpdir);
    return check_done();
}
