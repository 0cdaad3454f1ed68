/* fuzz_roundtrip: an image written and read back. Byte 0 picks the format,
 * bytes 1-2 the size (1..48 a side), byte 3 grey or RGBA (bit 0) and, for
 * EXR, a data window smaller than the frame (bit 1; bits 2-5 its corner); the rest are the
 * samples, 4 bytes each as a float (any: NaN, negative, huge).
 *
 *   - PNG 8/16 (image_save_png, read by image_load): exactly the clamped,
 *     quantised sample (grey: the grey; RGBA: each channel through
 *     --channel r, g, b, a).
 *   - EXR half and float, ZIP and PIZ (the exporter's writer, exr_write,
 *     read back here with OpenEXRCore): the file's pixel type and
 *     compression are the ones asked for, its display window the frame and
 *     its data window the one given; float samples come back bit for bit (a
 *     NaN as a NaN); half samples within half precision: a finite sample up
 *     to 65504 within half an ulp (|v|·2^-11, 2^-25 for subnormals), a
 *     larger one as ±65504 or ±inf, ±inf as itself, NaN as NaN.
 *
 * The formats are a table: a row is its save, its load and its check. */
#include "fuzz.h"

#include <math.h>
#include <openexr.h>
#include <unistd.h>

#include "exr.h"
#include "image.h"

typedef struct Format Format;
struct Format {
    const char *name;
    const char *ext;
    int bits;                 /* PNG: 8 or 16; EXR: 16 half, 32 float */
    ImageExrCompression comp; /* EXR */
    /* write im (w x h, nc channels) to path; 0 or -1 with err */
    int (*save)(const Format *f, const char *path, const Image *im, const int win[4], char *err,
                size_t errlen);
    /* read the nc channels back into out (nc planes of w*h); 0 or -1 */
    int (*load)(const Format *f, const char *path, int nc, int w, int h, const int win[4], float *out,
                char *err, size_t errlen);
    /* whether back is what sample v must read back as; want: the expected
     * value, for the message */
    bool (*check)(const Format *f, float v, float back, double *want);
};

/* ---- PNG ---------------------------------------------------------------------- */

static int png_save(const Format *f, const char *path, const Image *im, const int win[4], char *err,
                    size_t errlen)
{
    (void)win;
    return image_save_png(path, im, f->bits, err, errlen);
}

static int png_load(const Format *f, const char *path, int nc, int w, int h, const int win[4],
                    float *out, char *err, size_t errlen)
{
    (void)f, (void)win;
    static const ImageChannel chans[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B,
                                          IMAGE_CHANNEL_A};
    for (int c = 0; c < nc; c++) {
        ImageLoadOpts o = {.channel = nc == 1 ? IMAGE_CHANNEL_LUMA : chans[c]};
        Image *back = image_load(path, &o, err, errlen);
        if (!back || back->w != w || back->h != h) {
            image_free(back);
            return -1;
        }
        memcpy(out + (size_t)c * w * h, back->px, sizeof(float) * (size_t)w * h);
        image_free(back);
    }
    return 0;
}

static bool png_check(const Format *f, float v, float back, double *want)
{
    unsigned max = f->bits == 16 ? 65535u : 255u;
    unsigned q = !(v > 0.0f) ? 0 : v >= 1.0f ? max : (unsigned)((double)v * max + 0.5);
    *want = (double)(float)((double)q / (double)max);
    return (double)back == *want;
}

/* ---- EXR ---------------------------------------------------------------------- */

static const char *const exr_names[2][4] = {{"Y"}, {"R", "G", "B", "A"}};

static int exr_save(const Format *f, const char *path, const Image *im, const int win[4], char *err,
                    size_t errlen)
{
    int nc = im->channels, w = im->w, h = im->h;
    size_t n = (size_t)w * h;
    float *planes = malloc(sizeof(float) * n * (size_t)nc);
    if (!planes) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ExrChannel ch[4];
    for (int c = 0; c < nc; c++) {
        for (size_t k = 0; k < n; k++) planes[(size_t)c * n + k] = im->px[k * (size_t)nc + (size_t)c];
        ch[c].name = exr_names[nc == 4][c];
        ch[c].px = planes + (size_t)c * n;
    }
    ExrWrite d = {.w = w, .h = h, .x0 = win[0], .y0 = win[1], .x1 = win[2], .y1 = win[3],
                  .channels = ch, .nchannels = nc,
                  .pixel = f->bits == 32 ? IMAGE_EXR_FLOAT : IMAGE_EXR_HALF,
                  .compression = f->comp, .fps = 24.0};
    int rc = exr_write(path, &d, err, errlen);
    free(planes);
    return rc;
}

static void exr_quiet(exr_const_context_t c, exr_result_t code, const char *msg)
{
    (void)c, (void)code, (void)msg;
}

/* The channels of the file through OpenEXRCore's decoder, as floats, into
 * out (0 outside the data window); the header checked against what was
 * written. Every channel gets a plane: OpenEXRCore 3.1's decoder crashes
 * (a NULL dereference in its unpacker) when some channels of a chunk have
 * decode_to_ptr NULL, the documented way to skip them. */
static int exr_load(const Format *f, const char *path, int nc, int w, int h, const int win[4],
                    float *out, char *err, size_t errlen)
{
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = exr_quiet;
    exr_context_t ctx = NULL;
    exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
    bool started = false;
    const char *what = "open";
    exr_result_t rc = exr_start_read(&ctx, path, &init);
    int ret = -1;
    memset(out, 0, sizeof(float) * (size_t)w * h * nc);
    if (rc != EXR_ERR_SUCCESS) goto done;
    exr_attr_box2i_t dw, disp;
    const exr_attr_chlist_t *cl = NULL;
    exr_compression_t comp;
    what = "header";
    if ((rc = exr_get_data_window(ctx, 0, &dw)) || (rc = exr_get_display_window(ctx, 0, &disp)) ||
        (rc = exr_get_channels(ctx, 0, &cl)) || (rc = exr_get_compression(ctx, 0, &comp)))
        goto done;
    exr_compression_t asked = f->comp == IMAGE_EXR_PIZ ? EXR_COMPRESSION_PIZ : EXR_COMPRESSION_ZIP;
    exr_pixel_type_t type = f->bits == 32 ? EXR_PIXEL_FLOAT : EXR_PIXEL_HALF;
    FUZZ_ASSERT(disp.min.x == 0 && disp.min.y == 0 && disp.max.x == w - 1 && disp.max.y == h - 1,
                "%s: display window (%d,%d)-(%d,%d) of a %dx%d frame", f->name, disp.min.x, disp.min.y,
                disp.max.x, disp.max.y, w, h);
    FUZZ_ASSERT(dw.min.x == win[0] && dw.min.y == win[1] && dw.max.x == win[2] && dw.max.y == win[3],
                "%s: data window (%d,%d)-(%d,%d), written (%d,%d)-(%d,%d)", f->name, dw.min.x, dw.min.y,
                dw.max.x, dw.max.y, win[0], win[1], win[2], win[3]);
    FUZZ_ASSERT(comp == asked, "%s: compression %d, asked %d", f->name, (int)comp, (int)asked);
    FUZZ_ASSERT(cl->num_channels == nc, "%s: %d channels, written %d", f->name, cl->num_channels, nc);
    for (int k = 0; k < cl->num_channels; k++)
        FUZZ_ASSERT(cl->entries[k].pixel_type == type, "%s: channel %s of type %d", f->name,
                    cl->entries[k].name.str, (int)cl->entries[k].pixel_type);
    int32_t lines = 1;
    what = "pixels";
    if ((rc = exr_get_scanlines_per_chunk(ctx, 0, &lines))) goto done;
    for (int y = dw.min.y; y <= dw.max.y; y += lines) {
        exr_chunk_info_t ci;
        if ((rc = exr_read_scanline_chunk_info(ctx, 0, y, &ci))) goto done;
        rc = started ? exr_decoding_update(ctx, 0, &ci, &dec) : exr_decoding_initialize(ctx, 0, &ci, &dec);
        if (rc) goto done;
        for (int k = 0; k < dec.channel_count; k++) {
            exr_coding_channel_info_t *ch = &dec.channels[k];
            int c = 0;
            while (c < nc && strcmp(ch->channel_name, exr_names[nc == 4][c])) c++;
            FUZZ_ASSERT(c < nc, "%s: a channel %s not written", f->name, ch->channel_name);
            ch->user_data_type = EXR_PIXEL_FLOAT;
            ch->user_bytes_per_element = 4;
            ch->user_pixel_stride = 4;
            ch->user_line_stride = 4 * w;
            ch->decode_to_ptr = (uint8_t *)(out + (size_t)c * w * h + (size_t)ci.start_y * w + ci.start_x);
        }
        if (!started && (rc = exr_decoding_choose_default_routines(ctx, 0, &dec))) goto done;
        started = true;
        if ((rc = exr_decoding_run(ctx, 0, &dec))) goto done;
    }
    ret = 0;
done:
    if (ret < 0) snprintf(err, errlen, "%s: %s", what, exr_get_default_error_message(rc));
    if (started) exr_decoding_destroy(ctx, &dec);
    if (ctx) exr_finish(&ctx);
    return ret;
}

static bool exr_check(const Format *f, float v, float back, double *want)
{
    *want = (double)v;
    if (isnan(v)) return isnan(back);
    if (f->bits == 32) {
        uint32_t a, b;
        memcpy(&a, &v, 4);
        memcpy(&b, &back, 4);
        return a == b;
    }
    if (isinf(v)) return back == v;
    double av = fabs((double)v);
    if (av > 65504.0) {
        *want = v > 0 ? 65504.0 : -65504.0;
        return (fabs((double)back) == 65504.0 || isinf(back)) && signbit(back) == signbit(v);
    }
    double tol = av >= 6.103515625e-05 ? av * 0x1p-11 : 0x1p-25;
    return isfinite(back) && fabs((double)back - (double)v) <= tol &&
           (back == 0.0f || signbit(back) == signbit(v));
}

static const Format formats[] = {
    {"png8", "png", 8, IMAGE_EXR_ZIP, png_save, png_load, png_check},
    {"png16", "png", 16, IMAGE_EXR_ZIP, png_save, png_load, png_check},
    {"exr-half-zip", "exr", 16, IMAGE_EXR_ZIP, exr_save, exr_load, exr_check},
    {"exr-half-piz", "exr", 16, IMAGE_EXR_PIZ, exr_save, exr_load, exr_check},
    {"exr-float-zip", "exr", 32, IMAGE_EXR_ZIP, exr_save, exr_load, exr_check},
    {"exr-float-piz", "exr", 32, IMAGE_EXR_PIZ, exr_save, exr_load, exr_check},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    const Format *f = &formats[data[0] % (sizeof formats / sizeof formats[0])];
    int w = 1 + data[1] % 48, h = 1 + data[2] % 48, nc = (data[3] & 1) ? 4 : 1;
    /* the data window: the frame, or (bit 1) a part of it from the bytes */
    int win[4] = {0, 0, w - 1, h - 1};
    if ((data[3] & 2) && f->save == exr_save) {
        win[0] = (data[3] >> 2) % w;
        win[1] = (data[3] >> 4) % h;
        win[2] = win[0] + (data[1] / 48) % (w - win[0]);
        win[3] = win[1] + (data[2] / 48) % (h - win[1]);
    }
    Image *im = image_create(w, h, nc);
    float *back = malloc(sizeof(float) * (size_t)w * h * nc);
    if (!im || !back) {
        image_free(im);
        free(back);
        return 0;
    }
    size_t n = (size_t)w * h * nc;
    for (size_t k = 0; k < n; k++) {
        uint32_t u = 0;
        size_t at = 4 + 4 * k;
        for (int b = 0; b < 4; b++) u |= (uint32_t)(at + b < size ? data[at + b] : 0) << (8 * b);
        memcpy(&im->px[k], &u, sizeof u);
    }
    char path[256], err[1024] = "";
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/smokemorph-fuzz-%ld.%s", dir && *dir ? dir : "/tmp", (long)getpid(),
             f->ext);
    int rc = f->save(f, path, im, win, err, sizeof err);
    FUZZ_ASSERT(rc == 0, "%s: cannot write %s: %s", f->name, path, err);
    rc = f->load(f, path, nc, w, h, win, back, err, sizeof err);
    FUZZ_ASSERT(rc == 0, "%s: read back: %s", f->name, err);
    for (int c = 0; c < nc; c++) {
        const float *plane = back + (size_t)c * w * h;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int k = y * w + x;
                bool inside = x >= win[0] && x <= win[2] && y >= win[1] && y <= win[3];
                double want = 0.0;
                float v = im->px[(size_t)k * nc + c];
                bool ok = inside ? f->check(f, v, plane[k], &want) : plane[k] == 0.0f;
                FUZZ_ASSERT(ok, "%s: channel %d pixel (%d,%d) of %dx%d: %.9g read back, %.9g written, "
                            "%.9g expected", f->name, c, x, y, w, h, (double)plane[k], (double)v, want);
            }
    }
    unlink(path);
    image_free(im);
    free(back);
    return 0;
}
