/* config: defaults, getopt_long parsing, validation and --help.
 * Never touches GL. Every number is parsed strictly (whole string, finite,
 * in range); every error is one line "config: ..." naming the option. */
#include "config.h"
#include "budget.h"
#include "viewfield.h"
#include "compare_spec.h"
#include "exr.h"
#include "pool.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#ifndef SMOKEMORPH_VERSION
#define SMOKEMORPH_VERSION "unknown"
#endif

#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
    defined(__OpenBSD__) || defined(__DragonFly__)
#define CONFIG_HAVE_OPTRESET 1
extern int optreset;
#endif

#define EVERY_MAX 1000000
#define MAX_IMAGE_MB_MAX 1048576 /* 1 TiB */
#define SPF_MAX 1000

/* Long-only options get values above any char. */
enum {
    OPT_CPU = 256,
    OPT_KEY_EVERY,
    OPT_BACKEND,
    OPT_HEADLESS,
    OPT_GL_INFO,
    OPT_SHADER_DIR,
    OPT_GRID,
    OPT_DT,
    OPT_VF,
    OPT_VD,
    OPT_VG,
    OPT_SIGMA,
    OPT_JACOBI,
    OPT_GATHER_ITERS,
    OPT_UMAX,
    OPT_NO_GATHER,
    OPT_FORCE,
    OPT_VB,
    OPT_DRIFT,
    OPT_DRIFT_MAX,
    OPT_DRIFT_BALANCE,
    OPT_EASE_FORCE,
    OPT_EASE_GATHER,
    OPT_ARRIVE,
    OPT_SWIRL,
    OPT_STEPS,
    OPT_FRAMES,
    OPT_EVERY,
    OPT_METRICS,
    OPT_RAW,
    OPT_CHANNEL,
    OPT_INVERT,
    OPT_NO_MASS_MATCH,
    OPT_COLOR,
    OPT_SIZE,
    OPT_STEPS_PER_FRAME,
    OPT_NO_PROGRESS,
    OPT_SCREENSHOT,
    OPT_VCYCLES,
    OPT_WINDOW,
    OPT_KEYS,
    OPT_VIEW,
    OPT_NO_HUD,
    OPT_VERSION,
    OPT_MAX_IMAGE_MB, /* issue 10: input safety */
    OPT_FORMAT,
    OPT_ALPHA,
    OPT_DENSITY_SCALE,
    OPT_EXR_TYPE,
    OPT_EXR_COMPRESSION,
    OPT_EXR_VELOCITY,
    OPT_FPS,
    OPT_FRAME_START,
    OPT_FRAME_RANGE,
    OPT_VIDEO,
    OPT_BACKGROUND,
    OPT_CHECKPOINT_EVERY,
    OPT_CHECKPOINT_DIR,
    OPT_RESUME,
    OPT_SIDECAR,
    OPT_PROGRESS_FORMAT,
    OPT_SCENE, /* issue 9: scene files */
    OPT_DUMP_SCENE,
    OPT_COMPARE, /* issue 11: two settings side by side */
    OPT_COMPARE_PRESET,
    OPT_MAX_MEMORY, /* issue 21: never touch what isn't ours */
    OPT_OVERWRITE,
    OPT_ALLOW_SCENE_OUTPUTS,
    OPT_THREADS, /* issue 22: frames at the simulation's speed */
    OPT_NO_FRAMES,
    OPT_PNG_COMPRESSION,
    OPT_EXR_TILED,
    OPT_RECORD, /* issue 24: the classroom on a projector */
    OPT_LESSON,
};

static const struct option long_options[] = {
    {"cpu", no_argument, NULL, OPT_CPU},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"headless", no_argument, NULL, OPT_HEADLESS},
    {"gl-info", no_argument, NULL, OPT_GL_INFO},
    {"shader-dir", required_argument, NULL, OPT_SHADER_DIR},
    {"grid", required_argument, NULL, OPT_GRID},
    {"dt", required_argument, NULL, OPT_DT},
    {"vf", required_argument, NULL, OPT_VF},
    {"vd", required_argument, NULL, OPT_VD},
    {"vg", required_argument, NULL, OPT_VG},
    {"sigma", required_argument, NULL, OPT_SIGMA},
    {"jacobi", required_argument, NULL, OPT_JACOBI},
    {"vcycles", required_argument, NULL, OPT_VCYCLES},
    {"gather-iters", required_argument, NULL, OPT_GATHER_ITERS},
    {"umax", required_argument, NULL, OPT_UMAX},
    {"screenshot", required_argument, NULL, OPT_SCREENSHOT},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"view", required_argument, NULL, OPT_VIEW},
    {"no-hud", no_argument, NULL, OPT_NO_HUD},
    {"no-gather", no_argument, NULL, OPT_NO_GATHER},
    {"force", required_argument, NULL, OPT_FORCE},
    {"vb", required_argument, NULL, OPT_VB},
    {"drift", required_argument, NULL, OPT_DRIFT},
    {"drift-max", required_argument, NULL, OPT_DRIFT_MAX},
    {"drift-balance", required_argument, NULL, OPT_DRIFT_BALANCE},
    {"ease-force", required_argument, NULL, OPT_EASE_FORCE},
    {"ease-gather", required_argument, NULL, OPT_EASE_GATHER},
    {"arrive", required_argument, NULL, OPT_ARRIVE},
    {"swirl", required_argument, NULL, OPT_SWIRL},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"key-every", required_argument, NULL, OPT_KEY_EVERY},
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"every", required_argument, NULL, OPT_EVERY},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"raw", required_argument, NULL, OPT_RAW},
    {"channel", required_argument, NULL, OPT_CHANNEL},
    {"invert", no_argument, NULL, OPT_INVERT},
    {"no-mass-match", no_argument, NULL, OPT_NO_MASS_MATCH},
    {"color", required_argument, NULL, OPT_COLOR},
    {"size", required_argument, NULL, OPT_SIZE},
    {"steps-per-frame", required_argument, NULL, OPT_STEPS_PER_FRAME},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"max-image-mb", required_argument, NULL, OPT_MAX_IMAGE_MB},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"density-scale", required_argument, NULL, OPT_DENSITY_SCALE},
    {"exr-type", required_argument, NULL, OPT_EXR_TYPE},
    {"exr-compression", required_argument, NULL, OPT_EXR_COMPRESSION},
    {"exr-velocity", no_argument, NULL, OPT_EXR_VELOCITY},
    {"fps", required_argument, NULL, OPT_FPS},
    {"frame-start", required_argument, NULL, OPT_FRAME_START},
    {"frame-range", required_argument, NULL, OPT_FRAME_RANGE},
    {"video", required_argument, NULL, OPT_VIDEO},
    {"background", required_argument, NULL, OPT_BACKGROUND},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"checkpoint-dir", required_argument, NULL, OPT_CHECKPOINT_DIR},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"sidecar", required_argument, NULL, OPT_SIDECAR},
    {"progress-format", required_argument, NULL, OPT_PROGRESS_FORMAT},
    {"scene", required_argument, NULL, OPT_SCENE},
    {"dump-scene", no_argument, NULL, OPT_DUMP_SCENE},
    {"compare", required_argument, NULL, OPT_COMPARE},
    {"compare-preset", required_argument, NULL, OPT_COMPARE_PRESET},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"overwrite", no_argument, NULL, OPT_OVERWRITE},
    {"allow-scene-outputs", no_argument, NULL, OPT_ALLOW_SCENE_OUTPUTS},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"no-frames", no_argument, NULL, OPT_NO_FRAMES},
    {"png-compression", required_argument, NULL, OPT_PNG_COMPRESSION},
    {"exr-tiled", no_argument, NULL, OPT_EXR_TILED},
    {"record", required_argument, NULL, OPT_RECORD},
    {"lesson", required_argument, NULL, OPT_LESSON},
    {NULL, 0, NULL, 0},
};

/* '-': non-options come back in order as code 1, so images may sit anywhere
 * whatever POSIXLY_CORRECT says; ':': a missing argument returns ':'. */
static const char short_options[] = "-:hqv";

int config_every(double fps, float dt)
{
    double k = floor(1.0 / (fps * (double)dt) + 0.5);
    return k < 1.0 ? 1 : (k > EVERY_MAX ? EVERY_MAX : (int)k);
}

void config_defaults(Config *c)
{
    memset(c, 0, sizeof *c);
    c->current_path = NULL;
    c->target_path = NULL;
    c->load.channel = IMAGE_CHANNEL_LUMA;
    c->load.invert = false;
    c->load.raw = false;
    c->load.raw_type = IMAGE_RAW_U8;
    c->mass_match = true;

    c->grid_w = c->grid_h = 256;
    method_params_default(&c->params);
    c->steps = 0;
    c->nkeys = 0;
    c->key_every = CONFIG_KEY_EVERY_DEFAULT;

    c->frames_dir = NULL;
    c->png_compression = IMAGE_PNG_LEVEL_DEFAULT;
    c->fps = CONFIG_FPS_DEFAULT;
    c->every = config_every(c->fps, c->params.dt);
    c->frame_start = 1;
    c->range_first = c->range_last = -1;
    c->metrics_path = NULL;
    c->color[0] = c->color[1] = c->color[2] = 1.0f;
    c->out_w = c->out_h = 0;

    c->backend = BACKEND_AUTO;
    c->headless = false;
    c->gl_info = false;
    c->shader_dir = NULL;
    c->steps_per_frame = 2;
    c->win_w = 768;
    c->win_h = 768;
    c->verbosity = 1;
    c->progress = true;
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(err, errlen, "config: ");
    if (n >= 0 && (size_t)n < errlen) vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* one line, whatever the arguments hold (a newline in an option: fuzz_config) */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

/* ---------------------------------------------------------------------- */
/* Strict number parsing                                                  */

/* A decimal number: optional sign, digits with at most one '.', optional
 * exponent. Rejects "", " 1", "1e3x", "nan", "inf", "0x10". */
static bool parse_double(const char *s, double *out)
{
    if (!s || !*s) return false;
    for (const char *q = s; *q; q++)
        if (!strchr("0123456789+-.eE", *q)) return false;
    errno = 0;
    char *end = NULL;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(d)) return false;
    *out = d;
    return true;
}

/* A decimal integer in [lo, hi]: optional sign, digits only. */
static bool parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return false;
    const char *q = s;
    if (*q == '+' || *q == '-') q++;
    if (!*q) return false;
    for (; *q; q++)
        if (*q < '0' || *q > '9') return false;
    char *end = NULL;
    long v = strtol(s, &end, 10); /* saturates: beyond long is beyond any range asked for */
    if (end == s || *end != '\0') return false;
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* Unsigned decimal digits only, 1..1e6 (enough for any size, no overflow). */
static bool parse_side(const char *s, size_t n, int *out)
{
    if (n == 0 || n > 7) return false;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 1000000) return false;
    *out = (int)v;
    return true;
}

int config_parse_size(const char *s, int *w, int *h)
{
    if (!s || !*s) return -1;
    const char *x = strchr(s, 'x');
    if (!x) x = strchr(s, 'X');
    int a, b;
    if (!x) {
        if (!parse_side(s, strlen(s), &a)) return -1;
        b = a;
    } else {
        if (!parse_side(s, (size_t)(x - s), &a)) return -1;
        if (!parse_side(x + 1, strlen(x + 1), &b)) return -1;
    }
    *w = a;
    *h = b;
    return 0;
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

int config_parse_color(const char *s, float rgb[3])
{
    if (!s) return -1;
    if (*s == '#') s++;
    if (strlen(s) != 6) return -1;
    float tmp[3];
    for (int k = 0; k < 3; k++) {
        int hi = hex_digit(s[2 * k]), lo = hex_digit(s[2 * k + 1]);
        if (hi < 0 || lo < 0) return -1;
        tmp[k] = (float)(hi * 16 + lo) / 255.0f;
    }
    memcpy(rgb, tmp, sizeof tmp);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Usage                                                                  */

static const char *channel_name(ImageChannel ch)
{
    switch (ch) {
    case IMAGE_CHANNEL_R: return "r";
    case IMAGE_CHANNEL_G: return "g";
    case IMAGE_CHANNEL_B: return "b";
    case IMAGE_CHANNEL_A: return "a";
    case IMAGE_CHANNEL_LUMA: break;
    }
    return "luma";
}

static const char *prog_name(const char *prog)
{
    if (!prog || !*prog) return "smokemorph";
    const char *slash = strrchr(prog, '/');
    return slash && slash[1] ? slash + 1 : prog;
}

static int color_byte(float f)
{
    float v = f * 255.0f + 0.5f;
    return v < 0.0f ? 0 : (v > 255.0f ? 255 : (int)v);
}

static const char *format_name(ImageFormat f)
{
    return f == IMAGE_FORMAT_EXR ? "exr" : (f == IMAGE_FORMAT_PNG16 ? "png16" : "png8");
}

/* in ImageExrCompression's order */


/* Every default printed here comes from config_defaults(). */
void config_usage(FILE *out, const char *prog)
{
    Config d;
    config_defaults(&d);
    const SolverParams *p = &d.params;
    const char *pn = prog_name(prog);

    fprintf(out,
        "%s: morph one shape of smoke into another on the GPU\n"
        "(Fattal & Lischinski, target-driven smoke animation).\n"
        "\n"
        "usage: %s [options] [CURRENT TARGET [TARGET ...]]\n"
        "\n"
        "CURRENT and TARGET are density images (PNG, or headerless RAW with --raw).\n"
        "With several TARGETs (keys), the smoke is driven to each in turn, for\n"
        "--key-every steps each; velocity and density carry over from key to key.\n"
        "With no images, two bundled targets are used. With no display, it runs\n"
        "headless and writes frames to ./%s/.\n",
        pn, pn, CONFIG_DEFAULT_OUT_DIR);

    fprintf(out,
        "\n"
        "Run mode:\n"
        "  --backend B           auto, compute, fragment or cpu (default auto: compute\n"
        "                        where the GPU has OpenGL 4.3, else fragment; cpu on a\n"
        "                        software renderer (llvmpipe) when headless)\n"
        "  --cpu                 the CPU reference solver: --backend cpu\n"
        "  --headless            no window: run --steps steps and write frames\n"
        "  --gl-info             print the OpenGL path, renderer and version a run would use\n"
        "  --shader-dir DIR      load shaders from DIR (default: built-in search path)\n"
        "  --steps-per-frame N   simulation steps per displayed frame, 1..%d (default %d)\n"
        "  --keys STR            window: press these keys, one per frame, at the start\n"
        "                        (e.g. 'v' to start in the target view; default none)\n"
        "  --view NAME           window: the first view, one of density, target, blurred,\n"
        "                        velocity, speed, vorticity, pressure, divergence, force,\n"
        "                        gathering, fig2 ('v' cycles them; default density)\n"
        "  --no-hud              window: start with the HUD hidden ('i' shows it)\n"
        "  --record FILE.mp4     window: record what the window shows, HUD included, at\n"
        "                        the window's size, a video frame a displayed frame at\n"
        "                        --fps ('R' starts and stops a recording; default none)\n"
        "  --lesson FILE         window: a prepared lesson (JSON: steps, each a view,\n"
        "                        parameters, a caption and steps to run); space goes on\n"
        "                        to the next step (default none)\n"
        "  --screenshot FILE     after --steps steps, save the window as PNG and quit\n"
        "                        (headless: the last frame, as --frames writes it)\n"
        "  --window WxH          initial window size, sides 16..8192 (default %dx%d)\n"
        "  --compare SETTINGS    two runs side by side from the same start: A with the\n"
        "                        options given, B with SETTINGS changed: NAME=VALUE,\n"
        "                        comma-separated (e.g. 'gather=0', 'vcycles=0,jacobi=40',\n"
        "                        'force=fattal'); a window splits in two, A left; headless,\n"
        "                        --metrics gets both runs' columns and --frames both side\n"
        "                        by side (default: one run)\n"
        "  --compare-preset P    the same with a preset: gather (on | off), jacobi\n"
        "                        (multigrid | Jacobi only, 40 iterations) or force\n"
        "                        (balance | Fattal's)\n",
        SPF_MAX, d.steps_per_frame, d.win_w, d.win_h);

    fprintf(out,
        "\n"
        "Simulation:\n"
        "  --grid N|WxH          grid size, sides %d..%d, at most %ld cells (default %dx%d)\n"
        "  --steps N             steps to run, 0..%ld; 0 = the mode's default:\n"
        "                        headless, until the error is within 3%% of the\n"
        "                        target or has stopped falling (at most %ld),\n"
        "                        with several TARGETs every key (TARGETs x\n"
        "                        --key-every); in a window, until quit (default %ld)\n"
        "  --key-every N         steps per key with several TARGETs: key k is the\n"
        "                        goal for steps (k-1)N+1..kN, the last key after\n"
        "                        that, 1..%ld (default %ld)\n"
        "  --dt T                time step, (0, 1] (default %g)\n"
        "  --vf F                driving-force coefficient (default %g)\n"
        "  --vd D                momentum damping (default %g)\n"
        "  --vg G                gathering coefficient (default %g)\n"
        "  --sigma S             blur width, domain units, (0, 1] (default %g)\n"
        "  --vcycles N           pressure multigrid V-cycles per step, 0..100 (default %d)\n"
        "  --jacobi N            pressure Jacobi iterations per step, after the\n"
        "                        V-cycles, 0..10000 (default %d)\n"
        "  --gather-iters N      implicit gathering iterations per step, 0 = auto:\n"
        "                        max(4, grid side/64); odd N runs N+1 (default %d)\n"
        "  --umax U              speed limit for density transport (default %g)\n"
        "  --no-gather           turn gathering off (default %s)\n"
        "  --force balance|fattal  driving force: 'balance' adds the pull of the\n"
        "                        target's unfilled parts, so smoke splits between\n"
        "                        separate parts; 'fattal' is the paper's method as\n"
        "                        published: its force and gathering, and (unless\n"
        "                        given) no drift and no easing (default %s)\n"
        "  --vb B                balance force strength, 0..100000 (default %g)\n"
        "  --drift K             gathering drift: faint smoke drifts up the ratio of\n"
        "                        the blurred target to the blurred smoke, domain\n"
        "                        units^2/time, 0 = off, 0..10000 (default %g)\n"
        "  --drift-balance K     balance drift: smoke also drifts from over-full\n"
        "                        parts to unfilled ones, compressing or spreading\n"
        "                        it (the divergence-free flow can't), 1/time,\n"
        "                        0 = off, 0..10000; balance force only (default %g)\n"
        "  --drift-max W         drift speed limit, 0..100; flow and drift together\n"
        "                        stay within --umax (default %g)\n"
        "  --ease-force T        the driving force eases in over T time units,\n"
        "                        0 = at once, 0..10000 (default %g)\n"
        "  --ease-gather T       untimed (--arrive 0, --force fattal): gathering and\n"
        "                        drift ease in over T, 0..10000 (default %g)\n"
        "  --arrive S            the morph reaches its target S seconds (time units)\n"
        "                        after it is set: the flow alone carries the smoke\n"
        "                        for the first %.0f%% of S, then the gathering and the\n"
        "                        drift sharpen it; keys arrive at their steps;\n"
        "                        0 = untimed, 0..10000 (default %g)\n"
        "  --swirl E             vorticity confinement: travelling smoke keeps its\n"
        "                        small swirls, 0 = off, 0..100 (default %g)\n",
        CONFIG_GRID_MIN, CONFIG_GRID_MAX, CONFIG_MAX_CELLS, d.grid_w, d.grid_h,
        CONFIG_STEPS_MAX, CONFIG_HEADLESS_MAX_STEPS, d.steps, CONFIG_STEPS_MAX, d.key_every,
        (double)p->dt, (double)p->vf, (double)p->vd, (double)p->vg, (double)p->sigma,
        p->vcycles, p->jacobi, p->gather_iters, (double)p->umax, p->gather ? "on" : "off",
        p->force == SOLVER_FORCE_FATTAL ? "fattal" : "balance", (double)p->vb, (double)p->vk,
        (double)p->vw, (double)p->wmax, (double)p->framp, (double)p->tramp,
        100.0 * METHOD_ARRIVE_ON, (double)p->arrive, (double)p->swirl);

    fprintf(out,
        "\n"
        "Input:\n"
        "  --raw WxH[:u8|u16|f32]  read both images as headerless RAW (default: PNG; type u8)\n"
        "  --channel r|g|b|a|luma  channel that becomes density (default %s)\n"
        "  --invert              density = 1 - value (default %s)\n"
        "  --no-mass-match       do not scale the target to the current mass (default: %s)\n"
        "  --max-image-mb N      memory one image's decode may take, in MiB; a larger\n"
        "                        image is refused before it is read, 1..%d (default %d)\n"
        "  --max-memory MB       memory the whole run may take (images, fields, frames\n"
        "                        in flight), in MiB; a run that needs more is refused\n"
        "                        at start, naming its biggest item, %ld..%ld\n"
        "                        (default %d%% of this machine's memory)\n"
        "  --scene FILE          a scene (JSON): the settings, the start image, the\n"
        "                        keys with their own steps and parameters, moving\n"
        "                        targets and sources; options given here override\n"
        "                        the scene's (default: none; docs/SCENES.md)\n"
        "  --dump-scene          print this run's scene (the scene with the options\n"
        "                        given, or the images and options given) as JSON\n"
        "                        on stdout and exit\n",
        channel_name(d.load.channel), d.load.invert ? "on" : "off",
        d.mass_match ? "matched" : "not matched", MAX_IMAGE_MB_MAX, IMAGE_DEFAULT_MAX_MB,
        BUDGET_MB_MIN, BUDGET_MB_MAX, BUDGET_DEFAULT_PERCENT);

    fprintf(out,
        "\n"
        "Output:\n"
        "  --frames DIR          write numbered frames into DIR (DIR/frame_00001.png), or\n"
        "                        name them by a PATTERN: out/smoke.####.exr or\n"
        "                        out/smoke.%%04d.png (default: none; ./%s/\n"
        "                        when headless); 'none' (or --no-frames): a\n"
        "                        headless run with metrics only, for timing and farms\n"
        "  --every K             write every K-th step, 1..%d (default: from --fps, %d\n"
        "                        at the default --fps and --dt)\n"
        "  --metrics FILE        write per-step metrics (mass, error, ...) to FILE\n"
        "  --color RRGGBB        smoke colour, also #RRGGBB (default %02x%02x%02x)\n"
        "  --size WxH            output frame size, sides 1..%d (default: the grid size)\n"
        "  --format F            png8, png16 or exr (default %s; exr for a PATTERN ending .exr)\n"
        "  --alpha A             PNG and .mov alpha: straight or premultiplied\n"
        "                        (default %s); EXR is premultiplied, linear light\n"
        "  --density-scale S     alpha = density x S, clamped to 1; 'auto': S = 1, or\n"
        "                        less so that the densest cell of the start or the\n"
        "                        (mass-matched) target is alpha 1 (default auto);\n"
        "                        EXR also keeps the raw density in density.smoke\n"
        "  --exr-type T          EXR samples: half or float (default %s)\n"
        "  --png-compression L   PNG zlib level, 0 (none) to 9 (smallest) (default %d:\n"
        "                        fast, files a little larger)\n"
        "  --exr-compression C   zip, zips (one line a chunk), piz, rle, pxr24 (lossy\n"
        "                        for float), b44 (lossy), dwaa (lossy; OpenEXR 3.2\n"
        "                        and later) or none (default %s)\n"
        "  --exr-tiled           EXR: 64x64 tiles instead of scanlines (huge frames\n"
        "                        read in parts)\n"
        "  --exr-velocity        EXR: add velocity.x and velocity.y (pixels per frame)\n"
        "  --fps F               frames per second, (0, %g] (default %g); a second is one\n"
        "                        unit of simulated time: without --every, frames are\n"
        "                        round(1 / (fps x dt)) steps apart\n"
        "  --frame-start N       number of the first frame (step 0), 0..%ld (default %ld)\n"
        "  --frame-range A-B     write frames A to B only, and stop after B (default: all)\n"
        "  --video FILE          also make a video through ffmpeg: FILE.mp4 (H.264 over\n"
        "                        --background) or FILE.mov (ProRes 4444 with alpha)\n"
        "  --background RRGGBB   .mp4 and the ffmpeg hint: colour under the smoke\n"
        "                        (default %02x%02x%02x)\n"
        "  --overwrite           replace files in the way of the frames or the metrics\n"
        "                        that an earlier run did not write (default: such a\n"
        "                        file stops the run; an input is never replaced)\n"
        "  --allow-scene-outputs let a scene's frames, metrics and video go outside\n"
        "                        the scene's folder (default: refused)\n",
        CONFIG_DEFAULT_OUT_DIR, EVERY_MAX, d.every,
        color_byte(d.color[0]), color_byte(d.color[1]), color_byte(d.color[2]),
        IMAGE_MAX_SIDE, format_name(d.format), d.alpha == IMAGE_ALPHA_STRAIGHT ? "straight" :
        "premultiplied", d.exr_pixel == IMAGE_EXR_FLOAT ? "float" : "half", d.png_compression,
        exr_compression_name(d.exr_compression), CONFIG_FPS_MAX, d.fps, CONFIG_FRAME_MAX,
        d.frame_start, color_byte(d.background[0]), color_byte(d.background[1]),
        color_byte(d.background[2]));

    fprintf(out,
        "\n"
        "Render farms:\n"
        "  --checkpoint-every N  headless: every N steps, write the whole state to\n"
        "                        checkpoint_NNNNNN.smc (NNNNNN the step), 1..%ld\n"
        "                        (default: none)\n"
        "  --checkpoint-dir DIR  write checkpoints into DIR (default: the frames\n"
        "                        directory, else the current one)\n"
        "  --resume FILE         go on from a checkpoint: its grid, images, state and\n"
        "                        parameters (a simulation option given overrides\n"
        "                        its value, and is named); --steps and --every\n"
        "                        default to its run's; frames from its step on;\n"
        "                        a sequence's checkpoint needs its CURRENT and\n"
        "                        TARGETs again (--key-every defaults to its run's),\n"
        "                        a scene's its --scene FILE (each field's parameters\n"
        "                        as they were)\n"
        "  --sidecar FILE        the run's JSON record: version, backend, renderer,\n"
        "                        parameters, per-frame metrics (default: run.json\n"
        "                        in the frames directory)\n"
        "  --threads N           frame writer threads, 1..%d (default: the cores\n"
        "                        this process may use); frames are written in\n"
        "                        parallel and appear in order, each whole\n",
        CONFIG_STEPS_MAX, POOL_MAX_THREADS);

    fprintf(out,
        "\n"
        "Messages:\n"
        "  -q, --quiet           errors only, no progress line\n"
        "  -v, --verbose         more detail\n"
        "  --no-progress         no progress line on stderr (default: %s)\n"
        "  --progress-format F   auto (a bar on a terminal, else plain lines) or json:\n"
        "                        one object a line on stderr with step, total,\n"
        "                        frames, elapsed, eta and error, shown even with\n"
        "                        --quiet (default %s)\n"
        "  -h, --help            print this help and exit\n"
        "  --version             print the version and exit\n",
        d.progress ? "shown" : "hidden",
        d.progress_format == CONFIG_PROGRESS_JSON ? "json" : "auto");

    fprintf(out,
        "\n"
        "Examples:\n"
        "  %s                                  bundled shapes, in a window\n"
        "  %s --grid 512 circle.png star.png\n"
        "  %s --headless --steps 600 --frames out --every 5 --color '#ffa040' a.png b.png\n"
        "  %s --headless --steps 600 --frames out --checkpoint-every 100 a.png b.png\n"
        "  %s --headless --steps 600 --frames out --resume out/checkpoint_000300.smc\n"
        "\n"
        "Exit status: 0 done; 1 an error (a bad file, no GL, a full disk, ...); 2 bad\n"
        "usage (an unknown option, a value out of range); 128+N stopped by signal N\n"
        "(130 Ctrl-C, 143 SIGTERM).\n",
        pn, pn, pn, pn, pn);
}

/* ---------------------------------------------------------------------- */
/* Parsing                                                                */

/* The option getopt just refused, as the user wrote it ("--foo", "-x"). */
static void offending_option(int argc, char **argv, char *buf, size_t n)
{
    if (optopt > 0 && optopt < 256) {
        snprintf(buf, n, "-%c", optopt);
        return;
    }
    if (optopt >= 256) {
        for (const struct option *o = long_options; o->name; o++)
            if (o->val == optopt) {
                snprintf(buf, n, "--%s", o->name);
                return;
            }
    }
    const char *a = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
    size_t len = strcspn(a, "=");
    if (len >= n) len = n - 1;
    memcpy(buf, a, len);
    buf[len] = '\0';
}

/* getopt_long returned '?': an unknown or ambiguous option, or a value
 * given to a flag ("--cpu=1": glibc then sets optopt to the flag's val). */
static void refused_option(int argc, char **argv, char *err, size_t errlen)
{
    char name[64];
    offending_option(argc, argv, name, sizeof name);
    if (optopt >= 256) {
        set_err(err, errlen, "%s takes no value (see --help)", name);
        return;
    }
    if (strncmp(name, "--", 2) == 0 && name[2]) {
        char cands[256] = "";
        int n = 0;
        size_t len = strlen(name + 2);
        for (const struct option *o = long_options; o->name; o++) {
            if (strncmp(o->name, name + 2, len) != 0) continue;
            size_t used = strlen(cands);
            snprintf(cands + used, sizeof cands - used, "%s--%s", n ? ", " : "", o->name);
            n++;
        }
        if (n >= 2) {
            set_err(err, errlen, "ambiguous option '%s': could be %s", name, cands);
            return;
        }
    }
    set_err(err, errlen, "unknown option '%s' (see --help)", name);
}

static void reset_getopt(void)
{
#if defined(__GLIBC__)
    optind = 0;   /* glibc: 0 re-initializes its internal state fully */
#else
    optind = 1;
#endif
#ifdef CONFIG_HAVE_OPTRESET
    optreset = 1;
#endif
    opterr = 0;
}

static int float_opt(const char *name, const char *arg, float *dst, char *err, size_t errlen)
{
    double d;
    if (!parse_double(arg, &d) || fabs(d) > (double)FLT_MAX) {
        set_err(err, errlen, "--%s: expected a number, got '%s'", name, arg);
        return -1;
    }
    *dst = (float)d;
    return 0;
}

static int int_opt(const char *name, const char *arg, long lo, long hi, long *dst, char *err,
                   size_t errlen)
{
    if (!parse_long(arg, lo, hi, dst)) {
        set_err(err, errlen, "--%s: expected an integer %ld..%ld, got '%s'", name, lo, hi, arg);
        return -1;
    }
    return 0;
}

/* An int solver parameter: syntax here, range in method_params_check() (a
 * value beyond int is kept beyond the range, so that check names the range). */
static int solver_int_opt(const char *name, const char *arg, int *dst, char *err, size_t errlen)
{
    long v;
    if (!parse_long(arg, LONG_MIN, LONG_MAX, &v)) {
        set_err(err, errlen, "--%s: expected an integer, got '%s'", name, arg);
        return -1;
    }
    *dst = v > INT_MAX ? INT_MAX : (v < INT_MIN ? INT_MIN : (int)v);
    return 0;
}

static int path_opt(const char *name, const char *arg, const char **dst, char *err, size_t errlen)
{
    if (!arg || !*arg) {
        set_err(err, errlen, "--%s: expected a path, got ''", name);
        return -1;
    }
    *dst = arg;
    return 0;
}

bool config_given(const Config *c, const char *name)
{
    for (const struct option *o = long_options; o->name; o++)
        if (strcmp(o->name, name) == 0) {
            int k = o->val - 256;
            return k >= 0 && (size_t)k < 8 * sizeof c->given && (c->given[k / 8] >> (k % 8) & 1u);
        }
    return false;
}

const char *config_backend_name(Backend b)
{
    static const char *const names[] = {"auto", "compute", "fragment", "cpu"};
    return (unsigned)b < 4 ? names[b] : "?";
}

/* ---- output formats, timing, naming and video (issue 10) ---------------- */

static bool ends_with_ci(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && strcasecmp(s + n - k, end) == 0;
}

bool config_frames_is_folder(const char *s)
{
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    return !strchr(base, '#') && !strchr(base, '%');
}

int config_parse_frames(const char *s, Config *c, char *err, size_t errlen)
{
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    if (config_frames_is_folder(s)) {
        /* a name that ends like an image is a file name missing its
         * number (issue 21: --frames out/smoke.exr made a folder of PNGs),
         * unless that folder is already there */
        static const char *const ext[] = {".png", ".exr", ".tif", ".tiff", ".jpg", ".jpeg", ".dpx"};
        size_t bl = strlen(base);
        struct stat st;
        for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
            size_t el = strlen(ext[i]);
            if (bl > el && strcasecmp(base + bl - el, ext[i]) == 0 &&
                !(stat(s, &st) == 0 && S_ISDIR(st.st_mode))) {
                set_err(err, errlen, "--frames: '%s' names one file, and frames are numbered: "
                        "put the number where it goes, %.*s.####%s (or give a folder)", s,
                        (int)(strlen(s) - el), s, s + strlen(s) - el);
                return -1;
            }
        }
        c->frames_digits = 0; /* a directory */
        return 0;
    }
    /* one placeholder: a run of '#', or %d / %0Nd */
    const char *ph = NULL;
    int digits = 0;
    size_t phlen = 0;
    for (const char *p = base; *p; p++) {
        if (*p != '#' && *p != '%') continue;
        if (ph) {
            set_err(err, errlen, "--frames: '%s' has more than one frame number (one run of # or "
                    "one %%d or %%0Nd)", s);
            return -1;
        }
        ph = p;
        if (*p == '#') {
            while (p[1] == '#') p++;
            phlen = (size_t)(p - ph) + 1;
            digits = (int)phlen;
        } else {
            const char *q = p + 1;
            if (q[0] == '0' && q[1] >= '1' && q[1] <= '9' && q[2] == 'd') {
                digits = q[1] - '0';
                phlen = 4;
            } else if (q[0] == 'd') {
                digits = 1;
                phlen = 2;
            } else {
                set_err(err, errlen, "--frames: '%s': the frame number is %%d or %%0Nd (N 1..9), "
                        "or a run of #", s);
                return -1;
            }
            p = ph + phlen - 1;
        }
    }
    if (digits > 9) {
        set_err(err, errlen, "--frames: '%s': at most 9 # for the frame number", s);
        return -1;
    }
    const char *suffix = ph + phlen;
    if (!ends_with_ci(suffix, ".png") && !ends_with_ci(suffix, ".exr")) {
        set_err(err, errlen, "--frames: '%s': a pattern's name ends in .png or .exr", s);
        return -1;
    }
    size_t dirlen = slash ? (size_t)(slash - s) : 0;
    size_t prelen = (size_t)(ph - base);
    if (dirlen >= sizeof c->frames_dirbuf || prelen >= sizeof c->frames_prefix ||
        strlen(suffix) >= sizeof c->frames_suffix) {
        set_err(err, errlen, "--frames: '%s' is too long", s);
        return -1;
    }
    if (slash && dirlen == 0) snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, "/");
    else if (!slash) snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, ".");
    else snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, "%.*s", (int)dirlen, s);
    snprintf(c->frames_prefix, sizeof c->frames_prefix, "%.*s", (int)prelen, base);
    snprintf(c->frames_suffix, sizeof c->frames_suffix, "%s", suffix);
    c->frames_digits = digits;
    c->frames_dir = c->frames_dirbuf;
    return 1;
}

/* One of the options of issue 10's output group; 0 or -1. */
static int output_option(Config *c, int opt, const char *arg, char *err, size_t errlen)
{
    long v;
    double d;
    switch (opt) {
    case OPT_FORMAT:
        if (!strcmp(arg, "png8") || !strcmp(arg, "png")) c->format = IMAGE_FORMAT_PNG8;
        else if (!strcmp(arg, "png16")) c->format = IMAGE_FORMAT_PNG16;
        else if (!strcmp(arg, "exr")) c->format = IMAGE_FORMAT_EXR;
        else {
            set_err(err, errlen, "--format: expected png8, png16 or exr, got '%s'", arg);
            return -1;
        }
        c->format_set = true;
        return 0;
    case OPT_ALPHA:
        if (!strcmp(arg, "straight")) c->alpha = IMAGE_ALPHA_STRAIGHT;
        else if (!strcmp(arg, "premultiplied")) c->alpha = IMAGE_ALPHA_PREMULTIPLIED;
        else {
            set_err(err, errlen, "--alpha: expected straight or premultiplied, got '%s'", arg);
            return -1;
        }
        return 0;
    case OPT_DENSITY_SCALE:
        if (!strcmp(arg, "auto")) {
            c->density_scale = 0.0f;
            return 0;
        }
        if (!parse_double(arg, &d) || !(d > 0.0) || d > 1e6) {
            set_err(err, errlen, "--density-scale: expected 'auto' or a number in (0, 1e6], got '%s'",
                    arg);
            return -1;
        }
        c->density_scale = (float)d;
        return 0;
    case OPT_EXR_TYPE:
        if (!strcmp(arg, "half")) c->exr_pixel = IMAGE_EXR_HALF;
        else if (!strcmp(arg, "float")) c->exr_pixel = IMAGE_EXR_FLOAT;
        else {
            set_err(err, errlen, "--exr-type: expected half or float, got '%s'", arg);
            return -1;
        }
        c->exr_set = true;
        return 0;
    case OPT_EXR_COMPRESSION: {
        int k = exr_compression_parse(arg);
        if (k < 0) {
            set_err(err, errlen, "--exr-compression: expected zip, zips, piz, rle, pxr24, b44, dwaa "
                    "or none, got '%s'", arg);
            return -1;
        }
        if (!exr_compression_available((ImageExrCompression)k)) {
            set_err(err, errlen, "--exr-compression: this build's OpenEXR C library (%s) "
                    "cannot write %s (it needs OpenEXR 3.2); zip and piz are lossless",
                    exr_library_version(), arg);
            return -1;
        }
        c->exr_compression = (ImageExrCompression)k;
        c->exr_set = true;
        return 0;
    }
    case OPT_EXR_TILED:
        c->exr_tiled = true;
        c->exr_set = true;
        return 0;
    case OPT_PNG_COMPRESSION:
        if (int_opt("png-compression", arg, 0, IMAGE_PNG_LEVEL_MAX, &v, err, errlen) < 0) return -1;
        c->png_compression = (int)v;
        c->png_set = true;
        return 0;
    case OPT_THREADS:
        if (int_opt("threads", arg, 1, POOL_MAX_THREADS, &v, err, errlen) < 0) return -1;
        c->threads = (int)v;
        return 0;
    case OPT_NO_FRAMES:
        c->no_frames = true;
        return 0;
    case OPT_EXR_VELOCITY:
        c->exr_velocity = true;
        c->exr_set = true;
        return 0;
    case OPT_FPS:
        if (!parse_double(arg, &d) || !(d > 0.0) || d > CONFIG_FPS_MAX) {
            set_err(err, errlen, "--fps: expected a number in (0, %g], got '%s'", CONFIG_FPS_MAX, arg);
            return -1;
        }
        c->fps = d;
        return 0;
    case OPT_FRAME_START:
        if (int_opt("frame-start", arg, 0, CONFIG_FRAME_MAX, &v, err, errlen) < 0) return -1;
        c->frame_start = v;
        return 0;
    case OPT_FRAME_RANGE: {
        const char *dash = strchr(arg, '-');
        char a[32] = "";
        long lo = 0, hi = -1;
        if (dash && (size_t)(dash - arg) < sizeof a) {
            memcpy(a, arg, (size_t)(dash - arg));
            a[dash - arg] = '\0';
        }
        if (!dash || !isdigit((unsigned char)a[0]) || !isdigit((unsigned char)dash[1]) ||
            !parse_long(a, 0, CONFIG_FRAME_MAX, &lo) || !parse_long(dash + 1, 0, CONFIG_FRAME_MAX, &hi) ||
            lo > hi) {
            set_err(err, errlen, "--frame-range: expected A-B with 0 <= A <= B <= %ld, got '%s'",
                    CONFIG_FRAME_MAX, arg);
            return -1;
        }
        c->range_first = lo;
        c->range_last = hi;
        return 0;
    }
    case OPT_VIDEO:
        if (path_opt("video", arg, &c->video_path, err, errlen) < 0) return -1;
        if (!ends_with_ci(arg, ".mp4") && !ends_with_ci(arg, ".mov")) {
            set_err(err, errlen, "--video: '%s': expected a name ending in .mp4 (H.264) or .mov "
                    "(ProRes 4444 with alpha)", arg);
            return -1;
        }
        return 0;
    case OPT_BACKGROUND:
        if (config_parse_color(arg, c->background) < 0) {
            set_err(err, errlen, "--background: expected RRGGBB or #RRGGBB (hex), got '%s'", arg);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* The output group's checks once every option is known; 0 or -1. */
static int output_check(Config *c, char *err, size_t errlen)
{
    if (c->frames_digits > 0) {
        bool exr_name = ends_with_ci(c->frames_suffix, ".exr");
        if (!c->format_set) c->format = exr_name ? IMAGE_FORMAT_EXR : IMAGE_FORMAT_PNG8;
        else if (exr_name != (c->format == IMAGE_FORMAT_EXR)) {
            set_err(err, errlen, "--frames: the pattern's name ends in %s, but --format is %s",
                    c->frames_suffix, format_name(c->format));
            return -1;
        }
    }
    if (c->exr_set && c->format != IMAGE_FORMAT_EXR) {
        set_err(err, errlen, "--exr-type, --exr-compression, --exr-tiled and --exr-velocity are "
                "for EXR frames: add --format exr");
        return -1;
    }
    if (c->png_set && c->format == IMAGE_FORMAT_EXR) {
        set_err(err, errlen, "--png-compression is for PNG frames; EXR frames take "
                "--exr-compression");
        return -1;
    }
    if (c->no_frames && c->frames_dir) {
        set_err(err, errlen, "--no-frames (--frames none) and --frames %s: give one of them",
                c->frames_dir);
        return -1;
    }
    if (!c->every_set) c->every = config_every(c->fps, c->params.dt);
    if (c->range_last >= 0) {
        if (c->range_first < c->frame_start) {
            set_err(err, errlen, "--frame-range: frame %ld comes before the first frame, %ld "
                    "(--frame-start)", c->range_first, c->frame_start);
            return -1;
        }
        double need = (double)(c->range_last - c->frame_start) * c->every;
        if (need > (double)CONFIG_STEPS_MAX || (c->steps > 0 && need > (double)c->steps)) {
            set_err(err, errlen, "--frame-range: frame %ld is step %.0f, beyond --steps %ld",
                    c->range_last, need, c->steps > 0 ? c->steps : CONFIG_STEPS_MAX);
            return -1;
        }
    }
    return 0;
}

/* One option with its argument; 0 or -1. */
static int apply_option(Config *c, int opt, const char *arg, char *err, size_t errlen)
{
    long v;
    switch (opt) {
    case OPT_CPU: c->backend = BACKEND_CPU; return 0;
    case OPT_BACKEND:
        for (int b = 0; b < 4; b++)
            if (strcmp(arg, config_backend_name((Backend)b)) == 0) {
                c->backend = (Backend)b;
                return 0;
            }
        set_err(err, errlen, "--backend: expected auto, compute, fragment or cpu, got '%s'", arg);
        return -1;
    case OPT_HEADLESS: c->headless = true; return 0;
    case OPT_GL_INFO: c->gl_info = true; return 0;
    case OPT_SHADER_DIR: return path_opt("shader-dir", arg, &c->shader_dir, err, errlen);
    case OPT_GRID: {
        int w, h;
        if (config_parse_size(arg, &w, &h) < 0 || w < CONFIG_GRID_MIN || h < CONFIG_GRID_MIN ||
            w > CONFIG_GRID_MAX || h > CONFIG_GRID_MAX) {
            set_err(err, errlen, "--grid: expected N or WxH with sides %d..%d, got '%s'",
                    CONFIG_GRID_MIN, CONFIG_GRID_MAX, arg);
            return -1;
        }
        if ((long)w * (long)h > CONFIG_MAX_CELLS) {
            set_err(err, errlen, "--grid: %dx%d is %ld cells, at most %ld allowed", w, h,
                    (long)w * (long)h, CONFIG_MAX_CELLS);
            return -1;
        }
        c->grid_w = w;
        c->grid_h = h;
        c->grid_set = true;
        return 0;
    }
    case OPT_DT: return float_opt("dt", arg, &c->params.dt, err, errlen);
    case OPT_VF: return float_opt("vf", arg, &c->params.vf, err, errlen);
    case OPT_VD: return float_opt("vd", arg, &c->params.vd, err, errlen);
    case OPT_VG: return float_opt("vg", arg, &c->params.vg, err, errlen);
    case OPT_SIGMA: return float_opt("sigma", arg, &c->params.sigma, err, errlen);
    case OPT_UMAX: return float_opt("umax", arg, &c->params.umax, err, errlen);
    /* ranges of solver parameters live in method_params_check() only */
    case OPT_JACOBI: return solver_int_opt("jacobi", arg, &c->params.jacobi, err, errlen);
    case OPT_VCYCLES: return solver_int_opt("vcycles", arg, &c->params.vcycles, err, errlen);
    case OPT_GATHER_ITERS:
        return solver_int_opt("gather-iters", arg, &c->params.gather_iters, err, errlen);
    case OPT_NO_GATHER: c->params.gather = false; return 0;
    case OPT_FORCE:
        if (strcmp(arg, "balance") == 0) c->params.force = SOLVER_FORCE_BALANCE;
        else if (strcmp(arg, "fattal") == 0) c->params.force = SOLVER_FORCE_FATTAL;
        else {
            set_err(err, errlen, "--force: expected 'balance' or 'fattal', got '%s'", arg);
            return -1;
        }
        return 0;
    case OPT_VB: return float_opt("vb", arg, &c->params.vb, err, errlen);
    case OPT_DRIFT: c->set_extras = true; return float_opt("drift", arg, &c->params.vk, err, errlen);
    case OPT_DRIFT_BALANCE:
        c->set_extras = true;
        return float_opt("drift-balance", arg, &c->params.vw, err, errlen);
    case OPT_DRIFT_MAX:
        c->set_extras = true;
        return float_opt("drift-max", arg, &c->params.wmax, err, errlen);
    case OPT_EASE_FORCE:
        c->set_extras = true;
        return float_opt("ease-force", arg, &c->params.framp, err, errlen);
    case OPT_EASE_GATHER:
        c->set_extras = true;
        return float_opt("ease-gather", arg, &c->params.tramp, err, errlen);
    case OPT_ARRIVE:
        return float_opt("arrive", arg, &c->params.arrive, err, errlen);
    case OPT_SWIRL:
        c->set_extras = true;
        return float_opt("swirl", arg, &c->params.swirl, err, errlen);
    case OPT_STEPS:
        if (int_opt("steps", arg, 0, CONFIG_STEPS_MAX, &v, err, errlen) < 0) return -1;
        c->steps = v;
        return 0;
    case OPT_KEY_EVERY:
        if (int_opt("key-every", arg, 1, CONFIG_STEPS_MAX, &v, err, errlen) < 0) return -1;
        c->key_every = v;
        c->key_every_set = true;
        return 0;
    case OPT_FRAMES:
        if (!strcmp(arg, "none")) { /* a headless run with metrics only */
            c->no_frames = true;
            return 0;
        }
        if (path_opt("frames", arg, &c->frames_dir, err, errlen) < 0) return -1;
        return config_parse_frames(arg, c, err, errlen) < 0 ? -1 : 0;
    case OPT_EVERY:
        if (int_opt("every", arg, 1, EVERY_MAX, &v, err, errlen) < 0) return -1;
        c->every = (int)v;
        c->every_set = true;
        return 0;
    case OPT_METRICS: return path_opt("metrics", arg, &c->metrics_path, err, errlen);
    case OPT_RAW: {
        char why[256] = "";
        ImageLoadOpts o = c->load;
        if (image_parse_raw_spec(arg, &o, why, sizeof why) < 0) {
            if (strncmp(why, "--raw", 5) == 0) /* image's message names the option */
                set_err(err, errlen, "%s", why);
            else if (why[0])
                set_err(err, errlen, "--raw: %s", why);
            else
                set_err(err, errlen, "--raw: expected WxH[:u8|u16|f32], got '%s'", arg);
            return -1;
        }
        o.raw = true;
        c->load = o;
        return 0;
    }
    case OPT_CHANNEL:
        if (!arg || image_parse_channel(arg, &c->load.channel) < 0) {
            set_err(err, errlen, "--channel: expected r, g, b, a or luma, got '%s'",
                    arg ? arg : "");
            return -1;
        }
        return 0;
    case OPT_INVERT: c->load.invert = true; return 0;
    case OPT_MAX_IMAGE_MB:
        if (int_opt("max-image-mb", arg, 1, MAX_IMAGE_MB_MAX, &v, err, errlen) < 0) return -1;
        c->load.max_mb = (int)v;
        return 0;
    case OPT_MAX_MEMORY:
        if (int_opt("max-memory", arg, BUDGET_MB_MIN, BUDGET_MB_MAX, &v, err, errlen) < 0) return -1;
        c->max_memory_mb = v;
        return 0;
    case OPT_OVERWRITE: c->overwrite = true; return 0;
    case OPT_ALLOW_SCENE_OUTPUTS: c->allow_scene_outputs = true; return 0;
    case OPT_NO_MASS_MATCH: c->mass_match = false; return 0;
    case OPT_COLOR:
        if (config_parse_color(arg, c->color) < 0) {
            set_err(err, errlen, "--color: expected RRGGBB or #RRGGBB (hex), got '%s'", arg);
            return -1;
        }
        return 0;
    case OPT_SIZE: {
        int w, h;
        if (config_parse_size(arg, &w, &h) < 0 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
            set_err(err, errlen, "--size: expected WxH with sides 1..%d, got '%s'",
                    IMAGE_MAX_SIDE, arg);
            return -1;
        }
        c->out_w = w;
        c->out_h = h;
        return 0;
    }
    case OPT_STEPS_PER_FRAME:
        if (int_opt("steps-per-frame", arg, 1, SPF_MAX, &v, err, errlen) < 0) return -1;
        c->steps_per_frame = (int)v;
        if (!c->window_only) c->window_only = "--steps-per-frame";
        return 0;
    case OPT_WINDOW:
        if (config_parse_size(arg, &c->win_w, &c->win_h) < 0 || c->win_w < 16 || c->win_h < 16 ||
            c->win_w > 8192 || c->win_h > 8192) {
            set_err(err, errlen, "--window: expected WxH with sides 16..8192, got '%s'", arg);
            return -1;
        }
        if (!c->window_only) c->window_only = "--window";
        return 0;
    case OPT_SCREENSHOT:
        return path_opt("screenshot", arg, &c->screenshot, err, errlen);
    case OPT_KEYS:
        c->keys = arg;
        if (!c->window_only) c->window_only = "--keys";
        return 0;
    case OPT_VIEW:
        if ((c->view = viewfield_parse(arg)) < 0) {
            set_err(err, errlen, "--view: unknown view '%s' (one of %s)", arg, viewfield_names());
            return -1;
        }
        if (!c->window_only) c->window_only = "--view";
        return 0;
    case OPT_NO_HUD:
        c->no_hud = true;
        if (!c->window_only) c->window_only = "--no-hud";
        return 0;
    case OPT_RECORD: {
        size_t n = strlen(arg);
        if (path_opt("record", arg, &c->record, err, errlen) < 0) return -1;
        if (n < 4 || strcasecmp(arg + n - 4, ".mp4") != 0) {
            set_err(err, errlen, "--record: a recording is an H.264 video whose name ends in .mp4, got '%s'", arg);
            return -1;
        }
        if (!c->window_only) c->window_only = "--record";
        return 0;
    }
    case OPT_LESSON:
        if (path_opt("lesson", arg, &c->lesson, err, errlen) < 0) return -1;
        if (!c->window_only) c->window_only = "--lesson";
        return 0;
    case OPT_FORMAT:
    case OPT_ALPHA:
    case OPT_DENSITY_SCALE:
    case OPT_EXR_TYPE:
    case OPT_EXR_COMPRESSION:
    case OPT_EXR_VELOCITY:
    case OPT_EXR_TILED:
    case OPT_PNG_COMPRESSION:
    case OPT_THREADS:
    case OPT_NO_FRAMES:
    case OPT_FPS:
    case OPT_FRAME_START:
    case OPT_FRAME_RANGE:
    case OPT_VIDEO:
    case OPT_BACKGROUND:
        return output_option(c, opt, arg, err, errlen);
    case OPT_CHECKPOINT_EVERY:
        if (int_opt("checkpoint-every", arg, 1, CONFIG_STEPS_MAX, &v, err, errlen) < 0) return -1;
        c->checkpoint_every = v;
        return 0;
    case OPT_CHECKPOINT_DIR: return path_opt("checkpoint-dir", arg, &c->checkpoint_dir, err, errlen);
    case OPT_RESUME: return path_opt("resume", arg, &c->resume_path, err, errlen);
    case OPT_SIDECAR: return path_opt("sidecar", arg, &c->sidecar_path, err, errlen);
    case OPT_SCENE: return path_opt("scene", arg, &c->scene_path, err, errlen);
    case OPT_DUMP_SCENE: c->dump_scene = true; return 0;
    case OPT_COMPARE: c->compare = arg; return 0;       /* checked once the parameters are known */
    case OPT_COMPARE_PRESET: c->compare_preset = arg; return 0;
    case OPT_PROGRESS_FORMAT:
        if (strcmp(arg, "auto") == 0) c->progress_format = CONFIG_PROGRESS_AUTO;
        else if (strcmp(arg, "json") == 0) c->progress_format = CONFIG_PROGRESS_JSON;
        else {
            set_err(err, errlen, "--progress-format: expected auto or json, got '%s'", arg);
            return -1;
        }
        return 0;
    }
    set_err(err, errlen, "internal error: unhandled option %d", opt);
    return -1;
}

int config_parse(Config *c, int argc, char **argv, char *err, size_t errlen)
{
    config_defaults(c);
    if (err && errlen) err[0] = '\0';
    if (argc < 1 || !argv) return 0;

    const char *prog = argv[0];
    bool no_progress = false;
    const char *pos[CONFIG_KEYS_MAX + 2];
    int npos = 0;
    reset_getopt();

    int opt;
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        char name[64];
        switch (opt) {
        case 'h':
            config_usage(stdout, prog);
            fflush(stdout);
            return 1;
        case OPT_VERSION:
            printf("smokemorph %s\n", SMOKEMORPH_VERSION);
            fflush(stdout);
            return 1;
        case 'q': c->verbosity = 0; break;
        case 'v': c->verbosity = 2; break;
        case OPT_NO_PROGRESS: no_progress = true; break;
        case 1:
            if (npos < CONFIG_KEYS_MAX + 2) pos[npos] = optarg;
            npos++;
            break;
        case ':':
            offending_option(argc, argv, name, sizeof name);
            set_err(err, errlen, "%s needs a value (see --help)", name);
            return -1;
        case '?':
            refused_option(argc, argv, err, errlen);
            return -1;
        default:
            if (apply_option(c, opt, optarg, err, errlen) < 0) return -1;
            break;
        }
        if (opt >= 256 && (size_t)(opt - 256) < 8 * sizeof c->given) /* config_given */
            c->given[(opt - 256) / 8] |= (unsigned char)(1u << ((opt - 256) % 8));
    }

    c->progress = !no_progress && c->verbosity > 0;

    /* --force fattal is the paper's method: none of the additions unless asked */
    if (c->params.force == SOLVER_FORCE_FATTAL && !c->set_extras) {
        c->params.vk = 0.0f;
        c->params.framp = 0.0f;
        c->params.tramp = 0.0f;
        c->params.swirl = 0.0f; /* vorticity confinement is an addition too */
    }

    const char *why = method_params_check(&c->params);
    if (why) {
        set_err(err, errlen, "%s", why);
        return -1;
    }
    if (output_check(c, err, errlen) < 0) return -1;
    if (c->compare || c->compare_preset) { /* B against the run's own parameters */
        CompareSpec cs;
        if (c->compare && c->compare_preset) {
            set_err(err, errlen, "--compare and --compare-preset: give one of them");
            return -1;
        }
        char why[256];
        if ((c->compare ? compare_parse(c->compare, &c->params, &cs, why, sizeof why)
                        : compare_preset(c->compare_preset, &c->params, &cs, why, sizeof why)) < 0) {
            set_err(err, errlen, "%s %s", c->compare ? "--compare:" : "--compare-preset:", why + strlen("compare: "));
            return -1;
        }
    }

    for (int i = optind; i < argc; i++) { /* after "--" */
        if (npos < CONFIG_KEYS_MAX + 2) pos[npos] = argv[i];
        npos++;
    }
    if (npos == 1) {
        set_err(err, errlen, "got one image '%s': give both CURRENT and TARGET, or none", pos[0]);
        return -1;
    }
    if (npos > CONFIG_KEYS_MAX + 1) {
        set_err(err, errlen, "too many arguments: expected CURRENT and at most %d TARGETs, got %d "
                "(first extra '%s')", CONFIG_KEYS_MAX, npos, pos[CONFIG_KEYS_MAX + 1]);
        return -1;
    }
    if (npos >= 2) {
        for (int k = 0; k < npos; k++)
            if (!pos[k][0]) {
                set_err(err, errlen, "empty image path");
                return -1;
            }
        c->current_path = pos[0];
        c->target_path = pos[1];
        c->nkeys = npos - 1;
        for (int k = 0; k < c->nkeys; k++) c->key_paths[k] = pos[k + 1];
        if (c->steps == 0 && c->nkeys > 1 &&
            (double)c->nkeys * (double)c->key_every > (double)CONFIG_STEPS_MAX) {
            set_err(err, errlen, "--key-every: %d TARGETs of %ld steps each are more than %ld steps",
                    c->nkeys, c->key_every, CONFIG_STEPS_MAX);
            return -1;
        }
    }
    return 0;
}

/* ---- scene files (issue 9): options by name --------------------------- */

int config_option(Config *c, const char *name, const char *arg, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    for (const struct option *o = long_options; o->name; o++) {
        if (strcmp(o->name, name) != 0) continue;
        if (o->val < 256 || o->val == OPT_VERSION || o->val == OPT_NO_PROGRESS) break;
        if ((o->has_arg == required_argument) != (arg != NULL)) {
            set_err(err, errlen, "--%s %s", name, arg ? "takes no value" : "needs a value");
            return -1;
        }
        if (apply_option(c, o->val, arg, err, errlen) < 0) return -1;
        int k = o->val - 256;
        if ((size_t)k < 8 * sizeof c->given) c->given[k / 8] |= (unsigned char)(1u << (k % 8));
        return 0;
    }
    set_err(err, errlen, "internal error: no option --%s", name);
    return -1;
}

int config_each_option(int argc, char **argv, void (*fn)(void *ctx, const char *name, const char *arg),
                       void *ctx)
{
    if (argc < 1 || !argv) return 0;
    reset_getopt();
    int opt, n = 0;
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        const char *name = NULL;
        if (opt == 'q') name = "quiet";
        else if (opt == 'v') name = "verbose";
        else if (opt == 'h') name = "help";
        else if (opt >= 256)
            for (const struct option *o = long_options; o->name; o++)
                if (o->val == opt) name = o->name;
        if (!name) continue; /* an image, or what config_parse refuses */
        fn(ctx, name, optarg);
        n++;
    }
    return n;
}

/* The last --scene's value: the walk of config_each_option. */
static void last_scene(void *ctx, const char *name, const char *arg)
{
    if (strcmp(name, "scene") == 0) *(const char **)ctx = arg;
}

const char *config_find_scene(int argc, char **argv)
{
    const char *path = NULL;
    config_each_option(argc, argv, last_scene, &path);
    return path;
}

static void last_dt(void *ctx, const char *name, const char *arg)
{
    if (strcmp(name, "dt") == 0) *(const char **)ctx = arg;
}

float config_find_dt(int argc, char **argv)
{
    const char *v = NULL;
    config_each_option(argc, argv, last_dt, &v);
    char *end;
    double d = v ? strtod(v, &end) : 0.0;
    /* the range --dt takes (config_parse says why otherwise) */
    return v && end != v && !*end && d > 0.0 && d <= 1.0 ? (float)d : 0.0f;
}
