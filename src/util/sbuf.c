/* A growable, always NUL-terminated byte buffer. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbuf_reserve(struct sbuf *sb, size_t extra_bytes) {
  size_t need = sb->len + extra_bytes + 1;
  if (need <= sb->cap)
    return;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need)
    cap *= 2;
  sb->data = xrealloc(sb->data, cap);
  sb->cap = cap;
  sb->data[sb->len] = '\0'; /* a fresh buffer is a valid empty string */
}

void sbuf_append(struct sbuf *sb, const void *data, size_t len) {
  sbuf_reserve(sb, len);
  if (len)
    memcpy(sb->data + sb->len, data, len);
  sb->len += len;
  sb->data[sb->len] = '\0';
}

void sbuf_puts(struct sbuf *sb, const char *s) { sbuf_append(sb, s, strlen(s)); }

void sbuf_putc(struct sbuf *sb, char c) { sbuf_append(sb, &c, 1); }

void sbuf_printf(struct sbuf *sb, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    sbuf_reserve(sb, (size_t)n);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
    sb->len += (size_t)n;
  }
  va_end(ap2);
}

void sbuf_consume(struct sbuf *sb, size_t n_bytes) {
  if (n_bytes >= sb->len) {
    sbuf_reset(sb);
    return;
  }
  memmove(sb->data, sb->data + n_bytes, sb->len - n_bytes);
  sb->len -= n_bytes;
  sb->data[sb->len] = '\0';
}

void sbuf_reset(struct sbuf *sb) {
  sb->len = 0;
  if (sb->cap)
    sb->data[0] = '\0';
}

void sbuf_free(struct sbuf *sb) {
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

char *sbuf_take(struct sbuf *sb) {
  char *s = sb->data ? sb->data : xstrdup("");
  sb->data = NULL;
  sb->len = sb->cap = 0;
  return s;
}
