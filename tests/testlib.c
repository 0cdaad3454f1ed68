/* testlib.c: see testlib.h. */
#define _XOPEN_SOURCE 700
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openexr.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------ running a program */

/* A file for a captured stream: O's, else a fresh temporary one (*tmp set). */
static int capture_path(const char *given, char *buf, size_t n, bool *tmp)
{
    *tmp = false;
    if (given) {
        snprintf(buf, n, "%s", given);
        return 0;
    }
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/testlib.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    if (fd < 0) return -1;
    close(fd);
    *tmp = true;
    return 0;
}

/* In the child: STREAM to PATH (NULL: left alone). */
static void redirect(const char *path, int stream)
{
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(127);
    if (fd != stream) {
        dup2(fd, stream);
        close(fd);
    }
}

static char *read_or_empty(const char *path)
{
    char *s = testlib_read_file(path, NULL);
    return s ? s : calloc(1, 1);
}

int testlib_run(const char *const *argv, const TestlibRunOpts *o, TestlibResult *r)
{
    static const TestlibRunOpts none;
    if (!o) o = &none;
    char outp[4096], errp[4096];
    bool out_tmp = false, err_tmp = false, capture = r != NULL;
    const char *out_file = o->out_path, *err_file = o->err_path;
    if (capture) {
        if (capture_path(o->out_path, outp, sizeof outp, &out_tmp) < 0 ||
            capture_path(o->err_path, errp, sizeof errp, &err_tmp) < 0) {
            perror("testlib_run: a temporary file");
            exit(2);
        }
        out_file = outp;
        err_file = errp;
    }

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("testlib_run: fork");
        exit(2);
    }
    if (pid == 0) {
        redirect(out_file, STDOUT_FILENO);
        redirect(err_file, STDERR_FILENO);
        if (o->cwd && chdir(o->cwd) < 0) _exit(127);
        for (int k = 0; o->unset_env && o->unset_env[k]; k++) unsetenv(o->unset_env[k]);
        for (int k = 0; o->env && o->env[k]; k++) putenv((char *)o->env[k]);
        if (o->rlimit_set) {
            struct rlimit rl = {(rlim_t)o->rlimit_value, (rlim_t)o->rlimit_value};
            if (setrlimit(o->rlimit_resource, &rl) < 0) _exit(126);
            signal(SIGXFSZ, SIG_IGN);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (o->kill_after_ms > 0) {
        struct timespec ts = {o->kill_after_ms / 1000, (long)(o->kill_after_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
        kill(pid, o->kill_signal);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (r) {
        testlib_result_free(r);
        r->code = code;
        r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        r->out = read_or_empty(outp);
        r->err = read_or_empty(errp);
        if (out_tmp) unlink(outp);
        if (err_tmp) unlink(errp);
    }
    return code;
}

int testlib_run_sh(const char *script, const TestlibRunOpts *o, TestlibResult *r)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    return testlib_run(argv, o, r);
}

int testlib_sh(const char *cmd) { return testlib_run_sh(cmd, NULL, NULL); }

void testlib_result_free(TestlibResult *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *testlib_bin(void) { return env_or("SMOKEMORPH_BIN", "build/smokemorph"); }

const char *testlib_build_dir(void) { return env_or("SMOKEMORPH_BUILD", "build"); }

int testlib_argv(const char **argv, int max, const char *const *head, const char *first,
                 va_list ap)
{
    int n = 0;
    for (int k = 0; head && head[k] && n < max; k++) argv[n++] = head[k];
    for (const char *a = first; a && n < max; a = va_arg(ap, const char *)) argv[n++] = a;
    argv[n] = NULL;
    return n;
}

int testlib_run_headless(const char *const *argv, const char *cwd, const TestlibRunOpts *o,
                         TestlibResult *r)
{
    static const char *const unset[] = {"DISPLAY", "WAYLAND_DISPLAY", NULL};
    TestlibRunOpts h = o ? *o : (TestlibRunOpts){0};
    h.cwd = cwd;
    h.unset_env = unset;
    return testlib_run(argv, &h, r);
}

int testlib_run_headless_va(const char *const *head, const char *first, va_list ap,
                            const char *cwd, const TestlibRunOpts *o, TestlibResult *r)
{
    const char *argv[TESTLIB_MAXARGS + 1];
    testlib_argv(argv, TESTLIB_MAXARGS, head, first, ap);
    return testlib_run_headless(argv, cwd, o, r);
}

char *testlib_fmt(const char *fmt, ...)
{
    static char buf[8][16384];
    static int k;
    char *p = buf[k++ & 7];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, sizeof buf[0], fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf[0]) p[0] = '\0';
    return p;
}

bool testlib_gl_optional(int major, int minor)
{
    const char *s = getenv("SMOKEMORPH_TEST_GL");
    if (!s) return false;
    if (!strcmp(s, "none")) return true;
    return !strcmp(s, "3.3") && (major > 3 || (major == 3 && minor > 3));
}

bool testlib_has(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

int testlib_count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    return n + (s[0] && s[strlen(s) - 1] != '\n');
}

/* ------------------------------------------------------------------ files */

char *testlib_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

char *testlib_read_text(const char *path, char *buf, size_t n)
{
    size_t len = 0;
    char *s = testlib_read_file(path, &len);
    if (!s) len = 0;
    if (len > n - 1) len = n - 1;
    memcpy(buf, s ? s : "", len);
    buf[len] = '\0';
    free(s);
    return buf;
}

int testlib_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

bool testlib_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void testlib_path(char *buf, size_t n, const char *dir, const char *name)
{
    int r = snprintf(buf, n, "%s/%s", dir, name);
    if (r < 0 || (size_t)r >= n) buf[0] = '\0';
}

void testlib_fresh_dir(const char *dir)
{
    testlib_rm_rf(dir);
    if (mkdir(dir, 0777) < 0) {
        perror(dir);
        exit(2);
    }
}

void testlib_tmpdir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(2);
    }
}

void testlib_setup_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL ");
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n0 passed, 1 failed\n");
    exit(1);
}

void testlib_cli_start(const char *name, char *bin, char *tmp, size_t ntmp, char *work,
                       size_t nwork, int (*fixtures)(void))
{
    if (!realpath(testlib_bin(), bin))
        testlib_setup_failed("cannot find the binary %s: %s", testlib_bin(), strerror(errno));
    testlib_tmpdir(tmp, ntmp, name);
    testlib_path(work, nwork, tmp, "work");
    if (mkdir(work, 0777) < 0) testlib_setup_failed("cannot make %s: %s", work, strerror(errno));
    if (fixtures && fixtures() < 0) testlib_setup_failed("cannot make the fixtures in %s", tmp);
}

bool testlib_same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = testlib_read_file(a, &la), *y = testlib_read_file(b, &lb);
    bool eq = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return eq;
}

int testlib_diff_frames(const char *dir, const char *a, const char *b, int from, int to)
{
    int bad = 0;
    for (int k = from; k <= to; k++) {
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s/%s/frame_%05d.png", dir, a, k);
        snprintf(pb, sizeof pb, "%s/%s/frame_%05d.png", dir, b, k);
        if (!testlib_same_file(pa, pb)) {
            printf("  frame %d: %s and %s differ\n", k, pa, pb);
            bad++;
        }
    }
    return bad;
}

int testlib_count_entries(const char *dir, const char *needle, int *matching)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0, m = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (needle && strstr(e->d_name, needle)) m++;
    }
    closedir(d);
    if (matching) *matching = m;
    return n;
}

void testlib_rm_rf(const char *path)
{
    const char *argv[] = {"rm", "-rf", path, NULL};
    if (testlib_run(argv, NULL, NULL) != 0) fprintf(stderr, "cannot remove %s\n", path);
}

/* ----------------------------------------------------------------- images */

Image *testlib_load_opts(const char *path, const ImageLoadOpts *o)
{
    char err[512];
    Image *im = image_load(path, o, err, sizeof err);
    if (!im) printf("  load %s: %s\n", path, err);
    return im;
}

Image *testlib_load(const char *path, ImageChannel ch)
{
    ImageLoadOpts o = {0};
    o.channel = ch;
    return testlib_load_opts(path, &o);
}

void testlib_exr_free(TestlibExr *e)
{
    if (!e) return;
    for (int k = 0; k < e->nch; k++) free(e->px[k]);
    free(e);
}

const float *testlib_exr_channel(const TestlibExr *e, const char *name)
{
    for (int k = 0; e && k < e->nch; k++)
        if (strcmp(e->name[k], name) == 0) return e->px[k];
    return NULL;
}

static void exr_quiet(exr_const_context_t c, exr_result_t code, const char *msg)
{
    (void)c, (void)code, (void)msg;
}

TestlibExr *testlib_load_exr(const char *path)
{
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = exr_quiet;
    exr_context_t ctx = NULL;
    exr_result_t rc = exr_start_read(&ctx, path, &init);
    TestlibExr *e = calloc(1, sizeof *e);
    exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
    bool started = false;
    const char *what = "open";
    if (rc != EXR_ERR_SUCCESS || !e) goto fail;
    exr_attr_box2i_t dw, disp;
    const exr_attr_chlist_t *cl = NULL;
    exr_compression_t comp;
    what = "header";
    if ((rc = exr_get_data_window(ctx, 0, &dw)) || (rc = exr_get_display_window(ctx, 0, &disp)) ||
        (rc = exr_get_channels(ctx, 0, &cl)) || (rc = exr_get_compression(ctx, 0, &comp)))
        goto fail;
    e->w = disp.max.x - disp.min.x + 1;
    e->h = disp.max.y - disp.min.y + 1;
    e->x0 = dw.min.x, e->y0 = dw.min.y, e->x1 = dw.max.x, e->y1 = dw.max.y;
    e->compression = (int)comp;
    exr_attr_rational_t fps;
    if (exr_attr_get_rational(ctx, 0, "framesPerSecond", &fps) == EXR_ERR_SUCCESS && fps.denom)
        e->fps = (double)fps.num / (double)fps.denom;
    what = "windows";
    if (disp.min.x != 0 || disp.min.y != 0 || e->w < 1 || e->h < 1 || e->w > 16384 ||
        e->h > 16384 || dw.min.x < 0 || dw.min.y < 0 || dw.max.x >= e->w || dw.max.y >= e->h ||
        cl->num_channels > TESTLIB_EXR_MAXCH)
        goto fail;
    e->nch = cl->num_channels;
    for (int k = 0; k < e->nch; k++) {
        snprintf(e->name[k], sizeof e->name[k], "%s", cl->entries[k].name.str);
        e->type[k] = (int)cl->entries[k].pixel_type;
        if (!(e->px[k] = calloc((size_t)e->w * e->h, sizeof(float)))) goto fail;
    }
    int32_t lines = 1;
    what = "pixels";
    exr_storage_t storage;
    if ((rc = exr_get_storage(ctx, 0, &storage))) goto fail;
    e->tiled = storage == EXR_STORAGE_TILED;
    uint32_t tw = 1, th = 1;
    int ntx = 1, nchunks;
    if (e->tiled) {
        exr_tile_level_mode_t lm;
        exr_tile_round_mode_t rm;
        if ((rc = exr_get_tile_descriptor(ctx, 0, &tw, &th, &lm, &rm))) goto fail;
        ntx = (int)(((uint32_t)(dw.max.x - dw.min.x) + tw) / tw);
        nchunks = ntx * (int)(((uint32_t)(dw.max.y - dw.min.y) + th) / th);
    } else {
        if ((rc = exr_get_scanlines_per_chunk(ctx, 0, &lines))) goto fail;
        nchunks = (dw.max.y - dw.min.y + lines) / lines;
    }
    for (int c = 0; c < nchunks; c++) {
        exr_chunk_info_t ci;
        int px0, py0; /* the chunk's first pixel: a tile's start_x/y are its tile indices */
        if (e->tiled) {
            if ((rc = exr_read_tile_chunk_info(ctx, 0, c % ntx, c / ntx, 0, 0, &ci))) goto fail;
            px0 = dw.min.x + (c % ntx) * (int)tw;
            py0 = dw.min.y + (c / ntx) * (int)th;
        } else {
            if ((rc = exr_read_scanline_chunk_info(ctx, 0, dw.min.y + c * lines, &ci))) goto fail;
            px0 = ci.start_x;
            py0 = ci.start_y;
        }
        rc = started ? exr_decoding_update(ctx, 0, &ci, &dec) : exr_decoding_initialize(ctx, 0, &ci, &dec);
        if (rc) goto fail;
        for (int c = 0; c < dec.channel_count; c++) {
            exr_coding_channel_info_t *ch = &dec.channels[c];
            float *plane = NULL;
            for (int k = 0; k < e->nch; k++)
                if (!strcmp(e->name[k], ch->channel_name)) plane = e->px[k];
            ch->user_data_type = EXR_PIXEL_FLOAT;
            ch->user_bytes_per_element = 4;
            ch->user_pixel_stride = 4;
            ch->user_line_stride = 4 * e->w;
            ch->decode_to_ptr = plane ? (uint8_t *)(plane + (size_t)py0 * e->w + px0) : NULL;
        }
        if (!started && (rc = exr_decoding_choose_default_routines(ctx, 0, &dec))) goto fail;
        started = true;
        if ((rc = exr_decoding_run(ctx, 0, &dec))) goto fail;
    }
    exr_decoding_destroy(ctx, &dec);
    exr_finish(&ctx);
    return e;
fail:
    printf("  load %s: %s: %s\n", path, what, exr_get_default_error_message(rc));
    if (started) exr_decoding_destroy(ctx, &dec);
    if (ctx) exr_finish(&ctx);
    testlib_exr_free(e);
    return NULL;
}

Image *testlib_bundled(const char *name, int w, int h)
{
    char path[1024];
    snprintf(path, sizeof path, "targets/%s", name);
    Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
    Image *g = im ? image_resample(im, w, h) : NULL;
    image_free(im);
    return g;
}

/* ----------------------------------------------------------------- shapes */

/* The profile across an edge at signed distance d (negative inside). */
static double edge(const TestlibShape *s, double d)
{
    if (s->width <= 0.0) return d < 0.0 ? 1.0 : 0.0;
    if (s->tanh_edge) return 0.5 * (1.0 - tanh(d / s->width));
    double a = 0.5 - d / s->width;
    return a < 0.0 ? 0.0 : (a > 1.0 ? 1.0 : a);
}

static double unit(const TestlibShape *s, int w, int h)
{
    return s->domain ? 1.0 / (double)(w < h ? w : h) : 1.0;
}

static void put(float *f, const TestlibShape *s, size_t k, double v)
{
    f[k] = s->add ? f[k] + (float)v : (float)v;
}

void testlib_disc(float *f, int w, int h, const TestlibShape *s, double cx, double cy, double r,
                  double v)
{
    double u = unit(s, w, h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double d = hypot((i + 0.5) * u - cx, (j + 0.5) * u - cy);
            put(f, s, (size_t)j * (size_t)w + (size_t)i, v * edge(s, d - r));
        }
}

void testlib_box(float *f, int w, int h, const TestlibShape *s, double cx, double cy, double hx,
                 double hy, double v)
{
    double u = unit(s, w, h);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double x = fabs((i + 0.5) * u - cx), y = fabs((j + 0.5) * u - cy);
            put(f, s, (size_t)j * (size_t)w + (size_t)i, v * edge(s, x - hx) * edge(s, y - hy));
        }
}

/* ------------------------------------------------------------ morph state */

void testlib_key_shapes(int w, int h, const TestlibKeyShapes *at, float *disc, float *square,
                        float *ring)
{
    static const TestlibKeyShapes standard = {{0.35, 0.4}, {0.65, 0.6}, {0.5, 0.5}, false};
    if (!at) at = &standard;
    const TestlibShape s = {.domain = true, .width = 0.05};
    testlib_disc(disc, w, h, &s, at->disc[0], at->disc[1], 0.2, 1.0);
    testlib_box(square, w, h, &s, at->square[0], at->square[1], 0.18, 0.18, 1.0);
    testlib_disc(ring, w, h, &s, at->ring[0], at->ring[1], 0.3, 1.0);
    if (at->solid_ring) return;
    const TestlibShape hole = {.domain = true, .width = 0.05, .add = true};
    testlib_disc(ring, w, h, &hole, at->ring[0], at->ring[1], 0.15, -1.0);
}

float *testlib_floats(size_t n)
{
    float *f = calloc(n ? n : 1, sizeof *f);
    if (!f) {
        printf("FAIL out of memory\n");
        exit(1);
    }
    return f;
}

unsigned testlib_crc32(const unsigned char *p, size_t n)
{
    unsigned c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c ^ 0xffffffffu;
}

double testlib_gauss_mass(int w, int h, double cx, double cy, double amount, double r)
{
    double s = 0.0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double dx = i + 0.5 - cx, dy = j + 0.5 - cy;
            s += amount * exp(-(dx * dx + dy * dy) / (r * r));
        }
    return s;
}

double testlib_sum(const float *f, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; k++) s += f[k];
    return s;
}

Morph *testlib_morph(int w, int h, const SolverParams *p, const float *start, const float *target,
                     bool mass_match, MorphBackend b, const char *shader_dir)
{
    SolverParams def;
    if (!p) {
        method_params_default(&def);
        p = &def;
    }
    char err[256] = "";
    Morph *m = morph_create(w, h, p, start, target, mass_match, b, shader_dir, err, sizeof err);
    if (!m) printf("  morph_create (%s): %s\n", morph_backend_name(b), err);
    return m;
}

/* morph_splat_density(m, x, y, amount, r), the mass after in *mass and
 * the change in *dmass; its return value. */
static int splat(Morph *m, float x, float y, float amount, float r, double *mass, double *dmass)
{
    double before = 0.0, after = 0.0;
    morph_metrics(m, &before, NULL, NULL);
    int rc = morph_splat_density(m, x, y, amount, r);
    morph_metrics(m, &after, NULL, NULL);
    *mass = after;
    *dmass = after - before;
    return rc;
}

TestlibAddErase testlib_add_erase(Morph *m, int w, int h)
{
    TestlibAddErase s = {.gauss = testlib_gauss_mass(w, h, 16.0, 16.0, 0.5, 3.0)};
    double erased;
    s.add_rc = splat(m, 16.0f, 16.0f, 0.5f, 3.0f, &s.m1, &s.added);
    s.erase_rc = splat(m, 16.0f, 16.0f, -100.0f, 8.0f, &s.m2, &erased);
    size_t n = (size_t)w * (size_t)h;
    float *rho = testlib_floats(n);
    morph_read_density(m, rho);
    s.nonneg = true;
    for (size_t k = 0; k < n; k++) s.nonneg = s.nonneg && rho[k] >= 0.0f;
    s.centre = rho[16 * (size_t)w + 16];
    free(rho);
    return s;
}

bool testlib_state_read(Morph *m, size_t cells, TestlibState *s)
{
    if (!s->buf && !(s->buf = malloc((size_t)(METHOD_FIELD_COUNT + 2) * cells * sizeof(float)))) return false;
    for (int k = 0; k < METHOD_FIELD_COUNT; k++) s->st.solver.field[k] = s->buf + (size_t)k * cells;
    s->st.start = s->buf + (size_t)METHOD_FIELD_COUNT * cells;
    s->st.target = s->st.start + cells;
    return morph_get_state(m, &s->st) == 0;
}

/* ---------------------------------------------------------------- numbers */

double testlib_rel_l2(const float *a, const float *b, size_t n)
{
    double d = 0.0, s = 0.0;
    for (size_t k = 0; k < n; k++) {
        d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
        s += (double)b[k] * b[k];
    }
    return sqrt(d / (s > 0.0 ? s : 1.0));
}

static double srgb_to_lin(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
static double lin_to_srgb(double c) { return c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1.0 / 2.4) - 0.055; }

void testlib_composite(int nf, const float *const *rho, const double (*rgb)[3], double s, size_t k,
                       double *A, double srgb[3], double lin[3])
{
    double t = 1.0, ws = 0.0, acc[3] = {0, 0, 0}, a1 = 0.0;
    int count = 0, only = 0;
    for (int i = 0; i < nf; i++) {
        double a = rho[i][k] * s;
        a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
        if (!(a > 0.0)) continue;
        t *= 1.0 - a;
        ws += a;
        for (int c = 0; c < 3; c++) acc[c] += a * srgb_to_lin(rgb[i][c]);
        count++;
        only = i;
        a1 = a;
    }
    *A = count <= 1 ? a1 : 1.0 - t;
    for (int c = 0; c < 3; c++) {
        lin[c] = count <= 1 ? srgb_to_lin(rgb[only][c]) : acc[c] / ws;
        srgb[c] = count <= 1 ? rgb[only][c] : lin_to_srgb(lin[c]);
    }
}
