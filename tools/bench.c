/* bench: speed of the morph step on each backend. For each grid size and
 * backend: the passes per step (draws or dispatches), steps/s over a timed
 * run (wall clock, glFinish at the end), then the GPU time of each pass group
 * from timer queries. Prints a Markdown table; both GPU backends run side by
 * side in one process, so their rows compare on the same machine.
 *
 *   build/tools/bench [--sizes 128,256,512,1024,2048] [--backends fragment,compute,cpu]
 *                     [--jacobi N] [--vcycles N] [--seconds S] [--from STEP]
 *                     [--set NAME=VALUE,...] [--mg-bottom N] [--transport-group WxH] ...
 *   build/tools/bench --export ...   the frame writers alone (bench_frames.h)
 *   build/tools/bench --render ... -- ARGS   a whole render against no frames
 *
 * Speed belongs here, never in a test's pass/fail. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <GL/glew.h>

#include "compare_spec.h"
#include "config.h"
#include "cpu_solver.h"
#include "export.h"
#include "field.h"
#include "glctx.h"
#include "morph.h"
#include "shader.h"
#include "gpu_solver.h"

static void usage(void)
{
    printf("usage: bench [--sizes 128,256,512,1024,2048] [--backends fragment,compute]\n"
           "             [--seconds S (default 3)] [--jacobi N] [--vcycles N] [--from STEP]\n"
           "             [--set NAME=VALUE,...] [--shader-dir DIR]\n"
           "Runs a morph (a disc into a box) with the default parameters at each size on\n"
           "each backend (fragment, compute, cpu; default fragment,compute) and prints\n"
           "steps/s and per-pass GPU times (ms per step) as a Markdown table.\n"
           "--jacobi and --vcycles override the pressure solve's defaults (10 and 3).\n"
           "--set changes other parameters, in --compare's form (e.g. --set drift-max=0.4).\n"
           "smokemorph's GPU tuning options (--compute-tiles, --transport-group, --mg-bottom,\n"
           "--no-mg-fuse: smokemorph --help) are taken as smokemorph takes them.\n"
           "--from STEP times the morph from that step on (default 0: from the start,\n"
           "where the flow is fastest): the transport's substeps follow the flow's speed,\n"
           "so a step's cost changes over a morph. 'substeps' is the last timed step's\n"
           "count of the density's transport (by the flow and the drift), and its bound.\n"
           "\n"
           "bench --export [--formats png8,png16,exr] [--sizes 256,2048,3840x2160]\n"
           "             [--threads 1,N] [--frames N] [--png-compression L]\n"
           "             [--exr-compression C] [--exr-tiled] [--dir DIR]\n"
           "  the frame writers alone: frames/s and MB/s per format, size and threads\n"
           "bench --render [--smokemorph PATH] [--runs N] -- SMOKEMORPH ARGS...\n"
           "  a whole headless render against the same run with --no-frames\n");
}

#include "bench_frames.h"

/* One of smokemorph's options at argv[*k] (with its value, argv[*k + 1],
 * where it takes one) into c, through smokemorph's own parser: the GPU
 * tuning options reach the solvers as c->solver. 0, or -1 if it is none. */
static int tuning_option(Config *c, int argc, char **argv, int *k)
{
    char err[512];
    const char *name = argv[*k] + 2;
    if (strncmp(argv[*k], "--", 2) != 0) return -1;
    if (config_option(c, name, NULL, err, sizeof err) == 0) return 0;
    if (*k + 1 < argc && config_option(c, name, argv[*k + 1], err, sizeof err) == 0) {
        (*k)++;
        return 0;
    }
    return -1;
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

/* The copy ceiling: GB/s of a pass that reads one RGBA32F texel and writes
 * one per cell (shaders/bench_copy.glsl), on backend kind at n x n. 0 when it
 * cannot run. */
static double copy_ceiling(const char *dir, SolverKind kind, int n)
{
    char err[1024];
    Shader *sh = shader_load_pass(dir, "bench_copy.glsl", kind == SOLVER_COMPUTE ? SHADER_COMPUTE : SHADER_FRAGMENT,
                                  NULL, err, sizeof err);
    Field *a = field_create(n, n, 4, err, sizeof err), *b = field_create(n, n, 4, err, sizeof err);
    double gbs = 0.0;
    float *noise = malloc((size_t)n * n * 4 * sizeof(float));
    /* random data: a GPU's lossless compression would make a copy of zeros
     * (a new field) look faster than memory is (4.6 TB/s on the H100) */
    uint32_t x = 12345u;
    for (size_t k = 0; noise && k < (size_t)n * n * 4; k++) {
        x = x * 1664525u + 1013904223u;
        noise[k] = (float)(x >> 8) * (1.0f / 16777216.0f);
    }
    if (sh && a && b && noise && field_upload(a, noise) == 0 && field_upload(b, noise) == 0) {
        shader_use(sh);
        shader_set_ivec2(sh, "u_size", n, n);
        int reps = 0;
        double t0 = 0.0, t1 = 0.0;
        for (int round = 0; round < 2; round++) { /* a warm-up, then the timed round */
            glFinish();
            t0 = export_now();
            reps = 0;
            do {
                for (int k = 0; k < 20; k++, reps++) {
                    shader_set_texture(sh, "u_src", 0, field_texture(reps & 1 ? b : a));
                    if (kind == SOLVER_COMPUTE) pass_dispatch(reps & 1 ? a : b);
                    else pass_draw(reps & 1 ? a : b);
                }
                glFinish();
                t1 = export_now();
            } while (t1 - t0 < 0.3);
        }
        gbs = (double)reps * 2.0 * n * n * 16.0 / (t1 - t0) * 1e-9;
    }
    free(noise);
    shader_free(sh);
    field_free(a);
    field_free(b);
    return gbs;
}

/* The CPU reference solver on the same pair, set up as the GPU rows' solvers
 * are (an automatic arrival settles to 3 s, method_params_settle): steps/s
 * only. */
static void bench_cpu(int n, const SolverParams *p, const float *a, const float *b, double seconds,
                      long from)
{
    char err[256];
    RefSolver *r = ref_create(n, n, p, err, sizeof err);
    if (!r) { printf("| %d² | cpu | %s |\n", n, err); return; }
    ref_set_density(r, a);
    if (ref_set_target(r, b, true) != 0) {
        printf("| %d² | cpu | the target is empty |\n", n);
        ref_free(r);
        return;
    }
    for (long k = 0; k < from; k++) ref_step(r);
    long steps = 0;
    double t0 = export_now(), t1 = t0;
    while (t1 - t0 < seconds) {
        ref_step(r);
        steps++;
        t1 = export_now();
    }
    double sps = (double)steps / (t1 - t0);
    printf("| %d² | cpu | - | - | %.1f | %.2f | - | - | - | - | - | - | - | - | - | - |\n", n, sps, 1000.0 / sps);
    fflush(stdout);
    ref_free(r);
}

int main(int argc, char **argv)
{
    const char *sizes = "128,256,512,1024,2048", *sdir = NULL, *backends = "fragment,compute";
    double seconds = 3.0;
    long from = 0;
    const char *setspec = NULL;
    SolverParams defaults;
    method_params_default(&defaults);
    int jacobi = -1, vcycles = -1;
    Config tune; /* smokemorph's GPU tuning options */
    config_defaults(&tune);
    for (int k = 1; k < argc && strcmp(argv[k], "--"); k++) {
        if (!strcmp(argv[k], "--export")) return bench_export(argc, argv);
        if (!strcmp(argv[k], "--render")) return bench_render(argc, argv);
    }
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--sizes") && k + 1 < argc) sizes = argv[++k];
        else if (!strcmp(argv[k], "--seconds") && k + 1 < argc) seconds = atof(argv[++k]);
        else if (!strcmp(argv[k], "--jacobi") && k + 1 < argc) jacobi = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--vcycles") && k + 1 < argc) vcycles = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--from") && k + 1 < argc) from = atol(argv[++k]);
        else if (!strcmp(argv[k], "--shader-dir") && k + 1 < argc) sdir = argv[++k];
        else if (!strcmp(argv[k], "--backends") && k + 1 < argc) backends = argv[++k];
        else if (!strcmp(argv[k], "--set") && k + 1 < argc) {
            CompareSpec cs;
            char perr[512];
            if (compare_parse(argv[++k], &defaults, &cs, perr, sizeof perr) < 0) {
                fprintf(stderr, "bench: --set: %s\n", perr + (strncmp(perr, "compare: ", 9) ? 0 : 9));
                return 2;
            }
            defaults = cs.p[1];
            method_params_resolve(&defaults);
            setspec = argv[k];
        }
        else if (tuning_option(&tune, argc, argv, &k) == 0) {}
        else { usage(); return strcmp(argv[k], "--help") ? 2 : 0; }
    }
    if (jacobi < -1 || vcycles < -1) { usage(); return 2; }
    if (jacobi == -1) jacobi = defaults.jacobi;
    if (vcycles == -1) vcycles = defaults.vcycles;
    if (!(seconds > 0.0) || from < 0 || jacobi < 0 || vcycles < 0 || jacobi + vcycles < 1) { usage(); return 2; }
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
    printf("%d V-cycles + %d Jacobi iterations, %s%s otherwise; timed from step %ld\n\n", vcycles, jacobi,
           setspec ? "default parameters but " : "default parameters", setspec ? setspec : "", from);
    /* per pass group: bytes moved and the fraction of the copy ceiling, printed after */
    char groups[8192] = "";
    size_t glen = 0;
    printf("| grid | backend | passes/step | substeps | steps/s | ms/step | CPU submit ms | blur | force | adv u | div | pressure | grad | adv rho | drift | gather |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
                bench_cpu(n, &p, a, b, seconds, from);
                continue;
            }
            SolverKind kind = !strcmp(bk, "compute") ? SOLVER_COMPUTE : SOLVER_FRAGMENT;
            if (kind == SOLVER_FRAGMENT && strcmp(bk, "fragment")) {
                printf("| %d² | %s | unknown backend (fragment, compute or cpu) |\n", n, bk);
                continue;
            }
            Solver *s = solver_create_opts(n, n, &p, &tune.solver, kind, dir, err, sizeof err);
            if (!s) { printf("| %d² | %s | %s |\n", n, bk, err); continue; }
            solver_set_density(s, a);
            solver_set_target(s, b, true);
            for (long k = 0; k < from; k++)
                if (solver_step(s) < 0 || (k % 64 == 63 && (glFinish(), 0))) break;
            unsigned long d0 = pass_draw_count();
            for (int k = 0; k < 5; k++) solver_step(s);
            int passes = (int)((pass_draw_count() - d0) / 5);
            glFinish();
            /* timed run: as many steps as fit in `seconds`, checked in batches */
            long steps = 0;
            double t0 = export_now(), t1 = t0, w0 = solver_wait_seconds(s), fin = 0.0;
            int batch = 1;
            while (t1 - t0 < seconds) {
                for (int k = 0; k < batch; k++) solver_step(s);
                double f0 = export_now();
                glFinish();
                steps += batch;
                t1 = export_now();
                fin += t1 - f0;
                if (batch < 64) batch *= 2;
            }
            double sps = (double)steps / (t1 - t0);
            /* the CPU's submit time a step: the wall time less the waits for the GPU */
            double submit = ((t1 - t0) - (solver_wait_seconds(s) - w0) - fin) / (double)steps * 1e3;
            /* per-pass GPU times */
            solver_enable_timing(s, true);
            int tsteps = steps < 50 ? (int)steps : 50;
            for (int k = 0; k < tsteps; k++) solver_step(s);
            SolverTimes t;
            solver_times(s, &t);
            double d = (double)t.steps;
            char sub[64];
            snprintf(sub, sizeof sub, "%d of %d", solver_substeps(s, 0), method_advect_substeps(n, n, &p));
            printf("| %d² | %s | %d | %s | %.1f | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", n,
                   bk, passes, sub, sps, 1000.0 / sps, submit, t.blur / d, t.force / d, t.advect_vel / d,
                   t.divergence / d, t.jacobi / d, t.subtract / d, t.advect_density / d, t.drift / d,
                   t.gather / d);
            fflush(stdout);
            double ceil_gbs = copy_ceiling(dir, kind, n);
            const double ms[9] = {t.blur, t.force, t.advect_vel, t.divergence, t.jacobi, t.subtract,
                                  t.advect_density, t.drift, t.gather};
            static const char *const gname[9] = {"blur", "force", "adv u", "div", "pressure", "grad",
                                                 "adv rho", "drift", "gather"};
            double tot_ms = 0.0, tot_b = 0.0;
            for (int g = 0; g < 9 && glen < sizeof groups - 200; g++) {
                double mb = t.bytes[g] / d * 1e-6, gbs = ms[g] > 0.0 ? t.bytes[g] / (ms[g] * 1e-3) * 1e-9 : 0.0;
                tot_ms += ms[g];
                tot_b += t.bytes[g];
                glen += (size_t)snprintf(groups + glen, sizeof groups - glen,
                                         "| %d² | %s | %s | %.3f | %.1f | %.1f | %.0f%% |\n", n, bk, gname[g],
                                         ms[g] / d, mb, gbs, ceil_gbs > 0.0 ? 100.0 * gbs / ceil_gbs : 0.0);
            }
            if (glen < sizeof groups - 200) {
                double gbs = tot_ms > 0.0 ? tot_b / (tot_ms * 1e-3) * 1e-9 : 0.0;
                glen += (size_t)snprintf(groups + glen, sizeof groups - glen,
                                         "| %d² | %s | **step** (copy ceiling %.0f GB/s) | %.3f | %.1f | %.1f | %.0f%% |\n",
                                         n, bk, ceil_gbs, tot_ms / d, tot_b / d * 1e-6, gbs,
                                         ceil_gbs > 0.0 ? 100.0 * gbs / ceil_gbs : 0.0);
            }
            solver_free(s);
        }
        free(bl);
        free(a);
        free(b);
    }
    free(list);
    printf("\nBytes each pass group moves (every texture a pass samples read once, its target\n"
           "written once) and the share of the copy ceiling (one RGBA32F read + write per cell,\n"
           "the same backend and size) it reaches:\n\n");
    printf("| grid | backend | group | ms/step | MB/step | GB/s | of the copy ceiling |\n");
    printf("|---|---|---|---|---|---|---|\n");
    fputs(groups, stdout);
    glctx_destroy(ctx);
    return 0;
}
