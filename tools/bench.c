/* bench: speed of the morph step on each backend. For each grid size and
 * backend: the passes per step (draws or dispatches), steps/s over a timed
 * run (wall clock, glFinish at the end), then the GPU time of each pass group
 * from timer queries. Prints a Markdown table; both GPU backends run side by
 * side in one process, so their rows compare on the same machine.
 *
 *   build/tools/bench [--sizes 128,256,512,1024,2048] [--backends fragment,compute,cpu]
 *                     [--jacobi N] [--vcycles N] [--seconds S]
 *
 * Speed belongs here, never in a test's pass/fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <GL/glew.h>

#include "export.h"
#include "field.h"
#include "glctx.h"
#include "morph.h"
#include "shader.h"
#include "solver.h"

static void usage(void)
{
    printf("usage: bench [--sizes 128,256,512,1024,2048] [--backends fragment,compute]\n"
           "             [--seconds S (default 3)] [--jacobi N] [--vcycles N] [--shader-dir DIR]\n"
           "Runs a morph (a disc into a box) with the default parameters at each size on\n"
           "each backend (fragment, compute, cpu; default fragment,compute) and prints\n"
           "steps/s and per-pass GPU times (ms per step) as a Markdown table.\n"
           "--jacobi and --vcycles override the pressure solve's defaults (10 and 3).\n");
}

static void shapes(int w, int h, float *start, float *target)
{
    float m = (float)(w < h ? w : h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float x = ((float)i + 0.5f) / m, y = ((float)j + 0.5f) / m;
            float d = sqrtf((x - 0.4f) * (x - 0.4f) + (y - 0.7f) * (y - 0.7f));
            start[(size_t)j * w + i] = fminf(1.0f, fmaxf(0.0f, (0.2f - d) * 40.0f));
            target[(size_t)j * w + i] = (fabsf(x - 0.6f) < 0.2f && fabsf(y - 0.4f) < 0.25f) ? 1.0f : 0.0f;
        }
}

/* The CPU reference on the same morph: steps/s only. */
static void bench_cpu(int n, const SolverParams *p, const float *a, const float *b, double seconds)
{
    char err[256];
    Morph *r = morph_create(n, n, p, a, b, true, MORPH_CPU, NULL, err, sizeof err);
    if (!r) { printf("| %d² | cpu | %s |\n", n, err); return; }
    long steps = 0;
    double t0 = export_now(), t1 = t0;
    while (t1 - t0 < seconds) {
        morph_step(r);
        steps++;
        t1 = export_now();
    }
    double sps = (double)steps / (t1 - t0);
    printf("| %d² | cpu | - | %.1f | %.2f | - | - | - | - | - | - | - | - |\n", n, sps, 1000.0 / sps);
    fflush(stdout);
    morph_free(r);
}

int main(int argc, char **argv)
{
    const char *sizes = "128,256,512,1024,2048", *sdir = NULL, *backends = "fragment,compute";
    double seconds = 3.0;
    SolverParams defaults;
    method_params_default(&defaults);
    int jacobi = defaults.jacobi, vcycles = defaults.vcycles;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--sizes") && k + 1 < argc) sizes = argv[++k];
        else if (!strcmp(argv[k], "--seconds") && k + 1 < argc) seconds = atof(argv[++k]);
        else if (!strcmp(argv[k], "--jacobi") && k + 1 < argc) jacobi = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--vcycles") && k + 1 < argc) vcycles = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--shader-dir") && k + 1 < argc) sdir = argv[++k];
        else if (!strcmp(argv[k], "--backends") && k + 1 < argc) backends = argv[++k];
        else { usage(); return strcmp(argv[k], "--help") ? 2 : 0; }
    }
    if (!(seconds > 0.0) || jacobi < 0 || vcycles < 0 || jacobi + vcycles < 1) { usage(); return 2; }
    char err[1024], dir[4096];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) { fprintf(stderr, "%s\n", err); return 1; }
    if (shader_find_dir(sdir, argv[0], dir, sizeof dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    printf("renderer: %s | %s | %s\n", glctx_renderer(ctx), glctx_version(ctx), date);
    printf("%d V-cycles + %d Jacobi iterations, default parameters otherwise\n\n", vcycles, jacobi);
    printf("| grid | backend | passes/step | steps/s | ms/step | blur | force | adv u | div | pressure | grad | adv rho | gather |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n < 8 || n > 16384) continue;
        SolverParams p = defaults;
        p.jacobi = jacobi;
        p.vcycles = vcycles;
        float *a = malloc((size_t)n * n * 4), *b = malloc((size_t)n * n * 4);
        shapes(n, n, a, b);
        char *bl = strdup(backends), *save = NULL;
        for (char *bk = strtok_r(bl, ",", &save); bk; bk = strtok_r(NULL, ",", &save)) {
            if (!strcmp(bk, "cpu")) {
                bench_cpu(n, &p, a, b, seconds);
                continue;
            }
            SolverKind kind = !strcmp(bk, "compute") ? SOLVER_COMPUTE : SOLVER_FRAGMENT;
            if (kind == SOLVER_FRAGMENT && strcmp(bk, "fragment")) {
                printf("| %d² | %s | unknown backend (fragment, compute or cpu) |\n", n, bk);
                continue;
            }
            Solver *s = solver_create(n, n, &p, kind, dir, err, sizeof err);
            if (!s) { printf("| %d² | %s | %s |\n", n, bk, err); continue; }
            solver_set_density(s, a);
            solver_set_target(s, b, true);
            unsigned long d0 = pass_draw_count();
            for (int k = 0; k < 5; k++) solver_step(s);
            int passes = (int)((pass_draw_count() - d0) / 5);
            glFinish();
            /* timed run: as many steps as fit in `seconds`, checked in batches */
            long steps = 0;
            double t0 = export_now(), t1 = t0;
            int batch = 1;
            while (t1 - t0 < seconds) {
                for (int k = 0; k < batch; k++) solver_step(s);
                glFinish();
                steps += batch;
                t1 = export_now();
                if (batch < 64) batch *= 2;
            }
            double sps = (double)steps / (t1 - t0);
            /* per-pass GPU times */
            solver_enable_timing(s, true);
            int tsteps = steps < 50 ? (int)steps : 50;
            for (int k = 0; k < tsteps; k++) solver_step(s);
            SolverTimes t;
            solver_times(s, &t);
            double d = (double)t.steps;
            printf("| %d² | %s | %d | %.1f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", n,
                   bk, passes, sps, 1000.0 / sps, t.blur / d, t.force / d, t.advect_vel / d,
                   t.divergence / d, t.jacobi / d, t.subtract / d, t.advect_density / d, t.gather / d);
            fflush(stdout);
            solver_free(s);
        }
        free(bl);
        free(a);
        free(b);
    }
    free(list);
    glctx_destroy(ctx);
    return 0;
}
