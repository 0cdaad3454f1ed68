/* sidecar: a run's record in JSON; see sidecar.h. */
#define _XOPEN_SOURCE 700
#include "sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct Sidecar {
    char *path;
    json_t *root, *frames, *checkpoints; /* frames, checkpoints: borrowed from root */
};

/* A float as the shortest decimal that reads back as the same float (0.01,
 * not 0.0099999997764825821). */
static json_t *json_float(float f)
{
    char buf[32];
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
        if ((float)strtod(buf, NULL) == f) break;
    }
    return json_real(strtod(buf, NULL));
}

/* NaN and infinities are not JSON: null. */
static json_t *json_num(double d) { return isfinite(d) ? json_real(d) : json_null(); }

static json_t *params_object(const SolverParams *p)
{
    json_t *o = json_object();
    for (int k = 0; o && k < METHOD_PARAM_COUNT; k++) {
        const MethodParamInfo *in = &method_param_info[k];
        double v = method_param_get(p, k);
        json_t *j;
        switch (in->kind) {
        case 'f': j = json_float((float)v); break;
        case 'b': j = json_boolean(v != 0.0); break;
        case 'e': j = json_string(v == SOLVER_FORCE_FATTAL ? "fattal" : "balance"); break;
        default: j = json_integer((json_int_t)v); break;
        }
        json_object_set_new(o, in->name, j);
    }
    return o;
}

Sidecar *sidecar_create(const char *path, const SidecarRun *r)
{
    Sidecar *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) goto fail;
    json_t *resumed = r->resumed_from ? json_pack("{s:s, s:I}", "file", r->resumed_from, "step",
                                                  (json_int_t)r->resumed_step)
                                      : json_null();
    s->root = json_pack("{s:s, s:i, s:s, s:i, s:s, s:s, s:{s:i, s:i}, s:I, s:i, s:I, s:b, s:o, "
                        "s:o, s:o, s:[], s:[]}",
                        "smokemorph", r->version, "format", 1, "status", "running", "exit_code", 0,
                        "backend", r->backend, "renderer", r->renderer ? r->renderer : "", "grid",
                        "w", r->w, "h", r->h, "steps", (json_int_t)r->steps, "every", r->every,
                        "last_step", (json_int_t)-1, "mass_match", r->mass_match, "resumed_from",
                        resumed, "parameters", params_object(r->params), "frames_dir",
                        r->frames_dir ? json_string(r->frames_dir) : json_null(), "checkpoints",
                        "frames");
    if (!s->root) goto fail;
    if (r->nfields > 0) {
        json_t *fields = json_array();
        if (!fields || json_object_set_new(s->root, "fields", fields) < 0) goto fail;
        for (int i = 0; i < r->nfields; i++) {
            char hex[16];
            int c[3];
            for (int k = 0; k < 3; k++) {
                float v = r->field_rgb[i][k];
                c[k] = v <= 0.0f ? 0 : v >= 1.0f ? 255 : (int)lroundf(v * 255.0f);
            }
            snprintf(hex, sizeof hex, "#%02x%02x%02x", c[0], c[1], c[2]);
            if (json_array_append_new(fields, json_pack("{s:s, s:s}", "name", r->field_names[i],
                                                        "color", hex)) < 0)
                goto fail;
        }
    }
    s->frames = json_object_get(s->root, "frames");
    s->checkpoints = json_object_get(s->root, "checkpoints");
    return s;
fail:
    sidecar_free(s);
    return NULL;
}

int sidecar_row(Sidecar *s, long step, double time, double error, double mass, double max_div,
                int frame, const char *file)
{
    json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:o}", "step", (json_int_t)step, "time",
                          json_num(time), "error", json_num(error), "mass", json_num(mass),
                          "max_div", json_num(max_div));
    if (!o) return -1;
    if (frame > 0) {
        json_object_set_new(o, "frame", json_integer(frame));
        if (file) json_object_set_new(o, "file", json_string(file));
    }
    return json_array_append_new(s->frames, o);
}

int sidecar_row_fields(Sidecar *s, const double *mass, int n)
{
    size_t rows = json_array_size(s->frames);
    json_t *row = rows ? json_array_get(s->frames, rows - 1) : NULL, *a = json_array();
    if (!row || !a) {
        json_decref(a);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (json_array_append_new(a, json_num(mass[i])) < 0) {
            json_decref(a);
            return -1;
        }
    return json_object_set_new(row, "field_mass", a);
}

int sidecar_checkpoint(Sidecar *s, long step, const char *path)
{
    json_t *o = json_pack("{s:I, s:s}", "step", (json_int_t)step, "file", path);
    return o ? json_array_append_new(s->checkpoints, o) : -1;
}

const char *sidecar_path(const Sidecar *s) { return s->path; }

int sidecar_probe(const char *path, char *err, size_t errlen)
{
    size_t tlen = strlen(path) + 64;
    char *tmp = malloc(tlen);
    if (!tmp) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tlen, "%s.tmp.%ld.1", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    if (fd < 0) snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
    return fd < 0 ? -1 : 0;
}

int sidecar_write(Sidecar *s, const char *status, int exit_code, long last_step, char *err,
                  size_t errlen)
{
    json_object_set_new(s->root, "status", json_string(status));
    json_object_set_new(s->root, "exit_code", json_integer(exit_code));
    json_object_set_new(s->root, "last_step", json_integer((json_int_t)last_step));
    char *text = json_dumps(s->root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (!text) {
        snprintf(err, errlen, "cannot write %s: out of memory", s->path);
        return -1;
    }
    size_t tlen = strlen(s->path) + 64, n = strlen(text);
    char *tmp = malloc(tlen);
    int fd = -1, e = ENOMEM;
    if (tmp) {
        /* "NAME.tmp.PID.N", as the frames' (export_clean removes a killed run's) */
        snprintf(tmp, tlen, "%s.tmp.%ld.0", s->path, (long)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
        e = errno;
    }
    int rc = -1;
    if (fd >= 0) {
        const char *p = text;
        size_t left = n;
        rc = 0;
        while (left > 0 && rc == 0) {
            ssize_t k = write(fd, p, left);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) rc = -1;
            else {
                p += k;
                left -= (size_t)k;
            }
        }
        if (rc == 0 && write(fd, "\n", 1) != 1) rc = -1;
        if (rc == 0) rc = fsync(fd);
        e = errno;
        if (close(fd) < 0 && rc == 0) {
            rc = -1;
            e = errno;
        }
        if (rc == 0 && rename(tmp, s->path) < 0) {
            rc = -1;
            e = errno;
        }
        if (rc < 0) unlink(tmp);
    }
    if (rc < 0)
        snprintf(err, errlen, "cannot write %s: %s", s->path, e == EFBIG ? "file too large" : strerror(e));
    free(tmp);
    free(text);
    return rc;
}

void sidecar_free(Sidecar *s)
{
    if (!s) return;
    json_decref(s->root);
    free(s->path);
    free(s);
}

/* A smokemorph record at path, parsed (NULL: none, or not ours). Only a
 * regular file of at most 64 MiB, opened without blocking. */
static json_t *load_record(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return NULL;
    struct stat st;
    json_t *root = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (64L << 20)) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
            root = json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
    }
    close(fd);
    if (root && (!json_is_object(root) || !json_is_string(json_object_get(root, "smokemorph")))) {
        json_decref(root);
        root = NULL;
    }
    return root;
}

bool sidecar_is_ours(const char *path)
{
    json_t *root = load_record(path);
    json_decref(root);
    return root != NULL;
}

char **sidecar_listed_frames(const char *dir, int *n)
{
    *n = 0;
    int cap = 0;
    char **names = NULL;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        /* run.json, or a chunk's run_A-B.json */
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "run", 3) != 0 || len < 8 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        size_t plen = strlen(dir) + len + 2;
        char *path = malloc(plen);
        if (!path) break;
        snprintf(path, plen, "%s/%s", dir, e->d_name);
        json_t *root = load_record(path);
        free(path);
        json_t *frames = root ? json_object_get(root, "frames") : NULL;
        size_t i;
        json_t *row;
        json_array_foreach(frames, i, row) {
            const char *file = json_string_value(json_object_get(row, "file"));
            if (!file || strchr(file, '/')) continue;
            if (*n == cap) {
                int nc = cap ? 2 * cap : 64;
                char **nn = realloc(names, (size_t)nc * sizeof *nn);
                if (!nn) break;
                names = nn;
                cap = nc;
            }
            if (!(names[*n] = strdup(file))) break;
            (*n)++;
        }
        json_decref(root);
    }
    closedir(d);
    return names;
}

void sidecar_names_free(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}
