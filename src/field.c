/* field: float texture + FBO, ping-pong pairs, the draw primitive; see field.h. */
#include "field.h"

#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Field {
    int w, h, channels;
    GLuint tex, fbo;
};

static GLuint g_vao;      /* the shared empty VAO of pass_draw */
static int g_debug = -1;  /* -1: not yet read from the environment */
static bool g_feedback;   /* a pass sampled its own output (debug); gl_check reports it */
static bool g_flagged;    /* another debug check failed (logged); gl_check reports it */

void field_set_debug(bool on) { g_debug = on; }

bool field_debug(void)
{
    if (g_debug < 0) {
        const char *s = getenv("SMOKEMORPH_GL_DEBUG");
        g_debug = s && *s && strcmp(s, "0") != 0;
    }
    return g_debug != 0;
}

static const char *gl_error_name(GLenum e)
{
    switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "unknown GL error";
    }
}

static const char *fb_status_name(GLenum s)
{
    switch (s) {
    case GL_FRAMEBUFFER_UNSUPPORTED: return "GL_FRAMEBUFFER_UNSUPPORTED";
    case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT: return "GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT";
    case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT: return "GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT";
    case GL_FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER: return "GL_FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER";
    case GL_FRAMEBUFFER_INCOMPLETE_READ_BUFFER: return "GL_FRAMEBUFFER_INCOMPLETE_READ_BUFFER";
    default: return "incomplete";
    }
}

int gl_check(const char *tag, const char *what)
{
    int rc = 0;
    if (g_feedback) {
        log_error(tag, "a pass sampled the field it drew into, before or at %s", what);
        g_feedback = false;
        rc = -1;
    }
    if (g_flagged) {
        log_error(tag, "a debug check failed (above), before or at %s", what);
        g_flagged = false;
        rc = -1;
    }
    for (int i = 0; i < 16; i++) { /* a lost context can report errors forever */
        GLenum e = glGetError();
        if (e == GL_NO_ERROR) break;
        log_error(tag, "%s after %s", gl_error_name(e), what);
        rc = -1;
    }
    return rc;
}

/* The first pending GL error (the rest drained), or GL_NO_ERROR. */
static GLenum take_error(void)
{
    GLenum first = glGetError();
    if (first != GL_NO_ERROR)
        for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; i++) {}
    return first;
}

static GLenum internal_format(int channels)
{
    return channels == 1 ? GL_R32F : channels == 2 ? GL_RG32F : GL_RGBA32F;
}

static GLenum pixel_format(int channels)
{
    return channels == 1 ? GL_RED : channels == 2 ? GL_RG : GL_RGBA;
}

static const char *format_name(int channels)
{
    return channels == 1 ? "R32F" : channels == 2 ? "RG32F" : "RGBA32F";
}

/* field_create's checks of the channels and the size, against this GPU's limits.
 * Returns 0, or -1 with err set. */
static int field_shape_ok(int w, int h, int channels, char *err, size_t errlen)
{
    if (channels != 1 && channels != 2 && channels != 4) {
        snprintf(err, errlen, "field: %d channels asked for, 1, 2 or 4 are possible", channels);
        return -1;
    }
    if (w <= 0 || h <= 0) {
        snprintf(err, errlen, "field: bad size %dx%d", w, h);
        return -1;
    }
    GLint max_tex = 0, vp[2] = {0, 0};
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_tex);
    glGetIntegerv(GL_MAX_VIEWPORT_DIMS, vp);
    if (max_tex <= 0) {
        snprintf(err, errlen, "field: no OpenGL context is current");
        return -1;
    }
    if (w > max_tex || h > max_tex) {
        snprintf(err, errlen, "field: %dx%d exceeds this GPU's texture limit %d", w, h, (int)max_tex);
        return -1;
    }
    if ((vp[0] > 0 && w > vp[0]) || (vp[1] > 0 && h > vp[1])) {
        snprintf(err, errlen, "field: %dx%d exceeds this GPU's viewport limit %dx%d", w, h,
                 (int)vp[0], (int)vp[1]);
        return -1;
    }
    return 0;
}

Field *field_create(int w, int h, int channels, char *err, size_t errlen)
{
    if (field_shape_ok(w, h, channels, err, errlen) < 0) return NULL;
    if (gl_check("field", "earlier GL calls (before field_create)") != 0)
        log_error("field", "a GL error was pending before field_create; carrying on");

    Field *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "field: out of memory");
        return NULL;
    }
    f->w = w;
    f->h = h;
    f->channels = channels;
    double mib = (double)w * h * channels * 4.0 / (1024.0 * 1024.0);

    glGenTextures(1, &f->tex);
    glBindTexture(GL_TEXTURE_2D, f->tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_BASE_LEVEL, 0);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal_format(channels), w, h, 0, pixel_format(channels),
                 GL_FLOAT, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    GLenum e = take_error();
    if (e == GL_OUT_OF_MEMORY) {
        snprintf(err, errlen, "field: out of GPU memory for a %dx%d %s field (%.1f MiB)", w, h,
                 format_name(channels), mib);
        goto undo_tex;
    }
    if (e != GL_NO_ERROR) {
        snprintf(err, errlen, "field: cannot create a %dx%d %s texture (%s)", w, h,
                 format_name(channels), gl_error_name(e));
        goto undo_tex;
    }

    glGenFramebuffers(1, &f->fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, f->fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, f->tex, 0);
    GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (st != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, errlen, "field: a %dx%d %s framebuffer is not usable (0x%04x: %s)", w, h,
                 format_name(channels), (unsigned)st, fb_status_name(st));
        goto undo_fbo;
    }
    /* Texture memory is undefined until written; drivers may allocate lazily,
     * so the clear is also where an out-of-memory shows up. */
    static const GLfloat zero[4] = {0, 0, 0, 0};
    glClearBufferfv(GL_COLOR, 0, zero);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    e = take_error();
    if (e != GL_NO_ERROR) {
        if (e == GL_OUT_OF_MEMORY)
            snprintf(err, errlen, "field: out of GPU memory for a %dx%d %s field (%.1f MiB)", w, h,
                     format_name(channels), mib);
        else
            snprintf(err, errlen, "field: cannot set up a %dx%d %s framebuffer (%s)", w, h,
                     format_name(channels), gl_error_name(e));
        goto undo_fbo;
    }
    return f;

undo_fbo:
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &f->fbo);
undo_tex:
    glDeleteTextures(1, &f->tex);
    take_error();
    free(f);
    return NULL;
}

void field_free(Field *f)
{
    if (!f) return;
    glDeleteFramebuffers(1, &f->fbo);
    glDeleteTextures(1, &f->tex);
    free(f);
}

int field_width(const Field *f) { return f->w; }
int field_height(const Field *f) { return f->h; }
int field_channels(const Field *f) { return f->channels; }
GLuint field_texture(const Field *f) { return f->tex; }
GLuint field_framebuffer(const Field *f) { return f->fbo; }

int field_upload(Field *f, const float *data)
{
    gl_check("field", "earlier GL calls (before field_upload)");
    field_sync();
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    glBindTexture(GL_TEXTURE_2D, f->tex);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, f->w, f->h, pixel_format(f->channels), GL_FLOAT, data);
    glBindTexture(GL_TEXTURE_2D, 0);
    char what[96];
    snprintf(what, sizeof what, "uploading a %dx%d %s field", f->w, f->h, format_name(f->channels));
    return gl_check("field", what);
}

/* glReadPixels of the whole field into dst: client memory, or an offset in
 * the bound GL_PIXEL_PACK_BUFFER. Tightly packed rows; the read framebuffer
 * binding is put back. */
static void read_pixels(const Field *f, void *dst)
{
    GLint prev_read = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_read);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glPixelStorei(GL_PACK_SKIP_ROWS, 0);
    glPixelStorei(GL_PACK_SKIP_PIXELS, 0);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, f->fbo);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glReadPixels(0, 0, f->w, f->h, pixel_format(f->channels), GL_FLOAT, dst);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)prev_read);
}

int field_read(const Field *f, float *out)
{
    gl_check("field", "earlier GL calls (before field_read)");
    field_sync();
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    read_pixels(f, out);
    char what[96];
    snprintf(what, sizeof what, "reading back a %dx%d %s field", f->w, f->h, format_name(f->channels));
    return gl_check("field", what);
}

struct FieldReadback {
    GLuint pbo;
    GLsync fence;
    size_t bytes, alloc;
    int w, h, channels;
    bool mapped;
};

FieldReadback *field_readback_create(void) { return calloc(1, sizeof(FieldReadback)); }

int field_readback_start(FieldReadback *rb, const Field *f)
{
    gl_check("field", "earlier GL calls (before field_readback_start)");
    field_sync();
    size_t bytes = (size_t)f->w * f->h * (size_t)f->channels * sizeof(float);
    if (!rb->pbo) glGenBuffers(1, &rb->pbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, rb->pbo);
    if (rb->alloc < bytes) { /* GL_STREAM_READ: written by GL, read once by us */
        glBufferData(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_READ);
        rb->alloc = bytes;
    }
    rb->bytes = bytes;
    rb->w = f->w;
    rb->h = f->h;
    rb->channels = f->channels;
    read_pixels(f, (void *)0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    if (rb->fence) glDeleteSync(rb->fence);
    rb->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush(); /* the fence reaches the GPU: a later wait cannot stall on it */
    char what[96];
    snprintf(what, sizeof what, "starting the read-back of a %dx%d %s field", f->w, f->h,
             format_name(f->channels));
    return gl_check("field", what);
}

const float *field_readback_map(FieldReadback *rb)
{
    if (!rb->pbo || !rb->fence) return NULL;
    /* wait for the copy (a second at a time, so a lost context cannot hang) */
    for (int tries = 0; tries < 600; tries++) {
        GLenum r = glClientWaitSync(rb->fence, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000ull);
        if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) break;
        if (r == GL_WAIT_FAILED) {
            gl_check("field", "waiting for a read-back");
            return NULL;
        }
    }
    glDeleteSync(rb->fence);
    rb->fence = 0;
    glBindBuffer(GL_PIXEL_PACK_BUFFER, rb->pbo);
    const float *p = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)rb->bytes, GL_MAP_READ_BIT);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    rb->mapped = p != NULL;
    char what[96];
    snprintf(what, sizeof what, "mapping the read-back of a %dx%d %s field", rb->w, rb->h,
             format_name(rb->channels));
    if (gl_check("field", what) < 0 || !p) return NULL;
    return p;
}

void field_readback_unmap(FieldReadback *rb)
{
    if (!rb->mapped) return;
    glBindBuffer(GL_PIXEL_PACK_BUFFER, rb->pbo);
    glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    rb->mapped = false;
}

void field_readback_free(FieldReadback *rb)
{
    if (!rb) return;
    field_readback_unmap(rb);
    if (rb->fence) glDeleteSync(rb->fence);
    if (rb->pbo) glDeleteBuffers(1, &rb->pbo);
    free(rb);
}

int field_clear(Field *f, float r, float g, float b, float a)
{
    const GLfloat v[4] = {r, g, b, a};
    field_sync();
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, f->fbo);
    glClearBufferfv(GL_COLOR, 0, v);
    char what[96];
    snprintf(what, sizeof what, "clearing a %dx%d %s field", f->w, f->h, format_name(f->channels));
    return gl_check("field", what);
}

int field_pair_create(FieldPair *p, int w, int h, int channels, char *err, size_t errlen)
{
    p->read = field_create(w, h, channels, err, errlen);
    if (!p->read) goto fail;
    p->write = field_create(w, h, channels, err, errlen);
    if (!p->write) goto undo_read;
    return 0;

undo_read:
    field_free(p->read);
fail:
    p->read = p->write = NULL;
    return -1;
}

void field_pair_free(FieldPair *p)
{
    if (!p) return;
    field_free(p->read);
    field_free(p->write);
    p->read = p->write = NULL;
}

void field_pair_swap(FieldPair *p)
{
    Field *t = p->read;
    p->read = p->write;
    p->write = t;
}

/* A core profile needs a bound VAO even with no attributes. glIsVertexArray
 * is false for a name of another (destroyed) context, so a new context gets
 * its own. */
static void draw_triangle(void)
{
    if (!g_vao || !glIsVertexArray(g_vao)) glGenVertexArrays(1, &g_vao);
    glBindVertexArray(g_vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
}

void pass_draw_screen(int x, int y, int w, int h)
{
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glViewport(x, y, w, h);
    draw_triangle();
    if (field_debug()) gl_check("field", "a pass into the window");
}

static unsigned long draws;
static bool g_count_bytes;
static unsigned long long g_bytes;

void pass_count_bytes(bool on) { g_count_bytes = on; }
unsigned long long pass_bytes(void) { return g_bytes; }

static unsigned long long texel_bytes(GLint internal)
{
    switch (internal) {
    case GL_R32F: return 4;
    case GL_RG32F: return 8;
    case GL_RGBA32F: return 16;
    case GL_RGBA8: return 4;
    default: return 16;
    }
}

/* The bytes one pass moves at least: every distinct texture its program
 * samples, read once whole, and its target written once (neighbour fetches
 * served by the caches). For bench only: it asks GL about every sampler. */
static unsigned long long pass_traffic(const Field *target)
{
    GLint prog = 0, n = 0, active = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &prog);
    unsigned long long b = (unsigned long long)target->w * target->h * texel_bytes(internal_format(target->channels));
    if (!prog) return b;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    glGetProgramiv((GLuint)prog, GL_ACTIVE_UNIFORMS, &n);
    GLint seen[16];
    int nseen = 0;
    for (GLint i = 0; i < n; i++) {
        char name[64];
        GLint size = 0, unit = 0, tex = 0, w = 0, h = 0, fmt = 0;
        GLenum type = 0;
        glGetActiveUniform((GLuint)prog, (GLuint)i, sizeof name, NULL, &size, &type, name);
        if (type != GL_SAMPLER_2D) continue;
        glGetUniformiv((GLuint)prog, glGetUniformLocation((GLuint)prog, name), &unit);
        glActiveTexture(GL_TEXTURE0 + (GLenum)unit);
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &tex);
        bool dup = false;
        for (int k = 0; k < nseen; k++) dup = dup || seen[k] == tex;
        if (dup || !tex) continue;
        if (nseen < 16) seen[nseen++] = tex;
        glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
        glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &h);
        glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &fmt);
        b += (unsigned long long)w * h * texel_bytes(fmt);
    }
    glActiveTexture((GLenum)active);
    return b;
}

unsigned long pass_draw_count(void) { return draws; }

/* With field_debug(): a pass must not sample the field it draws into (a
 * feedback loop, whose result is undefined and may differ from run to run).
 * Checks every active sampler of the current program; 0 when none does. The
 * next gl_check reports it as an error. */
static int check_feedback(const Field *target)
{
    GLint prog = 0, n = 0, active = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &prog);
    if (!prog) return 0;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    glGetProgramiv((GLuint)prog, GL_ACTIVE_UNIFORMS, &n);
    int rc = 0;
    for (GLint i = 0; i < n; i++) {
        char name[64];
        GLint size = 0;
        GLenum type = 0;
        glGetActiveUniform((GLuint)prog, (GLuint)i, sizeof name, NULL, &size, &type, name);
        if (type != GL_SAMPLER_2D) continue;
        GLint unit = 0, tex = 0;
        glGetUniformiv((GLuint)prog, glGetUniformLocation((GLuint)prog, name), &unit);
        glActiveTexture(GL_TEXTURE0 + (GLenum)unit);
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &tex);
        if ((GLuint)tex == target->tex) {
            log_error("field", "program %d samples %s (unit %d) from the %dx%d field it draws into",
                      (int)prog, name, (int)unit, target->w, target->h);
            rc = -1;
        }
    }
    glActiveTexture((GLenum)active);
    return rc;
}

/* With field_debug(), after a pass (what: "a pass" or "a dispatch") into
 * target: its GL errors, and whether it sampled its own target. Either makes
 * the caller's next gl_check fail too. */
static void debug_after(const Field *target, const char *what)
{
    GLint prog = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &prog);
    char msg[96];
    snprintf(msg, sizeof msg, "%s into a %dx%d %s field (program %d)", what, target->w, target->h,
             format_name(target->channels), (int)prog);
    if (gl_check("field", msg) < 0) g_flagged = true;
    if (check_feedback(target) < 0) g_feedback = true;
}

void pass_draw(Field *target)
{
    draws++;
    if (g_count_bytes) g_bytes += pass_traffic(target);
    field_sync();
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target->fbo);
    glViewport(0, 0, target->w, target->h);
    draw_triangle();
    if (field_debug()) debug_after(target, "a pass");
}

void field_flag_error(void) { g_flagged = true; }

/* What a dispatch's image stores must be visible to at once: the next
 * passes' texelFetch and image access. Read-backs, uploads, clears, blits and
 * draws through the FBOs need more (FIELD_SYNC_BITS), issued once before the
 * first of them after any dispatches (field_sync): on the H100 a step's
 * couple of hundred barriers are part of its CPU cost. */
#define PASS_BARRIER_BITS (GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT)
#define FIELD_SYNC_BITS (GL_FRAMEBUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT | \
                         GL_PIXEL_BUFFER_BARRIER_BIT)
static bool g_unsynced; /* a dispatch wrote an image since the last FIELD_SYNC_BITS barrier */

void field_sync(void)
{
    if (!g_unsynced) return;
    glMemoryBarrier(FIELD_SYNC_BITS);
    g_unsynced = false;
}

void pass_dispatch(Field *target) { pass_dispatch_tiles(target, PASS_LOCAL_X, PASS_LOCAL_Y); }

void pass_dispatch_tiles(Field *target, int tile_w, int tile_h)
{
    draws++;
    if (g_count_bytes) g_bytes += pass_traffic(target);
    glBindImageTexture(0, target->tex, 0, GL_FALSE, 0, GL_WRITE_ONLY, internal_format(target->channels));
    glDispatchCompute((GLuint)((target->w + tile_w - 1) / tile_w), (GLuint)((target->h + tile_h - 1) / tile_h), 1);
    /* the next pass samples what this one wrote; read-backs: field_sync */
    glMemoryBarrier(PASS_BARRIER_BITS);
    g_unsynced = true;
    if (field_debug()) debug_after(target, "a dispatch");
}

void pass_dispatch_indirect(Field *target, GLuint buf, GLintptr offset)
{
    draws++; /* its bytes: the caller's, who may know how many groups ran (pass_add_bytes) */
    glBindImageTexture(0, target->tex, 0, GL_FALSE, 0, GL_WRITE_ONLY, internal_format(target->channels));
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, buf);
    glDispatchComputeIndirect(offset);
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
    glMemoryBarrier(PASS_BARRIER_BITS);
    g_unsynced = true;
    if (field_debug()) debug_after(target, "an indirect dispatch");
}

void field_bind_image(Field *f, int unit)
{
    glBindImageTexture((GLuint)unit, f->tex, 0, GL_FALSE, 0, GL_WRITE_ONLY, internal_format(f->channels));
}

void pass_release(void)
{
    if (g_vao) glDeleteVertexArrays(1, &g_vao);
    g_vao = 0;
}
