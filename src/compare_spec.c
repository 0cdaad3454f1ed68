/* compare_spec: the settings of a compare; see compare_spec.h. */
#include "compare_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

const char compare_preset_list[] = "gather, jacobi, force";


static void spec_base(const SolverParams *base, CompareSpec *out)
{
    memset(out, 0, sizeof *out);
    out->p[0] = out->p[1] = *base;
    method_params_resolve(&out->p[0]);
    method_params_resolve(&out->p[1]);
}

int compare_preset(const char *name, const SolverParams *base, CompareSpec *out, char *err, size_t errlen)
{
    spec_base(base, out);
    SolverParams *a = &out->p[0], *b = &out->p[1];
    if (strcmp(name, "gather") == 0) {
        a->gather = true;
        b->gather = false;
        snprintf(out->label[0], COMPARE_LABEL_MAX, "A: gathering on");
        snprintf(out->label[1], COMPARE_LABEL_MAX, "B: gathering off");
    } else if (strcmp(name, "jacobi") == 0) {
        if (a->vcycles == 0) a->vcycles = 3;
        b->vcycles = 0;
        b->jacobi = 40;
        snprintf(out->label[0], COMPARE_LABEL_MAX, "A: multigrid, %d V-cycles + %d Jacobi", a->vcycles,
                 a->jacobi);
        snprintf(out->label[1], COMPARE_LABEL_MAX, "B: Jacobi only, %d iterations", b->jacobi);
    } else if (strcmp(name, "force") == 0) {
        a->force = SOLVER_FORCE_BALANCE;
        b->force = SOLVER_FORCE_FATTAL;
        snprintf(out->label[0], COMPARE_LABEL_MAX, "A: balance force");
        snprintf(out->label[1], COMPARE_LABEL_MAX, "B: Fattal's force");
    } else {
        snprintf(err, errlen, "compare: unknown preset '%s' (the presets: %s)", name, compare_preset_list);
        return -1;
    }
    for (int s = 0; s < 2; s++) {
        const char *bad = method_params_check(&out->p[s]);
        if (bad) {
            snprintf(err, errlen, "compare: preset %s, side %c: %s", name, 'A' + s, bad);
            return -1;
        }
    }
    return 0;
}

int compare_parse(const char *spec, const SolverParams *base, CompareSpec *out, char *err, size_t errlen)
{
    spec_base(base, out);
    char buf[512];
    if (!spec || strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "compare: the settings are missing or too long (at most %zu characters)",
                 sizeof buf - 1);
        return -1;
    }
    strcpy(buf, spec);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ", \t;", &save); tok; tok = strtok_r(NULL, ", \t;", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            snprintf(err, errlen, "compare: '%s' is not NAME=VALUE (e.g. --compare 'gather=0')", tok);
            return -1;
        }
        *eq = '\0';
        int k = method_param_index(tok);
        if (k < 0) {
            snprintf(err, errlen, "compare: unknown parameter '%s' (e.g. dt, vf, vd, vg, sigma, jacobi, "
                     "vcycles, gather, force, drift)", tok);
            return -1;
        }
        double v;
        char kind = method_param_info[k].kind;
        if (method_param_parse(k, eq + 1, &v) < 0) {
            snprintf(err, errlen, "compare: %s=%s: %s", tok, eq + 1,
                     kind == 'b' ? "give on or off (1 or 0)" : kind == 'e' ? "give balance or fattal"
                     : kind == 'i' ? "give a whole number" : method_param_info[k].autov ? "give a number or auto" : "give a number");
            return -1;
        }
        method_param_set(&out->p[1], k, v);
        out->p[1].set |= METHOD_SET(k);
        n++;
    }
    if (n == 0) {
        snprintf(err, errlen, "compare: no settings given (e.g. --compare 'gather=0')");
        return -1;
    }
    const char *bad = method_params_check(&out->p[1]);
    if (bad) {
        snprintf(err, errlen, "compare: side B (%s): %s", spec, bad);
        return -1;
    }
    snprintf(out->label[0], COMPARE_LABEL_MAX, "A: as given");
    snprintf(out->label[1], COMPARE_LABEL_MAX, "B: %.*s", COMPARE_LABEL_MAX - 4, spec);
    return 0;
}

