/* shader: GLSL loading with #include/#line, compile/link logs that name files,
 * uniform cache; see shader.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "shader.h"

#include "field.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 64        /* distinct files in one shader */
#define MAX_DEPTH 16        /* #include nesting */
#define CACHE_SIZE 32       /* cached uniform locations per shader */
#define CACHE_NAME 48

typedef struct {
    char name[CACHE_NAME];
    GLint loc;
    bool has;                   /* value holds what the program was last given */
    GLenum type;                /* GL_INT or GL_FLOAT */
    int n;                      /* components */
    union {
        GLint i[4];
        GLfloat f[4];
    } value;
} UniformSlot;

struct Shader {
    GLuint prog;
    char *name;
    char *declared;             /* " a b c ": the uniforms the source declares */
    bool compute;
    int ncache;
    UniformSlot cache[CACHE_SIZE];
};

/* One full-screen triangle: vertices (-1,-1), (3,-1), (-1,3); v_uv is 0..1
 * over the viewport. */
/* The program last made current through here (use_prog), so that a pass's
 * use and its uniform sets cost one glUseProgram, not one each. Creating a
 * program forgets it (a new context, or a deleted program's name reused),
 * as does freeing it; nothing else in smokemorph calls glUseProgram. */
static GLuint g_current;

static const char *const vertex_src =
    "#version 330 core\n"
    "out vec2 v_uv;\n"
    "void main()\n"
    "{\n"
    "    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
    "    v_uv = p;\n"
    "    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
    "}\n";

/* ---- small helpers ------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(Buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) buf_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A whole file as a NUL-terminated string, or NULL with errno set. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    Buf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err || b.oom) {
        free(b.p);
        errno = rd_err ? EIO : ENOMEM;
        return NULL;
    }
    if (!b.p) buf_add(&b, "", 0);
    return b.p;
}

static bool file_readable(const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return false;
    return access(path, R_OK) == 0;
}

/* ---- finding the shader directory ---------------------------------------- */

/* Append a candidate, normalised when it exists, to the list of places looked. */
static bool try_dir(const char *cand, char *out, size_t outlen, char *looked, size_t lookedlen)
{
    char real[PATH_MAX];
    const char *shown = realpath(cand, real) ? real : cand;
    size_t used = strlen(looked), add = strlen(shown) + (used ? 2 : 0);
    if (used + add + 1 <= lookedlen) {
        if (used) memcpy(looked + used, ", ", 2);
        memcpy(looked + used + (used ? 2 : 0), shown, strlen(shown) + 1);
    }
    if (!file_readable(shown, "common.glsl")) return false;
    if (strlen(shown) + 1 > outlen) return false;
    memcpy(out, shown, strlen(shown) + 1);
    return true;
}

int shader_find_dir(const char *override, const char *argv0, char *out, size_t outlen,
                    char *err, size_t errlen)
{
    if (override && *override) {
        if (!file_readable(override, "common.glsl")) {
            snprintf(err, errlen, "shader: --shader-dir %s holds no readable common.glsl", override);
            return -1;
        }
        if (strlen(override) + 1 > outlen) {
            snprintf(err, errlen, "shader: --shader-dir %s: path too long", override);
            return -1;
        }
        memcpy(out, override, strlen(override) + 1);
        return 0;
    }

    char looked[2048] = "";
    char exe[PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
    } else if (argv0 && strchr(argv0, '/')) {
        if (!realpath(argv0, exe)) snprintf(exe, sizeof exe, "%s", argv0);
    }
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0'; /* exe is now the executable's directory */
        char cand[PATH_MAX + 16];
        snprintf(cand, sizeof cand, "%s/shaders", exe[0] ? exe : "/");
        if (try_dir(cand, out, outlen, looked, sizeof looked)) return 0;
        snprintf(cand, sizeof cand, "%s/../shaders", exe);
        if (try_dir(cand, out, outlen, looked, sizeof looked)) return 0;
        /* installed: PREFIX/bin/smokemorph finds PREFIX/share/smokemorph */
        char inst[PATH_MAX + 48];
        snprintf(inst, sizeof inst, "%s/../share/smokemorph/shaders", exe);
        if (try_dir(inst, out, outlen, looked, sizeof looked)) return 0;
    }
#ifdef SMOKEMORPH_DATADIR
    if (try_dir(SMOKEMORPH_DATADIR "/shaders", out, outlen, looked, sizeof looked)) return 0;
#endif
    if (try_dir("shaders", out, outlen, looked, sizeof looked)) return 0;
    snprintf(err, errlen, "shader: cannot find the shaders (a directory with common.glsl); looked in %s; "
             "use --shader-dir", looked);
    return -1;
}

/* ---- #include expansion ---------------------------------------------------- */

typedef struct {
    const char *dir;
    char *files[MAX_FILES]; /* source-string number -> file name */
    int nfiles;
    Buf out;
    char *err;
    size_t errlen;
} Pre;

/* "./a.glsl" and "a.glsl" are the same include. */
static const char *canon(const char *name)
{
    while (name[0] == '.' && name[1] == '/') name += 2;
    return name;
}

/* If line (NUL-terminated, no newline) is a `#word` directive, return what
 * follows the word; else NULL. */
static const char *directive(const char *line, const char *word)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != '#') return NULL;
    p++;
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strlen(word);
    if (strncmp(p, word, n) != 0) return NULL;
    if (p[n] != '\0' && p[n] != ' ' && p[n] != '\t' && p[n] != '"') return NULL;
    return p + n;
}

static int expand(Pre *pp, const char *name, int depth, const char *from, int from_line)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", pp->dir, name) >= (int)sizeof path) {
        snprintf(pp->err, pp->errlen, "shader: path too long: %s/%s", pp->dir, name);
        return -1;
    }
    if (pp->nfiles >= MAX_FILES) {
        snprintf(pp->err, pp->errlen, "shader: %s:%d: more than %d files included", from, from_line,
                 MAX_FILES);
        return -1;
    }
    char *text = slurp(path);
    if (!text) {
        if (from)
            snprintf(pp->err, pp->errlen, "shader: %s:%d: cannot read %s: %s", from, from_line, path,
                     strerror(errno));
        else
            snprintf(pp->err, pp->errlen, "shader: cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int idx = pp->nfiles;
    pp->files[idx] = strdup(canon(name));
    if (!pp->files[idx]) {
        free(text);
        snprintf(pp->err, pp->errlen, "shader: out of memory");
        return -1;
    }
    pp->nfiles++;
    buf_printf(&pp->out, "#line 1 %d\n", idx);

    int rc = 0, ln = 0;
    for (char *line = text; line && rc == 0; ) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        else if (!*line) break; /* file ended with a newline */
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        ln++;
        const char *arg;
        if ((arg = directive(line, "include")) != NULL) {
            const char *q0 = strchr(arg, '"');
            const char *q1 = q0 ? strchr(q0 + 1, '"') : NULL;
            if (!q0 || !q1 || q1 == q0 + 1) {
                snprintf(pp->err, pp->errlen, "shader: %s:%d: malformed #include, expected #include \"file.glsl\"",
                         pp->files[idx], ln);
                rc = -1;
                break;
            }
            char inc[256];
            snprintf(inc, sizeof inc, "%.*s", (int)(q1 - q0 - 1), q0 + 1);
            bool seen = false;
            for (int k = 0; k < pp->nfiles; k++)
                if (strcmp(pp->files[k], canon(inc)) == 0) seen = true;
            if (seen) {
                buf_add(&pp->out, "\n", 1); /* each file once: keep the line count */
            } else if (depth + 1 > MAX_DEPTH) {
                snprintf(pp->err, pp->errlen, "shader: %s:%d: #include nested deeper than %d",
                         pp->files[idx], ln, MAX_DEPTH);
                rc = -1;
            } else {
                rc = expand(pp, inc, depth + 1, pp->files[idx], ln);
                buf_printf(&pp->out, "#line %d %d\n", ln + 1, idx);
            }
        } else if (directive(line, "version")) {
            buf_add(&pp->out, "\n", 1); /* the loader writes #version itself */
        } else {
            buf_add(&pp->out, line, len);
            buf_add(&pp->out, "\n", 1);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (rc == 0 && pp->out.oom) {
        snprintf(pp->err, pp->errlen, "shader: out of memory");
        rc = -1;
    }
    return rc;
}

/* ---- compile and link logs ---------------------------------------------------- */

/* Rewrite one log line "0:12(3): error: x" (Mesa) or "0(12) : error C0000: x"
 * (NVIDIA) as "shader: file:12: error: x". False when it has neither form. */
static bool rewrite_line(const char *line, char *const *files, int nfiles, Buf *out)
{
    const char *p = line;
    char *end;
    long s = strtol(p, &end, 10);
    if (end == p) return false;
    p = end;
    long ln;
    if (*p == ':') { /* Mesa: S:L(C): */
        const char *q = p + 1;
        ln = strtol(q, &end, 10);
        if (end == q) return false;
        p = end;
        if (*p == '(') {
            p = strchr(p, ')');
            if (!p) return false;
            p++;
        }
        if (*p != ':') return false;
        p++;
    } else if (*p == '(') { /* NVIDIA: S(L) : */
        const char *q = p + 1;
        ln = strtol(q, &end, 10);
        if (end == q || *end != ')') return false;
        p = end + 1;
        while (*p == ' ') p++;
        if (*p != ':') return false;
        p++;
    } else {
        return false;
    }
    while (*p == ' ') p++;
    if (s < 0 || s >= nfiles) return false;
    buf_printf(out, "shader: %s:%ld: ", files[s], ln);
    buf_add(out, p, strlen(p));
    return true;
}

/* The info log rewritten line by line into err; label names the program or
 * file when a line carries no location. */
static void report_log(const char *what, const char *label, const char *log, char *const *files,
                       int nfiles, char *err, size_t errlen)
{
    Buf out = {0};
    char *copy = strdup(log ? log : "");
    int lines = 0;
    for (char *line = copy; line && *line; ) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) line[--len] = '\0';
        if (len) {
            if (lines++) buf_add(&out, "\n", 1);
            if (!rewrite_line(line, files, nfiles, &out))
                buf_printf(&out, "shader: %s %s: %s", what, label, line);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!lines) buf_printf(&out, "shader: %s %s failed with no log", what, label);
    snprintf(err, errlen, "%s", out.oom || !out.p ? "shader: out of memory" : out.p);
    free(out.p);
    free(copy);
}

static char *info_log(GLuint obj, bool program)
{
    GLint n = 0;
    if (program) glGetProgramiv(obj, GL_INFO_LOG_LENGTH, &n);
    else glGetShaderiv(obj, GL_INFO_LOG_LENGTH, &n);
    char *s = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
    if (s && n > 0) {
        if (program) glGetProgramInfoLog(obj, n, NULL, s);
        else glGetShaderInfoLog(obj, n, NULL, s);
    }
    return s;
}

static GLuint compile(GLenum type, const char *src, const char *label, char *const *files, int nfiles,
                      char *err, size_t errlen)
{
    GLuint sh = glCreateShader(type);
    if (!sh) {
        snprintf(err, errlen, "shader: cannot create a shader object for %s (no GL context?)", label);
        return 0;
    }
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = GL_FALSE;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    char *log = info_log(sh, false);
    if (!ok) {
        report_log("cannot compile", label, log, files, nfiles, err, errlen);
        free(log);
        glDeleteShader(sh);
        return 0;
    }
    if (log && *log) log_debug("shader", "%s: compiler says: %s", label, log);
    free(log);
    return sh;
}

/* ---- load ---------------------------------------------------------------- */

/* field_debug() (SMOKEMORPH_GL_DEBUG): a texelFetch outside its texture (undefined in GL 3.3:
 * 0 on llvmpipe, another texture's memory on some GPUs) returns NaN, so a
 * pass that reads past its field poisons the run instead of passing on one
 * driver and failing at random on another. */
static const char checked_fetch[] =
    "vec4 sm_checked_fetch(sampler2D t, ivec2 c, int l)\n"
    "{\n"
    "    if (any(lessThan(c, ivec2(0))) || any(greaterThanEqual(c, textureSize(t, l))))\n"
    "        return vec4(uintBitsToFloat(0x7fc00000u));\n"
    "    return texelFetch(t, c, l);\n"
    "}\n"
    "#define texelFetch(t, c, l) sm_checked_fetch(t, c, l)\n"
    "#line 1\n";

/* The source of a program: "#version", the defines, the debug fetch check,
 * the file with its includes, then (for a pass) entry.glsl. */
static int preprocess(Pre *pp, const char *name, ShaderStage stage, bool pass, const char *defines)
{
    if (stage == SHADER_COMPUTE) {
        buf_printf(&pp->out, "#version 430 core\n#define SM_COMPUTE 1\n#define SM_LOCAL_X %d\n"
                   "#define SM_LOCAL_Y %d\n", PASS_LOCAL_X, PASS_LOCAL_Y);
    } else {
        buf_add(&pp->out, "#version 330 core\n", 18);
    }
    if (defines) buf_add(&pp->out, defines, strlen(defines));
    if (field_debug()) buf_add(&pp->out, checked_fetch, strlen(checked_fetch));
    if (expand(pp, name, 0, NULL, 0) != 0) return -1;
    if (pass && expand(pp, "entry.glsl", 0, NULL, 0) != 0) return -1;
    return 0;
}

/* The names declared `uniform ... name` in src (the expanded source), as one
 * string of " name" entries, for the debug check of shader_uniform().
 * Comments are skipped; a declaration may list several names
 * (`uniform float a, b[3];`); an array's size is dropped. */
static char *declared_uniforms(const char *src)
{
    Buf out = {0};
    buf_add(&out, " ", 1);
    char *text = strdup(src);
    if (!text) return NULL;
    /* comments to spaces */
    for (char *p = text; *p; p++) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') *p++ = ' ';
            if (!*p) break;
        } else if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            char *end = e ? e + 2 : p + strlen(p);
            while (p < end) {
                if (*p != '\n') *p = ' ';
                p++;
            }
            p--;
        }
    }
    for (char *p = strstr(text, "uniform"); p; p = strstr(p + 1, "uniform")) {
        if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
            !(p[7] == ' ' || p[7] == '\t' || p[7] == '\n'))
            continue;
        char *semi = strchr(p, ';');
        if (!semi) break;
        /* each comma-separated declarator: its name is the last identifier
         * before any '[' */
        char *start = p + 7;
        for (char *q = start; q <= semi; q++) {
            if (*q != ',' && *q != ';') continue;
            char *e = q;
            char *br = memchr(start, '[', (size_t)(q - start));
            if (br) e = br;
            while (e > start && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n')) e--;
            char *b = e;
            while (b > start && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
            if (e > b) {
                buf_add(&out, b, (size_t)(e - b));
                buf_add(&out, " ", 1);
            }
            start = q + 1;
        }
        p = semi;
    }
    free(text);
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

static Shader *load(const char *dir, const char *name, ShaderStage stage, bool pass,
                    const char *defines, char *err, size_t errlen)
{
    Pre pp = {.dir = dir, .err = err, .errlen = errlen};
    Shader *s = NULL;
    GLuint vs = 0, fs = 0, prog = 0;
    bool compute = stage == SHADER_COMPUTE;
    if (compute && !shader_compute_available()) {
        snprintf(err, errlen, "shader: %s: compute shaders need OpenGL 4.3, this context has %s", name,
                 (const char *)glGetString(GL_VERSION));
        return NULL;
    }
    if (preprocess(&pp, name, stage, pass, defines) != 0) goto undo_pre;

    static char *const builtin[] = {"built-in vertex shader"};
    if (!compute) {
        vs = compile(GL_VERTEX_SHADER, vertex_src, "the built-in vertex shader", builtin, 1, err, errlen);
        if (!vs) goto undo_pre;
    }
    fs = compile(compute ? GL_COMPUTE_SHADER : GL_FRAGMENT_SHADER, pp.out.p, name, pp.files, pp.nfiles,
                 err, errlen);
    if (!fs) goto undo_vs;

    g_current = 0; /* a new context, or a deleted program's name again */
    prog = glCreateProgram();
    if (vs) glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    GLint ok = GL_FALSE;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char *log = info_log(prog, true);
        char label[300];
        snprintf(label, sizeof label, "%s", name);
        report_log("cannot link", label, log, pp.files, pp.nfiles, err, errlen);
        free(log);
        goto undo_prog;
    }
    if (vs) glDetachShader(prog, vs);
    glDetachShader(prog, fs);

    s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name)) || !(s->declared = declared_uniforms(pp.out.p))) {
        snprintf(err, errlen, "shader: out of memory");
        if (s) free(s->name);
        free(s);
        s = NULL;
        goto undo_prog;
    }
    s->prog = prog;
    s->compute = compute;
    goto undo_fs; /* success: the shader objects are no longer needed */

undo_prog:
    glDeleteProgram(prog);
undo_fs:
    glDeleteShader(fs);
undo_vs:
    if (vs) glDeleteShader(vs);
undo_pre:
    for (int i = 0; i < pp.nfiles; i++) free(pp.files[i]);
    free(pp.out.p);
    return s;
}

Shader *shader_load(const char *dir, const char *name, char *err, size_t errlen)
{
    return load(dir, name, SHADER_FRAGMENT, false, NULL, err, errlen);
}

Shader *shader_load_pass(const char *dir, const char *name, ShaderStage stage, const char *defines,
                         char *err, size_t errlen)
{
    return load(dir, name, stage, true, defines, err, errlen);
}

bool shader_compute_available(void)
{
    GLint major = 0, minor = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    glGetIntegerv(GL_MINOR_VERSION, &minor);
    return major > 4 || (major == 4 && minor >= 3);
}

bool shader_software_renderer(void)
{
    const char *r = (const char *)glGetString(GL_RENDERER);
    return r && (strstr(r, "llvmpipe") || strstr(r, "softpipe") || strstr(r, "swrast") ||
                 strstr(r, "SwiftShader"));
}

bool shader_is_compute(const Shader *s) { return s->compute; }

void shader_free(Shader *s)
{
    if (!s) return;
    if (g_current == s->prog) g_current = 0;
    glDeleteProgram(s->prog);
    free(s->name);
    free(s->declared);
    free(s);
}


static void use_prog(GLuint prog)
{
    if (prog == g_current) return;
    glUseProgram(prog);
    g_current = prog;
}

void shader_use(Shader *s) { use_prog(s->prog); }

static UniformSlot *find_slot(Shader *s, const char *name, GLint *loc)
{
    for (int i = 0; i < s->ncache; i++)
        if (strcmp(s->cache[i].name, name) == 0) {
            *loc = s->cache[i].loc;
            return &s->cache[i];
        }
    *loc = glGetUniformLocation(s->prog, name);
    if (*loc < 0) {
        /* declared but unused is fine (the compiler drops it); a name the
         * source never declares is a misspelling: an error in debug runs */
        char key[CACHE_NAME + 2];
        snprintf(key, sizeof key, " %s ", name);
        if (field_debug() && s->declared && !strstr(s->declared, key)) {
            log_error("shader", "%s declares no uniform %s (misspelt?)", s->name, name);
            field_flag_error();
        } else {
            log_debug("shader", "%s has no active uniform %s", s->name, name);
        }
    }
    if (s->ncache < CACHE_SIZE && strlen(name) < CACHE_NAME) {
        UniformSlot *u = &s->cache[s->ncache++];
        memset(u, 0, sizeof *u);
        memcpy(u->name, name, strlen(name) + 1);
        u->loc = *loc;
        return u;
    }
    return NULL;
}

GLint shader_uniform(Shader *s, const char *name)
{
    GLint loc;
    UniformSlot *u = find_slot(s, name, &loc);
    if (u) u->has = false; /* the caller sets it: the cached value no longer holds */
    return loc;
}

/* Uniform values are the program's own state: a value it already holds is
 * not sent again (the driver's cost of a glUniform call, a few hundred a
 * step, is most of a small grid's step). Returns the location to set, or -1
 * when there is nothing to do. */
static GLint changed(Shader *s, const char *name, GLenum type, int n, const void *v)
{
    GLint loc;
    UniformSlot *u = find_slot(s, name, &loc);
    if (loc < 0) return -1;
    if (!u) return loc;
    if (u->has && u->type == type && u->n == n && memcmp(&u->value, v, (size_t)n * 4) == 0) return -1;
    u->has = true;
    u->type = type;
    u->n = n;
    memcpy(&u->value, v, (size_t)n * 4);
    return loc;
}

static void set_i(Shader *s, const char *name, int n, const GLint *v)
{
    use_prog(s->prog);
    GLint loc = changed(s, name, GL_INT, n, v);
    if (loc < 0) return;
    if (n == 1) glUniform1i(loc, v[0]);
    else glUniform2i(loc, v[0], v[1]);
}

static void set_f(Shader *s, const char *name, int n, const GLfloat *v)
{
    use_prog(s->prog);
    GLint loc = changed(s, name, GL_FLOAT, n, v);
    if (loc < 0) return;
    switch (n) {
    case 1: glUniform1f(loc, v[0]); break;
    case 2: glUniform2f(loc, v[0], v[1]); break;
    case 3: glUniform3f(loc, v[0], v[1], v[2]); break;
    default: glUniform4f(loc, v[0], v[1], v[2], v[3]); break;
    }
}

void shader_set_int(Shader *s, const char *name, int v)
{
    GLint a[1] = {v};
    set_i(s, name, 1, a);
}

void shader_set_ivec2(Shader *s, const char *name, int x, int y)
{
    GLint a[2] = {x, y};
    set_i(s, name, 2, a);
}

void shader_set_float(Shader *s, const char *name, float v)
{
    GLfloat a[1] = {v};
    set_f(s, name, 1, a);
}

void shader_set_vec2(Shader *s, const char *name, float x, float y)
{
    GLfloat a[2] = {x, y};
    set_f(s, name, 2, a);
}

void shader_set_vec3(Shader *s, const char *name, float x, float y, float z)
{
    GLfloat a[3] = {x, y, z};
    set_f(s, name, 3, a);
}

void shader_set_vec4(Shader *s, const char *name, float x, float y, float z, float w)
{
    GLfloat a[4] = {x, y, z, w};
    set_f(s, name, 4, a);
}

void shader_set_float_array(Shader *s, const char *name, const float *v, int n)
{
    use_prog(s->prog);
    glUniform1fv(shader_uniform(s, name), n, v);
}

void shader_set_texture(Shader *s, const char *name, int unit, GLuint tex)
{
    glActiveTexture(GL_TEXTURE0 + (GLenum)unit);
    glBindTexture(GL_TEXTURE_2D, tex);
    GLint a[1] = {unit};
    set_i(s, name, 1, a);
}
