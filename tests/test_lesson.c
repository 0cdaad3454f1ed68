/* test_lesson: lesson files (issue 24, --lesson; tier 1, no GL): the shipped
 * lesson reads and walks through the method's parts; every member of a
 * step; and each bad file is refused with one line naming the file, the
 * place (LINE:COLUMN) and the problem. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lesson.h"
#include "testlib.h"
#include "viewfield.h"

#define SHIPPED "lessons/how-target-driven-smoke-works.json"

static SolverParams g_p;

static Lesson *parse(const char *text, char *err, size_t n)
{
    err[0] = '\0';
    return lesson_parse(text, strlen(text), "l.json", &g_p, err, n);
}

static void test_shipped(void)
{
    char err[1024];
    Lesson *l = lesson_load(SHIPPED, &g_p, err, sizeof err);
    CHECK(l != NULL, "the shipped lesson: %s", err);
    if (!l) return;
    printf("  %s: '%s', %d steps\n", SHIPPED, l->title, l->n);
    bool seen[VIEW_COUNT] = {false}, fattal = false, pressure = false, gather = false, force = false;
    for (int k = 0; k < l->n; k++) {
        const LessonStep *s = &l->step[k];
        CHECK(s->caption[0] != '\0', "step %d has a caption", k + 1);
        if (s->view >= 0) seen[s->view] = true;
        CompareSpec cs;
        if (s->compare[0] && lesson_compare_spec(s->compare, &g_p, &cs, err, sizeof err) == 0)
            fattal = fattal || cs.p[1].force == SOLVER_FORCE_FATTAL;
        pressure = pressure || (s->pass_by_pass == 1 && s->to_pass == METHOD_PASS_PRESSURE_JACOBI);
        gather = gather || (s->pass_by_pass == 1 && s->to_pass == METHOD_PASS_GATHER_JACOBI);
        force = force || (s->pass_by_pass == 1 && s->to_pass == METHOD_PASS_FORCE);
    }
    /* the walk: the blurred target, the force, the divergence before
     * and after the projection, the pressure solve converging, the
     * gathering, Fattal's method beside it */
    CHECK(seen[VIEW_BLURRED] && seen[VIEW_FORCE] && seen[VIEW_DIVERGENCE] && seen[VIEW_GATHERING] &&
              seen[VIEW_FIG2] && seen[VIEW_VORTICITY],
          "the lesson shows the blurred target, the force, the divergence, the gathering, Fig. 2, vorticity");
    CHECK(pressure && gather && force, "pass by pass to the force, the pressure's and the gathering's Jacobi");
    CHECK(fattal, "a step compares with Fattal's force");
    CHECK(l->step[0].restart, "the lesson starts from the start");
    lesson_free(l);
}

static void test_members(void)
{
    char err[1024];
    Lesson *l = parse("{\"title\": \"t\", \"steps\": [{\"caption\": \"c\", \"view\": \"pressure\", \"set\": "
                      "{\"vf\": 2, \"gather\": false, \"force\": \"fattal\", \"jacobi\": 20}, \"run\": 7, "
                      "\"pass_by_pass\": true, \"passes\": 3, \"to_pass\": \"pressure Jacobi\", \"restart\": true, "
                      "\"hud\": false}, {\"until\": 40, \"compare\": \"gather=0\"}, {\"compare\": \"force\"}]}",
                      err, sizeof err);
    CHECK(l != NULL, "a lesson of every member: %s", err);
    if (!l) return;
    const LessonStep *s = &l->step[0];
    CHECK(l->n == 3 && !strcmp(l->title, "t") && !strcmp(s->caption, "c") && s->view == VIEW_PRESSURE &&
              s->run == 7 && s->pass_by_pass == 1 && s->passes == 3 && s->to_pass == METHOD_PASS_PRESSURE_JACOBI &&
              s->restart && s->hud == 0,
          "the first step's members");
    SolverParams p = g_p;
    lesson_params(s, &p);
    CHECK(p.vf == 2.0f && !p.gather && p.force == SOLVER_FORCE_FATTAL && p.jacobi == 20 && p.vd == g_p.vd,
          "its parameters over the run's (vf %g, gather %d, force %d, jacobi %d)", p.vf, p.gather, p.force, p.jacobi);
    CHECK(l->step[1].until == 40 && l->step[1].view == -1 && l->step[1].pass_by_pass == -1 && l->step[1].hud == -1 &&
              !strcmp(l->step[1].compare, "gather=0"),
          "the second: until, a comparison, the rest unchanged");
    CompareSpec cs;
    CHECK(lesson_compare_spec(l->step[2].compare, &g_p, &cs, err, sizeof err) == 0 &&
              strstr(cs.label[1], "Fattal") != NULL,
          "'force' is the preset: '%s'", cs.label[1]);
    lesson_free(l);
}

static void test_errors(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"steps\": [{\"view\": \"nope\"}]}", "l.json:1:21: steps[0].view: unknown view 'nope'"},
        {"{\"steps\": [\n  {\"caption\": \"a\"},\n  {\"runn\": 3}\n]}", "l.json:3:4: steps[1].runn: unknown member"},
        {"{\"steps\": [{\"set\": {\"vf\": -1}}]}", "l.json:1:27: steps[0].set.vf: --vf must be in"},
        {"{\"steps\": [{\"set\": {\"warp\": 1}}]}", "steps[0].set.warp: unknown parameter"},
        {"{\"steps\": [{\"set\": {\"arrive\": -1}}]}", "steps[0].set.arrive: --arrive must be auto or in"},
        {"{\"steps\": [{\"set\": {\"arrive\": \"soon\"}}]}", "steps[0].set.arrive: expected a number or \"auto\""},
        {"{\"steps\": [{\"run\": -2}]}", "steps[0].run: expected a whole number"},
        {"{\"steps\": [{\"run\": 2, \"until\": 5}]}", "steps[0]: give run or until, not both"},
        {"{\"steps\": [{\"to_pass\": \"warp\"}]}", "steps[0].to_pass: unknown pass 'warp'"},
        {"{\"steps\": [{\"compare\": \"warp=1\"}]}", "steps[0].compare:"},
        {"{\"steps\": []}", "l.json:1:11: steps: expected a list of 1..64 steps"},
        {"{\"title\": \"x\"}", "l.json: no \"steps\""},
        {"{\"steps\": [{\"caption\": 3}]}", "steps[0].caption: expected a string"},
        {"{\"steps\": [{}], \"extra\": 1}", "l.json:1:17: extra: unknown member"},
        {"{\"steps\": [{}] ", "l.json:1:"},
        {"[1]", "(top): expected an object"},
        /* each step's parameters with the sets of the steps before it */
        {"{\"steps\": [{\"set\": {\"jacobi\": 0}},\n {\"set\": {\"vcycles\": 0}}]}",
         "l.json:2:22: steps[1].set.vcycles: --jacobi and --vcycles cannot both be 0"},
        {"{\"steps\": [{\"set\": {\"vcycles\": 0, \"jacobi\": 0}}]}",
         "l.json:1:20: steps[0].set: --jacobi and --vcycles cannot both be 0 (no projection) (the step's parameters"},
        {"{\"steps\": [{\"set\": {\"vcycles\": 0}}, {\"caption\": \"c\"}, {\"set\": {\"vf\": 1, \"jacobi\": 0}}]}",
         "steps[2].set.jacobi: --jacobi and --vcycles cannot both be 0"},
        {"{\"steps\": [{\"set\": {\"vcycles\": 0}}, {\"compare\": \"jacobi=0\"}]}", "steps[1].compare:"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char err[1024];
        Lesson *l = parse(bad[k].text, err, sizeof err);
        CHECK(l == NULL && strncmp(err, "lesson: ", 8) == 0 && strstr(err, bad[k].want) && !strchr(err, '\n'),
              "bad lesson %zu: '%s' (want '%s')", k, err, bad[k].want);
        lesson_free(l);
    }
    char err[1024];
    CHECK(lesson_load("/nonexistent/l.json", &g_p, err, sizeof err) == NULL &&
              strstr(err, "lesson: /nonexistent/l.json: cannot open"),
          "a missing file: '%s'", err);
}

/* A step's parameters: the run's, then every step's set up to it, in order
 * (order within a set does not matter: only the result is checked). */
static void test_params_at(void)
{
    char err[1024];
    Lesson *l = parse("{\"steps\": [{\"set\": {\"vf\": 2, \"vcycles\": 0}}, {\"set\": {\"vd\": 0.5}}, "
                      "{\"set\": {\"vcycles\": 3, \"jacobi\": 0}}, {\"set\": {\"vf\": 4}}]}",
                      err, sizeof err);
    CHECK(l != NULL, "sets that are fine together: %s", err);
    if (!l) return;
    SolverParams p = g_p;
    lesson_params_at(l, 0, &p);
    CHECK(p.vf == 2.0f && p.vcycles == 0 && p.vd == g_p.vd && p.jacobi == g_p.jacobi, "step 1: vf %g vd %g", p.vf, p.vd);
    p = g_p;
    lesson_params_at(l, 1, &p);
    CHECK(p.vf == 2.0f && p.vd == 0.5f, "step 2: step 1's and its own: vf %g vd %g", p.vf, p.vd);
    p = g_p;
    lesson_params_at(l, 3, &p);
    CHECK(p.vf == 4.0f && p.vd == 0.5f && p.vcycles == 3 && p.jacobi == 0, "step 4: vf %g vd %g vcycles %d jacobi %d",
          p.vf, p.vd, p.vcycles, p.jacobi);
    lesson_free(l);
    /* "arrive": "auto", as --arrive auto */
    l = parse("{\"steps\": [{\"set\": {\"arrive\": 2}}, {\"set\": {\"arrive\": \"auto\"}}]}", err, sizeof err);
    CHECK(l != NULL, "arrive auto: %s", err);
    if (!l) return;
    p = g_p;
    lesson_params_at(l, 0, &p);
    float a0 = p.arrive;
    lesson_params_at(l, 1, &p);
    CHECK(a0 == 2.0f && p.arrive == SETTING_AUTO, "arrive 2 then auto: %g, %g", (double)a0, (double)p.arrive);
    lesson_free(l);
}

int main(void)
{
    method_params_default(&g_p);
    RUN(test_shipped);
    RUN(test_members);
    RUN(test_errors);
    RUN(test_params_at);
    return check_done();
}
