/* Small string helpers and strict number parsers. */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool str_starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

char *str_trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

int parse_long(const char *s, long *out) {
  if (!s || !*s || isspace((unsigned char)*s))
    return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

int parse_int(const char *s, int *out) {
  long v;
  if (parse_long(s, &v) < 0 || v < INT_MIN || v > INT_MAX)
    return -1;
  *out = (int)v;
  return 0;
}

int parse_double(const char *s, double *out) {
  if (!s || !*s || isspace((unsigned char)*s))
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno == ERANGE || *end || isnan(v))
    return -1;
  *out = v;
  return 0;
}

int parse_duration_s(const char *s, double *out_s) {
  double total = 0;
  const char *p = s;
  if (!p || !*p)
    return -1;
  while (*p) {
    char *end;
    double v = strtod(p, &end);
    if (end == p || !(v >= 0) || !isfinite(v))
      return -1;
    double unit = 1;
    if (*end == 'h')
      unit = 3600;
    else if (*end == 'm')
      unit = 60;
    else if (*end == 's')
      unit = 1;
    else if (*end != '\0')
      return -1;
    if (*end == '\0' && p != s)
      return -1; /* "1h30": a bare number only alone */
    total += v * unit;
    p = *end ? end + 1 : end;
  }
  if (!(total > 0))
    return -1;
  *out_s = total;
  return 0;
}

int parse_bool(const char *s, bool *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (size_t i = 0; i < ST_ARRAY_LEN(yes); i++) {
    if (strcasecmp(s, yes[i]) == 0) {
      *out = true;
      return 0;
    }
    if (strcasecmp(s, no[i]) == 0) {
      *out = false;
      return 0;
    }
  }
  return -1;
}

bool parse_char(const char **p, const char *end, char c) {
  if (*p >= end || **p != c)
    return false;
  (*p)++;
  return true;
}

enum parse_list_step parse_list_next(const char **p, const char *end, char close) {
  if (*p >= end)
    return PARSE_LIST_BAD;
  if (**p == ',') {
    (*p)++;
    return PARSE_LIST_MORE;
  }
  if (**p == close) {
    (*p)++;
    return PARSE_LIST_END;
  }
  return PARSE_LIST_BAD;
}

void str_vec_free(char **v, size_t n) {
  if (!v)
    return;
  for (size_t i = 0; i < n && (n != STR_VEC_TO_NULL || v[i]); i++)
    free(v[i]);
  free(v);
}
