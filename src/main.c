/* smokemorph: wiring. config -> images -> context -> morph -> window or
 * headless loop (frames, metrics, progress). */
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
#include "checkpoint.h"
#include "config.h"
#include "export.h"
#include "glctx.h"
#include "guard.h"
#include "pool.h"
#include "image.h"
#include "log.h"
#include "fidelity.h"
#include "morph.h"
#include "scene.h"
#include "shader.h"
#include "sidecar.h"
#include "view.h"


/* The bundled targets: next to the executable (source tree: ./targets or
 * ../targets from build/), else PREFIX/share/smokemorph/targets. */
static int find_data_dir(const char *argv0, const char *sub, const char *probe, char *out,
                         size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
    } else {
        snprintf(exe, sizeof exe, "%s", argv0);
    }
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    else snprintf(exe, sizeof exe, ".");
    /* source tree (./smokemorph or build/smokemorph), an install moved as a
     * whole (PREFIX/bin -> PREFIX/share/smokemorph), the configured prefix */
    const char *fmt[4] = {"%s/%s", "%s/../%s", "%s/../share/smokemorph/%s", "%s/%s"};
    const char *base[4] = {exe, exe, exe, SMOKEMORPH_DATADIR};
    for (int k = 0; k < 4; k++) {
        char dir[PATH_MAX], p[PATH_MAX];
        int l1 = snprintf(dir, sizeof dir, fmt[k], base[k], sub);
        if (l1 < 0 || (size_t)l1 >= sizeof dir || (size_t)l1 >= outlen) continue;
        int l2 = snprintf(p, sizeof p, "%s/%s", dir, probe);
        if (l2 < 0 || (size_t)l2 >= sizeof p) continue;
        if (access(p, R_OK) == 0) {
            memcpy(out, dir, (size_t)l1 + 1);
            return 0;
        }
    }
    return -1;
}

#define DEFAULT_START "blob.png"
#define DEFAULT_TARGET "star.png"

/* Load one density image at its own size (lo: its field's channel,
 * invert, and the run's --raw and --max-image-mb). */
static Image *load_image(const char *path, const ImageLoadOpts *lo, ImageInfo *info)
{
    char err[1024];
    guard_note_input(path); /* no output may replace it */
    Image *im = image_load_info(path, lo, info, err, sizeof err);
    if (!im) die("image", "%s", err);
    return im;
}

/* Resample a loaded image to the grid (and free it). */
static Image *to_grid(Image *im, const char *path, const Config *c)
{
    Image *g = image_resample(im, c->grid_w, c->grid_h);
    image_free(im);
    if (!g) die("image", "not enough memory to resample %s to %dx%d", path, c->grid_w, c->grid_h);
    return g;
}

/* Input hints (issues 10, 23): one line each, naming what fixes what looks
 * like a mistake for this image alone: the image given as PATH:channel=a or
 * PATH:invert (image_spec), so that it works whatever the other images
 * need. The density is the image as loaded (after its channel and invert). */
static void hint_image(const char *path, const Image *im, const ImageInfo *info, const ImageLoadOpts *lo)
{
    if (info->transparent && lo->channel != IMAGE_CHANNEL_A)
        log_info("image", "%s has transparency, which the density (channel %s) ignores; "
                 "%s:channel=a takes the smoke from the alpha", path,
                 lo->channel == IMAGE_CHANNEL_LUMA ? "luma" : "r|g|b", path);
    /* mostly bright, with a bright border and a dark shape: the usual
     * black-on-white export, whose background would become the smoke */
    size_t n = (size_t)im->w * im->h, bright = 0, dark = 0, nb = 0;
    double border = 0.0;
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            float v = im->px[(size_t)y * im->w + x];
            if (v >= 0.5f) bright++;
            if (v < 0.25f) dark++;
            if (x == 0 || y == 0 || x == im->w - 1 || y == im->h - 1) {
                border += v;
                nb++;
            }
        }
    if (nb > 0 && border / (double)nb >= 0.75 && bright * 2 > n && dark * 200 >= n)
        log_info("image", "%s is mostly bright with a dark shape, so the bright background becomes "
                 "the smoke; %s:%s", path, path, lo->invert ? "invert=0 keeps it as it is (the shape is "
                                                                "the smoke)"
                                                              : "invert makes the dark shape the smoke");
}

/* A target must have a shape: one value everywhere (all white, say) has none. */
static void check_target_shape(const char *path, const Image *im)
{
    size_t n = (size_t)im->w * im->h;
    float lo = im->px[0], hi = im->px[0];
    for (size_t k = 1; k < n; k++) {
        if (im->px[k] < lo) lo = im->px[k];
        if (im->px[k] > hi) hi = im->px[k];
    }
    if (hi > 0.0f && hi - lo <= 1e-6f * hi)
        die("image", "%s is uniform (every pixel %.3g%s): there is no shape to morph to", path,
            (double)hi, hi == 1.0f ? ", white" : "");
}

static bool aspect_differs(int w0, int h0, int w1, int h1)
{
    double a = (double)w0 / h0, b = (double)w1 / h1;
    return fabs(a / b - 1.0) > 0.01;
}

/* The grid: with no --grid, the default's cell count at the start image's
 * aspect; either way, a hint for each image whose aspect differs from it. */
static void pick_grid(Config *c, int n, const char *const path[], const Image *const im[])
{
    if (!c->grid_set && aspect_differs(im[0]->w, im[0]->h, c->grid_w, c->grid_h)) {
        double cells = (double)c->grid_w * c->grid_h, r = (double)im[0]->w / im[0]->h;
        long gw = lround(sqrt(cells * r)), gh = lround(sqrt(cells / r));
        c->grid_w = (int)(gw < CONFIG_GRID_MIN ? CONFIG_GRID_MIN : gw > CONFIG_GRID_MAX ? CONFIG_GRID_MAX : gw);
        c->grid_h = (int)(gh < CONFIG_GRID_MIN ? CONFIG_GRID_MIN : gh > CONFIG_GRID_MAX ? CONFIG_GRID_MAX : gh);
    }
    for (int k = 0; k < n; k++) {
        if (!aspect_differs(im[k]->w, im[k]->h, c->grid_w, c->grid_h)) continue;
        double cells = (double)c->grid_w * c->grid_h, r = (double)im[k]->w / im[k]->h;
        log_info("image", "%s is %dx%d, the grid %dx%d: the image is stretched to fit; "
                 "--grid %ldx%ld keeps its shape", path[k], im[k]->w, im[k]->h, c->grid_w,
                 c->grid_h, lround(sqrt(cells * r)), lround(sqrt(cells / r)));
    }
}

/* The run's smoke fields: one, or a scene's several sharing one velocity
 * (stepped together by morph_step_fields; field 0 holds the velocity, its
 * key is the metrics' key), and how the frames show each. */
typedef struct {
    int n;
    Morph *m[MORPH_MAX_FIELDS];
    ExportField show[MORPH_MAX_FIELDS]; /* name (density.NAME) and colour */
    char name[MORPH_MAX_FIELDS][40];
} Fields;

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

/* What a headless run knows beyond the Config: where it resumed from, and
 * what goes into the sidecar. */
typedef struct {
    const Checkpoint *resume; /* NULL: a fresh run */
    const char *renderer;     /* the GL renderer string, or "cpu" */
    bool scene;               /* a --scene run: its checkpoints say so */
} RunInfo;

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

/* mkdir -p for the checkpoint directory */
static int make_dir(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char ch = *p;
        *p = '\0';
        if (mkdir(buf, 0777) < 0 && errno != EEXIST) return -1;
        *p = ch;
        if (!ch) break;
    }
    struct stat st;
    if (stat(path, &st) < 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
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

static int run_headless(Fields *fs, const Config *c, float density_scale, const RunInfo *info)
{
    Morph *m = fs->m[0];
    char err[512];
    Outputs o = {.last_step = -1};
    int rc = 1;
    /* a resumed run starts at the checkpoint's step, its settle watch as it was */
    const Checkpoint *res = info->resume;
    long first = res ? res->state.steps : 0;
    Checkpoint ck = {0};
    char ckpath[PATH_MAX + 64] = "";
    long ckstep = -1; /* the step of the last checkpoint written */
    /* no --steps: run until the morph arrives or settles; a --frame-range
     * stops at its last frame */
    bool range = c->range_last >= 0;
    /* a sequence (issue 9) with no --steps runs every key to its end: the
     * last key's step */
    bool sequence = false;
    long last_key = 0; /* of several fields, the latest key's step */
    for (int i = 0; i < fs->n; i++) {
        if (!morph_has_schedule(fs->m[i])) continue;
        sequence = true;
        long st = morph_key_step(fs->m[i], morph_key_count(fs->m[i]));
        if (st > last_key) last_key = st;
    }
    bool until_settled = c->steps == 0 && !range && !sequence;
    /* read-backs in flight behind the steps: two on the GPU (triple
     * buffered); none where a step needs its own error (until the morph
     * settles), with the velocity (read at once) or on the CPU (observed at
     * once anyway) */
    o.lag = until_settled || c->exr_velocity || morph_backend(m) == MORPH_CPU ? 0 : 2;
    if (c->readback_lag >= 0) o.lag = c->readback_lag; /* --readback-lag (tests: 0 against 2) */
    long steps = range ? (c->range_last - c->frame_start) * (long)c->every
                 : until_settled ? CONFIG_HEADLESS_MAX_STEPS
                 : c->steps == 0 ? last_key : c->steps;
    FidelitySettle settle = {0};
    if (res) {
        settle.started = res->settle_started;
        settle.best = res->settle_best;
        settle.best_step = res->settle_best_step;
    }
    int ending = FIDELITY_RUNNING;
    const char *dir = c->frames_dir;
    if (!dir && !c->no_frames && !c->metrics_path && !c->screenshot && !c->video_path)
        dir = CONFIG_DEFAULT_OUT_DIR;
    const char *ckdir = c->checkpoint_dir ? c->checkpoint_dir : dir ? dir : ".";
    size_t cells = (size_t)morph_width(m) * morph_height(m);
    bool nomem = c->checkpoint_every &&
                 checkpoint_alloc_fields(&ck, morph_width(m), morph_height(m), fs->n) < 0;
    ck.scene = info->scene;
    for (int i = 0; i < fs->n; i++) nomem = nomem || !(o.rho[i] = malloc(cells * sizeof(float)));
    if (nomem || (c->exr_velocity && (!(o.vx = malloc(cells * sizeof(float))) ||
                                      !(o.vy = malloc(cells * sizeof(float)))))) {
        log_error("smokemorph", "out of memory");
        for (int i = 0; i < fs->n; i++) free(o.rho[i]);
        free(o.vx);
        free(o.vy);
        checkpoint_free(&ck);
        return 1;
    }
    /* metrics first: it creates nothing under its name until the end, while
     * export_open makes the frames directory, which a failed run must not leave */
    if (c->metrics_path &&
        check_output("metrics", c->metrics_path,
                     metrics_is_ours(c->metrics_path, "step,time,error,mass,max_div,key\n"), c) < 0)
        goto done;
    if (c->screenshot && check_output("screenshot", c->screenshot, true, c) < 0) goto done;
    if (c->video_path && check_output("video", c->video_path, true, c) < 0) goto done;
    if (c->metrics_path && dir) {
        /* a metrics file inside the frames folder the run makes: that
         * folder first (issue 21: it failed though the run creates it) */
        char parent[PATH_MAX];
        const char *sl = strrchr(c->metrics_path, '/');
        snprintf(parent, sizeof parent, "%.*s", sl ? (int)(sl - c->metrics_path) : 0, c->metrics_path);
        struct stat pst;
        if (sl && parent[0] && stat(parent, &pst) != 0 && guard_inside(parent, dir) && make_dir(parent) < 0) {
            log_error("export", "cannot write %s: %s", c->metrics_path, strerror(errno));
            goto done;
        }
    }
    if (c->metrics_path && !(o.metrics = metrics_open(c->metrics_path, err, sizeof err))) {
        log_error("export", "%s", err);
        goto done;
    }
    if (c->sidecar_path && sidecar_probe(c->sidecar_path, err, sizeof err) < 0) {
        log_error("export", "%s", err);
        goto done;
    }
    ExportOptions xo = export_options(c, fs, dir, density_scale, morph_width(m), morph_height(m));
    if ((dir || c->video_path) && !(o.frames = export_create(&xo, err, sizeof err))) {
        log_error("export", "%s", err);
        goto done;
    }
    if (c->checkpoint_every && make_dir(ckdir) < 0) {
        log_error("checkpoint", "cannot write checkpoints to %s: %s", ckdir, strerror(errno));
        goto done;
    }
    if (c->checkpoint_every) { /* a read-only folder found now, not at the first checkpoint */
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s/checkpoint_probe", ckdir);
        if (sidecar_probe(probe, err, sizeof err) < 0) {
            log_error("checkpoint", "cannot write checkpoints to %s: %s", ckdir,
                      strchr(err, ':') ? strrchr(err, ':') + 2 : err);
            goto done;
        }
    }
    char sidecar_path[PATH_MAX + 16];
    const char *sp = c->sidecar_path;
    if (!sp && dir && o.frames) {
        /* chunks of one render (--frame-range) share the folder: one record each */
        if (range)
            snprintf(sidecar_path, sizeof sidecar_path, "%s/run_%ld-%ld.json", dir, c->range_first,
                     c->range_last);
        else
            snprintf(sidecar_path, sizeof sidecar_path, "%s/run.json", dir);
        sp = sidecar_path;
    }
    if (sp && check_output("record", sp, access(sp, F_OK) != 0 || sidecar_is_ours(sp), c) < 0)
        goto done;
    if (o.frames && dir) {
        /* nothing in the way of the frames that is not an earlier run's */
        Way way = {.overwrite = c->overwrite};
        way.listed = sidecar_listed_frames(dir, &way.nlisted);
        long from = res ? frame_number(c, first) : c->frame_start;
        int in_way = export_check_way(o.frames, range ? LONG_MAX : res ? from : 0,
                                      range ? c->range_first : from, range ? c->range_last : LONG_MAX,
                                      frame_ours, &way, err, sizeof err);
        sidecar_names_free(way.listed, way.nlisted);
        if (in_way < 0) {
            log_error("export", "%s", err);
            goto done;
        }
    }
    if (sp) {
        SidecarRun sr = {.version = SMOKEMORPH_VERSION,
                         .backend = morph_backend_name(morph_backend(m)),
                         .renderer = info->renderer,
                         .w = morph_width(m),
                         .h = morph_height(m),
                         .steps = c->steps,
                         .every = c->every,
                         .mass_match = c->mass_match,
                         .params = morph_params(m),
                         .frames_dir = o.frames ? dir : NULL,
                         .resumed_from = res ? c->resume_path : NULL,
                         .resumed_step = first};
        const char *names[MORPH_MAX_FIELDS];
        float rgb[MORPH_MAX_FIELDS][3];
        for (int i = 0; i < fs->n; i++) {
            names[i] = fs->show[i].name;
            memcpy(rgb[i], fs->show[i].rgb, sizeof rgb[i]);
        }
        sr.nfields = fs->n;
        sr.field_names = names;
        sr.field_rgb = (const float (*)[3])rgb;
        if (!(o.sidecar = sidecar_create(sp, &sr))) {
            log_error("smokemorph", "out of memory");
            goto done;
        }
    }
    say_outputs(c, o.frames ? dir : NULL, o.sidecar ? sp : NULL, ckdir);
    /* the start line: the frames in animators' terms (how many, at what
     * rate, how long) and where they go */
    char timing[160] = "", where[4400] = "";
    long nf = 0; /* frames to write (at most, until it settles) */
    if (o.frames) {
        nf = range ? c->range_last - c->range_first + 1
                        : steps / c->every + 1 + (steps % c->every != 0);
        /* absurd numbers as numbers (--fps 1e-300: not 300 digits) */
        double dur = (double)nf / c->fps;
        if (until_settled)
            snprintf(timing, sizeof timing, dur < 1e6 ? ": %ld frames at %g fps, %.2f s" : ": %ld frames at %g fps, %.3g s", nf, c->fps,
                     (double)nf / c->fps);
        else
            snprintf(timing, sizeof timing, dur < 1e6 ? ", %ld frames at %g fps (%.2f s)" : ", %ld frames at %g fps (%.3g s)", nf, c->fps,
                     (double)nf / c->fps);
    }
    if (dir) {
        char name[4200];
        frames_name(c, dir, name, sizeof name);
        snprintf(where, sizeof where, ", frames to %s", name);
    }
    if (c->video_path) {
        size_t u = strlen(where);
        snprintf(where + u, sizeof where - u, ", video to %s", c->video_path);
    }
    if (res) {
        size_t u = strlen(where);
        snprintf(where + u, sizeof where - u, ", resumed at step %ld from %s", first, c->resume_path);
    }
    if (until_settled)
        log_info("smokemorph", "%s backend, %dx%d grid, until the morph settles (at most %ld steps%s)%s",
                 morph_backend_name(morph_backend(m)), morph_width(m), morph_height(m), steps,
                 timing, where);
    else
        log_info("smokemorph", "%s backend, %dx%d grid, %ld steps%s%s",
                 morph_backend_name(morph_backend(m)), morph_width(m), morph_height(m), steps, timing,
                 where);
    if (fs->n > 1) { /* each field's keys */
        char line[1024] = "";
        for (int i = 0; i < fs->n; i++) {
            char kt[256];
            size_t u = strlen(line);
            keys_text(fs->m[i], kt, sizeof kt);
            snprintf(line + u, sizeof line - u, "%s%s (%s)", i ? "; " : "", fs->show[i].name, kt);
        }
        log_info("smokemorph", "%d smoke fields sharing one velocity: %s", fs->n, line);
    } else if (sequence && morph_key_every(m) > 0) {
        log_info("smokemorph", "%d keys, %ld steps each: key k is the target of steps "
                 "(k-1)*%ld+1..k*%ld", morph_key_count(m), morph_key_every(m), morph_key_every(m),
                 morph_key_every(m));
    } else if (sequence) { /* a scene's keys: their steps */
        char kt[256];
        keys_text(m, kt, sizeof kt);
        log_info("smokemorph", "%s", kt);
    }
    if (o.frames && density_scale < 1.0f)
        log_info("smokemorph", "density up to %.3g: alpha is density x %.3g so none is clipped "
                 "(--density-scale)", 1.0 / density_scale, density_scale);

    /* one run per directory: earlier runs' frames go now, not after this
     * run succeeds, so that even a killed run leaves no mix of two; and what
     * killed runs left (temporary files of processes that are gone) */
    if (o.frames) {
        /* a --frame-range is one chunk of a render: the other chunks'
         * frames stay; a resumed run keeps the frames before its step */
        int temps = 0, old = export_clean(o.frames, range ? INT_MAX : res ? (int)frame_number(c, first) : 0,
                                          &temps);
        if (old > 0 || temps > 0)
            log_info("smokemorph", "removed %d frames of an earlier run and %d temporary files "
                     "of a killed run from %s", old > 0 ? old : 0, temps, dir);
    }

    Progress prog;
    bool json = c->progress_format == CONFIG_PROGRESS_JSON;
    progress_begin(&prog, steps, json ? !config_given(c, "no-progress") : c->progress && c->verbosity > 0);
    progress_set_json(&prog, json, first);
    prog.frames_total = o.frames && dir ? nf : 0;
    catch_signals();
    double error = 0.0;
    /* the checkpoint's step is written again when it is an output step (the
     * same bytes as the earlier run's): a resumed run starts with it */
    if ((!res || first % c->every == 0 || first == steps) &&
        (write_outputs(&o, fs, c, first, &error) < 0 || outputs_drain(&o, fs, false) < 0))
        goto done; /* the first frame written before the steps go on: what fails at once says so at once */
    for (long k = first + 1; k <= steps; k++) {
        bool before = g_signal != 0;
        int stepped = before ? 0 : morph_step_fields(fs->m, fs->n);
        if (g_signal) { /* before the step, or within it: its state is not written */
            progress_end(&prog);
            /* a farm's preemption: a signal between steps leaves the state of
             * step k - 1, to resume from; one within a step leaves part of a
             * step, and the last periodic checkpoint is the one to resume from */
            if (before && c->checkpoint_every && ckstep != k - 1 &&
                write_checkpoint(fs, &ck, c, ckdir, k - 1, &settle, ckpath, sizeof ckpath) == 0) {
                ckstep = k - 1;
                if (o.sidecar) sidecar_checkpoint(o.sidecar, ckstep, ckpath);
            }
            /* the frames of the steps done are finished, never half-written */
            if (outputs_collect(&o, fs, 0, &error) < 0 || outputs_drain(&o, fs, false) < 0)
                outputs_settle(&o, fs);
            char hint[sizeof ckpath + 32] = "";
            if (ckstep >= 0) snprintf(hint, sizeof hint, "; resume with --resume %s", ckpath);
            say_interrupted(&o, c, dir, k - 1, hint);
            rc = 128 + (int)g_signal;
            goto done;
        }
        if (stepped < 0) {
            log_error("solver", "a GL error at step %ld", k);
            goto done;
        }
        fault_nan(m, k, c->fault_nan_step);
        bool observe = k % c->every == 0 || k == steps;
        if (!observe && k % FINITE_CHECK_EVERY == 0) {
            /* the state still finite, between outputs too (issue 21): the
             * density's mass and the velocity's divergence see every cell */
            double mass = 0.0, e = 0.0, div = 0.0;
            if (morph_observe_fields(fs->m, fs->n, NULL, NULL, &mass, &e, &div) < 0) {
                log_error("export", "cannot read the fields back from the GPU");
                goto done;
            }
            if (!isfinite(mass) || !isfinite(e) || !isfinite(div)) {
                log_error("solver", "the simulation's state stopped being finite (NaN or infinity) by "
                          "step %ld; stopped; try a smaller --dt or --umax", k);
                goto done;
            }
        }
        if (until_settled && !observe && k % 10 == 0) { /* watch the error, no output */
            double mass;
            if (morph_observe_fields(fs->m, fs->n, NULL, NULL, &mass, &error, NULL) < 0) {
                log_error("export", "cannot read the fields back from the GPU");
                goto done;
            }
            ending = fidelity_settle_update(&settle, k, error);
            if (ending != FIDELITY_RUNNING) observe = true; /* the last frame */
        }
        if (observe) { /* the read-back of step k starts; o.lag of them stay in flight */
            if (output_start(&o, fs, c, k) < 0 || outputs_collect(&o, fs, o.lag, &error) < 0)
                goto done;
            if (until_settled && ending == FIDELITY_RUNNING) /* lag 0: step k's error */
                ending = fidelity_settle_update(&settle, k, error);
        }
        if (c->checkpoint_every && k % c->checkpoint_every == 0 && ending == FIDELITY_RUNNING) {
            /* the frames up to the checkpoint's step in place first: a
             * resumed run writes the frames from its step on */
            if (outputs_collect(&o, fs, 0, &error) < 0 || outputs_drain(&o, fs, false) < 0) goto done;
            if (write_checkpoint(fs, &ck, c, ckdir, k, &settle, ckpath, sizeof ckpath) < 0) goto done;
            ckstep = k;
            snprintf(err, sizeof err, "out of memory");
            if (o.sidecar && (sidecar_checkpoint(o.sidecar, k, ckpath) < 0 ||
                              sidecar_write(o.sidecar, "running", 0, k, err, sizeof err) < 0)) {
                log_error("export", "%s", err);
                goto done;
            }
        }
        prog.frames = o.frames ? export_count(o.frames) : 0;
        prog.in_flight = o.frames ? (int)(export_submitted(o.frames) - prog.frames) + o.nobs : 0;
        if (k < steps && ending == FIDELITY_RUNNING) /* the last: once its frames are in */
            progress_update(&prog, k, error);
        if (ending != FIDELITY_RUNNING) {
            steps = k;
            break;
        }
    }
    /* the last read-backs and frames in flight */
    if (outputs_collect(&o, fs, 0, &error) < 0 || outputs_drain(&o, fs, false) < 0) goto done;
    prog.frames = o.frames ? export_count(o.frames) : 0;
    prog.in_flight = 0;
    progress_update(&prog, steps, error);
    progress_end(&prog);
    double ran_s = export_now() - prog.start;
    if (until_settled && c->verbosity > 0) {
        if (ending == FIDELITY_ARRIVED_AT)
            fprintf(stderr, "smokemorph: the morph arrived: error %.3g%% at step %ld\n",
                    100.0 * error, steps);
        else if (ending == FIDELITY_SETTLED_AT)
            fprintf(stderr, "smokemorph: the morph settled at error %.3g%% by step %ld "
                    "(no 1%% gain in %ld steps)\n", 100.0 * error, steps, FIDELITY_SETTLE_STEPS);
        else
            fprintf(stderr, "smokemorph: stopped after %ld steps at error %.3g%%; "
                    "--steps N runs longer\n", steps, 100.0 * error);
    }
    if (c->screenshot) { /* headless: the last frame, as --frames writes it */
        if (morph_observe_fields(fs->m, fs->n, o.rho, NULL, NULL, NULL, NULL) < 0) {
            log_error("export", "cannot read the fields back from the GPU");
            goto done;
        }
        if (export_png_fields(c->screenshot, (const float *const *)o.rho, fs->show, fs->n,
                              morph_width(m), morph_height(m), c->out_w, c->out_h, err,
                              sizeof err) < 0) {
            log_error("export", "%s", err);
            goto done;
        }
        if (c->verbosity > 0)
            fprintf(stderr, "smokemorph: step %ld saved to %s\n", morph_step_count(m), c->screenshot);
    }
    if (o.frames && export_finish(o.frames, err, sizeof err) < 0) {
        log_error("export", "%s", err);
        goto done;
    }
    if (c->verbosity > 0) { /* the run's speed: steps and frames a second */
        long ran = steps - first;
        char fr[160] = "";
        if (o.frames && export_count(o.frames) > 0)
            snprintf(fr, sizeof fr, ", %d frames (%.1f frames/s, %d writer thread%s)",
                     export_count(o.frames), ran_s > 0.0 ? export_count(o.frames) / ran_s : 0.0,
                     export_threads(o.frames), export_threads(o.frames) == 1 ? "" : "s");
        fprintf(stderr, "smokemorph: %ld steps in %.2f s (%.1f steps/s)%s\n", ran, ran_s,
                ran_s > 0.0 ? (double)ran / ran_s : 0.0, fr);
    }
    if (c->verbosity > 1) { /* where the time went (docs/PERFORMANCE.md) */
        double cv = 0.0, en = 0.0, cm = 0.0;
        if (o.frames) export_times(o.frames, &cv, &en, &cm);
        fprintf(stderr, "smokemorph: time: read-backs %.2f s to start, %.2f s to wait for and sum; "
                "frames %.2f s to hand over; writers (thread-seconds) %.2f s converting, %.2f s "
                "compressing and writing, %.2f s renaming\n", o.t_start, o.t_finish, o.t_hand, cv,
                en - cv, cm);
    }
    rc = 0;
    if (o.frames && c->verbosity > 0) {
        int nf = export_count(o.frames);
        char first[4200], last[4200], hint[8800];
        if (dir && nf > 0 && export_frame_path(o.frames, export_first(o.frames), first, sizeof first) == 0 &&
            export_frame_path(o.frames, export_last(o.frames), last, sizeof last) == 0) {
            const char *base = strrchr(last, '/');
            fprintf(stderr, "smokemorph: wrote %d frames to %s ... %s\n", nf, first,
                    base ? base + 1 : last);
        }
        if (c->video_path)
            fprintf(stderr, "smokemorph: wrote %s: %d frames at %g fps (%.2f s), %s\n", c->video_path,
                    nf, c->fps, (double)nf / c->fps,
                    strcasecmp(c->video_path + strlen(c->video_path) - 4, ".mov") == 0
                        ? "ProRes 4444 with alpha" : "H.264 over the background");
        else if (export_video_hint(o.frames, hint, sizeof hint) == 0)
            fprintf(stderr, "  make a video: %s\n", hint);
    }
done:
    if (rc != 0) outputs_settle(&o, fs); /* frames in flight finished or removed */
    if (o.metrics) {
        /* a failed or interrupted run keeps the complete rows it wrote */
        if (metrics_close(o.metrics, rc == 0 || metrics_rows(o.metrics) > 0, err, sizeof err) < 0) {
            log_error("export", "%s", err);
            if (rc == 0) rc = 1;
        } else if (rc == 0 && c->verbosity > 0) {
            fprintf(stderr, "smokemorph: metrics in %s\n", c->metrics_path);
        }
    }
    /* The record of the run, whatever its end, once it has written
     * something (a run that failed before its first frame or checkpoint
     * leaves nothing). After a failure, the failure's line is the one error
     * line: the record's own failure then goes unsaid. */
    bool wrote = o.last_step >= 0 || ckstep >= 0 || rc == 0;
    if (o.sidecar && wrote) {
        const char *status = rc == 0 ? "complete" : rc > 128 ? "interrupted" : "failed";
        if (sidecar_write(o.sidecar, status, rc, morph_step_count(m), err, sizeof err) < 0) {
            /* said even after another failure (a full disk): the record is
             * what a farm reads (issue 21: it was lost silently) */
            log_error("export", "%s%s", err, rc == 0 ? "" : " (the run's record is lost too)");
            if (rc == 0) rc = 1;
        }
    }
    sidecar_free(o.sidecar);
    checkpoint_free(&ck);
    export_close(o.frames);
    for (int i = 0; i < fs->n; i++) free(o.rho[i]);
    free(o.vx);
    free(o.vy);
    return rc;
}

/* The backend a run uses. Explicit choices are checked against the context;
 * auto takes, in order (measured with tools/bench, docs/PERFORMANCE.md):
 *   - cpu, headless on a software renderer (llvmpipe, softpipe, swrast),
 *     where the CPU reference runs faster than any GL path;
 *   - compute where the context has OpenGL 4.3 (on a data-centre GPU
 *     fragment passes run many times slower than compute);
 *   - fragment otherwise (a 3.3 context). */
static int pick_backend(const Config *c, GlCtx *ctx, bool window, MorphBackend *out, char *err,
                        size_t errlen)
{
    bool compute = shader_compute_available();
    switch (c->backend) {
    case BACKEND_CPU: *out = MORPH_CPU; return 0;
    case BACKEND_FRAGMENT: *out = MORPH_FRAGMENT; return 0;
    case BACKEND_COMPUTE:
        if (!compute) {
            snprintf(err, errlen, "smokemorph: --backend compute needs OpenGL 4.3; this context has %s "
                     "(--backend fragment runs on it)", glctx_version(ctx));
            return -1;
        }
        *out = MORPH_COMPUTE;
        return 0;
    case BACKEND_AUTO: break;
    }
    if (!window && shader_software_renderer()) *out = MORPH_CPU;
    else *out = compute ? MORPH_COMPUTE : MORPH_FRAGMENT;
    return 0;
}

/* A parameter's value as the options write it. */
static void param_text(char kind, double v, char *buf, size_t n)
{
    if (kind == 'b') snprintf(buf, n, "%s", v != 0.0 ? "on" : "off");
    else if (kind == 'e') snprintf(buf, n, "%s", v == SOLVER_FORCE_FATTAL ? "fattal" : "balance");
    else snprintf(buf, n, "%g", v);
}

/* A checkpoint of a sequence (several TARGETs, --key-every) holds the
 * active key, not the keys' images: the run resumed from it gives the same
 * CURRENT and TARGETs, and --key-every defaults to its run's. One without a
 * schedule takes no sequence. 0, or -1 after one line. */
static int resume_keys(Config *c, const Checkpoint *ck)
{
    const MorphState *s = &ck->state;
    bool seq = c->nkeys > 1 || c->key_every_set;
    if (s->nkeys == 0) {
        if (!seq) return 0;
        log_error("checkpoint", "cannot resume from %s: its run had one target, not a sequence: "
                  "leave out the extra TARGETs and --key-every", c->resume_path);
        return -1;
    }
    if (s->key_every <= 0) {
        log_error("checkpoint", "cannot resume from %s: its keys are not evenly spaced (a schedule "
                  "of the C API), which the command line cannot give", c->resume_path);
        return -1;
    }
    if (c->nkeys == 0) {
        log_error("checkpoint", "cannot resume from %s: it is of a sequence of %d keys, whose images "
                  "it does not hold: give CURRENT and the %d TARGETs of its run", c->resume_path,
                  s->nkeys, s->nkeys);
        return -1;
    }
    if (c->nkeys != s->nkeys) {
        log_error("checkpoint", "cannot resume from %s: its run had %d keys, this one %d TARGETs: "
                  "give the same %d TARGETs", c->resume_path, s->nkeys, c->nkeys, s->nkeys);
        return -1;
    }
    if (!c->key_every_set) {
        c->key_every = s->key_every;
        c->key_every_set = true;
    } else if (c->key_every != s->key_every) {
        log_error("checkpoint", "cannot resume from %s: its keys are %ld steps apart, --key-every "
                  "says %ld: give --key-every %ld", c->resume_path, s->key_every, c->key_every,
                  s->key_every);
        return -1;
    }
    return 0;
}

/* A sequence resumed: the morph made from the command line's images and
 * keys takes the checkpoint's state if they are its run's. 0, or -1 after
 * one line. */
static int resume_sequence(Morph *m, const Config *c, const Checkpoint *ck, const float *start)
{
    char why[256];
    if (strcmp(ck->backend, morph_backend_name(morph_backend(m))) != 0)
        log_info("smokemorph", "%s was written by the %s backend, this run uses %s: the frames "
                 "will not be bit-identical to an uninterrupted run's", c->resume_path, ck->backend,
                 morph_backend_name(morph_backend(m)));
    if (memcmp(start, ck->state.start, sizeof(float) * (size_t)ck->w * ck->h) != 0) {
        log_error("checkpoint", "cannot resume from %s: CURRENT (%s) differs from its run's start "
                  "image: give the same file and image options", c->resume_path, c->current_path);
        return -1;
    }
    if (morph_state_schedule_check(m, &ck->state, why, sizeof why)) {
        log_error("checkpoint", "cannot resume from %s: the TARGETs differ from its run's keys: give "
                  "the same files in the same order, with the same image options", c->resume_path);
        return -1;
    }
    if (morph_set_state(m, &ck->state) < 0) {
        log_error("checkpoint", "cannot load the state of %s into the %s backend", c->resume_path,
                  morph_backend_name(morph_backend(m)));
        return -1;
    }
    return 0;
}

/* A scene's checkpoint (FLAG_SCENE, checkpoint.h) holds every field's
 * state, not the scene's images, keys or sources: the run resumed from it
 * gives the same --scene FILE (checked field by field once the fields are
 * made: resume_scene). One of another run takes no --scene, and the
 * reverse. 0, or -1 after one line. */
static int resume_scene_file(const Config *c, const Checkpoint *ck, const Scene *scene)
{
    if (!scene && (ck->scene || ck->nfields > 1)) {
        log_error("checkpoint", "cannot resume from %s: its run was a scene's (%d smoke field%s), "
                  "whose images and keys it does not hold: give the same --scene FILE", c->resume_path,
                  ck->nfields, ck->nfields > 1 ? "s" : "");
        return -1;
    }
    if (!scene) return 0;
    if (!ck->scene) {
        log_error("checkpoint", "cannot resume from %s: its run had no --scene: leave out --scene %s "
                  "and give its run's images", c->resume_path, scene->file);
        return -1;
    }
    if (ck->nfields != scene->nfields) {
        log_error("checkpoint", "cannot resume from %s: its run's scene had %d smoke field%s, --scene "
                  "%s has %d: give the same --scene FILE as its run", c->resume_path, ck->nfields,
                  ck->nfields > 1 ? "s" : "", scene->file, scene->nfields);
        return -1;
    }
    return 0;
}

/* A scene resumed: each field made from the scene takes its state from the
 * checkpoint if its start image, keys, moves and sources are its run's
 * (field i's state to field i; load_resume checked the count). 0, or -1
 * after one line. */
static int resume_scene(const Fields *fs, const Config *c, Checkpoint *ck, const Scene *scene,
                        const float *const *start)
{
    char why[256];
    size_t n = (size_t)ck->w * ck->h;
    const char *be = morph_backend_name(morph_backend(fs->m[0]));
    if (strcmp(ck->backend, be) != 0)
        log_info("smokemorph", "%s was written by the %s backend, this run uses %s: the frames "
                 "will not be bit-identical to an uninterrupted run's", c->resume_path, ck->backend, be);
    for (int i = 0; i < fs->n; i++) {
        const MorphState *st = checkpoint_field(ck, i);
        const float *key1 = morph_key_target(fs->m[i], 1);
        bool plain = st->nkeys == 0 && !morph_has_schedule(fs->m[i]);
        if (memcmp(start[i], st->start, sizeof(float) * n) != 0 ||
            (plain && key1 && memcmp(key1, st->target, sizeof(float) * n) != 0)) {
            log_error("checkpoint", "cannot resume from %s: smoke field %s's %s image differs from "
                      "its run's: give the same --scene FILE (its run's was %s) and image options",
                      c->resume_path, fs->name[i], plain && memcmp(start[i], st->start,
                      sizeof(float) * n) == 0 ? "target" : "start", scene->file);
            return -1;
        }
        if (morph_state_schedule_check(fs->m[i], st, why, sizeof why)) {
            log_error("checkpoint", "cannot resume from %s: smoke field %s's keys differ from its "
                      "run's (%s): give the same --scene FILE as its run", c->resume_path, fs->name[i],
                      why);
            return -1;
        }
    }
    for (int i = 0; i < fs->n; i++)
        if (morph_set_state(fs->m[i], checkpoint_field(ck, i)) < 0) {
            log_error("checkpoint", "cannot load the state of %s into the %s backend", c->resume_path, be);
            return -1;
        }
    return 0;
}

/* --resume FILE: read the checkpoint and make the Config agree with it. The
 * checkpoint decides the grid (a different --grid is an error), the images
 * and the parameters; a simulation option given on the command line
 * overrides its parameter, and says so (the frames then differ from an
 * uninterrupted run's). --steps and --every default to the checkpoint's
 * run's. A scene's run (scene non-NULL) takes each field's parameters from
 * the checkpoint as they were (the scene's settings are options too, and
 * its keys may have their own: nothing is overridden). 0, or -1 after one
 * line on stderr. */
static int load_resume(Config *c, Checkpoint *ck, const Scene *scene)
{
    char err[PATH_MAX + 512];
    guard_note_input(c->resume_path);
    if (checkpoint_read(c->resume_path, ck, err, sizeof err) < 0) {
        log_error("checkpoint", "%s", err);
        return -1;
    }
    if (config_given(c, "grid") && (c->grid_w != ck->w || c->grid_h != ck->h)) {
        log_error("checkpoint", "cannot resume from %s: its grid is %dx%d, --grid says %dx%d",
                  c->resume_path, ck->w, ck->h, c->grid_w, c->grid_h);
        goto fail;
    }
    c->grid_w = ck->w;
    c->grid_h = ck->h;
    c->grid_set = true; /* the images are stretched to it, as in its run */
    if (resume_scene_file(c, ck, scene) < 0 || (!scene && resume_keys(c, ck) < 0)) goto fail;
    if (!config_given(c, "steps")) c->steps = ck->run_steps;
    if (!config_given(c, "every")) c->every = ck->run_every;
    if (c->steps > 0 && c->steps < ck->state.steps) {
        log_error("checkpoint", "cannot resume from %s: it is at step %ld, after --steps %ld",
                  c->resume_path, ck->state.steps, c->steps);
        goto fail;
    }
    SolverParams p = ck->state.params;
    for (int k = 0; k < METHOD_PARAM_COUNT && !scene; k++) {
        const MethodParamInfo *in = &method_param_info[k];
        /* --force fattal also sets the drift and the easing (config.c) */
        bool forced = (!strcmp(in->name, "drift") || !strncmp(in->name, "ease_", 5)) &&
                      config_given(c, "force");
        if (!in->option || !(config_given(c, in->option) || forced)) continue;
        double mine = method_param_get(&c->params, k), theirs = method_param_get(&p, k);
        if (mine == theirs) continue;
        method_param_set(&p, k, mine);
        char a[32], b[32];
        param_text(in->kind, mine, a, sizeof a);
        param_text(in->kind, theirs, b, sizeof b);
        if (in->kind == 'b')
            log_info("smokemorph", "--%s overrides the checkpoint's %s %s: the frames will differ "
                     "from an uninterrupted run's", in->option, in->name, b);
        else if (forced && !config_given(c, in->option))
            log_info("smokemorph", "--force %s sets %s %s, overriding the checkpoint's %s: the "
                     "frames will differ from an uninterrupted run's",
                     c->params.force == SOLVER_FORCE_FATTAL ? "fattal" : "balance", in->name, a, b);
        else
            log_info("smokemorph", "--%s %s overrides the checkpoint's %s: the frames will differ "
                     "from an uninterrupted run's", in->option, a, b);
    }
    const char *why = method_params_check(&p);
    if (why) {
        log_error("config", "%s", why);
        goto fail;
    }
    if (!scene) c->params = p; /* a scene's fields are made with its own, then given the state's */
    c->mass_match = ck->state.mass_match;
    ck->state.params = p;
    return 0;
fail:
    checkpoint_free(ck);
    return -1;
}

/* A run from a checkpoint: the morph made from its images, then given its
 * state; headless (frames from its step on) or in a window. */
static int run_resumed(Config *c, Checkpoint *ck, GlCtx *ctx, MorphBackend backend, bool window,
                       const char *renderer, const char *argv0)
{
    char err[1024], shader_dir[PATH_MAX];
    int rc = 1;
    Morph *m = NULL;
    if (ctx && shader_find_dir(c->shader_dir, argv0, shader_dir, sizeof shader_dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    if (strcmp(ck->backend, morph_backend_name(backend)) != 0)
        log_info("smokemorph", "%s was written by the %s backend, this run uses %s: the frames "
                 "will not be bit-identical to an uninterrupted run's", c->resume_path, ck->backend,
                 morph_backend_name(backend));
    m = morph_create_opts(ck->w, ck->h, &c->params, &c->solver, ck->state.start, ck->state.target,
                          ck->state.mass_match, backend, ctx ? shader_dir : NULL, err, sizeof err);
    if (!m) {
        if (strncmp(err, "shader:", 7) == 0 || strncmp(err, "field:", 6) == 0)
            fprintf(stderr, "%s\n", err);
        else log_error(ctx ? "solver" : "refsolver", "%s", err);
        goto done;
    }
    if (morph_set_state(m, &ck->state) < 0) {
        log_error("checkpoint", "cannot load the state of %s into the %s backend", c->resume_path,
                  morph_backend_name(backend));
        goto done;
    }
    if (window) {
        ViewOptions vo = {.steps_per_frame = c->steps_per_frame,
                          .max_steps = c->steps,
                          .shader_dir = shader_dir,
                          .screenshot = c->screenshot,
                          .keys = c->keys,
                          .view = c->view,
                          .no_hud = c->no_hud, .font = c->font,
                          .record = c->record,
                          .lesson = c->lesson,
                          .fps = c->fps,
                          .color = {c->color[0], c->color[1], c->color[2]}};
        rc = view_run(ctx, m, &vo);
    } else {
        /* as a fresh run's: --density-scale, else neither end clipped */
        float scale = c->density_scale > 0.0f
                          ? c->density_scale
                          : export_auto_scale(ck->state.start, ck->state.target,
                                              (size_t)ck->w * ck->h, ck->state.mass_match);
        RunInfo info = {.resume = ck, .renderer = renderer};
        Fields fs = {.n = 1, .m = {m}};
        fs.show[0] = (ExportField){.name = c->field_name ? c->field_name : "smoke",
                                   .rgb = {c->color[0], c->color[1], c->color[2]}};
        rc = run_headless(&fs, c, scale, &info);
    }
done:
    morph_free(m);
    checkpoint_free(ck);
    glctx_destroy(ctx);
    return rc;
}

_Static_assert(SCENE_FIELDS_MAX <= MORPH_MAX_FIELDS && MORPH_MAX_FIELDS <= EXPORT_FIELDS_MAX,
               "every field a scene may hold runs and exports");

/* A smoke field's images, loaded onto the grid, and how the frames show it. */
typedef struct {
    const SceneField *sf;      /* its scene field; NULL: the command line's images */
    const char *start_path;
    const char *key_path[CONFIG_KEYS_MAX];
    int nkeys;
    ImageLoadOpts load;        /* its channel and invert, the run's --raw and --max-image-mb */
    Image *start, *keys[CONFIG_KEYS_MAX], *src[SCENE_SOURCES_MAX];
    char name[40];
    float rgb[3];
} FieldImages;

/* Field i's paths, load options, name and colour: field 0's from c (the
 * command line's, or the scene's through scene_args and scene_apply), the
 * others' from the scene (a field with no channel, invert or color of its
 * own has luma, no invert and white). */
static void field_paths(FieldImages *f, const Config *c, const Scene *scene, int i)
{
    f->sf = scene ? &scene->field[i] : NULL;
    f->load = c->load;
    if (i == 0) {
        f->start_path = c->current_path;
        f->nkeys = c->nkeys > 0 ? c->nkeys : 1;
        f->key_path[0] = c->target_path;
        for (int k = 1; k < f->nkeys; k++) f->key_path[k] = c->key_paths[k];
        snprintf(f->name, sizeof f->name, "%s", c->field_name ? c->field_name : "smoke");
        memcpy(f->rgb, c->color, sizeof f->rgb);
        return;
    }
    const SceneField *sf = f->sf;
    f->start_path = sf->start;
    f->nkeys = sf->nkeys;
    for (int k = 0; k < sf->nkeys; k++) f->key_path[k] = sf->keys[k].target;
    f->load.channel = IMAGE_CHANNEL_LUMA;
    if (sf->channel) image_parse_channel(sf->channel, &f->load.channel); /* checked by scene_parse */
    f->load.invert = sf->invert == 1;
    char buf[16];
    snprintf(f->name, sizeof f->name, "%s", scene_field_name(scene, i, buf, sizeof buf));
    f->rgb[0] = f->rgb[1] = f->rgb[2] = 1.0f;
    if (sf->color) config_parse_color(sf->color, f->rgb);
}

/* Every field's images: loaded, checked and hinted alike (a start with
 * smoke, targets with a shape and smoke), the grid picked from them all
 * (field 0's start sets its aspect), then resampled onto it. Dies with one
 * line on a bad image. */
static void load_fields(FieldImages *fim, int nf, Config *c)
{
    int total = 0;
    for (int i = 0; i < nf; i++) total += 1 + fim[i].nkeys;
    const char **paths = malloc((size_t)total * sizeof *paths);
    Image **loaded = malloc((size_t)total * sizeof *loaded);
    ImageInfo *info = malloc((size_t)total * sizeof *info);
    char (*bare)[PATH_MAX] = malloc((size_t)total * sizeof *bare); /* paths without ":options" */
    ImageLoadOpts *lo = malloc((size_t)total * sizeof *lo);         /* each image's own */
    if (!paths || !loaded || !info || !bare || !lo) die("smokemorph", "out of memory");
    int *same = malloc((size_t)total * sizeof *same); /* the first load of the same file */
    if (!same) die("smokemorph", "out of memory");
    /* the run's memory budget (--max-memory): the images as decoded count
     * first; a file given for several keys is decoded once (issue 21) */
    Budget b;
    budget_init(&b, budget_limit_bytes(c->max_memory_mb));
    int n = 0;
    for (int i = 0; i < nf; i++) {
        FieldImages *f = &fim[i];
        for (int k = 0; k <= f->nkeys; k++, n++) {
            /* "logo.png:invert": an image's own channel and invert */
            const char *spec = k == 0 ? f->start_path : f->key_path[k - 1];
            lo[n] = f->load;
            if (image_spec(spec, bare[n], sizeof bare[n], &lo[n]) < 0)
                die("image", "%s: the path is too long", spec);
            paths[n] = bare[n];
            same[n] = n;
            struct stat sn, sj;
            for (int j = 0; j < n && same[n] == n; j++)
                if (same[j] == j && stat(paths[n], &sn) == 0 && stat(paths[j], &sj) == 0 &&
                    sn.st_dev == sj.st_dev && sn.st_ino == sj.st_ino &&
                    !memcmp(&lo[j], &lo[n], sizeof lo[n]))
                    same[n] = j;
            if (same[n] != n) {
                loaded[n] = loaded[same[n]];
                info[n] = info[same[n]];
                continue;
            }
            loaded[n] = load_image(paths[n], &lo[n], &info[n]);
            budget_add(&b, (unsigned long long)loaded[n]->w * loaded[n]->h * sizeof(float),
                       "the image %s decoded (%dx%d)", paths[n], loaded[n]->w, loaded[n]->h);
            char err[1024];
            if (budget_check(&b, err, sizeof err) < 0) die("smokemorph", "%s", err);
        }
    }
    n = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k <= fim[i].nkeys; k++, n++) hint_image(paths[n], loaded[n], &info[n], &lo[n]);
    n = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k <= fim[i].nkeys; k++, n++)
            if (k > 0) check_target_shape(paths[n], loaded[n]);
    pick_grid(c, n, paths, (const Image *const *)loaded);
    n = 0;
    Image **grid = malloc((size_t)total * sizeof *grid);
    if (!grid) die("smokemorph", "out of memory");
    for (int i = 0; i < nf; i++) {
        FieldImages *f = &fim[i];
        for (int k = 0; k <= f->nkeys; k++, n++) {
            Image *g;
            if (same[n] != n) { /* the same file: a copy of its grid image */
                const Image *o = grid[same[n]];
                if (!(g = image_create(o->w, o->h, 1))) die("smokemorph", "out of memory");
                memcpy(g->px, o->px, (size_t)o->w * o->h * sizeof(float));
            } else {
                g = to_grid(loaded[n], paths[n], c);
            }
            grid[n] = g;
            if (k == 0) f->start = g;
            else f->keys[k - 1] = g;
        }
        if (image_sum(f->start) <= 0.0)
            die("image", "%s is empty (all zero after --channel/--invert): there is no smoke to morph",
                f->start_path);
        for (int k = 0; k < f->nkeys; k++)
            if (image_sum(f->keys[k]) <= 0.0)
                die("image", "%s is empty (all zero after --channel/--invert): nothing to morph to",
                    f->key_path[k]);
        /* a scene's sources: images load like the keys, onto the grid */
        for (int k = 0; f->sf && k < f->sf->nsources; k++) {
            const char *spec = f->sf->sources[k].image;
            if (!spec) continue;
            char path[PATH_MAX];
            ImageLoadOpts slo = f->load;
            if (image_spec(spec, path, sizeof path, &slo) < 0) die("image", "%s: the path is too long", spec);
            ImageInfo si;
            Image *im = load_image(path, &slo, &si);
            hint_image(path, im, &si, &slo);
            f->src[k] = to_grid(im, path, c);
        }
    }
    free(paths);
    free(loaded);
    free(info);
    free(bare);
    free(lo);
    free(same);
    free(grid);
}

static void free_fields(FieldImages *fim, int nf)
{
    for (int i = 0; i < nf; i++) {
        image_free(fim[i].start);
        for (int k = 0; k < fim[i].nkeys; k++) image_free(fim[i].keys[k]);
        for (int k = 0; k < SCENE_SOURCES_MAX; k++) image_free(fim[i].src[k]);
    }
    free(fim);
}

/* Field i's keys into its morph: a scene's keys (their steps, own
 * parameters and moves) and sources, with morph_set_schedule; a command
 * line's sequence (several keys, or one with --key-every) with
 * morph_set_keys; a single key with no step: the plain morph, nothing to
 * set. 0, or -1 with one line in err. */
static int field_schedule(Morph *m, const FieldImages *f, const Config *c, const Scene *scene, int i,
                          char *err, size_t errlen)
{
    const SceneField *sf = f->sf;
    int nkeys = f->nkeys;
    if (sf && sf->keys[0].step > 0) {
        MorphKey mk[SCENE_KEYS_MAX];
        SolverParams kp[SCENE_KEYS_MAX];
        MorphSource ms[SCENE_SOURCES_MAX];
        memset(mk, 0, sizeof mk);
        memset(ms, 0, sizeof ms);
        for (int k = 0; k < nkeys; k++) {
            const SceneKey *K = &sf->keys[k];
            bool own = false;
            kp[k] = c->params; /* the run's, with the key's own for its range */
            float *pv[SCENE_KEY_PARAMS] = {&kp[k].vf, &kp[k].vd, &kp[k].vg, &kp[k].sigma};
            for (int q = 0; q < SCENE_KEY_PARAMS; q++)
                if (K->has[q]) {
                    *pv[q] = K->param[q];
                    own = true;
                }
            mk[k].step = K->step;
            mk[k].target = f->keys[k]->px;
            mk[k].params = own ? &kp[k] : NULL;
            if (K->moves) {
                memcpy(mk[k].move_from, K->move_from, sizeof mk[k].move_from);
                memcpy(mk[k].move_to, K->move_to, sizeof mk[k].move_to);
                mk[k].scale_from = K->scale_from;
                mk[k].scale_to = K->scale_to;
            }
        }
        int nsrc = sf->nsources;
        for (int k = 0; k < nsrc; k++) {
            const SceneSource *S = &sf->sources[k];
            ms[k] = (MorphSource){.image = f->src[k] ? f->src[k]->px : NULL, .cx = S->cx,
                                  .cy = S->cy, .radius = S->radius, .rate = S->rate,
                                  .from = S->from, .to = S->to};
        }
        char why[512];
        if (morph_set_schedule(m, mk, nkeys, nsrc ? ms : NULL, nsrc, why, sizeof why) < 0) {
            if (scene->nfields > 1) snprintf(err, errlen, "scene: %s: fields[%d]: %s", scene->file, i, why);
            else snprintf(err, errlen, "scene: %s: %s", scene->file, why);
            return -1;
        }
    } else if (!sf && (nkeys > 1 || c->key_every_set)) {
        const float *kp[CONFIG_KEYS_MAX];
        for (int k = 0; k < nkeys; k++) kp[k] = f->keys[k]->px;
        if (morph_set_keys(m, kp, nkeys, c->key_every) < 0) {
            snprintf(err, errlen, "out of memory for %d keys of a %dx%d grid", nkeys, c->grid_w,
                     c->grid_h);
            return -1;
        }
    }
    return 0;
}

/* --dump-scene: the run's scene as JSON on stdout (scene.h): the scene with
 * the options given, or a command line's images and options. 0 or 1. */
static int dump_scene(const Config *c, const Scene *scene, int nargs, char **args, const char *argv0)
{
    char err[1024], data[PATH_MAX], p0[PATH_MAX + 32], p1[PATH_MAX + 32];
    Scene *own = NULL;
    if (!scene) {
        const char *start = c->current_path;
        const char *keys[CONFIG_KEYS_MAX];
        int n = c->nkeys;
        for (int k = 0; k < n; k++) keys[k] = c->key_paths[k];
        if (!start) { /* the bundled pair */
            if (find_data_dir(argv0, "targets", DEFAULT_START, data, sizeof data) < 0)
                die("smokemorph", "cannot find the bundled targets (%s); give two images: "
                    "smokemorph CURRENT TARGET", DEFAULT_START);
            snprintf(p0, sizeof p0, "%s/%s", data, DEFAULT_START);
            snprintf(p1, sizeof p1, "%s/%s", data, DEFAULT_TARGET);
            start = p0;
            keys[0] = p1;
            n = 1;
        }
        bool sequence = n > 1 || c->key_every_set;
        if (!(own = scene_from_images(start, keys, n, sequence ? c->key_every : 0)))
            die("smokemorph", "out of memory");
        scene = own;
    }
    int rc = scene_write(stdout, scene, nargs, args, err, sizeof err) < 0 || fflush(stdout) != 0;
    if (rc) log_error("scene", "cannot write the scene to stdout: %s", err);
    scene_free(own);
    return rc;
}

/* --compare / --compare-preset (issue 11): two morphs from the same start,
 * A with the run's parameters and B with the settings changed. In a window,
 * side by side; headless, --steps steps (COMPARE_HEADLESS_STEPS without),
 * --metrics gets one CSV with both runs' columns (compare.h) and --frames
 * (or ./smokemorph-out/ with neither) both densities side by side, A left,
 * every --every steps: DIR/compare_00001.png, ... */
#define COMPARE_HEADLESS_STEPS 600L
static int run_compare(const Config *c, const Image *start, const Image *target, MorphBackend backend,
                       GlCtx *ctx, bool window, const char *shader_dir, float density_scale)
{
    char err[1024];
    CompareSpec cs;
    if ((c->compare ? compare_parse(c->compare, &c->params, &cs, err, sizeof err)
                    : compare_preset(c->compare_preset, &c->params, &cs, err, sizeof err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    Compare *cmp = compare_create(c->grid_w, c->grid_h, &cs, start->px, target->px, c->mass_match, backend,
                                  shader_dir, err, sizeof err);
    if (!cmp) {
        log_error(ctx ? "solver" : "refsolver", "%s", err);
        return 1;
    }
    log_info("compare", "%s | %s (%s backend)", compare_label(cmp, 0), compare_label(cmp, 1),
             morph_backend_name(backend));
    int rc = 1;
    if (window) {
        ViewOptions vo = {.steps_per_frame = c->steps_per_frame,
                          .max_steps = c->steps,
                          .shader_dir = shader_dir,
                          .screenshot = c->screenshot,
                          .keys = c->keys,
                          .view = c->view,
                          .no_hud = c->no_hud, .font = c->font,
                          .record = c->record,
                          .lesson = c->lesson,
                          .fps = c->fps,
                          .color = {c->color[0], c->color[1], c->color[2]},
                          .compare = cmp};
        rc = view_run(ctx, compare_morph(cmp, 0), &vo);
        compare_free(cmp);
        return rc;
    }
    long steps = c->steps > 0 ? c->steps : COMPARE_HEADLESS_STEPS;
    const char *dir = c->frames_dir;
    if (!dir && !c->metrics_path) dir = CONFIG_DEFAULT_OUT_DIR;
    int gw = c->grid_w, gh = c->grid_h, gap = gw / 32 > 2 ? gw / 32 : 2, ow = 2 * gw + gap;
    Metrics *mf = NULL;
    char line[COMPARE_TEXT_MAX];
    Image *im = NULL;
    float *rho = malloc((size_t)ow * gh * sizeof *rho);
    if (!rho || !(im = image_create(ow, gh, 1))) {
        log_error("compare", "out of memory");
        goto done;
    }
    if (c->metrics_path) { /* a temporary file, renamed into place when the run is done */
        compare_header_text(cmp, line, sizeof line);
        if (!(mf = metrics_open_header(c->metrics_path, line, err, sizeof err))) {
            log_error("compare", "%s", err);
            goto done;
        }
    }
    if (dir && make_dir(dir) < 0) {
        log_error("compare", "cannot make %s: %s", dir, strerror(errno));
        goto done;
    }
    float sc = density_scale > 0.0f ? density_scale : 1.0f;
    for (long k = 0, frame = 1; k <= steps; k++) {
        if (k > 0 && compare_step(cmp) < 0) {
            log_error("compare", "a step failed");
            goto done;
        }
        if (k % c->every != 0 && k != steps) continue;
        if (mf && (compare_row_text(cmp, line, sizeof line) < 0 || metrics_line(mf, line) < 0)) {
            log_error("compare", "%s", metrics_error(mf)[0] ? metrics_error(mf) : "cannot read the metrics back");
            goto done;
        }
        if (!dir) continue;
        if (compare_side_by_side(cmp, gap, 0.25f / sc, rho) < 0) goto done;
        for (size_t q = 0; q < (size_t)ow * gh; q++) {
            float v = rho[q] * sc;
            im->px[q] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/compare_%05ld.png", dir, frame++);
        if (image_save_png(path, im, 8, err, sizeof err) < 0) {
            log_error("compare", "%s", err);
            goto done;
        }
    }
    CompareMetrics mt[2];
    if (compare_metrics(cmp, mt) == 0)
        log_info("compare", "step %ld: error %.4f (%s), %.4f (%s)", steps, mt[0].error, compare_label(cmp, 0),
                 mt[1].error, compare_label(cmp, 1));
    rc = 0;
done:
    /* a failed run keeps its complete rows, as a plain run's metrics do */
    if (mf && metrics_close(mf, rc == 0 || metrics_rows(mf) > 0, err, sizeof err) < 0) {
        log_error("compare", "%s", err);
        rc = 1;
    }
    image_free(im);
    free(rho);
    compare_free(cmp);
    return rc;
}

/* Which of a scene's output options the command line gives itself (it
 * overrides the scene's, and the user named it). */
typedef struct {
    bool frames, metrics, video;
} GivenOutputs;

static void note_given_output(void *ctx, const char *name, const char *arg)
{
    GivenOutputs *g = ctx;
    (void)arg;
    if (!strcmp(name, "frames")) g->frames = true;
    if (!strcmp(name, "metrics")) g->metrics = true;
    if (!strcmp(name, "video")) g->video = true;
}

/* A scene writes only inside its own folder (issue 21: scenes are shared
 * and downloaded): its frames, metrics and video (and so the record and
 * checkpoints beside the frames) must resolve there, symlinks, "..", and
 * absolute paths all counted, unless the command line gives the path or
 * --allow-scene-outputs. 0, or -1 with one line in err. */
static int confine_scene_outputs(const Config *c, const char *scene_path, int argc, char **argv,
                                 char *err, size_t errlen)
{
    GivenOutputs g = {0};
    config_each_option(argc, argv, note_given_output, &g);
    char folder[PATH_MAX];
    const char *slash = strrchr(scene_path, '/');
    if (!slash) snprintf(folder, sizeof folder, ".");
    else if (slash == scene_path) snprintf(folder, sizeof folder, "/");
    else snprintf(folder, sizeof folder, "%.*s", (int)(slash - scene_path), scene_path);
    const struct {
        const char *key, *path;
        bool given;
    } out[] = {{"frames", c->frames_dir, g.frames}, {"metrics", c->metrics_path, g.metrics},
               {"video", c->video_path, g.video}};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        if (!out[i].path || out[i].given || guard_inside(out[i].path, folder)) continue;
        char real[PATH_MAX];
        if (guard_resolve(out[i].path, real, sizeof real) < 0) snprintf(real, sizeof real, "%s", out[i].path);
        snprintf(err, errlen, "scene: %.300s: its \"%s\" writes outside the scene's folder (to %.400s); a "
                 "scene writes only into its own folder: give --%s on the command line, or "
                 "--allow-scene-outputs", scene_path, out[i].key, real, out[i].key);
        return -1;
    }
    return 0;
}

/* Before the morph is made: the run's memory (--max-memory) from what it
 * will hold (the images on the grid, the simulation, a checkpoint, a frame)
 * and, on the CPU backend, the time a step may take from the bounds of its
 * parameters (issue 21: no accepted combination makes a step take minutes).
 * 0, or -1 after one line. */
static int check_run(const Config *c, const FieldImages *fim, int nf, MorphBackend backend, bool headless)
{
    char err[1024];
    unsigned long long cells = (unsigned long long)c->grid_w * c->grid_h, images = 0;
    for (int i = 0; i < nf; i++) images += 1 + (unsigned long long)fim[i].nkeys;
    Budget b;
    budget_init(&b, budget_limit_bytes(c->max_memory_mb));
    budget_add(&b, images * cells * sizeof(float), "the images on the %dx%d grid (%llu)", c->grid_w,
               c->grid_h, images);
    /* the solver's fields and scratch (CPU: about 32 floats a cell; a GPU
     * backend's are on the GPU, its read-back buffers here) */
    budget_add(&b, (unsigned long long)nf * cells * (backend == MORPH_CPU ? 32 : 8) * sizeof(float),
               "the simulation (%dx%d, %d smoke field%s)", c->grid_w, c->grid_h, nf, nf > 1 ? "s" : "");
    if (c->checkpoint_every)
        budget_add(&b, (unsigned long long)nf * cells * (METHOD_FIELD_COUNT + 2) * sizeof(float),
                   "the checkpoint's copy of the state");
    if (headless) {
        ExportOptions xo = export_defaults();
        xo.format = c->format;
        xo.out_w = c->out_w;
        xo.out_h = c->out_h;
        xo.nfields = nf;
        xo.velocity = c->exr_velocity;
        xo.strip_rows = c->strip_rows;
        char what[128];
        export_frame_what(&xo, c->grid_w, c->grid_h, what, sizeof what);
        budget_add(&b, export_frame_bytes_for(&xo, c->grid_w, c->grid_h), "%s%s", what,
                   c->out_w ? " (--size)" : "");
    }
    if (budget_check(&b, err, sizeof err) < 0) {
        log_error("smokemorph", "%s", err);
        return -1;
    }
    if (backend != MORPH_CPU) return 0;
    int na, nd;
    double u = budget_cpu_step_units(c->grid_w, c->grid_h, &c->params, &na, &nd);
    if (u > BUDGET_CPU_STEP_UNITS) {
        double secs = u * BUDGET_UNIT_SECONDS_PER_CELL * (double)cells;
        log_error("config", "on the CPU backend a step of these settings may take %s (up to about "
                  "%.0f s at %dx%d): up to %d transport substeps (--dt %g, --umax %g and the grid) and %d of the "
                  "drift (--drift-max %g), %d Jacobi (--jacobi), %d gathering iterations "
                  "(--gather-iters); lower them or run on a GPU backend",
                  secs > 60 ? "minutes" : "seconds", secs, c->grid_w, c->grid_h, na, (double)c->params.dt,
                  (double)c->params.umax, nd, (double)c->params.wmax, c->params.jacobi,
                  method_gather_iters(c->grid_w, c->grid_h, &c->params));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Config c;
    char err[1024];
    /* --scene FILE: its settings are options that come before the command
     * line's, so that an option given on the command line overrides them */
    Scene *scene = NULL;
    char **args = argv;
    int nargs = argc;
    const char *scene_path = config_find_scene(argc, argv);
    if (scene_path) {
        /* time keys at the command line's --dt where it gives one */
        if (!(scene = scene_load_at(scene_path, config_find_dt(argc, argv), err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (scene_args(scene, argc, argv, &nargs, &args) < 0) die("smokemorph", "out of memory");
        guard_note_input(scene_path);
    }
    int r = config_parse(&c, nargs, args, err, sizeof err), rc = -1;
    if (r < 0) {
        fprintf(stderr, "%s\n", err);
        rc = 2;
    } else if (r > 0) {
        rc = 0;
    } else if (scene && scene_apply(scene, &c, err, sizeof err) < 0) {
        /* the scene's images and keys into c; a bad scene is a bad file (1),
         * a clash with the command line bad usage (2) */
        fprintf(stderr, "%s\n", err);
        rc = strncmp(err, "config:", 7) == 0 ? 2 : 1;
    } else if (scene && !c.allow_scene_outputs && !c.dump_scene &&
               confine_scene_outputs(&c, scene_path, argc, argv, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        rc = 1;
    } else if (c.dump_scene) {
        rc = dump_scene(&c, scene, nargs, args, argv[0]);
    } else if ((c.compare || c.compare_preset) &&
               (c.nkeys > 1 || c.key_every_set || scene || c.resume_path || c.checkpoint_every ||
                c.video_path)) {
        fprintf(stderr, "config: %s runs one start and one target side by side: leave out key "
                "sequences, --scene, --resume, --checkpoint-every and --video\n",
                c.compare ? "--compare" : "--compare-preset");
        rc = 2;
    }
    if (rc >= 0) {
        if (args != argv) free(args);
        scene_free(scene);
        return rc;
    }
    log_set_level(c.verbosity == 0 ? LOG_ERROR : (c.verbosity >= 2 ? LOG_DEBUG : LOG_INFO));
    /* --resume: the checkpoint decides the grid, the images and the state */
    Checkpoint resume = {0};
    if (c.resume_path && load_resume(&c, &resume, scene) < 0) return 1;

    /* GL first. A window when a display is there and neither --cpu nor
     * --headless says otherwise; --gl-info reports the path a run with the
     * same options takes, so it decides the same way. */
    bool cpu = c.backend == BACKEND_CPU;
    bool display = !c.headless && glctx_display_available();
    bool window = !cpu && display;
    /* a scene of several fields: the window steps and shows them all (view.h) */
    if (window && c.checkpoint_every) {
        fprintf(stderr, "smokemorph: --checkpoint-every writes checkpoints in a headless run: "
                "add --headless\n");
        checkpoint_free(&resume);
        return 2;
    }
    char renderer[256] = "cpu";
    if (!window && !c.gl_info && c.window_only) {
        fprintf(stderr, "config: --%s needs a window, and this run is headless (%s); leave it out\n",
                c.window_only, c.headless ? "--headless" : cpu ? "--cpu: the window needs a GPU backend"
                                                 : "no display");
        return 2;
    }
    if (cpu && display && !c.gl_info)
        log_info("smokemorph", "--cpu runs without a window (the window needs a GPU backend): "
                 "headless, writing frames; leave out --cpu for the window");
    GlCtx *ctx = NULL;
    MorphBackend backend = MORPH_CPU;
    if (c.gl_info || !cpu) {
        ctx = window ? glctx_create_window(&argc, argv, c.win_w, c.win_h, "smokemorph", err, sizeof err)
                     : glctx_create_headless(err, sizeof err);
        if (!ctx) {
            /* one line: glctx's reason, and for a run the ways around it
             * (a display's GLX can be older than the GPU's EGL, as over ssh -X) */
            const char *hint = c.gl_info ? ""
                               : window ? "; --headless runs without a window, --cpu without a GPU"
                                        : "; --cpu runs the morph without a GPU";
            fprintf(stderr, "%s%s\n", err, hint);
            return 1;
        }
        int picked = pick_backend(&c, ctx, window, &backend, err, sizeof err);
        if (c.gl_info) { /* the diagnosis first, then what a run would say */
            printf("path:     %s\nrenderer: %s\nversion:  %s\nmax texture size: %d\nbackend:  %s%s\n",
                   glctx_path(ctx), glctx_renderer(ctx), glctx_version(ctx),
                   glctx_max_texture_size(ctx), picked < 0 ? "none" : morph_backend_name(backend),
                   picked < 0 ? "" : c.backend == BACKEND_AUTO ? " (auto)" : "");
        }
        if (picked < 0) {
            fprintf(stderr, "%s\n", err);
            glctx_destroy(ctx);
            return 1;
        }
        if (c.gl_info) {
            glctx_destroy(ctx);
            return 0;
        }
        if (backend != MORPH_CPU) snprintf(renderer, sizeof renderer, "%s", glctx_renderer(ctx));
        if (backend == MORPH_CPU) { /* auto chose the CPU: no GL needed after all */
            glctx_destroy(ctx);
            ctx = NULL;
        }
    }

    /* a sequence's checkpoint: the images from the command line, as below */
    if (c.resume_path && resume.state.nkeys == 0 && !scene)
        return run_resumed(&c, &resume, ctx, backend, window, renderer, argv[0]);

    /* images: every field's start, keys and sources (field 0's from c: a
     * command line's, or the scene's through scene_apply) */
    int nf = scene ? scene->nfields : 1;
    char data[PATH_MAX], p0[PATH_MAX + 32], p1[PATH_MAX + 32];
    if (!c.current_path) {
        if (find_data_dir(argv[0], "targets", DEFAULT_START, data, sizeof data) < 0)
            die("smokemorph", "cannot find the bundled targets (%s); give two images: "
                "smokemorph CURRENT TARGET", DEFAULT_START);
        snprintf(p0, sizeof p0, "%s/%s", data, DEFAULT_START);
        snprintf(p1, sizeof p1, "%s/%s", data, DEFAULT_TARGET);
        c.current_path = p0;
        c.target_path = p1;
        ImageLoadOpts plain = {0};
        c.load = plain; /* the bundled targets are plain PNGs */
    }
    FieldImages *fim = calloc((size_t)nf, sizeof *fim);
    if (!fim) die("smokemorph", "out of memory");
    for (int i = 0; i < nf; i++) field_paths(&fim[i], &c, scene, i);
    load_fields(fim, nf, &c);
    /* how density becomes alpha: --density-scale, or no field's key clipped
     * (neither end of each field's morph) */
    float density_scale = c.density_scale;
    bool first_scale = true;
    for (int i = 0; i < nf && !(c.density_scale > 0.0f); i++)
        for (int k = 0; k < fim[i].nkeys; k++) {
            float sk = export_auto_scale(fim[i].start->px, fim[i].keys[k]->px,
                                         (size_t)c.grid_w * c.grid_h, c.mass_match);
            if (first_scale || sk < density_scale) density_scale = sk;
            first_scale = false;
        }

    if (check_run(&c, fim, nf, backend, !window) < 0) {
        free_fields(fim, nf);
        glctx_destroy(ctx);
        if (args != argv) free(args);
        scene_free(scene);
        checkpoint_free(&resume);
        return 1;
    }
    char shader_dir[PATH_MAX];
    if (ctx && shader_find_dir(c.shader_dir, argv[0], shader_dir, sizeof shader_dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (c.compare || c.compare_preset) { /* two settings side by side (issue 11) */
        rc = run_compare(&c, fim[0].start, fim[0].keys[0], backend, ctx, window, ctx ? shader_dir : NULL,
                         density_scale);
        free_fields(fim, nf);
        glctx_destroy(ctx);
        if (args != argv) free(args);
        scene_free(scene);
        return rc;
    }
    Fields fs = {.n = nf};
    bool made = true;
    for (int i = 0; i < nf && made; i++) {
        Morph *m = morph_create_opts(c.grid_w, c.grid_h, &c.params, &c.solver, fim[i].start->px,
                                     fim[i].keys[0]->px, c.mass_match, backend, ctx ? shader_dir : NULL,
                                     err, sizeof err);
        fs.m[i] = m;
        made = m && field_schedule(m, &fim[i], &c, scene, i, err, sizeof err) == 0;
        snprintf(fs.name[i], sizeof fs.name[i], "%s", fim[i].name);
        fs.show[i].name = fs.name[i];
        memcpy(fs.show[i].rgb, fim[i].rgb, sizeof fs.show[i].rgb);
    }
    const char *why = made && nf > 1 ? morph_fields_check(fs.m, nf) : NULL;
    if (why) {
        snprintf(err, sizeof err, "scene: %s: its %d fields cannot share one velocity: %s", scene->file,
                 nf, why);
        made = false;
    }
    const float *starts[MORPH_MAX_FIELDS];
    for (int i = 0; i < nf; i++) starts[i] = fim[i].start->px;
    if (made && c.resume_path &&
        (scene ? resume_scene(&fs, &c, &resume, scene, starts)
               : resume_sequence(fs.m[0], &c, &resume, fim[0].start->px)) < 0) {
        for (int i = 0; i < nf; i++) morph_free(fs.m[i]);
        free_fields(fim, nf);
        checkpoint_free(&resume);
        glctx_destroy(ctx);
        return 1;
    }
    free_fields(fim, nf);
    if (!made) {
        /* shader and field errors carry their own tag */
        if (strncmp(err, "shader:", 7) == 0 || strncmp(err, "field:", 6) == 0 ||
            strncmp(err, "scene:", 6) == 0)
            fprintf(stderr, "%s\n", err);
        else log_error(ctx ? "solver" : "refsolver", "%s", err);
        for (int i = 0; i < nf; i++) morph_free(fs.m[i]);
        glctx_destroy(ctx);
        if (args != argv) free(args);
        scene_free(scene);
        return 1;
    }
    Morph *m = fs.m[0];

    if (window) {
        ViewOptions vo = {.steps_per_frame = c.steps_per_frame,
                          .max_steps = c.steps,
                          .shader_dir = shader_dir,
                          .screenshot = c.screenshot,
                          .keys = c.keys,
                          .view = c.view,
                          .no_hud = c.no_hud, .font = c.font,
                          .record = c.record,
                          .lesson = c.lesson,
                          .fps = c.fps,
                          .color = {c.color[0], c.color[1], c.color[2]}};
        if (nf > 1) { /* every field, composited as the frames are (export.h) */
            vo.fields = fs.m;
            vo.nfields = nf;
            vo.density_scale = density_scale;
            for (int i = 0; i < nf; i++) {
                memcpy(vo.field_color[i], fs.show[i].rgb, sizeof vo.field_color[i]);
                vo.field_name[i] = fs.name[i];
            }
        }
        rc = view_run(ctx, m, &vo);
    } else {
        RunInfo info = {.resume = c.resume_path ? &resume : NULL, .renderer = renderer,
                        .scene = scene != NULL};
        rc = run_headless(&fs, &c, density_scale, &info);
    }
    checkpoint_free(&resume);
    for (int i = 0; i < nf; i++) morph_free(fs.m[i]);
    glctx_destroy(ctx);
    if (args != argv) free(args);
    scene_free(scene);
    return rc;
}
