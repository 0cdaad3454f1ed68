/* settings: the vocabulary of the settings table, settings.def. GL-free,
 * libc-free; included by method.h (which generates SolverParams and
 * SolverOptions from the table) and by every consumer of the table.
 *
 * The table is an X-macro: each row is one SETTING(...) and each consumer
 * defines SETTING (and SETTING_GROUP) to take the columns it needs, then
 * includes settings.def. See settings.def's head for the columns.
 */
#ifndef SMOKEMORPH_SETTINGS_H
#define SMOKEMORPH_SETTINGS_H

/* KIND: what the value is and how the generic parser reads it. */
typedef enum {
    SK_FLOAT,   /* a number into a float (ranges: LO, HI, F_LO_OPEN, F_HI_OPEN) */
    SK_INT,     /* an integer into an int, LO..HI (solver parameters: checked by
                   method_params_check instead) */
    SK_LONG,    /* an integer into a long, LO..HI */
    SK_BOOL,    /* a flag: sets the member true */
    SK_NOT,     /* a flag: sets the member false (--no-gather) */
    SK_ENUM,    /* one of CHOICES ("a|b|c", "x=a" an alias of a): its index into an int */
    SK_PATH,    /* a non-empty path, kept as given */
    SK_STR,     /* a string, kept as given */
    SK_COLOR,   /* RRGGBB or #RRGGBB into float[3] */
    SK_SPECIAL, /* read by the option's own function in config.c (config_special) */
    SK_ACTION   /* handled by the parser itself (--help, --version, -q, -v, --no-progress) */
} SettingKind;

/* FLAGS */
enum {
    SF_HIDDEN = 1,   /* no line in --help (still parsed) */
    SF_WINDOW = 2,   /* a window-only option: an error in a headless run */
    SF_EXTRA = 4,    /* an addition to the paper's method: --force fattal keeps it
                        only when given (config, tools/fidelity --param) */
    SF_FIELD = 8,    /* in a scene, a field's setting (else the scene's top level) */
    SF_LO_OPEN = 16, /* the range excludes LO */
    SF_HI_OPEN = 32, /* the range excludes HI */
    SF_AUTO = 64     /* SK_FLOAT: also the word "auto", kept as SETTING_AUTO until
                        its user sets it (--arrive: morph.c, from the trip) */
};

/* An SF_AUTO setting's "auto" (a negative number typed is out of range). */
#define SETTING_AUTO (-1.0f)

/* The C type of a generated struct member of each kind. */
#define SETTING_TYPE_SK_FLOAT float
#define SETTING_TYPE_SK_INT int
#define SETTING_TYPE_SK_LONG long
#define SETTING_TYPE_SK_BOOL bool
#define SETTING_TYPE_SK_NOT bool
#define SETTING_TYPE_SK_ENUM int
#define SETTING_TYPE_SK_PATH const char *
#define SETTING_TYPE_SK_STR const char *
#define SETTING_TYPE_SK_SPECIAL int /* SolverOptions only: its own code reads it */

#endif
