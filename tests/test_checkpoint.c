/* test_checkpoint: the checkpoint file (src/checkpoint.c) and the morph's
 * state (morph_get_state / morph_set_state) on every backend.
 *   - a written file reads back bit for bit, header and fields;
 *   - a morph resumed from a file steps exactly as the one it was taken
 *     from (CPU; the fragment and compute backends on a headless context),
 *     and each warm-start field matters (dropping it changes the result);
 *   - the reader refuses every truncation, every flipped byte, a bad magic,
 *     version or trailing data, and crafted headers with a valid checksum,
 *     with a reason and without a crash;
 *   - a failed write leaves the old file and no temporary;
 *   - the parameter table covers every SolverParams member. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "checkpoint.h"
#include "glctx.h"
#include "morph.h"
#include "shader.h"
#include "testlib.h"

static char g_tmp[64];

static void fill(float *f, size_t n, unsigned seed)
{
    for (size_t k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        f[k] = (float)(seed >> 8) / 16777216.0f - 0.25f;
    }
}

static int nfields(void) { return CHECKPOINT_NFIELDS; }

static float *field(Checkpoint *c, int k)
{
    if (k < METHOD_FIELD_COUNT) return c->state.solver.field[k];
    return k == METHOD_FIELD_COUNT ? c->state.start : c->state.target;
}

/* A checkpoint of a w x h grid with every number set to something unusual. */
static int make(Checkpoint *c, int w, int h)
{
    if (checkpoint_alloc(c, w, h) < 0) return -1;
    for (int k = 0; k < nfields(); k++) fill(field(c, k), (size_t)w * h, 7u + (unsigned)k);
    snprintf(c->backend, sizeof c->backend, "compute");
    method_params_default(&c->state.params);
    c->state.params.vf = 0.37f;
    c->state.params.jacobi = 17;
    c->state.params.gather = false;
    c->state.params.force = SOLVER_FORCE_FATTAL;
    c->state.mass_match = true;
    c->state.steps = 1234567890123L;
    c->state.solver.nstep = 42;
    c->state.solver.pot_c = 1.25f;
    c->state.solver.dscale = 3.5e-3f;
    c->run_steps = 600;
    c->run_every = 7;
    c->settle_started = true;
    c->settle_best = 0.0625;
    c->settle_best_step = 310;
    return 0;
}

static bool same(Checkpoint *a, Checkpoint *b)
{
    if (a->w != b->w || a->h != b->h || strcmp(a->backend, b->backend) ||
        memcmp(&a->state.params, &b->state.params, sizeof a->state.params) ||
        a->state.mass_match != b->state.mass_match || a->state.steps != b->state.steps ||
        a->state.solver.nstep != b->state.solver.nstep ||
        a->state.solver.pot_c != b->state.solver.pot_c ||
        a->state.solver.dscale != b->state.solver.dscale || a->run_steps != b->run_steps ||
        a->run_every != b->run_every || a->settle_started != b->settle_started ||
        a->settle_best != b->settle_best || a->settle_best_step != b->settle_best_step)
        return false;
    for (int k = 0; k < nfields(); k++)
        if (memcmp(field(a, k), field(b, k), (size_t)a->w * a->h * sizeof(float))) return false;
    return true;
}

static void test_round_trip(void)
{
    Checkpoint c, r;
    CHECK(make(&c, 13, 7) == 0, "alloc");
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/a.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) == 0, "write: %s", err);
    int rc = checkpoint_read(path, &r, err, sizeof err);
    CHECK(rc == 0, "read: %s", err);
    if (rc == 0) CHECK(same(&c, &r), "what was read differs from what was written");
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 120 + 8 * METHOD_PARAM_COUNT +
                                                    CHECKPOINT_NFIELDS * 13 * 7 * 4 + 4,
          "file size %lld", (long long)st.st_size);
    int ntmp = 0;
    testlib_count_entries(g_tmp, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files left", ntmp);
    checkpoint_free(&r);
    checkpoint_free(&c);
}

/* ---- hostile input ----------------------------------------------------------- */

static unsigned char *file_bytes(size_t *len)
{
    Checkpoint c;
    if (make(&c, 8, 8) < 0) return NULL;
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/h.smc", g_tmp);
    int rc = checkpoint_write(path, &c, err, sizeof err);
    checkpoint_free(&c);
    return rc == 0 ? (unsigned char *)testlib_read_file(path, len) : NULL;
}

/* parse must fail with a message holding `why` */
static void refused(const unsigned char *b, size_t len, const char *why, const char *what)
{
    Checkpoint c;
    char err[256] = "";
    int rc = checkpoint_parse(b, len, &c, err, sizeof err);
    CHECK(rc < 0, "%s: accepted", what);
    if (rc == 0) checkpoint_free(&c);
    else CHECK(strstr(err, why) != NULL, "%s: '%s' lacks '%s'", what, err, why);
}

static void set_crc(unsigned char *b, size_t len)
{
    uLong crc = crc32(crc32(0L, Z_NULL, 0), b, (uInt)(len - 4));
    for (int k = 0; k < 4; k++) b[len - 4 + k] = (unsigned char)(crc >> (8 * k));
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static void test_hostile(void)
{
    size_t len = 0;
    unsigned char *b = file_bytes(&len);
    CHECK(b != NULL, "no file to damage");
    if (!b) return;
    Checkpoint c;
    char err[256];
    CHECK(checkpoint_parse(b, len, &c, err, sizeof err) == 0, "the intact file: %s", err);
    checkpoint_free(&c);

    /* every truncation */
    int bad = 0;
    for (size_t n = 8; n < len; n++) {
        err[0] = '\0';
        if (checkpoint_parse(b, n, &c, err, sizeof err) == 0) {
            checkpoint_free(&c);
            bad++;
        } else if (!strstr(err, "truncated")) {
            bad++;
        }
    }
    CHECK(bad == 0, "%d of %zu truncations not refused as truncated", bad, len - 8);
    refused(b, 0, "empty", "an empty file");
    refused(b, 5, "truncated", "5 bytes");

    /* every byte changed */
    unsigned char *d = malloc(len + 16);
    bad = 0;
    for (size_t k = 0; k < len; k++) {
        memcpy(d, b, len);
        d[k] ^= (unsigned char)(1u << (k % 8));
        if (checkpoint_parse(d, len, &c, err, sizeof err) == 0) {
            checkpoint_free(&c);
            bad++;
        }
    }
    CHECK(bad == 0, "%d of %zu one-bit changes accepted", bad, len);
    memcpy(d, b, len);
    d[len / 2] ^= 0x10;
    refused(d, len, "checksum", "a flipped bit in the fields");
    memcpy(d, b, len);
    d[0] = 'X';
    refused(d, len, "not a smokemorph checkpoint", "bad magic");
    refused((const unsigned char *)"\x89PNG\r\n\x1a\n and more", 20, "not a smokemorph checkpoint",
            "a PNG");
    memcpy(d, b, len);
    put32(d + 8, 2);
    refused(d, len, "version 2", "version 2");
    memcpy(d, b, len);
    memset(d + len, 0, 16);
    refused(d, len + 16, "trailing", "trailing bytes");

    /* crafted: the checksum made valid again */
    struct {
        size_t at;
        uint32_t v;
        const char *why, *what;
    } craft[] = {
        {24, 0, "grid", "w = 0"},
        {28, 0x7fffffff, "grid", "h = 2^31-1"},
        {24, 16385, "grid", "w past the limit"},
        {32, 2, "grid", "d = 2"},
        {36, 9, "layout", "nine fields"},
        {112, 3, "layout", "three parameters"},
        {40, 0x78787878, "backend", "an unknown backend"},
        {84, 0, "range", "every 0"},
        {80, 4, "range", "an unknown flag"},
        {76, 0x7fc00000, "range", "dscale NaN"},
        {124, 0x7ff80000, "parameter dt", "dt NaN"},
        {120 + 8 * 5 + 4, 0x3ff80000, "parameter jacobi", "jacobi 1.5"},
        {120 + 8 * 10 + 4, 0x40000000, "parameter gather", "gather 2"},
        {120 + 4, 0x40240000, "--dt", "dt 10"},
    };
    for (size_t k = 0; k < sizeof craft / sizeof craft[0]; k++) {
        memcpy(d, b, len);
        put32(d + craft[k].at, craft[k].v);
        set_crc(d, len);
        refused(d, len, craft[k].why, craft[k].what);
    }
    /* a grid that disagrees with the size, or one too large to allocate */
    memcpy(d, b, len);
    put32(d + 24, 9);
    set_crc(d, len);
    refused(d, len, "bytes for a 9x8 grid", "w changed");
    memcpy(d, b, len);
    put32(d + 24, 16384);
    put32(d + 28, 16384);
    set_crc(d, len);
    refused(d, len, "grid", "16384x16384 (2^28 cells)");
    free(d);
    free(b);

    char path[128];
    snprintf(path, sizeof path, "%s/nonexistent.smc", g_tmp);
    CHECK(checkpoint_read(path, &c, err, sizeof err) < 0 && strstr(err, path) &&
              strstr(err, "No such file"),
          "a missing file: %s", err);
    CHECK(checkpoint_read(g_tmp, &c, err, sizeof err) < 0 && strstr(err, "directory"),
          "a directory: %s", err);
}

/* A write that fails halfway (the file size limit) keeps the old file and
 * leaves no temporary; so does one into a missing directory. */
static void test_write_fails(void)
{
    Checkpoint c;
    CHECK(make(&c, 64, 64) == 0, "alloc");
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/w.smc", g_tmp);
    CHECK(testlib_write_file(path, "old", 3) == 0, "the old file");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 10000;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    int rc = checkpoint_write(path, &c, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(rc < 0 && strstr(err, path) && strstr(err, "too large"), "over the size limit: %d %s", rc,
          err);
    char text[16];
    CHECK(strcmp(testlib_read_text(path, text, sizeof text), "old") == 0, "the old file changed");
    int ntmp = 0;
    testlib_count_entries(g_tmp, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files left", ntmp);
    snprintf(path, sizeof path, "%s/no/such/dir/w.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) < 0 && strstr(err, path) &&
              strstr(err, "No such file"),
          "a missing directory: %s", err);
    checkpoint_free(&c);
}

/* Every parameter is in the table once: setting member k through it
 * changes exactly one member, a different one each time. */
static void test_param_table(void)
{
    SolverParams seen[METHOD_PARAM_COUNT];
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) {
        SolverParams p;
        method_params_default(&p);
        double v = method_param_info[k].kind == 'b' ? (method_param_get(&p, k) ? 0.0 : 1.0)
                   : method_param_info[k].kind == 'e' ? 1.0 - method_param_get(&p, k)
                                                      : method_param_get(&p, k) + 3.0;
        if (method_param_info[k].kind == 'f') v = (double)(float)v;
        method_param_set(&p, k, v);
        CHECK(method_param_get(&p, k) == v, "%s: set %g, got %g", method_param_info[k].name, v,
              method_param_get(&p, k));
        seen[k] = p;
        for (int j = 0; j < k; j++)
            CHECK(memcmp(&seen[j], &p, sizeof p) != 0, "%s and %s are the same member",
                  method_param_info[j].name, method_param_info[k].name);
        SolverParams d;
        method_params_default(&d);
        int diffs = 0;
        for (int j = 0; j < METHOD_PARAM_COUNT; j++)
            diffs += method_param_get(&d, j) != method_param_get(&p, j);
        CHECK(diffs == 1, "setting %s changed %d members", method_param_info[k].name, diffs);
    }
    /* the table's members fill the struct (no member left out) */
    size_t bytes = 0;
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) bytes += method_param_info[k].kind == 'b' ? 1 : 4;
    CHECK(bytes + 3 == sizeof(SolverParams), "the table covers %zu bytes of SolverParams' %zu",
          bytes + 3, sizeof(SolverParams));
}

/* ---- resuming a morph ----------------------------------------------------------- */

#define RW 40
#define RH 32

static void shapes(float *start, float *target)
{
    static const TestlibShape dom = {.domain = true, .width = 0.03};
    memset(start, 0, sizeof(float) * RW * RH);
    memset(target, 0, sizeof(float) * RW * RH);
    testlib_disc(start, RW, RH, &dom, 0.35, 0.4, 0.2, 1.0);
    testlib_box(target, RW, RH, &dom, 0.8, 0.6, 0.15, 0.2, 1.0);
}

/* Run `steps`, checkpoint through a file, run `more` on the original and on
 * a fresh morph (made from other images) given the file's state; the two
 * densities must be equal bit for bit. drop >= 0 zeroes that field of the
 * loaded state first: then they must differ (the field matters). */
static void resume_case(MorphBackend be, const char *shader_dir, int drop)
{
    static float start[RW * RH], target[RW * RH], other[RW * RH];
    shapes(start, target);
    fill(other, RW * RH, 3);
    for (int k = 0; k < RW * RH; k++) other[k] = fabsf(other[k]) + 0.1f;
    char err[512];
    SolverParams p;
    method_params_default(&p);
    p.vg = 2.0f; /* a gathering strong enough that its warm start matters (a·D ~ 1) */
    Morph *a = morph_create(RW, RH, &p, start, target, true, be, shader_dir, err, sizeof err);
    CHECK(a != NULL, "%s: %s", morph_backend_name(be), err);
    if (!a) return;
    SolverParams q = p;
    q.vf = 0.9f; /* the checkpoint's parameters must win */
    Morph *b = morph_create(RW, RH, &q, other, other, false, be, shader_dir, err, sizeof err);
    CHECK(b != NULL, "%s: %s", morph_backend_name(be), err);
    Checkpoint c, r;
    CHECK(checkpoint_alloc(&c, RW, RH) == 0, "alloc");
    for (int k = 0; k < 25; k++) morph_step(a);
    CHECK(morph_get_state(a, &c.state) == 0, "get state");
    snprintf(c.backend, sizeof c.backend, "%s", morph_backend_name(be));
    c.run_every = 1;
    char path[128];
    snprintf(path, sizeof path, "%s/r.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) == 0, "write: %s", err);
    int rc = checkpoint_read(path, &r, err, sizeof err);
    CHECK(rc == 0, "read: %s", err);
    if (rc == 0 && b) {
        if (drop >= 0) memset(r.state.solver.field[drop], 0, sizeof(float) * RW * RH);
        CHECK(morph_set_state(b, &r.state) == 0, "set state");
        CHECK(morph_step_count(b) == 25, "step count %ld", morph_step_count(b));
        CHECK(morph_params(b)->vf == p.vf, "the parameters were not restored");
        CHECK(memcmp(morph_start(b), start, sizeof start) == 0, "the start image was not restored");
        for (int k = 0; k < 15; k++) {
            morph_step(a);
            morph_step(b);
        }
        static float ra[RW * RH], rb[RW * RH];
        morph_read_density(a, ra);
        morph_read_density(b, rb);
        bool eq = memcmp(ra, rb, sizeof ra) == 0;
        if (drop < 0)
            CHECK(eq, "%s: the resumed morph differs from the uninterrupted one",
                  morph_backend_name(be));
        else
            CHECK(!eq, "%s: without %s the resumed morph is still identical: the field is not needed?",
                  morph_backend_name(be), method_field_name((MethodField)drop));
    }
    checkpoint_free(&r);
    checkpoint_free(&c);
    morph_free(a);
    morph_free(b);
}

static void test_resume_cpu(void)
{
    resume_case(MORPH_CPU, NULL, -1);
    /* each warm start matters: the test above would see a missing one */
    int drops[] = {METHOD_FIELD_PRESSURE, METHOD_FIELD_POTENTIAL, METHOD_FIELD_GATHER_E,
                   METHOD_FIELD_TARGET_BLUR, METHOD_FIELD_VEL_U};
    for (size_t k = 0; k < sizeof drops / sizeof drops[0]; k++) resume_case(MORPH_CPU, NULL, drops[k]);
}

static void test_resume_gpu(void)
{
    char err[512], dir[PATH_MAX];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) {
        printf("SKIP test_resume_gpu: no headless GL context: %s\n", err);
        return;
    }
    if (shader_find_dir(NULL, testlib_bin(), dir, sizeof dir, err, sizeof err) < 0) {
        CHECK(0, "shader dir: %s", err);
        glctx_destroy(ctx);
        return;
    }
    resume_case(MORPH_FRAGMENT, dir, -1);
    resume_case(MORPH_FRAGMENT, dir, METHOD_FIELD_PRESSURE);
    if (shader_compute_available()) {
        resume_case(MORPH_COMPUTE, dir, -1);
        resume_case(MORPH_COMPUTE, dir, METHOD_FIELD_GATHER_E);
    } else {
        printf("SKIP test_resume_gpu compute: no OpenGL 4.3\n");
    }
    glctx_destroy(ctx);
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/test_checkpoint.XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_round_trip);
    RUN(test_hostile);
    RUN(test_write_fails);
    RUN(test_param_table);
    RUN(test_resume_cpu);
    RUN(test_resume_gpu);
    testlib_rm_rf(g_tmp);
    return check_done();
}
