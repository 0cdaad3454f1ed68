/* mode_window: a run in a window; see mode_window.h. */
#include "mode_window.h"

#include <string.h>

#include "view.h"

int mode_window_run(GlCtx *ctx, const Config *c, Morph *m, const char *shader_dir, const Fields *fs,
                    float density_scale, Compare *cmp)
{
    ViewOptions vo = {.steps_per_frame = c->steps_per_frame,
                      .max_steps = c->steps,
                      .shader_dir = shader_dir,
                      .solver = &c->solver,
                      .screenshot = c->screenshot,
                      .keys = c->keys,
                      .view = c->view,
                      .no_hud = c->no_hud,
                      .font = c->font,
                      .record = c->record,
                      .lesson = c->lesson,
                      .lesson_ready = c->lesson_ready,
                      .fps = c->fps,
                      .color = {c->color[0], c->color[1], c->color[2]},
                      .compare = cmp};
    if (fs && fs->n > 1) { /* every field, composited as the frames are (export.h) */
        vo.fields = fs->m;
        vo.nfields = fs->n;
        vo.density_scale = density_scale;
        for (int i = 0; i < fs->n; i++) {
            memcpy(vo.field_color[i], fs->show[i].rgb, sizeof vo.field_color[i]);
            vo.field_name[i] = fs->name[i];
        }
    }
    return view_run(ctx, m, &vo);
}
