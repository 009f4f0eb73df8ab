/* engine: the shared pieces of the log-line parsers (numbers, "key: value"
 * pairs, rank tags, field tables), the dispatch to an engine's parser and the
 * state that folds parsed lines into the run's figures. */
#include "engine/engine_internal.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a number at the start of s: leading spaces, thousands commas
 * ("1,234,567"), an optional trailing unit ("%", " tokens/s") is ignored.
 * Returns true when at least one digit was read. */
bool eng_leading_number(const char *s, size_t len, double *out) {
  char digits[64];
  size_t n = 0, i = 0;
  while (i < len && s[i] == ' ')
    i++;
  bool any_digit = false;
  for (; i < len && n + 1 < sizeof(digits); i++) {
    char c = s[i];
    if (isdigit((unsigned char)c)) {
      any_digit = true;
      digits[n++] = c;
    } else if (c == ',' && any_digit && i + 1 < len && isdigit((unsigned char)s[i + 1])) {
      continue; /* thousands separator */
    } else if (c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
      digits[n++] = c;
    } else {
      break;
    }
  }
  if (!any_digit)
    return false;
  digits[n] = '\0';
  char *end;
  double v = strtod(digits, &end);
  if (end == digits || v != v)
    return false;
  *out = v;
  return true;
}

bool eng_leading_int(const char *s, size_t len, int64_t *out) {
  double v;
  if (!eng_leading_number(s, len, &v) || v < -9e18 || v > 9e18)
    return false;
  *out = (int64_t)v;
  return true;
}

/* Splits body on ", " into pairs at sep (": " or "="). A piece without the
 * separator continues the previous value ("Per-position acceptance rate:
 * 0.9, 0.8, 0.7"). */
size_t eng_split_pairs(const char *body, const char *sep, struct eng_pair *pairs,
                       size_t max) {
  size_t n = 0, sep_len = strlen(sep);
  const char *p = body;
  while (*p) {
    const char *next = strstr(p, ", ");
    size_t piece_len = next ? (size_t)(next - p) : strlen(p);
    const char *s = NULL;
    for (size_t i = 0; i + sep_len <= piece_len; i++)
      if (memcmp(p + i, sep, sep_len) == 0) {
        s = p + i;
        break;
      }
    if (s && n < max) {
      pairs[n].key = p;
      pairs[n].key_len = (size_t)(s - p);
      pairs[n].value = s + sep_len;
      pairs[n].value_len = piece_len - (size_t)(s - p) - sep_len;
      n++;
    } else if (n > 0 && pairs[n - 1].value + pairs[n - 1].value_len + 2 == p) {
      pairs[n - 1].value_len += 2 + piece_len; /* continuation */
    }
    if (!next)
      break;
    p = next + 2;
  }
  return n;
}

bool eng_key_is(const struct eng_pair *pr, const char *key) {
  size_t n = strlen(key);
  size_t klen = pr->key_len;
  const char *k = pr->key;
  while (klen > 0 && *k == ' ') {
    k++;
    klen--;
  }
  while (klen > 0 && k[klen - 1] == ' ')
    klen--;
  return klen == n && memcmp(k, key, n) == 0;
}

/* "[2026-06-23 01:10:14 DP0 TP0 EP0] body" -> tag "DP0 TP0 EP0", body.
 * vLLM: "(EngineCore_DP0 pid=123) INFO ..." -> tag "EngineCore_DP0". */
const char *eng_strip_prefix(const char *line, char *tag, size_t tag_bytes) {
  tag[0] = '\0';
  const char *body = line;
  if (line[0] == '[') {
    const char *close = strchr(line, ']');
    if (close) {
      size_t used = 0;
      const char *p = line + 1;
      while (p < close) {
        while (p < close && *p == ' ')
          p++;
        const char *w = p;
        while (p < close && *p != ' ')
          p++;
        size_t wlen = (size_t)(p - w);
        bool is_rank = wlen >= 3 && isupper((unsigned char)w[0]) && isupper((unsigned char)w[1]) &&
                       isdigit((unsigned char)w[2]);
        if (is_rank && used + wlen + 2 < tag_bytes) {
          if (used)
            tag[used++] = ' ';
          memcpy(tag + used, w, wlen);
          used += wlen;
          tag[used] = '\0';
        }
      }
      body = close + 1;
      while (*body == ' ')
        body++;
    }
  } else if (line[0] == '(') {
    const char *sp = strpbrk(line + 1, " )");
    if (sp) {
      size_t len = (size_t)(sp - line - 1);
      if (len + 1 < tag_bytes) {
        memcpy(tag, line + 1, len);
        tag[len] = '\0';
      }
    }
  }
  return body;
}

void eng_apply_fields(const struct eng_pair *pairs, size_t n_pairs,
                      const struct eng_log_field *fields, size_t n_fields,
                      struct eng_log_record *r) {
  for (size_t i = 0; i < n_pairs; i++) {
    for (size_t f = 0; f < n_fields; f++) {
      if (!eng_key_is(&pairs[i], fields[f].key))
        continue;
      char *dst = (char *)r + fields[f].offset;
      double d;
      if (!eng_leading_number(pairs[i].value, pairs[i].value_len, &d))
        break;
      if (fields[f].type == ENG_FIELD_INT) {
        if (d < -9e18 || d > 9e18)
          break;
        int64_t k = (int64_t)d;
        memcpy(dst, &k, sizeof(k));
      } else {
        if (fields[f].type == ENG_FIELD_PERCENT)
          d /= 100.0;
        memcpy(dst, &d, sizeof(d));
      }
      r->has |= fields[f].has_bit;
      break;
    }
  }
}

void eng_log_record_clear(struct eng_log_record *r) {
  memset(r, 0, sizeof(*r));
  r->iter = -1;
}

enum eng_log_kind eng_log_parse_line(const struct eng_ops *e, const char *line,
                                     struct eng_log_record *out) {
  if (e) {
    if (e->parse_log_line)
      return e->parse_log_line(line, out);
    eng_log_record_clear(out);
    return ENG_LOG_OTHER;
  }
  eng_log_record_clear(out);
  for (size_t i = 0; i < eng_count(); i++) {
    const struct eng_ops *o = eng_at(i);
    bool tried = false; /* the sim reads as SGLang: one try per parser */
    for (size_t k = 0; k < i && !tried; k++)
      tried = eng_at(k)->parse_log_line == o->parse_log_line;
    if (!tried && o->parse_log_line && o->parse_log_line(line, out) != ENG_LOG_OTHER)
      return out->kind;
  }
  return out->kind;
}

void eng_log_state_init(struct eng_log_state *st) {
  memset(st, 0, sizeof(*st));
}

static void recompute_kv_total(struct eng_log_state *st) {
  int64_t sum = 0;
  /* Log text is outside input: absurd values saturate instead of overflowing. */
  for (int i = 0; i < st->n_kv_tags_; i++)
    if (__builtin_add_overflow(sum, st->kv_per_tag_[i], &sum))
      sum = st->kv_per_tag_[i] < 0 ? INT64_MIN : INT64_MAX;
  /* As InferenceX: one tagged line with dp_size=N stands for N ranks. */
  if (st->n_kv_tags_ == 1 && st->kv_tags_[0][0] && st->dp_size > 1 &&
      __builtin_mul_overflow(sum, (int64_t)st->dp_size, &sum))
    sum = st->kv_per_tag_[0] < 0 ? INT64_MIN : INT64_MAX;
  st->max_total_num_tokens = sum;
  st->max_total_num_tokens_valid = st->n_kv_tags_ > 0;
}

static void add_kv_capacity(struct eng_log_state *st, const char *tag, int64_t tokens) {
  for (int i = 0; i < st->n_kv_tags_; i++) {
    if (strcmp(st->kv_tags_[i], tag) == 0) {
      st->kv_per_tag_[i] = tokens; /* a restart logs it again: latest wins */
      recompute_kv_total(st);
      return;
    }
  }
  if (st->n_kv_tags_ < (int)ST_ARRAY_LEN(st->kv_tags_)) {
    snprintf(st->kv_tags_[st->n_kv_tags_], sizeof(st->kv_tags_[0]), "%s", tag);
    st->kv_per_tag_[st->n_kv_tags_++] = tokens;
  }
  recompute_kv_total(st);
}

void eng_log_state_add(struct eng_log_state *st, const struct eng_log_record *r,
                       int64_t mono_ns) {
  if (r->kind == ENG_LOG_OTHER || r->kind == ENG_LOG_READY)
    return;
  st->last_update_mono_ns = mono_ns;
  if (r->has & ENG_LOG_HAS_DP_SIZE) {
    st->dp_size = r->dp_size;
    if (st->n_kv_tags_ > 0)
      recompute_kv_total(st);
  }
  if (r->has & ENG_LOG_HAS_MAX_TOTAL_TOKENS)
    add_kv_capacity(st, r->rank_tag, r->max_total_num_tokens);
  if (r->has & ENG_LOG_HAS_MAX_RUNNING) {
    st->max_running_valid = true;
    st->max_running_requests = r->max_running_requests;
  }
  if (r->kind == ENG_LOG_DECODE)
    st->n_decode_lines++;
  if (r->kind == ENG_LOG_PREFILL)
    st->n_prefill_lines++;
  if (r->has & (ENG_LOG_HAS_RUNNING | ENG_LOG_HAS_QUEUED)) {
    st->load_valid = true;
    if (r->has & ENG_LOG_HAS_RUNNING)
      st->running = r->running;
    if (r->has & ENG_LOG_HAS_QUEUED)
      st->queued = r->queued;
  }
  if (r->has & ENG_LOG_HAS_TOKEN_USAGE) {
    st->token_usage_valid = true;
    st->token_usage_frac = r->token_usage_frac;
  }
  if (r->has & ENG_LOG_HAS_GEN_THROUGHPUT && r->kind != ENG_LOG_PREFILL) {
    st->gen_valid = true;
    st->gen_tok_per_s = r->gen_tok_per_s;
  }
  if (r->has & (ENG_LOG_HAS_ACCEPT_LENGTH | ENG_LOG_HAS_ACCEPT_RATE |
                ENG_LOG_HAS_SPEC_TOKENS))
    st->spec_seen = true;
  if (r->has & ENG_LOG_HAS_ACCEPT_LENGTH) {
    st->accept_length_valid = true;
    st->accept_length = r->accept_length;
  }
  if (r->has & ENG_LOG_HAS_ACCEPT_RATE) {
    st->accept_rate_valid = true;
    st->accept_rate_frac = r->accept_rate_frac;
  }
  if (r->has & ENG_LOG_HAS_PER_POSITION) {
    st->n_positions = r->n_positions;
    memcpy(st->per_position_rate_frac, r->per_position_rate_frac,
           sizeof(st->per_position_rate_frac));
  }
}
