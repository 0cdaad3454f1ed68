/* test_compare: the classroom's compare (tier 1, no GL, but for one run of
 * the program on llvmpipe): the two runs of a Compare equal two separate
 * morphs with the same settings, bit for bit on the CPU; the presets and
 * --compare's NAME=VALUE settings; the split layout; the command line's
 * --compare / --compare-preset (config_parse), a headless run's CSV and
 * side-by-side frames, and the run's SolverOptions reaching both morphs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "config.h"
#include "testlib.h"

#define W 40
#define H 32
#define N (W * H)

static float start[N], target[N];

static void test_same_as_separate(void)
{
    SolverParams base;
    method_params_default(&base);
    base.arrive = 0.05f; /* the gathering from the third step, within the 12 run */
    static const char *const presets[] = {"gather", "jacobi", "force"};
    for (int q = 0; q < 3; q++) {
        CompareSpec cs;
        char err[256] = "";
        CHECK(compare_preset(presets[q], &base, &cs, err, sizeof err) == 0, "preset %s: %s", presets[q], err);
        Compare *c = compare_create(W, H, &cs, NULL, start, target, true, MORPH_CPU, NULL, err, sizeof err);
        Morph *a = morph_create(W, H, &cs.p[0], start, target, true, MORPH_CPU, NULL, err, sizeof err);
        Morph *b = morph_create(W, H, &cs.p[1], start, target, true, MORPH_CPU, NULL, err, sizeof err);
        CHECK(c && a && b, "%s: create: %s", presets[q], err);
        if (!c || !a || !b) return;
        for (int s = 0; s < 12; s++) {
            compare_step(c);
            morph_step(a);
            morph_step(b);
        }
        static float x[N], y[N];
        bool same = true;
        for (int side = 0; side < 2; side++) {
            morph_read_density(compare_morph(c, side), x);
            morph_read_density(side ? b : a, y);
            same &= memcmp(x, y, sizeof x) == 0;
        }
        CHECK(same, "%s: the compare's runs equal separate runs bit for bit", presets[q]);
        CompareMetrics mt[2];
        double ea, eb;
        morph_metrics(a, NULL, &ea, NULL);
        morph_metrics(b, NULL, &eb, NULL);
        CHECK(compare_metrics(c, mt) == 0 && mt[0].error == ea && mt[1].error == eb, "%s: metrics", presets[q]);
        CHECK(mt[0].error != mt[1].error, "%s: the two settings differ (%g, %g)", presets[q], mt[0].error, mt[1].error);
        CHECK(compare_step_count(c) == 12, "%s: step count", presets[q]);
        /* side by side: A left, the gap, B right */
        static float sbs[(2 * W + 3) * H];
        CHECK(compare_side_by_side(c, 3, -1.0f, sbs) == 0, "side by side");
        morph_read_density(a, x);
        morph_read_density(b, y);
        bool ok = true;
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ok &= sbs[j * (2 * W + 3) + i] == x[j * W + i] && sbs[j * (2 * W + 3) + W + 3 + i] == y[j * W + i] &&
                      sbs[j * (2 * W + 3) + W + 1] == -1.0f;
        CHECK(ok, "%s: side by side layout", presets[q]);
        compare_reset(c);
        CHECK(compare_step_count(c) == 0, "reset");
        compare_free(c);
        morph_free(a);
        morph_free(b);
    }
}

static void test_presets_and_settings(void)
{
    SolverParams base;
    method_params_default(&base);
    CompareSpec cs;
    char err[256];
    CHECK(compare_preset("gather", &base, &cs, err, sizeof err) == 0 && cs.p[0].gather && !cs.p[1].gather &&
              strstr(cs.label[1], "off"), "gather preset");
    CHECK(compare_preset("jacobi", &base, &cs, err, sizeof err) == 0 && cs.p[0].vcycles == 3 &&
              cs.p[1].vcycles == 0 && cs.p[1].jacobi == 40, "jacobi preset");
    CHECK(compare_preset("force", &base, &cs, err, sizeof err) == 0 && cs.p[0].force == SOLVER_FORCE_BALANCE &&
              cs.p[1].force == SOLVER_FORCE_FATTAL, "force preset");
    CHECK(compare_preset("nope", &base, &cs, err, sizeof err) < 0 && strstr(err, "gather, jacobi, force"),
          "unknown preset: %s", err);

    CHECK(compare_parse("gather=0", &base, &cs, err, sizeof err) == 0 && cs.p[0].gather && !cs.p[1].gather &&
              strcmp(cs.label[1], "B: gather=0") == 0, "gather=0: %s", err);
    CHECK(compare_parse("vcycles=0, jacobi=40", &base, &cs, err, sizeof err) == 0 && cs.p[1].vcycles == 0 &&
              cs.p[1].jacobi == 40 && cs.p[0].vcycles == 3, "vcycles=0, jacobi=40: %s", err);
    CHECK(compare_parse("force=fattal,vf=0.25,gather=off", &base, &cs, err, sizeof err) == 0 &&
              cs.p[1].force == SOLVER_FORCE_FATTAL && cs.p[1].vf == 0.25f && !cs.p[1].gather, "three: %s", err);
    CHECK(compare_parse("gather-iters=8,drift_max=0.1", &base, &cs, err, sizeof err) == 0 &&
              cs.p[1].gather_iters == 8 && cs.p[1].wmax == 0.1f, "option names: %s", err);
    /* vd=0 means no damping, not the default (its METHOD_SET bit) */
    CHECK(compare_parse("vd=0", &base, &cs, err, sizeof err) == 0, "vd=0: %s", err);
    SolverParams r = cs.p[1];
    method_params_resolve(&r);
    CHECK(r.vd == 0.0f, "vd=0 stays 0 (%g)", (double)r.vd);
    static const char *const bad[] = {"", "gather", "=1", "gather=", "speed=2", "gather=maybe", "jacobi=2.5",
                                      "force=strong", "dt=0", "vcycles=0,jacobi=0", "no-gather=1", "vf=abc",
                                      /* whole numbers beyond int's range (a fuzz finding: the cast was undefined) */
                                      "gather-iters=333333333333333333333333333", "jacobi=1e300", "jacobi=-1e20",
                                      "vcycles=inf", "jacobi=nan", "vf=nan", "vf=inf", "vf=1e39", "sigma=-1e300"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = '\0';
        CHECK(compare_parse(bad[k], &base, &cs, err, sizeof err) < 0 && strncmp(err, "compare: ", 9) == 0,
              "'%s' refused: %s", bad[k], err);
    }
}

static void test_split(void)
{
    CompareSplit sp;
    compare_split(1024, 768, 256, 256, COMPARE_LABEL_H, &sp);
    const int *a = sp.field[0], *b = sp.field[1];
    CHECK(a[2] == a[3] && b[2] == a[2] && a[1] == b[1], "square halves %dx%d", a[2], a[3]);
    CHECK(a[0] >= 0 && a[0] + a[2] <= b[0] && b[0] + b[2] <= 1024, "A left of B");
    CHECK(a[1] >= 0 && a[1] + a[3] + COMPARE_LABEL_H <= 768, "fields below the labels' strip");
    CHECK(sp.label[0][1] == a[1] + a[3] && sp.label[0][3] == COMPARE_LABEL_H && sp.label[1][0] == b[0],
          "label strips above the fields");
    compare_split(800, 300, 64, 32, COMPARE_LABEL_H, &sp);
    CHECK(sp.field[0][2] == 2 * sp.field[0][3] || abs(sp.field[0][2] - 2 * sp.field[0][3]) <= 1, "aspect 2:1");
}

static void test_cli(void)
{
    Config c;
    char err[512];
    char *a1[] = {"smokemorph", "--compare", "gather=0", "--vf", "0.3", NULL};
    CHECK(config_parse(&c, 5, a1, err, sizeof err) == 0 && c.compare && strcmp(c.compare, "gather=0") == 0 &&
              !c.compare_preset, "--compare: %s", err);
    char *a2[] = {"smokemorph", "--compare-preset", "jacobi", NULL};
    CHECK(config_parse(&c, 3, a2, err, sizeof err) == 0 && c.compare_preset && !c.compare, "--compare-preset: %s", err);
    char *a3[] = {"smokemorph", "--compare-preset", "fast", NULL};
    CHECK(config_parse(&c, 3, a3, err, sizeof err) < 0 && strstr(err, "--compare-preset") && strstr(err, "gather, jacobi, force"),
          "bad preset: %s", err);
    char *a4[] = {"smokemorph", "--compare", "gather=0", "--compare-preset", "force", NULL};
    CHECK(config_parse(&c, 5, a4, err, sizeof err) < 0 && strstr(err, "one of them"), "both: %s", err);
    /* B's settings are checked with the run's others: --jacobi 0 then vcycles=0 leaves no projection */
    char *a5[] = {"smokemorph", "--jacobi", "0", "--compare", "vcycles=0", NULL};
    CHECK(config_parse(&c, 5, a5, err, sizeof err) < 0 && strstr(err, "--compare"), "no projection: %s", err);
    char *a6[] = {"smokemorph", "--compare", NULL};
    CHECK(config_parse(&c, 2, a6, err, sizeof err) < 0, "--compare needs a value: %s", err);
}

/* The program itself, headless on the CPU: one CSV with both runs, frames
 * side by side. */
static void test_headless_run(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "test_compare");
    char csv[256], frames[256], f3[300];
    snprintf(csv, sizeof csv, "%s/both.csv", dir);
    snprintf(frames, sizeof frames, "%s/frames", dir);
    const char *argv[] = {testlib_bin(), "--cpu", "--headless", "--quiet", "--grid", "48", "--steps", "20",
                          "--every", "10", "--compare-preset", "force", "--metrics", csv, "--frames", frames, NULL};
    TestlibResult r = {0};
    int rc = testlib_run(argv, NULL, &r);
    CHECK(rc == 0, "smokemorph --compare-preset force: exit %d: %s", rc, r.err);
    char *text = testlib_read_file(csv, NULL);
    CHECK(text && strstr(text, "# A: balance force\n# B: Fattal's force\nstep,time,error_a,error_b,"),
          "the CSV's header: %s", text ? text : "(none)");
    int rows = 0;
    for (char *p = text; p && (p = strchr(p, '\n')); p++) rows++;
    CHECK(rows == 3 + 3, "header and rows for steps 0, 10, 20: %d lines", rows);
    CHECK(text && strstr(text, "\n20,"), "the last row is step 20");
    free(text);
    snprintf(f3, sizeof f3, "%s/compare_00003.png", frames);
    Image *im = testlib_load(f3, IMAGE_CHANNEL_LUMA);
    CHECK(im && im->w > 2 * 48 && im->h == 48, "frames side by side: %dx%d", im ? im->w : 0, im ? im->h : 0);
    image_free(im);
    int tmps = -1;
    testlib_count_entries(dir, "both.csv.tmp", &tmps);
    CHECK(tmps == 0, "no temporary CSV left beside it (%d)", tmps);
    /* a run that fails before its first row (the frames' folder cannot be
     * made: a file is in the way) leaves no CSV at all, not a header alone */
    char csv2[256], nodir[300];
    snprintf(csv2, sizeof csv2, "%s/failed.csv", dir);
    snprintf(nodir, sizeof nodir, "%s/sub", csv);
    const char *fail[] = {testlib_bin(), "--cpu", "--headless", "--quiet", "--grid", "48", "--steps", "20",
                          "--compare-preset", "force", "--metrics", csv2, "--frames", nodir, NULL};
    TestlibResult r3 = {0};
    rc = testlib_run(fail, NULL, &r3);
    tmps = -1;
    testlib_count_entries(dir, "failed.csv", &tmps);
    CHECK(rc != 0 && tmps == 0 && strstr(r3.err, nodir), "a failed compare run: exit %d, %d CSV files: %s", rc,
          tmps, r3.err);
    testlib_result_free(&r3);
    const char *bad[] = {testlib_bin(), "--cpu", "--headless", "--compare", "gather=0", "--scene", "x.json", NULL};
    testlib_result_free(&r);
    TestlibResult r2 = {0};
    rc = testlib_run(bad, NULL, &r2);
    CHECK(rc != 0, "--compare with --scene refused (%d)", rc);
    testlib_result_free(&r2);
    testlib_rm_rf(dir);
}

/* Column NAME of the metrics CSV at PATH ('#' lines skipped) into out, up
 * to n rows: how many, or -1 without the file or the column. */
static int csv_column(const char *path, const char *name, double *out, int n)
{
    char *text = testlib_read_file(path, NULL);
    int col = -1, rows = 0;
    for (char *line = text; line && *line && rows < n;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        if (line[0] != '#') {
            char *f = line;
            for (int k = 0; f; k++, f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL) {
                size_t len = strcspn(f, ",");
                if (col < 0 && strlen(name) == len && strncmp(f, name, len) == 0) col = k;
                else if (col >= 0 && k == col && line != text) out[rows++] = strtod(f, NULL);
            }
            if (col < 0) break; /* the header has no such column */
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return col < 0 ? -1 : rows;
}

/* Whether a and b agree to the CSVs' printed digits (a plain run's metrics
 * have 6 significant, compare's 9). */
static bool close6(double a, double b) { return fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b)) + 1e-12; }

/* --compare makes both morphs with the run's SolverOptions, as a plain run
 * makes its morph (morph_create_opts): on the compute backend (llvmpipe),
 * A with --compute-tiles on agrees with a plain run with it, and with off
 * with a plain run with off. The tiled passes round differently from the
 * untiled ones, so the two settings' metrics differ, and without the
 * options reaching compare both of its runs would be the default (off on
 * llvmpipe). 4 runs of 8 steps at 32², about a second. */
static void test_solver_options(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "test_compare_opts");
    static const char *const tiles[2] = {"on", "off"};
    static const char *const col[2][2] = {{"error", "max_div"}, {"error_a", "max_div_a"}};
    double v[2][2][2][4] = {{{{0}}}}; /* [tiles][plain, compare][error, max_div][row] */
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 2; c++) {
            char csv[256];
            snprintf(csv, sizeof csv, "%s/%s_%s.csv", dir, c ? "compare" : "plain", tiles[t]);
            const char *argv[] = {testlib_bin(), "--backend", "compute", "--compute-tiles", tiles[t], "--headless",
                                  "--quiet", "--grid", "32", "--steps", "8", "--every", "4", "--metrics", csv,
                                  c ? "--compare" : NULL, "gather=0", NULL};
            TestlibResult r = {0};
            int rc = testlib_run(argv, NULL, &r);
            if (rc != 0 && (strstr(r.err, "OpenGL") || strstr(r.err, "EGL"))) {
                TESTLIB_NO_GL(4, 3, "test_solver_options: %s", r.err);
                testlib_result_free(&r);
                testlib_rm_rf(dir);
                return;
            }
            CHECK(rc == 0, "--compute-tiles %s%s: exit %d: %s", tiles[t], c ? " --compare gather=0" : "", rc, r.err);
            testlib_result_free(&r);
            for (int q = 0; q < 2; q++) {
                int n = csv_column(csv, col[c][q], v[t][c][q], 4);
                CHECK(n == 3, "%s: %d rows of %s (steps 0, 4, 8)", csv, n, col[c][q]);
            }
        }
    bool differ = false;
    for (int t = 0; t < 2; t++)
        for (int q = 0; q < 2; q++)
            for (int k = 0; k < 3; k++) {
                CHECK(close6(v[t][0][q][k], v[t][1][q][k]),
                      "--compute-tiles %s: row %d's %s: a plain run %.9g, compare's A %.9g", tiles[t], k,
                      col[1][q], v[t][0][q][k], v[t][1][q][k]);
                differ |= t == 0 && !close6(v[0][0][q][k], v[1][0][q][k]);
            }
    CHECK(differ, "--compute-tiles on and off gave the same metrics: this test cannot tell them apart");
    testlib_rm_rf(dir);
}

int main(void)
{
    TestlibShape s = {.domain = true, .width = 0.02};
    testlib_disc(start, W, H, &s, 0.4, 0.45, 0.22, 1.0);
    testlib_box(target, W, H, &s, 0.75, 0.5, 0.2, 0.2, 1.0);
    RUN(test_same_as_separate);
    RUN(test_presets_and_settings);
    RUN(test_split);
    RUN(test_cli);
    RUN(test_headless_run);
    RUN(test_solver_options);
    return check_done();
}
