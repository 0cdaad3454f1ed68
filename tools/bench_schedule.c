/* bench_schedule: what a schedule's sources and moving targets cost a step
 * (morph.h). For each grid size and backend, ms per step of a morph whose
 * one key is still, then the same key moving and growing over the whole run
 * (its target resampled on the CPU, uploaded and blurred again each step),
 * then still with two sources on (a pass each a step). The differences are
 * the costs. Wall clock over a timed run, one read-back at its end. Then,
 * since whole steps on a shared machine are noisy, the parts alone (the
 * best of 5 runs of 10): the CPU's resampling of a moving key, setting the
 * resampled target (the backend's sums, the upload, the set_target pass
 * and the target's blur), and one source's pass.
 *
 *   build/tools/bench_schedule [--sizes 256,1024] [--backends fragment,compute,cpu] [--steps N]
 *
 * Speed belongs here, never in a test's pass/fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <GL/glew.h>

#include "export.h"
#include "glctx.h"
#include "morph.h"
#include "cpu_solver.h"
#include "shader.h"
#include "gpu_solver.h"

static void shapes(int n, float *start, float *target, float *puff)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            float x = ((float)i + 0.5f) / (float)n, y = ((float)j + 0.5f) / (float)n;
            float d = sqrtf((x - 0.4f) * (x - 0.4f) + (y - 0.7f) * (y - 0.7f));
            float e = sqrtf((x - 0.3f) * (x - 0.3f) + (y - 0.3f) * (y - 0.3f));
            start[(size_t)j * n + i] = fminf(1.0f, fmaxf(0.0f, (0.2f - d) * 40.0f));
            target[(size_t)j * n + i] = (fabsf(x - 0.6f) < 0.2f && fabsf(y - 0.4f) < 0.25f) ? 1.0f : 0.0f;
            puff[(size_t)j * n + i] = fminf(1.0f, fmaxf(0.0f, (0.1f - e) * 40.0f));
        }
}

/* ms per step of `steps` steps (after 3 warm-up steps), or -1 */
static double run(int n, MorphBackend b, const char *dir, int mode, int steps, const float *start,
                  const float *target, const float *puff)
{
    SolverParams p;
    method_params_default(&p);
    char err[1024];
    Morph *m = morph_create(n, n, &p, start, target, true, b, dir, err, sizeof err);
    if (!m) {
        fprintf(stderr, "bench_schedule: %s\n", err);
        return -1.0;
    }
    MorphKey key = {.step = 1000000, .target = target};
    if (mode == 1) {
        key.move_from[0] = 0.1f, key.move_to[0] = -0.1f, key.move_to[1] = 0.1f;
        key.scale_from = 0.8f, key.scale_to = 1.2f;
    }
    MorphSource src[2] = {{.image = puff, .rate = 0.5f, .from = 0, .to = 1000000},
                          {.cx = 0.7f, .cy = 0.7f, .radius = 0.1f, .rate = 0.5f, .from = 0, .to = 1000000}};
    double ms = -1.0;
    if (morph_set_schedule(m, &key, 1, src, mode == 2 ? 2 : 0, err, sizeof err) < 0) {
        fprintf(stderr, "bench_schedule: %s\n", err);
        goto done;
    }
    double mass;
    for (int k = 0; k < 3; k++) morph_step(m);
    morph_metrics(m, &mass, NULL, NULL);
    double t0 = export_now();
    for (int k = 0; k < steps; k++)
        if (morph_step(m) < 0) goto done;
    morph_metrics(m, &mass, NULL, NULL); /* waits for the GPU */
    ms = (export_now() - t0) / steps * 1e3;
done:
    morph_free(m);
    return ms;
}

/* ms of one call of each part, the best of 5 runs of 10 calls */
#define REPS 5
#define CALLS 10
static void parts(int n, MorphBackend b, const char *dir, const float *start, const float *target,
                  const float *puff)
{
    SolverParams p;
    method_params_default(&p);
    char err[1024];
    size_t cells = (size_t)n * n;
    float *img = malloc(cells * sizeof(float));
    Morph *m = morph_create(n, n, &p, start, target, true, MORPH_CPU, dir, err, sizeof err);
    MorphKey key = {.step = 1000, .target = target, .move_to = {0.1f, 0.1f}, .scale_to = 1.2f};
    if (!img || !m || morph_set_schedule(m, &key, 1, NULL, 0, err, sizeof err) < 0) {
        fprintf(stderr, "bench_schedule: %s\n", err);
        goto done;
    }
    double best[3] = {1e30, 1e30, 1e30};
    Solver *s = NULL;
    RefSolver *r = NULL;
    if (b == MORPH_CPU) r = ref_create(n, n, &p, err, sizeof err);
    else s = solver_create(n, n, &p, b == MORPH_COMPUTE ? SOLVER_COMPUTE : SOLVER_FRAGMENT, dir, err, sizeof err);
    if (!r && !s) {
        fprintf(stderr, "bench_schedule: %s\n", err);
        goto done;
    }
    if (r) ref_set_density(r, start), ref_set_target(r, target, true);
    if (s) solver_set_density(s, start), solver_set_target(s, target, true), solver_set_sources(s, &puff, 1);
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = export_now();
        for (int k = 0; k < CALLS; k++) morph_key_pose_image(m, 1, 1 + (rep * CALLS + k) % 1000, img);
        double t1 = export_now();
        for (int k = 0; k < CALLS; k++) {
            if (r) ref_set_target_scaled(r, img, 1.0f, 1.0, true);
            else solver_set_target_scaled(s, img, 1.0f, 1.0, true);
        }
        if (s) glFinish();
        double t2 = export_now();
        for (int k = 0; k < CALLS; k++) {
            if (r) ref_add_source(r, puff, 0.01f);
            else solver_add_source(s, 0, 0.01f);
        }
        if (s) glFinish();
        double t3 = export_now();
        double t[3] = {t1 - t0, t2 - t1, t3 - t2};
        for (int k = 0; k < 3; k++) best[k] = t[k] < best[k] ? t[k] : best[k];
    }
    printf("| %d² | %s | %.3f | %.3f | %.3f |\n", n, morph_backend_name(b), best[0] / CALLS * 1e3,
           best[1] / CALLS * 1e3, best[2] / CALLS * 1e3);
    fflush(stdout);
    solver_free(s);
    ref_free(r);
done:
    morph_free(m);
    free(img);
}

int main(int argc, char **argv)
{
    const char *sizes = "256,1024", *backends = "fragment,compute";
    int steps = 50;
    bool whole = true;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--sizes") && k + 1 < argc) sizes = argv[++k];
        else if (!strcmp(argv[k], "--backends") && k + 1 < argc) backends = argv[++k];
        else if (!strcmp(argv[k], "--steps") && k + 1 < argc) steps = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--parts")) whole = false;
        else {
            printf("usage: bench_schedule [--sizes 256,1024] [--backends fragment,compute,cpu] [--steps N] [--parts]\n"
                   "--parts: only the parts' table (no whole steps)\n");
            return strcmp(argv[k], "--help") ? 2 : 0;
        }
    }
    if (steps < 1) return 2;
    char err[1024], dir[4096];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (shader_find_dir(NULL, argv[0], dir, sizeof dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("renderer: %s | %s | %d steps a run\n\n", glctx_renderer(ctx), glctx_version(ctx), steps);
    for (int table = whole ? 0 : 1; table < 2; table++) {
        if (table == 0) {
            printf("| grid | backend | still ms/step | moving ms/step | moving costs | 2 sources ms/step | sources cost |\n");
            printf("|---|---|---|---|---|---|---|\n");
        } else {
            printf("\n| grid | backend | resample a moving key (CPU) ms | set the target ms | one source ms |\n");
            printf("|---|---|---|---|---|\n");
        }
        char *list = strdup(sizes);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            int n = atoi(tok);
            if (n < 8 || n > 8192) continue;
            float *a = malloc((size_t)n * n * 3 * sizeof(float));
            if (!a) break;
            float *tgt = a + (size_t)n * n, *puff = tgt + (size_t)n * n;
            shapes(n, a, tgt, puff);
            char *bl = strdup(backends), *save = NULL;
            for (char *bk = strtok_r(bl, ",", &save); bk; bk = strtok_r(NULL, ",", &save)) {
                MorphBackend b = !strcmp(bk, "cpu") ? MORPH_CPU : !strcmp(bk, "compute") ? MORPH_COMPUTE : MORPH_FRAGMENT;
                if (table == 1) {
                    parts(n, b, dir, a, tgt, puff);
                    continue;
                }
                double t[3];
                for (int mode = 0; mode < 3; mode++) t[mode] = run(n, b, dir, mode, steps, a, tgt, puff);
                printf("| %d² | %s | %.3f | %.3f | %+.3f | %.3f | %+.3f |\n", n, morph_backend_name(b), t[0], t[1],
                       t[1] - t[0], t[2], t[2] - t[0]);
                fflush(stdout);
            }
            free(bl);
            free(a);
        }
        free(list);
    }
    glctx_destroy(ctx);
    return 0;
}
