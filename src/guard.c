/* guard: see guard.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "guard.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GUARD_INPUTS_MAX 2048

typedef struct {
    dev_t dev;
    ino_t ino;
    char *path;
} Input;

static Input inputs[GUARD_INPUTS_MAX];
static int ninputs;

void guard_note_input(const char *path)
{
    struct stat st;
    if (!path || ninputs == GUARD_INPUTS_MAX || stat(path, &st) != 0) return;
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) return;
    char *p = strdup(path);
    if (!p) return;
    inputs[ninputs++] = (Input){st.st_dev, st.st_ino, p};
}

const char *guard_input_of(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) return NULL;
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) return inputs[i].path;
    return NULL;
}

void guard_forget_inputs(void)
{
    for (int i = 0; i < ninputs; i++) free(inputs[i].path);
    ninputs = 0;
}

int guard_resolve(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX], real[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) {
        errno = len ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(buf, path, len + 1);
    /* the deepest existing ancestor: cut at each '/' from the end */
    size_t cut = len;
    for (;;) {
        char keep = buf[cut];
        buf[cut] = '\0';
        const char *head = cut == 0 ? (path[0] == '/' ? "/" : ".") : buf;
        if (realpath(head, real)) {
            buf[cut] = keep;
            break;
        }
        buf[cut] = keep;
        if (errno != ENOENT && errno != ENOTDIR) return -1;
        if (cut == 0) return -1;
        while (cut > 0 && buf[cut - 1] == '/') cut--; /* "a//b" */
        while (cut > 0 && buf[cut - 1] != '/') cut--;
        if (cut > 0) cut--; /* at the '/' */
    }
    /* the rest, component by component */
    size_t used = strlen(real);
    for (const char *p = path + cut; *p;) {
        while (*p == '/') p++;
        size_t cl = strcspn(p, "/");
        if (cl == 0) break;
        if (cl == 2 && p[0] == '.' && p[1] == '.') {
            errno = ENOENT;
            return -1;
        }
        if (!(cl == 1 && p[0] == '.')) {
            bool root = used == 1 && real[0] == '/';
            if (used + !root + cl + 1 > sizeof real) {
                errno = ENAMETOOLONG;
                return -1;
            }
            if (!root) real[used++] = '/';
            memcpy(real + used, p, cl);
            used += cl;
            real[used] = '\0';
        }
        p += cl;
    }
    if (used + 1 > n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(out, real, used + 1);
    return 0;
}

bool guard_inside(const char *path, const char *dir)
{
    char p[PATH_MAX], d[PATH_MAX];
    if (guard_resolve(path, p, sizeof p) < 0 || guard_resolve(dir, d, sizeof d) < 0) return false;
    size_t dl = strlen(d);
    if (dl == 1 && d[0] == '/') return true;
    return strncmp(p, d, dl) == 0 && (p[dl] == '\0' || p[dl] == '/');
}

int guard_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char ch = *p;
        *p = '\0';
        if (mkdir(buf, 0777) < 0 && errno != EEXIST) return -1;
        *p = ch;
        if (!ch) break;
    }
    struct stat st;
    if (stat(path, &st) < 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}
