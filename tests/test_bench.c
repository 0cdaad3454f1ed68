/* test_bench: tools/bench's options and output, not its speed (speed is
 * measured on the lent GPU and written into docs/PERFORMANCE.md, never
 * asserted). The CPU backend at a tiny grid keeps it quick; --set is checked
 * to reach the run (its header names it) and to refuse what --compare
 * refuses, before any GL context is made. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char tool[4096];
static TestlibResult R;

static int bench(const char *const *args)
{
    const char *argv[32] = {tool};
    int n = 1;
    for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    return testlib_run(argv, NULL, &R);
}

static void test_cpu_row(void)
{
    int rc = bench((const char *const[]){"--sizes", "16", "--backends", "cpu", "--seconds", "0.05", NULL});
    CHECK(rc == 0, "bench on the CPU at 16² exits 0 (%d): %s", rc, R.err);
    CHECK(strstr(R.out, "default parameters otherwise") != NULL, "the header says the defaults ran:\n%s", R.out);
    CHECK(strstr(R.out, "| 16² | cpu |") != NULL, "one row for 16² on the CPU:\n%s", R.out);
}

static void test_set(void)
{
    int rc = bench((const char *const[]){"--sizes", "16", "--backends", "cpu", "--seconds", "0.05", "--set",
                                         "drift-max=0.4,vd=1", NULL});
    CHECK(rc == 0, "--set drift-max=0.4,vd=1 exits 0 (%d): %s", rc, R.err);
    CHECK(strstr(R.out, "default parameters but drift-max=0.4,vd=1 otherwise") != NULL,
          "the header names the settings:\n%s", R.out);
    CHECK(strstr(R.out, "| 16² | cpu |") != NULL, "and the row is there:\n%s", R.out);
    static const char *const bad[] = {"bogus=1", "drift-max", "dt=0", "jacobi=1e300", "vcycles=0,jacobi=0"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rc = bench((const char *const[]){"--sizes", "16", "--backends", "cpu", "--set", bad[k], NULL});
        CHECK(rc == 2 && strncmp(R.err, "bench: --set: ", 14) == 0 && strchr(R.err, '\n') == R.err + strlen(R.err) - 1,
              "--set %s: exit 2 with one line naming --set (%d): %s", bad[k], rc, R.err);
        CHECK(R.out[0] == '\0' || strstr(R.out, "usage") == NULL, "--set %s prints no table", bad[k]);
    }
}

static void test_bad_args(void)
{
    int rc = bench((const char *const[]){"--jacobi", "-3", NULL});
    CHECK(rc == 2, "--jacobi -3 refused with 2 (%d)", rc);
    rc = bench((const char *const[]){"--help", NULL});
    CHECK(rc == 0 && strstr(R.out, "--set NAME=VALUE") != NULL, "--help names --set (%d):\n%s", rc, R.out);
}

/* bench --export: a row per format, size and thread count; bench --render:
 * the run with frames and the one without (issue 22). */
static void test_export_render(void)
{
    int rc = bench((const char *const[]){"--export", "--formats", "png8,exr", "--sizes", "24x16",
                                         "--threads", "1,2", "--frames", "2", NULL});
    CHECK(rc == 0 && strstr(R.out, "| png8 | 24x16 | 1 |") && strstr(R.out, "| exr | 24x16 | 2 |") &&
              strstr(R.out, "frames/s"),
          "bench --export (%d):\n%s%s", rc, R.out, R.err);
    char disc[4200];
    snprintf(disc, sizeof disc, "%s/../targets/ring.png", testlib_build_dir());
    if (access(disc, R_OK) != 0) snprintf(disc, sizeof disc, "targets/ring.png");
    rc = bench((const char *const[]){"--render", "--", "--headless", "--cpu", "--grid", "16", "--steps", "4",
                                     "--frames", "/tmp/smokemorph-bench-render", disc, disc, NULL});
    CHECK(rc == 0 && strstr(R.out, "| with frames |") && strstr(R.out, "| no frames |") &&
              strstr(R.out, "4 steps in"),
          "bench --render (%d):\n%s%s", rc, R.out, R.err);
    testlib_rm_rf("/tmp/smokemorph-bench-render");
    rc = bench((const char *const[]){"--render", NULL});
    CHECK(rc == 2, "bench --render without a run: exit 2 (%d)", rc);
}

int main(void)
{
    snprintf(tool, sizeof tool, "%s/tools/bench", testlib_build_dir());
    if (access(tool, X_OK) != 0) {
        CHECK(false, "no tool at %s (make %s)", tool, tool);
        return check_done();
    }
    RUN(test_cpu_row);
    RUN(test_set);
    RUN(test_bad_args);
    RUN(test_export_render);
    testlib_result_free(&R);
    return check_done();
}
