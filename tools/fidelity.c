/* fidelity: run the fidelity suite, a fixed set of start → target pairs drawn
 * by mktargets, with the default parameters, and print one Markdown table row
 * per pair: how close the morph gets and how fast, whether mass is kept,
 * whether it cross-fades, whether it stripes, and whether grids agree.
 *
 *   build/tools/fidelity --cpu --grid 128 --steps 3000 --jobs 4 > table.md
 *   build/tools/fidelity --pairs diagonal,ring-word --strips out/ --csv out/f.csv
 *
 * The measures are src/fidelity.h's; docs/FIDELITY.md says what each column
 * means and holds the tables. The table goes to stdout, one progress line per
 * finished pair to stderr. Speeds are not measured here (tools/bench). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "fidelity.h"
#include "glctx.h"
#include "image.h"
#include "morph.h"
#include "shader.h"

#define TAG "fidelity"

extern char **environ;

/* ------------------------------------------------------------ the suite */

/* A pair: mktargets shapes for the start and the target (coordinates in
 * units of the shorter side, which is 1), and the grid's aspect (width =
 * aspect × height). */
typedef struct {
    const char *name;
    const char *what;
    const char *start;
    const char *target;
    int aspect;
} Pair;

static const Pair suite[] = {
    {"diagonal", "disc r=0.12 from (0.25,0.75) to (0.75,0.25): a front moving diagonally",
     "disc:0.25,0.75,0.12", "disc:0.75,0.25,0.12", 1},
    {"crescent-bars", "a crescent into two separate vertical bars (a split)",
     "disc:0.5,0.5,0.3 disc:0.63,0.4,0.26:sub", "rect:0.22,0.2,0.38,0.8 rect:0.62,0.2,0.78,0.8", 1},
    {"one-three", "one disc into three separate discs of unequal size",
     "disc:0.5,0.5,0.25", "disc:0.28,0.3,0.16 disc:0.74,0.36,0.11 disc:0.45,0.76,0.07", 1},
    {"three-one", "three separate discs into one (a merge)",
     "disc:0.25,0.3,0.12 disc:0.75,0.3,0.12 disc:0.5,0.75,0.12", "disc:0.5,0.5,0.22", 1},
    {"ring-word", "a ring logo into the word SMOKE (strokes 3% of the box)",
     "ring:0.5,0.5,0.26,0.09", "text:0.5,0.5,0.16,SMOKE:w=0.19", 1},
    {"word-ring", "the word SMOKE into a ring logo", "text:0.5,0.5,0.16,SMOKE:w=0.19",
     "ring:0.5,0.5,0.26,0.09", 1},
    {"corners", "a small square top left into a star bottom right", "rect:0.05,0.05,0.22,0.22",
     "star:0.8,0.8,0.15,0.065,5", 1},
    {"blob-square", "a small dense disc into a large faint square", "disc:0.5,0.5,0.1",
     "rect:0.15,0.15,0.85,0.85:v=0.3", 1},
    {"square-blob", "a large faint square into a small dense disc", "rect:0.15,0.15,0.85,0.85:v=0.3",
     "disc:0.5,0.5,0.1", 1},
    {"disc-ring", "a disc into a ring around it", "disc:0.5,0.5,0.2", "ring:0.5,0.5,0.3,0.08", 1},
    {"heart-cross", "a heart into a cross", "heart:0.5,0.5,0.3",
     "rect:0.42,0.2,0.58,0.8 rect:0.2,0.42,0.8,0.58", 1},
    {"blob-star", "the bundled pair: blob.png into star.png", "disc:0.5,0.7,0.2",
     "star:0.5,0.545,0.34,0.14,5", 1},
    {"ring-hi", "a ring into the text HI", "ring:0.5,0.5,0.26,0.09", "text:0.5,0.5,0.36,HI:w=0.2", 1},
    {"grey", "a disc into a greyscale target: a faint square under discs of density 0.6 and 1",
     "disc:0.5,0.5,0.22", "rect:0.15,0.2,0.85,0.8:v=0.25 disc:0.35,0.5,0.15:v=0.6 disc:0.68,0.45,0.12",
     1},
    {"wide", "2:1 grid: a disc on the left into two discs on the right", "disc:0.4,0.5,0.2",
     "disc:1.45,0.3,0.13 disc:1.65,0.7,0.13", 2},
};
#define NSUITE ((int)(sizeof suite / sizeof suite[0]))
/* --pair adds pairs of the user's own after the suite's (held-out cases) */
#define NPAIRS_ADDED_MAX 32
#define NPAIRS_MAX (NSUITE + NPAIRS_ADDED_MAX)
static Pair pairs[NPAIRS_MAX]; /* the suite's, then --pair's */
static int npairs;

/* The key sequences (--keys, issue 9 point 5): a start and three keys drawn
 * from the suite's shapes, each key the goal for --key-every steps (key k for
 * steps (k-1)N+1 .. kN), velocity and density carried over at each key. */
#define NSEQ_KEYS 3
typedef struct {
    const char *name;
    const char *what;
    const char *start;
    const char *key[NSEQ_KEYS];
    const char *key_name[NSEQ_KEYS];
} Sequence;

static const Sequence sequences[] = {
    {"split-merge", "one disc splits into three unequal discs, they regroup into two bars, the bars merge into one disc",
     "disc:0.5,0.5,0.25",
     {"disc:0.28,0.3,0.16 disc:0.74,0.36,0.11 disc:0.45,0.76,0.07",
      "rect:0.22,0.2,0.38,0.8 rect:0.62,0.2,0.78,0.8", "disc:0.5,0.5,0.22"},
     {"three discs", "two bars", "one disc"}},
    {"logo-text", "a ring logo into the word SMOKE, back into the ring, then into the text HI (thin strokes)",
     "ring:0.5,0.5,0.26,0.09",
     {"text:0.5,0.5,0.16,SMOKE:w=0.19", "ring:0.5,0.5,0.26,0.09", "text:0.5,0.5,0.36,HI:w=0.2"},
     {"SMOKE", "ring", "HI"}},
    {"squeeze", "a large faint square compressed into a small dense disc, which spreads into a heart, then a cross",
     "rect:0.15,0.15,0.85,0.85:v=0.3",
     {"disc:0.5,0.5,0.1", "heart:0.5,0.5,0.3", "rect:0.42,0.2,0.58,0.8 rect:0.2,0.42,0.8,0.58"},
     {"small disc", "heart", "cross"}},
    {"tour", "a small square top left to a star bottom right, a disc bottom left, a disc top right (long trips)",
     "rect:0.05,0.05,0.22,0.22",
     {"star:0.8,0.8,0.15,0.065,5", "disc:0.25,0.75,0.12", "disc:0.75,0.25,0.12"},
     {"star in the far corner", "disc bottom left", "disc top right"}},
};
#define NSEQS ((int)(sizeof sequences / sizeof sequences[0]))
#define KEY_PASS 0.05 /* issue 9: the error against each key at its step */
#define KEY_EVERY_DEFAULT 1000L

/* the steps with a column of their own, and the steps of a strip's frames */
static const long at_steps[] = {10, 300, 1000, 3000};
#define NAT 4
/* the morph happens in the first 200 steps: the strip looks there closely */
#define NSTRIP_MAX 33 /* step 0 and up to 32 given with --strip-steps */
static long strip_steps[NSTRIP_MAX] = {0, 5, 10, 20, 40, 60, 80, 100, 150, 200, 300, 1000, 3000};
static int nstrip = 13;
/* the print-through index's steps (issue 20) */
static const long print_steps[] = {5, 10, 20};
#define NPRINT 3
#define SAMPLE_EVERY 10 /* steps between observations */
#define COMPARE_STEP 1000
#define STRIP_GAP 2
#define STRIP_GAP_GREY 0.3f

/* --------------------------------------------------------- options, env */

typedef struct {
    int grid;
    long steps;
    bool cpu, compare, list;
    MorphBackend backend;   /* --backend; --cpu is MORPH_CPU */
    bool backend_set;
    int jobs;
    const char *strips, *csv, *mktargets, *shader_dir;
    const char *curve;      /* --curve DIR: each pair's error at every observed step */
    long compare_at;        /* --compare-step: the compared step (before min with --steps) */
    bool compare_at_set;
    bool strip_steps_set;
    bool selected[NPAIRS_MAX];
    const char *pairs_list; /* --pairs, looked up once every --pair is known */
    SolverParams params;
    /* --keys: the key sequences instead of the pairs */
    bool keys, steps_set, pairs_set;
    long key_every;
    bool seq_selected[NSEQS];
} Opts;

/* What every pair's run needs besides the options. */
typedef struct {
    char tmpdir[PATH_MAX];
    char mktargets[PATH_MAX];
    const char *shader_dir; /* NULL: the CPU reference */
    MorphBackend backend;
} Env;

/* Everything measured for one pair; plain data, so a --jobs child can send
 * it through a pipe. Step counts are -1 for "never" / "not run". */
/* "within 3%": the error of the steps-to-3% column, and the end of U and
 * Uc's window to 3% */
#define WITHIN_3 0.03

typedef struct {
    int ok;
    char err[512];
    int w, h;
    long steps;
    double err0, err_at[NAT], err_end;
    long steps10, steps3;
    double drift;
    long half_step;
    double blend, blend_s;
    double stripes0, stripes_max, stripes_tgt; /* stripes_tgt: S of the target at the start's mass */
    long stripes_max_step;
    double d128_512;
    long compare_step;
    /* does the flow carry the smoke (issue 20; src/fidelity.h) */
    double u, uc;              /* the flow shares over steps 1 .. half_step (or all) */
    double u3, uc3;            /* the same over steps 1 .. steps3 (or all): the whole way in */
    double print[NPRINT];      /* P at print_steps */
    double front;              /* the largest distance beyond the reach, domain units */
    double swirl;              /* the mean enstrophy over the same steps */
    double seconds;
    double arrive;             /* the arrival the morph planned, s (--arrive auto: the trip's) */
} Result;

static pid_t main_pid;
static char cleanup_dir[PATH_MAX];

/* Remove the temporary directory and what is in it (the parent only). */
static void cleanup(void)
{
    if (getpid() != main_pid || !cleanup_dir[0]) return;
    DIR *d = opendir(cleanup_dir);
    if (d) {
        struct dirent *e;
        char p[PATH_MAX + 256];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", cleanup_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(cleanup_dir);
    cleanup_dir[0] = '\0';
}

/* One line "fidelity: ..." on stderr, then exit 1 (atexit removes the
 * temporary directory). */
static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", TAG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(void)
{
    printf("usage: fidelity [options]\n"
           "Run the fidelity suite: %d start -> target pairs drawn by mktargets at the grid\n"
           "size, morphed with the default parameters (no per-pair tuning), one Markdown\n"
           "table row per pair on stdout, one progress line per pair on stderr.\n"
           "\n"
           "options:\n"
           "  --grid N            grid side, 8..2048; 2:1 pairs run on 2N x N (default 256)\n"
           "  --steps N           steps per pair, 1..1000000 (default 3000); columns for\n"
           "                      steps beyond N print -\n"
           "  --backend B         compute, fragment or cpu (default: compute where the\n"
           "                      headless GL context has OpenGL 4.3, else fragment;\n"
           "                      without a GL context, fidelity stops)\n"
           "  --cpu               the CPU reference solver, as --backend cpu\n"
           "  --pairs A,B,...     run only these pairs (default: all; --list names them)\n"
           "  --pair 'NAME|START|TARGET[|ASPECT]'\n"
           "                      add a pair of your own (repeatable, up to %d): START\n"
           "                      and TARGET in mktargets' shapes (mktargets --help),\n"
           "                      e.g. 'tri-hi|star:0.5,0.5,0.3,0.15,3|text:0.5,0.5,0.3,HI';\n"
           "                      ASPECT the grid's width over its height, 1..4\n"
           "                      (default 1); without --pairs only the added pairs run\n"
           "  --list              list the pairs and what they test, then exit\n"
           "  --compare           also run each pair at 128 and 512 (2:1: 256x128 and\n"
           "                      1024x512) to step min(1000, N) and fill '128 vs 512'\n"
           "  --compare-step S    compare at step min(S, N) instead of min(1000, N), e.g.\n"
           "                      3000 to compare a slow morph after it has arrived\n"
           "  --strips DIR        write DIR/PAIR.png: grey frames at steps 0, 5, 10, 20, 40,\n"
           "                      60, 80, 100, 150, 200 (where the morph happens), 300\n"
           "                      (3 s, the shortest arrival), 1000, 3000 (those <= N), then\n"
           "                      the target image, side by\n"
           "                      side, density clamped to [0, 1]; with --compare also\n"
           "                      DIR/PAIR-128.png and DIR/PAIR-512.png, the two compared\n"
           "                      frames\n"
           "  --strip-steps A,B,...\n"
           "                      the strips' frames at these steps instead (after step\n"
           "                      0; increasing, 1..1000000, up to 32), e.g.\n"
           "                      150,300,600,900,1200 for a slow compression\n"
           "  --curve DIR         write DIR/PAIR-WxH.csv: step,error at every observed\n"
           "                      step (every step to 200, then every 10, and every step\n"
           "                      until the error halves), to compare timings between\n"
           "                      grids or settings\n"
           "  --csv FILE          write the same data, and more, as CSV\n"
           "  --jobs N            run N pairs at a time in forked processes, 1..64;\n"
           "                      CPU only (default 1)\n"
           "  --param NAME=VALUE  override a default parameter, by its option or its\n"
           "                      name as --compare takes them (settings.def): vf, vd,\n"
           "                      vg, sigma, dt, umax, vb, drift, drift-max, swirl, arrive,\n"
           "                      jacobi, vcycles, gather=0, force=balance|fattal, ...\n"
           "                      (force=fattal alone is the paper's method) (repeatable)\n"
           "  --keys              run the key sequences instead of the pairs: a start and\n"
           "                      3 keys, each key the goal for --key-every steps, velocity\n"
           "                      and density carried over; one row per key: the error\n"
           "                      against the key at its step, pass if <= %.0f%%\n"
           "  --sequences A,B,... run only these sequences (implies --keys; --keys --list\n"
           "                      names them)\n"
           "  --key-every N       steps a key, 2..1000000 (default %ld; implies --keys);\n"
           "                      key k is reached at step k*N\n"
           "                      With --keys, --strips DIR writes DIR/SEQ.png: frames at\n"
           "                      step 0 and, for each key, a quarter, half and three\n"
           "                      quarters into its range and at its step, with the\n"
           "                      key's image under the latter\n"
           "  --mktargets PATH    the mktargets tool (default: next to this program)\n"
           "  --shader-dir DIR    the shaders (default: the search path smokemorph uses)\n"
           "  --help              show this help\n"
           "\n"
           "columns (error = sum|rho - rho*| / sum rho*, rho* the target at the start's mass;\n"
           "observed every %d steps):\n"
           "  err@K               the error at step K\n"
           "  steps to 10%%, 3%%    the first observed step with error <= 0.10, 0.03\n"
           "  mass drift          max |mass - mass(0)| / mass(0) over the observed steps\n"
           "  blend dist @ half   at the first observed step with error <= half of\n"
           "                      error(0): min over s in [0,1] of\n"
           "                      sum|rho - ((1-s) start + s rho*)| / sum rho*\n"
           "                      (0: a cross-fade; smoke that moved reads more)\n"
           "  stripes (max/start) max over observed frames of stripes(frame)/stripes(step 0),\n"
           "                      stripes = mean |diagonal second differences| / mean density\n"
           "  128 vs 512          normalised L1 between the 128 and 512 runs at step\n"
           "                      min(1000, N), the finer area-averaged to the coarser\n"
           "                      (--compare)\n"
           "with --keys (error against key k, rho* = key k at the smoke's mass at the\n"
           "switch, as the morph scales it):\n"
           "  err from            the error at the key's range's start, step (k-1)*N\n"
           "  err at key          the error at the key's step k*N\n"
           "  steps to 5%%         the first observed step in the range with error <= 0.05,\n"
           "                      counted from the range's start\n"
           "  mass drift          max |mass - mass(0)| / mass(0) over the range\n"
           "  fastest fall        the error's largest fall between observations, per\n"
           "                      %d steps, over err from: a key that pops in reads high\n"
           "docs/FIDELITY.md defines them precisely.\n",
           NSUITE, NPAIRS_ADDED_MAX, 100.0 * KEY_PASS, KEY_EVERY_DEFAULT, SAMPLE_EVERY, SAMPLE_EVERY);
}

/* Parse an integer option in [lo, hi] or fail naming it. */
static long parse_long(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        fail("%s: expected an integer in %ld..%ld, got '%s'", opt, lo, hi, s);
    return v;
}

static int pair_index(const char *name)
{
    for (int k = 0; k < npairs; k++)
        if (!strcmp(pairs[k].name, name)) return k;
    return -1;
}

/* A comma-separated list of names into selected[] (index by lookup): one
 * parser for --pairs and --sequences. */
static void parse_names(const char *list, const char *opt, const char *what, const char *lister,
                        int (*lookup)(const char *), bool *selected, size_t count)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) fail("out of memory");
    memset(selected, 0, count * sizeof *selected);
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = lookup(tok);
        if (k < 0) {
            fprintf(stderr, "%s: %s: unknown %s '%s' (%s names them)\n", TAG, opt, what, tok, lister);
            free(copy);
            exit(1);
        }
        selected[k] = true;
        n++;
    }
    free(copy);
    if (!n) fail("%s: expected a comma-separated list of %ss, got '%s'", opt, what, list);
}

static int sequence_index(const char *name)
{
    for (int k = 0; k < NSEQS; k++)
        if (!strcmp(sequences[k].name, name)) return k;
    return -1;
}

static void parse_pairs(Opts *o, const char *list)
{
    parse_names(list, "--pairs", "pair", "--list", pair_index, o->selected, NPAIRS_MAX);
}

static void parse_sequences(Opts *o, const char *list)
{
    parse_names(list, "--sequences", "sequence", "--keys --list", sequence_index, o->seq_selected, NSEQS);
}

static bool g_set_extras; /* drift or an ease given: force=fattal keeps them */

/* --param NAME=VALUE: any parameter of settings.def's by its name or option
 * (method_param_index), as smokemorph --compare takes it. */
static void parse_param(SolverParams *p, const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) fail("--param: expected NAME=VALUE, got '%s'", s);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
    int k = method_param_index(name);
    if (k < 0) {
        char list[512] = "";
        for (int j = 0; j < METHOD_PARAM_COUNT; j++) {
            const MethodParamInfo *in = &method_param_info[j];
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", j ? ", " : "",
                     in->option && strncmp(in->option, "no-", 3) ? in->option : in->name);
        }
        fail("--param: unknown parameter '%s' (%s)", name, list);
    }
    double v;
    char kind = method_param_info[k].kind;
    if (method_param_parse(k, eq + 1, &v) < 0)
        fail("--param: %s=%s: %s", name, eq + 1,
             kind == 'b' ? "give on or off (1 or 0)" : kind == 'e' ? "give balance or fattal"
             : kind == 'i' ? "give a whole number" : method_param_info[k].autov ? "give a number or auto" : "give a number");
    method_param_set(p, k, v);
    if (method_param_info[k].extra) g_set_extras = true;
}

/* --pair NAME|START|TARGET[|ASPECT]: a pair of the user's own, START and
 * TARGET in mktargets' shapes (mktargets --help), ASPECT the grid's width
 * over its height (1..4, default 1). The first --pair clears the selection,
 * so that without --pairs only the added pairs run. The strings live until
 * the program ends. */
static void add_pair(const char *arg, Opts *o, bool first)
{
    if (npairs >= NPAIRS_MAX) fail("--pair: at most %d pairs of your own", NPAIRS_ADDED_MAX);
    char *s = strdup(arg);
    if (!s) fail("out of memory");
    char *f[5];
    int n = 0;
    for (char *p = s; n < 5; n++) {
        f[n] = p;
        char *bar = strchr(p, '|');
        if (!bar) { n++; break; }
        *bar = '\0';
        p = bar + 1;
    }
    if (n < 3 || n > 4)
        fail("--pair: expected NAME|START|TARGET[|ASPECT], got '%s' (quote it: the shell reads |)", arg);
    if (!*f[0] || strspn(f[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(f[0]))
        fail("--pair: '%s' is not a name: give letters, digits, '-', '_' or '.'", f[0]);
    if (pair_index(f[0]) >= 0) fail("--pair: there is already a pair named '%s' (--list names them)", f[0]);
    if (!*f[1] || !*f[2]) fail("--pair %s: give the start's and the target's shapes (mktargets --help)", f[0]);
    int aspect = n == 4 ? (int)parse_long("--pair's ASPECT", f[3], 1, 4) : 1;
    if (first) memset(o->selected, 0, sizeof o->selected);
    pairs[npairs] = (Pair){f[0], "added with --pair", f[1], f[2], aspect};
    o->selected[npairs++] = true;
}

/* --strip-steps A,B,...: the strips' frames after step 0 */
static void parse_strip_steps(const char *arg)
{
    if (!*arg) fail("--strip-steps: give the steps, like 150,300,600");
    int n = 1;
    const char *p = arg;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char one[32];
        if (len == 0 || len >= sizeof one) fail("--strip-steps: '%s' is not a list of steps like 150,300,600", arg);
        memcpy(one, p, len);
        one[len] = '\0';
        if (n >= NSTRIP_MAX) fail("--strip-steps: at most %d steps", NSTRIP_MAX - 1);
        long v = parse_long("--strip-steps", one, 1, 1000000);
        if (v <= strip_steps[n - 1]) fail("--strip-steps: give the steps in increasing order ('%s')", arg);
        strip_steps[n++] = v;
        p = c ? c + 1 : p + len;
        if (c && !*p) fail("--strip-steps: '%s' ends with a comma", arg);
    }
    nstrip = n;
}

static void parse_args(int argc, char **argv, Opts *o)
{
    enum { O_GRID = 256, O_STEPS, O_CPU, O_PAIRS, O_LIST, O_COMPARE, O_STRIPS, O_CSV, O_JOBS,
           O_PARAM, O_MKT, O_SDIR, O_HELP, O_BACKEND, O_KEYS, O_SEQS, O_KEY_EVERY, O_PAIR, O_STRIP_STEPS,
           O_CURVE, O_COMPARE_STEP };
    static const struct option opts[] = {
        {"grid", required_argument, NULL, O_GRID},       {"steps", required_argument, NULL, O_STEPS},
        {"cpu", no_argument, NULL, O_CPU},               {"pairs", required_argument, NULL, O_PAIRS},
        {"list", no_argument, NULL, O_LIST},             {"compare", no_argument, NULL, O_COMPARE},
        {"strips", required_argument, NULL, O_STRIPS},   {"csv", required_argument, NULL, O_CSV},
        {"jobs", required_argument, NULL, O_JOBS},       {"param", required_argument, NULL, O_PARAM},
        {"mktargets", required_argument, NULL, O_MKT},   {"shader-dir", required_argument, NULL, O_SDIR},
        {"help", no_argument, NULL, O_HELP},             {"backend", required_argument, NULL, O_BACKEND},
        {"keys", no_argument, NULL, O_KEYS},             {"sequences", required_argument, NULL, O_SEQS},
        {"key-every", required_argument, NULL, O_KEY_EVERY}, {"pair", required_argument, NULL, O_PAIR},
        {"strip-steps", required_argument, NULL, O_STRIP_STEPS}, {"curve", required_argument, NULL, O_CURVE},
        {"compare-step", required_argument, NULL, O_COMPARE_STEP},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->grid = 256;
    o->steps = 3000;
    o->jobs = 1;
    method_params_default(&o->params);
    memcpy(pairs, suite, sizeof suite);
    npairs = NSUITE;
    for (int k = 0; k < NSUITE; k++) o->selected[k] = true;
    o->key_every = KEY_EVERY_DEFAULT;
    o->compare_at = COMPARE_STEP;
    for (int k = 0; k < NSEQS; k++) o->seq_selected[k] = true;
    opterr = 0;
    int c, nadded = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_GRID: o->grid = (int)parse_long("--grid", optarg, 8, 2048); break;
        case O_STEPS: o->steps = parse_long("--steps", optarg, 1, 1000000); o->steps_set = true; break;
        case O_CPU: o->cpu = true; o->backend = MORPH_CPU; break;
        case O_BACKEND:
            if (!strcmp(optarg, "cpu")) o->cpu = true, o->backend = MORPH_CPU;
            else if (!strcmp(optarg, "fragment")) o->cpu = false, o->backend = MORPH_FRAGMENT;
            else if (!strcmp(optarg, "compute")) o->cpu = false, o->backend = MORPH_COMPUTE;
            else fail("--backend: '%s' is not compute, fragment or cpu", optarg);
            o->backend_set = true;
            break;
        case O_PAIRS: o->pairs_list = optarg; o->pairs_set = true; break;
        case O_PAIR: add_pair(optarg, o, nadded++ == 0); break;
        case O_KEYS: o->keys = true; break;
        case O_SEQS: parse_sequences(o, optarg); o->keys = true; break;
        case O_KEY_EVERY: o->key_every = parse_long("--key-every", optarg, 2, 1000000); o->keys = true; break;
        case O_LIST: o->list = true; break;
        case O_COMPARE: o->compare = true; break;
        case O_STRIPS: o->strips = optarg; break;
        case O_STRIP_STEPS: parse_strip_steps(optarg); o->strip_steps_set = true; break;
        case O_CURVE: o->curve = optarg; break;
        case O_COMPARE_STEP:
            o->compare_at = parse_long("--compare-step", optarg, 1, 1000000);
            o->compare_at_set = true;
            break;
        case O_CSV: o->csv = optarg; break;
        case O_JOBS: o->jobs = (int)parse_long("--jobs", optarg, 1, 64); break;
        case O_PARAM: parse_param(&o->params, optarg); break;
        case O_MKT: o->mktargets = optarg; break;
        case O_SDIR: o->shader_dir = optarg; break;
        case O_HELP: usage(); exit(0);
        case ':': fail("%s needs a value (--help lists the options)", argv[optind - 1]);
        default: fail("unknown option '%s' (--help lists the options)", argv[optind - 1]);
        }
    }
    if (optind < argc) fail("unexpected argument '%s' (--help lists the options)", argv[optind]);
    if (o->pairs_list) parse_pairs(o, o->pairs_list);
    if (o->params.force == SOLVER_FORCE_FATTAL && !g_set_extras) {
        o->params.vk = 0.0f;   /* the paper's method, as smokemorph --force fattal */
        o->params.framp = 0.0f;
        o->params.tramp = 0.0f;
        o->params.swirl = 0.0f;
        o->params.subgrid = 0.0f;
    }
    const char *bad = method_params_check(&o->params);
    if (bad) fail("--param: %s", bad);
    if (o->jobs > 1 && !o->cpu) fail("--jobs needs --cpu: the GPU runs one pair at a time");
    if (o->keys && o->steps_set) fail("--steps: a key sequence runs --key-every steps a key");
    if (o->keys && o->compare) fail("--compare: not with --keys (it compares the pairs' grids)");
    if (o->keys && o->pairs_set) fail("--pairs: not with --keys (--sequences names sequences)");
    if (o->keys && nadded) fail("--pair: not with --keys (it adds a pair, not a sequence)");
    if (o->strip_steps_set && !o->strips) fail("--strip-steps: give --strips DIR too (where the strips go)");
    if (o->strip_steps_set && o->keys) fail("--strip-steps: not with --keys (a key's strip has fixed frames)");
    if (o->curve && o->keys) fail("--curve: not with --keys (it writes the pairs' errors)");
    if (o->compare_at_set && !o->compare) fail("--compare-step: give --compare too (it sets the compared step)");
}

/* The directory this program lives in (from /proc/self/exe, else argv0). */
static void exe_dir(const char *argv0, char *out, size_t n)
{
    char buf[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (len > 0) buf[len] = '\0';
    else snprintf(buf, sizeof buf, "%s", argv0);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
    else snprintf(buf, sizeof buf, ".");
    snprintf(out, n, "%s", buf);
}

/* -------------------------------------------------------------- drawing */

/* Draw SHAPES (space-separated mktargets specs) into PATH at w x h with a
 * Gaussian of grid/128 pixels (2 px at 256, like tools/make-targets.sh), so
 * the soft edge has the same width in domain units at every grid. Runs
 * mktargets directly (no shell); its message lands in err on failure. */
static int draw(const Env *env, const char *shapes, int w, int h, int side, const char *path,
                char *err, size_t errlen)
{
    char *copy = strdup(shapes), *save = NULL;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char size[64], blur[64], errpath[PATH_MAX + 16];
    snprintf(size, sizeof size, "%dx%d", w, h);
    snprintf(blur, sizeof blur, "%g", side / 128.0);
    if (snprintf(errpath, sizeof errpath, "%s.err", path) >= (int)sizeof errpath) {
        free(copy);
        snprintf(err, errlen, "the temporary path is too long");
        return -1;
    }
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)env->mktargets;
    argv[n++] = "-o";
    argv[n++] = (char *)path;
    argv[n++] = "--size";
    argv[n++] = size;
    argv[n++] = "--blur";
    argv[n++] = blur;
    for (char *tok = strtok_r(copy, " ", &save); tok && n < 63; tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    argv[n] = NULL;
    fflush(NULL);
    /* posix_spawn, not fork: this process may hold a GL context by now, and
     * drivers do not promise that a forked copy of one is safe to run (the
     * child only execs, but spawn never duplicates the mappings at all). */
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int se = posix_spawn(&pid, env->mktargets, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (se != 0) {
        free(copy);
        snprintf(err, errlen, "cannot run %.300s: %s", env->mktargets, strerror(se));
        return -1;
    }
    free(copy);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "cannot wait for mktargets: %s", strerror(errno));
            return -1;
        }
    int rc = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char line[400] = "";
        FILE *f = fopen(errpath, "r");
        if (f) {
            if (!fgets(line, sizeof line, f)) line[0] = '\0';
            fclose(f);
        }
        line[strcspn(line, "\n")] = '\0';
        snprintf(err, errlen, "mktargets failed: %s", line[0] ? line : "no message");
        rc = -1;
    }
    unlink(errpath);
    return rc;
}

/* Draw and load one image: SHAPES at w x h, named NAME-LABEL in the
 * temporary directory while it lives; NULL with err filled on failure. */
static Image *draw_shapes(const Env *env, const char *name, const char *label, const char *shapes,
                          int w, int h, char *err, size_t errlen)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s-%dx%d-%s.png", env->tmpdir, name, w, h, label);
    int side = w < h ? w : h;
    if (draw(env, shapes, w, h, side, path, err, errlen) < 0) return NULL;
    ImageLoadOpts lo = {0};
    char lerr[512];
    Image *im = image_load(path, &lo, lerr, sizeof lerr);
    unlink(path);
    if (!im) {
        snprintf(err, errlen, "%s", lerr);
        return NULL;
    }
    if (im->w != w || im->h != h) {
        snprintf(err, errlen, "mktargets drew %dx%d, not %dx%d", im->w, im->h, w, h);
        image_free(im);
        return NULL;
    }
    if (!(image_sum(im) > 0.0)) {
        snprintf(err, errlen, "the %s image is empty", label);
        image_free(im);
        return NULL;
    }
    return im;
}

/* Draw and load one image of a pair; NULL with err filled on failure. */
static Image *draw_image(const Env *env, const Pair *p, bool target, int w, int h, char *err,
                         size_t errlen)
{
    return draw_shapes(env, p->name, target ? "target" : "start", target ? p->target : p->start, w, h,
                       err, errlen);
}

/* ------------------------------------------------------------- the runs */

/* A strip under construction: panels of w x h side by side. */
typedef struct {
    Image *im;
    int w, h, panels;
} Strip;

/* Put a field into panel `panel` of row `row` (rows STRIP_GAP apart),
 * clamped to [0, 1]. */
static void strip_put_row(Strip *s, int panel, int row, const float *rho)
{
    if (!s || !s->im) return;
    int x0 = panel * (s->w + STRIP_GAP), y0 = row * (s->h + STRIP_GAP);
    for (int j = 0; j < s->h; j++)
        for (int i = 0; i < s->w; i++) {
            float v = rho[(size_t)j * s->w + i];
            s->im->px[(size_t)(y0 + j) * s->im->w + x0 + i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        }
}

static void strip_put(Strip *s, int panel, const float *rho) { strip_put_row(s, panel, 0, rho); }

/* An empty strip of `panels` panels of w x h in `rows` rows, grey between
 * and where nothing is put; -1 with one line in err when it would be wider
 * or taller than an image may be, or out of memory. */
static int strip_init(Strip *s, int w, int h, int panels, int rows, char *err, size_t errlen)
{
    s->w = w;
    s->h = h;
    s->panels = panels;
    long sw = (long)panels * w + (long)(panels - 1) * STRIP_GAP, sh = (long)rows * h + (long)(rows - 1) * STRIP_GAP;
    if (sw > IMAGE_MAX_SIDE || sh > IMAGE_MAX_SIDE) {
        snprintf(err, errlen, "a strip of %d frames of %dx%d would be %ldx%ld pixels, over the %d an image may have: "
                 "give fewer --strip-steps or a smaller --grid", panels, w, h, sw, sh, IMAGE_MAX_SIDE);
        return -1;
    }
    s->im = image_create((int)sw, (int)sh, 1);
    if (!s->im) return snprintf(err, errlen, "out of memory"), -1;
    for (size_t k = 0; k < (size_t)s->im->w * s->im->h; k++) s->im->px[k] = STRIP_GAP_GREY;
    return 0;
}

static bool is_strip_step(long step)
{
    for (int k = 1; k < nstrip; k++)
        if (strip_steps[k] == step) return true;
    return false;
}

/* Morph pair p on a w x h grid for `steps` steps. With r, observe every
 * SAMPLE_EVERY steps and fill r's measures (and the strip, when s). With
 * snap, copy the density at step snap_step into it (w*h floats). */
static int simulate(const Env *env, const Opts *o, const Pair *p, int w, int h, long steps, Result *r,
                    Strip *s, long snap_step, float *snap, char *err, size_t errlen)
{
    int rc = -1;
    Morph *m = NULL;
    float *rho = NULL, *blend_tgt = NULL, *prev = NULL, *vx = NULL, *vy = NULL, *front = NULL;
    FidelityFlow flow = {0}, flow3 = {0};
    FILE *curve = NULL; /* --curve */
    char curve_path[PATH_MAX + 64], curve_part[PATH_MAX + 96];
    bool flowing = r != NULL; /* U, Uc and the swirl: every step until the error halves */
    bool flowing3 = r != NULL; /* U and Uc to 3%: every step until the error is within 3% */
    float visible = 0.0f;
    Image *start = draw_image(env, p, false, w, h, err, errlen);
    Image *target = start ? draw_image(env, p, true, w, h, err, errlen) : NULL;
    if (!target) goto out_images;
    size_t n = (size_t)w * (size_t)h;
    char merr[512];
    m = morph_create(w, h, &o->params, start->px, target->px, true,
                     env->backend, env->shader_dir, merr, sizeof merr);
    if (!m) {
        snprintf(err, errlen, "%s", merr);
        goto out_images;
    }
    if (r) r->arrive = morph_params(m)->arrive;
    rho = malloc(n * sizeof *rho);
    blend_tgt = malloc(n * sizeof *blend_tgt);
    if (r) {
        prev = malloc(n * sizeof *prev);
        vx = malloc(n * sizeof *vx);
        vy = malloc(n * sizeof *vy);
    }
    if (!rho || !blend_tgt || (r && (!prev || !vx || !vy))) {
        snprintf(err, errlen, "out of memory");
        goto out_morph;
    }
    SolverParams rp = o->params;
    method_params_settle(&rp);
    double cell = 1.0 / (double)(w < h ? w : h);
    /* the target at the start's mass, as the morph uses it */
    double scale = image_sum(start) / image_sum(target);
    for (size_t k = 0; k < n; k++) blend_tgt[k] = (float)(target->px[k] * scale);

    double mass0 = 0.0, err0 = 0.0;
    if (r && o->curve) { /* written beside its place and renamed once whole */
        snprintf(curve_path, sizeof curve_path, "%s/%s-%dx%d.csv", o->curve, p->name, w, h);
        snprintf(curve_part, sizeof curve_part, "%s.tmp.%ld", curve_path, (long)getpid());
        if (!(curve = fopen(curve_part, "wx"))) {
            snprintf(err, errlen, "cannot write %.400s: %s", curve_part, strerror(errno));
            goto out_morph;
        }
    }
    if (r) {
        if (morph_observe(m, rho, &mass0, &err0, NULL) < 0) goto out_readback;
        if (curve && fprintf(curve, "step,error\n0,%.9g\n", err0) < 0) goto out_curve;
        r->err0 = r->err_end = err0;
        r->stripes0 = r->stripes_max = fidelity_stripes(rho, w, h);
        r->stripes_tgt = fidelity_stripes(blend_tgt, w, h);
        r->stripes_max_step = 0;
        if (s) strip_put(s, 0, rho);
        memcpy(prev, rho, n * sizeof *rho);
        float peak = 0.0f;
        for (size_t k = 0; k < n; k++) peak = rho[k] > peak ? rho[k] : peak;
        visible = (float)FIDELITY_FRONT_VISIBLE * peak;
        if (!(front = fidelity_front_map(rho, w, h, visible))) {
            snprintf(err, errlen, "out of memory");
            goto out_morph;
        }
    }
    for (long step = 1; step <= steps; step++) {
        if (morph_step(m) < 0) {
            snprintf(err, errlen, "step %ld failed", step);
            goto out_morph;
        }
        bool sample = r && (step % SAMPLE_EVERY == 0 || step == steps || flowing || flowing3 || step <= 200 ||
                            (s && is_strip_step(step)));
        bool snapping = snap && step == snap_step;
        if (!sample && !snapping) continue;
        double mass, e;
        if (morph_observe(m, rho, &mass, &e, NULL) < 0) goto out_readback;
        if (snapping) memcpy(snap, rho, n * sizeof *rho);
        if (!sample) continue;
        if (flowing || flowing3) { /* the velocity that moved prev to rho, in cells per step */
            if (morph_read_velocity(m, vx, vy) < 0) goto out_readback;
            /* as the transport bounds it: the projected flow within the
             * guard (method_transport_cap), not umax, since the eighth round;
             * and as it moved the smoke: a long arrival's pace slows the
             * whole flow (method_pace: the transport's share, r·u) */
            const SolverParams *mp = morph_params(m);
            double k = rp.dt / cell * (mp ? method_pace(mp, step) : 1.0), um = method_transport_cap(&rp);
            for (size_t c = 0; c < n; c++) {
                vx[c] = (float)(fmax(-um, fmin(um, vx[c])) * k);
                vy[c] = (float)(fmax(-um, fmin(um, vy[c])) * k);
            }
            /* one step's sums, added to both windows while both are open */
            FidelityFlow one = {0};
            if (fidelity_flow_add(&one, prev, rho, vx, vy, w, h, cell, rp.dt) < 0) {
                snprintf(err, errlen, "out of memory");
                goto out_morph;
            }
            if (flowing) fidelity_flow_merge(&flow, &one);
            if (flowing3) fidelity_flow_merge(&flow3, &one);
            memcpy(prev, rho, n * sizeof *rho);
            if (e <= 0.5 * err0) flowing = false;
            if (e <= WITHIN_3) flowing3 = false;
        }
        for (int k = 0; k < NPRINT; k++)
            if (step == print_steps[k]) r->print[k] = fidelity_print_through(rho, start->px, blend_tgt, w, h);
        double reach = (rp.umax * rp.dt * (double)step + rp.sigma) / cell;
        double ex = fidelity_front_excess(rho, front, w, h, visible, reach) * cell;
        if (ex > r->front) r->front = ex;
        r->err_end = e;
        for (int k = 0; k < NAT; k++)
            if (step == at_steps[k]) r->err_at[k] = e;
        if (r->steps10 < 0 && e <= 0.10) r->steps10 = step;
        if (r->steps3 < 0 && e <= WITHIN_3) r->steps3 = step;
        double drift = mass0 != 0.0 ? fabs(mass - mass0) / mass0 : 0.0; /* NaN when either is */
        if (!(drift <= r->drift)) r->drift = drift; /* NaN sticks */
        if (r->half_step < 0 && e <= 0.5 * err0) {
            r->half_step = step;
            r->blend = fidelity_blend_distance(rho, start->px, blend_tgt, n, &r->blend_s);
        }
        double st = fidelity_stripes(rho, w, h);
        if (st > r->stripes_max) {
            r->stripes_max = st;
            r->stripes_max_step = step;
        }
        for (int k = 1; s && k < nstrip; k++)
            if (step == strip_steps[k]) strip_put(s, k, rho);
        if (curve && fprintf(curve, "%ld,%.9g\n", step, e) < 0) goto out_curve;
    }
    if (s) strip_put(s, s->panels - 1, target->px);
    if (r) {
        r->u = fidelity_flow_u(&flow);
        r->uc = fidelity_flow_uc(&flow);
        r->swirl = fidelity_flow_enstrophy(&flow);
        r->u3 = fidelity_flow_u(&flow3);
        r->uc3 = fidelity_flow_uc(&flow3);
    }
    if (curve) {
        FILE *f = curve;
        curve = NULL;
        if (fclose(f) != 0 || rename(curve_part, curve_path) != 0) {
            snprintf(err, errlen, "cannot write %.400s: %s", curve_path, strerror(errno));
            unlink(curve_part);
            goto out_morph;
        }
    }
    rc = 0;
    goto out_morph;
out_curve:
    snprintf(err, errlen, "cannot write %.400s: %s", curve_part, strerror(errno));
    goto out_morph;
out_readback:
    snprintf(err, errlen, "cannot read the density back");
out_morph:
    if (curve) {
        fclose(curve);
        unlink(curve_part);
    }
    free(rho);
    free(blend_tgt);
    free(prev);
    free(vx);
    free(vy);
    free(front);
    morph_free(m);
out_images:
    image_free(start);
    image_free(target);
    return rc;
}

/* Run one pair with all its measures into r (r->ok = 0 and r->err on
 * failure). */

/* DIR/NAME.png, the strip: 0, or -1 with the reason in err */
static int save_strip(const char *dir, const char *name, const Image *im, char *err, size_t n)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    return image_save_png(path, im, 8, err, n);
}

static void run_pair(const Env *env, const Opts *o, int idx, Result *r)
{
    const Pair *p = &pairs[idx];
    memset(r, 0, sizeof *r);
    r->h = o->grid;
    r->w = o->grid * p->aspect;
    r->steps = o->steps;
    for (int k = 0; k < NAT; k++) r->err_at[k] = NAN;
    r->steps10 = r->steps3 = r->half_step = -1;
    r->blend = r->blend_s = r->d128_512 = NAN;
    r->compare_step = -1;
    r->u = r->uc = r->swirl = r->u3 = r->uc3 = r->arrive = NAN;
    r->front = 0.0; /* a max over the observed steps from 0 (the pair failed: ok = 0) */
    for (int k = 0; k < NPRINT; k++) r->print[k] = NAN;
    double t0 = now_s();

    Strip strip = {0}, *s = NULL;
    if (o->strips) {
        int panels = 1;
        for (int k = 1; k < nstrip; k++)
            if (strip_steps[k] <= o->steps) panels++;
        if (strip_init(&strip, r->w, r->h, panels + 1 /* + the target */, 1, r->err, sizeof r->err) < 0) return;
        s = &strip;
    }

    /* the compare runs: 128 and 512 to min(--compare-step, steps); the main run
     * provides the snapshot when its grid is one of them */
    long cstep = o->steps < o->compare_at ? o->steps : o->compare_at;
    const int cgrid[2] = {128, 512};
    float *csnap[2] = {NULL, NULL};
    float *main_snap = NULL;
    int main_is = -1;
    if (o->compare) {
        for (int k = 0; k < 2; k++)
            if (o->grid == cgrid[k]) main_is = k;
        for (int k = 0; k < 2; k++) {
            csnap[k] = malloc((size_t)cgrid[k] * p->aspect * cgrid[k] * sizeof(float));
            if (!csnap[k]) {
                snprintf(r->err, sizeof r->err, "out of memory");
                goto out;
            }
        }
        if (main_is >= 0) main_snap = csnap[main_is];
    }

    if (simulate(env, o, p, r->w, r->h, o->steps, r, s, cstep, main_snap, r->err, sizeof r->err) < 0)
        goto out;
    if (o->compare) {
        for (int k = 0; k < 2; k++) {
            if (k == main_is) continue;
            int g = cgrid[k];
            char cerr[512];
            if (simulate(env, o, p, g * p->aspect, g, cstep, NULL, NULL, cstep, csnap[k], cerr,
                         sizeof cerr) < 0) {
                snprintf(r->err, sizeof r->err, "%dx%d: %.400s", g * p->aspect, g, cerr);
                goto out;
            }
        }
        for (int k = 0; s && k < 2; k++) {
            int cw = cgrid[k] * p->aspect, ch = cgrid[k];
            Image *ci = image_create(cw, ch, 1);
            char path[PATH_MAX + 128], ierr[512];
            if (!ci) {
                snprintf(r->err, sizeof r->err, "out of memory");
                goto out;
            }
            for (size_t q = 0; q < (size_t)cw * ch; q++) {
                float v = csnap[k][q];
                ci->px[q] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
            }
            snprintf(path, sizeof path, "%s/%s-%d.png", o->strips, p->name, cgrid[k]);
            int src = image_save_png(path, ci, 8, ierr, sizeof ierr);
            image_free(ci);
            if (src < 0) {
                snprintf(r->err, sizeof r->err, "%s", ierr);
                goto out;
            }
        }
        r->d128_512 = fidelity_distance_resampled(csnap[0], 128 * p->aspect, 128, csnap[1],
                                                  512 * p->aspect, 512);
        r->compare_step = cstep;
    }
    if (s && save_strip(o->strips, p->name, s->im, r->err, sizeof r->err) < 0) goto out;
    r->ok = 1;
out:
    r->seconds = now_s() - t0;
    free(csnap[0]);
    free(csnap[1]);
    image_free(strip.im);
}

/* ------------------------------------------------------- the sequences */

/* Everything measured for one key sequence; plain data (a --jobs child sends
 * it through a pipe). Key k (from 0 here) is the goal for steps
 * k*every+1 .. (k+1)*every. Errors are against the key at the smoke's mass
 * at the switch (as the morph scales it). Step counts -1: never. */
typedef struct {
    int ok;
    char err[512];
    int w, h;
    long every;
    long key_step[NSEQ_KEYS];      /* the step each key's error was read at */
    int key_held[NSEQ_KEYS];       /* morph_key at that step (k+1 if the switch is right) */
    double err_from[NSEQ_KEYS];    /* against key k at its range's start */
    double err_key[NSEQ_KEYS];     /* against key k at its step */
    double err_mid[NSEQ_KEYS];     /* against key k half way through its range */
    double morph_err_key[NSEQ_KEYS]; /* the morph's own metric at that step */
    long steps5[NSEQ_KEYS];        /* first observed step <= KEY_PASS, from the range's start */
    double drift[NSEQ_KEYS];       /* max |mass - mass(0)| / mass(0) over the range */
    double stripes0, stripes_max[NSEQ_KEYS];
    /* the stripe measure at the range's start and of key k itself (at the
     * range's mass): a sharp key reads high without any stripes, so a
     * key's stripes are read against the greater, as a pair's are */
    double stripes_from[NSEQ_KEYS], stripes_key[NSEQ_KEYS];
    /* the error's fastest fall between observations, per SAMPLE_EVERY steps,
     * over err_from (a key that pops in reads high), and where it ended */
    double fall_max[NSEQ_KEYS];
    long fall_step[NSEQ_KEYS];
    double seconds;
} SeqResult;

#define SEQ_STRIP_PANELS (1 + 4 * NSEQ_KEYS)

/* Morph sequence q on a w x h grid: the start, then each key for
 * o->key_every steps (morph_set_keys). Observes every SAMPLE_EVERY steps,
 * at the first and the last step of each key's range (the last is the
 * key's step) and a quarter, half and three quarters into each range (the
 * strip's frames; observed with or without one, so the measures agree).
 * At every observation the error against the key of that step, computed
 * here, must equal the morph's own metric (the error against the target it
 * holds): a key switched a step early or late fails the run. */
static int simulate_sequence(const Env *env, const Opts *o, const Sequence *q, int w, int h,
                             SeqResult *r, Strip *s, char *err, size_t errlen)
{
    int rc = -1;
    Morph *m = NULL;
    float *rho = NULL, *tgt = NULL;
    Image *start = NULL, *key[NSEQ_KEYS] = {0};
    size_t n = (size_t)w * (size_t)h;
    long N = o->key_every;
    char merr[512];
    if (!(start = draw_shapes(env, q->name, "start", q->start, w, h, err, errlen))) goto out;
    for (int k = 0; k < NSEQ_KEYS; k++) {
        char label[32];
        snprintf(label, sizeof label, "key%d", k + 1);
        if (!(key[k] = draw_shapes(env, q->name, label, q->key[k], w, h, err, errlen))) goto out;
    }
    m = morph_create(w, h, &o->params, start->px, key[0]->px, true, env->backend, env->shader_dir, merr,
                     sizeof merr);
    if (!m) {
        snprintf(err, errlen, "%s", merr);
        goto out;
    }
    const float *kp[NSEQ_KEYS];
    for (int k = 0; k < NSEQ_KEYS; k++) kp[k] = key[k]->px;
    if (morph_set_keys(m, kp, NSEQ_KEYS, N) < 0) {
        snprintf(err, errlen, "cannot set the keys");
        goto out;
    }
    rho = malloc(n * sizeof *rho);
    tgt = malloc(n * sizeof *tgt);
    if (!rho || !tgt) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    double mass0, mass, em;
    if (morph_observe(m, rho, &mass0, &em, NULL) < 0) goto out_readback;
    mass = mass0;
    r->stripes0 = fidelity_stripes(rho, w, h);
    strip_put_row(s, 0, 0, rho);
    const long quarter[3] = {N / 4, N / 2, 3 * N / 4}; /* the strip's frames in a range (observed always) */
    for (int k = 0; k < NSEQ_KEYS; k++) {
        long first = (long)k * N, last = first + N;
        /* rho and mass are the state at step `first`, which is what the
         * morph scales key k to before step first+1 */
        double scale = mass / image_sum(key[k]);
        for (size_t c = 0; c < n; c++) tgt[c] = (float)(key[k]->px[c] * scale);
        r->err_from[k] = fidelity_error(rho, tgt, n);
        r->steps5[k] = -1;
        r->drift[k] = 0.0;
        r->stripes_max[k] = 0.0;
        r->stripes_from[k] = fidelity_stripes(rho, w, h);
        r->stripes_key[k] = fidelity_stripes(tgt, w, h);
        r->fall_max[k] = 0.0;
        r->fall_step[k] = -1;
        double prev_e = r->err_from[k];
        long prev_step = first;
        for (long step = first + 1; step <= last; step++) {
            if (morph_step(m) < 0) {
                snprintf(err, errlen, "step %ld failed", step);
                goto out;
            }
            /* the range's first and last steps are observed too: the morph
             * must hold key k+1 from the first to the last, exactly */
            int snap = -1;
            for (int q = 0; q < 3; q++)
                if (step == first + quarter[q]) snap = q;
            bool at_key = step == last, mid = step == first + N / 2;
            if (!at_key && snap < 0 && !mid && step != first + 1 && step % SAMPLE_EVERY != 0) continue;
            if (morph_observe(m, rho, &mass, &em, NULL) < 0) goto out_readback;
            double e = fidelity_error(rho, tgt, n);
            if (morph_key(m) != k + 1 || !(fabs(em - e) <= 1e-3 * (e > 1.0 ? e : 1.0))) {
                snprintf(err, errlen,
                         "step %ld: the morph holds key %d (error %.6f), expected key %d (error %.6f)",
                         step, morph_key(m), em, k + 1, e);
                goto out;
            }
            double drift = mass0 != 0.0 ? fabs(mass - mass0) / mass0 : 0.0;
            if (!(drift <= r->drift[k])) r->drift[k] = drift; /* NaN sticks */
            if (r->steps5[k] < 0 && e <= KEY_PASS) r->steps5[k] = step - first;
            if (mid) r->err_mid[k] = e;
            double fall = (prev_e - e) / (double)(step - prev_step) * SAMPLE_EVERY / r->err_from[k];
            if (!isnan(r->fall_max[k]) && !(fall <= r->fall_max[k])) /* a NaN sticks */
                r->fall_max[k] = fall, r->fall_step[k] = step - first;
            prev_e = e, prev_step = step;
            double st = fidelity_stripes(rho, w, h);
            if (st > r->stripes_max[k]) r->stripes_max[k] = st;
            if (s && snap >= 0) strip_put_row(s, 1 + 4 * k + snap, 0, rho);
            if (at_key) {
                r->key_step[k] = step;
                r->key_held[k] = morph_key(m);
                r->err_key[k] = e;
                r->morph_err_key[k] = em;
                strip_put_row(s, 4 + 4 * k, 0, rho);
                strip_put_row(s, 4 + 4 * k, 1, key[k]->px);
            }
        }
    }
    rc = 0;
    goto out;
out_readback:
    snprintf(err, errlen, "cannot read the density back");
out:
    free(rho);
    free(tgt);
    morph_free(m);
    image_free(start);
    for (int k = 0; k < NSEQ_KEYS; k++) image_free(key[k]);
    return rc;
}

/* Run one sequence (r->ok = 0 and r->err on failure), and its strip. */
static void run_sequence(const Env *env, const Opts *o, int idx, SeqResult *r)
{
    const Sequence *q = &sequences[idx];
    memset(r, 0, sizeof *r);
    r->w = r->h = o->grid;
    r->every = o->key_every;
    for (int k = 0; k < NSEQ_KEYS; k++) {
        r->key_step[k] = r->steps5[k] = -1;
        r->err_from[k] = r->err_mid[k] = r->err_key[k] = r->morph_err_key[k] = NAN;
    }
    double t0 = now_s();
    Strip strip = {0}, *s = NULL;
    if (o->strips) {
        if (strip_init(&strip, r->w, r->h, SEQ_STRIP_PANELS, 2, r->err, sizeof r->err) < 0) return;
        s = &strip;
    }
    if (simulate_sequence(env, o, q, r->w, r->h, r, s, r->err, sizeof r->err) < 0) goto out;
    if (s && save_strip(o->strips, q->name, s->im, r->err, sizeof r->err) < 0) goto out;
    r->ok = 1;
out:
    r->seconds = now_s() - t0;
    image_free(strip.im);
}

/* ------------------------------------------------------------ reporting */

static const char *fmt_num(char *buf, size_t n, const char *fmt, double v)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, "inf");
    else snprintf(buf, n, fmt, v);
    return buf;
}

static const char *fmt_step(char *buf, size_t n, long v)
{
    if (v < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%ld", v);
    return buf;
}

static void print_header(void)
{
    printf("| pair | grid | err@10 | err@300 | err@1000 | err@3000 | steps to 10%% | steps to 3%% "
           "| mass drift | blend dist @ half | stripes (max/start) | 128 vs 512 "
           "| U | Uc | P5 | P10 | P20 | front | swirl |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void print_row(const Pair *p, const Result *r)
{
    char a[NAT][32], s10[32], s3[32], dr[32], bl[32], st[32], cmp[32], grid[32];
    if (r->w == r->h) snprintf(grid, sizeof grid, "%d²", r->w);
    else snprintf(grid, sizeof grid, "%d×%d", r->w, r->h);
    for (int k = 0; k < NAT; k++) fmt_num(a[k], sizeof a[k], "%.3f", r->err_at[k]);
    char fu[32], fuc[32], fp[NPRINT][32], ff[32], fsw[32];
    for (int k = 0; k < NPRINT; k++) fmt_num(fp[k], sizeof fp[k], "%.2f", r->print[k]);
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
           p->name, grid, a[0], a[1], a[2], a[3], fmt_step(s10, sizeof s10, r->steps10),
           fmt_step(s3, sizeof s3, r->steps3),
           isnan(r->drift) ? "NaN" : fmt_num(dr, sizeof dr, "%.1e", r->drift), fmt_num(bl, sizeof bl, "%.3f", r->blend),
           fmt_num(st, sizeof st, "%.2f", fidelity_stripe_ratio(r->stripes_max, r->stripes0)),
           fmt_num(cmp, sizeof cmp, "%.3f", r->d128_512), fmt_num(fu, sizeof fu, "%.2f", r->u),
           fmt_num(fuc, sizeof fuc, "%.2f", r->uc), fp[0], fp[1], fp[2],
           fmt_num(ff, sizeof ff, "%.3f", r->front), fmt_num(fsw, sizeof fsw, "%.3f", r->swirl));
}

/* CSV: numbers in full precision; empty fields for "never" / "not run". */
static void csv_num(FILE *f, double v)
{
    if (isnan(v)) fputs(",", f);
    else fprintf(f, ",%.9g", v);
}

static void csv_step(FILE *f, long v)
{
    if (v < 0) fputs(",", f);
    else fprintf(f, ",%ld", v);
}

static void write_csv(const char *path, const Opts *o, const Result *res)
{
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "pair,grid_w,grid_h,steps,err0,err10,err300,err1000,err3000,err_end,steps_to_10,"
               "steps_to_3,mass_drift,half_step,blend_dist,blend_s,stripes0,stripes_max,"
               "stripes_max_step,stripes_ratio,compare_step,d128_512,u,uc,p5,p10,p20,front,swirl,"
               "stripes_target,seconds,u3,uc3,arrive\n");
    for (int k = 0; k < npairs; k++) {
        if (!o->selected[k]) continue;
        const Result *r = &res[k];
        fprintf(f, "%s,%d,%d,%ld", pairs[k].name, r->w, r->h, r->steps);
        csv_num(f, r->err0);
        for (int q = 0; q < NAT; q++) csv_num(f, r->err_at[q]);
        csv_num(f, r->err_end);
        csv_step(f, r->steps10);
        csv_step(f, r->steps3);
        csv_num(f, r->drift);
        csv_step(f, r->half_step);
        csv_num(f, r->blend);
        csv_num(f, r->blend_s);
        csv_num(f, r->stripes0);
        csv_num(f, r->stripes_max);
        csv_step(f, r->stripes_max_step);
        csv_num(f, fidelity_stripe_ratio(r->stripes_max, r->stripes0));
        csv_step(f, r->compare_step);
        csv_num(f, r->d128_512);
        csv_num(f, r->u);
        csv_num(f, r->uc);
        for (int q = 0; q < NPRINT; q++) csv_num(f, r->print[q]);
        csv_num(f, r->front);
        csv_num(f, r->swirl);
        csv_num(f, r->stripes_tgt);
        fprintf(f, ",%.2f", r->seconds);
        csv_num(f, r->u3);
        csv_num(f, r->uc3);
        csv_num(f, r->arrive);
        fputc('\n', f);
    }
    if (ferror(f) | (fclose(f) != 0)) fail("cannot write %s: %s", path, strerror(errno));
}

/* Key k's stripe maximum over the greater of the stripes at its range's
 * start and of the key itself. */
static double seq_stripe_ratio(const SeqResult *r, int k)
{
    double ref = r->stripes_from[k] > r->stripes_key[k] ? r->stripes_from[k] : r->stripes_key[k];
    return fidelity_stripe_ratio(r->stripes_max[k], ref);
}

/* The key sequences' table: one row per key. */
static void print_seq_table(const Opts *o, const int *order, int total, const SeqResult *res)
{
    (void)o;
    printf("| sequence | grid | key | target | step | err from | err half way | half / from | err at key "
           "| steps to 5%% | mass drift | stripes (max/start) | stripes (max/from or key) | fastest fall "
           "| <= 5%% |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int q = 0; q < total; q++) {
        const Sequence *sq = &sequences[order[q]];
        const SeqResult *r = &res[order[q]];
        for (int k = 0; k < NSEQ_KEYS; k++) {
            char ks[32], ef[32], ek[32], s5[32], dr[32], st[32], sk[32], em[32], hr[32], fm[32];
            printf("| %s | %d² | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sq->name,
                   r->w,
                   k + 1, sq->key_name[k], fmt_step(ks, sizeof ks, r->key_step[k]),
                   fmt_num(ef, sizeof ef, "%.3f", r->err_from[k]), fmt_num(em, sizeof em, "%.3f", r->err_mid[k]),
                   fmt_num(hr, sizeof hr, "%.2f", r->err_mid[k] / r->err_from[k]),
                   fmt_num(ek, sizeof ek, "%.3f", r->err_key[k]),
                   fmt_step(s5, sizeof s5, r->steps5[k]),
                   isnan(r->drift[k]) ? "NaN" : fmt_num(dr, sizeof dr, "%.1e", r->drift[k]),
                   fmt_num(st, sizeof st, "%.2f", fidelity_stripe_ratio(r->stripes_max[k], r->stripes0)),
                   fmt_num(sk, sizeof sk, "%.2f", seq_stripe_ratio(r, k)),
                   fmt_num(fm, sizeof fm, "%.3f", r->fall_max[k]), r->err_key[k] <= KEY_PASS ? "pass" : "FAIL");
        }
    }
}

static void write_seq_csv(const char *path, const int *order, int total, const SeqResult *res)
{
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "sequence,grid_w,grid_h,key_every,key,target,key_step,key_held,err_from,err_mid,err_key,"
               "morph_err_key,steps_to_5,mass_drift,stripes0,stripes_max,stripes_ratio,pass,seconds,fall_max,"
               "fall_step,stripes_from,stripes_key,stripes_ratio_ref\n");
    for (int q = 0; q < total; q++) {
        const SeqResult *r = &res[order[q]];
        for (int k = 0; k < NSEQ_KEYS; k++) {
            fprintf(f, "%s,%d,%d,%ld,%d,%s", sequences[order[q]].name, r->w, r->h, r->every, k + 1,
                    sequences[order[q]].key_name[k]);
            csv_step(f, r->key_step[k]);
            fprintf(f, ",%d", r->key_held[k]);
            csv_num(f, r->err_from[k]);
            csv_num(f, r->err_mid[k]);
            csv_num(f, r->err_key[k]);
            csv_num(f, r->morph_err_key[k]);
            csv_step(f, r->steps5[k]);
            csv_num(f, r->drift[k]);
            csv_num(f, r->stripes0);
            csv_num(f, r->stripes_max[k]);
            csv_num(f, fidelity_stripe_ratio(r->stripes_max[k], r->stripes0));
            fprintf(f, ",%d,%.2f", r->err_key[k] <= KEY_PASS, r->seconds);
            csv_num(f, r->fall_max[k]);
            csv_step(f, r->fall_step[k]);
            csv_num(f, r->stripes_from[k]);
            csv_num(f, r->stripes_key[k]);
            csv_num(f, seq_stripe_ratio(r, k));
            fputc('\n', f);
        }
    }
    if (ferror(f) | (fclose(f) != 0)) fail("cannot write %s: %s", path, strerror(errno));
}

static void progress(int done, int total, const Pair *p, const Result *r)
{
    fprintf(stderr, "[%d/%d] %s %dx%d: %ld steps in %.1f s, error %.3f -> %.3f, arrival %.3g s\n", done, total,
            p->name, r->w, r->h, r->steps, r->seconds, r->err0, r->err_end, r->arrive);
}

/* ------------------------------------------------------------- parallel */

typedef struct {
    pid_t pid;
    int fd, idx;
} Job;

/* Stop the still-running children (our own, by pid) and reap them. */
static void stop_jobs(Job *jobs, int n)
{
    for (int k = 0; k < n; k++)
        if (jobs[k].pid > 0) kill(jobs[k].pid, SIGTERM);
    for (int k = 0; k < n; k++)
        if (jobs[k].pid > 0) {
            waitpid(jobs[k].pid, NULL, 0);
            close(jobs[k].fd);
            jobs[k].pid = 0;
        }
}

/* What run_parallel runs: one item (a pair or a sequence) by index into
 * res[idx] (rsize bytes each, plain data), its name, whether it worked and
 * its progress line. */
typedef struct {
    size_t rsize;
    void *res;
    void (*run)(const Env *env, const Opts *o, int idx, void *r);
    const char *(*name)(int idx);
    const char *(*failed)(const void *r); /* NULL if it worked, else its message */
    void (*progress)(int done, int total, int idx, const void *r);
} Work;

static void pair_run(const Env *env, const Opts *o, int idx, void *r) { run_pair(env, o, idx, r); }
static const char *pair_name(int idx) { return pairs[idx].name; }
static const char *pair_failed(const void *r)
{
    const Result *x = r;
    return x->ok ? NULL : x->err;
}
static void pair_progress(int done, int total, int idx, const void *r)
{
    progress(done, total, &pairs[idx], r);
}
static const Work pair_work = {sizeof(Result), NULL, pair_run, pair_name, pair_failed, pair_progress};

static void seq_run(const Env *env, const Opts *o, int idx, void *r) { run_sequence(env, o, idx, r); }
static const char *seq_name(int idx) { return sequences[idx].name; }
static const char *seq_failed(const void *r)
{
    const SeqResult *x = r;
    return x->ok ? NULL : x->err;
}
static void seq_progress(int done, int total, int idx, const void *r)
{
    const SeqResult *x = r;
    fprintf(stderr, "[%d/%d] %s %dx%d: %d keys of %ld steps in %.1f s, error at each key", done, total,
            sequences[idx].name, x->w, x->h, NSEQ_KEYS, x->every, x->seconds);
    for (int k = 0; k < NSEQ_KEYS; k++) fprintf(stderr, "%s %.3f", k ? "," : "", x->err_key[k]);
    fputc('\n', stderr);
}
/* A child writes its whole result before the parent reads it (after
 * waitpid), so a result must fit the pipe's buffer (PIPE_BUF at least). */
_Static_assert(sizeof(Result) <= 4096 && sizeof(SeqResult) <= 4096, "a result must fit a pipe's buffer");
static const Work seq_work = {sizeof(SeqResult), NULL, seq_run, seq_name, seq_failed, seq_progress};

/* Run the selected items, o->jobs at a time, each in a forked child that
 * sends its result back through a pipe. */
static void run_parallel(const Env *env, const Opts *o, const int *order, int total, const Work *wk)
{
    Job jobs[64];
    memset(jobs, 0, sizeof jobs);
    int next = 0, done = 0;
    while (done < total) {
        for (int slot = 0; slot < o->jobs && next < total; slot++) {
            if (jobs[slot].pid > 0) continue;
            int fds[2];
            if (pipe(fds) < 0) {
                stop_jobs(jobs, o->jobs);
                fail("cannot make a pipe: %s", strerror(errno));
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                stop_jobs(jobs, o->jobs);
                fail("cannot fork: %s", strerror(errno));
            }
            if (pid == 0) {
                close(fds[0]);
                char *r = (char *)wk->res + (size_t)order[next] * wk->rsize;
                wk->run(env, o, order[next], r);
                size_t put = 0; /* within the pipe's buffer (asserted): never blocks */
                while (put < wk->rsize) {
                    ssize_t w = write(fds[1], r + put, wk->rsize - put);
                    if (w < 0 && errno == EINTR) continue;
                    if (w <= 0) _exit(1);
                    put += (size_t)w;
                }
                _exit(0);
            }
            close(fds[1]);
            jobs[slot] = (Job){pid, fds[0], order[next]};
            next++;
        }
        /* collect one finished job: read its whole result, then reap it */
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            stop_jobs(jobs, o->jobs);
            fail("cannot wait for a job: %s", strerror(errno));
        }
        int slot = -1;
        for (int k = 0; k < o->jobs; k++)
            if (jobs[k].pid == pid) slot = k;
        if (slot < 0) continue;
        int idx = jobs[slot].idx;
        char *r = (char *)wk->res + (size_t)idx * wk->rsize;
        size_t got = 0;
        while (got < wk->rsize) {
            ssize_t n = read(jobs[slot].fd, r + got, wk->rsize - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        close(jobs[slot].fd);
        jobs[slot].pid = 0;
        if (got != wk->rsize) {
            stop_jobs(jobs, o->jobs);
            fail("%s: the job ended without a result (%s %d)", wk->name(idx),
                 WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        }
        const char *why = wk->failed(r);
        if (why) {
            stop_jobs(jobs, o->jobs);
            fail("%s: %s", wk->name(idx), why);
        }
        wk->progress(++done, total, idx, r);
    }
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    main_pid = getpid();
    Opts o;
    parse_args(argc, argv, &o);
    if (o.list && o.keys) {
        for (int k = 0; k < NSEQS; k++) {
            printf("%-14s %s\n", sequences[k].name, sequences[k].what);
            printf("%-14s   start %s\n", "", sequences[k].start);
            for (int q = 0; q < NSEQ_KEYS; q++)
                printf("%-14s   key %d (%s) %s\n", "", q + 1, sequences[k].key_name[q], sequences[k].key[q]);
        }
        return 0;
    }
    if (o.list) {
        for (int k = 0; k < npairs; k++)
            printf("%-14s %s\n", pairs[k].name, pairs[k].what);
        return 0;
    }

    Env env;
    memset(&env, 0, sizeof env);
    if (o.mktargets) snprintf(env.mktargets, sizeof env.mktargets, "%s", o.mktargets);
    else {
        char dir[PATH_MAX];
        exe_dir(argv[0], dir, sizeof dir);
        if (snprintf(env.mktargets, sizeof env.mktargets, "%s/mktargets", dir) >= (int)sizeof env.mktargets)
            fail("the path of mktargets is too long");
    }
    if (access(env.mktargets, X_OK) != 0)
        fail("cannot run mktargets (%s): %s; build it (make) or give --mktargets PATH", env.mktargets,
             strerror(errno));
    if (o.strips && mkdir(o.strips, 0755) < 0 && errno != EEXIST)
        fail("cannot make %s: %s", o.strips, strerror(errno));
    if (o.curve && mkdir(o.curve, 0755) < 0 && errno != EEXIST)
        fail("cannot make %s: %s", o.curve, strerror(errno));
    struct stat dst;
    if (o.strips && (stat(o.strips, &dst) != 0 || !S_ISDIR(dst.st_mode)))
        fail("--strips %s: not a directory", o.strips);
    if (o.curve && (stat(o.curve, &dst) != 0 || !S_ISDIR(dst.st_mode)))
        fail("--curve %s: not a directory", o.curve);

    GlCtx *ctx = NULL;
    char err[1024], sdir[PATH_MAX];
    if (!o.cpu) {
        ctx = glctx_create_headless(err, sizeof err);
        if (!ctx) fail("no GPU: %s; --cpu runs the CPU reference", err);
        if (shader_find_dir(o.shader_dir, argv[0], sdir, sizeof sdir, err, sizeof err) < 0) {
            glctx_destroy(ctx);
            fail("%s", err);
        }
        env.shader_dir = sdir;
        env.backend = o.backend_set ? o.backend
                      : shader_compute_available() ? MORPH_COMPUTE : MORPH_FRAGMENT;
    } else {
        env.backend = MORPH_CPU;
    }

    const char *tmp = getenv("TMPDIR");
    snprintf(env.tmpdir, sizeof env.tmpdir, "%s/fidelity.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(env.tmpdir)) fail("cannot make a temporary directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
                                   strerror(errno));
    snprintf(cleanup_dir, sizeof cleanup_dir, "%s", env.tmpdir);
    atexit(cleanup);

    double t0 = now_s();
    if (o.keys) {
        int order[NSEQS], total = 0;
        for (int k = 0; k < NSEQS; k++)
            if (o.seq_selected[k]) order[total++] = k;
        static SeqResult res[NSEQS];
        fprintf(stderr, "keys: %d sequence%s of %d keys on the %s backend%s%s%s, grid %d, %ld steps a key, %d job%s\n",
                total, total == 1 ? "" : "s", NSEQ_KEYS, morph_backend_name(env.backend), ctx ? " (" : "",
                ctx ? glctx_renderer(ctx) : "", ctx ? ")" : "", o.grid, o.key_every, o.jobs,
                o.jobs == 1 ? "" : "s");
        if (o.jobs > 1) {
            Work wk = seq_work;
            wk.res = res;
            run_parallel(&env, &o, order, total, &wk);
        } else {
            for (int k = 0; k < total; k++) {
                SeqResult *r = &res[order[k]];
                run_sequence(&env, &o, order[k], r);
                if (!r->ok) {
                    glctx_destroy(ctx);
                    fail("%s: %s", sequences[order[k]].name, r->err);
                }
                seq_progress(k + 1, total, order[k], r);
            }
        }
        glctx_destroy(ctx);
        fprintf(stderr, "keys: done in %.1f s\n", now_s() - t0);
        print_seq_table(&o, order, total, res);
        if (fflush(stdout) != 0) fail("cannot write the table: %s", strerror(errno));
        if (o.csv) write_seq_csv(o.csv, order, total, res);
        return 0;
    }

    int order[NPAIRS_MAX], total = 0;
    for (int k = 0; k < npairs; k++)
        if (o.selected[k]) order[total++] = k;
    static Result res[NPAIRS_MAX];
    fprintf(stderr, "suite: %d pair%s on the %s backend%s%s%s, grid %d, %ld steps, %d job%s\n", total,
            total == 1 ? "" : "s", morph_backend_name(env.backend),
            ctx ? " (" : "", ctx ? glctx_renderer(ctx) : "", ctx ? ")" : "", o.grid,
            o.steps, o.jobs, o.jobs == 1 ? "" : "s");
    if (o.jobs > 1) {
        Work wk = pair_work;
        wk.res = res;
        run_parallel(&env, &o, order, total, &wk);
    } else {
        for (int k = 0; k < total; k++) {
            Result *r = &res[order[k]];
            run_pair(&env, &o, order[k], r);
            if (!r->ok) {
                glctx_destroy(ctx);
                fail("%s: %s", pairs[order[k]].name, r->err);
            }
            progress(k + 1, total, &pairs[order[k]], r);
        }
    }
    glctx_destroy(ctx);
    fprintf(stderr, "suite: done in %.1f s\n", now_s() - t0);

    print_header();
    for (int k = 0; k < total; k++) print_row(&pairs[order[k]], &res[order[k]]);
    if (fflush(stdout) != 0) fail("cannot write the table: %s", strerror(errno));
    if (o.csv) write_csv(o.csv, &o, res);
    return 0;
}
