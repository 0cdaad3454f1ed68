/* exr: OpenEXR output through OpenEXRCore; see exr.h.
 *
 * The file is written directly (EXR_WRITE_FILE_DIRECTLY) to our own
 * temporary name from image_open_temp, so an EXR's temporary file is named
 * like a PNG's, and renamed over the final name once exr_finish has written
 * the chunk table. The library's messages go to a buffer, never to stderr:
 * the caller prints one line. Channels are stored sorted by name (the EXR
 * rule; exr_add_channel keeps the list sorted), so each chunk's channel is
 * matched to its plane by name. The planes are floats; the library converts
 * them to half when the file is half.
 */
#include "exr.h"

#include <errno.h>
#include <math.h>
#include <openexr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The library's last message (one writer at a time: the exporter is
 * single-threaded). */
static char g_msg[256];

static void on_error(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
    (void)ctxt;
    snprintf(g_msg, sizeof g_msg, "%s", msg && *msg ? msg : exr_get_default_error_message(code));
}

const char *exr_compression_name(ImageExrCompression c)
{
    switch (c) {
    case IMAGE_EXR_ZIP: return "zip";
    case IMAGE_EXR_PIZ: return "piz";
    case IMAGE_EXR_DWAA: return "dwaa";
    case IMAGE_EXR_NONE: return "none";
    }
    return "?";
}

const char *exr_library_version(void)
{
    static char v[48];
    int maj = 0, min = 0, patch = 0;
    const char *extra = "";
    exr_get_library_version(&maj, &min, &patch, &extra);
    snprintf(v, sizeof v, "%d.%d.%d%s", maj, min, patch, extra ? extra : "");
    return v;
}

bool exr_compression_available(ImageExrCompression c)
{
    if (c != IMAGE_EXR_DWAA) return true;
    int maj = 0, min = 0, patch = 0;
    const char *extra = NULL;
    exr_get_library_version(&maj, &min, &patch, &extra);
    return maj > 3 || (maj == 3 && min >= 2);
}

static exr_compression_t compression(ImageExrCompression c)
{
    switch (c) {
    case IMAGE_EXR_PIZ: return EXR_COMPRESSION_PIZ;
    case IMAGE_EXR_DWAA: return EXR_COMPRESSION_DWAA;
    case IMAGE_EXR_NONE: return EXR_COMPRESSION_NONE;
    case IMAGE_EXR_ZIP: break;
    }
    return EXR_COMPRESSION_ZIP;
}

/* OpenEXRCore's own compressor for the chunks of this file (one writer at a
 * time, as g_msg). */
static exr_result_t (*g_compress)(exr_encode_pipeline_t *enc);

/* A chunk whose compressed size is not smaller than its raw size must be
 * stored raw: a reader takes a chunk of exactly the raw size as raw. The
 * library (3.1) keeps a compressed chunk that came out exactly as large
 * (found by fuzz_roundtrip: a 4x4 float chunk that zlib made 64 bytes of 64
 * was read back as its zlib stream), so the raw bytes go in its place. */
static exr_result_t compress_or_raw(exr_encode_pipeline_t *enc)
{
    exr_result_t rc = g_compress(enc);
    if (rc != EXR_ERR_SUCCESS || enc->compressed_bytes < enc->packed_bytes ||
        enc->compressed_buffer == enc->packed_buffer)
        return rc;
    if (enc->compressed_alloc_size < enc->packed_bytes) return EXR_ERR_OUT_OF_MEMORY;
    memcpy(enc->compressed_buffer, enc->packed_buffer, enc->packed_bytes);
    enc->compressed_bytes = enc->packed_bytes;
    return EXR_ERR_SUCCESS;
}

/* The plane of the channel called name, or NULL. */
static const float *plane(const ExrWrite *d, const char *name)
{
    for (int k = 0; k < d->nchannels; k++)
        if (strcmp(d->channels[k].name, name) == 0) return d->channels[k].px;
    return NULL;
}

/* Header and pixels into the open context; 0 or the library's error. */
static exr_result_t write_body(exr_context_t ctx, const ExrWrite *d)
{
    exr_result_t rc;
    int part = 0;
    if ((rc = exr_add_part(ctx, "smoke", EXR_STORAGE_SCANLINE, &part)) != EXR_ERR_SUCCESS) return rc;
    exr_attr_box2i_t display, data;
    display.min.x = 0, display.min.y = 0, display.max.x = d->w - 1, display.max.y = d->h - 1;
    data.min.x = d->x0, data.min.y = d->y0, data.max.x = d->x1, data.max.y = d->y1;
    exr_attr_v2f_t centre;
    centre.x = 0.0f, centre.y = 0.0f;
    rc = exr_initialize_required_attr(ctx, part, &display, &data, 1.0f, &centre, 1.0f,
                                      EXR_LINEORDER_INCREASING_Y, compression(d->compression));
    if (rc != EXR_ERR_SUCCESS) return rc;
    exr_pixel_type_t pt = d->pixel == IMAGE_EXR_FLOAT ? EXR_PIXEL_FLOAT : EXR_PIXEL_HALF;
    for (int k = 0; k < d->nchannels; k++) {
        /* colour and alpha are "perceptual" for the lossy codecs (DWAA
         * quantises them more coarsely); data channels are linear */
        const char *n = d->channels[k].name;
        bool colour = !strcmp(n, "R") || !strcmp(n, "G") || !strcmp(n, "B");
        rc = exr_add_channel(ctx, part, n, pt,
                             colour ? EXR_PERCEPTUALLY_LOGARITHMIC : EXR_PERCEPTUALLY_LINEAR, 1, 1);
        if (rc != EXR_ERR_SUCCESS) return rc;
    }
    if (d->fps > 0.0) {
        /* the standard attribute; 1000ths keep 23.976 and 29.97 */
        exr_attr_rational_t r = {(int32_t)lround(d->fps * 1000.0), 1000u};
        if ((rc = exr_attr_set_rational(ctx, part, "framesPerSecond", &r)) != EXR_ERR_SUCCESS)
            return rc;
    }
    /* smokemorph's own mark (image_file_tagged): what a later run may
     * replace or remove without asking */
    if ((rc = exr_attr_set_string(ctx, part, IMAGE_TAG_EXR_ATTR, IMAGE_TAG_VALUE)) != EXR_ERR_SUCCESS)
        return rc;
    if ((rc = exr_write_header(ctx)) != EXR_ERR_SUCCESS) return rc;

    int32_t lines = 1;
    if ((rc = exr_get_scanlines_per_chunk(ctx, part, &lines)) != EXR_ERR_SUCCESS) return rc;
    exr_encode_pipeline_t enc = EXR_ENCODE_PIPELINE_INITIALIZER;
    bool started = false;
    for (int y = d->y0; y <= d->y1; y += lines) {
        exr_chunk_info_t ci;
        if ((rc = exr_write_scanline_chunk_info(ctx, part, y, &ci)) != EXR_ERR_SUCCESS) break;
        rc = started ? exr_encoding_update(ctx, part, &ci, &enc)
                     : exr_encoding_initialize(ctx, part, &ci, &enc);
        if (rc != EXR_ERR_SUCCESS) break;
        for (int c = 0; c < enc.channel_count; c++) {
            exr_coding_channel_info_t *ch = &enc.channels[c];
            const float *px = plane(d, ch->channel_name);
            ch->user_data_type = EXR_PIXEL_FLOAT;
            ch->user_bytes_per_element = (int16_t)sizeof(float);
            ch->user_pixel_stride = (int32_t)sizeof(float);
            ch->user_line_stride = (int32_t)(sizeof(float) * (size_t)d->w);
            ch->encode_from_ptr =
                (const uint8_t *)(px + (size_t)ci.start_y * (size_t)d->w + (size_t)ci.start_x);
        }
        if (!started) {
            if ((rc = exr_encoding_choose_default_routines(ctx, part, &enc)) != EXR_ERR_SUCCESS) break;
            if (enc.compress_fn) {
                g_compress = enc.compress_fn;
                enc.compress_fn = compress_or_raw;
            }
            started = true;
        }
        if ((rc = exr_encoding_run(ctx, part, &enc)) != EXR_ERR_SUCCESS) break;
    }
    if (started || enc.channels) exr_encoding_destroy(ctx, &enc);
    return rc;
}

int exr_write(const char *path, const ExrWrite *d, char *err, size_t errlen)
{
    if (!d || d->w < 1 || d->h < 1 || d->nchannels < 1 || d->nchannels > 16 || d->x0 < 0 ||
        d->y0 < 0 || d->x1 >= d->w || d->y1 >= d->h || d->x0 > d->x1 || d->y0 > d->y1) {
        snprintf(err, errlen, "cannot write %s: bad image layout", path);
        return -1;
    }
    for (int k = 0; k < d->nchannels; k++)
        if (!d->channels[k].name || !d->channels[k].name[0] || !d->channels[k].px ||
            plane(d, d->channels[k].name) != d->channels[k].px) {
            snprintf(err, errlen, "cannot write %s: bad or repeated channel", path);
            return -1;
        }
    size_t tmplen = strlen(path) + 64;
    char *tmp = malloc(tmplen);
    if (!tmp) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    int rc = -1;
    /* reserve the temporary name (O_EXCL); the library then writes it */
    int fd = image_open_temp(path, tmp, tmplen);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    close(fd);
    g_msg[0] = '\0';
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = on_error;
    exr_context_t ctx = NULL;
    exr_result_t er = exr_start_write(&ctx, tmp, EXR_WRITE_FILE_DIRECTLY, &init);
    if (er == EXR_ERR_SUCCESS) er = write_body(ctx, d);
    /* exr_finish writes the chunk table: its failure (a full disk) counts */
    exr_result_t fr = ctx ? exr_finish(&ctx) : EXR_ERR_SUCCESS;
    if (er == EXR_ERR_SUCCESS) er = fr;
    if (er != EXR_ERR_SUCCESS) {
        /* the library's own message, unless it names the temporary file */
        const char *why = exr_get_default_error_message(er);
        if (g_msg[0] && !strstr(g_msg, tmp)) why = g_msg;
        snprintf(err, errlen, "cannot write %s: %s", path, why);
        goto remove_tmp;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        goto remove_tmp;
    }
    rc = 0;
    goto done;
remove_tmp:
    unlink(tmp);
done:
    free(tmp);
    return rc;
}
