/* make install PREFIX=... DESTDIR=...: the binary, shaders and bundled
 * targets land under DESTDIR/PREFIX, and the installed binary finds them
 * from anywhere (run with another working directory). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool exists(const char *dir, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

static char g_tmp[256];

static void test_install(void)
{
    const char *build = getenv("SMOKEMORPH_BUILD");
    if (!build) build = "build";
    char cmd[2048], root[512];
    snprintf(cmd, sizeof cmd, "make -s install BUILD=%s PREFIX=/opt/sm DESTDIR=%s >%s/make.log 2>&1",
             build, g_tmp, g_tmp);
    CHECK(sh(cmd) == 0, "make install failed (see %s/make.log)", g_tmp);
    snprintf(root, sizeof root, "%s/opt/sm", g_tmp);
    CHECK(exists(root, "bin/smokemorph"), "no bin/smokemorph");
    CHECK(exists(root, "share/smokemorph/shaders/common.glsl"), "no shaders");
    CHECK(exists(root, "share/smokemorph/shaders/jacobi.glsl"), "no jacobi.glsl");
    CHECK(exists(root, "share/smokemorph/targets/blob.png"), "no bundled targets");
    CHECK(exists(root, "share/smokemorph/targets/star.png"), "no star.png");

    /* run from an unrelated directory: the CPU path needs the targets, the GPU path the shaders */
    const char *modes[2] = {"--cpu", "--headless"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && env -u DISPLAY %s/bin/smokemorph %s --grid 32 --steps 2 --every 1 "
                 "--frames out%d -q >run%d.log 2>&1",
                 g_tmp, root, modes[k], k, k);
        int rc = sh(cmd);
        CHECK(rc == 0, "installed smokemorph %s exited %d (see %s/run%d.log)", modes[k], rc, g_tmp, k);
        char f[64];
        snprintf(f, sizeof f, "out%d/frame_00003.png", k);
        CHECK(exists(g_tmp, f), "installed %s run wrote no frames", modes[k]);
    }
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/smokemorph-install-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_install);
    if (check_failed == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
        if (sh(cmd) != 0) printf("could not remove %s\n", g_tmp);
    }
    return check_done();
}
