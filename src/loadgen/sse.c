/* Server-sent-events framing and a one-pass validating scanner for the JSON of
 * one streamed chunk. The scanner replaces json.loads() on the hot path: it
 * checks the whole line is valid JSON (as the reference does, so a malformed
 * chunk fails the request) and picks out only what the metrics need, without
 * allocating. */
#include "loadgen/loadgen.h"

#include <math.h>
#include <stddef.h>
#include <string.h>


/* ---------------------------------------------------------------- line framing */
void lg_sse_init(struct lg_sse *sse) {
  memset(sse, 0, sizeof(*sse));
}

void lg_sse_fini(struct lg_sse *sse) {
  sbuf_free(&sse->partial);
}

/* Hands one complete line (without '\n', '\r' stripped) to on_line, applying
 * the reference's rules: blank lines skipped, "data:" prefix removed. */
static int deliver_line(const char *line, size_t len, lg_sse_line_fn on_line, void *ctx) {
  while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
    len--;
  while (len > 0 && (*line == ' ' || *line == '\t')) {
    line++;
    len--;
  }
  if (len == 0 || *line == ':') /* blank line or SSE comment (keep-alive) */
    return 0;
  if (len >= 5 && memcmp(line, "data:", 5) == 0) {
    line += 5;
    len -= 5;
    if (len > 0 && *line == ' ')
      line++, len--;
  } else {
    /* "event:", "id:", "retry:" carry nothing we use; anything else is not
     * SSE and is handed on so the caller fails the request as the
     * reference does. */
    static const char *const fields[] = {"event:", "id:", "retry:"};
    for (size_t i = 0; i < ST_ARRAY_LEN(fields); i++) {
      size_t flen = strlen(fields[i]);
      if (len >= flen && memcmp(line, fields[i], flen) == 0)
        return 0;
    }
  }
  return on_line(ctx, line, len);
}

int lg_sse_feed(struct lg_sse *sse, const char *data, size_t len, lg_sse_line_fn on_line,
                void *ctx) {
  const char *p = data, *end = data + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) {
      if (sse->partial.len + (size_t)(end - p) > LG_SSE_MAX_LINE_BYTES)
        return -1;
      sbuf_append(&sse->partial, p, (size_t)(end - p));
      return 0;
    }
    int rc;
    if (sse->partial.len > 0) {
      if (sse->partial.len + (size_t)(nl - p) > LG_SSE_MAX_LINE_BYTES)
        return -1;
      sbuf_append(&sse->partial, p, (size_t)(nl - p));
      rc = deliver_line(sse->partial.data, sse->partial.len, on_line, ctx);
      sbuf_reset(&sse->partial);
    } else {
      rc = deliver_line(p, (size_t)(nl - p), on_line, ctx);
    }
    if (rc != 0)
      return rc;
    p = nl + 1;
  }
  return 0;
}

int lg_sse_finish(struct lg_sse *sse, lg_sse_line_fn on_line, void *ctx) {
  if (sse->partial.len == 0)
    return 0;
  int rc = deliver_line(sse->partial.data, sse->partial.len, on_line, ctx);
  sbuf_reset(&sse->partial);
  return rc;
}

/* ---------------------------------------------------------------- JSON chunk scanner */
enum { SCAN_MAX_DEPTH = 64 };

struct scanner {
  const char *p;
  const char *end;
  int depth;
};

static void skip_ws(struct scanner *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A JSON string; s->p at the opening quote. On success (body, body_len) is the
 * raw (still escaped) content. */
static bool scan_string(struct scanner *s, const char **body, size_t *body_len) {
  if (s->p >= s->end || *s->p != '"')
    return false;
  const char *start = ++s->p;
  while (s->p < s->end) {
    unsigned char c = (unsigned char)*s->p;
    if (c == '"') {
      if (body) {
        *body = start;
        *body_len = (size_t)(s->p - start);
      }
      s->p++;
      return true;
    }
    if (c < 0x20)
      return false;
    if (c == '\\') {
      s->p++;
      if (s->p >= s->end)
        return false;
      char e = *s->p;
      if (e == 'u') {
        if (s->end - s->p < 5)
          return false;
        for (int i = 1; i <= 4; i++)
          if (!is_hex(s->p[i]))
            return false;
        s->p += 4;
      } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
        return false;
      }
    }
    s->p++;
  }
  return false;
}

static bool scan_number(struct scanner *s, double *out) {
  const char *start = s->p;
  if (s->p < s->end && *s->p == '-')
    s->p++;
  if (s->p >= s->end)
    return false;
  if (*s->p == '0') {
    s->p++;
  } else if (*s->p >= '1' && *s->p <= '9') {
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
      s->p++;
  } else {
    return false;
  }
  bool integral = true;
  if (s->p < s->end && *s->p == '.') {
    integral = false;
    s->p++;
    if (s->p >= s->end || !(*s->p >= '0' && *s->p <= '9'))
      return false;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
      s->p++;
  }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    integral = false;
    s->p++;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
      s->p++;
    if (s->p >= s->end || !(*s->p >= '0' && *s->p <= '9'))
      return false;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
      s->p++;
  }
  if (out) {
    /* Token counts are small non-negative integers; anything else is recorded
     * as -1 ("not a count") rather than guessed. */
    double v = -1.0;
    if (integral && start[0] != '-' && s->p - start <= 15) {
      v = 0.0;
      for (const char *q = start; q < s->p; q++)
        v = v * 10.0 + (double)(*q - '0');
    }
    *out = v;
  }
  return true;
}

static bool scan_literal(struct scanner *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
    return false;
  s->p += n;
  return true;
}

static bool scan_value(struct scanner *s);

/* Iterates an object's members: calls member(ctx, key, key_len, s) with s->p at
 * the value, which member must consume (or pass to scan_value). */
typedef bool (*member_fn)(void *ctx, const char *key, size_t key_len, struct scanner *s);

static bool scan_object(struct scanner *s, member_fn member, void *ctx) {
  if (s->p >= s->end || *s->p != '{' || ++s->depth > SCAN_MAX_DEPTH)
    return false;
  s->p++;
  skip_ws(s);
  if (s->p < s->end && *s->p == '}') {
    s->p++;
    s->depth--;
    return true;
  }
  for (;;) {
    skip_ws(s);
    const char *key;
    size_t key_len;
    if (!scan_string(s, &key, &key_len))
      return false;
    skip_ws(s);
    if (!parse_char(&s->p, s->end, ':'))
      return false;
    skip_ws(s);
    bool ok = member ? member(ctx, key, key_len, s) : scan_value(s);
    if (!ok)
      return false;
    skip_ws(s);
    enum parse_list_step step = parse_list_next(&s->p, s->end, '}');
    if (step != PARSE_LIST_MORE) {
      s->depth--;
      return step == PARSE_LIST_END;
    }
  }
}

/* Iterates an array: element(ctx, index, s) consumes each element. */
typedef bool (*element_fn)(void *ctx, size_t index, struct scanner *s);

static bool scan_array(struct scanner *s, element_fn element, void *ctx, size_t *count) {
  if (s->p >= s->end || *s->p != '[' || ++s->depth > SCAN_MAX_DEPTH)
    return false;
  s->p++;
  size_t n = 0;
  skip_ws(s);
  if (s->p < s->end && *s->p == ']') {
    s->p++;
    s->depth--;
    if (count)
      *count = 0;
    return true;
  }
  for (;;) {
    skip_ws(s);
    bool ok = element ? element(ctx, n, s) : scan_value(s);
    if (!ok)
      return false;
    n++;
    skip_ws(s);
    enum parse_list_step step = parse_list_next(&s->p, s->end, ']');
    if (step != PARSE_LIST_MORE) {
      s->depth--;
      if (count)
        *count = n;
      return step == PARSE_LIST_END;
    }
  }
}

static bool scan_value(struct scanner *s) {
  skip_ws(s);
  if (s->p >= s->end)
    return false;
  switch (*s->p) {
  case '{':
    return scan_object(s, NULL, NULL);
  case '[':
    return scan_array(s, NULL, NULL, NULL);
  case '"':
    return scan_string(s, NULL, NULL);
  case 't':
    return scan_literal(s, "true");
  case 'f':
    return scan_literal(s, "false");
  case 'n':
    return scan_literal(s, "null");
  default:
    return scan_number(s, NULL);
  }
}

static bool key_is(const char *key, size_t key_len, const char *want) {
  size_t n = strlen(want);
  return key_len == n && memcmp(key, want, n) == 0;
}

/* A string member whose content is generated text: remember it, note non-empty. */
static bool scan_text_member(struct lg_chunk *c, struct scanner *s) {
  if (s->p < s->end && *s->p == 'n')
    return scan_literal(s, "null");
  const char *body;
  size_t len;
  if (!scan_string(s, &body, &len))
    return false;
  if (len > 0) {
    c->has_text = true;
    if (!c->text) {
      c->text = body;
      c->text_len = len;
    }
  }
  return true;
}

static bool delta_member(void *ctx, const char *key, size_t key_len, struct scanner *s) {
  struct lg_chunk *c = ctx;
  if (key_is(key, key_len, "content") || key_is(key, key_len, "reasoning_content") ||
      key_is(key, key_len, "reasoning"))
    return scan_text_member(c, s);
  return scan_value(s);
}

static bool choice_member(void *ctx, const char *key, size_t key_len, struct scanner *s) {
  struct lg_chunk *c = ctx;
  if (key_is(key, key_len, "text"))
    return scan_text_member(c, s);
  if (key_is(key, key_len, "delta") && s->p < s->end && *s->p == '{')
    return scan_object(s, delta_member, c);
  if (key_is(key, key_len, "finish_reason") && s->p < s->end && *s->p == '"') {
    c->has_finish_reason = true;
    return scan_string(s, NULL, NULL);
  }
  return scan_value(s);
}

static bool choice_element(void *ctx, size_t index, struct scanner *s) {
  if (s->p < s->end && *s->p == '{')
    return scan_object(s, choice_member, ctx);
  return scan_value(s);
}

/* A non-negative integer member into *out: -1 when null, -2 when it is no
 * count (negative, not whole, past 9e15), never guessed. */
static bool scan_count(struct scanner *s, int64_t *out) {
  if (s->p < s->end && *s->p == 'n') {
    *out = -1;
    return scan_literal(s, "null");
  }
  double v;
  if (!scan_number(s, &v))
    return false;
  /* a count is whole and in range; anything else (negative, 1e30, 2.5) is
   * impossible: -2, never cast (a double past int64 is undefined) */
  *out = isfinite(v) && v >= 0 && v <= 9e15 && v == floor(v) ? (int64_t)v : -2;
  return true;
}

/* An object whose members of interest are counts: key -> lg_chunk field. */
struct count_key {
  const char *key;
  size_t offset; /* of an int64_t in struct lg_chunk */
};

static const struct count_key usage_counts[] = {
    {"completion_tokens", offsetof(struct lg_chunk, completion_tokens)},
    {"prompt_tokens", offsetof(struct lg_chunk, prompt_tokens)},
    {NULL, 0},
};

/* llama.cpp's final chunk: "timings": {"draft_n": N, "draft_n_accepted": M, ...}. */
static const struct count_key timings_counts[] = {
    {"draft_n", offsetof(struct lg_chunk, draft_n)},
    {"draft_n_accepted", offsetof(struct lg_chunk, draft_n_accepted)},
    {NULL, 0},
};

struct count_object {
  struct lg_chunk *chunk;
  const struct count_key *keys; /* ends with a NULL key */
};

static bool count_member(void *ctx, const char *key, size_t key_len, struct scanner *s) {
  const struct count_object *o = ctx;
  for (const struct count_key *k = o->keys; k->key; k++)
    if (key_is(key, key_len, k->key))
      return scan_count(s, (int64_t *)((char *)o->chunk + k->offset));
  return scan_value(s);
}

static bool top_member(void *ctx, const char *key, size_t key_len, struct scanner *s) {
  struct lg_chunk *c = ctx;
  if (key_is(key, key_len, "choices") && s->p < s->end && *s->p == '[') {
    size_t n;
    if (!scan_array(s, choice_element, c, &n))
      return false;
    c->n_choices = n;
    return true;
  }
  if (key_is(key, key_len, "usage") && s->p < s->end && *s->p == '{') {
    c->has_usage = true;
    return scan_object(s, count_member, &(struct count_object){c, usage_counts});
  }
  if (key_is(key, key_len, "timings") && s->p < s->end && *s->p == '{') {
    c->has_timings = true;
    return scan_object(s, count_member, &(struct count_object){c, timings_counts});
  }
  /* "error": {...} or "error": "text" is an error event; "error": null is not. */
  if (key_is(key, key_len, "error") && s->p < s->end && *s->p == '{') {
    c->has_error = true;
    const char *start = s->p;
    bool ok = scan_value(s);
    c->error_text = start;
    c->error_text_len = (size_t)(s->p - start);
    return ok;
  }
  if (key_is(key, key_len, "error") && s->p < s->end && *s->p == '"') {
    c->has_error = true;
    return scan_string(s, &c->error_text, &c->error_text_len);
  }
  return scan_value(s);
}

static void chunk_reset(struct lg_chunk *out) {
  memset(out, 0, sizeof(*out));
  out->completion_tokens = -1;
  out->prompt_tokens = -1;
  out->draft_n = -1;
  out->draft_n_accepted = -1;
}

enum lg_chunk_kind lg_chunk_scan(const char *data, size_t len, struct lg_chunk *out) {
  chunk_reset(out);
  if (len == 6 && memcmp(data, "[DONE]", 6) == 0)
    return out->kind = LG_CHUNK_DONE;
  struct scanner s = {data, data + len, 0};
  skip_ws(&s);
  bool ok;
  if (s.p < s.end && *s.p == '{')
    ok = scan_object(&s, top_member, out);
  else
    ok = scan_value(&s); /* valid JSON that is not an object carries nothing */
  skip_ws(&s);
  if (!ok || s.p != s.end) {
    chunk_reset(out);
    return out->kind = LG_CHUNK_MALFORMED;
  }
  if (out->n_choices > 0)
    return out->kind = LG_CHUNK_CHOICES;
  if (out->has_error)
    return out->kind = LG_CHUNK_ERROR;
  return out->kind = LG_CHUNK_OTHER;
}

/* ---------------------------------------------------------------- JSON string unescape */
static void put_utf8(struct sbuf *out, uint32_t cp) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | (cp >> 6));
    b[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | (cp >> 12));
    b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  sbuf_append(out, b, n);
}

static uint32_t hex4(const char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v = v * 16u + (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

void lg_json_unescape_append(struct sbuf *out, const char *raw, size_t len) {
  const char *p = raw, *end = raw + len;
  while (p < end) {
    if (*p != '\\' || p + 1 >= end) {
      sbuf_putc(out, *p++);
      continue;
    }
    char e = p[1];
    p += 2;
    switch (e) {
    case 'b': sbuf_putc(out, '\b'); break;
    case 'f': sbuf_putc(out, '\f'); break;
    case 'n': sbuf_putc(out, '\n'); break;
    case 'r': sbuf_putc(out, '\r'); break;
    case 't': sbuf_putc(out, '\t'); break;
    case 'u': {
      if (end - p < 4)
        return;
      uint32_t cp = hex4(p);
      p += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
        uint32_t lo = hex4(p + 2);
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          p += 6;
        }
      }
      if (cp >= 0xD800 && cp < 0xE000)
        cp = 0xFFFD; /* lone surrogate */
      put_utf8(out, cp);
      break;
    }
    default: sbuf_putc(out, e); break; /* \" \\ \/ */
    }
  }
}
