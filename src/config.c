/* config: defaults, getopt_long parsing, validation and --help, every one
 * of them from the rows of settings.def (a generic reader per kind; the
 * values of a shape of their own in special_option). Never touches GL.
 * Every number is parsed strictly (whole string, finite, in range); every
 * error is one line "config: ..." naming the option. */
#include "config.h"
#include "budget.h"
#include "compare_spec.h"
#include "exr.h"
#include "pool.h"
#include "viewkind.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#ifndef SMOKEMORPH_VERSION
#define SMOKEMORPH_VERSION "unknown"
#endif

#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
    defined(__OpenBSD__) || defined(__DragonFly__)
#define CONFIG_HAVE_OPTRESET 1
extern int optreset;
#endif

#define EVERY_MAX 1000000
#define MAX_IMAGE_MB_MAX 1048576 /* 1 TiB */
/* ---------------------------------------------------------------------- */
/* The table (settings.def): option codes, rows, getopt's options          */

#define SETTING_GROUP(ID, TITLE)

/* Each row's option code, OPT_<ID>: 256 + its index in the table. */
enum {
    OPT_NONE = 255,
#define SETTING(ID, ...) OPT_##ID,
#include "settings.def"
#undef SETTING
    OPT_END
};
#define NROWS (OPT_END - 256)
_Static_assert(NROWS <= 8 * (int)sizeof(((Config *)0)->given), "Config.given: one bit a row");
_Static_assert(sizeof(ImageFormat) == sizeof(int) && sizeof(Backend) == sizeof(int) &&
                   sizeof(ImageAlpha) == sizeof(int) && sizeof(ImageExrPixel) == sizeof(int),
               "SK_ENUM members are written as int");

/* A row as the parser needs it. off: where its member is in Config. */
typedef struct {
    const char *opt, *arg, *range, *choices, *key;
    char sh, where, skind;
    SettingKind kind;
    size_t off;
    double lo, hi;
    unsigned flags;
} Row;

#define CONFIG_OFF_P(MEMBER) (offsetof(Config, params) + offsetof(SolverParams, MEMBER))
#define CONFIG_OFF_C(MEMBER) offsetof(Config, MEMBER)
#define CONFIG_OFF_S(MEMBER) (offsetof(Config, solver) + offsetof(SolverOptions, MEMBER))
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    [OPT_##ID - 256] = {OPT,  ARG,  RANGE, CHOICES, KEY,          SH, #WHERE[0], SKIND,          \
                        KIND, CONFIG_OFF_##WHERE(MEMBER), (double)(LO), (double)(HI), FLAGS},
static const Row rows[NROWS] = {
#include "settings.def"
};
#undef SETTING

/* getopt's table: every row with an option, in the table's order. */
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, ...) \
    {OPT, ARG ? required_argument : no_argument, NULL, OPT_##ID},
static const struct option all_options[] = {
#include "settings.def"
    {NULL, 0, NULL, 0},
};
#undef SETTING
static struct option long_options[NROWS + 1];

/* all_options less the rows without an option (the hidden parameters) */
static void init_options(void)
{
    if (long_options[0].name) return;
    int n = 0;
    for (const struct option *o = all_options; o->val; o++)
        if (o->name) long_options[n++] = *o;
}

/* '-': non-options come back in order as code 1, so images may sit anywhere
 * whatever POSIXLY_CORRECT says; ':': a missing argument returns ':'. */
static const char short_options[] = "-:hqv";

/* The option code of a short option's row (-q: OPT_QUIET), or opt itself. */
static int long_code(int opt)
{
    for (int k = 0; opt > 1 && opt < 256 && k < NROWS; k++)
        if (rows[k].sh == opt) return 256 + k;
    return opt;
}

/* The row of the long option NAME, or NULL. */
static const Row *row_named(const char *name)
{
    for (int k = 0; name && k < NROWS; k++)
        if (rows[k].opt && strcmp(rows[k].opt, name) == 0) return &rows[k];
    return NULL;
}

int config_every(double fps, float dt)
{
    double k = floor(1.0 / (fps * (double)dt) + 0.5);
    return k < 1.0 ? 1 : (k > CONFIG_EVERY_MAX ? CONFIG_EVERY_MAX : (int)k);
}

/* The defaults: each row's DEF (SK_SPECIAL rows and the method's parameters
 * below), then what no single row holds. */
#define CONFIG_DEF_SK_FLOAT(MEMBER, DEF) c->MEMBER = DEF;
#define CONFIG_DEF_SK_INT CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_LONG CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_BOOL CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_NOT CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_ENUM CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_PATH CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_STR CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_ACTION CONFIG_DEF_SK_FLOAT
#define CONFIG_DEF_SK_COLOR(MEMBER, DEF) config_parse_color(DEF, c->MEMBER);
#define CONFIG_DEF_SK_SPECIAL(MEMBER, DEF)
#define CONFIG_DEF_C(KIND, MEMBER, DEF) CONFIG_DEF_##KIND(MEMBER, DEF)
#define CONFIG_DEF_P(KIND, MEMBER, DEF)
#define CONFIG_DEF_S(KIND, MEMBER, DEF) CONFIG_DEF_##KIND(solver.MEMBER, DEF)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, ...) \
    CONFIG_DEF_##WHERE(KIND, MEMBER, DEF)
void config_defaults(Config *c)
{
    memset(c, 0, sizeof *c);
#include "settings.def"
    method_params_default(&c->params);
    c->load.channel = IMAGE_CHANNEL_LUMA;
    c->load.raw = false;
    c->load.raw_type = IMAGE_RAW_U8;
    c->grid_w = c->grid_h = 256;
    c->win_w = c->win_h = 768;
    c->fps = CONFIG_FPS_DEFAULT;
    c->every = config_every(c->fps, c->params.dt);
    c->range_first = c->range_last = -1;
    c->density_scale = 0.0f; /* auto */
    c->exr_compression = IMAGE_EXR_ZIP;
}
#undef SETTING

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(err, errlen, "config: ");
    if (n >= 0 && (size_t)n < errlen) vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* one line, whatever the arguments hold (a newline in an option: fuzz_config) */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

/* ---------------------------------------------------------------------- */
/* Strict number parsing                                                  */

/* A decimal number: optional sign, digits with at most one '.', optional
 * exponent. Rejects "", " 1", "1e3x", "nan", "inf", "0x10". */
static bool parse_double(const char *s, double *out)
{
    if (!s || !*s) return false;
    for (const char *q = s; *q; q++)
        if (!strchr("0123456789+-.eE", *q)) return false;
    errno = 0;
    char *end = NULL;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(d)) return false;
    *out = d;
    return true;
}

/* A decimal integer in [lo, hi]: optional sign, digits only. */
static bool parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return false;
    const char *q = s;
    if (*q == '+' || *q == '-') q++;
    if (!*q) return false;
    for (; *q; q++)
        if (*q < '0' || *q > '9') return false;
    char *end = NULL;
    long v = strtol(s, &end, 10); /* saturates: beyond long is beyond any range asked for */
    if (end == s || *end != '\0') return false;
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* Unsigned decimal digits only, 1..1e6 (enough for any size, no overflow). */
static bool parse_side(const char *s, size_t n, int *out)
{
    if (n == 0 || n > 7) return false;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 1000000) return false;
    *out = (int)v;
    return true;
}

int config_parse_size(const char *s, int *w, int *h)
{
    if (!s || !*s) return -1;
    const char *x = strchr(s, 'x');
    if (!x) x = strchr(s, 'X');
    int a, b;
    if (!x) {
        if (!parse_side(s, strlen(s), &a)) return -1;
        b = a;
    } else {
        if (!parse_side(s, (size_t)(x - s), &a)) return -1;
        if (!parse_side(x + 1, strlen(x + 1), &b)) return -1;
    }
    *w = a;
    *h = b;
    return 0;
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

int config_parse_color(const char *s, float rgb[3])
{
    if (!s) return -1;
    if (*s == '#') s++;
    if (strlen(s) != 6) return -1;
    float tmp[3];
    for (int k = 0; k < 3; k++) {
        int hi = hex_digit(s[2 * k]), lo = hex_digit(s[2 * k + 1]);
        if (hi < 0 || lo < 0) return -1;
        tmp[k] = (float)(hi * 16 + lo) / 255.0f;
    }
    memcpy(rgb, tmp, sizeof tmp);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Usage                                                                  */

static const char *channel_name(ImageChannel ch)
{
    switch (ch) {
    case IMAGE_CHANNEL_R: return "r";
    case IMAGE_CHANNEL_G: return "g";
    case IMAGE_CHANNEL_B: return "b";
    case IMAGE_CHANNEL_A: return "a";
    case IMAGE_CHANNEL_LUMA: break;
    }
    return "luma";
}

static const char *prog_name(const char *prog)
{
    if (!prog || !*prog) return "smokemorph";
    const char *slash = strrchr(prog, '/');
    return slash && slash[1] ? slash + 1 : prog;
}

static int color_byte(float f)
{
    float v = f * 255.0f + 0.5f;
    return v < 0.0f ? 0 : (v > 255.0f ? 255 : (int)v);
}

/* Choice number `value` of the SK_ENUM row of code opt ("png16"), copied
 * into a small buffer of its own (at most 4 in use at once). */
static const char *choice_name(int opt, int value)
{
    static char bufs[4][32];
    static int next;
    char *b = bufs[next++ % 4];
    const char *s = rows[opt - 256].choices;
    b[0] = '\0';
    for (int k = 0; s && *s; k++) {
        size_t n = strcspn(s, "|");
        if (memchr(s, '=', n)) break; /* the aliases come last */
        if (k == value) {
            snprintf(b, sizeof bufs[0], "%.*s", (int)n, s);
            break;
        }
        s += n + (s[n] == '|');
    }
    return b;
}

/* One option in --help: its name and value in a column of 24, then its text,
 * the text's later lines indented to that column. */
static void usage_row(FILE *out, const char *opt, char sh, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void usage_row(FILE *out, const char *opt, char sh, const char *arg, const char *fmt, ...)
{
    char head[64], text[2048];
    int n = sh ? snprintf(head, sizeof head, "  -%c, --%s%s%s", sh, opt, arg ? " " : "", arg ? arg : "")
               : snprintf(head, sizeof head, "  --%s%s%s", opt, arg ? " " : "", arg ? arg : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(out, "%s%*s", head, n < 24 ? 24 - n : 2, "");
    for (const char *t = text; *t;) {
        size_t len = strcspn(t, "\n");
        fprintf(out, "%.*s\n", (int)len, t);
        t += len + (t[len] == '\n');
        if (*t) fprintf(out, "%24s", "");
    }
}

/* Every default printed here comes from config_defaults(); every option's
 * line from its row in settings.def. */
#undef SETTING_GROUP
#define SETTING_GROUP(ID, TITLE) fprintf(out, "\n%s:\n", TITLE);
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ALSO, ...)                                                                \
    if (!((FLAGS) & SF_HIDDEN)) usage_row(out, OPT, SH, ARG, __VA_ARGS__);
void config_usage(FILE *out, const char *prog)
{
    Config dc;
    config_defaults(&dc);
    const Config *d = &dc;
    const SolverParams *p = &d->params;
    const char *pn = prog_name(prog);

    fprintf(out,
        "%s: morph one shape of smoke into another on the GPU\n"
        "(Fattal & Lischinski, target-driven smoke animation).\n"
        "\n"
        "usage: %s [options] [CURRENT TARGET [TARGET ...]]\n"
        "\n"
        "CURRENT and TARGET are density images (PNG, or headerless RAW with --raw).\n"
        "With several TARGETs (keys), the smoke is driven to each in turn, for\n"
        "--key-every steps each; velocity and density carry over from key to key.\n"
        "With no images, two bundled targets are used. With no display, it runs\n"
        "headless and writes frames to ./%s/.\n",
        pn, pn, CONFIG_DEFAULT_OUT_DIR);
#include "settings.def"
    fprintf(out,
        "\n"
        "Examples:\n"
        "  %s                                  bundled shapes, in a window\n"
        "  %s --grid 512 circle.png star.png\n"
        "  %s --headless --steps 600 --frames out --every 5 --color '#ffa040' a.png b.png\n"
        "  %s --headless --steps 600 --frames out --checkpoint-every 100 a.png b.png\n"
        "  %s --headless --steps 600 --frames out --resume out/checkpoint_000300.smc\n"
        "\n"
        "Exit status: 0 done; 1 an error (a bad file, no GL, a full disk, ...); 2 bad\n"
        "usage (an unknown option, a value out of range); 128+N stopped by signal N\n"
        "(130 Ctrl-C, 143 SIGTERM).\n",
        pn, pn, pn, pn, pn);
}
#undef SETTING
#undef SETTING_GROUP
#define SETTING_GROUP(ID, TITLE)

/* ---------------------------------------------------------------------- */
/* Parsing                                                                */

/* The option getopt just refused, as the user wrote it ("--foo", "-x"). */
static void offending_option(int argc, char **argv, char *buf, size_t n)
{
    if (optopt > 0 && optopt < 256) {
        snprintf(buf, n, "-%c", optopt);
        return;
    }
    if (optopt >= 256) {
        for (const struct option *o = long_options; o->name; o++)
            if (o->val == optopt) {
                snprintf(buf, n, "--%s", o->name);
                return;
            }
    }
    const char *a = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
    size_t len = strcspn(a, "=");
    if (len >= n) len = n - 1;
    memcpy(buf, a, len);
    buf[len] = '\0';
}

/* getopt_long returned '?': an unknown or ambiguous option, or a value
 * given to a flag ("--cpu=1": glibc then sets optopt to the flag's val). */
static void refused_option(int argc, char **argv, char *err, size_t errlen)
{
    char name[64];
    offending_option(argc, argv, name, sizeof name);
    if (optopt >= 256) {
        set_err(err, errlen, "%s takes no value (see --help)", name);
        return;
    }
    if (strncmp(name, "--", 2) == 0 && name[2]) {
        char cands[256] = "";
        int n = 0;
        size_t len = strlen(name + 2);
        for (const struct option *o = long_options; o->name; o++) {
            if (strncmp(o->name, name + 2, len) != 0) continue;
            size_t used = strlen(cands);
            snprintf(cands + used, sizeof cands - used, "%s--%s", n ? ", " : "", o->name);
            n++;
        }
        if (n >= 2) {
            set_err(err, errlen, "ambiguous option '%s': could be %s", name, cands);
            return;
        }
    }
    set_err(err, errlen, "unknown option '%s' (see --help)", name);
}

static void reset_getopt(void)
{
    init_options();
#if defined(__GLIBC__)
    optind = 0;   /* glibc: 0 re-initializes its internal state fully */
#else
    optind = 1;
#endif
#ifdef CONFIG_HAVE_OPTRESET
    optreset = 1;
#endif
    opterr = 0;
}

static int float_opt(const char *name, const char *arg, float *dst, char *err, size_t errlen)
{
    double d;
    if (!parse_double(arg, &d) || fabs(d) > (double)FLT_MAX) {
        set_err(err, errlen, "--%s: expected a number, got '%s'", name, arg);
        return -1;
    }
    *dst = (float)d;
    return 0;
}

static int int_opt(const char *name, const char *arg, long lo, long hi, long *dst, char *err,
                   size_t errlen)
{
    if (!parse_long(arg, lo, hi, dst)) {
        set_err(err, errlen, "--%s: expected an integer %ld..%ld, got '%s'", name, lo, hi, arg);
        return -1;
    }
    return 0;
}

/* An int solver parameter: syntax here, range in method_params_check() (a
 * value beyond int is kept beyond the range, so that check names the range). */
static int solver_int_opt(const char *name, const char *arg, int *dst, char *err, size_t errlen)
{
    long v;
    if (!parse_long(arg, LONG_MIN, LONG_MAX, &v)) {
        set_err(err, errlen, "--%s: expected an integer, got '%s'", name, arg);
        return -1;
    }
    *dst = v > INT_MAX ? INT_MAX : (v < INT_MIN ? INT_MIN : (int)v);
    return 0;
}

static int path_opt(const char *name, const char *arg, const char **dst, char *err, size_t errlen)
{
    if (!arg || !*arg) {
        set_err(err, errlen, "--%s: expected a path, got ''", name);
        return -1;
    }
    *dst = arg;
    return 0;
}

bool config_given(const Config *c, const char *name)
{
    const Row *r = row_named(name);
    int k = r ? (int)(r - rows) : -1;
    return k >= 0 && (c->given[k / 8] >> (k % 8) & 1u);
}

static void mark_given(Config *c, int opt)
{
    int k = opt - 256;
    if (k >= 0 && k < NROWS) c->given[k / 8] |= (unsigned char)(1u << (k % 8));
}

const char *config_backend_name(Backend b)
{
    static const char *const names[] = {"auto", "compute", "fragment", "cpu"};
    return (unsigned)b < 4 ? names[b] : "?";
}

/* ---- output formats, timing, naming and video (issue 10) ---------------- */

static bool ends_with_ci(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && strcasecmp(s + n - k, end) == 0;
}

bool config_frames_is_folder(const char *s)
{
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    return !strchr(base, '#') && !strchr(base, '%');
}

/* --frames PATTERN's frame number in its name BASE (S: the whole value, for
 * messages): one run of '#', or %d / %0Nd; where it is (*ph, *phlen) and
 * its digits, or -1 with one line in err. */
static int frame_placeholder(const char *s, const char *base, const char **ph_out, size_t *phlen_out,
                             char *err, size_t errlen)
{
    const char *ph = NULL;
    int digits = 0;
    size_t phlen = 0;
    for (const char *p = base; *p; p++) {
        if (*p != '#' && *p != '%') continue;
        if (ph) {
            set_err(err, errlen, "--frames: '%s' has more than one frame number (one run of # or "
                    "one %%d or %%0Nd)", s);
            return -1;
        }
        ph = p;
        if (*p == '#') {
            while (p[1] == '#') p++;
            phlen = (size_t)(p - ph) + 1;
            digits = (int)phlen;
        } else {
            const char *q = p + 1;
            if (q[0] == '0' && q[1] >= '1' && q[1] <= '9' && q[2] == 'd') {
                digits = q[1] - '0';
                phlen = 4;
            } else if (q[0] == 'd') {
                digits = 1;
                phlen = 2;
            } else {
                set_err(err, errlen, "--frames: '%s': the frame number is %%d or %%0Nd (N 1..9), "
                        "or a run of #", s);
                return -1;
            }
            p = ph + phlen - 1;
        }
    }
    *ph_out = ph;
    *phlen_out = phlen;
    return digits;
}

int config_parse_frames(const char *s, Config *c, char *err, size_t errlen)
{
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    if (config_frames_is_folder(s)) {
        /* a name that ends like an image is a file name missing its
         * number (issue 21: --frames out/smoke.exr made a folder of PNGs),
         * unless that folder is already there */
        static const char *const ext[] = {".png", ".exr", ".tif", ".tiff", ".jpg", ".jpeg", ".dpx"};
        size_t bl = strlen(base);
        struct stat st;
        for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
            size_t el = strlen(ext[i]);
            if (bl > el && strcasecmp(base + bl - el, ext[i]) == 0 &&
                !(stat(s, &st) == 0 && S_ISDIR(st.st_mode))) {
                set_err(err, errlen, "--frames: '%s' names one file, and frames are numbered: "
                        "put the number where it goes, %.*s.####%s (or give a folder)", s,
                        (int)(strlen(s) - el), s, s + strlen(s) - el);
                return -1;
            }
        }
        c->frames_digits = 0; /* a directory */
        return 0;
    }
    /* one placeholder: a run of '#', or %d / %0Nd */
    const char *ph = NULL;
    size_t phlen = 0;
    int digits = frame_placeholder(s, base, &ph, &phlen, err, errlen);
    if (digits < 0) return -1;
    if (digits > 9) {
        set_err(err, errlen, "--frames: '%s': at most 9 # for the frame number", s);
        return -1;
    }
    const char *suffix = ph + phlen;
    if (!ends_with_ci(suffix, ".png") && !ends_with_ci(suffix, ".exr")) {
        set_err(err, errlen, "--frames: '%s': a pattern's name ends in .png or .exr", s);
        return -1;
    }
    size_t dirlen = slash ? (size_t)(slash - s) : 0;
    size_t prelen = (size_t)(ph - base);
    if (dirlen >= sizeof c->frames_dirbuf || prelen >= sizeof c->frames_prefix ||
        strlen(suffix) >= sizeof c->frames_suffix) {
        set_err(err, errlen, "--frames: '%s' is too long", s);
        return -1;
    }
    if (slash && dirlen == 0) snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, "/");
    else if (!slash) snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, ".");
    else snprintf(c->frames_dirbuf, sizeof c->frames_dirbuf, "%.*s", (int)dirlen, s);
    snprintf(c->frames_prefix, sizeof c->frames_prefix, "%.*s", (int)prelen, base);
    snprintf(c->frames_suffix, sizeof c->frames_suffix, "%s", suffix);
    c->frames_digits = digits;
    c->frames_dir = c->frames_dirbuf;
    return 1;
}

/* ---------------------------------------------------------------------- */
/* The options read by their own code (SK_SPECIAL rows)                   */

/* --grid, --size, --window: a size with its sides' range; 0 or -1. */
static int size_option(const char *name, const char *arg, int lo, int hi, int *w, int *h, char *err,
                       size_t errlen)
{
    int a, b;
    if (config_parse_size(arg, &a, &b) < 0 || a < lo || b < lo || a > hi || b > hi) {
        if (lo == 1) set_err(err, errlen, "--%s: expected WxH with sides 1..%d, got '%s'", name, hi, arg);
        else set_err(err, errlen, "--%s: expected %sWxH with sides %d..%d, got '%s'", name,
                     strcmp(name, "grid") == 0 ? "N or " : "", lo, hi, arg);
        return -1;
    }
    *w = a;
    *h = b;
    return 0;
}

/* --grid N|WxH: sides CONFIG_GRID_MIN..MAX, at most CONFIG_MAX_CELLS cells. */
static int grid_option(Config *c, const char *arg, char *err, size_t errlen)
{
    int w, h;
    if (size_option("grid", arg, CONFIG_GRID_MIN, CONFIG_GRID_MAX, &w, &h, err, errlen) < 0) return -1;
    if ((long)w * (long)h > CONFIG_MAX_CELLS) {
        set_err(err, errlen, "--grid: %dx%d is %ld cells, at most %ld allowed", w, h,
                (long)w * (long)h, CONFIG_MAX_CELLS);
        return -1;
    }
    c->grid_w = w;
    c->grid_h = h;
    c->grid_set = true;
    return 0;
}

static int raw_option(Config *c, const char *arg, char *err, size_t errlen)
{
    char why[256] = "";
    ImageLoadOpts o = c->load;
    if (image_parse_raw_spec(arg, &o, why, sizeof why) < 0) {
        if (strncmp(why, "--raw", 5) == 0) /* image's message names the option */
            set_err(err, errlen, "%s", why);
        else if (why[0])
            set_err(err, errlen, "--raw: %s", why);
        else
            set_err(err, errlen, "--raw: expected WxH[:u8|u16|f32], got '%s'", arg);
        return -1;
    }
    o.raw = true;
    c->load = o;
    return 0;
}

static int exr_compression_option(Config *c, const char *arg, char *err, size_t errlen)
{
    int k = exr_compression_parse(arg);
    if (k < 0) {
        set_err(err, errlen, "--exr-compression: expected zip, zips, piz, rle, pxr24, b44, dwaa "
                "or none, got '%s'", arg);
        return -1;
    }
    if (!exr_compression_available((ImageExrCompression)k)) {
        set_err(err, errlen, "--exr-compression: this build's OpenEXR C library (%s) "
                "cannot write %s (it needs OpenEXR 3.2); zip and piz are lossless",
                exr_library_version(), arg);
        return -1;
    }
    c->exr_compression = (ImageExrCompression)k;
    return 0;
}

static int frame_range_option(Config *c, const char *arg, char *err, size_t errlen)
{
    const char *dash = strchr(arg, '-');
    char a[32] = "";
    long lo = 0, hi = -1;
    if (dash && (size_t)(dash - arg) < sizeof a) {
        memcpy(a, arg, (size_t)(dash - arg));
        a[dash - arg] = '\0';
    }
    if (!dash || !isdigit((unsigned char)a[0]) || !isdigit((unsigned char)dash[1]) ||
        !parse_long(a, 0, CONFIG_FRAME_MAX, &lo) || !parse_long(dash + 1, 0, CONFIG_FRAME_MAX, &hi) ||
        lo > hi) {
        set_err(err, errlen, "--frame-range: expected A-B with 0 <= A <= B <= %ld, got '%s'",
                CONFIG_FRAME_MAX, arg);
        return -1;
    }
    c->range_first = lo;
    c->range_last = hi;
    return 0;
}

/* --fps and --density-scale: a number in (0, hi]; 'auto' too for the scale */
static int positive_option(const char *name, const char *arg, double hi, double *out, char *err,
                           size_t errlen)
{
    double d;
    if (!parse_double(arg, &d) || !(d > 0.0) || d > hi) {
        if (strcmp(name, "fps") == 0)
            set_err(err, errlen, "--fps: expected a number in (0, %g], got '%s'", hi, arg);
        else
            set_err(err, errlen, "--%s: expected 'auto' or a number in (0, 1e6], got '%s'", name, arg);
        return -1;
    }
    *out = d;
    return 0;
}

static int special_option(Config *c, int opt, const char *arg, char *err, size_t errlen)
{
    double d;
    switch (opt) {
    case OPT_CPU: c->backend = BACKEND_CPU; return 0;
    case OPT_GRID: return grid_option(c, arg, err, errlen);
    case OPT_SIZE: return size_option("size", arg, 1, IMAGE_MAX_SIDE, &c->out_w, &c->out_h, err, errlen);
    case OPT_WINDOW: return size_option("window", arg, 16, 8192, &c->win_w, &c->win_h, err, errlen);
    case OPT_RAW: return raw_option(c, arg, err, errlen);
    case OPT_INVERT: c->load.invert = true; return 0;
    case OPT_MAX_IMAGE_MB: {
        long v;
        if (int_opt("max-image-mb", arg, 1, CONFIG_IMAGE_MB_MAX, &v, err, errlen) < 0) return -1;
        c->load.max_mb = (int)v;
        return 0;
    }
    case OPT_CHANNEL:
        if (!arg || image_parse_channel(arg, &c->load.channel) < 0) {
            set_err(err, errlen, "--channel: expected r, g, b, a or luma, got '%s'", arg ? arg : "");
            return -1;
        }
        return 0;
    case OPT_FRAMES:
        if (!strcmp(arg, "none")) { /* a headless run with metrics only */
            c->no_frames = true;
            return 0;
        }
        if (path_opt("frames", arg, &c->frames_dir, err, errlen) < 0) return -1;
        return config_parse_frames(arg, c, err, errlen) < 0 ? -1 : 0;
    case OPT_DENSITY_SCALE:
        if (!strcmp(arg, "auto")) {
            c->density_scale = 0.0f;
            return 0;
        }
        if (positive_option("density-scale", arg, 1e6, &d, err, errlen) < 0) return -1;
        c->density_scale = (float)d;
        return 0;
    case OPT_EXR_COMPRESSION: return exr_compression_option(c, arg, err, errlen);
    case OPT_FPS: return positive_option("fps", arg, CONFIG_FPS_MAX, &c->fps, err, errlen);
    case OPT_FRAME_RANGE: return frame_range_option(c, arg, err, errlen);
    case OPT_RECORD: {
        size_t n = strlen(arg);
        if (path_opt("record", arg, &c->record, err, errlen) < 0) return -1;
        if (n < 4 || strcasecmp(arg + n - 4, ".mp4") != 0) {
            set_err(err, errlen, "--record: a recording is an H.264 video whose name ends in .mp4, got '%s'", arg);
            return -1;
        }
        return 0;
    }
    case OPT_TRANSPORT_GROUP: {
        int x, y;
        if (config_parse_size(arg, &x, &y) < 0 || x % 8 || y % 8 || x > 1024 || y > 1024 || x * y > 1024) {
            set_err(err, errlen, "--transport-group: expected WxH, sides multiples of 8, at most 1024 "
                    "invocations, got '%s'", arg);
            return -1;
        }
        c->solver.transport_gx = x;
        c->solver.transport_gy = y;
        return 0;
    }
    case OPT_VIDEO:
        if (path_opt("video", arg, &c->video_path, err, errlen) < 0) return -1;
        if (!ends_with_ci(arg, ".mp4") && !ends_with_ci(arg, ".mov")) {
            set_err(err, errlen, "--video: '%s': expected a name ending in .mp4 (H.264) or .mov "
                    "(ProRes 4444 with alpha)", arg);
            return -1;
        }
        return 0;
    }
    set_err(err, errlen, "internal error: unhandled option %d", opt);
    return -1;
}


/* The output group's checks once every option is known; 0 or -1. */
static int output_check(Config *c, char *err, size_t errlen)
{
    if (c->frames_digits > 0) {
        bool exr_name = ends_with_ci(c->frames_suffix, ".exr");
        if (!c->format_set) c->format = exr_name ? IMAGE_FORMAT_EXR : IMAGE_FORMAT_PNG8;
        else if (exr_name != (c->format == IMAGE_FORMAT_EXR)) {
            set_err(err, errlen, "--frames: the pattern's name ends in %s, but --format is %s",
                    c->frames_suffix, choice_name(OPT_FORMAT, c->format));
            return -1;
        }
    }
    if (c->exr_set && c->format != IMAGE_FORMAT_EXR) {
        set_err(err, errlen, "--exr-type, --exr-compression, --exr-tiled and --exr-velocity are "
                "for EXR frames: add --format exr");
        return -1;
    }
    if (c->png_set && c->format == IMAGE_FORMAT_EXR) {
        set_err(err, errlen, "--png-compression is for PNG frames; EXR frames take "
                "--exr-compression");
        return -1;
    }
    if (c->no_frames && c->frames_dir) {
        set_err(err, errlen, "--no-frames (--frames none) and --frames %s: give one of them",
                c->frames_dir);
        return -1;
    }
    if (!c->every_set) c->every = config_every(c->fps, c->params.dt);
    if (c->range_last >= 0) {
        if (c->range_first < c->frame_start) {
            set_err(err, errlen, "--frame-range: frame %ld comes before the first frame, %ld "
                    "(--frame-start)", c->range_first, c->frame_start);
            return -1;
        }
        double need = (double)(c->range_last - c->frame_start) * c->every;
        if (need > (double)CONFIG_STEPS_MAX || (c->steps > 0 && need > (double)c->steps)) {
            set_err(err, errlen, "--frame-range: frame %ld is step %.0f, beyond --steps %ld",
                    c->range_last, need, c->steps > 0 ? c->steps : CONFIG_STEPS_MAX);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Any row's option                                                       */

/* The index of arg among an SK_ENUM row's choices ("a|b|x=a"), or -1. */
static int choice_index(const char *choices, const char *arg)
{
    const char *s = choices;
    size_t alen = strlen(arg);
    for (int k = 0; s && *s; k++) {
        size_t n = strcspn(s, "|");
        const char *eq = memchr(s, '=', n);
        size_t name = eq ? (size_t)(eq - s) : n;
        if (name == alen && alen > 0 && strncmp(s, arg, alen) == 0) {
            if (!eq) return k;
            char target[64];
            snprintf(target, sizeof target, "%.*s", (int)(n - name - 1), eq + 1);
            return choice_index(choices, target);
        }
        s += n + (s[n] == '|');
    }
    return -1;
}

/* "a, b or c": the choices as a message says them (aliases left out). */
static void choice_text(const char *choices, char *buf, size_t size)
{
    int n = 0;
    buf[0] = '\0';
    for (const char *s = choices; s && *s;) {
        size_t len = strcspn(s, "|");
        n += len > 0 && !memchr(s, '=', len);
        s += len + (s[len] == '|');
    }
    int k = 0;
    for (const char *s = choices; s && *s;) {
        size_t len = strcspn(s, "|"), used = strlen(buf);
        if (len > 0 && !memchr(s, '=', len)) {
            snprintf(buf + used, size - used, "%s%.*s", k == 0 ? "" : k == n - 1 ? " or " : ", ",
                     (int)len, s);
            k++;
        }
        s += len + (s[len] == '|');
    }
}

/* Row r's option with its value into c; 0 or -1. */
static int apply_row(Config *c, const Row *r, int opt, const char *arg, char *err, size_t errlen)
{
    void *m = (char *)c + r->off;
    long v;
    switch (r->kind) {
    case SK_FLOAT:
        if ((r->flags & SF_AUTO) && arg && strcasecmp(arg, "auto") == 0) return *(float *)m = SETTING_AUTO, 0;
        if (float_opt(r->opt, arg, m, err, errlen) < 0) {
            if (r->flags & SF_AUTO) set_err(err, errlen, "--%s: expected a number or auto, got '%s'", r->opt, arg);
            return -1;
        }
        /* a negative number is out of the range, not "auto" */
        if ((r->flags & SF_AUTO) && *(float *)m < 0.0f) *(float *)m = 2.0f * SETTING_AUTO;
        return 0; /* ranges: method_params_check */
    case SK_INT:
        if (r->where == 'P') return solver_int_opt(r->opt, arg, m, err, errlen);
        if (int_opt(r->opt, arg, (long)r->lo, (long)r->hi, &v, err, errlen) < 0) return -1;
        *(int *)m = (int)v;
        return 0;
    case SK_LONG: return int_opt(r->opt, arg, (long)r->lo, (long)r->hi, m, err, errlen);
    case SK_BOOL: *(bool *)m = true; return 0;
    case SK_NOT: *(bool *)m = false; return 0;
    case SK_ENUM: {
        int k = arg ? choice_index(r->choices, arg) : -1;
        if (k < 0) {
            char text[512];
            choice_text(r->choices, text, sizeof text);
            set_err(err, errlen, "--%s: expected %s, got '%s'", r->opt, r->range ? r->range : text,
                    arg ? arg : "");
            return -1;
        }
        *(int *)m = k;
        return 0;
    }
    case SK_PATH: return path_opt(r->opt, arg, m, err, errlen);
    case SK_STR: *(const char **)m = arg; return 0;
    case SK_COLOR:
        if (config_parse_color(arg, m) < 0) {
            set_err(err, errlen, "--%s: expected RRGGBB or #RRGGBB (hex), got '%s'", r->opt, arg);
            return -1;
        }
        return 0;
    case SK_SPECIAL: return special_option(c, opt, arg, err, errlen);
    case SK_ACTION: break;
    }
    set_err(err, errlen, "internal error: option --%s is not a setting", r->opt);
    return -1;
}

/* Each row's ALSO statement. */
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ALSO, ...)                                                                \
    case OPT_##ID: ALSO; break;
static void also(Config *c, int opt)
{
    switch (opt) {
#include "settings.def"
    }
}
#undef SETTING

/* One option with its argument; 0 or -1. */
static int apply_option(Config *c, int opt, const char *arg, char *err, size_t errlen)
{
    if (opt < 256 || opt >= OPT_END) {
        set_err(err, errlen, "internal error: unhandled option %d", opt);
        return -1;
    }
    const Row *r = &rows[opt - 256];
    if (apply_row(c, r, opt, arg, err, errlen) < 0) return -1;
    if (r->flags & SF_EXTRA) c->set_extras = true;
    if ((r->flags & SF_WINDOW) && !c->window_only) c->window_only = r->opt;
    also(c, opt);
    return 0;
}

/* The images, in order (argv's non-options, and what follows "--"). */
typedef struct {
    const char *pos[CONFIG_KEYS_MAX + 2];
    int n;
} Positionals;

static void positional(Positionals *ps, const char *arg)
{
    if (ps->n < CONFIG_KEYS_MAX + 2) ps->pos[ps->n] = arg;
    ps->n++;
}

/* argv's options into c, each marked given; the images into ps. 0 to run,
 * 1 when --help or --version was printed, -1 with one line in err. */
static int parse_options(Config *c, int argc, char **argv, Positionals *ps, char *err, size_t errlen)
{
    bool no_progress = false;
    int opt;
    reset_getopt();
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        char name[64];
        switch (opt = long_code(opt)) {
        case OPT_HELP:
            config_usage(stdout, argv[0]);
            fflush(stdout);
            return 1;
        case OPT_VERSION:
            printf("smokemorph %s\n", SMOKEMORPH_VERSION);
            fflush(stdout);
            return 1;
        case OPT_QUIET: c->verbosity = 0; break;
        case OPT_VERBOSE: c->verbosity = 2; break;
        case OPT_NO_PROGRESS: no_progress = true; break;
        case 1: positional(ps, optarg); break;
        case ':':
            offending_option(argc, argv, name, sizeof name);
            set_err(err, errlen, "%s needs a value (see --help)", name);
            return -1;
        case '?':
            refused_option(argc, argv, err, errlen);
            return -1;
        default:
            if (apply_option(c, opt, optarg, err, errlen) < 0) return -1;
            break;
        }
        mark_given(c, opt);
    }
    for (int i = optind; i < argc; i++) positional(ps, argv[i]); /* after "--" */
    c->progress = !no_progress && c->verbosity > 0;
    return 0;
}

/* What only the options together decide: --force fattal's defaults, the
 * solver's ranges, the output group's checks, the compare's settings. 0,
 * or -1 with one line in err. */
static int check_together(Config *c, char *err, size_t errlen)
{
    /* --force fattal is the paper's method: none of the additions unless asked */
    if (c->params.force == SOLVER_FORCE_FATTAL && !c->set_extras) {
        c->params.vk = 0.0f;
        c->params.framp = 0.0f;
        c->params.tramp = 0.0f;
        c->params.swirl = 0.0f; /* vorticity confinement is an addition too */
        c->params.subgrid = 0.0f; /* and the subgrid mixing */
        c->params.force_noise = 0.0f; /* and the force's noise */
    }
    const char *why = method_params_check(&c->params);
    if (why) {
        set_err(err, errlen, "%s", why);
        return -1;
    }
    if (output_check(c, err, errlen) < 0) return -1;
    if (!c->compare && !c->compare_preset) return 0;
    /* B against the run's own parameters */
    CompareSpec cs;
    if (c->compare && c->compare_preset) {
        set_err(err, errlen, "--compare and --compare-preset: give one of them");
        return -1;
    }
    char cwhy[256];
    if ((c->compare ? compare_parse(c->compare, &c->params, &cs, cwhy, sizeof cwhy)
                    : compare_preset(c->compare_preset, &c->params, &cs, cwhy, sizeof cwhy)) < 0) {
        set_err(err, errlen, "%s %s", c->compare ? "--compare:" : "--compare-preset:", cwhy + strlen("compare: "));
        return -1;
    }
    return 0;
}

/* The images: none (the bundled pair), or CURRENT and 1..CONFIG_KEYS_MAX
 * TARGETs. 0, or -1 with one line in err. */
static int take_images(Config *c, const Positionals *ps, char *err, size_t errlen)
{
    int npos = ps->n;
    if (npos == 1) {
        set_err(err, errlen, "got one image '%s': give both CURRENT and TARGET, or none", ps->pos[0]);
        return -1;
    }
    if (npos > CONFIG_KEYS_MAX + 1) {
        set_err(err, errlen, "too many arguments: expected CURRENT and at most %d TARGETs, got %d "
                "(first extra '%s')", CONFIG_KEYS_MAX, npos, ps->pos[CONFIG_KEYS_MAX + 1]);
        return -1;
    }
    if (npos < 2) return 0;
    for (int k = 0; k < npos; k++)
        if (!ps->pos[k][0]) {
            set_err(err, errlen, "empty image path");
            return -1;
        }
    c->current_path = ps->pos[0];
    c->target_path = ps->pos[1];
    c->nkeys = npos - 1;
    for (int k = 0; k < c->nkeys; k++) c->key_paths[k] = ps->pos[k + 1];
    if (c->steps == 0 && c->nkeys > 1 && (double)c->nkeys * (double)c->key_every > (double)CONFIG_STEPS_MAX) {
        set_err(err, errlen, "--key-every: %d TARGETs of %ld steps each are more than %ld steps",
                c->nkeys, c->key_every, CONFIG_STEPS_MAX);
        return -1;
    }
    return 0;
}

int config_parse(Config *c, int argc, char **argv, char *err, size_t errlen)
{
    config_defaults(c);
    if (err && errlen) err[0] = '\0';
    if (argc < 1 || !argv) return 0;
    Positionals ps = {.n = 0};
    int r = parse_options(c, argc, argv, &ps, err, errlen);
    if (r != 0) return r;
    if (check_together(c, err, errlen) < 0) return -1;
    return take_images(c, &ps, err, errlen);
}

/* ---- scene files (issue 9): options by name --------------------------- */

int config_option(Config *c, const char *name, const char *arg, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    const Row *r = row_named(name);
    if (!r || r->kind == SK_ACTION) {
        set_err(err, errlen, "internal error: no option --%s", name);
        return -1;
    }
    if ((r->arg != NULL) != (arg != NULL)) {
        set_err(err, errlen, "--%s %s", name, arg ? "takes no value" : "needs a value");
        return -1;
    }
    int opt = 256 + (int)(r - rows);
    if (apply_option(c, opt, arg, err, errlen) < 0) return -1;
    mark_given(c, opt);
    return 0;
}

int config_each_option(int argc, char **argv, void (*fn)(void *ctx, const char *name, const char *arg),
                       void *ctx)
{
    if (argc < 1 || !argv) return 0;
    reset_getopt();
    int opt, n = 0;
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        opt = long_code(opt);
        const char *name = opt >= 256 && opt < OPT_END ? rows[opt - 256].opt : NULL;
        if (!name) continue; /* an image, or what config_parse refuses */
        fn(ctx, name, optarg);
        n++;
    }
    return n;
}

/* The last --scene's value: the walk of config_each_option. */
static void last_scene(void *ctx, const char *name, const char *arg)
{
    if (strcmp(name, "scene") == 0) *(const char **)ctx = arg;
}

const char *config_find_scene(int argc, char **argv)
{
    const char *path = NULL;
    config_each_option(argc, argv, last_scene, &path);
    return path;
}

static void last_dt(void *ctx, const char *name, const char *arg)
{
    if (strcmp(name, "dt") == 0) *(const char **)ctx = arg;
}

float config_find_dt(int argc, char **argv)
{
    const char *v = NULL;
    config_each_option(argc, argv, last_dt, &v);
    char *end;
    double d = v ? strtod(v, &end) : 0.0;
    /* the range --dt takes (config_parse says why otherwise) */
    return v && end != v && !*end && d > 0.0 && d <= 1.0 ? (float)d : 0.0f;
}
