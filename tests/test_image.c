/* test_image: PNG (every bit depth and colour type) and RAW loading, every
 * bad input, resampling, PNG saving, option parsing. No GL.
 * Fixtures are written by the test itself (libpng's low-level write API) into
 * a fresh directory under /tmp, removed at the end. */
#include "check.h"
#include "image.h"
#include "testlib.h"

#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[64];

static const char *fixture(const char *name)
{
    static char buf[8][256];
    static int k;
    char *p = buf[k++ & 7];
    snprintf(p, 256, "%s/%s", g_dir, name);
    return p;
}

/* Number of entries in dir (not . and ..) whose name contains needle. */
static int count_entries(const char *dir, const char *needle)
{
    int m = 0;
    return testlib_count_entries(dir, needle, &m) < 0 ? -1 : m;
}

/* A directory a test made read-only is emptied too. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0700);
            remove_dir(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* ---- writing fixture PNGs with libpng's low-level API -------------------- */

typedef struct {
    int w, h, bits, color_type; /* PNG_COLOR_TYPE_* */
    const unsigned *samples;    /* w*h*channels values (palette: indices) */
    const png_color *palette;
    int npalette;
    const unsigned char *trns; /* palette alpha */
    int ntrns;
    const png_color_16 *trns_colour; /* grey/RGB tRNS */
    bool interlace;
    bool gamma_chunks; /* add gAMA + sRGB: the loader must ignore them */
} PngSpec;

static int spec_channels(int ct)
{
    switch (ct) {
    case PNG_COLOR_TYPE_GRAY: return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGBA: return 4;
    default: return 1; /* palette */
    }
}

static int write_png_spec(const char *path, const PngSpec *s)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    int nch = spec_channels(s->color_type);
    size_t rowbytes = ((size_t)s->w * nch * s->bits + 7) / 8;
    unsigned char *rows = calloc((size_t)s->h, rowbytes);
    png_bytep *rp = malloc(sizeof *rp * s->h);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(rp);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, s->w, s->h, s->bits, s->color_type,
                 s->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (s->palette) png_set_PLTE(png, info, s->palette, s->npalette);
    if (s->trns || s->trns_colour)
        png_set_tRNS(png, info, s->trns, s->ntrns, s->trns_colour);
    if (s->gamma_chunks) {
        png_set_gAMA(png, info, 0.45455);
        png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    }
    png_write_info(png, info);
    for (int y = 0; y < s->h; y++) {
        unsigned char *r = rows + rowbytes * y;
        rp[y] = r;
        for (int i = 0; i < s->w * nch; i++) {
            unsigned v = s->samples[(size_t)y * s->w * nch + i];
            if (s->bits == 16) {
                r[2 * i] = (unsigned char)(v >> 8);
                r[2 * i + 1] = (unsigned char)v;
            } else if (s->bits == 8) {
                r[i] = (unsigned char)v;
            } else {
                int per = 8 / s->bits;
                int shift = 8 - s->bits * (i % per + 1);
                r[i / per] |= (unsigned char)(v << shift);
            }
        }
    }
    png_write_image(png, rp);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(rp);
    return fclose(f) == 0 ? 0 : -1;
}

static Image *load(const char *path, ImageChannel ch, bool invert)
{
    ImageLoadOpts o = {0};
    o.channel = ch;
    o.invert = invert;
    return testlib_load_opts(path, &o);
}

static double luma(double r, double g, double b)
{
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/* Load path with every channel and invert, compare against the expected
 * per-pixel channel values exp[(i*4)+{r,g,b,a}] (already in [0,1]); nch is
 * the file's channel count (1 or 2 means grey). */
static void check_all_channels(const char *what, const char *path, int npx, const double *exp,
                               bool colour)
{
    static const ImageChannel chs[] = {IMAGE_CHANNEL_LUMA, IMAGE_CHANNEL_R, IMAGE_CHANNEL_G,
                                       IMAGE_CHANNEL_B, IMAGE_CHANNEL_A};
    static const char *names[] = {"luma", "r", "g", "b", "a"};
    /* --channel a on a file without alpha is an error (issue 10) */
    ImageInfo info = {0};
    char err[512] = "";
    image_free(image_load_info(path, NULL, &info, err, sizeof err));
    for (int c = 0; c < 5; c++) {
        for (int inv = 0; inv < 2; inv++) {
            if (chs[c] == IMAGE_CHANNEL_A && !info.has_alpha) {
                ImageLoadOpts o = {.channel = IMAGE_CHANNEL_A, .invert = inv};
                Image *no = image_load(path, &o, err, sizeof err);
                CHECK(!no && strstr(err, "no alpha channel"), "%s: --channel a without alpha: '%s'",
                      what, no ? "loaded" : err);
                image_free(no);
                continue;
            }
            Image *im = load(path, chs[c], inv);
            CHECK(im != NULL, "%s: loads (channel %s)", what, names[c]);
            if (!im) continue;
            CHECK(im->channels == 1 && im->w * im->h == npx, "%s: shape", what);
            int bad = -1;
            double want_bad = 0;
            for (int i = 0; i < npx && i < im->w * im->h; i++) {
                const double *e = exp + 4 * i;
                double v;
                if (chs[c] == IMAGE_CHANNEL_LUMA)
                    v = colour ? luma(e[0], e[1], e[2]) : e[0];
                else if (chs[c] == IMAGE_CHANNEL_A)
                    v = e[3];
                else
                    v = e[c - 1];
                if (inv) v = 1.0 - v;
                bool ok = (chs[c] == IMAGE_CHANNEL_LUMA && colour)
                              ? fabs(im->px[i] - v) <= 1e-6
                              : im->px[i] == (float)v;
                if (!ok && bad < 0) {
                    bad = i;
                    want_bad = v;
                }
            }
            CHECK(bad < 0, "%s: channel %s invert %d: pixel %d is %.9g, expected %.9g", what,
                  names[c], inv, bad, bad >= 0 ? im->px[bad] : 0.0, want_bad);
            image_free(im);
        }
    }
}

/* ---- PNG kinds ----------------------------------------------------------- */

static void test_png_grey_depths(void)
{
    static const int depths[] = {1, 2, 4, 8, 16};
    for (int d = 0; d < 5; d++) {
        for (int il = 0; il < 2; il++) {
            int bits = depths[d];
            unsigned max = (1u << bits) - 1;
            enum { W = 11, H = 5 };
            unsigned s[W * H];
            double exp[W * H * 4];
            for (int i = 0; i < W * H; i++) {
                s[i] = bits == 16 ? (unsigned)(i * 1234u) % 65536u : (unsigned)(i * 7 + 3) % (max + 1);
                double v = (double)s[i] / max;
                exp[4 * i] = exp[4 * i + 1] = exp[4 * i + 2] = v;
                exp[4 * i + 3] = 1.0;
            }
            PngSpec sp = {.w = W, .h = H, .bits = bits, .color_type = PNG_COLOR_TYPE_GRAY,
                          .samples = s, .interlace = il};
            char name[64];
            snprintf(name, sizeof name, "grey%d%s.png", bits, il ? "i" : "");
            const char *p = fixture(name);
            CHECK(write_png_spec(p, &sp) == 0, "write %s", name);
            check_all_channels(name, p, W * H, exp, false);
        }
    }
    /* the examples of the issue, exactly */
    unsigned one[1] = {1}, five[1] = {5}, v1234[1] = {1234};
    PngSpec a = {.w = 1, .h = 1, .bits = 1, .color_type = PNG_COLOR_TYPE_GRAY, .samples = one};
    PngSpec b = {.w = 1, .h = 1, .bits = 4, .color_type = PNG_COLOR_TYPE_GRAY, .samples = five};
    PngSpec c = {.w = 1, .h = 1, .bits = 16, .color_type = PNG_COLOR_TYPE_GRAY, .samples = v1234};
    write_png_spec(fixture("g1.png"), &a);
    write_png_spec(fixture("g4.png"), &b);
    write_png_spec(fixture("g16.png"), &c);
    Image *ia = load(fixture("g1.png"), IMAGE_CHANNEL_LUMA, false);
    Image *ib = load(fixture("g4.png"), IMAGE_CHANNEL_LUMA, false);
    Image *ic = load(fixture("g16.png"), IMAGE_CHANNEL_LUMA, false);
    CHECK(ia && ia->px[0] == 1.0f, "1-bit 1 -> 1.0");
    CHECK(ib && ib->px[0] == (float)(5.0 / 15.0), "4-bit 5 -> 5/15");
    CHECK(ic && ic->px[0] == (float)(1234.0 / 65535.0), "16-bit 1234 -> 1234/65535");
    image_free(ia);
    image_free(ib);
    image_free(ic);
}

static void test_png_grey_alpha(void)
{
    for (int bits = 8; bits <= 16; bits += 8) {
        unsigned max = (1u << bits) - 1;
        enum { W = 6, H = 3 };
        unsigned s[W * H * 2];
        double exp[W * H * 4];
        for (int i = 0; i < W * H; i++) {
            s[2 * i] = (unsigned)(i * 37 + 5) * (bits == 16 ? 251u : 1u) % (max + 1);
            s[2 * i + 1] = (unsigned)(i * 53 + 11) * (bits == 16 ? 257u : 1u) % (max + 1);
            if (i == 2) s[2 * i + 1] = 0; /* transparent but with a colour */
            double g = (double)s[2 * i] / max;
            exp[4 * i] = exp[4 * i + 1] = exp[4 * i + 2] = g;
            exp[4 * i + 3] = (double)s[2 * i + 1] / max;
        }
        PngSpec sp = {.w = W, .h = H, .bits = bits, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                      .samples = s};
        char name[64];
        snprintf(name, sizeof name, "ga%d.png", bits);
        const char *p = fixture(name);
        CHECK(write_png_spec(p, &sp) == 0, "write %s", name);
        check_all_channels(name, p, W * H, exp, false);
    }
}

static void test_png_rgb_rgba(void)
{
    for (int alpha = 0; alpha < 2; alpha++) {
        for (int bits = 8; bits <= 16; bits += 8) {
            for (int il = 0; il < 2; il++) {
                unsigned max = (1u << bits) - 1;
                int nch = alpha ? 4 : 3;
                enum { W = 7, H = 5 };
                unsigned s[W * H * 4];
                double exp[W * H * 4];
                for (int i = 0; i < W * H; i++) {
                    for (int k = 0; k < nch; k++) {
                        unsigned v = (unsigned)(i * (17 + 13 * k) + 29 * k + 1);
                        if (bits == 16) v = v * 613u;
                        s[nch * i + k] = v % (max + 1);
                        exp[4 * i + k] = (double)s[nch * i + k] / max;
                    }
                    if (alpha && i == 3) {
                        s[nch * i + 3] = 0; /* straight alpha: colour kept */
                        exp[4 * i + 3] = 0.0;
                    }
                    if (!alpha) exp[4 * i + 3] = 1.0;
                }
                PngSpec sp = {.w = W, .h = H, .bits = bits, .samples = s, .interlace = il,
                              .color_type = alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
                              .gamma_chunks = true};
                char name[64];
                snprintf(name, sizeof name, "%s%d%s.png", alpha ? "rgba" : "rgb", bits,
                         il ? "i" : "");
                const char *p = fixture(name);
                CHECK(write_png_spec(p, &sp) == 0, "write %s", name);
                check_all_channels(name, p, W * H, exp, true);
            }
        }
    }
}

static void test_png_palette(void)
{
    static const png_color pal[16] = {
        {0, 0, 0},       {255, 255, 255}, {255, 0, 0},   {0, 255, 0},   {0, 0, 255},
        {10, 200, 30},   {128, 64, 32},   {1, 2, 3},     {250, 5, 100}, {77, 77, 77},
        {200, 100, 50},  {0, 128, 255},   {33, 66, 99},  {99, 66, 33},  {12, 34, 56},
        {240, 230, 220},
    };
    static const unsigned char trns[5] = {0, 128, 255, 7, 200};
    static const int depths[] = {1, 2, 4, 8};
    for (int d = 0; d < 4; d++) {
        for (int t = 0; t < 2; t++) {
            int bits = depths[d];
            int npal = bits >= 4 ? 16 : 1 << bits;
            enum { W = 9, H = 4 };
            unsigned s[W * H];
            double exp[W * H * 4];
            int ntrns = t ? (npal < 5 ? npal - 1 : 5) : 0;
            if (t && ntrns < 1) ntrns = 1;
            for (int i = 0; i < W * H; i++) {
                s[i] = (unsigned)(i * 5 + 1) % (unsigned)npal;
                exp[4 * i] = pal[s[i]].red / 255.0;
                exp[4 * i + 1] = pal[s[i]].green / 255.0;
                exp[4 * i + 2] = pal[s[i]].blue / 255.0;
                exp[4 * i + 3] = (t && (int)s[i] < ntrns) ? trns[s[i]] / 255.0 : 1.0;
            }
            PngSpec sp = {.w = W, .h = H, .bits = bits, .color_type = PNG_COLOR_TYPE_PALETTE,
                          .samples = s, .palette = pal, .npalette = npal,
                          .trns = t ? trns : NULL, .ntrns = ntrns};
            char name[64];
            snprintf(name, sizeof name, "pal%d%s.png", bits, t ? "t" : "");
            const char *p = fixture(name);
            CHECK(write_png_spec(p, &sp) == 0, "write %s", name);
            check_all_channels(name, p, W * H, exp, true);
        }
    }
}

static void test_png_trns_colour(void)
{
    /* grey + tRNS at 2, 8 and 16 bits: the keyed value becomes alpha 0 */
    static const int depths[] = {2, 8, 16};
    for (int d = 0; d < 3; d++) {
        int bits = depths[d];
        unsigned max = (1u << bits) - 1;
        unsigned key = bits == 2 ? 2 : bits == 8 ? 100 : 40000;
        enum { W = 5, H = 3 };
        unsigned s[W * H];
        double exp[W * H * 4];
        for (int i = 0; i < W * H; i++) {
            s[i] = (i % 3 == 0) ? key : (unsigned)(i * 7919u) % (max + 1);
            if (s[i] == key && i % 3) s[i] = (key + 1) % (max + 1);
            exp[4 * i] = exp[4 * i + 1] = exp[4 * i + 2] = (double)s[i] / max;
            exp[4 * i + 3] = s[i] == key ? 0.0 : 1.0;
        }
        png_color_16 tc = {0};
        tc.gray = (png_uint_16)key;
        PngSpec sp = {.w = W, .h = H, .bits = bits, .color_type = PNG_COLOR_TYPE_GRAY,
                      .samples = s, .trns_colour = &tc};
        char name[64];
        snprintf(name, sizeof name, "greytrns%d.png", bits);
        const char *p = fixture(name);
        CHECK(write_png_spec(p, &sp) == 0, "write %s", name);
        check_all_channels(name, p, W * H, exp, false);
    }
    /* RGB + tRNS, 8 bits */
    enum { W = 4, H = 2 };
    unsigned s[W * H * 3];
    double exp[W * H * 4];
    for (int i = 0; i < W * H; i++) {
        bool keyed = i % 2 == 0;
        s[3 * i] = keyed ? 10 : (unsigned)(i * 30);
        s[3 * i + 1] = keyed ? 20 : 200;
        s[3 * i + 2] = keyed ? 30 : 99;
        for (int k = 0; k < 3; k++) exp[4 * i + k] = s[3 * i + k] / 255.0;
        exp[4 * i + 3] = keyed ? 0.0 : 1.0;
    }
    png_color_16 tc = {0};
    tc.red = 10;
    tc.green = 20;
    tc.blue = 30;
    PngSpec sp = {.w = W, .h = H, .bits = 8, .color_type = PNG_COLOR_TYPE_RGB, .samples = s,
                  .trns_colour = &tc};
    const char *p = fixture("rgbtrns8.png");
    CHECK(write_png_spec(p, &sp) == 0, "write rgbtrns8.png");
    check_all_channels("rgbtrns8.png", p, W * H, exp, true);
}

static void test_png_orientation(void)
{
    /* row 0 of the image is the top row of the file */
    unsigned s[2 * 3] = {0, 255, 10, 20, 30, 40};
    PngSpec sp = {.w = 2, .h = 3, .bits = 8, .color_type = PNG_COLOR_TYPE_GRAY, .samples = s};
    const char *p = fixture("orient.png");
    write_png_spec(p, &sp);
    Image *im = load(p, IMAGE_CHANNEL_LUMA, false);
    CHECK(im && im->w == 2 && im->h == 3, "orientation: size");
    if (im) {
        CHECK(im->px[1] == 1.0f && im->px[2] == (float)(10 / 255.0) &&
                  im->px[5] == (float)(40 / 255.0),
              "orientation: px[(y*w+x)], top row first");
        CHECK(image_sum(im) > 1.0, "image_sum");
    }
    image_free(im);
    /* NULL opts means defaults */
    char err[256];
    im = image_load(p, NULL, err, sizeof err);
    CHECK(im && im->px[1] == 1.0f, "NULL opts = defaults");
    image_free(im);
}

/* ---- PNG errors ---------------------------------------------------------- */

static uint32_t crc32_png(const unsigned char *p, size_t n) { return testlib_crc32(p, n); }

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Offset of the first chunk of the given type (its length field), or 0. */
static size_t find_chunk(const unsigned char *b, size_t n, const char *type)
{
    size_t off = 8;
    while (off + 12 <= n) {
        uint32_t len = be32(b + off);
        if (memcmp(b + off + 4, type, 4) == 0) return off;
        off += 12 + len;
    }
    return 0;
}

static void fix_crc(unsigned char *b, size_t chunk)
{
    uint32_t len = be32(b + chunk);
    put_be32(b + chunk + 8 + len, crc32_png(b + chunk + 4, 4 + len));
}

/* Expect image_load to fail with err containing both the path and needle. */
static void expect_fail(const char *what, const char *path, const ImageLoadOpts *o,
                        const char *needle)
{
    char err[512] = "";
    ImageLoadOpts d = {0};
    Image *im = image_load(path, o ? o : &d, err, sizeof err);
    CHECK(im == NULL, "%s: load fails", what);
    if (getenv("TEST_VERBOSE")) printf("  %s -> %s\n", what, err);
    image_free(im);
    CHECK(strstr(err, path) != NULL, "%s: message names the file: '%s'", what, err);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' mentions '%s'", what, err, needle);
    CHECK(strncmp(err, "image:", 6) != 0 && strchr(err, '\n') == NULL && err[strlen(err) - 1] != '.',
          "%s: one line, no tag, no final stop: '%s'", what, err);
}

static unsigned char *valid_png(size_t *n)
{
    enum { W = 40, H = 30 };
    unsigned s[W * H * 3];
    for (int i = 0; i < W * H * 3; i++) s[i] = (unsigned)(i * 31 + i / 7) & 255;
    PngSpec sp = {.w = W, .h = H, .bits = 8, .color_type = PNG_COLOR_TYPE_RGB, .samples = s};
    const char *p = fixture("valid.png");
    if (write_png_spec(p, &sp) != 0) return NULL;
    return (unsigned char *)testlib_read_file(p, n);
}

static void test_png_errors(void)
{
    expect_fail("missing file", fixture("no-such.png"), NULL, "no such file");
    expect_fail("directory", g_dir, NULL, "is a directory");

    const char *txt = fixture("text.png");
    testlib_write_file(txt, "hello, this is not a PNG\n", 25);
    expect_fail("not a PNG", txt, NULL, "cannot read");
    expect_fail("not a PNG", txt, NULL, "not a PNG file");
    const char *empty = fixture("empty.png");
    testlib_write_file(empty, "", 0);
    expect_fail("empty file", empty, NULL, "empty");

    size_t n = 0;
    unsigned char *b = valid_png(&n);
    CHECK(b && n > 100, "valid fixture");
    if (!b) return;
    Image *ok = load(fixture("valid.png"), IMAGE_CHANNEL_LUMA, false);
    CHECK(ok != NULL, "valid fixture loads");
    image_free(ok);

    size_t idat = find_chunk(b, n, "IDAT");
    size_t iend = find_chunk(b, n, "IEND");
    CHECK(idat > 0 && iend > idat, "fixture chunks found");

    /* truncated at many lengths, including inside IEND */
    size_t cuts[] = {4, 8, 12, 20, 33, idat + 4, idat + 9, idat + 8 + be32(b + idat) / 2,
                     iend - 1, iend, iend + 6, n - 1};
    const char *tp = fixture("trunc.png");
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        testlib_write_file(tp, b, cuts[i]);
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu of %zu", cuts[i], n);
        expect_fail(what, tp, NULL, "truncated PNG file");
    }

    unsigned char *c = malloc(n);
    const char *cp = fixture("corrupt.png");

    /* bad CRC: a byte of IDAT data flipped */
    memcpy(c, b, n);
    c[idat + 8 + 10] ^= 0x40;
    testlib_write_file(cp, c, n);
    expect_fail("IDAT data flipped", cp, NULL, "corrupt PNG file");

    /* bad CRC: IDAT's CRC flipped, data intact */
    memcpy(c, b, n);
    c[idat + 8 + be32(b + idat) + 2] ^= 0x10;
    testlib_write_file(cp, c, n);
    expect_fail("IDAT CRC flipped", cp, NULL, "CRC");

    /* bad CRC: IHDR's CRC flipped */
    memcpy(c, b, n);
    c[8 + 8 + 13] ^= 0x01;
    testlib_write_file(cp, c, n);
    expect_fail("IHDR CRC flipped", cp, NULL, "corrupt PNG file");

    /* damaged zlib stream, CRC fixed: invalid deflate block type */
    memcpy(c, b, n);
    c[idat + 8 + 2] |= 0x06;
    fix_crc(c, idat);
    testlib_write_file(cp, c, n);
    expect_fail("invalid deflate block", cp, NULL, "corrupt PNG file");

    /* damaged zlib header, CRC fixed */
    memcpy(c, b, n);
    c[idat + 8] = 0x79;
    fix_crc(c, idat);
    testlib_write_file(cp, c, n);
    expect_fail("bad zlib header", cp, NULL, "corrupt PNG file");

    /* damaged deflate data in the middle, CRC fixed */
    memcpy(c, b, n);
    for (uint32_t k = 20; k < be32(b + idat) - 10 && k < 200; k++) c[idat + 8 + k] = 0xff;
    fix_crc(c, idat);
    testlib_write_file(cp, c, n);
    expect_fail("garbled deflate data", cp, NULL, "corrupt PNG file");

    /* zero width in IHDR, CRC fixed */
    memcpy(c, b, n);
    put_be32(c + 16, 0);
    fix_crc(c, 8);
    testlib_write_file(cp, c, n);
    expect_fail("zero width", cp, NULL, "corrupt PNG file");

    /* absurd size in IHDR, CRC fixed */
    memcpy(c, b, n);
    put_be32(c + 16, IMAGE_MAX_SIDE + 1);
    fix_crc(c, 8);
    testlib_write_file(cp, c, n);
    expect_fail("absurd width", cp, NULL, "out of range");
    memcpy(c, b, n);
    put_be32(c + 20, 2000000000u);
    fix_crc(c, 8);
    testlib_write_file(cp, c, n);
    expect_fail("absurd height", cp, NULL, "out of range");

    /* every single byte damaged in turn: loads or fails cleanly, never crashes
     * or leaks (run under ASan); a failure names the file */
    int loaded = 0, failed = 0, badmsg = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(c, b, n);
        c[i] ^= (unsigned char)(0x5a + i);
        testlib_write_file(cp, c, n);
        char err[512] = "";
        ImageLoadOpts o = {0};
        Image *im = image_load(cp, &o, err, sizeof err);
        if (im) {
            loaded++;
            badmsg += !(im->w > 0 && im->h > 0 && im->channels == 1);
        } else {
            failed++;
            badmsg += strstr(err, cp) == NULL;
        }
        image_free(im);
    }
    CHECK(badmsg == 0 && failed > (int)n / 2, "byte damage: %d loaded, %d failed, %d bad", loaded,
          failed, badmsg);

    free(c);
    free(b);

    if (testlib_exists("/dev/null")) expect_fail("device file", "/dev/null", NULL, "not a regular file");
}

/* ---- RAW ------------------------------------------------------------------ */

static ImageLoadOpts raw_opts(int w, int h, ImageRawType t)
{
    ImageLoadOpts o = {0};
    o.raw = true;
    o.raw_w = w;
    o.raw_h = h;
    o.raw_type = t;
    return o;
}

static void test_raw(void)
{
    char err[256];
    /* u8 */
    unsigned char u8[12];
    for (int i = 0; i < 12; i++) u8[i] = (unsigned char)(i * 23);
    const char *p8 = fixture("a.raw");
    testlib_write_file(p8, u8, sizeof u8);
    ImageLoadOpts o = raw_opts(4, 3, IMAGE_RAW_U8);
    Image *im = image_load(p8, &o, err, sizeof err);
    CHECK(im && im->w == 4 && im->h == 3 && im->channels == 1, "raw u8 loads");
    int bad = 0;
    for (int i = 0; im && i < 12; i++) bad += im->px[i] != (float)(u8[i] / 255.0);
    CHECK(im && bad == 0, "raw u8 values");
    image_free(im);
    o.invert = true;
    im = image_load(p8, &o, err, sizeof err);
    bad = 0;
    for (int i = 0; im && i < 12; i++) bad += im->px[i] != (float)(1.0 - u8[i] / 255.0);
    CHECK(im && bad == 0, "raw u8 invert");
    image_free(im);

    /* u16, little-endian */
    unsigned char u16[24];
    unsigned vals[12];
    for (int i = 0; i < 12; i++) {
        vals[i] = (unsigned)(i * 5431 + 7) & 0xffff;
        u16[2 * i] = (unsigned char)(vals[i] & 0xff);
        u16[2 * i + 1] = (unsigned char)(vals[i] >> 8);
    }
    const char *p16 = fixture("a16.raw");
    testlib_write_file(p16, u16, sizeof u16);
    o = raw_opts(4, 3, IMAGE_RAW_U16);
    im = image_load(p16, &o, err, sizeof err);
    bad = 0;
    for (int i = 0; im && i < 12; i++) bad += im->px[i] != (float)(vals[i] / 65535.0);
    CHECK(im && bad == 0, "raw u16 values (little-endian)");
    image_free(im);

    /* f32, little-endian; taken as is; invert is max - v */
    float fv[6] = {0.0f, 0.25f, 1.5f, 3.0f, 1e-3f, 2.0f};
    unsigned char f32[24];
    for (int i = 0; i < 6; i++) {
        uint32_t u;
        memcpy(&u, &fv[i], 4);
        for (int k = 0; k < 4; k++) f32[4 * i + k] = (unsigned char)(u >> (8 * k));
    }
    const char *pf = fixture("af.raw");
    testlib_write_file(pf, f32, sizeof f32);
    o = raw_opts(3, 2, IMAGE_RAW_F32);
    im = image_load(pf, &o, err, sizeof err);
    bad = 0;
    for (int i = 0; im && i < 6; i++) bad += im->px[i] != fv[i];
    CHECK(im && bad == 0, "raw f32 values");
    image_free(im);
    o.invert = true;
    im = image_load(pf, &o, err, sizeof err);
    bad = 0;
    for (int i = 0; im && i < 6; i++) bad += im->px[i] != 3.0f - fv[i];
    CHECK(im && bad == 0, "raw f32 invert = max - v");
    image_free(im);

    /* errors: wrong length, exact message */
    o = raw_opts(4, 3, IMAGE_RAW_U16);
    expect_fail("raw wrong length", p8, &o, "RAW file is 12 bytes, expected 4×3×2 = 24");
    o = raw_opts(5, 3, IMAGE_RAW_U8);
    expect_fail("raw too short", p8, &o, "RAW file is 12 bytes, expected 5×3×1 = 15");
    o = raw_opts(2, 3, IMAGE_RAW_U8);
    expect_fail("raw too long", p8, &o, "RAW file is 12 bytes, expected 2×3×1 = 6");
    o = raw_opts(1, 1, IMAGE_RAW_F32);
    expect_fail("raw f32 wrong length", pf, &o, "expected 1×1×4 = 4");
    char msg[256];
    snprintf(msg, sizeof msg, "cannot read %s: RAW file is 12 bytes, expected 4×3×2 = 24", p8);
    o = raw_opts(4, 3, IMAGE_RAW_U16);
    im = image_load(p8, &o, err, sizeof err);
    CHECK(!im && strcmp(err, msg) == 0, "raw message exactly: '%s'", err);
    image_free(im);
    /* zero and absurd sizes */
    o = raw_opts(0, 3, IMAGE_RAW_U8);
    expect_fail("raw zero width", p8, &o, "out of range");
    o = raw_opts(4, 0, IMAGE_RAW_U8);
    expect_fail("raw zero height", p8, &o, "out of range");
    o = raw_opts(-4, 3, IMAGE_RAW_U8);
    expect_fail("raw negative width", p8, &o, "out of range");
    o = raw_opts(IMAGE_MAX_SIDE + 1, 1, IMAGE_RAW_U8);
    expect_fail("raw absurd width", p8, &o, "out of range");
    o = raw_opts(1, 1 << 30, IMAGE_RAW_F32);
    expect_fail("raw absurd height", p8, &o, "out of range");
    o = raw_opts(4, 3, IMAGE_RAW_U8);
    expect_fail("raw missing", fixture("none.raw"), &o, "no such file");
    expect_fail("raw directory", g_dir, &o, "is a directory");
    /* f32 NaN / Inf / negative */
    const float badv[3] = {NAN, INFINITY, -0.5f};
    const char *why[3] = {"NaN", "infinite", "negative"};
    for (int b = 0; b < 3; b++) {
        unsigned char t[24];
        memcpy(t, f32, sizeof t);
        uint32_t u;
        memcpy(&u, &badv[b], 4);
        for (int k = 0; k < 4; k++) t[4 * 4 + k] = (unsigned char)(u >> (8 * k));
        const char *pb = fixture("bad.raw");
        testlib_write_file(pb, t, sizeof t);
        o = raw_opts(3, 2, IMAGE_RAW_F32);
        expect_fail(why[b], pb, &o, why[b]);
        expect_fail(why[b], pb, &o, "(1, 1)");
    }
}

/* ---- resampling ----------------------------------------------------------- */

static double mean(const Image *im) { return image_sum(im) / ((double)im->w * im->h); }

static void test_resample(void)
{
    Image *src = image_create(37, 23, 1);
    for (int i = 0; i < 37 * 23; i++) src->px[i] = (float)(0.5 + 0.5 * sin(i * 0.37) * cos(i * 0.011));
    static const int sizes[][2] = {{10, 7},  {100, 80}, {37, 23}, {5, 60},  {74, 11},
                                   {1, 1},   {256, 3},  {36, 24}, {38, 22}, {200, 200}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        Image *d = image_resample(src, w, h);
        CHECK(d && d->w == w && d->h == h && d->channels == 1, "resample to %dx%d: shape", w, h);
        if (!d) continue;
        double m0 = mean(src), m1 = mean(d);
        CHECK(fabs(m1 - m0) <= 1e-5 * fabs(m0), "resample to %dx%d keeps the mean: %.9g vs %.9g", w,
              h, m1, m0);
        image_free(d);
    }
    /* same size is the identity */
    Image *same = image_resample(src, 37, 23);
    int bad = 0;
    for (int i = 0; same && i < 37 * 23; i++) bad += fabsf(same->px[i] - src->px[i]) > 1e-6f;
    CHECK(same && bad == 0, "same-size resample is the identity");
    image_free(same);
    image_free(src);

    /* constant stays constant */
    Image *c = image_create(13, 9, 1);
    for (int i = 0; i < 13 * 9; i++) c->px[i] = 0.3f;
    static const int csz[][2] = {{4, 4}, {50, 9}, {13, 40}, {7, 31}, {29, 2}};
    for (int k = 0; k < 5; k++) {
        Image *d = image_resample(c, csz[k][0], csz[k][1]);
        float dev = 0.0f;
        for (int i = 0; d && i < d->w * d->h; i++) dev = fmaxf(dev, fabsf(d->px[i] - 0.3f));
        CHECK(d && dev <= 1e-6f, "constant stays constant at %dx%d (dev %g)", csz[k][0], csz[k][1],
              dev);
        image_free(d);
    }
    image_free(c);

    /* area averaging is exact for an integer factor: 4x4 -> 2x2 box means */
    Image *s4 = image_create(4, 4, 1);
    for (int i = 0; i < 16; i++) s4->px[i] = (float)i;
    Image *d2 = image_resample(s4, 2, 2);
    CHECK(d2 && d2->px[0] == 2.5f && d2->px[1] == 4.5f && d2->px[2] == 10.5f && d2->px[3] == 12.5f,
          "4x4 -> 2x2 box means");
    image_free(d2);
    /* and on one axis only: 4x4 -> 4x2 and 4x4 -> 1x4 */
    Image *d42 = image_resample(s4, 4, 2);
    CHECK(d42 && d42->px[0] == 2.0f && d42->px[3] == 5.0f && d42->px[4] == 10.0f &&
              d42->px[7] == 13.0f,
          "4x4 -> 4x2 column pair means");
    image_free(d42);
    Image *d14 = image_resample(s4, 1, 4);
    CHECK(d14 && d14->px[0] == 1.5f && d14->px[3] == 13.5f, "4x4 -> 1x4 row means");
    image_free(d14);
    /* a non-integer factor: 3 -> 2 gives (a + b/2) / 1.5 */
    Image *s3 = image_create(3, 1, 1);
    s3->px[0] = 1.0f;
    s3->px[1] = 2.0f;
    s3->px[2] = 4.0f;
    Image *d3 = image_resample(s3, 2, 1);
    CHECK(d3 && fabsf(d3->px[0] - (float)(4.0 / 3.0)) < 1e-6f &&
              fabsf(d3->px[1] - (float)(10.0 / 3.0)) < 1e-6f,
          "3 -> 2 overlap weights");
    image_free(d3);
    /* enlarging: cell-centred bilinear with clamped edges, then mean kept */
    Image *d6 = image_resample(s3, 6, 1);
    /* u = (j+0.5)/2 - 0.5: 0(clamp), 0.25, 0.75, 1.25, 1.75, 2(clamp) */
    double raw6[6] = {1.0, 1.25, 1.75, 2.5, 3.5, 4.0}, rs = 0;
    for (int j = 0; j < 6; j++) rs += raw6[j];
    double k6 = (7.0 / 3.0 * 6.0) / rs;
    bad = 0;
    for (int j = 0; d6 && j < 6; j++) bad += fabs(d6->px[j] - raw6[j] * k6) > 1e-6;
    CHECK(d6 && bad == 0, "1D bilinear enlarge, mean-scaled");
    image_free(d6);
    image_free(s3);

    /* several channels: each mean kept */
    Image *m = image_create(6, 5, 4);
    for (int i = 0; i < 6 * 5 * 4; i++) m->px[i] = (float)((i * 7) % 11) / 10.0f;
    Image *md = image_resample(m, 17, 3);
    CHECK(md && md->channels == 4, "4-channel resample");
    for (int ch = 0; md && ch < 4; ch++) {
        double a = 0, b = 0;
        for (int i = 0; i < 30; i++) a += m->px[i * 4 + ch];
        for (int i = 0; i < 51; i++) b += md->px[i * 4 + ch];
        CHECK(fabs(a / 30 - b / 51) <= 1e-5 * (a / 30), "channel %d mean kept", ch);
    }
    image_free(md);
    image_free(m);

    /* bad sizes */
    CHECK(image_resample(s4, 0, 4) == NULL, "resample to 0 wide fails");
    CHECK(image_resample(s4, 4, IMAGE_MAX_SIDE + 1) == NULL, "resample too large fails");
    CHECK(image_resample(NULL, 4, 4) == NULL, "resample NULL fails");
    image_free(s4);
}

/* ---- saving --------------------------------------------------------------- */

static void test_save_png(void)
{
    char err[512];
    for (int bits = 8; bits <= 16; bits += 8) {
        unsigned max = bits == 16 ? 65535u : 255u;
        /* grey: exact levels round-trip exactly; others within half a step */
        Image *g = image_create(19, 7, 1);
        int n = 19 * 7;
        for (int i = 0; i < n; i++)
            g->px[i] = i < 60 ? (float)((double)((i * 4099u) % (max + 1)) / max)
                              : (float)(0.5 + 0.49 * sin(i * 1.7));
        g->px[0] = -0.5f; /* clamped */
        g->px[1] = 1.5f;
        g->px[2] = NAN;
        char name[64];
        snprintf(name, sizeof name, "save-grey%d.png", bits);
        const char *p = fixture(name);
        CHECK(image_save_png(p, g, bits, err, sizeof err) == 0, "save %s: %s", name, err);
        CHECK(count_entries(g_dir, ".tmp.") == 0, "no temporary file left after saving");
        Image *l = load(p, IMAGE_CHANNEL_LUMA, false);
        CHECK(l && l->w == 19 && l->h == 7, "%s loads back", name);
        int bad = 0;
        for (int i = 3; l && i < n; i++) {
            if (i < 60) bad += l->px[i] != g->px[i];
            else bad += fabs(l->px[i] - g->px[i]) > 0.5 / max + 1e-7;
        }
        CHECK(l && bad == 0, "%s: values round-trip (%d bad)", name, bad);
        CHECK(l && l->px[0] == 0.0f && l->px[1] == 1.0f && l->px[2] == 0.0f,
              "%s: clamped to [0,1], NaN -> 0", name);
        image_free(l);
        image_free(g);

        /* RGBA, straight alpha: colour kept under alpha 0 */
        Image *c = image_create(5, 4, 4);
        for (int i = 0; i < 20; i++) {
            for (int k = 0; k < 4; k++)
                c->px[4 * i + k] = (float)((double)((i * 97u + k * 1031u) % (max + 1)) / max);
        }
        c->px[4 * 3 + 3] = 0.0f;
        c->px[4 * 3 + 0] = 1.0f;
        snprintf(name, sizeof name, "save-rgba%d.png", bits);
        p = fixture(name);
        CHECK(image_save_png(p, c, bits, err, sizeof err) == 0, "save %s: %s", name, err);
        static const ImageChannel chs[4] = {IMAGE_CHANNEL_R, IMAGE_CHANNEL_G, IMAGE_CHANNEL_B,
                                            IMAGE_CHANNEL_A};
        for (int k = 0; k < 4; k++) {
            Image *lc = load(p, chs[k], false);
            bad = 0;
            for (int i = 0; lc && i < 20; i++) bad += lc->px[i] != c->px[4 * i + k];
            CHECK(lc && bad == 0, "%s channel %d round-trips", name, k);
            image_free(lc);
        }
        Image *lr = load(p, IMAGE_CHANNEL_R, false);
        CHECK(lr && lr->px[3] == 1.0f, "%s: colour under alpha 0 kept (straight alpha)", name);
        image_free(lr);
        image_free(c);
    }

    /* overwrite an existing file */
    Image *one = image_create(2, 2, 1);
    one->px[0] = 1.0f;
    const char *p = fixture("save-grey8.png");
    CHECK(image_save_png(p, one, 8, err, sizeof err) == 0, "overwrite existing file");
    Image *l = load(p, IMAGE_CHANNEL_LUMA, false);
    CHECK(l && l->w == 2 && l->px[0] == 1.0f, "overwritten file has the new image");
    image_free(l);

    /* a directory that does not exist: fails, names the file, leaves nothing */
    const char *np = fixture("no-dir/out.png");
    err[0] = '\0';
    CHECK(image_save_png(np, one, 8, err, sizeof err) == -1, "save into a missing directory fails");
    CHECK(strstr(err, np) && strstr(err, "no such file or directory") &&
              strncmp(err, "cannot write", 12) == 0,
          "missing directory message: '%s'", err);
    CHECK(!testlib_exists(np), "no file under the path");
    CHECK(!testlib_exists(fixture("no-dir")), "no directory created");

    /* the target is a directory: rename fails; the temporary file is removed */
    const char *dp = fixture("a-dir.png");
    mkdir(dp, 0700);
    int before = count_entries(g_dir, "");
    CHECK(image_save_png(dp, one, 8, err, sizeof err) == -1, "save over a directory fails");
    CHECK(strstr(err, dp) != NULL, "message names the file: '%s'", err);
    CHECK(count_entries(g_dir, ".tmp.") == 0, "temporary file removed after a failed rename");
    CHECK(count_entries(g_dir, "") == before, "nothing new left in the directory");

    /* permission denied (only meaningful when not root) */
    if (geteuid() != 0) {
        const char *ro = fixture("ro");
        mkdir(ro, 0500);
        char rp[256];
        snprintf(rp, sizeof rp, "%s/x.png", ro);
        CHECK(image_save_png(rp, one, 8, err, sizeof err) == -1 &&
                  strstr(err, "permission denied"),
              "read-only directory: '%s'", err);
        CHECK(count_entries(ro, "") == 0, "read-only directory stays empty");
    }

    /* bad arguments */
    CHECK(image_save_png(fixture("x.png"), one, 12, err, sizeof err) == -1 && strstr(err, "12"),
          "bits 12 refused: '%s'", err);
    Image *two = image_create(2, 2, 2);
    CHECK(image_save_png(fixture("x.png"), two, 8, err, sizeof err) == -1, "2 channels refused");
    CHECK(!testlib_exists(fixture("x.png")), "refused saves leave no file");
    image_free(two);
    image_free(one);
}

/* ---- parsing, create ------------------------------------------------------ */

static void test_parse(void)
{
    char err[256];
    ImageLoadOpts o = {0};
    CHECK(image_parse_raw_spec("256x128", &o, err, sizeof err) == 0 && o.raw && o.raw_w == 256 &&
              o.raw_h == 128 && o.raw_type == IMAGE_RAW_U8,
          "256x128");
    CHECK(image_parse_raw_spec("256x128:u16", &o, err, sizeof err) == 0 && o.raw_type == IMAGE_RAW_U16,
          "256x128:u16");
    CHECK(image_parse_raw_spec("64x64:f32", &o, err, sizeof err) == 0 && o.raw_w == 64 &&
              o.raw_type == IMAGE_RAW_F32,
          "64x64:f32");
    CHECK(image_parse_raw_spec("3x5:u8", &o, err, sizeof err) == 0 && o.raw_w == 3 && o.raw_h == 5 &&
              o.raw_type == IMAGE_RAW_U8,
          "3x5:u8");
    static const char *bad[] = {"", "x", "256", "256x", "x128", "256x128:", "256x128:u32",
                                "-4x4", "4x-4", " 4x4", "4x4 ", "4*4", "0x4", "4x0",
                                "16385x1", "99999999999x2", "4x4:f32x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ImageLoadOpts q = {0};
        err[0] = '\0';
        CHECK(image_parse_raw_spec(bad[i], &q, err, sizeof err) == -1 && err[0] && !q.raw,
              "raw spec '%s' refused: '%s'", bad[i], err);
    }
    ImageChannel ch = IMAGE_CHANNEL_A;
    CHECK(image_parse_channel("luma", &ch) == 0 && ch == IMAGE_CHANNEL_LUMA, "luma");
    CHECK(image_parse_channel("r", &ch) == 0 && ch == IMAGE_CHANNEL_R, "r");
    CHECK(image_parse_channel("g", &ch) == 0 && ch == IMAGE_CHANNEL_G, "g");
    CHECK(image_parse_channel("b", &ch) == 0 && ch == IMAGE_CHANNEL_B, "b");
    CHECK(image_parse_channel("a", &ch) == 0 && ch == IMAGE_CHANNEL_A, "a");
    CHECK(image_parse_channel("x", &ch) == -1 && image_parse_channel("", &ch) == -1 &&
              image_parse_channel(NULL, &ch) == -1,
          "bad channels refused");
}

static void test_create(void)
{
    CHECK(image_size_ok(1, 1) && image_size_ok(IMAGE_MAX_SIDE, IMAGE_MAX_SIDE), "size ok");
    CHECK(!image_size_ok(0, 1) && !image_size_ok(1, 0) && !image_size_ok(-1, 5) &&
              !image_size_ok(IMAGE_MAX_SIDE + 1, 1),
          "size not ok");
    Image *im = image_create(3, 2, 4);
    CHECK(im && im->w == 3 && im->h == 2 && im->channels == 4, "create");
    int nz = 0;
    for (int i = 0; im && i < 24; i++) nz += im->px[i] != 0.0f;
    CHECK(im && nz == 0, "create zeroes");
    if (im) {
        im->px[0] = 1.0f;
        im->px[1] = 5.0f; /* channel 1: not counted */
        im->px[4] = 2.0f;
        CHECK(image_sum(im) == 3.0, "image_sum counts channel 0 only");
    }
    image_free(im);
    CHECK(image_create(0, 5, 1) == NULL && image_create(5, 5, 0) == NULL &&
              image_create(IMAGE_MAX_SIDE + 1, 1, 1) == NULL,
          "create refuses bad sizes");
    image_free(NULL);
    CHECK(image_sum(NULL) == 0.0, "image_sum(NULL)");
}

/* image_spec: PATH[:OPTIONS], the options only where every item parses */
static void test_image_spec(void)
{
    static const struct {
        const char *spec;
        bool base_invert;
        int rc;
        const char *path;
        ImageChannel ch;
        bool invert;
    } c[] = {
        {"logo.png:invert", false, 1, "logo.png", IMAGE_CHANNEL_LUMA, true},
        {"logo.png:invert=1", false, 1, "logo.png", IMAGE_CHANNEL_LUMA, true},
        {"word.png:invert=0", true, 1, "word.png", IMAGE_CHANNEL_LUMA, false},
        {"mask.png:channel=a,invert", false, 1, "mask.png", IMAGE_CHANNEL_A, true},
        {"mask.png:invert,channel=alpha", false, 1, "mask.png", IMAGE_CHANNEL_A, true},
        {"d:x/m.png:channel=g", true, 1, "d:x/m.png", IMAGE_CHANNEL_G, true},
        {"odd:invert:", false, 1, "odd:invert", IMAGE_CHANNEL_LUMA, false},
        {"plain.png", true, 0, "plain.png", IMAGE_CHANNEL_LUMA, true},
        {"shot:01.png", false, 0, "shot:01.png", IMAGE_CHANNEL_LUMA, false},
        {"a.png:invert,", false, 0, "a.png:invert,", IMAGE_CHANNEL_LUMA, false},
        {"a.png:channel=x", false, 0, "a.png:channel=x", IMAGE_CHANNEL_LUMA, false},
        {"a.png:invert,bogus", false, 0, "a.png:invert,bogus", IMAGE_CHANNEL_LUMA, false},
        {"a.png:invert=2", false, 0, "a.png:invert=2", IMAGE_CHANNEL_LUMA, false},
        {":invert", false, 0, ":invert", IMAGE_CHANNEL_LUMA, false},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        ImageLoadOpts o = {.invert = c[k].base_invert, .max_mb = 7};
        char path[64];
        int rc = image_spec(c[k].spec, path, sizeof path, &o);
        CHECK(rc == c[k].rc && !strcmp(path, c[k].path) && o.channel == c[k].ch &&
                  o.invert == c[k].invert && o.max_mb == 7,
              "%s: rc %d, path '%s', channel %d, invert %d", c[k].spec, rc, path, (int)o.channel,
              (int)o.invert);
    }
    ImageLoadOpts o = {0};
    char small[8];
    CHECK(image_spec("a-long-name.png:invert", small, sizeof small, &o) == -1 && !small[0] && !o.invert,
          "a path that does not fit");
}

int main(void)
{
    testlib_tmpdir(g_dir, sizeof g_dir, "smokemorph-test-image");
    RUN(test_create);
    RUN(test_image_spec);
    RUN(test_png_grey_depths);
    RUN(test_png_grey_alpha);
    RUN(test_png_rgb_rgba);
    RUN(test_png_palette);
    RUN(test_png_trns_colour);
    RUN(test_png_orientation);
    RUN(test_png_errors);
    RUN(test_raw);
    RUN(test_resample);
    RUN(test_save_png);
    RUN(test_parse);
    remove_dir(g_dir);
    return check_done();
}
