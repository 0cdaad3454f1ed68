/* view: the live window. freeglut callbacks, keys, the mouse (stir, add and
 * erase smoke, the parameters) and the on-screen drawing of the classroom
 * views, the colour bar, the HUD, the plot and the key help; what to draw
 * comes from viewmodel.h and viewfield.h (GL-free). The simulation advances a fixed number of
 * steps per displayed frame (dt is fixed, independent of the frame rate).
 *
 *   ViewOptions vo = {.steps_per_frame = 2, .shader_dir = dir};
 *   return view_run(ctx, morph, &vo);   // returns when the window closes
 */
#ifndef SMOKEMORPH_VIEW_H
#define SMOKEMORPH_VIEW_H

#include <stdbool.h>

#include "compare.h"
#include "glctx.h"
#include "morph.h"
#include "viewfield.h"
#include "viewmodel.h"

typedef struct {
    int steps_per_frame;     /* simulation steps per displayed frame */
    long max_steps;          /* 0: run until quit; else quit after this many */
    const char *shader_dir;
    const SolverOptions *solver; /* how the GPU runs the method, as for the morph given (a lesson's
                                    compare makes its two with it); NULL: the defaults */
    float color[3];          /* smoke colour */
    const char *screenshot;  /* when set: after max_steps, save the window to this PNG and quit */
    const char *keys;        /* keys to press, one per displayed frame, at the start */
    bool verbose_keys;       /* print the key list at start */
    int view;                /* the first view (viewfield.h's ViewKind; 0: density) */
    bool no_hud;             /* start with the HUD hidden ('i' shows it) */
    const char *font;        /* --font FILE; NULL: text.h's default */
    Compare *compare;        /* issue 11: two runs side by side (A is the morph given) */
    /* Several smoke fields sharing one velocity (morph.h's morph_step_fields;
     * issue 9): fields[0..nfields-1], fields[0] the morph given (it holds
     * the velocity), each with its colour (sRGB) and name. nfields <= 1:
     * the morph alone, in color. With several, the density view is their
     * composite as export.h's frames are (a_i = clamp(ρ_i × density_scale),
     * A = 1 − Π(1 − a_i), the colour the a_i-weighted mean in linear light)
     * and 'v' cycles through "density 1".."density N" (each field alone, in
     * its colour) after it; docs/MANUAL.md, "Several fields in the window". */
    Morph *const *fields;
    int nfields;
    float field_color[MORPH_MAX_FIELDS][3];
    const char *field_name[MORPH_MAX_FIELDS];
    float density_scale;     /* alpha = clamp(ρ × this) in the density views; 0: 1 */
    /* issue 24: the classroom on a projector */
    const char *record;      /* --record FILE.mp4: what the window shows, from the start */
    double fps;              /* the recording's frames per second (0: 24) */
    const char *lesson;      /* --lesson FILE: a prepared lesson (lesson.h), read here */
    const struct Lesson *lesson_ready; /* or the lesson already read (main, before the window) */
} ViewOptions;

/* Runs the window until quit. Returns the process exit status. */
int view_run(GlCtx *ctx, Morph *m, const ViewOptions *o);

/* Box kinds of ViewShown.box. */
enum { VIEW_BOX_TEXT = 't', VIEW_BOX_FIELD = 'f', VIEW_BOX_BAR = 'b', VIEW_BOX_PLOT = 'p' };
#define VIEW_BOXES 256
#define VIEW_CAPTION_MAX 1100

/* What the last view_run showed last, for tests: the view, the HUD's
 * numbers and lines (as drawn; n lines), the computed view's range, and
 * whether the text was drawn (the font loaded) and overlays were on. */
typedef struct {
    int view;
    ViewMetrics metrics;
    char hud[VIEWMODEL_HUD_LINES][VIEWMODEL_LINE];
    int nhud;
    ViewRange range;
    bool text, overlay;
    int selected;            /* the selected parameter */
    SolverParams params;
    int residual_points;     /* pass by pass: the points of the residual plot drawn */
    int nfields;             /* the fields stepped (1: one) */
    int field;               /* the density view's field: -1 the composite (or the one field), else 0-based */
    char title[192];         /* the view's label as drawn (or as it would be, without text); pass by pass: the pass */
    /* issue 24 */
    ViewLayout layout;       /* where everything went (viewmodel_layout_for) */
    int text_px;             /* the labels' font size (0: no text) */
    char subtitle[256];      /* pass by pass: what the pass does */
    char plot_caption[128];  /* the plot's caption as drawn ("" without a plot) */
    ViewRange bar_range;     /* the colour bar's labels' range */
    char caption[VIEW_CAPTION_MAX]; /* a lesson's caption */
    int lesson_step, lesson_steps;  /* a lesson's step shown (from 1), of so many (0: no lesson) */
    bool recording;
    long step;               /* the step shown (the title's, the HUD's; pass by pass the step under way) */
    /* compare: each half's label block (the setting, then its HUD's step and error) */
    char half[2][3][VIEWMODEL_LINE * 2];
    SolverParams half_params[2]; /* compare: each half's parameters */
    char title_bar[1100];    /* the title bar as last set */
    long reads, refreshes;   /* the metrics read back from the GPU (morph_observe), and the HUD's refreshes */
    /* every box drawn: text lines, fields, the bar, the plot (for the overlap tests) */
    ViewRect box[VIEW_BOXES];
    char box_kind[VIEW_BOXES];
    int nbox;
} ViewShown;
const ViewShown *view_shown(void);

#endif
