/* Allocation that never returns NULL. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*oom_hook)(void);

void util_set_oom_hook(void (*hook)(void)) { oom_hook = hook; }

void util_die_oom(size_t size_bytes) {
  void (*hook)(void) = oom_hook;
  oom_hook = NULL;
  if (hook)
    hook();
  fprintf(stderr, "servetop: out of memory (allocating %zu bytes)\n", size_bytes);
  abort();
}

void *xmalloc(size_t size_bytes) {
  void *p = malloc(size_bytes ? size_bytes : 1);
  if (!p)
    util_die_oom(size_bytes);
  return p;
}

void *xcalloc(size_t count, size_t size_bytes) {
  void *p = calloc(count ? count : 1, size_bytes ? size_bytes : 1);
  if (!p)
    util_die_oom(count * size_bytes);
  return p;
}

void *xrealloc(void *ptr, size_t size_bytes) {
  void *p = realloc(ptr, size_bytes ? size_bytes : 1);
  if (!p)
    util_die_oom(size_bytes);
  return p;
}

void *xreallocarray(void *ptr, size_t count, size_t size_bytes) {
  if (size_bytes && count > SIZE_MAX / size_bytes)
    util_die_oom(SIZE_MAX);
  return xrealloc(ptr, count * size_bytes);
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t len) {
  size_t n = strnlen(s, len);
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *xvasprintf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    n = 0;
  char *p = xmalloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = xvasprintf(fmt, ap);
  va_end(ap);
  return p;
}
