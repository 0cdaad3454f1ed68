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

/* --backend: auto picks at start (main.c; the rule is in --help and the
 * README). */
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

    /* run mode */
    Backend backend;           /* --backend, --cpu; default auto */
    bool headless;             /* --headless */
    bool gl_info;              /* --gl-info */
    const char *shader_dir;    /* --shader-dir DIR */
    int steps_per_frame;       /* --steps-per-frame N (window), default 2 */
    int win_w, win_h;          /* --window WxH, default 768x768 */
    const char *screenshot;    /* --screenshot FILE (window: save after --steps, quit) */
    const char *keys;          /* --keys STR (window: keys pressed at start) */
    const char *window_only;   /* the first window-only option given (--keys, --window,
                                  --steps-per-frame): an error in a headless run */
    int verbosity;             /* 0 quiet, 1 normal, 2 verbose */
    bool progress;             /* progress line on stderr (default on; off with --quiet) */
} Config;

/* Defaults for everything. */
void config_defaults(Config *c);

/* Parse argv into c (config_defaults is applied first).
 * Returns 0 to run, 1 when --help or --version was printed to stdout,
 * -1 on bad usage with one line in err naming the option and the problem. */
int config_parse(Config *c, int argc, char **argv, char *err, size_t errlen);

/* Print the full option list with defaults. */
void config_usage(FILE *out, const char *prog);

/* Parse helpers (exposed for tests). Each returns 0 or -1. */
int config_parse_size(const char *s, int *w, int *h);      /* "N" or "WxH" */
int config_parse_color(const char *s, float rgb[3]);       /* "RRGGBB" or "#RRGGBB" */

#endif
