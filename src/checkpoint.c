/* checkpoint: the morph's whole state in one file; see checkpoint.h. */
#define _XOPEN_SOURCE 700
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER_FIXED 120
#define HEADER_SIZE_V1 (HEADER_FIXED + 8 * METHOD_PARAM_COUNT)
#define SCHEDULE_SIZE 64 /* version 2: the schedule's block after the parameters */
#define HEADER_SIZE (HEADER_SIZE_V1 + SCHEDULE_SIZE)
/* version 3: each further smoke field's block after the schedule */
#define FIELD_BLOCK (32 + 8 * METHOD_PARAM_COUNT + SCHEDULE_SIZE)
#define MAX_KEYS 1000000
#define FLAG_MASS_MATCH 1u
#define FLAG_SETTLE_STARTED 2u
#define FLAG_SCENE 4u /* version 3 */

static uint32_t header_size(int version, int nfields)
{
    if (version == 1) return HEADER_SIZE_V1;
    if (version == 2) return HEADER_SIZE;
    return HEADER_SIZE + (uint32_t)(nfields - 1) * FIELD_BLOCK;
}

/* ---- the arrays ----------------------------------------------------------- */

/* Field k of the file: the solver's fields, then the start and the target. */
static float **field_slot(MorphState *s, int k)
{
    if (k < METHOD_FIELD_COUNT) return &s->solver.field[k];
    return k == METHOD_FIELD_COUNT ? &s->start : &s->target;
}

MorphState *checkpoint_field(Checkpoint *c, int i)
{
    return i == 0 ? &c->state : &c->more[i - 1];
}

static const MorphState *field_const(const Checkpoint *c, int i)
{
    return i == 0 ? &c->state : &c->more[i - 1];
}

int checkpoint_alloc_fields(Checkpoint *c, int w, int h, int nfields)
{
    memset(c, 0, sizeof *c);
    c->nfields = 1;
    if (w < 1 || h < 1 || (long)w * h > CHECKPOINT_MAX_CELLS || nfields < 1 ||
        nfields > CHECKPOINT_MAX_FIELDS)
        return -1;
    c->w = w;
    c->h = h;
    c->nfields = nfields;
    size_t n = (size_t)w * h;
    for (int i = 0; i < nfields; i++)
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++)
            if (!(*field_slot(checkpoint_field(c, i), k) = malloc(n * sizeof(float)))) {
                checkpoint_free(c);
                return -1;
            }
    return 0;
}

int checkpoint_alloc(Checkpoint *c, int w, int h) { return checkpoint_alloc_fields(c, w, h, 1); }

void checkpoint_free(Checkpoint *c)
{
    if (!c) return;
    for (int i = 0; i < CHECKPOINT_MAX_FIELDS; i++)
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
            float **f = field_slot(checkpoint_field(c, i), k);
            free(*f);
            *f = NULL;
        }
}

/* ---- little-endian numbers ---------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put_f32(unsigned char *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(p, v);
}
static void put_f64(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(p, v);
}
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int k = 3; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}
static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}
static int32_t get_i32(const unsigned char *p)
{
    uint32_t u = get_u32(p);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}
static int64_t get_i64(const unsigned char *p)
{
    uint64_t u = get_u64(p);
    int64_t v;
    memcpy(&v, &u, 8);
    return v;
}
static float get_f32(const unsigned char *p)
{
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static double get_f64(const unsigned char *p)
{
    uint64_t u = get_u64(p);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* zlib's crc32 takes at most a uInt at a time */
static uLong crc_add(uLong crc, const unsigned char *p, size_t n)
{
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
}

static uint64_t file_size(uint32_t header, int w, int h, int nfields)
{
    return (uint64_t)header +
           (uint64_t)nfields * CHECKPOINT_NFIELDS * (uint64_t)w * (uint64_t)h * 4u + 4u;
}

/* ---- writing ------------------------------------------------------------------- */

/* A state's parameters (8 * nparams bytes) and schedule (SCHEDULE_SIZE
 * bytes, all 0 without one). */
static void put_params(unsigned char *p, const MorphState *s)
{
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) put_f64(p + 8 * k, method_param_get(&s->params, k));
}

static void put_schedule(unsigned char *q, const MorphState *s)
{
    memset(q, 0, SCHEDULE_SIZE);
    if (s->nkeys > 0) {
        put_u32(q, (uint32_t)s->nkeys);
        put_u32(q + 4, (uint32_t)s->key);
        put_u64(q + 8, (uint64_t)s->key_every);
        put_u64(q + 16, (uint64_t)s->last_key_step);
        put_u64(q + 24, (uint64_t)s->schedule_sum);
        put_f64(q + 32, s->mass_now);
        put_f64(q + 40, s->key_mass);
        put_f64(q + 48, s->tmass);
    }
}

/* The header: field 0's state in it, each further field's block after it. */
static void make_header(const Checkpoint *c, unsigned char *b, uint32_t hsize)
{
    int nf = c->nfields < 1 ? 1 : c->nfields;
    memset(b, 0, hsize);
    memcpy(b, CHECKPOINT_MAGIC, 8);
    put_u32(b + 8, CHECKPOINT_VERSION);
    put_u32(b + 12, hsize);
    put_u64(b + 16, file_size(hsize, c->w, c->h, nf));
    put_u32(b + 24, (uint32_t)c->w);
    put_u32(b + 28, (uint32_t)c->h);
    put_u32(b + 32, 1);
    put_u32(b + 36, CHECKPOINT_NFIELDS);
    memcpy(b + 40, c->backend, strnlen(c->backend, 15));
    const MorphState *s = &c->state;
    put_u64(b + 56, (uint64_t)s->steps);
    put_u64(b + 64, (uint64_t)s->solver.nstep);
    put_f32(b + 72, s->solver.pot_c);
    put_f32(b + 76, s->solver.dscale);
    put_u32(b + 80, (s->mass_match ? FLAG_MASS_MATCH : 0u) |
                        (c->settle_started ? FLAG_SETTLE_STARTED : 0u) | (c->scene ? FLAG_SCENE : 0u));
    put_u32(b + 84, (uint32_t)c->run_every);
    put_u64(b + 88, (uint64_t)c->run_steps);
    put_f64(b + 96, c->settle_best);
    put_u64(b + 104, (uint64_t)c->settle_best_step);
    put_u32(b + 112, METHOD_PARAM_COUNT);
    put_u32(b + 116, (uint32_t)nf);
    put_params(b + HEADER_FIXED, s);
    put_schedule(b + HEADER_SIZE_V1, s);
    for (int i = 1; i < nf; i++) {
        unsigned char *q = b + HEADER_SIZE + (size_t)(i - 1) * FIELD_BLOCK;
        const MorphState *f = field_const(c, i);
        put_u64(q, (uint64_t)f->steps);
        put_u64(q + 8, (uint64_t)f->solver.nstep);
        put_f32(q + 16, f->solver.pot_c);
        put_f32(q + 20, f->solver.dscale);
        put_u32(q + 24, f->mass_match ? FLAG_MASS_MATCH : 0u);
        put_params(q + 32, f);
        put_schedule(q + 32 + 8 * METHOD_PARAM_COUNT, f);
    }
}

/* Writes all n bytes; -1 with errno on error. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The fields and the checksum, through a buffer of little-endian floats. */
static int write_body(int fd, const Checkpoint *c, uLong crc)
{
    enum { CHUNK = 16384 };
    static unsigned char buf[4 * CHUNK];
    size_t n = (size_t)c->w * c->h;
    int nf = c->nfields < 1 ? 1 : c->nfields;
    for (int fi = 0; fi < nf; fi++)
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
            const float *f = *field_slot((MorphState *)field_const(c, fi), k);
            for (size_t i = 0; i < n; i += CHUNK) {
                size_t m = n - i < CHUNK ? n - i : CHUNK;
                for (size_t j = 0; j < m; j++) put_f32(buf + 4 * j, f[i + j]);
                crc = crc_add(crc, buf, 4 * m);
                if (write_all(fd, buf, 4 * m) < 0) return -1;
            }
        }
    unsigned char t[4];
    put_u32(t, (uint32_t)crc);
    return write_all(fd, t, 4);
}

/* fsync the directory holding path, so the rename itself is on the disk. */
static void sync_dir(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd); /* some file systems refuse a directory's fsync: nothing to do then */
    close(fd);
}

int checkpoint_write(const char *path, const Checkpoint *c, char *err, size_t errlen)
{
    static unsigned counter;
    if (c->nfields > CHECKPOINT_MAX_FIELDS) {
        snprintf(err, errlen, "cannot write %s: %d smoke fields, at most %d", path, c->nfields,
                 CHECKPOINT_MAX_FIELDS);
        return -1;
    }
    size_t tlen = strlen(path) + 64;
    char *tmp = malloc(tlen);
    if (!tmp) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        snprintf(tmp, tlen, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    unsigned char head[HEADER_SIZE + (CHECKPOINT_MAX_FIELDS - 1) * FIELD_BLOCK];
    int nf = c->nfields < 1 ? 1 : c->nfields;
    uint32_t hsize = header_size(CHECKPOINT_VERSION, nf);
    make_header(c, head, hsize);
    uLong crc = crc_add(crc32(0L, Z_NULL, 0), head, hsize);
    int rc = write_all(fd, head, hsize);
    if (rc == 0) rc = write_body(fd, c, crc);
    if (rc == 0) rc = fsync(fd);
    int e = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0) {
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", path, e == EFBIG ? "file too large" : strerror(e));
    } else {
        sync_dir(path);
    }
    free(tmp);
    return rc;
}

/* ---- reading -------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* A parameter as stored: a finite number that fits its kind. */
static bool param_fits(int k, double v)
{
    if (!isfinite(v)) return false;
    switch (method_param_info[k].kind) {
    case 'f': return fabs(v) <= 3.4e38;
    case 'b': return v == 0.0 || v == 1.0;
    case 'e': return v == SOLVER_FORCE_BALANCE || v == SOLVER_FORCE_FATTAL;
    default: return v == floor(v) && v >= INT_MIN && v <= INT_MAX;
    }
}

/* a count that fits a long, and is not negative */
static bool fits_long(int64_t v) { return v >= 0 && (uint64_t)v <= (uint64_t)LONG_MAX; }

/* A state's parameters as stored (8 * nparams bytes at p): each fits its
 * kind, and together they pass method_params_check. 0, or -1 with err. */
static int parse_params(const unsigned char *p, SolverParams *out, char *err, size_t errlen)
{
    method_params_default(out);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) {
        double v = get_f64(p + 8 * k);
        if (!param_fits(k, v))
            return fail(err, errlen, "corrupt header: parameter %s", method_param_info[k].name);
        method_param_set(out, k, v);
    }
    const char *why = method_params_check(out);
    if (why) return fail(err, errlen, "parameters out of range: %s", why);
    return 0;
}

/* A schedule's block (SCHEDULE_SIZE bytes at q) into s: all 0, or a key
 * count, the active key among them, steps that fit (keys at steps 1.. in
 * order: the last at nkeys or later; evenly spaced: nkeys * every), and
 * finite masses. 0, or -1 with err. */
static int parse_schedule(const unsigned char *q, uint32_t version, MorphState *s, char *err,
                          size_t errlen)
{
    uint32_t nkeys = get_u32(q), key = get_u32(q + 4);
    int64_t key_every = get_i64(q + 8), last_key = get_i64(q + 16);
    uint64_t sum = get_u64(q + 24);
    double mass_now = get_f64(q + 32), key_mass = get_f64(q + 40), tmass = get_f64(q + 48);
    for (int k = 56; k < SCHEDULE_SIZE; k++)
        if (q[k] != 0) return fail(err, errlen, "corrupt header: unexpected layout for version %u", version);
    if (nkeys == 0 && (key || key_every || last_key || sum || mass_now != 0.0 || key_mass != 0.0 ||
                       tmass != 0.0 || signbit(mass_now) || signbit(key_mass) || signbit(tmass)))
        return fail(err, errlen, "corrupt header: a schedule of 0 keys");
    if (nkeys > 0 &&
        (nkeys > MAX_KEYS || key < 1 || key > nkeys || !fits_long(key_every) || !fits_long(last_key) ||
         last_key < (int64_t)nkeys ||
         (key_every > 0 && (last_key % key_every != 0 || last_key / key_every != (int64_t)nkeys)) ||
         !isfinite(mass_now) || !isfinite(key_mass) || !isfinite(tmass)))
        return fail(err, errlen, "corrupt header: the schedule's keys, steps or masses out of range");
    s->nkeys = (int)nkeys;
    s->key = (int)key;
    s->key_every = (long)key_every;
    s->last_key_step = (long)last_key;
    s->schedule_sum = sum;
    s->mass_now = mass_now;
    s->key_mass = key_mass;
    s->tmass = tmass;
    return 0;
}

/* A checkpoint's header, as checkpoint_parse reads it. */
typedef struct {
    uint32_t version, nfields, hsize, flags;
    int32_t w, h, every;
    char backend[16];
    int64_t steps, nstep, run_steps, best_step;
    float pot_c, dscale;
    double best;
} Header;

/* The envelope: magic, version, size and checksum. 0, or -1 with err. */
static int parse_envelope(const unsigned char *b, size_t len, Header *H, char *err, size_t errlen)
{
    if (len == 0) return fail(err, errlen, "empty file, not a smokemorph checkpoint");
    size_t m = len < 8 ? len : 8;
    if (memcmp(b, CHECKPOINT_MAGIC, m) != 0)
        return fail(err, errlen, "not a smokemorph checkpoint (bad magic)");
    if (len < 12) return fail(err, errlen, "truncated: %zu bytes, not even a header", len);
    H->version = get_u32(b + 8);
    if (H->version < 1 || H->version > CHECKPOINT_VERSION)
        return fail(err, errlen, "checkpoint version %u; this smokemorph reads versions 1 to %d", H->version,
                    CHECKPOINT_VERSION);
    uint32_t hsize = header_size((int)H->version, 1); /* version 3: at least one field's */
    if (len < hsize) return fail(err, errlen, "truncated: %zu bytes, not even a header", len);
    uint64_t size = get_u64(b + 16);
    if (size > len)
        return fail(err, errlen, "truncated: %zu of %llu bytes", len, (unsigned long long)size);
    if (size < len)
        return fail(err, errlen, "%zu bytes where the header says %llu: trailing data", len,
                    (unsigned long long)size);
    uLong crc = crc_add(crc32(0L, Z_NULL, 0), b, len - 4);
    if ((uint32_t)crc != get_u32(b + len - 4))
        return fail(err, errlen, "checksum mismatch: the file is damaged");
    return 0;
}

/* The header's numbers, each checked (the file is intact, but a crafted
 * one gets here). 0, or -1 with err. */
static int parse_header(const unsigned char *b, size_t len, Header *H, char *err, size_t errlen)
{
    uint32_t version = H->version;
    H->nfields = version >= 3 ? get_u32(b + 116) : 1;
    if (version >= 3 && (H->nfields < 1 || H->nfields > CHECKPOINT_MAX_FIELDS))
        return fail(err, errlen, "corrupt header: %u smoke fields (1 to %d)", H->nfields,
                    CHECKPOINT_MAX_FIELDS);
    uint32_t np = get_u32(b + 112);
    if (np >= 1 && np < METHOD_PARAM_COUNT)
        return fail(err, errlen,
                    "written by an older smokemorph (%u method parameters, this one has %d): "
                    "start the morph again without --resume",
                    np, METHOD_PARAM_COUNT);
    H->hsize = header_size((int)version, (int)H->nfields);
    H->w = get_i32(b + 24);
    H->h = get_i32(b + 28);
    int32_t d = get_i32(b + 32);
    if (get_u32(b + 12) != H->hsize || get_u32(b + 36) != CHECKPOINT_NFIELDS ||
        get_u32(b + 112) != METHOD_PARAM_COUNT || (version < 3 && get_u32(b + 116) != 0))
        return fail(err, errlen, "corrupt header: unexpected layout for version %u", version);
    if (len < H->hsize) /* the size said so, and the checksum agreed: the header is whole */
        return fail(err, errlen, "corrupt header: %zu bytes for %u smoke fields", len, H->nfields);
    if (H->w < 1 || H->h < 1 || H->w > CHECKPOINT_MAX_SIDE || H->h > CHECKPOINT_MAX_SIDE || d != 1 ||
        (long)H->w * H->h > CHECKPOINT_MAX_CELLS)
        return fail(err, errlen, "corrupt header: grid %dx%dx%d", H->w, H->h, d);
    if (get_u64(b + 16) != file_size(H->hsize, H->w, H->h, (int)H->nfields))
        return fail(err, errlen, "corrupt header: %llu bytes for a %dx%d grid",
                    (unsigned long long)get_u64(b + 16), H->w, H->h);
    memcpy(H->backend, b + 40, 16);
    if (H->backend[15] != '\0' ||
        (strcmp(H->backend, "cpu") && strcmp(H->backend, "fragment") && strcmp(H->backend, "compute")))
        return fail(err, errlen, "corrupt header: unknown backend");
    H->steps = get_i64(b + 56);
    H->nstep = get_i64(b + 64);
    H->run_steps = get_i64(b + 88);
    H->best_step = get_i64(b + 104);
    H->every = get_i32(b + 84);
    H->flags = get_u32(b + 80);
    uint32_t known = FLAG_MASS_MATCH | FLAG_SETTLE_STARTED | (version >= 3 ? FLAG_SCENE : 0u);
    H->pot_c = get_f32(b + 72);
    H->dscale = get_f32(b + 76);
    H->best = get_f64(b + 96);
    if (!fits_long(H->steps) || !fits_long(H->nstep) || !fits_long(H->run_steps) || H->every < 1 ||
        !fits_long(H->best_step) || (H->flags & ~known) || !isfinite(H->pot_c) || !isfinite(H->dscale) ||
        isnan(H->best))
        return fail(err, errlen, "corrupt header: a step count, flag or scale out of range");
    return 0;
}

/* Field i's numbers (its steps, flags, parameters and schedule) into s,
 * before anything is allocated. 0, or -1 with err. */
static int parse_field_header(const unsigned char *b, const Header *H, uint32_t i, MorphState *s, char *err,
                              size_t errlen)
{
    const unsigned char *p, *q;
    uint32_t fl;
    if (i == 0) {
        s->steps = (long)H->steps;
        s->solver.nstep = (long)H->nstep;
        s->solver.pot_c = H->pot_c;
        s->solver.dscale = H->dscale;
        fl = H->flags;
        p = b + HEADER_FIXED;
        q = b + HEADER_SIZE_V1;
    } else {
        const unsigned char *f = b + HEADER_SIZE + (size_t)(i - 1) * FIELD_BLOCK;
        int64_t fsteps = get_i64(f), fnstep = get_i64(f + 8);
        float fpot = get_f32(f + 16), fds = get_f32(f + 20);
        fl = get_u32(f + 24);
        if (fsteps != H->steps || !fits_long(fnstep) || (fl & ~FLAG_MASS_MATCH) || get_u32(f + 28) != 0 ||
            !isfinite(fpot) || !isfinite(fds))
            return fail(err, errlen, "corrupt header: smoke field %u: a step count, flag or scale "
                        "out of range", i + 1);
        s->steps = (long)fsteps;
        s->solver.nstep = (long)fnstep;
        s->solver.pot_c = fpot;
        s->solver.dscale = fds;
        p = f + 32;
        q = f + 32 + 8 * METHOD_PARAM_COUNT;
    }
    s->mass_match = fl & FLAG_MASS_MATCH;
    if (parse_params(p, &s->params, err, errlen) < 0) return -1;
    if (H->version >= 2 && parse_schedule(q, H->version, s, err, errlen) < 0) return -1;
    return 0;
}

/* Every number of the arrays finite (a checksum only says the file is as
 * written: a NaN or an infinity would crash or poison the solver). 0, or
 * -1 with err. */
static int check_arrays(const Checkpoint *c, const Header *H, char *err, size_t errlen)
{
    size_t n = (size_t)H->w * H->h;
    for (uint32_t i = 0; i < H->nfields; i++)
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
            const float *f = *field_slot(checkpoint_field((Checkpoint *)c, (int)i), k);
            for (size_t j = 0; j < n; j++)
                if (!isfinite(f[j]) || fabsf(f[j]) > CHECKPOINT_VALUE_MAX) {
                    const char *what = isnan(f[j]) ? "NaN" : isinf(f[j]) ? "an infinity" : "a value beyond 1e30";
                    return fail(err, errlen, "array %d of smoke field %u holds %s at cell (%zu, %zu)",
                                k + 1, i + 1, what, j % (size_t)H->w, j / (size_t)H->w);
                }
        }
    return 0;
}

int checkpoint_parse(const void *data, size_t len, Checkpoint *c, char *err, size_t errlen)
{
    const unsigned char *b = data;
    memset(c, 0, sizeof *c);
    c->nfields = 1;
    Header H;
    memset(&H, 0, sizeof H);
    if (parse_envelope(b, len, &H, err, errlen) < 0 || parse_header(b, len, &H, err, errlen) < 0) return -1;
    MorphState st[CHECKPOINT_MAX_FIELDS];
    memset(st, 0, sizeof st);
    for (uint32_t i = 0; i < H.nfields; i++)
        if (parse_field_header(b, &H, i, &st[i], err, errlen) < 0) return -1;
    if (checkpoint_alloc_fields(c, H.w, H.h, (int)H.nfields) < 0) {
        memset(c, 0, sizeof *c);
        return fail(err, errlen, "out of memory for a %dx%d state of %u smoke fields", H.w, H.h, H.nfields);
    }
    memcpy(c->backend, H.backend, sizeof H.backend);
    c->run_steps = (long)H.run_steps;
    c->run_every = H.every;
    c->settle_started = H.flags & FLAG_SETTLE_STARTED;
    c->scene = H.flags & FLAG_SCENE;
    c->settle_best = H.best;
    c->settle_best_step = (long)H.best_step;
    c->version = (int)H.version;
    size_t n = (size_t)H.w * H.h;
    const unsigned char *q = b + H.hsize;
    for (uint32_t i = 0; i < H.nfields; i++) {
        MorphState *s = checkpoint_field(c, (int)i);
        for (int k = 0; k < CHECKPOINT_NFIELDS; k++) { /* the arrays, then the numbers */
            float **f = field_slot(s, k);
            *field_slot(&st[i], k) = *f;
            for (size_t j = 0; j < n; j++, q += 4) (*f)[j] = get_f32(q);
        }
        *s = st[i];
    }
    if (check_arrays(c, &H, err, errlen) < 0) {
        checkpoint_free(c);
        return -1;
    }
    return 0;
}

int checkpoint_read(const char *path, Checkpoint *c, char *err, size_t errlen)
{
    char why[256];
    memset(c, 0, sizeof *c);
    /* O_NONBLOCK: a FIFO is refused below at once, not waited on (mmap
     * ignores the flag) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return fail(err, errlen, "cannot read %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, "cannot read %s: %s", path,
                    S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    }
    size_t len = (size_t)st.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    int e = errno;
    close(fd);
    if (len && map == MAP_FAILED)
        return fail(err, errlen, "cannot read %s: %s", path, strerror(e));
    int rc = checkpoint_parse(map ? map : "", len, c, why, sizeof why);
    if (map) munmap(map, len);
    if (rc < 0) return fail(err, errlen, "cannot resume from %s: %s", path, why);
    return 0;
}
