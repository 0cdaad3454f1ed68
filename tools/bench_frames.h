/* bench --export and bench --render (issue 22: frames at the simulation's
 * speed), included by bench.c.
 *
 *   bench --export [--formats png8,png16,exr] [--sizes 256,2048,3840x2160]
 *                  [--threads 1,2] [--frames N] [--png-compression L]
 *                  [--exr-compression C] [--exr-tiled] [--dir DIR]
 *     the writers alone: N frames of a synthetic smoke (blobs and swirls,
 *     different every frame) written through export's writer pool, per
 *     format, size and thread count: frames/s and MB/s of files written,
 *     and the speed-up over the first thread count.
 *
 *   bench --render [--smokemorph PATH] [--runs N] -- SMOKEMORPH ARGS...
 *     a whole headless render, then the same run with no frames (its
 *     --frames and --video left out, --no-frames added): wall seconds of
 *     each (the best of N runs) and their ratio.
 *
 * Speed belongs here, never in a test's pass/fail. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "exr.h"
#include "pool.h"

extern char **environ;

static double frames_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "WxH" or "N" */
static int parse_size(const char *s, int *w, int *h)
{
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (*end == 'x' || *end == 'X') b = strtol(end + 1, &end, 10);
    if ((*end && *end != ',') || a < 1 || b < 1 || a > 16384 || b > 16384) return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* A smoke-like density for frame f: soft blobs drifting, cut by swirls
 * (compresses like a morph's frames: smooth inside, empty around). */
static void synthetic_smoke(float *rho, int w, int h, int f)
{
    float m = (float)(w < h ? w : h);
    float t = 0.15f * (float)f;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            float x = ((float)i + 0.5f) / m, y = ((float)j + 0.5f) / m;
            float v = 0.0f;
            for (int b = 0; b < 3; b++) {
                float cx = 0.3f + 0.2f * (float)b + 0.05f * sinf(t + (float)b);
                float cy = 0.35f + 0.15f * (float)b + 0.05f * cosf(1.3f * t + (float)b);
                float d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
                v += expf(-d2 / 0.012f);
            }
            float swirl = 0.5f + 0.5f * sinf(23.0f * x + 7.0f * sinf(17.0f * y + t)) *
                                     cosf(19.0f * y + 5.0f * cosf(13.0f * x - t));
            v *= 0.6f + 0.4f * swirl;
            rho[(size_t)j * w + i] = v > 1e-4f ? v : 0.0f;
        }
}

/* CPU seconds of this process so far (every thread). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static long long dir_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    long long n = 0;
    struct dirent *e;
    char p[4700];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) n += st.st_size;
    }
    closedir(d);
    return n;
}

static void remove_frames(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[4700];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int bench_export(int argc, char **argv)
{
    const char *formats = "png8,png16,exr", *sizes = "256,2048", *threads = NULL, *root = NULL;
    int nframes = 8, level = IMAGE_PNG_LEVEL_DEFAULT;
    ImageExrCompression comp = IMAGE_EXR_ZIP;
    bool tiled = false;
    char deflt[32];
    snprintf(deflt, sizeof deflt, "1,%d", pool_cores());
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--export")) continue;
        if (!strcmp(argv[k], "--formats") && k + 1 < argc) formats = argv[++k];
        else if (!strcmp(argv[k], "--sizes") && k + 1 < argc) sizes = argv[++k];
        else if (!strcmp(argv[k], "--threads") && k + 1 < argc) threads = argv[++k];
        else if (!strcmp(argv[k], "--frames") && k + 1 < argc) nframes = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--png-compression") && k + 1 < argc) level = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--exr-compression") && k + 1 < argc) {
            int c = exr_compression_parse(argv[++k]);
            if (c < 0 || !exr_compression_available((ImageExrCompression)c)) {
                fprintf(stderr, "bench: --exr-compression: '%s' cannot be written here\n", argv[k]);
                return 2;
            }
            comp = (ImageExrCompression)c;
        } else if (!strcmp(argv[k], "--exr-tiled")) tiled = true;
        else if (!strcmp(argv[k], "--dir") && k + 1 < argc) root = argv[++k];
        else {
            usage();
            return 2;
        }
    }
    if (!threads) threads = deflt;
    if (nframes < 1 || level < 0 || level > IMAGE_PNG_LEVEL_MAX) {
        usage();
        return 2;
    }
    char tmpl[] = "/tmp/bench-export-XXXXXX";
    if (!root && !(root = mkdtemp(tmpl))) {
        perror("bench: mkdtemp");
        return 1;
    }
    printf("writers alone: %d frames a row, PNG level %d, EXR %s half%s; %d cores here; files in %s\n\n",
           nframes, level, exr_compression_name(comp), tiled ? " tiled" : "", pool_cores(), root);
    printf("| format | size | threads | s | frames/s | MB/s | MB/frame | speed-up | CPU s |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    int rc = 0;
    for (const char *s = sizes; *s && rc == 0;) {
        int w, h;
        if (parse_size(s, &w, &h) < 0) {
            fprintf(stderr, "bench: --sizes: bad size at '%s'\n", s);
            return 2;
        }
        s += strcspn(s, ",");
        s += *s == ',';
        size_t cells = (size_t)w * h;
        /* a few different frames, cycled: made before the clock starts */
        int distinct = nframes < 4 ? nframes : 4;
        float *rho = malloc(cells * (size_t)distinct * sizeof(float));
        if (!rho) {
            fprintf(stderr, "bench: out of memory for %dx%d frames\n", w, h);
            return 1;
        }
        for (int f = 0; f < distinct; f++) synthetic_smoke(rho + (size_t)f * cells, w, h, f);
        for (const char *fm = formats; *fm && rc == 0;) {
            size_t fl = strcspn(fm, ",");
            ImageFormat format = !strncmp(fm, "png16", fl) ? IMAGE_FORMAT_PNG16
                                 : !strncmp(fm, "exr", fl) ? IMAGE_FORMAT_EXR
                                                           : IMAGE_FORMAT_PNG8;
            char fname[16];
            snprintf(fname, sizeof fname, "%.*s", (int)(fl < 15 ? fl : 15), fm);
            fm += fl + (fm[fl] == ',');
            double base = 0.0;
            for (const char *t = threads; *t && rc == 0;) {
                int nt = atoi(t);
                t += strcspn(t, ",");
                t += *t == ',';
                if (nt < 1 || nt > POOL_MAX_THREADS) continue;
                char dir[4200], err[4400];
                snprintf(dir, sizeof dir, "%s/%s-%dx%d-%d", root, fname, w, h, nt);
                ExportOptions o = export_defaults();
                o.dir = dir;
                o.format = format;
                o.png_compression = level;
                o.exr_compression = comp;
                o.exr_tiled = tiled;
                o.threads = nt;
                /* frames in flight: what smokemorph's own default allows
                 * (half the machine), at most two a thread */
                o.max_flight_bytes = (size_t)(budget_limit_bytes(0) / 2);
                Exporter *x = export_create(&o, err, sizeof err);
                if (!x) {
                    fprintf(stderr, "bench: %s\n", err);
                    rc = 1;
                    break;
                }
                double t0 = frames_now(), c0 = cpu_seconds();
                for (int f = 0; f < nframes && rc == 0; f++)
                    if (export_write(x, -1, rho + (size_t)(f % distinct) * cells, NULL, NULL, w, h, err,
                                     sizeof err) < 0)
                        rc = 1;
                if (rc == 0 && export_wait(x, err, sizeof err) < 0) rc = 1;
                double el = frames_now() - t0, cpu = cpu_seconds() - c0;
                if (rc) fprintf(stderr, "bench: %s\n", err);
                export_close(x);
                double mb = (double)dir_bytes(dir) / 1e6;
                if (base == 0.0) base = el;
                if (rc == 0)
                    printf("| %s | %dx%d | %d | %.2f | %.1f | %.0f | %.2f | %.2fx | %.2f |\n", fname, w,
                           h, nt, el, nframes / el, mb / el, mb / nframes, base / el, cpu);
                fflush(stdout);
                remove_frames(dir);
            }
        }
        free(rho);
    }
    if (root == tmpl) rmdir(root);
    return rc;
}

/* Run argv, wait; wall seconds, or -1. stderr to errpath. */
static double run_timed(char **args, const char *errpath)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = frames_now();
    int e = posix_spawn(&pid, args[0], &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        fprintf(stderr, "bench: cannot run %s: %s\n", args[0], strerror(e));
        return -1.0;
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    double el = frames_now() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench: %s failed (see %s)\n", args[0], errpath);
        return -1.0;
    }
    return el;
}

/* The run's own summary line ("N steps in ...") from its stderr. */
static void summary_of(const char *errpath, char *buf, size_t n)
{
    snprintf(buf, n, "-");
    FILE *f = fopen(errpath, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = strstr(line, " steps in ");
        if (p && !strncmp(line, "smokemorph: ", 12)) snprintf(buf, n, "%s", line + 12);
    }
    fclose(f);
}

static int bench_render(int argc, char **argv)
{
    char exe[4096] = "";
    int runs = 1, first = -1;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--render")) continue;
        if (!strcmp(argv[k], "--smokemorph") && k + 1 < argc) snprintf(exe, sizeof exe, "%s", argv[++k]);
        else if (!strcmp(argv[k], "--runs") && k + 1 < argc) runs = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--")) {
            first = k + 1;
            break;
        } else {
            usage();
            return 2;
        }
    }
    if (first < 0 || first >= argc || runs < 1) {
        usage();
        return 2;
    }
    if (!exe[0]) { /* beside the tools: build/tools/bench -> build/smokemorph */
        snprintf(exe, sizeof exe, "%s", argv[0]);
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        else snprintf(exe, sizeof exe, ".");
        size_t u = strlen(exe);
        snprintf(exe + u, sizeof exe - u, "/../smokemorph");
    }
    int n = argc - first;
    char **with = calloc((size_t)n + 4, sizeof *with), **without = calloc((size_t)n + 4, sizeof *without);
    if (!with || !without) return 1;
    int a = 0, b = 0;
    with[a++] = without[b++] = exe;
    for (int k = first; k < argc; k++) {
        with[a++] = argv[k];
        /* the same run with no frames: its --frames and --video left out */
        if ((!strcmp(argv[k], "--frames") || !strcmp(argv[k], "--video")) && k + 1 < argc) {
            with[a++] = argv[++k];
            continue;
        }
        without[b++] = argv[k];
    }
    without[b++] = "--no-frames";
    char ea[] = "/tmp/bench-render-a-XXXXXX", eb[] = "/tmp/bench-render-b-XXXXXX";
    int fa = mkstemp(ea), fb = mkstemp(eb);
    if (fa < 0 || fb < 0) return 1;
    close(fa);
    close(fb);
    double ta = 1e300, tb = 1e300;
    for (int r = 0; r < runs; r++) {
        double x = run_timed(with, ea), y = run_timed(without, eb);
        if (x < 0.0 || y < 0.0) return 1;
        if (x < ta) ta = x;
        if (y < tb) tb = y;
    }
    char sa[1024], sb[1024];
    summary_of(ea, sa, sizeof sa);
    summary_of(eb, sb, sizeof sb);
    printf("| run | wall s | vs no frames | its own summary |\n|---|---|---|---|\n");
    printf("| with frames | %.2f | %.2fx | %s |\n", ta, ta / tb, sa);
    printf("| no frames | %.2f | 1.00x | %s |\n", tb, sb);
    unlink(ea);
    unlink(eb);
    free(with);
    free(without);
    return 0;
}
