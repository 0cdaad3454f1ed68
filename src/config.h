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

/* Config's members that a row of settings.def declares: every C row of a
 * plain kind (a flag, a number, a path, a string, a choice, a colour; a
 * member within a struct of Config's, ImageLoadOpts, is SK_SPECIAL). Their
 * meaning, default and range are the row's; --help says them. */
#define CONFIG_MEMBER_SK_INT(M) int M;
#define CONFIG_MEMBER_SK_LONG(M) long M;
#define CONFIG_MEMBER_SK_BOOL(M) bool M;
#define CONFIG_MEMBER_SK_NOT(M) bool M;
#define CONFIG_MEMBER_SK_ENUM(M) unsigned M; /* the choice's index: an enum's value */
#define CONFIG_MEMBER_SK_PATH(M) const char *M;
#define CONFIG_MEMBER_SK_STR(M) const char *M;
#define CONFIG_MEMBER_SK_COLOR(M) float M[3];
#define CONFIG_MEMBER_SK_FLOAT(M) float M;
#define CONFIG_MEMBER_SK_SPECIAL(M)
#define CONFIG_MEMBER_SK_ACTION(M)
#define CONFIG_MEMBER_C(KIND, MEMBER) CONFIG_MEMBER_##KIND(MEMBER)
#define CONFIG_MEMBER_P(KIND, MEMBER)
#define CONFIG_MEMBER_S(KIND, MEMBER)

typedef struct {
    /* every setting with a member of its own: settings.def */
#define SETTING_GROUP(ID, TITLE)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, ...) CONFIG_MEMBER_##WHERE(KIND, MEMBER)
#include "settings.def"
#undef SETTING
#undef SETTING_GROUP

    /* inputs */
    const char *current_path;  /* NULL: bundled default */
    const char *target_path;   /* NULL: bundled default */
    ImageLoadOpts load;        /* --raw, --channel, --invert, --max-image-mb (each image's
                                  defaults: an image's own suffix overrides them) */
    bool set_extras;           /* --drift, --drift-max or an --ease-* was given */
    /* keyframe sequences (issue 9): smokemorph CURRENT TARGET1 TARGET2 ...
     * Key k (from 1) is the goal for steps (k-1)*key_every+1 .. k*key_every,
     * the last key after that. key_paths[0] is target_path; nkeys is 0 with
     * no images (the bundled pair), else 1.. CONFIG_KEYS_MAX. Headless with
     * no --steps, a sequence of several keys runs nkeys * key_every steps. */
    const char *key_paths[CONFIG_KEYS_MAX];
    int nkeys;
    bool key_every_set;        /* --key-every was given */

    /* simulation */
    int grid_w, grid_h;        /* --grid N|WxH, default 256x256 */
    bool grid_set;             /* --grid was given (else main takes the start image's aspect) */
    SolverParams params;       /* the method's parameters: settings.def's rows P */

    /* output */
    const char *frames_dir;    /* --frames DIR */
    int out_w, out_h;          /* --size WxH, 0 = grid size */
    float density_scale;       /* --density-scale S|auto: alpha = density × S; 0 = auto
                                  (default; export_auto_scale) */
    ImageExrCompression exr_compression; /* --exr-compression, default zip */
    bool png_set;              /* --png-compression given */
    bool format_set, exr_set;  /* --format given; an --exr-* option given */
    double fps;                /* --fps, default 24 */
    bool every_set;            /* --every given; else every = max(1, round(1 / (fps × dt))):
                                  simulated time runs in seconds */
    long range_first, range_last; /* --frame-range A-B; range_last < 0: none. With a
                                  range the run stops at B's step, (B - frame_start) ×
                                  every, which must not pass --steps */
    const char *video_path;    /* --video FILE.mp4|FILE.mov */
    /* --frames PATTERN ("out/smoke.####.exr", "out/s.%04d.png"): frames_dir points
     * at frames_dirbuf (the pattern's directory), and the file names are
     * frames_prefix, the number at least frames_digits wide, frames_suffix.
     * frames_digits 0: --frames DIR (DIR/frame_00001.png). */
    int frames_digits;
    char frames_prefix[256], frames_suffix[256];
    char frames_dirbuf[4096];

    /* run mode */
    int win_w, win_h;          /* --window WxH, default 768x768 */
    const char *record;        /* --record FILE.mp4 (window: what it shows, as a video) */
    const char *window_only;   /* the first window-only option given, without "--"
                                  ("keys", "window", ...): an error in a headless run */
    int verbosity;             /* 0 quiet, 1 normal, 2 verbose */
    bool progress;             /* progress line on stderr (default on; off with --quiet) */
    SolverOptions solver;      /* GPU tuning: settings.def's rows S */
    unsigned char given[16];   /* one bit per row of settings.def given (config_given) */
    const char *field_name;    /* a scene's field's name (EXR's density.NAME; NULL:
                                  "smoke"), set by scene_apply */
    const struct Lesson *lesson_ready; /* --lesson's file, read and checked before the
                                  window opens (main; lesson.h); NULL: none */
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
