/* scene: scene files (issue 9). A scene is JSON, read by jansson: the run's
 * settings (the options' values, under the names of docs/SCENES.md),
 * and up to SCENE_FIELDS_MAX smoke fields, each with a start image, keys (a
 * target reached by a step or a time, with its own vf, vd, vg and sigma and
 * an optional move) and sources. GL-free, and no image is read here: a
 * scene holds paths (relative ones joined to the scene file's folder).
 *
 *   char err[1024];
 *   Scene *s = scene_load("shot.json", err, sizeof err);
 *       // err: "shot.json:7:21: fields[0].keys[1].vf: must be in [0, 10000]"
 *   int n; char **args;
 *   scene_args(s, argc, argv, &n, &args);   // the scene's settings as options, then argv's
 *   config_parse(&c, n, args, ...);         // so the command line overrides the scene
 *   scene_apply(s, &c, err, sizeof err);    // images and keys' steps (with c's dt) into c
 *   scene_write(stdout, s, n, args, ...);   // --dump-scene: the effective scene
 *   free(args); scene_free(s);
 *
 * Every error is one line: FILE:LINE:COLUMN: PATH: what, where PATH is the
 * key's path (fields[0].keys[1].vf) and LINE:COLUMN (from 1, in characters)
 * where its value (or, for an unknown key, the key) starts. */
#ifndef SMOKEMORPH_SCENE_H
#define SMOKEMORPH_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

#define SCENE_FIELDS_MAX 4         /* fields a scene may hold (MORPH_MAX_FIELDS) */
#define SCENE_KEYS_MAX CONFIG_KEYS_MAX
#define SCENE_SOURCES_MAX 64
#define SCENE_COORD_MAX 10.0       /* |x|, |y| of a move or a disc's centre, domain units */
#define SCENE_SCALE_MAX 10.0       /* a moving target's scale, (0, 10] */
#define SCENE_RADIUS_MAX 10.0      /* a disc source's radius, (0, 10] */
#define SCENE_RATE_MAX 10000.0     /* a source's rate, density per unit time, (0, 1e4] */

/* A key's own parameters, for its range only (the others: the run's). */
enum { SCENE_VF, SCENE_VD, SCENE_VG, SCENE_SIGMA, SCENE_KEY_PARAMS };

typedef struct {
    long step;            /* the step by which the key is reached; 0: none (a field's
                             single key, with no parameters, move or source: the plain
                             morph, which headless runs until it settles) */
    double time;          /* seconds, with has_time: step = round(time / dt) */
    bool has_time;
    char *target;         /* the image's path; the key's own channel and invert as its
                             suffix, "PATH:channel=a,invert=1" (image_spec) */
    bool has[SCENE_KEY_PARAMS];
    float param[SCENE_KEY_PARAMS];
    bool moves;           /* "move" or "scale" given */
    float move_from[2], move_to[2]; /* the image's offset, domain units (x right, y down) */
    float scale_from, scale_to;     /* about the grid's centre (1: as is) */
    int line, column;     /* where the key's object starts in the file (0: not from a file) */
} SceneKey;

typedef struct {
    char *image;          /* the image's path, or NULL: a disc */
    float cx, cy, radius; /* the disc, domain units */
    float rate;           /* density per unit time (times the image's value) */
    long from, to;        /* during steps from+1 .. to */
} SceneSource;

typedef struct {
    char *name;           /* NULL: none given */
    char *start;          /* the start image's path */
    char *color, *channel;/* as written ("#ff4020", "luma"); NULL: not given */
    int invert;           /* -1 not given, else 0 or 1 */
    SceneKey *keys;
    int nkeys;
    SceneSource *sources;
    int nsources;
    int line, column;
} SceneField;

/* A setting of the scene as the option it stands for: "--dt" "0.01". */
typedef struct {
    char *flag;           /* "--dt" */
    char *value;          /* its value, NULL for a flag */
    const char *key;      /* the scene's name for it: "dt" */
    int line, column;
} SceneOption;

typedef struct {
    char *file;           /* the scene's name in messages (its path) */
    SceneOption *opts;
    int nopts;
    SceneField field[SCENE_FIELDS_MAX];
    int nfields;
} Scene;

/* The scene file at PATH; NULL with one line in err. */
Scene *scene_load(const char *path, char *err, size_t errlen);
/* The same from LEN bytes of TEXT, named NAME in messages, relative paths
 * joined to DIR (NULL or "": as they are). */
Scene *scene_parse(const char *text, size_t len, const char *name, const char *dir, char *err,
                   size_t errlen);
/* The same, with DT (> 0) instead of the scene's own dt for its time keys'
 * steps and their checks: the command line's --dt, which overrides the
 * scene's (0: the scene's). scene_apply works them out again at the run's
 * dt. */
Scene *scene_load_at(const char *path, float dt, char *err, size_t errlen);
Scene *scene_parse_at(const char *text, size_t len, const char *name, const char *dir, float dt, char *err,
                      size_t errlen);
/* A scene of one field from a command-line run: START, then keys TARGETS
 * [0..n-1] every EVERY steps (0, with n == 1: the single key has no step). */
Scene *scene_from_images(const char *start, const char *const *targets, int n, long every);
void scene_free(Scene *s);

/* argv[0], the scene's settings as options (field 0's colour, channel and
 * invert among them), then argv[1..argc-1]: parsed by config_parse, the
 * command line's options override the scene's. *out is malloc'd (free it;
 * its strings belong to the scene and argv). 0, or -1 out of memory. */
int scene_args(const Scene *s, int argc, char **argv, int *nout, char ***out);

/* The scene into a parsed Config: field 0's images and name (c's
 * current_path, key_paths, nkeys, field_name), every field's keys' steps
 * from their times with c's dt (the other fields' images stay in the
 * scene). 0, or an error's kind with one line in err when the scene cannot
 * run as the Config says: SCENE_CLASH, images or --key-every also on the
 * command line (bad usage); SCENE_BAD, a time key's step not after the key
 * before it at this dt (a bad file). */
enum { SCENE_BAD = -1, SCENE_CLASH = -2 };
int scene_apply(Scene *s, Config *c, char *err, size_t errlen);

/* Field i's name: its "name", else "smoke" for field 0 and "smokeN" for
 * field N-1 (smoke2, smoke3, ...), written into buf. A scene's names are
 * unique (scene_parse checks). */
const char *scene_field_name(const Scene *s, int i, char *buf, size_t n);

/* --dump-scene: the effective scene as JSON: the settings given in ARGV
 * (scene_args's, or a command line's: each option's last value), then the
 * scene's fields, field 0 with ARGV's colour, channel and invert. Paths are
 * made absolute, so it runs from any folder. 0, or -1 with err. */
int scene_write(FILE *out, const Scene *s, int argc, char **argv, char *err, size_t errlen);

/* Where the value at PATH ("steps[2].view"; "" the document) starts in the
 * JSON TEXT, or its key with at_key: line and column from 1, in characters,
 * as scene errors give them (for other files read with jansson: lesson.h).
 * 0, or -1 when the path is not in the text. */
int scene_json_position(const char *text, size_t len, const char *path, bool at_key, int *line, int *col);

#endif
