/* inputs: a run's images and smoke fields; see inputs.h. GL-free. */
#include "inputs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "guard.h"
#include "image.h"
#include "log.h"

int inputs_data_dir(const char *argv0, const char *sub, const char *probe, char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
    } else {
        snprintf(exe, sizeof exe, "%s", argv0 ? argv0 : ".");
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

void inputs_bundled(const char *argv0, char *start, char *target, size_t n)
{
    char data[PATH_MAX];
    if (inputs_data_dir(argv0, "targets", DEFAULT_START, data, sizeof data) < 0)
        die("smokemorph", "cannot find the bundled targets (%s); give two images: "
            "smokemorph CURRENT TARGET", DEFAULT_START);
    snprintf(start, n, "%s/%s", data, DEFAULT_START);
    snprintf(target, n, "%s/%s", data, DEFAULT_TARGET);
}


_Static_assert(SCENE_FIELDS_MAX <= MORPH_MAX_FIELDS && MORPH_MAX_FIELDS <= EXPORT_FIELDS_MAX,
               "every field a scene may hold runs and exports");

/* Field i's paths, load options, name and colour: field 0's from c (the
 * command line's, or the scene's through scene_args and scene_apply), the
 * others' from the scene (a field with no channel, invert or color of its
 * own has luma, no invert and white). */
void inputs_paths(FieldImages *f, const Config *c, const Scene *scene, int i)
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
/* inputs_load's images in its order (each field's start, then its keys):
 * each one's path without ":options", its own load options, the image as
 * decoded (a file given twice with the same options: once, same[n] the
 * first), its info, and its image on the grid. */
typedef struct {
    int total;
    const char **paths;
    char (*bare)[PATH_MAX];
    ImageLoadOpts *lo;
    Image **loaded, **grid;
    ImageInfo *info;
    int *same;
} Loads;

static void loads_alloc(Loads *L, int total)
{
    L->total = total;
    L->paths = malloc((size_t)total * sizeof *L->paths);
    L->bare = malloc((size_t)total * sizeof *L->bare);
    L->lo = malloc((size_t)total * sizeof *L->lo);
    L->loaded = malloc((size_t)total * sizeof *L->loaded);
    L->grid = malloc((size_t)total * sizeof *L->grid);
    L->info = malloc((size_t)total * sizeof *L->info);
    L->same = malloc((size_t)total * sizeof *L->same);
    if (!L->paths || !L->bare || !L->lo || !L->loaded || !L->grid || !L->info || !L->same)
        die("smokemorph", "out of memory");
}

static void loads_free(Loads *L)
{
    free(L->paths);
    free(L->bare);
    free(L->lo);
    free(L->loaded);
    free(L->grid);
    free(L->info);
    free(L->same);
}

/* Whether two loads of a file give the same image: each option (not
 * memcmp: the struct has padding). */
static bool same_load(const ImageLoadOpts *a, const ImageLoadOpts *b)
{
    return a->channel == b->channel && a->invert == b->invert && a->raw == b->raw && a->raw_w == b->raw_w &&
           a->raw_h == b->raw_h && a->raw_type == b->raw_type && a->max_mb == b->max_mb;
}

/* Image n (spec: "logo.png:invert", an image's own channel and invert)
 * decoded, or found the same as an earlier one; the run's memory budget
 * (--max-memory): the images as decoded count first, a file given for
 * several keys decoded once (issue 21). */
static void load_one(Loads *L, int n, const char *spec, const ImageLoadOpts *field_lo, Budget *b)
{
    L->lo[n] = *field_lo;
    if (image_spec(spec, L->bare[n], sizeof L->bare[n], &L->lo[n]) < 0)
        die("image", "%s: the path is too long", spec);
    L->paths[n] = L->bare[n];
    L->same[n] = n;
    struct stat sn, sj;
    for (int j = 0; j < n && L->same[n] == n; j++)
        if (L->same[j] == j && stat(L->paths[n], &sn) == 0 && stat(L->paths[j], &sj) == 0 &&
            sn.st_dev == sj.st_dev && sn.st_ino == sj.st_ino && same_load(&L->lo[j], &L->lo[n]))
            L->same[n] = j;
    if (L->same[n] != n) {
        L->loaded[n] = L->loaded[L->same[n]];
        L->info[n] = L->info[L->same[n]];
        return;
    }
    L->loaded[n] = load_image(L->paths[n], &L->lo[n], &L->info[n]);
    budget_add(b, (unsigned long long)L->loaded[n]->w * L->loaded[n]->h * sizeof(float),
               "the image %s decoded (%dx%d)", L->paths[n], L->loaded[n]->w, L->loaded[n]->h);
    char err[1024];
    if (budget_check(b, err, sizeof err) < 0) die("smokemorph", "%s", err);
}

/* Field f's images put on the grid from n on (a file loaded twice: a copy
 * of the first's), and checked to hold smoke. */
static void fields_onto_grid(Loads *L, FieldImages *f, int n, const Config *c)
{
    for (int k = 0; k <= f->nkeys; k++, n++) {
        Image *g;
        if (L->same[n] != n) { /* the same file: a copy of its grid image */
            const Image *o = L->grid[L->same[n]];
            if (!(g = image_create(o->w, o->h, 1))) die("smokemorph", "out of memory");
            memcpy(g->px, o->px, (size_t)o->w * o->h * sizeof(float));
        } else {
            g = to_grid(L->loaded[n], L->paths[n], c);
        }
        L->grid[n] = g;
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
}

/* A scene field's sources: images load like the keys, onto the grid. */
static void load_sources(FieldImages *f, const Config *c)
{
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

void inputs_load(FieldImages *fim, int nf, Config *c)
{
    int total = 0;
    for (int i = 0; i < nf; i++) total += 1 + fim[i].nkeys;
    Loads L;
    loads_alloc(&L, total);
    Budget b;
    budget_init(&b, budget_limit_bytes(c->max_memory_mb));
    int n = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k <= fim[i].nkeys; k++, n++)
            load_one(&L, n, k == 0 ? fim[i].start_path : fim[i].key_path[k - 1], &fim[i].load, &b);
    for (n = 0; n < total; n++) /* a file given twice with the same options: hinted once */
        if (L.same[n] == n) hint_image(L.paths[n], L.loaded[n], &L.info[n], &L.lo[n]);
    n = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k <= fim[i].nkeys; k++, n++)
            if (k > 0) check_target_shape(L.paths[n], L.loaded[n]);
    pick_grid(c, n, L.paths, (const Image *const *)L.loaded);
    n = 0;
    for (int i = 0; i < nf; i++) {
        fields_onto_grid(&L, &fim[i], n, c);
        n += 1 + fim[i].nkeys;
        load_sources(&fim[i], c);
    }
    loads_free(&L);
}

void inputs_free(FieldImages *fim, int nf)
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
int inputs_schedule(Morph *m, const FieldImages *f, const Config *c, const Scene *scene, int i,
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
int inputs_confine_scene_outputs(const Config *c, const char *scene_path, int argc, char **argv,
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
int inputs_check_run(const Config *c, const FieldImages *fim, int nf, MorphBackend backend, bool headless)
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
    int na;
    double u = budget_cpu_step_units(c->grid_w, c->grid_h, &c->params, &na);
    if (u > BUDGET_CPU_STEP_UNITS) {
        double secs = u * BUDGET_UNIT_SECONDS_PER_CELL * (double)cells;
        log_error("config", "on the CPU backend a step of these settings may take %s (up to about "
                  "%.0f s at %dx%d): up to %d transport substeps (--dt %g, --umax %g and the grid), %d Jacobi (--jacobi), %d gathering iterations "
                  "(--gather-iters); lower them or run on a GPU backend",
                  secs > 60 ? "minutes" : "seconds", secs, c->grid_w, c->grid_h, na, (double)c->params.dt,
                  (double)c->params.umax, c->params.jacobi,
                  method_gather_iters(c->grid_w, c->grid_h, &c->params));
        return -1;
    }
    return 0;
}

void inputs_say_morph_error(const char *err, bool gpu)
{
    /* shader, field and scene errors carry their own tag */
    if (strncmp(err, "shader:", 7) == 0 || strncmp(err, "field:", 6) == 0 || strncmp(err, "scene:", 6) == 0)
        fprintf(stderr, "%s\n", err);
    else log_error(gpu ? "solver" : "refsolver", "%s", err);
}

int inputs_make_fields(Fields *fs, const FieldImages *fim, int nf, const Config *c, const Scene *scene,
                       MorphBackend backend, const char *shader_dir)
{
    char err[1024];
    bool made = true;
    fs->n = nf;
    for (int i = 0; i < nf && made; i++) {
        Morph *m = morph_create_opts(c->grid_w, c->grid_h, &c->params, &c->solver, fim[i].start->px,
                                     fim[i].keys[0]->px, c->mass_match, backend, shader_dir, err,
                                     sizeof err);
        fs->m[i] = m;
        made = m && inputs_schedule(m, &fim[i], c, scene, i, err, sizeof err) == 0;
        snprintf(fs->name[i], sizeof fs->name[i], "%s", fim[i].name);
        fs->show[i].name = fs->name[i];
        memcpy(fs->show[i].rgb, fim[i].rgb, sizeof fs->show[i].rgb);
    }
    const char *why = made && nf > 1 ? morph_fields_check(fs->m, nf) : NULL;
    if (why) {
        snprintf(err, sizeof err, "scene: %s: its %d fields cannot share one velocity: %s", scene->file,
                 nf, why);
        made = false;
    }
    if (!made) inputs_say_morph_error(err, backend != MORPH_CPU);
    return made ? 0 : -1;
}

void inputs_free_fields(Fields *fs)
{
    for (int i = 0; i < fs->n; i++) morph_free(fs->m[i]);
    fs->n = 0;
}
