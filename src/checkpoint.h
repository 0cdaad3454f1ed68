/* checkpoint: the whole state of a morph in one file, to resume a run
 * exactly where it stopped. GL-free: it reads and writes plain float arrays
 * (a MorphState, morph.h); the morph module takes the state from a backend
 * and gives it back.
 *
 *   Checkpoint c;
 *   checkpoint_alloc(&c, w, h);                 // the arrays of a w x h state
 *   morph_get_state(m, &c.state); strcpy(c.backend, "cpu"); c.run_every = 10; ...
 *   checkpoint_write("out/checkpoint_000100.smc", &c, err, sizeof err);
 *   checkpoint_free(&c);
 *
 *   if (checkpoint_read(path, &c, err, sizeof err) < 0) die(...);   // one line in err
 *   morph_set_state(m, &c.state);
 *
 * A scene's run of several smoke fields (morph_step_fields, sharing one
 * velocity) writes each field's whole state: checkpoint_alloc_fields, then
 * morph_get_state(ms[i], checkpoint_field(&c, i)) for each.
 *
 * The file (version 3, every number little-endian; still read: version 2,
 * the same with one field and 0 at offset 116; version 1, version 2 without
 * the schedule's block):
 *
 *   offset  size  what
 *        0     8  magic "SMOKECKP"
 *        8     4  u32 version (3)
 *       12     4  u32 header size in bytes (120 + 8 * nparams + 64 + (nf - 1) * B,
 *                 B = 96 + 8 * nparams; version 2: 120 + 8 * nparams + 64;
 *                 version 1: 120 + 8 * nparams)
 *       16     8  u64 file size in bytes, the checksum included
 *       24    12  i32 w, h, d (d = 1: 2D)
 *       36     4  u32 number of fields (10)
 *       40    16  the backend that wrote it, NUL-padded: cpu, fragment or compute
 *       56     8  i64 the morph's step count
 *       64     8  i64 the solver's clock (steps since the start density was set)
 *       72     8  f32 pot_c, f32 dscale (method.h, MethodState)
 *       80     4  u32 flags: 1 the target was mass-matched; 2 the run's settle watch started;
 *                 4 (version 3) the run was a --scene's
 *       84     4  i32 the run's --every
 *       88     8  i64 the run's --steps (0: until the morph settles)
 *       96    16  f64 the settle watch's best error, i64 its step (fidelity.h)
 *      112     8  u32 nparams (19), u32 nf: the smoke fields (1..4; versions 1, 2: 0, one)
 *      120  8*np  f64 each parameter, in method_param_info's order
 *   (offsets 56..120 and the parameters and schedule: field 0's state)
 *   S = 120 + 8*np: the schedule (morph.h, MorphState), all 0 without one:
 *     S+0      4  u32 number of keys (0: no schedule; at most 1000000)
 *     S+4      4  u32 the active key, 1..number of keys
 *     S+8      8  i64 the keys' spacing, --key-every (0: set one by one)
 *     S+16     8  i64 the last key's step (at least the number of keys;
 *                 with a spacing, keys x spacing)
 *     S+24     8  u64 the schedule's sum (morph_schedule_sum)
 *     S+32    24  f64 the masses it follows: the smoke's, the active key's
 *                 matched mass, the target's as the backend holds it (finite)
 *     S+56     8  0
 *   F = S + 64: version 3, smoke fields 2..nf's blocks, B bytes each:
 *     F+0      8  i64 its step count (the same as field 0's)
 *     F+8      8  i64 its solver's clock
 *     F+16     8  f32 pot_c, f32 dscale
 *     F+24     8  u32 flags (1 its target was mass-matched), u32 0
 *     F+32  8*np  f64 its parameters
 *     F+32+8*np 64  its schedule, laid out as at S
 *        …  4*n*w*h*nf  f32 fields, smoke field 1's, then 2's, ...: each MethodField's
 *                 order (density, target, target_blur, velocity_u, velocity_v,
 *                 pressure, potential, gather_e), then the start image and the
 *                 target image as given; each W*H, row 0 at the top (the shared
 *                 velocity is in each field's: morph_set_state gives it back)
 *     last     4  u32 CRC-32 (zlib) of every byte before it
 *
 * The reader trusts nothing: it checks the magic, the version, the size
 * against the header (truncation), the checksum, then every number's range,
 * before it allocates anything larger than the file. */
#ifndef SMOKEMORPH_CHECKPOINT_H
#define SMOKEMORPH_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "method.h"
#include "morph.h"

#define CHECKPOINT_MAGIC "SMOKECKP"
#define CHECKPOINT_VERSION 3
#define CHECKPOINT_MAX_FIELDS MORPH_MAX_FIELDS
#define CHECKPOINT_NFIELDS (METHOD_FIELD_COUNT + 2) /* the solver's, start, target */
#define CHECKPOINT_MAX_SIDE 16384
#define CHECKPOINT_MAX_CELLS (16L * 1024 * 1024)

typedef struct {
    int w, h;
    char backend[16];       /* the backend that wrote it (morph_backend_name) */
    MorphState state;       /* smoke field 0's; its arrays: checkpoint_alloc's, freed by
                               checkpoint_free */
    int nfields;            /* smoke fields, 1..CHECKPOINT_MAX_FIELDS (versions 1, 2: 1) */
    MorphState more[CHECKPOINT_MAX_FIELDS - 1]; /* fields 1..nfields-1 (checkpoint_field) */
    bool scene;             /* its run was a --scene's (version 3; before: false) */
    /* the headless run that wrote it, so a resumed run goes on the same way */
    long run_steps;         /* its --steps (0: until the morph settles) */
    int run_every;          /* its --every */
    bool settle_started;    /* its settle watch (FidelitySettle, fidelity.h) */
    double settle_best;
    long settle_best_step;
    int version;            /* the file's (checkpoint_parse); 1 has no schedule, 1 and 2
                               one field */
} Checkpoint;

/* Zeroes c and allocates the arrays of a w x h state of one smoke field
 * (checkpoint_alloc) or nfields (1..CHECKPOINT_MAX_FIELDS). 0, or -1 when
 * out of memory or out of range (nothing left allocated). */
/* The largest magnitude a checkpoint's array may hold; NaN, infinities and
 * anything beyond are refused by checkpoint_parse. */
#define CHECKPOINT_VALUE_MAX 1e30f
int checkpoint_alloc(Checkpoint *c, int w, int h);
int checkpoint_alloc_fields(Checkpoint *c, int w, int h, int nfields);
/* Smoke field i's state (0: &c->state), 0 <= i < c->nfields. */
MorphState *checkpoint_field(Checkpoint *c, int i);
void checkpoint_free(Checkpoint *c);

/* Writes c to path atomically: a temporary file beside it ("PATH.tmp.PID.N"),
 * flushed to the disk (fsync), then renamed over path; on any error the
 * temporary is removed and path is untouched. 0, or -1 with one line in err
 * naming the file and the reason. */
int checkpoint_write(const char *path, const Checkpoint *c, char *err, size_t errlen);

/* Parses a checkpoint from memory (the file's bytes): the one entry point of
 * the reader, for checkpoint_read and for fuzzing. On success c holds the
 * state (free it with checkpoint_free); on failure c holds nothing to free,
 * err says why in a few words ("truncated: 100 of 4242 bytes"). */
int checkpoint_parse(const void *buf, size_t len, Checkpoint *c, char *err, size_t errlen);

/* Reads and parses the file; err: "cannot read PATH: why". */
int checkpoint_read(const char *path, Checkpoint *c, char *err, size_t errlen);

#endif
