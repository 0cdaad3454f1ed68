/* export: frames, metrics and progress; see export.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "exr.h"
#include "image.h"
#include "pool.h"

extern char **environ;

struct Exporter {
    ExportOptions o;
    char *dir, *prefix, *suffix, *field; /* owned copies */
    /* the fields: one (o.field, o.rgb) or o.fields[0..nf-1]; names owned */
    int nf;
    char *names[EXPORT_FIELDS_MAX];
    float rgb[EXPORT_FIELDS_MAX][3], lin[EXPORT_FIELDS_MAX][3]; /* sRGB, and decoded */
    int count;
    long first, last;
    /* the video: ffmpeg's pid, the pipe to its stdin, its stderr in a file */
    pid_t pid;
    FILE *pipe;
    FILE *log;
    char *video, *video_tmp;
    unsigned char *vbuf; /* raw video rows, vbuf_px pixels */
    size_t vbuf_px;
    int vw, vh;          /* the video's frame size (the first frame's) */
    long vframes;        /* frames piped */
    int fw, fh;          /* the last frame's size */
    /* the writers (o.threads > 0): frames handed over (submitted), each
     * encoded on a worker, then committed in order (renamed, piped to the
     * video, counted); mu guards what follows */
    Pool *pool;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long submitted;       /* frames handed over */
    long next_number;     /* the number after the last handed over */
    long committed;       /* frames past their ordered step, written or not */
    int in_flight;        /* handed over, not yet committed */
    int reserved;         /* room taken by export_frame_alloc, not yet handed over */
    size_t flight_bytes;  /* their memory (frame_bytes each) */
    size_t budget;        /* at most this much in flight (one frame always) */
    int max_flight;       /* and at most this many */
    bool failed, cancel;
    char why[4400];       /* the first failure */
    double t_convert, t_encode, t_commit; /* seconds spent (all threads), for the summary */
    /* planes blocks given back by committed frames, for the next ones (no
     * fresh pages to fault in a frame): at most SPARE_BLOCKS, of spare_bytes */
    float *spare[4];
    int nspare;
    size_t spare_bytes;
};

/* A frame on its way: copies of its planes (owned when handed over), then
 * the encoded file under its temporary name. */
typedef struct {
    Exporter *x;
    long seq, number;
    int w, h;
    const float *rho[EXPORT_FIELDS_MAX];
    const float *vx, *vy;
    float *own;          /* the copies, one block (NULL: borrowed) */
    size_t own_bytes;
    size_t bytes;        /* what export_frame_bytes counted */
    char temp[4300];     /* the encoded file; "" when none */
    float *al, *col;     /* kept for the video */
    bool piped;          /* the video rows went down the pipe already (strips) */
    int ow, oh;
    int rc;
    double t_convert;    /* frame_encode's seconds before the file */
    char err[4400];
} Job;

ExportOptions export_defaults(void)
{
    ExportOptions o;
    memset(&o, 0, sizeof o);
    o.prefix = "frame_";
    o.digits = 5;
    o.format = IMAGE_FORMAT_PNG8;
    o.frame_start = 1;
    o.rgb[0] = o.rgb[1] = o.rgb[2] = 1.0f;
    o.density_scale = 1.0f;
    o.field = "smoke";
    o.fps = 24.0;
    o.frame_time = 1.0;
    o.png_compression = EXPORT_PNG_COMPRESSION_DEFAULT;
    return o;
}

/* mkdir -p */
static int make_dirs(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf) {
        snprintf(err, errlen, "cannot create %s: path too long", path);
        return -1;
    }
    strcpy(buf, path);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (c == '\0') break;
        }
    }
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write frames to %s: not a directory", path);
        return -1;
    }
    if (access(path, W_OK) < 0) {
        snprintf(err, errlen, "cannot write frames to %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the video: ffmpeg reading raw frames on its stdin --------------------- */

static bool ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && strcasecmp(s + n - k, end) == 0;
}

/* The last non-empty line ffmpeg wrote to its log, or a fallback. */
static void ffmpeg_last_line(FILE *log, char *buf, size_t n, const char *fallback)
{
    snprintf(buf, n, "%s", fallback);
    if (!log) return;
    char line[256];
    rewind(log);
    while (fgets(line, sizeof line, log)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) snprintf(buf, n, "%s", line);
    }
}

/* Wait for ffmpeg; 0 when it exited 0. */
static int ffmpeg_wait(Exporter *x)
{
    int status = 0;
    pid_t r;
    while ((r = waitpid(x->pid, &status, 0)) < 0 && errno == EINTR) {}
    x->pid = 0;
    return r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Start ffmpeg for a w x h video (at the first frame, when the size is
 * known). The .mp4 gets the frames composited over the background (RGB,
 * 8 bits); the .mov RGBA at 16 bits, alpha as asked. */
static int video_start(Exporter *x, int w, int h, char *err, size_t errlen)
{
    bool mov = ends_with(x->video, ".mov");
    char size[32], fps[32];
    snprintf(size, sizeof size, "%dx%d", w, h);
    snprintf(fps, sizeof fps, "%.6g", x->o.fps);
    const char *mp4_args[] = {"-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264",
                              "-pix_fmt", "yuv420p", "-crf", "18", "-colorspace", "bt709",
                              "-color_primaries", "bt709", "-color_trc", "iec61966-2-1",
                              "-movflags", "+faststart", "-f", "mp4", NULL};
    const char *mov_args[] = {"-c:v", "prores_ks", "-profile:v", "4444", "-pix_fmt", "yuva444p10le",
                              "-vendor", "apl0", "-colorspace", "bt709", "-color_primaries",
                              "bt709", "-color_trc", "iec61966-2-1", "-f", "mov", NULL};
    const char *argv[64];
    int n = 0;
    const char *head[] = {"ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                          "-f", "rawvideo", "-pix_fmt", mov ? "rgba64le" : "rgb24", "-s", size,
                          "-framerate", fps, "-i", "pipe:0", NULL};
    for (int k = 0; head[k]; k++) argv[n++] = head[k];
    for (const char **a = mov ? mov_args : mp4_args; *a; a++) argv[n++] = *a;
    argv[n++] = x->video_tmp;
    argv[n] = NULL;

    int fds[2] = {-1, -1}, devnull = -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    bool fa_ok = false, at_ok = false;
    int rc = -1;
    if (!(x->log = tmpfile()) || pipe(fds) < 0 || (devnull = open("/dev/null", O_WRONLY)) < 0) {
        snprintf(err, errlen, "cannot make %s: %s", x->video, strerror(errno));
        goto done;
    }
    /* our end of the pipe must not stay open in ffmpeg, or it never sees EOF */
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    if (posix_spawn_file_actions_init(&fa) != 0) goto nomem;
    fa_ok = true;
    if (posix_spawnattr_init(&at) != 0) goto nomem;
    at_ok = true;
    if (posix_spawn_file_actions_adddup2(&fa, fds[0], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, devnull, 1) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, fileno(x->log), 2) != 0 ||
        posix_spawn_file_actions_addclose(&fa, fds[1]) != 0)
        goto nomem;
    /* its own process group: Ctrl-C stops us, and we stop it */
    if (posix_spawnattr_setpgroup(&at, 0) != 0 ||
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP) != 0)
        goto nomem;
    int e = posix_spawnp(&x->pid, "ffmpeg", &fa, &at, (char *const *)argv, environ);
    if (e != 0) {
        x->pid = 0;
        if (e == ENOENT)
            snprintf(err, errlen, "cannot make %s: ffmpeg is not installed (not found on PATH); "
                     "install it, or leave out --video and convert the frames later", x->video);
        else
            snprintf(err, errlen, "cannot make %s: cannot run ffmpeg: %s", x->video, strerror(e));
        goto done;
    }
    close(fds[0]);
    fds[0] = -1;
    if (!(x->pipe = fdopen(fds[1], "wb"))) {
        snprintf(err, errlen, "cannot make %s: %s", x->video, strerror(errno));
        goto done;
    }
    fds[1] = -1;
    x->vw = w;
    x->vh = h;
    rc = 0;
    goto done;
nomem:
    snprintf(err, errlen, "cannot make %s: out of memory", x->video);
done:
    if (fa_ok) posix_spawn_file_actions_destroy(&fa);
    if (at_ok) posix_spawnattr_destroy(&at);
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    if (devnull >= 0) close(devnull);
    return rc;
}

/* Stop a video that will not be finished: no file is left. */
static void video_abandon(Exporter *x)
{
    if (x->pipe) fclose(x->pipe);
    x->pipe = NULL;
    if (x->pid > 0) {
        kill(x->pid, SIGTERM);
        ffmpeg_wait(x);
    }
    if (x->video_tmp) unlink(x->video_tmp);
}

static unsigned char byte_of(float v)
{
    v = v * 255.0f + 0.5f;
    return v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (unsigned char)v);
}

static unsigned short word_of(float v)
{
    v = v * 65535.0f + 0.5f;
    return v <= 0.0f ? 0 : (v >= 65535.0f ? 65535 : (unsigned short)v);
}

/* BYTES of raw frame data down the pipe; when ffmpeg has gone, its last
 * message in err and no file left. 0 or -1. */
static int video_put(Exporter *x, const unsigned char *buf, size_t bytes, char *err, size_t errlen)
{
    if (fwrite(buf, 1, bytes, x->pipe) != bytes) {
        char why[400];
        fclose(x->pipe);
        x->pipe = NULL;
        if (x->pid > 0) ffmpeg_wait(x);
        ffmpeg_last_line(x->log, why, sizeof why, strerror(errno));
        snprintf(err, errlen, "cannot make %s: ffmpeg failed: %s", x->video, why);
        unlink(x->video_tmp);
        return -1;
    }
    return 0;
}

/* A frame of ow x oh is about to go down the pipe: ffmpeg started at the
 * first, the size checked. */
static int video_begin(Exporter *x, int ow, int oh, char *err, size_t errlen)
{
    if (!x->pipe && video_start(x, ow, oh, err, errlen) < 0) return -1;
    if (ow != x->vw || oh != x->vh) {
        snprintf(err, errlen, "cannot make %s: frames change size", x->video);
        return -1;
    }
    return 0;
}

/* N pixels of a frame down the pipe (video_begin first; x->vframes counted
 * by the caller at the frame's end): alpha al[k] and the straight sRGB
 * colour col[c * plane + k], k < n. The pipe gets the same bytes however a
 * frame is cut. */
static int video_rows(Exporter *x, const float *al, const float *col, size_t plane, size_t n, char *err,
                      size_t errlen)
{
    bool mov = ends_with(x->video, ".mov");
    bool pre = x->o.alpha == IMAGE_ALPHA_PREMULTIPLIED;
    size_t bpp = mov ? 8 : 3;
    if (n > x->vbuf_px) {
        unsigned char *b = realloc(x->vbuf, n * bpp);
        if (!b) {
            snprintf(err, errlen, "cannot make %s: out of memory", x->video);
            return -1;
        }
        x->vbuf = b;
        x->vbuf_px = n;
    }
    for (size_t k = 0; k < n; k++) {
        float a = al[k];
        if (mov) {
            unsigned char *p = x->vbuf + 8 * k;
            for (int c = 0; c < 4; c++) {
                float v = c == 3 ? a : col[c * plane + k];
                unsigned short s = word_of(c == 3 ? a : (pre ? v * a : v));
                p[2 * c] = (unsigned char)(s & 0xff);
                p[2 * c + 1] = (unsigned char)(s >> 8);
            }
        } else {
            unsigned char *p = x->vbuf + 3 * k;
            for (int c = 0; c < 3; c++)
                p[c] = byte_of(col[c * plane + k] * a + x->o.background[c] * (1.0f - a));
        }
    }
    return video_put(x, x->vbuf, n * bpp, err, errlen);
}

/* Rows of a whole frame converted for the pipe at a time. */
#define VIDEO_ROWS 64

/* One frame (ow x oh: alpha, and the straight sRGB colour, 3 planes) down
 * the pipe, VIDEO_ROWS rows at a time. */
static int video_frame(Exporter *x, const float *al, const float *col, int ow, int oh, char *err,
                       size_t errlen)
{
    if (video_begin(x, ow, oh, err, errlen) < 0) return -1;
    size_t n = (size_t)ow * oh;
    for (int y = 0; y < oh; y += VIDEO_ROWS) {
        size_t at = (size_t)y * ow, m = (size_t)(oh - y < VIDEO_ROWS ? oh - y : VIDEO_ROWS) * ow;
        if (video_rows(x, al + at, col + at, n, m, err, errlen) < 0) return -1;
    }
    x->vframes++;
    return 0;
}

Exporter *export_video_open(const char *path, int w, int h, double fps, char *err, size_t errlen)
{
    if (!path || !ends_with(path, ".mp4") || w < 1 || h < 1 || !(fps > 0.0)) {
        snprintf(err, errlen, "internal error: bad recording options");
        return NULL;
    }
    ExportOptions o = export_defaults();
    o.video = path;
    o.out_w = w;
    o.out_h = h;
    o.fps = fps;
    return export_create(&o, err, errlen);
}

int export_video_rgb(Exporter *x, const unsigned char *rgb, char *err, size_t errlen)
{
    if (!x || !x->pipe) {
        snprintf(err, errlen, "cannot make %s: the video is closed", x && x->video ? x->video : "the video");
        return -1;
    }
    if (video_put(x, rgb, (size_t)x->vw * x->vh * 3, err, errlen) < 0) return -1;
    x->vframes++;
    return 0;
}

long export_video_frames(const Exporter *x) { return x ? x->vframes : 0; }

int export_finish(Exporter *x, char *err, size_t errlen)
{
    if (x && export_wait(x, err, errlen) < 0) {
        video_abandon(x);
        return -1;
    }
    if (!x || !x->video || (!x->pipe && x->pid <= 0)) return 0;
    int rc = 0;
    if (x->pipe && fclose(x->pipe) != 0) rc = -1;
    x->pipe = NULL;
    if (x->pid > 0 && ffmpeg_wait(x) < 0) rc = -1;
    if (rc == 0 && rename(x->video_tmp, x->video) < 0) {
        snprintf(err, errlen, "cannot make %s: %s", x->video, strerror(errno));
        unlink(x->video_tmp);
        return -1;
    }
    if (rc < 0) {
        char why[400];
        ffmpeg_last_line(x->log, why, sizeof why, "it exited with an error");
        snprintf(err, errlen, "cannot make %s: ffmpeg failed: %s", x->video, why);
        unlink(x->video_tmp);
    }
    return rc;
}

/* ---- frames ------------------------------------------------------------------ */

static void exporter_free(Exporter *x)
{
    if (!x) return;
    for (int k = 0; k < x->nspare; k++) free(x->spare[k]);
    if (x->pool) {
        pool_free(x->pool); /* every frame committed or dropped by now */
        pthread_cond_destroy(&x->cv);
        pthread_mutex_destroy(&x->mu);
    }
    if (x->log) fclose(x->log);
    free(x->dir);
    free(x->prefix);
    free(x->suffix);
    free(x->field);
    for (int i = 0; i < EXPORT_FIELDS_MAX; i++) free(x->names[i]);
    free(x->video);
    free(x->video_tmp);
    free(x->vbuf);
    free(x);
}

static float srgb_to_linear(float c);

static char *dup_or(const char *s, const char *fallback)
{
    return strdup(s ? s : fallback);
}

/* export_create's fields: their count, names (unique: each is an EXR channel) and colours.
 * Returns 0, or -1 with err set. */
static int export_fields(Exporter *x, const ExportOptions *o, const ExportOptions *d, char *err,
                         size_t errlen)
{
    x->nf = o->nfields > 1 ? o->nfields : 1;
    if (x->nf > EXPORT_FIELDS_MAX) {
        snprintf(err, errlen, "internal error: %d fields, at most %d", x->nf, EXPORT_FIELDS_MAX);
        return -1;
    }
    for (int i = 0; i < x->nf; i++) {
        const char *name = o->nfields > 1 ? o->fields[i].name : x->field;
        const float *rgb = o->nfields > 1 ? o->fields[i].rgb : o->rgb;
        if (!(x->names[i] = dup_or(name, i == 0 ? d->field : ""))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(x->names[i], x->names[j]) || !x->names[i][0]) {
                snprintf(err, errlen, "internal error: the fields' names ('%s') must be unique and "
                         "not empty", x->names[i]);
                return -1;
            }
        for (int c = 0; c < 3; c++) {
            x->rgb[i][c] = rgb[c];
            x->lin[i][c] = srgb_to_linear(rgb[c]);
        }
    }
    return 0;
}

/* export_create's --video: the names, and ffmpeg tried (or looked for on PATH) before
 * anything is written. Returns 0, or -1 with err set. */
static int export_video_check(Exporter *x, const ExportOptions *o, char *err, size_t errlen)
{
    size_t n = strlen(o->video) + 32;
    if (!(x->video = strdup(o->video)) || !(x->video_tmp = malloc(n))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(x->video_tmp, n, "%s.tmp.%ld", o->video, (long)getpid());
    x->o.video = x->video;
    /* a dead ffmpeg must be an error, not a SIGPIPE that kills the run */
    signal(SIGPIPE, SIG_IGN);
    /* ffmpeg must be there before anything is written: try it now */
    if (o->out_w > 0 && o->out_h > 0) {
        if (video_start(x, o->out_w, o->out_h, err, errlen) < 0) return -1;
    } else {
        /* the size comes with the first frame: ask PATH now */
        const char *path = getenv("PATH");
        bool found = false;
        char buf[4096];
        for (const char *p = path ? path : ""; !found && *p;) {
            size_t len = strcspn(p, ":");
            snprintf(buf, sizeof buf, "%.*s/ffmpeg", (int)len, len ? p : ".");
            found = access(buf, X_OK) == 0;
            p += len + (p[len] == ':');
        }
        if (!found) {
            snprintf(err, errlen, "cannot make %s: ffmpeg is not installed (not found on "
                     "PATH); install it, or leave out --video and convert the frames later",
                     o->video);
            return -1;
        }
    }
    return 0;
}

Exporter *export_create(const ExportOptions *o, char *err, size_t errlen)
{
    ExportOptions d = export_defaults();
    bool exr = o->format == IMAGE_FORMAT_EXR;
    if (o->digits < 0 || o->digits > 9 || o->frame_start < 0 || !(o->density_scale >= 0.0f) ||
        !(o->fps >= 0.0) || !(o->frame_time >= 0.0)) {
        snprintf(err, errlen, "internal error: bad export options");
        return NULL;
    }
    if (o->video && !ends_with(o->video, ".mp4") && !ends_with(o->video, ".mov")) {
        snprintf(err, errlen, "cannot make %s: a video name ends in .mp4 or .mov", o->video);
        return NULL;
    }
    Exporter *x = calloc(1, sizeof *x);
    if (!x) goto oom;
    x->o = *o;
    if (!x->o.digits) x->o.digits = d.digits;
    if (!(x->o.density_scale > 0.0f)) x->o.density_scale = d.density_scale;
    if (!(x->o.fps > 0.0)) x->o.fps = d.fps;
    if (!(x->o.frame_time > 0.0)) x->o.frame_time = d.frame_time;
    if (!(x->prefix = dup_or(o->prefix, d.prefix)) ||
        !(x->suffix = dup_or(o->suffix, exr ? ".exr" : ".png")) ||
        !(x->field = dup_or(o->field, d.field)) || (o->dir && !(x->dir = strdup(o->dir))))
        goto oom;
    x->o.dir = x->dir;
    x->o.prefix = x->prefix;
    x->o.suffix = x->suffix;
    x->o.field = x->field;
    if (export_fields(x, o, &d, err, errlen) < 0) goto fail;
    x->first = x->last = -1;
    if (o->video && export_video_check(x, o, err, errlen) < 0) goto fail;
    if (x->dir && make_dirs(x->dir, err, errlen) < 0) goto fail;
    if (o->threads > 0) {
        if (!(x->pool = pool_create(o->threads, err, errlen))) goto fail;
        pthread_mutex_init(&x->mu, NULL);
        pthread_cond_init(&x->cv, NULL);
        x->budget = o->max_flight_bytes ? o->max_flight_bytes : EXPORT_FLIGHT_BYTES_DEFAULT;
        /* more frames than twice the workers only wait in the queue */
        x->max_flight = 2 * o->threads;
    }
    return x;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    if (x) video_abandon(x);
    exporter_free(x);
    return NULL;
}

Exporter *export_open(const char *dir, int out_w, int out_h, const float rgb[3], char *err,
                      size_t errlen)
{
    ExportOptions o = export_defaults();
    o.dir = dir;
    o.out_w = out_w;
    o.out_h = out_h;
    memcpy(o.rgb, rgb, sizeof o.rgb);
    return export_create(&o, err, errlen);
}

int export_frame_path(const Exporter *x, long number, char *buf, size_t n)
{
    if (!x->dir) return -1;
    int k = snprintf(buf, n, "%s/%s%0*ld%s", x->dir, x->prefix, x->o.digits, number, x->suffix);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* sRGB-encoded value -> linear light */
static float srgb_to_linear(float c)
{
    return c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f);
}

/* linear light -> sRGB-encoded value */
static float linear_to_srgb(float c)
{
    return c <= 0.0031308f ? c * 12.92f : 1.055f * powf(c, 1.0f / 2.4f) - 0.055f;
}

/* The frame's alpha and colour from the fields' densities (export.h, "What
 * a frame holds"): al[n], and the straight colour as sRGB (srgb, 3 planes)
 * and in linear light (lin, 3 planes). A pixel where at most one field has
 * smoke takes that field's alpha and colour exactly (one field: the frame
 * of a one-field run, bit for bit); else A = 1 - prod(1 - a_i) and the
 * colour the alpha-weighted mean of the fields' colours in linear light. */
static void composite(const Exporter *x, const float *const *rho, size_t n, float *al, float *srgb,
                      float *lin)
{
    float s = x->o.density_scale;
    for (size_t k = 0; k < n; k++) {
        float a[EXPORT_FIELDS_MAX], wsum = 0.0f, acc[3] = {0.0f, 0.0f, 0.0f};
        int count = 0, only = 0;
        double t = 1.0;
        for (int i = 0; i < x->nf; i++) {
            float v = rho[i][k] * s;
            a[i] = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f; /* NaN -> 0 */
            if (!(a[i] > 0.0f)) continue;
            t *= 1.0 - (double)a[i];
            wsum += a[i];
            for (int c = 0; c < 3; c++) acc[c] += a[i] * x->lin[i][c];
            count++;
            only = i;
        }
        if (count <= 1) {
            al[k] = a[only];
            for (int c = 0; c < 3; c++) {
                srgb[c * n + k] = x->rgb[only][c];
                lin[c * n + k] = x->lin[only][c];
            }
            continue;
        }
        al[k] = (float)(1.0 - t);
        for (int c = 0; c < 3; c++) {
            float l = acc[c] / wsum;
            lin[c * n + k] = l;
            srgb[c * n + k] = linear_to_srgb(l);
        }
    }
}

/* A PNG's RGBA samples of n pixels (out: 4 n floats) from the alpha al[k]
 * and the straight colour col[c * plane + k] (NULL: field 0's everywhere),
 * premultiplied when asked. */
static void png_pixels(const Exporter *x, const float *al, const float *col, size_t plane, size_t n,
                       float *out)
{
    bool pre = x->o.alpha == IMAGE_ALPHA_PREMULTIPLIED;
    if (!col) { /* one field: its colour everywhere */
        const float *rgb = x->rgb[0];
        for (size_t k = 0; k < n; k++) {
            float a = al[k], *o = out + 4 * k;
            o[0] = pre ? rgb[0] * a : rgb[0];
            o[1] = pre ? rgb[1] * a : rgb[1];
            o[2] = pre ? rgb[2] * a : rgb[2];
            o[3] = a;
        }
    } else {
        for (size_t k = 0; k < n; k++) {
            float a = al[k];
            for (int c = 0; c < 3; c++) out[4 * k + c] = pre ? col[c * plane + k] * a : col[c * plane + k];
            out[4 * k + 3] = a;
        }
    }
}

static int write_png(const Exporter *x, const char *path, char *temp, size_t templen,
                     const float *al, const float *col, int ow, int oh, char *err, size_t errlen)
{
    Image *out = image_create(ow, oh, 4);
    if (!out) {
        snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
        return -1;
    }
    size_t n = (size_t)ow * oh;
    png_pixels(x, al, col, n, n, out->px);
    ImagePngOut po = {.bits = x->o.format == IMAGE_FORMAT_PNG16 ? 16 : 8,
                      .level = x->o.png_compression, .temp = temp, .templen = templen};
    int rc = image_save_png_ex(path, out, &po, err, errlen);
    image_free(out);
    return rc;
}

/* How an EXR's colour is stored: one field of one grey (white by default)
 * needs R = G = B = grey x alpha, one plane for the three, or alpha itself
 * for white; else three planes. lin: the composited colour (NULL: one
 * field). */
typedef struct {
    bool grey, white;
    int planes; /* colour planes to make: 0, 1 or 3 */
} ExrColour;

static ExrColour exr_colour_of(const Exporter *x, bool composited)
{
    const float *l0 = x->lin[0];
    ExrColour c;
    c.grey = !composited && l0[0] == l0[1] && l0[1] == l0[2];
    c.white = c.grey && l0[0] == 1.0f;
    c.planes = c.white ? 0 : c.grey ? 1 : 3;
    return c;
}

/* Pixel k's premultiplied linear colour into planes[c * pplane + k]: from
 * lin[c * lplane + k] (composited) or field 0's colour. */
static inline void exr_colour_px(const Exporter *x, ExrColour cs, const float *al, const float *lin,
                                 size_t lplane, size_t k, float *planes, size_t pplane)
{
    const float *l0 = x->lin[0];
    if (lin) {
        for (int c = 0; c < 3; c++) planes[c * pplane + k] = lin[c * lplane + k] * al[k];
    } else if (cs.grey) {
        if (!cs.white) planes[k] = l0[0] * al[k];
    } else {
        planes[k] = l0[0] * al[k];
        planes[pplane + k] = l0[1] * al[k];
        planes[2 * pplane + k] = l0[2] * al[k];
    }
}

/* The data window grown by row j of the fields' densities (rho[f][0..ow-1]:
 * that row): where some field's density is above EXPORT_EXR_CROP_BELOW. */
static void crop_row(const Exporter *x, const float *const *rho, int ow, int j, int box[4])
{
    int first = -1, last = -1;
    for (int i = 0; i < ow; i++) {
        bool smoke = false;
        for (int f = 0; f < x->nf; f++) smoke = smoke || rho[f][i] > EXPORT_EXR_CROP_BELOW;
        if (smoke) {
            if (first < 0) first = i;
            last = i;
        }
    }
    if (first >= 0) {
        if (first < box[0]) box[0] = first;
        if (last > box[2]) box[2] = last;
        if (box[1] > j) box[1] = j;
        box[3] = j;
    }
}

/* The EXR's channels: colour, alpha, each field's raw density, the
 * velocity; the planes NULL (exr_stream_begin) or the given ones. */
static int exr_channels(const Exporter *x, bool vel, char dname[][96], ExrChannel *ch)
{
    int nch = 0;
    ch[nch++] = (ExrChannel){"R", NULL};
    ch[nch++] = (ExrChannel){"G", NULL};
    ch[nch++] = (ExrChannel){"B", NULL};
    ch[nch++] = (ExrChannel){"A", NULL};
    for (int f = 0; f < x->nf; f++) {
        snprintf(dname[f], 96, "density.%s", x->names[f]);
        ch[nch++] = (ExrChannel){dname[f], NULL};
    }
    if (vel) {
        ch[nch++] = (ExrChannel){"velocity.x", NULL};
        ch[nch++] = (ExrChannel){"velocity.y", NULL};
    }
    return nch;
}

/* The EXR: premultiplied linear RGBA, each field's raw density, the velocity. */
static int write_exr(const Exporter *x, const char *path, char *temp, size_t templen,
                     const float *al, const float *lin, const float *const *rho, const float *vx,
                     const float *vy, int ow, int oh, char *err, size_t errlen)
{
    size_t n = (size_t)ow * oh;
    ExrColour cs = exr_colour_of(x, lin != NULL);
    float *planes = cs.planes ? malloc((size_t)cs.planes * n * sizeof(float)) : NULL;
    if (cs.planes && !planes) {
        snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
        return -1;
    }
    /* the data window: where there is smoke (one pixel when there is none) */
    int box[4] = {ow, oh, -1, -1};
    for (int j = 0; j < oh; j++) {
        const float *row[EXPORT_FIELDS_MAX];
        for (int f = 0; f < x->nf; f++) row[f] = rho[f] + (size_t)j * ow;
        for (int i = 0; i < ow; i++) exr_colour_px(x, cs, al, lin, n, (size_t)j * ow + i, planes, n);
        crop_row(x, row, ow, j, box);
    }
    if (box[2] < 0) box[0] = box[1] = box[2] = box[3] = 0;
    char dname[EXPORT_FIELDS_MAX][96];
    ExrChannel ch[6 + EXPORT_FIELDS_MAX];
    bool vel = x->o.velocity && vx && vy;
    int nch = exr_channels(x, vel, dname, ch);
    const float *r = cs.white ? al : planes, *g = cs.grey ? r : planes + n, *b = cs.grey ? r : planes + 2 * n;
    ch[0].px = r, ch[1].px = g, ch[2].px = b, ch[3].px = al;
    for (int f = 0; f < x->nf; f++) ch[4 + f].px = rho[f];
    if (vel) ch[4 + x->nf].px = vx, ch[5 + x->nf].px = vy;
    ExrWrite d = {.w = ow, .h = oh, .x0 = box[0], .y0 = box[1], .x1 = box[2], .y1 = box[3], .channels = ch,
                  .nchannels = nch, .pixel = x->o.exr_pixel, .compression = x->o.exr_compression,
                  .fps = x->o.fps, .tiled = x->o.exr_tiled, .pool = x->pool, .temp = temp,
                  .templen = templen};
    int rc = exr_write(path, &d, err, errlen);
    free(planes);
    return rc;
}

/* A plane resampled to ow x oh, or the plane itself; NULL on no memory. */
static const float *resampled(const float *src, int w, int h, int ow, int oh, bool mass, Image **keep)
{
    *keep = NULL;
    if (ow == w && oh == h) return src;
    Image in = {w, h, 1, (float *)src};
    *keep = mass ? image_resample(&in, ow, oh) : image_resample_plain(&in, ow, oh);
    return *keep ? (*keep)->px : NULL;
}

int export_write(Exporter *x, long number, const float *rho, const float *vx, const float *vy, int w,
                 int h, char *err, size_t errlen)
{
    if (x->nf != 1) {
        snprintf(err, errlen, "internal error: export_write of one field to an exporter of %d", x->nf);
        return -1;
    }
    const float *one[1] = {rho};
    return export_write_fields(x, number, one, vx, vy, w, h, err, errlen);
}

/* ---- frames in strips ------------------------------------------------------ */

int export_strip_rows(const ExportOptions *o, int ow, int oh)
{
    int r = o->strip_rows;
    if (r < 0 || ow < 1 || oh < 1) return 0;
    if (r == 0) {
        if ((unsigned long long)ow * (unsigned long long)oh <= EXPORT_STRIP_ABOVE) return 0;
        r = EXPORT_STRIP_ROWS;
    }
    /* an EXR's bands start on its chunks (1 to 32 scanlines, 64-row tiles) */
    if (o->format == IMAGE_FORMAT_EXR) r = (r + EXR_TILE_SIZE - 1) / EXR_TILE_SIZE * EXR_TILE_SIZE;
    return r > oh ? oh : r;
}

/* composite's alpha of one field, bit for bit: al[k] = clamp(a[k] × scale) */
static void alpha_one(const Exporter *x, const float *a, size_t n, float *al)
{
    float sc = x->o.density_scale;
    for (size_t k = 0; k < n; k++) {
        float v = a[k] * sc;
        al[k] = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f; /* NaN -> 0 */
    }
}

/* The velocity of n pixels in output pixels per frame: from domain units
 * per unit time (the domain's shorter side is 1, so a grid cell is
 * 1 / min(w, h) of it). */
static void velocity_px(const Exporter *x, int w, int h, int ow, int oh, const float *rx, const float *ry,
                        size_t n, float *px, float *py)
{
    double side = (double)(w < h ? w : h);
    float sx = (float)(side * ow / w * x->o.frame_time);
    float sy = (float)(side * oh / h * x->o.frame_time);
    for (size_t k = 0; k < n; k++) {
        px[k] = rx[k] * sx;
        py[k] = ry[k] * sy;
    }
}

/* Rows y..y+m-1 of each of n planes: a[i] points at them, in res (bn
 * floats a plane) when resampled, else in the plane itself. */
static void band_planes(ImageRows *const *rr, const float *const *from, int n, bool same, int ow, size_t bn,
                        float *res, int y, int m, const float **a)
{
    for (int i = 0; i < n; i++) {
        if (same) {
            a[i] = from[i] + (size_t)y * ow;
        } else {
            image_rows_get(rr[i], y, m, res + (size_t)i * bn);
            a[i] = res + (size_t)i * bn;
        }
    }
}

/* One frame's strips: what frame_strips' stages share. The planes of a band
 * lie in one block: the resampled planes, alpha, colour (srgb, lin),
 * velocity, and the PNG's RGBA or the EXR's colour planes. */
typedef struct {
    Exporter *x;
    int w, h, nf, nsrc, ow, oh;
    bool exr, vel, same, flat;
    Image src[EXPORT_FIELDS_MAX + 2]; /* the resamplers' sources: they keep a pointer */
    ImageRows *rr[EXPORT_FIELDS_MAX + 2]; /* the fields, then vx, vy */
    const float *from[EXPORT_FIELDS_MAX + 2];
    const float *a[EXPORT_FIELDS_MAX + 2]; /* the band's rows of each */
    ExrColour cs;
    size_t bn; /* floats a plane: rows x ow */
    float *block, *res, *al, *col, *pv, *out;
} Strip;

/* The resamplers (unless same size) and the block of a band's planes.
 * Returns 0, or -1 with err set. */
static int strip_alloc(Strip *S, int rows, const char *path, char *err, size_t errlen)
{
    int ow = S->ow, oh = S->oh;
    for (int i = 0; !S->same && i < S->nsrc; i++) {
        S->src[i] = (Image){S->w, S->h, 1, (float *)S->from[i]};
        if (!(S->rr[i] = image_rows_create(&S->src[i], ow, oh, i < S->nf))) {
            snprintf(err, errlen, "out of memory resampling a frame to %dx%d", ow, oh);
            return -1;
        }
    }
    S->cs = exr_colour_of(S->x, !S->flat);
    size_t bn = S->bn = (size_t)rows * (size_t)ow;
    size_t nplanes = (S->same ? 0 : (size_t)S->nsrc) + 1 + (S->flat ? 0 : 6) + (S->vel ? 2 : 0) +
                     (S->exr ? (size_t)S->cs.planes : path ? 4 : 0);
    if (!(S->block = malloc(nplanes * bn * sizeof(float)))) {
        snprintf(err, errlen, "out of memory for a %d-row strip of a %dx%d frame", rows, ow, oh);
        return -1;
    }
    S->res = S->block;
    S->al = S->res + (S->same ? 0 : (size_t)S->nsrc) * bn;
    S->col = S->flat ? NULL : S->al + bn;
    S->pv = (S->col ? S->col + 6 * bn : S->al + bn);
    S->out = S->pv + (S->vel ? 2 : 0) * bn;
    return 0;
}

/* An EXR's data window, before its header: where there is smoke (a pass of
 * its own over the densities); box is x0, y0, x1, y1. */
static void strip_data_window(Strip *S, int rows, int box[4])
{
    int ow = S->ow, oh = S->oh;
    box[0] = ow, box[1] = oh, box[2] = box[3] = -1;
    for (int y = 0; y < oh; y += rows) {
        int m = oh - y < rows ? oh - y : rows;
        band_planes(S->rr, S->from, S->nf, S->same, ow, S->bn, S->res, y, m, S->a); /* the densities only */
        for (int r = 0; r < m; r++) {
            const float *row[EXPORT_FIELDS_MAX];
            for (int f = 0; f < S->nf; f++) row[f] = S->a[f] + (size_t)r * ow;
            crop_row(S->x, row, ow, y + r, box);
        }
    }
    if (box[2] < 0) box[0] = box[1] = box[2] = box[3] = 0;
}

/* The file's writer: the EXR's (with its channels and data window) or the
 * PNG's, none without a path. Returns 0, or -1 with err set. */
static int strip_writer(Strip *S, const char *path, const int box[4], ExrChannel *ch, int nch,
                        char *temp, size_t templen, ImagePngStream **ps, ExrStream **es, char *err,
                        size_t errlen)
{
    Exporter *x = S->x;
    int ow = S->ow, oh = S->oh;
    if (S->exr) {
        ExrWrite d = {.w = ow, .h = oh, .x0 = box[0], .y0 = box[1], .x1 = box[2], .y1 = box[3], .channels = ch,
                      .nchannels = nch, .pixel = x->o.exr_pixel, .compression = x->o.exr_compression,
                      .fps = x->o.fps, .tiled = x->o.exr_tiled, .pool = x->pool, .temp = temp,
                      .templen = templen};
        if (!(*es = exr_stream_begin(path, &d, err, errlen))) return -1;
    } else if (path) {
        ImagePngOut po = {.bits = x->o.format == IMAGE_FORMAT_PNG16 ? 16 : 8,
                          .level = x->o.png_compression, .temp = temp, .templen = templen};
        if (!(*ps = image_png_begin(path, ow, oh, 4, &po, err, errlen))) return -1;
    }
    return 0;
}

/* Band rows y..y+m-1 (nb pixels): its planes, composited (or one field's
 * alpha), the velocity, and the PNG's pixels and (in_exr) the EXR's colour. */
static void strip_band(Strip *S, int y, int m, size_t nb, bool png, bool in_exr)
{
    Exporter *x = S->x;
    int nf = S->nf;
    band_planes(S->rr, S->from, S->nsrc, S->same, S->ow, S->bn, S->res, y, m, S->a);
    if (S->flat) alpha_one(x, S->a[0], nb, S->al);
    else composite(x, S->a, nb, S->al, S->col, S->col + 3 * nb);
    if (S->vel) velocity_px(x, S->w, S->h, S->ow, S->oh, S->a[nf], S->a[nf + 1], nb, S->pv, S->pv + nb);
    if (png) png_pixels(x, S->al, S->col, nb, nb, S->out);
    if (in_exr)
        for (size_t k = 0; k < nb; k++)
            exr_colour_px(x, S->cs, S->al, S->col ? S->col + 3 * nb : NULL, nb, k, S->out, nb);
}

/* The band's rows into the EXR's channels. Returns 0, or -1 with err set. */
static int strip_exr_rows(Strip *S, ExrStream *es, ExrChannel *ch, int y, int m, size_t nb, char *err,
                          size_t errlen)
{
    int nf = S->nf;
    const float *al = S->al, *out = S->out;
    const float *r = S->cs.white ? al : out, *g = S->cs.grey ? r : out + nb, *b = S->cs.grey ? r : out + 2 * nb;
    ch[0].px = r, ch[1].px = g, ch[2].px = b, ch[3].px = al;
    for (int f = 0; f < nf; f++) ch[4 + f].px = S->a[f];
    if (S->vel) ch[4 + nf].px = S->pv, ch[5 + nf].px = S->pv + nb;
    return exr_stream_rows(es, ch, y, m, err, errlen);
}

/* The frame ROWS output rows at a time (export.h, "Strips"): each field
 * (and the velocity) resampled a band of rows at a time (image_rows),
 * composited, and handed to the PNG (image_png_rows) or the EXR
 * (exr_stream_rows) and, when video, straight down the pipe (so the frame's
 * turn must have come). An EXR's data window first takes a pass of its own
 * over the densities. path NULL: no file. Bit for bit frame_encode's file
 * and video rows. 0, or -1 with err (the temporary file removed). */
static int frame_strips(Exporter *x, Job *j, const char *path, char *temp, size_t templen, int rows,
                        bool video, char *err, size_t errlen)
{
    double t_conv = 0.0;
    Strip S = {.x = x, .w = j->w, .h = j->h, .nf = x->nf};
    int nf = S.nf;
    int ow = S.ow = x->o.out_w ? x->o.out_w : S.w, oh = S.oh = x->o.out_h ? x->o.out_h : S.h;
    bool exr = S.exr = x->o.format == IMAGE_FORMAT_EXR && path;
    bool vel = S.vel = exr && x->o.velocity && j->vx && j->vy;
    S.same = ow == S.w && oh == S.h;
    S.flat = nf == 1 && !x->video; /* as frame_encode: no colour planes */
    int rc = -1;
    S.nsrc = nf + (vel ? 2 : 0);
    for (int f = 0; f < nf; f++) S.from[f] = j->rho[f];
    if (vel) S.from[nf] = j->vx, S.from[nf + 1] = j->vy;
    if (!path && !video) { /* nothing to make */
        j->ow = ow;
        j->oh = oh;
        return 0;
    }
    ImagePngStream *ps = NULL;
    ExrStream *es = NULL;
    if (strip_alloc(&S, rows, path, err, errlen) < 0) goto done;
    int box[4] = {0, 0, ow - 1, oh - 1};
    if (exr) strip_data_window(&S, rows, box);
    char dname[EXPORT_FIELDS_MAX][96];
    ExrChannel ch[6 + EXPORT_FIELDS_MAX];
    int nch = exr ? exr_channels(x, vel, dname, ch) : 0;
    if (strip_writer(&S, path, box, ch, nch, temp, templen, &ps, &es, err, errlen) < 0) goto done;
    if (video && video_begin(x, ow, oh, err, errlen) < 0) goto done;
    /* the bands: an EXR's start on its data window's first row (its chunks'
     * rows), and without a video only its rows are made */
    int ystart = exr && !video ? box[1] : 0, yend = exr && !video ? box[3] + 1 : oh;
    for (int y = ystart; y < yend;) {
        int m = yend - y < rows ? yend - y : rows;
        if (exr && y < box[1] && m > box[1] - y) m = box[1] - y;
        size_t nb = (size_t)m * ow;
        double t1 = export_now();
        bool in_window = y <= box[3] && y + m > box[1];
        strip_band(&S, y, m, nb, ps != NULL, es && in_window);
        t_conv += export_now() - t1;
        if (ps && image_png_rows(ps, S.out, m, err, errlen) < 0) goto done;
        if (es && in_window && strip_exr_rows(&S, es, ch, y, m, nb, err, errlen) < 0) goto done;
        if (video && video_rows(x, S.al, S.col, nb, nb, err, errlen) < 0) goto done;
        y += m;
    }
    if (video) x->vframes++;
    rc = 0;
    if (ps) rc = image_png_end(ps, err, errlen);
    if (es) rc = exr_stream_end(es, err, errlen);
    ps = NULL;
    es = NULL;
    j->ow = ow;
    j->oh = oh;
    j->t_convert = t_conv;
done:
    image_png_abort(ps);
    exr_stream_abort(es);
    free(S.block);
    for (int i = 0; i < S.nsrc; i++) image_rows_free(S.rr[i]);
    return rc;
}

/* The rows of a strip for this job's frame, or 0: the frame whole. */
static int job_strip_rows(const Exporter *x, const Job *j)
{
    return export_strip_rows(&x->o, x->o.out_w ? x->o.out_w : j->w, x->o.out_h ? x->o.out_h : j->h);
}

/* The frame's file under its temporary name (j->temp), and for a video its
 * alpha and colour (j->al, j->col): everything of a frame that can run
 * beside other frames. A frame in strips (job_strip_rows) pipes its video
 * rows as it goes instead (j->piped): its turn must have come. 0, or -1
 * with j->err. */
static int frame_encode(Exporter *x, Job *j)
{
    double t0 = export_now();
    int w = j->w, h = j->h;
    int ow = x->o.out_w ? x->o.out_w : w, oh = x->o.out_h ? x->o.out_h : h;
    bool exr = x->o.format == IMAGE_FORMAT_EXR;
    bool vel = exr && x->o.velocity && j->vx && j->vy && x->dir;
    char *err = j->err;
    size_t errlen = sizeof j->err;
    int rc = -1;
    char path[4200];
    if (x->dir && export_frame_path(x, j->number, path, sizeof path) < 0) {
        snprintf(err, errlen, "cannot write frame %ld into %s: path too long", j->number, x->dir);
        return -1;
    }
    int rows = job_strip_rows(x, j);
    if (rows > 0) {
        j->piped = x->video != NULL;
        return frame_strips(x, j, x->dir ? path : NULL, j->temp, sizeof j->temp, rows, x->video != NULL, err,
                            errlen);
    }
    Image *ka[EXPORT_FIELDS_MAX] = {NULL}, *kx = NULL, *ky = NULL;
    const float *a[EXPORT_FIELDS_MAX];
    float *al = NULL, *pv = NULL, *col = NULL;
    bool ok = true;
    for (int f = 0; f < x->nf; f++) ok = (a[f] = resampled(j->rho[f], w, h, ow, oh, true, &ka[f])) && ok;
    const float *rx = vel ? resampled(j->vx, w, h, ow, oh, false, &kx) : NULL;
    const float *ry = vel ? resampled(j->vy, w, h, ow, oh, false, &ky) : NULL;
    size_t n = (size_t)ow * oh;
    if (!ok || (vel && (!rx || !ry))) {
        snprintf(err, errlen, "out of memory resampling a frame to %dx%d", ow, oh);
        goto done;
    }
    /* one field without a video: its colour is the same everywhere, so only
     * the alpha is made (composite's colour planes are for several fields) */
    bool flat = x->nf == 1 && !x->video;
    if (!(al = malloc(n * sizeof(float))) || (!flat && !(col = malloc(6 * n * sizeof(float)))) ||
        (vel && !(pv = malloc(2 * n * sizeof(float))))) {
        snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
        goto done;
    }
    if (flat) alpha_one(x, a[0], n, al);
    else composite(x, a, n, al, col, col + 3 * n);
    if (vel) velocity_px(x, w, h, ow, oh, rx, ry, n, pv, pv + n);
    j->t_convert = export_now() - t0;
    if (x->dir) {
        if (exr ? write_exr(x, path, j->temp, sizeof j->temp, al, col ? col + 3 * n : NULL, a, vel ? pv : NULL,
                            vel ? pv + n : NULL, ow, oh, err, errlen)
                : write_png(x, path, j->temp, sizeof j->temp, al, col, ow, oh, err, errlen))
            goto done;
    }
    j->ow = ow;
    j->oh = oh;
    if (x->video) { /* piped in order, at the commit */
        j->al = al;
        j->col = col;
        al = col = NULL;
    }
    rc = 0;
done:
    free(al);
    free(col);
    free(pv);
    for (int f = 0; f < x->nf; f++) image_free(ka[f]);
    image_free(kx);
    image_free(ky);
    return rc;
}

/* The frame's ordered step, one frame at a time in the order handed over:
 * its file renamed into place (or removed when the run has failed or been
 * cancelled), its video frame piped, the counts. 0, or -1 with j->err. */
static int frame_commit(Exporter *x, Job *j, bool drop)
{
    int rc = drop ? -1 : j->rc;
    if (rc == 0 && j->temp[0]) {
        char path[4200] = "";
        if (export_frame_path(x, j->number, path, sizeof path) < 0 || rename(j->temp, path) != 0) {
            snprintf(j->err, sizeof j->err, "cannot write %s: %s", path, strerror(errno));
            rc = -1;
        }
    }
    if (rc < 0 && j->temp[0]) unlink(j->temp);
    j->temp[0] = '\0';
    if (rc == 0 && x->video && !j->piped && video_frame(x, j->al, j->col, j->ow, j->oh, j->err, sizeof j->err) < 0)
        rc = -1;
    if (rc == 0) { /* read by export_count and co. under the lock */
        if (x->pool) pthread_mutex_lock(&x->mu);
        if (!x->count) x->first = j->number;
        x->last = j->number;
        x->fw = j->ow;
        x->fh = j->oh;
        x->count++;
        if (x->pool) pthread_mutex_unlock(&x->mu);
    }
    free(j->al);
    free(j->col);
    j->al = j->col = NULL;
    return rc;
}

#define SPARE_BLOCKS 4

/* A planes block back from a frame: kept for the next one, or freed. */
static void export_give_back(Exporter *x, float *block, size_t bytes)
{
    if (!block) return;
    if (x->pool) pthread_mutex_lock(&x->mu);
    if (x->nspare < SPARE_BLOCKS && (x->nspare == 0 || bytes == x->spare_bytes)) {
        x->spare[x->nspare++] = block;
        x->spare_bytes = bytes;
        block = NULL;
    }
    if (x->pool) pthread_mutex_unlock(&x->mu);
    free(block);
}

/* A worker's frame: encode it beside the others, then wait for its turn
 * and commit it. */
static void frame_job(void *arg)
{
    Job *j = arg;
    Exporter *x = j->x;
    /* a frame in strips with a video pipes its rows as they are made: it
     * waits for its turn first */
    bool early = x->video && job_strip_rows(x, j) > 0;
    pthread_mutex_lock(&x->mu);
    while (early && x->committed != j->seq) pthread_cond_wait(&x->cv, &x->mu);
    bool skip = x->failed || x->cancel;
    pthread_mutex_unlock(&x->mu);
    double t0 = export_now();
    j->rc = skip ? -1 : frame_encode(x, j);
    double t1 = export_now(), t_enc = t1 - t0;
    pthread_mutex_lock(&x->mu);
    while (x->committed != j->seq) pthread_cond_wait(&x->cv, &x->mu);
    bool drop = early ? skip || x->cancel : x->failed || x->cancel;
    pthread_mutex_unlock(&x->mu);
    t1 = export_now(); /* the commit's own time, not the wait for its turn */
    /* alone in the ordered step: the frames before are committed, the ones
     * after wait for committed to reach them */
    int rc = frame_commit(x, j, drop);
    double t2 = export_now();
    pthread_mutex_lock(&x->mu);
    if (rc < 0 && !drop && !x->failed) {
        x->failed = true;
        snprintf(x->why, sizeof x->why, "%s", j->err);
    }
    x->t_convert += j->t_convert;
    x->t_encode += t_enc;
    x->t_commit += t2 - t1;
    x->committed++;
    x->in_flight--;
    x->flight_bytes -= j->bytes;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    export_give_back(x, j->own, j->own_bytes);
    free(j);
}

/* Wait for room in the budget for a frame of BYTES; false after a failure
 * (err filled). The mutex is not held on return. */
static bool wait_for_room(Exporter *x, size_t bytes, char *err, size_t errlen)
{
    pthread_mutex_lock(&x->mu);
    while (!x->failed && x->in_flight + x->reserved > 0 &&
           (x->in_flight + x->reserved >= x->max_flight || x->flight_bytes + bytes > x->budget))
        pthread_cond_wait(&x->cv, &x->mu);
    bool failed = x->failed;
    if (failed) snprintf(err, errlen, "%s", x->why);
    else {
        x->reserved++; /* counted from now: export_write_owned hands it over */
        x->flight_bytes += bytes;
    }
    pthread_mutex_unlock(&x->mu);
    return !failed;
}

/* A planes block of BYTES: a spare one, or a new one. */
static float *planes_block(Exporter *x, size_t bytes)
{
    float *b = NULL;
    pthread_mutex_lock(&x->mu);
    if (x->nspare > 0 && x->spare_bytes == bytes) b = x->spare[--x->nspare];
    pthread_mutex_unlock(&x->mu);
    return b ? b : malloc(bytes);
}

static size_t planes_bytes(const Exporter *x, int w, int h, bool vel)
{
    return (size_t)w * (size_t)h * (size_t)(x->nf + (vel ? 2 : 0)) * sizeof(float);
}

float *export_frame_alloc(Exporter *x, int w, int h, char *err, size_t errlen)
{
    if (!x->pool) {
        snprintf(err, errlen, "internal error: export_frame_alloc without writers");
        return NULL;
    }
    bool vel = x->o.format == IMAGE_FORMAT_EXR && x->o.velocity && x->dir;
    if (!wait_for_room(x, export_frame_bytes(x, w, h), err, errlen)) return NULL;
    float *b = planes_block(x, planes_bytes(x, w, h, vel));
    if (!b) {
        pthread_mutex_lock(&x->mu);
        x->reserved--;
        x->flight_bytes -= export_frame_bytes(x, w, h);
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        snprintf(err, errlen, "out of memory for a %dx%d frame", w, h);
    }
    return b;
}

int export_write_owned(Exporter *x, long number, float *planes, bool vel, int w, int h)
{
    if (number < 0) number = x->submitted ? x->next_number : x->o.frame_start;
    x->next_number = number + 1;
    vel = vel && x->o.format == IMAGE_FORMAT_EXR && x->o.velocity && x->dir;
    size_t cells = (size_t)w * h, bytes = export_frame_bytes(x, w, h);
    Job *j = calloc(1, sizeof *j);
    if (!j) { /* the frame is lost: a failure like any other */
        pthread_mutex_lock(&x->mu);
        x->reserved--;
        x->flight_bytes -= bytes;
        if (!x->failed) {
            x->failed = true;
            snprintf(x->why, sizeof x->why, "out of memory for a %dx%d frame", w, h);
        }
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        free(planes);
        return -1;
    }
    *j = (Job){.x = x, .number = number, .w = w, .h = h, .own = planes,
               .own_bytes = planes_bytes(x, w, h, vel), .bytes = bytes};
    for (int f = 0; f < x->nf; f++) j->rho[f] = planes + (size_t)f * cells;
    if (vel) {
        j->vx = planes + (size_t)x->nf * cells;
        j->vy = planes + (size_t)(x->nf + 1) * cells;
    }
    pthread_mutex_lock(&x->mu);
    j->seq = x->submitted++;
    x->reserved--;
    x->in_flight++;
    pthread_mutex_unlock(&x->mu);
    if (pool_submit(x->pool, frame_job, j) < 0) frame_job(j); /* no memory for the task: here */
    return 0;
}

Pool *export_pool(Exporter *x) { return x ? x->pool : NULL; }

size_t export_frame_bytes_for(const ExportOptions *o, int w, int h)
{
    size_t cells = (size_t)w * h;
    int ow = o->out_w ? o->out_w : w, oh = o->out_h ? o->out_h : h;
    size_t n = (size_t)ow * (size_t)oh;
    bool exr = o->format == IMAGE_FORMAT_EXR, vel = exr && o->velocity;
    size_t nf = o->nfields > 1 ? (size_t)o->nfields : 1, nsrc = nf + (vel ? 2 : 0);
    int rows = export_strip_rows(o, ow, oh);
    /* the copies handed over, then the working planes of frame_encode:
     * resampled fields, alpha, colour (6), velocity (2), and the RGBA image
     * (4) or the EXR's colour planes (3) */
    if (!rows) return sizeof(float) * (cells * nsrc + n * (nf + 1 + 6 + (vel ? 2 : 0) + 4));
    /* in strips: the copies, then a band's planes in frame_strips (the
     * resampled ones, alpha, colour, velocity, RGBA), its video rows (at most
     * 8 bytes a pixel), an EXR's band of chunks compressed (at most their
     * raw floats) and each helping thread's pipeline (two buffers of a chunk
     * of at most 32 rows), and the resamplers' rows; zlib's and libpng's
     * state (under 1 MiB) */
    size_t bn = (size_t)rows * (size_t)ow;
    size_t bytes = sizeof(float) * (cells * nsrc + bn * (nsrc + 1 + 6 + (vel ? 2 : 0) + 4)) + 8 * bn;
    if (exr) {
        size_t nch = 4 + nf + (vel ? 2 : 0), slots = o->threads > 0 ? (size_t)o->threads + 1 : 2;
        bytes += sizeof(float) * nch * (bn + slots * 2 * 32 * (size_t)ow);
    }
    bytes += nsrc * image_rows_bytes(w, h, ow, oh, 1) + ((size_t)1 << 20);
    return bytes;
}

void export_frame_what(const ExportOptions *o, int w, int h, char *buf, size_t n)
{
    int ow = o->out_w ? o->out_w : w, oh = o->out_h ? o->out_h : h;
    int rows = export_strip_rows(o, ow, oh);
    if (rows) snprintf(buf, n, "a %d-row strip of a %dx%d frame being written", rows, ow, oh);
    else snprintf(buf, n, "a %dx%d frame being written", ow, oh);
}

size_t export_frame_bytes(const Exporter *x, int w, int h) { return export_frame_bytes_for(&x->o, w, h); }

int export_write_fields(Exporter *x, long number, const float *const *rho, const float *vx,
                        const float *vy, int w, int h, char *err, size_t errlen)
{
    if (number < 0) number = x->submitted ? x->next_number : x->o.frame_start;
    x->next_number = number + 1;
    bool vel = x->o.format == IMAGE_FORMAT_EXR && x->o.velocity && vx && vy && x->dir;
    if (!x->pool) { /* here and now */
        Job j = {.x = x, .number = number, .w = w, .h = h, .vx = vel ? vx : NULL, .vy = vel ? vy : NULL};
        for (int f = 0; f < x->nf; f++) j.rho[f] = rho[f];
        double t0 = export_now();
        j.rc = frame_encode(x, &j);
        double t1 = export_now();
        int rc = frame_commit(x, &j, false);
        x->t_convert += j.t_convert;
        x->t_encode += t1 - t0;
        x->t_commit += export_now() - t1;
        x->submitted++;
        x->committed++;
        if (rc < 0) snprintf(err, errlen, "%s", j.err);
        return rc;
    }
    /* the frames in flight bounded by the budget: wait for room (one frame
     * always goes, however large), copy, hand over */
    float *own = export_frame_alloc(x, w, h, err, errlen);
    if (!own) return -1;
    size_t cells = (size_t)w * h;
    for (int f = 0; f < x->nf; f++) memcpy(own + (size_t)f * cells, rho[f], cells * sizeof(float));
    if (vel) {
        memcpy(own + (size_t)x->nf * cells, vx, cells * sizeof(float));
        memcpy(own + (size_t)(x->nf + 1) * cells, vy, cells * sizeof(float));
    }
    if (export_write_owned(x, number, own, vel, w, h) < 0) {
        snprintf(err, errlen, "%s", export_error(x));
        return -1;
    }
    return 0;
}

int export_wait(Exporter *x, char *err, size_t errlen)
{
    if (!x || !x->pool) return 0;
    pthread_mutex_lock(&x->mu);
    while (x->in_flight > 0) pthread_cond_wait(&x->cv, &x->mu);
    bool failed = x->failed;
    if (failed) snprintf(err, errlen, "%s", x->why);
    pthread_mutex_unlock(&x->mu);
    return failed ? -1 : 0;
}

void export_cancel(Exporter *x)
{
    if (!x || !x->pool) return;
    pthread_mutex_lock(&x->mu);
    x->cancel = true;
    while (x->in_flight > 0) pthread_cond_wait(&x->cv, &x->mu);
    pthread_mutex_unlock(&x->mu);
}

const char *export_error(Exporter *x)
{
    if (!x || !x->pool) return "";
    pthread_mutex_lock(&x->mu);
    const char *why = x->failed ? x->why : "";
    pthread_mutex_unlock(&x->mu);
    return why;
}

int export_in_flight(Exporter *x)
{
    if (!x || !x->pool) return 0;
    pthread_mutex_lock(&x->mu);
    int n = x->in_flight;
    pthread_mutex_unlock(&x->mu);
    return n;
}

long export_submitted(const Exporter *x) { return x ? x->submitted : 0; }

int export_threads(const Exporter *x) { return x && x->pool ? pool_threads(x->pool) : 0; }

void export_times(Exporter *x, double *convert, double *encode, double *commit)
{
    if (x->pool) pthread_mutex_lock(&x->mu);
    *convert = x->t_convert;
    *encode = x->t_encode;
    *commit = x->t_commit;
    if (x->pool) pthread_mutex_unlock(&x->mu);
}

int export_frame(Exporter *x, const float *rho, int w, int h, char *err, size_t errlen)
{
    return export_write(x, -1, rho, NULL, NULL, w, h, err, errlen);
}

int export_png_fields(const char *path, const float *const *rho, const ExportField *fields, int nf,
                      int w, int h, int out_w, int out_h, char *err, size_t errlen)
{
    Exporter x;
    memset(&x, 0, sizeof x);
    x.o = export_defaults();
    x.nf = nf < 1 ? 1 : nf > EXPORT_FIELDS_MAX ? EXPORT_FIELDS_MAX : nf;
    for (int i = 0; i < x.nf; i++)
        for (int c = 0; c < 3; c++) {
            x.rgb[i][c] = fields[i].rgb[c];
            x.lin[i][c] = srgb_to_linear(fields[i].rgb[c]);
        }
    int ow = out_w ? out_w : w, oh = out_h ? out_h : h;
    size_t n = (size_t)ow * oh;
    x.o.out_w = ow;
    x.o.out_h = oh;
    int rows = export_strip_rows(&x.o, ow, oh);
    if (rows > 0) { /* a huge one in strips, as the frames are */
        Job *j = calloc(1, sizeof *j);
        if (!j) {
            snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
            return -1;
        }
        *j = (Job){.x = &x, .w = w, .h = h};
        for (int f = 0; f < x.nf; f++) j->rho[f] = rho[f];
        int rc = frame_strips(&x, j, path, NULL, 0, rows, false, err, errlen);
        free(j);
        return rc;
    }
    Image *ka[EXPORT_FIELDS_MAX] = {NULL};
    const float *a[EXPORT_FIELDS_MAX];
    float *al = NULL, *col = NULL;
    int rc = -1;
    bool ok = true;
    for (int f = 0; f < x.nf; f++) ok = (a[f] = resampled(rho[f], w, h, ow, oh, true, &ka[f])) && ok;
    if (!ok) {
        snprintf(err, errlen, "out of memory resampling a frame to %dx%d", ow, oh);
        goto done;
    }
    if (!(al = malloc(n * sizeof(float))) || !(col = malloc(6 * n * sizeof(float)))) {
        snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
        goto done;
    }
    composite(&x, a, n, al, col, col + 3 * n);
    rc = write_png(&x, path, NULL, 0, al, col, ow, oh, err, errlen);
done:
    free(al);
    free(col);
    for (int f = 0; f < x.nf; f++) image_free(ka[f]);
    return rc;
}

/* The counts change on the workers: read them under the lock. */
static long locked_long(const Exporter *x, const long *v)
{
    if (!x->pool) return *v;
    pthread_mutex_t *mu = (pthread_mutex_t *)&x->mu;
    pthread_mutex_lock(mu);
    long r = *v;
    pthread_mutex_unlock(mu);
    return r;
}

int export_count(const Exporter *x)
{
    if (!x->pool) return x->count;
    pthread_mutex_t *mu = (pthread_mutex_t *)&x->mu;
    pthread_mutex_lock(mu);
    int r = x->count;
    pthread_mutex_unlock(mu);
    return r;
}
long export_first(const Exporter *x) { return locked_long(x, &x->first); }
long export_last(const Exporter *x) { return locked_long(x, &x->last); }

/* The number in NAME when NAME is exactly this exporter's pattern (the
 * number printed at least digits wide, as export_frame_path does), else -1. */
static long frame_number_of(const Exporter *x, const char *s)
{
    size_t lp = strlen(x->prefix), ls = strlen(x->suffix), len = strlen(s);
    if (len <= lp + ls || strncmp(s, x->prefix, lp) != 0 || strcmp(s + len - ls, x->suffix) != 0)
        return -1;
    size_t nd = len - lp - ls;
    if (nd > 18) return -1;
    long k = 0;
    for (size_t i = 0; i < nd; i++) {
        char c = s[lp + i];
        if (c < '0' || c > '9') return -1;
        k = k * 10 + (c - '0');
    }
    char again[64];
    snprintf(again, sizeof again, "%0*ld", x->o.digits, k);
    if (strlen(again) != nd || strncmp(again, s + lp, nd) != 0) return -1;
    return k;
}

int export_remove_stale(Exporter *x)
{
    if (!x->dir) return 0;
    DIR *d = opendir(x->dir);
    if (!d) return -1;
    int removed = 0;
    long last = x->count ? x->last : x->o.frame_start - 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        /* exactly our pattern, numbered past this run's last frame */
        long k = frame_number_of(x, e->d_name);
        if (k < 0 || k <= last) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    return removed;
}
const char *export_dir(const Exporter *x) { return x->dir; }

/* ---- what earlier runs left ------------------------------------------------- */

/* A process id that no longer exists on this machine. A temporary file named
 * after a live process (this run, or another run writing into the same place)
 * is left alone. */
static bool pid_gone(long pid)
{
    return pid > 0 && pid <= INT_MAX && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* The pid in "NAME.tmp.PID.N" (image_save_png's temporary names), or -1. */
static long frame_temp_pid(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t || t == name) return -1;
    for (const char *n; (n = strstr(t + 1, ".tmp.")) != NULL;) t = n; /* the last one */
    char *end;
    const char *p = t + 5;
    if (*p < '0' || *p > '9') return -1;
    long pid = strtol(p, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9') return -1;
    for (p = end + 1; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    return pid;
}

/* Whether a temporary file's NAME (before ".tmp.PID.N") is one this
 * exporter or its run writes: a frame of the pattern, or a record run*.json. */
static bool own_temp_name(const Exporter *x, const char *name)
{
    const char *t = strstr(name, ".tmp.");
    for (const char *n; t && (n = strstr(t + 1, ".tmp.")) != NULL;) t = n;
    if (!t) return false;
    char base[1024];
    size_t len = (size_t)(t - name);
    if (len >= sizeof base) return false;
    memcpy(base, name, len);
    base[len] = '\0';
    if (frame_number_of(x, base) >= 0) return true;
    return len >= 8 && !strncmp(base, "run", 3) && !strcmp(base + len - 5, ".json");
}

int export_check_way(Exporter *x, long remove_from, long write_first, long write_last,
                     ExportOwned owned, void *ctx, char *err, size_t errlen)
{
    if (!x->dir) return 0;
    DIR *d = opendir(x->dir);
    if (!d) return 0; /* nothing in the way (export_clean reports an unreadable one) */
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        long k = frame_number_of(x, e->d_name);
        if (k < 0 || !(k >= remove_from || (k >= write_first && k <= write_last))) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        if (!owned(path, e->d_name, ctx, err, errlen)) rc = -1;
    }
    closedir(d);
    return rc;
}

int export_clean(Exporter *x, int first_frame, int *temps)
{
    if (temps) *temps = 0;
    if (!x->dir) return 0;
    DIR *d = opendir(x->dir);
    if (!d) return -1;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        long pid = frame_temp_pid(e->d_name);
        if (pid > 0) {
            if (own_temp_name(x, e->d_name) && pid_gone(pid) && unlink(path) == 0 && temps) (*temps)++;
            continue;
        }
        long k = frame_number_of(x, e->d_name);
        if (k < 0 || k < first_frame) continue;
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    return removed;
}

/* Keep "FINAL.tmpPID" files of dead processes beside FINAL (the metrics
 * file's temporary names: a killed run's rows) as FINAL.killed-PID; best
 * effort. */
static void keep_dead_metrics_temps(const char *final)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    if (slash) {
        size_t n = (size_t)(slash - final);
        if (n >= sizeof dir) return;
        memcpy(dir, final, n);
        dir[n] = '\0';
        if (n == 0) snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp", 4) != 0) continue;
        const char *p = n + blen + 4;
        if (*p < '0' || *p > '9') continue;
        char *end;
        long pid = strtol(p, &end, 10);
        if (*end != '\0' || !pid_gone(pid)) continue;
        /* its rows are a killed run's only record: kept, beside FINAL, as
         * FINAL.killed-PID (issue 21: they were deleted) */
        char path[PATH_MAX + 300], kept[PATH_MAX + 340];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        snprintf(kept, sizeof kept, "%s/%s.killed-%ld", dir, base, pid);
        if (access(kept, F_OK) != 0) rename(path, kept);
    }
    closedir(d);
}

/* Append s to buf, in single quotes when the shell would read it otherwise. */
static void shell_word(char *buf, size_t n, const char *s)
{
    size_t used = strlen(buf);
    bool plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+%", *p))
            plain = false;
    if (plain) {
        snprintf(buf + used, n - used, "%s", s);
        return;
    }
    for (const char *p = s; *p && used + 5 < n; p++) {
        if (p == s) buf[used++] = '\'';
        if (*p == '\'') {
            memcpy(buf + used, "'\\''", 4);
            used += 4;
        } else {
            buf[used++] = *p;
        }
    }
    if (used + 1 < n) buf[used++] = '\'';
    buf[used] = '\0';
}

int export_video_hint(const Exporter *x, char *buf, size_t n)
{
    if (!x->dir || x->o.format == IMAGE_FORMAT_EXR || !x->count || n < 64) return -1;
    /* the frames are the smoke colour everywhere with the density in alpha,
     * and yuv420p has no alpha: composite over the background (straight
     * alpha premultiplied is smoke over black), pad to even sides (x264's
     * 4:2:0 needs them), then yuv420p. Without the compositing the video is
     * the smoke colour everywhere. */
    static const char pad[] = "pad=ceil(iw/2)*2:ceil(ih/2)*2,format=yuv420p";
    bool black = x->o.background[0] <= 0.0f && x->o.background[1] <= 0.0f &&
                 x->o.background[2] <= 0.0f;
    bool pre = x->o.alpha == IMAGE_ALPHA_PREMULTIPLIED;
    char pattern[4200], fps[32];
    snprintf(pattern, sizeof pattern, "%s/%s%%0%dd%s", x->dir, x->prefix, x->o.digits, x->suffix);
    snprintf(fps, sizeof fps, "%.6g", x->o.fps);
    snprintf(buf, n, "ffmpeg -framerate %s ", fps);
    size_t used = strlen(buf);
    /* image2 finds a first number only in 0..4 */
    if (x->first != 1) snprintf(buf + used, n - used, "-start_number %ld ", x->first);
    used = strlen(buf);
    snprintf(buf + used, n - used, "-i ");
    shell_word(buf, n, pattern);
    used = strlen(buf);
    if (black) {
        snprintf(buf + used, n - used, " -vf '%s%s'", pre ? "" : "premultiply=inplace=1,", pad);
    } else {
        /* the frames over a colour source already of even sides (an odd
         * one would lose a row to yuv420p) */
        int ow = (x->fw + 1) / 2 * 2, oh = (x->fh + 1) / 2 * 2;
        snprintf(buf + used, n - used,
                 " -f lavfi -i color=c=0x%02x%02x%02x:s=%dx%d:r=%s -filter_complex "
                 "'[1:v][0:v]overlay=shortest=1%s,format=yuv420p'",
                 byte_of(x->o.background[0]), byte_of(x->o.background[1]),
                 byte_of(x->o.background[2]), ow, oh, fps, pre ? ":alpha=premultiplied" : "");
    }
    used = strlen(buf);
    snprintf(buf + used, n - used, " -c:v libx264 smokemorph.mp4");
    return strlen(buf) + 1 >= n ? -1 : 0;
}

void export_close(Exporter *x)
{
    if (!x) return;
    export_cancel(x); /* frames still in flight are removed, not half-written */
    video_abandon(x);
    exporter_free(x);
}

float export_auto_scale(const float *start, const float *target, size_t n, bool mass_match)
{
    double ms = 0.0, mt = 0.0, ss = 0.0, st = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (start[k] > ms) ms = start[k];
        if (target[k] > mt) mt = target[k];
        ss += start[k];
        st += target[k];
    }
    if (mass_match && st > 0.0) mt *= ss / st;
    double top = ms > mt ? ms : mt;
    return top > 1.0 ? (float)(1.0 / top) : 1.0f;
}

/* ---- metrics ---------------------------------------------------------------- */

struct Metrics {
    char *path, *tmp; /* tmp NULL: written in place (a device or a pipe) */
    FILE *f;
    long good;        /* bytes of the header and the complete rows */
    int rows;         /* complete rows written */
    bool failed;      /* a row could not be written: why says why */
    char why[512];
};

Metrics *metrics_open(const char *path, char *err, size_t errlen)
{
    return metrics_open_header(path, "step,time,error,mass,max_div,key\n", err, errlen);
}

Metrics *metrics_open_header(const char *path, const char *header, char *err, size_t errlen)
{
    Metrics *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) goto oom;
    /* a directory would only fail at the rename, after the frames are written */
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s: is a directory", path);
        goto fail;
    }
    /* A device or a pipe (/dev/stdout, a fifo) is written in place: a rename
     * would replace it with a plain file. A symlink keeps pointing where it
     * did: the temporary file goes beside its target, which the rename
     * replaces. */
    const char *final = path;
    char real[PATH_MAX];
    bool special = exists && !S_ISREG(st.st_mode);
    if (!special && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real)) {
        free(m->path);
        if (!(m->path = strdup(real))) goto oom;
        final = m->path;
    }
    if (special) {
        m->f = fopen(path, "w");
    } else {
        keep_dead_metrics_temps(final); /* what a killed run left */
        size_t n = strlen(final) + 32;
        if (!(m->tmp = malloc(n))) goto oom;
        snprintf(m->tmp, n, "%s.tmp%ld", final, (long)getpid());
        /* never through a symlink planted at the temporary name */
        int fd = open(m->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 && !(m->f = fdopen(fd, "w"))) close(fd);
    }
    if (!m->f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        goto fail;
    }
    /* a full device fails here, before any frame is written */
    int hn = fprintf(m->f, "%s", header);
    m->good = hn;
    if (hn < 0 || fflush(m->f) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        fclose(m->f);
        if (m->tmp) unlink(m->tmp);
        goto fail;
    }
    return m;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    if (m) {
        free(m->path);
        free(m->tmp);
        free(m);
    }
    return NULL;
}

bool metrics_is_ours(const char *path, const char *header)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno == ENOENT; /* nothing there */
    struct stat st;
    bool ours = false;
    if (fstat(fd, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            ours = true; /* a device or a pipe is written in place; metrics_open refuses a folder */
        } else if (st.st_size == 0) {
            ours = true; /* nothing to lose */
        } else {
            /* smokemorph's: its first line is this header, or the plain one */
            static const char plain[] = "step,time,error,mass,max_div,key\n";
            char buf[1024];
            ssize_t n = read(fd, buf, sizeof buf - 1);
            buf[n > 0 ? n : 0] = '\0';
            ours = !strncmp(buf, header, strlen(header)) || !strncmp(buf, plain, sizeof plain - 1);
        }
    }
    close(fd);
    return ours;
}

/* Each row is flushed as it is written, so the file holds whole rows. A row
 * that cannot be written makes the Metrics failed: no further rows, and
 * metrics_close cuts the file back to the rows before it. */
int metrics_line(Metrics *m, const char *line)
{
    if (m->failed) return -1;
    errno = 0;
    int n = fprintf(m->f, "%s", line);
    if (n < 0 || fflush(m->f) != 0) {
        snprintf(m->why, sizeof m->why, "cannot write %s: %s", m->path,
                 strerror(errno ? errno : EIO));
        m->failed = true;
        return -1;
    }
    m->good += n;
    m->rows++;
    return 0;
}

int metrics_row(Metrics *m, long step, double time, double error, double mass, double max_div,
                int key)
{
    char line[192];
    snprintf(line, sizeof line, "%ld,%.6g,%.8g,%.8g,%.6g,%d\n", step, time, error, mass, max_div, key);
    return metrics_line(m, line);
}

const char *metrics_error(const Metrics *m) { return m->failed ? m->why : ""; }
int metrics_rows(const Metrics *m) { return m ? m->rows : 0; }

int metrics_close(Metrics *m, int keep, char *err, size_t errlen)
{
    if (!m) return 0;
    int rc = 0;
    if (m->failed) {
        /* reported by the caller already; keep the complete rows only */
        fclose(m->f);
        if (m->tmp && truncate(m->tmp, (off_t)m->good) < 0) {
            snprintf(err, errlen, "cannot write %s: %s", m->path, strerror(errno));
            rc = -1;
        }
    } else {
        if (ferror(m->f)) rc = -1;
        if (fclose(m->f) != 0) rc = -1;
        if (rc < 0) snprintf(err, errlen, "cannot write %s: %s", m->path, strerror(errno));
    }
    if (m->tmp && keep && rc == 0) {
        if (rename(m->tmp, m->path) < 0) {
            snprintf(err, errlen, "cannot write %s: %s", m->path, strerror(errno));
            rc = -1;
        }
    }
    if (m->tmp && (!keep || rc < 0)) unlink(m->tmp);
    free(m->path);
    free(m->tmp);
    free(m);
    return rc;
}

/* ---- progress ---------------------------------------------------------------- */

double export_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_begin(Progress *p, long total, int enabled)
{
    p->total = total;
    p->start = export_now();
    p->last_print = 0.0;
    p->tty = isatty(STDERR_FILENO);
    p->enabled = enabled && total > 0;
    p->json = 0;
    p->first = 0;
    p->frames = 0;
    p->in_flight = 0;
    p->frames_total = 0;
    p->frames_first = -1;
}

/* The seconds left: the steps' at their rate, or the frames' (those in
 * flight included) at theirs, whichever is later. */
static double progress_eta(const Progress *p, long done, double el, double *frate)
{
    long ran = done - p->first;
    double eta = ran > 0 ? el * (double)(p->total - done) / (double)ran : 0.0;
    long fdone = p->frames_first >= 0 ? p->frames - p->frames_first : 0;
    *frate = el > 0.0 ? (double)fdone / el : 0.0;
    if (p->frames_total > 0 && fdone > 0) {
        long left = p->frames_total - p->frames;
        double feta = left > 0 ? (double)left / *frate : 0.0;
        if (feta > eta) eta = feta;
    }
    return eta;
}

void progress_set_json(Progress *p, int json, long first)
{
    p->json = json;
    p->first = first;
}

/* One JSON line, through jansson (never printf'd JSON). */
static void progress_json(Progress *p, long done, double error, double now)
{
    double el = now - p->start, frate;
    double eta = progress_eta(p, done, el, &frate);
    json_t *o = json_pack("{s:s, s:I, s:I, s:i, s:i, s:f, s:f}", "event", "progress", "step",
                          (json_int_t)done, "total", (json_int_t)p->total, "frames", p->frames,
                          "in_flight", p->in_flight, "elapsed", el, "eta", eta);
    if (!o) return;
    json_object_set_new(o, "error", isfinite(error) ? json_real(error) : json_null());
    char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (line) {
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
    }
    free(line);
    json_decref(o);
}

void progress_update(Progress *p, long done, double error)
{
    if (!p->enabled) return;
    if (p->frames_first < 0) p->frames_first = p->frames;
    double now = export_now();
    if (p->json) {
        if (done < p->total && done != p->first + 1 && now - p->last_print < 1.0) return;
        p->last_print = now;
        progress_json(p, done, error, now);
        return;
    }
    double every = p->tty ? 0.1 : 5.0;
    if (done < p->total && now - p->last_print < every) return;
    p->last_print = now;
    double el = now - p->start, frate;
    long ran = done - p->first; /* a resumed run's steps, for the rate */
    double eta = progress_eta(p, done, el, &frate);
    double rate = el > 0.0 ? (double)ran / el : 0.0;
    char fr[96] = "";
    if (p->frames_total > 0)
        snprintf(fr, sizeof fr, p->tty ? "  %.1f frames/s (%d in flight)" : ", %.1f frames/s (%d in flight)",
                 frate, p->in_flight);
    if (p->tty) {
        int width = 30, fill = (int)((double)width * (double)done / (double)p->total);
        char bar[64];
        for (int k = 0; k < width; k++) bar[k] = k < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r[%s] %ld/%ld steps  %.0f steps/s%s  error %.4g  ETA %.0fs ", bar, done,
                p->total, rate, fr, error, eta);
    } else {
        fprintf(stderr, "smokemorph: step %ld/%ld (%.0f%%), %.0f steps/s%s, error %.4g, ETA %.0fs\n",
                done, p->total, 100.0 * (double)done / (double)p->total, rate, fr, error, eta);
    }
}

void progress_end(Progress *p)
{
    if (p->enabled && p->tty && !p->json) fputc('\n', stderr);
}
