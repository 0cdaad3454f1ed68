/* mode_compare: --compare and --compare-preset; see mode_compare.h. */
#include "mode_compare.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_spec.h"
#include "export.h"
#include "guard.h"
#include "log.h"
#include "mode_window.h"

/* --compare / --compare-preset (issue 11): two morphs from the same start,
 * A with the run's parameters and B with the settings changed. In a window,
 * side by side; headless, --steps steps (COMPARE_HEADLESS_STEPS without),
 * --metrics gets one CSV with both runs' columns (compare.h) and --frames
 * (or ./smokemorph-out/ with neither) both densities side by side, A left,
 * every --every steps: DIR/compare_00001.png, ... */
#define COMPARE_HEADLESS_STEPS 600L
/* The headless compare: --steps steps (COMPARE_HEADLESS_STEPS without), both
 * runs' metrics in one CSV, both densities side by side every --every
 * steps. The exit status. */
static int compare_headless(const Config *c, Compare *cmp, float density_scale)
{
    char err[1024];
    int rc = 1;
    long steps = c->steps > 0 ? c->steps : COMPARE_HEADLESS_STEPS;
    const char *dir = c->frames_dir;
    if (!dir && !c->metrics_path) dir = CONFIG_DEFAULT_OUT_DIR;
    int gw = c->grid_w, gh = c->grid_h, gap = gw / 32 > 2 ? gw / 32 : 2, ow = 2 * gw + gap;
    Metrics *mf = NULL;
    char line[COMPARE_TEXT_MAX];
    Image *im = NULL;
    float *rho = malloc((size_t)ow * gh * sizeof *rho);
    if (!rho || !(im = image_create(ow, gh, 1))) {
        log_error("compare", "out of memory");
        goto done;
    }
    if (c->metrics_path) { /* a temporary file, renamed into place when the run is done */
        compare_header_text(cmp, line, sizeof line);
        if (!(mf = metrics_open_header(c->metrics_path, line, err, sizeof err))) {
            log_error("compare", "%s", err);
            goto done;
        }
    }
    if (dir && guard_mkdirs(dir) < 0) {
        log_error("compare", "cannot make %s: %s", dir, strerror(errno));
        goto done;
    }
    float sc = density_scale > 0.0f ? density_scale : 1.0f;
    for (long k = 0, frame = 1; k <= steps; k++) {
        if (k > 0 && compare_step(cmp) < 0) {
            log_error("compare", "a step failed");
            goto done;
        }
        if (k % c->every != 0 && k != steps) continue;
        if (mf && (compare_row_text(cmp, line, sizeof line) < 0 || metrics_line(mf, line) < 0)) {
            log_error("compare", "%s", metrics_error(mf)[0] ? metrics_error(mf) : "cannot read the metrics back");
            goto done;
        }
        if (!dir) continue;
        if (compare_side_by_side(cmp, gap, 0.25f / sc, rho) < 0) goto done;
        for (size_t q = 0; q < (size_t)ow * gh; q++) {
            float v = rho[q] * sc;
            im->px[q] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/compare_%05ld.png", dir, frame++);
        if (image_save_png(path, im, 8, err, sizeof err) < 0) {
            log_error("compare", "%s", err);
            goto done;
        }
    }
    CompareMetrics mt[2];
    if (compare_metrics(cmp, mt) == 0)
        log_info("compare", "step %ld: error %.4f (%s), %.4f (%s)", steps, mt[0].error, compare_label(cmp, 0),
                 mt[1].error, compare_label(cmp, 1));
    rc = 0;
done:
    /* a failed run keeps its complete rows, as a plain run's metrics do */
    if (mf && metrics_close(mf, rc == 0 || metrics_rows(mf) > 0, err, sizeof err) < 0) {
        log_error("compare", "%s", err);
        rc = 1;
    }
    image_free(im);
    free(rho);
    return rc;
}

int mode_compare_run(const Config *c, const Image *start, const Image *target, MorphBackend backend,
                       GlCtx *ctx, bool window, const char *shader_dir, float density_scale)
{
    char err[1024];
    CompareSpec cs;
    if ((c->compare ? compare_parse(c->compare, &c->params, &cs, err, sizeof err)
                    : compare_preset(c->compare_preset, &c->params, &cs, err, sizeof err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    Compare *cmp = compare_create(c->grid_w, c->grid_h, &cs, &c->solver, start->px, target->px, c->mass_match,
                                  backend, shader_dir, err, sizeof err);
    if (!cmp) {
        log_error(ctx ? "solver" : "refsolver", "%s", err);
        return 1;
    }
    log_info("compare", "%s | %s (%s backend)", compare_label(cmp, 0), compare_label(cmp, 1),
             morph_backend_name(backend));
    int rc = window ? mode_window_run(ctx, c, compare_morph(cmp, 0), shader_dir, NULL, 0.0f, cmp)
                    : compare_headless(c, cmp, density_scale);
    compare_free(cmp);
    return rc;
}

