/* log: tagged messages on stderr; see log.h. */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>

static LogLevel g_level = LOG_INFO;

void log_set_level(LogLevel level) { g_level = level; }

static void vlog(const char *tag, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void log_error(const char *tag, const char *fmt, ...)
{
    if (g_level < LOG_ERROR) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
}

void log_info(const char *tag, const char *fmt, ...)
{
    if (g_level < LOG_INFO) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
}

void log_debug(const char *tag, const char *fmt, ...)
{
    if (g_level < LOG_DEBUG) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
}

void die(const char *tag, const char *fmt, ...)
{
    /* errors are printed even with --quiet: a failing run must say why */
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
    exit(1);
}
