/* scene: scene files, read with jansson (see scene.h and docs/SCENES.md).
 *
 * Settings are options. Each setting of a scene stands for one option of
 * the command line ("dt": 0.01 is --dt 0.01): its value is turned into the
 * option's text and checked by config_option and method_params_check, the
 * command line's own parsing and ranges, so a scene accepts exactly what
 * the command line does. main then parses the scene's options followed by
 * argv, so an option given on the command line overrides the scene's.
 *
 * Positions. jansson gives the line and column of a syntax error, but keeps
 * no position for the values of a document it has read. On an error, the
 * position of the offending value is found again from the text: starting at
 * the root, the path (fields, 0, keys, 1, vf) is followed through the
 * containers, where every key and every skipped value is decoded by jansson
 * itself (json_loadb with JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, whose
 * error.position is then how many bytes the value took), so only the
 * punctuation between them ('{', ':', ',', whitespace) is read here. The
 * text was accepted by jansson as a whole just before, so this walk meets
 * the same structure; it runs once, for the one error reported. The file is
 * read into memory and decoded with json_loadb (with JSON_REJECT_DUPLICATES,
 * so a key's path names one value), which is json_load_file's decoder on the
 * same bytes. Columns count characters from 1, as jansson's do. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "scene.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "method.h"

#define MAX_DEPTH 8
#define SCENE_FILE_MAX (16L * 1024 * 1024) /* a scene larger than this is refused */

/* ---- the settings ------------------------------------------------------ */

/* A setting: its name in a scene, the option it stands for, its kind:
 * 'f' number (a float), 'F' number (a double), 'i' integer, 'b' true: the
 * flag, 'n' false: the flag (--no-...), 's' string, 'p' path, 'z' N or
 * [W, H], 'c' colour "#RRGGBB", 'd' number or "auto"; and whether it sits
 * in a field (else at the top). */
typedef struct {
    const char *key, *option;
    char kind;
    bool field;
} Setting;

/* Every row of settings.def with a scene kind (SKIND), in the table's order
 * (--dump-scene's); the rows without one have kind 0 and are skipped. */
#define SETTING_GROUP(ID, TITLE)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    {KEY, OPT, SKIND, ((FLAGS) & SF_FIELD) != 0},
static const Setting settings[] = {
#include "settings.def"
};
#undef SETTING
#undef SETTING_GROUP
#define NSETTINGS ((int)(sizeof settings / sizeof settings[0]))

static const Setting *find_setting(const char *key, bool field)
{
    for (int k = 0; k < NSETTINGS; k++)
        if (settings[k].kind && settings[k].field == field && strcmp(settings[k].key, key) == 0)
            return &settings[k];
    return NULL;
}

static const Setting *setting_of_option(const char *option)
{
    for (int k = 0; k < NSETTINGS; k++)
        if (settings[k].kind && strcmp(settings[k].option, option) == 0) return &settings[k];
    return NULL;
}

static const char *const key_param_names[SCENE_KEY_PARAMS] = {"vf", "vd", "vg", "sigma"};

/* ---- the parse context: the text, the path, the error ------------------- */

typedef struct {
    const char *key; /* NULL: an index */
    int index;
} PathEnt;

typedef struct {
    const char *name, *dir;
    const char *text;
    size_t len;
    PathEnt path[MAX_DEPTH];
    int depth;
    char *err;
    size_t errlen;
    Scene *s;
} Ctx;

static void push_key(Ctx *x, const char *key)
{
    if (x->depth < MAX_DEPTH) x->path[x->depth] = (PathEnt){key, 0};
    x->depth++;
}
static void push_index(Ctx *x, int i)
{
    if (x->depth < MAX_DEPTH) x->path[x->depth] = (PathEnt){NULL, i};
    x->depth++;
}
static void pop(Ctx *x) { x->depth--; }

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    return i;
}

/* The bytes the JSON value at t[i] takes, as jansson decodes it (0: none),
 * and the value itself when v is not NULL. */
static size_t value_len(const char *t, size_t len, size_t i, json_t **v)
{
    json_error_t e;
    json_t *j = json_loadb(t + i, len - i, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &e);
    if (!j) return 0;
    if (v) *v = j;
    else json_decref(j);
    return e.position > 0 ? (size_t)e.position : 0;
}

enum { AT_VALUE, AT_KEY, AT_PARENT };

/* The offset in the text of the value at the path's first n entries (or of
 * its key, at_key); -1 when the walk does not find it (it always should). */
static long locate(const char *t, size_t len, const PathEnt *p, int n, bool at_key)
{
    size_t i = skip_ws(t, len, 0), key_at = i;
    for (int d = 0; d < n; d++) {
        if (i >= len || t[i] != (p[d].key ? '{' : '[')) return -1;
        i++;
        for (int idx = 0;; idx++) {
            i = skip_ws(t, len, i);
            if (i >= len || t[i] == '}' || t[i] == ']') return -1;
            key_at = i;
            bool hit;
            if (p[d].key) {
                json_t *k = NULL;
                size_t kl = value_len(t, len, i, &k);
                hit = k && json_is_string(k) && strcmp(json_string_value(k), p[d].key) == 0;
                json_decref(k);
                if (kl == 0) return -1;
                i = skip_ws(t, len, i + kl);
                if (i >= len || t[i] != ':') return -1;
                i = skip_ws(t, len, i + 1);
            } else {
                hit = idx == p[d].index;
            }
            if (hit) break;
            size_t vl = value_len(t, len, i, NULL);
            if (vl == 0) return -1;
            i = skip_ws(t, len, i + vl);
            if (i >= len || t[i] != ',') return -1;
            i++;
        }
    }
    return (long)(at_key ? key_at : i);
}

/* 1-based line and character column of byte offset off. */
static void line_column(const char *t, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (t[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)t[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* The path as written in messages: fields[0].keys[1].vf (keys cut to 48
 * characters). */
static void path_text(const PathEnt *p, int n, char *buf, size_t size)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int d = 0; d < n && d < MAX_DEPTH && u < size; d++) {
        int w;
        if (p[d].key) w = snprintf(buf + u, size - u, "%s%.48s", d ? "." : "", p[d].key);
        else w = snprintf(buf + u, size - u, "[%d]", p[d].index);
        if (w < 0) break;
        u += (size_t)w;
    }
    if (!buf[0]) snprintf(buf, size, "(top)");
}

/* Control characters of a message become '?': one line, whatever a key or
 * a path holds. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* "NAME:LINE:COLUMN: PATH: message" for the value at the current path (or
 * its key, or the object holding it); returns -1. */
static int fail(Ctx *x, int where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Ctx *x, int where, const char *fmt, ...)
{
    int depth = x->depth < MAX_DEPTH ? x->depth : MAX_DEPTH;
    long off = locate(x->text, x->len, x->path, where == AT_PARENT ? depth - 1 : depth,
                      where == AT_KEY);
    int line = 0, col = 0;
    if (off >= 0) line_column(x->text, (size_t)off, &line, &col);
    char path[512], msg[768];
    path_text(x->path, depth, path, sizeof path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (x->err && x->errlen) {
        snprintf(x->err, x->errlen, "%s:%d:%d: %s: %s", x->name, line, col, path, msg);
        one_line(x->err);
    }
    return -1;
}

/* A message of config_option or method_params_check about --OPTION, as
 * a scene says it: "config: --grid: expected N or WxH ..., got '4x4'" ->
 * "expected N or [W, H] ...". */
static void config_message(const char *msg, const char *option, char kind, char *out, size_t n)
{
    const char *m = msg;
    if (strncmp(m, "config: ", 8) == 0) m += 8;
    size_t ol = strlen(option);
    if (m[0] == '-' && m[1] == '-' && strncmp(m + 2, option, ol) == 0 &&
        (m[2 + ol] == ':' || m[2 + ol] == ' ')) {
        m += 2 + ol;
        if (*m == ':') m++;
        while (*m == ' ') m++;
    }
    snprintf(out, n, "%s", m);
    char *got = strstr(out, ", got '");
    if (got && out[strlen(out) - 1] == '\'') *got = '\0';
    char *wxh = kind == 'z' ? strstr(out, "WxH") : NULL;
    if (wxh) {
        char rest[512];
        snprintf(rest, sizeof rest, "%s", wxh + 3);
        snprintf(wxh, n - (size_t)(wxh - out), "[W, H]%s", rest);
    }
}

/* ---- small helpers ------------------------------------------------------ */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* A path of the scene: absolute ones as they are, others joined to dir. */
static char *join_path(const char *dir, const char *p)
{
    if (p[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0) return dup_str(p);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *d = malloc(n);
    if (d) snprintf(d, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", p);
    return d;
}

/* The shortest text of at most 9 digits that reads back as f (through a
 * double, as config and jansson read it). */
static double short_float(float f)
{
    char buf[64];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if ((float)strtod(buf, NULL) == f) return strtod(buf, NULL);
    }
    return (double)f;
}

static int oom(Ctx *x)
{
    if (x->err && x->errlen) snprintf(x->err, x->errlen, "%s: out of memory", x->name);
    return -1;
}

/* ---- the settings' values ---------------------------------------------- */

/* The value of setting st as its option's text into buf ("" for a flag that
 * is given, *flag_off when the value is the flag's default: no option). */
static int setting_text(Ctx *x, const Setting *st, json_t *v, char *buf, size_t n, bool *no_option)
{
    *no_option = false;
    switch (st->kind) {
    case 'f':
    case 'F':
        if (!json_is_number(v)) return fail(x, AT_VALUE, "expected a number");
        if (json_is_integer(v)) snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else snprintf(buf, n, "%.17g", json_real_value(v));
        return 0;
    case 'i':
        if (!json_is_integer(v)) return fail(x, AT_VALUE, "expected an integer");
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    case 'b':
    case 'n':
        if (!json_is_boolean(v)) return fail(x, AT_VALUE, "expected true or false");
        *no_option = json_is_true(v) != (st->kind == 'b');
        buf[0] = '\0';
        return 0;
    case 'z':
        if (json_is_integer(v)) {
            snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            return 0;
        }
        if (json_is_array(v) && json_array_size(v) == 2 && json_is_integer(json_array_get(v, 0)) &&
            json_is_integer(json_array_get(v, 1))) {
            snprintf(buf, n, "%" JSON_INTEGER_FORMAT "x%" JSON_INTEGER_FORMAT,
                     json_integer_value(json_array_get(v, 0)), json_integer_value(json_array_get(v, 1)));
            return 0;
        }
        return fail(x, AT_VALUE, "expected an integer N or [W, H]");
    case 'd':
        if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
            snprintf(buf, n, "auto");
            return 0;
        }
        if (!json_is_number(v)) return fail(x, AT_VALUE, "expected a number or \"auto\"");
        snprintf(buf, n, "%.17g", json_number_value(v));
        return 0;
    case 's':
    case 'c':
    case 'p':
        if (!json_is_string(v)) return fail(x, AT_VALUE, "expected a string");
        if (st->kind == 'p') {
            if (!json_string_value(v)[0]) return fail(x, AT_VALUE, "expected a path, got \"\"");
            char *j = join_path(x->dir, json_string_value(v));
            if (!j) return oom(x);
            int w = snprintf(buf, n, "%s", j);
            free(j);
            if (w < 0 || (size_t)w >= n) return fail(x, AT_VALUE, "the path is too long");
            return 0;
        }
        if (snprintf(buf, n, "%s", json_string_value(v)) >= (int)n)
            return fail(x, AT_VALUE, "too long");
        return 0;
    }
    return fail(x, AT_VALUE, "internal error: kind %c", st->kind);
}

/* The value checked as its option would be, on its own: 0 or -1. */
static int check_setting(Ctx *x, const Setting *st, const char *text, bool flag)
{
    Config c;
    config_defaults(&c);
    char cerr[1024], msg[1024];
    if (config_option(&c, st->option, flag ? NULL : text, cerr, sizeof cerr) < 0) {
        config_message(cerr, st->option, st->kind, msg, sizeof msg);
        return fail(x, AT_VALUE, "%s", msg);
    }
    const char *why = method_params_check(&c.params);
    if (why) {
        config_message(why, st->option, st->kind, msg, sizeof msg);
        return fail(x, AT_VALUE, "%s", msg);
    }
    return 0;
}

static int add_option(Ctx *x, const Setting *st, const char *text, bool flag)
{
    Scene *s = x->s;
    SceneOption *o = realloc(s->opts, (size_t)(s->nopts + 1) * sizeof *o);
    if (!o) return oom(x);
    s->opts = o;
    o = &s->opts[s->nopts];
    memset(o, 0, sizeof *o);
    size_t fl = strlen(st->option) + 3;
    o->flag = malloc(fl);
    o->value = flag ? NULL : dup_str(text);
    if (!o->flag || (!flag && !o->value)) {
        free(o->flag);
        free(o->value);
        return oom(x);
    }
    snprintf(o->flag, fl, "--%s", st->option);
    o->key = st->key;
    long off = locate(x->text, x->len, x->path, x->depth < MAX_DEPTH ? x->depth : MAX_DEPTH, false);
    if (off >= 0) line_column(x->text, (size_t)off, &o->line, &o->column);
    s->nopts++;
    return 0;
}

/* One setting at the current path: checked, and kept as an option (top
 * level) or into the field. */
static int setting(Ctx *x, const Setting *st, json_t *v, SceneField *f)
{
    char text[8192];
    bool no_option;
    if (setting_text(x, st, v, text, sizeof text, &no_option) < 0) return -1;
    bool flag = st->kind == 'b' || st->kind == 'n';
    if (!no_option && check_setting(x, st, text, flag) < 0) return -1;
    if (f) {
        if (!strcmp(st->key, "color") && !(f->color = dup_str(text))) return oom(x);
        if (!strcmp(st->key, "channel") && !(f->channel = dup_str(text))) return oom(x);
        if (!strcmp(st->key, "invert")) f->invert = json_is_true(v);
        return 0;
    }
    return no_option ? 0 : add_option(x, st, text, flag);
}

/* ---- numbers ------------------------------------------------------------ */

static int get_number(Ctx *x, json_t *v, double lo, double hi, bool lo_open, double *out)
{
    if (!json_is_number(v)) return fail(x, AT_VALUE, "expected a number");
    double d = json_number_value(v);
    /* in range as read and as the float it is kept in (1e-80 is no radius:
     * it would be kept, and dumped, as 0) */
    for (int k = 0; k < 2; k++) {
        if (!isfinite(d) || (lo_open ? !(d > lo) : !(d >= lo)) || !(d <= hi))
            return fail(x, AT_VALUE, "must be in %c%g, %g]", lo_open ? '(' : '[', lo, hi);
        d = (double)(float)d;
    }
    *out = json_number_value(v);
    return 0;
}

static int get_long(Ctx *x, json_t *v, long lo, long hi, long *out)
{
    if (!json_is_integer(v)) return fail(x, AT_VALUE, "expected an integer");
    json_int_t i = json_integer_value(v);
    if (i < lo || i > hi) return fail(x, AT_VALUE, "must be in %ld..%ld", lo, hi);
    *out = (long)i;
    return 0;
}

/* [x, y], each in [-SCENE_COORD_MAX, SCENE_COORD_MAX] */
static int get_point(Ctx *x, json_t *v, float out[2])
{
    if (!json_is_array(v) || json_array_size(v) != 2)
        return fail(x, AT_VALUE, "expected [x, y] (domain units)");
    for (int k = 0; k < 2; k++) {
        double d;
        push_index(x, k);
        int r = get_number(x, json_array_get(v, (size_t)k), -SCENE_COORD_MAX, SCENE_COORD_MAX, false, &d);
        pop(x);
        if (r < 0) return -1;
        out[k] = (float)d;
    }
    return 0;
}

static int get_path(Ctx *x, json_t *v, char **out)
{
    if (!json_is_string(v)) return fail(x, AT_VALUE, "expected a path (a string)");
    if (!json_string_value(v)[0]) return fail(x, AT_VALUE, "expected a path, got \"\"");
    if (!(*out = join_path(x->dir, json_string_value(v)))) return oom(x);
    return 0;
}

static int expect_object(Ctx *x, json_t *v, const char *what)
{
    if (!json_is_object(v)) return fail(x, AT_VALUE, "expected an object: %s", what);
    return 0;
}

/* ---- keys, sources, fields --------------------------------------------- */

/* "move": {"from": [x, y], "to": [x, y]} or "scale": {"from": s, "to": s} */
static int move_part(Ctx *x, json_t *v, SceneKey *k, bool scale)
{
    if (expect_object(x, v, scale ? "{\"from\": s0, \"to\": s1}" : "{\"from\": [x, y], \"to\": [x, y]}") < 0)
        return -1;
    const char *key;
    json_t *m;
    json_object_foreach(v, key, m) {
        push_key(x, key);
        int r;
        bool from = !strcmp(key, "from");
        if (!from && strcmp(key, "to") != 0) {
            r = fail(x, AT_KEY, "unknown key (expected from, to)");
        } else if (scale) {
            double d = 1.0;
            r = get_number(x, m, 0.0, SCENE_SCALE_MAX, true, &d);
            *(from ? &k->scale_from : &k->scale_to) = (float)d;
        } else {
            r = get_point(x, m, from ? k->move_from : k->move_to);
        }
        pop(x);
        if (r < 0) return -1;
    }
    k->moves = true;
    return 0;
}

/* What parse_key gathers besides the SceneKey: whether a step was given,
 * and the target's own channel (NULL: none) and invert (-1: none). */
typedef struct {
    bool has_step;
    const char *channel;
    int invert;
} KeyExtra;

/* One member (key: m) of a key's object into k. 0, or -1 (failed). */
static int key_member(Ctx *x, const char *key, json_t *m, SceneKey *k, KeyExtra *e)
{
    int p;
    for (p = 0; p < SCENE_KEY_PARAMS && strcmp(key, key_param_names[p]) != 0; p++) {}
    ImageChannel ch;
    if (!strcmp(key, "channel")) {
        if (!json_is_string(m) || image_parse_channel(json_string_value(m), &ch) < 0)
            return fail(x, AT_VALUE, "expected r, g, b, a or luma");
        e->channel = json_string_value(m);
    } else if (!strcmp(key, "invert")) {
        if (!json_is_boolean(m)) return fail(x, AT_VALUE, "expected true or false");
        e->invert = json_is_true(m);
    } else if (!strcmp(key, "step")) {
        e->has_step = true;
        return get_long(x, m, 1, CONFIG_STEPS_MAX, &k->step);
    } else if (!strcmp(key, "time")) {
        k->has_time = true;
        return get_number(x, m, 0.0, 1e12, true, &k->time);
    } else if (!strcmp(key, "target")) {
        return get_path(x, m, &k->target);
    } else if (p < SCENE_KEY_PARAMS) {
        const Setting *st = find_setting(key, false);
        char text[64];
        if (!json_is_number(m)) return fail(x, AT_VALUE, "expected a number");
        snprintf(text, sizeof text, "%.17g", json_number_value(m));
        k->has[p] = true;
        k->param[p] = (float)json_number_value(m);
        return check_setting(x, st, text, false);
    } else if (!strcmp(key, "move")) {
        return move_part(x, m, k, false);
    } else if (!strcmp(key, "scale")) {
        return move_part(x, m, k, true);
    } else {
        return fail(x, AT_KEY, "unknown key (expected step, time, target, channel, invert, vf, vd, "
                    "vg, sigma, move, scale)");
    }
    return 0;
}

/* The target's own channel and invert as its path's options:
 * "PATH:channel=C,invert=B" (image_spec), after any it has already
 * ("logo.png:invert"). 0, or -1 out of memory. */
static int key_target_options(Ctx *x, SceneKey *k, const KeyExtra *e)
{
    size_t n = strlen(k->target) + 40;
    char *t = malloc(n), *bare = malloc(n);
    ImageLoadOpts o = {0};
    if (!t || !bare) {
        free(t);
        free(bare);
        return oom(x);
    }
    size_t tl = strlen(k->target);
    const char *sep = image_spec(k->target, bare, n, &o) != 1 ? ":" : k->target[tl - 1] == ':' ? "" : ",";
    free(bare);
    snprintf(t, n, "%s%s%s%s%s%s%s", k->target, sep, e->channel ? "channel=" : "", e->channel ? e->channel : "",
             e->channel && e->invert >= 0 ? "," : "", e->invert >= 0 ? "invert=" : "",
             e->invert == 1 ? "1" : e->invert == 0 ? "0" : "");
    free(k->target);
    k->target = t;
    return 0;
}

static int parse_key(Ctx *x, json_t *v, SceneKey *k)
{
    if (expect_object(x, v, "{\"step\": N, \"target\": PATH, ...}") < 0) return -1;
    k->scale_from = k->scale_to = 1.0f;
    long off = locate(x->text, x->len, x->path, x->depth < MAX_DEPTH ? x->depth : MAX_DEPTH, false);
    if (off >= 0) line_column(x->text, (size_t)off, &k->line, &k->column);
    const char *key;
    json_t *m;
    KeyExtra e = {.has_step = false, .channel = NULL, .invert = -1};
    json_object_foreach(v, key, m) {
        push_key(x, key);
        int r = key_member(x, key, m, k, &e);
        if (r == 0 && e.has_step && k->has_time) r = fail(x, AT_KEY, "give step or time, not both");
        pop(x);
        if (r < 0) return -1;
    }
    if (!k->target) {
        push_key(x, "target");
        fail(x, AT_PARENT, "missing: every key needs a target image");
        pop(x);
        return -1;
    }
    if (e.channel || e.invert >= 0) return key_target_options(x, k, &e);
    return 0;
}

static int parse_source(Ctx *x, json_t *v, SceneSource *s)
{
    if (expect_object(x, v, "{\"image\": PATH or \"disc\": {...}, \"rate\": R, \"to\": N}") < 0)
        return -1;
    const char *key;
    json_t *m;
    bool disc = false, rate = false, to = false;
    json_object_foreach(v, key, m) {
        push_key(x, key);
        int r = 0;
        if (!strcmp(key, "image")) {
            r = disc ? fail(x, AT_KEY, "give image or disc, not both") : get_path(x, m, &s->image);
        } else if (!strcmp(key, "disc")) {
            if (s->image) r = fail(x, AT_KEY, "give image or disc, not both");
            else r = expect_object(x, m, "{\"center\": [x, y], \"radius\": r}");
            bool center = false, radius = false;
            const char *dk;
            json_t *dv;
            if (r == 0) json_object_foreach(m, dk, dv) {
                push_key(x, dk);
                double d;
                if (!strcmp(dk, "center")) {
                    float c[2];
                    r = get_point(x, dv, c);
                    s->cx = c[0];
                    s->cy = c[1];
                    center = true;
                } else if (!strcmp(dk, "radius")) {
                    r = get_number(x, dv, 0.0, SCENE_RADIUS_MAX, true, &d);
                    s->radius = (float)d;
                    radius = true;
                } else {
                    r = fail(x, AT_KEY, "unknown key (expected center, radius)");
                }
                pop(x);
                if (r < 0) break;
            }
            if (r == 0 && (!center || !radius)) {
                push_key(x, center ? "radius" : "center");
                r = fail(x, AT_PARENT, "missing: a disc needs a center [x, y] and a radius");
                pop(x);
            }
            disc = true;
        } else if (!strcmp(key, "rate")) {
            double d;
            r = get_number(x, m, 0.0, SCENE_RATE_MAX, true, &d);
            s->rate = (float)d;
            rate = true;
        } else if (!strcmp(key, "from")) {
            r = get_long(x, m, 0, CONFIG_STEPS_MAX - 1, &s->from);
        } else if (!strcmp(key, "to")) {
            r = get_long(x, m, 1, CONFIG_STEPS_MAX, &s->to);
            to = true;
        } else {
            r = fail(x, AT_KEY, "unknown key (expected image, disc, rate, from, to)");
        }
        pop(x);
        if (r < 0) return -1;
    }
    const char *missing = !s->image && !disc ? "image" : !rate ? "rate" : !to ? "to" : NULL;
    if (missing) {
        push_key(x, missing);
        fail(x, AT_PARENT, "missing: a source needs an image or a disc, a rate and the step it "
             "ends at (to)");
        pop(x);
        return -1;
    }
    if (s->to <= s->from) {
        push_key(x, "to");
        fail(x, AT_VALUE, "must be after from (%ld), got %ld", s->from, s->to);
        pop(x);
        return -1;
    }
    return 0;
}

/* Each key's step from its time at dt, and the steps increasing; the error
 * at the key's step (or time). PARSING: positions from the text (else from
 * the keys' lines). */
static int resolve_steps(Ctx *x, SceneField *f, int fi, float dt)
{
    for (int k = 0; k < f->nkeys; k++) {
        SceneKey *K = &f->keys[k];
        const char *what = K->has_time ? "time" : "step";
        if (K->has_time) {
            double st = floor(K->time / (double)dt + 0.5);
            if (st < 1.0 || st > (double)CONFIG_STEPS_MAX) {
                push_key(x, "fields"), push_index(x, fi), push_key(x, "keys"), push_index(x, k),
                    push_key(x, what);
                fail(x, AT_VALUE, "%g s is step %.0f at dt %g: must be step 1..%ld", K->time, st,
                     (double)dt, CONFIG_STEPS_MAX);
                x->depth -= 5;
                return -1;
            }
            K->step = (long)st;
        }
        if (k > 0 && K->step <= f->keys[k - 1].step) {
            push_key(x, "fields"), push_index(x, fi), push_key(x, "keys"), push_index(x, k),
                push_key(x, what);
            if (K->step == 0)
                fail(x, AT_PARENT, "missing: a step or a time (only a field's single key may have "
                     "neither)");
            else if (K->has_time)
                fail(x, AT_VALUE, "%g s is step %ld at dt %g: must come after keys[%d]'s step %ld",
                     K->time, K->step, (double)dt, k - 1, f->keys[k - 1].step);
            else
                fail(x, AT_VALUE, "must come after keys[%d]'s step %ld, got %ld", k - 1,
                     f->keys[k - 1].step, K->step);
            x->depth -= 5;
            return -1;
        }
    }
    /* no step: the plain morph of one key, with nothing that needs a schedule */
    SceneKey *K0 = &f->keys[0];
    bool extras = K0->moves || f->nsources > 0;
    for (int p = 0; p < SCENE_KEY_PARAMS; p++) extras = extras || K0->has[p];
    if (K0->step == 0 && (f->nkeys > 1 || extras)) {
        push_key(x, "fields"), push_index(x, fi), push_key(x, "keys"), push_index(x, 0),
            push_key(x, "step");
        fail(x, AT_PARENT, "missing: a step or a time (a key with parameters, a move or "
             "sources, or one of several keys, needs one)");
        x->depth -= 5;
        return -1;
    }
    return 0;
}

static int parse_field(Ctx *x, json_t *v, SceneField *f)
{
    if (expect_object(x, v, "{\"start\": PATH, \"keys\": [...], ...}") < 0) return -1;
    f->invert = -1;
    long off = locate(x->text, x->len, x->path, x->depth < MAX_DEPTH ? x->depth : MAX_DEPTH, false);
    if (off >= 0) line_column(x->text, (size_t)off, &f->line, &f->column);
    const char *key;
    json_t *m;
    json_t *keys = NULL;
    json_object_foreach(v, key, m) {
        push_key(x, key);
        int r = 0;
        const Setting *st = find_setting(key, true);
        if (st) {
            r = setting(x, st, m, f);
        } else if (!strcmp(key, "name")) {
            const char *s = json_is_string(m) ? json_string_value(m) : NULL;
            size_t n = s ? strlen(s) : 0;
            bool ok = s && n >= 1 && n <= 32;
            for (size_t i = 0; ok && i < n; i++)
                ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                     (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-';
            if (!ok) r = fail(x, AT_VALUE, "expected a name of 1..32 letters, digits, _ or -");
            else if (!(f->name = dup_str(s))) r = oom(x);
        } else if (!strcmp(key, "start")) {
            r = get_path(x, m, &f->start);
        } else if (!strcmp(key, "keys")) {
            size_t n = json_array_size(m);
            if (!json_is_array(m) || n < 1 || n > SCENE_KEYS_MAX)
                r = fail(x, AT_VALUE, "expected an array of 1..%d keys", SCENE_KEYS_MAX);
            else if (!(f->keys = calloc(n, sizeof *f->keys))) r = oom(x);
            for (size_t k = 0; r == 0 && k < n; k++) {
                push_index(x, (int)k);
                r = parse_key(x, json_array_get(m, k), &f->keys[k]);
                f->nkeys = (int)k + 1;
                pop(x);
            }
            keys = m;
        } else if (!strcmp(key, "sources")) {
            size_t n = json_array_size(m);
            if (!json_is_array(m) || n > SCENE_SOURCES_MAX)
                r = fail(x, AT_VALUE, "expected an array of at most %d sources", SCENE_SOURCES_MAX);
            else if (n && !(f->sources = calloc(n, sizeof *f->sources))) r = oom(x);
            for (size_t k = 0; r == 0 && k < n; k++) {
                push_index(x, (int)k);
                r = parse_source(x, json_array_get(m, k), &f->sources[k]);
                f->nsources = (int)k + 1;
                pop(x);
            }
        } else {
            r = fail(x, AT_KEY, "unknown key (expected name, color, start, channel, invert, keys, "
                     "sources)");
        }
        pop(x);
        if (r < 0) return -1;
    }
    const char *missing = !f->start ? "start" : !keys ? "keys" : NULL;
    if (missing) {
        push_key(x, missing);
        fail(x, AT_PARENT, "missing: a field needs a start image and keys");
        pop(x);
        return -1;
    }
    return 0;
}

/* ---- the scene --------------------------------------------------------- */

void scene_free(Scene *s)
{
    if (!s) return;
    for (int i = 0; i < s->nopts; i++) {
        free(s->opts[i].flag);
        free(s->opts[i].value);
    }
    free(s->opts);
    for (int i = 0; i < SCENE_FIELDS_MAX; i++) {
        SceneField *f = &s->field[i];
        free(f->name);
        free(f->start);
        free(f->color);
        free(f->channel);
        for (int k = 0; k < f->nkeys; k++) free(f->keys[k].target);
        free(f->keys);
        for (int k = 0; k < f->nsources; k++) free(f->sources[k].image);
        free(f->sources);
    }
    free(s->file);
    free(s);
}

/* The scene's settings parsed together, as config_parse will (scene_args
 * with no command line): the joint checks (--jacobi and --vcycles both 0, a
 * .exr pattern with --format png8, ...). The error goes to the first
 * setting its message names. */
static int check_joint(Ctx *x, Config *out)
{
    char **args = NULL;
    int n = 0;
    char *argv0[] = {"smokemorph", NULL};
    if (scene_args(x->s, 1, argv0, &n, &args) < 0) return oom(x);
    char cerr[1024];
    int r = config_parse(out, n, args, cerr, sizeof cerr);
    free(args);
    if (r == 0) return 0;
    if (r > 0) { /* --help or --version: not a setting */
        snprintf(cerr, sizeof cerr, "config: not a setting");
    }
    const SceneOption *o = x->s->nopts ? &x->s->opts[0] : NULL;
    for (int i = 0; i < x->s->nopts; i++) {
        const char *hit = strstr(cerr, x->s->opts[i].flag);
        size_t fl = strlen(x->s->opts[i].flag);
        if (hit && !(hit[fl] >= 'a' && hit[fl] <= 'z') && hit[fl] != '-') {
            o = &x->s->opts[i];
            break;
        }
    }
    const char *m = strncmp(cerr, "config: ", 8) == 0 ? cerr + 8 : cerr;
    if (x->err && x->errlen) {
        if (o) snprintf(x->err, x->errlen, "%s:%d:%d: %s: %s", x->name, o->line, o->column, o->key, m);
        else snprintf(x->err, x->errlen, "%s:1:1: %s", x->name, m);
        one_line(x->err);
    }
    return -1;
}

/* What several fields must agree on: each its own name (EXR's density.NAME;
 * a field without one is named smoke, smoke2, ... by its place), and no
 * key's own vd (the fields share one velocity, damped by the run's vd). */
static int check_fields(Ctx *x)
{
    Scene *s = x->s;
    for (int i = 1; i < s->nfields; i++) {
        char bi[16], bj[16];
        const char *ni = scene_field_name(s, i, bi, sizeof bi);
        for (int j = 0; j < i; j++) {
            if (strcmp(ni, scene_field_name(s, j, bj, sizeof bj)) != 0) continue;
            push_key(x, "fields"), push_index(x, i);
            if (s->field[i].name) {
                push_key(x, "name");
                fail(x, AT_VALUE, "'%s' is fields[%d]'s name too: each field needs a name of its own "
                     "(the EXR's density.NAME)", ni, j);
                pop(x);
            } else {
                fail(x, AT_VALUE, "its name is '%s' by default, which fields[%d] has: give it a "
                     "\"name\" of its own (the EXR's density.NAME)", ni, j);
            }
            x->depth -= 2;
            return -1;
        }
    }
    for (int i = 0; i < s->nfields && s->nfields > 1; i++)
        for (int k = 0; k < s->field[i].nkeys; k++) {
            if (!s->field[i].keys[k].has[SCENE_VD]) continue;
            push_key(x, "fields"), push_index(x, i), push_key(x, "keys"), push_index(x, k),
                push_key(x, "vd");
            fail(x, AT_VALUE, "the scene's %d fields share one velocity, damped by the run's vd "
                 "(\"vd\" at the top, or --vd): a key cannot have its own", s->nfields);
            x->depth -= 5;
            return -1;
        }
    return 0;
}

Scene *scene_parse(const char *text, size_t len, const char *name, const char *dir, char *err,
                   size_t errlen)
{
    return scene_parse_at(text, len, name, dir, 0.0f, err, errlen);
}

/* The text as JSON (a NUL byte refused: jansson would skip it and the
 * positions would no longer be the text's); NULL with one line in err. */
static json_t *load_json(const Scene *s, const char *text, size_t len, char *err, size_t errlen)
{
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line, col;
        line_column(text, (size_t)(nul - text), &line, &col);
        if (err && errlen) snprintf(err, errlen, "%s:%d:%d: a NUL byte: a scene is JSON text", s->file,
                                    line, col);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root && err && errlen) {
        snprintf(err, errlen, "%s:%d:%d: %s", s->file, je.line < 1 ? 1 : je.line,
                 je.column < 1 ? 1 : je.column, je.text);
        one_line(err);
    }
    return root;
}

/* The top level's settings (every key but "fields", which goes into
 * *fields), checked together into c. 0, or -1 (failed). */
static int parse_top(Ctx *x, json_t *root, json_t **fields, Config *c)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "fields")) {
            *fields = v;
            continue;
        }
        push_key(x, key);
        const Setting *st = find_setting(key, false);
        int r = st ? setting(x, st, v, NULL)
                   : fail(x, AT_KEY, "unknown key (not a setting of a scene: docs/SCENES.md "
                          "lists them)");
        pop(x);
        if (r < 0) return -1;
    }
    return check_joint(x, c);
}

/* "fields": 1..SCENE_FIELDS_MAX of them. 0, or -1 (failed). */
static int parse_fields(Ctx *x, json_t *fields)
{
    Scene *s = x->s;
    push_key(x, "fields");
    if (!fields)
        return fail(x, AT_PARENT, "missing: a scene needs \"fields\": [ { \"start\": ..., \"keys\": [...] } ]");
    size_t n = json_array_size(fields);
    if (!json_is_array(fields) || n < 1 || n > SCENE_FIELDS_MAX)
        return fail(x, AT_VALUE, "expected an array of 1..%d fields", SCENE_FIELDS_MAX);
    for (size_t i = 0; i < n; i++) {
        push_index(x, (int)i);
        s->nfields = (int)i + 1;
        int r = parse_field(x, json_array_get(fields, i), &s->field[i]);
        pop(x);
        if (r < 0) return -1;
    }
    pop(x);
    return 0;
}

Scene *scene_parse_at(const char *text, size_t len, const char *name, const char *dir, float dt, char *err,
                      size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    Scene *s = calloc(1, sizeof *s);
    if (!s || !(s->file = dup_str(name ? name : "scene"))) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", name ? name : "scene");
        free(s);
        return NULL;
    }
    Ctx x = {.name = s->file, .dir = dir, .text = text, .len = len, .err = err, .errlen = errlen, .s = s};
    json_t *root = load_json(s, text, len, err, errlen), *fields = NULL;
    Config c;
    if (!root) goto fail;
    if (!json_is_object(root)) {
        fail(&x, AT_VALUE, "expected an object: { \"fields\": [...], ... }");
        goto fail;
    }
    if (parse_top(&x, root, &fields, &c) < 0 || parse_fields(&x, fields) < 0) goto fail;
    for (int i = 0; i < s->nfields; i++)
        if (resolve_steps(&x, &s->field[i], i, dt > 0.0f ? dt : c.params.dt) < 0) goto fail;
    if (check_fields(&x) < 0) goto fail;
    json_decref(root);
    return s;
fail:
    json_decref(root);
    scene_free(s);
    return NULL;
}

Scene *scene_load(const char *path, char *err, size_t errlen) { return scene_load_at(path, 0.0f, err, errlen); }

Scene *scene_load_at(const char *path, float dt, char *err, size_t errlen)
{
    /* O_NONBLOCK, then a regular file: a FIFO is refused at once */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
    int fl = why ? -1 : fcntl(fd, F_GETFL);
    if (!why && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) why = strerror(errno);
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "scene: cannot read %s: %s", path, why ? why : strerror(errno));
        one_line(err);
        if (fd >= 0) close(fd);
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
        if (n == cap) {
            if (cap >= (size_t)SCENE_FILE_MAX) break;
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
            } else {
                buf = b;
                cap *= 2;
            }
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad || n >= (size_t)SCENE_FILE_MAX) {
        snprintf(err, errlen, "scene: cannot read %s: %s", path,
                 !buf ? "out of memory" : bad ? "read error" : "larger than 16 MiB");
        one_line(err);
        free(buf);
        return NULL;
    }
    /* relative paths in the scene are relative to its folder */
    char *dir = dup_str(path);
    Scene *s = NULL;
    if (dir) {
        char *slash = strrchr(dir, '/');
        if (slash == dir) slash[1] = '\0';
        else if (slash) *slash = '\0';
        else dir[0] = '\0';
        s = scene_parse_at(buf, n, path, dir, dt, err, errlen);
    } else {
        snprintf(err, errlen, "scene: out of memory");
    }
    free(dir);
    free(buf);
    return s;
}

Scene *scene_from_images(const char *start, const char *const *targets, int n, long every)
{
    if (n < 1 || n > SCENE_KEYS_MAX || (every <= 0 && n > 1)) return NULL;
    Scene *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    SceneField *f = &s->field[0];
    s->nfields = 1;
    f->invert = -1;
    if (!(s->file = dup_str("command line")) || !(f->start = dup_str(start)) ||
        !(f->keys = calloc((size_t)n, sizeof *f->keys)))
        goto fail;
    for (int k = 0; k < n; k++) {
        SceneKey *K = &f->keys[k];
        K->step = every > 0 ? (long)(k + 1) * every : 0;
        K->scale_from = K->scale_to = 1.0f;
        f->nkeys = k + 1;
        if (!(K->target = dup_str(targets[k]))) goto fail;
    }
    return s;
fail:
    scene_free(s);
    return NULL;
}

int scene_args(const Scene *s, int argc, char **argv, int *nout, char ***out)
{
    const SceneField *f0 = s->nfields > 0 ? &s->field[0] : NULL;
    size_t max = (size_t)argc + 2 * (size_t)s->nopts + 8;
    char **a = malloc(max * sizeof *a);
    if (!a) return -1;
    int n = 0;
    a[n++] = argc > 0 ? argv[0] : "smokemorph";
    for (int i = 0; i < s->nopts; i++) {
        a[n++] = s->opts[i].flag;
        if (s->opts[i].value) a[n++] = s->opts[i].value;
    }
    if (f0 && f0->color) a[n++] = "--color", a[n++] = f0->color;
    if (f0 && f0->channel) a[n++] = "--channel", a[n++] = f0->channel;
    if (f0 && f0->invert == 1) a[n++] = "--invert";
    for (int i = 1; i < argc; i++) a[n++] = argv[i];
    a[n] = NULL;
    *nout = n;
    *out = a;
    return 0;
}

const char *scene_field_name(const Scene *s, int i, char *buf, size_t n)
{
    if (s && i >= 0 && i < s->nfields && s->field[i].name) return s->field[i].name;
    if (i == 0) snprintf(buf, n, "smoke");
    else snprintf(buf, n, "smoke%d", i + 1);
    return buf;
}

/* Field fi's time keys at the run's dt, and its steps increasing. */
static int apply_steps(Scene *s, int fi, const Config *c, char *err, size_t errlen)
{
    SceneField *f = &s->field[fi];
    for (int k = 0; k < f->nkeys; k++) {
        SceneKey *K = &f->keys[k];
        if (!K->has_time) continue;
        double st = floor(K->time / (double)c->params.dt + 0.5);
        if (st < 1.0 || st > (double)CONFIG_STEPS_MAX) {
            snprintf(err, errlen, "%s:%d:%d: fields[%d].keys[%d].time: %g s is step %.0f at dt %g: "
                     "must be step 1..%ld", s->file, K->line, K->column, fi, k, K->time, st,
                     (double)c->params.dt, CONFIG_STEPS_MAX);
            return -1;
        }
        K->step = (long)st;
        if (k > 0 && K->step <= f->keys[k - 1].step) {
            snprintf(err, errlen, "%s:%d:%d: fields[%d].keys[%d].time: %g s is step %ld at dt %g: "
                     "must come after keys[%d]'s step %ld", s->file, K->line, K->column, fi, k,
                     K->time, K->step, (double)c->params.dt, k - 1, f->keys[k - 1].step);
            return -1;
        }
    }
    for (int k = 1; k < f->nkeys; k++)
        if (f->keys[k].step <= f->keys[k - 1].step) { /* a step after a time key */
            snprintf(err, errlen, "%s:%d:%d: fields[%d].keys[%d]: step %ld must come after keys[%d]'s "
                     "step %ld (at dt %g)", s->file, f->keys[k].line, f->keys[k].column, fi, k,
                     f->keys[k].step, k - 1, f->keys[k - 1].step, (double)c->params.dt);
            return -1;
        }
    return 0;
}

int scene_apply(Scene *s, Config *c, char *err, size_t errlen)
{
    if (c->current_path) {
        snprintf(err, errlen, "config: --scene %s gives the images (its field's start and keys): "
                 "leave CURRENT and TARGET out", s->file);
        return SCENE_CLASH;
    }
    if (c->key_every_set) {
        snprintf(err, errlen, "config: --key-every: the keys of --scene %s have their own steps",
                 s->file);
        return SCENE_CLASH;
    }
    /* the steps of time keys at the run's dt; messages from the keys' lines */
    for (int i = 0; i < s->nfields; i++)
        if (apply_steps(s, i, c, err, errlen) < 0) return SCENE_BAD;
    SceneField *f = &s->field[0];
    c->current_path = f->start;
    c->target_path = f->keys[0].target;
    c->nkeys = f->nkeys;
    for (int k = 0; k < f->nkeys; k++) c->key_paths[k] = f->keys[k].target;
    c->field_name = f->name;
    return 0;
}

/* ---- --dump-scene ------------------------------------------------------- */

/* An absolute path: the real path of a file that exists (or of the folder
 * of one that does not yet), else joined to the current folder, with "."
 * and "x/.." taken out. */
static char *absolute_bare(const char *p)
{
    char *r = realpath(p, NULL);
    if (r) return r;
    const char *slash = strrchr(p, '/');
    if (slash && slash != p && slash[1]) {
        char *dir = malloc((size_t)(slash - p) + 1);
        if (dir) {
            memcpy(dir, p, (size_t)(slash - p));
            dir[slash - p] = '\0';
            char *rd = realpath(dir, NULL);
            free(dir);
            if (rd) {
                size_t n = strlen(rd) + strlen(slash) + 1;
                char *j = malloc(n);
                if (j) snprintf(j, n, "%s%s", strcmp(rd, "/") == 0 ? "" : rd, slash);
                free(rd);
                return j;
            }
        }
    }
    char cwd[PATH_MAX];
    const char *base = p[0] == '/' ? "" : getcwd(cwd, sizeof cwd) ? cwd : ".";
    size_t n = strlen(base) + strlen(p) + 2;
    char *j = malloc(n);
    if (!j) return NULL;
    snprintf(j, n, "%s%s%s", base, base[0] ? "/" : "", p);
    if (j[0] != '/') return j;
    /* lexical clean-up of an absolute path */
    char *o = j; /* write position */
    for (char *q = j; *q;) {
        while (*q == '/') q++;
        char *e = q;
        while (*e && *e != '/') e++;
        size_t len = (size_t)(e - q);
        if (len == 0) break;
        if (len == 1 && q[0] == '.') {
        } else if (len == 2 && q[0] == '.' && q[1] == '.') {
            while (o > j && *--o != '/') {}
        } else {
            *o++ = '/';
            memmove(o, q, len);
            o += len;
        }
        q = e;
    }
    if (o == j) *o++ = '/';
    *o = '\0';
    return j;
}

/* absolute_bare, ending in '/' where p does or where folder is set: "out/f.#/"
 * and "out/#/." name folders (config reads a frame pattern only from the
 * part after the last '/'), and must not come back as patterns. */
static char *absolute(const char *p, bool folder)
{
    char *a = absolute_bare(p);
    size_t n = strlen(p), k = a ? strlen(a) : 0;
    folder |= n > 0 && p[n - 1] == '/';
    if (!a || !folder || (k && a[k - 1] == '/')) return a;
    char *t = realloc(a, k + 2);
    if (!t) {
        free(a);
        return NULL;
    }
    t[k] = '/';
    t[k + 1] = '\0';
    return t;
}

static json_t *jstr_path(const char *p, bool folder)
{
    char *a = absolute(p, folder);
    json_t *v = json_string(a ? a : p);
    free(a);
    return v;
}

static json_t *jstr_abs(const char *p) { return jstr_path(p, false); }

static json_t *jfloat(float f) { return json_real(short_float(f)); }

/* The option's text as the setting's JSON value. */
static json_t *setting_json(const Setting *st, const char *text)
{
    int w, h;
    char buf[16];
    float rgb[3];
    switch (st->kind) {
    case 'f': return jfloat((float)strtod(text, NULL));
    case 'F': return json_real(strtod(text, NULL));
    case 'i': return json_integer(strtoll(text, NULL, 10));
    case 'b': return json_true();
    case 'n': return json_false();
    case 'z':
        if (config_parse_size(text, &w, &h) < 0) return json_string(text);
        return json_pack("[ii]", w, h);
    case 'd':
        if (!strcmp(text, "auto")) return json_string("auto");
        return jfloat((float)strtod(text, NULL));
    case 'c':
        if (config_parse_color(text, rgb) < 0) return json_string(text);
        snprintf(buf, sizeof buf, "#%02x%02x%02x", (int)lroundf(rgb[0] * 255.0f),
                 (int)lroundf(rgb[1] * 255.0f), (int)lroundf(rgb[2] * 255.0f));
        return json_string(buf);
    case 'p': return jstr_path(text, !strcmp(st->key, "frames") && config_frames_is_folder(text));
    }
    return json_string(text);
}

typedef struct {
    const char *value[NSETTINGS];
    bool given[NSETTINGS];
} Given;

static void take_option(void *ctx, const char *name, const char *arg)
{
    Given *g = ctx;
    const Setting *st = setting_of_option(name);
    if (!st) return;
    int k = (int)(st - settings);
    g->given[k] = true;
    g->value[k] = arg;
}

static int set_new(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

static json_t *key_json(const SceneKey *K)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int r = 0;
    if (K->step > 0) r |= set_new(o, "step", json_integer(K->step));
    r |= set_new(o, "target", jstr_abs(K->target));
    for (int p = 0; p < SCENE_KEY_PARAMS; p++)
        if (K->has[p]) r |= set_new(o, key_param_names[p], jfloat(K->param[p]));
    if (K->moves) {
        r |= set_new(o, "move", json_pack("{s:[ff],s:[ff]}", "from", short_float(K->move_from[0]),
                                          short_float(K->move_from[1]), "to",
                                          short_float(K->move_to[0]), short_float(K->move_to[1])));
        r |= set_new(o, "scale", json_pack("{s:f,s:f}", "from", short_float(K->scale_from), "to",
                                           short_float(K->scale_to)));
    }
    if (r) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *source_json(const SceneSource *S)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int r = 0;
    if (S->image) r |= set_new(o, "image", jstr_abs(S->image));
    else
        r |= set_new(o, "disc", json_pack("{s:[ff],s:f}", "center", short_float(S->cx),
                                          short_float(S->cy), "radius", short_float(S->radius)));
    r |= set_new(o, "rate", jfloat(S->rate));
    r |= set_new(o, "from", json_integer(S->from));
    r |= set_new(o, "to", json_integer(S->to));
    if (r) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* jansson's indented output puts each number of [48, 48] on a line of its
 * own: an array of numbers that spans lines goes on one line. (A JSON
 * string holds no raw newline and has quotes, so the span from '[' to ']'
 * of only number characters, commas and whitespace, with a newline, is
 * jansson's layout, never a string's contents.) */
static void compact_arrays(char *t)
{
    char *o = t;
    for (char *p = t; *p;) {
        if (*p == '[') {
            char *e = p + 1;
            bool nl = false;
            while (*e && strchr("0123456789+-.eE, \n", *e)) nl |= *e++ == '\n';
            if (*e == ']' && nl) {
                *o++ = '[';
                bool first = true;
                for (char *q = p + 1; q < e;) {
                    while (q < e && (*q == ' ' || *q == '\n' || *q == ',')) q++;
                    if (q >= e) break;
                    if (!first) *o++ = ',', *o++ = ' ';
                    first = false;
                    while (q < e && *q != ' ' && *q != '\n' && *q != ',') *o++ = *q++;
                }
                *o++ = ']';
                p = e + 1;
                continue;
            }
        }
        *o++ = *p++;
    }
    *o = '\0';
}

int scene_write(FILE *out, const Scene *s, int argc, char **argv, char *err, size_t errlen)
{
    Given g;
    memset(&g, 0, sizeof g);
    config_each_option(argc, argv, take_option, &g);
    json_t *root = json_object(), *fields = json_array();
    int r = root && fields ? 0 : -1;
    for (int k = 0; k < NSETTINGS && r == 0; k++)
        if (g.given[k] && !settings[k].field)
            r |= set_new(root, settings[k].key, setting_json(&settings[k], g.value[k] ? g.value[k] : ""));
    for (int i = 0; i < s->nfields && r == 0; i++) {
        const SceneField *f = &s->field[i];
        json_t *fo = json_object(), *keys = json_array(), *srcs = json_array();
        r |= fo && keys && srcs ? 0 : -1;
        if (r == 0 && f->name) r |= set_new(fo, "name", json_string(f->name));
        for (int k = 0; k < NSETTINGS && r == 0; k++) {
            const Setting *st = &settings[k];
            if (!st->field) continue;
            const char *text = NULL;
            bool given = false;
            if (i == 0) {
                given = g.given[k];
                text = g.value[k];
            } else if (!strcmp(st->key, "color") || !strcmp(st->key, "channel")) {
                text = !strcmp(st->key, "color") ? f->color : f->channel;
                given = text != NULL;
            } else if (!strcmp(st->key, "invert")) {
                given = f->invert >= 0;
            }
            if (!given) continue;
            if (!strcmp(st->key, "invert"))
                r |= set_new(fo, "invert", json_boolean(i == 0 ? true : f->invert == 1));
            else
                r |= set_new(fo, st->key, setting_json(st, text ? text : ""));
        }
        if (r == 0) r |= set_new(fo, "start", jstr_abs(f->start));
        for (int k = 0; k < f->nkeys && r == 0; k++) r |= json_array_append_new(keys, key_json(&f->keys[k]));
        for (int k = 0; k < f->nsources && r == 0; k++)
            r |= json_array_append_new(srcs, source_json(&f->sources[k]));
        if (r == 0) {
            json_object_set(fo, "keys", keys);
            if (f->nsources) json_object_set(fo, "sources", srcs);
            r |= json_array_append(fields, fo);
        }
        json_decref(keys);
        json_decref(srcs);
        json_decref(fo);
    }
    if (r == 0) r = json_object_set(root, "fields", fields);
    char *text = r == 0 ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
    if (text) {
        compact_arrays(text);
        if (fputs(text, out) == EOF || fputc('\n', out) == EOF) r = -1;
        free(text);
    } else {
        r = -1;
    }
    json_decref(fields);
    json_decref(root);
    if (r != 0) snprintf(err, errlen, "scene: cannot write the scene (out of memory or a write error)");
    return r != 0 ? -1 : 0;
}

/* ---- positions for other JSON files (a lesson, lesson.h) --------------------- */

int scene_json_position(const char *text, size_t len, const char *path, bool at_key, int *line, int *col)
{
    PathEnt p[MAX_DEPTH];
    char keys[MAX_DEPTH][64];
    int n = 0;
    const char *s = path ? path : "";
    while (*s && n < MAX_DEPTH) {
        if (*s == '.') s++;
        if (*s == '[') {
            char *end;
            long i = strtol(s + 1, &end, 10);
            if (*end != ']' || i < 0) return -1;
            p[n++] = (PathEnt){NULL, (int)i};
            s = end + 1;
        } else {
            size_t k = strcspn(s, ".[");
            if (k == 0 || k >= sizeof keys[0]) return -1;
            memcpy(keys[n], s, k);
            keys[n][k] = '\0';
            p[n] = (PathEnt){keys[n], 0};
            n++;
            s += k;
        }
    }
    if (*s) return -1;
    long off = locate(text, len, p, n, at_key);
    if (off < 0) return -1;
    line_column(text, (size_t)off, line, col);
    return 0;
}
