/* check.h: the tiny test harness every tests/test_*.c uses.
 *
 *   static void test_foo(void) { CHECK(1 + 1 == 2, "arithmetic"); }
 *   int main(void) { RUN(test_foo); return check_done(); }
 *
 * Each CHECK counts as one result; a failing one prints "FAIL file:line: msg".
 * check_done() prints "N passed, N failed" and returns the exit status. */
#ifndef SMOKEMORPH_CHECK_H
#define SMOKEMORPH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

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

#define RUN(fn)                                                             \
    do {                                                                    \
        int f0 = check_failed;                                              \
        fn();                                                               \
        printf("%s %s\n", check_failed == f0 ? "ok  " : "FAIL", #fn);       \
        fflush(stdout);                                                     \
    } while (0)

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
