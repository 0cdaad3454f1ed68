/* test_gl_field: glctx (headless), field, shader on Mesa llvmpipe or any GPU.
 * Run from the source tree root (it loads shaders/). */
#include <GL/glew.h>

#include "check.h"
#include "field.h"
#include "glctx.h"
#include "log.h"
#include "shader.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define W 64
#define H 48

static GlCtx *ctx;
static const char *argv0;
static char shader_dir[4096];

static uint32_t rng = 12345;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* Normal (never denormal) floats of either sign over many magnitudes. */
static float random_float(void)
{
    uint32_t sign = next_u32() & 0x80000000u;
    uint32_t exp = 127 - 20 + next_u32() % 40; /* 2^-20 .. 2^19 */
    uint32_t bits = sign | (exp << 23) | (next_u32() & 0x7fffffu);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void fill_random(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) v[i] = random_float();
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (testlib_write_file(path, text, strlen(text)) < 0) printf("  cannot write %s\n", path);
}

static void test_context(void)
{
    CHECK(ctx != NULL, "headless context");
    printf("   path: %s\n   renderer: %s\n   version: %s\n   max texture: %d\n", glctx_path(ctx),
           glctx_renderer(ctx), glctx_version(ctx), glctx_max_texture_size(ctx));
    CHECK(strncmp(glctx_path(ctx), "headless EGL ", 13) == 0, "path is headless: %s", glctx_path(ctx));
    CHECK(glctx_max_texture_size(ctx) >= 1024, "max texture size %d", glctx_max_texture_size(ctx));
    CHECK(strcmp(glctx_renderer(ctx), "?") != 0, "renderer string");
    CHECK(gl_check("test", "context creation") == 0, "no GL error after creation");
}

static void test_upload_read(void)
{
    static const int chans[] = {4, 2, 1};
    char err[256];
    for (int k = 0; k < 3; k++) {
        int ch = chans[k];
        size_t n = (size_t)W * H * ch;
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
        fill_random(in, n);
        for (size_t i = 0; i < n; i++) out[i] = NAN;
        Field *f = field_create(W, H, ch, err, sizeof err);
        CHECK(f != NULL, "field_create %dx%d x%d: %s", W, H, ch, f ? "" : err);
        if (f) {
            CHECK(field_width(f) == W && field_height(f) == H && field_channels(f) == ch, "field sizes");
            CHECK(field_texture(f) != 0, "texture name");
            /* a new field reads as zeros */
            CHECK(field_read(f, out) == 0, "read a new field");
            size_t nz = 0;
            for (size_t i = 0; i < n; i++) nz += out[i] != 0.0f;
            CHECK(nz == 0, "new %d-channel field is zero (%zu non-zero)", ch, nz);
            CHECK(field_upload(f, in) == 0, "upload %d channels", ch);
            CHECK(field_read(f, out) == 0, "read %d channels", ch);
            CHECK(memcmp(in, out, n * sizeof *in) == 0, "%d-channel upload/read-back is exact", ch);
            /* a texel in the corner, checked by value: (x=63, y=0) and (x=0, y=47) */
            size_t a = ((size_t)0 * W + (W - 1)) * ch, b = ((size_t)(H - 1) * W + 0) * ch;
            CHECK(out[a] == in[a] && out[b] == in[b], "corner texels in place");

            CHECK(field_clear(f, 1.5f, -2.0f, 3.25f, 4.0f) == 0, "clear");
            field_read(f, out);
            const float want[4] = {1.5f, -2.0f, 3.25f, 4.0f};
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) bad += out[i] != want[i % ch];
            CHECK(bad == 0, "clear to (1.5, -2, 3.25, 4) on %d channels (%zu wrong)", ch, bad);
            field_free(f);
        }
        free(in);
        free(out);
    }
}

static void test_pair_swap(void)
{
    char err[256];
    FieldPair p;
    CHECK(field_pair_create(&p, W, H, 1, err, sizeof err) == 0, "pair: %s", err);
    if (!p.read) return;
    Field *r = p.read, *w = p.write;
    CHECK(r != w, "two distinct fields");
    field_clear(p.read, 1, 0, 0, 0);
    field_clear(p.write, 2, 0, 0, 0);
    field_pair_swap(&p);
    CHECK(p.read == w && p.write == r, "swap exchanges the pointers");
    float v[W * H];
    field_read(p.read, v);
    CHECK(v[0] == 2.0f && v[W * H - 1] == 2.0f, "read side is the old write side");
    field_pair_swap(&p);
    CHECK(p.read == r && p.write == w, "swap twice is identity");
    field_pair_free(&p);
    CHECK(p.read == NULL && p.write == NULL, "pair_free clears the pointers");

    CHECK(field_pair_create(&p, 0, H, 1, err, sizeof err) == -1 && !p.read && !p.write,
          "pair with a bad size fails cleanly");
}

static void test_copy_pass(void)
{
    char err[1024];
    Shader *copy = shader_load(shader_dir, "copy.glsl", err, sizeof err);
    CHECK(copy != NULL, "load copy.glsl: %s", copy ? "" : err);
    if (!copy) return;
    static const int chans[] = {4, 2, 1};
    const float scale = 3.0f;
    for (int k = 0; k < 3; k++) {
        int ch = chans[k];
        size_t n = (size_t)W * H * ch;
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
        fill_random(in, n);
        FieldPair p;
        if (field_pair_create(&p, W, H, ch, err, sizeof err) != 0) {
            CHECK(0, "pair: %s", err);
            free(in);
            free(out);
            continue;
        }
        field_upload(p.read, in);
        shader_use(copy);
        shader_set_texture(copy, "u_src", 0, field_texture(p.read));
        shader_set_float(copy, "u_scale", scale);
        pass_draw(p.write);
        CHECK(gl_check("test", "copy pass") == 0, "copy pass without GL errors");
        field_pair_swap(&p);
        field_read(p.read, out);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += out[i] != in[i] * scale;
        CHECK(bad == 0, "copy x3 into %d channels exact (%zu of %zu wrong)", ch, bad, n);
        /* and back again with scale 1: the pair really ping-pongs */
        shader_set_texture(copy, "u_src", 0, field_texture(p.read));
        shader_set_float(copy, "u_scale", 1.0f);
        pass_draw(p.write);
        field_pair_swap(&p);
        field_read(p.read, out);
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += out[i] != in[i] * scale;
        CHECK(bad == 0, "second pass x1 keeps the values (%zu wrong)", bad);
        field_pair_free(&p);
        free(in);
        free(out);
    }
    shader_free(copy);
}

static void test_limits(void)
{
    char err[256] = "";
    int max = glctx_max_texture_size(ctx);
    Field *f = field_create(max + 1, 4, 4, err, sizeof err);
    CHECK(f == NULL, "field over the texture limit fails");
    char want[128];
    snprintf(want, sizeof want, "field: %dx4 exceeds this GPU's texture limit %d", max + 1, max);
    CHECK(strcmp(err, want) == 0, "message: '%s'", err);
    field_free(f);
    f = field_create(4, 4, 3, err, sizeof err);
    CHECK(f == NULL && strstr(err, "field: 3 channels") == err, "3 channels refused: '%s'", err);
    f = field_create(-1, 4, 1, err, sizeof err);
    CHECK(f == NULL && strstr(err, "field: bad size -1x4") == err, "negative size refused: '%s'", err);
}

static void test_gl_check(void)
{
    CHECK(gl_check("test", "nothing") == 0, "gl_check with no error");
    log_set_level(LOG_QUIET);
    glBindTexture(GL_TEXTURE_2D, 987654); /* never generated: invalid in a core profile */
    int rc = gl_check("test", "binding a bad texture");
    log_set_level(LOG_INFO);
    CHECK(rc == -1, "gl_check reports an error");
    CHECK(gl_check("test", "nothing") == 0, "and clears it");
}

static void test_find_dir(void)
{
    char out[4096], err[2048];
    if (access("shaders/common.glsl", R_OK) == 0) /* in the source tree: ./shaders is the last resort */
        CHECK(shader_find_dir(NULL, argv0, out, sizeof out, err, sizeof err) == 0, "find a shader dir: %s", err);
    CHECK(shader_find_dir(shader_dir, argv0, out, sizeof out, err, sizeof err) == 0 &&
              strcmp(out, shader_dir) == 0, "override taken as is");
    int rc0 = shader_find_dir("/", argv0, out, sizeof out, err, sizeof err);
    CHECK(rc0 == -1 && strcmp(err, "shader: --shader-dir / holds no readable common.glsl") == 0,
          "a dir without common.glsl: '%s'", err);
    int rc = shader_find_dir("/nonexistent/dir", argv0, out, sizeof out, err, sizeof err);
    CHECK(rc == -1, "bad --shader-dir fails");
    CHECK(strstr(err, "shader: ") == err && strstr(err, "/nonexistent/dir") && strstr(err, "common.glsl"),
          "message names the dir and common.glsl: '%s'", err);

    Shader *s = shader_load("/nonexistent/dir", "jacobi.glsl", err, sizeof err);
    CHECK(s == NULL, "load from a bad dir fails");
    CHECK(strcmp(err, "shader: cannot read /nonexistent/dir/jacobi.glsl: No such file or directory") == 0,
          "message: '%s'", err);
}

static void test_include_errors(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "smokemorph-shaders");
    char err[2048];
    write_file(dir, "common.glsl", "// common\nfloat twice(float x) { return 2.0 * x; }\n");
    /* line 4 of broken.glsl has the syntax error */
    write_file(dir, "broken.glsl", "// broken\n#include \"common.glsl\"\nfloat f(float x)\n{ return x +* 2.0; }\n");
    write_file(dir, "uses_broken.glsl",
               "// a pass\n#include \"common.glsl\"\n#include \"broken.glsl\"\nout vec4 o;\n"
               "void main() { o = vec4(f(1.0)); }\n");
    Shader *s = shader_load(dir, "uses_broken.glsl", err, sizeof err);
    CHECK(s == NULL, "syntax error in an included file fails");
    CHECK(strstr(err, "shader: broken.glsl:4: ") == err, "names broken.glsl:4: '%s'", err);

    /* an error in the main file after two includes (one nested, one repeated) */
    write_file(dir, "ok_inc.glsl", "#include \"common.glsl\"\nfloat g(float x) { return twice(x); }\n");
    write_file(dir, "main_bad.glsl",
               "#version 330 core\n#include \"common.glsl\"\n#include \"ok_inc.glsl\"\n#include \"./common.glsl\"\n"
               "out vec4 o;\n"
               "void main()\n"
               "{\n"
               "    o = vec4(g(1.0)) + undefined_thing;\n" /* line 8 */
               "}\n");
    s = shader_load(dir, "main_bad.glsl", err, sizeof err);
    CHECK(s == NULL, "error in the main file fails");
    CHECK(strstr(err, "shader: main_bad.glsl:8: ") == err, "names main_bad.glsl:8: '%s'", err);
    CHECK(strstr(err, "undefined_thing") != NULL, "keeps the compiler's words: '%s'", err);

    /* the same without the error compiles: includes once, #version dropped */
    write_file(dir, "main_ok.glsl",
               "#version 330 core\n#include \"common.glsl\"\n#include \"ok_inc.glsl\"\n#include \"./common.glsl\"\n"
               "out vec4 o;\nvoid main() { o = vec4(g(1.0)); }\n");
    s = shader_load(dir, "main_ok.glsl", err, sizeof err);
    CHECK(s != NULL, "nested and repeated includes compile: %s", s ? "" : err);
    shader_free(s);

    write_file(dir, "missing_inc.glsl", "// x\n#include \"nothere.glsl\"\nout vec4 o;\nvoid main() { o = vec4(0); }\n");
    s = shader_load(dir, "missing_inc.glsl", err, sizeof err);
    CHECK(s == NULL, "missing include fails");
    char want[512];
    snprintf(want, sizeof want, "shader: missing_inc.glsl:2: cannot read %s/nothere.glsl: No such file or directory",
             dir);
    CHECK(strcmp(err, want) == 0, "message: '%s'", err);

    write_file(dir, "malformed.glsl", "#include <common.glsl>\nout vec4 o;\nvoid main() { o = vec4(0); }\n");
    s = shader_load(dir, "malformed.glsl", err, sizeof err);
    CHECK(s == NULL && strstr(err, "shader: malformed.glsl:1: malformed #include") == err, "'%s'", err);

    /* self-inclusion is harmless (each file once) */
    write_file(dir, "self.glsl", "#include \"self.glsl\"\nout vec4 o;\nvoid main() { o = vec4(0); }\n");
    s = shader_load(dir, "self.glsl", err, sizeof err);
    CHECK(s != NULL, "a file including itself: %s", s ? "" : err);
    shader_free(s);

    /* a link error (no main) is named */
    write_file(dir, "nomain.glsl", "out vec4 o;\nvoid notmain() { o = vec4(0); }\n");
    s = shader_load(dir, "nomain.glsl", err, sizeof err);
    CHECK(s == NULL && strstr(err, "shader: ") == err && strstr(err, "nomain.glsl"), "link error: '%s'", err);

    testlib_rm_rf(dir);
}

static void test_uniforms(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "smokemorph-uniforms");
    char err[2048];
    write_file(dir, "common.glsl", "ivec2 cell() { return ivec2(gl_FragCoord.xy); }\n");
    write_file(dir, "uni.glsl",
               "#include \"common.glsl\"\n"
               "uniform int u_i; uniform float u_f; uniform vec2 u_v2; uniform vec3 u_v3; uniform vec4 u_v4;\n"
               "uniform ivec2 u_iv2; uniform float u_arr[3]; uniform sampler2D u_tex;\n"
               "out vec4 o;\n"
               "void main()\n"
               "{\n"
               "    int x = cell().x;\n"
               "    if (x == 0) o = vec4(float(u_i), u_f, u_v2);\n"
               "    else if (x == 1) o = vec4(u_v3, float(u_iv2.x * 100 + u_iv2.y));\n"
               "    else if (x == 2) o = u_v4;\n"
               "    else if (x == 3) o = vec4(u_arr[0], u_arr[1], u_arr[2], 0.0);\n"
               "    else o = texelFetch(u_tex, ivec2(0, 0), 0);\n"
               "}\n");
    Shader *s = shader_load(dir, "uni.glsl", err, sizeof err);
    CHECK(s != NULL, "uniform test shader: %s", s ? "" : err);
    Field *f = field_create(5, 1, 4, err, sizeof err);
    Field *t = field_create(1, 1, 4, err, sizeof err);
    if (s && f && t) {
        CHECK(shader_uniform(s, "u_f") >= 0, "u_f found");
        CHECK(shader_uniform(s, "u_f") == shader_uniform(s, "u_f"), "cached location is stable");
        CHECK(shader_uniform(s, "u_absent") == -1, "absent uniform is -1");
        CHECK(shader_uniform(s, "u_absent") == -1, "absent uniform is -1 from the cache too");
        const float tex_val[4] = {9, 8, 7, 6};
        field_upload(t, tex_val);
        const float arr[3] = {0.5f, -0.25f, 1e6f};
        shader_use(s);
        shader_set_int(s, "u_i", -7);
        shader_set_float(s, "u_f", 0.125f);
        shader_set_vec2(s, "u_v2", 1.0f, 2.0f);
        shader_set_vec3(s, "u_v3", 3.0f, 4.0f, 5.0f);
        shader_set_ivec2(s, "u_iv2", 12, 34);
        shader_set_vec4(s, "u_v4", -1.0f, -2.0f, -3.0f, -4.0f);
        shader_set_float_array(s, "u_arr", arr, 3);
        shader_set_texture(s, "u_tex", 3, field_texture(t));
        shader_set_float(s, "u_absent", 1.0f); /* ignored, no error */
        pass_draw(f);
        CHECK(gl_check("test", "uniform pass") == 0, "no GL error");
        float out[20];
        field_read(f, out);
        const float want[20] = {-7, 0.125f, 1, 2, 3, 4, 5, 1234, -1, -2, -3, -4, 0.5f, -0.25f, 1e6f, 0,
                                9, 8, 7, 6};
        for (int i = 0; i < 20; i++) CHECK(out[i] == want[i], "uniform value %d: %g, want %g", i, out[i], want[i]);
    }
    glActiveTexture(GL_TEXTURE0);
    field_free(f);
    field_free(t);
    shader_free(s);
    testlib_rm_rf(dir);
}


/* Debug mode: a texelFetch past the texture gives NaN, and a pass that samples
 * the field it draws into fails the next gl_check. */
static void test_debug_checks(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "smokemorph-debug");
    char err[2048];
    write_file(dir, "oob.glsl",
               "uniform sampler2D u_src;\n"
               "uniform float u_unused, u_two2[4]; // uniform float u_commented;\n"
               "out vec4 o;\n"
               "void main() { o = texelFetch(u_src, ivec2(gl_FragCoord.xy) + ivec2(1, 0), 0); }\n");
    bool was = field_debug();
    Field *src = field_create(4, 1, 4, err, sizeof err), *dst = field_create(4, 1, 4, err, sizeof err);
    const float in[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    for (int debug = 0; debug < 2 && src && dst; debug++) {
        field_set_debug(debug);
        Shader *s = shader_load(dir, "oob.glsl", err, sizeof err);
        CHECK(s != NULL, "oob shader (debug %d): %s", debug, s ? "" : err);
        if (!s) continue;
        field_upload(src, in);
        shader_use(s);
        shader_set_texture(s, "u_src", 0, field_texture(src));
        pass_draw(dst);
        CHECK(gl_check("test", "oob pass") == 0, "a pass past the edge is no GL error (debug %d)", debug);
        float out[16];
        field_read(dst, out);
        for (int k = 0; k < 12; k++) CHECK(out[k] == in[k + 4], "debug %d: inside value %d is %g", debug, k, out[k]);
        if (debug)
            for (int k = 12; k < 16; k++) CHECK(isnan(out[k]), "debug: the fetch past the edge is NaN, not %g", out[k]);
        /* a feedback loop: sampling dst while drawing into it */
        shader_set_texture(s, "u_src", 0, field_texture(dst));
        pass_draw(dst);
        int rc = gl_check("test", "feedback pass");
        CHECK(debug ? rc < 0 : rc == 0, "debug %d: a pass sampling its own output %s", debug,
              debug ? "fails gl_check" : "is not checked");
        CHECK(gl_check("test", "after") == 0, "the feedback error is reported once");
        /* a uniform the source never declares (a misspelling) is an error in
         * debug mode; one declared but unused is not */
        shader_set_float(s, "u_srcc", 1.0f);
        rc = gl_check("test", "misspelt uniform");
        CHECK(debug ? rc < 0 : rc == 0, "debug %d: setting an undeclared uniform %s", debug,
              debug ? "fails gl_check" : "is ignored");
        CHECK(gl_check("test", "after") == 0, "the misspelling is reported once");
        shader_set_float(s, "u_unused", 1.0f);
        shader_set_float(s, "u_two2", 1.0f); /* the second of a list, an array with a digit */
        CHECK(gl_check("test", "unused uniform") == 0, "debug %d: declared, unused uniforms are no error",
              debug);
        shader_set_float(s, "u_commented", 1.0f); /* only in a comment: not declared */
        rc = gl_check("test", "commented uniform");
        CHECK(debug ? rc < 0 : rc == 0, "debug %d: a uniform named only in a comment %s", debug,
              debug ? "fails gl_check" : "is ignored");
        /* set before a pass: the pass's own debug check must not swallow it
         * (a new name: a misspelling is reported at its first lookup) */
        shader_set_float(s, "u_sorc", 1.0f);
        shader_set_texture(s, "u_src", 0, field_texture(src));
        pass_draw(dst);
        rc = gl_check("test", "misspelt uniform, then a pass");
        CHECK(debug ? rc < 0 : rc == 0, "debug %d: a misspelling before a pass %s", debug,
              debug ? "still fails the caller's gl_check" : "is ignored");
        shader_free(s);
    }
    field_set_debug(was);
    field_free(src);
    field_free(dst);
    testlib_rm_rf(dir);
}

/* One stage function, both entry points: a pass file defining stage() runs
 * as a fragment shader (pass_draw) and as a compute shader (pass_dispatch)
 * with the same result, on a size that is no multiple of the work group; the
 * defines given to the loader reach the source. */
static void test_pass_stages(void)
{
    char dir[64];
    testlib_tmpdir(dir, sizeof dir, "smokemorph-stage");
    char err[2048], src[4200];
    snprintf(src, sizeof src, "%s/entry.glsl", shader_dir);
    size_t len = 0;
    char *entry = testlib_read_file(src, &len);
    CHECK(entry != NULL, "cannot read %s", src);
    if (entry) write_file(dir, "entry.glsl", entry);
    free(entry);
    write_file(dir, "stage.glsl",
               "uniform sampler2D u_src;\n"
               "#ifdef SM_COMPUTE\n"
               "ivec2 cell() { return ivec2(gl_GlobalInvocationID.xy); }\n"
               "#else\n"
               "ivec2 cell() { return ivec2(gl_FragCoord.xy); }\n"
               "#endif\n"
               "vec4 stage()\n"
               "{\n"
               "    ivec2 c = cell();\n"
               "    return texelFetch(u_src, c, 0) * TEST_SCALE + vec4(c, 0.0, 1.0);\n"
               "}\n");
    int w = 37, h = 11;
    float *in = malloc(sizeof(float) * 4 * w * h), *out = malloc(sizeof(float) * 4 * w * h);
    for (int k = 0; k < 4 * w * h; k++) in[k] = (float)(k % 97) * 0.25f;
    Field *a = field_create(w, h, 4, err, sizeof err), *b = field_create(w, h, 4, err, sizeof err);
    for (int stage = 0; stage < 2 && a && b && in && out; stage++) {
        if (stage == 1 && !shader_compute_available()) {
            TESTLIB_NO_GL(4, 3, "test_pass_stages compute: no OpenGL 4.3");
            break;
        }
        Shader *s = shader_load_pass(dir, "stage.glsl", stage ? SHADER_COMPUTE : SHADER_FRAGMENT,
                                     "#define TEST_SCALE 2.0\n", err, sizeof err);
        CHECK(s != NULL, "stage shader (%s): %s", stage ? "compute" : "fragment", s ? "" : err);
        if (!s) continue;
        CHECK(shader_is_compute(s) == (stage == 1), "shader_is_compute");
        field_upload(a, in);
        field_clear(b, -1, -1, -1, -1);
        shader_use(s);
        shader_set_texture(s, "u_src", 0, field_texture(a));
        if (stage) pass_dispatch(b);
        else pass_draw(b);
        CHECK(gl_check("test", "stage pass") == 0, "stage pass (%s)", stage ? "compute" : "fragment");
        field_read(b, out);
        int bad = 0;
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) {
                const float *o = out + 4 * (j * w + i), *x = in + 4 * (j * w + i);
                if (o[0] != 2 * x[0] + i || o[1] != 2 * x[1] + j || o[2] != 2 * x[2] || o[3] != 2 * x[3] + 1)
                    bad++;
            }
        CHECK(bad == 0, "%s stage: %d of %d texels wrong", stage ? "compute" : "fragment", bad, w * h);
        shader_free(s);
    }
    field_free(a);
    field_free(b);
    free(in);
    free(out);
    testlib_rm_rf(dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    argv0 = argv[0];
    char err[1024];
    ctx = glctx_create_headless(err, sizeof err);
    if (!ctx) {
        TESTLIB_NO_GL(3, 3, "no headless GL context: %s", err);
        return check_done();
    }
    RUN(test_context);
    /* the source tree's shaders/: from the current dir (tests/run.sh runs in
     * the tree root), else two levels up from build/tests/test_gl_field */
    char up[4096];
    snprintf(up, sizeof up, "%s", argv0);
    char *slash = strrchr(up, '/');
    snprintf(slash ? slash + 1 : up, sizeof up - (size_t)(slash ? slash + 1 - up : 0), "../../shaders");
    if (shader_find_dir("shaders", argv0, shader_dir, sizeof shader_dir, err, sizeof err) != 0 &&
        shader_find_dir(up, argv0, shader_dir, sizeof shader_dir, err, sizeof err) != 0)
        printf("%s\n", err);
    RUN(test_upload_read);
    RUN(test_pair_swap);
    RUN(test_copy_pass);
    RUN(test_limits);
    RUN(test_gl_check);
    RUN(test_find_dir);
    RUN(test_include_errors);
    RUN(test_uniforms);
    RUN(test_debug_checks);
    RUN(test_pass_stages);
    pass_release();
    glctx_destroy(ctx);
    return check_done();
}
