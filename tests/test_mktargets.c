/* test_mktargets: run tools/mktargets and check what it draws, and check the
 * bundled targets (targets/ *.png).
 *
 * The tool is $SMOKEMORPH_BUILD/tools/mktargets (default build/tools/mktargets);
 * its images go to a fresh temporary directory and are read back with
 * image_load. Masses are in pixels (sum of densities). The bundled targets are
 * read from targets/ under the current directory (the repository root under
 * `make test`), and `make targets` must reproduce them byte for byte. */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "image.h"
#include "testlib.h"

#define PI 3.14159265358979323846

static char tool[1024];
static char dir[256];

/* The last run's exit status, stdout and stderr. */
static TestlibResult R;

/* Run the tool with -o DIR/NAME (NULL: no -o) and ARGS (already quoted for
 * sh) through sh; its stdout and stderr go to R. Returns the exit status, or
 * -1 when it did not exit normally. */
static int run(const char *name, const char *args)
{
    char cmd[4096];
    if (name)
        snprintf(cmd, sizeof cmd, "'%s' -o '%s/%s' %s", tool, dir, name, args);
    else
        snprintf(cmd, sizeof cmd, "'%s' %s", tool, args);
    return testlib_run_sh(cmd, NULL, &R);
}

static bool exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return testlib_exists(path);
}

/* Draw ARGS into NAME and load it; NULL (with a failed check) on any error. */
static Image *draw(const char *name, const char *args)
{
    char path[512];
    int rc = run(name, args);
    CHECK(rc == 0, "mktargets %s exited %d: %s", args, rc, R.err);
    if (rc != 0)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
    CHECK(im != NULL, "load %s", name);
    return im;
}

static double mass(const Image *im)
{
    double s = 0.0;
    for (size_t i = 0; i < (size_t)im->w * im->h; i++)
        s += im->px[i];
    return s;
}

static float at(const Image *im, int x, int y)
{
    return im->px[(size_t)y * im->w + x];
}

static float maxval(const Image *im)
{
    float m = 0.0f;
    for (size_t i = 0; i < (size_t)im->w * im->h; i++)
        if (im->px[i] > m)
            m = im->px[i];
    return m;
}

static bool near_rel(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fabs(want);
}

/* Sum of |a(x, y) - a(w-1-x, y)| over the image: 0 for a left-right mirror. */
static double mirror_error(const Image *im)
{
    double e = 0.0;
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++)
            e += fabs(at(im, x, y) - at(im, im->w - 1 - x, y));
    return e;
}

/* --------------------------------------------------------------- tests */

static void test_help(void)
{
    static const char *const names[] = {"disc:",    "ring:",    "ellipse:", "rect:",
                                        "rect-outline:", "star:", "polygon:", "line:",
                                        "heart:",   "text:",    NULL};
    int rc = run(NULL, "--help");
    CHECK(rc == 0, "--help exits 0, got %d", rc);
    const char *out = R.out;
    CHECK(strstr(out, "usage:") != NULL, "--help prints a usage line");
    for (int i = 0; names[i]; i++)
        CHECK(strstr(out, names[i]) != NULL, "--help lists %s", names[i]);
    CHECK(strstr(out, "--blur") && strstr(out, "--size"), "--help lists --blur and --size");
}

static void test_png_format(void)
{
    Image *im = draw("fmt.png", "disc:0.5,0.5,0.3");
    if (!im)
        return;
    image_free(im);
    /* IHDR: bytes 16..23 width, height; 24 bit depth; 25 colour type (0 = grey) */
    char path[512];
    unsigned char hdr[26] = {0};
    snprintf(path, sizeof path, "%s/fmt.png", dir);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(hdr, 1, sizeof hdr, f) : 0;
    if (f)
        fclose(f);
    CHECK(n == sizeof hdr && !memcmp(hdr + 1, "PNG", 3), "fmt.png is a PNG");
    CHECK(hdr[19] == 0 && hdr[18] == 1 && hdr[23] == 0 && hdr[22] == 1, "default size 256x256");
    CHECK(hdr[24] == 8 && hdr[25] == 0, "8-bit grey, got depth %d colour type %d", hdr[24],
          hdr[25]);
}

static void test_disc_mass(void)
{
    Image *im = draw("disc.png", "--size 256x256 disc:0.5,0.5,0.3");
    if (!im)
        return;
    double want = PI * 0.3 * 0.3 * 256 * 256;
    CHECK(near_rel(mass(im), want, 0.02), "disc mass %.1f, want %.1f", mass(im), want);
    CHECK(at(im, 128, 128) > 0.99f, "disc centre is 1, got %g", at(im, 128, 128));
    CHECK(at(im, 5, 5) == 0.0f && at(im, 250, 128) == 0.0f, "outside the disc is 0");
    image_free(im);

    /* blurring keeps the mass and softens the edge */
    im = draw("discb.png", "--blur 3 disc:0.5,0.5,0.3");
    if (!im)
        return;
    CHECK(near_rel(mass(im), want, 0.02), "blurred disc mass %.1f, want %.1f", mass(im), want);
    float edge = at(im, 128 + (int)(0.3 * 256), 128);
    CHECK(edge > 0.2f && edge < 0.8f, "blurred edge is soft, got %g", edge);
    CHECK(at(im, 128, 128) > 0.99f, "blurred centre stays 1");
    image_free(im);
}

static void test_resolution_independent(void)
{
    /* the same spec covers the same fraction of the shorter side */
    Image *a = draw("r128.png", "--size 128 disc:0.4,0.6,0.25");
    Image *b = draw("r512.png", "--size 512x512 disc:0.4,0.6,0.25");
    Image *c = draw("r384.png", "--size 384x256 disc:0.4,0.6,0.25");
    if (a && b && c) {
        double fa = mass(a) / (128.0 * 128), fb = mass(b) / (512.0 * 512);
        double fc = mass(c) / (256.0 * 256);
        CHECK(a->w == 128 && a->h == 128 && b->w == 512 && c->w == 384 && c->h == 256,
              "--size gives the size asked for");
        CHECK(near_rel(fa, fb, 0.02), "128 vs 512: %g vs %g of the area", fa, fb);
        CHECK(near_rel(fc, fb, 0.02), "384x256 vs 512: %g vs %g", fc, fb);
        CHECK(at(c, (int)(0.4 * 256), (int)(0.6 * 256)) > 0.99f,
              "non-square: units of the shorter side");
    }
    image_free(a);
    image_free(b);
    image_free(c);
}

static void test_ring_mass(void)
{
    Image *im = draw("ring.png", "ring:0.5,0.5,0.3,0.1");
    if (!im)
        return;
    double want = PI * (0.35 * 0.35 - 0.25 * 0.25) * 256 * 256;
    CHECK(near_rel(mass(im), want, 0.02), "ring mass %.1f, want %.1f", mass(im), want);
    CHECK(at(im, 128, 128) == 0.0f, "ring hole is empty");
    CHECK(at(im, 128 + (int)(0.3 * 256), 128) > 0.99f, "ring is full on its radius");
    image_free(im);
}

static void test_rects(void)
{
    Image *im = draw("rect.png", "rect:0.25,0.25,0.75,0.5");
    if (im) {
        double want = 0.5 * 0.25 * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.01), "rect mass %.1f, want %.1f", mass(im), want);
        CHECK(at(im, 128, 100) > 0.99f && at(im, 128, 140) == 0.0f, "rect inside/outside");
        image_free(im);
    }
    im = draw("outline.png", "rect-outline:0.25,0.25,0.75,0.75,0.1");
    if (im) {
        double want = (0.6 * 0.6 - 0.4 * 0.4) * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.02), "outline mass %.1f, want %.1f", mass(im), want);
        CHECK(at(im, 128, 128) == 0.0f, "outline is hollow");
        CHECK(at(im, 64, 128) > 0.99f, "outline is full on its edge");
        image_free(im);
    }
}

static void test_star(void)
{
    Image *im = draw("star.png", "star:0.5,0.5,0.35,0.15,5");
    if (!im)
        return;
    double want = 5 * 0.35 * 0.15 * sin(PI / 5) * 256 * 256;
    double m = mass(im);
    CHECK(near_rel(m, want, 0.02), "star mass %.1f, want %.1f", m, want);
    CHECK(mirror_error(im) < 0.01 * m, "star is left-right symmetric (error %.1f of %.1f)",
          mirror_error(im), m);
    CHECK(at(im, 128, (int)((0.5 - 0.32) * 256)) > 0.99f, "star points straight up");
    CHECK(at(im, 128, (int)((0.5 + 0.3) * 256)) == 0.0f, "no point straight down");
    /* a point at 90 - 72 = 18 degrees above the horizontal, right of centre */
    double a = -PI / 2 + 2 * PI / 5;
    int px = (int)((0.5 + 0.3 * cos(a)) * 256), py = (int)((0.5 + 0.3 * sin(a)) * 256);
    CHECK(at(im, px, py) > 0.99f, "star has its second point at 72 degrees");
    image_free(im);
}

static void test_polygon_heart_line(void)
{
    Image *im = draw("tri.png", "polygon:0.2,0.8,0.8,0.8,0.5,0.2");
    if (im) {
        double want = 0.5 * 0.6 * 0.6 * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.02), "triangle mass %.1f, want %.1f", mass(im), want);
        CHECK(mirror_error(im) < 0.01 * mass(im), "triangle is symmetric");
        image_free(im);
    }
    im = draw("heart.png", "heart:0.5,0.5,0.3");
    if (im) {
        double m = mass(im);
        CHECK(m > 0.15 * 256 * 256 && m < 0.36 * 256 * 256, "heart mass %.1f", m);
        CHECK(mirror_error(im) < 0.01 * m, "heart is symmetric");
        CHECK(at(im, 128, 128) > 0.99f, "heart is full at its centre");
        CHECK(at(im, 128, (int)(0.81 * 256)) == 0.0f && at(im, (int)(0.81 * 256), 128) == 0.0f,
              "heart stays in its box");
        image_free(im);
    }
    im = draw("ellipse.png", "ellipse:0.5,0.5,0.35,0.15,90");
    if (im) {
        double want = PI * 0.35 * 0.15 * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.02), "ellipse mass %.1f, want %.1f", mass(im), want);
        CHECK(at(im, 128, 128 + 80) > 0.99f && at(im, 128 + 80, 128) == 0.0f,
              "ellipse turned 90 degrees is tall");
        image_free(im);
    }
    im = draw("line.png", "line:0.2,0.5,0.8,0.5,0.1");
    if (im) {
        double want = (0.6 * 0.1 + PI * 0.05 * 0.05) * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.02), "line mass %.1f, want %.1f", mass(im), want);
        image_free(im);
    }
}

static void test_text(void)
{
    Image *im = draw("hi.png", "text:0.5,0.5,0.2,HI");
    if (!im)
        return;
    /* ink only in the box (plus 2 px of anti-aliasing); HI is narrower than tall x 2 */
    double inside = 0.0, outside = 0.0;
    int top = im->h, bottom = -1, left = im->w, right = -1;
    for (int y = 0; y < im->h; y++) {
        for (int x = 0; x < im->w; x++) {
            float v = at(im, x, y);
            bool in = x >= 0.3 * 256 - 2 && x <= 0.7 * 256 + 2 && y >= 0.4 * 256 - 2 &&
                      y <= 0.6 * 256 + 2;
            if (in)
                inside += v;
            else
                outside += v;
            if (v > 0.5f) {
                top = y < top ? y : top;
                bottom = y > bottom ? y : bottom;
                left = x < left ? x : left;
                right = x > right ? x : right;
            }
        }
    }
    CHECK(inside > 0.02 * 256 * 256, "text has ink: %.1f", inside);
    CHECK(outside == 0.0, "no ink far outside the text: %.1f", outside);
    CHECK(abs(top - (int)(0.4 * 256)) <= 2 && abs(bottom - (int)(0.6 * 256)) <= 2,
          "HEIGHT is the capital height: rows %d..%d", top, bottom);
    CHECK(abs(left - (im->w - 1 - right)) <= 1, "text is centred: columns %d..%d", left, right);

    /* lowercase draws as capitals */
    Image *lo = draw("hi-lower.png", "text:0.5,0.5,0.2,hi");
    if (lo) {
        CHECK(lo->w == im->w && mass(lo) == mass(im), "'hi' draws like 'HI'");
        image_free(lo);
    }
    image_free(im);

    /* every glyph renders something, and a long string stays inside its band */
    im = draw("font.png", "--size 512x256 "
                          "text:1,0.2,0.1,ABCDEFGHIJKLM text:1,0.4,0.1,NOPQRSTUVWXYZ "
                          "text:1,0.6,0.1,0123456789 \"text:1,0.8,0.1,.,!?-+=:'/\"");
    if (im) {
        for (int row = 0; row < 4; row++) {
            double band = 0.0;
            int y0 = (int)((0.2 * (row + 1) - 0.06) * 256), y1 = (int)((0.2 * (row + 1) + 0.07) * 256);
            for (int y = y0; y < y1; y++)
                for (int x = 0; x < im->w; x++)
                    band += at(im, x, y);
            CHECK(band > 100.0, "text row %d has ink: %.1f", row, band);
        }
        image_free(im);
    }

    /* heavier strokes carry more ink */
    Image *thin = draw("thin.png", "text:0.5,0.5,0.2,SMOKE:w=0.1");
    Image *bold = draw("bold.png", "text:0.5,0.5,0.2,SMOKE:w=0.25");
    if (thin && bold)
        CHECK(mass(bold) > 1.5 * mass(thin), ":w= makes strokes heavier: %.1f vs %.1f",
              mass(bold), mass(thin));
    image_free(thin);
    image_free(bold);
}

static void test_value_add_sub(void)
{
    double disc = PI * 0.2 * 0.2 * 256 * 256;
    Image *im = draw("half.png", "disc:0.5,0.5,0.2:v=0.5");
    if (im) {
        CHECK(near_rel(mass(im), 0.5 * disc, 0.02), "v=0.5 halves the mass");
        CHECK(fabs(maxval(im) - 0.5f) < 0.01f, "v=0.5 peaks at 0.5, got %g", maxval(im));
        image_free(im);
    }
    /* overlap: max by default, sum with --add */
    im = draw("max.png", "disc:0.5,0.5,0.2:v=0.5 disc:0.5,0.5,0.2:v=0.5");
    if (im) {
        CHECK(fabs(maxval(im) - 0.5f) < 0.01f, "shapes combine by max, got %g", maxval(im));
        image_free(im);
    }
    im = draw("add.png", "--add disc:0.5,0.5,0.2:v=0.5 disc:0.5,0.5,0.2:v=0.5");
    if (im) {
        CHECK(maxval(im) > 0.99f, "--add sums, got %g", maxval(im));
        CHECK(near_rel(mass(im), disc, 0.02), "--add mass");
        image_free(im);
    }
    im = draw("carve.png", "disc:0.5,0.5,0.3 disc:0.5,0.5,0.2:sub");
    if (im) {
        double want = PI * (0.3 * 0.3 - 0.2 * 0.2) * 256 * 256;
        CHECK(near_rel(mass(im), want, 0.02), ":sub carves: %.1f, want %.1f", mass(im), want);
        CHECK(at(im, 128, 128) == 0.0f, "carved centre is empty");
        image_free(im);
    }
}

static void test_bad_specs(void)
{
    static const char *const bad[] = {
        "blob:0.5,0.5,0.3",              /* unknown shape */
        "disc",                          /* no args */
        "disc:0.5,0.5",                  /* too few */
        "disc:0.5,0.5,0.3,0.1",          /* too many */
        "disc:0.5,x,0.3",                /* not a number */
        "disc:0.5,0.5,0.3e",             /* trailing junk */
        "disc:0.5,0.5,-0.1",             /* negative radius */
        "disc:0.5,0.5,nan",              /* not finite */
        "disc:0.5,0.5,0.3:v=2",          /* value out of range */
        "disc:0.5,0.5,0.3:w=0.2",        /* w= is for text only */
        "ring:0.5,0.5,0.3,0",            /* zero width */
        "rect:0.5,0.5,0.5,0.8",          /* empty */
        "star:0.5,0.5,0.3,0.1,2.5",      /* fractional points */
        "polygon:0.1,0.1,0.9,0.9",       /* two vertices */
        "polygon:0.1,0.1,0.9,0.9,0.5",   /* odd count */
        "text:0.5,0.5,0.2,",             /* empty string */
        "text:0.5,0.5,0.2,A~B",          /* no glyph */
        "text:0.5,0.5,HI",               /* missing height */
        "--size 0x64 disc:0.5,0.5,0.3",  /* bad size */
        "--size 64x disc:0.5,0.5,0.3",
        "--size abc disc:0.5,0.5,0.3",
        "--size 99999 disc:0.5,0.5,0.3",
        "--blur -1 disc:0.5,0.5,0.3",
        "--blur x disc:0.5,0.5,0.3",
        "--aa 0 disc:0.5,0.5,0.3",
        "--frobnicate disc:0.5,0.5,0.3", /* unknown option */
        "",                              /* no shapes */
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        int rc = run("bad.png", bad[i]);
        const char *err = R.err;
        const char *nl = strchr(err, '\n');
        CHECK(rc == 1, "'%s' exits 1, got %d", bad[i], rc);
        CHECK(!strncmp(err, "mktargets: ", 11) && nl && !nl[1],
              "'%s' prints one line 'mktargets: ...', got '%s'", bad[i], err);
        CHECK(!exists("bad.png"), "'%s' writes no file", bad[i]);
    }

    /* no -o */
    int rc = run(NULL, "disc:0.5,0.5,0.3");
    CHECK(rc == 1 && !strncmp(R.err, "mktargets: ", 11), "missing -o is an error");

    /* cannot write */
    char args[512];
    snprintf(args, sizeof args, "-o '%s/no/such/dir/x.png' disc:0.5,0.5,0.3", dir);
    rc = run(NULL, args);
    const char *err = R.err;
    CHECK(rc == 1, "unwritable path exits 1, got %d", rc);
    CHECK(!strncmp(err, "mktargets: ", 11) && strchr(err, '\n') && !strchr(err, '\n')[1],
          "unwritable path: one line, got '%s'", err);
}

/* Every committed PNG under targets/: loads, 256x256, in [0, 1], not all zero. */
static void test_bundled_targets(void)
{
    const char *tdir = getenv("SMOKEMORPH_TARGETS");
    if (!tdir)
        tdir = "targets";
    DIR *d = opendir(tdir);
    CHECK(d != NULL, "open %s", tdir);
    if (!d)
        return;
    int count = 0;
    bool blob = false, star = false;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".png"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", tdir, e->d_name);
        Image *im = testlib_load(path, IMAGE_CHANNEL_LUMA);
        CHECK(im != NULL, "%s loads", path);
        if (!im)
            continue;
        count++;
        blob |= !strcmp(e->d_name, "blob.png");
        star |= !strcmp(e->d_name, "star.png");
        CHECK(im->w == 256 && im->h == 256, "%s is 256x256, got %dx%d", path, im->w, im->h);
        CHECK(mass(im) > 0.01 * 256 * 256, "%s is not (almost) all zero: mass %.1f", path,
              mass(im));
        CHECK(maxval(im) > 0.95f, "%s reaches density 1, max %g", path, maxval(im));
        /* soft, not touching the walls */
        float border = 0.0f;
        for (int i = 0; i < 256; i++) {
            border = fmaxf(border, fmaxf(at(im, i, 0), at(im, i, 255)));
            border = fmaxf(border, fmaxf(at(im, 0, i), at(im, 255, i)));
        }
        CHECK(border == 0.0f, "%s leaves its border empty", path);
        image_free(im);
    }
    closedir(d);
    CHECK(count >= 8, "at least 8 bundled targets, found %d", count);
    CHECK(blob && star, "blob.png and star.png are bundled");
}

/* The names of the entries of PATH (not "." or ".."), sorted, in a
 * NULL-terminated array of at most max - 1 names; NULL if PATH cannot be read. */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **list_dir(const char *path, char **names, int max)
{
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max - 1)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            names[n++] = strdup(e->d_name);
    closedir(d);
    names[n] = NULL;
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    return names;
}

/* `make targets` (sh tools/make-targets.sh MKTARGETS targets) run into a
 * temporary directory instead of targets/: it writes exactly the files that
 * are in targets/, each byte for byte the committed one. A byte difference
 * whose pixels are equal is reported as such (the PNG encoder, e.g. zlib,
 * changed rather than the drawing). */
static void test_make_targets_reproduces(void)
{
    const char *tdir = getenv("SMOKEMORPH_TARGETS");
    if (!tdir)
        tdir = "targets";
    char out[300], cmd[4096];
    snprintf(out, sizeof out, "%s/regen", dir);
    snprintf(cmd, sizeof cmd, "sh tools/make-targets.sh '%s' '%s'", tool, out);
    int rc = testlib_run_sh(cmd, NULL, &R);
    CHECK(rc == 0, "make-targets.sh exited %d: %s", rc, R.err);
    if (rc != 0)
        return;

    enum { MAXF = 256 };
    char *want[MAXF], *got[MAXF] = {NULL};
    bool listed = list_dir(tdir, want, MAXF) != NULL;
    CHECK(listed, "cannot list %s", tdir);
    if (!listed)
        return;
    listed = list_dir(out, got, MAXF) != NULL;
    CHECK(listed, "cannot list %s", out);
    int nw = 0, ng = 0, same = 0;
    while (want[nw])
        nw++;
    while (got[ng])
        ng++;
    CHECK(nw >= 8, "only %d files in %s", nw, tdir);
    /* both lists are sorted: walk them together */
    for (int i = 0, j = 0; i < nw || j < ng;) {
        int c = i == nw ? 1 : j == ng ? -1 : strcmp(want[i], got[j]);
        if (c < 0) {
            CHECK(false, "%s/%s is committed but make-targets.sh does not write it", tdir,
                  want[i++]);
            continue;
        }
        if (c > 0) {
            CHECK(false, "make-targets.sh writes %s, which is not in %s", got[j++], tdir);
            continue;
        }
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s/%s", tdir, want[i]);
        snprintf(pb, sizeof pb, "%s/%s", out, got[j]);
        size_t la = 0, lb = 0;
        unsigned char *a = (unsigned char *)testlib_read_file(pa, &la),
                      *b = (unsigned char *)testlib_read_file(pb, &lb);
        bool equal = a && b && la == lb && !memcmp(a, b, la);
        if (a && b && !equal) {
            /* tell a drawing change from an encoding change */
            Image *ia = testlib_load(pa, IMAGE_CHANNEL_LUMA);
            Image *ib = testlib_load(pb, IMAGE_CHANNEL_LUMA);
            float d = -1.0f;
            if (ia && ib && ia->w == ib->w && ia->h == ib->h) {
                d = 0.0f;
                for (size_t k = 0; k < (size_t)ia->w * ia->h; k++)
                    d = fmaxf(d, fabsf(ia->px[k] - ib->px[k]));
            }
            const char *why = d == 0.0f  ? "the pixels are equal: the PNG encoding changed"
                              : d > 0.0f ? "the pixels differ"
                                         : "the images differ in size or do not load";
            CHECK(false, "%s differs from the committed file (%zu bytes written, %zu committed); %s",
                  want[i], lb, la, why);
            if (d > 0.0f)
                printf("  %s: largest pixel difference %g\n", want[i], d);
            image_free(ia);
            image_free(ib);
        } else {
            CHECK(a && b, "cannot read %s or %s", pa, pb);
        }
        same += equal;
        free(a);
        free(b);
        i++;
        j++;
    }
    CHECK(same == nw && nw == ng, "%d of %d committed targets reproduced (%d written)", same, nw,
          ng);
    for (int i = 0; i < nw; i++)
        free(want[i]);
    for (int j = 0; j < ng; j++)
        free(got[j]);
}

int main(void)
{
    snprintf(tool, sizeof tool, "%s/tools/mktargets", testlib_build_dir());
    if (access(tool, X_OK) != 0) {
        CHECK(false, "no tool at %s (make %s)", tool, tool);
        return check_done();
    }
    snprintf(dir, sizeof dir, "%s/test_mktargets.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp %s", dir);
        return check_done();
    }

    RUN(test_help);
    RUN(test_png_format);
    RUN(test_disc_mass);
    RUN(test_resolution_independent);
    RUN(test_ring_mass);
    RUN(test_rects);
    RUN(test_star);
    RUN(test_polygon_heart_line);
    RUN(test_text);
    RUN(test_value_add_sub);
    RUN(test_bad_specs);
    RUN(test_bundled_targets);
    RUN(test_make_targets_reproduces);

    testlib_rm_rf(dir);
    testlib_result_free(&R);
    return check_done();
}
