/* fuzz.h: what the libFuzzer harnesses share (built by `make fuzz` into
 * build-fuzz/, run by `make fuzz-run`; see fuzz/run.sh). A property that does
 * not hold is a crash: FUZZ_ASSERT prints it and aborts, so libFuzzer keeps
 * the input as a crash artifact. */
#ifndef SMOKEMORPH_FUZZ_H
#define SMOKEMORPH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, ...)                                                   \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz property failed: %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* An error message: one line, not empty (the project's rule for errors). */
#define FUZZ_ONE_LINE(err) \
    FUZZ_ASSERT((err)[0] != '\0' && strchr((err), '\n') == NULL, "not one line: '%s'", (err))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
