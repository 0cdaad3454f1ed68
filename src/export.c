/* export: frames, metrics and progress; see export.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image.h"

struct Exporter {
    char *dir;
    int out_w, out_h;
    float rgb[3];
    int count;
};

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

Exporter *export_open(const char *dir, int out_w, int out_h, const float rgb[3], char *err,
                      size_t errlen)
{
    if (make_dirs(dir, err, errlen) < 0) return NULL;
    Exporter *x = calloc(1, sizeof *x);
    if (!x || !(x->dir = strdup(dir))) {
        free(x);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->out_w = out_w;
    x->out_h = out_h;
    memcpy(x->rgb, rgb, sizeof x->rgb);
    return x;
}

int export_frame(Exporter *x, const float *rho, int w, int h, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/frame_%05d.png", x->dir, x->count + 1);
    int rc = export_png(path, rho, w, h, x->out_w, x->out_h, x->rgb, err, errlen);
    if (rc == 0) x->count++;
    return rc;
}

int export_png(const char *path, const float *rho, int w, int h, int out_w, int out_h,
               const float rgb[3], char *err, size_t errlen)
{
    int ow = out_w ? out_w : w, oh = out_h ? out_h : h;
    Image src = {w, h, 1, (float *)rho};
    Image *scaled = NULL;
    const Image *a = &src;
    if (ow != w || oh != h) {
        if (!(scaled = image_resample(&src, ow, oh))) {
            snprintf(err, errlen, "out of memory resampling a frame to %dx%d", ow, oh);
            return -1;
        }
        a = scaled;
    }
    Image *out = image_create(ow, oh, 4);
    if (!out) {
        image_free(scaled);
        snprintf(err, errlen, "out of memory for a %dx%d frame", ow, oh);
        return -1;
    }
    size_t n = (size_t)ow * oh;
    for (size_t k = 0; k < n; k++) {
        float al = a->px[k];
        out->px[4 * k + 0] = rgb[0];
        out->px[4 * k + 1] = rgb[1];
        out->px[4 * k + 2] = rgb[2];
        out->px[4 * k + 3] = al < 0.0f ? 0.0f : (al > 1.0f ? 1.0f : al);
    }
    int rc = image_save_png(path, out, 8, err, errlen);
    image_free(out);
    image_free(scaled);
    return rc;
}

int export_count(const Exporter *x) { return x->count; }

int export_remove_stale(Exporter *x)
{
    DIR *d = opendir(x->dir);
    if (!d) return -1;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int k;
        char again[64];
        /* exactly our pattern, numbered past this run's last frame */
        if (sscanf(e->d_name, "frame_%d.png", &k) != 1 || k <= x->count) continue;
        snprintf(again, sizeof again, "frame_%05d.png", k);
        if (strcmp(again, e->d_name) != 0) continue;
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

int export_clean(Exporter *x, int first_frame, int *temps)
{
    DIR *d = opendir(x->dir);
    if (temps) *temps = 0;
    if (!d) return -1;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        long pid = frame_temp_pid(e->d_name);
        if (pid > 0) {
            if (pid_gone(pid) && unlink(path) == 0 && temps) (*temps)++;
            continue;
        }
        int k;
        char again[64];
        if (sscanf(e->d_name, "frame_%d.png", &k) != 1 || k < first_frame) continue;
        snprintf(again, sizeof again, "frame_%05d.png", k);
        if (strcmp(again, e->d_name) != 0) continue;
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    return removed;
}

/* Remove "FINAL.tmpPID" files of dead processes beside FINAL (the metrics
 * file's temporary names); best effort. */
static void remove_dead_metrics_temps(const char *final)
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
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        unlink(path);
    }
    closedir(d);
}

void export_close(Exporter *x)
{
    if (!x) return;
    free(x->dir);
    free(x);
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
        remove_dead_metrics_temps(final); /* what a killed run left */
        size_t n = strlen(final) + 32;
        if (!(m->tmp = malloc(n))) goto oom;
        snprintf(m->tmp, n, "%s.tmp%ld", final, (long)getpid());
        m->f = fopen(m->tmp, "w");
    }
    if (!m->f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        goto fail;
    }
    /* a full device fails here, before any frame is written */
    int hn = fprintf(m->f, "step,time,error,mass,max_div\n");
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

/* Each row is flushed as it is written, so the file holds whole rows. A row
 * that cannot be written makes the Metrics failed: no further rows, and
 * metrics_close cuts the file back to the rows before it. */
int metrics_row(Metrics *m, long step, double time, double error, double mass, double max_div)
{
    if (m->failed) return -1;
    errno = 0;
    int n = fprintf(m->f, "%ld,%.6g,%.8g,%.8g,%.6g\n", step, time, error, mass, max_div);
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
}

void progress_update(Progress *p, long done, double error)
{
    if (!p->enabled) return;
    double now = export_now();
    double every = p->tty ? 0.1 : 5.0;
    if (done < p->total && now - p->last_print < every) return;
    p->last_print = now;
    double el = now - p->start;
    double eta = done > 0 ? el * (double)(p->total - done) / (double)done : 0.0;
    double rate = el > 0.0 ? (double)done / el : 0.0;
    if (p->tty) {
        int width = 30, fill = (int)((double)width * (double)done / (double)p->total);
        char bar[64];
        for (int k = 0; k < width; k++) bar[k] = k < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r[%s] %ld/%ld steps  %.0f steps/s  error %.3f  ETA %.0fs ", bar, done,
                p->total, rate, error, eta);
    } else {
        fprintf(stderr, "smokemorph: step %ld/%ld (%.0f%%), %.0f steps/s, error %.3f, ETA %.0fs\n",
                done, p->total, 100.0 * (double)done / (double)p->total, rate, error, eta);
    }
}

void progress_end(Progress *p)
{
    if (p->enabled && p->tty) fputc('\n', stderr);
}
