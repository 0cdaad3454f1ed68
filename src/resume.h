/* resume: a run from a checkpoint (--resume FILE). resume_load reads it
 * and makes the Config agree (its grid, images, parameters; an option given
 * overrides its parameter and says so); a plain run's checkpoint runs
 * through resume_run, a sequence's or a scene's morphs, made from the
 * command line's or the scene's images, take its state through
 * resume_sequence or resume_scene once their images are checked to be its
 * run's. Each 0, or -1 after one line on stderr.
 */
#ifndef SMOKEMORPH_RESUME_H
#define SMOKEMORPH_RESUME_H

#include <stdbool.h>

#include "checkpoint.h"
#include "config.h"
#include "glctx.h"
#include "inputs.h"
#include "scene.h"

int resume_load(Config *c, Checkpoint *ck, const Scene *scene);
int resume_sequence(Morph *m, const Config *c, const Checkpoint *ck, const float *start);
int resume_scene(const Fields *fs, const Config *c, Checkpoint *ck, const Scene *scene,
                 const float *const *start);
/* A plain run's checkpoint: the morph from its images, given its state, run
 * headless or in a window; frees ck; its exit status. */
int resume_run(Config *c, Checkpoint *ck, GlCtx *ctx, MorphBackend backend, bool window,
               const char *renderer, const char *shader_dir);

#endif
