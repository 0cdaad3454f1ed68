/* guard: what a run may touch (issue 21, "never touch what isn't ours").
 * The run's inputs are noted as they are read, so that no output resolves to
 * one; output paths are resolved (symlinks, "..", absolute) and a scene's
 * are confined to the scene's folder. GL-free, libc only.
 *
 *   guard_note_input("a.png");                       // as each input is read
 *   const char *in = guard_input_of("out/a.png");    // "a.png": refuse
 *   char real[PATH_MAX];
 *   guard_resolve("../photos/x.png", real, sizeof real);
 *   if (!guard_inside("../photos/x.png", "/home/me/scene")) refuse(...);
 */
#ifndef SMOKEMORPH_GUARD_H
#define SMOKEMORPH_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Remember path as an input of this run (its device and inode); a path that
 * cannot be stat'ed is not remembered. */
void guard_note_input(const char *path);
/* The input (as it was named) that path is the same file as, or NULL. */
const char *guard_input_of(const char *path);
/* Forget every input (tests). */
void guard_forget_inputs(void);

/* Path made absolute with every symlink resolved, though it need not exist:
 * the real path of its deepest existing ancestor, then the rest, in which
 * "." is dropped and ".." is refused (it could step out through a symlink
 * made later). 0, or -1 (errno: ENAMETOOLONG, ENOENT for "..", or
 * realpath's). */
int guard_resolve(const char *path, char *out, size_t n);
/* Whether path resolves to dir (resolved too) or somewhere under it. */
bool guard_inside(const char *path, const char *dir);
/* mkdir -p PATH (an output folder: checkpoints, a compare's frames); 0, or
 * -1 with errno. */
int guard_mkdirs(const char *path);

#endif
