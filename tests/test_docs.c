/* The documentation against the program: the manual's option block is
 * --help's, the man page lists exactly --help's options and renders without
 * a warning, every relative link in README.md and docs/ leads to a file, and
 * README stays a front page; the scene fuzzer's dictionary has every scene
 * key of the settings table. Run from the repository root (make test does),
 * with the binary that --help is read from (testlib_bin). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "settings.h"
#include "testlib.h"
#include "viewkind.h"

/* build/smokemorph --help, malloc'd; NULL (with a failed CHECK) when it does
 * not run */
static char *help_text(void)
{
    const char *argv[] = {testlib_bin(), "--help", NULL};
    TestlibResult r = {0};
    int rc = testlib_run(argv, NULL, &r);
    CHECK(rc == 0 && r.out[0], "%s --help exited %d: %s", testlib_bin(), rc, r.err);
    char *out = rc == 0 && r.out[0] ? strdup(r.out) : NULL;
    testlib_result_free(&r);
    return out;
}

/* A file of the source tree, which the tests run in; NULL (with a failed
 * CHECK: the documents are part of the tree) when it is missing. */
static char *tree_file(const char *path)
{
    char *s = testlib_read_file(path, NULL);
    CHECK(s != NULL, "cannot read %s (run from the repository root)", path);
    return s;
}

/* docs/MANUAL.md's "All options" block is the --help text from "Run mode:"
 * up to "Examples:", line for line. */
static void test_manual_options(void)
{
    char *manual = tree_file("docs/MANUAL.md"), *help = help_text();
    if (!manual || !help) goto done;
    char *hs = strstr(help, "Run mode:"), *he = strstr(help, "\nExamples:");
    char *sec = strstr(manual, "\n## All options\n");
    char *rs = sec ? strstr(sec, "```\n") : NULL;
    char *re = rs ? strstr(rs + 4, "\n```") : NULL;
    CHECK(hs && he && rs && re, "cannot find the option blocks");
    if (!(hs && he && rs && re)) goto done;
    rs += 4;
    /* --help has a blank line before "Examples:" */
    size_t hl = (size_t)(he - hs), rl = (size_t)(re - rs);
    while (hl > 0 && hs[hl - 1] == '\n') hl--;
    CHECK(hl == rl && strncmp(hs, rs, hl) == 0,
          "docs/MANUAL.md's option block differs from --help; paste --help's 'Run mode:' .. "
          "'Messages:' sections into it");
done:
    free(manual);
    free(help);
}

/* Every markdown link [text](target) of FILE whose target is a relative
 * path (not http:, not #anchor) names a file that exists, relative to
 * FILE's folder. Returns how many links it checked. */
static int check_links(const char *file)
{
    char *s = tree_file(file);
    if (!s) return 0;
    char dir[256];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else dir[0] = '\0';
    int n = 0;
    bool fence = false;
    for (char *line = s; line && *line;) {
        char *eol = strchr(line, '\n');
        if (eol) *eol = '\0';
        if (!strncmp(line, "```", 3)) fence = !fence;
        for (char *p = line; !fence && (p = strstr(p, "](")) != NULL; p += 2) {
            char *q = strchr(p + 2, ')');
            if (!q) break;
            char target[512];
            snprintf(target, sizeof target, "%.*s", (int)(q - p - 2), p + 2);
            char *hash = strchr(target, '#');
            if (hash) *hash = '\0';
            if (!target[0] || strstr(target, "://") || !strncmp(target, "mailto:", 7)) continue;
            char path[800];
            snprintf(path, sizeof path, "%s%s", dir, target);
            CHECK(testlib_exists(path), "%s: the link (%s) leads to no file", file, target);
            n++;
        }
        line = eol ? eol + 1 : NULL;
    }
    free(s);
    return n;
}

static void test_links(void)
{
    static const char *const docs[] = {"README.md",           "docs/MANUAL.md",
                                       "docs/SCENES.md",      "docs/METHOD.md",
                                       "docs/CLASSROOM.md",
                                       "docs/FIDELITY.md",    "docs/PERFORMANCE.md",
                                       "docs/ROBUSTNESS.md",  "docs/FARM.md",
                                       "docs/ARCHITECTURE.md"};
    size_t nd = sizeof docs / sizeof docs[0];
    /* each document once, and every .md of docs/ among them */
    for (size_t k = 0; k < nd; k++)
        for (size_t j = 0; j < k; j++) CHECK(strcmp(docs[j], docs[k]) != 0, "%s is listed twice", docs[k]);
    DIR *d = opendir("docs");
    CHECK(d != NULL, "the docs folder");
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        bool listed = false;
        for (size_t k = 0; k < nd; k++) listed = listed || !strcmp(docs[k] + (strncmp(docs[k], "docs/", 5) ? 0 : 5), e->d_name);
        CHECK(listed, "docs/%s: its links are not checked (add it to test_links)", e->d_name);
    }
    if (d) closedir(d);
    int n = 0;
    for (size_t k = 0; k < nd; k++) n += check_links(docs[k]);
    /* README alone links every document of docs/ and two pictures */
    CHECK(n >= 20, "only %d relative links found: is the link syntax still [text](path)?", n);
}

/* README.md is a front page: at most 250 lines, and it names the two
 * commands of a fresh Debian 12 machine and the manual. */
static void test_readme_front_page(void)
{
    char *s = tree_file("README.md");
    if (!s) return;
    int lines = 0;
    for (const char *p = s; *p; p++) lines += *p == '\n';
    CHECK(lines <= 250, "README.md has %d lines; the manual (docs/MANUAL.md) is for the rest",
          lines);
    CHECK(strstr(s, "sh tools/install-deps.sh && make") && strstr(s, "make test"),
          "README.md: the set-up and test commands");
    CHECK(strstr(s, "(docs/MANUAL.md)") && strstr(s, "(docs/SCENES.md)") &&
              strstr(s, "(docs/METHOD.md)"),
          "README.md links the manual, the scene reference and the method");
    CHECK(strstr(s, "(docs/CLASSROOM.md)") != NULL, "README.md links the classroom guide");
    free(s);
}

/* The long options of --help's option lines ("  -q, --quiet", "  --grid
 * N|WxH ..."), each as " name " in SET (so that strstr finds whole names). */
static void help_options(const char *help, char *set, size_t n)
{
    size_t len = 0;
    set[0] = '\0';
    for (const char *line = help; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *p = line;
        if (strncmp(p, "  -", 3) != 0) continue;
        p += 2;
        if (p[1] != '-') p += 4; /* "-q, " */
        if (strncmp(p, "--", 2) != 0) continue;
        p += 2;
        size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-");
        len += (size_t)snprintf(set + len, n - len, " %.*s ", (int)k, p);
        if (len >= n) break;
    }
}

/* smokemorph.1 has one ".It Fl -NAME" for each option of --help, and none
 * that --help lacks. */
static void test_man_options(void)
{
    char *man = tree_file("smokemorph.1"), *help = help_text();
    if (!man || !help) goto done;
    static char hset[8192], mset[8192];
    help_options(help, hset, sizeof hset);
    size_t len = 0;
    mset[0] = '\0';
    int nh = 0, nm = 0;
    for (const char *p = man; (p = strstr(p, "\n.It Fl ")) != NULL; p += 8) {
        const char *q = strstr(p + 1, "Fl -");
        const char *eol = strchr(p + 1, '\n');
        if (!q || (eol && q > eol)) continue; /* a short option alone */
        q += 4;
        size_t k = strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789-");
        char name[64];
        snprintf(name, sizeof name, " %.*s ", (int)k, q);
        CHECK(strstr(hset, name) != NULL, "smokemorph.1 has --%.*s, which --help does not list",
              (int)k, q);
        CHECK(strstr(mset, name) == NULL, "smokemorph.1 lists --%.*s twice", (int)k, q);
        len += (size_t)snprintf(mset + len, sizeof mset - len, "%s", name);
        nm++;
    }
    for (const char *p = hset; (p = strchr(p, ' ')) != NULL && p[1];) {
        const char *e = strchr(p + 1, ' ');
        if (!e) break;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(e - p + 1), p);
        CHECK(strstr(mset, name) != NULL, "--help's option --%.*s is missing from smokemorph.1 "
              "(add an .It Fl line under OPTIONS)", (int)(e - p - 1), p + 1);
        nh++;
        p = e + 1;
    }
    /* the count guards the parsers themselves: --help has some 70 options */
    CHECK(nh >= 60 && nm == nh, "%d options in --help, %d in smokemorph.1", nh, nm);
done:
    free(man);
    free(help);
}

/* smokemorph.1 renders without a warning: mandoc -T lint -W warning when
 * mandoc is here (tools/install-deps.sh installs it), else groff -ww. */
static void test_man_lint(void)
{
    TestlibResult r = {0};
    int rc;
    if (testlib_sh("command -v mandoc >/dev/null 2>&1") == 0) {
        rc = testlib_run_sh("mandoc -T lint -W warning smokemorph.1", NULL, &r);
        printf("  mandoc -T lint -W warning smokemorph.1\n");
    } else {
        rc = testlib_run_sh("groff -ww -mandoc -z smokemorph.1", NULL, &r);
        printf("  groff -ww -mandoc -z smokemorph.1 (no mandoc here)\n");
    }
    CHECK(rc == 0 && !r.out[0] && !r.err[0], "smokemorph.1 does not render cleanly (exit %d):\n%s%s",
          rc, r.out, r.err);
    /* and the checker itself: a page with an unknown macro is refused */
    char dir[512], bad[600];
    testlib_tmpdir(dir, sizeof dir, "test_docs"); /* not build/: test-asan builds elsewhere */
    snprintf(bad, sizeof bad, "%s/docs-bad.1", dir);
    static const char text[] = ".Dd November 26, 2026\n.Dt BAD 1\n.Os\n.Sh NAME\n.Nm bad\n"
                               ".Nd bad\n.Sh DESCRIPTION\n.mp4 is not a macro\n";
    CHECK(testlib_write_file(bad, text, sizeof text - 1) == 0, "cannot write %s", bad);
    char cmd[700];
    if (testlib_sh("command -v mandoc >/dev/null 2>&1") == 0)
        snprintf(cmd, sizeof cmd, "mandoc -T lint -W warning %s", bad);
    else
        snprintf(cmd, sizeof cmd, "groff -ww -mandoc -z %s", bad);
    rc = testlib_run_sh(cmd, NULL, &r);
    CHECK(rc != 0 || r.err[0] || r.out[0], "the lint found nothing wrong in a page with an unknown macro");
    remove(bad);
    rmdir(dir);
    testlib_result_free(&r);
}

/* The settings table's scene rows: their keys and choices ("a|b", "x=a"). */
typedef struct {
    const char *key, *choices;
    char skind;
} DictRow;
#define SETTING_GROUP(ID, TITLE)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    {KEY, CHOICES, SKIND},
static const DictRow dict_rows[] = {
#include "settings.def"
};
#undef SETTING
#undef SETTING_GROUP
#define NDICT_ROWS ((int)(sizeof dict_rows / sizeof dict_rows[0]))

/* Whether text has line as one of its lines. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return true;
    return false;
}

/* The dictionary's tokens of the table, one at a time: token k (the scene
 * keys as "\"KEY\":", then each choice as "\"CHOICE\""; repeats allowed)
 * into buf; false past the last. */
static bool table_token(int k, char *buf, size_t n)
{
    for (int r = 0; r < NDICT_ROWS; r++)
        if (dict_rows[r].skind && k-- == 0) return snprintf(buf, n, "\"\\\"%s\\\":\"", dict_rows[r].key), true;
    for (int r = 0; r < NDICT_ROWS; r++) {
        if (!dict_rows[r].skind || !dict_rows[r].choices) continue;
        for (const char *s = dict_rows[r].choices; *s;) {
            size_t len = strcspn(s, "|=");
            if (len > 0 && k-- == 0) return snprintf(buf, n, "\"\\\"%.*s\\\"\"", (int)len, s), true;
            s += len + (s[len] != '\0');
        }
    }
    return false;
}

/* fuzz/scene.dict (fuzz_scene's libFuzzer dictionary) has a token for every
 * scene key of src/settings.def and each of their choices, and its part
 * below the "generated" line holds nothing else (a renamed key): `make
 * options-doc` writes that part from the table (tools/scene_dict). */
static void test_fuzz_dict(void)
{
    char *dict = tree_file("fuzz/scene.dict");
    if (!dict) return;
    char tok[256];
    int nkeys = 0, ntok = 0;
    for (; table_token(ntok, tok, sizeof tok); ntok++) {
        nkeys += tok[strlen(tok) - 2] == ':'; /* "\"KEY\":" */
        CHECK(has_line(dict, tok), "fuzz/scene.dict lacks %s of src/settings.def: run make options-doc", tok);
    }
    /* the count guards table_token: settings.def has some 40 scene keys */
    CHECK(nkeys >= 30 && ntok > nkeys, "%d scene keys and %d tokens in the table", nkeys, ntok);
    const char *mark = "# generated from src/settings.def";
    char *gen = strstr(dict, mark);
    CHECK(gen && (gen == dict || gen[-1] == '\n'), "fuzz/scene.dict has no line '%s ...'", mark);
    int ngen = 0;
    for (char *line = gen ? strchr(gen, '\n') : NULL; line && line[1]; line = strchr(line + 1, '\n')) {
        size_t len = strcspn(line + 1, "\n");
        snprintf(tok, sizeof tok, "%.*s", (int)len, line + 1);
        if (!tok[0] || tok[0] == '#') continue;
        bool known = false;
        char t[256];
        for (int k = 0; !known && table_token(k, t, sizeof t); k++) known = strcmp(t, tok) == 0;
        CHECK(known, "fuzz/scene.dict's generated part has %s, which no scene row of src/settings.def gives",
              tok);
        ngen++;
    }
    CHECK(ngen >= nkeys, "fuzz/scene.dict's generated part has %d tokens, the table %d keys", ngen, nkeys);
    free(dict);
}

int main(void)
{
    RUN(test_manual_options);
    RUN(test_man_options);
    RUN(test_man_lint);
    RUN(test_links);
    RUN(test_readme_front_page);
    RUN(test_fuzz_dict);
    return check_done();
}
