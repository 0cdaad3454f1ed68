/* resume: a run from a checkpoint (--resume); see resume.h. */
#include "resume.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "guard.h"
#include "log.h"
#include "mode_headless.h"
#include "mode_window.h"
#include "shader.h"

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
int resume_sequence(Morph *m, const Config *c, const Checkpoint *ck, const float *start)
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
 * (field i's state to field i; resume_load checked the count). 0, or -1
 * after one line. */
int resume_scene(const Fields *fs, const Config *c, Checkpoint *ck, const Scene *scene,
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
int resume_load(Config *c, Checkpoint *ck, const Scene *scene)
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
        /* "auto" given: the checkpoint's value is what auto timed its trip */
        if (mine == theirs || (in->autov && (float)mine == SETTING_AUTO)) continue;
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
    if (!scene) { /* a scene's fields are made with its own, then given the state's */
        /* the state's pace and gathering start are its key's, timed for its
         * trip: the morph (its later keys, the way back) times its own
         * from the values given (0: automatic), as the uninterrupted run did */
        float pace = c->params.pace, gather_from = c->params.gather_from, arrive = c->params.arrive;
        c->params = p;
        c->params.pace = pace, c->params.gather_from = gather_from;
        /* --arrive auto given: the morph times its trips again (the same
         * arrival for the checkpoint's, its images being the run's) */
        if (config_given(c, "arrive") && arrive == SETTING_AUTO) c->params.arrive = arrive;
    }
    c->mass_match = ck->state.mass_match;
    ck->state.params = p;
    return 0;
fail:
    checkpoint_free(ck);
    return -1;
}

/* A run from a checkpoint: the morph made from its images, then given its
 * state; headless (frames from its step on) or in a window. shader_dir:
 * NULL on the CPU. */
int resume_run(Config *c, Checkpoint *ck, GlCtx *ctx, MorphBackend backend, bool window,
               const char *renderer, const char *shader_dir)
{
    char err[1024];
    int rc = 1;
    Morph *m = NULL;
    if (strcmp(ck->backend, morph_backend_name(backend)) != 0)
        log_info("smokemorph", "%s was written by the %s backend, this run uses %s: the frames "
                 "will not be bit-identical to an uninterrupted run's", c->resume_path, ck->backend,
                 morph_backend_name(backend));
    m = morph_create_opts(ck->w, ck->h, &c->params, &c->solver, ck->state.start, ck->state.target,
                          ck->state.mass_match, backend, shader_dir, err, sizeof err);
    if (!m) {
        inputs_say_morph_error(err, backend != MORPH_CPU);
        goto done;
    }
    if (morph_set_state(m, &ck->state) < 0) {
        log_error("checkpoint", "cannot load the state of %s into the %s backend", c->resume_path,
                  morph_backend_name(backend));
        goto done;
    }
    if (window) {
        rc = mode_window_run(ctx, c, m, shader_dir, NULL, 0.0f, NULL);
    } else {
        /* as a fresh run's: --density-scale, else neither end clipped */
        float scale = c->density_scale > 0.0f
                          ? c->density_scale
                          : export_auto_scale(ck->state.start, ck->state.target,
                                              (size_t)ck->w * ck->h, ck->state.mass_match);
        HeadlessInfo info = {.resume = ck, .renderer = renderer};
        Fields fs = {.n = 1, .m = {m}};
        fs.show[0] = (ExportField){.name = c->field_name ? c->field_name : "smoke",
                                   .rgb = {c->color[0], c->color[1], c->color[2]}};
        rc = mode_headless_run(&fs, c, scale, &info);
    }
done:
    morph_free(m);
    checkpoint_free(ck);
    return rc;
}
