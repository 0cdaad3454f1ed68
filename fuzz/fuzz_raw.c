/* fuzz_raw: the RAW loader. The first 4 bytes are the options (sample type,
 * width 1..64, height 1..64, --invert), the rest the file. Properties: it
 * loads exactly when the length is W*H*S (and, for f32, every sample is
 * finite and >= 0); u8 and u16 densities are in [0, 1]; errors are one line. */
#include "fuzz.h"

#include <math.h>

#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    ImageLoadOpts o = {.raw = true, .max_mb = 64};
    o.raw_type = (ImageRawType)(data[0] % 3);
    o.raw_w = 1 + data[1] % 64;
    o.raw_h = 1 + data[2] % 64;
    o.invert = data[3] & 1;
    size_t ss = o.raw_type == IMAGE_RAW_U8 ? 1 : o.raw_type == IMAGE_RAW_U16 ? 2 : 4;
    size_t want = (size_t)o.raw_w * (size_t)o.raw_h * ss;
    char err[1024] = "";
    Image *im = image_load_mem(data + 4, size - 4, "fuzz.raw", &o, NULL, err, sizeof err);
    if (size - 4 != want) FUZZ_ASSERT(!im, "loaded %zu bytes as %dx%d", size - 4, o.raw_w, o.raw_h);
    if (o.raw_type != IMAGE_RAW_F32 && size - 4 == want) FUZZ_ASSERT(im != NULL, "refused: %s", err);
    if (!im) {
        FUZZ_ONE_LINE(err);
        return 0;
    }
    FUZZ_ASSERT(im->w == o.raw_w && im->h == o.raw_h, "size %dx%d", im->w, im->h);
    for (int k = 0; k < im->w * im->h; k++) {
        float v = im->px[k];
        FUZZ_ASSERT(isfinite(v) && v >= 0.0f, "density %g", (double)v);
        if (o.raw_type != IMAGE_RAW_F32) FUZZ_ASSERT(v <= 1.0f, "density %g above 1", (double)v);
    }
    image_free(im);
    return 0;
}
