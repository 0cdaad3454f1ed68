/* fuzz_checkpoint: the checkpoint reader (checkpoint_parse, the one entry
 * point of checkpoint_read). Properties: it never crashes nor allocates more
 * than the input's size allows; a refusal is one line; an accepted file has
 * a grid within the limits, a known backend, parameters that pass
 * method_params_check, non-negative step counts, a schedule in range (none
 * in version 1) and every field allocated, for each of its 1 to 4 smoke
 * fields (one before version 3), all at the same step. Seeds: version 2
 * files with and without a schedule, version 1 files (*-v1.smc), and
 * version 3 ones of a single field (*-v3.smc) and of a two-field scene
 * (scene2-*.smc), all written by smokemorph.
 * (Built by `make fuzz`: it needs src/checkpoint.c among the harnesses'
 * objects and zlib, -lz, among their libraries.) */
#include "fuzz.h"

#include <math.h>
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
    FUZZ_ASSERT(c.nfields >= 1 && c.nfields <= CHECKPOINT_MAX_FIELDS && (c.version == 3 || c.nfields == 1),
                "%d smoke fields in version %d", c.nfields, c.version);
    FUZZ_ASSERT(c.version == 3 || !c.scene, "a scene's in version %d", c.version);
    FUZZ_ASSERT((size_t)c.w * c.h * 4 * CHECKPOINT_NFIELDS * (size_t)c.nfields < size,
                "%dx%d, %d fields from %zu bytes", c.w, c.h, c.nfields, size);
    FUZZ_ASSERT(!strcmp(c.backend, "cpu") || !strcmp(c.backend, "fragment") ||
                    !strcmp(c.backend, "compute"),
                "backend '%.16s'", c.backend);
    FUZZ_ASSERT(c.run_steps >= 0 && c.run_every >= 1, "counts");
    FUZZ_ASSERT(c.version >= 1 && c.version <= 3, "version %d", c.version);
    for (int i = 0; i < c.nfields; i++) {
        const MorphState *s = checkpoint_field(&c, i);
        FUZZ_ASSERT(method_params_check(&s->params) == NULL, "field %d's parameters: %s", i,
                    method_params_check(&s->params));
        FUZZ_ASSERT(s->steps >= 0 && s->solver.nstep >= 0 && s->steps == c.state.steps,
                    "field %d's counts", i);
        /* the schedule (version 2 on): none, or an active key among its
         * keys, steps that fit, finite masses */
        if (s->nkeys == 0)
            FUZZ_ASSERT(s->key == 0 && s->key_every == 0 && s->last_key_step == 0 && s->schedule_sum == 0 &&
                            s->mass_now == 0.0 && s->key_mass == 0.0 && s->tmass == 0.0,
                        "field %d: no schedule, but its numbers set", i);
        else
            FUZZ_ASSERT(c.version >= 2 && s->nkeys > 0 && s->key >= 1 && s->key <= s->nkeys &&
                            s->last_key_step >= s->nkeys && s->key_every >= 0 &&
                            (s->key_every == 0 || s->key_every * s->nkeys == s->last_key_step) &&
                            isfinite(s->mass_now) && isfinite(s->key_mass) && isfinite(s->tmass),
                        "field %d's schedule: %d keys, key %d, every %ld, last %ld", i, s->nkeys, s->key,
                        s->key_every, s->last_key_step);
        for (int k = 0; k < METHOD_FIELD_COUNT; k++)
            FUZZ_ASSERT(s->solver.field[k] != NULL, "field %d's array %d", i, k);
        FUZZ_ASSERT(s->start && s->target, "field %d's images", i);
        /* every cell readable (ASan sees an overrun) */
        volatile float sum = 0.0f;
        size_t n = (size_t)c.w * c.h;
        for (size_t j = 0; j < n; j++) sum += s->start[j] + s->target[j] + s->solver.field[0][j];
        (void)sum;
    }
    checkpoint_free(&c);
}
