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

#include "checkpoint.h"
#include "config.h"
#include "export.h"
#include "glctx.h"
#include "image.h"
#include "log.h"
#include "fidelity.h"
#include "morph.h"
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

/* Load one density image at its own size. */
static Image *load_image(const char *path, const Config *c, ImageInfo *info)
{
    char err[1024];
    Image *im = image_load_info(path, &c->load, info, err, sizeof err);
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

/* Input hints (issue 10): one line each, naming the option that fixes what
 * looks like a mistake. The density is the image as loaded (after --channel
 * and --invert). */
static void hint_image(const char *path, const Image *im, const ImageInfo *info, const Config *c)
{
    if (info->transparent && c->load.channel != IMAGE_CHANNEL_A)
        log_info("image", "%s has transparency, which the density (--channel %s) ignores; "
                 "--channel a takes the smoke from the alpha", path,
                 c->load.channel == IMAGE_CHANNEL_LUMA ? "luma" : "r|g|b");
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
                 "the smoke; %s", path, c->load.invert ? "without --invert the shape is the smoke"
                                                       : "--invert makes the dark shape the smoke");
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

typedef struct {
    Exporter *frames;
    Metrics *metrics;
    Sidecar *sidecar;
    float *rho;
    long last_step; /* the last step written, -1 before the first */
    float *vx, *vy; /* --exr-velocity */
} Outputs;

/* The number of the frame written at step k: step 0 is --frame-start, then
 * one every --every steps (a last step between two gets the next number). */
static long frame_number(const Config *c, long k)
{
    return c->frame_start + (k + c->every - 1) / c->every;
}

/* Write what is due at step k: a frame (unless --frame-range leaves it out)
 * and a metrics row, from one read-back (the frame, the error, the mass
 * and, for metrics, max|∇·u|). */
static int write_outputs(Outputs *o, Morph *m, const Config *c, long k, double *err_out)
{
    char err[512];
    double mass, error, max_div = 0.0;
    long number = frame_number(c, k);
    bool frame = o->frames && (c->range_last < 0 || number >= c->range_first);
    bool div = o->metrics || o->sidecar;
    if (morph_observe(m, frame ? o->rho : NULL, &mass, &error, div ? &max_div : NULL) < 0 ||
        (frame && o->vx && morph_read_velocity(m, o->vx, o->vy) < 0)) {
        log_error("export", "cannot read the fields back from the GPU");
        return -1;
    }
    *err_out = error;
    if (frame && export_write(o->frames, number, o->rho, o->vx, o->vy, morph_width(m),
                              morph_height(m), err, sizeof err) < 0) {
        log_error("export", "%s", err);
        return -1;
    }
    if (o->metrics && metrics_row(o->metrics, morph_step_count(m), morph_time(m), error, mass,
                                  max_div, morph_key(m)) < 0) {
        log_error("export", "%s", metrics_error(o->metrics));
        return -1;
    }
    if (o->sidecar) {
        char path[4200] = "";
        bool named = frame && export_dir(o->frames) &&
                     export_frame_path(o->frames, number, path, sizeof path) == 0;
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (sidecar_row(o->sidecar, morph_step_count(m), morph_time(m), error, mass, max_div,
                        named ? (int)number : 0, named ? base : NULL) < 0) {
            log_error("smokemorph", "out of memory");
            return -1;
        }
    }
    (void)c;
    o->last_step = morph_step_count(m);
    return 0;
}

/* What a headless run knows beyond the Config: where it resumed from, and
 * what goes into the sidecar. */
typedef struct {
    const Checkpoint *resume; /* NULL: a fresh run */
    const char *renderer;     /* the GL renderer string, or "cpu" */
} RunInfo;

/* The checkpoint of step k into dir: the morph's state, the backend and the
 * run's settle watch. The path written into path. */
static int write_checkpoint(Morph *m, Checkpoint *ck, const Config *c, const char *dir, long k,
                            const FidelitySettle *settle, char *path, size_t pathlen)
{
    char err[PATH_MAX + 256];
    snprintf(path, pathlen, "%s/checkpoint_%06ld.smc", dir, k);
    if (morph_get_state(m, &ck->state) < 0) {
        log_error("checkpoint", "cannot read the state back from the GPU for %s", path);
        return -1;
    }
    snprintf(ck->backend, sizeof ck->backend, "%s", morph_backend_name(morph_backend(m)));
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
static ExportOptions export_options(const Config *c, const char *dir, float density_scale,
                                    int grid_w, int grid_h)
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
    memcpy(x.background, c->background, sizeof x.background);
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

static int run_headless(Morph *m, const Config *c, float density_scale, const RunInfo *info)
{
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
    /* a sequence (issue 9) with no --steps runs every key to its end */
    bool sequence = morph_key_every(m) > 0;
    bool until_settled = c->steps == 0 && !range && !sequence;
    long steps = range ? (c->range_last - c->frame_start) * (long)c->every
                 : until_settled ? CONFIG_HEADLESS_MAX_STEPS
                 : c->steps == 0 ? morph_key_count(m) * morph_key_every(m) : c->steps;
    FidelitySettle settle = {0};
    if (res) {
        settle.started = res->settle_started;
        settle.best = res->settle_best;
        settle.best_step = res->settle_best_step;
    }
    int ending = FIDELITY_RUNNING;
    const char *dir = c->frames_dir;
    if (!dir && !c->metrics_path && !c->screenshot && !c->video_path) dir = CONFIG_DEFAULT_OUT_DIR;
    const char *ckdir = c->checkpoint_dir ? c->checkpoint_dir : dir ? dir : ".";
    size_t cells = (size_t)morph_width(m) * morph_height(m);
    if ((c->checkpoint_every && checkpoint_alloc(&ck, morph_width(m), morph_height(m)) < 0) ||
        !(o.rho = malloc(cells * sizeof(float))) ||
        (c->exr_velocity && (!(o.vx = malloc(cells * sizeof(float))) ||
                             !(o.vy = malloc(cells * sizeof(float)))))) {
        log_error("smokemorph", "out of memory");
        free(o.rho);
        free(o.vx);
        return 1;
    }
    /* metrics first: it creates nothing under its name until the end, while
     * export_open makes the frames directory, which a failed run must not leave */
    if (c->metrics_path && !(o.metrics = metrics_open(c->metrics_path, err, sizeof err))) {
        log_error("export", "%s", err);
        goto done;
    }
    if (c->sidecar_path && sidecar_probe(c->sidecar_path, err, sizeof err) < 0) {
        log_error("export", "%s", err);
        goto done;
    }
    ExportOptions xo = export_options(c, dir, density_scale, morph_width(m), morph_height(m));
    if ((dir || c->video_path) && !(o.frames = export_create(&xo, err, sizeof err))) {
        log_error("export", "%s", err);
        goto done;
    }
    if (c->checkpoint_every && make_dir(ckdir) < 0) {
        log_error("checkpoint", "cannot write checkpoints to %s: %s", ckdir, strerror(errno));
        goto done;
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
        if (!(o.sidecar = sidecar_create(sp, &sr))) {
            log_error("smokemorph", "out of memory");
            goto done;
        }
    }
    /* the start line: the frames in animators' terms (how many, at what
     * rate, how long) and where they go */
    char timing[160] = "", where[4400] = "";
    if (o.frames) {
        long nf = range ? c->range_last - c->range_first + 1
                        : steps / c->every + 1 + (steps % c->every != 0);
        if (until_settled)
            snprintf(timing, sizeof timing, ": %ld frames at %g fps, %.2f s", nf, c->fps,
                     (double)nf / c->fps);
        else
            snprintf(timing, sizeof timing, ", %ld frames at %g fps (%.2f s)", nf, c->fps,
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
    if (sequence)
        log_info("smokemorph", "%d keys, %ld steps each: key k is the target of steps "
                 "(k-1)*%ld+1..k*%ld", morph_key_count(m), morph_key_every(m), morph_key_every(m),
                 morph_key_every(m));
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
    catch_signals();
    double error = 0.0;
    /* the checkpoint's step is written again when it is an output step (the
     * same bytes as the earlier run's): a resumed run starts with it */
    if ((!res || first % c->every == 0 || first == steps) && write_outputs(&o, m, c, first, &error) < 0)
        goto done;
    for (long k = first + 1; k <= steps; k++) {
        prog.frames = o.frames ? export_count(o.frames) : 0;
        bool before = g_signal != 0;
        int stepped = before ? 0 : morph_step(m);
        if (g_signal) { /* before the step, or within it: its state is not written */
            progress_end(&prog);
            /* a farm's preemption: a signal between steps leaves the state of
             * step k - 1, to resume from; one within a step leaves part of a
             * step, and the last periodic checkpoint is the one to resume from */
            if (before && c->checkpoint_every && ckstep != k - 1 &&
                write_checkpoint(m, &ck, c, ckdir, k - 1, &settle, ckpath, sizeof ckpath) == 0) {
                ckstep = k - 1;
                if (o.sidecar) sidecar_checkpoint(o.sidecar, ckstep, ckpath);
            }
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
        bool observe = k % c->every == 0 || k == steps;
        if (until_settled && !observe && k % 10 == 0) { /* watch the error, no output */
            double mass;
            if (morph_observe(m, NULL, &mass, &error, NULL) < 0) {
                log_error("export", "cannot read the fields back from the GPU");
                goto done;
            }
            ending = fidelity_settle_update(&settle, k, error);
            if (ending != FIDELITY_RUNNING) observe = true; /* the last frame */
        }
        if (observe) {
            if (write_outputs(&o, m, c, k, &error) < 0) goto done;
            if (!isfinite(error)) {
                log_error("solver", "the simulation diverged (NaN) at step %ld; try a smaller --dt", k);
                goto done;
            }
            if (until_settled && ending == FIDELITY_RUNNING)
                ending = fidelity_settle_update(&settle, k, error);
        }
        if (c->checkpoint_every && k % c->checkpoint_every == 0 && ending == FIDELITY_RUNNING) {
            if (write_checkpoint(m, &ck, c, ckdir, k, &settle, ckpath, sizeof ckpath) < 0) goto done;
            ckstep = k;
            snprintf(err, sizeof err, "out of memory");
            if (o.sidecar && (sidecar_checkpoint(o.sidecar, k, ckpath) < 0 ||
                              sidecar_write(o.sidecar, "running", 0, k, err, sizeof err) < 0)) {
                log_error("export", "%s", err);
                goto done;
            }
        }
        prog.frames = o.frames ? export_count(o.frames) : 0;
        progress_update(&prog, k, error);
        if (ending != FIDELITY_RUNNING) {
            steps = k;
            break;
        }
    }
    progress_end(&prog);
    if (until_settled && c->verbosity > 0) {
        if (ending == FIDELITY_ARRIVED_AT)
            fprintf(stderr, "smokemorph: the morph arrived: error %.1f%% at step %ld\n",
                    100.0 * error, steps);
        else if (ending == FIDELITY_SETTLED_AT)
            fprintf(stderr, "smokemorph: the morph settled at error %.1f%% by step %ld "
                    "(no 1%% gain in %ld steps)\n", 100.0 * error, steps, FIDELITY_SETTLE_STEPS);
        else
            fprintf(stderr, "smokemorph: stopped after %ld steps at error %.1f%%; "
                    "--steps N runs longer\n", steps, 100.0 * error);
    }
    if (c->screenshot) { /* headless: the last frame, as --frames writes it */
        if (morph_observe(m, o.rho, NULL, NULL, NULL) < 0) {
            log_error("export", "cannot read the fields back from the GPU");
            goto done;
        }
        if (export_png(c->screenshot, o.rho, morph_width(m), morph_height(m), c->out_w, c->out_h,
                       c->color, err, sizeof err) < 0) {
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
        if (sidecar_write(o.sidecar, status, rc, morph_step_count(m), err, sizeof err) < 0 && rc == 0) {
            log_error("export", "%s", err);
            rc = 1;
        }
    }
    sidecar_free(o.sidecar);
    checkpoint_free(&ck);
    export_close(o.frames);
    free(o.rho);
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

/* --resume FILE: read the checkpoint and make the Config agree with it. The
 * checkpoint decides the grid (a different --grid is an error), the images
 * and the parameters; a simulation option given on the command line
 * overrides its parameter, and says so (the frames then differ from an
 * uninterrupted run's). --steps and --every default to the checkpoint's
 * run's. 0, or -1 after one line on stderr. */
static int load_resume(Config *c, Checkpoint *ck)
{
    char err[PATH_MAX + 512];
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
    if (!config_given(c, "steps")) c->steps = ck->run_steps;
    if (!config_given(c, "every")) c->every = ck->run_every;
    if (c->steps > 0 && c->steps < ck->state.steps) {
        log_error("checkpoint", "cannot resume from %s: it is at step %ld, after --steps %ld",
                  c->resume_path, ck->state.steps, c->steps);
        goto fail;
    }
    SolverParams p = ck->state.params;
    for (int k = 0; k < METHOD_PARAM_COUNT; k++) {
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
    c->params = p;
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
    m = morph_create(ck->w, ck->h, &c->params, ck->state.start, ck->state.target,
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
                          .color = {c->color[0], c->color[1], c->color[2]}};
        rc = view_run(ctx, m, &vo);
    } else {
        /* as a fresh run's: --density-scale, else neither end clipped */
        float scale = c->density_scale > 0.0f
                          ? c->density_scale
                          : export_auto_scale(ck->state.start, ck->state.target,
                                              (size_t)ck->w * ck->h, ck->state.mass_match);
        RunInfo info = {.resume = ck, .renderer = renderer};
        rc = run_headless(m, c, scale, &info);
    }
done:
    morph_free(m);
    checkpoint_free(ck);
    glctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    Config c;
    char err[1024];
    int r = config_parse(&c, argc, argv, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (r > 0) return 0;
    log_set_level(c.verbosity == 0 ? LOG_ERROR : (c.verbosity >= 2 ? LOG_DEBUG : LOG_INFO));

    /* a checkpoint holds one target: key sequences are not checkpointed yet */
    if ((c.checkpoint_every || c.resume_path) && (c.nkeys > 1 || c.key_every_set)) {
        fprintf(stderr, "config: %s does not take a key sequence yet (several TARGETs or "
                "--key-every): a checkpoint holds one target\n",
                c.resume_path ? "--resume" : "--checkpoint-every");
        return 2;
    }
    /* --resume: the checkpoint decides the grid, the images and the state */
    Checkpoint resume = {0};
    if (c.resume_path && load_resume(&c, &resume) < 0) return 1;

    /* GL first. A window when a display is there and neither --cpu nor
     * --headless says otherwise; --gl-info reports the path a run with the
     * same options takes, so it decides the same way. */
    bool cpu = c.backend == BACKEND_CPU;
    bool display = !c.headless && glctx_display_available();
    bool window = !cpu && display;
    if (window && c.checkpoint_every) {
        fprintf(stderr, "smokemorph: --checkpoint-every writes checkpoints in a headless run: "
                "add --headless\n");
        checkpoint_free(&resume);
        return 2;
    }
    char renderer[256] = "cpu";
    if (!window && !c.gl_info && c.window_only) {
        fprintf(stderr, "config: %s needs a window, and this run is headless (%s); leave it out\n",
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

    if (c.resume_path) return run_resumed(&c, &resume, ctx, backend, window, renderer, argv[0]);

    /* images */
    char data[PATH_MAX], p0[PATH_MAX + 32], p1[PATH_MAX + 32];
    const char *start_path = c.current_path, *target_path = c.target_path;
    if (!start_path) {
        if (find_data_dir(argv[0], "targets", DEFAULT_START, data, sizeof data) < 0)
            die("smokemorph", "cannot find the bundled targets (%s); give two images: "
                "smokemorph CURRENT TARGET", DEFAULT_START);
        snprintf(p0, sizeof p0, "%s/%s", data, DEFAULT_START);
        snprintf(p1, sizeof p1, "%s/%s", data, DEFAULT_TARGET);
        start_path = p0;
        target_path = p1;
        ImageLoadOpts plain = {0};
        c.load = plain; /* the bundled targets are plain PNGs */
    }
    /* CURRENT and every TARGET (a sequence's keys, issue 9) load, are
     * checked and hinted alike; paths[0] and loaded[0] are CURRENT */
    int nkeys = c.nkeys > 0 ? c.nkeys : 1;
    ImageInfo info[CONFIG_KEYS_MAX + 1];
    const char *paths[CONFIG_KEYS_MAX + 1] = {start_path, target_path};
    Image *loaded[CONFIG_KEYS_MAX + 1], *keys[CONFIG_KEYS_MAX];
    for (int k = 1; k < nkeys; k++) paths[k + 1] = c.key_paths[k];
    for (int k = 0; k <= nkeys; k++) loaded[k] = load_image(paths[k], &c, &info[k]);
    for (int k = 0; k <= nkeys; k++) hint_image(paths[k], loaded[k], &info[k], &c);
    for (int k = 1; k <= nkeys; k++) check_target_shape(paths[k], loaded[k]);
    pick_grid(&c, nkeys + 1, paths, (const Image *const *)loaded);
    Image *start = to_grid(loaded[0], start_path, &c);
    for (int k = 0; k < nkeys; k++) keys[k] = to_grid(loaded[k + 1], paths[k + 1], &c);
    Image *target = keys[0];
    if (image_sum(start) <= 0.0)
        die("image", "%s is empty (all zero after --channel/--invert): there is no smoke to morph",
            start_path);
    for (int k = 0; k < nkeys; k++)
        if (image_sum(keys[k]) <= 0.0)
            die("image", "%s is empty (all zero after --channel/--invert): nothing to morph to",
                paths[k + 1]);
    /* how density becomes alpha: --density-scale, or neither end clipped
     * (of a sequence, no key clipped) */
    float density_scale = c.density_scale;
    for (int k = 0; k < nkeys && !(c.density_scale > 0.0f); k++) {
        float sk = export_auto_scale(start->px, keys[k]->px, (size_t)c.grid_w * c.grid_h, c.mass_match);
        if (k == 0 || sk < density_scale) density_scale = sk;
    }

    char shader_dir[PATH_MAX];
    if (ctx && shader_find_dir(c.shader_dir, argv[0], shader_dir, sizeof shader_dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    Morph *m = morph_create(c.grid_w, c.grid_h, &c.params, start->px, target->px, c.mass_match,
                            backend, ctx ? shader_dir : NULL, err, sizeof err);
    /* a sequence: several keys, or one with --key-every */
    bool sequence = nkeys > 1 || c.key_every_set;
    if (m && sequence) {
        const float *kp[CONFIG_KEYS_MAX];
        for (int k = 0; k < nkeys; k++) kp[k] = keys[k]->px;
        if (morph_set_keys(m, kp, nkeys, c.key_every) < 0) {
            snprintf(err, sizeof err, "out of memory for %d keys of a %dx%d grid", nkeys, c.grid_w,
                     c.grid_h);
            morph_free(m);
            m = NULL;
        }
    }
    image_free(start);
    for (int k = 0; k < nkeys; k++) image_free(keys[k]);
    if (!m) {
        /* shader and field errors carry their own tag */
        if (strncmp(err, "shader:", 7) == 0 || strncmp(err, "field:", 6) == 0)
            fprintf(stderr, "%s\n", err);
        else log_error(ctx ? "solver" : "refsolver", "%s", err);
        glctx_destroy(ctx);
        return 1;
    }

    int rc;
    if (window) {
        ViewOptions vo = {.steps_per_frame = c.steps_per_frame,
                          .max_steps = c.steps,
                          .shader_dir = shader_dir,
                          .screenshot = c.screenshot,
                          .keys = c.keys,
                          .color = {c.color[0], c.color[1], c.color[2]}};
        rc = view_run(ctx, m, &vo);
    } else {
        RunInfo info = {.resume = NULL, .renderer = renderer};
        rc = run_headless(m, &c, density_scale, &info);
    }
    morph_free(m);
    glctx_destroy(ctx);
    return rc;
}
