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

/* The library's messages go to the context's own buffer (user_data), so
 * several frames can be written at once. */
typedef struct {
    char msg[256];
} Messages;

static void on_error(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
    void *ud = NULL;
    if (exr_get_user_data(ctxt, &ud) != EXR_ERR_SUCCESS || !ud) return;
    Messages *m = ud;
    snprintf(m->msg, sizeof m->msg, "%s", msg && *msg ? msg : exr_get_default_error_message(code));
}

static const char *const g_names[IMAGE_EXR_COMPRESSION_COUNT] = {
    [IMAGE_EXR_ZIP] = "zip",     [IMAGE_EXR_PIZ] = "piz", [IMAGE_EXR_DWAA] = "dwaa",
    [IMAGE_EXR_NONE] = "none",   [IMAGE_EXR_ZIPS] = "zips", [IMAGE_EXR_RLE] = "rle",
    [IMAGE_EXR_PXR24] = "pxr24", [IMAGE_EXR_B44] = "b44"};

const char *exr_compression_name(ImageExrCompression c)
{
    return (unsigned)c < IMAGE_EXR_COMPRESSION_COUNT ? g_names[c] : "?";
}

int exr_compression_parse(const char *name)
{
    for (int k = 0; k < IMAGE_EXR_COMPRESSION_COUNT; k++)
        if (!strcmp(name, g_names[k])) return k;
    return -1;
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
    if ((unsigned)c >= IMAGE_EXR_COMPRESSION_COUNT) return false;
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
    case IMAGE_EXR_ZIPS: return EXR_COMPRESSION_ZIPS;
    case IMAGE_EXR_RLE: return EXR_COMPRESSION_RLE;
    case IMAGE_EXR_PXR24: return EXR_COMPRESSION_PXR24;
    case IMAGE_EXR_B44: return EXR_COMPRESSION_B44;
    case IMAGE_EXR_ZIP:
    case IMAGE_EXR_COMPRESSION_COUNT: break;
    }
    return EXR_COMPRESSION_ZIP;
}

/* The plane of the channel called name in ch[0..n-1], or NULL. */
static const float *plane_in(const ExrChannel *ch, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcmp(ch[k].name, name) == 0) return ch[k].px;
    return NULL;
}

/* One chunk packed and compressed, waiting for its turn in the file. */
typedef struct {
    uint8_t *bytes;
    uint64_t size;
    int tx, ty, y;        /* where it goes: a tile, or its first scanline */
    exr_result_t rc;
} Stash;

/* A frame's chunks, encoded a batch at a time: each thread that helps
 * (pool_for's slot) keeps one pipeline and reuses its buffers. */
typedef struct {
    exr_context_t ctx;
    const ExrWrite *d;
    int lines;              /* scanlines a chunk (scanline files) */
    int ntx;                /* tiles across (tiled files) */
    int first;              /* the batch's first chunk */
    /* the planes of the rows at hand: rows row0.. of the frame, d->w wide */
    const ExrChannel *ch;
    int nch, row0;
    Stash *stash;
    exr_encode_pipeline_t *pipe; /* one a slot */
    bool *started;
} Encode;

/* write_fn: keep the chunk's bytes for the ordered write. A chunk whose
 * compressed size is not smaller than its raw size is stored raw: a reader
 * takes a chunk of exactly the raw size as raw, and the library (3.1) keeps
 * a compressed chunk that came out exactly as large (found by
 * fuzz_roundtrip: a 4x4 float chunk that zlib made 64 bytes of 64 was read
 * back as its zlib stream). */
static exr_result_t stash_chunk(exr_encode_pipeline_t *enc)
{
    Stash *st = enc->encoding_user_data;
    const void *src = enc->compressed_buffer;
    uint64_t n = enc->compressed_bytes;
    if (enc->compress_fn && n >= enc->packed_bytes) {
        src = enc->packed_buffer;
        n = enc->packed_bytes;
    }
    if (!src || n == 0) return EXR_ERR_INVALID_ARGUMENT;
    if (!(st->bytes = malloc(n))) return EXR_ERR_OUT_OF_MEMORY;
    memcpy(st->bytes, src, n);
    st->size = n;
    return EXR_ERR_SUCCESS;
}

/* pool_for's item: chunk first + item, on slot's pipeline. */
static void encode_chunk(void *ctx, int item, int slot)
{
    Encode *e = ctx;
    const ExrWrite *d = e->d;
    int c = e->first + item;
    Stash *st = &e->stash[item];
    exr_encode_pipeline_t *enc = &e->pipe[slot];
    exr_chunk_info_t ci;
    exr_result_t rc;
    int px0, py0; /* the chunk's first pixel in the frame */
    if (d->tiled) {
        st->tx = c % e->ntx;
        st->ty = c / e->ntx;
        rc = exr_write_tile_chunk_info(e->ctx, 0, st->tx, st->ty, 0, 0, &ci);
        px0 = d->x0 + st->tx * EXR_TILE_SIZE;
        py0 = d->y0 + st->ty * EXR_TILE_SIZE;
    } else {
        st->y = d->y0 + c * e->lines;
        rc = exr_write_scanline_chunk_info(e->ctx, 0, st->y, &ci);
        px0 = ci.start_x;
        py0 = ci.start_y;
    }
    bool fresh = !e->started[slot];
    if (rc == EXR_ERR_SUCCESS)
        rc = fresh ? exr_encoding_initialize(e->ctx, 0, &ci, enc) : exr_encoding_update(e->ctx, 0, &ci, enc);
    if (rc != EXR_ERR_SUCCESS) goto done;
    e->started[slot] = true;
    for (int k = 0; k < enc->channel_count; k++) {
        exr_coding_channel_info_t *ch = &enc->channels[k];
        const float *px = plane_in(e->ch, e->nch, ch->channel_name);
        ch->user_data_type = EXR_PIXEL_FLOAT;
        ch->user_bytes_per_element = (int16_t)sizeof(float);
        ch->user_pixel_stride = (int32_t)sizeof(float);
        ch->user_line_stride = (int32_t)(sizeof(float) * (size_t)d->w);
        ch->encode_from_ptr = (const uint8_t *)(px + (size_t)(py0 - e->row0) * (size_t)d->w + (size_t)px0);
    }
    if (fresh && (rc = exr_encoding_choose_default_routines(e->ctx, 0, enc)) != EXR_ERR_SUCCESS)
        goto done;
    /* no yield (chunks are written in order afterwards) and no write here */
    enc->yield_until_ready_fn = NULL;
    enc->write_fn = stash_chunk;
    enc->encoding_user_data = st;
    rc = exr_encoding_run(e->ctx, 0, enc);
done:
    st->rc = rc;
}

/* The header into the open context; 0 or the library's error. */
static exr_result_t write_header(exr_context_t ctx, const ExrWrite *d, int *part)
{
    exr_result_t rc;
    exr_storage_t storage = d->tiled ? EXR_STORAGE_TILED : EXR_STORAGE_SCANLINE;
    if ((rc = exr_add_part(ctx, "smoke", storage, part)) != EXR_ERR_SUCCESS) return rc;
    exr_attr_box2i_t display, data;
    display.min.x = 0, display.min.y = 0, display.max.x = d->w - 1, display.max.y = d->h - 1;
    data.min.x = d->x0, data.min.y = d->y0, data.max.x = d->x1, data.max.y = d->y1;
    exr_attr_v2f_t centre;
    centre.x = 0.0f, centre.y = 0.0f;
    rc = exr_initialize_required_attr(ctx, *part, &display, &data, 1.0f, &centre, 1.0f,
                                      EXR_LINEORDER_INCREASING_Y, compression(d->compression));
    if (rc != EXR_ERR_SUCCESS) return rc;
    if (d->tiled && (rc = exr_set_tile_descriptor(ctx, *part, EXR_TILE_SIZE, EXR_TILE_SIZE,
                                                  EXR_TILE_ONE_LEVEL, EXR_TILE_ROUND_DOWN)) !=
                        EXR_ERR_SUCCESS)
        return rc;
    exr_pixel_type_t pt = d->pixel == IMAGE_EXR_FLOAT ? EXR_PIXEL_FLOAT : EXR_PIXEL_HALF;
    for (int k = 0; k < d->nchannels; k++) {
        /* colour and alpha are "perceptual" for the lossy codecs (DWAA
         * quantises them more coarsely); data channels are linear */
        const char *n = d->channels[k].name;
        bool colour = !strcmp(n, "R") || !strcmp(n, "G") || !strcmp(n, "B");
        rc = exr_add_channel(ctx, *part, n, pt,
                             colour ? EXR_PERCEPTUALLY_LOGARITHMIC : EXR_PERCEPTUALLY_LINEAR, 1, 1);
        if (rc != EXR_ERR_SUCCESS) return rc;
    }
    if (d->fps > 0.0) {
        /* the standard attribute; 1000ths keep 23.976 and 29.97 */
        exr_attr_rational_t r = {(int32_t)lround(d->fps * 1000.0), 1000u};
        if ((rc = exr_attr_set_rational(ctx, *part, "framesPerSecond", &r)) != EXR_ERR_SUCCESS)
            return rc;
    }
    /* smokemorph's own mark (image_file_tagged): what a later run may
     * replace or remove without asking */
    if ((rc = exr_attr_set_string(ctx, *part, IMAGE_TAG_EXR_ATTR, IMAGE_TAG_VALUE)) != EXR_ERR_SUCCESS)
        return rc;
    return exr_write_header(ctx);
}

/* About this many bytes of raw pixels a batch: the compressed chunks wait in
 * memory until the batch is written. */
#define BATCH_BYTES ((size_t)64 << 20)

struct ExrStream {
    exr_context_t ctx;
    ExrWrite d;                /* its channels: names only (copies) */
    ExrChannel *channels;
    char *names;
    Messages msgs;
    char *path, *tmp;
    int part;
    Encode e;
    int slots, nchunks, next;  /* chunks in all, and the next to write */
    int batch;
    exr_result_t failed;       /* the first failure; nothing more is written */
};

/* "cannot write PATH: why" from the library's code and message */
static void stream_error(const ExrStream *s, exr_result_t er, char *err, size_t errlen)
{
    /* the library's own message, unless it names the temporary file */
    const char *why = exr_get_default_error_message(er);
    if (s->msgs.msg[0] && !strstr(s->msgs.msg, s->tmp)) why = s->msgs.msg;
    snprintf(err, errlen, "cannot write %s: %s", s->path, why);
}

void exr_stream_abort(ExrStream *s)
{
    if (!s) return;
    for (int k = 0; s->e.pipe && k < s->slots; k++)
        if (s->e.started && s->e.started[k]) exr_encoding_destroy(s->ctx, &s->e.pipe[k]);
    if (s->ctx) exr_finish(&s->ctx);
    if (s->tmp && s->tmp[0]) unlink(s->tmp);
    free(s->e.stash);
    free(s->e.pipe);
    free(s->e.started);
    free(s->channels);
    free(s->names);
    free(s->path);
    free(s->tmp);
    free(s);
}

/* exr_stream_begin's check of the layout and the channels' names; sets *names_bytes to
 * the bytes the names take. Returns 0, or -1 with err set. */
static int stream_layout_ok(const char *path, const ExrWrite *d, size_t *names_bytes, char *err,
                            size_t errlen)
{
    if (!d || d->w < 1 || d->h < 1 || d->nchannels < 1 || d->nchannels > 16 || d->x0 < 0 ||
        d->y0 < 0 || d->x1 >= d->w || d->y1 >= d->h || d->x0 > d->x1 || d->y0 > d->y1) {
        snprintf(err, errlen, "cannot write %s: bad image layout", path);
        return -1;
    }
    size_t names = 0;
    for (int k = 0; k < d->nchannels; k++) {
        const char *n = d->channels[k].name;
        bool twice = false;
        for (int j = 0; n && j < k; j++) twice = twice || !strcmp(d->channels[j].name, n);
        if (!n || !n[0] || twice) {
            snprintf(err, errlen, "cannot write %s: bad or repeated channel", path);
            return -1;
        }
        names += strlen(n) + 1;
    }
    *names_bytes = names;
    return 0;
}

/* exr_stream_begin's batches: how many chunks are stashed before they are written, from
 * the chunk's size and the pool's slots. Returns 0, or -1 with err set. */
static int stream_batches(ExrStream *s, const ExrWrite *d, int chunk_px, const char *path,
                          char *err, size_t errlen)
{
    Encode *e = &s->e;
    s->slots = d->pool ? pool_slots(d->pool) : 1;
    size_t chunk_bytes = (size_t)chunk_px * (size_t)d->nchannels * sizeof(float);
    int batch = (int)(BATCH_BYTES / (chunk_bytes ? chunk_bytes : 1));
    if (batch < 4 * s->slots) batch = 4 * s->slots;
    if (batch > s->nchunks) batch = s->nchunks;
    s->batch = batch;
    e->stash = calloc((size_t)batch, sizeof *e->stash);
    e->pipe = calloc((size_t)s->slots, sizeof *e->pipe);
    e->started = calloc((size_t)s->slots, sizeof *e->started);
    if (!e->stash || !e->pipe || !e->started) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    return 0;
}

ExrStream *exr_stream_begin(const char *path, const ExrWrite *d, char *err, size_t errlen)
{
    size_t names = 0;
    if (stream_layout_ok(path, d, &names, err, errlen) < 0) return NULL;
    ExrStream *s = calloc(1, sizeof *s);
    size_t tmplen = strlen(path) + 64;
    if (!s || !(s->path = strdup(path)) || !(s->tmp = calloc(1, tmplen)) ||
        !(s->channels = calloc((size_t)d->nchannels, sizeof *s->channels)) || !(s->names = malloc(names))) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        exr_stream_abort(s);
        return NULL;
    }
    s->d = *d;
    char *p = s->names;
    for (int k = 0; k < d->nchannels; k++) {
        strcpy(p, d->channels[k].name);
        s->channels[k].name = p;
        p += strlen(p) + 1;
    }
    s->d.channels = s->channels;
    /* reserve the temporary name (O_EXCL); the library then writes it */
    int fd = image_open_temp(path, s->tmp, tmplen);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        s->tmp[0] = '\0';
        exr_stream_abort(s);
        return NULL;
    }
    close(fd);
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = on_error;
    init.user_data = &s->msgs;
    exr_result_t rc = exr_start_write(&s->ctx, s->tmp, EXR_WRITE_FILE_DIRECTLY, &init);
    if (rc == EXR_ERR_SUCCESS) rc = write_header(s->ctx, &s->d, &s->part);
    Encode *e = &s->e;
    *e = (Encode){.ctx = s->ctx, .d = &s->d, .lines = 1};
    int dw = d->x1 - d->x0 + 1, dh = d->y1 - d->y0 + 1, chunk_px = 1;
    if (rc == EXR_ERR_SUCCESS) {
        if (d->tiled) {
            e->ntx = (dw + EXR_TILE_SIZE - 1) / EXR_TILE_SIZE;
            s->nchunks = e->ntx * ((dh + EXR_TILE_SIZE - 1) / EXR_TILE_SIZE);
            chunk_px = EXR_TILE_SIZE * EXR_TILE_SIZE;
        } else if ((rc = exr_get_scanlines_per_chunk(s->ctx, s->part, &e->lines)) == EXR_ERR_SUCCESS) {
            s->nchunks = (dh + e->lines - 1) / e->lines;
            chunk_px = e->lines * dw;
        }
    }
    if (rc != EXR_ERR_SUCCESS) {
        stream_error(s, rc, err, errlen);
        exr_stream_abort(s);
        return NULL;
    }
    if (stream_batches(s, d, chunk_px, path, err, errlen) < 0) {
        exr_stream_abort(s);
        return NULL;
    }
    return s;
}

/* The frame rows chunk c covers: its first and last. */
static void chunk_rows(const ExrStream *s, int c, int *first, int *last)
{
    int t = s->d.tiled ? EXR_TILE_SIZE : s->e.lines;
    *first = s->d.y0 + (s->d.tiled ? c / s->e.ntx : c) * t;
    *last = *first + t - 1 < s->d.y1 ? *first + t - 1 : s->d.y1;
}

int exr_stream_rows(ExrStream *s, const ExrChannel *ch, int y, int n, char *err, size_t errlen)
{
    if (s->failed != EXR_ERR_SUCCESS) {
        stream_error(s, s->failed, err, errlen);
        return -1;
    }
    for (int k = 0; k < s->d.nchannels; k++)
        if (!plane_in(ch, s->d.nchannels, s->channels[k].name)) {
            snprintf(err, errlen, "cannot write %s: no plane for channel %s", s->path, s->channels[k].name);
            return -1;
        }
    /* the chunks these rows complete */
    int end = s->next, first, last;
    for (; end < s->nchunks; end++) {
        chunk_rows(s, end, &first, &last);
        if (last >= y + n) break;
        if (first < y) {
            snprintf(err, errlen, "cannot write %s: rows %d..%d split a chunk (internal error)", s->path,
                     y, y + n - 1);
            return -1;
        }
    }
    Encode *e = &s->e;
    e->ch = ch;
    e->nch = s->d.nchannels;
    e->row0 = y;
    exr_result_t rc = EXR_ERR_SUCCESS;
    for (e->first = s->next; e->first < end && rc == EXR_ERR_SUCCESS; e->first += s->batch) {
        int m = end - e->first < s->batch ? end - e->first : s->batch;
        memset(e->stash, 0, (size_t)m * sizeof *e->stash);
        pool_for(s->d.pool, m, encode_chunk, e);
        for (int i = 0; i < m; i++) { /* in order: the file's chunk order */
            Stash *st = &e->stash[i];
            if (rc == EXR_ERR_SUCCESS) rc = st->rc;
            if (rc == EXR_ERR_SUCCESS)
                rc = s->d.tiled ? exr_write_tile_chunk(s->ctx, s->part, st->tx, st->ty, 0, 0, st->bytes, st->size)
                                : exr_write_scanline_chunk(s->ctx, s->part, st->y, st->bytes, st->size);
            free(st->bytes);
        }
    }
    e->ch = NULL;
    s->next = end;
    if (rc != EXR_ERR_SUCCESS) {
        s->failed = rc;
        stream_error(s, rc, err, errlen);
        return -1;
    }
    return 0;
}

int exr_stream_end(ExrStream *s, char *err, size_t errlen)
{
    if (s->failed != EXR_ERR_SUCCESS) {
        stream_error(s, s->failed, err, errlen);
        exr_stream_abort(s);
        return -1;
    }
    if (s->next != s->nchunks) {
        snprintf(err, errlen, "cannot write %s: %d chunks of %d written (internal error)", s->path, s->next,
                 s->nchunks);
        exr_stream_abort(s);
        return -1;
    }
    for (int k = 0; k < s->slots; k++)
        if (s->e.started[k]) exr_encoding_destroy(s->ctx, &s->e.pipe[k]);
    memset(s->e.started, 0, (size_t)s->slots * sizeof *s->e.started);
    /* exr_finish writes the chunk table: its failure (a full disk) counts */
    exr_result_t rc = exr_finish(&s->ctx);
    s->ctx = NULL;
    if (rc != EXR_ERR_SUCCESS) {
        stream_error(s, rc, err, errlen);
        exr_stream_abort(s);
        return -1;
    }
    if (s->d.temp) { /* the caller renames it */
        if (strlen(s->tmp) >= s->d.templen) {
            snprintf(err, errlen, "cannot write %s: path too long", s->path);
            exr_stream_abort(s);
            return -1;
        }
        strcpy(s->d.temp, s->tmp);
    } else if (rename(s->tmp, s->path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", s->path, strerror(errno));
        exr_stream_abort(s);
        return -1;
    }
    s->tmp[0] = '\0'; /* in place: nothing to remove */
    exr_stream_abort(s);
    return 0;
}

int exr_write(const char *path, const ExrWrite *d, char *err, size_t errlen)
{
    if (d && d->channels && d->nchannels >= 1 && d->nchannels <= 16)
        for (int k = 0; k < d->nchannels; k++)
            if (!d->channels[k].px) {
                snprintf(err, errlen, "cannot write %s: bad or repeated channel", path);
                return -1;
            }
    ExrStream *s = exr_stream_begin(path, d, err, errlen);
    if (!s) return -1;
    if (exr_stream_rows(s, d->channels, 0, d->h, err, errlen) < 0) {
        exr_stream_abort(s);
        return -1;
    }
    return exr_stream_end(s, err, errlen);
}
