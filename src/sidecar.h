/* sidecar: a run's record in JSON (through jansson), for render farms and
 * pipelines: the version, the backend and renderer, the grid, the
 * parameters, where it resumed from, its checkpoints, and a row of metrics
 * per frame. Written atomically (temporary file, fsync, rename) whenever
 * the caller asks: at each checkpoint and at the end. GL-free.
 *
 *   SidecarRun run = {.version = "0.1.0", .backend = "cpu", .renderer = "cpu", ...};
 *   Sidecar *s = sidecar_create("out/run.json", &run);
 *   sidecar_row(s, step, time, error, mass, max_div, frame, "frame_00001.png");
 *   sidecar_write(s, "complete", 0, last_step, err, sizeof err);
 *   sidecar_free(s);
 *
 * The file: {"smokemorph": VERSION, "format": 1, "status": "running" |
 * "complete" | "interrupted" | "failed", "exit_code", "backend", "renderer",
 * "grid": {"w", "h"}, "steps", "every", "last_step", "mass_match",
 * "resumed_from": null | {"file", "step"}, "parameters": {NAME: value, ...
 * (method_param_info's names)}, "frames_dir", "checkpoints": [{"step",
 * "file"}], "frames": [{"step", "time", "error", "mass", "max_div", and with
 * a frame "frame", "file"; with fields recorded "field_mass": [each
 * field's]}], and with fields recorded "fields": [{"name", "color":
 * "#rrggbb"}]}. With several fields, error and mass are of them all. */
#ifndef SMOKEMORPH_SIDECAR_H
#define SMOKEMORPH_SIDECAR_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"

typedef struct {
    const char *version;      /* smokemorph's */
    const char *backend;      /* cpu, fragment or compute */
    const char *renderer;     /* the GL renderer string, or "cpu" */
    int w, h;                 /* the grid */
    long steps;               /* --steps (0: until the morph settles) */
    int every;
    bool mass_match;
    const SolverParams *params;
    const char *frames_dir;   /* NULL: no frames */
    const char *resumed_from; /* the checkpoint's path, NULL: a fresh run */
    long resumed_step;
    /* the smoke fields, in order: name (density.NAME) and colour (sRGB);
     * 0: none recorded */
    int nfields;
    const char *const *field_names;
    const float (*field_rgb)[3];
} SidecarRun;

typedef struct Sidecar Sidecar;

/* NULL when out of memory. */
Sidecar *sidecar_create(const char *path, const SidecarRun *run);
/* A row of metrics; frame 0 and file NULL: no frame at this step. 0 or -1
 * (out of memory). */
int sidecar_row(Sidecar *s, long step, double time, double error, double mass, double max_div,
                int frame, const char *file);
/* Each field's mass (n of them) into the last row, as "field_mass". 0 or -1. */
int sidecar_row_fields(Sidecar *s, const double *mass, int n);
int sidecar_checkpoint(Sidecar *s, long step, const char *path);
/* The whole record to the file, atomically; 0, or -1 with one line in err
 * ("cannot write PATH: why"). */
int sidecar_write(Sidecar *s, const char *status, int exit_code, long last_step, char *err,
                  size_t errlen);
const char *sidecar_path(const Sidecar *s);
/* Whether a file can be made at path (made and removed at once): a run
 * checks before its first frame. 0, or -1 with "cannot write PATH: why". */
int sidecar_probe(const char *path, char *err, size_t errlen);
void sidecar_free(Sidecar *s);

/* Whether path is a smokemorph record (a JSON object with "smokemorph"):
 * what a run may replace. */
bool sidecar_is_ours(const char *path);
/* The frames (file names) that the records in dir (run.json, a chunk's
 * run_A-B.json) list: an earlier run's own, which a run may replace or
 * remove. *n of them (0 and NULL: none, or dir unreadable); free with
 * sidecar_names_free. */
char **sidecar_listed_frames(const char *dir, int *n);
void sidecar_names_free(char **names, int n);

#endif
