/* inputs: a run's images and smoke fields, GL-free: the bundled targets,
 * each field's paths and load options (the command line's, or a scene's),
 * the images loaded onto the grid with the hints a new user needs, the
 * keys and sources given to each field's morph, a scene's outputs confined
 * to its folder, and the run's memory and step time checked before
 * anything is made. A bad image ends the run (die) with one line.
 *
 *   FieldImages *fim = calloc(nf, sizeof *fim);
 *   for (int i = 0; i < nf; i++) inputs_paths(&fim[i], &c, scene, i);
 *   inputs_load(fim, nf, &c);                  // onto the grid (c's may change)
 *   if (inputs_check_run(&c, fim, nf, backend, headless) < 0) ...
 *   m = morph_create_opts(...fim[i].start->px, fim[i].keys[0]->px...);
 *   inputs_schedule(m, &fim[i], &c, scene, i, err, sizeof err);
 *   inputs_free(fim, nf);
 */
#ifndef SMOKEMORPH_INPUTS_H
#define SMOKEMORPH_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "export.h"
#include "image.h"
#include "morph.h"
#include "scene.h"

/* The run's smoke fields: one, or a scene's several sharing one velocity
 * (stepped together by morph_step_fields; field 0 holds the velocity, its
 * key is the metrics' key), and how the frames show each. */
typedef struct {
    int n;
    Morph *m[MORPH_MAX_FIELDS];
    ExportField show[MORPH_MAX_FIELDS]; /* name (density.NAME) and colour */
    char name[MORPH_MAX_FIELDS][40];
} Fields;

/* A smoke field's images, loaded onto the grid, and how the frames show it. */
typedef struct {
    const SceneField *sf;      /* its scene field; NULL: the command line's images */
    const char *start_path;
    const char *key_path[CONFIG_KEYS_MAX];
    int nkeys;
    ImageLoadOpts load;        /* its channel and invert, the run's --raw and --max-image-mb */
    Image *start, *keys[CONFIG_KEYS_MAX], *src[SCENE_SOURCES_MAX];
    char name[40];
    float rgb[3];
} FieldImages;

/* The data folder SUB (targets, lessons) holding the file PROBE into out
 * (outlen bytes): next to the executable (the source tree: ./SUB, or
 * ../SUB from build/), an install moved as a whole (PREFIX/bin ->
 * PREFIX/share/smokemorph/SUB), else the configured
 * PREFIX/share/smokemorph/SUB. argv0 (NULL: ".") where /proc/self/exe is
 * not there. 0, or -1 when none holds PROBE. */
int inputs_data_dir(const char *argv0, const char *sub, const char *probe, char *out, size_t outlen);

/* The bundled pair's paths (start, target: n bytes each), found next to
 * the executable or under the install prefix; exits with one line when
 * they are not there. */
void inputs_bundled(const char *argv0, char *start, char *target, size_t n);

/* Field i's paths, load options, name and colour into f. */
void inputs_paths(FieldImages *f, const Config *c, const Scene *scene, int i);
/* Every field's images loaded (each file once), checked, hinted and put on
 * the grid; with no --grid the grid takes the start image's aspect (c's
 * grid). Exits with one line on a bad image. */
void inputs_load(FieldImages *fim, int nf, Config *c);
void inputs_free(FieldImages *fim, int nf);
/* Field i's keys and sources into its morph. 0, or -1 with one line in err. */
int inputs_schedule(Morph *m, const FieldImages *f, const Config *c, const Scene *scene, int i,
                    char *err, size_t errlen);
/* The run's memory (--max-memory) and, on the CPU, a step's time from its
 * parameters' bounds, before anything is made. 0, or -1 after one line. */
int inputs_check_run(const Config *c, const FieldImages *fim, int nf, MorphBackend backend, bool headless);
/* A scene's frames, metrics and video inside its folder unless the command
 * line (argv) gives them or --allow-scene-outputs. 0, or -1 with one line in err. */
int inputs_confine_scene_outputs(const Config *c, const char *scene_path, int argc, char **argv,
                                 char *err, size_t errlen);
/* Every field's morph (fs->m[i], with fim[i]'s name and colour), its keys
 * and sources set, and several fields checked to share one velocity. 0,
 * or -1 after one line (the morphs made stay in fs: inputs_free_fields). */
int inputs_make_fields(Fields *fs, const FieldImages *fim, int nf, const Config *c, const Scene *scene,
                       MorphBackend backend, const char *shader_dir);
void inputs_free_fields(Fields *fs);
/* morph_create's message on stderr: as it is where it has a tag (shader:,
 * field:, scene:), else under the backend's ("solver" on a GPU). */
void inputs_say_morph_error(const char *err, bool gpu);

#endif
