/* make install PREFIX=... DESTDIR=...: the binary, shaders and bundled
 * targets land under DESTDIR/PREFIX, and the installed binary finds them
 * from anywhere (run with another working directory).
 *
 * tools/install-deps.sh, run by sh with PATH set to a directory of fake
 * dpkg-query, id, sudo and apt-get scripts (nothing else), which log their
 * argv: it installs exactly the missing packages, through sudo unless root,
 * and is silent when nothing is missing. Run from the repository root. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static bool exists(const char *dir, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return testlib_exists(p);
}

static char g_tmp[256];

static void test_install(void)
{
    const char *build = testlib_build_dir();
    char cmd[2048], root[512];
    snprintf(cmd, sizeof cmd, "make -s install BUILD=%s PREFIX=/opt/sm DESTDIR=%s >%s/make.log 2>&1",
             build, g_tmp, g_tmp);
    CHECK(testlib_sh(cmd) == 0, "make install failed (see %s/make.log)", g_tmp);
    snprintf(root, sizeof root, "%s/opt/sm", g_tmp);
    CHECK(exists(root, "bin/smokemorph"), "no bin/smokemorph");
    CHECK(exists(root, "bin/smokemorph-farm"), "no bin/smokemorph-farm");
    CHECK(exists(root, "share/smokemorph/shaders/common.glsl"), "no shaders");
    CHECK(exists(root, "share/smokemorph/shaders/jacobi.glsl"), "no jacobi.glsl");
    CHECK(exists(root, "share/smokemorph/targets/blob.png"), "no bundled targets");
    CHECK(exists(root, "share/smokemorph/targets/star.png"), "no star.png");
    CHECK(exists(root, "share/smokemorph/lessons/how-target-driven-smoke-works.json"), "no shipped lesson");
    CHECK(exists(root, "share/man/man1/smokemorph.1"), "no man page");
    CHECK(exists(root, "share/bash-completion/completions/smokemorph"), "no bash completion");
    /* man -l reads the installed page (man-db's man; its formatter's own
     * warnings are test_docs's) */
    snprintf(cmd, sizeof cmd, "MANWIDTH=80 man -l %s/share/man/man1/smokemorph.1 2>/dev/null | "
             "grep -q 'morph one shape of smoke into another'", root);
    CHECK(testlib_sh(cmd) == 0, "man -l does not show the installed page's NAME line");

    /* run from an unrelated directory: the CPU path needs the targets, the GPU path the shaders */
    const char *modes[2] = {"--cpu", "--headless"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && env -u DISPLAY %s/bin/smokemorph %s --grid 32 --steps 2 --every 1 "
                 "--frames out%d -q >run%d.log 2>&1",
                 g_tmp, root, modes[k], k, k);
        int rc = testlib_sh(cmd);
        CHECK(rc == 0, "installed smokemorph %s exited %d (see %s/run%d.log)", modes[k], rc, g_tmp, k);
        char f[64];
        snprintf(f, sizeof f, "out%d/frame_00003.png", k);
        CHECK(exists(g_tmp, f), "installed %s run wrote no frames", modes[k]);
    }
    /* the installed farm runs the installed smokemorph beside it */
    TestlibResult r = {0};
    snprintf(cmd, sizeof cmd,
             "cd %s && PATH=/usr/bin:/bin %s/bin/smokemorph-farm chunks --out o --chunks 2 --dry-run -- "
             "--cpu --grid 16 --steps 8 --every 2",
             g_tmp, root);
    int rc = testlib_run_sh(cmd, NULL, &r);
    char want[600];
    snprintf(want, sizeof want, "# chunk 2: frames 4-5 (steps 4..8): %s/bin/smokemorph --headless", root);
    CHECK(rc == 0 && strstr(r.out, want), "the installed smokemorph-farm: exit %d:\n%s%s", rc, r.out,
          r.err);
    testlib_result_free(&r);
}

/* ------------------------------------------------------ bash completion */

/* What the completion SCRIPT offers for WORDS (NULL-terminated; the last is
 * the word being completed), run by bash in g_tmp/comp: one candidate a
 * line, malloc'd. */
static char *complete_words(const char *script, const char *const *words)
{
    static const char driver[] =
        "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _smokemorph; "
        "[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\\n' \"${COMPREPLY[@]}\"";
    const char *argv[16] = {"bash", "--norc", "--noprofile", "-c", driver, "complete", script};
    int n = 7;
    for (int k = 0; words[k] && n < 15; k++) argv[n++] = words[k];
    argv[n] = NULL;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/comp", g_tmp);
    TestlibRunOpts o = {.cwd = dir};
    TestlibResult r = {0};
    int rc = testlib_run(argv, &o, &r);
    CHECK(rc == 0, "completion of (%s ...) exited %d: %s", words[1], rc, r.err);
    char *out = strdup(r.out);
    testlib_result_free(&r);
    return out;
}

/* exactly the lines of WANT (each "\n"-terminated), in any order */
static bool same_lines(const char *got, const char *want)
{
    int ng = 0, nw = 0;
    for (const char *p = got; *p; p++) ng += *p == '\n';
    for (const char *p = want; *p; p++) nw += *p == '\n';
    if (ng != nw) return false;
    for (const char *w = want; *w;) {
        const char *e = strchr(w, '\n');
        char line[256];
        snprintf(line, sizeof line, "\n%.*s\n", (int)(e - w + 1) - 1, w);
        char padded[4096];
        snprintf(padded, sizeof padded, "\n%s", got);
        if (!strstr(padded, line)) return false;
        w = e + 1;
    }
    return true;
}

/* The completion make install put under share/bash-completion/completions,
 * generated from --help: options complete, a FILE option's argument and an
 * image complete files, a DIR's folders, a list its words. */
static void test_completion(void)
{
    char script[512], cmd[1024];
    snprintf(script, sizeof script, "%s/opt/sm/share/bash-completion/completions/smokemorph", g_tmp);
    CHECK(testlib_exists(script), "no installed completion at %s", script);
    if (!testlib_exists(script)) return;
    snprintf(cmd, sizeof cmd, "mkdir -p %s/comp/shots && cd %s/comp && touch logo.png logo2.png "
             "scene.json 'two words.png'", g_tmp, g_tmp);
    CHECK(testlib_sh(cmd) == 0, "cannot make the completion's folder");
    struct {
        const char *words[5], *want;
    } c[] = {
        {{"smokemorph", "--frame"}, "--frames\n--frame-start\n--frame-range\n"},
        {{"smokemorph", "--exr-v"}, "--exr-velocity\n"},
        {{"smokemorph", "-"}, NULL}, /* every option: checked below */
        {{"smokemorph", "lo"}, "logo.png\nlogo2.png\n"},
        {{"smokemorph", "logo.png", "tw"}, "two words.png\n"},
        {{"smokemorph", "--scene", "s"}, "scene.json\nshots\n"},
        {{"smokemorph", "--frames", "s"}, "shots\n"},
        {{"smokemorph", "--force", "b"}, "balance\n"},
        {{"smokemorph", "--channel", ""}, "r\ng\nb\na\nluma\n"},
        {{"smokemorph", "--grid", ""}, ""},
        {{"smokemorph", "--invert", "l"}, "logo.png\nlogo2.png\n"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        char words[128] = "";
        for (int w = 0; c[k].words[w]; w++)
            snprintf(words + strlen(words), sizeof words - strlen(words), "%s'%s'", w ? " " : "",
                     c[k].words[w]);
        char *got = complete_words(script, c[k].words);
        if (!got) continue;
        if (c[k].want) {
            CHECK(same_lines(got, c[k].want), "completing (%s): got\n%swant\n%s", words, got,
                  c[k].want);
        } else {
            /* "-": each long option of --help, and nothing else */
            const char *argv[] = {testlib_bin(), "--help", NULL};
            TestlibResult r = {0};
            testlib_run(argv, NULL, &r);
            int n = 0, missing = 0;
            for (const char *p = r.out; (p = strstr(p, "\n  ")) != NULL; p++) {
                const char *o = strstr(p, "--");
                if (!o || o > p + 7) continue;
                size_t len = strspn(o + 2, "abcdefghijklmnopqrstuvwxyz0123456789-") + 2;
                char line[80];
                snprintf(line, sizeof line, "\n%.*s\n", (int)len, o);
                char padded[8192];
                snprintf(padded, sizeof padded, "\n%s", got);
                if (!strstr(padded, line)) {
                    missing++;
                    printf("  not completed: %s", line + 1);
                }
                n++;
            }
            int lines = 0;
            for (const char *p = got; *p; p++) lines += *p == '\n';
            CHECK(n >= 60 && missing == 0 && lines == n,
                  "'-' completes %d words; --help has %d options, %d of them missing", lines, n,
                  missing);
            testlib_result_free(&r);
        }
        free(got);
    }
}

/* ------------------------------------------------------ install-deps.sh */

/* The fakes. Each appends "NAME [arg1] [arg2] ..." to $FAKE/log. With PATH
 * holding only their directory they may use shell builtins alone.
 * dpkg-query -W -f=FORMAT PKG prints the status "ii " unless PKG is a line
 * of $FAKE/missing (then, like the real one for an unknown package, an error
 * and exit 1) or of $FAKE/removed (status "rc ": removed, config kept). id -u
 * prints the line in $FAKE/uid. sudo runs its arguments in an environment of
 * PATH and FAKE alone, as Debian's sudo (env_reset) does, with VAR=value
 * arguments set first. apt-get also logs
 * "  DEBIAN_FRONTEND=..." and exits 100 when $FAKE/aptfail exists. */
#define FAKE_LOG "{ printf '%s' \"${0##*/}\"; for a in \"$@\"; do printf ' [%s]' \"$a\"; done; " \
                 "echo; } >>\"$FAKE/log\"\n"
static const char fake_dpkg_query[] =
    "#!/bin/sh\n" FAKE_LOG
    "for a in \"$@\"; do p=$a; done\n"
    "while read -r m; do\n"
    "    if [ \"$m\" = \"$p\" ]; then echo \"dpkg-query: no packages found matching $p\" >&2; exit 1; fi\n"
    "done <\"$FAKE/missing\"\n"
    "while read -r m; do\n"
    "    if [ \"$m\" = \"$p\" ]; then printf 'rc '; exit 0; fi\n"
    "done <\"$FAKE/removed\"\n"
    "printf 'ii '\n";
static const char fake_id[] =
    "#!/bin/sh\n" FAKE_LOG
    "[ \"$*\" = -u ] || { echo \"fake id: only -u\" >&2; exit 2; }\n"
    "read -r u <\"$FAKE/uid\"\n"
    "echo \"$u\"\n";
static const char fake_sudo[] =
    "#!/bin/sh\n" FAKE_LOG
    "exec /usr/bin/env -i PATH=\"$PATH\" FAKE=\"$FAKE\" \"$@\"\n"; /* env_reset; VAR=value args set */
static const char fake_apt_get[] =
    "#!/bin/sh\n" FAKE_LOG
    "echo \"  DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}\" >>\"$FAKE/log\"\n"
    "if [ -e \"$FAKE/aptfail\" ]; then echo 'E: fake failure' >&2; exit 100; fi\n"
    "echo 'fake apt-get output'\n";

static char g_deps[512];

static int write_text(const char *path, const char *text, int mode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok && chmod(path, (mode_t)mode) == 0 ? 0 : -1;
}

/* The whole file, malloc'd ("" when missing). */
static char *read_text(const char *path)
{
    char *s = testlib_read_file(path, NULL);
    if (!s && !(s = calloc(1, 1))) abort();
    return s;
}

#define pathf testlib_fmt

/* Two directories of fakes: with sudo and without. */
static bool deps_setup(void)
{
    snprintf(g_deps, sizeof g_deps, "%s/deps", g_tmp);
    bool ok = mkdir(g_deps, 0755) == 0 && mkdir(pathf("%s/sudo", g_deps), 0755) == 0 &&
              mkdir(pathf("%s/nosudo", g_deps), 0755) == 0;
    static const char *const dirs[2] = {"sudo", "nosudo"};
    for (int d = 0; d < 2 && ok; d++) {
        ok = write_text(pathf("%s/%s/dpkg-query", g_deps, dirs[d]), fake_dpkg_query, 0755) == 0 &&
             write_text(pathf("%s/%s/id", g_deps, dirs[d]), fake_id, 0755) == 0 &&
             write_text(pathf("%s/%s/apt-get", g_deps, dirs[d]), fake_apt_get, 0755) == 0;
        if (ok && d == 0)
            ok = write_text(pathf("%s/sudo/sudo", g_deps), fake_sudo, 0755) == 0;
    }
    return ok;
}

typedef struct {
    int rc;
    char *out, *err, *log;
} DepsRun;

static void deps_free(DepsRun *r)
{
    free(r->out);
    free(r->err);
    free(r->log);
}

/* Run `sh tools/install-deps.sh ARGS` with PATH = the fakes (with or without
 * sudo), the given uid, and MISSING and REMOVED (package names, one a line)
 * reported not installed. */
static DepsRun deps_run(bool with_sudo, int uid, const char *missing, const char *removed,
                        bool apt_fails, const char *args)
{
    DepsRun r = {-1, NULL, NULL, NULL};
    char uidtext[32], cmd[4096], fake[600], path[600];
    snprintf(uidtext, sizeof uidtext, "%d\n", uid);
    bool ok = write_text(pathf("%s/uid", g_deps), uidtext, 0644) == 0 &&
              write_text(pathf("%s/missing", g_deps), missing, 0644) == 0 &&
              write_text(pathf("%s/removed", g_deps), removed, 0644) == 0 &&
              write_text(pathf("%s/log", g_deps), "", 0644) == 0;
    unlink(pathf("%s/aptfail", g_deps));
    if (apt_fails)
        ok = ok && write_text(pathf("%s/aptfail", g_deps), "", 0644) == 0;
    CHECK(ok, "cannot write the fakes' state under %s", g_deps);
    snprintf(cmd, sizeof cmd, "/bin/sh tools/install-deps.sh %s", args);
    snprintf(fake, sizeof fake, "FAKE=%s", g_deps);
    snprintf(path, sizeof path, "PATH=%s/%s", g_deps, with_sudo ? "sudo" : "nosudo");
    const char *const env[] = {fake, path, NULL}, *const unset[] = {"DEBIAN_FRONTEND", NULL};
    TestlibRunOpts o = {0};
    o.env = env;
    o.unset_env = unset;
    TestlibResult res = {0};
    r.rc = testlib_run_sh(cmd, &o, &res);
    r.out = res.out;
    r.err = res.err;
    r.log = read_text(pathf("%s/log", g_deps));
    return r;
}

/* Number of log lines that start with PREFIX. */
static int log_count(const char *log, const char *prefix)
{
    int n = 0;
    size_t lp = strlen(prefix);
    for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        n += !strncmp(l, prefix, lp);
    return n;
}

/* The first log line that starts with PREFIX, without its newline, in a
 * static buffer ("" when none); *pos is its offset in the log (-1 if none). */
static const char *log_line(const char *log, const char *prefix, long *pos)
{
    static char buf[4096];
    size_t lp = strlen(prefix);
    buf[0] = '\0';
    *pos = -1;
    for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        if (!strncmp(l, prefix, lp)) {
            size_t n = strcspn(l, "\n");
            n = n < sizeof buf - 1 ? n : sizeof buf - 1;
            memcpy(buf, l, n);
            buf[n] = '\0';
            *pos = l - log;
            break;
        }
    return buf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The blank-separated words of TEXT (up to its first newline), sorted and
 * joined by single spaces, in OUT. */
static void sorted_words(const char *text, char *out, size_t outlen)
{
    char copy[4096], *names[256], *save = NULL;
    int n = 0;
    snprintf(copy, sizeof copy, "%.*s", (int)strcspn(text, "\n"), text);
    for (char *w = strtok_r(copy, " \t", &save); w && n < 256; w = strtok_r(NULL, " \t", &save))
        names[n++] = w;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), outlen - strlen(out), "%s%s", i ? " " : "", names[i]);
}

/* The bracketed arguments of LINE that do not start with '-', from the
 * FIRST-th on, as sorted_words gives them, in OUT. */
static void operands(const char *line, int first, char *out, size_t outlen)
{
    char words[4096] = "";
    int k = 0;
    for (const char *p = strchr(line, '['); p; p = strchr(p + 1, '[')) {
        const char *e = strchr(p, ']');
        if (!e)
            break;
        if (k++ >= first && p[1] != '-')
            snprintf(words + strlen(words), sizeof words - strlen(words), " %.*s",
                     (int)(e - p - 1), p + 1);
        p = e;
    }
    sorted_words(words, out, outlen);
}

/* The packages the script asks dpkg-query about, in order (filled by
 * test_deps_all_installed). */
static char g_pkgs[64][64];
static int g_npkgs;

/* Missing packages for the later cases: the second and the last are not
 * known to dpkg, the fourth is removed (status "rc"). WANT: all three,
 * sorted as operands() sorts. */
static char g_missing[256], g_removed[128], g_want[256];

static bool deps_pick_missing(void)
{
    if (g_npkgs < 5)
        return false;
    snprintf(g_missing, sizeof g_missing, "%s\n%s\n", g_pkgs[1], g_pkgs[g_npkgs - 1]);
    snprintf(g_removed, sizeof g_removed, "%s\n", g_pkgs[3]);
    char words[256];
    snprintf(words, sizeof words, "%s %s %s", g_pkgs[1], g_pkgs[g_npkgs - 1], g_pkgs[3]);
    sorted_words(words, g_want, sizeof g_want);
    return true;
}

/* (a) everything installed: silent, exit 0, no apt-get, no sudo; also with --check */
static void test_deps_all_installed(void)
{
    DepsRun r = deps_run(true, 1000, "", "", false, "");
    CHECK(r.rc == 0, "all installed: exit %d, want 0 (stderr: %s)", r.rc, r.err);
    CHECK(!*r.out && !*r.err, "all installed: prints nothing, got stdout '%s' stderr '%s'", r.out,
          r.err);
    CHECK(log_count(r.log, "apt-get") == 0 && log_count(r.log, "sudo") == 0,
          "all installed: called apt-get or sudo:\n%s", r.log);
    /* the packages asked about: each dpkg-query call's last argument */
    g_npkgs = 0;
    for (const char *l = r.log; *l && g_npkgs < 64; l = strchr(l, '\n') + 1) {
        if (!strncmp(l, "dpkg-query ", 11)) {
            const char *e = strchr(l, '\n'), *b = e;
            while (b > l && b[-1] != '[')
                b--;
            if (e - b >= 2 && e - b < 64) {
                memcpy(g_pkgs[g_npkgs], b, (size_t)(e - b - 1));
                g_pkgs[g_npkgs++][e - b - 1] = '\0';
            }
        }
        if (!strchr(l, '\n'))
            break;
    }
    CHECK(g_npkgs >= 5, "install-deps asked dpkg-query about %d packages:\n%s", g_npkgs, r.log);
    bool gcc = false, make = false;
    for (int k = 0; k < g_npkgs; k++) {
        gcc |= !strcmp(g_pkgs[k], "gcc");
        make |= !strcmp(g_pkgs[k], "make");
    }
    CHECK(gcc && make, "install-deps does not check gcc and make");
    deps_free(&r);

    r = deps_run(true, 1000, "", "", false, "--check");
    CHECK(r.rc == 0 && !*r.out && !*r.err && log_count(r.log, "apt-get") == 0,
          "--check, all installed: exit %d, stdout '%s', stderr '%s'", r.rc, r.out, r.err);
    deps_free(&r);
}

/* Check that LOG runs `apt-get update` and then `apt-get install` of exactly
 * g_want, each through sudo right before it when SUDO. */
static void check_installs(const char *what, const char *log, bool sudo)
{
    long pu, pi, psu, psi;
    char upd[4096], ins[4096], got[1024];
    snprintf(upd, sizeof upd, "%s", log_line(log, "apt-get [update]", &pu));
    snprintf(ins, sizeof ins, "%s", log_line(log, "apt-get [install]", &pi));
    CHECK(log_count(log, "apt-get [update]") == 1 && log_count(log, "apt-get [install]") == 1 &&
              log_count(log, "apt-get") == 2,
          "%s: want one apt-get update and one apt-get install:\n%s", what, log);
    CHECK(pu >= 0 && pi > pu, "%s: apt-get update does not come before apt-get install:\n%s", what,
          log);
    operands(ins, 1, got, sizeof got);
    CHECK(!strcmp(got, g_want), "%s: apt-get install of '%s', want exactly '%s'", what, got,
          g_want);
    CHECK(strstr(ins, "[-y]") != NULL, "%s: apt-get install without -y: %s", what, ins);
    if (sudo) {
        char want[4200];
        const char *s;
        CHECK(log_count(log, "sudo") == 2, "%s: want two sudo calls:\n%s", what, log);
        s = log_line(log, "sudo [DEBIAN_FRONTEND=noninteractive] [apt-get] [update]", &psu);
        snprintf(want, sizeof want, "sudo [DEBIAN_FRONTEND=noninteractive] [apt-get]%s",
                 upd + strlen("apt-get"));
        CHECK(!strcmp(s, want), "%s: want '%s', got '%s'", what, want, s);
        s = log_line(log, "sudo [DEBIAN_FRONTEND=noninteractive] [apt-get] [install]", &psi);
        snprintf(want, sizeof want, "sudo [DEBIAN_FRONTEND=noninteractive] [apt-get]%s",
                 ins + strlen("apt-get"));
        CHECK(!strcmp(s, want), "%s: want '%s', got '%s'", what, want, s);
        CHECK(psu >= 0 && psu < pu && psi > pu && psi < pi, "%s: sudo calls out of order:\n%s",
              what, log);
    } else {
        CHECK(log_count(log, "sudo") == 0, "%s: sudo called:\n%s", what, log);
    }
}

/* (b) missing packages, not root: sudo apt-get update, sudo apt-get install,
 * non-interactive through sudo's reset environment too, nothing on stdout;
 * (c) as ROOT: apt-get without sudo, non-interactive */
static void deps_missing(bool root)
{
    if (!deps_pick_missing())
        return;
    const char *what = root ? "missing, as root" : "missing, with sudo";
    DepsRun r = deps_run(true, root ? 0 : 1000, g_missing, g_removed, false, "");
    CHECK(r.rc == 0, "%s: exit %d (stderr: %s)", what, r.rc, r.err);
    check_installs(what, r.log, !root);
    CHECK(log_count(r.log, "  DEBIAN_FRONTEND=noninteractive") == 2,
          "%s: apt-get does not run with DEBIAN_FRONTEND=noninteractive:\n%s", what, r.log);
    if (!root)
        CHECK(!*r.out, "%s: apt-get output reaches stdout: '%s'", what, r.out);
    deps_free(&r);
}

static void test_deps_sudo(void) { deps_missing(false); }
static void test_deps_root(void) { deps_missing(true); }

/* (d) --check: lists what is missing, exit 1, installs nothing */
static void test_deps_check(void)
{
    if (!deps_pick_missing())
        return;
    DepsRun r = deps_run(true, 1000, g_missing, g_removed, false, "--check");
    char got[1024] = "";
    CHECK(r.rc == 1, "--check, packages missing: exit %d, want 1", r.rc);
    CHECK(log_count(r.log, "apt-get") == 0 && log_count(r.log, "sudo") == 0,
          "--check installs:\n%s", r.log);
    /* one line naming exactly the missing packages */
    const char *colon = strstr(r.err, "missing packages:");
    if (colon)
        sorted_words(colon + strlen("missing packages:"), got, sizeof got);
    CHECK(!strncmp(r.err, "install-deps: ", 14) && colon && !strcmp(got, g_want),
          "--check: stderr '%s', want the missing packages '%s'", r.err, g_want);
    CHECK(!*r.out, "--check: stdout '%s'", r.out);
    deps_free(&r);
}

/* (e) missing packages, not root, no sudo: one clear line, exit 1 */
static void test_deps_no_sudo(void)
{
    if (!deps_pick_missing())
        return;
    DepsRun r = deps_run(false, 1000, g_missing, g_removed, false, "");
    CHECK(r.rc == 1, "no root, no sudo: exit %d, want 1", r.rc);
    CHECK(log_count(r.log, "apt-get") == 0, "no root, no sudo: apt-get called:\n%s", r.log);
    const char *nl = strchr(r.err, '\n');
    CHECK(!strncmp(r.err, "install-deps: ", 14) && strstr(r.err, "root or sudo") && nl && !nl[1],
          "no root, no sudo: want one line 'install-deps: need root or sudo ...', got '%s'", r.err);
    const int named[3] = {1, 3, g_npkgs - 1};
    for (int k = 0; k < 3; k++)
        CHECK(strstr(r.err, g_pkgs[named[k]]) != NULL,
              "no root, no sudo: the message does not name %s", g_pkgs[named[k]]);
    deps_free(&r);
}

/* --farm: Slurm and munge too (tests/test_slurm.c's cluster), only then;
 * an unknown option is refused with exit 2 */
static void test_deps_farm(void)
{
    DepsRun r = deps_run(true, 1000, "", "", false, "");
    CHECK(!strstr(r.log, "[slurm-wlm]") && !strstr(r.log, "[munge]"),
          "without --farm, install-deps asks about Slurm:\n%s", r.log);
    deps_free(&r);
    r = deps_run(true, 1000, "slurm-wlm\nmunge\n", "", false, "--farm");
    long pos;
    const char *ins = log_line(r.log, "apt-get [install]", &pos);
    CHECK(r.rc == 0 && strstr(ins, "[slurm-wlm]") && strstr(ins, "[munge]"),
          "--farm with Slurm missing: exit %d, installs '%s'", r.rc, ins);
    deps_free(&r);
    r = deps_run(true, 1000, "slurm-wlm\n", "", false, "--check --farm");
    CHECK(r.rc == 1 && strstr(r.err, "slurm-wlm"), "--check --farm: exit %d, '%s'", r.rc, r.err);
    deps_free(&r);
    r = deps_run(true, 1000, "", "", false, "--frobnicate");
    CHECK(r.rc == 2 && strstr(r.err, "--frobnicate") && log_count(r.log, "apt-get") == 0,
          "an unknown option: exit %d, '%s'", r.rc, r.err);
    deps_free(&r);
}

/* apt-get failing: install-deps fails too and does not say done */
static void test_deps_apt_fails(void)
{
    if (!deps_pick_missing())
        return;
    DepsRun r = deps_run(true, 1000, g_missing, g_removed, true, "");
    CHECK(r.rc != 0, "apt-get failed but install-deps exited 0");
    CHECK(!strstr(r.err, "done"), "apt-get failed but install-deps says done: '%s'", r.err);
    deps_free(&r);
}

int main(void)
{
    testlib_tmpdir(g_tmp, sizeof g_tmp, "smokemorph-install");
    RUN(test_install);
    RUN(test_completion);
    if (access("tools/install-deps.sh", R_OK) != 0) {
        CHECK(false, "no tools/install-deps.sh here: run from the repository root");
    } else if (!deps_setup()) {
        CHECK(false, "cannot write the fake commands under %s", g_tmp);
    } else {
        RUN(test_deps_all_installed);
        RUN(test_deps_sudo);
        RUN(test_deps_root);
        RUN(test_deps_check);
        RUN(test_deps_no_sudo);
        RUN(test_deps_apt_fails);
        RUN(test_deps_farm);
    }
    if (check_failed == 0) {
        testlib_rm_rf(g_tmp);
    }
    return check_done();
}
