/* fuzz_scene: the scene parser (scene.h), from a memory buffer through
 * json_loadb. Properties: a refusal is one line "fuzz.json:LINE:COLUMN: ..."
 * with a position in the text (LINE >= 1); an accepted scene's settings
 * parse as a command line (scene_args, then config_parse) with parameters
 * in range; its dump (--dump-scene) reads back, and dumps again to the same
 * text. Relative paths are joined to a folder that does not exist: nothing
 * is read but the input. */
#include "fuzz.h"

#include "config.h"
#include "scene.h"

#define DIR "/nonexistent-fuzz-scene"

/* scene_write into a malloc'd string (NULL: failed). */
static char *dump(const Scene *s, int n, char **args)
{
    char *buf = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int r = scene_write(f, s, n, args, err, sizeof err);
    fclose(f);
    FUZZ_ASSERT(r == 0, "scene_write: %s", err);
    return buf;
}

static void check_error(const char *err, const char *name, size_t size)
{
    FUZZ_ONE_LINE(err);
    int line = 0, col = 0;
    size_t nl = strlen(name);
    FUZZ_ASSERT(strncmp(err, name, nl) == 0 && sscanf(err + nl, ":%d:%d: ", &line, &col) == 2,
                "no FILE:LINE:COLUMN: '%s'", err);
    FUZZ_ASSERT(line >= 1 && col >= 1 && (size_t)line <= size + 1, "position %d:%d: '%s'", line, col,
                err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    char err[1024] = "";
    Scene *s = scene_parse((const char *)data, size, "fuzz.json", DIR, err, sizeof err);
    if (!s) {
        if (strstr(err, "out of memory")) return 0;
        check_error(err, "fuzz.json", size);
        return 0;
    }
    FUZZ_ASSERT(s->nfields >= 1 && s->nfields <= SCENE_FIELDS_MAX, "%d fields", s->nfields);
    for (int i = 0; i < s->nfields; i++) {
        const SceneField *f = &s->field[i];
        FUZZ_ASSERT(f->start && f->nkeys >= 1 && f->nkeys <= SCENE_KEYS_MAX, "field %d", i);
        for (int k = 1; k < f->nkeys; k++)
            FUZZ_ASSERT(f->keys[k].step > f->keys[k - 1].step, "field %d key %d: step %ld after %ld", i,
                        k, f->keys[k].step, f->keys[k - 1].step);
    }
    char *argv0[] = {"smokemorph", NULL};
    char **args = NULL;
    int n = 0;
    FUZZ_ASSERT(scene_args(s, 1, argv0, &n, &args) == 0, "scene_args");
    Config c;
    int r = config_parse(&c, n, args, err, sizeof err);
    FUZZ_ASSERT(r == 0, "an accepted scene's settings are refused: %s", err);
    FUZZ_ASSERT(method_params_check(&c.params) == NULL, "parameters: %s", method_params_check(&c.params));
    char *d1 = dump(s, n, args);
    free(args);
    scene_free(s);
    FUZZ_ASSERT(d1, "no dump");
    Scene *s2 = scene_parse(d1, strlen(d1), "dump.json", DIR, err, sizeof err);
    FUZZ_ASSERT(s2, "the dump does not read back: %s\n%s", err, d1);
    FUZZ_ASSERT(scene_args(s2, 1, argv0, &n, &args) == 0, "scene_args");
    char *d2 = dump(s2, n, args);
    FUZZ_ASSERT(d2 && strcmp(d1, d2) == 0, "the dump of the dump differs:\n%s\n--\n%s", d1, d2);
    free(args);
    scene_free(s2);
    free(d1);
    free(d2);
    return 0;
}
