/* Prometheus text exposition parser (format 0.0.4, and the OpenMetrics text
 * subset servers actually emit). Works on a byte range, never trusts it to be
 * NUL-terminated or valid UTF-8, and skips what it cannot read. */
#include "metrics/metrics.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct cursor {
  const char *p;
  const char *end;
};

static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

static void skip_blanks(struct cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
    c->p++;
}

/* Metric or label name; returns its length (0: none). Label names may not
 * contain ':' but accepting it costs nothing and loses nothing. */
static size_t scan_name(struct cursor *c) {
  const char *start = c->p;
  if (c->p >= c->end || !is_name_start(*c->p))
    return 0;
  while (c->p < c->end && is_name_char(*c->p))
    c->p++;
  return (size_t)(c->p - start);
}

/* Quoted label value with \\, \" and \n escapes; c->p is at the opening quote. */
static char *scan_quoted_alloc(struct cursor *c) {
  if (c->p >= c->end || *c->p != '"')
    return NULL;
  c->p++;
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 16);
  while (c->p < c->end) {
    char ch = *c->p++;
    if (ch == '"')
      return sbuf_take(&sb);
    if (ch == '\\') {
      if (c->p >= c->end)
        break;
      char esc = *c->p++;
      sbuf_putc(&sb, esc == 'n' ? '\n' : esc); /* \\ and \" stand for themselves */
    } else {
      sbuf_putc(&sb, ch);
    }
  }
  sbuf_free(&sb);
  return NULL;
}

/* strtod in the C locale: the dashboard calls setlocale(LC_ALL, ""), and a
 * locale with a decimal comma would misread "1.5". */
static locale_t c_numeric_locale;
static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;
static void c_numeric_init(void) {
  c_numeric_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static bool token_equals_ci(const char *tok, size_t len, const char *word) {
  size_t wlen = strlen(word);
  if (len != wlen)
    return false;
  for (size_t i = 0; i < len; i++) {
    char a = tok[i], b = word[i];
    if (a >= 'A' && a <= 'Z')
      a = (char)(a - 'A' + 'a');
    if (a != b)
      return false;
  }
  return true;
}

/* Parses a float token (Go's ParseFloat spellings: +Inf, -Inf, NaN, 1e3, 0x1p3). */
static bool parse_float_token(const char *tok, size_t len, double *out) {
  if (len == 0 || len > 63)
    return false;
  const char *body = tok;
  size_t body_len = len;
  double sign = 1.0;
  if (*body == '+' || *body == '-') {
    sign = *body == '-' ? -1.0 : 1.0;
    body++;
    body_len--;
  }
  if (token_equals_ci(body, body_len, "inf") || token_equals_ci(body, body_len, "infinity")) {
    *out = sign * (double)INFINITY;
    return true;
  }
  if (token_equals_ci(body, body_len, "nan")) {
    *out = (double)NAN;
    return true;
  }
  char buf[64];
  memcpy(buf, tok, len);
  buf[len] = '\0';
  for (size_t i = 0; i < len; i++) { /* only number characters reach strtod */
    char ch = buf[i];
    if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
          ch == '-' || ch == 'x' || ch == 'X' || ch == 'p' || ch == 'P' ||
          (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
      return false;
  }
  pthread_once(&c_numeric_once, c_numeric_init);
  char *end = NULL;
  double v = c_numeric_locale ? strtod_l(buf, &end, c_numeric_locale) : strtod(buf, &end);
  if (end != buf + len)
    return false;
  *out = v;
  return true;
}

static const char *scan_token(struct cursor *c, size_t *len) {
  const char *start = c->p;
  while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
    c->p++;
  *len = (size_t)(c->p - start);
  return start;
}

static void sample_free(struct prom_sample *s) {
  free(s->name);
  for (size_t i = 0; i < s->n_labels; i++) {
    free(s->labels[i].name);
    free(s->labels[i].value);
  }
  free(s->labels);
}

/* Parses one sample line (no newline). Returns false when malformed. */
static bool parse_sample_line(struct cursor *c, struct prom_sample *s) {
  memset(s, 0, sizeof(*s));
  const char *name = c->p;
  size_t name_len = scan_name(c);
  if (name_len == 0)
    goto bad;
  s->name = xstrndup(name, name_len);
  skip_blanks(c);
  if (c->p < c->end && *c->p == '{') {
    c->p++;
    size_t cap = 0;
    for (;;) {
      skip_blanks(c);
      if (c->p < c->end && *c->p == '}') {
        c->p++;
        break;
      }
      const char *lname = c->p;
      size_t lname_len = scan_name(c);
      if (lname_len == 0)
        goto bad;
      skip_blanks(c);
      if (!parse_char(&c->p, c->end, '='))
        goto bad;
      skip_blanks(c);
      char *value = scan_quoted_alloc(c);
      if (!value)
        goto bad;
      if (s->n_labels == cap) {
        cap = cap ? cap * 2 : 4;
        s->labels = xreallocarray(s->labels, cap, sizeof(*s->labels));
      }
      s->labels[s->n_labels].name = xstrndup(lname, lname_len);
      s->labels[s->n_labels].value = value;
      s->n_labels++;
      skip_blanks(c);
      enum parse_list_step step = parse_list_next(&c->p, c->end, '}');
      if (step == PARSE_LIST_END)
        break;
      if (step == PARSE_LIST_BAD)
        goto bad;
    }
  }
  skip_blanks(c);
  size_t tok_len;
  const char *tok = scan_token(c, &tok_len);
  if (!parse_float_token(tok, tok_len, &s->value))
    goto bad;
  skip_blanks(c);
  if (c->p < c->end) {
    /* Optional timestamp: integer milliseconds (OpenMetrics uses float seconds;
     * both are accepted, the latter converted). */
    tok = scan_token(c, &tok_len);
    double ts;
    if (!parse_float_token(tok, tok_len, &ts) || !isfinite(ts))
      goto bad;
    bool has_fraction = memchr(tok, '.', tok_len) != NULL;
    double ts_ms = has_fraction ? ts * 1000.0 : ts;
    if (ts_ms > 9.2e18 || ts_ms < -9.2e18)
      goto bad;
    s->has_timestamp = true;
    s->timestamp_ms = (int64_t)ts_ms;
    skip_blanks(c);
    if (c->p < c->end && *c->p == '#')  /* OpenMetrics exemplar: ignored */
      c->p = c->end;
    if (c->p < c->end)
      goto bad;
  }
  return true;
bad:
  sample_free(s);
  memset(s, 0, sizeof(*s));
  return false;
}

static struct prom_family *family_get(struct prom_set *set, size_t *cap, const char *name,
                                      size_t name_len) {
  for (size_t i = 0; i < set->n_families; i++) {
    if (strlen(set->families[i].name) == name_len &&
        memcmp(set->families[i].name, name, name_len) == 0)
      return &set->families[i];
  }
  if (set->n_families == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    set->families = xreallocarray(set->families, *cap, sizeof(*set->families));
  }
  struct prom_family *f = &set->families[set->n_families++];
  f->name = xstrndup(name, name_len);
  f->type = PROM_TYPE_UNTYPED;
  f->help = NULL;
  return f;
}

/* "# HELP name text" / "# TYPE name type"; other comments are ignored.
 * Returns false for a HELP/TYPE line that cannot be read. */
static bool parse_comment_line(struct cursor *c, struct prom_set *set, size_t *fam_cap) {
  c->p++; /* '#' */
  skip_blanks(c);
  size_t kw_len;
  const char *kw = scan_token(c, &kw_len);
  bool is_help = kw_len == 4 && memcmp(kw, "HELP", 4) == 0;
  bool is_type = kw_len == 4 && memcmp(kw, "TYPE", 4) == 0;
  if (!is_help && !is_type)
    return true;
  skip_blanks(c);
  const char *name = c->p;
  size_t name_len = scan_name(c);
  if (name_len == 0)
    return false;
  skip_blanks(c);
  if (is_type) {
    size_t t_len;
    const char *t = scan_token(c, &t_len);
    static const struct {
      const char *word;
      enum prom_type type;
    } types[] = {{"counter", PROM_TYPE_COUNTER},     {"gauge", PROM_TYPE_GAUGE},
                 {"histogram", PROM_TYPE_HISTOGRAM}, {"summary", PROM_TYPE_SUMMARY},
                 {"untyped", PROM_TYPE_UNTYPED},     {"unknown", PROM_TYPE_UNTYPED},
                 {"gaugehistogram", PROM_TYPE_HISTOGRAM}, {"info", PROM_TYPE_GAUGE},
                 {"stateset", PROM_TYPE_GAUGE}};
    for (size_t i = 0; i < ST_ARRAY_LEN(types); i++) {
      if (token_equals_ci(t, t_len, types[i].word)) {
        family_get(set, fam_cap, name, name_len)->type = types[i].type;
        return true;
      }
    }
    return false;
  }
  struct prom_family *f = family_get(set, fam_cap, name, name_len);
  free(f->help);
  /* HELP escapes only \\ and \n. */
  struct sbuf sb = {0};
  sbuf_reserve(&sb, (size_t)(c->end - c->p) + 1);
  while (c->p < c->end) {
    char ch = *c->p++;
    if (ch == '\\' && c->p < c->end && (*c->p == 'n' || *c->p == '\\')) {
      sbuf_putc(&sb, *c->p == 'n' ? '\n' : '\\');
      c->p++;
    } else {
      sbuf_putc(&sb, ch);
    }
  }
  f->help = sbuf_take(&sb);
  return true;
}

void prom_parse(const char *text, size_t len, struct prom_set *out) {
  memset(out, 0, sizeof(*out));
  size_t sample_cap = 0, fam_cap = 0, line_no = 0;
  const char *p = text ? text : "";
  const char *end = text ? text + len : p;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *line_end = nl ? nl : end;
    line_no++;
    struct cursor c = {p, line_end};
    if (c.end > c.p && c.end[-1] == '\r')
      c.end--;
    p = nl ? nl + 1 : end;
    skip_blanks(&c);
    if (c.p == c.end)
      continue;
    bool ok;
    if (*c.p == '#') {
      ok = parse_comment_line(&c, out, &fam_cap);
    } else {
      struct prom_sample s;
      ok = parse_sample_line(&c, &s);
      if (ok) {
        if (out->n_samples == sample_cap) {
          sample_cap = sample_cap ? sample_cap * 2 : 64;
          out->samples = xreallocarray(out->samples, sample_cap, sizeof(*out->samples));
        }
        out->samples[out->n_samples++] = s;
      }
    }
    if (!ok) {
      if (out->n_malformed == 0)
        out->first_malformed_line = line_no;
      out->n_malformed++;
    }
  }
}

void prom_set_free(struct prom_set *set) {
  if (!set)
    return;
  for (size_t i = 0; i < set->n_samples; i++)
    sample_free(&set->samples[i]);
  free(set->samples);
  for (size_t i = 0; i < set->n_families; i++) {
    free(set->families[i].name);
    free(set->families[i].help);
  }
  free(set->families);
  memset(set, 0, sizeof(*set));
}

const char *prom_label_value(const struct prom_sample *s, const char *label_name) {
  for (size_t i = 0; i < s->n_labels; i++)
    if (strcmp(s->labels[i].name, label_name) == 0)
      return s->labels[i].value;
  return NULL;
}

static bool sample_matches(const struct prom_sample *s, const char *name,
                           const char *const *match) {
  if (strcmp(s->name, name) != 0)
    return false;
  for (size_t i = 0; match && match[i] && match[i + 1]; i += 2) {
    const char *v = prom_label_value(s, match[i]);
    if (!v || strcmp(v, match[i + 1]) != 0)
      return false;
  }
  return true;
}

const struct prom_sample *prom_find(const struct prom_set *set, const char *name,
                                    const char *const *match) {
  for (size_t i = 0; i < set->n_samples; i++)
    if (sample_matches(&set->samples[i], name, match))
      return &set->samples[i];
  return NULL;
}

double prom_value_or(const struct prom_set *set, const char *name, const char *const *match,
                     double fallback) {
  const struct prom_sample *s = prom_find(set, name, match);
  return s ? s->value : fallback;
}

size_t prom_sum(const struct prom_set *set, const char *name, const char *const *match,
                double *sum_out) {
  size_t n = 0;
  double sum = 0.0;
  for (size_t i = 0; i < set->n_samples; i++) {
    if (sample_matches(&set->samples[i], name, match)) {
      sum += set->samples[i].value;
      n++;
    }
  }
  *sum_out = sum;
  return n;
}

enum prom_type prom_type_of(const struct prom_set *set, const char *name) {
  static const char *const suffixes[] = {"_bucket", "_sum", "_count", "_total", "_created"};
  size_t name_len = strlen(name);
  for (size_t i = 0; i < set->n_families; i++) {
    const char *fam = set->families[i].name;
    size_t fam_len = strlen(fam);
    if (strcmp(fam, name) == 0)
      return set->families[i].type;
    if (name_len <= fam_len || memcmp(name, fam, fam_len) != 0)
      continue;
    for (size_t k = 0; k < ST_ARRAY_LEN(suffixes); k++)
      if (strcmp(name + fam_len, suffixes[k]) == 0)
        return set->families[i].type;
  }
  return PROM_TYPE_UNTYPED;
}
