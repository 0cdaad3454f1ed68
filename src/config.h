/* config: every setting of smokemorph in one Config, parsed by getopt_long.
 * Never touches GL.
 *
 *   Config c;
 *   char err[512];
 *   int r = config_parse(&c, argc, argv, err, sizeof err);
 *   if (r < 0) { fprintf(stderr, "%s\n", err); return 2; }   // bad usage
 *   if (r > 0) return 0;                                      // --help / --version printed
 *
 * All sizes are validated here; solver parameters through method_params_check().
 */
#ifndef SMOKEMORPH_CONFIG_H
#define SMOKEMORPH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "image.h"
#include "method.h"

/* Limits and mode defaults (used by config_usage, so --help never drifts). */
#define CONFIG_GRID_MIN 8
#define CONFIG_GRID_MAX 8192
#define CONFIG_MAX_CELLS (16L * 1024 * 1024)   /* --grid: at most 16M cells */
#define CONFIG_STEPS_MAX 100000000L
#define CONFIG_HEADLESS_MAX_STEPS 10000L     /* --steps 0, headless: until the morph
                                                 arrives or settles, at most this */
#define CONFIG_DEFAULT_OUT_DIR "smokemorph-out" /* headless frames, no --frames */
#define CONFIG_FPS_DEFAULT 24.0
#define CONFIG_FPS_MAX 1000.0
#define CONFIG_FRAME_MAX 99999999L         /* --frame-start, --frame-range */
#define CONFIG_KEYS_MAX 256                /* targets of a sequence (issue 9) */
#define CONFIG_KEY_EVERY_DEFAULT 600L      /* --key-every */
#define CONFIG_EVERY_MAX 1000000           /* --every */
#define CONFIG_IMAGE_MB_MAX 1048576        /* --max-image-mb: 1 TiB */
#define CONFIG_SPF_MAX 1000                /* --steps-per-frame */

/* --backend: auto picks at start (main.c; the rule is in --help and the
 * manual, docs/MANUAL.md). */
typedef enum { BACKEND_AUTO = 0, BACKEND_COMPUTE, BACKEND_FRAGMENT, BACKEND_CPU } Backend;
/* "auto", "compute", "fragment", "cpu" */
const char *config_backend_name(Backend b);

typedef struct {
    /* inputs */
    const char *current_path;  /* NULL: bundled default */
    const char *target_path;   /* NULL: bundled default */
    ImageLoadOpts load;        /* --raw, --channel, --invert, --max-image-mb (both images) */
    bool mass_match;           /* default true; --no-mass-match */
    bool set_extras;           /* --drift, --drift-max or an --ease-* was given */
    /* keyframe sequences (issue 9): smokemorph CURRENT TARGET1 TARGET2 ...
     * Key k (from 1) is the goal for steps (k-1)*key_every+1 .. k*key_every,
     * the last key after that. key_paths[0] is target_path; nkeys is 0 with
     * no images (the bundled pair), else 1.. CONFIG_KEYS_MAX. Headless with
     * no --steps, a sequence of several keys runs nkeys * key_every steps. */
    const char *key_paths[CONFIG_KEYS_MAX];
    int nkeys;
    long key_every;            /* --key-every N, default CONFIG_KEY_EVERY_DEFAULT */
    bool key_every_set;        /* --key-every was given */

    /* simulation */
    int grid_w, grid_h;        /* --grid N|WxH, default 256x256 */
    bool grid_set;             /* --grid was given (else main takes the start image's aspect) */
    SolverParams params;       /* --dt --vf --vd --vg --sigma --jacobi --gather-iters --umax */
    long steps;                /* --steps N, 0..1e8; default 0 = the mode's default, which
                                  main picks: headless, until the error is within 3% or
                                  stops falling (fidelity_settle_update), at most
                                  CONFIG_HEADLESS_MAX_STEPS; until quit in a window */

    /* output */
    const char *frames_dir;    /* --frames DIR */
    int every;                 /* --every K, default 10 */
    const char *metrics_path;  /* --metrics FILE */
    float color[3];            /* --color RRGGBB, default ffffff */
    int out_w, out_h;          /* --size WxH, 0 = grid size */
    /* output formats, timing, naming and video (issue 10) */
    ImageFormat format;        /* --format png8|png16|exr; default png8, or exr for a
                                  --frames PATTERN ending in .exr */
    ImageAlpha alpha;          /* --alpha straight|premultiplied (PNG, .mov), default straight */
    float density_scale;       /* --density-scale S|auto: alpha = density × S; 0 = auto
                                  (default; export_auto_scale) */
    ImageExrPixel exr_pixel;   /* --exr-type half|float, default half */
    ImageExrCompression exr_compression; /* --exr-compression, default zip */
    bool exr_velocity;         /* --exr-velocity */
    bool exr_tiled;            /* --exr-tiled: 64x64 tiles */
    int png_compression;       /* --png-compression 0..9, default IMAGE_PNG_LEVEL_DEFAULT */
    bool png_set;              /* --png-compression given */
    bool no_frames;            /* --frames none, --no-frames: metrics only, no ./out */
    int threads;               /* --threads N, 1..POOL_MAX_THREADS; 0: the cores available */
    bool format_set, exr_set;  /* --format given; an --exr-* option given */
    double fps;                /* --fps, default 24 */
    bool every_set;            /* --every given; else every = max(1, round(1 / (fps × dt))):
                                  simulated time runs in seconds */
    long frame_start;          /* --frame-start N: step 0's frame number, default 1 */
    long range_first, range_last; /* --frame-range A-B; range_last < 0: none. With a
                                  range the run stops at B's step, (B - frame_start) ×
                                  every, which must not pass --steps */
    const char *video_path;    /* --video FILE.mp4|FILE.mov */
    float background[3];       /* --background RRGGBB, default 000000 */
    /* --frames PATTERN ("out/smoke.####.exr", "out/s.%04d.png"): frames_dir points
     * at frames_dirbuf (the pattern's directory), and the file names are
     * frames_prefix, the number at least frames_digits wide, frames_suffix.
     * frames_digits 0: --frames DIR (DIR/frame_00001.png). */
    int frames_digits;
    char frames_prefix[256], frames_suffix[256];
    char frames_dirbuf[4096];

    /* run mode */
    Backend backend;           /* --backend, --cpu; default auto */
    bool headless;             /* --headless */
    bool gl_info;              /* --gl-info */
    const char *shader_dir;    /* --shader-dir DIR */
    int steps_per_frame;       /* --steps-per-frame N (window), default 2 */
    int win_w, win_h;          /* --window WxH, default 768x768 */
    const char *screenshot;    /* --screenshot FILE (window: save after --steps, quit) */
    const char *keys;          /* --keys STR (window: keys pressed at start) */
    int view;                  /* --view NAME (window: viewfield.h's ViewKind; 0 density) */
    bool no_hud;               /* --no-hud (window: the HUD starts hidden) */
    const char *record;        /* --record FILE.mp4 (window: what it shows, as a video) */
    const char *lesson;        /* --lesson FILE (window: a prepared lesson, lesson.h) */
    const char *font;          /* --font FILE (window: the text's font; NULL: DejaVu Sans Mono) */
    const char *window_only;   /* the first window-only option given, without "--"
                                  ("keys", "window", ...): an error in a headless run */
    int verbosity;             /* 0 quiet, 1 normal, 2 verbose */
    bool progress;             /* progress line on stderr (default on; off with --quiet) */

    /* render farms (docs/MANUAL.md, "Render farms") */
    long checkpoint_every;     /* --checkpoint-every N, headless; 0 = none */
    const char *checkpoint_dir;/* --checkpoint-dir DIR (default: the frames directory) */
    const char *resume_path;   /* --resume FILE */
    const char *sidecar_path;  /* --sidecar FILE (default: FRAMES/run.json) */
    /* safety (issue 21) */
    long max_memory_mb;        /* --max-memory MB: the whole run's budget (budget.h);
                                  0: the default, budget_default_mb() */
    bool overwrite;            /* --overwrite: replace files in the way that are not
                                  an earlier run's frames or metrics (never an input) */
    bool allow_scene_outputs;  /* --allow-scene-outputs: a scene may write outside
                                  its own folder */
    int progress_format;       /* --progress-format: CONFIG_PROGRESS_AUTO or _JSON */
    /* GPU tuning (settings.def's group TUNING) */
    SolverOptions solver;      /* --compute-tiles, --transport-group, --mg-bottom, --no-mg-fuse */
    int readback_lag;          /* --readback-lag N; -1: the run's own choice */
    long fault_nan_step;       /* --fault-nan-step K (tests); -1: none */
    int strip_rows;            /* --strip-rows N (tests): ExportOptions.strip_rows */
    unsigned char given[16];   /* one bit per row of settings.def given (config_given) */

    /* scene files (issue 9): --scene FILE, --dump-scene; the scene's field name
     * (EXR's density.NAME; NULL: "smoke"), set by scene_apply */
    const char *scene_path;
    bool dump_scene;
    const char *field_name;

    /* the classroom's compare (issue 11): --compare SETTINGS or
     * --compare-preset NAME (compare.h), checked against params */
    const char *compare;
    const char *compare_preset;
} Config;

enum { CONFIG_PROGRESS_AUTO = 0, CONFIG_PROGRESS_JSON = 1 };

/* Whether the long option NAME ("grid", "no-gather") was on the command
 * line (a resumed run keeps the checkpoint's values of the others). */
bool config_given(const Config *c, const char *name);

/* Defaults for everything. */
void config_defaults(Config *c);

/* Parse argv into c (config_defaults is applied first).
 * Returns 0 to run, 1 when --help or --version was printed to stdout,
 * -1 on bad usage with one line in err naming the option and the problem. */
int config_parse(Config *c, int argc, char **argv, char *err, size_t errlen);

/* Print the full option list with defaults: each option's line from its
 * row in settings.def. */
void config_usage(FILE *out, const char *prog);

/* Parse helpers (exposed for tests). Each returns 0 or -1. */
int config_parse_size(const char *s, int *w, int *h);      /* "N" or "WxH" */
int config_parse_color(const char *s, float rgb[3]);       /* "RRGGBB" or "#RRGGBB" */
/* Frames every this many steps for fps frames per second of simulated time:
 * max(1, round(1 / (fps × dt))), at most --every's maximum. */
int config_every(double fps, float dt);
/* --frames: a PATTERN (its name holds a run of '#' or one %d / %0Nd) is
 * split into dir, prefix, digits and suffix (which must end .png or .exr),
 * 1 is returned; a plain DIR returns 0; a bad pattern -1 with err. */
int config_parse_frames(const char *s, Config *c, char *err, size_t errlen);
/* Whether --frames S names a folder (no # or % after its last '/'), not a
 * file pattern. */
bool config_frames_is_folder(const char *s);

/* Scene files (scene.h) give their settings as options, through the same
 * parsing and ranges as the command line:
 * config_option applies the long option NAME ("dt", "no-gather") with its
 * value (NULL for a flag) to c, and marks it given; its range is checked as
 * config_parse checks it (solver parameters: method_params_check after).
 * 0, or -1 with one line in err ("config: --NAME: ..."). */
int config_option(Config *c, const char *name, const char *arg, char *err, size_t errlen);
/* Calls fn(ctx, NAME, value) for each option of argv in order, by its long
 * name (-q: "quiet", -v: "verbose"), skipping images and what config_parse
 * refuses; returns how many. */
int config_each_option(int argc, char **argv, void (*fn)(void *ctx, const char *name, const char *arg),
                       void *ctx);
/* The value of argv's last --scene, or NULL: what main reads before it
 * parses the scene's options and argv's together. */
const char *config_find_scene(int argc, char **argv);
/* The value of argv's last --dt where it is one config_parse takes, else 0:
 * the dt at which a scene's time keys become steps. */
float config_find_dt(int argc, char **argv);

#endif
