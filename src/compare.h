/* compare: two settings side by side from the same start (issue 11, point
 * 5), GL-free. A teacher types what differs (--compare 'gather=0') or picks
 * a preset (--compare-preset gather|jacobi|force); a Compare owns the two
 * morphs, made from the same start and target, steps them together and
 * reports both metrics. The window draws A left and B right
 * (compare_split); headless, both metrics go to one CSV and the frames side
 * by side.
 *
 *   CompareSpec cs;
 *   if (compare_preset("gather", &params, &cs, err, n) < 0) ...   // or compare_parse
 *   Compare *c = compare_create(w, h, &cs, &opts, start, target, true, MORPH_CPU, NULL, err, n);
 *   for (...) compare_step(c);
 *   CompareMetrics mt[2];  compare_metrics(c, mt);
 *   compare_free(c);
 */
#ifndef SMOKEMORPH_COMPARE_H
#define SMOKEMORPH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare_spec.h"
#include "method.h"
#include "morph.h"

/* The window's split: the w x h window into two halves side by side, each
 * with the grid's aspect (gw x gh) letterboxed below a strip of label_h
 * pixels for its label. Rectangles are x, y, w, h in GL's window
 * coordinates (y up); field[s] is side s's field, label[s] its label's
 * strip (where the view writes compare_label once it can draw text). */
typedef struct {
    int field[2][4];
    int label[2][4];
} CompareSplit;
#define COMPARE_LABEL_H 28
#define COMPARE_GAP 6
void compare_split(int w, int h, int gw, int gh, int label_h, CompareSplit *out);

typedef struct Compare Compare;

/* Two morphs from the same images on the same backend: A with spec->p[0],
 * B with spec->p[1], both run as opts says (the run's SolverOptions:
 * --compute-tiles, --mg-bottom, ...; NULL: the defaults), as
 * morph_create_opts. NULL with err on failure. */
Compare *compare_create(int w, int h, const CompareSpec *spec, const SolverOptions *opts, const float *start,
                        const float *target, bool mass_match, MorphBackend backend, const char *shader_dir,
                        char *err, size_t errlen);
void compare_free(Compare *c);
/* One step of each; 0 or -1. */
int compare_step(Compare *c);
/* Both back to the start; 0 or -1. */
int compare_reset(Compare *c);
Morph *compare_morph(Compare *c, int side);          /* 0: A, 1: B */
const char *compare_label(const Compare *c, int side);
long compare_step_count(const Compare *c);

typedef struct {
    double mass, error, max_div;
} CompareMetrics;
/* Both morphs' metrics (morph_metrics); 0 or -1. */
int compare_metrics(Compare *c, CompareMetrics out[2]);

/* The headless record's text (export.h's metrics_open_header and
 * metrics_line write it): a header naming both settings, then a row a call:
 *   step,time,error_a,error_b,mass_a,mass_b,max_div_a,max_div_b
 * Each ends in a newline; n of COMPARE_TEXT_MAX holds any. */
#define COMPARE_TEXT_MAX (2 * COMPARE_LABEL_MAX + 128)
void compare_header_text(const Compare *c, char *buf, size_t n);
int compare_row_text(Compare *c, char *buf, size_t n);
/* Both densities side by side into out (2W + gap x H floats, gap cells of
 * `gap` between them, row 0 at the top). 0 or -1. */
int compare_side_by_side(Compare *c, int gap, float gap_value, float *out);

#endif
