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
#define HEADER_SIZE (HEADER_FIXED + 8 * METHOD_PARAM_COUNT)
#define FLAG_MASS_MATCH 1u
#define FLAG_SETTLE_STARTED 2u

/* ---- the arrays ----------------------------------------------------------- */

/* Field k of the file: the solver's fields, then the start and the target. */
static float **field_slot(MorphState *s, int k)
{
    if (k < METHOD_FIELD_COUNT) return &s->solver.field[k];
    return k == METHOD_FIELD_COUNT ? &s->start : &s->target;
}

int checkpoint_alloc(Checkpoint *c, int w, int h)
{
    memset(c, 0, sizeof *c);
    if (w < 1 || h < 1 || (long)w * h > CHECKPOINT_MAX_CELLS) return -1;
    c->w = w;
    c->h = h;
    size_t n = (size_t)w * h;
    for (int k = 0; k < CHECKPOINT_NFIELDS; k++)
        if (!(*field_slot(&c->state, k) = malloc(n * sizeof(float)))) {
            checkpoint_free(c);
            return -1;
        }
    return 0;
}

void checkpoint_free(Checkpoint *c)
{
    if (!c) return;
    for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
        float **f = field_slot(&c->state, k);
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

static uint64_t file_size(int w, int h)
{
    return (uint64_t)HEADER_SIZE + (uint64_t)CHECKPOINT_NFIELDS * (uint64_t)w * (uint64_t)h * 4u + 4u;
}

/* ---- writing ------------------------------------------------------------------- */

static void make_header(const Checkpoint *c, unsigned char *b)
{
    memset(b, 0, HEADER_SIZE);
    memcpy(b, CHECKPOINT_MAGIC, 8);
    put_u32(b + 8, CHECKPOINT_VERSION);
    put_u32(b + 12, HEADER_SIZE);
    put_u64(b + 16, file_size(c->w, c->h));
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
                        (c->settle_started ? FLAG_SETTLE_STARTED : 0u));
    put_u32(b + 84, (uint32_t)c->run_every);
    put_u64(b + 88, (uint64_t)c->run_steps);
    put_f64(b + 96, c->settle_best);
    put_u64(b + 104, (uint64_t)c->settle_best_step);
    put_u32(b + 112, METHOD_PARAM_COUNT);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++)
        put_f64(b + HEADER_FIXED + 8 * k, method_param_get(&s->params, k));
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
    for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
        const float *f = *field_slot((MorphState *)&c->state, k);
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
    unsigned char head[HEADER_SIZE];
    make_header(c, head);
    uLong crc = crc_add(crc32(0L, Z_NULL, 0), head, HEADER_SIZE);
    int rc = write_all(fd, head, HEADER_SIZE);
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

int checkpoint_parse(const void *data, size_t len, Checkpoint *c, char *err, size_t errlen)
{
    const unsigned char *b = data;
    memset(c, 0, sizeof *c);
    if (len == 0) return fail(err, errlen, "empty file, not a smokemorph checkpoint");
    size_t m = len < 8 ? len : 8;
    if (memcmp(b, CHECKPOINT_MAGIC, m) != 0)
        return fail(err, errlen, "not a smokemorph checkpoint (bad magic)");
    if (len < 12) return fail(err, errlen, "truncated: %zu bytes, not even a header", len);
    uint32_t version = get_u32(b + 8);
    if (version != CHECKPOINT_VERSION)
        return fail(err, errlen, "checkpoint version %u; this smokemorph reads version %d", version,
                    CHECKPOINT_VERSION);
    if (len < HEADER_SIZE) return fail(err, errlen, "truncated: %zu bytes, not even a header", len);
    uint64_t size = get_u64(b + 16);
    if (size > len)
        return fail(err, errlen, "truncated: %zu of %llu bytes", len, (unsigned long long)size);
    if (size < len)
        return fail(err, errlen, "%zu bytes where the header says %llu: trailing data", len,
                    (unsigned long long)size);
    uLong crc = crc_add(crc32(0L, Z_NULL, 0), b, len - 4);
    if ((uint32_t)crc != get_u32(b + len - 4))
        return fail(err, errlen, "checksum mismatch: the file is damaged");

    /* intact; now every number must make sense (a crafted file gets here) */
    int32_t w = get_i32(b + 24), h = get_i32(b + 28), d = get_i32(b + 32);
    if (get_u32(b + 12) != HEADER_SIZE || get_u32(b + 36) != CHECKPOINT_NFIELDS ||
        get_u32(b + 112) != METHOD_PARAM_COUNT || get_u32(b + 116) != 0)
        return fail(err, errlen, "corrupt header: unexpected layout for version %d", CHECKPOINT_VERSION);
    if (w < 1 || h < 1 || w > CHECKPOINT_MAX_SIDE || h > CHECKPOINT_MAX_SIDE || d != 1 ||
        (long)w * h > CHECKPOINT_MAX_CELLS)
        return fail(err, errlen, "corrupt header: grid %dx%dx%d", w, h, d);
    if (size != file_size(w, h))
        return fail(err, errlen, "corrupt header: %llu bytes for a %dx%d grid",
                    (unsigned long long)size, w, h);
    char backend[16];
    memcpy(backend, b + 40, 16);
    if (backend[15] != '\0' ||
        (strcmp(backend, "cpu") && strcmp(backend, "fragment") && strcmp(backend, "compute")))
        return fail(err, errlen, "corrupt header: unknown backend");
    int64_t steps = get_i64(b + 56), nstep = get_i64(b + 64), run_steps = get_i64(b + 88),
            best_step = get_i64(b + 104);
    int32_t every = get_i32(b + 84);
    uint32_t flags = get_u32(b + 80);
    float pot_c = get_f32(b + 72), dscale = get_f32(b + 76);
    double best = get_f64(b + 96);
    if (!fits_long(steps) || !fits_long(nstep) || !fits_long(run_steps) || every < 1 ||
        !fits_long(best_step) ||
        (flags & ~(FLAG_MASS_MATCH | FLAG_SETTLE_STARTED)) || !isfinite(pot_c) ||
        !isfinite(dscale) || isnan(best))
        return fail(err, errlen, "corrupt header: a step count, flag or scale out of range");
    SolverParams p;
    method_params_default(&p);
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) {
        double v = get_f64(b + HEADER_FIXED + 8 * k);
        if (!param_fits(k, v))
            return fail(err, errlen, "corrupt header: parameter %s", method_param_info[k].name);
        method_param_set(&p, k, v);
    }
    const char *why = method_params_check(&p);
    if (why) return fail(err, errlen, "parameters out of range: %s", why);

    if (checkpoint_alloc(c, w, h) < 0)
        return fail(err, errlen, "out of memory for a %dx%d state", w, h);
    memcpy(c->backend, backend, sizeof backend);
    c->state.params = p;
    c->state.mass_match = flags & FLAG_MASS_MATCH;
    c->state.steps = (long)steps;
    c->state.solver.nstep = (long)nstep;
    c->state.solver.pot_c = pot_c;
    c->state.solver.dscale = dscale;
    c->run_steps = (long)run_steps;
    c->run_every = every;
    c->settle_started = flags & FLAG_SETTLE_STARTED;
    c->settle_best = best;
    c->settle_best_step = (long)best_step;
    size_t n = (size_t)w * h;
    const unsigned char *q = b + HEADER_SIZE;
    for (int k = 0; k < CHECKPOINT_NFIELDS; k++) {
        float *f = *field_slot(&c->state, k);
        for (size_t i = 0; i < n; i++, q += 4) f[i] = get_f32(q);
    }
    return 0;
}

int checkpoint_read(const char *path, Checkpoint *c, char *err, size_t errlen)
{
    char why[256];
    memset(c, 0, sizeof *c);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
