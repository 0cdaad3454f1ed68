/* smokemorph: parse and dispatch. The options (config, a scene's first),
 * the GL context and backend, the images and the smoke fields, then one run
 * mode: --dump-scene (mode_dump), --gl-info, --compare (mode_compare), a
 * checkpoint's run (resume), the window (mode_window) or a headless run
 * (mode_headless). Each stage returns RUN_ON to go on, or the exit status;
 * everything a run holds is in one Run, freed once (run_free). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "config.h"
#include "export.h"
#include "glctx.h"
#include "guard.h"
#include "inputs.h"
#include "lesson.h"
#include "log.h"
#include "mode_compare.h"
#include "mode_dump.h"
#include "mode_headless.h"
#include "mode_window.h"
#include "morph.h"
#include "resume.h"
#include "scene.h"
#include "shader.h"

/* The exit statuses (--help's "Exit status"), and a stage's "go on". */
enum { RUN_DONE = 0, RUN_FAILED = 1, RUN_USAGE = 2, RUN_ON = -1 };

/* Everything a run holds; run_free undoes it all, whatever the stage. */
typedef struct {
    Config c;
    int argc;
    char **argv;
    int nargs;
    char **args; /* the scene's settings as options, then argv's (argv without a scene) */
    Scene *scene;
    const char *scene_path;
    Checkpoint resume;
    GlCtx *ctx;
    MorphBackend backend;
    bool window;
    char renderer[256];
    char shader_dir[PATH_MAX];
    char bundled[2][PATH_MAX + 32]; /* the bundled pair's paths, with no images given */
    FieldImages *fim;
    int nf;
    float density_scale;
    Fields fs;
    Lesson *lesson; /* --lesson's, read by run_parse */
} Run;

static void run_free(Run *r)
{
    inputs_free_fields(&r->fs);
    if (r->fim) inputs_free(r->fim, r->nf);
    checkpoint_free(&r->resume);
    glctx_destroy(r->ctx);
    if (r->args != r->argv) free(r->args);
    scene_free(r->scene);
    lesson_free(r->lesson);
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

/* The options: a scene's settings (--scene FILE) as options before the
 * command line's, which override them; the scene's images into c; what may
 * not go together. --dump-scene runs here. */
static int run_parse(Run *r)
{
    char err[1024];
    Config *c = &r->c;
    r->args = r->argv;
    r->nargs = r->argc;
    r->scene_path = config_find_scene(r->argc, r->argv);
    if (r->scene_path) {
        /* time keys at the command line's --dt where it gives one */
        if (!(r->scene = scene_load_at(r->scene_path, config_find_dt(r->argc, r->argv), err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            return RUN_FAILED;
        }
        if (scene_args(r->scene, r->argc, r->argv, &r->nargs, &r->args) < 0) die("smokemorph", "out of memory");
        guard_note_input(r->scene_path);
    }
    int parsed = config_parse(c, r->nargs, r->args, err, sizeof err);
    if (parsed != 0) {
        if (parsed < 0) fprintf(stderr, "%s\n", err);
        return parsed < 0 ? RUN_USAGE : RUN_DONE;
    }
    int applied = r->scene ? scene_apply(r->scene, c, err, sizeof err) : 0;
    if (applied < 0) { /* a bad scene is a bad file, a clash with the command line bad usage */
        fprintf(stderr, "%s\n", err);
        return applied == SCENE_CLASH ? RUN_USAGE : RUN_FAILED;
    }
    if (r->scene && !c->allow_scene_outputs && !c->dump_scene &&
        inputs_confine_scene_outputs(c, r->scene_path, r->argc, r->argv, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return RUN_FAILED;
    }
    if (c->dump_scene) return mode_dump_scene(c, r->scene, r->nargs, r->args, r->argv[0]);
    if ((c->compare || c->compare_preset) &&
        (c->nkeys > 1 || c->key_every_set || r->scene || c->resume_path || c->checkpoint_every ||
         c->video_path)) {
        fprintf(stderr, "config: %s runs one start and one target side by side: leave out key "
                "sequences, --scene, --resume, --checkpoint-every and --video\n",
                c->compare ? "--compare" : "--compare-preset");
        return RUN_USAGE;
    }
    if ((c->compare || c->compare_preset) && c->lesson) {
        fprintf(stderr, "config: --lesson runs one morph (a step may compare two: \"compare\"): leave out %s\n",
                c->compare ? "--compare" : "--compare-preset");
        return RUN_USAGE;
    }
    log_set_level(c->verbosity == 0 ? LOG_ERROR : (c->verbosity >= 2 ? LOG_DEBUG : LOG_INFO));
    /* --resume: the checkpoint decides the grid, the images and the state */
    if (c->resume_path && resume_load(c, &r->resume, r->scene) < 0) return RUN_FAILED;
    /* the lesson read and checked over the run's parameters before any window */
    if (c->lesson && !(r->lesson = lesson_load(c->lesson, &c->params, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return RUN_FAILED;
    }
    c->lesson_ready = r->lesson;
    return RUN_ON;
}

/* GL first. A window when a display is there and neither --cpu nor
 * --headless says otherwise; --gl-info reports the path a run with the same
 * options takes, so it decides the same way, and runs here. */
static int run_open_gl(Run *r)
{
    char err[1024];
    const Config *c = &r->c;
    bool cpu = c->backend == BACKEND_CPU;
    bool display = !c->headless && glctx_display_available();
    r->window = !cpu && display;
    snprintf(r->renderer, sizeof r->renderer, "cpu");
    if (r->window && c->checkpoint_every) {
        fprintf(stderr, "smokemorph: --checkpoint-every writes checkpoints in a headless run: "
                "add --headless\n");
        return RUN_USAGE;
    }
    if (!r->window && !c->gl_info && c->window_only) {
        fprintf(stderr, "config: --%s needs a window, and this run is headless (%s); leave it out\n",
                c->window_only, c->headless ? "--headless" : cpu ? "--cpu: the window needs a GPU backend"
                                                  : "no display");
        return RUN_USAGE;
    }
    if (cpu && display && !c->gl_info)
        log_info("smokemorph", "--cpu runs without a window (the window needs a GPU backend): "
                 "headless, writing frames; leave out --cpu for the window");
    r->backend = MORPH_CPU;
    if (!c->gl_info && cpu) return RUN_ON;
    r->ctx = r->window ? glctx_create_window(&r->argc, r->argv, c->win_w, c->win_h, "smokemorph", err, sizeof err)
                       : glctx_create_headless(err, sizeof err);
    if (!r->ctx) {
        /* one line: glctx's reason, and for a run the ways around it (a
         * display's GLX can be older than the GPU's EGL, as over ssh -X) */
        const char *hint = c->gl_info ? ""
                           : r->window ? "; --headless runs without a window, --cpu without a GPU"
                                       : "; --cpu runs the morph without a GPU";
        fprintf(stderr, "%s%s\n", err, hint);
        return RUN_FAILED;
    }
    int picked = pick_backend(c, r->ctx, r->window, &r->backend, err, sizeof err);
    if (c->gl_info) { /* the diagnosis first, then what a run would say */
        GlCtx *x = r->ctx;
        printf("path:     %s\nrenderer: %s\nversion:  %s\nmax texture size: %d\nbackend:  %s%s\n",
               glctx_path(x), glctx_renderer(x), glctx_version(x), glctx_max_texture_size(x),
               picked < 0 ? "none" : morph_backend_name(r->backend),
               picked < 0 ? "" : c->backend == BACKEND_AUTO ? " (auto)" : "");
    }
    if (picked < 0) fprintf(stderr, "%s\n", err);
    if (picked < 0 || c->gl_info) return picked < 0 ? RUN_FAILED : RUN_DONE;
    if (r->backend != MORPH_CPU) snprintf(r->renderer, sizeof r->renderer, "%s", glctx_renderer(r->ctx));
    else { /* auto chose the CPU: no GL needed after all */
        glctx_destroy(r->ctx);
        r->ctx = NULL;
    }
    return RUN_ON;
}

/* The shaders' folder, where a GPU backend runs (else r->shader_dir stays
 * empty and the morphs get NULL). */
static int run_find_shaders(Run *r)
{
    char err[1024];
    if (r->ctx && shader_find_dir(r->c.shader_dir, r->argv[0], r->shader_dir, sizeof r->shader_dir, err,
                                  sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return RUN_FAILED;
    }
    return RUN_ON;
}

/* The images: every field's start, keys and sources (field 0's from c: a
 * command line's, or the scene's through scene_apply), onto the grid; how
 * density becomes alpha: --density-scale, or no field's key clipped
 * (neither end of each field's morph); the run's memory and time checked. */
static int run_inputs(Run *r)
{
    Config *c = &r->c;
    r->nf = r->scene ? r->scene->nfields : 1;
    if (!c->current_path) {
        inputs_bundled(r->argv[0], r->bundled[0], r->bundled[1], sizeof r->bundled[0]);
        c->current_path = r->bundled[0];
        c->target_path = r->bundled[1];
        ImageLoadOpts plain = {0};
        c->load = plain; /* the bundled targets are plain PNGs */
    }
    if (!(r->fim = calloc((size_t)r->nf, sizeof *r->fim))) die("smokemorph", "out of memory");
    for (int i = 0; i < r->nf; i++) inputs_paths(&r->fim[i], c, r->scene, i);
    inputs_load(r->fim, r->nf, c);
    r->density_scale = c->density_scale;
    bool first = true;
    for (int i = 0; i < r->nf && !(c->density_scale > 0.0f); i++)
        for (int k = 0; k < r->fim[i].nkeys; k++) {
            float sk = export_auto_scale(r->fim[i].start->px, r->fim[i].keys[k]->px,
                                         (size_t)c->grid_w * c->grid_h, c->mass_match);
            if (first || sk < r->density_scale) r->density_scale = sk;
            first = false;
        }
    return inputs_check_run(c, r->fim, r->nf, r->backend, !r->window) < 0 ? RUN_FAILED : RUN_ON;
}

/* The smoke fields' morphs, and a sequence's or a scene's checkpoint's
 * state given to them. */
static int run_fields(Run *r)
{
    const char *dir = r->ctx ? r->shader_dir : NULL;
    if (inputs_make_fields(&r->fs, r->fim, r->nf, &r->c, r->scene, r->backend, dir) < 0) return RUN_FAILED;
    const float *starts[MORPH_MAX_FIELDS];
    for (int i = 0; i < r->nf; i++) starts[i] = r->fim[i].start->px;
    if (r->c.resume_path &&
        (r->scene ? resume_scene(&r->fs, &r->c, &r->resume, r->scene, starts)
                  : resume_sequence(r->fs.m[0], &r->c, &r->resume, r->fim[0].start->px)) < 0)
        return RUN_FAILED;
    inputs_free(r->fim, r->nf);
    r->fim = NULL;
    return RUN_ON;
}

/* The run mode. */
static int run_dispatch(Run *r)
{
    int rc;
    const char *dir = r->ctx ? r->shader_dir : NULL;
    /* a plain run's checkpoint: its images, not the command line's */
    if (r->c.resume_path && r->resume.state.nkeys == 0 && !r->scene) {
        if ((rc = run_find_shaders(r)) != RUN_ON) return rc;
        return resume_run(&r->c, &r->resume, r->ctx, r->backend, r->window, r->renderer, dir);
    }
    if ((rc = run_inputs(r)) != RUN_ON || (rc = run_find_shaders(r)) != RUN_ON) return rc;
    if (r->c.compare || r->c.compare_preset) /* two settings side by side (issue 11) */
        return mode_compare_run(&r->c, r->fim[0].start, r->fim[0].keys[0], r->backend, r->ctx, r->window,
                                dir, r->density_scale);
    if ((rc = run_fields(r)) != RUN_ON) return rc;
    if (r->window)
        return mode_window_run(r->ctx, &r->c, r->fs.m[0], r->shader_dir, &r->fs, r->density_scale, NULL);
    HeadlessInfo info = {.resume = r->c.resume_path ? &r->resume : NULL, .renderer = r->renderer,
                         .scene = r->scene != NULL};
    return mode_headless_run(&r->fs, &r->c, r->density_scale, &info);
}

int main(int argc, char **argv)
{
    static Run r; /* large (paths): not on the stack */
    r.argc = argc;
    r.argv = argv;
    int rc = run_parse(&r);
    if (rc == RUN_ON) rc = run_open_gl(&r);
    if (rc == RUN_ON) rc = run_dispatch(&r);
    run_free(&r);
    return rc;
}
