/* mode_window: a run in a window (view.h): the run's options as the view
 * takes them, written once for every kind of run (one morph, a scene's
 * fields, a resumed run, a compare).
 *
 *   int rc = mode_window_run(ctx, &c, m, shader_dir, NULL, 0.0f, NULL);
 */
#ifndef SMOKEMORPH_MODE_WINDOW_H
#define SMOKEMORPH_MODE_WINDOW_H

#include "compare.h"
#include "config.h"
#include "glctx.h"
#include "inputs.h"

/* m: the morph shown (field 0); fs: a scene's fields when it has several
 * (NULL: one), composited with density_scale; cmp: a compare's two morphs
 * (NULL: none). The exit status. */
int mode_window_run(GlCtx *ctx, const Config *c, Morph *m, const char *shader_dir, const Fields *fs,
                    float density_scale, Compare *cmp);

#endif
