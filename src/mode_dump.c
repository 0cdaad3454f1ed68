/* mode_dump: --dump-scene; see mode_dump.h. */
#include "mode_dump.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "inputs.h"
#include "log.h"

/* --dump-scene: the run's scene as JSON on stdout (scene.h): the scene with
 * the options given, or a command line's images and options. 0 or 1. */
int mode_dump_scene(const Config *c, const Scene *scene, int nargs, char **args, const char *argv0)
{
    char err[1024], p0[PATH_MAX + 32], p1[PATH_MAX + 32];
    Scene *own = NULL;
    if (!scene) {
        const char *start = c->current_path;
        const char *keys[CONFIG_KEYS_MAX];
        int n = c->nkeys;
        for (int k = 0; k < n; k++) keys[k] = c->key_paths[k];
        if (!start) { /* the bundled pair */
            inputs_bundled(argv0, p0, p1, sizeof p0);
            start = p0;
            keys[0] = p1;
            n = 1;
        }
        bool sequence = n > 1 || c->key_every_set;
        if (!(own = scene_from_images(start, keys, n, sequence ? c->key_every : 0)))
            die("smokemorph", "out of memory");
        scene = own;
    }
    int rc = scene_write(stdout, scene, nargs, args, err, sizeof err) < 0 || fflush(stdout) != 0;
    if (rc) log_error("scene", "cannot write the scene to stdout: %s", err);
    scene_free(own);
    return rc;
}

