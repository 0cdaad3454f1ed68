/* lesson: prepared lessons; see lesson.h. GL-free. Read with jansson (the
 * whole file, duplicate keys refused); an error names the value's place as
 * scene files do (scene_json_position). */
#include "lesson.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compare_spec.h"
#include "inputs.h"
#include "scene.h"
#include "viewfield.h"

#define LESSON_FILE_MAX (1L << 20)

typedef struct {
    const char *name, *text;
    size_t len;
    char *err;
    size_t errlen;
} Ctx;

/* "lesson: NAME:LINE:COLUMN: PATH: message" for the value at PATH (its key
 * with at_key); returns -1. */
static int fail(Ctx *x, const char *path, bool at_key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(Ctx *x, const char *path, bool at_key, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = 0, col = 0;
    scene_json_position(x->text, x->len, path, at_key, &line, &col);
    snprintf(x->err, x->errlen, "lesson: %s:%d:%d: %s: %s", x->name, line, col, path[0] ? path : "(top)", msg);
    for (char *c = x->err; *c; c++) /* one line, whatever the file holds */
        if ((unsigned char)*c < 0x20) *c = '?';
    return -1;
}

static int param_index(const char *name)
{
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        if (method_param_info[k].option && strcmp(method_param_info[k].name, name) == 0) return k;
    return -1;
}

static int get_long(Ctx *x, const char *path, json_t *v, long lo, long hi, long *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return fail(x, path, false, "expected a whole number in [%ld, %ld]", lo, hi);
    *out = (long)json_integer_value(v);
    return 0;
}

static int get_bool(Ctx *x, const char *path, json_t *v, bool *out)
{
    if (!json_is_boolean(v)) return fail(x, path, false, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

static int get_text(Ctx *x, const char *path, json_t *v, char *out, size_t n)
{
    if (!json_is_string(v)) return fail(x, path, false, "expected a string");
    if (json_string_length(v) >= n) return fail(x, path, false, "longer than %zu bytes", n - 1);
    if (memchr(json_string_value(v), '\0', json_string_length(v))) return fail(x, path, false, "holds a NUL");
    snprintf(out, n, "%s", json_string_value(v));
    return 0;
}

/* The step's "set": each a parameter by its name; the step's parameters
 * (cur: the run's with the sets of the steps before) checked with it,
 * whatever the order of its members. */
static int parse_set(Ctx *x, const char *path, json_t *v, const SolverParams *cur, LessonStep *st)
{
    if (!json_is_object(v)) return fail(x, path, false, "expected an object of parameters");
    const char *key;
    json_t *val;
    char p[256];
    SolverParams q = *cur;
    json_object_foreach(v, key, val) {
        snprintf(p, sizeof p, "%.120s.%.60s", path, key);
        int k = param_index(key);
        if (k < 0)
            return fail(x, p, true, "unknown parameter (one of vf, vd, vg, sigma, dt, jacobi, vcycles, "
                        "gather, force, swirl, arrive, drift, umax, ...: the checkpoint's names)");
        char kind = method_param_info[k].kind;
        double d;
        if (kind == 'b') {
            if (!json_is_boolean(val)) return fail(x, p, false, "expected true or false");
            d = json_is_true(val);
        } else if (kind == 'e') {
            const char *s = json_is_string(val) ? json_string_value(val) : "";
            if (strcmp(s, "balance") && strcmp(s, "fattal")) return fail(x, p, false, "expected \"balance\" or \"fattal\"");
            d = strcmp(s, "fattal") == 0 ? SOLVER_FORCE_FATTAL : SOLVER_FORCE_BALANCE;
        } else if (kind == 'i') {
            if (!json_is_integer(val)) return fail(x, p, false, "expected a whole number");
            d = (double)json_integer_value(val);
            if (d < -1e9 || d > 1e9) return fail(x, p, false, "out of range");
        } else if (method_param_info[k].autov && json_is_string(val) && !strcasecmp(json_string_value(val), "auto")) {
            d = SETTING_AUTO; /* --arrive auto */
        } else {
            if (!json_is_number(val))
                return fail(x, p, false, method_param_info[k].autov ? "expected a number or \"auto\"" : "expected a number");
            d = json_number_value(val);
            if (method_param_info[k].autov && d < 0.0) d = 2.0 * SETTING_AUTO; /* out of range, not "auto" */
        }
        method_param_set(&q, k, d);
        st->has[k] = true;
        st->value[k] = d;
    }
    const char *bad = method_params_check(&q);
    if (!bad) return 0;
    json_object_foreach(v, key, val) { /* a member wrong alone: its place */
        int k = param_index(key);
        SolverParams r = *cur;
        method_param_set(&r, k, st->value[k]);
        const char *why = method_params_check(&r);
        snprintf(p, sizeof p, "%.120s.%.60s", path, key);
        if (why) return fail(x, p, false, "%s", why);
    }
    return fail(x, path, false, "%s (the step's parameters: the run's with every set up to it)", bad);
}

int lesson_compare_spec(const char *spec, const SolverParams *base, CompareSpec *out, char *err, size_t errlen)
{
    for (const char *p = compare_preset_list; *p;) { /* a preset's name */
        size_t n = strcspn(p, ", ");
        if (n == strlen(spec) && strncmp(p, spec, n) == 0) return compare_preset(spec, base, out, err, errlen);
        p += n;
        p += strspn(p, ", ");
    }
    return compare_parse(spec, base, out, err, errlen);
}

/* Step i; cur: the parameters of the step before (the run's with every
 * set up to it), then this step's. */
static int parse_step(Ctx *x, int i, json_t *v, SolverParams *cur, LessonStep *st)
{
    char path[64], p[160];
    snprintf(path, sizeof path, "steps[%d]", i);
    memset(st, 0, sizeof *st);
    st->view = -1;
    st->pass_by_pass = -1;
    st->hud = -1;
    st->passes = 1;
    st->to_pass = -1;
    scene_json_position(x->text, x->len, path, false, &st->line, &st->column);
    if (!json_is_object(v)) return fail(x, path, false, "expected an object (a step)");
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) {
        snprintf(p, sizeof p, "%s.%.60s", path, key);
        bool b = false;
        long n = 0;
        if (!strcmp(key, "caption")) {
            if (get_text(x, p, val, st->caption, sizeof st->caption) < 0) return -1;
        } else if (!strcmp(key, "view")) {
            const char *s = json_is_string(val) ? json_string_value(val) : NULL;
            if (!s || (st->view = viewfield_parse(s)) < 0)
                return fail(x, p, false, "unknown view '%.40s' (one of %s)", s ? s : "", viewfield_names());
        } else if (!strcmp(key, "set")) {
            if (parse_set(x, p, val, cur, st) < 0) return -1;
        } else if (!strcmp(key, "restart")) {
            if (get_bool(x, p, val, &st->restart) < 0) return -1;
        } else if (!strcmp(key, "run")) {
            if (get_long(x, p, val, 0, LESSON_RUN_MAX, &st->run) < 0) return -1;
        } else if (!strcmp(key, "until")) {
            if (get_long(x, p, val, 0, LESSON_RUN_MAX, &st->until) < 0) return -1;
        } else if (!strcmp(key, "pass_by_pass")) {
            if (get_bool(x, p, val, &b) < 0) return -1;
            st->pass_by_pass = b;
        } else if (!strcmp(key, "passes")) {
            if (get_long(x, p, val, 1, 10000, &n) < 0) return -1;
            st->passes = (int)n;
        } else if (!strcmp(key, "to_pass")) {
            const char *nm = json_is_string(val) ? json_string_value(val) : "";
            for (int k = 0; k < METHOD_PASS_COUNT; k++)
                if (!strcmp(nm, method_pass_name((MethodPass)k))) st->to_pass = k;
            if (st->to_pass < 0) {
                char names[600] = "";
                for (int k = 0; k < METHOD_PASS_COUNT; k++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
                             method_pass_name((MethodPass)k));
                return fail(x, p, false, "unknown pass '%.40s' (one of %s)", nm, names);
            }
        } else if (!strcmp(key, "compare")) {
            if (get_text(x, p, val, st->compare, sizeof st->compare) < 0) return -1;
        } else if (!strcmp(key, "hud")) {
            if (get_bool(x, p, val, &b) < 0) return -1;
            st->hud = b;
        } else {
            return fail(x, p, true, "unknown member (caption, view, set, restart, run, until, pass_by_pass, "
                        "passes, to_pass, compare, hud)");
        }
    }
    if (st->run && st->until) return fail(x, path, false, "give run or until, not both");
    lesson_params(st, cur);
    char why[512];
    CompareSpec cs; /* the comparison over the step's parameters */
    snprintf(p, sizeof p, "%s.compare", path);
    if (st->compare[0] && lesson_compare_spec(st->compare, cur, &cs, why, sizeof why) < 0)
        return fail(x, p, false, "%s", strncmp(why, "compare: ", 9) ? why : why + 9);
    return 0;
}

Lesson *lesson_parse(const char *text, size_t len, const char *name, const SolverParams *base, char *err,
                     size_t errlen)
{
    Ctx x = {name, text, len, err, errlen};
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    Lesson *l = NULL;
    if (!root) {
        snprintf(err, errlen, "lesson: %s:%d:%d: %s", name, je.line, je.column, je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        fail(&x, "", false, "expected an object with \"steps\"");
        goto done;
    }
    if (!(l = calloc(1, sizeof *l))) {
        snprintf(err, errlen, "lesson: %s: out of memory", name);
        goto done;
    }
    snprintf(l->file, sizeof l->file, "%s", name);
    const char *key;
    json_t *val, *steps = NULL;
    json_object_foreach(root, key, val) {
        if (!strcmp(key, "title")) {
            if (get_text(&x, "title", val, l->title, sizeof l->title) < 0) goto fail;
        } else if (!strcmp(key, "steps")) {
            steps = val;
        } else if (!strcmp(key, "about")) { /* a note for the teacher, not shown */
        } else {
            char p[80];
            snprintf(p, sizeof p, "%.60s", key);
            fail(&x, p, true, "unknown member (title, about, steps)");
            goto fail;
        }
    }
    if (!steps || !json_is_array(steps) || json_array_size(steps) < 1 || json_array_size(steps) > LESSON_STEPS_MAX) {
        if (steps) fail(&x, "steps", false, "expected a list of 1..%d steps", LESSON_STEPS_MAX);
        else snprintf(err, errlen, "lesson: %s: no \"steps\" (a list of what to show, one a Space)", name);
        goto fail;
    }
    l->n = (int)json_array_size(steps);
    if (!(l->step = calloc((size_t)l->n, sizeof *l->step))) {
        snprintf(err, errlen, "lesson: %s: out of memory", name);
        goto fail;
    }
    SolverParams cur = *base; /* each step's: the run's, then the sets in order */
    for (int i = 0; i < l->n; i++)
        if (parse_step(&x, i, json_array_get(steps, (size_t)i), &cur, &l->step[i]) < 0) goto fail;
    goto done;
fail:
    lesson_free(l);
    l = NULL;
done:
    json_decref(root);
    return l;
}

Lesson *lesson_load(const char *path, const SolverParams *base, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char dir[PATH_MAX], shipped[2 * PATH_MAX];
    /* a name: the shipped lessons (next to the program, or installed) */
    if (!f && errno == ENOENT && !strchr(path, '/') && inputs_data_dir(NULL, "lessons", path, dir, sizeof dir) == 0) {
        snprintf(shipped, sizeof shipped, "%s/%s", dir, path);
        if ((f = fopen(shipped, "rb"))) path = shipped;
    }
    if (!f) {
        snprintf(err, errlen, "lesson: %s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc((size_t)LESSON_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, (size_t)LESSON_FILE_MAX + 1, f) : 0;
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad || n > (size_t)LESSON_FILE_MAX) {
        snprintf(err, errlen, "lesson: %s: %s", path, !buf ? "out of memory" : bad ? "cannot read it" : "larger than 1 MiB");
        free(buf);
        return NULL;
    }
    Lesson *l = lesson_parse(buf, n, path, base, err, errlen);
    free(buf);
    return l;
}

void lesson_free(Lesson *l)
{
    if (!l) return;
    free(l->step);
    free(l);
}

void lesson_params(const LessonStep *s, SolverParams *p)
{
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        if (s->has[k]) method_param_set(p, k, s->value[k]);
}

void lesson_params_at(const Lesson *l, int k, SolverParams *p)
{
    for (int i = 0; i <= k && i < l->n; i++) lesson_params(&l->step[i], p);
}
