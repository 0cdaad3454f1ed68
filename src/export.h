/* export: what a headless run leaves behind — numbered frames (PNG 8 or 16
 * bits, or OpenEXR), a video through ffmpeg, a metrics CSV, and a progress
 * line. Never touches GL (the caller reads the density back).
 *
 *   ExportOptions o = export_defaults();        // PNG8, frame_00001.png, ...
 *   o.dir = "out"; o.prefix = "smoke."; o.digits = 4; o.suffix = ".exr";
 *   o.format = IMAGE_FORMAT_EXR; o.frame_start = 1001;
 *   Exporter *x = export_create(&o, err, sizeof err);   // mkdir -p; ffmpeg started
 *   export_write(x, 1001, rho, vx, vy, 256, 256, err, sizeof err); // out/smoke.1001.exr
 *   export_finish(x, err, sizeof err);           // the video closed and renamed
 *   export_close(x);
 *
 * What a frame holds:
 *   alpha = clamp(density × density_scale, 0, 1) (export_auto_scale picks a
 *   scale so neither end of the morph is clipped);
 *   PNG: RGB = the smoke colour as given (sRGB), straight alpha by default,
 *   or premultiplied (RGB × alpha);
 *   EXR: premultiplied RGBA in linear light (the colour decoded from sRGB,
 *   Rec.709 primaries), plus density.FIELD, the raw density (unscaled,
 *   unclipped), and with velocity the velocity at the cell centres in
 *   output pixels per frame (velocity.x to the right, velocity.y down). The
 *   data window is cropped to where the density is above
 *   EXPORT_EXR_CROP_BELOW; the display window is the whole frame.
 * Several fields (export_write_fields), each with its colour c_i:
 *   a_i = clamp(ρ_i × density_scale, 0, 1), field i's alpha;
 *   A = 1 − Π(1 − a_i), the frame's alpha: the union of the fields'
 *   coverages, whatever their order (two half-covering smokes: 0.75);
 *   C = Σ a_i lin(c_i) / Σ a_i, the straight colour in linear light, the
 *   mean of the fields' colours weighted by their alphas (lin: sRGB
 *   decoded); PNG and video: C encoded to sRGB; EXR: C × A.
 *   Where at most one field has smoke, A and C are that field's a_i and
 *   c_i exactly (where none has, field 0's colour): one field gives the
 *   one-field frame, bit for bit. The EXR holds each field's raw density
 *   as density.NAME; its data window covers every field's smoke.
 * Each file is written under a temporary name and renamed, so a half frame
 * never exists; a video goes to FILE.tmp.<pid> and is renamed on success.
 *
 * Strips: a frame of more than EXPORT_STRIP_ABOVE pixels (2048 x 2048) is
 * made EXPORT_STRIP_ROWS (64) output rows at a time: the grid-sized planes
 * stay whole, each strip is resampled, composited and handed to libpng
 * (image_png_rows), OpenEXRCore (exr_stream_rows: the strip's chunks, in
 * parallel) and the video pipe, so a frame holds a strip's memory, not the
 * frame's (export_frame_bytes counts it). An EXR's data window takes a
 * pass of its own first. A frame in strips with a video is made in its
 * turn (its rows piped as they come). The files are byte for byte those of
 * the frame made whole.
 *
 * Writers (ExportOptions.threads > 0): export_write hands a copy of the
 * frame to a pool of threads and returns; the frames are resampled,
 * composited, compressed and written beside each other (an EXR's chunks
 * too), then committed one at a time in the order handed over: renamed into
 * place, piped to the video, counted. So frame N exists only once every
 * frame before it does, export_count is always a run of whole frames, and
 * after a failure (a full disk) the frames after the failed one are removed,
 * never renamed; export_write then returns -1 with the first failure. The
 * frames in flight hold at most max_flight_bytes (export_frame_bytes each;
 * one frame always goes): export_write waits for room. export_wait waits
 * for every frame; export_cancel drops them (those not renamed yet are
 * removed); export_close cancels. threads 0: each frame written by
 * export_write itself.
 */
#ifndef SMOKEMORPH_EXPORT_H
#define SMOKEMORPH_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "image.h"

/* EXR data window: a pixel counts as smoke when its density is above this
 * (far below anything a 16-bit alpha can show). */
#define EXPORT_EXR_CROP_BELOW 1e-7f

#define EXPORT_FIELDS_MAX 4

#define EXPORT_PNG_COMPRESSION_DEFAULT IMAGE_PNG_LEVEL_DEFAULT
/* Strips: a frame of more than EXPORT_STRIP_ABOVE pixels is resampled,
 * composited and encoded EXPORT_STRIP_ROWS output rows at a time, so its
 * memory is a strip's, not the frame's (the bytes are the same). */
#define EXPORT_STRIP_ROWS 64
#define EXPORT_STRIP_ABOVE (2048ULL * 2048ULL)
/* The frames in flight, when the options give no budget. */
#define EXPORT_FLIGHT_BYTES_DEFAULT ((size_t)2 << 30)

/* A smoke field as the frames show it. */
typedef struct {
    const char *name;              /* the EXR channel density.NAME */
    float rgb[3];                  /* its colour, sRGB */
} ExportField;

typedef struct {
    /* frames: DIR/PREFIX<number, at least DIGITS wide>SUFFIX; dir NULL: none */
    const char *dir;
    const char *prefix;            /* default "frame_" */
    int digits;                    /* 1..9, default 5 */
    const char *suffix;            /* default ".png" or ".exr" by format */
    ImageFormat format;            /* default PNG8 */
    long frame_start;              /* the first frame's number, default 1 */
    int out_w, out_h;              /* 0: the grid size of each frame */
    float rgb[3];                  /* the smoke colour (sRGB), default white */
    float density_scale;           /* alpha = density × this, > 0; default 1 */
    ImageAlpha alpha;              /* PNG and .mov: straight (default) or premultiplied */
    ImageExrPixel exr_pixel;       /* half (default) or float */
    ImageExrCompression exr_compression; /* zip (default) */
    bool exr_tiled;                /* EXR: 64x64 tiles instead of scanlines */
    /* frames in strips (export_strip_rows): 0: automatic, frames of more
     * than EXPORT_STRIP_ABOVE pixels in strips of EXPORT_STRIP_ROWS rows,
     * smaller ones whole; > 0: every frame in strips of this many rows; < 0:
     * every frame whole (--strip-rows, for the tests) */
    int strip_rows;
    int png_compression;           /* zlib level 0..9, EXPORT_PNG_COMPRESSION_DEFAULT */
    int threads;                   /* writer threads; 0: export_write writes itself */
    size_t max_flight_bytes;       /* frames in flight at most (0: EXPORT_FLIGHT_BYTES_DEFAULT) */
    const char *field;             /* the density channel: density.FIELD, default "smoke" */
    /* several fields (2..EXPORT_FIELDS_MAX; 0 or 1: the one of field and
     * rgb): each one's name (density.NAME, unique) and colour (sRGB) */
    int nfields;
    ExportField fields[EXPORT_FIELDS_MAX];
    bool velocity;                 /* EXR: velocity.x, velocity.y */
    double fps;                    /* frames per second, default 24 */
    double frame_time;             /* simulated time between frames, default 1 */
    /* video: FILE.mp4 (H.264 over background, yuv420p, even sides) or
     * FILE.mov (ProRes 4444 with alpha); NULL: none */
    const char *video;
    float background[3];           /* .mp4: under the smoke, default black */
} ExportOptions;

ExportOptions export_defaults(void);

typedef struct Exporter Exporter;

/* Checks the options, makes the frames directory (mkdir -p) and starts
 * ffmpeg for a video; NULL with one line in err ("ffmpeg is not
 * installed..."). Nothing is left behind when it fails. */
Exporter *export_create(const ExportOptions *o, char *err, size_t errlen);
/* PNG8 frames DIR/frame_00001.png, ... (export_defaults otherwise). */
Exporter *export_open(const char *dir, int out_w, int out_h, const float rgb[3], char *err,
                      size_t errlen);

/* Write frame NUMBER (< 0: the one after the last written, frame_start
 * first) from W*H densities and, for an EXR with velocity, the cell-centre
 * velocity vx, vy (domain units per unit time, as morph_read_velocity
 * gives; NULL: zero). Also pipes it to the video. 0 or -1. */
int export_write(Exporter *x, long number, const float *rho, const float *vx, const float *vy, int w,
                 int h, char *err, size_t errlen);
/* export_write of several fields (ExportOptions' nfields: rho[0..nfields-1],
 * W*H each), composited as the header says; export_write is this with one. */
int export_write_fields(Exporter *x, long number, const float *const *rho, const float *vx,
                        const float *vy, int w, int h, char *err, size_t errlen);
/* export_write of the next frame, density only. */
int export_frame(Exporter *x, const float *rho, int w, int h, char *err, size_t errlen);
/* One 8-bit frame of NF fields (alpha clamp(ρ_i), composited as the frames
 * are) as export_open's frames are written, to PATH (a headless --screenshot). */
int export_png_fields(const char *path, const float *const *rho, const ExportField *fields, int nf,
                      int w, int h, int out_w, int out_h, char *err, size_t errlen);

/* Without a copy (writers only): export_frame_alloc waits for room in the
 * budget and gives a block for the frame's planes (each field's W*H
 * densities, then with an EXR's velocity vx and vy), which
 * export_write_owned hands over (and takes: the caller never frees it).
 * NULL / -1 after a failure (export_error). */
float *export_frame_alloc(Exporter *x, int w, int h, char *err, size_t errlen);
int export_write_owned(Exporter *x, long number, float *planes, bool vel, int w, int h);
/* The writers' threads (NULL without): helpers may lend a hand (pool_for). */
typedef struct Pool Pool;
Pool *export_pool(Exporter *x);
/* Wait for every frame handed over; 0, or -1 with the first failure. */
int export_wait(Exporter *x, char *err, size_t errlen);
/* Drop the frames in flight: those not yet renamed are removed. */
void export_cancel(Exporter *x);
/* The first failure of a frame in flight, or "". */
const char *export_error(Exporter *x);
int export_in_flight(Exporter *x);       /* frames handed over, not yet committed */
long export_submitted(const Exporter *x); /* frames handed over */
int export_threads(const Exporter *x);   /* writer threads, 0 for none */
/* The memory a frame of a w x h grid holds while in flight. */
size_t export_frame_bytes(const Exporter *x, int w, int h);
size_t export_frame_bytes_for(const ExportOptions *o, int w, int h); /* before export_create */
/* What that memory is, for the budget's line: "a 64-row strip of a
 * 16384x16384 frame being written", or "a 512x512 frame being written". */
void export_frame_what(const ExportOptions *o, int w, int h, char *buf, size_t n);
/* The output rows of a strip for an ow x oh frame (a multiple of 64 for an
 * EXR, at most oh), or 0 when the frame is made whole. */
int export_strip_rows(const ExportOptions *o, int ow, int oh);
/* Seconds spent converting (resample, composite: convert), encoding
 * (convert, then compress and write the temporary file: encode) and
 * committing (rename, video: commit), summed over the threads. */
void export_times(Exporter *x, double *convert, double *encode, double *commit);

int export_count(const Exporter *x);      /* frames written */
long export_first(const Exporter *x);     /* numbers of the first and last written */
long export_last(const Exporter *x);
/* The path of frame NUMBER; 0, or -1 when it does not fit in N. */
int export_frame_path(const Exporter *x, long number, char *buf, size_t n);
/* Delete the files in the frames directory named by this exporter's pattern
 * and numbered past its last frame (an earlier, longer run's), so the
 * directory holds one run. Returns how many were deleted, or -1 when the
 * directory cannot be read. */
int export_remove_stale(Exporter *x);
/* Before a run removes or overwrites anything: every file named by this
 * exporter's pattern and numbered remove_from or later (what export_clean
 * would remove) or write_first..write_last (what the run will write over) is
 * passed to owned(path, name, ctx, err, errlen), which says whether the run
 * may replace it (smokemorph's own frame, or --overwrite), and when not
 * fills err. 0, or -1 at the first file that may not be touched (err as
 * owned filled it). A directory that does not exist holds nothing. */
typedef bool (*ExportOwned)(const char *path, const char *name, void *ctx, char *err, size_t errlen);
int export_check_way(Exporter *x, long remove_from, long write_first, long write_last,
                     ExportOwned owned, void *ctx, char *err, size_t errlen);
/* What earlier runs left in the directory, removed before this run writes:
 * every file named by this exporter's pattern and numbered first_frame or
 * later (0 for a new run: the directory then never mixes two runs, even
 * after a kill -9; INT_MAX for a --frame-range chunk, whose neighbours'
 * frames stay), and every temporary file "NAME.tmp.PID.N" whose process is
 * gone (a killed run's) and whose NAME is a frame of the pattern or a record
 * run*.json. Call export_check_way first: this removes without asking. Returns the frames removed (and the temporaries in
 * *temps when not NULL), or -1 when the directory cannot be read. */
int export_clean(Exporter *x, int first_frame, int *temps);
const char *export_dir(const Exporter *x); /* NULL: no frames */
/* The ffmpeg command that makes an H.264 video of the PNG frames written
 * (over the background, even sides, yuv420p) into buf; 0, or -1 when there
 * is none (no PNG frames). */
int export_video_hint(const Exporter *x, char *buf, size_t n);
/* A video of what a window shows (issue 24, --record): --video's .mp4
 * pipe (H.264, yuv420p, odd sides padded to even) fed w x h 8-bit RGB
 * frames, top row first, at fps. ffmpeg starts now (NULL with one line in
 * err when it cannot: "ffmpeg is not installed..."); the file is written as
 * FILE.tmp.PID and renamed into place by export_finish, so a half-written
 * video never exists: export_close without it, or a failed frame, leaves
 * no file. */
Exporter *export_video_open(const char *path, int w, int h, double fps, char *err, size_t errlen);
/* One frame (w * h * 3 bytes) down the pipe. 0, or -1 with ffmpeg's last
 * message in err (the file is then removed: export_close the exporter). */
int export_video_rgb(Exporter *x, const unsigned char *rgb, char *err, size_t errlen);
/* Frames piped to the video so far. */
long export_video_frames(const Exporter *x);
/* Close the video: wait for ffmpeg and rename its file into place. 0, or
 * -1 with one line in err (ffmpeg's own last message); then no video file is
 * left. Does nothing without a video. */
int export_finish(Exporter *x, char *err, size_t errlen);
/* Free; a video not finished is abandoned (ffmpeg stopped, its file removed). */
void export_close(Exporter *x);

/* The density scale that keeps both ends of a morph unclipped:
 * 1 / max(1, max(start), max(target after mass matching)); the target is
 * matched to the start's mass when mass_match. N cells each. */
float export_auto_scale(const float *start, const float *target, size_t n, bool mass_match);

/* Metrics CSV "step,time,error,mass,max_div,key" (key: the active key of a
 * sequence, from 1; error is against it), written to a temporary file
 * and renamed into place by metrics_close. A device or a pipe (/dev/stdout,
 * a fifo) is written in place instead; a symlink is followed, so it keeps
 * pointing at the new file. metrics_open keeps the temporaries
 * ("FILE.tmpPID") that killed runs left beside FILE, holding their rows, as
 * FILE.killed-PID. Every row is flushed
 * whole; after a row fails (a full disk), metrics_error says why in one line,
 * later rows are refused, and metrics_close keeps the complete rows only. */
typedef struct Metrics Metrics;
Metrics *metrics_open(const char *path, char *err, size_t errlen);
int metrics_row(Metrics *m, long step, double time, double error, double mass, double max_div,
                int key);
/* The same file with other columns (--compare's): the header's text, then
 * whole lines ("...\n") as rows, with the same temporary file and failure
 * rules. */
Metrics *metrics_open_header(const char *path, const char *header, char *err, size_t errlen);
int metrics_line(Metrics *m, const char *line);
/* Whether a run may replace what is at path with metrics of this header:
 * nothing, an empty file, smokemorph's own metrics (its first line this
 * header or metrics_open's), or a device or pipe (written in place). */
bool metrics_is_ours(const char *path, const char *header);
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
    int json;    /* progress_set_json */
    long first;  /* the step the run started from */
    int frames;  /* frames written so far: the caller keeps it current */
    int in_flight;      /* frames on their way (read back or with the writers): the caller's */
    long frames_total;  /* frames the run writes (0: none or unknown) */
    long frames_first;  /* frames at the first update (a resumed run's) */
} Progress;
void progress_begin(Progress *p, long total, int enabled);
/* The line shows steps/s and, with frames, frames/s; the ETA is the later
 * of the steps' and the frames' (the frames still to write, those in
 * flight included, at the frames' rate so far).
 * After progress_begin: with json, one JSON object a line, {"event":
 * "progress", "step", "total", "frames", "in_flight", "elapsed", "eta",
 * "error"}, at the
 * run's first step, then at most once a second, and at the last step.
 * first is the step a resumed run started from (for the rate and the ETA). */
void progress_set_json(Progress *p, int json, long first);
void progress_update(Progress *p, long done, double error);
void progress_end(Progress *p);
double export_now(void); /* monotonic seconds */

#endif
