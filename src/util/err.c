/* One-line error messages in caller-supplied buffers, and stderr logging. */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

int err_setf(struct st_err *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int err_prefixf(struct st_err *err, const char *fmt, ...) {
  if (err) {
    char prefix[256], joined[sizeof prefix + sizeof err->msg + 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    size_t n = strnlen(joined, sizeof err->msg - 1);
    memcpy(err->msg, joined, n);
    err->msg[n] = '\0';
  }
  return -1;
}

static enum log_level log_min = LOG_INFO;
static const char *log_program = "servetop";

void log_set_level(enum log_level min_level) { log_min = min_level; }
void log_set_program(const char *name) { log_program = name; }

void log_msg(enum log_level level, const char *fmt, ...) {
  static const char *const names[] = {"debug", "info", "warning", "error"};
  if (level < log_min)
    return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* One fprintf per line, so lines from several threads do not interleave. */
  if (level == LOG_INFO)
    fprintf(stderr, "%s: %s\n", log_program, line);
  else
    fprintf(stderr, "%s: %s: %s\n", log_program, names[level], line);
}
