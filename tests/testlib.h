/* testlib.h: what more than one test program needs, written once.
 * tests/check.h is the harness (CHECK, RUN, check_done); this library only
 * returns results, so that every CHECK stays in the test that counts it.
 *
 *   running a program   testlib_run (argv), testlib_run_sh (a shell script),
 *                       testlib_sh (a shell command's exit status);
 *                       testlib_bin, testlib_build_dir (what to run);
 *                       testlib_argv (an argv from varargs), testlib_run_headless
 *                       (in a folder, no display), testlib_run_headless_va
 *                       (both: a test's run(first, ...)); testlib_has,
 *                       testlib_count_lines (reading what it wrote)
 *   files               testlib_read_file, testlib_read_text,
 *                       testlib_write_file, testlib_exists,
 *                       testlib_count_entries, testlib_rm_rf, testlib_path,
 *                       testlib_fresh_dir, testlib_tmpdir
 *   images              testlib_load, testlib_load_opts, testlib_bundled
 *   shapes              testlib_disc, testlib_box (soft or hard edges, in
 *                       cells or domain units); testlib_key_shapes (the key
 *                       tests' disc, square and ring)
 *   morphs              testlib_morph (one on any backend), testlib_sum,
 *                       testlib_add_erase (the splat tests' add and erase) */
#ifndef SMOKEMORPH_TESTLIB_H
#define SMOKEMORPH_TESTLIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "image.h"
#include "morph.h"

/* ------------------------------------------------------ running a program */

typedef struct {
    int code;   /* exit status; -1 when it did not exit normally */
    int signal; /* the signal that ended it, or 0 */
    char *out;  /* all it wrote to stdout, NUL-terminated ("" when nothing) */
    char *err;  /* the same for stderr */
} TestlibResult;

/* Zero means: inherit, keep, none. */
typedef struct {
    const char *cwd;        /* the child's working directory (NULL: ours) */
    const char *out_path;   /* stdout goes to this file, which is kept (NULL: see below) */
    const char *err_path;   /* the same for stderr */
    const char *const *unset_env; /* names removed from the child's environment, NULL-terminated */
    const char *const *env;       /* NAME=VALUE strings set in it, NULL-terminated */
    bool rlimit_set;        /* setrlimit(rlimit_resource, rlimit_value) in the child, */
    int rlimit_resource;    /* with SIGXFSZ ignored (a too-large file is an error, not a kill) */
    unsigned long long rlimit_value;
    int kill_after_ms;      /* send kill_signal this long after the start (0: never) */
    int kill_signal;
} TestlibRunOpts;

/* Run argv[0] (a path, or a name looked up in PATH) with argv, NULL-
 * terminated, and wait for it. O may be NULL (all defaults). With R, stdout
 * and stderr are captured into R->out and R->err (through O's files, else
 * through temporary files that are removed); without R, a stream without a
 * file in O goes to ours. R must start zeroed; a second run reuses it; free
 * it with testlib_result_free. Returns the exit status, -1 when the child
 * did not exit normally, 127 when it could not be started. */
int testlib_run(const char *const *argv, const TestlibRunOpts *o, TestlibResult *r);

/* testlib_run of /bin/sh -c SCRIPT. */
int testlib_run_sh(const char *script, const TestlibRunOpts *o, TestlibResult *r);

/* The exit status of /bin/sh -c CMD, its output not captured: system()
 * as the tests use it. -1 when it did not exit normally. */
int testlib_sh(const char *cmd);

void testlib_result_free(TestlibResult *r);

/* The smokemorph binary: $SMOKEMORPH_BIN, else build/smokemorph. */
const char *testlib_bin(void);

/* The build directory, where tools/ and tests/ are: $SMOKEMORPH_BUILD,
 * else build. */
const char *testlib_build_dir(void);

/* An argv in ARGV (room for MAX entries and the NULL): the NULL-terminated
 * HEAD (NULL: none), then FIRST and the rest of AP up to a NULL; what does
 * not fit is dropped. Returns the count. For a test's run(first, ...). */
int testlib_argv(const char **argv, int max, const char *const *head, const char *first,
                 va_list ap);

/* testlib_run of ARGV in the folder CWD with DISPLAY and WAYLAND_DISPLAY
 * unset (headless, as in CI); O's other fields as given (NULL: none). */
int testlib_run_headless(const char *const *argv, const char *cwd, const TestlibRunOpts *o,
                         TestlibResult *r);

/* testlib_run_headless of the argv testlib_argv makes of HEAD, FIRST and AP
 * (at most TESTLIB_MAXARGS entries in all): the body of a test's
 * run(first, ...) between its va_start and va_end. */
#define TESTLIB_MAXARGS 64
int testlib_run_headless_va(const char *const *head, const char *first, va_list ap,
                            const char *cwd, const TestlibRunOpts *o, TestlibResult *r);

/* printf into one of 8 rotating buffers of 16 KiB: a path or a command
 * for the next few calls ("" past its end). */
char *testlib_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether NEEDLE is in HAY (false for a NULL HAY). */
bool testlib_has(const char *hay, const char *needle);

/* The lines of S: each '\n', and a last line without one. */
int testlib_count_lines(const char *s);

/* Whether a test that needs OpenGL MAJOR.MINOR may skip where it is missing.
 * SMOKEMORPH_TEST_GL (for developers on a machine without GL; CI leaves it
 * unset) says what this machine lacks: "none", no GL at all (every GL test
 * may skip), or "3.3", no OpenGL 4.3 (the compute backend's tests may
 * skip). Unset, or any other value: false, and a missing context or version
 * fails the test (tools/install-deps.sh installs Mesa, which has 4.5). */
bool testlib_gl_optional(int major, int minor);

/* A test that needs OpenGL MAJOR.MINOR and has none (the printf arguments
 * say why): a failed CHECK, or, where testlib_gl_optional allows it, a SKIP
 * line that names SMOKEMORPH_TEST_GL. Include check.h first. */
#define TESTLIB_NO_GL(major, minor, ...)                                                  \
    do {                                                                                  \
        if (testlib_gl_optional(major, minor)) {                                          \
            printf("SKIP ");                                                              \
            printf(__VA_ARGS__);                                                          \
            printf(" (SMOKEMORPH_TEST_GL=%s)\n", getenv("SMOKEMORPH_TEST_GL"));           \
        } else {                                                                          \
            CHECK(0, __VA_ARGS__);                                                        \
        }                                                                                 \
    } while (0)

/* ------------------------------------------------------------------ files */

/* The whole file, malloc'd and NUL-terminated, its length (without the NUL)
 * in *len when LEN is not NULL; NULL when it cannot be read. */
char *testlib_read_file(const char *path, size_t *len);

/* At most N - 1 bytes of the file into BUF, NUL-terminated ("" when it
 * cannot be read). Returns BUF. */
char *testlib_read_text(const char *path, char *buf, size_t n);

/* Write N bytes to PATH (created or truncated). 0, or -1 on any error. */
int testlib_write_file(const char *path, const void *data, size_t n);

bool testlib_exists(const char *path);

/* The entries of DIR other than . and .., -1 when it cannot be opened; with
 * NEEDLE and MATCHING, *matching is how many names contain NEEDLE. */
int testlib_count_entries(const char *dir, const char *needle, int *matching);

/* rm -rf PATH; says so on stderr when that fails. */
void testlib_rm_rf(const char *path);

/* DIR/NAME into BUF ("" when it does not fit). */
void testlib_path(char *buf, size_t n, const char *dir, const char *name);

/* DIR emptied: removed and made again; the test program exits 2 when it
 * cannot be made (nothing after could be trusted). */
void testlib_fresh_dir(const char *dir);

/* A new folder /tmp/NAME.XXXXXX into BUF (mkdtemp); the test program exits
 * 2 when it cannot be made. */
void testlib_tmpdir(char *buf, size_t n, const char *name);

/* A failure before any test could run: prints "FAIL " and the message, then
 * "0 passed, 1 failed", and exits 1. */
void testlib_setup_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The start of a program that tests the binary: BIN (PATH_MAX bytes) its
 * real path (testlib_bin), TMP a new /tmp/NAME.XXXXXX and WORK the folder
 * TMP/work, made, then the test's FIXTURES (NULL: none) made by it, which
 * returns -1 when it cannot; testlib_setup_failed when any of them fails. */
void testlib_cli_start(const char *name, char *bin, char *tmp, size_t ntmp, char *work,
                       size_t nwork, int (*fixtures)(void));

/* Whether files A and B hold the same bytes (false when either is missing). */
bool testlib_same_file(const char *a, const char *b);

/* How many of the frames FROM..TO (frame_NNNNN.png) of DIR/A and DIR/B
 * differ or are missing; each such frame is named on stdout. */
int testlib_diff_frames(const char *dir, const char *a, const char *b, int from, int to);

/* ----------------------------------------------------------------- images */

/* PATH as smokemorph loads it, through channel CH; NULL, with
 * "  load PATH: why" printed, when it cannot be loaded. */
Image *testlib_load(const char *path, ImageChannel ch);
Image *testlib_load_opts(const char *path, const ImageLoadOpts *o);

/* The bundled target targets/NAME (relative to the working directory: the
 * repository root under `make test`) resampled to W x H as smokemorph does;
 * NULL, with the reason printed, when it cannot be loaded. */
Image *testlib_bundled(const char *name, int w, int h);

/* An OpenEXR file read back through OpenEXRCore on its own (not through
 * smokemorph's writer): the display window w x h, the data window
 * (x0, y0)-(x1, y1) inclusive, and every channel as a w*h float plane (0
 * outside the data window), with its stored pixel type (EXR_PIXEL_HALF 1,
 * EXR_PIXEL_FLOAT 2), the compression (EXR_COMPRESSION_*) and the
 * framesPerSecond attribute (0 when absent). */
#define TESTLIB_EXR_MAXCH 16
typedef struct {
    int w, h;
    int x0, y0, x1, y1;
    int nch;
    char name[TESTLIB_EXR_MAXCH][64];
    int type[TESTLIB_EXR_MAXCH];
    float *px[TESTLIB_EXR_MAXCH];
    int compression;
    double fps;
    bool tiled;  /* stored as tiles (read tile by tile) */
} TestlibExr;

/* NULL, with "  load PATH: why" printed, when it cannot be read. */
TestlibExr *testlib_load_exr(const char *path);
/* The plane of channel NAME, or NULL. */
const float *testlib_exr_channel(const TestlibExr *e, const char *name);
void testlib_exr_free(TestlibExr *e);

/* ----------------------------------------------------------------- shapes */

/* How a shape is drawn into a w x h row-major field of floats. Cell (i, j)
 * has its centre at (i + 0.5, j + 0.5) times the unit: one cell, or with
 * `domain`, 1 / min(w, h) (the shorter side is 1 long). With d the signed
 * distance to the shape's edge (negative inside), in those units, a cell
 * holds v times
 *   width == 0:  1 inside (d < 0), else 0;
 *   linear:      clamp(0.5 - d / width, 0, 1), a ramp `width` wide;
 *   tanh_edge:   0.5 (1 - tanh(d / width)).
 * A box is the product of the profiles across x and across y. With `add`
 * the shape is added to the field, else it replaces the field. */
typedef struct {
    bool domain;
    double width;
    bool tanh_edge;
    bool add;
} TestlibShape;

/* A disc of radius r centred at (cx, cy). */
void testlib_disc(float *f, int w, int h, const TestlibShape *s, double cx, double cy, double r,
                  double v);

/* A box of half-sizes (hx, hy) centred at (cx, cy). */
void testlib_box(float *f, int w, int h, const TestlibShape *s, double cx, double cy, double hx,
                 double hy, double v);

/* The key tests' three shapes in w x h fields, in domain units with edges
 * 0.05 wide: a disc of radius 0.2, a square of half-side 0.18 and a ring
 * (radius 0.3 with a hole of 0.15; a plain disc with solid_ring), centred
 * where AT says (NULL: at (0.35, 0.4), (0.65, 0.6) and (0.5, 0.5)). */
typedef struct {
    double disc[2], square[2], ring[2];
    bool solid_ring;
} TestlibKeyShapes;
void testlib_key_shapes(int w, int h, const TestlibKeyShapes *at, float *disc, float *square,
                        float *ring);

/* ---------------------------------------------------------------- numbers */

/* N zeroed floats (calloc); the test program exits 1 when there is no
 * memory for them. */
float *testlib_floats(size_t n);

/* The CRC-32 of a PNG chunk (ISO 3309, as zlib's crc32). */
unsigned testlib_crc32(const unsigned char *p, size_t n);

/* What a splat of AMOUNT and width R at (cx, cy) adds to a w x h field:
 * Σ AMOUNT·exp(−|c − (cx, cy)|² / R²) over the cell centres c, in cells. */
double testlib_gauss_mass(int w, int h, double cx, double cy, double amount, double r);

/* Σ f[k] over n values, in double. */
double testlib_sum(const float *f, size_t n);

/* sqrt(Σ(a−b)² / Σb²) over n values (Σb² = 0: the plain norm of a − b). */
double testlib_rel_l2(const float *a, const float *b, size_t n);

/* The oracle of export.h's composite of nf fields at cell k: a_i =
 * clamp(rho_i[k]·s, 0, 1), A = 1 − Π(1 − a_i), the colour the a_i-weighted
 * mean of the fields' colours (sRGB, rgb) in linear light; where at most
 * one field has smoke, its a_i and colour exactly (none: field 0's). A,
 * and the straight colour in sRGB (srgb) and linear light (lin). */
void testlib_composite(int nf, const float *const *rho, const double (*rgb)[3], double s, size_t k,
                       double *A, double srgb[3], double lin[3]);

/* ------------------------------------------------------------ morph state */

/* A morph's whole state (morph_get_state) in one buffer allocated on the
 * first read; zero it before, free buf after. */
typedef struct {
    MorphState st;
    float *buf;
} TestlibState;

/* A morph of w x h from START to TARGET on backend B (the CPU: MORPH_CPU;
 * a GPU one with SHADER_DIR) with parameters P (NULL: the defaults), the
 * target mass-matched when MASS_MATCH; NULL, with "  morph_create: why" printed, when it cannot be
 * made (the test CHECKs it). */
Morph *testlib_morph(int w, int h, const SolverParams *p, const float *start, const float *target,
                     bool mass_match, MorphBackend b, const char *shader_dir);

/* The splat tests' adding and erasing of smoke on a w x h morph (w and h
 * at least 17), on any backend: morph_splat_density of 0.5, width 3, at
 * (16, 16), then of -100, width 8, there. */
typedef struct {
    int add_rc, erase_rc; /* morph_splat_density's return values */
    double added, gauss;  /* the mass the add changed, and its Gaussian's (testlib_gauss_mass) */
    double m1, m2;        /* the mass after the add, and after the erase */
    bool nonneg;          /* no cell below 0 after the erase */
    float centre;         /* the density at (16, 16) after the erase */
} TestlibAddErase;
TestlibAddErase testlib_add_erase(Morph *m, int w, int h);

/* Reads m's state (cells: W*H) into s. false on a read-back or memory error. */
bool testlib_state_read(Morph *m, size_t cells, TestlibState *s);

#endif
