/* lesson: a prepared classroom lesson (issue 24, --lesson FILE), GL-free.
 * A lesson is JSON, read with jansson as scene files are (errors at
 * FILE:LINE:COLUMN through scene_json_position): a title and a list of
 * steps, each of which sets what the window shows and does, and says it in
 * a caption; Space in the window moves to the next step.
 *
 *   {"title": "How target-driven smoke works",
 *    "steps": [
 *      {"caption": "The target, blurred: the force climbs its slope.",
 *       "view": "blurred", "restart": true, "run": 0},
 *      {"caption": "Step by step: the pressure solve converging.",
 *       "view": "divergence", "set": {"vcycles": 0, "jacobi": 40},
 *       "run": 20, "pass_by_pass": true, "passes": 12},
 *      {"caption": "Fattal and Lischinski's published force, beside ours.",
 *       "compare": "force=fattal", "run": 300}]}
 *
 *   char err[1024];
 *   Lesson *l = lesson_load("lesson.json", &params, err, sizeof err);
 *   if (!l) fprintf(stderr, "%s\n", err);   // "lesson: a.json:4:15: steps[0].view: unknown view 'x' (...)"
 *   SolverParams p = start;                 // the run's parameters when the lesson began
 *   lesson_params_at(l, k, &p);             // step k's: the sets of steps 0..k over them
 *   lesson_free(l);
 *
 * A step's members (every one optional):
 *   caption       text shown across the bottom of the window
 *   view          a --view name (viewfield.h); default: the view stays
 *   set           parameters by their checkpoint names (method.h's
 *                 method_param_info with an option: "vf", "gather",
 *                 "force": "fattal", "swirl", ...): the step's parameters
 *                 are the run's with the sets of every step up to it, in
 *                 order (Backspace goes back to the step before's), each
 *                 step's checked by method_params_check when it loads
 *   restart       true: back to the start image, velocity zero, step 0
 *   run           steps to run, then pause (0, the default: paused)
 *   until         or: run until this step (from the start), then pause
 *   pass_by_pass  true: after the run, show the next step pass by pass
 *                 ('.' runs the next pass); false: leave it (finish the step)
 *   passes        with pass_by_pass: run this many passes at once (default 1)
 *   to_pass       with pass_by_pass: run passes until this one (a name of
 *                 method_pass_name: "pressure Jacobi", "gather Jacobi",
 *                 "force + damping", ...) has run `passes` times this step,
 *                 or the step ends (the step's passes vary with the flow)
 *   compare       a --compare-preset name ("force": balance | Fattal's) or a
 *                 --compare setting ("force=fattal"): the window splits
 *                 into this run and one with the setting changed, both
 *                 from the start (the same setting as the step before's
 *                 goes on, unless restart); a step without it goes back
 *                 to one run
 *   hud           true or false: show or hide the HUD
 */
#ifndef SMOKEMORPH_LESSON_H
#define SMOKEMORPH_LESSON_H

#include <stdbool.h>
#include <stddef.h>

#include "compare_spec.h"
#include "method.h"

#define LESSON_STEPS_MAX 64
#define LESSON_TEXT_MAX 480 /* a caption's bytes (UTF-8) */
#define LESSON_RUN_MAX 1000000L

typedef struct {
    char caption[LESSON_TEXT_MAX + 1];
    int view;                     /* viewfield.h's ViewKind, -1: unchanged */
    bool has[METHOD_PARAM_COUNT]; /* "set": which parameters */
    double value[METHOD_PARAM_COUNT];
    bool restart;
    long run, until;              /* 0: none */
    int pass_by_pass;             /* -1 unchanged, 0 off, 1 on */
    int passes;                   /* with pass_by_pass (at least 1) */
    int to_pass;                  /* MethodPass: run passes until its passes-th (-1: none) */
    char compare[256];            /* "" none */
    int hud;                      /* -1 unchanged, 0 off, 1 on */
    int line, column;             /* where the step starts in the file */
} LessonStep;

typedef struct Lesson {
    char file[1024];
    char title[LESSON_TEXT_MAX + 1];
    LessonStep *step;
    int n;
} Lesson;

/* The lesson at PATH (a bare name not in the current folder: in the
 * shipped lessons' folder, inputs_data_dir's "lessons"), its parameters
 * checked over base (the run's). NULL
 * with one line in err: "lesson: FILE:LINE:COLUMN: PATH: problem" (or
 * "lesson: FILE: problem" when the file cannot be read). */
Lesson *lesson_load(const char *path, const SolverParams *base, char *err, size_t errlen);
/* The same from LEN bytes of TEXT named NAME. */
Lesson *lesson_parse(const char *text, size_t len, const char *name, const SolverParams *base, char *err,
                     size_t errlen);
void lesson_free(Lesson *l);
/* A step's "compare": a --compare-preset name (gather, jacobi, force), else
 * --compare's NAME=VALUE settings; compare_spec.h's. 0 or -1 with err. */
int lesson_compare_spec(const char *spec, const SolverParams *base, CompareSpec *out, char *err, size_t errlen);
/* The step's "set" over p (unchanged members stay). */
void lesson_params(const LessonStep *s, SolverParams *p);
/* Step k's parameters: p (the run's at the start of the lesson) with the
 * sets of steps 0..k in order; lesson_load checked each step's. */
void lesson_params_at(const Lesson *l, int k, SolverParams *p);

#endif
