/* image: float images on the CPU; PNG (libpng) and RAW load/save; resampling.
 * Never touches GL.
 *
 *   char err[256];
 *   ImageLoadOpts o = {0};                 // zero = defaults: luminance, no invert
 *   Image *im = image_load("cat.png", &o, err, sizeof err);
 *   if (!im) die("image", "%s", err);      // err: "cannot read cat.png: not a PNG file"
 *   Image *g = image_resample(im, 256, 256);  // area-average down, bilinear up, mass kept
 *   image_free(im);
 *
 * A loaded density image has channels == 1 and values in [0, 1]
 * (after --channel selection and --invert). Pixel (x, y) of channel c is
 * px[(y * w + x) * channels + c]; row 0 is the TOP row of the file.
 */
#ifndef SMOKEMORPH_IMAGE_H
#define SMOKEMORPH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int w, h, channels;
    float *px;
} Image;

typedef enum {
    IMAGE_CHANNEL_LUMA = 0, /* default: Rec.709 luminance of RGB (grey as is) */
    IMAGE_CHANNEL_R,
    IMAGE_CHANNEL_G,
    IMAGE_CHANNEL_B,
    IMAGE_CHANNEL_A
} ImageChannel;

typedef enum {
    IMAGE_RAW_U8 = 0, /* default */
    IMAGE_RAW_U16,    /* little-endian, scaled by 1/65535 */
    IMAGE_RAW_F32     /* little-endian IEEE float, taken as is */
} ImageRawType;

typedef struct {
    ImageChannel channel; /* which channel becomes density (PNG only) */
    bool invert;          /* density = 1 - value (f32 RAW: max - value) */
    bool raw;             /* treat the file as headerless RAW */
    int raw_w, raw_h;     /* RAW size, required when raw */
    ImageRawType raw_type;
    int max_mb;           /* decode memory budget in MiB (0: IMAGE_DEFAULT_MAX_MB) */
} ImageLoadOpts;

/* What a load saw besides the density, for input hints. */
typedef struct {
    int w, h;             /* the file's size */
    bool has_alpha;       /* an alpha channel (or a tRNS chunk) */
    bool transparent;     /* some pixel's alpha is below 1 */
} ImageInfo;

#define IMAGE_MAX_SIDE 16384
/* The largest density an f32 RAW sample may hold: beyond it (as with NaN,
 * infinity or a negative) the file is refused; the solver's products of
 * densities stay far from float's range. Denormals are flushed to 0. */
#define IMAGE_F32_MAX 1e6f
/* The decode memory budget's default: the float image plus libpng's row (or,
 * interlaced, whole-image) buffer. 16384² grey fits; a 16384² 16-bit RGBA
 * interlaced file (3 GiB) does not. */
#define IMAGE_DEFAULT_MAX_MB 2048
/* The largest ancillary chunk libpng may allocate (text chunks are skipped
 * unread, never allocated). */
#define IMAGE_CHUNK_MAX_BYTES (8u << 20)

/* Output file formats and how they store alpha (export, config). */
typedef enum {
    IMAGE_FORMAT_PNG8 = 0, /* default */
    IMAGE_FORMAT_PNG16,
    IMAGE_FORMAT_EXR
} ImageFormat;

typedef enum {
    IMAGE_ALPHA_STRAIGHT = 0, /* default for PNG; EXR is always premultiplied */
    IMAGE_ALPHA_PREMULTIPLIED
} ImageAlpha;

typedef enum { IMAGE_EXR_HALF = 0, IMAGE_EXR_FLOAT } ImageExrPixel;

typedef enum {
    IMAGE_EXR_ZIP = 0, /* default: lossless */
    IMAGE_EXR_PIZ,     /* lossless */
    IMAGE_EXR_DWAA,    /* lossy */
    IMAGE_EXR_NONE,
    IMAGE_EXR_ZIPS,    /* lossless, one line a chunk */
    IMAGE_EXR_RLE,     /* lossless */
    IMAGE_EXR_PXR24,   /* lossy for float (24 bits kept), lossless for half */
    IMAGE_EXR_B44,     /* lossy, half channels only (float stored as is) */
    IMAGE_EXR_COMPRESSION_COUNT
} ImageExrCompression;

/* libpng/zlib compression levels: 0 (none) .. 9 (smallest). The frames'
 * default is level 1 with one filter (SUB): docs/PERFORMANCE.md measured it
 * against libpng's own default (6, every filter tried on every row): 1.7x
 * (PNG8) and 2.6x (PNG16) less CPU at 2048², files 1.7x and 1.25x as large. */
#define IMAGE_PNG_LEVEL_MAX 9
#define IMAGE_PNG_LEVEL_DEFAULT 1

/* Largest side accepted; 0 < w, h <= IMAGE_MAX_SIDE. */
bool image_size_ok(int w, int h);

/* A zeroed image, or NULL (sizes out of range or out of memory). */
Image *image_create(int w, int h, int channels);
void image_free(Image *im);

/* Load a density image (channels == 1). On failure returns NULL and writes
 * one line to err naming the file and the problem, without the "image: " tag
 * (callers print "image: %s"). PNG samples are used as stored (no gamma
 * conversion, straight alpha): value = sample / (2^bits - 1). f32 RAW values
 * are taken as is (finite, 0..IMAGE_F32_MAX required, denormals flushed to
 * 0), so they may exceed 1. */
Image *image_load(const char *path, const ImageLoadOpts *opts, char *err, size_t errlen);

/* image_load, and what it saw in *info (info may be NULL). Hostile files:
 * text chunks (tEXt, zTXt, iTXt) and the other ancillary chunks that do not
 * affect the pixels are skipped without being allocated; an ancillary chunk
 * over IMAGE_CHUNK_MAX_BYTES is refused; an image whose decode needs more
 * than the budget (opts->max_mb) is refused from its header, before any
 * pixel memory is allocated. --channel a on a file without alpha is an
 * error. A file in another format (JPEG, GIF, BMP, TIFF, WebP, OpenEXR) is
 * named, with a hint to convert it. */
Image *image_load_info(const char *path, const ImageLoadOpts *opts, ImageInfo *info, char *err,
                       size_t errlen);

/* The same from n bytes in memory (the fuzzers' entry point); name stands for
 * the path in messages. */
Image *image_load_mem(const void *data, size_t n, const char *name, const ImageLoadOpts *opts,
                      ImageInfo *info, char *err, size_t errlen);

/* smokemorph's mark on the files it writes, so that a later run replaces or
 * removes only its own: a PNG's tEXt chunk "Software" and an EXR's string
 * attribute "software", each "smokemorph". */
#define IMAGE_TAG_PNG_KEY "Software"
#define IMAGE_TAG_EXR_ATTR "software"
#define IMAGE_TAG_VALUE "smokemorph"
/* Whether the file at path is a PNG or an EXR that carries the mark (only
 * its first 64 KiB are read: the mark comes before the pixels). A FIFO, a
 * device or a missing file is not. */
bool image_file_tagged(const char *path);
/* The same from n bytes in memory. */
bool image_mem_tagged(const void *data, size_t n);

/* Resample an image to w x h, the two axes independently: on an axis that
 * shrinks, area-averaging (each destination cell is the exact box-overlap
 * weighted mean of the source cells it covers); on an axis that enlarges (or
 * keeps its size), cell-centred bilinear with clamped edges. Each channel of
 * the result is then multiplied by one constant so that its MEAN equals the
 * source's: sum(dst)/(w*h) == sum(src)/(src->w*src->h) (to float rounding),
 * i.e. the total mass over the unit domain is kept (skipped when the result
 * sums to 0). A constant image stays constant. Any channel count 1..4;
 * density images have 1. Returns NULL on bad size / no memory. */
Image *image_resample(const Image *src, int w, int h);

/* The same sampling without the mean correction: for fields whose mean is
 * not a mass (a velocity, which may sum to about zero). */
Image *image_resample_plain(const Image *src, int w, int h);

/* The rows of image_resample(src, w, h) (keep_mean) or of
 * image_resample_plain (not), a few at a time and bit for bit the same,
 * holding a few source rows resampled across instead of the whole result
 * (a frame written in strips). image_rows_create makes every row once when
 * keep_mean, for the mean's factor; src must outlive it. Rows are cheapest
 * asked for top to bottom (any order works). NULL on bad size / no memory. */
typedef struct ImageRows ImageRows;
ImageRows *image_rows_create(const Image *src, int w, int h, bool keep_mean);
/* Rows y0..y0+n-1 (inside 0..h-1) into dst, n * w * channels floats. */
void image_rows_get(ImageRows *r, int y0, int n, float *dst);
/* What an ImageRows of these sizes holds, in bytes (for a memory budget). */
size_t image_rows_bytes(int src_w, int src_h, int w, int h, int channels);
void image_rows_free(ImageRows *r);

/* Sum of all samples of channel 0. */
double image_sum(const Image *im);

/* Write a PNG: channels 1 (grey) or 4 (RGBA, straight alpha), bits 8 or 16.
 * Values are clamped to [0, 1] (NaN -> 0) and rounded to nearest. Written to
 * "path.tmp.<pid>.<n>" in the same directory then renamed over path, so a
 * partial file never exists under path; on failure the temporary file is
 * removed. Returns 0 or -1 with err filled ("cannot write out/a.png: ..."). */
int image_save_png(const char *path, const Image *im, int bits, char *err, size_t errlen);

/* How image_save_png_ex writes. level: zlib's 0..9 (-1: zlib's default, 6);
 * temp non-NULL: the complete file is left at its temporary name, written
 * into temp, for the caller to rename (frames renamed in order) or unlink. */
typedef struct {
    int bits;       /* 8 or 16 */
    int level;      /* -1, or 0..IMAGE_PNG_LEVEL_MAX */
    char *temp;
    size_t templen;
} ImagePngOut;
int image_save_png_ex(const char *path, const Image *im, const ImagePngOut *o, char *err,
                      size_t errlen);

/* The same file written a few rows at a time (a frame in strips):
 * image_png_begin creates the temporary file and writes the header;
 * image_png_rows adds n rows (n * w * channels floats, top to bottom);
 * image_png_end, once all h rows are in, finishes the file and renames it
 * over path (or leaves it at o->temp), and frees s, on every path.
 * image_png_abort removes the temporary file and frees s. The bytes are
 * image_save_png_ex's. NULL / -1 with err filled. */
typedef struct ImagePngStream ImagePngStream;
ImagePngStream *image_png_begin(const char *path, int w, int h, int channels, const ImagePngOut *o,
                                char *err, size_t errlen);
int image_png_rows(ImagePngStream *s, const float *px, int n, char *err, size_t errlen);
int image_png_end(ImagePngStream *s, char *err, size_t errlen);
void image_png_abort(ImagePngStream *s);

/* Create "path.tmp.<pid>.<n>" exclusively (O_EXCL, O_CLOEXEC, mode 0666
 * less umask), the temporary name every writer renames over path; tmp gets
 * the name. Returns the fd, or -1 with errno set. */
int image_open_temp(const char *path, char *tmp, size_t tmplen);

/* Parse "WxH[:u8|u16|f32]" for --raw (u8 when the type is left out). On
 * success sets opts->raw, raw_w, raw_h, raw_type and returns 0; otherwise
 * returns -1, leaves opts alone and fills err (the message starts "--raw:"). */
int image_parse_raw_spec(const char *spec, ImageLoadOpts *opts, char *err, size_t errlen);

/* Parse "r|g|b|a|luma" for --channel (also red|green|blue|alpha|luminance).
 * Returns 0 or -1. */
int image_parse_channel(const char *s, ImageChannel *out);

/* An image named with its own load options, PATH:OPTIONS, OPTIONS a
 * comma-separated list of `invert`, `invert=1`, `invert=0` and
 * `channel=r|g|b|a|luma` ("logo.png:invert", "mask.png:channel=a,invert").
 * The part after the last ':' counts as options only when every item of it
 * parses; otherwise the whole of SPEC is the path ("shot:01.png" names a
 * file). An empty part ("odd:invert:") is no options, which names a file
 * whose own name ends in something that would parse. Copies the path into
 * PATH (N bytes) and applies the options on top of *OPTS (the run's or the
 * field's: --channel, --invert). Returns 1 when SPEC had options, 0 when
 * not (an empty part counts as options), -1 when the path does not fit
 * (PATH then "", *OPTS unchanged). */
int image_spec(const char *spec, char *path, size_t n, ImageLoadOpts *opts);

#endif
