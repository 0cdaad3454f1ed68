/* test_window_cli: the binary ($SMOKEMORPH_BIN, default build/smokemorph)
 * under a display; run under xvfb-run (tests/run.sh does). --gl-info must
 * report the path a run with the same options takes: the window when there
 * is a display, headless with --headless, --cpu or a display that cannot be
 * opened. Children run with cwd in a mkdtemp directory, stdout and stderr
 * captured to files; test_cli covers the same without a display. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define MAXARGS 32

static char bin[PATH_MAX];
static char tmp[256];  /* stdout.txt, stderr.txt */
static char work[512]; /* cwd of every child */

typedef struct {
    int code, signal;
    char out[8192], err[8192];
} Result;

static Result R;

static void read_file(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    return n + (s[0] && s[strlen(s) - 1] != '\n');
}

/* Run the binary with the NULL-terminated arguments; `display` replaces
 * $DISPLAY for the child (NULL: keep xvfb-run's), `env` is one extra
 * NAME=VALUE or NULL. Fills R. */
static void run(const char *display, const char *env, ...)
{
    char outp[300], errp[300];
    snprintf(outp, sizeof outp, "%s/stdout.txt", tmp);
    snprintf(errp, sizeof errp, "%s/stderr.txt", tmp);
    char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = bin;
    va_list ap;
    va_start(ap, env);
    for (const char *a = va_arg(ap, const char *); a && argc < MAXARGS; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || chdir(work) < 0) _exit(127);
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        close(fo);
        close(fe);
        if (display) setenv("DISPLAY", display, 1);
        if (env) putenv((char *)env);
        execv(bin, argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    R.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    R.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    read_file(outp, R.out, sizeof R.out);
    read_file(errp, R.err, sizeof R.err);
}

/* --gl-info succeeded, its first line is "path:" and a path starting with
 * `path`, and it wrote no file. */
static void expect_gl_info(int line, const char *what, const char *path)
{
    CHECK(R.signal == 0 && R.code == 0, "line %d (%s): exit %d signal %d; stderr:\n%s", line,
          what, R.code, R.signal, R.err);
    char want[128];
    snprintf(want, sizeof want, "path:     %s", path);
    CHECK(strncmp(R.out, want, strlen(want)) == 0, "line %d (%s): expected '%s...', got:\n%s",
          line, what, want, R.out);
    CHECK(strstr(R.out, "renderer: ") && strstr(R.out, "version:  "),
          "line %d (%s): no renderer or version:\n%s", line, what, R.out);
    CHECK(count_entries(work) == 0, "line %d (%s): --gl-info wrote files", line, what);
}

static void test_gl_info_path(void)
{
    /* a plain run here opens the window, so --gl-info reports the window */
    run(NULL, NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info with a display", "window (freeglut)");
    CHECK(R.err[0] == '\0', "--gl-info with a display wrote to stderr:\n%s", R.err);

    /* the options that make a run headless make --gl-info headless */
    run(NULL, NULL, "--gl-info", "--headless", NULL);
    expect_gl_info(__LINE__, "--gl-info --headless", "headless EGL");
    run(NULL, NULL, "--headless", "--gl-info", NULL);
    expect_gl_info(__LINE__, "--headless --gl-info", "headless EGL");
    run(NULL, NULL, "--gl-info", "--cpu", NULL);
    expect_gl_info(__LINE__, "--gl-info --cpu", "headless EGL");

    /* a display that cannot be opened: a run goes headless, so does --gl-info */
    run(":4093", NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info, DISPLAY naming no server", "headless EGL");
    run("", NULL, "--gl-info", NULL);
    expect_gl_info(__LINE__, "--gl-info, DISPLAY empty", "headless EGL");
}

/* A window on a driver older than 3.3 (Mesa capped at 3.0): one line in
 * the project's voice (not Xlib's five-line GLXBadFBConfig report), saying
 * 3.3 is needed and the ways around it, exit 1, nothing written. */
static void test_old_gl_window(void)
{
    static const char *const gl_info[9] = {"--gl-info", NULL};
    static const char *const morph[9] = {"--grid", "32", "--steps", "4", "--frames", "F",
                                        "--metrics", "m.csv", NULL};
    const char *const *cases[] = {gl_info, morph};
    for (int k = 0; k < 2; k++) {
        const char *const *a = cases[k];
        run(NULL, "MESA_GL_VERSION_OVERRIDE=3.0", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
            NULL);
        CHECK(R.signal == 0 && R.code == 1, "GL 3.0 window %s: exit %d signal %d", a[0], R.code,
              R.signal);
        CHECK(count_lines(R.err) == 1, "GL 3.0 window %s: %d lines on stderr, expected one:\n%s",
              a[0], count_lines(R.err), R.err);
        CHECK(strncmp(R.err, "glctx: OpenGL 3.3 or newer is needed", 36) == 0 &&
                  strstr(R.err, "--headless") && strstr(R.err, "--cpu"),
              "GL 3.0 window %s: not the 3.3 message with --headless and --cpu:\n%s", a[0], R.err);
        CHECK(R.out[0] == '\0', "GL 3.0 window %s: printed on stdout: %s", a[0], R.out);
        CHECK(count_entries(work) == 0, "GL 3.0 window %s: %d files written", a[0],
              count_entries(work));
    }
}

int main(void)
{
    const char *d = getenv("DISPLAY");
    if (!d || !*d) {
        printf("FAIL DISPLAY is not set: run under xvfb-run (tests/run.sh does)\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    const char *b = getenv("SMOKEMORPH_BIN");
    if (!b || !*b) b = "build/smokemorph";
    if (!realpath(b, bin)) {
        printf("FAIL cannot find the binary %s: %s\n", b, strerror(errno));
        printf("0 passed, 1 failed\n");
        return 1;
    }
    snprintf(tmp, sizeof tmp, "/tmp/test_window_cli.XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(work, sizeof work, "%s/work", tmp);
    if (mkdir(work, 0777) < 0) {
        perror(work);
        return 2;
    }
    RUN(test_gl_info_path);
    RUN(test_old_gl_window);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmp);
    return check_done();
}
