/* mode_headless: a run without a window; see mode_headless.h. */
#include "mode_headless.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "budget.h"
#include "export.h"
#include "fidelity.h"
#include "guard.h"
#include "image.h"
#include "log.h"
#include "pool.h"
#include "sidecar.h"

/* An output step on its way: its read-back started (morph_observe_start),
 * then its frame with the writers; its metrics row and sidecar row are
 * written once every frame up to its own is in place, so the metrics, the
 * sidecar and the frames always tell the same story, in step order. */
typedef struct {
    long step, number;
    double time;
    int key, slot;
    bool frame;       /* a frame is written of it (else only the rows) */
    /* once collected */
    double error, mass, max_div, each[MORPH_MAX_FIELDS];
    long need;        /* export_count must reach this before the rows go */
} Output;

#define OUTPUTS_QUEUE 64 /* rows waiting for their frames; more: wait for the writers */

typedef struct {
    Exporter *frames;
    Metrics *metrics;
    Sidecar *sidecar;
    float *rho[MORPH_MAX_FIELDS]; /* each field's density */
    long last_step; /* the last step whose rows are written, -1 before the first */
    float *vx, *vy; /* --exr-velocity */
    int lag;        /* read-backs left in flight behind the steps (0: collected at once) */
    Output obs[MORPH_OBSERVE_SLOTS]; /* read-backs started, oldest first */
    int nobs, next_slot;
    Output rows[OUTPUTS_QUEUE];      /* collected, waiting for their frames */
    int nrows;
    double t_start, t_finish, t_hand; /* seconds: read-backs started, collected; frames handed over */
} Outputs;

/* The number of the frame written at step k: step 0 is --frame-start, then
 * one every --every steps (a last step between two gets the next number). */
static long frame_number(const Config *c, long k)
{
    return c->frame_start + (k + c->every - 1) / c->every;
}

/* Write the rows whose frames are all in place (export_count has reached
 * their need). 0, or -1 when a row cannot be written. */
static int rows_flush(Outputs *o, const Fields *fs)
{
    long done = o->frames ? export_count(o->frames) : 0;
    while (o->nrows > 0 && o->rows[0].need <= done) {
        Output *r = &o->rows[0];
        if (o->metrics && metrics_row(o->metrics, r->step, r->time, r->error, r->mass, r->max_div,
                                      r->key) < 0) {
            log_error("export", "%s", metrics_error(o->metrics));
            return -1;
        }
        if (o->sidecar) {
            char path[4200] = "";
            bool named = r->frame && export_dir(o->frames) &&
                         export_frame_path(o->frames, r->number, path, sizeof path) == 0;
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            if (sidecar_row(o->sidecar, r->step, r->time, r->error, r->mass, r->max_div,
                            named ? (int)r->number : 0, named ? base : NULL) < 0 ||
                (fs->n > 1 && sidecar_row_fields(o->sidecar, r->each, fs->n) < 0)) {
                log_error("smokemorph", "out of memory");
                return -1;
            }
        }
        o->last_step = r->step;
        memmove(o->rows, o->rows + 1, (size_t)(o->nrows - 1) * sizeof o->rows[0]);
        o->nrows--;
    }
    return 0;
}

/* Start what is due at step k: a read-back of every field (with the
 * densities when a frame is written: --frame-range may leave it out) for
 * the frame, the error, the mass and, for metrics, max|∇·u|. 0 or -1. */
static int output_start(Outputs *o, const Fields *fs, const Config *c, long k)
{
    Morph *m = fs->m[0];
    Output *ob = &o->obs[o->nobs];
    long number = frame_number(c, k);
    *ob = (Output){.step = morph_step_count(m), .number = number, .time = morph_time(m),
                   .key = morph_key(m), .slot = o->next_slot,
                   .frame = o->frames && (c->range_last < 0 || number >= c->range_first)};
    double t0 = export_now();
    if (morph_observe_start(fs->m, fs->n, ob->slot, ob->frame, o->metrics || o->sidecar) < 0) {
        log_error("export", "cannot read the fields back from the GPU");
        return -1;
    }
    o->t_start += export_now() - t0;
    o->next_slot = (o->next_slot + 1) % MORPH_OBSERVE_SLOTS;
    o->nobs++;
    return 0;
}

/* Collect the oldest read-back: hand its frame to the writers, queue its
 * rows, write the rows that may go. Its step and error in *step and
 * *err_out. 0 or -1. */
static int output_collect(Outputs *o, const Fields *fs, long *step, double *err_out)
{
    char err[4400];
    Output ob = o->obs[0];
    memmove(o->obs, o->obs + 1, (size_t)(o->nobs - 1) * sizeof o->obs[0]);
    o->nobs--;
    Morph *m = fs->m[0];
    int w = morph_width(m), h = morph_height(m);
    bool div = o->metrics || o->sidecar;
    double t0 = export_now();
    /* with writers, the densities go straight into the frame's own block
     * (no copy), read out in bands on the writers' threads */
    Pool *pool = o->frames ? export_pool(o->frames) : NULL;
    float *planes = NULL, *rho[MORPH_MAX_FIELDS];
    for (int i = 0; i < fs->n; i++) rho[i] = o->rho[i];
    if (ob.frame && pool && !o->vx) { /* waits for room in the budget: hand-over time */
        if (!(planes = export_frame_alloc(o->frames, w, h, err, sizeof err))) {
            rows_flush(o, fs);
            log_error("export", "%s", err);
            return -1;
        }
        for (int i = 0; i < fs->n; i++) rho[i] = planes + (size_t)i * (size_t)w * (size_t)h;
        double ta = export_now();
        o->t_hand += ta - t0;
        t0 = ta;
    }
    if (morph_observe_finish(fs->m, fs->n, ob.slot, ob.frame ? rho : NULL, ob.each, &ob.mass, &ob.error,
                             div ? &ob.max_div : NULL, pool) < 0 ||
        (ob.frame && o->vx && morph_read_motion(m, o->vx, o->vy) < 0)) { /* lag 0 with velocity */
        free(planes);
        log_error("export", "cannot read the fields back from the GPU");
        return -1;
    }
    *step = ob.step;
    *err_out = ob.error;
    if (!isfinite(ob.error) || !isfinite(ob.mass)) { /* no frame and no row of NaN (issue 21) */
        rows_flush(o, fs);
        log_error("solver", "the simulation's state stopped being finite (NaN or infinity) at step %ld; "
                  "stopped; try a smaller --dt or --umax", ob.step);
        return -1;
    }
    double t1 = export_now();
    o->t_finish += t1 - t0;
    int wrote = 0;
    if (ob.frame && planes) {
        if ((wrote = export_write_owned(o->frames, ob.number, planes, false, w, h)) < 0)
            snprintf(err, sizeof err, "%s", export_error(o->frames));
    } else if (ob.frame) {
        wrote = export_write_fields(o->frames, ob.number, (const float *const *)o->rho, o->vx, o->vy, w, h,
                                    err, sizeof err);
    }
    if (wrote < 0) {
        rows_flush(o, fs);
        log_error("export", "%s", err);
        return -1;
    }
    o->t_hand += export_now() - t1;
    if (o->nrows == OUTPUTS_QUEUE) { /* many rows and few frames: let the writers catch up */
        if (export_wait(o->frames, err, sizeof err) < 0 || rows_flush(o, fs) < 0) {
            if (err[0]) log_error("export", "%s", err);
            return -1;
        }
    }
    ob.need = o->frames ? export_submitted(o->frames) : 0;
    o->rows[o->nrows++] = ob;
    return rows_flush(o, fs);
}

/* Collect every read-back in flight and wait for every frame: the rows of
 * every step so far written. 0 or -1 (said). */
static int outputs_drain(Outputs *o, const Fields *fs, bool collect)
{
    char err[4400] = "";
    long step;
    double e;
    while (collect && o->nobs > 0)
        if (output_collect(o, fs, &step, &e) < 0) return -1;
    o->nobs = 0;
    int rc = o->frames ? export_wait(o->frames, err, sizeof err) : 0;
    if (rows_flush(o, fs) < 0) return -1;
    if (rc < 0) log_error("export", "%s", err);
    return rc;
}

/* Collect read-backs until at most lag are in flight, each one's error
 * checked (NaN: the run diverged); the last one's error in *error. 0 or -1
 * (said). */
static int outputs_collect(Outputs *o, const Fields *fs, int lag, double *error)
{
    while (o->nobs > lag) {
        long at;
        if (output_collect(o, fs, &at, error) < 0) return -1;
        if (!isfinite(*error)) {
            log_error("solver", "the simulation's state stopped being finite (NaN or infinity) at "
                      "step %ld; stopped; try a smaller --dt or --umax", at);
            return -1;
        }
    }
    return 0;
}

/* After a failure (said already): the frames in flight finished (or, after
 * a failed frame, removed), and the rows of the frames in place written,
 * saying nothing more. */
static void outputs_settle(Outputs *o, const Fields *fs)
{
    char err[4400];
    if (o->frames) export_wait(o->frames, err, sizeof err);
    if (o->metrics && metrics_error(o->metrics)[0]) return;
    rows_flush(o, fs);
}

/* The memory the frames in flight may hold: what the run's budget
 * (--max-memory) leaves after the simulation's own buffers on the CPU (an
 * estimate: 32 floats a cell), in whole frames, at most two a writer
 * thread, at least one. */
static size_t flight_budget(const Config *c, size_t frame_bytes, int threads, int w, int h)
{
    Budget b;
    budget_init(&b, budget_limit_bytes(c->max_memory_mb));
    budget_add(&b, (unsigned long long)w * (unsigned long long)h * 32ull * sizeof(float),
               "the simulation (%dx%d)", w, h);
    int k = budget_frames_in_flight(&b, frame_bytes, 2 * threads);
    return (size_t)k * frame_bytes;
}

/* Write what is due at step k, now: output_start and output_collect. */
static int write_outputs(Outputs *o, const Fields *fs, const Config *c, long k, double *err_out)
{
    long step;
    if (output_start(o, fs, c, k) < 0) return -1;
    while (o->nobs > 0)
        if (output_collect(o, fs, &step, err_out) < 0) return -1;
    return 0;
}

/* The checkpoint of step k into dir: every field's state (ck holds fs->n),
 * the backend and the run's settle watch. The path written into path. */
static int write_checkpoint(const Fields *fs, Checkpoint *ck, const Config *c, const char *dir, long k,
                            const FidelitySettle *settle, char *path, size_t pathlen)
{
    char err[PATH_MAX + 256];
    snprintf(path, pathlen, "%s/checkpoint_%06ld.smc", dir, k);
    for (int i = 0; i < fs->n; i++)
        if (morph_get_state(fs->m[i], checkpoint_field(ck, i)) < 0) {
            log_error("checkpoint", "cannot read the state back from the GPU for %s", path);
            return -1;
        }
    snprintf(ck->backend, sizeof ck->backend, "%s", morph_backend_name(morph_backend(fs->m[0])));
    ck->run_steps = c->steps;
    ck->run_every = c->every;
    ck->settle_started = settle->started;
    ck->settle_best = settle->best;
    ck->settle_best_step = settle->best_step;
    if (checkpoint_write(path, ck, err, sizeof err) < 0) {
        log_error("checkpoint", "%s", err);
        return -1;
    }
    return 0;
}


/* Ctrl-C or SIGTERM in a headless run: the step stops at its next pass
 * (method_run checks the flag), and the run ends the way a failed run does:
 * the frames and metrics rows written so far stay, complete. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    method_set_cancel_flag(&g_signal);
}

/* One line saying what an interrupted run leaves: which frames and metrics
 * rows, all of this run (earlier runs' frames were removed at its start). */
static void say_interrupted(const Outputs *o, const Config *c, const char *dir, long done,
                            const char *resume_hint)
{
    char frames[PATH_MAX + 128] = "", rows[PATH_MAX + 128] = "";
    int nf = o->frames ? export_count(o->frames) : 0;
    if (o->frames && nf > 0 && dir)
        snprintf(frames, sizeof frames, "; %s holds this run's frames %ld..%ld (steps 0..%ld)", dir,
                 export_first(o->frames), export_last(o->frames), o->last_step);
    else if (o->frames && dir)
        snprintf(frames, sizeof frames, "; no frames written to %s", dir);
    int nr = metrics_rows(o->metrics);
    if (o->metrics && nr > 0)
        snprintf(rows, sizeof rows, "; %s holds %d metrics rows (steps 0..%ld)", c->metrics_path, nr,
                 o->last_step);
    else if (o->metrics)
        snprintf(rows, sizeof rows, "; no metrics file kept");
    log_error("smokemorph", "interrupted by %s at step %ld%s%s%s",
              g_signal == SIGINT ? "SIGINT" : "SIGTERM", done, frames, rows, resume_hint);
}

/* The exporter's options from the run's. */
static ExportOptions export_options(const Config *c, const Fields *fs, const char *dir,
                                    float density_scale, int grid_w, int grid_h)
{
    ExportOptions x = export_defaults();
    x.dir = dir;
    if (c->frames_digits > 0) {
        x.prefix = c->frames_prefix;
        x.digits = c->frames_digits;
        x.suffix = c->frames_suffix;
    }
    x.format = c->format;
    x.frame_start = c->frame_start;
    /* the size known now, so a video's ffmpeg starts (or is found missing)
     * before anything is written */
    x.out_w = c->out_w ? c->out_w : grid_w;
    x.out_h = c->out_h ? c->out_h : grid_h;
    memcpy(x.rgb, c->color, sizeof x.rgb);
    x.density_scale = density_scale;
    x.alpha = c->alpha;
    x.exr_pixel = c->exr_pixel;
    x.exr_compression = c->exr_compression;
    x.velocity = c->exr_velocity;
    x.fps = c->fps;
    x.frame_time = (double)c->every * (double)c->params.dt;
    x.video = c->video_path;
    if (c->field_name) x.field = c->field_name; /* a scene's field: density.NAME */
    if (fs->n > 1) { /* several: each its name and colour, composited */
        x.nfields = fs->n;
        memcpy(x.fields, fs->show, (size_t)fs->n * sizeof x.fields[0]);
    }
    memcpy(x.background, c->background, sizeof x.background);
    x.png_compression = c->png_compression;
    x.exr_tiled = c->exr_tiled;
    x.strip_rows = c->strip_rows;
    x.threads = c->threads > 0 ? c->threads : pool_cores();
    x.max_flight_bytes = flight_budget(c, export_frame_bytes_for(&x, grid_w, grid_h), x.threads,
                                       grid_w, grid_h);
    return x;
}

/* What the frames are called, for the start line: DIR, or the pattern
 * with its number as #. */
static void frames_name(const Config *c, const char *dir, char *buf, size_t n)
{
    if (c->frames_digits <= 0) {
        snprintf(buf, n, "%s", dir);
        return;
    }
    char hashes[16];
    memset(hashes, '#', (size_t)c->frames_digits);
    hashes[c->frames_digits] = '\0';
    snprintf(buf, n, "%s/%s%s%s", dir, c->frames_prefix, hashes, c->frames_suffix);
}

/* "2 keys, reached at steps 300, 600" of one field, into buf. */
static void keys_text(Morph *m, char *buf, size_t n)
{
    char at[160] = "";
    int nk = morph_key_count(m);
    for (int k = 1; k <= nk; k++) {
        size_t u = strlen(at);
        if (u > sizeof at - 24) {
            snprintf(at + u, sizeof at - u, ", ...");
            break;
        }
        snprintf(at + u, sizeof at - u, "%s%ld", k > 1 ? ", " : "", morph_key_step(m, k));
    }
    if (!morph_has_schedule(m)) snprintf(buf, n, "1 key, until it settles");
    else snprintf(buf, n, "%d key%s, reached at step%s %s", nk, nk > 1 ? "s" : "", nk > 1 ? "s" : "", at);
}

/* What a run may replace in the frames folder (export_check_way): never an
 * input; with --overwrite anything else; otherwise an earlier run's frame
 * (listed by a record in the folder, or carrying smokemorph's mark). */
typedef struct {
    char **listed;
    int nlisted;
    bool overwrite;
} Way;

static bool frame_ours(const char *path, const char *name, void *ctx, char *err, size_t errlen)
{
    const Way *w = ctx;
    const char *in = guard_input_of(path);
    if (in) {
        snprintf(err, errlen, "cannot write frames over %s: it is an input of this run (%s); "
                 "write the frames elsewhere", path, in);
        return false;
    }
    if (w->overwrite) return true;
    for (int i = 0; i < w->nlisted; i++)
        if (!strcmp(w->listed[i], name)) return true;
    if (image_file_tagged(path)) return true;
    snprintf(err, errlen, "%s is in the way of the frames and is not an earlier run's frame; "
             "move it, write the frames elsewhere, or give --overwrite", path);
    return false;
}

/* An output file that must not replace an input, nor (without --overwrite)
 * a file smokemorph did not write: ours says whether it did. 0, or -1
 * after one line. */
static int check_output(const char *what, const char *path, bool ours, const Config *c)
{
    const char *in = guard_input_of(path);
    if (in) {
        log_error("export", "cannot write the %s to %s: it is an input of this run (%s)", what, path,
                  in);
        return -1;
    }
    if (!ours && !c->overwrite) {
        log_error("export", "%s exists and is not smokemorph's %s; move it, name another file, or "
                  "give --overwrite", path, what);
        return -1;
    }
    return 0;
}

/* Append " NAME PATH" (PATH resolved: absolute, symlinks followed) to the
 * outputs line, or to the JSON object. */
static void output_item(char *line, size_t n, json_t *o, const char *name, const char *path,
                        const char *file)
{
    char real[PATH_MAX], full[PATH_MAX + 300];
    if (guard_resolve(path, real, sizeof real) < 0) snprintf(real, sizeof real, "%s", path);
    snprintf(full, sizeof full, "%s%s%s", real, file ? "/" : "", file ? file : "");
    size_t u = strlen(line);
    snprintf(line + u, n - u, "%s%s %s", u ? "; " : "", name, full);
    if (o) json_object_set_new(o, name, json_string(full));
}

/* Every run says once, on one line, where it writes, its paths resolved,
 * even with -q (issue 21: a scene's outputs went unsaid). On stdout, which a
 * headless run leaves to this line alone (stderr is messages and progress):
 * "smokemorph: outputs: frames DIR/PATTERN; record ...; metrics ...", or
 * with --progress-format json the object {"event": "outputs", "frames", ...}. */
static void say_outputs(const Config *c, const char *dir, const char *sp, const char *ckdir)
{
    char line[6 * (PATH_MAX + 320)] = "", pat[600] = "";
    json_t *o = c->progress_format == CONFIG_PROGRESS_JSON ? json_pack("{s:s}", "event", "outputs") : NULL;
    if (dir) {
        if (c->frames_digits > 0) {
            char hashes[16];
            memset(hashes, '#', (size_t)c->frames_digits);
            hashes[c->frames_digits] = '\0';
            snprintf(pat, sizeof pat, "%s%s%s", c->frames_prefix, hashes, c->frames_suffix);
        } else {
            snprintf(pat, sizeof pat, "frame_#####%s", c->format == IMAGE_FORMAT_EXR ? ".exr" : ".png");
        }
        output_item(line, sizeof line, o, "frames", dir, pat);
    }
    if (sp) output_item(line, sizeof line, o, "record", sp, NULL);
    if (c->metrics_path) output_item(line, sizeof line, o, "metrics", c->metrics_path, NULL);
    if (c->video_path) output_item(line, sizeof line, o, "video", c->video_path, NULL);
    if (c->screenshot) output_item(line, sizeof line, o, "screenshot", c->screenshot, NULL);
    if (c->checkpoint_every) output_item(line, sizeof line, o, "checkpoints", ckdir, NULL);
    if (o) {
        char *text = json_dumps(o, JSON_COMPACT);
        if (text) printf("%s\n", text);
        free(text);
        json_decref(o);
    } else if (line[0]) {
        printf("smokemorph: outputs: %s\n", line);
    }
    fflush(stdout);
}

/* Steps between two checks that the state is finite, where no output
 * observes it anyway. */
#define FINITE_CHECK_EVERY 16

/* Fault injection for the tests (docs/ROBUSTNESS.md): with
 * --fault-nan-step K (at), a NaN goes into field 0's density after step
 * K, as a solver bug would put it there. (The CPU solver's limiters wash a
 * NaN out within a step: the check must see it at once; K a multiple of
 * FINITE_CHECK_EVERY or an output step.) */
static void fault_nan(Morph *m, long k, long at)
{
    if (at < 0 || k != at) return;
    Checkpoint t;
    if (checkpoint_alloc_fields(&t, morph_width(m), morph_height(m), 1) < 0) return;
    MorphState *st = checkpoint_field(&t, 0);
    if (morph_get_state(m, st) == 0) {
        size_t c = (size_t)morph_height(m) / 2 * morph_width(m) + morph_width(m) / 2;
        st->solver.field[METHOD_FIELD_DENSITY][c] = NAN;
        morph_set_state(m, st);
    }
    checkpoint_free(&t);
}

/* A headless run's state: what mode_headless_run's stages share. */
typedef struct {
    Fields *fs;
    const Config *c;
    const HeadlessInfo *info;
    float density_scale;
    Morph *m;                   /* field 0's: the grid, the backend, the keys */
    Outputs o;
    const Checkpoint *res;      /* resumed from; NULL: a fresh run */
    long first;                 /* the first step: the checkpoint's, or 0 */
    Checkpoint ck;              /* --checkpoint-every's copy of the state */
    char ckpath[PATH_MAX + 64]; /* the last checkpoint written */
    long ckstep;                /* its step; -1: none */
    bool range;                 /* --frame-range: it stops at its last frame */
    bool sequence;              /* keys with steps: it runs to the last key's */
    bool until_settled;         /* no --steps: until the morph arrives or settles */
    long steps, last_key, nframes;
    FidelitySettle settle;
    int ending;                 /* FIDELITY_RUNNING until it arrives or settles */
    const char *dir, *ckdir, *sp;
    char sidecar_path[PATH_MAX + 16];
    Progress prog;
    double error;
    double ran_s;               /* the steps' wall time, to the last frame handed over */
    int rc;                     /* the exit status */
} Headless;

/* How far the run goes and where its outputs go. */
static void hl_plan(Headless *h)
{
    const Config *c = h->c;
    Fields *fs = h->fs;
    h->m = fs->m[0];
    h->o.last_step = -1;
    h->rc = 1;
    /* a resumed run starts at the checkpoint's step, its settle watch as it was */
    h->res = h->info->resume;
    h->first = h->res ? h->res->state.steps : 0;
    h->ckstep = -1;
    /* no --steps: run until the morph arrives or settles; a --frame-range
     * stops at its last frame; a sequence (issue 9) with no --steps runs
     * every key to its end: the last key's step (of several fields, the latest) */
    h->range = c->range_last >= 0;
    for (int i = 0; i < fs->n; i++) {
        if (!morph_has_schedule(fs->m[i])) continue;
        h->sequence = true;
        long st = morph_key_step(fs->m[i], morph_key_count(fs->m[i]));
        if (st > h->last_key) h->last_key = st;
    }
    h->until_settled = c->steps == 0 && !h->range && !h->sequence;
    /* read-backs in flight behind the steps: two on the GPU (triple
     * buffered); none where a step needs its own error (until the morph
     * settles), with the velocity (read at once) or on the CPU (observed at
     * once anyway) */
    h->o.lag = h->until_settled || c->exr_velocity || morph_backend(h->m) == MORPH_CPU ? 0 : 2;
    if (c->readback_lag >= 0) h->o.lag = c->readback_lag; /* --readback-lag (tests: 0 against 2) */
    h->steps = h->range ? (c->range_last - c->frame_start) * (long)c->every
               : h->until_settled ? CONFIG_HEADLESS_MAX_STEPS
               : c->steps == 0 ? h->last_key : c->steps;
    if (h->res) {
        h->settle.started = h->res->settle_started;
        h->settle.best = h->res->settle_best;
        h->settle.best_step = h->res->settle_best_step;
    }
    h->ending = FIDELITY_RUNNING;
    h->dir = c->frames_dir;
    if (!h->dir && !c->no_frames && !c->metrics_path && !c->screenshot && !c->video_path)
        h->dir = CONFIG_DEFAULT_OUT_DIR;
    h->ckdir = c->checkpoint_dir ? c->checkpoint_dir : h->dir ? h->dir : ".";
}

/* The read-back buffers and the checkpoint's. 0, or -1 after one line. */
static int hl_alloc(Headless *h)
{
    const Config *c = h->c;
    Morph *m = h->m;
    size_t cells = (size_t)morph_width(m) * morph_height(m);
    bool nomem = c->checkpoint_every &&
                 checkpoint_alloc_fields(&h->ck, morph_width(m), morph_height(m), h->fs->n) < 0;
    h->ck.scene = h->info->scene;
    for (int i = 0; i < h->fs->n; i++) nomem = nomem || !(h->o.rho[i] = malloc(cells * sizeof(float)));
    if (nomem || (c->exr_velocity && (!(h->o.vx = malloc(cells * sizeof(float))) ||
                                      !(h->o.vy = malloc(cells * sizeof(float)))))) {
        log_error("smokemorph", "out of memory");
        return -1;
    }
    return 0;
}

/* The metrics, screenshot and video: nothing in their way, the metrics
 * opened. 0, or -1 after one line. */
static int hl_open_metrics(Headless *h)
{
    const Config *c = h->c;
    char err[512];
    /* metrics first: it creates nothing under its name until the end, while
     * export_open makes the frames directory, which a failed run must not leave */
    if (c->metrics_path &&
        check_output("metrics", c->metrics_path,
                     metrics_is_ours(c->metrics_path, "step,time,error,mass,max_div,key\n"), c) < 0)
        return -1;
    if (c->screenshot && check_output("screenshot", c->screenshot, true, c) < 0) return -1;
    if (c->video_path && check_output("video", c->video_path, true, c) < 0) return -1;
    if (c->metrics_path && h->dir) {
        /* a metrics file inside the frames folder the run makes: that
         * folder first (issue 21: it failed though the run creates it) */
        char parent[PATH_MAX];
        const char *sl = strrchr(c->metrics_path, '/');
        snprintf(parent, sizeof parent, "%.*s", sl ? (int)(sl - c->metrics_path) : 0, c->metrics_path);
        struct stat pst;
        if (sl && parent[0] && stat(parent, &pst) != 0 && guard_inside(parent, h->dir) &&
            guard_mkdirs(parent) < 0) {
            log_error("export", "cannot write %s: %s", c->metrics_path, strerror(errno));
            return -1;
        }
    }
    if (c->metrics_path && !(h->o.metrics = metrics_open(c->metrics_path, err, sizeof err))) {
        log_error("export", "%s", err);
        return -1;
    }
    if (c->sidecar_path && sidecar_probe(c->sidecar_path, err, sizeof err) < 0) {
        log_error("export", "%s", err);
        return -1;
    }
    return 0;
}

/* The frames' exporter and the checkpoints' folder. 0, or -1 after one line. */
static int hl_open_frames(Headless *h)
{
    const Config *c = h->c;
    char err[512];
    ExportOptions xo = export_options(c, h->fs, h->dir, h->density_scale, morph_width(h->m),
                                      morph_height(h->m));
    if ((h->dir || c->video_path) && !(h->o.frames = export_create(&xo, err, sizeof err))) {
        log_error("export", "%s", err);
        return -1;
    }
    if (c->checkpoint_every && guard_mkdirs(h->ckdir) < 0) {
        log_error("checkpoint", "cannot write checkpoints to %s: %s", h->ckdir, strerror(errno));
        return -1;
    }
    if (c->checkpoint_every) { /* a read-only folder found now, not at the first checkpoint */
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s/checkpoint_probe", h->ckdir);
        if (sidecar_probe(probe, err, sizeof err) < 0) {
            log_error("checkpoint", "cannot write checkpoints to %s: %s", h->ckdir,
                      strchr(err, ':') ? strrchr(err, ':') + 2 : err);
            return -1;
        }
    }
    return 0;
}

/* The record's path (--sidecar, else beside the frames) and nothing in the
 * way of it or of the frames that is not an earlier run's. 0, or -1 after
 * one line. */
static int hl_check_way(Headless *h)
{
    const Config *c = h->c;
    char err[512];
    h->sp = c->sidecar_path;
    if (!h->sp && h->dir && h->o.frames) {
        /* chunks of one render (--frame-range) share the folder: one record each */
        if (h->range)
            snprintf(h->sidecar_path, sizeof h->sidecar_path, "%s/run_%ld-%ld.json", h->dir,
                     c->range_first, c->range_last);
        else
            snprintf(h->sidecar_path, sizeof h->sidecar_path, "%s/run.json", h->dir);
        h->sp = h->sidecar_path;
    }
    if (h->sp && check_output("record", h->sp, access(h->sp, F_OK) != 0 || sidecar_is_ours(h->sp), c) < 0)
        return -1;
    if (h->o.frames && h->dir) {
        /* nothing in the way of the frames that is not an earlier run's */
        Way way = {.overwrite = c->overwrite};
        way.listed = sidecar_listed_frames(h->dir, &way.nlisted);
        long from = h->res ? frame_number(c, h->first) : c->frame_start;
        int in_way = export_check_way(h->o.frames, h->range ? LONG_MAX : h->res ? from : 0,
                                      h->range ? c->range_first : from, h->range ? c->range_last : LONG_MAX,
                                      frame_ours, &way, err, sizeof err);
        sidecar_names_free(way.listed, way.nlisted);
        if (in_way < 0) {
            log_error("export", "%s", err);
            return -1;
        }
    }
    return 0;
}

/* The run's record (the sidecar), and the line saying where it all goes.
 * 0, or -1 after one line. */
static int hl_open_sidecar(Headless *h)
{
    const Config *c = h->c;
    Fields *fs = h->fs;
    Morph *m = h->m;
    if (h->sp) {
        SidecarRun sr = {.version = SMOKEMORPH_VERSION,
                         .backend = morph_backend_name(morph_backend(m)),
                         .renderer = h->info->renderer,
                         .w = morph_width(m),
                         .h = morph_height(m),
                         .steps = c->steps,
                         .every = c->every,
                         .mass_match = c->mass_match,
                         .params = morph_params(m),
                         .frames_dir = h->o.frames ? h->dir : NULL,
                         .resumed_from = h->res ? c->resume_path : NULL,
                         .resumed_step = h->first};
        const char *names[MORPH_MAX_FIELDS];
        float rgb[MORPH_MAX_FIELDS][3];
        for (int i = 0; i < fs->n; i++) {
            names[i] = fs->show[i].name;
            memcpy(rgb[i], fs->show[i].rgb, sizeof rgb[i]);
        }
        sr.nfields = fs->n;
        sr.field_names = names;
        sr.field_rgb = (const float (*)[3])rgb;
        if (!(h->o.sidecar = sidecar_create(h->sp, &sr))) {
            log_error("smokemorph", "out of memory");
            return -1;
        }
    }
    say_outputs(c, h->o.frames ? h->dir : NULL, h->o.sidecar ? h->sp : NULL, h->ckdir);
    return 0;
}

/* The start line: the frames in animators' terms (how many, at what rate,
 * how long) and where they go. */
static void hl_say_start(Headless *h)
{
    const Config *c = h->c;
    Morph *m = h->m;
    char timing[160] = "", where[4400] = "";
    if (h->o.frames) {
        h->nframes = h->range ? c->range_last - c->range_first + 1
                              : h->steps / c->every + 1 + (h->steps % c->every != 0);
        /* absurd numbers as numbers (--fps 1e-300: not 300 digits) */
        double dur = (double)h->nframes / c->fps;
        if (h->until_settled)
            snprintf(timing, sizeof timing, dur < 1e6 ? ": %ld frames at %g fps, %.2f s" : ": %ld frames at %g fps, %.3g s",
                     h->nframes, c->fps, dur);
        else
            snprintf(timing, sizeof timing, dur < 1e6 ? ", %ld frames at %g fps (%.2f s)" : ", %ld frames at %g fps (%.3g s)",
                     h->nframes, c->fps, dur);
    }
    if (h->dir) {
        char name[4200];
        frames_name(c, h->dir, name, sizeof name);
        snprintf(where, sizeof where, ", frames to %s", name);
    }
    if (c->video_path) {
        size_t u = strlen(where);
        snprintf(where + u, sizeof where - u, ", video to %s", c->video_path);
    }
    if (h->res) {
        size_t u = strlen(where);
        snprintf(where + u, sizeof where - u, ", resumed at step %ld from %s", h->first, c->resume_path);
    }
    if (h->until_settled)
        log_info("smokemorph", "%s backend, %dx%d grid, until the morph settles (at most %ld steps%s)%s",
                 morph_backend_name(morph_backend(m)), morph_width(m), morph_height(m), h->steps,
                 timing, where);
    else
        log_info("smokemorph", "%s backend, %dx%d grid, %ld steps%s%s",
                 morph_backend_name(morph_backend(m)), morph_width(m), morph_height(m), h->steps, timing,
                 where);
    /* a single pair's arrival (--arrive auto: from its trip's length) */
    const SolverParams *mp = morph_params(m);
    if (h->fs->n == 1 && !morph_has_schedule(m) && mp && mp->arrive > 0.0f)
        log_info("smokemorph", "arrival planned at %.3g s (step %ld)%s", (double)mp->arrive,
                 lroundf(mp->arrive / mp->dt),
                 c->params.arrive == SETTING_AUTO ? ", from the trip's length (--arrive auto)" : "");
}

/* The keys' lines, the density's scale, and an earlier run's frames
 * removed from the folder. */
static void hl_say_keys(Headless *h)
{
    Fields *fs = h->fs;
    Morph *m = h->m;
    if (fs->n > 1) { /* each field's keys */
        char line[1024] = "";
        for (int i = 0; i < fs->n; i++) {
            char kt[256];
            size_t u = strlen(line);
            keys_text(fs->m[i], kt, sizeof kt);
            snprintf(line + u, sizeof line - u, "%s%s (%s)", i ? "; " : "", fs->show[i].name, kt);
        }
        log_info("smokemorph", "%d smoke fields sharing one velocity: %s", fs->n, line);
    } else if (h->sequence && morph_key_every(m) > 0) {
        log_info("smokemorph", "%d keys, %ld steps each: key k is the target of steps "
                 "(k-1)*%ld+1..k*%ld", morph_key_count(m), morph_key_every(m), morph_key_every(m),
                 morph_key_every(m));
    } else if (h->sequence) { /* a scene's keys: their steps */
        char kt[256];
        keys_text(m, kt, sizeof kt);
        log_info("smokemorph", "%s", kt);
    }
    if (h->o.frames && h->density_scale < 1.0f)
        log_info("smokemorph", "density up to %.3g: alpha is density x %.3g so none is clipped "
                 "(--density-scale)", 1.0 / h->density_scale, h->density_scale);
    /* one run per directory: earlier runs' frames go now, not after this
     * run succeeds, so that even a killed run leaves no mix of two; and what
     * killed runs left (temporary files of processes that are gone) */
    if (h->o.frames) {
        /* a --frame-range is one chunk of a render: the other chunks'
         * frames stay; a resumed run keeps the frames before its step */
        int temps = 0,
            old = export_clean(h->o.frames, h->range ? INT_MAX : h->res ? (int)frame_number(h->c, h->first) : 0,
                               &temps);
        if (old > 0 || temps > 0)
            log_info("smokemorph", "removed %d frames of an earlier run and %d temporary files "
                     "of a killed run from %s", old > 0 ? old : 0, temps, h->dir);
    }
}

/* Ctrl-C or SIGTERM came before step k or within it: a checkpoint of step
 * k - 1 where the state is whole, the frames of the steps done finished,
 * one line. The exit status 128 + the signal. */
static int hl_interrupted(Headless *h, long k, bool before)
{
    const Config *c = h->c;
    double e = h->error;
    progress_end(&h->prog);
    /* a farm's preemption: a signal between steps leaves the state of step
     * k - 1, to resume from; one within a step leaves part of a step, and
     * the last periodic checkpoint is the one to resume from */
    if (before && c->checkpoint_every && h->ckstep != k - 1 &&
        write_checkpoint(h->fs, &h->ck, c, h->ckdir, k - 1, &h->settle, h->ckpath, sizeof h->ckpath) == 0) {
        h->ckstep = k - 1;
        if (h->o.sidecar) sidecar_checkpoint(h->o.sidecar, h->ckstep, h->ckpath);
    }
    /* the frames of the steps done are finished, never half-written */
    if (outputs_collect(&h->o, h->fs, 0, &e) < 0 || outputs_drain(&h->o, h->fs, false) < 0)
        outputs_settle(&h->o, h->fs);
    h->error = e;
    char hint[sizeof h->ckpath + 32] = "";
    if (h->ckstep >= 0) snprintf(hint, sizeof hint, "; resume with --resume %s", h->ckpath);
    say_interrupted(&h->o, c, h->dir, k - 1, hint);
    return 128 + (int)g_signal;
}

/* Between outputs: the state still finite (every FINITE_CHECK_EVERY
 * steps), and until the morph settles its error watched (every 10 steps;
 * *observe set where it ends). 0, or -1 after one line. */
static int hl_watch(Headless *h, long k, bool *observe)
{
    Fields *fs = h->fs;
    if (!*observe && k % FINITE_CHECK_EVERY == 0) {
        /* the state still finite, between outputs too (issue 21): the
         * density's mass and the velocity's divergence see every cell */
        double mass = 0.0, e = 0.0, div = 0.0;
        if (morph_observe_fields(fs->m, fs->n, NULL, NULL, &mass, &e, &div) < 0) {
            log_error("export", "cannot read the fields back from the GPU");
            return -1;
        }
        if (!isfinite(mass) || !isfinite(e) || !isfinite(div)) {
            log_error("solver", "the simulation's state stopped being finite (NaN or infinity) by "
                      "step %ld; stopped; try a smaller --dt or --umax", k);
            return -1;
        }
    }
    if (h->until_settled && !*observe && k % 10 == 0) { /* watch the error, no output */
        double mass;
        if (morph_observe_fields(fs->m, fs->n, NULL, NULL, &mass, &h->error, NULL) < 0) {
            log_error("export", "cannot read the fields back from the GPU");
            return -1;
        }
        h->ending = fidelity_settle_update(&h->settle, k, h->error);
        if (h->ending != FIDELITY_RUNNING) *observe = true; /* the last frame */
    }
    return 0;
}

/* What is due after step k: its outputs (a read-back started, o.lag of
 * them left in flight), a checkpoint, the progress line. 0, or -1 after
 * one line. */
static int hl_after_step(Headless *h, long k, bool observe)
{
    const Config *c = h->c;
    char err[512];
    if (observe) {
        if (output_start(&h->o, h->fs, c, k) < 0 || outputs_collect(&h->o, h->fs, h->o.lag, &h->error) < 0)
            return -1;
        if (h->until_settled && h->ending == FIDELITY_RUNNING) /* lag 0: step k's error */
            h->ending = fidelity_settle_update(&h->settle, k, h->error);
    }
    if (c->checkpoint_every && k % c->checkpoint_every == 0 && h->ending == FIDELITY_RUNNING) {
        /* the frames up to the checkpoint's step in place first: a resumed
         * run writes the frames from its step on */
        if (outputs_collect(&h->o, h->fs, 0, &h->error) < 0 || outputs_drain(&h->o, h->fs, false) < 0)
            return -1;
        if (write_checkpoint(h->fs, &h->ck, c, h->ckdir, k, &h->settle, h->ckpath, sizeof h->ckpath) < 0)
            return -1;
        h->ckstep = k;
        snprintf(err, sizeof err, "out of memory");
        if (h->o.sidecar && (sidecar_checkpoint(h->o.sidecar, k, h->ckpath) < 0 ||
                             sidecar_write(h->o.sidecar, "running", 0, k, err, sizeof err) < 0)) {
            log_error("export", "%s", err);
            return -1;
        }
    }
    h->prog.frames = h->o.frames ? export_count(h->o.frames) : 0;
    h->prog.in_flight = h->o.frames ? (int)(export_submitted(h->o.frames) - h->prog.frames) + h->o.nobs : 0;
    if (k < h->steps && h->ending == FIDELITY_RUNNING) /* the last: once its frames are in */
        progress_update(&h->prog, k, h->error);
    return 0;
}

/* The steps, from the first's outputs to the last's. 0, or -1 with h->rc
 * the exit status (after one line). */
static int hl_steps(Headless *h)
{
    const Config *c = h->c;
    bool json = c->progress_format == CONFIG_PROGRESS_JSON;
    progress_begin(&h->prog, h->steps, json ? !config_given(c, "no-progress") : c->progress && c->verbosity > 0);
    progress_set_json(&h->prog, json, h->first);
    h->prog.frames_total = h->o.frames && h->dir ? h->nframes : 0;
    catch_signals();
    /* the checkpoint's step is written again when it is an output step (the
     * same bytes as the earlier run's): a resumed run starts with it; the
     * first frame written before the steps go on: what fails at once says so at once */
    if ((!h->res || h->first % c->every == 0 || h->first == h->steps) &&
        (write_outputs(&h->o, h->fs, c, h->first, &h->error) < 0 || outputs_drain(&h->o, h->fs, false) < 0))
        return -1;
    for (long k = h->first + 1; k <= h->steps; k++) {
        bool before = g_signal != 0;
        int stepped = before ? 0 : morph_step_fields(h->fs->m, h->fs->n);
        if (g_signal) { /* before the step, or within it: its state is not written */
            h->rc = hl_interrupted(h, k, before);
            return -1;
        }
        if (stepped < 0) {
            log_error("solver", "a GL error at step %ld", k);
            return -1;
        }
        fault_nan(h->m, k, c->fault_nan_step);
        bool observe = k % c->every == 0 || k == h->steps;
        if (hl_watch(h, k, &observe) < 0 || hl_after_step(h, k, observe) < 0) return -1;
        if (h->ending != FIDELITY_RUNNING) {
            h->steps = k;
            break;
        }
    }
    return 0;
}

/* The last read-backs and frames in, how the morph ended, the headless
 * --screenshot, the frames finished. 0, or -1 after one line. */
static int hl_finish(Headless *h)
{
    const Config *c = h->c;
    Fields *fs = h->fs;
    char err[512];
    if (outputs_collect(&h->o, fs, 0, &h->error) < 0 || outputs_drain(&h->o, fs, false) < 0) return -1;
    h->prog.frames = h->o.frames ? export_count(h->o.frames) : 0;
    h->prog.in_flight = 0;
    progress_update(&h->prog, h->steps, h->error);
    progress_end(&h->prog);
    h->ran_s = export_now() - h->prog.start;
    if (h->until_settled && c->verbosity > 0) {
        if (h->ending == FIDELITY_ARRIVED_AT)
            fprintf(stderr, "smokemorph: the morph arrived: error %.3g%% at step %ld\n",
                    100.0 * h->error, h->steps);
        else if (h->ending == FIDELITY_SETTLED_AT)
            fprintf(stderr, "smokemorph: the morph settled at error %.3g%% by step %ld "
                    "(no 1%% gain in %ld steps)\n", 100.0 * h->error, h->steps, FIDELITY_SETTLE_STEPS);
        else
            fprintf(stderr, "smokemorph: stopped after %ld steps at error %.3g%%; "
                    "--steps N runs longer\n", h->steps, 100.0 * h->error);
    }
    if (c->screenshot) { /* headless: the last frame, as --frames writes it */
        if (morph_observe_fields(fs->m, fs->n, h->o.rho, NULL, NULL, NULL, NULL) < 0) {
            log_error("export", "cannot read the fields back from the GPU");
            return -1;
        }
        if (export_png_fields(c->screenshot, (const float *const *)h->o.rho, fs->show, fs->n,
                              morph_width(h->m), morph_height(h->m), c->out_w, c->out_h, err,
                              sizeof err) < 0) {
            log_error("export", "%s", err);
            return -1;
        }
        if (c->verbosity > 0)
            fprintf(stderr, "smokemorph: step %ld saved to %s\n", morph_step_count(h->m), c->screenshot);
    }
    if (h->o.frames && export_finish(h->o.frames, err, sizeof err) < 0) {
        log_error("export", "%s", err);
        return -1;
    }
    return 0;
}

/* A finished run's lines: its speed, where the time went (-v), the frames
 * and the video written. */
static void hl_report(Headless *h)
{
    const Config *c = h->c;
    double ran_s = h->ran_s;
    Outputs *o = &h->o;
    if (c->verbosity > 0) { /* the run's speed: steps and frames a second */
        long ran = h->steps - h->first;
        char fr[160] = "";
        if (o->frames && export_count(o->frames) > 0)
            snprintf(fr, sizeof fr, ", %d frames (%.1f frames/s, %d writer thread%s)",
                     export_count(o->frames), ran_s > 0.0 ? export_count(o->frames) / ran_s : 0.0,
                     export_threads(o->frames), export_threads(o->frames) == 1 ? "" : "s");
        fprintf(stderr, "smokemorph: %ld steps in %.2f s (%.1f steps/s)%s\n", ran, ran_s,
                ran_s > 0.0 ? (double)ran / ran_s : 0.0, fr);
    }
    if (c->verbosity > 1) { /* where the time went (docs/PERFORMANCE.md) */
        double cv = 0.0, en = 0.0, cm = 0.0;
        if (o->frames) export_times(o->frames, &cv, &en, &cm);
        fprintf(stderr, "smokemorph: time: read-backs %.2f s to start, %.2f s to wait for and sum; "
                "frames %.2f s to hand over; writers (thread-seconds) %.2f s converting, %.2f s "
                "compressing and writing, %.2f s renaming\n", o->t_start, o->t_finish, o->t_hand, cv,
                en - cv, cm);
    }
    if (!o->frames || c->verbosity <= 0) return;
    int nf = export_count(o->frames);
    char first[4200], last[4200], hint[8800];
    if (h->dir && nf > 0 && export_frame_path(o->frames, export_first(o->frames), first, sizeof first) == 0 &&
        export_frame_path(o->frames, export_last(o->frames), last, sizeof last) == 0) {
        const char *base = strrchr(last, '/');
        fprintf(stderr, "smokemorph: wrote %d frames to %s ... %s\n", nf, first, base ? base + 1 : last);
    }
    if (c->video_path)
        fprintf(stderr, "smokemorph: wrote %s: %d frames at %g fps (%.2f s), %s\n", c->video_path,
                nf, c->fps, (double)nf / c->fps,
                strcasecmp(c->video_path + strlen(c->video_path) - 4, ".mov") == 0
                    ? "ProRes 4444 with alpha" : "H.264 over the background");
    else if (export_video_hint(o->frames, hint, sizeof hint) == 0)
        fprintf(stderr, "  make a video: %s\n", hint);
}

/* Whatever the end: frames in flight finished or removed, the metrics
 * closed (a failed or interrupted run keeps the complete rows it wrote),
 * the record written once the run has written something, everything
 * freed. The exit status. */
static int hl_close(Headless *h)
{
    const Config *c = h->c;
    Outputs *o = &h->o;
    char err[512];
    int rc = h->rc;
    if (rc != 0) outputs_settle(o, h->fs); /* frames in flight finished or removed */
    if (o->metrics) {
        if (metrics_close(o->metrics, rc == 0 || metrics_rows(o->metrics) > 0, err, sizeof err) < 0) {
            log_error("export", "%s", err);
            if (rc == 0) rc = 1;
        } else if (rc == 0 && c->verbosity > 0) {
            fprintf(stderr, "smokemorph: metrics in %s\n", c->metrics_path);
        }
    }
    /* A run that failed before its first frame or checkpoint leaves no
     * record. After a failure, the failure's line is the one error line:
     * the record's own failure then goes unsaid. */
    bool wrote = o->last_step >= 0 || h->ckstep >= 0 || rc == 0;
    if (o->sidecar && wrote) {
        const char *status = rc == 0 ? "complete" : rc > 128 ? "interrupted" : "failed";
        if (sidecar_write(o->sidecar, status, rc, morph_step_count(h->m), err, sizeof err) < 0) {
            /* said even after another failure (a full disk): the record is
             * what a farm reads (issue 21: it was lost silently) */
            log_error("export", "%s%s", err, rc == 0 ? "" : " (the run's record is lost too)");
            if (rc == 0) rc = 1;
        }
    }
    sidecar_free(o->sidecar);
    checkpoint_free(&h->ck);
    export_close(o->frames);
    for (int i = 0; i < h->fs->n; i++) free(o->rho[i]);
    free(o->vx);
    free(o->vy);
    return rc;
}

int mode_headless_run(Fields *fs, const Config *c, float density_scale, const HeadlessInfo *info)
{
    Headless h = {.fs = fs, .c = c, .info = info, .density_scale = density_scale};
    hl_plan(&h);
    if (hl_alloc(&h) == 0 && hl_open_metrics(&h) == 0 && hl_open_frames(&h) == 0 && hl_check_way(&h) == 0 &&
        hl_open_sidecar(&h) == 0) {
        hl_say_start(&h);
        hl_say_keys(&h);
        if (hl_steps(&h) == 0 && hl_finish(&h) == 0) {
            h.rc = 0;
            hl_report(&h);
        }
    }
    return hl_close(&h);
}
