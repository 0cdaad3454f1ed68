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
 * The file (version 1, every number little-endian):
 *
 *   offset  size  what
 *        0     8  magic "SMOKECKP"
 *        8     4  u32 version (1)
 *       12     4  u32 header size in bytes (120 + 8 * nparams)
 *       16     8  u64 file size in bytes, the checksum included
 *       24    12  i32 w, h, d (d = 1: 2D)
 *       36     4  u32 number of fields (10)
 *       40    16  the backend that wrote it, NUL-padded: cpu, fragment or compute
 *       56     8  i64 the morph's step count
 *       64     8  i64 the solver's clock (steps since the start density was set)
 *       72     8  f32 pot_c, f32 dscale (method.h, MethodState)
 *       80     4  u32 flags: 1 the target was mass-matched; 2 the run's settle watch started
 *       84     4  i32 the run's --every
 *       88     8  i64 the run's --steps (0: until the morph settles)
 *       96    16  f64 the settle watch's best error, i64 its step (fidelity.h)
 *      112     8  u32 nparams (19), u32 0
 *      120  8*np  f64 each parameter, in method_param_info's order
 *        …  4*n*w*h  f32 fields: MethodField's order (density, target, target_blur,
 *                 velocity_u, velocity_v, pressure, potential, gather_e), then the
 *                 start image and the target image as given; each W*H, row 0 at the top
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
#define CHECKPOINT_VERSION 1
#define CHECKPOINT_NFIELDS (METHOD_FIELD_COUNT + 2) /* the solver's, start, target */
#define CHECKPOINT_MAX_SIDE 16384
#define CHECKPOINT_MAX_CELLS (16L * 1024 * 1024)

typedef struct {
    int w, h;
    char backend[16];       /* the backend that wrote it (morph_backend_name) */
    MorphState state;       /* its arrays: checkpoint_alloc's, freed by checkpoint_free */
    /* the headless run that wrote it, so a resumed run goes on the same way */
    long run_steps;         /* its --steps (0: until the morph settles) */
    int run_every;          /* its --every */
    bool settle_started;    /* its settle watch (FidelitySettle, fidelity.h) */
    double settle_best;
    long settle_best_step;
} Checkpoint;

/* Zeroes c and allocates the arrays of a w x h state. 0, or -1 when out of
 * memory (nothing left allocated). */
int checkpoint_alloc(Checkpoint *c, int w, int h);
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
