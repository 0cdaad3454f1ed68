/* strip: lay PNG frames side by side over a background colour, for the
 * README's strips of frames. Each frame's alpha composites its colour over
 * the background (the frames smokemorph writes are straight alpha).
 *
 *   strip -o strip.png [--bg 101018] [--gap 4] frame_00001.png frame_00031.png ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "image.h"

static int load_rgba(const char *path, Image **out, char *err, size_t n)
{
    ImageLoadOpts o = {0};
    Image *ch[4] = {0};
    static const ImageChannel c[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B, IMAGE_CHANNEL_A};
    for (int k = 0; k < 4; k++) {
        o.channel = c[k];
        if (!(ch[k] = image_load(path, &o, err, n))) {
            for (int q = 0; q < k; q++) image_free(ch[q]);
            return -1;
        }
    }
    Image *im = image_create(ch[0]->w, ch[0]->h, 4);
    for (int p = 0; im && p < im->w * im->h; p++)
        for (int k = 0; k < 4; k++) im->px[4 * p + k] = ch[k]->px[p];
    for (int k = 0; k < 4; k++) image_free(ch[k]);
    *out = im;
    return im ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *outp = NULL;
    float bg[3] = {0.06f, 0.06f, 0.08f};
    int gap = 4, first = 0;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "-o") && k + 1 < argc) outp = argv[++k];
        else if (!strcmp(argv[k], "--bg") && k + 1 < argc) {
            if (config_parse_color(argv[++k], bg) < 0) { fprintf(stderr, "strip: --bg: expected RRGGBB\n"); return 1; }
        } else if (!strcmp(argv[k], "--gap") && k + 1 < argc) gap = atoi(argv[++k]);
        else if (argv[k][0] == '-') { fprintf(stderr, "usage: strip -o OUT.png [--bg RRGGBB] [--gap N] FRAME.png...\n"); return 1; }
        else { first = k; break; }
    }
    if (!outp || !first || gap < 0 || gap > 1000) {
        fprintf(stderr, "usage: strip -o OUT.png [--bg RRGGBB] [--gap N] FRAME.png...\n");
        return 1;
    }
    int n = argc - first, W = 0, H = 0;
    Image **ims = calloc((size_t)n, sizeof *ims);
    char err[512];
    for (int k = 0; k < n; k++) {
        if (load_rgba(argv[first + k], &ims[k], err, sizeof err) < 0) {
            fprintf(stderr, "strip: %s\n", err);
            return 1;
        }
        W += ims[k]->w + (k ? gap : 0);
        if (ims[k]->h > H) H = ims[k]->h;
    }
    Image *out = image_create(W, H, 4);
    if (!out) { fprintf(stderr, "strip: %dx%d is too large\n", W, H); return 1; }
    for (int p = 0; p < W * H; p++) {
        out->px[4 * p + 0] = 0.5f; out->px[4 * p + 1] = 0.5f; out->px[4 * p + 2] = 0.5f; out->px[4 * p + 3] = 1.0f;
    }
    int x0 = 0;
    for (int k = 0; k < n; k++) {
        Image *im = ims[k];
        for (int y = 0; y < im->h; y++)
            for (int x = 0; x < im->w; x++) {
                const float *s = im->px + 4 * ((size_t)y * im->w + x);
                float *d = out->px + 4 * ((size_t)y * W + x0 + x);
                for (int c = 0; c < 3; c++) d[c] = bg[c] + s[3] * (s[c] - bg[c]);
                d[3] = 1.0f;
            }
        x0 += im->w + gap;
        image_free(im);
    }
    free(ims);
    if (image_save_png(outp, out, 8, err, sizeof err) < 0) {
        fprintf(stderr, "strip: %s\n", err);
        return 1;
    }
    image_free(out);
    return 0;
}
