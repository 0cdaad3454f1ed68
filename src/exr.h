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
 */
#ifndef SMOKEMORPH_EXR_H
#define SMOKEMORPH_EXR_H

#include <stdbool.h>
#include <stddef.h>

#include "image.h"

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
    ImageExrCompression compression; /* zip (default), piz, dwaa or none */
    double fps;                      /* > 0: a framesPerSecond attribute */
} ExrWrite;

/* Returns 0, or -1 with one line in err ("cannot write out/a.exr: ..."). */
int exr_write(const char *path, const ExrWrite *d, char *err, size_t errlen);

/* Whether this OpenEXRCore can write c: DWAA only from OpenEXR 3.2 on (3.1's
 * C library has no DWA encoder). */
bool exr_compression_available(ImageExrCompression c);
/* The library's version, "3.1.5". */
const char *exr_library_version(void);

/* "zip", "piz", "dwaa", "none" */
const char *exr_compression_name(ImageExrCompression c);

#endif
