/* fuzz_checkpoint: the checkpoint reader (checkpoint_parse, the one entry
 * point of checkpoint_read). Properties: it never crashes nor allocates more
 * than the input's size allows; a refusal is one line; an accepted file has
 * a grid within the limits, a known backend, parameters that pass
 * method_params_check, non-negative step counts and every field allocated.
 * (Built by `make fuzz`: it needs src/checkpoint.c among the harnesses'
 * objects and zlib, -lz, among their libraries.) */
#include "fuzz.h"

#include <zlib.h>

#include "checkpoint.h"

static void check_one(const uint8_t *data, size_t size);

/* Each input twice: as it is, and with its last 4 bytes made the right
 * CRC-32, so that mutations get past the checksum to the header's checks. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_one(data, size);
    if (size < 4 || size > (1u << 24)) return 0;
    uint8_t *d = malloc(size);
    if (!d) return 0;
    memcpy(d, data, size);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), d, (uInt)(size - 4));
    for (int k = 0; k < 4; k++) d[size - 4 + k] = (uint8_t)(crc >> (8 * k));
    check_one(d, size);
    free(d);
    return 0;
}

static void check_one(const uint8_t *data, size_t size)
{
    Checkpoint c;
    char err[512] = "";
    if (checkpoint_parse(data, size, &c, err, sizeof err) < 0) {
        FUZZ_ONE_LINE(err);
        return;
    }
    FUZZ_ASSERT(c.w >= 1 && c.h >= 1 && c.w <= CHECKPOINT_MAX_SIDE && c.h <= CHECKPOINT_MAX_SIDE &&
                    (long)c.w * c.h <= CHECKPOINT_MAX_CELLS,
                "grid %dx%d", c.w, c.h);
    FUZZ_ASSERT((size_t)c.w * c.h * 4 * CHECKPOINT_NFIELDS < size, "%dx%d from %zu bytes", c.w, c.h,
                size);
    FUZZ_ASSERT(!strcmp(c.backend, "cpu") || !strcmp(c.backend, "fragment") ||
                    !strcmp(c.backend, "compute"),
                "backend '%.16s'", c.backend);
    FUZZ_ASSERT(method_params_check(&c.state.params) == NULL, "parameters: %s",
                method_params_check(&c.state.params));
    FUZZ_ASSERT(c.state.steps >= 0 && c.state.solver.nstep >= 0 && c.run_steps >= 0 &&
                    c.run_every >= 1,
                "counts");
    for (int k = 0; k < METHOD_FIELD_COUNT; k++)
        FUZZ_ASSERT(c.state.solver.field[k] != NULL, "field %d", k);
    FUZZ_ASSERT(c.state.start && c.state.target, "images");
    /* every cell readable (ASan sees an overrun) */
    volatile float sum = 0.0f;
    size_t n = (size_t)c.w * c.h;
    for (size_t i = 0; i < n; i++) sum += c.state.start[i] + c.state.target[i];
    (void)sum;
    checkpoint_free(&c);
}
