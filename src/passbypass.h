/* passbypass: the classroom's pass-by-pass mode (issue 11, point 2), GL-free:
 * what the window shows after each pass of a step run with morph_pass_next.
 * The pressure solve's residual after each V-cycle and Jacobi iteration as a
 * series for a log plot (and the deficit potential's, with the balance
 * force), the line that names the pass, and the field it wrote mapped to
 * 0..1 for drawing. The view only draws what this says.
 *
 *   PassbypassPlot plot = {0};
 *   MorphPassInfo pi;
 *   morph_pass_next(m, &pi);
 *   passbypass_record(&plot, m, &pi);          // a residual, in a solve
 *   passbypass_label(&pi, line, sizeof line);  // "step 3  pass 9/31  pressure V-cycle 2/3 -> pressure"
 *   passbypass_points(&plot.pressure, rect, xy, &lo, &hi); // the log plot's polyline
 */
#ifndef SMOKEMORPH_PASSBYPASS_H
#define SMOKEMORPH_PASSBYPASS_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"
#include "morph.h"

/* The points of one solve in one step: point 0 is the residual of the warm
 * start (after the divergence pass, or the potential's right-hand side),
 * then one a V-cycle, then one a Jacobi iteration. */
#define PASSBYPASS_SERIES_MAX 1024
typedef struct {
    int n;
    long step;                              /* the step the points belong to */
    double max[PASSBYPASS_SERIES_MAX];      /* max |∇²x − b| after each pass */
    double rms[PASSBYPASS_SERIES_MAX];      /* and its RMS */
    MethodPass pass[PASSBYPASS_SERIES_MAX]; /* the pass that left it */
} PassbypassSeries;

typedef struct {
    PassbypassSeries pressure, potential;
    /* issue 24: the gathering's implicit solve has no residual read back;
     * its series is how much each Jacobi iteration changed e (max and RMS
     * of |e_k − e_{k−1}|), which falls as the solve converges */
    PassbypassSeries gather;
    float *gather_e;   /* the last iteration's e (n cells; passbypass_free) */
    size_t gather_n;
    /* the solve whose series the plot shows: the one the last pass
     * recorded belongs to (PASSBYPASS_*) */
    int shown;
} PassbypassPlot;
enum { PASSBYPASS_PRESSURE, PASSBYPASS_POTENTIAL, PASSBYPASS_GATHER };
void passbypass_free(PassbypassPlot *plot);
/* After a gathering pass whose output e (n cells, morph_pass_read's a) was
 * read: the begin pass starts the gathering's series (e kept), each Jacobi
 * iteration adds its change. 1 when a point was added, 0 when none, -1
 * out of memory. */
int passbypass_record_gather(PassbypassPlot *plot, const MorphPassInfo *pi, const float *e, size_t n);
/* The series the plot shows and its caption: "pressure solve: residual",
 * "potential solve: residual" (the balance force's φ), "gathering solve:
 * change of e". */
const PassbypassSeries *passbypass_shown(const PassbypassPlot *plot);
const char *passbypass_caption(const PassbypassPlot *plot);

/* After a pass: its solve's residual (morph_pass_residual) appended to that
 * solve's series, which starts again at the solve's first pass. Passes of
 * neither solve add nothing. 1 when a point was added, 0 when none, -1 on
 * a read-back error. */
int passbypass_record(PassbypassPlot *plot, Morph *m, const MorphPassInfo *pi);
/* Append one point (what passbypass_record does after its read-backs). */
void passbypass_series_push(PassbypassSeries *s, MethodPass pass, double max, double rms);

/* The series's points (max, or rms with use_rms) on a log scale in the
 * rectangle (x, y, w, h), y up: point k at x + w·k/(n−1), from the floor of
 * the smallest value's decade (*lo, a power of 10) at y to the ceiling of
 * the largest's (*hi) at y + h. Values ≤ 0 sit on the floor. Writes 2n
 * floats into xy; returns n. */
int passbypass_points(const PassbypassSeries *s, bool use_rms, float x, float y, float w, float h,
                      float *xy, double *lo, double *hi);

/* "step 3  pass 9/31  pressure V-cycle 2/3 -> pressure" */
void passbypass_label(const MorphPassInfo *pi, char *buf, size_t n);
/* What the pass does, one sentence for the classroom (issue 24), with the
 * numbers of this step's plan where they matter: the eased vf and the
 * vorticity confinement in the force pass, the timed arrival's share of
 * the drift and the gathering. */
void passbypass_explain(const MorphPassInfo *pi, char *buf, size_t n);
/* An output as the window's colour map shows it: a vector's length, else
 * the values as they are (out: n floats); true when signed (a diverging
 * map around 0). */
bool passbypass_values(MethodOut f, const float *a, const float *b, size_t n, float *out);

/* An output (a, and b for a vector) of n cells mapped to 0..1 for drawing:
 * a vector's length over its max, a signed field 0.5 + x / (2·max|x|) (0
 * at 0.5), else x over its max. *lo and *hi get the range the colours span
 * (for a colour bar). */
void passbypass_normalize(MethodOut f, const float *a, const float *b, size_t n, float *out, double *lo,
                          double *hi);

#endif
