/* fuzz_config: the option parser. The input is argv, split at NUL bytes
 * (at most 48 arguments, after "smokemorph"). Properties: a refusal is one
 * line starting "config: "; an accepted Config passes method_params_check
 * and keeps every size in its documented range. (--help prints to stdout:
 * fuzz/run.sh runs this harness with stdout closed.) */
#include "fuzz.h"

#include "config.h"

#define MAXARGS 48

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = "smokemorph";
    for (char *p = buf; p <= buf + size && argc <= MAXARGS; p += strlen(p) + 1) argv[argc++] = p;
    argv[argc] = NULL;
    Config c;
    char err[1024] = "";
    int r = config_parse(&c, argc, argv, err, sizeof err);
    if (r < 0) {
        FUZZ_ONE_LINE(err);
        FUZZ_ASSERT(strncmp(err, "config: ", 8) == 0, "untagged: '%s'", err);
    } else if (r == 0) {
        FUZZ_ASSERT(method_params_check(&c.params) == NULL, "accepted bad parameters: %s",
                    method_params_check(&c.params));
        FUZZ_ASSERT(c.grid_w >= CONFIG_GRID_MIN && c.grid_w <= CONFIG_GRID_MAX &&
                        c.grid_h >= CONFIG_GRID_MIN && c.grid_h <= CONFIG_GRID_MAX &&
                        (long)c.grid_w * c.grid_h <= CONFIG_MAX_CELLS,
                    "grid %dx%d", c.grid_w, c.grid_h);
        FUZZ_ASSERT(c.every >= 1 && c.steps >= 0 && c.steps <= CONFIG_STEPS_MAX, "every %d steps %ld",
                    c.every, c.steps);
        FUZZ_ASSERT(c.out_w >= 0 && c.out_w <= IMAGE_MAX_SIDE && c.out_h >= 0 &&
                        c.out_h <= IMAGE_MAX_SIDE, "size %dx%d", c.out_w, c.out_h);
        FUZZ_ASSERT(c.load.max_mb >= 0, "max_mb %d", c.load.max_mb);
        FUZZ_ASSERT((c.current_path == NULL) == (c.target_path == NULL), "one image");
    }
    free(buf);
    return 0;
}
