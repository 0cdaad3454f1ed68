/* view: the live window. freeglut callbacks, keys, mouse stirring and the
 * on-screen drawing of the fields. The simulation advances a fixed number of
 * steps per displayed frame (dt is fixed, independent of the frame rate).
 *
 *   ViewOptions vo = {.steps_per_frame = 2, .shader_dir = dir};
 *   return view_run(ctx, morph, &vo);   // returns when the window closes
 */
#ifndef SMOKEMORPH_VIEW_H
#define SMOKEMORPH_VIEW_H

#include <stdbool.h>

#include "glctx.h"
#include "morph.h"

typedef struct {
    int steps_per_frame;     /* simulation steps per displayed frame */
    long max_steps;          /* 0: run until quit; else quit after this many */
    const char *shader_dir;
    float color[3];          /* smoke colour */
    const char *screenshot;  /* when set: after max_steps, save the window to this PNG and quit */
    const char *keys;        /* keys to press, one per displayed frame, at the start */
    bool verbose_keys;       /* print the key list at start */
} ViewOptions;

/* Runs the window until quit. Returns the process exit status. */
int view_run(GlCtx *ctx, Morph *m, const ViewOptions *o);

#endif
