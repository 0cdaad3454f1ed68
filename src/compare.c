/* compare: two settings side by side; see compare.h. GL-free. */
#include "compare.h"

#include <stdlib.h>
#include <string.h>

struct Compare {
    Morph *m[2];
    char label[2][COMPARE_LABEL_MAX];
};

void compare_split(int w, int h, int gw, int gh, int label_h, CompareSplit *o)
{
    int half = (w - COMPARE_GAP) / 2, fh = h - label_h;
    if (half < 1) half = 1;
    if (fh < 1) fh = 1;
    /* the largest gw:gh rectangle in half x fh, centred, the label strip on top of it */
    double s = (double)half / gw < (double)fh / gh ? (double)half / gw : (double)fh / gh;
    int rw = (int)(gw * s), rh = (int)(gh * s);
    int y = (fh - rh) / 2;
    for (int side = 0; side < 2; side++) {
        int x0 = side == 0 ? 0 : w - half;
        int x = x0 + (half - rw) / 2;
        int *f = o->field[side], *l = o->label[side];
        f[0] = x, f[1] = y, f[2] = rw, f[3] = rh;
        l[0] = x, l[1] = y + rh, l[2] = rw, l[3] = label_h;
    }
}

Compare *compare_create(int w, int h, const CompareSpec *spec, const SolverOptions *opts, const float *start,
                        const float *target, bool mass_match, MorphBackend backend, const char *shader_dir,
                        char *err, size_t errlen)
{
    Compare *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "compare: out of memory");
        return NULL;
    }
    for (int s = 0; s < 2; s++) {
        c->m[s] = morph_create_opts(w, h, &spec->p[s], opts, start, target, mass_match, backend, shader_dir, err,
                                    errlen);
        if (!c->m[s]) {
            compare_free(c);
            return NULL;
        }
        snprintf(c->label[s], COMPARE_LABEL_MAX, "%s", spec->label[s]);
    }
    return c;
}

void compare_free(Compare *c)
{
    if (!c) return;
    morph_free(c->m[0]);
    morph_free(c->m[1]);
    free(c);
}

int compare_step(Compare *c)
{
    return morph_step(c->m[0]) < 0 || morph_step(c->m[1]) < 0 ? -1 : 0;
}

int compare_reset(Compare *c)
{
    return morph_reset(c->m[0]) < 0 || morph_reset(c->m[1]) < 0 ? -1 : 0;
}

Morph *compare_morph(Compare *c, int side) { return side == 0 || side == 1 ? c->m[side] : NULL; }
const char *compare_label(const Compare *c, int side) { return side == 0 || side == 1 ? c->label[side] : "?"; }
long compare_step_count(const Compare *c) { return morph_step_count(c->m[0]); }

int compare_metrics(Compare *c, CompareMetrics out[2])
{
    for (int s = 0; s < 2; s++)
        if (morph_metrics(c->m[s], &out[s].mass, &out[s].error, &out[s].max_div) < 0) return -1;
    return 0;
}

void compare_header_text(const Compare *c, char *buf, size_t n)
{
    snprintf(buf, n, "# %s\n# %s\nstep,time,error_a,error_b,mass_a,mass_b,max_div_a,max_div_b\n", c->label[0],
             c->label[1]);
}

int compare_row_text(Compare *c, char *buf, size_t n)
{
    CompareMetrics mt[2];
    if (compare_metrics(c, mt) < 0) return -1;
    snprintf(buf, n, "%ld,%.6g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", compare_step_count(c), morph_time(c->m[0]),
             mt[0].error, mt[1].error, mt[0].mass, mt[1].mass, mt[0].max_div, mt[1].max_div);
    return 0;
}

int compare_side_by_side(Compare *c, int gap, float gap_value, float *out)
{
    int w = morph_width(c->m[0]), h = morph_height(c->m[0]), ow = 2 * w + gap;
    float *rho = malloc((size_t)w * h * sizeof *rho);
    if (!rho) return -1;
    for (int s = 0; s < 2; s++) {
        if (morph_read_density(c->m[s], rho) < 0) {
            free(rho);
            return -1;
        }
        for (int j = 0; j < h; j++)
            memcpy(out + (size_t)j * ow + (size_t)s * (w + gap), rho + (size_t)j * w, (size_t)w * sizeof *rho);
    }
    for (int j = 0; j < h; j++)
        for (int i = 0; i < gap; i++) out[(size_t)j * ow + w + i] = gap_value;
    free(rho);
    return 0;
}
