/* shader: load a pass's fragment shader from shaders/, with #include and
 * #line so compile errors name the real file and line; uniforms by name.
 *
 *   char dir[4096], err[1024];
 *   if (shader_find_dir(cfg.shader_dir, argv[0], dir, sizeof dir, err, sizeof err) != 0)
 *       die("main", "%s", err);
 *   Shader *jac = shader_load(dir, "jacobi.glsl", err, sizeof err);
 *   if (!jac) die("main", "%s", err);   // "shader: jacobi.glsl:12: error: ..."
 *   shader_use(jac);
 *   shader_set_texture(jac, "u_p", 0, field_texture(p.read));
 *   shader_set_float(jac, "u_alpha", -h * h);
 *   pass_draw(p.write);
 *   shader_free(jac);
 *
 * A fragment shader file has no #version line (the loader writes
 * "#version 330 core" first and drops any #version it finds) and may use
 *   #include "common.glsl"
 * (relative to the shader directory, nested up to 16 deep, each file
 * included at most once per shader). The built-in vertex shader draws one
 * full-screen triangle from gl_VertexID and passes `out vec2 v_uv` (0..1
 * over the target); a fragment shader may declare `in vec2 v_uv;` or not.
 * Errors in err carry the "shader: " tag; a compile log may span lines.
 */
#ifndef SMOKEMORPH_SHADER_H
#define SMOKEMORPH_SHADER_H

#include <GL/glew.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct Shader Shader;

/* The shader directory, written to out: `override` (--shader-dir) when given,
 * which must hold common.glsl; else the first of <exe dir>/shaders,
 * <exe dir>/../shaders, SMOKEMORPH_DATADIR/shaders and ./shaders that holds
 * common.glsl (the exe dir from /proc/self/exe, else argv0). 0 or -1. */
int shader_find_dir(const char *override, const char *argv0, char *out, size_t outlen,
                    char *err, size_t errlen);

/* Compile and link dir/name with the built-in vertex shader. NULL on error. */
Shader *shader_load(const char *dir, const char *name, char *err, size_t errlen);

/* A simulation pass: dir/name defines `vec4 stage()`, the value of cell()
 * in the field it writes, and the loader appends entry.glsl, the thin entry
 * point of the stage: a fragment shader (draw with pass_draw) or a compute
 * shader of PASS_LOCAL_X x PASS_LOCAL_Y work groups (field.h) that writes image
 * unit 0 (run with pass_dispatch). defines (may be NULL) goes in after the
 * #version line: the method's constants, as #define lines. */
typedef enum { SHADER_FRAGMENT, SHADER_COMPUTE } ShaderStage;
Shader *shader_load_pass(const char *dir, const char *name, ShaderStage stage, const char *defines,
                         char *err, size_t errlen);
/* The current context runs compute shaders (OpenGL 4.3 or later). */
bool shader_compute_available(void);
/* Whether the current context renders in software (llvmpipe, softpipe,
 * swrast, SwiftShader). */
bool shader_software_renderer(void);
bool shader_is_compute(const Shader *s);
void shader_free(Shader *s);

void shader_use(Shader *s);

/* Location of an active uniform (cached), or -1 if the program has none by
 * that name (logged once at debug level: unused uniforms are optimised out).
 * With field_debug() (SMOKEMORPH_GL_DEBUG=1) a name the source does not
 * declare at all (a misspelling) is an error: logged, and the next
 * gl_check fails. */
GLint shader_uniform(Shader *s, const char *name);

/* Setters make s the current program first; a missing uniform is ignored. */
void shader_set_int(Shader *s, const char *name, int v);
void shader_set_ivec2(Shader *s, const char *name, int x, int y);
void shader_set_float(Shader *s, const char *name, float v);
void shader_set_vec2(Shader *s, const char *name, float x, float y);
void shader_set_vec3(Shader *s, const char *name, float x, float y, float z);
void shader_set_vec4(Shader *s, const char *name, float x, float y, float z, float w);
/* A uniform float array (name as declared, without [0]) from v[0..n-1]. */
void shader_set_float_array(Shader *s, const char *name, const float *v, int n);
/* Bind tex (a GL_TEXTURE_2D) to texture unit `unit` and point the sampler there. */
void shader_set_texture(Shader *s, const char *name, int unit, GLuint tex);

#endif
