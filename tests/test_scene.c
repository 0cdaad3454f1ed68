/* test_scene: scene files (issue 9, point 2). Tier 1 (no GL): every schema
 * error's message, with its FILE:LINE:COLUMN (marked by '@' in the texts
 * below) and key path; time -> step; relative and absolute paths; the
 * settings as options. End to end through the binary ($SMOKEMORPH_BIN,
 * --cpu, small grids): the command line overrides the scene; several
 * fields run (their frames composited as export.h says, each field's raw
 * density in the EXR, each field's mass kept) and what they refuse says so
 * in one line; every example in scenes/ runs; --dump-scene round trips (a
 * command-line run and the run of its dumped scene write the same frames,
 * one field or two). Run from the repository root (scenes/, targets/). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "scene.h"
#include "testlib.h"

static char tmp[64]; /* fixtures */
static char bin[PATH_MAX];
static char root[1024]; /* the repository (the working directory) */

/* A minimal field, for cases about the top level. */
#define FIELD "\"fields\": [{\"start\": \"a.png\", \"keys\": [{\"step\": 5, \"target\": \"b.png\"}]}]"

static void write_text(const char *path, const char *text)
{
    if (testlib_write_file(path, text, strlen(text)) < 0) {
        printf("FAIL cannot write %s\n", path);
        exit(2);
    }
}

/* TEXT with its '@' taken out is the scene; the error must be
 * "PATH:LINE:COLUMN: TAIL" with LINE:COLUMN where the '@' was (from 1, in
 * characters). */
static void expect_error(int line, const char *marked, const char *tail)
{
    char text[4096], path[512], want[1536], err[1024] = "";
    const char *at = strchr(marked, '@');
    size_t n = strlen(marked);
    if (!at || n >= sizeof text) {
        CHECK(0, "line %d: a case needs one '@'", line);
        return;
    }
    memcpy(text, marked, (size_t)(at - marked));
    memcpy(text + (at - marked), at + 1, n - (size_t)(at - marked));
    int l = 1, c = 1;
    for (const char *p = marked; p < at; p++) {
        if (*p == '\n') l = 1 + l, c = 1;
        else if (((unsigned char)*p & 0xC0) != 0x80) c++;
    }
    snprintf(path, sizeof path, "%s/s.json", tmp);
    write_text(path, text);
    snprintf(want, sizeof want, "%s:%d:%d: %s", path, l, c, tail);
    Scene *s = scene_load(path, err, sizeof err);
    CHECK(!s && strcmp(err, want) == 0, "line %d:\n  got      '%s'\n  expected '%s'", line,
          s ? "(accepted)" : err, want);
    CHECK(!strchr(err, '\n'), "line %d: one line", line);
    scene_free(s);
}

#define BAD(marked, tail) expect_error(__LINE__, marked, tail)

static Scene *load_text(int line, const char *name, const char *text)
{
    char path[512], err[1024] = "";
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    write_text(path, text);
    Scene *s = scene_load(path, err, sizeof err);
    CHECK(s != NULL, "line %d: %s", line, err);
    return s;
}

/* ---------------------------------------------------------------------- */

static void test_syntax_errors(void)
{
    /* jansson's own positions: the last character it read */
    BAD("{\"grid\": [64 6@4], " FIELD "}", "']' expected near '64'");
    BAD("{\"dt\": 0.01,\n \"dt@\": 0.02, " FIELD "}", "duplicate object key near '\"dt\"'");
    BAD("{\"dt\": 0.01,\n \"fields\": [@}", "unexpected token near '}'");
    BAD("@", "'[' or '{' expected near end of file");
    /* a NUL byte, which jansson would skip: found by fuzz_scene */
    char path[512], err[1024] = "";
    snprintf(path, sizeof path, "%s/nul.json", tmp);
    static const char nul[] = "{ \"grid\": [25\0, 256], " FIELD "}";
    testlib_write_file(path, nul, sizeof nul - 1);
    Scene *s = scene_load(path, err, sizeof err);
    char want[600];
    snprintf(want, sizeof want, "%s:1:14: a NUL byte: a scene is JSON text", path);
    CHECK(!s && strcmp(err, want) == 0, "NUL: '%s'", err);
    scene_free(s);
    snprintf(path, sizeof path, "%s/none.json", tmp);
    s = scene_load(path, err, sizeof err);
    CHECK(!s && strstr(err, "scene: cannot read ") == err && strstr(err, "No such file"),
          "missing file: '%s'", err);
}

static void test_top_errors(void)
{
    BAD("@[1, 2]", "(top): expected an object: { \"fields\": [...], ... }");
    BAD("{@\"dtt\": 1, " FIELD "}",
        "dtt: unknown key (not a setting of a scene: docs/SCENES.md lists them)");
    BAD("{\"dt\": @\"x\", " FIELD "}", "dt: expected a number");
    BAD("{\"dt\":\n    @2, " FIELD "}", "dt: must be in (0, 1]");
    BAD("{\"grid\": @[4, 4], " FIELD "}", "grid: expected N or [W, H] with sides 8..8192");
    BAD("{\"grid\": @[64], " FIELD "}", "grid: expected an integer N or [W, H]");
    BAD("{\"steps\": @1.5, " FIELD "}", "steps: expected an integer");
    BAD("{\"steps\": @-1, " FIELD "}", "steps: expected an integer 0..100000000");
    BAD("{\"gather\": @1, " FIELD "}", "gather: expected true or false");
    BAD("{\"force\": @\"strong\", " FIELD "}", "force: expected 'balance' or 'fattal'");
    BAD("{\"sigma\": @0, " FIELD "}", "sigma: must be in (0, 1] (domain units)");
    BAD("{\"every\": @0, " FIELD "}", "every: expected an integer 1..1000000");
    BAD("{\"frames\": @\"/out/a.####.jpg\", " FIELD "}",
        "frames: '/out/a.####.jpg': a pattern's name ends in .png or .exr");
    BAD("{\"density_scale\": @true, " FIELD "}", "density_scale: expected a number or \"auto\"");
    BAD("{\"arrive\": @\"soon\", " FIELD "}", "arrive: expected a number or \"auto\"");
    BAD("{\"arrive\": @-1, " FIELD "}", "arrive: must be auto or in [0 (untimed), 10000] seconds");
    BAD("{\"background\": @\"blue\", " FIELD "}", "background: expected RRGGBB or #RRGGBB (hex)");
    /* settings that are fine alone, not together: the first one named */
    BAD("{\"jacobi\": @0, \"vcycles\": 0, " FIELD "}",
        "jacobi: --jacobi and --vcycles cannot both be 0 (no projection)");
    BAD("{\"exr_type\": @\"float\", " FIELD "}",
        "exr_type: --exr-type, --exr-compression, --exr-tiled and --exr-velocity are for EXR frames: add "
        "--format exr");
    BAD("@{\"dt\": 0.01}",
        "fields: missing: a scene needs \"fields\": [ { \"start\": ..., \"keys\": [...] } ]");
    BAD("{\"fields\": @{}}", "fields: expected an array of 1..4 fields");
    BAD("{\"fields\": @[]}", "fields: expected an array of 1..4 fields");
    BAD("{\"fields\": @[{}, {}, {}, {}, {}]}", "fields: expected an array of 1..4 fields");
}

static void test_field_errors(void)
{
    BAD("{\"fields\": [{\"start\": \"a.png\",\n  @\"colour\": \"#fff\"}]}",
        "fields[0].colour: unknown key (expected name, color, start, channel, invert, keys, sources)");
    BAD("{\"fields\": [@{\"keys\": [{\"step\": 5, \"target\": \"b\"}]}]}",
        "fields[0].start: missing: a field needs a start image and keys");
    BAD("{\"fields\": [@{\"start\": \"a\"}]}", "fields[0].keys: missing: a field needs a start image and keys");
    BAD("{\"fields\": [@3]}", "fields[0]: expected an object: {\"start\": PATH, \"keys\": [...], ...}");
    BAD("{\"fields\": [{\"name\": @\"a b\"}]}",
        "fields[0].name: expected a name of 1..32 letters, digits, _ or -");
    BAD("{\"fields\": [{\"color\": @\"#ff40\"}]}", "fields[0].color: expected RRGGBB or #RRGGBB (hex)");
    BAD("{\"fields\": [{\"channel\": @\"x\"}]}", "fields[0].channel: expected r, g, b, a or luma");
    BAD("{\"fields\": [{\"invert\": @\"yes\"}]}", "fields[0].invert: expected true or false");
    BAD("{\"fields\": [{\"start\": @\"\"}]}", "fields[0].start: expected a path, got \"\"");
    BAD("{\"fields\": [{\"start\": @7}]}", "fields[0].start: expected a path (a string)");
    BAD("{\"fields\": [{\"start\": \"a\", \"keys\": @[]}]}", "fields[0].keys: expected an array of 1..256 keys");
    BAD("{\"fields\": [{\"start\": \"a\", \"keys\": [{\"step\": 5, \"target\": \"b\"}], \"sources\": @{}}]}",
        "fields[0].sources: expected an array of at most 64 sources");
    /* columns count characters: é is one */
    /* several fields: names of their own (the EXR's density.NAME), no key's vd */
    BAD("{\"fields\": [{\"name\": \"a\", \"start\": \"a\", \"keys\": [{\"target\": \"b\"}]},\n"
        " {\"name\": @\"a\", \"start\": \"b\", \"keys\": [{\"target\": \"a\"}]}]}",
        "fields[1].name: 'a' is fields[0]'s name too: each field needs a name of its own (the EXR's "
        "density.NAME)");
    BAD("{\"fields\": [{\"name\": \"smoke2\", \"start\": \"a\", \"keys\": [{\"target\": \"b\"}]},\n"
        " @{\"start\": \"b\", \"keys\": [{\"target\": \"a\"}]}]}",
        "fields[1]: its name is 'smoke2' by default, which fields[0] has: give it a \"name\" of its "
        "own (the EXR's density.NAME)");
    BAD("{\"fields\": [{\"start\": \"a\", \"keys\": [{\"target\": \"b\"}]},\n"
        " {\"start\": \"b\", \"keys\": [{\"step\": 5, \"target\": \"a\", \"vd\": @3}]}]}",
        "fields[1].keys[0].vd: the scene's 2 fields share one velocity, damped by the run's vd "
        "(\"vd\" at the top, or --vd): a key cannot have its own");
    BAD("{\"fields\": [{\"start\": \"é.png\", @\"bogus\": 1}]}",
        "fields[0].bogus: unknown key (expected name, color, start, channel, invert, keys, sources)");
}

#define KEYS_OF(k) "{\"fields\": [{\"start\": \"a.png\", \"keys\": [" k "]}]}"

static void test_key_errors(void)
{
    /* the issue's own example: the second key's vf out of the CLI's range */
    BAD("{ \"grid\": [256, 256], \"dt\": 0.01, \"vf\": 0.5, \"frames\": \"out\", \"every\": 10,\n"
        "  \"fields\": [\n"
        "    { \"name\": \"warm\", \"color\": \"#ff4020\", \"start\": \"logo.png\", \"channel\": \"luma\",\n"
        "      \"invert\": false,\n"
        "      \"keys\": [ { \"step\": 600, \"target\": \"word.png\" },\n"
        "                { \"step\": 1200, \"target\": \"logo.png\",\n"
        "                  \"vf\": @10001, \"sigma\": 0.08 } ] } ] }\n",
        "fields[0].keys[1].vf: must be in [0, 10000]");
    BAD(KEYS_OF("{@\"stpe\": 5, \"target\": \"b\"}"),
        "fields[0].keys[0].stpe: unknown key (expected step, time, target, channel, invert, vf, vd, "
        "vg, sigma, move, scale)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"channel\": @\"alfa\"}"),
        "fields[0].keys[0].channel: expected r, g, b, a or luma");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"invert\": @1}"),
        "fields[0].keys[0].invert: expected true or false");
    BAD(KEYS_OF("{\"step\": 600, \"target\": \"b\"},\n {\"step\": @500, \"target\": \"c\"}"),
        "fields[0].keys[1].step: must come after keys[0]'s step 600, got 500");
    BAD(KEYS_OF("{\"step\": @0, \"target\": \"b\"}"), "fields[0].keys[0].step: must be in 1..100000000");
    BAD(KEYS_OF("{\"step\": 5, @\"time\": 1, \"target\": \"b\"}"),
        "fields[0].keys[0].time: give step or time, not both");
    BAD(KEYS_OF("@{\"step\": 5}"), "fields[0].keys[0].target: missing: every key needs a target image");
    BAD(KEYS_OF("@\"b.png\""), "fields[0].keys[0]: expected an object: {\"step\": N, \"target\": PATH, ...}");
    BAD("{\"dt\": 0.1, \"fields\": [{\"start\": \"a\", \"keys\": [{\"step\": 5, \"target\": \"b\"}, "
        "{\"time\": @0.2, \"target\": \"c\"}]}]}",
        "fields[0].keys[1].time: 0.2 s is step 2 at dt 0.1: must come after keys[0]'s step 5");
    BAD(KEYS_OF("{\"time\": @0.001, \"target\": \"b\"}"),
        "fields[0].keys[0].time: 0.001 s is step 0 at dt 0.01: must be step 1..100000000");
    BAD(KEYS_OF("{\"time\": @-1, \"target\": \"b\"}"), "fields[0].keys[0].time: must be in (0, 1e+12]");
    BAD(KEYS_OF("@{\"target\": \"b\"}, {\"step\": 5, \"target\": \"c\"}"),
        "fields[0].keys[0].step: missing: a step or a time (a key with parameters, a move or sources, "
        "or one of several keys, needs one)");
    BAD(KEYS_OF("@{\"target\": \"b\", \"vg\": 0.1}"),
        "fields[0].keys[0].step: missing: a step or a time (a key with parameters, a move or sources, "
        "or one of several keys, needs one)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\"}, @{\"target\": \"c\"}"),
        "fields[0].keys[1].step: missing: a step or a time (only a field's single key may have neither)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"vf\": @\"x\"}"), "fields[0].keys[0].vf: expected a number");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"vd\": @-1}"), "fields[0].keys[0].vd: must be in [0, 10000]");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"vg\": @1e5}"), "fields[0].keys[0].vg: must be in [0, 10000]");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"sigma\": @2}"),
        "fields[0].keys[0].sigma: must be in (0, 1] (domain units)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"move\": {\"from\": [0, 0], \"to\": @[1]}}"),
        "fields[0].keys[0].move.to: expected [x, y] (domain units)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"move\": {\"to\": [@11, 0]}}"),
        "fields[0].keys[0].move.to[0]: must be in [-10, 10]");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"move\": {@\"by\": [1, 0]}}"),
        "fields[0].keys[0].move.by: unknown key (expected from, to)");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"move\": @[1, 0]}"),
        "fields[0].keys[0].move: expected an object: {\"from\": [x, y], \"to\": [x, y]}");
    BAD(KEYS_OF("{\"step\": 5, \"target\": \"b\", \"scale\": {\"from\": @0}}"),
        "fields[0].keys[0].scale.from: must be in (0, 10]");
}

#define SOURCE_OF(s) "{\"fields\": [{\"start\": \"a\", \"keys\": [{\"step\": 5, \"target\": \"b\"}], " \
                     "\"sources\": [" s "]}]}"

static void test_source_errors(void)
{
    BAD(SOURCE_OF("{\"image\": \"a.png\", @\"disc\": {\"center\": [0, 0], \"radius\": 1}}"),
        "fields[0].sources[0].disc: give image or disc, not both");
    BAD(SOURCE_OF("@{\"image\": \"a.png\", \"to\": 5}"),
        "fields[0].sources[0].rate: missing: a source needs an image or a disc, a rate and the step it "
        "ends at (to)");
    BAD(SOURCE_OF("@{\"rate\": 1, \"to\": 5}"),
        "fields[0].sources[0].image: missing: a source needs an image or a disc, a rate and the step it "
        "ends at (to)");
    BAD(SOURCE_OF("{\"image\": \"a\", \"rate\": 1, \"from\": 10, \"to\": @5}"),
        "fields[0].sources[0].to: must be after from (10), got 5");
    BAD(SOURCE_OF("{\"disc\": {\"center\": [0.5, 0.5], \"radius\": @0}, \"rate\": 1, \"to\": 5}"),
        "fields[0].sources[0].disc.radius: must be in (0, 10]");
    /* more than 0 as a double, 0 as the float it is kept in (a fuzz finding:
     * accepted, then dumped as 0, which does not read back) */
    BAD(SOURCE_OF("{\"disc\": {\"center\": [0.5, 0.5], \"radius\": @8.2e-74}, \"rate\": 1, \"to\": 5}"),
        "fields[0].sources[0].disc.radius: must be in (0, 10]");
    BAD(SOURCE_OF("{\"disc\": {\"center\": [0.5, 0.5], \"radius\": 0.1}, \"rate\": @1e-46, \"to\": 5}"),
        "fields[0].sources[0].rate: must be in (0, 10000]");
    BAD(SOURCE_OF("{\"disc\": @{\"center\": [0.5, 0.5]}, \"rate\": 1, \"to\": 5}"),
        "fields[0].sources[0].disc.radius: missing: a disc needs a center [x, y] and a radius");
    BAD(SOURCE_OF("{\"disc\": {@\"centre\": [0.5, 0.5]}, \"rate\": 1, \"to\": 5}"),
        "fields[0].sources[0].disc.centre: unknown key (expected center, radius)");
    BAD(SOURCE_OF("{\"image\": \"a\", \"rate\": @20000, \"to\": 5}"),
        "fields[0].sources[0].rate: must be in (0, 10000]");
    BAD(SOURCE_OF("{\"image\": \"a\", \"rate\": 1, \"from\": @-1, \"to\": 5}"),
        "fields[0].sources[0].from: must be in 0..99999999");
    BAD(SOURCE_OF("{\"image\": \"a\", @\"speed\": 1}"),
        "fields[0].sources[0].speed: unknown key (expected image, disc, rate, from, to)");
}

/* A good scene, read whole: paths, steps from times, the settings as
 * options, per-key parameters, moves, sources. */
static void test_good_scene(void)
{
    char dir[512], sub[600], name[700], abs_target[] = "/abs/word.png";
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(sub, sizeof sub, "%s/sub", tmp);
    mkdir(sub, 0777);
    Scene *s = load_text(__LINE__, "sub/good.json",
        "{ \"grid\": [64, 48], \"dt\": 0.02, \"frames\": \"out\", \"gather\": false, \"fps\": 30,\n"
        "  \"fields\": [ { \"name\": \"warm\", \"color\": \"#FF4020\", \"start\": \"img/logo.png\",\n"
        "    \"channel\": \"a\", \"invert\": true,\n"
        "    \"keys\": [ { \"time\": 1, \"target\": \"/abs/word.png\" },\n"
        "              { \"step\": 120, \"target\": \"../logo.png\", \"vf\": 0.8, \"sigma\": 0.08,\n"
        "                \"move\": {\"from\": [-0.25, 0], \"to\": [0.25, 0.1]}, \"scale\": {\"to\": 2}} ],\n"
        "    \"sources\": [ { \"image\": \"puff.png\", \"rate\": 0.5, \"to\": 200 },\n"
        "                   { \"disc\": {\"center\": [0.5, 0.9], \"radius\": 0.1}, \"rate\": 2, \"from\": 10, \"to\": 20 } ] } ] }\n");
    if (!s) return;
    const SceneField *f = &s->field[0];
    snprintf(name, sizeof name, "%s/img/logo.png", sub);
    CHECK(s->nfields == 1 && f->name && !strcmp(f->name, "warm"), "one field 'warm'");
    CHECK(!strcmp(f->start, name), "start relative to the scene's folder: %s", f->start);
    CHECK(f->nkeys == 2 && !strcmp(f->keys[0].target, abs_target), "an absolute path stays: %s",
          f->nkeys ? f->keys[0].target : "");
    snprintf(name, sizeof name, "%s/../logo.png", sub);
    CHECK(f->nkeys == 2 && !strcmp(f->keys[1].target, name), "'..' is joined: %s", f->keys[1].target);
    CHECK(f->keys[0].has_time && f->keys[0].step == 50, "time 1 s at dt 0.02 is step 50: %ld",
          f->keys[0].step);
    CHECK(f->keys[1].step == 120 && f->keys[1].has[SCENE_VF] && f->keys[1].param[SCENE_VF] == 0.8f &&
              f->keys[1].has[SCENE_SIGMA] && !f->keys[1].has[SCENE_VD] && !f->keys[0].has[SCENE_VF],
          "per-key parameters");
    const SceneKey *k = &f->keys[1];
    CHECK(k->moves && k->move_from[0] == -0.25f && k->move_to[0] == 0.25f && k->move_to[1] == 0.1f &&
              k->scale_from == 1.0f && k->scale_to == 2.0f && !f->keys[0].moves,
          "the move: from (%g, %g) to (%g, %g), scale %g to %g", k->move_from[0], k->move_from[1],
          k->move_to[0], k->move_to[1], k->scale_from, k->scale_to);
    snprintf(name, sizeof name, "%s/puff.png", sub);
    CHECK(f->nsources == 2 && !strcmp(f->sources[0].image, name) && f->sources[0].rate == 0.5f &&
              f->sources[0].from == 0 && f->sources[0].to == 200,
          "an image source");
    CHECK(f->nsources == 2 && !f->sources[1].image && f->sources[1].cx == 0.5f &&
              f->sources[1].cy == 0.9f && f->sources[1].radius == 0.1f && f->sources[1].from == 10,
          "a disc source");

    /* the settings as options: parsed as the command line would */
    char *argv0[] = {"smokemorph", "--vf", "0.7", NULL};
    char **args = NULL, cerr[1024];
    int n = 0;
    CHECK(scene_args(s, 3, argv0, &n, &args) == 0, "scene_args");
    Config c;
    int r = args ? config_parse(&c, n, args, cerr, sizeof cerr) : -1;
    CHECK(r == 0, "config_parse: %s", cerr);
    snprintf(name, sizeof name, "%s/out", sub);
    if (r == 0) {
        CHECK(c.grid_w == 64 && c.grid_h == 48 && c.grid_set, "grid 64x48");
        CHECK(c.params.dt == 0.02f && !c.params.gather && c.params.vf == 0.7f, "dt, gather, --vf");
        CHECK(c.fps == 30.0 && c.every == 2, "fps 30: every %d", c.every);
        CHECK(c.frames_dir && !strcmp(c.frames_dir, name), "frames relative to the scene: %s",
              c.frames_dir ? c.frames_dir : "(none)");
        CHECK(c.load.channel == IMAGE_CHANNEL_A && c.load.invert && fabsf(c.color[0] - 1.0f) < 1e-6f &&
                  fabsf(c.color[1] - 64 / 255.0f) < 1e-6f,
              "the field's channel, invert and colour");
        /* the keys into the Config, steps at the run's dt */
        c.params.dt = 0.04f;
        char err[1024];
        CHECK(scene_apply(s, &c, err, sizeof err) == 0, "scene_apply: %s", err);
        CHECK(c.nkeys == 2 && c.current_path == f->start && c.key_paths[1] == f->keys[1].target &&
                  c.field_name && !strcmp(c.field_name, "warm"),
              "the images and the field's name into the Config");
        CHECK(f->keys[0].step == 25, "time 1 s at dt 0.04 is step 25: %ld", f->keys[0].step);
        /* at dt 0.005 the time key is step 200, after key 2's step 120 */
        c.params.dt = 0.005f;
        c.current_path = NULL;
        CHECK(scene_apply(s, &c, err, sizeof err) < 0 &&
                  strstr(err, "/sub/good.json:5:15: fields[0].keys[1]: step 120 must come after "
                         "keys[0]'s step 200 (at dt 0.005)") && !strchr(err, '\n'),
              "a time key's step at another dt: '%s'", err);
        c.params.dt = 0.04f;
        c.current_path = NULL;
        c.key_every_set = true;
        CHECK(scene_apply(s, &c, err, sizeof err) < 0 && !strncmp(err, "config: --key-every: ", 21),
              "--key-every with a scene: '%s'", err);
    }
    free(args);
    scene_free(s);

    /* several fields are read, checked and applied: each field's time keys
     * at the run's dt, field 0 into the Config */
    s = load_text(__LINE__, "two.json",
        "{\"fields\": [{\"start\": \"a\", \"keys\": [{\"step\": 5, \"target\": \"b\"}]},\n"
        "  {\"name\": \"cool\", \"color\": \"#2040ff\", \"start\": \"b\", \"keys\": [{\"time\": 0.5, "
        "\"target\": \"a\"}]}]}");
    if (s) {
        Config c2;
        config_defaults(&c2);
        c2.params.dt = 0.02f;
        char err[1024] = "", nb[16];
        CHECK(s->nfields == 2 && s->field[1].color && !strcmp(s->field[1].color, "#2040ff"),
              "the second field is read");
        CHECK(scene_apply(s, &c2, err, sizeof err) == 0 && s->field[1].keys[0].step == 25 &&
                  c2.nkeys == 1 && c2.current_path == s->field[0].start,
              "several fields applied: '%s', field 1's time key at step %ld", err, s->field[1].keys[0].step);
        CHECK(!strcmp(scene_field_name(s, 0, nb, sizeof nb), "smoke") &&
                  !strcmp(scene_field_name(s, 1, nb, sizeof nb), "cool"),
              "the fields' names: smoke (default) and cool");
        /* at dt 2 field 1's time key is step 0: its own message */
        c2.params.dt = 2.0f;
        c2.current_path = NULL;
        char want[1024];
        snprintf(want, sizeof want, "%s/two.json:2:63: fields[1].keys[0].time: 0.5 s is step 0 at dt 2: "
                 "must be step 1..%ld", tmp, CONFIG_STEPS_MAX);
        CHECK(scene_apply(s, &c2, err, sizeof err) < 0 && !strcmp(err, want), "field 1's time key:\n  '%s'\n"
              "  '%s'", err, want);
        scene_free(s);
    }
}

/* ---------------------------------------------------------------------- */
/* The binary                                                              */

static TestlibResult R;

static int run(const char *first, ...)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = bin;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 62; a = va_arg(ap, const char *)) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    static const char *const unset[] = {"DISPLAY", "WAYLAND_DISPLAY", NULL};
    TestlibRunOpts o = {.unset_env = unset};
    return testlib_run(argv, &o, &R);
}

/* Every frame_*.png of a and b has the same bytes (and there are n). */
static void same_frames(int line, const char *a, const char *b, int n)
{
    int na = testlib_count_entries(a, "frame_", NULL), nb = testlib_count_entries(b, "frame_", NULL);
    int ma = 0, mb = 0;
    testlib_count_entries(a, "frame_", &ma);
    testlib_count_entries(b, "frame_", &mb);
    CHECK(na >= 0 && nb >= 0 && ma == n && mb == n, "line %d: %d and %d frames, expected %d", line, ma,
          mb, n);
    for (int k = 1; k <= n; k++) {
        char pa[700], pb[700];
        snprintf(pa, sizeof pa, "%s/frame_%05d.png", a, k);
        snprintf(pb, sizeof pb, "%s/frame_%05d.png", b, k);
        size_t la = 0, lb = 0;
        char *fa = testlib_read_file(pa, &la), *fb = testlib_read_file(pb, &lb);
        CHECK(fa && fb && la == lb && memcmp(fa, fb, la) == 0, "line %d: frame %d differs", line, k);
        free(fa);
        free(fb);
    }
}

static void test_cli_overrides(void)
{
    char path[512], out[600];
    snprintf(path, sizeof path, "%s/over.json", tmp);
    snprintf(out, sizeof out, "%s/over-out", tmp);
    /* absolute paths to the targets */
    char text[4096];
    snprintf(text, sizeof text,
             "{\"grid\": [40, 40], \"vf\": 0.7, \"every\": 5, \"steps\": 10,\n"
             " \"fields\": [{\"color\": \"#ff0000\", \"start\": \"%s/targets/blob.png\",\n"
             "   \"keys\": [{\"step\": 6, \"target\": \"%s/targets/star.png\"},\n"
             "            {\"time\": 0.12, \"target\": \"%s/targets/ring.png\"}]}]}",
             root, root, root);
    write_text(path, text);
    int rc = run("--scene", path, "--grid", "32", "--color", "00ff00", "--dt", "0.005", "--dump-scene",
                 NULL);
    CHECK(rc == 0, "--dump-scene: exit %d: %s", rc, R.err);
    CHECK(strstr(R.out, "\"grid\": [32, 32]") && strstr(R.out, "\"vf\": 0.7") &&
              strstr(R.out, "\"color\": \"#00ff00\"") && strstr(R.out, "\"dt\": 0.005") &&
              strstr(R.out, "\"every\": 5") && strstr(R.out, "\"step\": 6,") &&
              strstr(R.out, "\"step\": 24,"),
          "the command line overrides the scene, the rest stays:\n%s", R.out);
    /* the time key at the command line's dt: 0.12 s / 0.005 = step 24 above; at
     * 0.02 it is step 6, not after key 1's 6 */
    rc = run("--scene", path, "--grid", "32", "--dt", "0.02", "--cpu", "-q", NULL);
    CHECK(rc == 1 && strstr(R.err, "over.json:4:22: fields[0].keys[1].time: 0.12 s is step 6 at dt "
                                   "0.02: must come after keys[0]'s step 6") &&
              strchr(R.err, '\n') == R.err + strlen(R.err) - 1,
          "a time key that --dt puts on the key before: exit %d: '%s'", rc, R.err);
    /* time keys that only --dt makes steps: 0.004 s and 0.008 s are steps 0
     * and 1 at the scene's dt 0.01 (refused), steps 4 and 8 at --dt 0.001 */
    char tpath[600], ttext[4096];
    snprintf(tpath, sizeof tpath, "%s/fine-time.json", tmp);
    snprintf(ttext, sizeof ttext,
             "{\"dt\": 0.01, \"fields\": [{\"start\": \"%s/targets/blob.png\", \"keys\": [\n"
             " {\"time\": 0.004, \"target\": \"%s/targets/star.png\"},\n"
             " {\"time\": 0.008, \"target\": \"%s/targets/ring.png\"}]}]}\n", root, root, root);
    write_text(tpath, ttext);
    rc = run("--scene", tpath, "--dump-scene", NULL);
    CHECK(rc == 1 && strstr(R.err, "fine-time.json:2:11: fields[0].keys[0].time: 0.004 s is step 0 at dt 0.01"),
          "time keys below the scene's dt: exit %d: %s", rc, R.err);
    rc = run("--scene", tpath, "--dt", "0.001", "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "\"step\": 4,") && strstr(R.out, "\"step\": 8,") &&
              strstr(R.out, "\"dt\": 0.001"),
          "the same at --dt 0.001: exit %d: %s%s", rc, R.out, R.err);
    rc = run("--scene", path, "--grid", "32", "--cpu", "--frames", out, "--metrics", "m.csv", NULL);
    CHECK(rc == 0 && strstr(R.err, "32x32 grid, 10 steps") && strstr(R.err, "2 keys, reached at steps 6, 12"),
          "a run: exit %d: %s", rc, R.err);
    unlink("m.csv");
    int nf = 0;
    testlib_count_entries(out, "frame_", &nf);
    CHECK(nf == 3, "10 steps every 5: 3 frames, got %d", nf);
    /* images, --key-every: clashes with the scene (usage, exit 2) */
    rc = run("--scene", path, "--cpu", "targets/blob.png", "targets/star.png", NULL);
    CHECK(rc == 2 && strstr(R.err, "config: --scene ") == R.err && strstr(R.err, "leave CURRENT and "
          "TARGET out"), "images and --scene: exit %d: %s", rc, R.err);
    rc = run("--scene", path, "--cpu", "--key-every", "5", NULL);
    CHECK(rc == 2 && strstr(R.err, "config: --key-every: "), "--key-every and --scene: exit %d: %s", rc,
          R.err);
    /* checkpoints of a scene (tests/test_farm.c resumes them) */
    testlib_rm_rf(out);
    rc = run("--scene", path, "--cpu", "--steps", "10", "--frames", out, "--checkpoint-every", "5", NULL);
    char ck[700];
    snprintf(ck, sizeof ck, "%s/checkpoint_000005.smc", out);
    CHECK(rc == 0 && testlib_exists(ck), "--checkpoint-every with --scene: exit %d: %s", rc, R.err);
    /* a bad scene: one line, exit 1, nothing written */
    snprintf(path, sizeof path, "%s/bad.json", tmp);
    write_text(path, "{\"grid\": 32, \"vf\": -1, " FIELD "}");
    testlib_rm_rf(out);
    rc = run("--scene", path, "--cpu", "--frames", out, NULL);
    CHECK(rc == 1 && strstr(R.err, "bad.json:1:20: vf: must be in [0, 10000]\n") &&
              strchr(R.err, '\n') == R.err + strlen(R.err) - 1 && !testlib_exists(out),
          "a bad scene: exit %d: '%s'", rc, R.err);
}



static double plane_sum(const float *p, int n)
{
    double m = 0.0;
    for (int k = 0; k < n; k++) m += p[k];
    return m;
}

/* Two fields sharing one velocity, through the binary on the CPU: the EXR
 * has both density.NAME channels, raw (its RGBA is the composite of them at
 * the density scale given); a PNG16 run of the same scene is the same
 * composite (straight alpha, sRGB); each field keeps its mass to 1e-4
 * (the EXR's channels, and the sidecar's field_mass); the metrics' mass is
 * the sum; what several fields refuse says so in one line. */
static void test_fields_run(void)
{
    char scene[600], exr[600], png[600], text[8192], path[700];
    snprintf(scene, sizeof scene, "%s/fields.json", tmp);
    snprintf(exr, sizeof exr, "%s/fields-exr", tmp);
    snprintf(png, sizeof png, "%s/fields-png", tmp);
    snprintf(text, sizeof text,
             "{\"grid\": 32, \"every\": 6, \"density_scale\": 0.7,\n"
             " \"fields\": [{\"name\": \"warm\", \"color\": \"#ff6020\", \"start\": \"%s/targets/yin.png\",\n"
             "   \"keys\": [{\"step\": 18, \"target\": \"%s/targets/yang.png\"}]},\n"
             "  {\"color\": \"#2080ff\", \"start\": \"%s/targets/yang.png\",\n"
             "   \"keys\": [{\"step\": 12, \"target\": \"%s/targets/yin.png\"}]}]}",
             root, root, root, root);
    write_text(scene, text);
    char csv[700];
    snprintf(csv, sizeof csv, "%s/fields.csv", tmp);
    int rc = run("--scene", scene, "--cpu", "--frames", exr, "--format", "exr", "--exr-type", "float",
                 "--metrics", csv, NULL);
    CHECK(rc == 0 && strstr(R.err, "18 steps") &&
              strstr(R.err, "2 smoke fields sharing one velocity: warm (1 key, reached at step 18); "
                            "smoke2 (1 key, reached at step 12)"),
          "two fields run to the latest key's step: exit %d: %s", rc, R.err);
    rc = run("--scene", scene, "--cpu", "--frames", png, "--format", "png16", "-q", NULL);
    CHECK(rc == 0, "the PNG16 run: exit %d: %s", rc, R.err);
    const int n = 32 * 32;
    const double rgb[2][3] = {{1.0, 0x60 / 255.0, 0x20 / 255.0}, {0x20 / 255.0, 0x80 / 255.0, 1.0}};
    double m0[2] = {0, 0}, drift = 0.0, worst_exr = 0.0, worst_png = 0.0;
    int frames = 0;
    for (int f = 1; f <= 4; f++) {
        snprintf(path, sizeof path, "%s/frame_%05d.exr", exr, f);
        TestlibExr *e = testlib_load_exr(path);
        CHECK(e != NULL, "frame %d: %s", f, path);
        if (!e) continue;
        const float *rho[2] = {testlib_exr_channel(e, "density.warm"), testlib_exr_channel(e, "density.smoke2")};
        const float *rgba[4] = {testlib_exr_channel(e, "R"), testlib_exr_channel(e, "G"),
                                testlib_exr_channel(e, "B"), testlib_exr_channel(e, "A")};
        CHECK(rho[0] && rho[1] && rgba[3] && e->nch == 6, "frame %d: channels density.warm, density.smoke2 "
              "and RGBA (%d channels)", f, e->nch);
        if (!rho[0] || !rho[1] || !rgba[0] || !rgba[1] || !rgba[2] || !rgba[3]) {
            testlib_exr_free(e);
            continue;
        }
        frames++;
        for (int i = 0; i < 2; i++) {
            double m = plane_sum(rho[i], n);
            if (f == 1) m0[i] = m;
            else drift = fmax(drift, fabs(m / m0[i] - 1.0));
        }
        /* raw densities: the start's peak is 1 (not 0.7) */
        if (f == 1) {
            float peak = 0.0f;
            for (int k = 0; k < n; k++) peak = fmaxf(peak, rho[0][k]);
            CHECK(peak > 0.9f, "density.warm is raw (unscaled): its peak %g", peak);
        }
        Image *ch[4] = {NULL};
        const ImageChannel which[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B, IMAGE_CHANNEL_A};
        snprintf(path, sizeof path, "%s/frame_%05d.png", png, f);
        for (int c = 0; c < 4; c++) ch[c] = testlib_load(path, which[c]);
        bool have = ch[0] && ch[1] && ch[2] && ch[3];
        CHECK(have, "frame %d: %s", f, path);
        for (int k = 0; k < n; k++) {
            double A, cs[3], cl[3];
            testlib_composite(2, rho, rgb, 0.7, k, &A, cs, cl);
            worst_exr = fmax(worst_exr, fabs(rgba[3][k] - A));
            for (int c = 0; c < 3; c++) worst_exr = fmax(worst_exr, fabs(rgba[c][k] - cl[c] * A));
            if (!have) continue;
            worst_png = fmax(worst_png, fabs(ch[3]->px[k] - A));
            for (int c = 0; c < 3; c++)
                if (A > 0.0) worst_png = fmax(worst_png, fabs(ch[c]->px[k] - cs[c]));
        }
        for (int c = 0; c < 4; c++) image_free(ch[c]);
        testlib_exr_free(e);
    }
    CHECK(frames == 4, "4 EXR frames (steps 0, 6, 12, 18), got %d", frames);
    CHECK(worst_exr <= 2e-6, "the EXR's RGBA is the composite of its density channels: off by %g", worst_exr);
    CHECK(worst_png <= 0.5 / 65535.0 + 2e-6, "the PNG16 frames are the same composite: off by %g", worst_png);
    CHECK(drift <= 1e-4, "each field keeps its mass: drift %g", drift);
    /* the metrics' mass is both fields' */
    char buf[4096];
    testlib_read_text(csv, buf, sizeof buf);
    char *row = strstr(buf, "\n0,0,");
    double mass = 0.0;
    CHECK(row && sscanf(row, "\n0,0,%*[^,],%lf", &mass) == 1 && fabs(mass / (m0[0] + m0[1]) - 1.0) < 1e-5,
          "the metrics' mass %g is the fields' %g + %g", mass, m0[0], m0[1]);
    /* the sidecar: the fields, and each one's mass a row */
    snprintf(path, sizeof path, "%s/run.json", png);
    char *side = testlib_read_file(path, NULL);
    CHECK(side && strstr(side, "\"name\": \"warm\"") && strstr(side, "\"color\": \"#ff6020\"") &&
              strstr(side, "\"name\": \"smoke2\"") && strstr(side, "\"color\": \"#2080ff\""),
          "the sidecar names the fields and their colours");
    int rows = 0;
    double worst_side = 0.0;
    for (const char *p = side ? strstr(side, "\"field_mass\"") : NULL; p; p = strstr(p + 1, "\"field_mass\"")) {
        double a = 0, b = 0;
        if (sscanf(p, "\"field_mass\": [ %lf , %lf", &a, &b) != 2) break;
        worst_side = fmax(worst_side, fmax(fabs(a / m0[0] - 1.0), fabs(b / m0[1] - 1.0)));
        rows++;
    }
    CHECK(rows == 4 && worst_side <= 1e-4, "the sidecar's field_mass: %d rows, drift %g", rows, worst_side);
    free(side);

    /* checkpointed with several fields: every field's state, resumed with
     * the same scene to the same frames (tests/test_farm.c: metrics,
     * sidecar, backends and refusals) */
    char ckdir[700], ckfile[760], resumed[700];
    snprintf(ckdir, sizeof ckdir, "%s/fields-ck", tmp);
    snprintf(ckfile, sizeof ckfile, "%s/checkpoint_000006.smc", ckdir);
    snprintf(resumed, sizeof resumed, "%s/fields-resumed", tmp);
    rc = run("--scene", scene, "--cpu", "--frames", ckdir, "--checkpoint-every", "6", NULL);
    CHECK(rc == 0 && testlib_exists(ckfile), "--checkpoint-every with two fields: exit %d: '%s'", rc, R.err);
    rc = run("--scene", scene, "--cpu", "--frames", resumed, "--resume", ckfile, NULL);
    CHECK(rc == 0, "--resume with two fields: exit %d: '%s'", rc, R.err);
    for (int k = 1; k <= 4; k++) { /* steps 0, 6, 12, 18: the resumed run writes 6 on */
        char pa[800], pb[800];
        snprintf(pa, sizeof pa, "%s/frame_%05d.png", ckdir, k);
        snprintf(pb, sizeof pb, "%s/frame_%05d.png", resumed, k);
        size_t la = 0, lb = 0;
        char *fa = testlib_read_file(pa, &la), *fb = testlib_read_file(pb, &lb);
        CHECK(k == 1 ? fa && !fb : fa && fb && la == lb && memcmp(fa, fb, la) == 0,
              "two fields resumed at step 6: frame %d", k);
        free(fa);
        free(fb);
    }
    rc = run("--scene", scene, "--cpu", "--resume", "x.smc", NULL);
    CHECK(rc == 1 && strstr(R.err, "x.smc") && strchr(R.err, '\n') == R.err + strlen(R.err) - 1,
          "--resume of a missing file with two fields: exit %d: '%s'", rc, R.err);
    /* with a display (xvfb), the window steps and shows both fields (no
     * headless fallback): a screenshot of the composite, window-only keys
     * taken; --headless still runs headless and writes the frames */
    if (testlib_sh("command -v xvfb-run >/dev/null 2>&1") == 0) {
        char xo[600], shot[600];
        snprintf(xo, sizeof xo, "%s/fields-x", tmp);
        snprintf(shot, sizeof shot, "%s/fields-window.png", tmp);
        const char *xa[] = {"xvfb-run", "-a", bin, "--scene", scene, "--steps", "6", "--keys", "vVr",
                            "--screenshot", shot, NULL};
        rc = testlib_run(xa, NULL, &R);
        CHECK(rc == 0 && testlib_exists(shot) && !strstr(R.err, "the window shows one smoke field"),
              "two fields with a display: the window, exit %d: %s", rc, R.err);
        Image *sr = testlib_load(shot, IMAGE_CHANNEL_R), *sb = testlib_load(shot, IMAGE_CHANNEL_B);
        int warm = 0, cool = 0; /* both fields' colours on screen (#ff6020, #2080ff) */
        for (int k = 0; sr && sb && k < sr->w * sr->h; k++) {
            warm += sr->px[k] > 0.5f && sb->px[k] < 0.3f;
            cool += sb->px[k] > 0.5f && sr->px[k] < 0.3f;
        }
        image_free(sr);
        image_free(sb);
        CHECK(warm > 500 && cool > 500, "the window shows both fields: %d warm, %d cool pixels", warm, cool);
        const char *xh[] = {"xvfb-run", "-a", bin, "--scene", scene, "--headless", "--steps", "6", "--frames", xo,
                            NULL};
        rc = testlib_run(xh, NULL, &R);
        int nx = 0;
        testlib_count_entries(xo, "frame_", &nx);
        CHECK(rc == 0 && nx == 2, "two fields --headless with a display: exit %d, %d frames: %s", rc, nx, R.err);
    } else {
        TESTLIB_NO_GL(3, 3, "two fields with a display: no xvfb-run (tools/install-deps.sh installs xvfb)");
    }
    /* field 1's schedule refused: the scene and the field */
    snprintf(path, sizeof path, "%s/fields-bad.json", tmp);
    snprintf(text, sizeof text,
             "{\"grid\": 32, \"fields\": [{\"start\": \"%s/targets/yin.png\", \"keys\": [{\"step\": 6, "
             "\"target\": \"%s/targets/yang.png\"}]},\n"
             " {\"start\": \"%s/targets/yang.png\", \"keys\": [{\"step\": 6, \"target\": \"%s/targets/yin.png\", "
             "\"move\": {\"from\": [5, 5], \"to\": [5, 5]}}]}]}",
             root, root, root, root);
    write_text(path, text);
    rc = run("--scene", path, "--cpu", "-q", NULL);
    CHECK(rc == 1 && strstr(R.err, "scene: ") == R.err && strstr(R.err, "fields-bad.json: fields[1]: ") &&
              strchr(R.err, '\n') == R.err + strlen(R.err) - 1,
          "field 1's schedule refused: exit %d: '%s'", rc, R.err);

    /* --dump-scene of two fields (field 0's colour from the command line)
     * and the run of the dump: the same frames */
    char a[600], b[600], dumped[600];
    snprintf(a, sizeof a, "%s/fields-a", tmp);
    snprintf(b, sizeof b, "%s/fields-b", tmp);
    snprintf(dumped, sizeof dumped, "%s/fields-dump.json", tmp);
    rc = run("--scene", scene, "--cpu", "--color", "40ff40", "--frames", a, "-q", NULL);
    CHECK(rc == 0, "two fields with --color: exit %d: %s", rc, R.err);
    rc = run("--scene", scene, "--color", "40ff40", "--frames", a, "--dump-scene", NULL);
    char *f1 = strstr(R.out, "\"name\": \"warm\""), *f2 = f1 ? strstr(f1, "\"color\": \"#2080ff\"") : NULL;
    CHECK(rc == 0 && f1 && strstr(R.out, "\"color\": \"#40ff40\"") && f2 && strstr(R.out, "yang.png") &&
              strstr(f2, "\"step\": 12"),
          "the dump has both fields: exit %d:\n%s", rc, R.out);
    write_text(dumped, R.out);
    rc = run("--cpu", "--scene", dumped, "--frames", b, "-q", NULL);
    CHECK(rc == 0, "the dump's run: exit %d: %s", rc, R.err);
    same_frames(__LINE__, a, b, 4);
}

/* Every scene of scenes/ runs headless on the CPU at a small grid and dumps
 * itself. */
static void test_examples(void)
{
    DIR *d = opendir("scenes");
    CHECK(d != NULL, "no scenes/ in the working directory");
    if (!d) return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        char path[600], out[600];
        snprintf(path, sizeof path, "scenes/%s", e->d_name);
        snprintf(out, sizeof out, "%s/ex-%s", tmp, e->d_name);
        int rc = run("--scene", path, "--cpu", "--grid", "48", "--steps", "12", "--every", "4", "--frames",
                     out, "-q", NULL);
        n++;
        int nf = 0;
        testlib_count_entries(out, "frame_", &nf);
        CHECK(rc == 0 && nf == 4, "%s: exit %d, %d frames: %s", path, rc, nf, R.err);
        rc = run("--scene", path, "--dump-scene", NULL);
        CHECK(rc == 0 && strstr(R.out, "\"fields\""), "%s --dump-scene: exit %d: %s", path, rc, R.err);
    }
    closedir(d);
    CHECK(n >= 3, "%d example scenes, expected at least 3", n);
}

/* A command-line run and the run of its dumped scene write the same frames;
 * so do a scene run and the run of its dump. */
/* "arrive" in a scene: "auto" (the default) times a single pair from its
 * trip as --arrive auto does, a number is kept, and --dump-scene writes
 * either back (issue 20 point 3: the scene's timing follows the same rule). */
static void test_arrive_key(void)
{
    char scene[600], out[600], text[3072];
    snprintf(scene, sizeof scene, "%s/arrive.json", tmp);
    snprintf(out, sizeof out, "%s/arrive-out", tmp);
    /* yin into blob, the bundled pair of the longest trip: 3.09 s at 32²
     * (--arrive auto on the command line says the same) */
    const char *vals[] = {"\"auto\"", "4.5"};
    const char *want[] = {"arrival planned at 3.09 s (step 309), from the trip's length",
                          "arrival planned at 4.5 s (step 450)\n"};
    for (int k = 0; k < 2; k++) {
        snprintf(text, sizeof text,
                 "{\"grid\": 32, \"steps\": 2, \"arrive\": %s, \"fields\": [ { \"start\": \"%s/targets/yin.png\",\n"
                 "  \"keys\": [ { \"target\": \"%s/targets/blob.png\" } ] } ] }\n",
                 vals[k], root, root);
        write_text(scene, text);
        int rc = run("--cpu", "--scene", scene, "--frames", out, NULL);
        CHECK(rc == 0 && strstr(R.err, want[k]), "a scene's \"arrive\": %s: exit %d, want '%s':\n%s", vals[k], rc,
              want[k], R.err);
    }
    int rc = run("--cpu", "--grid", "32", "--steps", "2", "--frames", out, "targets/yin.png", "targets/blob.png", NULL);
    CHECK(rc == 0 && strstr(R.err, want[0]), "the command line's auto: %s", R.err);
    rc = run("--arrive", "auto", "targets/blob.png", "targets/star.png", "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "\"arrive\": \"auto\""), "--dump-scene of --arrive auto: %s%s", R.out, R.err);
    rc = run("--arrive", "4.5", "targets/blob.png", "targets/star.png", "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "\"arrive\": 4.5"), "--dump-scene of --arrive 4.5: %s%s", R.out, R.err);
}

static void test_dump_roundtrip(void)
{
    char a[600], b[600], scene[600], text[4096];
    snprintf(a, sizeof a, "%s/rt-a", tmp);
    snprintf(b, sizeof b, "%s/rt-b", tmp);
    snprintf(scene, sizeof scene, "%s/rt.json", tmp);
    const char *common[] = {"--grid", "32", "--steps", "16", "--every", "4", "--vf", "0.7", "--no-gather",
                            "--color", "ff8000", "--sigma", "0.1"};
    int rc = run("--cpu", common[0], common[1], common[2], common[3], common[4], common[5], common[6],
                 common[7], common[8], common[9], common[10], common[11], common[12], "--frames", a,
                 "-q", "--key-every", "6", "targets/blob.png", "targets/star.png", "targets/ring.png",
                 NULL);
    CHECK(rc == 0, "the command-line run: exit %d: %s", rc, R.err);
    rc = run(common[0], common[1], common[2], common[3], common[4], common[5], common[6], common[7],
             common[8], common[9], common[10], common[11], common[12], "--frames", a, "--key-every", "6",
             "targets/blob.png", "targets/star.png", "targets/ring.png", "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "\"step\": 12") && strstr(R.out, "\"gather\": false"),
          "--dump-scene: exit %d: %s%s", rc, R.out, R.err);
    write_text(scene, R.out);
    rc = run("--cpu", "--scene", scene, "--frames", b, "-q", NULL);
    CHECK(rc == 0, "the dumped scene's run: exit %d: %s", rc, R.err);
    same_frames(__LINE__, a, b, 5);

    /* two images and no --key-every: a single key with no step, the same
     * plain morph (until it settles: --steps keeps it short) */
    testlib_rm_rf(a);
    testlib_rm_rf(b);
    rc = run("--grid", "24", "--steps", "8", "--every", "4", "--frames", a, "targets/blob.png",
             "targets/heart.png", "--dump-scene", NULL);
    CHECK(rc == 0 && !strstr(R.out, "\"step\""), "two images: no step: %s", R.out);
    write_text(scene, R.out);
    rc = run("--cpu", "--scene", scene, "-q", NULL);
    int rc2 = run("--cpu", "--grid", "24", "--steps", "8", "--every", "4", "--frames", b, "-q",
                  "targets/blob.png", "targets/heart.png", NULL);
    CHECK(rc == 0 && rc2 == 0, "two images: exit %d and %d", rc, rc2);
    same_frames(__LINE__, a, b, 3);

    /* a scene with time keys and per-key parameters, and its dump */
    testlib_rm_rf(a);
    testlib_rm_rf(b);
    snprintf(text, sizeof text,
             "{\"grid\": 32, \"dt\": 0.02, \"every\": 3, \"vd\": 1.5, \"fields\": [{\"name\": \"puff\", "
             "\"start\": \"%s/targets/heart.png\", \"channel\": \"luma\",\n"
             " \"keys\": [{\"time\": 0.1, \"target\": \"%s/targets/bars.png\", \"vg\": 0.01},\n"
             "          {\"step\": 12, \"target\": \"%s/targets/cross.png\", \"vf\": 0.9, \"sigma\": 0.07}]}]}",
             root, root, root);
    write_text(scene, text);
    rc = run("--cpu", "--scene", scene, "--frames", a, "-q", NULL);
    CHECK(rc == 0, "a scene's run: exit %d: %s", rc, R.err);
    rc = run("--scene", scene, "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "\"step\": 5,") && strstr(R.out, "\"vg\": 0.01") &&
              strstr(R.out, "\"name\": \"puff\""),
          "its dump: %s", R.out);
    snprintf(scene, sizeof scene, "%s/rt2.json", tmp);
    write_text(scene, R.out);
    rc = run("--cpu", "--scene", scene, "--frames", b, "-q", NULL);
    CHECK(rc == 0, "the dump's run: exit %d: %s", rc, R.err);
    same_frames(__LINE__, a, b, 5); /* steps 0..12 every 3 */

    /* frames folders whose names look like patterns: a trailing '/' (a
     * fuzz finding: "out/s.###x#./" came back as "s.###x#.", two frame
     * numbers) and a trailing "/." after a '#' (the clean-up drops the
     * "/."). The dump ends them in '/', and reads back as a folder. */
    static const char *const folders[][2] = {{"out/s.###x#.///", "/out/s.###x#./\""},
                                             {"out/#/.", "/out/#/\""}};
    for (int q = 0; q < 2; q++) {
        snprintf(text, sizeof text,
                 "{\"frames\": \"%s\", \"fields\": [{\"start\": \"%s/targets/blob.png\", "
                 "\"keys\": [{\"target\": \"%s/targets/star.png\"}]}]}", folders[q][0], root, root);
        for (int pass = 0; pass < 2; pass++) { /* the scene, then its dump */
            snprintf(scene, sizeof scene, "%s/folder%d-%d.json", tmp, q, pass);
            write_text(scene, pass == 0 ? text : R.out);
            rc = run("--scene", scene, "--dump-scene", NULL);
            CHECK(rc == 0 && strstr(R.out, folders[q][1]), "frames '%s', %s: exit %d: %s%s", folders[q][0],
                  pass == 0 ? "its dump" : "the dump's dump", rc, R.out, R.err);
        }
    }

    /* the bundled pair */
    rc = run("--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "blob.png") && strstr(R.out, "star.png"), "bundled: %s%s", R.out, R.err);
}

/* scene_from_images and its dump read back as the same scene. */
/* Issue 23: a key's own channel and invert, and a start's (its path's
 * suffix, as on the command line): the scene runs as the command line with
 * IMAGE:invert does, frame for frame, and its dump keeps them. */
static void test_image_options(void)
{
    Scene *s = load_text(__LINE__, "own.json",
                         "{\"fields\": [{\"start\": \"/x/logo.png:invert\", \"keys\": [\n"
                         "  {\"step\": 5, \"target\": \"/x/word.png\", \"invert\": false},\n"
                         "  {\"step\": 9, \"target\": \"/x/mask.png\", \"channel\": \"a\", \"invert\": true},\n"
                         "  {\"step\": 12, \"target\": \"/x/plain.png\"},\n"
                         "  {\"step\": 14, \"target\": \"/x/own.png:channel=g\", \"invert\": true}]}]}");
    if (s) {
        const SceneKey *k = s->field[0].keys;
        CHECK(!strcmp(s->field[0].start, "/x/logo.png:invert") && !strcmp(k[0].target, "/x/word.png:invert=0") &&
                  !strcmp(k[1].target, "/x/mask.png:channel=a,invert=1") && !strcmp(k[2].target, "/x/plain.png") &&
                  !strcmp(k[3].target, "/x/own.png:channel=g,invert=1"),
              "the images' own options: %s, %s, %s, %s, %s", s->field[0].start, k[0].target, k[1].target,
              k[2].target, k[3].target);
    }
    scene_free(s);
    /* the run: a black-on-white start inverted by its key field, beside the
     * command line's IMAGE:invert */
    char logo[600], scene[600], a[600], b[600], text[2048];
    snprintf(logo, sizeof logo, "%s/bow.png", tmp);
    Image *im = testlib_load("targets/blob.png", IMAGE_CHANNEL_LUMA);
    if (im) {
        for (size_t k = 0; k < (size_t)im->w * im->h; k++) im->px[k] = 1.0f - im->px[k];
        char err[256];
        CHECK(image_save_png(logo, im, 8, err, sizeof err) == 0, "%s", err);
        image_free(im);
    }
    snprintf(scene, sizeof scene, "%s/own-run.json", tmp);
    snprintf(text, sizeof text,
             "{\"grid\": 32, \"fields\": [{\"start\": \"%s/targets/star.png\", \"keys\": [\n"
             "  {\"target\": \"%s\", \"invert\": true}]}]}",
             root, logo);
    write_text(scene, text);
    snprintf(a, sizeof a, "%s/own-a", tmp);
    snprintf(b, sizeof b, "%s/own-b", tmp);
    int rc = run("--scene", scene, "--cpu", "--steps", "6", "--every", "2", "--frames", a, NULL);
    CHECK(rc == 0 && !strstr(R.err, "image:"), "the scene: exit %d: %s", rc, R.err);
    char spec[700], star[1100];
    snprintf(spec, sizeof spec, "%s:invert", logo);
    snprintf(star, sizeof star, "%s/targets/star.png", root);
    rc = run("--cpu", "--grid", "32", "--steps", "6", "--every", "2", "--frames", b, "-q", star, spec,
             NULL);
    CHECK(rc == 0, "the command line: exit %d: %s", rc, R.err);
    same_frames(__LINE__, a, b, 4);
    rc = run("--scene", scene, "--dump-scene", NULL);
    CHECK(rc == 0 && strstr(R.out, "bow.png:invert=1\""), "the dump keeps the key's invert:\n%s", R.out);
}

static void test_from_images(void)
{
    const char *t[2] = {"/x/star.png", "/x/ring.png"};
    Scene *s = scene_from_images("/x/blob.png", t, 2, 300);
    CHECK(s && s->field[0].nkeys == 2 && s->field[0].keys[1].step == 600, "two keys every 300");
    char *buf = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char *argv0[] = {"smokemorph", "--vf", "0.25", "--grid", "64", NULL};
    CHECK(f && s && scene_write(f, s, 5, argv0, err, sizeof err) == 0, "scene_write: %s", err);
    if (f) fclose(f);
    const char *want = "{\n  \"grid\": [64, 64],\n  \"vf\": 0.25,\n  \"fields\": [\n    {\n"
                       "      \"start\": \"/x/blob.png\",\n      \"keys\": [\n        {\n"
                       "          \"step\": 300,\n          \"target\": \"/x/star.png\"\n        },\n"
                       "        {\n          \"step\": 600,\n          \"target\": \"/x/ring.png\"\n"
                       "        }\n      ]\n    }\n  ]\n}\n";
    CHECK(buf && !strcmp(buf, want), "the dump:\n%s", buf ? buf : "");
    Scene *s2 = buf ? scene_parse(buf, len, "dump", NULL, err, sizeof err) : NULL;
    CHECK(s2 && s2->nopts == 2 && s2->field[0].nkeys == 2 && s2->field[0].keys[1].step == 600,
          "it reads back: %s", err);
    scene_free(s2);
    scene_free(s);
    free(buf);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/test_scene.XXXXXX");
    if (!mkdtemp(tmp) || !getcwd(root, sizeof root)) {
        perror("test_scene");
        return 2;
    }
    const char *b = testlib_bin();
    if (b[0] == '/') snprintf(bin, sizeof bin, "%s", b);
    else snprintf(bin, sizeof bin, "%s/%s", root, b);
    RUN(test_syntax_errors);
    RUN(test_top_errors);
    RUN(test_field_errors);
    RUN(test_key_errors);
    RUN(test_source_errors);
    RUN(test_good_scene);
    RUN(test_from_images);
    RUN(test_image_options);
    RUN(test_cli_overrides);
    RUN(test_fields_run);
    RUN(test_examples);
    RUN(test_dump_roundtrip);
    RUN(test_arrive_key);
    testlib_result_free(&R);
    testlib_rm_rf(tmp);
    return check_done();
}
