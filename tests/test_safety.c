/* test_safety: issue 21, "never touch what isn't ours": outputs only where
 * they belong and only over smokemorph's own files, nothing non-finite in,
 * memory and time bounded before a run starts. In the library and through
 * the binary ($SMOKEMORPH_BIN, default build/smokemorph); every run is on
 * the CPU backend at a 16² to 64² grid, with DISPLAY unset and cwd in a
 * mkdtemp directory. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "check.h"
#include "image.h"
#include "testlib.h"

#define MAXARGS 48

static char bin[PATH_MAX];
static char tmp[256];  /* fixtures */
static char work[512]; /* cwd of every child */
static TestlibResult R;
static TestlibRunOpts next; /* options of the next run only */

static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    int r = snprintf(buf, n, "%s/%s", dir, name);
    if (r < 0 || (size_t)r >= n) buf[0] = '\0';
}

static void reset_work(void)
{
    testlib_rm_rf(work);
    if (mkdir(work, 0777) < 0) {
        perror(work);
        exit(2);
    }
}

static bool has(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

static int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    return n + (s[0] && s[strlen(s) - 1] != '\n');
}

/* Run the binary in `work` with DISPLAY unset; fills R. */
static void run(const char *first, ...)
{
    const char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = bin;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < MAXARGS; a = va_arg(ap, const char *)) argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    static const char *const unset[] = {"DISPLAY", "WAYLAND_DISPLAY", NULL};
    TestlibRunOpts o = next;
    o.cwd = work;
    o.unset_env = unset;
    testlib_run(argv, &o, &R);
    memset(&next, 0, sizeof next);
}

/* A file in `work` (path relative to it) */
static void wpath(char *buf, size_t n, const char *rel) { path_in(buf, n, work, rel); }

__attribute__((unused)) static bool wexists(const char *rel)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    return testlib_exists(p);
}

__attribute__((unused)) static void wwrite(const char *rel, const char *text)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    testlib_write_file(p, text, strlen(text));
}

__attribute__((unused)) static char *wread(const char *rel)
{
    char p[1024];
    wpath(p, sizeof p, rel);
    return testlib_read_file(p, NULL);
}

/* ------------------------------------------------------------- fixtures */

static char disc[600];

static int make_fixtures(void)
{
    path_in(disc, sizeof disc, tmp, "disc.png");
    Image *im = image_create(32, 32, 1);
    if (!im) return -1;
    static const TestlibShape domain = {.domain = true};
    testlib_disc(im->px, 32, 32, &domain, 0.45, 0.5, 0.25, 1.0);
    char err[512];
    int rc = image_save_png(disc, im, 8, err, sizeof err);
    image_free(im);
    return rc;
}

/* ------------------------------------------------------------ the budget */

static void test_budget(void)
{
    Budget b;
    budget_init(&b, 100ULL << 20);
    budget_add(&b, 10ULL << 20, "the fields (%dx%d)", 64, 64);
    budget_add(&b, 60ULL << 20, "the start image %s", "a.png");
    char err[512] = "";
    CHECK(budget_check(&b, err, sizeof err) == 0 && budget_total(&b) == 70ULL << 20 &&
              budget_left(&b) == 30ULL << 20,
          "70 MiB in 100: total %llu left %llu", budget_total(&b), budget_left(&b));
    CHECK(budget_frames_in_flight(&b, 10ULL << 20, 8) == 3, "3 frames of 10 MiB in 30 MiB: %d",
          budget_frames_in_flight(&b, 10ULL << 20, 8));
    CHECK(budget_frames_in_flight(&b, 10ULL << 20, 2) == 2, "at most what is wanted");
    CHECK(budget_frames_in_flight(&b, 50ULL << 20, 8) == 1, "at least one");
    budget_add(&b, 40ULL << 20, "a frame (%dx%d)", 4096, 4096);
    CHECK(budget_check(&b, err, sizeof err) < 0 && has(err, "110 MiB") && has(err, "100 MiB") &&
              has(err, "the start image a.png (60 MiB)") && count_lines(err) == 1,
          "over: %s", err);
    CHECK(budget_left(&b) == 0, "nothing left");
    /* sums saturate */
    budget_add(&b, ~0ULL, "huge");
    budget_add(&b, ~0ULL, "huger");
    CHECK(budget_total(&b) == ~0ULL && budget_check(&b, err, sizeof err) < 0, "saturated");
    /* more items than room: counted with the last */
    Budget c;
    budget_init(&c, 1ULL << 40);
    for (int i = 0; i < BUDGET_ITEMS_MAX + 5; i++) budget_add(&c, 1, "item %d", i);
    CHECK(c.n == BUDGET_ITEMS_MAX && budget_total(&c) == BUDGET_ITEMS_MAX + 5, "overflow items");
    CHECK(budget_default_mb() >= BUDGET_DEFAULT_MIN_MB && budget_limit_bytes(0) ==
              (unsigned long long)budget_default_mb() << 20 && budget_limit_bytes(64) == 64ULL << 20,
          "defaults");
    char buf[32];
    CHECK(!strcmp(budget_format(512, buf, sizeof buf), "512 bytes") &&
              !strcmp(budget_format(3ULL << 30, buf, sizeof buf), "3.0 GiB") &&
              !strcmp(budget_format(100ULL << 20, buf, sizeof buf), "100 MiB"),
          "format: %s", buf);
}

static void test_options(void)
{
    reset_work();
    run("--headless", "--cpu", "--max-memory", "8", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "--max-memory") && count_lines(R.err) == 1, "--max-memory 8: %d %s",
          R.code, R.err);
    run("--headless", "--cpu", "--max-memory", "99999999999", disc, disc, NULL);
    CHECK(R.code == 2 && has(R.err, "--max-memory"), "--max-memory huge: %d %s", R.code, R.err);
}

int main(void)
{
    const char *b = testlib_bin();
    if (!realpath(b, bin)) {
        printf("FAIL cannot find the binary %s: %s\n", b, strerror(errno));
        printf("0 passed, 1 failed\n");
        return 1;
    }
    snprintf(tmp, sizeof tmp, "/tmp/test_safety.XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 2;
    }
    path_in(work, sizeof work, tmp, "work");
    if (make_fixtures() < 0) {
        printf("FAIL cannot make the fixtures in %s\n", tmp);
        testlib_rm_rf(tmp);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    RUN(test_budget);
    RUN(test_options);
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
