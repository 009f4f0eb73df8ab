/* A growable, always NUL-terminated byte buffer. */
#include "util/util.h"

#include <ctype.h>
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

void sbuf_put_json_escaped(struct sbuf *sb, const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *named = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
    if (named)
      sbuf_puts(sb, named);
    else if (c < 0x20)
      sbuf_printf(sb, "\\u%04x", c);
    else
      sbuf_putc(sb, (char)c);
  }
}

void sbuf_put_shell_word(struct sbuf *sb, const char *s) {
  bool bare = *s != '\0';
  for (const char *p = s; *p && bare; p++)
    bare = isalnum((unsigned char)*p) || strchr("-_=./,:+@%", *p) != NULL;
  if (bare) {
    sbuf_puts(sb, s);
    return;
  }
  sbuf_putc(sb, '\'');
  for (const char *p = s; *p; p++) {
    if (*p == '\'')
      sbuf_puts(sb, "'\\''");
    else
      sbuf_putc(sb, *p);
  }
  sbuf_putc(sb, '\'');
}

void sbuf_put_shell_assignment(struct sbuf *sb, const char *name_value) {
  const char *eq = strchr(name_value, '=');
  bool name_ok = eq && eq > name_value && !isdigit((unsigned char)name_value[0]);
  for (const char *p = name_value; name_ok && p < eq; p++)
    name_ok = isalnum((unsigned char)*p) || *p == '_';
  if (!name_ok) {
    sbuf_put_shell_word(sb, name_value);
    return;
  }
  sbuf_append(sb, name_value, (size_t)(eq - name_value) + 1);
  sbuf_put_shell_word(sb, eq + 1);
}
