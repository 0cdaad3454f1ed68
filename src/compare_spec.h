/* compare_spec: the settings of a compare (compare.h), GL-free and free of
 * the morph, so that config checks --compare and --compare-preset with the
 * run's parameters (and the fuzzed config reader links without a backend).
 *
 *   CompareSpec cs;
 *   if (compare_parse("gather=0", &params, &cs, err, n) < 0) ...   // B = params + gather=0
 */
#ifndef SMOKEMORPH_COMPARE_SPEC_H
#define SMOKEMORPH_COMPARE_SPEC_H

#include <stddef.h>

#include "method.h"

#define COMPARE_LABEL_MAX 96

/* The two settings and what to call them. */
typedef struct {
    SolverParams p[2];                /* A, B */
    char label[2][COMPARE_LABEL_MAX];
} CompareSpec;

/* The presets, "gather, jacobi, force", for --help and messages. */
extern const char compare_preset_list[];

/* A preset on top of base (the run's parameters):
 *   gather  A gathering on (and the drift),   B gathering off
 *   jacobi  A multigrid (base's V-cycles, 3 if it has none, and its Jacobi
 *           iterations), B Jacobi only: 0 V-cycles, 40 iterations
 *   force   A the balance force,  B Fattal's force alone
 * 0, or -1 with err naming the presets. */
int compare_preset(const char *name, const SolverParams *base, CompareSpec *out, char *err, size_t errlen);

/* A is base; B is base with the settings in spec: NAME=VALUE, separated by
 * commas or spaces, NAME a parameter's name or its option's (method.h's
 * method_param_info: dt, vf, vd, vg, sigma, jacobi, vcycles, gather, force,
 * drift, ...), VALUE a number, on/off/true/false/yes/no for gather, and
 * balance/fattal for force. The labels: "A: as given" and "B: " + spec.
 * 0, or -1 with one line in err (the setting, and why). */
int compare_parse(const char *spec, const SolverParams *base, CompareSpec *out, char *err, size_t errlen);

#endif
