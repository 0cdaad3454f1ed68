/* log: tagged messages on stderr.
 *
 *   log_set_level(LOG_INFO);
 *   log_error("image", "cannot read %s: %s", path, why);   -> "image: cannot read a.png: ..."
 *   die("config", "--grid: expected N or WxH, got '%s'", s); -> message, exit(1)
 *
 * Messages follow the project style: subsystem tag, lowercase, error first,
 * no final stop. */
#ifndef SMOKEMORPH_LOG_H
#define SMOKEMORPH_LOG_H

#include <stdarg.h>

typedef enum { LOG_QUIET = 0, LOG_ERROR = 1, LOG_INFO = 2, LOG_DEBUG = 3 } LogLevel;

void log_set_level(LogLevel level);
void log_error(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_info(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_debug(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void die(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
