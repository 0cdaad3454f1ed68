/* mode_compare: --compare SETTINGS and --compare-preset NAME (issue 11):
 * two morphs from one start, A with the run's parameters and B with the
 * settings changed, side by side in a window, or headless with both runs'
 * metrics columns and frames side by side.
 */
#ifndef SMOKEMORPH_MODE_COMPARE_H
#define SMOKEMORPH_MODE_COMPARE_H

#include <stdbool.h>

#include "config.h"
#include "glctx.h"
#include "image.h"
#include "morph.h"

/* The run; its exit status (2: bad settings). */
int mode_compare_run(const Config *c, const Image *start, const Image *target, MorphBackend backend,
                     GlCtx *ctx, bool window, const char *shader_dir, float density_scale);

#endif
