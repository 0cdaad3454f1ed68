/* image: float images on the CPU; PNG (libpng) and RAW load/save; resampling.
 * See image.h. Never touches GL.
 *
 * Choices, and why:
 *
 * - PNG goes through libpng's LOW-LEVEL API, not the simplified png_image one
 *   (DESIGN.md rule 13 allows this where a feature needs it). The simplified
 *   API treats 8-bit data as sRGB and 16-bit data as linear and converts
 *   between them on request; its 16-bit ("linear") formats with alpha are
 *   premultiplied, and its 8-bit formats would lose the low byte of 16-bit
 *   files. We want the samples exactly as stored, so we ask libpng only for
 *   png_set_expand (palette -> RGB, grey 1/2/4 -> 8 bits by bit replication,
 *   tRNS -> alpha) and never for any gamma, sRGB, iCCP or background handling.
 *   A stored sample s of bit depth b becomes s / (2^b - 1): 1-bit 1 -> 1.0,
 *   4-bit 5 -> 5/15, 16-bit 1234 -> 1234/65535, exactly as stored.
 * - Density = Rec.709 luminance 0.2126 R + 0.7152 G + 0.0722 B of the stored
 *   (not linearised) values; grey is taken as is; a palette entry is looked up
 *   first. ImageLoadOpts.channel picks r, g or b instead (for grey images
 *   each is the grey value), or a (alpha; a file without alpha is refused:
 *   its alpha would be 1 everywhere, a uniform density).
 * - Alpha is straight: colour values are used as stored, never premultiplied
 *   or composited over a background.
 * - invert: density = 1 - value; for f32 RAW, max - value (max over the image).
 * - The reader is strict: the whole file is read through IEND (png_read_end),
 *   so a file cut anywhere, a bad CRC in a critical chunk, or damaged zlib data
 *   fails the load. Ancillary-chunk problems stay libpng warnings.
 * - libpng reports errors through longjmp; every libpng call sits in a small
 *   function whose setjmp state lives in a struct owned by the caller, which
 *   frees everything on every path (no volatile locals needed).
 * - RAW is headerless, little-endian, read byte by byte (portable to any host
 *   byte order). Its length must be exactly W*H*S.
 * - Saving writes "path.tmp.<pid>.<n>" (O_EXCL, mode 0666 less umask), then
 *   rename()s it over path, so path only ever holds a complete file.
 * - Hostile files (issue 10): text and other pixel-free ancillary chunks are
 *   discarded as unknown chunks, which libpng skips without allocating them
 *   (a 44-byte file whose tEXt chunk claims 2^31-1 bytes had libpng allocate
 *   and zero 2.1 GB); other ancillary chunks are capped at
 *   IMAGE_CHUNK_MAX_BYTES; and the decode's memory (the float image plus
 *   libpng's row, or whole-image buffer when interlaced) is checked against
 *   the budget from IHDR, before anything the size of the image is allocated.
 */
#include "image.h"

#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt,
                                                          ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* one line, whatever a path or libpng's message holds */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

/* Lowercase a message's first letter in place ("Invalid ..." -> "invalid ..."),
 * unless it starts an acronym or a chunk name ("IDAT: ..."). */
static const char *lower_first(char *s)
{
    if (s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z') s[0] += 'a' - 'A';
    return s;
}

/* strerror() in the project's message style: lowercase first letter. */
static void errno_text(int e, char *buf, size_t n)
{
    snprintf(buf, n, "%s", strerror(e));
    lower_first(buf);
}

bool image_size_ok(int w, int h)
{
    return w > 0 && h > 0 && w <= IMAGE_MAX_SIDE && h <= IMAGE_MAX_SIDE;
}

Image *image_create(int w, int h, int channels)
{
    if (!image_size_ok(w, h) || channels < 1 || channels > 4) return NULL;
    size_t n = (size_t)w * (size_t)h;
    if (n > SIZE_MAX / (size_t)channels / sizeof(float)) return NULL;
    n *= (size_t)channels;
    Image *im = malloc(sizeof *im);
    if (!im) return NULL;
    im->px = calloc(n, sizeof(float));
    if (!im->px) {
        free(im);
        return NULL;
    }
    im->w = w;
    im->h = h;
    im->channels = channels;
    return im;
}

void image_free(Image *im)
{
    if (!im) return;
    free(im->px);
    free(im);
}

double image_sum(const Image *im)
{
    if (!im || !im->px) return 0.0;
    double s = 0.0;
    size_t n = (size_t)im->w * (size_t)im->h;
    for (size_t i = 0; i < n; i++) s += im->px[i * (size_t)im->channels];
    return s;
}

/* Open path for reading and make sure it is a regular file. Returns the
 * stream, or NULL with err filled ("cannot read X: ..."). size gets st_size. */
static FILE *open_regular(const char *path, long long *size, char *err, size_t errlen)
{
    char why[128];
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before the
     * check below refuses it; cleared again for the reads */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot read %s: %s", path, why);
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        set_err(err, errlen, "cannot read %s: %s", path,
                S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot read %s: %s", path, why);
        close(fd);
        return NULL;
    }
    *size = (long long)st.st_size;
    return f;
}

/* ---- density from samples ----------------------------------------------- */

/* One pixel's density from its channels (already scaled to [0,1]);
 * nch is 1 (grey), 2 (grey+alpha), 3 (RGB) or 4 (RGBA). */
static double pick_channel(const double *c, int nch, ImageChannel ch)
{
    bool colour = nch >= 3;
    switch (ch) {
    case IMAGE_CHANNEL_R: return c[0];
    case IMAGE_CHANNEL_G: return colour ? c[1] : c[0];
    case IMAGE_CHANNEL_B: return colour ? c[2] : c[0];
    case IMAGE_CHANNEL_A: return (nch == 2 || nch == 4) ? c[nch - 1] : 1.0;
    case IMAGE_CHANNEL_LUMA:
    default: return colour ? 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] : c[0];
    }
}

/* Convert one row of 8- or 16-bit (big-endian, as libpng gives it) samples. */
static void convert_row(const unsigned char *row, int w, int nch, int bits, const ImageLoadOpts *o,
                        float *out, bool *transparent)
{
    double c[4];
    for (int x = 0; x < w; x++) {
        for (int k = 0; k < nch; k++) {
            if (bits == 16) {
                const unsigned char *p = row + ((size_t)x * nch + k) * 2;
                c[k] = (double)((unsigned)p[0] << 8 | p[1]) / 65535.0;
            } else {
                c[k] = (double)row[(size_t)x * nch + k] / 255.0;
            }
        }
        if ((nch == 2 || nch == 4) && c[nch - 1] < 1.0) *transparent = true;
        double v = pick_channel(c, nch, o->channel);
        if (o->invert) v = 1.0 - v;
        out[x] = (float)v;
    }
}

/* ---- PNG reading -------------------------------------------------------- */

typedef enum { PR_LIB = 0, PR_EOF, PR_IO, PR_NOMEM, PR_SIZE, PR_FORMAT, PR_BUDGET, PR_NOALPHA } PngReadFail;

typedef struct {
    FILE *f;
    png_structp png;
    png_infop info;
    unsigned char *buf;     /* one row, or the whole image when interlaced */
    png_bytep *rows;        /* row pointers into buf when interlaced */
    Image *im;
    PngReadFail fail;
    int io_errno;
    png_uint_32 w, h;       /* for PR_SIZE and PR_BUDGET */
    unsigned long long need_mb; /* for PR_BUDGET */
    int bits, nch, interlaced; /* for PR_BUDGET and PR_NOALPHA */
    ImageInfo seen;
    char msg[160];          /* libpng's error message */
    char warn[160];         /* libpng's last warning */
    jmp_buf jb;
} PngRead;

static void rd_error(png_structp png, png_const_charp msg)
{
    PngRead *r = png_get_error_ptr(png);
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "unknown error");
    longjmp(r->jb, 1);
}

static void rd_warning(png_structp png, png_const_charp msg)
{
    PngRead *r = png_get_error_ptr(png);
    snprintf(r->warn, sizeof r->warn, "%s", msg ? msg : "");
}

static void rd_data(png_structp png, png_bytep data, size_t n)
{
    PngRead *r = png_get_io_ptr(png);
    if (fread(data, 1, n, r->f) == n) return;
    if (ferror(r->f)) {
        r->fail = PR_IO;
        r->io_errno = errno;
    } else {
        r->fail = PR_EOF;
    }
    png_error(png, "read failed");
}

/* rd_body's first stage: libpng's input, limits and chunk policy, then the header. */
static void rd_start(PngRead *r)
{
    png_set_read_fn(r->png, r, rd_data);
    png_set_sig_bytes(r->png, 8);
    /* we check the size ourselves, with our own message */
    png_set_user_limits(r->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    /* hostile files: no chunk that does not change the pixels is kept; an
     * unknown or discarded chunk is skipped unread, never allocated */
    static const png_byte skip[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0eXIf\0pCAL\0sCAL\0hIST\0tIME\0";
    png_set_keep_unknown_chunks(r->png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(r->png, PNG_HANDLE_CHUNK_NEVER, skip, (int)(sizeof skip / 5));
    png_set_chunk_malloc_max(r->png, IMAGE_CHUNK_MAX_BYTES);
    png_read_info(r->png, r->info);
}

/* rd_body's second stage: the size, the pixel format and the budget, from the header;
 * sets *rowbytes and *passes. Returns 0, or -1 with r->fail set. */
static int rd_shape(PngRead *r, const ImageLoadOpts *o, size_t *rowbytes_out, int *passes_out)
{
    png_uint_32 w = png_get_image_width(r->png, r->info);
    png_uint_32 h = png_get_image_height(r->png, r->info);
    if (w == 0 || h == 0 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
        r->fail = PR_SIZE;
        r->w = w;
        r->h = h;
        return -1;
    }

    png_set_expand(r->png); /* palette -> RGB, grey 1/2/4 -> 8, tRNS -> alpha */
    int passes = png_set_interlace_handling(r->png);
    png_read_update_info(r->png, r->info);

    int nch = png_get_channels(r->png, r->info);
    int bits = png_get_bit_depth(r->png, r->info);
    size_t rowbytes = png_get_rowbytes(r->png, r->info);
    if (nch < 1 || nch > 4 || (bits != 8 && bits != 16) ||
        rowbytes != (size_t)w * (size_t)nch * (size_t)(bits / 8)) {
        r->fail = PR_FORMAT;
        return -1;
    }
    r->seen.w = (int)w;
    r->seen.h = (int)h;
    r->seen.has_alpha = nch == 2 || nch == 4;
    r->nch = nch;
    r->bits = bits;
    r->interlaced = passes > 1;
    if (o->channel == IMAGE_CHANNEL_A && !r->seen.has_alpha) {
        r->fail = PR_NOALPHA;
        return -1;
    }
    /* the budget, from the header: the floats, and libpng's buffer */
    unsigned long long need = (unsigned long long)w * h * sizeof(float) +
                              (passes > 1 ? (unsigned long long)rowbytes * h + sizeof(png_bytep) * h
                                          : rowbytes);
    unsigned long long budget = (unsigned long long)(o->max_mb > 0 ? o->max_mb : IMAGE_DEFAULT_MAX_MB)
                                << 20;
    if (need > budget) {
        r->fail = PR_BUDGET;
        r->w = w;
        r->h = h;
        r->need_mb = (need + (1u << 20) - 1) >> 20;
        return -1;
    }
    *rowbytes_out = rowbytes;
    *passes_out = passes;
    return 0;
}

/* rd_body's third stage: the pixels into r->im, a row at a time, or the whole image
 * when interlaced. Returns 0, or -1 with r->fail set. */
static int rd_pixels(PngRead *r, const ImageLoadOpts *o, size_t rowbytes, int passes)
{
    png_uint_32 w = (png_uint_32)r->seen.w, h = (png_uint_32)r->seen.h;
    int nch = r->nch, bits = r->bits;
    r->im = image_create((int)w, (int)h, 1);
    if (!r->im) {
        r->fail = PR_NOMEM;
        return -1;
    }

    if (passes > 1) {
        /* interlaced: libpng needs the whole image to combine the passes */
        if (rowbytes > SIZE_MAX / h) {
            r->fail = PR_NOMEM;
            return -1;
        }
        r->buf = malloc(rowbytes * h);
        r->rows = malloc(sizeof *r->rows * h);
        if (!r->buf || !r->rows) {
            r->fail = PR_NOMEM;
            return -1;
        }
        for (png_uint_32 y = 0; y < h; y++) r->rows[y] = r->buf + rowbytes * y;
        png_read_image(r->png, r->rows);
        for (png_uint_32 y = 0; y < h; y++)
            convert_row(r->rows[y], (int)w, nch, bits, o, r->im->px + (size_t)y * w,
                        &r->seen.transparent);
    } else {
        r->buf = malloc(rowbytes);
        if (!r->buf) {
            r->fail = PR_NOMEM;
            return -1;
        }
        for (png_uint_32 y = 0; y < h; y++) {
            png_read_row(r->png, r->buf, NULL);
            convert_row(r->buf, (int)w, nch, bits, o, r->im->px + (size_t)y * w,
                        &r->seen.transparent);
        }
    }
    return 0;
}

/* Every libpng call of a load; returns 0, or -1 with r->fail (and r->msg) set.
 * Owns nothing: whatever it allocates hangs off r for the caller to free.
 * The stages may longjmp (libpng's errors) back to this frame's setjmp. */
static int rd_body(PngRead *r, const ImageLoadOpts *o)
{
    if (setjmp(r->jb)) return -1;

    rd_start(r);
    size_t rowbytes = 0;
    int passes = 0;
    if (rd_shape(r, o, &rowbytes, &passes) < 0) return -1;
    if (rd_pixels(r, o, rowbytes, passes) < 0) return -1;
    /* read through IEND: a file cut after the pixels is still truncated */
    png_read_end(r->png, NULL);
    return 0;
}

/* The format of a file that is not a PNG, from its first bytes, or NULL. */
static const char *other_format(const unsigned char *b, size_t n)
{
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return "JPEG";
    if (n >= 4 && memcmp(b, "GIF8", 4) == 0) return "GIF";
    if (n >= 2 && memcmp(b, "BM", 2) == 0) return "BMP";
    if (n >= 4 && (memcmp(b, "II*\0", 4) == 0 || memcmp(b, "MM\0*", 4) == 0)) return "TIFF";
    if (n >= 4 && memcmp(b, "RIFF", 4) == 0) return "WebP (or another RIFF)";
    if (n >= 4 && b[0] == 0x76 && b[1] == 0x2f && b[2] == 0x31 && b[3] == 0x01) return "OpenEXR";
    if (n >= 4 && (memcmp(b, "\0\0\0\x0cjP", 4) == 0 || memcmp(b, "\xff\x4f\xff\x51", 4) == 0))
        return "JPEG 2000";
    if (n >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') return "PNM";
    if (n >= 8 && memcmp(b + 4, "ftyp", 4) == 0) return "HEIF/AVIF";
    return NULL;
}

/* load_png's first stage: the 8 signature bytes; 0, or -1 with err set. */
static int check_png_sig(const char *path, FILE *f, char *err, size_t errlen)
{
    unsigned char sig[8];
    size_t n = fread(sig, 1, sizeof sig, f);
    if (n == 0 && ferror(f)) {
        char why[128];
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot read %s: %s", path, why);
        return -1;
    }
    if (n == 0) {
        set_err(err, errlen, "cannot read %s: empty file", path);
        return -1;
    }
    if (png_sig_cmp(sig, 0, n) != 0) {
        const char *fmt = other_format(sig, n);
        if (fmt)
            set_err(err, errlen, "cannot read %s: not a PNG file but %s; convert it to PNG first "
                    "(e.g. 'convert %s out.png' with ImageMagick)", path, fmt, path);
        else
            set_err(err, errlen, "cannot read %s: not a PNG file", path);
        return -1;
    }
    if (n < sizeof sig) {
        set_err(err, errlen, "cannot read %s: truncated PNG file", path);
        return -1;
    }
    return 0;
}

/* load_png's message for a failed rd_body, from r->fail. */
static void say_png_fail(PngRead *r, const char *path, const ImageLoadOpts *o, char *err,
                         size_t errlen)
{
    char why[128];
    switch (r->fail) {
    case PR_EOF: set_err(err, errlen, "cannot read %s: truncated PNG file", path); break;
    case PR_IO:
        errno_text(r->io_errno, why, sizeof why);
        set_err(err, errlen, "cannot read %s: %s", path, why);
        break;
    case PR_NOMEM: set_err(err, errlen, "cannot read %s: out of memory", path); break;
    case PR_SIZE:
        set_err(err, errlen,
                "cannot read %s: image size %lux%lu is out of range (1 to %d a side)", path,
                (unsigned long)r->w, (unsigned long)r->h, IMAGE_MAX_SIDE);
        break;
    case PR_FORMAT:
        set_err(err, errlen, "cannot read %s: unsupported PNG pixel format", path);
        break;
    case PR_BUDGET:
        set_err(err, errlen,
                "cannot read %s: decoding its %lux%lu %d-bit %d-channel%s pixels needs %llu "
                "MiB, over the %d MiB limit (--max-image-mb raises it)", path,
                (unsigned long)r->w, (unsigned long)r->h, r->bits, r->nch,
                r->interlaced ? " interlaced" : "", r->need_mb,
                o->max_mb > 0 ? o->max_mb : IMAGE_DEFAULT_MAX_MB);
        break;
    case PR_NOALPHA:
        set_err(err, errlen, "cannot read %s: --channel a, but the image has no alpha channel "
                "(it is %s); to take the alpha of one image only, give that one as "
                "IMAGE:channel=a", path, r->nch == 1 ? "grey" : "RGB");
        break;
    case PR_LIB:
    default:
        if (strstr(r->msg, "emory")) /* libpng's "Out of memory" and kin */
            set_err(err, errlen, "cannot read %s: out of memory", path);
        else if (r->warn[0] && strstr(r->msg, "IHDR")) /* the warning says what is wrong */
            set_err(err, errlen, "cannot read %s: corrupt PNG file (%s)", path,
                    lower_first(r->warn));
        else
            set_err(err, errlen, "cannot read %s: corrupt PNG file (%s)", path,
                    lower_first(r->msg));
        break;
    }
}

static Image *load_png(const char *path, FILE *f, const ImageLoadOpts *o, ImageInfo *info,
                       char *err, size_t errlen)
{
    if (check_png_sig(path, f, err, errlen) < 0) return NULL;

    PngRead r;
    memset(&r, 0, sizeof r);
    r.f = f;
    Image *out = NULL;
    r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, rd_error, rd_warning);
    if (!r.png) {
        set_err(err, errlen, "cannot read %s: out of memory", path);
        goto out;
    }
    r.info = png_create_info_struct(r.png);
    if (!r.info) {
        set_err(err, errlen, "cannot read %s: out of memory", path);
        goto destroy_png;
    }

    if (rd_body(&r, o) < 0) {
        say_png_fail(&r, path, o, err, errlen);
        image_free(r.im);
        r.im = NULL;
        goto free_buffers;
    }
    out = r.im;
    r.im = NULL;
    if (info) *info = r.seen;

free_buffers:
    free(r.rows);
    free(r.buf);
destroy_png:
    png_destroy_read_struct(&r.png, r.info ? &r.info : NULL, NULL);
out:
    return out;
}

/* ---- RAW reading -------------------------------------------------------- */

static Image *load_raw(const char *path, FILE *f, long long fsize, const ImageLoadOpts *o, char *err,
                       size_t errlen)
{
    int w = o->raw_w, h = o->raw_h;
    size_t ss = o->raw_type == IMAGE_RAW_U16 ? 2 : o->raw_type == IMAGE_RAW_F32 ? 4 : 1;
    unsigned long long expect = (unsigned long long)w * (unsigned long long)h * ss;
    if (fsize < 0 || (unsigned long long)fsize != expect) {
        set_err(err, errlen, "cannot read %s: RAW file is %lld bytes, expected %d×%d×%zu = %llu", path,
                fsize, w, h, ss, expect);
        return NULL;
    }

    unsigned long long need = (unsigned long long)w * h * sizeof(float) + (unsigned long long)w * ss;
    int mb = o->max_mb > 0 ? o->max_mb : IMAGE_DEFAULT_MAX_MB;
    if (need > (unsigned long long)mb << 20) {
        set_err(err, errlen, "cannot read %s: decoding its %dx%d samples needs %llu MiB, over the "
                "%d MiB limit (--max-image-mb raises it)", path, w, h, (need + (1u << 20) - 1) >> 20,
                mb);
        return NULL;
    }
    Image *im = image_create(w, h, 1);
    unsigned char *row = malloc((size_t)w * ss);
    if (!im || !row) {
        set_err(err, errlen, "cannot read %s: out of memory", path);
        goto fail;
    }
    float vmax = 0.0f;
    for (int y = 0; y < h; y++) {
        if (fread(row, ss, (size_t)w, f) != (size_t)w) {
            if (ferror(f)) {
                char why[128];
                errno_text(errno, why, sizeof why);
                set_err(err, errlen, "cannot read %s: %s", path, why);
            } else {
                set_err(err, errlen, "cannot read %s: unexpected end of file", path);
            }
            goto fail;
        }
        float *out = im->px + (size_t)y * (size_t)w;
        for (int x = 0; x < w; x++) {
            const unsigned char *p = row + (size_t)x * ss;
            if (o->raw_type == IMAGE_RAW_U16) {
                double v = (double)((unsigned)p[0] | (unsigned)p[1] << 8) / 65535.0;
                out[x] = (float)(o->invert ? 1.0 - v : v);
            } else if (o->raw_type == IMAGE_RAW_F32) {
                uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24;
                float v;
                memcpy(&v, &u, sizeof v);
                if (!isfinite(v) || v < 0.0f || v > IMAGE_F32_MAX) {
                    set_err(err, errlen, "cannot read %s: RAW f32 sample at (%d, %d) is %s", path,
                            x, y, isnan(v) ? "NaN" : isinf(v) ? "infinite" : v < 0.0f ? "negative" :
                            "above the largest density accepted (1e6)");
                    goto fail;
                }
                /* a denormal (below FLT_MIN) is flushed to 0: the solver
                 * cannot carry such a density (it would be gone in a step) */
                if (v < FLT_MIN) v = 0.0f; /* also -0 -> +0 */
                out[x] = v;
                if (v > vmax) vmax = v;
            } else {
                double v = (double)p[0] / 255.0;
                out[x] = (float)(o->invert ? 1.0 - v : v);
            }
        }
    }
    if (o->invert && o->raw_type == IMAGE_RAW_F32) {
        size_t n = (size_t)w * (size_t)h;
        for (size_t i = 0; i < n; i++) im->px[i] = vmax - im->px[i];
    }
    free(row);
    return im;

fail:
    free(row);
    image_free(im);
    return NULL;
}

/* The checks of the options every load makes; 0 or -1 with err filled. */
static int check_opts(const char *path, const ImageLoadOpts *o, char *err, size_t errlen)
{
    if (o->channel < IMAGE_CHANNEL_LUMA || o->channel > IMAGE_CHANNEL_A) {
        set_err(err, errlen, "cannot read %s: unknown channel %d", path, (int)o->channel);
        return -1;
    }
    if (o->max_mb < 0) {
        set_err(err, errlen, "cannot read %s: negative memory budget %d MiB", path, o->max_mb);
        return -1;
    }
    if (o->raw) {
        if (!image_size_ok(o->raw_w, o->raw_h)) {
            set_err(err, errlen, "cannot read %s: RAW size %dx%d is out of range (1 to %d a side)",
                    path, o->raw_w, o->raw_h, IMAGE_MAX_SIDE);
            return -1;
        }
        if (o->raw_type != IMAGE_RAW_U8 && o->raw_type != IMAGE_RAW_U16 &&
            o->raw_type != IMAGE_RAW_F32) {
            set_err(err, errlen, "cannot read %s: unknown RAW sample type %d", path, (int)o->raw_type);
            return -1;
        }
        if (o->channel == IMAGE_CHANNEL_A) {
            set_err(err, errlen, "cannot read %s: --channel a, but a RAW file has no alpha channel",
                    path);
            return -1;
        }
    }
    return 0;
}

/* A loaded file's density; f may be NULL only when fsize is 0 (for a PNG,
 * fsize only tells an empty buffer: the reader finds the end itself). */
static Image *load_stream(const char *path, FILE *f, long long fsize, const ImageLoadOpts *o,
                          ImageInfo *info, char *err, size_t errlen)
{
    if (o->raw) {
        Image *im = load_raw(path, f, fsize, o, err, errlen);
        if (im && info) *info = (ImageInfo){.w = im->w, .h = im->h};
        return im;
    }
    if (!f || fsize == 0) {
        set_err(err, errlen, "cannot read %s: empty file", path);
        return NULL;
    }
    return load_png(path, f, o, info, err, errlen);
}

Image *image_load_info(const char *path, const ImageLoadOpts *opts, ImageInfo *info, char *err,
                       size_t errlen)
{
    static const ImageLoadOpts defaults = {0};
    const ImageLoadOpts *o = opts ? opts : &defaults;
    if (info) memset(info, 0, sizeof *info);
    if (!path) {
        set_err(err, errlen, "cannot read image: no file name");
        return NULL;
    }
    if (check_opts(path, o, err, errlen) < 0) return NULL;

    long long fsize = 0;
    FILE *f = open_regular(path, &fsize, err, errlen);
    if (!f) return NULL;
    Image *im = load_stream(path, f, o->raw ? fsize : 1, o, info, err, errlen);
    fclose(f);
    return im;
}

Image *image_load(const char *path, const ImageLoadOpts *opts, char *err, size_t errlen)
{
    return image_load_info(path, opts, NULL, err, errlen);
}

Image *image_load_mem(const void *data, size_t n, const char *name, const ImageLoadOpts *opts,
                      ImageInfo *info, char *err, size_t errlen)
{
    static const ImageLoadOpts defaults = {0};
    const ImageLoadOpts *o = opts ? opts : &defaults;
    if (info) memset(info, 0, sizeof *info);
    if (!name) name = "(memory)";
    if (check_opts(name, o, err, errlen) < 0) return NULL;
    if (n == 0 || !data) return load_stream(name, NULL, 0, o, info, err, errlen);
    FILE *f = fmemopen((void *)data, n, "rb");
    if (!f) {
        set_err(err, errlen, "cannot read %s: out of memory", name);
        return NULL;
    }
    Image *im = load_stream(name, f, (long long)n, o, info, err, errlen);
    fclose(f);
    return im;
}

/* ---- resampling --------------------------------------------------------- */

/* The weights of one axis: dst index j reads src[first[j] + k] * wt[j*maxn + k]
 * for k < count[j]. */
typedef struct {
    int *first, *count;
    double *wt;
    int maxn;
} AxisWeights;

static void axis_free(AxisWeights *a)
{
    free(a->first);
    free(a->count);
    free(a->wt);
}

/* Shrinking (nd < ns): exact box overlap. In units where a src cell is nd long
 * and a dst cell ns long, dst cell j covers [j*ns, (j+1)*ns) and src cell i
 * [i*nd, (i+1)*nd); the weight is overlap / ns (integers, so an integer
 * factor gives exact 1/k weights). Enlarging (nd >= ns): cell-centred
 * bilinear, u = (j + 0.5) * ns / nd - 0.5, clamped to [0, ns - 1]. */
static int axis_init(AxisWeights *a, int ns, int nd)
{
    memset(a, 0, sizeof *a);
    a->maxn = nd < ns ? (ns + nd - 1) / nd + 1 : 2;
    a->first = malloc(sizeof *a->first * (size_t)nd);
    a->count = malloc(sizeof *a->count * (size_t)nd);
    a->wt = calloc((size_t)nd * (size_t)a->maxn, sizeof *a->wt);
    if (!a->first || !a->count || !a->wt) {
        axis_free(a);
        return -1;
    }
    for (int j = 0; j < nd; j++) {
        double *wt = a->wt + (size_t)j * a->maxn;
        if (nd < ns) {
            long long x0 = (long long)j * ns, x1 = x0 + ns;
            int i0 = (int)(x0 / nd), i1 = (int)((x1 - 1) / nd);
            a->first[j] = i0;
            a->count[j] = i1 - i0 + 1;
            for (int i = i0; i <= i1; i++) {
                long long lo = (long long)i * nd > x0 ? (long long)i * nd : x0;
                long long hi = (long long)(i + 1) * nd < x1 ? (long long)(i + 1) * nd : x1;
                wt[i - i0] = (double)(hi - lo) / (double)ns;
            }
        } else {
            double u = ((double)j + 0.5) * (double)ns / (double)nd - 0.5;
            if (u < 0.0) u = 0.0;
            if (u > (double)(ns - 1)) u = (double)(ns - 1);
            int i0 = (int)floor(u);
            double t = u - (double)i0;
            a->first[j] = i0;
            if (i0 + 1 < ns && t > 0.0) {
                a->count[j] = 2;
                wt[0] = 1.0 - t;
                wt[1] = t;
            } else {
                a->count[j] = 1;
                wt[0] = 1.0;
            }
        }
    }
    return 0;
}

/* One source row s resampled along x into t (w * nc doubles). */
static void resample_xrow(const AxisWeights *ax, const float *s, int w, int nc, double *t)
{
    for (int j = 0; j < w; j++) {
        const double *wt = ax->wt + (size_t)j * ax->maxn;
        for (int c = 0; c < nc; c++) {
            double acc = 0.0;
            for (int k = 0; k < ax->count[j]; k++)
                acc += wt[k] * (double)s[(size_t)(ax->first[j] + k) * nc + c];
            t[(size_t)j * nc + c] = acc;
        }
    }
}

/* Destination row j (len samples) from the x-resampled source rows it
 * reads: rows[k] is source row ay->first[j] + k. */
static void resample_yrow(const AxisWeights *ay, int j, const double *const *rows, size_t len, float *d)
{
    const double *wt = ay->wt + (size_t)j * ay->maxn;
    int n = ay->count[j];
    for (size_t x = 0; x < len; x++) {
        double acc = 0.0;
        for (int k = 0; k < n; k++) acc += wt[k] * rows[k][x];
        d[x] = (float)acc;
    }
}

/* The factor of each channel that keeps its mean (from the destination's
 * sums dsum, before the factor); scale[c] false: left alone. */
static void resample_factors(const Image *src, int w, int h, const double dsum[4], bool keep_mean,
                             bool scale[4], double k[4])
{
    int nc = src->channels;
    double ssum[4] = {0};
    size_t ns = (size_t)src->w * src->h, nd = (size_t)w * h;
    for (size_t i = 0; i < ns * nc; i++) ssum[i % nc] += (double)src->px[i];
    for (int c = 0; c < 4; c++) {
        scale[c] = false;
        k[c] = 1.0;
        if (!keep_mean || c >= nc) continue;
        double want = ssum[c] / (double)ns * (double)nd;
        if (dsum[c] == 0.0 || !isfinite(dsum[c]) || !isfinite(want)) continue;
        k[c] = want / dsum[c];
        scale[c] = k[c] != 1.0;
    }
}

static Image *resample(const Image *src, int w, int h, bool keep_mean)
{
    if (!src || !src->px || !image_size_ok(src->w, src->h) || !image_size_ok(w, h) ||
        src->channels < 1 || src->channels > 4)
        return NULL;
    int sw = src->w, sh = src->h, nc = src->channels;
    Image *dst = image_create(w, h, nc);
    if (!dst) return NULL;
    AxisWeights ax, ay;
    double *tmp = NULL;
    const double **rows = NULL;
    if (axis_init(&ax, sw, w) < 0) goto free_dst;
    if (axis_init(&ay, sh, h) < 0) goto free_ax;
    /* tmp: sh rows of w pixels (x resampled, y not yet) */
    tmp = malloc(sizeof *tmp * (size_t)sh * (size_t)w * (size_t)nc);
    rows = malloc(sizeof *rows * (size_t)ay.maxn);
    if (!tmp || !rows) goto free_ay;

    size_t len = (size_t)w * nc;
    for (int y = 0; y < sh; y++) resample_xrow(&ax, src->px + (size_t)y * sw * nc, w, nc, tmp + (size_t)y * len);

    double dsum[4] = {0};
    for (int j = 0; j < h; j++) {
        float *d = dst->px + (size_t)j * len;
        for (int k = 0; k < ay.count[j]; k++) rows[k] = tmp + (size_t)(ay.first[j] + k) * len;
        resample_yrow(&ay, j, rows, len, d);
        for (size_t x = 0; x < len; x++) dsum[x % nc] += (double)d[x];
    }

    /* keep the mean of every channel: sum(dst)/(w*h) == sum(src)/(sw*sh) */
    bool scale[4];
    double k[4];
    resample_factors(src, w, h, dsum, keep_mean, scale, k);
    size_t nd = (size_t)w * h;
    for (int c = 0; c < nc; c++) {
        if (!scale[c]) continue;
        for (size_t i = 0; i < nd; i++) {
            float *p = &dst->px[i * nc + c];
            *p = (float)((double)*p * k[c]);
        }
    }

    free(rows);
    free(tmp);
    axis_free(&ay);
    axis_free(&ax);
    return dst;

free_ay:
    free(rows);
    free(tmp);
    axis_free(&ay);
free_ax:
    axis_free(&ax);
free_dst:
    image_free(dst);
    return NULL;
}

Image *image_resample(const Image *src, int w, int h) { return resample(src, w, h, true); }
Image *image_resample_plain(const Image *src, int w, int h) { return resample(src, w, h, false); }

/* ---- resampling a few rows at a time ------------------------------------- */

struct ImageRows {
    const Image *src;
    int w, h, nc;
    AxisWeights ax, ay;
    /* the x-resampled source rows lo..hi-1, row r in slot r % cap */
    double *win;
    int cap, lo, hi;
    const double **rows;
    bool scale[4];
    double k[4];
};

/* The x-resampled source rows that destination row j reads, in r->rows.
 * The rows asked for only move down between passes (ay's first[] grows
 * with j), so a row is made once a pass; a jump back starts afresh. */
static void rows_window(ImageRows *r, int j)
{
    int lo = r->ay.first[j], hi = lo + r->ay.count[j];
    size_t len = (size_t)r->w * r->nc;
    if (lo < r->lo || lo > r->hi) r->lo = r->hi = lo;
    while (r->hi < hi) {
        if (r->hi - r->lo == r->cap) r->lo++;
        resample_xrow(&r->ax, r->src->px + (size_t)r->hi * r->src->w * r->nc, r->w, r->nc,
                      r->win + (size_t)(r->hi % r->cap) * len);
        r->hi++;
    }
    for (int k = 0; k < hi - lo; k++) r->rows[k] = r->win + (size_t)((lo + k) % r->cap) * len;
}

ImageRows *image_rows_create(const Image *src, int w, int h, bool keep_mean)
{
    if (!src || !src->px || !image_size_ok(src->w, src->h) || !image_size_ok(w, h) ||
        src->channels < 1 || src->channels > 4)
        return NULL;
    ImageRows *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->src = src;
    r->w = w;
    r->h = h;
    r->nc = src->channels;
    size_t len = (size_t)w * r->nc;
    float *row = NULL;
    if (axis_init(&r->ax, src->w, w) < 0) goto free_r;
    if (axis_init(&r->ay, src->h, h) < 0) goto free_ax;
    r->cap = r->ay.maxn;
    r->win = malloc(sizeof *r->win * (size_t)r->cap * len);
    r->rows = malloc(sizeof *r->rows * (size_t)r->cap);
    row = malloc(sizeof *row * len);
    if (!r->win || !r->rows || !row) goto free_ay;
    /* the factors need every destination row's sum, in resample's order */
    double dsum[4] = {0};
    for (int j = 0; keep_mean && j < h; j++) {
        rows_window(r, j);
        resample_yrow(&r->ay, j, r->rows, len, row);
        for (size_t x = 0; x < len; x++) dsum[x % r->nc] += (double)row[x];
    }
    resample_factors(src, w, h, dsum, keep_mean, r->scale, r->k);
    free(row);
    return r;
free_ay:
    free(row);
    free(r->win);
    free(r->rows);
    axis_free(&r->ay);
free_ax:
    axis_free(&r->ax);
free_r:
    free(r);
    return NULL;
}

void image_rows_get(ImageRows *r, int y0, int n, float *dst)
{
    size_t len = (size_t)r->w * r->nc;
    for (int j = y0; j < y0 + n; j++) {
        float *d = dst + (size_t)(j - y0) * len;
        rows_window(r, j);
        resample_yrow(&r->ay, j, r->rows, len, d);
        for (int c = 0; c < r->nc; c++) {
            if (!r->scale[c]) continue;
            for (size_t i = (size_t)c; i < len; i += (size_t)r->nc) d[i] = (float)((double)d[i] * r->k[c]);
        }
    }
}

size_t image_rows_bytes(int src_w, int src_h, int w, int h, int channels)
{
    size_t mx = src_w > w ? (size_t)(src_w + w - 1) / (size_t)w + 1 : 2;
    size_t my = src_h > h ? (size_t)(src_h + h - 1) / (size_t)h + 1 : 2;
    return (size_t)w * mx * (sizeof(double) + 2 * sizeof(int)) + (size_t)h * my * (sizeof(double) + 2 * sizeof(int)) +
           my * (size_t)w * (size_t)channels * (sizeof(double) + sizeof(void *)) + (size_t)w * channels * sizeof(float);
}

void image_rows_free(ImageRows *r)
{
    if (!r) return;
    free(r->win);
    free(r->rows);
    axis_free(&r->ay);
    axis_free(&r->ax);
    free(r);
}

/* ---- PNG writing -------------------------------------------------------- */

typedef struct {
    FILE *f;
    png_structp png;
    png_infop info;
    unsigned char *row;
    int io_errno;
    char msg[160];
    jmp_buf jb;
} PngWrite;

static void wr_error(png_structp png, png_const_charp msg)
{
    PngWrite *wr = png_get_error_ptr(png);
    snprintf(wr->msg, sizeof wr->msg, "%s", msg ? msg : "unknown error");
    longjmp(wr->jb, 1);
}

static void wr_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void wr_data(png_structp png, png_bytep data, size_t n)
{
    PngWrite *wr = png_get_io_ptr(png);
    if (fwrite(data, 1, n, wr->f) != n) {
        wr->io_errno = errno ? errno : EIO;
        png_error(png, "write failed");
    }
}

static void wr_flush(png_structp png)
{
    PngWrite *wr = png_get_io_ptr(png);
    if (fflush(wr->f) != 0) {
        wr->io_errno = errno ? errno : EIO;
        png_error(png, "write failed");
    }
}

static unsigned quantise(float v, unsigned max)
{
    if (!(v > 0.0f)) return 0; /* also NaN */
    if (v >= 1.0f) return max;
    return (unsigned)((double)v * max + 0.5);
}

/* The header; 0, or -1 after libpng's error (wr->msg, wr->io_errno). */
static int wr_head(PngWrite *wr, int w, int h, int channels, int bits, int level)
{
    if (setjmp(wr->jb)) return -1;
    png_set_write_fn(wr->png, wr, wr_data, wr_flush);
    if (level >= 0) {
        png_set_compression_level(wr->png, level);
        /* at the fast levels libpng's adaptive filter choice (five filters
         * tried on every row) costs more than zlib itself: one filter */
        if (level <= 3) png_set_filter(wr->png, PNG_FILTER_TYPE_BASE, level == 0 ? PNG_FILTER_NONE : PNG_FILTER_SUB);
    }
    png_set_IHDR(wr->png, wr->info, (png_uint_32)w, (png_uint_32)h, bits,
                 channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text tag = {.compression = PNG_TEXT_COMPRESSION_NONE,
                    .key = (png_charp)IMAGE_TAG_PNG_KEY,
                    .text = (png_charp)IMAGE_TAG_VALUE,
                    .text_length = sizeof IMAGE_TAG_VALUE - 1};
    png_set_text(wr->png, wr->info, &tag, 1);
    png_write_info(wr->png, wr->info);
    return 0;
}

/* n rows of w * channels samples, quantised; 0 or -1 as wr_head. */
static int wr_rows(PngWrite *wr, const float *px, int n, int w, int channels, int bits)
{
    if (setjmp(wr->jb)) return -1;
    size_t len = (size_t)w * (size_t)channels;
    unsigned max = bits == 16 ? 65535u : 255u;
    for (int y = 0; y < n; y++) {
        const float *p = px + (size_t)y * len;
        for (size_t i = 0; i < len; i++) {
            unsigned q = quantise(p[i], max);
            if (bits == 16) {
                wr->row[2 * i] = (unsigned char)(q >> 8);
                wr->row[2 * i + 1] = (unsigned char)(q & 0xff);
            } else {
                wr->row[i] = (unsigned char)q;
            }
        }
        png_write_row(wr->png, wr->row);
    }
    return 0;
}

static int wr_end(PngWrite *wr)
{
    if (setjmp(wr->jb)) return -1;
    png_write_end(wr->png, NULL);
    return 0;
}

/* Create "path.tmp.<pid>.<n>" exclusively; returns the fd or -1 (errno set). */
static int open_temp(const char *path, char *tmp, size_t tmplen)
{
    static atomic_uint counter; /* frames are written by several threads */
    for (int tries = 0; tries < 100; tries++) {
        snprintf(tmp, tmplen, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1u));
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

int image_open_temp(const char *path, char *tmp, size_t tmplen)
{
    return open_temp(path, tmp, tmplen);
}

int image_save_png(const char *path, const Image *im, int bits, char *err, size_t errlen)
{
    ImagePngOut o = {.bits = bits, .level = -1};
    return image_save_png_ex(path, im, &o, err, errlen);
}

struct ImagePngStream {
    PngWrite wr;
    char *path, *tmp;
    int w, h, channels, bits;
    int y;              /* rows written */
    char *temp;         /* ImagePngOut's */
    size_t templen;
};

/* libpng's failure as one line: the errno of a failed write, or its message */
static void png_stream_error(ImagePngStream *s, char *err, size_t errlen)
{
    char why[128];
    if (s->wr.io_errno) {
        errno_text(s->wr.io_errno, why, sizeof why);
        set_err(err, errlen, "cannot write %s: %s", s->path, why);
    } else {
        set_err(err, errlen, "cannot write %s: %s", s->path, s->wr.msg);
    }
}

void image_png_abort(ImagePngStream *s)
{
    if (!s) return;
    if (s->wr.png) png_destroy_write_struct(&s->wr.png, s->wr.info ? &s->wr.info : NULL);
    if (s->wr.f) fclose(s->wr.f);
    if (s->tmp && s->tmp[0]) unlink(s->tmp);
    free(s->wr.row);
    free(s->tmp);
    free(s->path);
    free(s);
}

ImagePngStream *image_png_begin(const char *path, int w, int h, int channels, const ImagePngOut *o,
                                char *err, size_t errlen)
{
    int bits = o->bits;
    char why[128];
    if (!path) {
        set_err(err, errlen, "cannot write image: no file name");
        return NULL;
    }
    if (!image_size_ok(w, h)) {
        set_err(err, errlen, "cannot write %s: no image or bad image size", path);
        return NULL;
    }
    if (channels != 1 && channels != 4) {
        set_err(err, errlen, "cannot write %s: %d channels (PNG output takes 1 or 4)", path, channels);
        return NULL;
    }
    if (bits != 8 && bits != 16) {
        set_err(err, errlen, "cannot write %s: %d bits per sample (PNG output takes 8 or 16)", path,
                bits);
        return NULL;
    }
    ImagePngStream *s = calloc(1, sizeof *s);
    size_t tmplen = strlen(path) + 64;
    if (!s || !(s->path = strdup(path)) || !(s->tmp = calloc(1, tmplen)) ||
        !(s->wr.row = malloc((size_t)w * (size_t)channels * (size_t)(bits / 8)))) {
        set_err(err, errlen, "cannot write %s: out of memory", path);
        image_png_abort(s);
        return NULL;
    }
    s->w = w;
    s->h = h;
    s->channels = channels;
    s->bits = bits;
    s->temp = o->temp;
    s->templen = o->templen;
    int fd = open_temp(path, s->tmp, tmplen);
    if (fd < 0) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot write %s: %s", path, why);
        s->tmp[0] = '\0';
        image_png_abort(s);
        return NULL;
    }
    s->wr.f = fdopen(fd, "wb");
    if (!s->wr.f) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot write %s: %s", path, why);
        close(fd);
        image_png_abort(s);
        return NULL;
    }
    s->wr.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s->wr, wr_error, wr_warning);
    if (!s->wr.png || !(s->wr.info = png_create_info_struct(s->wr.png))) {
        set_err(err, errlen, "cannot write %s: out of memory", path);
        image_png_abort(s);
        return NULL;
    }
    errno = 0;
    if (wr_head(&s->wr, w, h, channels, bits, o->level > IMAGE_PNG_LEVEL_MAX ? IMAGE_PNG_LEVEL_MAX : o->level) < 0) {
        png_stream_error(s, err, errlen);
        image_png_abort(s);
        return NULL;
    }
    return s;
}

int image_png_rows(ImagePngStream *s, const float *px, int n, char *err, size_t errlen)
{
    if (n < 0 || n > s->h - s->y) {
        set_err(err, errlen, "cannot write %s: more rows than the image has", s->path);
        return -1;
    }
    errno = 0;
    if (wr_rows(&s->wr, px, n, s->w, s->channels, s->bits) < 0) {
        png_stream_error(s, err, errlen);
        return -1;
    }
    s->y += n;
    return 0;
}

int image_png_end(ImagePngStream *s, char *err, size_t errlen)
{
    char why[128];
    if (s->y != s->h) {
        set_err(err, errlen, "cannot write %s: %d rows of %d written", s->path, s->y, s->h);
        image_png_abort(s);
        return -1;
    }
    errno = 0;
    if (wr_end(&s->wr) < 0) {
        png_stream_error(s, err, errlen);
        image_png_abort(s);
        return -1;
    }
    png_destroy_write_struct(&s->wr.png, &s->wr.info);
    FILE *f = s->wr.f;
    s->wr.f = NULL;
    if (fclose(f) != 0) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot write %s: %s", s->path, why);
        image_png_abort(s);
        return -1;
    }
    if (s->temp) { /* the caller renames it */
        if (strlen(s->tmp) >= s->templen) {
            set_err(err, errlen, "cannot write %s: path too long", s->path);
            image_png_abort(s);
            return -1;
        }
        strcpy(s->temp, s->tmp);
    } else if (rename(s->tmp, s->path) != 0) {
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot write %s: %s", s->path, why);
        image_png_abort(s);
        return -1;
    }
    s->tmp[0] = '\0'; /* kept: nothing to remove */
    image_png_abort(s);
    return 0;
}

int image_save_png_ex(const char *path, const Image *im, const ImagePngOut *o, char *err,
                      size_t errlen)
{
    if (path && (!im || !im->px)) {
        set_err(err, errlen, "cannot write %s: no image or bad image size", path);
        return -1;
    }
    ImagePngStream *s = image_png_begin(path, im ? im->w : 0, im ? im->h : 0, im ? im->channels : 0, o,
                                        err, errlen);
    if (!s) return -1;
    if (image_png_rows(s, im->px, im->h, err, errlen) < 0) {
        image_png_abort(s);
        return -1;
    }
    return image_png_end(s, err, errlen);
}

/* ---- smokemorph's mark ------------------------------------------------------ */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool image_mem_tagged(const void *data, size_t n)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char exr_magic[4] = {0x76, 0x2f, 0x31, 0x01};
    const unsigned char *b = data;
    const size_t klen = sizeof IMAGE_TAG_PNG_KEY, vlen = sizeof IMAGE_TAG_VALUE - 1;
    if (n >= 8 && !memcmp(b, png_sig, 8)) {
        /* chunks: length, type, data, CRC; the mark is a tEXt before IDAT */
        for (size_t at = 8; at + 8 <= n;) {
            uint32_t len = be32(b + at);
            const unsigned char *type = b + at + 4;
            if (len > n || at + 12 + len > n || !memcmp(type, "IDAT", 4) || !memcmp(type, "IEND", 4))
                return false;
            if (!memcmp(type, "tEXt", 4) && len == klen + vlen &&
                !memcmp(b + at + 8, IMAGE_TAG_PNG_KEY, klen) &&
                !memcmp(b + at + 8 + klen, IMAGE_TAG_VALUE, vlen))
                return true;
            at += 12 + (size_t)len;
        }
        return false;
    }
    if (n >= 8 && !memcmp(b, exr_magic, 4)) {
        /* the header: NAME\0 TYPE\0 SIZE(int32 LE) VALUE ..., an empty
         * name ends it; a string attribute's value is its bytes */
        size_t at = 8;
        while (at < n && b[at]) {
            const char *name = (const char *)b + at;
            const void *z = memchr(b + at, 0, n - at);
            if (!z) return false;
            size_t tat = (size_t)((const unsigned char *)z - b) + 1;
            const void *z2 = tat < n ? memchr(b + tat, 0, n - tat) : NULL;
            if (!z2) return false;
            size_t sat = (size_t)((const unsigned char *)z2 - b) + 1;
            if (sat + 4 > n) return false;
            uint32_t size = (uint32_t)b[sat] | (uint32_t)b[sat + 1] << 8 |
                            (uint32_t)b[sat + 2] << 16 | (uint32_t)b[sat + 3] << 24;
            size_t vat = sat + 4;
            if (size > n || vat + size > n) return false;
            if (!strcmp(name, IMAGE_TAG_EXR_ATTR) && !strcmp((const char *)b + tat, "string") &&
                size == vlen && !memcmp(b + vat, IMAGE_TAG_VALUE, vlen))
                return true;
            at = vat + size;
        }
        return false;
    }
    return false;
}

bool image_file_tagged(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    struct stat st;
    unsigned char *buf = NULL;
    bool tagged = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (buf = malloc(65536))) {
        size_t n = 0;
        for (ssize_t got; n < 65536 && (got = read(fd, buf + n, 65536 - n)) > 0;) n += (size_t)got;
        tagged = image_mem_tagged(buf, n);
    }
    free(buf);
    close(fd);
    return tagged;
}

/* ---- option parsing ----------------------------------------------------- */

/* A positive decimal int with nothing else; advances *s. */
static bool parse_side(const char **s, int *out)
{
    const char *p = *s;
    long v = 0;
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') {
        if (v <= 100000000L) v = v * 10 + (*p - '0');
        p++;
    }
    *out = v > 1000000000L ? 1000000000 : (int)v;
    *s = p;
    return true;
}

int image_parse_raw_spec(const char *spec, ImageLoadOpts *opts, char *err, size_t errlen)
{
    if (!spec || !opts) {
        set_err(err, errlen, "--raw: missing value");
        return -1;
    }
    const char *p = spec;
    int w, h;
    ImageRawType t = IMAGE_RAW_U8;
    if (!parse_side(&p, &w) || (*p != 'x' && *p != 'X')) goto bad;
    p++;
    if (!parse_side(&p, &h)) goto bad;
    if (*p == ':') {
        p++;
        if (strcmp(p, "u8") == 0) t = IMAGE_RAW_U8;
        else if (strcmp(p, "u16") == 0) t = IMAGE_RAW_U16;
        else if (strcmp(p, "f32") == 0) t = IMAGE_RAW_F32;
        else goto bad;
    } else if (*p != '\0') {
        goto bad;
    }
    if (!image_size_ok(w, h)) {
        /* the size as given (parse_side saturates: 99999999999 is not 999999999) */
        set_err(err, errlen, "--raw: size %.*s is out of range (1 to %d a side)", (int)strcspn(spec, ":"),
                spec, IMAGE_MAX_SIDE);
        return -1;
    }
    opts->raw = true;
    opts->raw_w = w;
    opts->raw_h = h;
    opts->raw_type = t;
    return 0;
bad:
    set_err(err, errlen, "--raw: expected WxH[:u8|u16|f32], got '%s'", spec);
    return -1;
}

/* Apply one item of an image's options ("invert", "invert=0", "channel=a")
 * to *o; -1 when it is none of them. */
static int spec_item(const char *s, size_t len, ImageLoadOpts *o)
{
    char item[32];
    if (len == 0 || len >= sizeof item) return -1;
    memcpy(item, s, len);
    item[len] = '\0';
    if (!strcmp(item, "invert") || !strcmp(item, "invert=1")) {
        o->invert = true;
        return 0;
    }
    if (!strcmp(item, "invert=0")) {
        o->invert = false;
        return 0;
    }
    if (!strncmp(item, "channel=", 8)) return image_parse_channel(item + 8, &o->channel);
    return -1;
}

int image_spec(const char *spec, char *path, size_t n, ImageLoadOpts *opts)
{
    const char *colon = strrchr(spec, ':');
    ImageLoadOpts o = *opts;
    bool ok = colon != NULL && colon != spec;
    for (const char *p = ok ? colon + 1 : NULL; ok && *p;) {
        size_t len = strcspn(p, ",");
        ok = spec_item(p, len, &o) == 0;
        p += len;
        if (*p == ',' && !*++p) ok = false; /* a trailing comma */
    }
    size_t plen = ok ? (size_t)(colon - spec) : strlen(spec);
    if (plen >= n) {
        if (n) path[0] = '\0';
        return -1;
    }
    memcpy(path, spec, plen);
    path[plen] = '\0';
    if (!ok) return 0;
    *opts = o;
    return 1;
}

int image_parse_channel(const char *s, ImageChannel *out)
{
    static const struct {
        const char *name;
        ImageChannel ch;
    } names[] = {
        {"luma", IMAGE_CHANNEL_LUMA}, {"r", IMAGE_CHANNEL_R},     {"g", IMAGE_CHANNEL_G},
        {"b", IMAGE_CHANNEL_B},       {"a", IMAGE_CHANNEL_A},     {"red", IMAGE_CHANNEL_R},
        {"green", IMAGE_CHANNEL_G},   {"blue", IMAGE_CHANNEL_B},  {"alpha", IMAGE_CHANNEL_A},
        {"luminance", IMAGE_CHANNEL_LUMA},
    };
    if (!s || !out) return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].ch;
            return 0;
        }
    }
    return -1;
}
