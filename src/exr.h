/* exr: OpenEXR output through OpenEXR's C library (OpenEXRCore), so the
 * build stays pure C. Never touches GL. One single-part scanline file of
 * named float planes:
 *
 *   ExrChannel ch[] = {{"A", a}, {"B", b}, {"G", g}, {"R", r},
 *                      {"density.smoke", rho}};      // planes W*H, row 0 at the top
 *   ExrWrite d = {.w = W, .h = H, .x0 = 10, .y0 = 4, .x1 = 60, .y1 = 40,
 *                 .channels = ch, .nchannels = 5,
 *                 .pixel = EXR_OUT_HALF, .compression = EXR_OUT_ZIP, .fps = 24};
 *   if (exr_write("out/smoke.0001.exr", &d, err, sizeof err) < 0) ...
 *
 * The display window is the whole W x H frame; the data window is
 * (x0, y0)-(x1, y1), inclusive, and only it is stored (each plane still
 * covers the whole frame). Written to a temporary name beside the file and
 * renamed into place (image_open_temp), so the file name only ever holds a
 * complete file.
 *
 * Chunks (a few scanlines, or a tile with .tiled) are packed and compressed
 * in parallel on .pool's workers when one is given (OpenEXRCore encodes
 * chunk by chunk; the chunks are then written in their order), so a single
 * huge frame uses every core. Safe to call from several threads at once.
 */
#ifndef SMOKEMORPH_EXR_H
#define SMOKEMORPH_EXR_H

#include <stdbool.h>
#include <stddef.h>

#include "image.h"
#include "pool.h"

typedef struct {
    const char *name;  /* "R", "density.smoke", "velocity.x", ... */
    const float *px;   /* W*H floats, row-major, row 0 at the top */
} ExrChannel;

typedef struct {
    int w, h;                        /* display window: the whole frame */
    int x0, y0, x1, y1;              /* data window, inclusive, inside the frame */
    const ExrChannel *channels;
    int nchannels;                   /* 1..16, names unique */
    ImageExrPixel pixel;             /* half (default) or float */
    ImageExrCompression compression; /* zip (default), piz, dwaa, none, zips, rle, pxr24, b44 */
    double fps;                      /* > 0: a framesPerSecond attribute */
    bool tiled;                      /* EXR_TILE_SIZE² tiles, one level, instead of scanlines */
    Pool *pool;                      /* NULL: the chunks on the calling thread */
    /* non-NULL: the complete file is left at its temporary name, written
     * here, for the caller to rename (or unlink) */
    char *temp;
    size_t templen;
} ExrWrite;

#define EXR_TILE_SIZE 64

/* The same file written a band of rows at a time (a frame in strips), so
 * only a band's planes exist at once: exr_stream_begin checks d (its
 * channels' px are not used), creates the temporary file and writes the
 * header; exr_stream_rows takes rows y..y+n-1 of every channel (ch: the
 * same names, any order; each px holds n rows of d->w floats, row y first)
 * and compresses (on d->pool) and writes every chunk that they complete.
 * A band must not end inside a chunk that it started: bands that start at
 * y0 + k * 64 always fit (a chunk is 1, 16 or 32 scanlines, or a 64-row
 * tile), and rows outside the data window are skipped. exr_stream_end,
 * once every chunk is written, finishes the file and renames it (or leaves
 * it at d->temp), and frees s on every path; exr_stream_abort removes the
 * temporary file and frees s. The bytes are exr_write's. */
typedef struct ExrStream ExrStream;
ExrStream *exr_stream_begin(const char *path, const ExrWrite *d, char *err, size_t errlen);
int exr_stream_rows(ExrStream *s, const ExrChannel *ch, int y, int n, char *err, size_t errlen);
int exr_stream_end(ExrStream *s, char *err, size_t errlen);
void exr_stream_abort(ExrStream *s);

/* Returns 0, or -1 with one line in err ("cannot write out/a.exr: ..."). */
int exr_write(const char *path, const ExrWrite *d, char *err, size_t errlen);

/* Whether this OpenEXRCore can write c: DWAA only from OpenEXR 3.2 on (3.1's
 * C library has no DWA encoder); the others from 3.1. */
bool exr_compression_available(ImageExrCompression c);
/* The library's version, "3.1.5". */
const char *exr_library_version(void);

/* "zip", "piz", "dwaa", "none", "zips", "rle", "pxr24", "b44" */
const char *exr_compression_name(ImageExrCompression c);
/* The compression called name, or -1. */
int exr_compression_parse(const char *name);

#endif
