/* test_checkpoint: the checkpoint file (src/checkpoint.c) and the morph's
 * state (morph_get_state / morph_set_state) on every backend.
 *   - a written file reads back bit for bit, header (the schedule's block
 *     of version 2 too) and fields; a version 1 file (no schedule) still reads;
 *   - a schedule's morph (3 keys, sources) stopped inside a key's range or
 *     exactly at a key's step and resumed from a file steps on exactly as the
 *     uninterrupted one (CPU; fragment and compute headless), and a morph
 *     with another schedule refuses the state;
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
#include <glob.h>
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
    c->state.nkeys = 3;
    c->state.key = 2;
    c->state.key_every = 20;
    c->state.last_key_step = 60;
    c->state.schedule_sum = 0xfedcba9876543210ull;
    c->state.mass_now = 123.25;
    c->state.key_mass = 130.5;
    c->state.tmass = 130.4375;
    return 0;
}

static bool same(Checkpoint *a, Checkpoint *b)
{
    if (a->w != b->w || a->h != b->h || strcmp(a->backend, b->backend) ||
        !method_params_equal(&a->state.params, &b->state.params) || /* not memcmp: padding */
        a->state.mass_match != b->state.mass_match || a->state.steps != b->state.steps ||
        a->state.solver.nstep != b->state.solver.nstep ||
        a->state.solver.pot_c != b->state.solver.pot_c ||
        a->state.solver.dscale != b->state.solver.dscale || a->run_steps != b->run_steps ||
        a->run_every != b->run_every || a->settle_started != b->settle_started ||
        a->settle_best != b->settle_best || a->settle_best_step != b->settle_best_step ||
        a->state.nkeys != b->state.nkeys || a->state.key != b->state.key ||
        a->state.key_every != b->state.key_every || a->state.last_key_step != b->state.last_key_step ||
        a->state.schedule_sum != b->state.schedule_sum || a->state.mass_now != b->state.mass_now ||
        a->state.key_mass != b->state.key_mass || a->state.tmass != b->state.tmass)
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
    CHECK(stat(path, &st) == 0 && st.st_size == 120 + 8 * METHOD_PARAM_COUNT + 64 +
                                                    CHECKPOINT_NFIELDS * 13 * 7 * 4 + 4,
          "file size %lld", (long long)st.st_size);
    int ntmp = 0;
    testlib_count_entries(g_tmp, ".tmp", &ntmp);
    CHECK(ntmp == 0, "%d temporary files left", ntmp);
    if (rc == 0) CHECK(r.version == 3 && r.nfields == 1 && !r.scene, "version %d, %d fields", r.version,
                       r.nfields);
    checkpoint_free(&r);
    /* no schedule: the block is all 0 and reads back as none */
    c.state.nkeys = c.state.key = 0;
    c.state.key_every = c.state.last_key_step = 0;
    c.state.schedule_sum = 0;
    c.state.mass_now = c.state.key_mass = c.state.tmass = 0.0;
    CHECK(checkpoint_write(path, &c, err, sizeof err) == 0, "write: %s", err);
    rc = checkpoint_read(path, &r, err, sizeof err);
    CHECK(rc == 0 && same(&c, &r), "no schedule: read %d (%s), or it differs", rc, err);
    if (rc == 0) checkpoint_free(&r);
    checkpoint_free(&c);
}

#define SCHED (120 + 8 * METHOD_PARAM_COUNT) /* the schedule's block in version 2 */

static void set_crc(unsigned char *b, size_t len);
static void put32(unsigned char *p, uint32_t v);
static void refused(const unsigned char *b, size_t len, const char *why, const char *what);

/* A checkpoint C of w x h written to g_tmp/NAME and read back: its bytes,
 * their count in *len; NULL (C freed) when that fails. */
static unsigned char *written(Checkpoint *c, int w, int h, const char *name, size_t *len)
{
    CHECK(make(c, w, h) == 0, "alloc");
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    CHECK(checkpoint_write(path, c, err, sizeof err) == 0, "write: %s", err);
    *len = 0;
    unsigned char *b = (unsigned char *)testlib_read_file(path, len);
    CHECK(b && *len > SCHED + 64, "read back");
    if (!b) checkpoint_free(c);
    return b;
}

/* B, its CRC set anew, parsed into R: true, or false with a failed CHECK
 * that names WHAT. */
static bool accepted(unsigned char *b, size_t len, Checkpoint *r, const char *what)
{
    char err[512];
    set_crc(b, len);
    int rc = checkpoint_parse(b, len, r, err, sizeof err);
    CHECK(rc == 0, "%s: %s", what, err);
    return rc == 0;
}

/* Version 1 (before schedules) is version 2 without the schedule's block:
 * made from a written file, it reads with everything but the schedule. */
static void test_version1(void)
{
    Checkpoint c, r;
    size_t len;
    unsigned char *b = written(&c, 6, 5, "v1.smc", &len);
    if (!b) return;
    memmove(b + SCHED, b + SCHED + 64, len - SCHED - 64);
    len -= 64;
    put32(b + 8, 1);
    put32(b + 116, 0); /* version 3's field count */
    put32(b + 12, SCHED);
    put32(b + 16, (uint32_t)len);
    if (accepted(b, len, &r, "version 1")) {
        c.state.nkeys = c.state.key = 0;
        c.state.key_every = c.state.last_key_step = 0;
        c.state.schedule_sum = 0;
        c.state.mass_now = c.state.key_mass = c.state.tmass = 0.0;
        CHECK(r.version == 1 && same(&c, &r), "version 1 read differently (version %d)", r.version);
        checkpoint_free(&r);
    }
    /* and version 1's layout under version 2's number is refused */
    put32(b + 8, 2);
    set_crc(b, len);
    refused(b, len, "layout", "a version 1 layout that says version 2");
    free(b);
    checkpoint_free(&c);
}

/* A checkpoint from a smokemorph with fewer method parameters (each new
 * setting of the method adds one: --pace 22, --gather-from 23) is refused
 * with what to do, not as damaged; more than this one knows is a layout it
 * cannot read. */
static void test_older_params(void)
{
    Checkpoint c;
    size_t len;
    unsigned char *b = written(&c, 6, 5, "older.smc", &len);
    if (!b) return;
    put32(b + 112, METHOD_PARAM_COUNT - 1);
    set_crc(b, len);
    refused(b, len, "older smokemorph", "one parameter fewer");
    put32(b + 112, METHOD_PARAM_COUNT + 1);
    set_crc(b, len);
    refused(b, len, "layout", "one parameter more");
    free(b);
    checkpoint_free(&c);
}

/* Version 2 (one field) is version 3 of one field with 0 at offset 116. */
static void test_version2(void)
{
    Checkpoint c, r;
    size_t len;
    unsigned char *b = written(&c, 5, 4, "v2.smc", &len);
    if (!b) return;
    put32(b + 8, 2);
    put32(b + 116, 0);
    if (accepted(b, len, &r, "version 2")) {
        CHECK(r.version == 2 && r.nfields == 1 && !r.scene && same(&c, &r),
              "version 2 read differently (version %d, %d fields)", r.version, r.nfields);
        checkpoint_free(&r);
    }
    put32(b + 116, 1); /* version 3's field count under version 2 */
    set_crc(b, len);
    refused(b, len, "layout", "version 2 with a field count");
    free(b);
    checkpoint_free(&c);
}

/* Several smoke fields (a scene's): each field's numbers and arrays come
 * back as written; the size grows by a block and the arrays a field. */
static void test_fields(void)
{
    enum { W = 7, H = 5, NF = 3 };
    Checkpoint c, one, r;
    CHECK(make(&one, W, H) == 0 && checkpoint_alloc_fields(&c, W, H, NF) == 0, "alloc");
    for (int i = 0; i < NF; i++) {
        MorphState *s = checkpoint_field(&c, i), *t = &one.state;
        float *keep[CHECKPOINT_NFIELDS];
        for (int k = 0; k < METHOD_FIELD_COUNT; k++) keep[k] = s->solver.field[k];
        keep[METHOD_FIELD_COUNT] = s->start;
        keep[METHOD_FIELD_COUNT + 1] = s->target;
        *s = *t;
        for (int k = 0; k < METHOD_FIELD_COUNT; k++) s->solver.field[k] = keep[k];
        s->start = keep[METHOD_FIELD_COUNT];
        s->target = keep[METHOD_FIELD_COUNT + 1];
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++) fill(keep[k], W * H, 100u * (unsigned)i + (unsigned)k);
        s->params.vf = 0.1f * (float)(i + 1);
        s->solver.nstep = 40 + i;
        s->solver.pot_c = 0.5f * (float)i;
        s->mass_match = i != 1;
        if (i == 2) { /* no schedule */
            s->nkeys = s->key = 0;
            s->key_every = s->last_key_step = 0;
            s->schedule_sum = 0;
            s->mass_now = s->key_mass = s->tmass = 0.0;
        } else {
            s->schedule_sum += (unsigned)i;
        }
    }
    snprintf(c.backend, sizeof c.backend, "cpu");
    c.run_steps = 90;
    c.run_every = 3;
    c.scene = true;
    checkpoint_free(&one);
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/fields.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) == 0, "write: %s", err);
    struct stat st;
    long block = 96 + 8 * METHOD_PARAM_COUNT;
    CHECK(stat(path, &st) == 0 && st.st_size == SCHED + 64 + (NF - 1) * block +
                                                    NF * CHECKPOINT_NFIELDS * W * H * 4 + 4,
          "file size %lld", (long long)st.st_size);
    int rc = checkpoint_read(path, &r, err, sizeof err);
    CHECK(rc == 0, "read: %s", err);
    if (rc == 0) {
        CHECK(r.nfields == NF && r.scene && r.version == 3 && r.run_every == 3, "%d fields", r.nfields);
        int bad = 0;
        for (int i = 0; i < NF && r.nfields == NF; i++) {
            MorphState *a = checkpoint_field(&c, i), *b = checkpoint_field(&r, i);
            if (memcmp(&a->params, &b->params, sizeof a->params) || a->mass_match != b->mass_match ||
                a->steps != b->steps || a->solver.nstep != b->solver.nstep ||
                a->solver.pot_c != b->solver.pot_c || a->solver.dscale != b->solver.dscale ||
                a->nkeys != b->nkeys || a->key != b->key || a->key_every != b->key_every ||
                a->last_key_step != b->last_key_step || a->schedule_sum != b->schedule_sum ||
                a->mass_now != b->mass_now || a->key_mass != b->key_mass || a->tmass != b->tmass)
                bad++;
            for (int k = 0; k < METHOD_FIELD_COUNT; k++)
                if (memcmp(a->solver.field[k], b->solver.field[k], W * H * sizeof(float))) bad++;
            if (memcmp(a->start, b->start, W * H * sizeof(float)) ||
                memcmp(a->target, b->target, W * H * sizeof(float)))
                bad++;
        }
        CHECK(bad == 0, "%d differences in the fields read back", bad);
        checkpoint_free(&r);
    }
    /* crafted: a field's block out of range, the checksum made valid */
    size_t len = 0;
    unsigned char *b = (unsigned char *)testlib_read_file(path, &len);
    CHECK(b != NULL, "read back");
    if (b) {
        unsigned char *d = malloc(len);
        size_t f1 = SCHED + 64, f2 = f1 + (size_t)block;
        struct {
            size_t at;
            uint32_t v;
            const char *why, *what;
        } craft[] = {
            {f1, 5, "smoke field 2", "field 2 at another step"},
            {f2 + 12, 0x80000000u, "smoke field 3", "a negative clock"},
            {f1 + 24, 2, "smoke field 2", "an unknown field flag"},
            {f1 + 28, 1, "smoke field 2", "the reserved word"},
            {f2 + 20, 0x7fc00000, "smoke field 3", "dscale NaN"},
            {f1 + 32 + 4, 0x7ff80000, "parameter dt", "field 2's dt NaN"},
            {f1 + 32 + 8 * METHOD_PARAM_COUNT + 4, 4, "schedule", "field 2's key 4 of 3"},
            {f2 + 32 + 8 * METHOD_PARAM_COUNT + 24, 1, "0 keys", "field 3: no keys but a sum"},
            {116, 2, "layout", "2 fields in a file of 3"},
            {116, 4, "layout", "4 fields in a file of 3"},
        };
        for (size_t k = 0; d && k < sizeof craft / sizeof craft[0]; k++) {
            memcpy(d, b, len);
            put32(d + craft[k].at, craft[k].v);
            set_crc(d, len);
            refused(d, len, craft[k].why, craft[k].what);
        }
        /* every truncation and one-bit change refused */
        int bad = 0;
        for (size_t n = 8; n < len; n++)
            if (checkpoint_parse(b, n, &r, err, sizeof err) == 0) {
                checkpoint_free(&r);
                bad++;
            }
        for (size_t k = 0; d && k < len; k += 3) {
            memcpy(d, b, len);
            d[k] ^= (unsigned char)(1u << (k % 8));
            if (checkpoint_parse(d, len, &r, err, sizeof err) == 0) {
                checkpoint_free(&r);
                bad++;
            }
        }
        CHECK(bad == 0, "%d damaged files of 3 fields accepted", bad);
        free(d);
        free(b);
    }
    /* more fields than a checkpoint holds: refused, nothing written */
    c.nfields = CHECKPOINT_MAX_FIELDS + 1;
    snprintf(path, sizeof path, "%s/five.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) < 0 && strstr(err, "smoke fields"), "5 fields: %s",
          err);
    c.nfields = NF;
    CHECK(checkpoint_alloc_fields(&r, W, H, 0) < 0 && checkpoint_alloc_fields(&r, W, H, 5) < 0,
          "0 or 5 fields allocated");
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
    put32(d + 8, 4);
    refused(d, len, "version 4", "version 4");
    memcpy(d, b, len);
    put32(d + 8, 0);
    refused(d, len, "version 0", "version 0");
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
        {112, 3, "older smokemorph", "three parameters"}, {112, 1000, "layout", "a thousand parameters"},
        {40, 0x78787878, "backend", "an unknown backend"},
        {84, 0, "range", "every 0"},
        {80, 8, "range", "an unknown flag"},
        {116, 0, "smoke fields", "0 smoke fields"},
        {116, 5, "smoke fields", "5 smoke fields"},
        {116, 2, "layout", "2 smoke fields in one field's layout"},
        {76, 0x7fc00000, "range", "dscale NaN"},
        {124, 0x7ff80000, "parameter dt", "dt NaN"},
        {120 + 8 * 5 + 4, 0x3ff80000, "parameter jacobi", "jacobi 1.5"},
        {120 + 8 * 10 + 4, 0x40000000, "parameter gather", "gather 2"},
        {120 + 4, 0x40240000, "--dt", "dt 10"},
        /* the schedule (make: 3 keys, key 2, 20 apart, the last at 60) */
        {SCHED + 4, 0, "schedule", "key 0"},
        {SCHED + 4, 4, "schedule", "key 4 of 3"},
        {SCHED, 2000000, "schedule", "two million keys"},
        {SCHED + 8, 21, "schedule", "keys 21 apart, the last at 60"},
        {SCHED + 12, 0x80000000u, "schedule", "a negative spacing"},
        {SCHED + 16, 2, "schedule", "the last key at step 2 of 3 keys"},
        {SCHED + 20, 0x80000000u, "schedule", "a negative last step"},
        {SCHED + 36, 0x7ff00000, "schedule", "mass_now infinite"},
        {SCHED + 44, 0x7ff80000, "schedule", "key_mass NaN"},
        {SCHED + 52, 0xfff00000, "schedule", "tmass -inf"},
        {SCHED + 56, 1, "layout", "the reserved bytes"},
        {SCHED, 0, "0 keys", "0 keys and the rest set"},
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
    /* the table's members fill the struct (no member left out) but for the
     * `set` bits (which members are 0 on purpose: not a value to keep, a
     * resolved struct has them all) */
    size_t bytes = sizeof(((SolverParams *)0)->set);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) bytes += method_param_info[k].kind == 'b' ? 1 : 4;
    size_t al = _Alignof(SolverParams); /* the struct's tail padding, up to its alignment */
    CHECK((bytes + al - 1) / al * al == sizeof(SolverParams), "the table covers %zu bytes of SolverParams' %zu",
          bytes, sizeof(SolverParams));
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
    /* an arrival soon, so the gathering runs before the checkpoint at step 24
     * (it joins at 30-70% of the way) and the resumed morph needs the arrival's clock too;
     * step 24 is inside the coarse start (method_sigma), whose next width,
     * a step or two later, blurs the target again: a dropped target blur
     * shows in the steps before it, and the resumed morph must make that
     * switch as well */
    p.arrive = 0.3f;
    Morph *a = morph_create(RW, RH, &p, start, target, true, be, shader_dir, err, sizeof err);
    CHECK(a != NULL, "%s: %s", morph_backend_name(be), err);
    if (!a) return;
    SolverParams q = p;
    q.vf = 0.9f; /* the checkpoint's parameters must win */
    Morph *b = morph_create(RW, RH, &q, other, other, false, be, shader_dir, err, sizeof err);
    CHECK(b != NULL, "%s: %s", morph_backend_name(be), err);
    Checkpoint c, r;
    CHECK(checkpoint_alloc(&c, RW, RH) == 0, "alloc");
    for (int k = 0; k < 24; k++) morph_step(a);
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
        CHECK(morph_step_count(b) == 24, "step count %ld", morph_step_count(b));
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

/* ---- resuming a schedule --------------------------------------------------------- */

/* A 3-key schedule (keys at steps 10, 20, 30; key 2 its own parameters and
 * moving), with sources (an image across keys 1 and 2, a disc in keys 2 and
 * 3) when `sources`. */
static Morph *sched_morph(MorphBackend be, const char *shader_dir, bool sources, bool other)
{
    static float start[RW * RH], k1[RW * RH], k2[RW * RH], k3[RW * RH], puff[RW * RH];
    static const TestlibShape dom = {.domain = true, .width = 0.03};
    shapes(start, k1);
    memset(k2, 0, sizeof k2);
    memset(k3, 0, sizeof k3);
    memset(puff, 0, sizeof puff);
    testlib_disc(k2, RW, RH, &dom, 0.6, 0.45, 0.25, 1.0);
    testlib_box(k3, RW, RH, &dom, 0.5, 0.5, 0.3, 0.1, 1.0);
    testlib_disc(puff, RW, RH, &dom, 0.3, 0.7, 0.1, 1.0);
    if (other) k3[RW * RH / 2 + 3] += 0.5f; /* another key 3 */
    char err[512] = "";
    SolverParams p;
    method_params_default(&p);
    p.vg = 2.0f;
    Morph *m = morph_create(RW, RH, &p, start, k1, true, be, shader_dir, err, sizeof err);
    CHECK(m != NULL, "%s: %s", morph_backend_name(be), err);
    if (!m) return NULL;
    SolverParams p2 = p;
    p2.vf = p.vf * 1.5f;
    MorphKey keys[3] = {{.step = 10, .target = k1},
                        {.step = 20, .target = k2, .params = &p2, .move_from = {0.1f, -0.05f},
                         .move_to = {-0.05f, 0.05f}, .scale_from = 0.8f, .scale_to = 1.1f},
                        {.step = 30, .target = k3}};
    MorphSource src[2] = {{.image = puff, .rate = 2.0f, .from = 3, .to = 16},
                          {.cx = 0.75f, .cy = 0.3f, .radius = 0.1f, .rate = 1.5f, .from = 12, .to = 27}};
    if (morph_set_schedule(m, keys, 3, src, sources ? 2 : 0, err, sizeof err) < 0) {
        CHECK(0, "%s: set_schedule: %s", morph_backend_name(be), err);
        morph_free(m);
        return NULL;
    }
    return m;
}

/* Run the schedule `stop` steps, checkpoint through a file, and go on to
 * step 36 on it and on a fresh morph of the same schedule given the file's
 * state: the densities and metrics equal bit for bit at every step. */
static void sched_resume_case(MorphBackend be, const char *shader_dir, long stop, bool sources)
{
    const char *name = morph_backend_name(be);
    Morph *a = sched_morph(be, shader_dir, sources, false), *b = sched_morph(be, shader_dir, sources, false);
    Checkpoint c = {0}, r = {0};
    if (!a || !b) goto done;
    CHECK(checkpoint_alloc(&c, RW, RH) == 0, "alloc");
    for (long k = 0; k < stop; k++) CHECK(morph_step(a) == 0, "%s: step %ld", name, k + 1);
    CHECK(morph_get_state(a, &c.state) == 0, "get state");
    CHECK(c.state.nkeys == 3 && c.state.key == morph_key(a) && c.state.last_key_step == 30 &&
              c.state.key_every == 0 && c.state.schedule_sum == morph_schedule_sum(a) &&
              c.state.schedule_sum != 0,
          "%s: the state's schedule", name);
    snprintf(c.backend, sizeof c.backend, "%s", name);
    c.run_every = 1;
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/s.smc", g_tmp);
    CHECK(checkpoint_write(path, &c, err, sizeof err) == 0, "write: %s", err);
    if (checkpoint_read(path, &r, err, sizeof err) < 0) {
        CHECK(0, "read: %s", err);
        goto done;
    }
    CHECK(morph_set_state(b, &r.state) == 0, "%s: set state at step %ld", name, stop);
    CHECK(morph_key(b) == morph_key(a) && morph_step_count(b) == stop, "%s: key %d step %ld", name,
          morph_key(b), morph_step_count(b));
    static float ra[RW * RH], rb[RW * RH];
    int bad = 0;
    for (long k = stop + 1; k <= 36; k++) {
        morph_step(a);
        morph_step(b);
        double ma, mb, ea, eb;
        morph_observe(a, ra, &ma, &ea, NULL);
        morph_observe(b, rb, &mb, &eb, NULL);
        if (memcmp(ra, rb, sizeof ra) || ma != mb || ea != eb || morph_key(a) != morph_key(b)) {
            if (!bad) printf("  %s, stopped at %ld: step %ld differs (error %.9g vs %.9g)\n", name, stop,
                             k, ea, eb);
            bad++;
        }
    }
    CHECK(bad == 0, "%s%s: resumed at step %ld, %d steps differ from the uninterrupted run", name,
          sources ? " with sources" : "", stop, bad);
done:
    checkpoint_free(&r);
    checkpoint_free(&c);
    morph_free(a);
    morph_free(b);
}

/* A state refused by a morph of another schedule, or none, and the reverse. */
static void sched_refusals(void)
{
    Morph *a = sched_morph(MORPH_CPU, NULL, true, false), *b = sched_morph(MORPH_CPU, NULL, false, false),
          *o = sched_morph(MORPH_CPU, NULL, true, true);
    Checkpoint c = {0}, n = {0};
    char why[160];
    if (!a || !b || !o || checkpoint_alloc(&c, RW, RH) < 0 || checkpoint_alloc(&n, RW, RH) < 0) {
        CHECK(0, "setup");
        goto done;
    }
    for (int k = 0; k < 14; k++) morph_step(a);
    morph_get_state(a, &c.state);
    CHECK(morph_state_schedule_check(b, &c.state, why, sizeof why) && strstr(why, "sources"),
          "without the sources: %s", why);
    CHECK(morph_state_schedule_check(o, &c.state, why, sizeof why) && strstr(why, "images"),
          "another key 3: %s", why);
    CHECK(morph_set_state(o, &c.state) < 0 && morph_step_count(o) == 0, "another key 3 taken");
    static float img[RW * RH], tgt[RW * RH];
    shapes(img, tgt);
    SolverParams p;
    method_params_default(&p);
    char err[256];
    Morph *plain = morph_create(RW, RH, &p, img, tgt, true, MORPH_CPU, NULL, err, sizeof err);
    CHECK(plain && morph_set_state(plain, &c.state) < 0, "a morph without a schedule took one's state");
    if (plain) {
        morph_get_state(plain, &n.state);
        CHECK(n.state.nkeys == 0 && morph_schedule_sum(plain) == 0, "no schedule: nkeys %d", n.state.nkeys);
        CHECK(morph_state_schedule_check(a, &n.state, why, sizeof why) && strstr(why, "no schedule"),
              "a schedule's morph took a state without one: %s", why);
        c.state.nkeys = 2;
        CHECK(morph_state_schedule_check(a, &c.state, why, sizeof why) && strstr(why, "2 keys"), "2 keys: %s",
              why);
        c.state.nkeys = 3;
        c.state.last_key_step = 31;
        CHECK(morph_state_schedule_check(a, &c.state, why, sizeof why) && strstr(why, "step 31"),
              "last key 31: %s", why);
        c.state.last_key_step = 30;
        CHECK(morph_state_schedule_check(a, &c.state, why, sizeof why) == NULL, "the same: %s", why);
    }
    morph_free(plain);
done:
    checkpoint_free(&c);
    checkpoint_free(&n);
    morph_free(a);
    morph_free(b);
    morph_free(o);
}

static void test_resume_schedule_cpu(void)
{
    sched_resume_case(MORPH_CPU, NULL, 14, false); /* inside key 2 */
    sched_resume_case(MORPH_CPU, NULL, 20, false); /* exactly at key 2's step */
    sched_resume_case(MORPH_CPU, NULL, 14, true);  /* with sources, inside key 2 */
    sched_resume_case(MORPH_CPU, NULL, 10, true);  /* with sources, at key 1's step */
    sched_resume_case(MORPH_CPU, NULL, 24, true);  /* a still key with a source */
    sched_resume_case(MORPH_CPU, NULL, 33, true);  /* after the last key */
    sched_refusals();
}

static void test_resume_gpu(void)
{
    char err[512], dir[PATH_MAX];
    GlCtx *ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) {
        TESTLIB_NO_GL(3, 3, "test_resume_gpu: no headless GL context: %s", err);
        return;
    }
    if (shader_find_dir(NULL, testlib_bin(), dir, sizeof dir, err, sizeof err) < 0) {
        CHECK(0, "shader dir: %s", err);
        glctx_destroy(ctx);
        return;
    }
    resume_case(MORPH_FRAGMENT, dir, -1);
    resume_case(MORPH_FRAGMENT, dir, METHOD_FIELD_PRESSURE);
    sched_resume_case(MORPH_FRAGMENT, dir, 14, true);
    sched_resume_case(MORPH_FRAGMENT, dir, 20, true);
    if (shader_compute_available()) {
        resume_case(MORPH_COMPUTE, dir, -1);
        resume_case(MORPH_COMPUTE, dir, METHOD_FIELD_GATHER_E);
        sched_resume_case(MORPH_COMPUTE, dir, 14, true);
    } else {
        TESTLIB_NO_GL(4, 3, "test_resume_gpu compute: no OpenGL 4.3");
    }
    glctx_destroy(ctx);
}

/* The fuzzers' committed seeds (the .smc files of fuzz/corpus/checkpoint, run from the
 * repository root) are read as this smokemorph reads them: the current ones
 * accepted, so that mutations start past the header's checks (they had gone
 * stale at 28 of 34 parameters, every one refused as "older"); the older
 * versions' files (-v1.smc, and -v3.smc of 19 parameters) read, or refused
 * as an older smokemorph's. fuzz/corpus/step/ holds each after a 0 byte (fuzz_step's
 * "a checkpoint follows"). fuzz/add-params.py brings them up to date. */
static void test_fuzz_seeds(void)
{
    glob_t g;
    int n = 0;
    if (glob("fuzz/corpus/checkpoint/*.smc", 0, NULL, &g) != 0) {
        CHECK(0, "no fuzz/corpus/checkpoint/*.smc (run from the repository root)");
        return;
    }
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *path = g.gl_pathv[k], *base = strrchr(path, '/') + 1;
        bool older = strstr(base, "-v1.smc") || strstr(base, "-v3.smc");
        Checkpoint c;
        char err[512] = "";
        int rc = checkpoint_read(path, &c, err, sizeof err);
        if (older) /* an older version's file: read, or refused for its parameters only */
            CHECK(rc == 0 || strstr(err, "older smokemorph"), "%s: refused, and not as older: %s", base, err);
        else
            CHECK(rc == 0, "%s: refused: %s (run fuzz/add-params.py with the new parameters' values)", base, err);
        if (rc == 0) checkpoint_free(&c);
        size_t len = 0, slen = 0;
        unsigned char *b = (unsigned char *)testlib_read_file(path, &len);
        char spath[512];
        snprintf(spath, sizeof spath, "fuzz/corpus/step/%s", base);
        unsigned char *sb = (unsigned char *)testlib_read_file(spath, &slen);
        CHECK(b && sb && slen == len + 1 && sb[0] == 0 && memcmp(sb + 1, b, len) == 0,
              "%s: fuzz/corpus/step/%s is not a 0 byte and the same file", base, base);
        free(b);
        free(sb);
        n++;
    }
    globfree(&g);
    CHECK(n >= 5, "%d checkpoint seeds (7 committed)", n);
}

int main(void)
{
    testlib_tmpdir(g_tmp, sizeof g_tmp, "test_checkpoint");
    RUN(test_round_trip);
    RUN(test_version1);
    RUN(test_older_params);
    RUN(test_version2);
    RUN(test_fields);
    RUN(test_hostile);
    RUN(test_write_fails);
    RUN(test_param_table);
    RUN(test_fuzz_seeds);
    RUN(test_resume_cpu);
    RUN(test_resume_schedule_cpu);
    RUN(test_resume_gpu);
    testlib_rm_rf(g_tmp);
    return check_done();
}
