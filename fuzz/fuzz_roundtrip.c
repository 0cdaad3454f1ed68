/* fuzz_roundtrip: an image written and read back. Byte 0 picks the format,
 * bytes 1-2 the size (1..48 a side), byte 3 grey or RGBA; the rest are the
 * samples, 4 bytes each as a float (any: NaN, negative, huge). Property: what
 * comes back is exactly the clamped, quantised sample (grey: the grey; RGBA:
 * each channel through --channel r, g, b, a).
 *
 * The formats are a table: EXR and the checkpoint writer/reader add a row
 * (their save, their load, their tolerance) when they exist; the rest of the
 * harness stays as it is. */
#include "fuzz.h"

#include <math.h>
#include <unistd.h>

#include "image.h"

typedef struct {
    const char *name;
    const char *ext;
    int bits;
    int (*save)(const char *path, const Image *im, int bits, char *err, size_t errlen);
    /* load channel ch (IMAGE_CHANNEL_*) of path as a density image */
    Image *(*load)(const char *path, ImageChannel ch, char *err, size_t errlen);
    /* the value a sample v must read back as */
    double (*expect)(float v, int bits);
} Format;

static Image *png_load(const char *path, ImageChannel ch, char *err, size_t errlen)
{
    ImageLoadOpts o = {.channel = ch};
    return image_load(path, &o, err, errlen);
}

static double png_expect(float v, int bits)
{
    unsigned max = bits == 16 ? 65535u : 255u;
    unsigned q = !(v > 0.0f) ? 0 : v >= 1.0f ? max : (unsigned)((double)v * max + 0.5);
    return (double)(float)((double)q / (double)max);
}

static const Format formats[] = {
    {"png8", "png", 8, image_save_png, png_load, png_expect},
    {"png16", "png", 16, image_save_png, png_load, png_expect},
    /* {"exr-half", "exr", 16, ...}, {"checkpoint", "smc", 32, ...}: later */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    const Format *f = &formats[data[0] % (sizeof formats / sizeof formats[0])];
    int w = 1 + data[1] % 48, h = 1 + data[2] % 48, nc = (data[3] & 1) ? 4 : 1;
    Image *im = image_create(w, h, nc);
    if (!im) return 0;
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
    int rc = f->save(path, im, f->bits, err, sizeof err);
    FUZZ_ASSERT(rc == 0, "%s: cannot write %s: %s", f->name, path, err);
    static const ImageChannel chans[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B,
                                          IMAGE_CHANNEL_A};
    for (int c = 0; c < nc; c++) {
        Image *back = f->load(path, nc == 1 ? IMAGE_CHANNEL_LUMA : chans[c], err, sizeof err);
        FUZZ_ASSERT(back && back->w == w && back->h == h, "%s: read back: %s", f->name, err);
        for (int k = 0; k < w * h; k++) {
            double want = f->expect(im->px[(size_t)k * nc + c], f->bits);
            FUZZ_ASSERT((double)back->px[k] == want, "%s: channel %d pixel %d: %.9g read back, %.9g "
                        "expected", f->name, c, k, (double)back->px[k], want);
        }
        image_free(back);
    }
    unlink(path);
    image_free(im);
    return 0;
}
