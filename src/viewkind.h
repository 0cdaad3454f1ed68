/* viewkind: the window's views by name, GL-free and solver-free, so that
 * config reads --view (settings.def) without linking what computes them
 * (viewfield).
 *
 *   ViewKind v = VIEW_PRESSURE;   // "pressure", in the order 'v' cycles them
 */
#ifndef SMOKEMORPH_VIEWKIND_H
#define SMOKEMORPH_VIEWKIND_H

/* X(ID, name): every view, in the order the `v` key cycles them. */
#define VIEWKIND_LIST(X)                                                                          \
    X(DENSITY, "density")                                                                         \
    X(TARGET, "target")                                                                           \
    X(BLURRED, "blurred")                                                                         \
    X(VELOCITY, "velocity")                                                                       \
    X(SPEED, "speed")                                                                             \
    X(VORTICITY, "vorticity")                                                                     \
    X(PRESSURE, "pressure")                                                                       \
    X(DIVERGENCE, "divergence")                                                                   \
    X(FORCE, "force")                                                                             \
    X(GATHERING, "gathering")                                                                     \
    X(FIG2, "fig2")

#define VIEWKIND_ENUM(ID, NAME) VIEW_##ID,
typedef enum { VIEWKIND_LIST(VIEWKIND_ENUM) VIEW_COUNT } ViewKind;
#undef VIEWKIND_ENUM

/* "density|target|...|fig2|": --view's choices (settings.def) */
#define VIEWKIND_CHOICE(ID, NAME) NAME "|"
#define VIEWKIND_CHOICES VIEWKIND_LIST(VIEWKIND_CHOICE)

#endif
