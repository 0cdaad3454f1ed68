/* fuzz_png: the PNG loader on any bytes (image_load_mem). Properties: it
 * returns an image or one line of error; an image is as large as its header
 * said, its densities are finite and in [0, 1], and it resamples. The budget
 * is 64 MiB, so a hostile header is refused rather than allocated. The
 * input's length picks the channel and --invert, so every path is reached. */
#include "fuzz.h"

#include <math.h>

#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ImageLoadOpts o = {.max_mb = 64};
    o.channel = (ImageChannel)(size % 5);
    o.invert = (size / 5) % 2 == 1;
    ImageInfo info;
    char err[1024] = "";
    Image *im = image_load_mem(data, size, "fuzz.png", &o, &info, err, sizeof err);
    if (!im) {
        FUZZ_ONE_LINE(err);
        return 0;
    }
    FUZZ_ASSERT(im->channels == 1 && im->w == info.w && im->h == info.h && image_size_ok(im->w, im->h),
                "image %dx%dx%d, header %dx%d", im->w, im->h, im->channels, info.w, info.h);
    FUZZ_ASSERT(!info.transparent || info.has_alpha, "transparent without alpha");
    size_t n = (size_t)im->w * im->h;
    for (size_t k = 0; k < n; k++)
        FUZZ_ASSERT(isfinite(im->px[k]) && im->px[k] >= 0.0f && im->px[k] <= 1.0f,
                    "density %g at %zu", (double)im->px[k], k);
    Image *g = image_resample(im, 7, 5);
    FUZZ_ASSERT(g != NULL, "resample failed");
    for (int k = 0; k < 35; k++) FUZZ_ASSERT(isfinite(g->px[k]), "resampled %g", (double)g->px[k]);
    image_free(g);
    image_free(im);
    return 0;
}
