/* launcher: loose parsing of SGLang / vLLM log lines into figures. */
#include "launcher/launcher.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a number at the start of s: leading spaces, thousands commas
 * ("1,234,567"), an optional trailing unit ("%", " tokens/s") is ignored.
 * Returns true when at least one digit was read. */
static bool leading_number(const char *s, size_t len, double *out) {
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

static bool leading_int(const char *s, size_t len, int64_t *out) {
  double v;
  if (!leading_number(s, len, &v) || v < -9e18 || v > 9e18)
    return false;
  *out = (int64_t)v;
  return true;
}

/* One "key: value" (or "key=value") pair of a line body. */
struct pair {
  const char *key;
  size_t key_len;
  const char *value;
  size_t value_len;
};

#define MAX_PAIRS 48

/* Splits body on ", " into pairs at sep (": " or "="). A piece without the
 * separator continues the previous value ("Per-position acceptance rate:
 * 0.9, 0.8, 0.7"). */
static size_t split_pairs(const char *body, const char *sep, struct pair *pairs, size_t max) {
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

static bool key_is(const struct pair *pr, const char *key) {
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
static const char *strip_prefix(const char *line, char *tag, size_t tag_bytes) {
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

/* Which record field a key fills, and how its value reads. */
enum field_type { FIELD_INT, FIELD_NUM, FIELD_PERCENT };
struct field {
  const char *key;
  enum field_type type;
  size_t offset;    /* into struct launch_log_record */
  unsigned has_bit; /* LAUNCH_LOG_HAS_*, 0 = none */
};

#define FIELD(key, type, member, bit) {key, type, offsetof(struct launch_log_record, member), bit}

static const struct field sglang_batch_fields[] = {
    FIELD("#running-req", FIELD_INT, running, LAUNCH_LOG_HAS_RUNNING),
    FIELD("#queue-req", FIELD_INT, queued, LAUNCH_LOG_HAS_QUEUED),
    FIELD("token usage", FIELD_NUM, token_usage_frac, LAUNCH_LOG_HAS_TOKEN_USAGE),
    FIELD("full token usage", FIELD_NUM, token_usage_frac, LAUNCH_LOG_HAS_TOKEN_USAGE),
    FIELD("#token", FIELD_INT, num_tokens, LAUNCH_LOG_HAS_NUM_TOKENS),
    FIELD("#full token", FIELD_INT, num_tokens, LAUNCH_LOG_HAS_NUM_TOKENS),
    FIELD("accept len", FIELD_NUM, accept_length, LAUNCH_LOG_HAS_ACCEPT_LENGTH),
    FIELD("accept rate", FIELD_NUM, accept_rate_frac, LAUNCH_LOG_HAS_ACCEPT_RATE),
    FIELD("gen throughput (token/s)", FIELD_NUM, gen_tok_per_s, LAUNCH_LOG_HAS_GEN_THROUGHPUT),
    FIELD("input throughput (token/s)", FIELD_NUM, input_tok_per_s,
          LAUNCH_LOG_HAS_INPUT_THROUGHPUT),
    FIELD("#new-seq", FIELD_INT, new_seq, LAUNCH_LOG_HAS_NEW_SEQ),
    FIELD("#new-token", FIELD_INT, new_tokens, LAUNCH_LOG_HAS_NEW_TOKENS),
    FIELD("#cached-token", FIELD_INT, cached_tokens, LAUNCH_LOG_HAS_CACHED_TOKENS),
};

static const struct field sglang_kv_fields[] = {
    FIELD("max_total_num_tokens", FIELD_INT, max_total_num_tokens,
          LAUNCH_LOG_HAS_MAX_TOTAL_TOKENS),
    FIELD("max_running_requests", FIELD_INT, max_running_requests, LAUNCH_LOG_HAS_MAX_RUNNING),
    FIELD("context_len", FIELD_INT, context_len, LAUNCH_LOG_HAS_CONTEXT_LEN),
};

static const struct field vllm_fields[] = {
    FIELD("Avg prompt throughput", FIELD_NUM, input_tok_per_s, LAUNCH_LOG_HAS_INPUT_THROUGHPUT),
    FIELD("Avg generation throughput", FIELD_NUM, gen_tok_per_s, LAUNCH_LOG_HAS_GEN_THROUGHPUT),
    FIELD("Running", FIELD_INT, running, LAUNCH_LOG_HAS_RUNNING),
    FIELD("Waiting", FIELD_INT, queued, LAUNCH_LOG_HAS_QUEUED),
    FIELD("GPU KV cache usage", FIELD_PERCENT, token_usage_frac, LAUNCH_LOG_HAS_TOKEN_USAGE),
    FIELD("Prefix cache hit rate", FIELD_PERCENT, prefix_hit_frac, LAUNCH_LOG_HAS_PREFIX_HIT),
    FIELD("Mean acceptance length", FIELD_NUM, accept_length, LAUNCH_LOG_HAS_ACCEPT_LENGTH),
    FIELD("Avg Draft acceptance rate", FIELD_PERCENT, accept_rate_frac,
          LAUNCH_LOG_HAS_ACCEPT_RATE),
    FIELD("Accepted", FIELD_INT, accepted_tokens, 0),
    FIELD("Drafted", FIELD_INT, drafted_tokens, LAUNCH_LOG_HAS_SPEC_TOKENS),
};

static void apply_fields(const struct pair *pairs, size_t n_pairs, const struct field *fields,
                         size_t n_fields, struct launch_log_record *r) {
  for (size_t i = 0; i < n_pairs; i++) {
    for (size_t f = 0; f < n_fields; f++) {
      if (!key_is(&pairs[i], fields[f].key))
        continue;
      char *dst = (char *)r + fields[f].offset;
      double d;
      if (!leading_number(pairs[i].value, pairs[i].value_len, &d))
        break;
      if (fields[f].type == FIELD_INT) {
        if (d < -9e18 || d > 9e18)
          break;
        int64_t k = (int64_t)d;
        memcpy(dst, &k, sizeof(k));
      } else {
        if (fields[f].type == FIELD_PERCENT)
          d /= 100.0;
        memcpy(dst, &d, sizeof(d));
      }
      r->has |= fields[f].has_bit;
      break;
    }
  }
}

static void parse_sglang_batch(const char *rest, struct launch_log_record *r) {
  /* rest follows "Prefill batch" / "Decode batch": "[ [iter]], k: v, ..." */
  while (*rest == ' ' || *rest == '.')
    rest++;
  if (*rest == '[') {
    int64_t iter;
    if (leading_int(rest + 1, strlen(rest + 1), &iter))
      r->iter = iter;
    const char *close = strchr(rest, ']');
    rest = close ? close + 1 : rest;
  }
  while (*rest == ',' || *rest == ' ')
    rest++;
  struct pair pairs[MAX_PAIRS];
  size_t n = split_pairs(rest, ": ", pairs, MAX_PAIRS);
  apply_fields(pairs, n, sglang_batch_fields, ST_ARRAY_LEN(sglang_batch_fields), r);
}

static void parse_kv_capacity(const char *body, struct launch_log_record *r) {
  struct pair pairs[MAX_PAIRS];
  size_t n = split_pairs(body, "=", pairs, MAX_PAIRS);
  apply_fields(pairs, n, sglang_kv_fields, ST_ARRAY_LEN(sglang_kv_fields), r);
}

/* "0.9, 0.8, 0.7" -> per-position rates. */
static void parse_positions(const char *v, size_t vl, struct launch_log_record *r) {
  const char *q = v, *end = v + vl;
  r->n_positions = 0;
  double d;
  while (q < end && r->n_positions < LAUNCH_LOG_MAX_POSITIONS &&
         leading_number(q, (size_t)(end - q), &d)) {
    r->per_position_rate_frac[r->n_positions++] = d;
    const char *comma = memchr(q, ',', (size_t)(end - q));
    if (!comma)
      break;
    q = comma + 1;
  }
  if (r->n_positions > 0)
    r->has |= LAUNCH_LOG_HAS_PER_POSITION;
}

static void parse_vllm_pairs(const char *body, struct launch_log_record *r) {
  struct pair pairs[MAX_PAIRS];
  size_t n = split_pairs(body, ": ", pairs, MAX_PAIRS);
  apply_fields(pairs, n, vllm_fields, ST_ARRAY_LEN(vllm_fields), r);
  for (size_t i = 0; i < n; i++)
    if (key_is(&pairs[i], "Per-position acceptance rate"))
      parse_positions(pairs[i].value, pairs[i].value_len, r);
}

enum launch_log_kind launch_log_parse_line(const char *line, struct launch_log_record *r) {
  memset(r, 0, sizeof(*r));
  r->iter = -1;
  const char *body = strip_prefix(line, r->rank_tag, sizeof(r->rank_tag));
  const char *hit;
  if ((hit = strstr(body, "Decode batch")) != NULL) {
    r->kind = LAUNCH_LOG_DECODE;
    parse_sglang_batch(hit + strlen("Decode batch"), r);
  } else if ((hit = strstr(body, "Prefill batch")) != NULL) {
    r->kind = LAUNCH_LOG_PREFILL;
    parse_sglang_batch(hit + strlen("Prefill batch"), r);
  } else if ((hit = strstr(body, "max_total_num_tokens=")) != NULL) {
    r->kind = LAUNCH_LOG_KV_CAPACITY;
    parse_kv_capacity(hit, r);
  } else if ((hit = strstr(body, "server_args=ServerArgs(")) != NULL) {
    r->kind = LAUNCH_LOG_SERVER_ARGS;
    const char *dp = strstr(hit, " dp_size=");
    if (!dp)
      dp = strstr(hit, "(dp_size=");
    if (dp && leading_int(dp + strlen(" dp_size="), strcspn(dp + strlen(" dp_size="), ",)"),
                          &r->dp_size))
      r->has |= LAUNCH_LOG_HAS_DP_SIZE;
  } else if ((hit = strstr(body, "GPU KV cache size:")) != NULL) {
    int64_t k;
    const char *v = hit + strlen("GPU KV cache size:");
    if (leading_int(v, strlen(v), &k) && strstr(v, "tokens")) {
      r->kind = LAUNCH_LOG_VLLM_KV_SIZE;
      r->max_total_num_tokens = k;
      r->has |= LAUNCH_LOG_HAS_MAX_TOTAL_TOKENS;
    }
  } else if ((hit = strstr(body, "SpecDecoding metrics:")) != NULL) {
    r->kind = LAUNCH_LOG_VLLM_SPEC;
    parse_vllm_pairs(hit + strlen("SpecDecoding metrics:"), r);
  } else if ((hit = strstr(body, "Avg prompt throughput:")) != NULL) {
    r->kind = LAUNCH_LOG_VLLM_ENGINE;
    parse_vllm_pairs(hit, r);
  } else if (strstr(body, "The server is fired up and ready to roll!") ||
             strstr(body, "Application startup complete.")) {
    r->kind = LAUNCH_LOG_READY;
  }
  return r->kind;
}

void launch_log_state_init(struct launch_log_state *st) {
  memset(st, 0, sizeof(*st));
}

static void recompute_kv_total(struct launch_log_state *st) {
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

static void add_kv_capacity(struct launch_log_state *st, const char *tag, int64_t tokens) {
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

void launch_log_state_add(struct launch_log_state *st, const struct launch_log_record *r,
                          int64_t mono_ns) {
  if (r->kind == LAUNCH_LOG_OTHER || r->kind == LAUNCH_LOG_READY)
    return;
  st->last_update_mono_ns = mono_ns;
  if (r->has & LAUNCH_LOG_HAS_DP_SIZE) {
    st->dp_size = r->dp_size;
    if (st->n_kv_tags_ > 0)
      recompute_kv_total(st);
  }
  if (r->has & LAUNCH_LOG_HAS_MAX_TOTAL_TOKENS)
    add_kv_capacity(st, r->rank_tag, r->max_total_num_tokens);
  if (r->kind == LAUNCH_LOG_DECODE)
    st->n_decode_lines++;
  if (r->kind == LAUNCH_LOG_PREFILL)
    st->n_prefill_lines++;
  if (r->has & (LAUNCH_LOG_HAS_RUNNING | LAUNCH_LOG_HAS_QUEUED)) {
    st->load_valid = true;
    if (r->has & LAUNCH_LOG_HAS_RUNNING)
      st->running = r->running;
    if (r->has & LAUNCH_LOG_HAS_QUEUED)
      st->queued = r->queued;
  }
  if (r->has & LAUNCH_LOG_HAS_TOKEN_USAGE) {
    st->token_usage_valid = true;
    st->token_usage_frac = r->token_usage_frac;
  }
  if (r->has & LAUNCH_LOG_HAS_GEN_THROUGHPUT && r->kind != LAUNCH_LOG_PREFILL) {
    st->gen_valid = true;
    st->gen_tok_per_s = r->gen_tok_per_s;
  }
  if (r->has & (LAUNCH_LOG_HAS_ACCEPT_LENGTH | LAUNCH_LOG_HAS_ACCEPT_RATE |
                LAUNCH_LOG_HAS_SPEC_TOKENS))
    st->spec_seen = true;
  if (r->has & LAUNCH_LOG_HAS_ACCEPT_LENGTH) {
    st->accept_length_valid = true;
    st->accept_length = r->accept_length;
  }
  if (r->has & LAUNCH_LOG_HAS_ACCEPT_RATE) {
    st->accept_rate_valid = true;
    st->accept_rate_frac = r->accept_rate_frac;
  }
  if (r->has & LAUNCH_LOG_HAS_PER_POSITION) {
    st->n_positions = r->n_positions;
    memcpy(st->per_position_rate_frac, r->per_position_rate_frac,
           sizeof(st->per_position_rate_frac));
  }
}
