/* mode_headless: a run without a window: the steps, with frames, metrics,
 * the sidecar, checkpoints and a progress line; the read-backs of output
 * steps in flight behind the steps; Ctrl-C and SIGTERM end it cleanly
 * (exit 128+N), the frames and rows written so far complete.
 *
 *   HeadlessInfo info = {.renderer = "cpu"};
 *   int rc = mode_headless_run(&fields, &c, density_scale, &info);  // the exit status
 */
#ifndef SMOKEMORPH_MODE_HEADLESS_H
#define SMOKEMORPH_MODE_HEADLESS_H

#include <stdbool.h>

#include "checkpoint.h"
#include "config.h"
#include "inputs.h"

/* What a headless run knows beyond the Config: where it resumed from, and
 * what goes into the sidecar. */
typedef struct {
    const Checkpoint *resume; /* NULL: a fresh run */
    const char *renderer;     /* the GL renderer string, or "cpu" */
    bool scene;               /* a --scene run: its checkpoints say so */
} HeadlessInfo;

/* The run; its exit status (0, 1, or 128+N after signal N). */
int mode_headless_run(Fields *fs, const Config *c, float density_scale, const HeadlessInfo *info);

#endif
