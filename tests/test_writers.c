/* test_writers: issue 22's frames at the simulation's speed. The pool; the
 * exporter's writer threads (frames committed in order, each whole, after a
 * failure a run of whole frames and nothing else, cancel, the same bytes
 * as one thread); every EXR compression OpenEXRCore 3.1 writes, tiled or
 * not, chunk-parallel or not; the run: --threads, --frames none, the GPU
 * read-backs in flight (lag 2) against none (lag 0) on both GPU backends,
 * SIGTERM with frames in flight, a full disk with several writers. Small
 * grids: about ten seconds on two cores. Speed is bench --export's, never
 * asserted here. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "export.h"
#include "exr.h"
#include "image.h"
#include "pool.h"
#include "testlib.h"

static char work[600], bin[600];
static TestlibResult R;

static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* Entries of dir whose names hold needle. */
static int named(const char *dir, const char *needle)
{
    int n = 0;
    testlib_count_entries(dir, needle, &n);
    return n;
}

static void reset_work(void)
{
    testlib_rm_rf(work);
    mkdir(work, 0777);
}

/* ---- the pool ---------------------------------------------------------------- */

typedef struct {
    atomic_int hits[1000];
    atomic_int bad_slot;
    int slots;
} ForCtx;

static void count_item(void *ctx, int item, int slot)
{
    ForCtx *c = ctx;
    atomic_fetch_add(&c->hits[item], 1);
    if (slot < 0 || slot >= c->slots) atomic_fetch_add(&c->bad_slot, 1);
}

static atomic_int g_tasks;
static void one_task(void *arg)
{
    ForCtx *c = arg;
    pool_for(NULL, 10, count_item, c); /* no pool: the caller alone */
    atomic_fetch_add(&g_tasks, 1);
}

static void test_pool(void)
{
    char err[256];
    CHECK(pool_cores() >= 1, "pool_cores %d", pool_cores());
    CHECK(!pool_create(0, err, sizeof err) && strstr(err, "writer threads"), "0 threads refused: %s", err);
    Pool *p = pool_create(3, err, sizeof err);
    CHECK(p && pool_threads(p) == 3 && pool_slots(p) == 4, "3 threads, 4 slots: %s", err);
    if (!p) return;
    static ForCtx c;
    memset(&c, 0, sizeof c);
    c.slots = pool_slots(p);
    pool_for(p, 1000, count_item, &c);
    int once = 0;
    for (int k = 0; k < 1000; k++) once += atomic_load(&c.hits[k]) == 1;
    CHECK(once == 1000 && atomic_load(&c.bad_slot) == 0, "pool_for: %d of 1000 items once, %d bad slots",
          once, atomic_load(&c.bad_slot));
    static ForCtx d;
    memset(&d, 0, sizeof d);
    d.slots = 1;
    atomic_store(&g_tasks, 0);
    for (int k = 0; k < 20; k++) CHECK(pool_submit(p, one_task, &d) == 0, "submit %d", k);
    pool_free(p); /* waits for every task */
    CHECK(atomic_load(&g_tasks) == 20 && atomic_load(&d.hits[0]) == 20 && atomic_load(&d.bad_slot) == 0,
          "20 tasks run before pool_free returns: %d", atomic_load(&g_tasks));
}

/* ---- the exporter's writers -------------------------------------------------- */

#define FW 40
#define FH 24

/* Frame k's density: a level that names the frame (alpha k/64), so a file
 * can be matched to its number. */
static void frame_of(float *rho, int k)
{
    for (int j = 0; j < FH; j++)
        for (int i = 0; i < FW; i++) rho[j * FW + i] = (float)k / 64.0f * (i < FW / 2 ? 1.0f : 0.5f);
}

/* Whether dir holds frames 1..n exactly (frame_NNNNN.png), each whole and
 * showing its own number, and nothing else (no temporary). */
static bool frames_are(const char *dir, int n, const char *what)
{
    int files = testlib_count_entries(dir, NULL, NULL);
    if (files != n) {
        printf("  %s: %d files in %s, expected %d\n", what, files, dir, n);
        return false;
    }
    for (int k = 1; k <= n; k++) {
        char p[800], name[32];
        snprintf(name, sizeof name, "frame_%05d.png", k);
        path_in(p, sizeof p, dir, name);
        Image *im = testlib_load(p, IMAGE_CHANNEL_A);
        bool ok = im && im->w == FW && im->h == FH && fabsf(im->px[0] - (float)k / 64.0f) < 0.003f;
        image_free(im);
        if (!ok) {
            printf("  %s: %s is not frame %d, whole\n", what, p, k);
            return false;
        }
    }
    return true;
}

/* In order: whenever frame N is in the folder, so is every frame before it. */
static bool a_run_of_frames(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return true;
    int max = 0, count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int k;
        if (sscanf(e->d_name, "frame_%5d.png", &k) == 1 && !strstr(e->d_name, ".tmp")) {
            count++;
            if (k > max) max = k;
        }
    }
    closedir(d);
    return count == max;
}

static Exporter *writers(const char *dir, int threads, ImageFormat f)
{
    char err[4400];
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.format = f;
    o.threads = threads;
    o.fps = 24.0;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x != NULL, "export_create: %s", err);
    return x;
}

/* 40 frames through 3 writers: committed in order (checked after each
 * hand-over), each whole, export_count a run of frames at every moment,
 * then the same bytes as one writer and as none. */
static void test_writers_in_order(void)
{
    reset_work();
    char d3[700], d1[700], d0[700], err[4400];
    path_in(d3, sizeof d3, work, "three");
    path_in(d1, sizeof d1, work, "one");
    path_in(d0, sizeof d0, work, "none");
    Exporter *x3 = writers(d3, 3, IMAGE_FORMAT_PNG16), *x1 = writers(d1, 1, IMAGE_FORMAT_PNG16),
             *x0 = writers(d0, 0, IMAGE_FORMAT_PNG16);
    if (!x3 || !x1 || !x0) return;
    float rho[FW * FH];
    bool ordered = true, counted = true;
    for (int k = 1; k <= 40; k++) {
        frame_of(rho, k);
        CHECK(export_write(x3, -1, rho, NULL, NULL, FW, FH, err, sizeof err) == 0, "frame %d: %s", k, err);
        CHECK(export_write(x1, -1, rho, NULL, NULL, FW, FH, err, sizeof err) == 0, "frame %d: %s", k, err);
        CHECK(export_write(x0, -1, rho, NULL, NULL, FW, FH, err, sizeof err) == 0, "frame %d: %s", k, err);
        ordered = ordered && a_run_of_frames(d3);
        int c = export_count(x3);
        counted = counted && c <= k && (c == 0 || export_last(x3) == c);
    }
    CHECK(export_threads(x3) == 3 && export_threads(x0) == 0, "threads %d, %d", export_threads(x3),
          export_threads(x0));
    CHECK(export_wait(x3, err, sizeof err) == 0 && export_wait(x1, err, sizeof err) == 0, "wait: %s", err);
    CHECK(ordered, "a frame appeared before one it follows");
    CHECK(counted, "export_count was not a run of whole frames");
    CHECK(export_count(x3) == 40 && export_first(x3) == 1 && export_last(x3) == 40 &&
              export_in_flight(x3) == 0 && export_submitted(x3) == 40,
          "count %d first %ld last %ld", export_count(x3), export_first(x3), export_last(x3));
    CHECK(export_finish(x3, err, sizeof err) == 0, "finish: %s", err);
    CHECK(frames_are(d3, 40, "3 writers"), "3 writers' frames");
    for (int k = 1; k <= 40; k += 13) {
        char a[800], b[800], c[800], name[32];
        snprintf(name, sizeof name, "frame_%05d.png", k);
        path_in(a, sizeof a, d3, name);
        path_in(b, sizeof b, d1, name);
        path_in(c, sizeof c, d0, name);
        size_t na = 0, nb = 0, nc = 0;
        char *fa = testlib_read_file(a, &na), *fb = testlib_read_file(b, &nb), *fc = testlib_read_file(c, &nc);
        CHECK(fa && fb && fc && na == nb && na == nc && !memcmp(fa, fb, na) && !memcmp(fa, fc, na),
              "frame %d: 3 writers, 1 and none wrote different bytes", k);
        free(fa);
        free(fb);
        free(fc);
    }
    export_close(x3);
    export_close(x1);
    export_close(x0);
}

/* A frame that cannot be written (a folder in the way of frame 5's name)
 * among 12 handed to 3 writers: frames 1-4 whole, nothing after (no frame,
 * no temporary), the failure naming frame 5, later hand-overs refused. */
static void test_writers_failure(void)
{
    reset_work();
    char d[700], blocker[800], err[4400] = "";
    path_in(d, sizeof d, work, "F");
    Exporter *x = writers(d, 3, IMAGE_FORMAT_PNG8);
    if (!x) return;
    path_in(blocker, sizeof blocker, d, "frame_00005.png");
    mkdir(blocker, 0777);
    char inside[900];
    path_in(inside, sizeof inside, blocker, "keep"); /* not empty: rename cannot replace it */
    testlib_write_file(inside, "x", 1);
    float rho[FW * FH];
    int refused = 0;
    for (int k = 1; k <= 12; k++) {
        frame_of(rho, k);
        if (export_write(x, -1, rho, NULL, NULL, FW, FH, err, sizeof err) < 0) refused++;
    }
    char why[4400] = "";
    CHECK(export_wait(x, why, sizeof why) < 0 && strstr(why, "frame_00005.png"),
          "export_wait does not report frame 5: '%s'", why);
    CHECK(export_count(x) == 4 && export_last(x) == 4, "count %d last %ld, expected 4 frames",
          export_count(x), export_last(x));
    frame_of(rho, 13);
    CHECK(export_write(x, -1, rho, NULL, NULL, FW, FH, err, sizeof err) < 0 && strstr(err, "frame_00005"),
          "a hand-over after the failure: '%s'", err);
    export_close(x);
    testlib_rm_rf(blocker);
    CHECK(frames_are(d, 4, "after a failed frame 5"), "frames 1-4 only (%d refused on the way)", refused);
}

/* export_cancel with frames in flight: what is left is frames 1..n, whole,
 * no temporary; export_close of running writers the same. */
static void test_writers_cancel(void)
{
    reset_work();
    char d[700], err[4400];
    path_in(d, sizeof d, work, "F");
    ExportOptions o = export_defaults();
    o.dir = d;
    o.format = IMAGE_FORMAT_PNG16;
    o.png_compression = 9;
    o.out_w = 400; /* slow enough that some are in flight */
    o.out_h = 240;
    o.threads = 2;
    Exporter *x = export_create(&o, err, sizeof err);
    CHECK(x != NULL, "%s", err);
    if (!x) return;
    float rho[FW * FH];
    for (int k = 1; k <= 8; k++) {
        frame_of(rho, k);
        export_write(x, -1, rho, NULL, NULL, FW, FH, err, sizeof err);
    }
    export_cancel(x);
    int n = export_count(x);
    CHECK(export_in_flight(x) == 0 && n <= 8, "after cancel: %d in flight, %d frames", export_in_flight(x), n);
    CHECK(testlib_count_entries(d, NULL, NULL) == n && a_run_of_frames(d),
          "after cancel: %d files for %d frames", testlib_count_entries(d, NULL, NULL), n);
    export_close(x);
    reset_work();
    x = export_create(&o, err, sizeof err);
    for (int k = 1; x && k <= 6; k++) {
        frame_of(rho, k);
        export_write(x, -1, rho, NULL, NULL, FW, FH, err, sizeof err);
    }
    export_close(x); /* frames in flight: removed or whole */
    CHECK(a_run_of_frames(d) && named(d, ".tmp") == 0 &&
              testlib_count_entries(d, NULL, NULL) <= 6,
          "export_close with frames in flight left a temporary or a gap");
}

/* ---- EXR: every compression, tiled or not, chunks in parallel -------------------- */

static void test_exr_compressions(void)
{
    reset_work();
    enum { W = 150, H = 90 }; /* tiles partial at the edges; the data window cropped */
    float *rho = calloc(W * H, sizeof(float));
    for (int j = 10; j < 80; j++)
        for (int i = 7; i < 140; i++) rho[j * W + i] = 0.3f + 0.6f * (float)((i * 7 + j * 3) % 50) / 50.0f;
    Pool *pool = NULL;
    char err[4400];
    static const ImageExrCompression comps[] = {IMAGE_EXR_ZIP, IMAGE_EXR_ZIPS, IMAGE_EXR_PIZ, IMAGE_EXR_RLE,
                                                IMAGE_EXR_PXR24, IMAGE_EXR_B44, IMAGE_EXR_NONE};
    static const int codes[] = {3, 2, 4, 1, 5, 6, 0}; /* EXR_COMPRESSION_* */
    for (int t = 0; t < 3; t++) { /* scanlines alone, scanlines in parallel, tiles in parallel */
        if (t == 1) pool = pool_create(3, err, sizeof err);
        for (size_t k = 0; k < sizeof comps / sizeof comps[0]; k++) {
            char p[800], name[64];
            snprintf(name, sizeof name, "%s-%d.exr", exr_compression_name(comps[k]), t);
            path_in(p, sizeof p, work, name);
            ExrChannel ch[] = {{"A", rho}, {"density.smoke", rho}};
            ExrWrite d = {.w = W, .h = H, .x0 = 7, .y0 = 10, .x1 = 139, .y1 = 79, .channels = ch,
                          .nchannels = 2, .compression = comps[k], .fps = 24.0, .tiled = t == 2, .pool = pool};
            CHECK(exr_write(p, &d, err, sizeof err) == 0, "%s: %s", name, err);
            TestlibExr *e = testlib_load_exr(p);
            CHECK(e != NULL, "%s does not read back", name);
            if (!e) continue;
            const float *a = testlib_exr_channel(e, "A");
            double worst = 0.0;
            for (int j = 0; a && j < H; j++)
                for (int i = 0; i < W; i++) {
                    double dv = fabs((double)a[j * W + i] - rho[j * W + i]);
                    if (dv > worst) worst = dv;
                }
            /* half precision, and B44's 4x4 blocks: lossy */
            double tol = comps[k] == IMAGE_EXR_B44 ? 0.05 : 0.0005;
            CHECK(a && worst <= tol && e->compression == codes[k] && e->x0 == 7 && e->y1 == 79 &&
                      e->tiled == (t == 2),
                  "%s: worst %.5f, compression %d (expected %d), window %d..%d, tiled %d", name, worst,
                  e->compression, codes[k], e->x0, e->y1, e->tiled);
            testlib_exr_free(e);
        }
    }
    /* the chunks compressed in parallel are the same bytes as one by one */
    for (size_t k = 0; k < sizeof comps / sizeof comps[0]; k++) {
        char a[800], b[800], n0[64], n1[64];
        snprintf(n0, sizeof n0, "%s-0.exr", exr_compression_name(comps[k]));
        snprintf(n1, sizeof n1, "%s-1.exr", exr_compression_name(comps[k]));
        path_in(a, sizeof a, work, n0);
        path_in(b, sizeof b, work, n1);
        size_t na = 0, nb = 0;
        char *fa = testlib_read_file(a, &na), *fb = testlib_read_file(b, &nb);
        CHECK(fa && fb && na == nb && !memcmp(fa, fb, na), "%s: parallel chunks differ from serial ones",
              exr_compression_name(comps[k]));
        free(fa);
        free(fb);
    }
    CHECK(named(work, ".tmp") == 0, "a temporary left");
    CHECK(exr_compression_parse("pxr24") == IMAGE_EXR_PXR24 && exr_compression_parse("b44a") < 0,
          "exr_compression_parse");
    pool_free(pool);
    free(rho);
}

/* ---- the run -------------------------------------------------------------------- */

static const char *disc_png, *square_png;

static void run_env(const char *const *env, int kill_ms, int res, unsigned long long lim, ...)
{
    const char *argv[64] = {bin};
    int n = 1;
    va_list ap;
    va_start(ap, lim);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 62;) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    static const char *const unset[] = {"DISPLAY", "WAYLAND_DISPLAY", NULL};
    TestlibRunOpts o = {.cwd = work, .unset_env = unset, .env = env, .kill_after_ms = kill_ms,
                        .kill_signal = SIGTERM, .rlimit_set = res >= 0, .rlimit_resource = res,
                        .rlimit_value = lim};
    testlib_run(argv, &o, &R);
}
#define SM(...) run_env(NULL, 0, -1, 0, __VA_ARGS__, NULL)

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *fa = testlib_read_file(a, &na), *fb = testlib_read_file(b, &nb);
    bool same = fa && fb && na == nb && !memcmp(fa, fb, na);
    free(fa);
    free(fb);
    return same;
}

/* --frames none (and --no-frames): metrics only, no folder, the speed said;
 * the same metrics as a run that writes frames. */
static void test_no_frames(void)
{
    reset_work();
    SM("--cpu", "--grid", "32", "--steps", "8", "--every", "2", "--frames", "none", "--metrics", "a.csv",
        disc_png, square_png);
    CHECK(R.code == 0 && strstr(R.err, "8 steps in ") && strstr(R.err, "steps/s") && !strstr(R.err, "frames/s"),
          "--frames none: exit %d:\n%s", R.code, R.err);
    CHECK(testlib_count_entries(work, NULL, NULL) == 1, "--frames none left %d entries (expected a.csv)",
          testlib_count_entries(work, NULL, NULL));
    SM("--cpu", "--grid", "32", "--steps", "8", "--every", "2", "--no-frames", disc_png, square_png);
    CHECK(R.code == 0 && testlib_count_entries(work, NULL, NULL) == 1,
          "--no-frames alone: exit %d, %d entries:\n%s", R.code, testlib_count_entries(work, NULL, NULL), R.err);
    SM("--cpu", "--grid", "32", "--steps", "8", "--every", "2", "--frames", "F", "--metrics", "b.csv",
        "--threads", "3", disc_png, square_png);
    char a[700], b[700];
    path_in(a, sizeof a, work, "a.csv");
    path_in(b, sizeof b, work, "b.csv");
    CHECK(R.code == 0 && strstr(R.err, "5 frames (") && strstr(R.err, "3 writer threads") && same_file(a, b),
          "a run with frames: exit %d, or other metrics:\n%s", R.code, R.err);
}

/* The GPU read-backs two output steps behind the steps (the default) give
 * the frames and metrics of read-backs made at once, on both GPU backends,
 * with a sidecar; --threads 1 and 3 the same bytes. */
static void test_readback_lag(void)
{
    static const char *const backends[] = {"fragment", "compute"};
    for (int b = 0; b < 2; b++) {
        reset_work();
        run_env(NULL, 0, -1, 0, "--readback-lag", "0", "--backend", backends[b], "--headless", "--grid",
                "24x20", "--steps", "12", "--every", "1", "--frames", "A", "--metrics", "a.csv", "--threads", "1", disc_png, square_png,
                NULL);
        if (R.code != 0 && strstr(R.err, "OpenGL")) {
            printf("SKIP test_readback_lag %s: %s", backends[b], R.err);
            continue;
        }
        CHECK(R.code == 0, "%s, lag 0: exit %d:\n%s", backends[b], R.code, R.err);
        SM("--backend", backends[b], "--headless", "--grid", "24x20", "--steps", "12", "--every", "1", "--frames",
            "B", "--metrics", "b.csv", "--threads", "3", disc_png, square_png);
        CHECK(R.code == 0, "%s, lag 2: exit %d:\n%s", backends[b], R.code, R.err);
        char a[800], c[800];
        path_in(a, sizeof a, work, "a.csv");
        path_in(c, sizeof c, work, "b.csv");
        CHECK(same_file(a, c), "%s: the metrics with read-backs in flight differ", backends[b]);
        int same = 0;
        for (int k = 1; k <= 13; k++) {
            char name[64];
            snprintf(name, sizeof name, "A/frame_%05d.png", k);
            path_in(a, sizeof a, work, name);
            snprintf(name, sizeof name, "B/frame_%05d.png", k);
            path_in(c, sizeof c, work, name);
            same += same_file(a, c);
        }
        CHECK(same == 13, "%s: %d of 13 frames the same with read-backs in flight", backends[b], same);
        path_in(a, sizeof a, work, "B/run.json");
        char *js = testlib_read_file(a, NULL);
        CHECK(js && strstr(js, "frame_00013.png"), "%s: the sidecar does not list the last frame", backends[b]);
        free(js);
    }
}

/* SIGTERM with frames in flight (slow frames, three writers): exit 143, the
 * frames a run of whole ones from 1, as many metrics rows, no temporary. */
static void test_sigterm_in_flight(void)
{
    reset_work();
    run_env(NULL, 1200, -1, 0, "-q", "--cpu", "--grid", "48", "--steps", "1000000", "--every", "1", "--size",
            "640x640", "--format", "png16", "--png-compression", "9", "--threads", "3", "--frames", "F",
            "--metrics", "m.csv", disc_png, square_png, NULL);
    CHECK(R.code == 143 && strstr(R.err, "interrupted by SIGTERM") && strstr(R.err, "F holds this run's frames 1.."),
          "exit %d:\n%s", R.code, R.err);
    char f[700], m[700];
    path_in(f, sizeof f, work, "F");
    path_in(m, sizeof m, work, "m.csv");
    int nf = 0;
    testlib_count_entries(f, "frame_", &nf);
    CHECK(nf >= 1 && a_run_of_frames(f) && named(f, ".tmp") == 0,
          "%d frames, a gap or a temporary", nf);
    char *csv = testlib_read_file(m, NULL);
    int rows = -1;
    for (const char *p = csv; p && *p; p++) rows += *p == '\n';
    CHECK(rows == nf, "%d metrics rows for %d frames", rows, nf);
    free(csv);
    for (int k = 1; k <= nf; k++) {
        char p[800], name[32];
        snprintf(name, sizeof name, "frame_%05d.png", k);
        path_in(p, sizeof p, f, name);
        Image *im = testlib_load(p, IMAGE_CHANNEL_A);
        CHECK(im && im->w == 640, "%s is not a whole frame", p);
        image_free(im);
    }
}

/* A full disk (the file size limit between frame sizes) with three writers:
 * exit 1, one line naming a frame, the frames before it whole, nothing after,
 * as many metrics rows as frames. */
static void test_full_disk_writers(void)
{
    reset_work();
    SM("-q", "--cpu", "--grid", "64", "--steps", "16", "--every", "2", "--frames", "F", "--threads", "3",
        disc_png, square_png);
    char f1[700], f9[700];
    path_in(f1, sizeof f1, work, "F/frame_00001.png");
    path_in(f9, sizeof f9, work, "F/frame_00009.png");
    struct stat s1, s9;
    bool sized = R.code == 0 && stat(f1, &s1) == 0 && stat(f9, &s9) == 0 && s9.st_size > s1.st_size;
    CHECK(sized, "the unlimited run: exit %d, or frame 9 not larger than frame 1", R.code);
    if (!sized) return;
    reset_work();
    run_env(NULL, 0, RLIMIT_FSIZE, (unsigned long long)(s1.st_size + s9.st_size) / 2, "-q", "--cpu", "--grid",
            "64", "--steps", "16", "--every", "2", "--frames", "F", "--threads", "3", "--metrics", "m.csv",
            disc_png, square_png, NULL);
    /* one line for the frame (and issue 21's one for the record the full
     * disk took too) */
    int lines = 0, frame_lines = 0;
    for (const char *p = R.err; *p; p++) lines += *p == '\n';
    for (const char *p = R.err; (p = strstr(p, "frame_000")) != NULL; p++) frame_lines++;
    CHECK(R.code == 1 && frame_lines == 1 && lines <= 2 && strstr(R.err, "too large") &&
              !strncmp(R.err, "export: cannot write F/frame_000", 32),
          "exit %d:\n%s", R.code, R.err);
    char f[700], m[700];
    path_in(f, sizeof f, work, "F");
    path_in(m, sizeof m, work, "m.csv");
    int nf = 0;
    testlib_count_entries(f, "frame_", &nf);
    CHECK(nf >= 1 && nf < 9 && a_run_of_frames(f) && named(f, ".tmp") == 0,
          "%d frames, a gap or a temporary", nf);
    char *csv = testlib_read_file(m, NULL);
    int rows = -1;
    for (const char *p = csv; p && *p; p++) rows += *p == '\n';
    CHECK(rows == nf, "%d metrics rows for %d frames", rows, nf);
    free(csv);
}

int main(void)
{
    snprintf(work, sizeof work, "/tmp/smokemorph-test-writers-%ld", (long)getpid());
    if (!realpath(testlib_bin(), bin)) snprintf(bin, sizeof bin, "%s", testlib_bin());
    static char disc[800], square[800];
    snprintf(disc, sizeof disc, "%s/disc.png", work);
    snprintf(square, sizeof square, "%s/square.png", work);
    RUN(test_pool);
    RUN(test_writers_in_order);
    RUN(test_writers_failure);
    RUN(test_writers_cancel);
    RUN(test_exr_compressions);
    /* the inputs live beside the work folder (reset_work empties it) */
    char inputs[700];
    snprintf(inputs, sizeof inputs, "%s-in", work);
    mkdir(inputs, 0777);
    snprintf(disc, sizeof disc, "%s/disc.png", inputs);
    snprintf(square, sizeof square, "%s/square.png", inputs);
    Image *a = image_create(32, 32, 1), *b = image_create(32, 32, 1);
    for (int j = 0; j < 32; j++)
        for (int i = 0; i < 32; i++) {
            a->px[j * 32 + i] = hypotf((float)i - 12.0f, (float)j - 14.0f) < 8.0f ? 1.0f : 0.0f;
            b->px[j * 32 + i] = abs(i - 18) < 7 && abs(j - 17) < 6 ? 1.0f : 0.0f;
        }
    char e1[256], e2[256];
    CHECK(image_save_png(disc, a, 8, e1, sizeof e1) == 0 && image_save_png(square, b, 8, e2, sizeof e2) == 0,
          "inputs: %s %s", e1, e2);
    image_free(a);
    image_free(b);
    disc_png = disc;
    square_png = square;
    RUN(test_no_frames);
    RUN(test_readback_lag);
    RUN(test_sigterm_in_flight);
    RUN(test_full_disk_writers);
    testlib_rm_rf(work);
    testlib_rm_rf(inputs);
    testlib_result_free(&R);
    return check_done();
}
