/* export: what a headless run leaves behind — numbered RGBA frames, a
 * metrics CSV, and a progress line. Never touches GL (the caller reads the
 * density back).
 *
 *   Exporter *x = export_open("out", 512, 512, rgb, err, sizeof err); // mkdir -p
 *   export_frame(x, rho, 256, 256, err, sizeof err);  // out/frame_00001.png
 *   export_close(x);
 *
 * A frame is RGBA, 8-bit: colour = the smoke colour, alpha = density clamped
 * to [0, 1], straight (not premultiplied) alpha. Each file is written under a
 * temporary name and renamed, so a half frame never exists.
 */
#ifndef SMOKEMORPH_EXPORT_H
#define SMOKEMORPH_EXPORT_H

#include <stddef.h>
#include <stdio.h>

typedef struct Exporter Exporter;

/* out_w/out_h 0: the grid size of each frame. */
Exporter *export_open(const char *dir, int out_w, int out_h, const float rgb[3], char *err,
                      size_t errlen);
int export_frame(Exporter *x, const float *rho, int w, int h, char *err, size_t errlen);
int export_count(const Exporter *x);
/* One frame as export_frame writes it, to PATH (a headless --screenshot). */
int export_png(const char *path, const float *rho, int w, int h, int out_w, int out_h,
               const float rgb[3], char *err, size_t errlen);
/* Delete frame_NNNNN.png files in the directory numbered past this run's
 * last frame (an earlier, longer run's), so the directory holds one run.
 * Returns how many were deleted, or -1 when the directory cannot be read. */
int export_remove_stale(Exporter *x);
/* What earlier runs left in the directory, removed before this run writes:
 * every frame_NNNNN.png numbered first_frame or later (1 for a new run: the
 * directory then never mixes two runs, even after a kill -9), and every
 * temporary file "NAME.tmp.PID.N" whose process is gone (a killed run's).
 * Returns the frames removed (and the temporaries in *temps when not NULL),
 * or -1 when the directory cannot be read. */
int export_clean(Exporter *x, int first_frame, int *temps);
const char *export_dir(const Exporter *x);
void export_close(Exporter *x);

/* Metrics CSV "step,time,error,mass,max_div", written to a temporary file
 * and renamed into place by metrics_close. A device or a pipe (/dev/stdout,
 * a fifo) is written in place instead; a symlink is followed, so it keeps
 * pointing at the new file. metrics_open removes the temporaries
 * ("FILE.tmpPID") that killed runs left beside FILE. Every row is flushed
 * whole; after a row fails (a full disk), metrics_error says why in one line,
 * later rows are refused, and metrics_close keeps the complete rows only. */
typedef struct Metrics Metrics;
Metrics *metrics_open(const char *path, char *err, size_t errlen);
int metrics_row(Metrics *m, long step, double time, double error, double mass, double max_div);
/* "cannot write FILE: why" after a failed metrics_row, else "". */
const char *metrics_error(const Metrics *m);
/* Complete rows written so far (0 for NULL). */
int metrics_rows(const Metrics *m);
/* keep: 1 renames the file into place (after a failed row: its complete
 * rows), 0 discards it. Returns 0 or -1 with err filled (a failed row is not
 * reported again). */
int metrics_close(Metrics *m, int keep, char *err, size_t errlen);

/* Progress on stderr: a bar with ETA on a terminal, a plain line every few
 * seconds otherwise. */
typedef struct {
    long total;
    double start, last_print;
    int tty;
    int enabled;
} Progress;
void progress_begin(Progress *p, long total, int enabled);
void progress_update(Progress *p, long done, double error);
void progress_end(Progress *p);
double export_now(void); /* monotonic seconds */

#endif
