/* test_config: defaults, every option, bad values, positionals, --help. No GL. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "exr.h"

#define MAXARGS 64

static char errbuf[512];

/* Parse "smokemorph" followed by the NULL-terminated arguments. */
static int parse(Config *c, ...)
{
    static char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = "smokemorph";
    va_list ap;
    va_start(ap, c);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < MAXARGS) argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    errbuf[0] = '\0';
    return config_parse(c, argc, argv, errbuf, sizeof errbuf);
}

/* Run config_parse with stdout captured into buf. */
static int parse_captured(char *buf, size_t n, const char *opt)
{
    char *argv[] = {"smokemorph", (char *)opt, NULL};
    Config c;
    FILE *tmp = tmpfile();
    if (!tmp) return -99;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(tmp), STDOUT_FILENO);
    int r = config_parse(&c, 2, argv, errbuf, sizeof errbuf);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(tmp);
    size_t got = fread(buf, 1, n - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
    return r;
}

static bool feq(float a, float b) { return fabsf(a - b) <= 1e-6f * (1.0f + fabsf(b)); }

/* A rejection: -1, one line starting "config: ", naming what. */
static void expect_bad(int line, int r, const char *what)
{
    bool ok = r == -1 && strncmp(errbuf, "config: ", 8) == 0 && strstr(errbuf, what) &&
              !strchr(errbuf, '\n');
    CHECK(ok, "line %d: expected rejection naming '%s', got r=%d err='%s'", line, what, r,
          errbuf);
}
#define BAD(what, ...) expect_bad(__LINE__, parse(&c, __VA_ARGS__, NULL), what)

static void test_defaults(void)
{
    Config c;
    config_defaults(&c);
    SolverParams p;
    memset(&p, 0, sizeof p);  /* padding, for memcmp */
    method_params_default(&p);
    CHECK(c.current_path == NULL && c.target_path == NULL, "no images by default");
    CHECK(c.load.channel == IMAGE_CHANNEL_LUMA && !c.load.invert && !c.load.raw, "load opts");
    CHECK(c.mass_match, "mass match on");
    CHECK(c.grid_w == 256 && c.grid_h == 256, "grid 256");
    CHECK(method_params_equal(&c.params, &p), "solver defaults");
    CHECK(c.steps == 0, "steps 0 = mode default");
    CHECK(c.frames_dir == NULL && c.metrics_path == NULL, "no outputs");
    /* frames every round(1 / (24 fps x 0.01)) = 4 steps: a second is one unit of time */
    CHECK(c.every == 4 && c.fps == 24.0 && !c.every_set, "every %d at %g fps, expected 4 at 24",
          c.every, c.fps);
    CHECK(c.format == IMAGE_FORMAT_PNG8 && c.alpha == IMAGE_ALPHA_STRAIGHT && c.density_scale == 0.0f &&
              c.exr_pixel == IMAGE_EXR_HALF && c.exr_compression == IMAGE_EXR_ZIP && !c.exr_velocity,
          "output format defaults: png8, straight, density scale auto, half, zip, no velocity");
    CHECK(c.frame_start == 1 && c.range_last < 0 && c.video_path == NULL && c.frames_digits == 0 &&
              c.background[0] == 0.0f && c.background[1] == 0.0f && c.background[2] == 0.0f,
          "frame 1 first, no range, no video, no pattern, black background");
    CHECK(c.color[0] == 1.0f && c.color[1] == 1.0f && c.color[2] == 1.0f, "white");
    CHECK(c.out_w == 0 && c.out_h == 0, "size = grid");
    CHECK(c.backend == BACKEND_AUTO && !c.headless && !c.gl_info && c.shader_dir == NULL, "mode flags");
    CHECK(c.steps_per_frame == 2, "steps per frame 2");
    CHECK(c.verbosity == 1 && c.progress, "verbosity");

    Config d;
    CHECK(parse(&d, NULL) == 0, "no arguments parse: %s", errbuf);
    CHECK(method_params_equal(&c.params, &d.params) && d.grid_w == 256 && d.every == 4 &&
              d.progress && d.mass_match && d.current_path == NULL,
          "parse with no arguments gives the defaults");
    char *argv0[] = {NULL};
    CHECK(config_parse(&d, 0, argv0, errbuf, sizeof errbuf) == 0, "argc 0 is fine");
}

static void test_every_option(void)
{
    Config c;
    int r = parse(&c, "--cpu", "--headless", "--gl-info", "--shader-dir", "sh", "--grid", "320x200",
                  "--dt", "0.02", "--vf", "1.5", "--vd", "0", "--vg", "0.01", "--sigma", "0.1",
                  "--jacobi", "80", "--gather-iters", "5", "--umax", "0.5", "--no-gather",
                  "--force", "fattal", "--vb", "12.5",
                  "--steps", "1234", "--frames", "out", "--every", "3", "--metrics", "m.csv",
                  "--channel", "a", "--invert", "--no-mass-match", "--color", "#ff8000", "--size",
                  "640x360", "--steps-per-frame", "7", "--no-progress", "cur.png", "tgt.png", NULL);
    CHECK(r == 0, "all options parse: %s", errbuf);
    CHECK(c.backend == BACKEND_CPU && c.headless && c.gl_info, "flags");
    CHECK(c.shader_dir && strcmp(c.shader_dir, "sh") == 0, "shader dir");
    CHECK(c.grid_w == 320 && c.grid_h == 200, "grid");
    CHECK(feq(c.params.dt, 0.02f) && feq(c.params.vf, 1.5f) && c.params.vd == 0.0f &&
              feq(c.params.vg, 0.01f) && feq(c.params.sigma, 0.1f) && feq(c.params.umax, 0.5f),
          "float params");
    CHECK(c.params.jacobi == 80 && c.params.gather_iters == 5 && !c.params.gather, "int params");
    CHECK(c.params.force == SOLVER_FORCE_FATTAL && feq(c.params.vb, 12.5f), "force, vb");
    {
        Config c2;
        CHECK(parse(&c2, "--force", "balance", NULL) == 0 && c2.params.force == SOLVER_FORCE_BALANCE,
              "--force balance");
        CHECK(parse(&c2, "--force", "fatal", NULL) == -1 && strstr(errbuf, "--force") &&
                  strstr(errbuf, "'fatal'"),
              "--force with a typo names the option and the value: %s", errbuf);
        CHECK(parse(&c2, "--vb", "-1", NULL) == -1 && strstr(errbuf, "--vb"), "--vb -1: %s", errbuf);
        CHECK(parse(&c2, "--vb", "1e6", NULL) == -1 && strstr(errbuf, "--vb"), "--vb 1e6: %s",
              errbuf);
        SolverParams dp;
        method_params_default(&dp);
        CHECK(parse(&c2, NULL) == 0 && c2.params.vk == dp.vk && c2.params.framp == dp.framp,
              "defaults keep the drift and easing");
        CHECK(parse(&c2, "--force", "fattal", NULL) == 0 && c2.params.vk == 0.0f &&
                  c2.params.framp == 0.0f && c2.params.tramp == 0.0f && c2.params.swirl == 0.0f,
              "--force fattal is the paper's method: no drift, no easing, no vorticity confinement");
        CHECK(parse(&c2, "--force", "fattal", "--swirl", "2", NULL) == 0 && feq(c2.params.swirl, 2.0f),
              "--force fattal --swirl 2 keeps the swirl given");
        CHECK(parse(&c2, NULL) == 0 && c2.params.swirl == dp.swirl && dp.swirl > 0.0f,
              "the defaults swirl");
        CHECK(parse(&c2, "--force", "fattal", "--drift", "0.01", "--ease-force", "0.5", NULL) == 0 &&
                  feq(c2.params.vk, 0.01f) && feq(c2.params.framp, 0.5f) && c2.params.tramp == dp.tramp,
              "--force fattal with --drift/--ease-* keeps what was given");
        CHECK(parse(&c2, "--drift", "-1", NULL) == -1 && strstr(errbuf, "--drift"), "--drift -1: %s", errbuf);
        CHECK(parse(&c2, "--drift-max", "1000", NULL) == -1 && strstr(errbuf, "--drift-max"),
              "--drift-max 1000: %s", errbuf);
        CHECK(parse(&c2, "--drift-balance", "40", NULL) == 0 && feq(c2.params.vw, 40.0f),
              "--drift-balance 40");
        CHECK(parse(&c2, NULL) == 0 && c2.params.vw == dp.vw && dp.vw > 0.0f,
              "the balance drift is on by default");
        CHECK(parse(&c2, "--drift-balance", "-3", NULL) == -1 && strstr(errbuf, "--drift-balance"),
              "--drift-balance -3: %s", errbuf);
        CHECK(parse(&c2, "--drift-balance", "1e5", NULL) == -1 && strstr(errbuf, "--drift-balance"),
              "--drift-balance 1e5: %s", errbuf);
        CHECK(parse(&c2, "--ease-force", "-2", NULL) == -1 && strstr(errbuf, "--ease-force"),
              "--ease-force -2: %s", errbuf);
        CHECK(parse(&c2, "--ease-gather", "nan", NULL) == -1 && strstr(errbuf, "--ease-gather"),
              "--ease-gather nan: %s", errbuf);
    }
    CHECK(c.steps == 1234, "steps");
    CHECK(c.frames_dir && strcmp(c.frames_dir, "out") == 0, "frames");
    CHECK(c.every == 3, "every");
    CHECK(c.metrics_path && strcmp(c.metrics_path, "m.csv") == 0, "metrics");
    CHECK(c.load.channel == IMAGE_CHANNEL_A && c.load.invert, "channel, invert");
    CHECK(!c.mass_match, "no mass match");
    CHECK(feq(c.color[0], 1.0f) && feq(c.color[1], 128.0f / 255.0f) && c.color[2] == 0.0f,
          "color");
    CHECK(c.out_w == 640 && c.out_h == 360, "size");
    CHECK(c.steps_per_frame == 7, "steps per frame");
    CHECK(!c.progress && c.verbosity == 1, "no progress");
    CHECK(c.current_path && strcmp(c.current_path, "cur.png") == 0 && c.target_path &&
              strcmp(c.target_path, "tgt.png") == 0,
          "positionals");

    CHECK(parse(&c, "--grid=128", NULL) == 0 && c.grid_w == 128 && c.grid_h == 128,
          "--grid=128");
    CHECK(parse(&c, "-q", NULL) == 0 && c.verbosity == 0 && !c.progress, "-q");
    CHECK(parse(&c, "--quiet", NULL) == 0 && c.verbosity == 0 && !c.progress, "--quiet");
    CHECK(parse(&c, "-v", NULL) == 0 && c.verbosity == 2 && c.progress, "-v");
    CHECK(parse(&c, "--verbose", NULL) == 0 && c.verbosity == 2, "--verbose");
    CHECK(parse(&c, "--steps", "0", NULL) == 0 && c.steps == 0, "steps 0");
    CHECK(parse(&c, "--steps", "100000000", NULL) == 0 && c.steps == 100000000L, "steps max");
    CHECK(parse(&c, "--every", "1000000", NULL) == 0 && c.every == 1000000, "every max");
    CHECK(parse(&c, "--steps-per-frame", "1000", NULL) == 0 && c.steps_per_frame == 1000,
          "spf max");
    CHECK(parse(&c, "--dt", "1", NULL) == 0 && c.params.dt == 1.0f, "dt 1 (upper bound)");
    CHECK(parse(&c, "--dt", "1e-3", NULL) == 0 && feq(c.params.dt, 1e-3f), "dt exponent");
    CHECK(parse(&c, "--vf", "+2.", NULL) == 0 && c.params.vf == 2.0f, "vf '+2.'");
    /* options after the images, and "--" before a path starting with '-' */
    CHECK(parse(&c, "a.png", "--grid", "64", "b.png", NULL) == 0 && c.grid_w == 64 &&
              strcmp(c.current_path, "a.png") == 0 && strcmp(c.target_path, "b.png") == 0,
          "interleaved options and images: %s", errbuf);
    setenv("POSIXLY_CORRECT", "1", 1);
    CHECK(parse(&c, "a.png", "--grid", "64", "b.png", NULL) == 0 && c.grid_w == 64 &&
              strcmp(c.target_path, "b.png") == 0,
          "images anywhere, even with POSIXLY_CORRECT: %s", errbuf);
    unsetenv("POSIXLY_CORRECT");
    CHECK(parse(&c, "a.png", "--", "b.png", NULL) == 0 && strcmp(c.target_path, "b.png") == 0,
          "one image before '--', one after");
    CHECK(parse(&c, "a.png", "b.png", "--", "c.png", NULL) == 0 && c.nkeys == 2 &&
              strcmp(c.key_paths[1], "c.png") == 0,
          "a key after '--': %s", errbuf);
    CHECK(parse(&c, "--cpu", "--", "-a.png", "b.png", NULL) == 0 && c.backend == BACKEND_CPU &&
              strcmp(c.current_path, "-a.png") == 0,
          "'--' ends the options: %s", errbuf);
}

/* --backend: each name, --cpu as its synonym (the last one given wins), and
 * a wrong name named in the one-line error. */
/* Issue 10's output group: formats, alpha, density scale, EXR options,
 * fps and the frame spacing, frame numbers and ranges, patterns, video. */
static void test_output_options(void)
{
    Config c;
    CHECK(parse(&c, "--format", "exr", "--exr-type", "float", "--exr-compression", "piz",
                "--exr-velocity", "--alpha", "premultiplied", "--density-scale", "0.25",
                "--background", "#102030", "--video", "out/a.MOV", NULL) == 0, "%s", errbuf);
    CHECK(c.format == IMAGE_FORMAT_EXR && c.exr_pixel == IMAGE_EXR_FLOAT &&
              c.exr_compression == IMAGE_EXR_PIZ && c.exr_velocity &&
              c.alpha == IMAGE_ALPHA_PREMULTIPLIED && c.density_scale == 0.25f,
          "format options not taken");
    CHECK(fabsf(c.background[2] - 48.0f / 255.0f) < 1e-6f && strcmp(c.video_path, "out/a.MOV") == 0,
          "background or video not taken");
    CHECK(parse(&c, "--format", "png16", "--density-scale", "auto", "--exr-compression", "piz",
                NULL) == -1, "--exr-compression without --format exr accepted");
    CHECK(parse(&c, "--format", "png16", "--density-scale", "auto", NULL) == 0 &&
              c.format == IMAGE_FORMAT_PNG16 && c.density_scale == 0.0f, "png16, auto: %s", errbuf);
    CHECK(parse(&c, "--exr-compression", "none", "--format", "exr", NULL) == 0 &&
              c.exr_compression == IMAGE_EXR_NONE, "none: %s", errbuf);
    /* issue 22: every compression OpenEXRCore 3.1 writes, tiles, PNG levels,
     * writer threads, no frames */
    static const struct {
        const char *name;
        ImageExrCompression c;
    } comps[] = {{"zips", IMAGE_EXR_ZIPS}, {"rle", IMAGE_EXR_RLE}, {"pxr24", IMAGE_EXR_PXR24},
                 {"b44", IMAGE_EXR_B44}, {"zip", IMAGE_EXR_ZIP}, {"piz", IMAGE_EXR_PIZ}};
    for (size_t k = 0; k < sizeof comps / sizeof comps[0]; k++)
        CHECK(parse(&c, "--format", "exr", "--exr-compression", comps[k].name, "--exr-tiled", NULL) == 0 &&
                  c.exr_compression == comps[k].c && c.exr_tiled,
              "--exr-compression %s --exr-tiled: %s", comps[k].name, errbuf);
    CHECK(parse(&c, NULL) == 0 && c.png_compression == IMAGE_PNG_LEVEL_DEFAULT && c.threads == 0 &&
              !c.no_frames && !c.exr_tiled,
          "issue 22's defaults");
    CHECK(parse(&c, "--png-compression", "9", "--threads", "3", "--format", "png16", NULL) == 0 &&
              c.png_compression == 9 && c.threads == 3,
          "--png-compression 9 --threads 3: %s", errbuf);
    CHECK(parse(&c, "--png-compression", "0", NULL) == 0 && c.png_compression == 0, "level 0: %s", errbuf);
    CHECK(parse(&c, "--frames", "none", "--metrics", "m.csv", NULL) == 0 && c.no_frames && !c.frames_dir,
          "--frames none: %s", errbuf);
    CHECK(parse(&c, "--no-frames", NULL) == 0 && c.no_frames && !c.frames_dir, "--no-frames: %s", errbuf);
    /* DWAA where the C library has it (OpenEXR 3.2), else a clear refusal */
    if (exr_compression_available(IMAGE_EXR_DWAA))
        CHECK(parse(&c, "--format", "exr", "--exr-compression", "dwaa", NULL) == 0 &&
                  c.exr_compression == IMAGE_EXR_DWAA, "dwaa: %s", errbuf);
    else
        BAD("needs OpenEXR 3.2", "--format", "exr", "--exr-compression", "dwaa");

    /* fps and the spacing: derived from fps and dt unless --every is given */
    CHECK(parse(&c, "--fps", "10", NULL) == 0 && c.every == 10, "--fps 10: every %d", c.every);
    CHECK(parse(&c, "--fps", "25", "--dt", "0.02", NULL) == 0 && c.every == 2,
          "--fps 25 --dt 0.02: every %d", c.every);
    CHECK(parse(&c, "--every", "7", "--fps", "10", NULL) == 0 && c.every == 7 && c.fps == 10.0,
          "--every wins over --fps: every %d", c.every);
    CHECK(parse(&c, "--fps", "1000", "--dt", "1", NULL) == 0 && c.every == 1, "every at least 1");
    CHECK(parse(&c, "--fps", "23.976", NULL) == 0 && fabs(c.fps - 23.976) < 1e-9, "23.976 fps");

    /* patterns */
    CHECK(parse(&c, "--frames", "out/sub/smoke.####.exr", NULL) == 0, "%s", errbuf);
    CHECK(c.frames_digits == 4 && !strcmp(c.frames_dir, "out/sub") && !strcmp(c.frames_prefix, "smoke.") &&
              !strcmp(c.frames_suffix, ".exr") && c.format == IMAGE_FORMAT_EXR,
          "pattern #### .exr: dir '%s' prefix '%s' digits %d suffix '%s' format %d", c.frames_dir,
          c.frames_prefix, c.frames_digits, c.frames_suffix, (int)c.format);
    CHECK(parse(&c, "--frames", "s_%06d_x.png", NULL) == 0 && c.frames_digits == 6 &&
              !strcmp(c.frames_dir, ".") && !strcmp(c.frames_prefix, "s_") &&
              !strcmp(c.frames_suffix, "_x.png") && c.format == IMAGE_FORMAT_PNG8,
          "pattern %%06d .png: %s", errbuf);
    CHECK(parse(&c, "--frames", "/%d.png", "--format", "png16", NULL) == 0 && c.frames_digits == 1 &&
              !strcmp(c.frames_dir, "/") && c.format == IMAGE_FORMAT_PNG16, "pattern %%d: %s", errbuf);
    CHECK(parse(&c, "--frames", "out.dir", NULL) == 0 && c.frames_digits == 0 &&
              !strcmp(c.frames_dir, "out.dir"), "a directory");
    BAD("more than one", "--frames", "a.##.#.png");
    BAD("%0Nd", "--frames", "a.%5d.png");
    BAD("%0Nd", "--frames", "a.%s.png");
    BAD(".png or .exr", "--frames", "a.####.tif");
    BAD("at most 9", "--frames", "a.##########.png");
    BAD("--format is png8", "--frames", "a.####.exr", "--format", "png8");
    BAD("--format is exr", "--format", "exr", "--frames", "a.####.png");

    /* frame numbers and ranges */
    CHECK(parse(&c, "--frame-start", "1001", "--frame-range", "1003-1010", "--every", "2", "--steps",
                "18", NULL) == 0 && c.frame_start == 1001 && c.range_first == 1003 && c.range_last == 1010,
          "range: %s", errbuf);
    CHECK(parse(&c, "--frame-range", "1-1", NULL) == 0, "a one-frame range: %s", errbuf);
    BAD("beyond --steps", "--frame-start", "1001", "--frame-range", "1003-1010", "--every", "2",
        "--steps", "13");
    BAD("before the first frame", "--frame-start", "10", "--frame-range", "5-20");
    BAD("--frame-range", "--frame-range", "9-3");
    BAD("--frame-range", "--frame-range", "3");
    BAD("--frame-range", "--frame-range", "-3-5");
    BAD("--frame-range", "--frame-range", "3-");
    BAD("--frame-start", "--frame-start", "-1");
    BAD("--frame-start", "--frame-start", "100000000");

    BAD("--format", "--format", "tiff");
    BAD("--alpha", "--alpha", "pre");
    BAD("--density-scale", "--density-scale", "0");
    BAD("--density-scale", "--density-scale", "-2");
    BAD("--exr-type", "--format", "exr", "--exr-type", "double");
    BAD("--exr-compression", "--format", "exr", "--exr-compression", "b44a");
    BAD("--threads", "--threads", "0");
    BAD("--threads", "--threads", "257");
    BAD("--png-compression", "--png-compression", "10");
    BAD("--png-compression", "--png-compression", "-1");
    BAD("--png-compression", "--format", "exr", "--png-compression", "3");
    BAD("--exr-tiled", "--exr-tiled");
    BAD("--no-frames", "--no-frames", "--frames", "out");
    BAD("--no-frames", "--frames", "none", "--frames", "out");
    BAD("--fps", "--fps", "0");
    BAD("--fps", "--fps", "1001");
    BAD("--video", "--video", "a.avi");
    BAD("--video", "--video", "");
    BAD("--background", "--background", "12345");
    BAD("for EXR frames", "--exr-velocity");
}

static void test_backend(void)
{
    Config c;
    static const char *const names[] = {"auto", "compute", "fragment", "cpu"};
    static const Backend want[] = {BACKEND_AUTO, BACKEND_COMPUTE, BACKEND_FRAGMENT, BACKEND_CPU};
    for (int k = 0; k < 4; k++) {
        int r = parse(&c, "--backend", names[k], NULL);
        CHECK(r == 0 && c.backend == want[k], "--backend %s: r %d, backend %d", names[k], r, (int)c.backend);
        CHECK(strcmp(config_backend_name(want[k]), names[k]) == 0, "name of %d", k);
    }
    CHECK(parse(&c, "--cpu", NULL) == 0 && c.backend == BACKEND_CPU, "--cpu is --backend cpu");
    CHECK(parse(&c, "--cpu", "--backend", "compute", NULL) == 0 && c.backend == BACKEND_COMPUTE,
          "--cpu then --backend compute: the last wins");
    int r = parse(&c, "--backend", "gpu", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: --backend: expected auto, compute, fragment or cpu, "
                                    "got 'gpu'") == 0,
          "--backend gpu: '%s'", errbuf);
    BAD("--backend", "--backend");
}

static void test_channels(void)
{
    Config c;
    struct { const char *s; ImageChannel ch; } t[] = {
        {"r", IMAGE_CHANNEL_R}, {"g", IMAGE_CHANNEL_G},       {"b", IMAGE_CHANNEL_B},
        {"a", IMAGE_CHANNEL_A}, {"luma", IMAGE_CHANNEL_LUMA},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CHECK(parse(&c, "--channel", "r", "--channel", t[i].s, NULL) == 0 &&
                  c.load.channel == t[i].ch,
              "--channel %s", t[i].s);
    BAD("--channel", "--channel", "x");
    BAD("--channel", "--channel", "");
}

static void test_grid_and_size(void)
{
    Config c;
    int w = 0, h = 0;
    CHECK(config_parse_size("128", &w, &h) == 0 && w == 128 && h == 128, "size N");
    CHECK(config_parse_size("320x200", &w, &h) == 0 && w == 320 && h == 200, "size WxH");
    const char *bad[] = {"", "x", "128x", "x128", "12 8", " 128", "128 ", "-128", "+128",
                         "128x200x3", "0", "0x5", "1.5", "1e3", "abc", "99999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(config_parse_size(bad[i], &w, &h) == -1, "config_parse_size rejects '%s'", bad[i]);

    CHECK(parse(&c, "--grid", "128", NULL) == 0 && c.grid_w == 128 && c.grid_h == 128, "128");
    CHECK(parse(&c, "--grid", "320x200", NULL) == 0 && c.grid_w == 320 && c.grid_h == 200,
          "320x200");
    CHECK(parse(&c, "--grid", "8", NULL) == 0 && c.grid_w == 8, "8 (min)");
    CHECK(parse(&c, "--grid", "8192x2048", NULL) == 0 && c.grid_w == 8192 && c.grid_h == 2048,
          "8192x2048 (16M cells)");
    CHECK(parse(&c, "--grid", "4096", NULL) == 0 && c.grid_w == 4096, "4096 (16M cells)");

    int r = parse(&c, "--grid", "0", NULL);
    CHECK(r == -1 &&
              strcmp(errbuf, "config: --grid: expected N or WxH with sides 8..8192, got '0'") == 0,
          "grid 0 message: '%s'", errbuf);
    BAD("--grid", "--grid", "7");
    BAD("--grid", "--grid", "8193");
    BAD("--grid", "--grid", "64x7");
    BAD("--grid", "--grid", "8192x8192");  /* sides fine, too many cells */
    BAD("--grid", "--grid", "4097x4096");
    BAD("--grid", "--grid", "");
    BAD("--grid", "--grid", "abc");
    BAD("--grid", "--grid", "128x");
    BAD("--grid", "--grid", "-128");

    CHECK(parse(&c, "--size", "1x1", NULL) == 0 && c.out_w == 1 && c.out_h == 1, "size 1x1");
    CHECK(parse(&c, "--size", "16384x16", NULL) == 0 && c.out_w == 16384 && c.out_h == 16,
          "size max side");
    CHECK(parse(&c, "--size", "512", NULL) == 0 && c.out_w == 512 && c.out_h == 512, "size N");
    BAD("--size", "--size", "0x10");
    BAD("--size", "--size", "16385x10");
    BAD("--size", "--size", "10x16385");
    BAD("--size", "--size", "");
    BAD("--size", "--size", "640x360x");
}

static void test_colors(void)
{
    Config c;
    float rgb[3] = {9, 9, 9};
    CHECK(config_parse_color("ff8000", rgb) == 0 && rgb[0] == 1.0f &&
              feq(rgb[1], 128.0f / 255.0f) && rgb[2] == 0.0f,
          "ff8000");
    CHECK(config_parse_color("#00FF00", rgb) == 0 && rgb[0] == 0.0f && rgb[1] == 1.0f &&
              rgb[2] == 0.0f,
          "#00FF00");
    CHECK(config_parse_color("#000000", rgb) == 0 && rgb[0] == 0.0f && rgb[1] == 0.0f, "black");
    const char *bad[] = {"", "#", "fff", "#fff", "12345g", "1234567", "#12345", "##123456",
                         " 123456", "0x1234", "ffffff "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rgb[0] = rgb[1] = rgb[2] = 0.5f;
        CHECK(config_parse_color(bad[i], rgb) == -1 && rgb[0] == 0.5f && rgb[2] == 0.5f,
              "color '%s' rejected, output untouched", bad[i]);
    }
    CHECK(parse(&c, "--color", "102030", NULL) == 0 && feq(c.color[0], 16.0f / 255.0f) &&
              feq(c.color[1], 32.0f / 255.0f) && feq(c.color[2], 48.0f / 255.0f),
          "--color 102030");
    BAD("--color", "--color", "red");
    BAD("--color", "--color", "#1234");
}

static void test_raw(void)
{
    Config c;
    CHECK(parse(&c, "--raw", "64x32", NULL) == 0 && c.load.raw && c.load.raw_w == 64 &&
              c.load.raw_h == 32 && c.load.raw_type == IMAGE_RAW_U8,
          "--raw 64x32: %s", errbuf);
    CHECK(parse(&c, "--raw", "64x32:u8", NULL) == 0 && c.load.raw_type == IMAGE_RAW_U8, "u8");
    CHECK(parse(&c, "--raw", "100x50:u16", NULL) == 0 && c.load.raw && c.load.raw_w == 100 &&
              c.load.raw_h == 50 && c.load.raw_type == IMAGE_RAW_U16,
          "u16: %s", errbuf);
    CHECK(parse(&c, "--raw", "7x9:f32", NULL) == 0 && c.load.raw_type == IMAGE_RAW_F32 &&
              c.load.raw_w == 7 && c.load.raw_h == 9,
          "f32: %s", errbuf);
    CHECK(parse(&c, "--raw", "8x8:f32", "--channel", "g", "--invert", NULL) == 0 &&
              c.load.raw && c.load.channel == IMAGE_CHANNEL_G && c.load.invert,
          "raw keeps channel/invert: %s", errbuf);
    CHECK(parse(&c, "--channel", "b", "--raw", "8x8", NULL) == 0 &&
              c.load.channel == IMAGE_CHANNEL_B,
          "raw after channel keeps it");
    BAD("--raw", "--raw", "64x32:u32");
    BAD("--raw", "--raw", "abc");
    BAD("--raw", "--raw", "");
    BAD("--raw", "--raw", "0x32");
    BAD("--raw", "--raw", "64");
    BAD("'64x32:u32'", "--raw", "64x32:u32");
    CHECK(strstr(errbuf, "--raw: --raw") == NULL, "option named once: '%s'", errbuf);
    BAD("16385", "--raw", "16385x1");
}

static void test_bad_numbers(void)
{
    Config c;
    /* syntax, for float options */
    const char *fopts[] = {"--dt", "--vf", "--vd", "--vg", "--sigma", "--umax"};
    const char *fbad[] = {"", "1e3x", "nan", "NaN", "inf", "-inf", "infinity", " 0.1",
                          "0.1 ", "0x1p-4", "1e400", "--", ".", "e5", "1,5", "0.1.2"};
    for (size_t i = 0; i < sizeof fopts / sizeof fopts[0]; i++)
        for (size_t j = 0; j < sizeof fbad / sizeof fbad[0]; j++)
            expect_bad(__LINE__, parse(&c, fopts[i], fbad[j], NULL), fopts[i]);
    /* ranges, from method_params_check */
    int r = parse(&c, "--dt", "2", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: --dt must be in (0, 1]") == 0, "dt 2: '%s'", errbuf);
    BAD("--dt", "--dt", "0");
    BAD("--dt", "--dt", "-0.01");
    BAD("--vf", "--vf", "-1");
    BAD("--vf", "--vf", "1e5");
    BAD("--vd", "--vd", "-0.5");
    BAD("--vg", "--vg", "-1");
    BAD("--sigma", "--sigma", "0");
    BAD("--sigma", "--sigma", "1.5");
    BAD("--umax", "--umax", "0");
    BAD("--umax", "--umax", "101");
    BAD("--jacobi", "--jacobi", "-1");
    BAD("--vcycles", "--vcycles", "-1");
    BAD("--vcycles", "--vcycles", "101");
    BAD("--jacobi", "--jacobi", "10001");
    BAD("--jacobi", "--jacobi", "1.5");
    BAD("--jacobi", "--jacobi", "abc");
    BAD("--jacobi", "--jacobi", "99999999999999999999");
    BAD("--gather-iters", "--gather-iters", "-1");
    BAD("--gather-iters", "--gather-iters", "");
    /* an integer beyond int or long is out of range, and the message says the range */
    r = parse(&c, "--gather-iters", "99999999999", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: --gather-iters must be in [0 (auto), 10000]") == 0,
          "gather-iters 99999999999: '%s'", errbuf);
    r = parse(&c, "--jacobi", "-99999999999999999999999", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: --jacobi must be in [0, 10000]") == 0,
          "jacobi -99999999999999999999999: '%s'", errbuf);
    r = parse(&c, "--steps", "99999999999999999999999", NULL);
    CHECK(r == -1 && strstr(errbuf, "config: --steps: expected an integer 0..") == errbuf,
          "steps 99999999999999999999999: '%s'", errbuf);
    /* one tag, not two */
    r = parse(&c, "--window", "8x8", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: --window: expected WxH with sides 16..8192, got '8x8'") == 0,
          "window 8x8: '%s'", errbuf);
    /* integer options */
    BAD("--steps", "--steps", "-1");
    BAD("--steps", "--steps", "100000001");
    BAD("--steps", "--steps", "1e3");
    BAD("--steps", "--steps", "12x");
    BAD("--steps", "--steps", "");
    BAD("--every", "--every", "0");
    BAD("--every", "--every", "1000001");
    BAD("--every", "--every", "ten");
    BAD("--steps-per-frame", "--steps-per-frame", "0");
    BAD("--steps-per-frame", "--steps-per-frame", "1001");
    BAD("--steps-per-frame", "--steps-per-frame", "2.0");
    /* empty paths */
    BAD("--frames", "--frames", "");
    BAD("--metrics", "--metrics", "");
    BAD("--shader-dir", "--shader-dir", "");
}

static void test_bad_usage(void)
{
    Config c;
    int r = parse(&c, "--foo", NULL);
    CHECK(r == -1 && strcmp(errbuf, "config: unknown option '--foo' (see --help)") == 0,
          "unknown option: '%s'", errbuf);
    BAD("'--foo'", "--foo=3");
    BAD("'-x'", "-x");
    BAD("'-x'", "-qx");
    BAD("--cpu", "--cpu=1");           /* a value given to a flag */
    BAD("--grid", "--grid");           /* missing value */
    BAD("--dt", "--cpu", "--dt");
    BAD("ambiguous option '--s'", "--s", "1");  /* --sigma, --steps, --size, ... */
    CHECK(strstr(errbuf, "--sigma") && strstr(errbuf, "--steps-per-frame"), "candidates: '%s'",
          errbuf);
    BAD("takes no value", "--cpu=1");

    r = parse(&c, "one.png", NULL);
    CHECK(r == -1 && strncmp(errbuf, "config: ", 8) == 0 && strstr(errbuf, "both") &&
              strstr(errbuf, "one.png"),
          "one positional: '%s'", errbuf);
    BAD("one.png", "--grid", "64", "one.png");
    BAD("empty", "a.png", "b.png", "", "c.png");
    BAD("empty", "a.png", "");
    CHECK(parse(&c, "a.png", "b.png", NULL) == 0 && strcmp(c.current_path, "a.png") == 0 &&
              strcmp(c.target_path, "b.png") == 0,
          "two positionals");

    /* getopt state is reset between calls, even after a failure mid-cluster */
    CHECK(parse(&c, "-qx", NULL) == -1, "cluster fails");
    CHECK(parse(&c, "-v", NULL) == 0 && c.verbosity == 2, "next parse is clean: %s", errbuf);
    CHECK(parse(&c, "-vq", NULL) == 0 && c.verbosity == 0, "cluster -vq: last wins");
    CHECK(parse(&c, NULL) == 0 && c.verbosity == 1 && c.grid_w == 256,
          "a fresh parse starts from the defaults");

    /* short or missing error buffers */
    char small[12];
    char *argv[] = {"smokemorph", "--grid", "0", NULL};
    CHECK(config_parse(&c, 3, argv, small, sizeof small) == -1 && strlen(small) < sizeof small,
          "truncated message");
    char *argv2[] = {"smokemorph", "--grid", "0", NULL};
    CHECK(config_parse(&c, 3, argv2, NULL, 0) == -1, "NULL err buffer");
}

/* Keyframe sequences (issue 9): CURRENT TARGET1 TARGET2 ... --key-every N. */
static void test_sequences(void)
{
    Config c;
    CHECK(parse(&c, NULL) == 0 && c.nkeys == 0 && c.key_every == CONFIG_KEY_EVERY_DEFAULT &&
              !c.key_every_set,
          "no images: no keys, --key-every %ld", (long)CONFIG_KEY_EVERY_DEFAULT);
    CHECK(parse(&c, "a.png", "b.png", NULL) == 0 && c.nkeys == 1 &&
              strcmp(c.key_paths[0], "b.png") == 0 && c.target_path == c.key_paths[0],
          "two images: one key, the target");
    CHECK(parse(&c, "s.png", "k1.png", "--grid", "64", "k2.png", "--key-every", "50", "k3.png",
                NULL) == 0 &&
              c.nkeys == 3 && strcmp(c.current_path, "s.png") == 0 &&
              strcmp(c.target_path, "k1.png") == 0 && strcmp(c.key_paths[1], "k2.png") == 0 &&
              strcmp(c.key_paths[2], "k3.png") == 0 && c.key_every == 50 && c.key_every_set &&
              c.grid_w == 64 && c.steps == 0,
          "three keys among options: %s", errbuf);
    CHECK(parse(&c, "--key-every", "1", "a.png", "b.png", "a.png", NULL) == 0 && c.key_every == 1,
          "--key-every 1");
    CHECK(parse(&c, "--key-every", "100000000", "a.png", "b.png", NULL) == 0 &&
              c.key_every == CONFIG_STEPS_MAX,
          "--key-every at most --steps' maximum, one key: %s", errbuf);
    BAD("--key-every", "--key-every", "0", "a.png", "b.png", "c.png");
    BAD("--key-every", "--key-every", "-5", "a.png", "b.png", "c.png");
    BAD("--key-every", "--key-every", "ten", "a.png", "b.png", "c.png");
    BAD("--key-every", "--key-every", "100000000", "a.png", "b.png", "c.png"); /* 2e8 steps */
    CHECK(parse(&c, "--key-every", "100000000", "--steps", "10", "a.png", "b.png", "c.png", NULL) ==
              0,
          "a long sequence with --steps: %s", errbuf);
    BAD("needs a value", "a.png", "b.png", "--key-every");
    CHECK(parse(&c, "--keys", "v", NULL) == 0 && c.keys && strcmp(c.keys, "v") == 0,
          "--keys is still --keys beside --key-every");
    /* CONFIG_KEYS_MAX keys, and one more */
    static char *argv[CONFIG_KEYS_MAX + 4];
    int argc = 0;
    argv[argc++] = "smokemorph";
    for (int k = 0; k <= CONFIG_KEYS_MAX; k++) argv[argc++] = k % 2 ? "a.png" : "b.png";
    CHECK(config_parse(&c, argc, argv, errbuf, sizeof errbuf) == 0 && c.nkeys == CONFIG_KEYS_MAX,
          "%d keys: %s", CONFIG_KEYS_MAX, errbuf);
    argv[argc++] = "extra.png";
    expect_bad(__LINE__, config_parse(&c, argc, argv, errbuf, sizeof errbuf), "extra.png");
}

static const char *all_options[] = {
    "--key-every", "--cpu", "--headless", "--gl-info", "--shader-dir", "--grid", "--dt", "--vf", "--vd", "--vg",
    "--sigma", "--jacobi", "--gather-iters", "--umax", "--no-gather", "--force", "--vb", "--drift", "--drift-balance", "--drift-max", "--ease-force", "--ease-gather", "--steps", "--frames",
    "--every", "--metrics", "--raw", "--channel", "--invert", "--no-mass-match", "--color",
    "--size", "--steps-per-frame", "-q", "--quiet", "-v", "--verbose", "--no-progress", "-h",
    "--help", "--version", "--format", "--alpha", "--density-scale", "--exr-type",
    "--exr-compression", "--exr-velocity", "--fps", "--frame-start", "--frame-range", "--video",
    "--background",
};

static void check_usage_text(const char *text)
{
    CHECK(strstr(text, "usage: smokemorph [options] [CURRENT TARGET [TARGET ...]]") != NULL, "usage line");
    for (size_t i = 0; i < sizeof all_options / sizeof all_options[0]; i++)
        CHECK(strstr(text, all_options[i]) != NULL, "usage lists %s", all_options[i]);
    /* defaults are printed from the actual defaults */
    CHECK(strstr(text, "default 256x256") != NULL, "grid default");
    CHECK(strstr(text, "default 0.01)") != NULL, "dt default");
    {
        SolverParams dp;
        method_params_default(&dp);
        char want[64];
        snprintf(want, sizeof want, "default %g)", (double)dp.sigma);
        CHECK(strstr(text, want) != NULL, "sigma default: '%s' not in usage", want);
    }
    {
        SolverParams dp;
        method_params_default(&dp);
        char want[64];
        snprintf(want, sizeof want, "0..10000 (default %d)", dp.jacobi);
        CHECK(strstr(text, want) != NULL, "jacobi default: '%s' not in usage", want);
        snprintf(want, sizeof want, "0..100 (default %d)", dp.vcycles);
        CHECK(strstr(text, want) != NULL, "vcycles default: '%s' not in usage", want);
    }
    CHECK(strstr(text, "default ffffff") != NULL, "colour default");
    CHECK(strstr(text, "default 10)") != NULL, "every default");
    CHECK(strstr(text, "within 3% of the") != NULL && strstr(text, "(at most 10000)") != NULL,
          "headless steps default: until the morph arrives or settles");
    CHECK(strstr(text, "smokemorph-out") != NULL, "headless output dir");
    CHECK(strstr(text, "bundled") != NULL, "bundled targets mentioned");
    CHECK(strstr(text, "Examples:") != NULL, "examples");
}

static void test_usage(void)
{
    FILE *f = tmpfile();
    CHECK(f != NULL, "tmpfile");
    if (!f) return;
    config_usage(f, "/usr/local/bin/smokemorph");
    long n = ftell(f);
    rewind(f);
    static char text[32768];
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    CHECK(n > 0 && (size_t)n == got, "usage fits the buffer (%ld bytes)", n);
    check_usage_text(text);
    /* no line wider than 100 columns */
    size_t widest = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        if (len > widest) widest = len;
        p += len + (p[len] == '\n');
    }
    CHECK(widest <= 100, "widest usage line %zu", widest);
}

static void test_help_version(void)
{
    static char out[32768];
    int r = parse_captured(out, sizeof out, "--help");
    CHECK(r == 1, "--help returns 1 (%d)", r);
    check_usage_text(out);
    r = parse_captured(out, sizeof out, "-h");
    CHECK(r == 1 && strstr(out, "--steps-per-frame") != NULL, "-h");
    r = parse_captured(out, sizeof out, "--version");
    CHECK(r == 1 && strcmp(out, "smokemorph " SMOKEMORPH_VERSION "\n") == 0, "--version: '%s'",
          out);
    r = parse_captured(out, sizeof out, "--hel");
    CHECK(r == 1 && strstr(out, "usage:") != NULL, "unique prefix --hel = --help");
    Config c;
    BAD("ambiguous", "--he");          /* --help or --headless */
}

/* The settings table (settings.def): every parameter reachable by its name
 * and its option, its default through its own option gives the default
 * back, a value out of its range is refused naming the option, and the
 * order of the checkpoint's slots is a permutation. */
static void test_settings_table(void)
{
    SolverParams d;
    method_params_default(&d);
    bool seen[METHOD_PARAM_COUNT] = {false};
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) {
        const MethodParamInfo *in = &method_param_info[k];
        CHECK(in->name && !seen[k], "slot %d: a name, once", k);
        seen[k] = true;
        CHECK(method_param_index(in->name) == k, "%s: found by its name", in->name);
        if (!in->option || strncmp(in->option, "no-", 3) == 0) continue;
        CHECK(method_param_index(in->option) == k, "--%s: found by its option", in->option);
        char text[64];
        double v = method_param_get(&d, k);
        if (in->kind == 'e') snprintf(text, sizeof text, "%s", v ? "fattal" : "balance");
        else if (in->autov && v == SETTING_AUTO) snprintf(text, sizeof text, "auto");
        else snprintf(text, sizeof text, "%.9g", v);
        Config c;
        config_defaults(&c);
        c.params.vf = 123.0f; /* some other member, to see that only this one is set */
        int r = config_option(&c, in->option, text, errbuf, sizeof errbuf);
        CHECK(r == 0 && method_param_get(&c.params, k) == v && config_given(&c, in->option),
              "--%s %s: %d '%s'", in->option, text, r, errbuf);
        if (in->kind == 'f' || in->kind == 'i') {
            char opt[64];
            snprintf(opt, sizeof opt, "--%s", in->option);
            r = parse(&c, opt, "-5", NULL);
            CHECK(r == -1 && strstr(errbuf, opt) && strstr(errbuf, "must be"),
                  "%s -5 refused: %d '%s'", opt, r, errbuf);
        }
    }
    /* the defaults in --help are the table's */
    static char help[32768];
    CHECK(parse_captured(help, sizeof help, "--help") == 1, "--help");
    CHECK(strstr(help, "  --dt T                time step, (0, 1] (default 0.01)\n") &&
              strstr(help, "  --swirl E             vorticity confinement") &&
              strstr(help, "  -q, --quiet           errors only") && !strstr(help, "--no-frames ") &&
              !strstr(help, "--eps"),
          "--help from the table:\n%s", help);
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_every_option);
    RUN(test_output_options);
    RUN(test_backend);
    RUN(test_channels);
    RUN(test_grid_and_size);
    RUN(test_colors);
    RUN(test_raw);
    RUN(test_bad_numbers);
    RUN(test_bad_usage);
    RUN(test_sequences);
    RUN(test_usage);
    RUN(test_help_version);
    RUN(test_settings_table);
    return check_done();
}
