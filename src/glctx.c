/* glctx: OpenGL context creation, headless (EGL) or windowed (freeglut); see glctx.h. */
#include <GL/glew.h> /* must precede every other GL header */

#define EGL_NO_X11 /* keep Xlib out of eglplatform.h */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/freeglut.h>

#include "glctx.h"
#include "log.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum { CTX_EGL_DEVICE, CTX_EGL_SURFACELESS, CTX_WINDOW } CtxKind;

struct GlCtx {
    CtxKind kind;
    EGLDisplay dpy;
    EGLContext egl;
    int win;
};

static bool g_glut_initialised;

static bool debug_requested(void)
{
    const char *s = getenv("SMOKEMORPH_GL_DEBUG");
    return s && *s && strcmp(s, "0") != 0;
}

/* Whole-word search in a space-separated extension list. */
static bool has_ext(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (!list) return false;
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
        bool start = p == list || p[-1] == ' ';
        bool end = p[n] == '\0' || p[n] == ' ';
        if (start && end) return true;
    }
    return false;
}

/* Append a formatted piece to a message buffer, truncating quietly. */
static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static const char *egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
    }
}

static const char *fb_status_name(GLenum s)
{
    switch (s) {
    case GL_FRAMEBUFFER_COMPLETE: return "GL_FRAMEBUFFER_COMPLETE";
    case GL_FRAMEBUFFER_UNSUPPORTED: return "GL_FRAMEBUFFER_UNSUPPORTED";
    case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT: return "GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT";
    case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT: return "GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT";
    case GL_FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER: return "GL_FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER";
    case GL_FRAMEBUFFER_INCOMPLETE_READ_BUFFER: return "GL_FRAMEBUFFER_INCOMPLETE_READ_BUFFER";
    case GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE: return "GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE";
    default: return "unknown status";
    }
}

/* ---- debug output ------------------------------------------------------ */

static const char *debug_type_name(GLenum t)
{
    switch (t) {
    case GL_DEBUG_TYPE_ERROR: return "error";
    case GL_DEBUG_TYPE_DEPRECATED_BEHAVIOR: return "deprecated";
    case GL_DEBUG_TYPE_UNDEFINED_BEHAVIOR: return "undefined behaviour";
    case GL_DEBUG_TYPE_PORTABILITY: return "portability";
    case GL_DEBUG_TYPE_PERFORMANCE: return "performance";
    case GL_DEBUG_TYPE_MARKER: return "marker";
    default: return "other";
    }
}

static void GLAPIENTRY debug_message(GLenum source, GLenum type, GLuint id, GLenum severity,
                                     GLsizei length, const GLchar *message, const void *user)
{
    (void)source;
    (void)user;
    int n = length < 0 ? (int)strlen(message) : (int)length;
    /* errors always; medium at the default level; low and notifications
     * (NVIDIA's texture-state and buffer chatter) only with debug logging */
    switch (type == GL_DEBUG_TYPE_ERROR ? GL_DEBUG_SEVERITY_HIGH : severity) {
    case GL_DEBUG_SEVERITY_HIGH:
        log_error("gl", "%s (id %u): %.*s", debug_type_name(type), id, n, message);
        break;
    case GL_DEBUG_SEVERITY_MEDIUM:
        log_info("gl", "%s (id %u): %.*s", debug_type_name(type), id, n, message);
        break;
    default:
        log_debug("gl", "%s (id %u): %.*s", debug_type_name(type), id, n, message);
        break;
    }
}

static void enable_debug_output(void)
{
    if (!(GLEW_KHR_debug || GLEW_VERSION_4_3) || !glDebugMessageCallback) {
        log_info("glctx", "SMOKEMORPH_GL_DEBUG: this driver offers no KHR_debug, using glGetError only");
        return;
    }
    glEnable(GL_DEBUG_OUTPUT);
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageCallback(debug_message, NULL);
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, NULL, GL_TRUE);
    log_info("glctx", "GL debug output on");
}

/* ---- common: GLEW and the feature checks -------------------------------- */

/* A GL_*32F texture of 4x4 attached to an FBO must be complete. */
static int check_float_target(GLenum internal, const char *name, char *err, size_t errlen)
{
    GLuint tex = 0, fbo = 0;
    int rc = -1;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, 4, 4, 0, GL_RGBA, GL_FLOAT, NULL);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        snprintf(err, errlen, "glctx: %s textures are not supported by this driver (GL error 0x%04x)",
                 name, (unsigned)e);
        goto undo_tex;
    }
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (st != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, errlen,
                 "glctx: %s render targets are not supported by this driver (framebuffer status 0x%04x: %s)",
                 name, (unsigned)st, fb_status_name(st));
        goto undo_fbo;
    }
    rc = 0;
undo_fbo:
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
undo_tex:
    glBindTexture(GL_TEXTURE_2D, 0);
    glDeleteTextures(1, &tex);
    while (glGetError() != GL_NO_ERROR) {}
    return rc;
}

/* With a context current: load GL through GLEW, then check that this driver
 * can run the solver (3.3, float render targets). */
static int finish_gl_init(char *err, size_t errlen)
{
    glewExperimental = GL_TRUE;
    GLenum g = glewInit();
    /* Debian's GLEW is built for GLX: under EGL it returns 4
     * (GLEW_ERROR_NO_GLX_DISPLAY) after loading every GL entry point. */
    if (g != GLEW_OK && g != 4) {
        snprintf(err, errlen, "glctx: cannot load OpenGL functions: glewInit: %s (%u)",
                 (const char *)glewGetErrorString(g), (unsigned)g);
        return -1;
    }
    while (glGetError() != GL_NO_ERROR) {} /* GLEW leaves GL_INVALID_ENUM in core profiles */

    const char *ver = (const char *)glGetString(GL_VERSION);
    const char *ren = (const char *)glGetString(GL_RENDERER);
    int major = 0, minor = 0;
    if (!ver || sscanf(ver, "%d.%d", &major, &minor) != 2) {
        snprintf(err, errlen, "glctx: cannot read the OpenGL version of this context");
        return -1;
    }
    if (major < 3 || (major == 3 && minor < 3)) {
        snprintf(err, errlen, "glctx: OpenGL 3.3 or newer is needed, this driver offers %d.%d (%s)",
                 major, minor, ren ? ren : "unknown renderer");
        return -1;
    }
    /* Entry points the solver cannot do without (NULL when GLEW failed to load them). */
    struct { const void *fn; const char *name; } need[] = {
        {(const void *)glGenVertexArrays, "glGenVertexArrays"},
        {(const void *)glGenFramebuffers, "glGenFramebuffers"},
        {(const void *)glCheckFramebufferStatus, "glCheckFramebufferStatus"},
        {(const void *)glCreateShader, "glCreateShader"},
        {(const void *)glUniform4f, "glUniform4f"},
        {(const void *)glClearBufferfv, "glClearBufferfv"},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (!need[i].fn) {
            snprintf(err, errlen, "glctx: OpenGL function %s is missing (%s, OpenGL %s)",
                     need[i].name, ren ? ren : "unknown renderer", ver);
            return -1;
        }
    }
    if (check_float_target(GL_RGBA32F, "GL_RGBA32F", err, errlen) != 0 ||
        check_float_target(GL_RG32F, "GL_RG32F", err, errlen) != 0 ||
        check_float_target(GL_R32F, "GL_R32F", err, errlen) != 0)
        return -1;

    if (debug_requested()) enable_debug_output();
    while (glGetError() != GL_NO_ERROR) {}
    return 0;
}

/* ---- headless: EGL ------------------------------------------------------ */

/* Initialise dpy and make a 4.3 (else 3.3) core context current on it with
 * no surface. On failure dpy is terminated, why says what went wrong and
 * *too_old is set when the driver refused the 3.3 core context itself. */
static EGLContext egl_context_on(EGLDisplay dpy, char *why, size_t whylen, bool *too_old)
{
    EGLint emaj = 0, emin = 0;
    if (!eglInitialize(dpy, &emaj, &emin)) {
        snprintf(why, whylen, "eglInitialize failed (%s)", egl_error_name(eglGetError()));
        return EGL_NO_CONTEXT;
    }
    const char *ext = eglQueryString(dpy, EGL_EXTENSIONS);
    EGLConfig cfg = EGL_NO_CONFIG_KHR;
    EGLContext ctx = EGL_NO_CONTEXT;
    if (!has_ext(ext, "EGL_KHR_surfaceless_context")) {
        snprintf(why, whylen, "EGL %d.%d lacks EGL_KHR_surfaceless_context", emaj, emin);
        goto undo_init;
    }
    if (!has_ext(ext, "EGL_KHR_create_context") && (emaj < 1 || (emaj == 1 && emin < 5))) {
        snprintf(why, whylen, "EGL %d.%d cannot ask for a core profile (no EGL_KHR_create_context)",
                 emaj, emin);
        goto undo_init;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        snprintf(why, whylen, "desktop OpenGL is not offered (eglBindAPI: %s)",
                 egl_error_name(eglGetError()));
        goto undo_init;
    }
    if (!has_ext(ext, "EGL_KHR_no_config_context")) {
        const EGLint want[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                               EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(dpy, want, &cfg, 1, &n) || n < 1) {
            snprintf(why, whylen, "no EGL config for desktop OpenGL (%s)",
                     egl_error_name(eglGetError()));
            goto undo_init;
        }
    }
    static const int versions[][2] = {{4, 3}, {3, 3}};
    EGLint last = EGL_SUCCESS;
    for (size_t i = 0; i < 2 && ctx == EGL_NO_CONTEXT; i++) {
        EGLint attrs[] = {
            EGL_CONTEXT_MAJOR_VERSION_KHR, versions[i][0],
            EGL_CONTEXT_MINOR_VERSION_KHR, versions[i][1],
            EGL_CONTEXT_OPENGL_PROFILE_MASK_KHR, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT_KHR,
            EGL_CONTEXT_FLAGS_KHR, debug_requested() ? EGL_CONTEXT_OPENGL_DEBUG_BIT_KHR : 0,
            EGL_NONE,
        };
        ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, attrs);
        if (ctx == EGL_NO_CONTEXT) last = eglGetError();
    }
    if (ctx == EGL_NO_CONTEXT) {
        snprintf(why, whylen, "no 3.3 core context, eglCreateContext: %s", egl_error_name(last));
        *too_old = true;
        goto undo_init;
    }
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        snprintf(why, whylen, "eglMakeCurrent without a surface failed (%s)",
                 egl_error_name(eglGetError()));
        goto undo_ctx;
    }
    return ctx;

undo_ctx:
    eglDestroyContext(dpy, ctx);
undo_init:
    eglTerminate(dpy);
    return EGL_NO_CONTEXT;
}

static void egl_release(EGLDisplay dpy, EGLContext ctx)
{
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
    eglReleaseThread();
}

/* What glctx_create_headless tries, and what went wrong so far. */
typedef struct {
    const char *client; /* EGL's client extensions, or NULL */
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
    EGLDeviceEXT devs[16];
    EGLint ndev;
    bool software[16];
    char tried[768];    /* "; way: why" for each way that failed */
    char why[256];
    bool too_old;
} EglTry;

/* The EGL devices, each marked software or not; notes in t->tried when there are none. */
static void egl_list_devices(EglTry *t)
{
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC query_device_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");

    bool device_platform = t->get_platform_display && query_devices &&
                           has_ext(t->client, "EGL_EXT_platform_device");
    if (device_platform) {
        if (!query_devices(16, t->devs, &t->ndev)) t->ndev = 0;
        for (EGLint i = 0; i < t->ndev; i++) {
            const char *dext = query_device_string ? query_device_string(t->devs[i], EGL_EXTENSIONS) : NULL;
            t->software[i] = has_ext(dext, "EGL_MESA_device_software");
        }
        if (t->ndev == 0) append(t->tried, sizeof t->tried, "; EGL device platform: no devices");
    } else {
        append(t->tried, sizeof t->tried, "; EGL device platform: not offered");
    }
}

/* Mesa's surfaceless platform: a context on it, or EGL_NO_CONTEXT with a note in t->tried. */
static EGLContext egl_try_surfaceless(EglTry *t, EGLDisplay *dpy, CtxKind *kind)
{
    if (!t->get_platform_display || !has_ext(t->client, "EGL_MESA_platform_surfaceless")) {
        append(t->tried, sizeof t->tried, "; EGL surfaceless (Mesa): not offered");
        return EGL_NO_CONTEXT;
    }
    *dpy = t->get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (*dpy == EGL_NO_DISPLAY) {
        append(t->tried, sizeof t->tried, "; EGL surfaceless (Mesa): no display (%s)",
               egl_error_name(eglGetError()));
        return EGL_NO_CONTEXT;
    }
    EGLContext ctx = egl_context_on(*dpy, t->why, sizeof t->why, &t->too_old);
    if (ctx == EGL_NO_CONTEXT)
        append(t->tried, sizeof t->tried, "; EGL surfaceless (Mesa): %s", t->why);
    else
        *kind = CTX_EGL_SURFACELESS;
    return ctx;
}

/* The hardware (software = false) or software devices in turn: the first context, or
 * EGL_NO_CONTEXT with a note in t->tried for each device. */
static EGLContext egl_try_devices(EglTry *t, bool software, EGLDisplay *dpy, CtxKind *kind)
{
    EGLContext ctx = EGL_NO_CONTEXT;
    for (EGLint i = 0; i < t->ndev && ctx == EGL_NO_CONTEXT; i++) {
        if (t->software[i] != software) continue;
        *dpy = t->get_platform_display(EGL_PLATFORM_DEVICE_EXT, t->devs[i], NULL);
        if (*dpy == EGL_NO_DISPLAY) {
            append(t->tried, sizeof t->tried, "; EGL device %d%s: no display (%s)", (int)i,
                   t->software[i] ? " (software)" : "", egl_error_name(eglGetError()));
            continue;
        }
        ctx = egl_context_on(*dpy, t->why, sizeof t->why, &t->too_old);
        if (ctx == EGL_NO_CONTEXT)
            append(t->tried, sizeof t->tried, "; EGL device %d%s: %s", (int)i,
                   t->software[i] ? " (software)" : "", t->why);
        else
            *kind = CTX_EGL_DEVICE;
    }
    return ctx;
}

GlCtx *glctx_create_headless(char *err, size_t errlen)
{
    EglTry t = {.ndev = 0};
    char *tried = t.tried;
    t.client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!t.client) eglGetError(); /* EGL 1.4 without client extensions */

    t.get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    egl_list_devices(&t);

    EGLDisplay dpy = EGL_NO_DISPLAY;
    EGLContext ctx = EGL_NO_CONTEXT;
    CtxKind kind = CTX_EGL_DEVICE;
    /* pass 0: hardware devices, pass 1: Mesa surfaceless, pass 2: software devices */
    for (int pass = 0; pass < 3 && ctx == EGL_NO_CONTEXT; pass++) {
        if (pass == 1) ctx = egl_try_surfaceless(&t, &dpy, &kind);
        else ctx = egl_try_devices(&t, pass == 2, &dpy, &kind);
    }
    if (ctx == EGL_NO_CONTEXT) {
        /* one line: the problem first, then every way tried (tried starts "; ") */
        if (!tried[0]) append(tried, sizeof t.tried, "; no EGL platform to try");
        if (t.too_old)
            snprintf(err, errlen, "glctx: OpenGL 3.3 or newer is needed, no headless driver here "
                     "offers it (%s)", tried + 2);
        else
            snprintf(err, errlen, "glctx: no headless OpenGL context (%s)", tried + 2);
        return NULL;
    }
    if (tried[0]) log_debug("glctx", "headless context after failures%s", tried);

    GlCtx *gc = calloc(1, sizeof *gc);
    if (!gc) {
        snprintf(err, errlen, "glctx: out of memory");
        goto undo_egl;
    }
    gc->kind = kind;
    gc->dpy = dpy;
    gc->egl = ctx;
    if (finish_gl_init(err, errlen) != 0) goto undo_gc;
    return gc;

undo_gc:
    free(gc);
undo_egl:
    egl_release(dpy, ctx);
    return NULL;
}

/* ---- window: freeglut --------------------------------------------------- */

/* Xlib through dlopen: freeglut already needs libX11, and this keeps the
 * link line (and the Makefile) free of an x11 dependency of our own. */
typedef int (*XErrorFn)(void *display, void *event);
typedef struct {
    void *(*open_display)(const char *);
    int (*close_display)(void *);
    XErrorFn (*set_error_handler)(XErrorFn); /* NULL: leave Xlib's handler */
    int (*get_error_text)(void *, int, char *, int);
} Xlib;

/* The head of Xlib's XErrorEvent (unchanged since X11R1); only the codes
 * are read. */
typedef struct {
    int type;
    void *display;
    unsigned long resourceid;
    unsigned long serial;
    unsigned char error_code, request_code, minor_code;
} XErrorHead;

static const Xlib *xlib(void)
{
    static Xlib x;
    static bool tried;
    if (!tried) {
        tried = true;
        void *lib = dlopen("libX11.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (!lib) {
            log_debug("glctx", "cannot load libX11.so.6: %s", dlerror());
            return NULL;
        }
        *(void **)&x.open_display = dlsym(lib, "XOpenDisplay");
        *(void **)&x.close_display = dlsym(lib, "XCloseDisplay");
        *(void **)&x.set_error_handler = dlsym(lib, "XSetErrorHandler");
        *(void **)&x.get_error_text = dlsym(lib, "XGetErrorText");
        if (!x.get_error_text) x.set_error_handler = NULL;
        if (!x.open_display || !x.close_display) {
            x.open_display = NULL;
            dlclose(lib);
        }
    }
    return x.open_display ? &x : NULL;
}

/* XOpenDisplay with a few retries: an X server resets when its last client
 * disconnects (Xvfb under xvfb-run does) and drops connections made during
 * the reset, so a connection right after another program's (or our own
 * probe's) last one closed can fail once. */
static void *x_open(const Xlib *x, const char *name)
{
    long wait_ns = 5000000;
    for (int attempt = 0;; attempt++) {
        void *d = x->open_display(name);
        if (d || attempt == 5) return d;
        struct timespec ts = {0, wait_ns};
        nanosleep(&ts, NULL);
        wait_ns *= 2;
    }
}

bool glctx_display_available(void)
{
    const char *name = getenv("DISPLAY");
    if (!name || !*name) return false;
    const Xlib *x = xlib();
    if (!x) return false;
    void *d = x_open(x, name);
    if (!d) return false;
    x->close_display(d);
    return true;
}

/* The first X error while the window and its context are made. Xlib's own
 * handler prints five lines and exits; with this one the failing call
 * returns, and freeglut reports it through glut_error in one line. */
static char g_x_error[160];

static int x_error_record(void *display, void *event)
{
    const XErrorHead *e = event;
    if (!g_x_error[0]) {
        char text[96] = "";
        xlib()->get_error_text(display, e->error_code, text, (int)sizeof text);
        snprintf(g_x_error, sizeof g_x_error, "; X error %s (request %d.%d)", text[0] ? text : "?",
                 e->request_code, e->minor_code);
    }
    return 0;
}

/* freeglut's default error handler prints and exits; keep the exit (its code
 * cannot continue after an error) but say it in the project's voice, in one
 * line. A context freeglut cannot create is the window's "no OpenGL 3.3":
 * say so, and the ways around it (the X server's GLX may be older than the
 * GPU's EGL, as over ssh -X). */
static void glut_error(const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (strncmp(msg, "Unable to create OpenGL", 23) == 0)
        die("glctx", "OpenGL 3.3 or newer is needed, the display offers no 3.3 core context "
            "(freeglut: %s%s); --headless runs without a window, --cpu without a GPU", msg, g_x_error);
    die("glctx", "freeglut: %s%s", msg, g_x_error);
}

static void glut_warning(const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    log_info("glctx", "freeglut: %s", msg);
}

GlCtx *glctx_create_window(int *argc, char **argv, int w, int h, const char *title,
                           char *err, size_t errlen)
{
    if (w <= 0 || h <= 0) {
        snprintf(err, errlen, "glctx: bad window size %dx%d", w, h);
        return NULL;
    }
    if (g_glut_initialised) {
        snprintf(err, errlen, "glctx: a window context already exists");
        return NULL;
    }
    /* Hold a connection of our own while freeglut opens its one, so the
     * server cannot reset between the check and glutInit (which exits the
     * process when it cannot open the display). */
    const char *dname = getenv("DISPLAY");
    const Xlib *x = dname && *dname ? xlib() : NULL;
    void *probe = x ? x_open(x, dname) : NULL;
    if (!probe) {
        const char *d = dname;
        snprintf(err, errlen, "glctx: cannot open X display '%s'%s", d ? d : "",
                 d && *d ? "" : " (DISPLAY is not set; use the headless mode)");
        return NULL;
    }
    GlCtx *gc = calloc(1, sizeof *gc);
    if (!gc) {
        snprintf(err, errlen, "glctx: out of memory");
        x->close_display(probe);
        return NULL;
    }
    gc->kind = CTX_WINDOW;

    int one = 1;
    char name0[] = "smokemorph";
    char *argv0[] = {name0, NULL};
    glutInitErrorFunc(glut_error);
    glutInitWarningFunc(glut_warning);
    glutInit(argc ? argc : &one, argc ? argv : argv0);
    g_glut_initialised = true;
    x->close_display(probe);
    glutInitDisplayMode(GLUT_DOUBLE | GLUT_RGBA);
    glutInitContextVersion(3, 3);
    glutInitContextProfile(GLUT_CORE_PROFILE);
    glutInitContextFlags(GLUT_FORWARD_COMPATIBLE | (debug_requested() ? GLUT_DEBUG : 0));
    glutInitWindowSize(w, h);
    g_x_error[0] = '\0';
    XErrorFn xlib_handler = x->set_error_handler ? x->set_error_handler(x_error_record) : NULL;
    gc->win = glutCreateWindow(title ? title : "smokemorph");
    if (gc->win <= 0) {
        snprintf(err, errlen, "glctx: cannot create a %dx%d window%s", w, h, g_x_error);
        goto undo_handler;
    }
    if (finish_gl_init(err, errlen) != 0) goto undo_win;
    if (x->set_error_handler) x->set_error_handler(xlib_handler);
    if (g_x_error[0]) log_debug("glctx", "while making the window%s", g_x_error);
    return gc;

undo_win:
    glutDestroyWindow(gc->win);
undo_handler:
    if (x->set_error_handler) x->set_error_handler(xlib_handler);
    glutExit();
    g_glut_initialised = false;
    free(gc);
    return NULL;
}

/* ---- common ------------------------------------------------------------- */

void glctx_destroy(GlCtx *ctx)
{
    if (!ctx) return;
    if (ctx->kind == CTX_WINDOW) {
        /* leaving glutMainLoop may already have shut freeglut down, and
         * freeglut exits the process on a call made after that */
        if (glutGet(GLUT_INIT_STATE)) {
            glutDestroyWindow(ctx->win);
            glutExit();
        }
        g_glut_initialised = false;
    } else {
        egl_release(ctx->dpy, ctx->egl);
    }
    free(ctx);
}

const char *glctx_path(const GlCtx *ctx)
{
    if (!ctx) return "none";
    switch (ctx->kind) {
    case CTX_EGL_DEVICE: return "headless EGL device";
    case CTX_EGL_SURFACELESS: return "headless EGL surfaceless (Mesa)";
    case CTX_WINDOW: return "window (freeglut)";
    }
    return "none";
}

int glctx_window_id(const GlCtx *ctx)
{
    return ctx && ctx->kind == CTX_WINDOW ? ctx->win : 0;
}

const char *glctx_renderer(const GlCtx *ctx)
{
    if (!ctx) return "?";
    const char *s = (const char *)glGetString(GL_RENDERER);
    return s ? s : "?";
}

const char *glctx_version(const GlCtx *ctx)
{
    if (!ctx) return "?";
    const char *s = (const char *)glGetString(GL_VERSION);
    return s ? s : "?";
}

int glctx_max_texture_size(const GlCtx *ctx)
{
    if (!ctx) return 0;
    GLint n = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &n);
    return (int)n;
}
