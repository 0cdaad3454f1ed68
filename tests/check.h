/* check.h: the tiny test harness every tests/test_*.c uses.
 *
 *   static void test_foo(void) { CHECK(1 + 1 == 2, "arithmetic"); }
 *   int main(void) { RUN(test_foo); return check_done(); }
 *
 * Each CHECK counts as one result; a failing one prints "FAIL file:line: msg".
 * check_done() prints "N passed, N failed" and returns the exit status.
 * TEST_ONLY=test_foo,test_bar (environment) runs only those RUNs, for
 * working on one test of a long file. */
#ifndef SMOKEMORPH_CHECK_H
#define SMOKEMORPH_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) {                                                         \
            check_passed++;                                                 \
        } else {                                                            \
            check_failed++;                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                     \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
            fflush(stdout);                                                 \
        }                                                                   \
    } while (0)

/* whether TEST_ONLY (a comma-separated list) leaves test `name` out */
static inline int check_skipped(const char *name)
{
    const char *only = getenv("TEST_ONLY");
    if (!only || !*only) return 0;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 0;
    return 1;
}

/* wall-clock seconds, for RUN's report of each test's time */
static inline double check_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define RUN(fn)                                                             \
    do {                                                                    \
        if (check_skipped(#fn)) break;                                      \
        int f0 = check_failed;                                              \
        double t0 = check_now();                                            \
        fn();                                                               \
        printf("%s %s (%.1f s)\n", check_failed == f0 ? "ok  " : "FAIL", #fn, \
               check_now() - t0);                                           \
        fflush(stdout);                                                     \
    } while (0)

/* At the top of a long behavioural test: under AddressSanitizer (make
 * test-asan) it prints SKIP with that reason and returns, as the run adds
 * no memory checking to what its shorter tests check; make test runs it. */
#if defined(__SANITIZE_ADDRESS__)
#define CHECK_LONG_RUN(name)                                                                  \
    do {                                                                                      \
        printf("SKIP %s: a long behavioural run, no memory checking to add under "           \
               "AddressSanitizer; make test runs it\n", name);                                \
        return;                                                                               \
    } while (0)
#else
#define CHECK_LONG_RUN(name) ((void)0)
#endif

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
