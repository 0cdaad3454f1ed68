/* mode_dump: --dump-scene, the run's scene as JSON on stdout: a scene with
 * the options given, or the command line's images and options as one. */
#ifndef SMOKEMORPH_MODE_DUMP_H
#define SMOKEMORPH_MODE_DUMP_H

#include "config.h"
#include "scene.h"

/* nargs, args: the options as parsed (a scene's first); 0 or 1. */
int mode_dump_scene(const Config *c, const Scene *scene, int nargs, char **args, const char *argv0);

#endif
