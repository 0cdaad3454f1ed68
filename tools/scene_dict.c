/* scene_dict: the generated part of fuzz/scene.dict, the scene fuzzer's
 * libFuzzer dictionary: a "KEY": token for every row of src/settings.def
 * with a scene kind, in the table's order, then a "CHOICE" token for each
 * choice (and alias) of those rows, each once. The tokens before the line
 * SCENE_DICT_MARK are hand-written (JSON, values, the keys of fields, keys
 * and sources); `make options-doc` keeps them and rewrites the rest:
 *
 *   build/tools/scene_dict            the generated lines, to stdout
 *
 * test_docs (test_fuzz_dict) checks that the dictionary has every scene key
 * of the table.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "settings.h"
#include "viewkind.h"

typedef struct {
    const char *key, *choices;
    char skind;
} Row;

#define SETTING_GROUP(ID, TITLE)
#define SETTING(ID, WHERE, SLOT, OPT, SH, ARG, KIND, MEMBER, DEF, LO, HI, RANGE, CHOICES, KEY, SKIND,  \
                FLAGS, ...)                                                                      \
    {KEY, CHOICES, SKIND},
static const Row rows[] = {
#include "settings.def"
};
#undef SETTING
#undef SETTING_GROUP
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

int main(void)
{
    for (int k = 0; k < NROWS; k++)
        if (rows[k].skind) printf("\"\\\"%s\\\":\"\n", rows[k].key);
    /* the choices: "a|b|c", "x=a" the alias x of a; each printed once */
    const char *done[256];
    size_t done_n[256];
    int nd = 0;
    for (int k = 0; k < NROWS; k++) {
        if (!rows[k].skind || !rows[k].choices) continue;
        const char *s = rows[k].choices;
        while (*s) {
            size_t n = strcspn(s, "|=");
            bool seen = n == 0;
            for (int d = 0; d < nd && !seen; d++) seen = done_n[d] == n && strncmp(done[d], s, n) == 0;
            if (!seen && nd < 256) {
                done[nd] = s, done_n[nd++] = n;
                printf("\"\\\"%.*s\\\"\"\n", (int)n, s);
            }
            s += n + (s[n] != '\0');
        }
    }
    return 0;
}
