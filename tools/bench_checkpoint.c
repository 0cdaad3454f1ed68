/* bench_checkpoint: what a farm chunk's checkpoint costs. For each grid
 * size: a CPU morph (a disc into a box) run a few steps, then, REPEAT times,
 * the checkpoint written as smokemorph writes it (the state read back,
 * checkpoint_write: a temporary file, fsync, rename) and read back as a
 * resumed run reads it (checkpoint_read: the whole file, its checksum and
 * checks, then morph_set_state; the file is in the page cache, as on the
 * machine that wrote it). Prints a Markdown table: the file's size,
 * and the median write and read times. The file goes into DIR (default
 * /tmp), removed after. Speed belongs here, never in a test.
 *
 *   build/tools/bench_checkpoint [--sizes 1024,2048,4096] [--steps 2] [--repeat 3] [--dir DIR]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "method.h"
#include "morph.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void shapes(int n, float *start, float *target)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            float x = ((float)i + 0.5f) / (float)n, y = ((float)j + 0.5f) / (float)n;
            float d = sqrtf((x - 0.4f) * (x - 0.4f) + (y - 0.7f) * (y - 0.7f));
            start[(size_t)j * n + i] = fminf(1.0f, fmaxf(0.0f, (0.2f - d) * 40.0f));
            target[(size_t)j * n + i] = (fabsf(x - 0.6f) < 0.2f && fabsf(y - 0.4f) < 0.25f) ? 1.0f : 0.0f;
        }
}

int main(int argc, char **argv)
{
    const char *sizes = "1024,2048,4096", *dir = "/tmp";
    int steps = 2, repeat = 3;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--sizes") && a + 1 < argc) sizes = argv[++a];
        else if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--dir") && a + 1 < argc) dir = argv[++a];
        else {
            printf("usage: bench_checkpoint [--sizes 1024,2048,4096] [--steps 2] [--repeat 3] [--dir DIR]\n");
            return !strcmp(argv[a], "--help") ? 0 : 2;
        }
    }
    if (repeat < 1 || repeat > 50 || steps < 0) {
        fprintf(stderr, "bench_checkpoint: --repeat 1..50, --steps 0 or more\n");
        return 2;
    }
    printf("| grid | checkpoint | bytes a cell | write (state read back, write, fsync, rename) | read (read, checks, set state) | %d steps took |\n",
           steps);
    printf("| --- | --- | --- | --- | --- | --- |\n");
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        int n = atoi(s);
        size_t cells = (size_t)n * (size_t)n;
        float *start = malloc(cells * sizeof *start), *target = malloc(cells * sizeof *target);
        if (!start || !target) {
            fprintf(stderr, "bench_checkpoint: out of memory at %d\n", n);
            return 1;
        }
        shapes(n, start, target);
        SolverParams p;
        method_params_default(&p);
        char err[512];
        Morph *m = morph_create(n, n, &p, start, target, true, MORPH_CPU, NULL, err, sizeof err);
        free(start);
        free(target);
        if (!m) {
            fprintf(stderr, "bench_checkpoint: %d: %s\n", n, err);
            return 1;
        }
        double t0 = now();
        for (int k = 0; k < steps; k++) morph_step(m);
        double tsteps = now() - t0;
        Checkpoint ck, back;
        if (checkpoint_alloc(&ck, n, n) < 0) {
            fprintf(stderr, "bench_checkpoint: out of memory at %d\n", n);
            return 1;
        }
        snprintf(ck.backend, sizeof ck.backend, "cpu");
        ck.run_steps = steps;
        ck.run_every = 1;
        char path[1024];
        snprintf(path, sizeof path, "%s/bench_checkpoint_%d.smc", dir, (int)getpid());
        double tw[50], tr[50];
        long long size = 0;
        for (int r = 0; r < repeat; r++) {
            t0 = now();
            if (morph_get_state(m, &ck.state) < 0 || checkpoint_write(path, &ck, err, sizeof err) < 0) {
                fprintf(stderr, "bench_checkpoint: %s\n", err);
                return 1;
            }
            tw[r] = now() - t0;
            struct stat st;
            size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
            /* read it as a resumed run does (here from the page cache: on
             * another machine add the size over the disk's or network's speed) */
            t0 = now();
            if (checkpoint_read(path, &back, err, sizeof err) < 0 || morph_set_state(m, &back.state) < 0) {
                fprintf(stderr, "bench_checkpoint: %s\n", err);
                return 1;
            }
            tr[r] = now() - t0;
            checkpoint_free(&back);
        }
        unlink(path);
        printf("| %d² | %.1f MB | %.1f | %.3f s | %.3f s | %.1f s |\n", n, (double)size / 1e6,
               (double)size / (double)cells, median(tw, repeat), median(tr, repeat), tsteps);
        fflush(stdout);
        checkpoint_free(&ck);
        morph_free(m);
    }
    return 0;
}
