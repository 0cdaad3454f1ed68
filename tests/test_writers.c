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
    testlib_path(buf, n, dir, name);
}

/* Entries of dir whose names hold needle. */
static int named(const char *dir, const char *needle)
{
    int n = 0;
    testlib_count_entries(dir, needle, &n);
    return n;
}

/* The frames folder work/F and the metrics work/m.csv in F and M; how
 * many frames F holds. */
static int frames_in_work(char *f, size_t nf, char *m, size_t nm)
{
    path_in(f, nf, work, "F");
    path_in(m, nm, work, "m.csv");
    int n = 0;
    testlib_count_entries(f, "frame_", &n);
    return n;
}

/* The rows of CSV file PATH after its header; -1 when it is missing. */
static int csv_rows(const char *path)
{
    char *csv = testlib_read_file(path, NULL);
    int rows = -1;
    for (const char *p = csv; p && *p; p++) rows += *p == '\n';
    free(csv);
    return rows;
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

static int g_strip_rows; /* the writers' frames in strips of this many rows (0: whole at this size) */

static Exporter *writers(const char *dir, int threads, ImageFormat f)
{
    char err[4400];
    ExportOptions o = export_defaults();
    o.strip_rows = g_strip_rows;
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
        /* the writers run on: count, last, count again, so a frame done
         * between two reads cannot make a run of frames look broken
         * (count == last at every moment reads as c1 <= last <= c2) */
        int c1 = export_count(x3);
        long last = export_last(x3);
        int c2 = export_count(x3);
        counted = counted && c1 <= c2 && c2 <= k && (c2 == 0 || (c1 <= last && last <= c2));
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
            TESTLIB_NO_GL(b ? 4 : 3, 3, "test_readback_lag %s: %s", backends[b], R.err);
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
    int nf = frames_in_work(f, sizeof f, m, sizeof m);
    CHECK(nf >= 1 && a_run_of_frames(f) && named(f, ".tmp") == 0,
          "%d frames, a gap or a temporary", nf);
    CHECK(csv_rows(m) == nf, "%d metrics rows for %d frames", csv_rows(m), nf);
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
static void full_disk_writers(const char *strips)
{
    reset_work();
    SM("-q", "--cpu", "--grid", "64", "--steps", "16", "--every", "2", "--frames", "F", "--threads", "3",
       "--strip-rows", strips, disc_png, square_png);
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
            "--strip-rows", strips, disc_png, square_png, NULL);
    /* one line for the frame (and issue 21's one for the record the full
     * disk took too) */
    int lines = 0, frame_lines = 0;
    for (const char *p = R.err; *p; p++) lines += *p == '\n';
    for (const char *p = R.err; (p = strstr(p, "frame_000")) != NULL; p++) frame_lines++;
    CHECK(R.code == 1 && frame_lines == 1 && lines <= 2 && strstr(R.err, "too large") &&
              !strncmp(R.err, "export: cannot write F/frame_000", 32),
          "exit %d:\n%s", R.code, R.err);
    char f[700], m[700];
    int nf = frames_in_work(f, sizeof f, m, sizeof m);
    CHECK(nf >= 1 && nf < 9 && a_run_of_frames(f) && named(f, ".tmp") == 0,
          "%d frames, a gap or a temporary", nf);
    CHECK(csv_rows(m) == nf, "%d metrics rows for %d frames", csv_rows(m), nf);
}

/* A full disk with several writers, the frames whole and in strips of 8
 * rows (a frame that fails half written leaves no temporary either). */
static void test_full_disk_writers(void)
{
    full_disk_writers("0");
    full_disk_writers("8");
}

/* The writers' order, bytes and failures with every frame in strips. */
static void test_writers_in_strips(void)
{
    g_strip_rows = 5;
    test_writers_in_order();
    test_writers_failure();
    g_strip_rows = 0;
}

/* ---- frames in strips (issue 21) ---------------------------------------------- */

/* Grid planes that test the strips: two smokes with soft edges off the
 * middle (an EXR's data window starts inside a band), a faint haze on the
 * left, a velocity that is not zero. */
static void strip_planes(float *p, int w, int h, int k)
{
    float *r0 = p, *r1 = p + (size_t)w * h, *vx = r1 + (size_t)w * h, *vy = vx + (size_t)w * h;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            size_t c = (size_t)j * w + i;
            double d0 = hypot(i - 0.6 * w - k, j - 0.55 * h), d1 = hypot(i - 0.35 * w, j - 0.7 * h + k);
            r0[c] = (float)(d0 < 0.22 * w ? 1.3 - d0 / (0.22 * w) : i < 3 && 3 * j > h ? 1e-6 * j : 0.0);
            r1[c] = (float)(d1 < 0.2 * w ? 0.9 * (1.0 - d1 / (0.2 * w)) : 0.0);
            vx[c] = (float)(0.3 * sin(0.3 * i + k)), vy[c] = (float)(-0.2 * cos(0.25 * j));
        }
}

/* Frames 1..3 of w x h planes through an exporter of these options, its
 * frames whole (strip_rows -1) or in strips of `rows`. 0, or -1. */
static int strip_frames(ExportOptions o, int rows, int w, int h, char *err, size_t errlen)
{
    o.strip_rows = rows;
    Exporter *x = export_create(&o, err, errlen);
    if (!x) return -1;
    size_t cells = (size_t)w * h;
    float *p = malloc(4 * cells * sizeof(float));
    int rc = p ? 0 : -1;
    for (int k = 1; k <= 3 && rc == 0; k++) {
        strip_planes(p, w, h, k);
        const float *rho[2] = {p, p + cells};
        rc = export_write_fields(x, -1, rho, p + 2 * cells, p + 3 * cells, w, h, err, errlen);
    }
    if (rc == 0) rc = export_finish(x, err, errlen);
    if (rc == 0 && export_count(x) != 3) {
        snprintf(err, errlen, "%d frames written", export_count(x));
        rc = -1;
    }
    export_close(x);
    free(p);
    return rc;
}

/* Whether files a and b hold the same bytes (and exist). */
static bool same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *da = testlib_read_file(a, &na), *db = testlib_read_file(b, &nb);
    bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    if (!same) printf("  %s (%zu bytes) and %s (%zu bytes) differ\n", a, na, b, nb);
    free(da);
    free(db);
    return same;
}

/* image_rows gives image_resample's rows bit for bit, a few at a time, in
 * any order: both axes shrinking (several source rows a row), growing, and
 * 4 channels. */
static void test_image_rows(void)
{
    const int sizes[][4] = {{37, 29, 11, 7}, {13, 9, 50, 61}, {20, 31, 47, 12}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int nc = 1; nc <= 4; nc += 3) {
            int sw = sizes[s][0], sh = sizes[s][1], w = sizes[s][2], h = sizes[s][3];
            Image *src = image_create(sw, sh, nc);
            for (size_t k = 0; k < (size_t)sw * sh * nc; k++) src->px[k] = (float)((k * 7919) % 1000) / 997.0f;
            for (int mean = 0; mean < 2; mean++) {
                Image *whole = mean ? image_resample(src, w, h) : image_resample_plain(src, w, h);
                ImageRows *r = image_rows_create(src, w, h, mean);
                float *got = malloc(sizeof(float) * (size_t)w * h * nc);
                /* bands of 3 rows top to bottom, then the first row again */
                for (int y = 0; y < h; y += 3) image_rows_get(r, y, h - y < 3 ? h - y : 3, got + (size_t)y * w * nc);
                bool same = whole && memcmp(got, whole->px, sizeof(float) * (size_t)w * h * nc) == 0;
                image_rows_get(r, 0, 1, got);
                same = same && memcmp(got, whole->px, sizeof(float) * (size_t)w * nc) == 0;
                CHECK(same, "image_rows %dx%d -> %dx%d, %d channels, mean %d: not image_resample's rows", sw, sh,
                      w, h, nc, mean);
                free(got);
                image_rows_free(r);
                image_free(whole);
            }
            image_free(src);
        }
    }
}

/* A frame in strips is the frame whole, byte for byte: PNG 8 and 16 bits
 * (straight, premultiplied, one field and two), EXR (scanline chunks of 1
 * and 16 rows, tiles, half and float, white, grey and composited colour,
 * velocity), the video's raw rows (a fake ffmpeg keeps them), with writer
 * threads and without, resampled up, down and not at all, and the
 * screenshot (export_png_fields). */
static void test_strips_equal(void)
{
    reset_work();
    char err[4400] = "", bindir[700], *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    path_in(bindir, sizeof bindir, work, "bin");
    mkdir(bindir, 0777);
    char fake[800];
    path_in(fake, sizeof fake, bindir, "ffmpeg");
    const char *script = "#!/bin/sh\nPATH=/usr/bin:/bin\nfor a; do last=$a; done\ncat > \"$last\"\n";
    testlib_write_file(fake, script, strlen(script));
    chmod(fake, 0755);
    setenv("PATH", bindir, 1);
    struct {
        ImageFormat f;
        int nf, gw, gh, ow, oh, rows, threads;
        ImageAlpha alpha;
        ImageExrCompression comp;
        bool tiled, fl, vel;
        float grey;       /* one field's colour: grey, or 0: orange */
        const char *video; /* NULL, "mp4", "mov" */
    } cs[] = {
        {IMAGE_FORMAT_PNG8, 1, 23, 17, 150, 97, 7, 0, IMAGE_ALPHA_STRAIGHT, 0, false, false, false, 0.0f, NULL},
        {IMAGE_FORMAT_PNG8, 2, 40, 30, 17, 13, 5, 2, IMAGE_ALPHA_PREMULTIPLIED, 0, false, false, false, 0, NULL},
        {IMAGE_FORMAT_PNG16, 2, 23, 17, 0, 0, 3, 2, IMAGE_ALPHA_STRAIGHT, 0, false, false, false, 0, NULL},
        {IMAGE_FORMAT_PNG16, 1, 24, 20, 61, 130, 1, 0, IMAGE_ALPHA_PREMULTIPLIED, 0, false, false, false, 0.5f,
         NULL},
        {IMAGE_FORMAT_EXR, 1, 23, 17, 200, 150, 64, 2, 0, IMAGE_EXR_ZIP, false, false, true, 1.0f, NULL},
        {IMAGE_FORMAT_EXR, 2, 30, 40, 190, 260, 64, 0, 0, IMAGE_EXR_ZIP, true, true, true, 0, NULL},
        {IMAGE_FORMAT_EXR, 1, 23, 17, 130, 170, 64, 2, 0, IMAGE_EXR_ZIPS, false, false, false, 0.5f, NULL},
        {IMAGE_FORMAT_EXR, 1, 20, 20, 100, 300, 128, 1, 0, IMAGE_EXR_PIZ, false, false, true, 0.0f, NULL},
        {IMAGE_FORMAT_EXR, 2, 23, 17, 140, 200, 64, 2, 0, IMAGE_EXR_ZIP, false, false, true, 0, "mov"},
        {IMAGE_FORMAT_PNG8, 1, 23, 17, 66, 50, 9, 2, IMAGE_ALPHA_PREMULTIPLIED, 0, false, false, false, 0, "mov"},
        {IMAGE_FORMAT_PNG8, 2, 23, 17, 66, 51, 4, 0, IMAGE_ALPHA_STRAIGHT, 0, false, false, false, 0, "mp4"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char dir[2][700], video[2][700], name[64];
        const char *what[2] = {"whole", "strips"};
        int rc[2];
        for (int s = 0; s < 2; s++) {
            snprintf(name, sizeof name, "%s%zu", what[s], i);
            path_in(dir[s], sizeof dir[s], work, name);
            snprintf(name, sizeof name, "%s%zu.%s", what[s], i, cs[i].video ? cs[i].video : "");
            path_in(video[s], sizeof video[s], work, name);
            ExportOptions o = export_defaults();
            o.dir = dir[s];
            o.format = cs[i].f;
            o.out_w = cs[i].ow, o.out_h = cs[i].oh;
            o.threads = cs[i].threads;
            o.alpha = cs[i].alpha;
            o.exr_compression = cs[i].comp;
            o.exr_tiled = cs[i].tiled;
            o.exr_pixel = cs[i].fl ? IMAGE_EXR_FLOAT : IMAGE_EXR_HALF;
            o.velocity = cs[i].vel;
            o.density_scale = 0.9f;
            o.video = cs[i].video ? video[s] : NULL;
            o.background[0] = 0.2f, o.background[2] = 0.5f;
            if (cs[i].nf == 2) {
                o.nfields = 2;
                o.fields[0] = (ExportField){"a", {1.0f, 0.5f, 0.1f}};
                o.fields[1] = (ExportField){"b", {0.2f, 0.6f, 1.0f}};
            } else if (cs[i].grey > 0.0f) {
                o.rgb[0] = o.rgb[1] = o.rgb[2] = cs[i].grey;
            } else {
                o.rgb[0] = 1.0f, o.rgb[1] = 0.55f, o.rgb[2] = 0.2f;
            }
            int ow = cs[i].ow ? cs[i].ow : cs[i].gw, oh = cs[i].oh ? cs[i].oh : cs[i].gh;
            o.strip_rows = s ? cs[i].rows : -1;
            int want = s ? (cs[i].rows > oh ? oh : cs[i].rows) : 0;
            CHECK(export_strip_rows(&o, ow, oh) == want, "case %zu: %s: %d rows a strip, not %d", i, what[s],
                  export_strip_rows(&o, ow, oh), want);
            rc[s] = strip_frames(o, o.strip_rows, cs[i].gw, cs[i].gh, err, sizeof err);
            CHECK(rc[s] == 0, "case %zu, %s: %s", i, what[s], err);
        }
        if (rc[0] || rc[1]) continue;
        for (int k = 1; k <= 3; k++) {
            char a[800], b[800], frame[32];
            snprintf(frame, sizeof frame, "frame_%05d.%s", k, cs[i].f == IMAGE_FORMAT_EXR ? "exr" : "png");
            path_in(a, sizeof a, dir[0], frame);
            path_in(b, sizeof b, dir[1], frame);
            CHECK(same_bytes(a, b), "case %zu: frame %d in strips is not the whole frame's bytes", i, k);
        }
        CHECK(testlib_count_entries(dir[1], NULL, NULL) == 3, "case %zu: %d files in the strips' folder", i,
              testlib_count_entries(dir[1], NULL, NULL));
        if (cs[i].video)
            CHECK(same_bytes(video[0], video[1]), "case %zu: the video's rows in strips differ", i);
    }
    if (saved) setenv("PATH", saved, 1);
    free(saved);

    /* the screenshot (export_png_fields), in strips above 2048² pixels: the
     * frame an exporter of its fields writes whole */
    int sw = 4100, sh = 1031;
    float *p = malloc(4 * 23 * 17 * sizeof(float));
    strip_planes(p, 23, 17, 1);
    const float *rho[2] = {p, p + 23 * 17};
    ExportField f[2] = {{"a", {1.0f, 0.5f, 0.1f}}, {"b", {0.2f, 0.6f, 1.0f}}};
    char a[700], b[700];
    path_in(a, sizeof a, work, "shot");
    ExportOptions w = export_defaults();
    w.dir = a;
    w.out_w = sw, w.out_h = sh;
    w.nfields = 2;
    memcpy(w.fields, f, sizeof f);
    w.strip_rows = -1;
    Exporter *x = export_create(&w, err, sizeof err);
    int r1 = x ? export_write_fields(x, 1, rho, NULL, NULL, 23, 17, err, sizeof err) : -1;
    export_close(x);
    path_in(a, sizeof a, work, "shot/frame_00001.png");
    path_in(b, sizeof b, work, "shot_strips.png");
    ExportOptions d = export_defaults();
    CHECK(export_strip_rows(&d, sw, sh) == EXPORT_STRIP_ROWS, "a %dx%d screenshot is not in strips", sw, sh);
    int r2 = export_png_fields(b, rho, f, 2, 23, 17, sw, sh, err, sizeof err);
    CHECK(r1 == 0 && r2 == 0 && same_bytes(a, b), "the screenshot in strips: %d %d %s", r1, r2, err);
    free(p);
    /* automatic: whole up to EXPORT_STRIP_ABOVE pixels, strips above */
    CHECK(export_strip_rows(&d, 2048, 2048) == 0 && export_strip_rows(&d, 2049, 2048) == EXPORT_STRIP_ROWS &&
              export_strip_rows(&d, 16384, 16384) == EXPORT_STRIP_ROWS,
          "automatic strips: %d %d", export_strip_rows(&d, 2048, 2048), export_strip_rows(&d, 2049, 2048));
    d.format = IMAGE_FORMAT_EXR;
    d.strip_rows = 40;
    CHECK(export_strip_rows(&d, 100, 1000) == 64, "an EXR's strip is whole chunks: %d", export_strip_rows(&d, 100, 1000));
}

/* The memory a frame in strips counts is a strip's, not the frame's; the
 * budget's line names it. An EXR stream refuses rows that split a chunk
 * and leaves nothing behind. */
static void test_strips_budget(void)
{
    ExportOptions o = export_defaults();
    o.out_w = o.out_h = 16384;
    size_t strip = export_frame_bytes_for(&o, 64, 64);
    o.strip_rows = -1;
    size_t whole = export_frame_bytes_for(&o, 64, 64);
    CHECK(whole > ((size_t)8 << 30) && strip < ((size_t)96 << 20), "16384²: a strip counts %zu MiB, the whole "
          "frame %zu MiB", strip >> 20, whole >> 20);
    o.strip_rows = 0;
    o.out_w = o.out_h = 8192;
    size_t half = export_frame_bytes_for(&o, 64, 64);
    CHECK(half < strip && half > strip / 4, "a strip's memory follows the width: 8192² %zu, 16384² %zu", half, strip);
    char what[160];
    export_frame_what(&o, 64, 64, what, sizeof what);
    CHECK(!strcmp(what, "a 64-row strip of a 8192x8192 frame being written"), "'%s'", what);
    o.out_w = o.out_h = 512;
    export_frame_what(&o, 64, 64, what, sizeof what);
    CHECK(!strcmp(what, "a 512x512 frame being written"), "'%s'", what);

    reset_work();
    char path[700], err[512] = "";
    path_in(path, sizeof path, work, "split.exr");
    ExrChannel ch[1] = {{"A", NULL}};
    ExrWrite d = {.w = 50, .h = 40, .x0 = 0, .y0 = 0, .x1 = 49, .y1 = 39, .channels = ch, .nchannels = 1,
                  .compression = IMAGE_EXR_ZIP};
    ExrStream *s = exr_stream_begin(path, &d, err, sizeof err);
    float *px = calloc(50 * 40, sizeof(float));
    ch[0].px = px;
    CHECK(s && exr_stream_rows(s, ch, 0, 16, err, sizeof err) == 0, "rows 0..15: %s", err);
    int rc = s ? exr_stream_rows(s, ch, 20, 20, err, sizeof err) : 0; /* 16..19 never came */
    CHECK(rc < 0 && strstr(err, "split a chunk"), "rows that split a chunk: %d %s", rc, err);
    exr_stream_abort(s);
    CHECK(testlib_count_entries(work, NULL, NULL) == 0, "an aborted stream left %d files",
          testlib_count_entries(work, NULL, NULL));
    /* the whole stream, in bands of 16, is exr_write's file */
    s = exr_stream_begin(path, &d, err, sizeof err);
    for (int y = 0; s && y < 40; y += 16) {
        ch[0].px = px + (size_t)y * 50;
        CHECK(exr_stream_rows(s, ch, y, 40 - y < 16 ? 40 - y : 16, err, sizeof err) == 0, "band %d: %s", y, err);
    }
    CHECK(s && exr_stream_end(s, err, sizeof err) == 0, "end: %s", err);
    char again[700];
    path_in(again, sizeof again, work, "whole.exr");
    ch[0].px = px;
    CHECK(exr_write(again, &d, err, sizeof err) == 0 && same_bytes(path, again), "stream and exr_write: %s", err);
    free(px);

    /* a frame without smoke (its data window one pixel), tiled, in strips */
    char dir[2][700];
    float zero[12 * 10] = {0};
    for (int s = 0; s < 2; s++) {
        path_in(dir[s], sizeof dir[s], work, s ? "empty_strips" : "empty_whole");
        ExportOptions o = export_defaults();
        o.dir = dir[s];
        o.format = IMAGE_FORMAT_EXR;
        o.exr_tiled = true;
        o.out_w = 300, o.out_h = 200;
        o.strip_rows = s ? 64 : -1;
        Exporter *x = export_create(&o, err, sizeof err);
        CHECK(x && export_write(x, 1, zero, NULL, NULL, 12, 10, err, sizeof err) == 0, "empty frame: %s", err);
        export_close(x);
    }
    char a[800], b[800];
    path_in(a, sizeof a, dir[0], "frame_00001.exr");
    path_in(b, sizeof b, dir[1], "frame_00001.exr");
    CHECK(same_bytes(a, b), "an empty frame in strips is not the whole one's bytes");
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
    RUN(test_image_rows);
    RUN(test_strips_equal);
    RUN(test_strips_budget);
    RUN(test_writers_in_strips);
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
