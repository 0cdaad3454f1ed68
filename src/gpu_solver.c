/* gpu_solver: the morph step as GLSL passes; see gpu_solver.h.
 * Each pass is one small function: bind its inputs, set its uniforms, draw
 * or dispatch into its output, swap. solver_step() is the list of passes in
 * the order of seed 003 §3.5, exactly as ref_step() on the CPU.
 *
 * The file: the passes both backends share; their two tables of the passes
 * that differ (SolverPasses: fragment_passes, one pass a stage, and
 * tiled_passes, the compute backend's tiles), one chosen at create; the step
 * (solver_pass), which runs a table's passes and never asks which; create
 * and free; the state in and out; the tests' single passes; timing. */
#include "gpu_solver.h"
#include "gpu_solver_debug.h"

#include <GL/glew.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "field.h"
#include "log.h"
#include "shader.h"

/* The passes' shaders: first those of both tables, then (from
 * SH_TRANSPORT_TILE) the tiled compute passes' own, which only tiled_passes
 * loads (SolverPasses.nshaders). */
enum {
    SH_DOWNSAMPLE, SH_BLUR, SH_TARGET_BLUR, SH_SET_TARGET, SH_FORCE, SH_ADVECT_VEL,
    SH_DIVERGENCE, SH_JACOBI, SH_SUBTRACT_GRAD, SH_ADVECT_DENSITY, SH_GATHER_JACOBI,
    SH_GATHER_APPLY, SH_SPLAT, SH_ADVECT_RATIO, SH_GATHER_RATIO, SH_MG_RESIDUAL, SH_MG_RESTRICT,
    SH_MG_PROLONG, SH_GATHER_COEF, SH_MG_COARSE, SH_OBSERVE, SH_POTENTIAL_RHS, SH_DRIFT_VEL,
    SH_GATHER_RHS, SH_SPEED_MAX, SH_ADD_SOURCE, SH_SPLAT_DENSITY, SH_MIX_COEF, SH_MIX, SH_MIX_APPLY,
    SH_CURL, SH_DRIFT_COVER, SH_TRANSPORT_TILE, SH_JACOBI_TILE, SH_MG_RESTRICT_RESIDUAL, SH_SUBSTEP_PLAN, /* tiled only */
    SH_MG_BOTTOM, SH_GATHER_JACOBI_TILE,
    SH_COUNT
};
/* The fields of the two Jacobi solves (divergence, pressure, every multigrid
 * level; the gathering's e and D) are packed 2x2 cells to an RGBA texel
 * (shaders/packed.glsl): a pass over them runs a quarter of the fragments. */
static const char *const shader_files[SH_COUNT] = {
    "downsample.glsl", "blur.glsl", "target_blur.glsl", "set_target.glsl", "force.glsl",
    "advect_vel.glsl", "divergence.glsl", "jacobi.glsl", "subtract_grad.glsl",
    "advect_density.glsl", "gather_jacobi.glsl", "gather_apply.glsl", "splat.glsl", "advect_ratio.glsl", "gather_ratio.glsl", "mg_residual.glsl", "mg_restrict.glsl",
    "mg_prolong.glsl", "gather_coef.glsl", "mg_coarse.glsl", "observe.glsl", "potential_rhs.glsl",
    "drift_vel.glsl", "gather_rhs.glsl", "speed_max.glsl", "add_source.glsl", "splat_density.glsl", "mix_coef.glsl", "mix.glsl", "mix_apply.glsl", "curl.glsl", "drift_cover.glsl", "transport_tile.glsl",
    "jacobi_tile.glsl", "mg_restrict_residual.glsl", "substep_plan.glsl", "mg_bottom.glsl",
    "gather_jacobi_tile.glsl",
};

/* Steps the CPU may queue ahead of the GPU. On the lent H100 (driver 580,
 * headless EGL) a 1024x512 morph run 1000 steps with no read-back in
 * between came back with corrupt density in 5 runs of 6 (docs/FIDELITY.md,
 * "a deep queue"); a glFinish every 100 steps, or this bound, cures it. Two
 * steps keep the GPU fed: the CPU queues step k+2 while the GPU runs k. */
#define SOLVER_STEPS_IN_FLIGHT 2

/* Compute backend: the most Jacobi iterations one jacobi_tile dispatch runs
 * (its halo, in packed texels). 4: a 16x8 tile stages 24x16 texels. Only on
 * levels of at most SOLVER_JACOBI_TILE_TEXELS packed texels: there a pass is
 * bound by its dispatch's fixed cost, while on a large level one iteration a
 * pass streams faster (H100: at 2048² the tiles made the pressure solve 2.22
 * ms instead of 1.88; at 1024² 1.12 instead of 1.55). */
#define SOLVER_JACOBI_TILE 4
#define SOLVER_JACOBI_TILE_TEXELS (512 * 512)

/* Tiled compute backend: a V-cycle's levels from the first of at most
 * SOLVER_MG_BOTTOM packed texels a side (below the grid itself) down to the
 * coarsest and back run in one dispatch of one work group, in shared memory
 * (mg_bottom.glsl), instead of three dispatches a level.
 * --mg-bottom N (0, 4, 8, 16 or 32; SolverOptions) chooses another bound, 0
 * none, for bench sweeps. 32 (64 cells a side, a work group of 1024 invocations,
 * 31 KB of shared memory: llvmpipe allows 32) was the fastest on the H100:
 * 256² 1078 steps/s against 988 with 16 and 624 with none (PERFORMANCE.md). */
#define SOLVER_MG_BOTTOM METHOD_GPU_MG_BOTTOM /* 32 */

/* Compute backend: transport_tile's work group, one cell an invocation.
 * Its tile carries a 3-cell halo, so a larger group stages fewer cells per
 * cell written (16x8: 2.4, 16x16: 2.0, 32x16: 1.6). 16x16 was 4-6% faster
 * than 16x8 at 1024²-4096² on the H100 (docs/PERFORMANCE.md, "Fewer
 * dispatches"); larger groups were not. --transport-group WxH
 * (each a multiple of 8, W*H at most 1024) chooses another, for bench
 * sweeps. (Two cells an invocation, a 16x8 group writing 32x16, made the
 * substeps slower on the H100: 3.87 ms a step at 2048² against 2.46.) */
/* The blur's downsampling goes in two dispatches (sums of blocks of this
 * side, then the coarse means) when its factor is larger (64 at 4096²). */
#define SOLVER_DOWNSAMPLE_SPLIT 8
#define SOLVER_TRANSPORT_GX METHOD_GPU_TRANSPORT_GROUP /* 16 */
#define SOLVER_TRANSPORT_GY METHOD_GPU_TRANSPORT_GROUP

/* The transport's speed S (method.h) is reduced SOLVER_SPEED_BLOCK² cells
 * (then texels) to a texel until one is left: 2048² takes 4 passes. */
#define SOLVER_SPEED_BLOCK 8
#define SOLVER_SPEED_LEVELS 12
/* Tiled compute backend: a stage whose bound is at most this many substeps
 * takes its count on the GPU (substep_plan, indirect dispatches: no
 * read-back); above it (settings far outside the defaults: 2048² at the
 * defaults is 30 + 33) the count is read back, as on the other backends. */
#define SOLVER_INDIRECT_MAX 256

typedef struct SolverPasses SolverPasses;

/* timestamp marks within one step, for solver_times() */
enum { T_START, T_BLUR, T_FORCE, T_ADVECT_VEL, T_DIV, T_JACOBI, T_SUBTRACT, T_DRIFT,
       T_ADVECT_DENS, T_GATHER, T_COUNT };

struct Solver {
    SolverKind kind;
    void (*prim)(Field *target); /* the pass primitive: pass_draw or pass_dispatch */
    const SolverPasses *passes; /* one pass a stage, or the tiled compute passes */
    int w, h;
    float cell;                 /* h: cell size in domain units */
    SolverParams p;
    BlurSpec blur;
    float blur_sigma; /* the σ of blur and the target's blurred channel (method_sigma: coarse to fine) */
    Shader *sh[SH_COUNT];
    FieldPair vel, dens, pres, gerr, coarse;
    FieldPair stats;            /* the flow's statistics for the drift's limit (pass_flow_stats) */
    Field *dsum4;               /* their 8 x 8 block sums: a large factor */
    FieldPair mixe;             /* the subgrid mixing's increment δ, packed (METHOD_PASS_MIX) */
    FieldPair curl;             /* the smoothed corner vorticity, (w+1) x (h+1) (the force's confinement) */
    FieldPair pot;              /* the balance force's deficit potential φ, packed */
    float pot_c, dscale;        /* as in cpu_solver.c: ρ* scale for φ, density scale */
    Field *drift;               /* the gathering drift's face speeds (.r, .g) */
    Field *cover_rows, *cover;  /* the balance drift's coverage: row sums (1 x H), then .r (1 x 1) */
    Field *dsum;                /* the blur's 8 x 8 block sums and counts (.r, .g): a large factor */
    bool drift_ran;             /* the last step ran the drift (for the motion vectors) */
    Field **srcw;               /* the sources' weights (R32F), uploaded once (solver_set_sources) */
    int nsrc;
    long nstep;                 /* steps since solver_set_density: the fade-ins' clock */
    long kstep;                 /* steps since the target was set: the arrival's clock */
    float vf_now, rg_now, rd_now; /* this step's faded vf, gathering and drift factors */
    float off_now;                /* this step's off_pull (MethodStep p.off_pull) */
    float umax_now;             /* this step's flow speed limit (MethodStep.umax_flow) */
    float tdt;                  /* the transport's time: dt·method_transport_share (a long key's slow motion) */
    float flow_share;           /* the last transport's flow share (method_transport_share: the motion vectors) */
    float kb_now, ga_now;       /* the plan's balance coefficient and gathering a */
    float noise_now;            /* the plan's force noise (method_noise_amp) */
    bool balance_now;           /* the plan's: the balance force is on (φ is solved) */
    bool one_by_one;            /* solver_step_pass: one Jacobi iteration a pass, always */
    bool mid_transport;         /* tiled: ρ is in the R32F field between substeps */
    bool whole_step;            /* this step ran whole (its timers count) */
    Field *div, *ratio, *scratch; /* ratio: positivity ratios (.r) and transport
                                   * fluxes (.g, .b); scratch: uploads */
    Field *gcoef;               /* the gathering's D = ρ0·ρ̃*, packed */
    Field *mixd;                /* the subgrid mixing's d, packed (METHOD_PASS_MIX) */
    Field *grhs;                /* and its right-hand side ρ0 − ρ*, packed */
    FieldPair rho;              /* tiled: ρ alone (R32F) between transport substeps */
    Field *speed[SOLVER_SPEED_LEVELS]; /* the speed reduction, down to one texel */
    int nspeed;
    GLuint plan;                /* tiled: substep_plan's buffer (n, k, the dispatch
                                 * arguments) of the transport stage */
    int nsub;                   /* the stage's substeps (read back), or */
    bool dynamic;               /* ... the GPU's own count (indirect) */
    unsigned total0;            /* substep_plan's running total when timing began */
    long dyn_stages;            /* timed steps whose stage counted on the GPU */
    MethodStep step_plan;       /* this step's, for solver_step_parts's later parts */
    bool partial_now;           /* the plan's force_partial: no damping, no clamp */
    int nlev, lw[METHOD_MG_MAX_LEVELS], lh[METHOD_MG_MAX_LEVELS]; /* level sizes in cells */
    FieldPair mgx[METHOD_MG_MAX_LEVELS]; /* level 0 is pres; all packed */
    Field *mgb[METHOD_MG_MAX_LEVELS], *mgr[METHOD_MG_MAX_LEVELS];
    bool timing;
    GLuint queries[T_COUNT];
    unsigned long long mbytes[T_COUNT]; /* pass_bytes() at each mark */
    unsigned marked;                    /* the marks made this step (bits by T_) */
    int tgx, tgy;                       /* transport_tile's work group */
    int mg_bottom;                      /* mg_bottom's side in texels (0: none) */
    bool no_fuse;                       /* --no-mg-fuse: restrict in its own pass, and
                                           one gathering iteration a dispatch */
    GLsync inflight[SOLVER_STEPS_IN_FLIGHT]; /* one fence per queued step */
    int inflight_next;
    double wait_s;              /* solver_wait_seconds */
    SolverTimes times;
    FieldReadback *obs[SOLVER_OBSERVE_SLOTS]; /* solver_observe_start's read-backs */
    bool obs_div[SOLVER_OBSERVE_SLOTS];       /* ... of the ratio field (with max|div u|) */
};

static float cell_size(int w, int h) { return 1.0f / (float)(w < h ? w : h); }

/* texels a side of a packed field of n cells */
static int packed(int n) { return (n + 1) / 2; }

/* ---- the common uniforms and the one pass primitive ---------------------- */

static Shader *use(Solver *s, int which)
{
    Shader *sh = s->sh[which];
    shader_use(sh);
    shader_set_ivec2(sh, "u_size", s->w, s->h);
    shader_set_float(sh, "u_h", s->cell);
    return sh;
}

/* The one pass primitive: the current program into target, as a draw
 * (fragment backend) or a dispatch (compute backend), chosen at create. */
static void run(Solver *s, Field *target) { s->prim(target); }

static void mark(Solver *s, int t)
{
    if (!s->timing) return;
    glQueryCounter(s->queries[t], GL_TIMESTAMP);
    s->mbytes[t] = pass_bytes();
    s->marked |= 1u << t;
}

/* ---- the passes both backends share -------------------------------------- */

/* Each pass below takes its inputs and its output explicitly; the caller
 * (solver_pass) picks them from the solver's fields and swaps ping-pong
 * pairs. */

/* pair->read blurred by spec's separable kernel (blur.glsl), both axes,
 * through the pair: the coarse ρ̃ and the confinement's curl */
static void blur_axes(Solver *s, const BlurSpec *spec, FieldPair *pair)
{
    Shader *sh = use(s, SH_BLUR);
    shader_set_ivec2(sh, "u_csize", spec->cw, spec->ch);
    shader_set_int(sh, "u_radius", spec->radius);
    shader_set_float_array(sh, "u_weights", spec->weights, spec->radius + 1);
    for (int axis = 0; axis < 2; axis++) {
        shader_set_int(sh, "u_axis", axis);
        shader_set_texture(sh, "u_src", 0, field_texture(pair->read));
        run(s, pair->write);
        field_pair_swap(pair);
    }
}

/* out <- the coarse means of the blur's factor x factor blocks of the
 * downsample shader's u_src (u_chan set by the caller). 8 x 8 block sums
 * first, into sums: no invocation sums f² texels in a row (f is a power of
 * 2, method_blur_spec: f / 8 is whole). */
static void downsample(Solver *s, Shader *sh, Field *sums, Field *out)
{
    int f = s->blur.factor, split = SOLVER_DOWNSAMPLE_SPLIT;
    if (f > split) {
        shader_set_int(sh, "u_mode", 1);
        shader_set_int(sh, "u_factor", split);
        run(s, sums);
        shader_set_int(sh, "u_mode", 2);
        shader_set_int(sh, "u_factor", f / split);
        shader_set_texture(sh, "u_src", 0, field_texture(sums));
        shader_set_ivec2(sh, "u_src_size", field_width(sums), field_height(sums));
    } else {
        shader_set_int(sh, "u_mode", 0);
        shader_set_int(sh, "u_factor", f);
    }
    run(s, out);
}

/* coarse.read <- blurred channel chan of dens (ρ: 0, ρ*: 1); three passes
 * through the coarse pair */
static void pass_blur(Solver *s, const Field *dens, int chan, FieldPair *coarse)
{
    Shader *sh = use(s, SH_DOWNSAMPLE);
    shader_set_texture(sh, "u_src", 0, field_texture(dens));
    shader_set_int(sh, "u_chan", chan);
    downsample(s, sh, s->dsum, coarse->write);
    field_pair_swap(coarse);

    blur_axes(s, &s->blur, coarse);
}

/* stats.read <- the blurred coarse means of (u, v, u², v²) of vel: the
 * drift's flow limit reads their mean and spread (METHOD_FLOW_ENV_K,
 * cpu_solver.c's flow_stats); the blur of ρ̃: three passes, four where the
 * factor is over SOLVER_DOWNSAMPLE_SPLIT */
static void pass_flow_stats(Solver *s, const Field *vel)
{
    Shader *sh = use(s, SH_DOWNSAMPLE);
    shader_set_texture(sh, "u_src", 0, field_texture(vel));
    shader_set_int(sh, "u_chan", 4);
    shader_set_int(sh, "u_full", s->blur.factor);
    shader_set_ivec2(sh, "u_fine_size", s->w, s->h);
    downsample(s, sh, s->dsum4, s->stats.write);
    field_pair_swap(&s->stats);
    blur_axes(s, &s->blur, &s->stats);
}


/* curl.read <- the corner vorticity of vel, smoothed (METHOD_SWIRL_SMOOTH):
 * what the confinement reads; its fields made the first time (a morph
 * without swirl never needs them). 0, or -1 if they can't be made. */
static int pass_swirl_curl(Solver *s, const Field *vel)
{
    if (!s->curl.read) {
        char err[256];
        if (field_pair_create(&s->curl, s->w + 1, s->h + 1, 1, err, sizeof err) < 0) {
            log_error("solver", "the vorticity confinement: %s", err);
            return -1;
        }
    }
    Shader *sh = use(s, SH_CURL);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    run(s, s->curl.write);
    field_pair_swap(&s->curl);
    BlurSpec spec;
    method_swirl_spec(s->w, s->h, &spec);
    blur_axes(s, &spec, &s->curl);
    return 0;
}

/* out <- the velocity vel after the driving force (ρ̃ coarse in rblur, ρ̃* in
 * dens.b, φ in phi) and damping; with swirl, vorticity confinement from the
 * smoothed curl of vel (pass_swirl_curl first). 0, or -1. */
static int pass_force(Solver *s, const Field *vel, const Field *dens, const Field *rblur,
                      const Field *phi, Field *out)
{
    /* vorticity confinement, once: by the field whose force pass is the last */
    float swirl = s->partial_now ? 0.0f : s->p.dt * s->p.swirl * METHOD_SWIRL_LENGTH;
    if (swirl > 0.0f && pass_swirl_curl(s, vel) < 0) return -1;
    Shader *sh = use(s, SH_FORCE);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    shader_set_texture(sh, "u_dens", 1, field_texture(dens));
    shader_set_texture(sh, "u_rblur", 2, field_texture(rblur));
    shader_set_int(sh, "u_factor", s->blur.factor);
    shader_set_ivec2(sh, "u_csize", s->blur.cw, s->blur.ch);
    shader_set_float(sh, "u_k", s->p.dt * s->vf_now / s->cell);
    /* a field's force that another field's follows: added undamped, unclamped */
    shader_set_float(sh, "u_damp", s->partial_now ? 1.0f : 1.0f / (1.0f + s->p.dt * s->p.vd));
    shader_set_float(sh, "u_umax", s->partial_now ? FLT_MAX : s->p.umax);
    shader_set_float(sh, "u_eps", s->p.eps);
    bool balance = s->balance_now;
    shader_set_int(sh, "u_balance", balance ? 1 : 0);
    shader_set_texture(sh, "u_phi", 3, field_texture(phi));
    shader_set_float(sh, "u_kb", balance ? s->kb_now : 0.0f);
    shader_set_float(sh, "u_swirl", swirl);
    shader_set_float(sh, "u_attract", s->p.attract);
    shader_set_float(sh, "u_off", balance ? s->off_now : 0.0f);
    shader_set_float(sh, "u_off_lo", METHOD_OFF_LO);
    shader_set_float(sh, "u_off_hi", METHOD_OFF_HI);
    shader_set_float(sh, "u_c", s->pot_c);
    shader_set_float(sh, "u_rg", s->rg_now);
    shader_set_float(sh, "u_rd", s->rd_now);
    shader_set_float(sh, "u_sharp", METHOD_SHARP_PULL);
    shader_set_float(sh, "u_noise", s->noise_now);
    shader_set_float(sh, "u_nl", s->cell / s->p.noise_scale);
    shader_set_int(sh, "u_seed", s->p.noise_seed);
    /* without swirl u_curl is not read: any field will do */
    shader_set_texture(sh, "u_curl", 4, field_texture(swirl > 0.0f ? s->curl.read : vel));
    run(s, out);
    return 0;
}

static void pass_advect_vel(Solver *s, const Field *vel, Field *out)
{
    Shader *sh = use(s, SH_ADVECT_VEL);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    shader_set_float(sh, "u_s", s->p.dt / s->cell);
    run(s, out);
}

static void pass_divergence(Solver *s, const Field *vel, Field *out)
{
    Shader *sh = use(s, SH_DIVERGENCE);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    run(s, out);
}

/* one damped Jacobi iteration on pressure level l (0: the grid itself);
 * zero: from p = 0 instead of the level's current values */
static void pass_jacobi_level(Solver *s, int l, bool zero, FieldPair *x0, Field *b0)
{
    FieldPair *x = l == 0 ? x0 : &s->mgx[l];
    Shader *sh = use(s, SH_JACOBI);
    shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
    shader_set_float(sh, "u_h", l == 0 ? s->cell : 1.0f);
    shader_set_texture(sh, "u_p", 0, field_texture(x->read));
    shader_set_texture(sh, "u_div", 1, field_texture(l == 0 ? b0 : s->mgb[l]));
    shader_set_int(sh, "u_zero", zero ? 1 : 0);
    run(s, x->write);
    field_pair_swap(x);
}


/* The gathering drift's face speeds (ref_pass_drift_vel) from ρ̃ (still in
 * the coarse field from the step's first pass) and ρ̃*; the drift's substeps
 * are pass_transport by them. */
static void pass_drift_vel(Solver *s, const Field *dens, const Field *rblur, const Field *phi, Field *out)
{
    bool balance = s->balance_now && s->p.vw > 0.0f;
    if (balance) { /* the coverage first (drift_cover.glsl): rows, then their sum */
        Shader *sc = use(s, SH_DRIFT_COVER);
        shader_set_texture(sc, "u_dens", 0, field_texture(dens));
        shader_set_texture(sc, "u_rblur", 1, field_texture(rblur));
        shader_set_int(sc, "u_factor", s->blur.factor);
        shader_set_ivec2(sc, "u_csize", s->blur.cw, s->blur.ch);
        shader_set_float(sc, "u_cover", METHOD_DRIFT_COVER);
        shader_set_int(sc, "u_mode", 0);
        /* mode 0 does not read u_rows: bound to a field it is not writing */
        shader_set_texture(sc, "u_rows", 2, field_texture(s->cover));
        run(s, s->cover_rows);
        shader_set_int(sc, "u_mode", 1);
        shader_set_texture(sc, "u_rows", 2, field_texture(s->cover_rows));
        run(s, s->cover);
    }
    pass_flow_stats(s, s->vel.read);
    Shader *sh = use(s, SH_DRIFT_VEL);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    shader_set_texture(sh, "u_rblur", 1, field_texture(rblur));
    shader_set_int(sh, "u_factor", s->blur.factor);
    shader_set_ivec2(sh, "u_csize", s->blur.cw, s->blur.ch);
    shader_set_float(sh, "u_vk", s->p.vk);
    shader_set_float(sh, "u_cap", s->p.wmax * s->rd_now);
    shader_set_float(sh, "u_eps", METHOD_DRIFT_LOG_EPS * s->dscale);
    shader_set_float(sh, "u_mob", METHOD_DRIFT_MOB * s->dscale);
    shader_set_int(sh, "u_balance", balance ? 1 : 0);
    shader_set_texture(sh, "u_cover", 4, field_texture(s->cover));
    shader_set_texture(sh, "u_phi", 2, field_texture(phi));
    shader_set_float(sh, "u_kw", balance ? s->p.vw / s->dscale / s->cell : 0.0f);
    shader_set_float(sh, "u_haze", METHOD_DRIFT_HAZE * s->dscale);
    shader_set_texture(sh, "u_vel", 3, field_texture(s->vel.read));
    shader_set_float(sh, "u_flowscale", method_flow_share(s->umax_now, s->p.umax));
    shader_set_float(sh, "u_umax", s->p.umax);
    shader_set_float(sh, "u_fcap", method_transport_cap(&s->p));
    shader_set_float(sh, "u_env_k", METHOD_FLOW_ENV_K);
    shader_set_float(sh, "u_env_floor", METHOD_FLOW_ENV_FLOOR);
    shader_set_texture(sh, "u_stats", 5, field_texture(s->stats.read));
    run(s, out);
}

static float gather_a(const Solver *s) { return s->ga_now; }

/* The step values of single passes and of a solver between steps: the
 * parameters as given (no fade-in, no pace). */
static void unfaded(Solver *s)
{
    s->vf_now = s->p.vf;
    s->rg_now = 1.0f;
    s->off_now = s->p.off_pull;
    s->rd_now = 1.0f;
    s->noise_now = 0.0f; /* as after the noise's fade (method_noise_amp) */
    s->umax_now = s->p.umax;
    s->tdt = s->p.dt;
}

/* the gathering solve's D and right-hand side, packed, once per step */
static void pass_gather_begin(Solver *s, const Field *dens, Field *coef, Field *rhs)
{
    Shader *sh = use(s, SH_GATHER_COEF);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    run(s, coef);
    sh = use(s, SH_GATHER_RHS);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    run(s, rhs);
}

/* the donors' ratios into ratio, then the limited fluxes: dens -> out */
static void pass_gather_apply(Solver *s, const Field *dens, const Field *e, Field *ratio, Field *out, float a)
{
    for (int k = 0; k < 2; k++) {
        Shader *sh = use(s, k == 0 ? SH_GATHER_RATIO : SH_GATHER_APPLY);
        shader_set_texture(sh, "u_dens", 0, field_texture(dens));
        shader_set_texture(sh, "u_e", 1, field_texture(e));
        shader_set_float(sh, "u_a", a);
        if (k == 0) {
            run(s, ratio);
        } else {
            shader_set_texture(sh, "u_ratio", 2, field_texture(ratio));
            run(s, out);
        }
    }
}

/* the subgrid mixing's fields, made the first time it runs (a morph without
 * it never needs them: --subgrid 0, Fattal's force, or from 4096², where its
 * work bound leaves no iterations; three packed fields, 192 MB there) */
static int mix_fields(Solver *s)
{
    if (s->mixd) return 0;
    char err[256];
    if (!(s->mixd = field_create(packed(s->w), packed(s->h), 4, err, sizeof err)) ||
        field_pair_create(&s->mixe, packed(s->w), packed(s->h), 4, err, sizeof err) < 0) {
        log_error("solver", "the subgrid mixing: %s", err);
        field_free(s->mixd);
        s->mixd = NULL;
        return -1;
    }
    return 0;
}

/* the subgrid mixing's d (packed) from the flow vel, the blurred mismatch
 * of rblur (ρ̃, coarse) with dens's ρ̃* and edge_w (the step's
 * mix_edge_w: rg, faded out long after the arrival) times the edge excess
 * of dens's ρ over its ρ*, near_w the share of the target's nearness
 * (method_mix_near): k = method_mix_k */
static void pass_mix_coef(Solver *s, const Field *vel, const Field *dens, const Field *rblur, float k, float edge_w,
                          float near_w, Field *out)
{
    Shader *sh = use(s, SH_MIX_COEF);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    shader_set_texture(sh, "u_dens", 1, field_texture(dens));
    shader_set_texture(sh, "u_rblur", 2, field_texture(rblur));
    /* the transport's speeds where the drift ran this step (else not read) */
    shader_set_texture(sh, "u_drift", 3, field_texture(s->drift_ran ? s->drift : vel));
    shader_set_int(sh, "u_has_drift", s->drift_ran ? 1 : 0);
    shader_set_int(sh, "u_factor", s->blur.factor);
    shader_set_ivec2(sh, "u_csize", s->blur.cw, s->blur.ch);
    shader_set_float(sh, "u_near", s->dscale > 0.0f ? 1.0f / (METHOD_MIX_NEAR * s->dscale) : 0.0f);
    shader_set_float(sh, "u_near_w", near_w);
    shader_set_float(sh, "u_transit", METHOD_MIX_TRANSIT);
    shader_set_float(sh, "u_k", k);
    shader_set_float(sh, "u_cap", METHOD_MIX_CAP);
    shader_set_float(sh, "u_edge_eps", METHOD_MIX_EDGE_EPS * s->dscale);
    shader_set_float(sh, "u_edge_w", edge_w);
    float lh = method_mix_length(s->w, s->h);
    shader_set_float(sh, "u_fine_l2", lh * lh);
    shader_set_float(sh, "u_fine_lo", METHOD_MIX_FINE_LO);
    shader_set_float(sh, "u_fine_hi", METHOD_MIX_FINE_HI);
    run(s, out);
}

/* one mixing iteration on the packed increment: e.read -> e.write (first: from δ = 0) */
static void pass_mix(Solver *s, const Field *dens, const Field *d, FieldPair *e, bool first)
{
    Shader *sh = use(s, SH_MIX);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    shader_set_texture(sh, "u_d", 1, field_texture(d));
    shader_set_texture(sh, "u_delta", 2, field_texture(e->read));
    shader_set_int(sh, "u_first", first);
    run(s, e->write);
    field_pair_swap(e);
}

/* ρ0 + δ: dens -> out */
static void pass_mix_apply(Solver *s, const Field *dens, const Field *e, Field *out)
{
    Shader *sh = use(s, SH_MIX_APPLY);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    shader_set_texture(sh, "u_delta", 1, field_texture(e));
    run(s, out);
}

/* ρ̃* into density.b from density.g */
static void pass_blur_target(Solver *s)
{
    pass_blur(s, s->dens.read, 1, &s->coarse);
    Shader *sh = use(s, SH_TARGET_BLUR);
    shader_set_texture(sh, "u_dens", 0, field_texture(s->dens.read));
    shader_set_texture(sh, "u_coarse", 1, field_texture(s->coarse.read));
    shader_set_int(sh, "u_factor", s->blur.factor);
    shader_set_ivec2(sh, "u_csize", s->blur.cw, s->blur.ch);
    run(s, s->dens.write);
    field_pair_swap(&s->dens);
}

/* The balance force's deficit potential: its right-hand side ρ − c·ρ* into
 * the divergence field (free until the projection), then V-cycles on φ,
 * warm-started from the last step's. */
static void pass_potential_rhs(Solver *s, const Field *dens, Field *out)
{
    Shader *sh = use(s, SH_POTENTIAL_RHS);
    shader_set_texture(sh, "u_dens", 0, field_texture(dens));
    shader_set_float(sh, "u_c", s->pot_c);
    run(s, out);
}

static void pass_subtract_grad(Solver *s, const Field *vel, const Field *p, Field *out)
{
    Shader *sh = use(s, SH_SUBTRACT_GRAD);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    shader_set_texture(sh, "u_p", 1, field_texture(p));
    run(s, out);
}

/* The gathering solve's Jacobi iteration: e -> out, one gather_jacobi pass
 * (first: from e = 0). */
static void pass_gather_jacobi(Solver *s, const Field *rhs, const Field *coef, const Field *e,
                               Field *out, bool first)
{
    Shader *sh = use(s, SH_GATHER_JACOBI);
    shader_set_texture(sh, "u_rhs", 0, field_texture(rhs));
    shader_set_texture(sh, "u_coef", 2, field_texture(coef));
    shader_set_texture(sh, "u_e", 1, field_texture(e));
    shader_set_float(sh, "u_a", gather_a(s));
    shader_set_int(sh, "u_first", first ? 1 : 0);
    run(s, out);
}

/* ---- the backends' pass tables, and the pieces they share ------------ */

/* How a GPU backend runs the stages that differ: one pass a stage
 * (fragment_passes: the fragment backend, and the compute backend on a
 * software renderer, through the compute entry point) or the tiled compute
 * passes (tiled_passes, solver_tiles_wanted). solver_create picks one;
 * solver_pass and vcycle call it and never ask which backend runs. The
 * other passes are the same on both. */
struct SolverPasses {
    int nshaders; /* the shaders it loads: the first nshaders of shader_files */
    /* its own fields, beyond the common ones */
    int (*create_fields)(Solver *s, char *err, size_t errlen);
    /* n damped Jacobi iterations on level l (zero: the first from p = 0;
     * prolong: after the coarse correction from level l+1) */
    void (*smooth)(Solver *s, int l, int n, bool zero, bool prolong, FieldPair *x0, Field *b0);
    /* the same (without the correction), then level l+1's right-hand side:
     * the residual, restricted */
    void (*smooth_restrict)(Solver *s, int l, int n, bool zero, FieldPair *x0, Field *b0);
    /* the rest of a V-cycle from level l > 0 in one pass, where the backend
     * has one for it (true) */
    bool (*bottom)(Solver *s, int l, FieldPair *x);
    /* the pressure's Jacobi iteration k of count; the gathering's, from the
     * last step's e */
    void (*pressure_jacobi)(Solver *s, int k, int count);
    void (*gather_jacobi)(Solver *s, int k, int count);
    /* substep k of the transport stage of at most `bound` substeps, by the
     * face speeds vel (clamped to ±cap): dens -> dens */
    int (*transport_substep)(Solver *s, const Field *vel, float cap, int k, int bound);
};

/* the level's solution pair: level 0 is x0 (the pressure or the potential) */
static FieldPair *level_x(Solver *s, int l, FieldPair *x0) { return l == 0 ? x0 : &s->mgx[l]; }

/* its right-hand side: level 0's is b0 */
static Field *level_b(Solver *s, int l, Field *b0) { return l == 0 ? b0 : s->mgb[l]; }

/* One multigrid V-cycle from level l; see vcycle() in cpu_solver.c. A coarse
 * level starts from zero: its first smoothing iteration ignores what it holds.
 * Level 0 is x0 with the right-hand side b0 (the pressure and the divergence,
 * or the deficit potential and its right-hand side). */
static void vcycle(Solver *s, int l, FieldPair *x0, Field *b0)
{
    FieldPair *x = level_x(s, l, x0);
    bool last = l == s->nlev - 1;
    if (l > 0 && s->passes->bottom(s, l, x)) return;
    if (last && l > 0 && s->lw[l] <= METHOD_MG_COARSE_MAX && s->lh[l] <= METHOD_MG_COARSE_MAX) {
        Shader *sh = use(s, SH_MG_COARSE);
        shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
        shader_set_texture(sh, "u_div", 0, field_texture(s->mgb[l]));
        shader_set_int(sh, "u_iters", METHOD_MG_COARSE_ITERS);
        run(s, x->write);
        field_pair_swap(x);
        return;
    }
    if (last) {
        s->passes->smooth(s, l, METHOD_MG_COARSE_ITERS, l > 0, false, x0, b0);
        return;
    }
    s->passes->smooth_restrict(s, l, METHOD_MG_SMOOTH, l > 0, x0, b0);
    vcycle(s, l + 1, x0, b0);
    s->passes->smooth(s, l, METHOD_MG_SMOOTH, false, true, x0, b0); /* correction, post-smoothing */
}

/* The start of a transport stage (its substep 0): S of the face speeds vel
 * (method.h) reduced to one texel in speed[nspeed - 1]. */
static void speed_reduce(Solver *s, const Field *vel, float cap)
{
    for (int l = 0; l < s->nspeed; l++) {
        Shader *sh = use(s, SH_SPEED_MAX);
        const Field *src = l == 0 ? vel : s->speed[l - 1];
        shader_set_texture(sh, "u_src", 0, field_texture(src));
        shader_set_int(sh, "u_mode", l == 0 ? 0 : 1);
        shader_set_ivec2(sh, "u_src_size", field_width(src), field_height(src));
        shader_set_int(sh, "u_block", SOLVER_SPEED_BLOCK);
        shader_set_float(sh, "u_cap", cap);
        run(s, s->speed[l]);
    }
}

/* The stage's substep count from S, read back into s->nsub (the GPU waits) */
static int read_substeps(Solver *s, int bound)
{
    float S = 0.0f;
    if (field_read(s->speed[s->nspeed - 1], &S) < 0) return -1; /* a read-back: waits for the GPU */
    s->nsub = method_substeps_for(S, method_speed_scale(s->tdt, s->cell), bound);
    return 0;
}

/* ---- one pass a stage (fragment_passes) ---------------------------------- */

static void frag_smooth(Solver *s, int l, int n, bool zero, bool prolong, FieldPair *x0, Field *b0)
{
    FieldPair *x = level_x(s, l, x0);
    if (prolong) {
        Shader *sh = use(s, SH_MG_PROLONG);
        shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
        shader_set_texture(sh, "u_p", 0, field_texture(x->read));
        shader_set_texture(sh, "u_coarse", 1, field_texture(s->mgx[l + 1].read));
        run(s, x->write);
        field_pair_swap(x);
    }
    for (int k = 0; k < n; k++) pass_jacobi_level(s, l, zero && k == 0, x0, b0);
}

/* the smoothing, then the residual into mgr[l] and its restriction */
static void frag_smooth_restrict(Solver *s, int l, int n, bool zero, FieldPair *x0, Field *b0)
{
    FieldPair *x = level_x(s, l, x0);
    frag_smooth(s, l, n, zero, false, x0, b0);
    Shader *sh = use(s, SH_MG_RESIDUAL);
    shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
    shader_set_float(sh, "u_h", l == 0 ? s->cell : 1.0f);
    shader_set_texture(sh, "u_p", 0, field_texture(x->read));
    shader_set_texture(sh, "u_div", 1, field_texture(level_b(s, l, b0)));
    run(s, s->mgr[l]);
    sh = use(s, SH_MG_RESTRICT);
    shader_set_ivec2(sh, "u_size", s->lw[l + 1], s->lh[l + 1]);
    shader_set_texture(sh, "u_r", 0, field_texture(s->mgr[l]));
    run(s, s->mgb[l + 1]);
}

/* no pass for the bottom of the cycle: the levels run one by one */
static bool frag_bottom(Solver *s, int l, FieldPair *x)
{
    (void)s, (void)l, (void)x;
    return false;
}

static void frag_pressure_jacobi(Solver *s, int k, int count)
{
    (void)k, (void)count;
    pass_jacobi_level(s, 0, false, &s->pres, s->div);
}

static void frag_gather_jacobi(Solver *s, int k, int count)
{
    (void)k, (void)count;
    pass_gather_jacobi(s, s->grhs, s->gcoef, s->gerr.read, s->gerr.write, false);
    field_pair_swap(&s->gerr);
}

/* one substep of dens moved by the face speeds vel (within ±umax, which the
 * stage passes as method_transport_cap: a guard only): the
 * face fluxes and the donors' ratios into ratio, then the update into out */
static void pass_transport(Solver *s, const Field *vel, const Field *dens, Field *ratio, Field *out,
                           float umax, float dt_sub)
{
    Shader *sh = use(s, SH_ADVECT_RATIO);
    shader_set_texture(sh, "u_vel", 0, field_texture(vel));
    shader_set_texture(sh, "u_dens", 1, field_texture(dens));
    shader_set_float(sh, "u_k", dt_sub / s->cell);
    shader_set_float(sh, "u_umax", umax);
    run(s, ratio);
    sh = use(s, SH_ADVECT_DENSITY);
    shader_set_texture(sh, "u_dens", 1, field_texture(dens));
    shader_set_texture(sh, "u_ratio", 2, field_texture(ratio));
    run(s, out);
}

/* the count read back at substep 0; each substep dens -> dens */
static int frag_transport_substep(Solver *s, const Field *vel, float cap, int k, int bound)
{
    if (k == 0) {
        speed_reduce(s, vel, cap);
        if (read_substeps(s, bound) < 0) return -1;
    }
    if (k >= s->nsub) return 0;
    pass_transport(s, vel, s->dens.read, s->ratio, s->dens.write, cap, s->tdt / (float)s->nsub);
    field_pair_swap(&s->dens);
    return 0;
}

/* the residual fields of the levels (mg_residual, then mg_restrict) */
static int frag_fields(Solver *s, char *err, size_t errlen)
{
    for (int l = 0; l < s->nlev - 1; l++)
        if (!(s->mgr[l] = field_create(packed(s->lw[l]), packed(s->lh[l]), 4, err, errlen))) return -1;
    return 0;
}

static const SolverPasses fragment_passes = {
    .nshaders = SH_TRANSPORT_TILE,
    .create_fields = frag_fields,
    .smooth = frag_smooth,
    .smooth_restrict = frag_smooth_restrict,
    .bottom = frag_bottom,
    .pressure_jacobi = frag_pressure_jacobi,
    .gather_jacobi = frag_gather_jacobi,
    .transport_substep = frag_transport_substep,
};

/* ---- the tiled compute passes (tiled_passes) ----------------------------- */

/* a level small enough for jacobi_tile (SOLVER_JACOBI_TILE_TEXELS); a larger
 * one runs one pass an iteration, as fragment_passes */
static bool level_tiled(const Solver *s, int l)
{
    return (long)packed(s->lw[l]) * packed(s->lh[l]) <= SOLVER_JACOBI_TILE_TEXELS;
}

/* n damped Jacobi iterations on a tiled level l, SOLVER_JACOBI_TILE a
 * dispatch (jacobi_tile). With restrict_ the last dispatch also writes
 * level l+1's right-hand side (the residual, restricted), as
 * mg_restrict_residual would after it. */
static void jacobi_tile_iters(Solver *s, int l, int n, bool zero, bool prolong, bool restrict_,
                              FieldPair *x0, Field *b0)
{
    FieldPair *x = level_x(s, l, x0);
    for (int k = 0; k < n; k += SOLVER_JACOBI_TILE) {
        Shader *sh = use(s, SH_JACOBI_TILE);
        shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
        shader_set_float(sh, "u_h", l == 0 ? s->cell : 1.0f);
        shader_set_texture(sh, "u_p", 0, field_texture(x->read));
        shader_set_texture(sh, "u_div", 1, field_texture(level_b(s, l, b0)));
        bool pro = prolong && k == 0;
        /* without the correction u_coarse is not read: any field will do */
        shader_set_texture(sh, "u_coarse", 2, field_texture(pro ? s->mgx[l + 1].read : x->read));
        shader_set_int(sh, "u_prolong", pro ? 1 : 0);
        shader_set_int(sh, "u_zero", zero && k == 0 ? 1 : 0);
        shader_set_int(sh, "u_iters", n - k < SOLVER_JACOBI_TILE ? n - k : SOLVER_JACOBI_TILE);
        bool res = restrict_ && k + SOLVER_JACOBI_TILE >= n;
        shader_set_int(sh, "u_restrict", res ? 1 : 0);
        if (res) {
            shader_set_ivec2(sh, "u_csize", s->lw[l + 1], s->lh[l + 1]);
            field_bind_image(s->mgb[l + 1], 1);
        }
        run(s, x->write);
        field_pair_swap(x);
    }
}

static void tiled_smooth(Solver *s, int l, int n, bool zero, bool prolong, FieldPair *x0, Field *b0)
{
    if (level_tiled(s, l)) jacobi_tile_iters(s, l, n, zero, prolong, false, x0, b0);
    else frag_smooth(s, l, n, zero, prolong, x0, b0);
}

/* On a tiled level (and for the residual's halo, SOLVER_JACOBI_TILE > the
 * smoothing) the smoothing's dispatch also restricts the residual; else
 * the residual and its restriction in one pass (mg_restrict_residual). */
static void tiled_smooth_restrict(Solver *s, int l, int n, bool zero, FieldPair *x0, Field *b0)
{
    if (level_tiled(s, l) && !s->no_fuse && n < SOLVER_JACOBI_TILE) {
        jacobi_tile_iters(s, l, n, zero, false, true, x0, b0);
        return;
    }
    tiled_smooth(s, l, n, zero, false, x0, b0);
    Shader *sh = use(s, SH_MG_RESTRICT_RESIDUAL);
    shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
    shader_set_ivec2(sh, "u_csize", s->lw[l + 1], s->lh[l + 1]);
    shader_set_float(sh, "u_h", l == 0 ? s->cell : 1.0f);
    shader_set_texture(sh, "u_p", 0, field_texture(level_x(s, l, x0)->read));
    shader_set_texture(sh, "u_div", 1, field_texture(level_b(s, l, b0)));
    run(s, s->mgb[l + 1]);
}

/* the rest of the cycle from the first level of at most mg_bottom packed
 * texels a side, in one work group (mg_bottom) */
static bool tiled_bottom(Solver *s, int l, FieldPair *x)
{
    if (packed(s->lw[l]) > s->mg_bottom || packed(s->lh[l]) > s->mg_bottom) return false;
    Shader *sh = use(s, SH_MG_BOTTOM);
    shader_set_ivec2(sh, "u_size", s->lw[l], s->lh[l]);
    shader_set_float(sh, "u_h", 1.0f);
    shader_set_texture(sh, "u_div", 0, field_texture(s->mgb[l]));
    shader_set_int(sh, "u_levels", s->nlev - l);
    pass_dispatch_tiles(x->write, s->mg_bottom, s->mg_bottom);
    field_pair_swap(x);
    return true;
}

/* SOLVER_JACOBI_TILE repetitions a dispatch, made at every
 * SOLVER_JACOBI_TILE-th k (pass by pass: one a dispatch) */
static void tiled_pressure_jacobi(Solver *s, int k, int count)
{
    if (!level_tiled(s, 0) || s->one_by_one) pass_jacobi_level(s, 0, false, &s->pres, s->div);
    else if (k % SOLVER_JACOBI_TILE == 0)
        jacobi_tile_iters(s, 0, count - k < SOLVER_JACOBI_TILE ? count - k : SOLVER_JACOBI_TILE, false,
                          false, false, &s->pres, s->div);
}

/* fused: SOLVER_JACOBI_TILE iterations a gather_jacobi_tile dispatch, made
 * at every SOLVER_JACOBI_TILE-th k */
static void tiled_gather_jacobi(Solver *s, int k, int count)
{
    if (!level_tiled(s, 0) || s->one_by_one || s->no_fuse) {
        frag_gather_jacobi(s, k, count);
        return;
    }
    if (k % SOLVER_JACOBI_TILE != 0) return;
    Shader *sh = use(s, SH_GATHER_JACOBI_TILE);
    shader_set_texture(sh, "u_rhs", 0, field_texture(s->grhs));
    shader_set_texture(sh, "u_coef", 2, field_texture(s->gcoef));
    shader_set_texture(sh, "u_e", 1, field_texture(s->gerr.read));
    shader_set_float(sh, "u_a", gather_a(s));
    shader_set_int(sh, "u_iters", count - k < SOLVER_JACOBI_TILE ? count - k : SOLVER_JACOBI_TILE);
    run(s, s->gerr.write);
    field_pair_swap(&s->gerr);
}

/* The tiled substep (transport_tile): in -> out, with k = dt_sub/h from the
 * CPU (plan 0), or substep `index` of the GPU's own count in buffer plan
 * (whose last substep writes dens_out instead). On the last substep out is
 * a density field and ρ*, ρ̃* come from dens. */
static void pass_transport_tile(Solver *s, const Field *vel, const Field *dens, const Field *in,
                                Field *out, Field *dens_out, float umax, float dt_sub, bool last,
                                GLuint plan, int index)
{
    Shader *sh = use(s, SH_TRANSPORT_TILE);
    shader_set_texture(sh, "u_rho", 0, field_texture(in));
    shader_set_texture(sh, "u_vel", 1, field_texture(vel));
    shader_set_texture(sh, "u_dens", 2, field_texture(last || plan ? dens : in));
    shader_set_int(sh, "u_last", last ? 1 : 0);
    shader_set_int(sh, "u_dynamic", plan ? 1 : 0);
    shader_set_int(sh, "u_index", index);
    shader_set_float(sh, "u_k", dt_sub / s->cell);
    shader_set_float(sh, "u_umax", umax);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, plan ? plan : s->plan);
    field_bind_image(dens_out ? dens_out : out, 1); /* u_out_dens: the dynamic count's last */
    if (plan) pass_dispatch_indirect(out, plan, (GLintptr)(16 + 12 * index));
    else pass_dispatch_tiles(out, s->tgx, s->tgy);
}

/* The stage's count: on the GPU (bound <= SOLVER_INDIRECT_MAX: substep_plan
 * writes it and the dispatch arguments into s->plan) or read back. */
static int tiled_transport_begin(Solver *s, const Field *vel, float cap, int bound)
{
    speed_reduce(s, vel, cap);
    s->dynamic = bound <= SOLVER_INDIRECT_MAX;
    if (!s->dynamic) return read_substeps(s, bound);
    Shader *sh = use(s, SH_SUBSTEP_PLAN);
    shader_set_texture(sh, "u_speed", 0, field_texture(s->speed[s->nspeed - 1]));
    shader_set_float(sh, "u_scale", method_speed_scale(s->tdt, s->cell));
    shader_set_float(sh, "u_dt", s->tdt);
    shader_set_int(sh, "u_bound", bound);
    shader_set_ivec2(sh, "u_groups", (s->w + s->tgx - 1) / s->tgx, (s->h + s->tgy - 1) / s->tgy);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, s->plan);
    glDispatchCompute(1, 1, 1);
    glMemoryBarrier(GL_COMMAND_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
    return 0;
}

/* The first substep reads the density field, the others the R32F ρ field;
 * all but the last write the R32F field, the last the density. */
static int tiled_transport_substep(Solver *s, const Field *vel, float cap, int k, int bound)
{
    if (k == 0 && tiled_transport_begin(s, vel, cap, bound) < 0) return -1;
    const Field *in = k == 0 ? s->dens.read : s->rho.read;
    if (s->dynamic) { /* every substep to `bound`, those past the GPU's count empty */
        pass_transport_tile(s, vel, s->dens.read, in, s->rho.write, s->dens.write, cap, 0.0f, false,
                            s->plan, k);
        field_pair_swap(&s->rho);
        if (k == bound - 1) field_pair_swap(&s->dens);
        s->mid_transport = k != bound - 1;
        return 0;
    }
    int n = s->nsub;
    if (k >= n) return 0;
    bool last = k == n - 1;
    s->mid_transport = !last;
    pass_transport_tile(s, vel, s->dens.read, in, last ? s->dens.write : s->rho.write, NULL, cap,
                        s->tdt / (float)n, last, 0, 0);
    field_pair_swap(last ? &s->dens : &s->rho);
    return 0;
}

/* ρ alone (R32F) between the transport's substeps, and substep_plan's buffer */
static int tiled_fields(Solver *s, char *err, size_t errlen)
{
    if (field_pair_create(&s->rho, s->w, s->h, 1, err, errlen) < 0) return -1;
    glGenBuffers(1, &s->plan);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, s->plan);
    static const unsigned char zero[16 + 12 * SOLVER_INDIRECT_MAX];
    glBufferData(GL_SHADER_STORAGE_BUFFER, sizeof zero, zero, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    return 0;
}

static const SolverPasses tiled_passes = {
    .nshaders = SH_COUNT,
    .create_fields = tiled_fields,
    .smooth = tiled_smooth,
    .smooth_restrict = tiled_smooth_restrict,
    .bottom = tiled_bottom,
    .pressure_jacobi = tiled_pressure_jacobi,
    .gather_jacobi = tiled_gather_jacobi,
    .transport_substep = tiled_transport_substep,
};

/* ---- the step --------------------------------------------------------------- */

/* solver_pass's first stage: the step's values the passes read. */
static void take_step_values(Solver *s, const MethodStep *st)
{
    s->vf_now = st->p.vf;
    s->rg_now = st->rg;
    s->off_now = st->p.off_pull;
    s->rd_now = st->rd;
    s->umax_now = st->umax_flow;
    s->kb_now = st->kb;
    s->noise_now = st->noise;
    s->ga_now = st->gather_a;
    s->balance_now = st->balance;
    s->partial_now = st->force_partial;
}

/* One pass of the method's list (method.h), on the solver's fields. The
 * step's eased v_f and fade factor come from the plan. */
static int solver_pass(void *self, MethodPass pass, int k, const MethodStep *st)
{
    Solver *s = self;
    take_step_values(s, st);
    int count = method_stage_count(st, pass);
    int last = count > 0 && k == count - 1; /* the stage's last repetition: where its timer mark goes */
    if (count == 0) count = 1;
    switch (pass) {
    case METHOD_PASS_BLUR_RHO:
        pass_blur(s, s->dens.read, 0, &s->coarse);
        mark(s, T_BLUR);
        break;
    case METHOD_PASS_POTENTIAL_RHS: pass_potential_rhs(s, s->dens.read, s->div); break;
    case METHOD_PASS_POTENTIAL_VCYCLE: vcycle(s, 0, &s->pot, s->div); break;
    case METHOD_PASS_FORCE:
        if (pass_force(s, s->vel.read, s->dens.read, s->coarse.read, s->pot.read, s->vel.write) < 0) return -1;
        field_pair_swap(&s->vel);
        mark(s, T_FORCE);
        break;
    case METHOD_PASS_ADVECT_VEL:
        pass_advect_vel(s, s->vel.read, s->vel.write);
        field_pair_swap(&s->vel);
        mark(s, T_ADVECT_VEL);
        break;
    case METHOD_PASS_DIVERGENCE:
        pass_divergence(s, s->vel.read, s->div);
        mark(s, T_DIV);
        break;
    case METHOD_PASS_PRESSURE_VCYCLE:
        vcycle(s, 0, &s->pres, s->div);
        if (last) mark(s, T_JACOBI);
        break;
    case METHOD_PASS_PRESSURE_JACOBI: /* tiled: SOLVER_JACOBI_TILE repetitions a dispatch */
        s->passes->pressure_jacobi(s, k, count);
        if (last) mark(s, T_JACOBI);
        break;
    case METHOD_PASS_SUBTRACT_GRAD:
        pass_subtract_grad(s, s->vel.read, s->pres.read, s->vel.write);
        field_pair_swap(&s->vel);
        mark(s, T_SUBTRACT);
        break;
    case METHOD_PASS_DRIFT_VEL: /* the transport's face speeds: clamped (and paced) flow + drift */
        pass_drift_vel(s, s->dens.read, s->coarse.read, s->pot.read, s->drift);
        s->drift_ran = true;
        mark(s, T_DRIFT);
        break;
    case METHOD_PASS_ADVECT_DENSITY: /* the substeps the speed needs (method.h), by u or u + w */
        if (!s->drift_ran && k == 0) mark(s, T_DRIFT); /* no drift: an empty drift group */
        if (k == 0) { /* the stage's time (a long key's slow motion) and the motion vectors' share */
            s->tdt = s->p.dt * method_transport_share(st, s->drift_ran);
            s->flow_share = method_transport_share(st, false);
        }
        if (s->passes->transport_substep(s, s->drift_ran ? s->drift : s->vel.read, method_transport_cap(&s->p), k,
                                         count) < 0)
            return -1;
        if (last) mark(s, T_ADVECT_DENS);
        break;
    case METHOD_PASS_MIX: /* by the flow's strain, in the flow's share of the step */
        if (mix_fields(s) < 0) return -1;
        if (k == 0) /* ρ̃ still in the coarse field from the step's first pass, as for the drift */
            pass_mix_coef(s, s->vel.read, s->dens.read, s->coarse.read, method_mix_k(s->w, s->h, st, count),
                          st->mix_edge_w, method_mix_near(st), s->mixd);
        pass_mix(s, s->dens.read, s->mixd, &s->mixe, k == 0);
        if (k == count - 1) {
            pass_mix_apply(s, s->dens.read, s->mixe.read, s->dens.write);
            field_pair_swap(&s->dens);
        }
        break;
    case METHOD_PASS_GATHER_BEGIN:
        pass_gather_begin(s, s->dens.read, s->gcoef, s->grhs); break;
    case METHOD_PASS_GATHER_JACOBI: /* from the last step's e; tiled: SOLVER_JACOBI_TILE a dispatch */
        s->passes->gather_jacobi(s, k, count);
        break;
    case METHOD_PASS_GATHER_APPLY:
        /* substep k of method_gather_substeps: a/count, from the density now */
        pass_gather_apply(s, s->dens.read, s->gerr.read, s->ratio, s->dens.write,
                          gather_a(s) / (float)count);
        field_pair_swap(&s->dens);
        break;
    case METHOD_PASS_COUNT: break;
    }
    return 0;
}


static int blur_for_next_step(Solver *s, bool again);

void solver_step_begin(Solver *s, MethodStep *st)
{
    blur_for_next_step(s, false); /* coarse to fine: this step's σ (out of memory: the last one's) */
    method_plan(&s->p, method_grid(s->w, s->h), s->nstep++, s->kstep++, s->dscale, st);
    s->marked = 0;
    mark(s, T_START);
    s->nsub = 0;
    s->drift_ran = false;
    s->dynamic = false;
    s->mid_transport = false;
    s->whole_step = true;
}

int solver_step_pass(Solver *s, MethodPass pass, int k, const MethodStep *st)
{
    s->one_by_one = true;
    int rc = solver_pass(s, pass, k, st);
    s->one_by_one = false;
    return rc < 0 ? -1 : gl_check("solver", method_pass_name(pass));
}

int solver_step(Solver *s) { return solver_step_parts(s, METHOD_PART_ALL, false); }

int solver_copy_velocity(Solver *dst, const Solver *src)
{
    field_sync();
    glBindFramebuffer(GL_READ_FRAMEBUFFER, field_framebuffer(src->vel.read));
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, field_framebuffer(dst->vel.read));
    glBlitFramebuffer(0, 0, src->w, src->h, 0, 0, dst->w, dst->h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return gl_check("solver", "copying the shared velocity");
}

int solver_step_parts(Solver *s, unsigned parts, bool force_partial)
{
    if (parts & METHOD_PART_FORCE) solver_step_begin(s, &s->step_plan); /* a new step, for every part */
    s->whole_step = parts == METHOD_PART_ALL; /* the timers: whole steps only */
    s->step_plan.force_partial = force_partial;
    method_run_parts(&s->step_plan, parts, solver_pass, s);
    if (!(parts & METHOD_PART_DENSITY)) return gl_check("solver", "part of a step");
    return solver_step_end(s);
}

int solver_step_end(Solver *s)
{
    bool whole = s->whole_step;
    if (!(s->marked & 1u << T_DRIFT)) mark(s, T_DRIFT); /* a part without transport */
    if (!(s->marked & 1u << T_ADVECT_DENS)) mark(s, T_ADVECT_DENS);
    mark(s, T_GATHER);
    if (s->timing && whole) {
        GLuint64 t[T_COUNT];
        for (int k = 0; k < T_COUNT; k++) glGetQueryObjectui64v(s->queries[k], GL_QUERY_RESULT, &t[k]);
        double *dst[T_COUNT - 1] = {&s->times.blur, &s->times.force, &s->times.advect_vel,
                                    &s->times.divergence, &s->times.jacobi, &s->times.subtract,
                                    &s->times.drift, &s->times.advect_density, &s->times.gather};
        static const int bytes_at[T_COUNT - 1] = {0, 1, 2, 3, 4, 5, 7, 6, 8}; /* SolverTimes.bytes' order */
        for (int k = 1; k < T_COUNT; k++) {
            *dst[k - 1] += (double)(t[k] - t[k - 1]) * 1e-6;
            s->times.bytes[bytes_at[k - 1]] += (double)(s->mbytes[k] - s->mbytes[k - 1]);
        }
        /* the indirect dispatches count no bytes themselves (the CPU does
         * not know how many ran): solver_times adds them from the GPU's
         * running total; here only the stages that ran on it */
        s->dyn_stages += s->dynamic;
        s->times.steps++;
    }
    /* bound the queue: wait for the step SOLVER_STEPS_IN_FLIGHT back */
    GLsync *slot = &s->inflight[s->inflight_next];
    if (*slot) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        GLenum w = glClientWaitSync(*slot, GL_SYNC_FLUSH_COMMANDS_BIT, (GLuint64)10 * 1000000000u);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        s->wait_s += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        glDeleteSync(*slot);
        *slot = NULL;
        if (w == GL_TIMEOUT_EXPIRED || w == GL_WAIT_FAILED) {
            log_error("solver", "the GPU has not finished a step in 10 s (%s)",
                      w == GL_WAIT_FAILED ? "wait failed" : "timed out");
            return -1;
        }
    }
    *slot = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    s->inflight_next = (s->inflight_next + 1) % SOLVER_STEPS_IN_FLIGHT;
    unfaded(s); /* single passes (tests) run unfaded */
    return gl_check("solver", "a step");
}

int solver_substeps(Solver *s, int stage)
{
    if (stage != 0) return -1;
    if (!s->dynamic) return s->nsub;
    GLuint n = 0;
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, s->plan);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT); /* substep_plan wrote it */
    glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof n, &n);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    return gl_check("solver", "reading the substep count") < 0 ? -1 : (int)n;
}

/* ---- create / free ---------------------------------------------------------- */

bool solver_tiles_wanted(const SolverOptions *o)
{
    int tiles = o ? o->tiles : 0; /* --compute-tiles auto|on|off */
    return tiles == 1 || (tiles == 0 && !shader_software_renderer());
}

/* transport_tile's work group: SOLVER_TRANSPORT_GX x GY, or the options'
 * (--transport-group WxH, checked by config) */
static void transport_group(const SolverOptions *o, int *gx, int *gy)
{
    *gx = o && o->transport_gx > 0 ? o->transport_gx : SOLVER_TRANSPORT_GX;
    *gy = o && o->transport_gy > 0 ? o->transport_gy : SOLVER_TRANSPORT_GY;
}

/* mg_bottom's side: SOLVER_MG_BOTTOM, or the options' (--mg-bottom: the
 * index of auto, 0, 4, 8, 16, 32) */
static int mg_bottom_side(const SolverOptions *o)
{
    static const int side[] = {SOLVER_MG_BOTTOM, 0, 4, 8, 16, 32};
    int k = o ? o->mg_bottom : 0;
    return k >= 0 && k < 6 ? side[k] : SOLVER_MG_BOTTOM;
}

static int create_fields(Solver *s, char *err, size_t errlen)
{
    if (field_pair_create(&s->vel, s->w, s->h, 2, err, errlen) < 0) return -1; /* u, v */
    if (field_pair_create(&s->dens, s->w, s->h, 4, err, errlen) < 0) return -1;
    if (field_pair_create(&s->pres, packed(s->w), packed(s->h), 4, err, errlen) < 0) return -1;
    if (field_pair_create(&s->pot, packed(s->w), packed(s->h), 4, err, errlen) < 0) return -1;
    if (field_pair_create(&s->gerr, packed(s->w), packed(s->h), 4, err, errlen) < 0) return -1;
    if (!(s->gcoef = field_create(packed(s->w), packed(s->h), 4, err, errlen))) return -1;
    if (!(s->grhs = field_create(packed(s->w), packed(s->h), 4, err, errlen))) return -1;
    if (field_pair_create(&s->coarse, s->blur.cw, s->blur.ch, 1, err, errlen) < 0) return -1;
    if (field_pair_create(&s->stats, s->blur.cw, s->blur.ch, 4, err, errlen) < 0) return -1;
    if (!(s->div = field_create(packed(s->w), packed(s->h), 4, err, errlen))) return -1;
    if (!(s->ratio = field_create(s->w, s->h, 4, err, errlen))) return -1; /* ratio, 2 fluxes */
    if (!(s->drift = field_create(s->w, s->h, 2, err, errlen))) return -1; /* wu, wv */
    if (!(s->cover_rows = field_create(1, s->h, 2, err, errlen))) return -1; /* ≥ the coarse rows */
    if (!(s->cover = field_create(1, 1, 1, err, errlen))) return -1;
    if (!(s->dsum = field_create((s->w + SOLVER_DOWNSAMPLE_SPLIT - 1) / SOLVER_DOWNSAMPLE_SPLIT,
                                 (s->h + SOLVER_DOWNSAMPLE_SPLIT - 1) / SOLVER_DOWNSAMPLE_SPLIT, 2, err,
                                 errlen)))
        return -1;
    if (!(s->dsum4 = field_create((s->w + SOLVER_DOWNSAMPLE_SPLIT - 1) / SOLVER_DOWNSAMPLE_SPLIT,
                                  (s->h + SOLVER_DOWNSAMPLE_SPLIT - 1) / SOLVER_DOWNSAMPLE_SPLIT, 4, err,
                                  errlen)))
        return -1;
    if (!(s->scratch = field_create(s->w, s->h, 1, err, errlen))) return -1;
    for (int w = s->w, h = s->h; s->nspeed == 0 || w > 1 || h > 1; s->nspeed++) {
        w = (w + SOLVER_SPEED_BLOCK - 1) / SOLVER_SPEED_BLOCK;
        h = (h + SOLVER_SPEED_BLOCK - 1) / SOLVER_SPEED_BLOCK;
        if (s->nspeed == SOLVER_SPEED_LEVELS) {
            snprintf(err, errlen, "solver: a %dx%d grid is too large for the speed reduction", s->w, s->h);
            return -1;
        }
        if (!(s->speed[s->nspeed] = field_create(w, h, 1, err, errlen))) return -1;
    }
    s->nlev = method_mg_levels(s->w, s->h, s->lw, s->lh);
    for (int l = 1; l < s->nlev; l++) {
        int pw = packed(s->lw[l]), ph = packed(s->lh[l]);
        if (field_pair_create(&s->mgx[l], pw, ph, 4, err, errlen) < 0) return -1;
        if (!(s->mgb[l] = field_create(pw, ph, 4, err, errlen))) return -1;
    }
    return s->passes->create_fields(s, err, errlen);
}

Solver *solver_create(int w, int h, const SolverParams *p, SolverKind kind, const char *shader_dir,
                      char *err, size_t errlen)
{
    return solver_create_opts(w, h, p, NULL, kind, shader_dir, err, errlen);
}

Solver *solver_create_opts(int w, int h, const SolverParams *p, const SolverOptions *o, SolverKind kind,
                           const char *shader_dir, char *err, size_t errlen)
{
    if (kind == SOLVER_COMPUTE && !shader_compute_available()) {
        snprintf(err, errlen, "the compute backend needs OpenGL 4.3; this context has %s "
                 "(use --backend fragment)", (const char *)glGetString(GL_VERSION));
        return NULL;
    }
    Solver *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->kind = kind;
    s->prim = kind == SOLVER_COMPUTE ? pass_dispatch : pass_draw;
    s->passes = kind == SOLVER_COMPUTE && solver_tiles_wanted(o) ? &tiled_passes : &fragment_passes;
    s->w = w;
    s->h = h;
    s->cell = cell_size(w, h);
    s->p = *p;
    method_params_settle(&s->p);
    unfaded(s);
    method_blur_spec(w, h, s->p.sigma, &s->blur);
    s->blur_sigma = s->p.sigma;
    char defines[512]; /* the method's constants, for every pass (never typed in GLSL) */
    method_glsl_defines(defines, sizeof defines);
    size_t dl = strlen(defines);
    transport_group(o, &s->tgx, &s->tgy);
    s->mg_bottom = mg_bottom_side(o);
    s->no_fuse = o && o->no_fuse; /* --no-mg-fuse: bench sweeps, test_mg_bottom */
    snprintf(defines + dl, sizeof defines - dl,
             "#define SM_JACOBI_TILE %d\n#define SM_TRANSPORT_GX %d\n#define SM_TRANSPORT_GY %d\n"
             "#define SM_MG_BOTTOM %d\n",
             SOLVER_JACOBI_TILE, s->tgx, s->tgy, s->mg_bottom > 0 ? s->mg_bottom : 4);
    for (int k = 0; k < s->passes->nshaders; k++)
        if (!(s->sh[k] = shader_load_pass(shader_dir, shader_files[k],
                                          kind == SOLVER_COMPUTE ? SHADER_COMPUTE : SHADER_FRAGMENT,
                                          defines, err, errlen)))
            goto fail;
    if (create_fields(s, err, errlen) < 0) goto fail;
    glGenQueries(T_COUNT, s->queries);
    if (gl_check("solver", "creating the fields") < 0) {
        snprintf(err, errlen, "a GL error while creating the %dx%d fields (out of GPU memory?)", w, h);
        goto fail;
    }
    return s;
fail:
    solver_free(s);
    return NULL;
}

void solver_free(Solver *s)
{
    if (!s) return;
    for (int k = 0; k < SH_COUNT; k++) shader_free(s->sh[k]);
    FieldPair *pairs[] = {&s->vel, &s->dens, &s->pres, &s->pot, &s->gerr, &s->coarse, &s->stats, &s->rho, &s->mixe, &s->curl};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) field_pair_free(pairs[k]);
    for (int l = 0; l < s->nspeed; l++) field_free(s->speed[l]);
    if (s->plan) glDeleteBuffers(1, &s->plan);
    for (int k = 0; k < SOLVER_OBSERVE_SLOTS; k++) field_readback_free(s->obs[k]);
    field_free(s->div);
    field_free(s->ratio);
    field_free(s->drift);
    field_free(s->cover_rows);
    field_free(s->cover);
    field_free(s->dsum);
    field_free(s->dsum4);
    field_free(s->gcoef);
    field_free(s->mixd);
    field_free(s->grhs);
    for (int l = 0; l < METHOD_MG_MAX_LEVELS; l++) {
        field_pair_free(&s->mgx[l]);
        field_free(s->mgb[l]);
        field_free(s->mgr[l]);
    }
    field_free(s->scratch);
    for (int k = 0; k < s->nsrc; k++) field_free(s->srcw[k]);
    free(s->srcw);
    if (s->queries[0]) glDeleteQueries(T_COUNT, s->queries);
    for (int k = 0; k < SOLVER_STEPS_IN_FLIGHT; k++)
        if (s->inflight[k]) glDeleteSync(s->inflight[k]);
    free(s);
}

int solver_width(const Solver *s) { return s->w; }
SolverKind solver_kind(const Solver *s) { return s->kind; }
int solver_height(const Solver *s) { return s->h; }
const SolverParams *solver_params(const Solver *s) { return &s->p; }
const BlurSpec *solver_blur(const Solver *s) { return &s->blur; }
unsigned solver_density_texture(const Solver *s) { return field_texture(s->dens.read); }
unsigned solver_velocity_texture(const Solver *s) { return field_texture(s->vel.read); }

/* The blur spec (and coarse fields) for blur width sigma: 1 if it changed,
 * 0 if not, -1 (no memory for the coarse fields: it keeps the one it has). */
static int blur_spec_for(Solver *s, float sigma)
{
    if (sigma == s->blur_sigma) return 0;
    BlurSpec nb;
    method_blur_spec(s->w, s->h, sigma, &nb);
    if (nb.cw != s->blur.cw || nb.ch != s->blur.ch) {
        char err[256];
        FieldPair c = {0}, st = {0};
        if (field_pair_create(&c, nb.cw, nb.ch, 1, err, sizeof err) < 0 ||
            field_pair_create(&st, nb.cw, nb.ch, 4, err, sizeof err) < 0) {
            field_pair_free(&c);
            field_pair_free(&st);
            log_error("solver", "a blur of width %g: %s", (double)sigma, err);
            return -1;
        }
        field_pair_free(&s->coarse);
        field_pair_free(&s->stats);
        s->coarse = c;
        s->stats = st;
    }
    s->blur = nb;
    s->blur_sigma = sigma;
    return 1;
}

/* The blur (spec, coarse fields and the target's blurred channel) for the
 * σ of the next step, kstep (method_sigma: coarse to fine): made again
 * where that σ differs from the one it has, or always with `again`. 0, or
 * -1 (no memory for the coarse fields: it keeps the blur it has). */
static int blur_for_next_step(Solver *s, bool again)
{
    int rc = blur_spec_for(s, method_sigma(&s->p, s->kstep));
    if (rc < 0) return -1;
    if (!rc && !again) return 0;
    pass_blur_target(s);
    return gl_check("solver", "re-blurring the target");
}

int solver_set_params(Solver *s, const SolverParams *p)
{
    s->p = *p;
    method_params_settle(&s->p);
    unfaded(s);
    return blur_for_next_step(s, false);
}

/* ---- state in and out ------------------------------------------------------- */

static float *alloc_cells(const Solver *s, int channels)
{
    return malloc((size_t)s->w * s->h * channels * sizeof(float));
}

int solver_set_density(Solver *s, const float *rho)
{
    size_t n = (size_t)s->w * s->h;
    float *buf = alloc_cells(s, 4);
    if (!buf) return -1;
    /* keep the target channels: read them back first */
    if (field_read(s->dens.read, buf) < 0) goto fail;
    for (size_t k = 0; k < n; k++) buf[4 * k] = rho[k];
    if (field_upload(s->dens.read, buf) < 0) goto fail;
    s->nstep = 0;
    s->kstep = 0;
    s->drift_ran = false; /* no step has moved this density yet */
    if (field_clear(s->vel.read, 0.0f, 0.0f, 0.0f, 0.0f) < 0 ||
        field_clear(s->pres.read, 0.0f, 0.0f, 0.0f, 0.0f) < 0 ||
        field_clear(s->pot.read, 0.0f, 0.0f, 0.0f, 0.0f) < 0 ||
        field_clear(s->gerr.read, 0.0f, 0.0f, 0.0f, 0.0f) < 0)
        goto fail;
    free(buf);
    return 0;
fail:
    free(buf);
    return -1;
}

int solver_set_target(Solver *s, const float *tgt, bool mass_match)
{
    size_t n = (size_t)s->w * s->h;
    double mt = 0.0, mr = 0.0;
    for (size_t k = 0; k < n; k++) mt += tgt[k];
    if (!(mt > 0.0)) return -1;
    float *rho = alloc_cells(s, 1);
    if (!rho) return -1;
    if (solver_read_density(s, rho) < 0) {
        free(rho);
        return -1;
    }
    for (size_t k = 0; k < n; k++) mr += rho[k];
    free(rho);
    float scale = (mass_match && mr > 0.0) ? (float)(mr / mt) : 1.0f;
    return solver_set_target_scaled(s, tgt, scale, mr, false);
}

int solver_set_target_scaled(Solver *s, const float *tgt, float scale, double smoke_mass, bool keep_e)
{
    size_t n = (size_t)s->w * s->h;
    double mt = 0.0, m2 = 0.0;
    for (size_t k = 0; k < n; k++) mt += tgt[k];
    if (!(mt > 0.0)) return -1;
    /* as ref_set_target_scaled: φ's target scale and the density scale Σρ*²/Σρ* */
    for (size_t k = 0; k < n; k++) {
        float t = tgt[k] * scale;
        m2 += (double)t * t;
    }
    s->pot_c = smoke_mass > 0.0 ? (float)(smoke_mass / (mt * scale)) : 1.0f;
    s->dscale = (float)(m2 / (mt * scale));
    if (!keep_e && field_clear(s->gerr.read, 0.0f, 0.0f, 0.0f, 0.0f) < 0) return -1;
    if (!keep_e) s->kstep = 0; /* another target: its arrival's clock */
    if (field_upload(s->scratch, tgt) < 0) return -1;
    Shader *sh = use(s, SH_SET_TARGET);
    shader_set_texture(sh, "u_dens", 0, field_texture(s->dens.read));
    shader_set_texture(sh, "u_tgt", 1, field_texture(s->scratch));
    shader_set_float(sh, "u_scale", scale);
    run(s, s->dens.write);
    field_pair_swap(&s->dens);
    if (blur_for_next_step(s, true) < 0) return -1;
    return gl_check("solver", "setting the target");
}

void solver_set_potential_scale(Solver *s, float c) { s->pot_c = c; }

int solver_set_sources(Solver *s, const float *const *weights, int n)
{
    char err[256];
    for (int k = 0; k < s->nsrc; k++) field_free(s->srcw[k]);
    free(s->srcw);
    s->srcw = NULL;
    s->nsrc = 0;
    if (n <= 0) return 0;
    if (!(s->srcw = calloc((size_t)n, sizeof *s->srcw))) return -1;
    for (int k = 0; k < n; k++) {
        if (!(s->srcw[k] = field_create(s->w, s->h, 1, err, sizeof err))) {
            log_error("solver", "source %d: %s", k + 1, err);
            return -1;
        }
        s->nsrc = k + 1;
        if (field_upload(s->srcw[k], weights[k]) < 0) return -1;
    }
    return gl_check("solver", "uploading the sources");
}

int solver_add_source(Solver *s, int k, float amount)
{
    if (k < 0 || k >= s->nsrc) return -1;
    Shader *sh = use(s, SH_ADD_SOURCE);
    shader_set_texture(sh, "u_dens", 0, field_texture(s->dens.read));
    shader_set_texture(sh, "u_src", 1, field_texture(s->srcw[k]));
    shader_set_float(sh, "u_amount", amount);
    run(s, s->dens.write);
    field_pair_swap(&s->dens);
    return gl_check("solver", "adding a source");
}

/* Read a field back and split its first three channels (NULL: skip; a
 * channel the field lacks reads 0). */
static int read_channels(Solver *s, const Field *f, float *c0, float *c1, float *c2)
{
    size_t n = (size_t)s->w * s->h;
    int nc = field_channels(f);
    float *buf = alloc_cells(s, nc);
    if (!buf) return -1;
    if (field_read(f, buf) < 0) {
        free(buf);
        return -1;
    }
    float *dst[3] = {c0, c1, c2};
    for (int c = 0; c < 3; c++)
        if (dst[c])
            for (size_t k = 0; k < n; k++) dst[c][k] = c < nc ? buf[(size_t)nc * k + (size_t)c] : 0.0f;
    free(buf);
    return 0;
}

int solver_read_fields(Solver *s, float *rho, float *tgt, float *tgt_blur)
{
    return read_channels(s, s->dens.read, rho, tgt, tgt_blur);
}

int solver_read_density(Solver *s, float *rho) { return solver_read_fields(s, rho, NULL, NULL); }

int solver_read_velocity(Solver *s, float *u, float *v)
{
    return read_channels(s, s->vel.read, u, v, NULL);
}

int solver_read_motion(Solver *s, float *u, float *v)
{
    if (s->drift_ran) return read_channels(s, s->drift, u, v, NULL); /* the transport's speeds: flow + drift */
    if (read_channels(s, s->vel.read, u, v, NULL) < 0) return -1;
    size_t n = (size_t)s->w * s->h;
    float um = method_transport_cap(&s->p), r = s->flow_share > 0.0f ? s->flow_share : 1.0f;
    for (size_t k = 0; k < n; k++) { /* the flow as the transport moved smoke by it (a long key: slowed) */
        u[k] = r * (u[k] < -um ? -um : (u[k] > um ? um : u[k]));
        v[k] = r * (v[k] < -um ? -um : (v[k] > um ? um : v[k]));
    }
    return 0;
}

int solver_observe(Solver *s, float *rho, double *mass, double *error, double *max_div)
{
    double e, t;
    if (solver_observe_sums(s, rho, mass, &e, &t, max_div) < 0) return -1;
    if (error) *error = t > 0.0 ? e / t : 0.0;
    return 0;
}

/* What an observation reads back: the density field, or with max|∇·u|
 * wanted one pass that gathers ρ, ρ* and |∇·u| into the ratio field (free
 * between steps), so it is still one read-back. */
static const Field *observe_source(Solver *s, bool max_div)
{
    if (!max_div) return s->dens.read;
    Shader *sh = use(s, SH_OBSERVE);
    shader_set_texture(sh, "u_dens", 0, field_texture(s->dens.read));
    shader_set_texture(sh, "u_vel", 1, field_texture(s->vel.read));
    run(s, s->ratio);
    return s->ratio;
}

int solver_observe_sums(Solver *s, float *rho, double *mass, double *diff, double *target,
                        double *max_div)
{
    size_t n = (size_t)s->w * s->h;
    float *d = alloc_cells(s, 4);
    int rc = -1;
    if (!d) goto done;
    const Field *src = observe_source(s, max_div);
    if (field_read(src, d) < 0) goto done;
    double m = 0.0, e = 0.0, t = 0.0, md = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (rho) rho[k] = d[4 * k];
        m += d[4 * k];
        e += fabs((double)d[4 * k] - d[4 * k + 1]);
        t += d[4 * k + 1];
        if (max_div && d[4 * k + 2] > md) md = d[4 * k + 2];
    }
    if (mass) *mass = m;
    if (diff) *diff = e;
    if (target) *target = t;
    if (max_div) *max_div = md;
    rc = 0;
done:
    free(d);
    return rc;
}

int solver_observe_start(Solver *s, int slot, bool max_div)
{
    if (slot < 0 || slot >= SOLVER_OBSERVE_SLOTS) return -1;
    if (!s->obs[slot] && !(s->obs[slot] = field_readback_create())) return -1;
    /* the ratio field is free between steps, and the next step's passes
     * write it only after this copy in the command stream */
    const Field *src = observe_source(s, max_div);
    s->obs_div[slot] = max_div;
    return field_readback_start(s->obs[slot], src);
}

const float *solver_observe_map(Solver *s, int slot, bool *div)
{
    if (slot < 0 || slot >= SOLVER_OBSERVE_SLOTS || !s->obs[slot]) return NULL;
    if (div) *div = s->obs_div[slot];
    return field_readback_map(s->obs[slot]);
}

void solver_observe_unmap(Solver *s, int slot)
{
    if (slot >= 0 && slot < SOLVER_OBSERVE_SLOTS && s->obs[slot]) field_readback_unmap(s->obs[slot]);
}

int solver_observe_finish(Solver *s, int slot, float *rho, double *mass, double *diff, double *target,
                          double *max_div)
{
    if (slot < 0 || slot >= SOLVER_OBSERVE_SLOTS || !s->obs[slot]) return -1;
    const float *d = field_readback_map(s->obs[slot]);
    if (!d) return -1;
    size_t n = (size_t)s->w * s->h;
    bool div = s->obs_div[slot] && max_div;
    double m = 0.0, e = 0.0, t = 0.0, md = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (rho) rho[k] = d[4 * k];
        m += d[4 * k];
        e += fabs((double)d[4 * k] - d[4 * k + 1]);
        t += d[4 * k + 1];
        if (div && d[4 * k + 2] > md) md = d[4 * k + 2];
    }
    field_readback_unmap(s->obs[slot]);
    if (mass) *mass = m;
    if (diff) *diff = e;
    if (target) *target = t;
    if (max_div) *max_div = md;
    return 0;
}

int solver_metrics(Solver *s, double *mass, double *error, double *max_div)
{
    return solver_observe(s, NULL, mass, error, max_div);
}

int solver_stir(Solver *s, float x, float y, float fx, float fy, float radius)
{
    Shader *sh = use(s, SH_SPLAT);
    shader_set_texture(sh, "u_vel", 0, field_texture(s->vel.read));
    shader_set_vec2(sh, "u_point", x, y);
    shader_set_vec2(sh, "u_force", fx, fy);
    shader_set_float(sh, "u_radius", radius);
    shader_set_float(sh, "u_umax", s->p.umax);
    run(s, s->vel.write);
    field_pair_swap(&s->vel);
    return gl_check("solver", "stirring");
}

int solver_splat_density(Solver *s, float x, float y, float amount, float radius)
{
    Shader *sh = use(s, SH_SPLAT_DENSITY);
    shader_set_texture(sh, "u_dens", 0, field_texture(s->dens.read));
    shader_set_vec2(sh, "u_point", x, y);
    shader_set_float(sh, "u_amount", amount);
    shader_set_float(sh, "u_radius", radius);
    run(s, s->dens.write);
    field_pair_swap(&s->dens);
    return gl_check("solver", "adding or erasing smoke");
}

/* ---- single passes for tests ------------------------------------------------- */

static Field *field_of(Solver *s, SolverField f)
{
    switch (f) {
    case SOLVER_FIELD_DENSITY: return s->dens.read;
    case SOLVER_FIELD_VELOCITY: return s->vel.read;
    case SOLVER_FIELD_PRESSURE: return s->pres.read;
    case SOLVER_FIELD_DIVERGENCE: return s->div;
    case SOLVER_FIELD_GATHER_E: return s->gerr.read;
    case SOLVER_FIELD_RHO_BLUR: return s->coarse.read;
    case SOLVER_FIELD_RATIO: return s->ratio;
    case SOLVER_FIELD_POTENTIAL: return s->pot.read;
    case SOLVER_FIELD_DRIFT: return s->drift;
    }
    return NULL;
}

static bool is_packed(SolverField f)
{
    return f == SOLVER_FIELD_PRESSURE || f == SOLVER_FIELD_DIVERGENCE || f == SOLVER_FIELD_GATHER_E ||
           f == SOLVER_FIELD_POTENTIAL;
}

/* cell (i, j) of a w x h field <-> its place in the packed RGBA texels */
static size_t packed_index(int w, int i, int j)
{
    return ((size_t)(j / 2) * (size_t)packed(w) + (size_t)(i / 2)) * 4 + (size_t)(i % 2 + 2 * (j % 2));
}

int solver_debug_upload(Solver *s, SolverField f, const float *data)
{
    if (f == SOLVER_FIELD_RATIO) return -1; /* an output only (.r of an RGBA field) */
    Field *fl = field_of(s, f);
    if (!is_packed(f) && field_channels(fl) == 2) { /* the API's 4 floats a cell, to RG */
        size_t n = (size_t)s->w * s->h;
        float *rg = malloc(n * 2 * sizeof(float));
        if (!rg) return -1;
        for (size_t k = 0; k < n; k++) rg[2 * k] = data[4 * k], rg[2 * k + 1] = data[4 * k + 1];
        int rc = field_upload(fl, rg);
        free(rg);
        return rc;
    }
    if (!is_packed(f)) return field_upload(fl, data);
    size_t np = (size_t)packed(s->w) * packed(s->h) * 4;
    float *buf = calloc(np, sizeof(float));
    if (!buf) return -1;
    for (int j = 0; j < s->h; j++)
        for (int i = 0; i < s->w; i++) buf[packed_index(s->w, i, j)] = data[(size_t)j * s->w + i];
    int rc = field_upload(field_of(s, f), buf);
    free(buf);
    return rc;
}

int solver_debug_read(Solver *s, SolverField f, float *out)
{
    if (f == SOLVER_FIELD_RATIO) return read_channels(s, s->ratio, out, NULL, NULL);
    Field *fl = field_of(s, f);
    if (!is_packed(f) && field_channels(fl) == 2) { /* RG to the API's 4 floats a cell */
        size_t n = (size_t)s->w * s->h;
        float *rg = malloc(n * 2 * sizeof(float));
        if (!rg || field_read(fl, rg) < 0) {
            free(rg);
            return -1;
        }
        for (size_t k = 0; k < n; k++)
            out[4 * k] = rg[2 * k], out[4 * k + 1] = rg[2 * k + 1], out[4 * k + 2] = out[4 * k + 3] = 0.0f;
        free(rg);
        return 0;
    }
    if (!is_packed(f)) return field_read(fl, out);
    size_t np = (size_t)packed(s->w) * packed(s->h) * 4;
    float *buf = malloc(np * sizeof(float));
    if (!buf || field_read(field_of(s, f), buf) < 0) {
        free(buf);
        return -1;
    }
    for (int j = 0; j < s->h; j++)
        for (int i = 0; i < s->w; i++) out[(size_t)j * s->w + i] = buf[packed_index(s->w, i, j)];
    free(buf);
    return 0;
}

int solver_read_output(Solver *s, MethodOut f, float *a, float *b)
{
    SolverField which;
    switch (f) {
    case METHOD_OUT_RHO_BLUR: which = SOLVER_FIELD_RHO_BLUR; break;
    case METHOD_OUT_POTENTIAL_RHS:
    case METHOD_OUT_DIVERGENCE: which = SOLVER_FIELD_DIVERGENCE; break;
    case METHOD_OUT_POTENTIAL: which = SOLVER_FIELD_POTENTIAL; break;
    case METHOD_OUT_PRESSURE: which = SOLVER_FIELD_PRESSURE; break;
    case METHOD_OUT_GATHER_E: which = SOLVER_FIELD_GATHER_E; break;
    case METHOD_OUT_DENSITY:
        if (s->mid_transport) return read_channels(s, s->rho.read, a, NULL, NULL);
        return read_channels(s, s->dens.read, a, NULL, NULL);
    case METHOD_OUT_VELOCITY: return read_channels(s, s->vel.read, a, b, NULL);
    case METHOD_OUT_DRIFT: return read_channels(s, s->drift, a, b, NULL);
    default: return -1;
    }
    return solver_debug_read(s, which, a);
}

/* The method's passes, one at a time, with the plan of an unfaded step (as
 * a step long after the start): what the single-pass tests compare. */
static void debug_plan(const Solver *s, MethodStep *st)
{
    SolverParams p = s->p;
    p.framp = p.tramp = p.arrive = 0.0f;
    method_plan(&p, method_grid(s->w, s->h), 0, 0, s->dscale, st);
}

/* One repetition of a pass, as the stage's only one (a transport substep
 * then reads and writes the density field). */
static void debug_run(Solver *s, MethodPass pass)
{
    MethodStep st;
    debug_plan(s, &st);
    for (int q = 0; q < st.n; q++)
        if (st.stage[q].pass == pass) st.stage[q].count = 1;
    solver_pass(s, pass, 0, &st);
}

/* The plan's stages from `from` to `to` (in the list's order), each as often
 * as the plan says: e.g. ρ̃, φ (when the balance force is on) and the force. */
static void debug_run_stages(Solver *s, MethodPass from, MethodPass to)
{
    MethodStep st;
    debug_plan(s, &st);
    for (int q = 0; q < st.n; q++)
        if (st.stage[q].pass >= from && st.stage[q].pass <= to)
            for (int k = 0; k < st.stage[q].count; k++) solver_pass(s, st.stage[q].pass, k, &st);
}

int solver_debug_pass(Solver *s, SolverPass pass, bool first)
{
    switch (pass) {
    case SOLVER_PASS_BLUR_DENSITY: debug_run(s, METHOD_PASS_BLUR_RHO); break;
    case SOLVER_PASS_FORCE: debug_run_stages(s, METHOD_PASS_BLUR_RHO, METHOD_PASS_FORCE); break;
    case SOLVER_PASS_ADVECT_VEL: debug_run(s, METHOD_PASS_ADVECT_VEL); break;
    case SOLVER_PASS_DIVERGENCE: debug_run(s, METHOD_PASS_DIVERGENCE); break;
    case SOLVER_PASS_JACOBI: debug_run(s, METHOD_PASS_PRESSURE_JACOBI); break;
    case SOLVER_PASS_VCYCLE: debug_run(s, METHOD_PASS_PRESSURE_VCYCLE); break;
    case SOLVER_PASS_SUBTRACT_GRAD: debug_run(s, METHOD_PASS_SUBTRACT_GRAD); break;
    case SOLVER_PASS_ADVECT_DENSITY: /* the whole stage: its count follows the speed */
        debug_run_stages(s, METHOD_PASS_ADVECT_DENSITY, METHOD_PASS_ADVECT_DENSITY);
        break;
    case SOLVER_PASS_GATHER_JACOBI:
        debug_run(s, METHOD_PASS_GATHER_BEGIN);
        if (first) { /* the first iteration, from e = 0 */
            unfaded(s);
            pass_gather_jacobi(s, s->grhs, s->gcoef, s->gerr.read, s->gerr.write, true);
            field_pair_swap(&s->gerr);
        } else {
            debug_run(s, METHOD_PASS_GATHER_JACOBI);
        }
        break;
    case SOLVER_PASS_GATHER_APPLY: debug_run(s, METHOD_PASS_GATHER_APPLY); break;
    case SOLVER_PASS_DRIFT_VEL:
        debug_run(s, METHOD_PASS_BLUR_RHO);
        debug_run(s, METHOD_PASS_DRIFT_VEL);
        break;
    }
    unfaded(s); /* single passes run unfaded */
    return gl_check("solver", "a single pass");
}

/* ---- the state for checkpoints ------------------------------------------------ */

/* Through the fields' own read-back and upload (read_channels and
 * upload_channels by each field's channel count; solver_debug_* for the
 * packed ones), so a change of layout on the GPU changes nothing here. The
 * density's and the velocity's unused channels are 0, as every pass writes
 * them. */
int solver_get_state(Solver *s, MethodState *st)
{
    float **f = st->field;
    if (read_channels(s, s->dens.read, f[METHOD_FIELD_DENSITY], f[METHOD_FIELD_TARGET],
                      f[METHOD_FIELD_TARGET_BLUR]) < 0 ||
        read_channels(s, s->vel.read, f[METHOD_FIELD_VEL_U], f[METHOD_FIELD_VEL_V], NULL) < 0 ||
        solver_debug_read(s, SOLVER_FIELD_PRESSURE, f[METHOD_FIELD_PRESSURE]) < 0 ||
        solver_debug_read(s, SOLVER_FIELD_POTENTIAL, f[METHOD_FIELD_POTENTIAL]) < 0 ||
        solver_debug_read(s, SOLVER_FIELD_GATHER_E, f[METHOD_FIELD_GATHER_E]) < 0)
        return -1;
    st->pot_c = s->pot_c;
    st->dscale = s->dscale;
    st->nstep = s->nstep;
    st->kstep = s->kstep;
    return gl_check("solver", "reading the state back");
}

/* Upload three W*H channels into an RGBA, RG or R field (NULL or a channel
 * the field lacks: left out; the rest 0), as read_channels reads them. */
static int upload_channels(Solver *s, Field *f, const float *c0, const float *c1, const float *c2)
{
    size_t n = (size_t)s->w * s->h;
    int nc = field_channels(f);
    float *buf = calloc((size_t)nc * n, sizeof(float));
    if (!buf) return -1;
    const float *src[3] = {c0, c1, c2};
    for (int c = 0; c < 3 && c < nc; c++)
        if (src[c])
            for (size_t k = 0; k < n; k++) buf[(size_t)nc * k + (size_t)c] = src[c][k];
    int rc = field_upload(f, buf);
    free(buf);
    return rc;
}

int solver_set_state(Solver *s, const MethodState *st)
{
    float *const *f = st->field;
    if (upload_channels(s, s->dens.read, f[METHOD_FIELD_DENSITY], f[METHOD_FIELD_TARGET],
                        f[METHOD_FIELD_TARGET_BLUR]) < 0 ||
        upload_channels(s, s->vel.read, f[METHOD_FIELD_VEL_U], f[METHOD_FIELD_VEL_V], NULL) < 0 ||
        solver_debug_upload(s, SOLVER_FIELD_PRESSURE, f[METHOD_FIELD_PRESSURE]) < 0 ||
        solver_debug_upload(s, SOLVER_FIELD_POTENTIAL, f[METHOD_FIELD_POTENTIAL]) < 0 ||
        solver_debug_upload(s, SOLVER_FIELD_GATHER_E, f[METHOD_FIELD_GATHER_E]) < 0)
        return -1;
    s->pot_c = st->pot_c;
    s->dscale = st->dscale;
    s->nstep = st->nstep;
    s->kstep = st->kstep;
    /* its target blur is of the last step it ran (or of its target's setting):
     * the next step blurs again where its σ differs, as it would have */
    if (blur_spec_for(s, method_sigma(&s->p, s->kstep > 0 ? s->kstep - 1 : 0)) < 0) return -1;
    return gl_check("solver", "uploading the state");
}

/* ---- timing ------------------------------------------------------------------ */

/* substep_plan's running total of the transport's substeps (a read-back) */
static unsigned plan_total(Solver *s)
{
    GLuint t = 0;
    if (!s->plan) return 0;
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, s->plan);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT); /* substep_plan wrote it */
    glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 8, sizeof t, &t);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    return t;
}

void solver_enable_timing(Solver *s, bool on)
{
    s->timing = on;
    pass_count_bytes(on);
    memset(&s->times, 0, sizeof s->times);
    s->total0 = on ? plan_total(s) : 0;
    s->dyn_stages = 0;
}

double solver_wait_seconds(const Solver *s) { return s->wait_s; }

int solver_times(Solver *s, SolverTimes *out)
{
    *out = s->times;
    /* the GPU-counted substeps: ρ and the face speeds in, ρ out a substep;
     * a stage's first reads the RGBA density, its last writes it and reads
     * ρ*, ρ̃* */
    double cells = (double)s->w * s->h;
    if (s->timing) {
        double n = (double)(plan_total(s) - s->total0);
        out->bytes[6] += cells * (16.0 * n + 40.0 * (double)s->dyn_stages);
    }
    return s->timing ? 0 : -1;
}
