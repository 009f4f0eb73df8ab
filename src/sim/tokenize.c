/* Token counts without a tokenizer, and the deterministic output text. The
 * rule is documented in docs/sim.md so clients can calibrate against it. */
#include "sim/sim_internal.h"

#include <string.h>

static bool is_alpha(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The two special tokens of the sim's ChatML-style template. */
static const char *const special_tokens[SIM_TOK_N_SPECIAL] = {"<|im_start|>", "<|im_end|>"};

enum span_kind { SPAN_SPECIAL, SPAN_WORD, SPAN_SPACE, SPAN_CHAR, SPAN_CODEPOINT };

/* The next token of text[*i..len): its kind and bytes [*start, *i). One rule
 * for counting and encoding, so usage.prompt_tokens = len(/tokenize). */
static enum span_kind next_span(const unsigned char *s, size_t len, size_t *i, size_t *start,
                                int *special) {
  for (;;) {
    size_t at = *i;
    unsigned char c = s[at];
    *start = at;
    if (c == '<') {
      for (int k = 0; k < SIM_TOK_N_SPECIAL; k++) {
        size_t n = strlen(special_tokens[k]);
        if (len - at >= n && memcmp(s + at, special_tokens[k], n) == 0) {
          *i = at + n;
          *special = k;
          return SPAN_SPECIAL;
        }
      }
    }
    if (is_alpha(c)) {
      while (*i < len && is_alpha(s[*i]))
        (*i)++;
      return SPAN_WORD;
    }
    if (c == ' ' && at + 1 < len && !is_space(s[at + 1])) {
      (*i)++; /* a single space belongs to the token after it */
      continue;
    }
    if (is_space(c)) {
      while (*i < len && is_space(s[*i]))
        (*i)++;
      if (*i < len && s[*i - 1] == ' ' && *i - at >= 2 && is_space(s[*i - 2]))
        (*i)--; /* leave the last space to the next token: "\n\n word" = 2 tokens */
      return SPAN_SPACE;
    }
    (*i)++;
    if (c < 0x80)
      return SPAN_CHAR; /* digit or punctuation */
    while (*i < len && (s[*i] & 0xC0) == 0x80)
      (*i)++; /* one UTF-8 code point: its continuation bytes */
    return SPAN_CODEPOINT;
  }
}

long sim_count_tokens(const char *text, size_t len) {
  const unsigned char *s = (const unsigned char *)text;
  long tokens = 0;
  size_t i = 0, start;
  int special;
  while (i < len) {
    next_span(s, len, &i, &start, &special);
    tokens++;
  }
  return tokens;
}

/* ---------------------------------------------------------------- the vocabulary
 * ids 1, 2: the special tokens; 9 "\t", 10 "\n", 11 "\n\n", 12 "  ", 13 "\r\n",
 * 32 " "; 33..126 the ASCII character itself (letters too: a one-letter token
 * merges with its neighbours when re-encoded, as a real BPE merges); the other
 * ids below 128 decode to "\n"; ids 128.. are the words " a", " b", ... " z",
 * " aa", ... (bijective base 26). Decoding ids then encoding the text gives the
 * same ids for word runs and different ones around merges, like a real
 * tokenizer; docs/sim.md has the rule. */
enum { WORD_BASE = 128 };

static uint32_t word_id(const unsigned char *w, size_t n, uint32_t vocab) {
  uint64_t k = 0, range = vocab > WORD_BASE ? vocab - WORD_BASE : 1;
  for (size_t j = 0; j < n; j++) {
    k = k * 26 + (uint64_t)((w[j] | 0x20) - 'a' + 1);
    if (k > range) /* not in the vocabulary: a stable hash into the word range */
      break;
  }
  if (k >= 1 && k <= range)
    return (uint32_t)(WORD_BASE + k - 1);
  uint64_t h = 1469598103934665603ull;
  for (size_t j = 0; j < n; j++)
    h = (h ^ (w[j] | 0x20)) * 1099511628211ull;
  return (uint32_t)(WORD_BASE + h % range);
}

static uint32_t space_id(const unsigned char *w, size_t n) {
  static const char *const runs[] = {"\t", "\n", "\n\n", "  ", "\r\n"};
  static const uint32_t ids[] = {9, 10, 11, 12, 13};
  if (n == 1 && w[0] == ' ')
    return 32;
  for (size_t k = 0; k < ST_ARRAY_LEN(runs); k++)
    if (strlen(runs[k]) == n && memcmp(runs[k], w, n) == 0)
      return ids[k];
  return 10;
}

size_t sim_tokenize(const char *text, size_t len, uint32_t vocab, uint32_t *ids, size_t cap) {
  const unsigned char *s = (const unsigned char *)text;
  size_t n = 0, i = 0, start;
  int special = 0;
  while (i < len) {
    enum span_kind kind = next_span(s, len, &i, &start, &special);
    uint32_t id;
    switch (kind) {
    case SPAN_SPECIAL: id = SIM_TOK_SPECIAL_FIRST + (uint32_t)special; break;
    case SPAN_WORD: id = word_id(s + start, i - start, vocab); break;
    case SPAN_SPACE: id = space_id(s + start, i - start); break;
    case SPAN_CHAR: id = s[start]; break;
    default: id = word_id(s + start, i - start, vocab); break; /* a code point: hashed */
    }
    if (id >= vocab)
      id = vocab - 1;
    if (n < cap)
      ids[n] = id;
    n++;
  }
  return n;
}

void sim_detokenize_append(struct sbuf *out, uint32_t id, uint32_t vocab, bool skip_special) {
  if (id >= SIM_TOK_SPECIAL_FIRST && id < SIM_TOK_SPECIAL_FIRST + SIM_TOK_N_SPECIAL) {
    if (!skip_special)
      sbuf_puts(out, special_tokens[id - SIM_TOK_SPECIAL_FIRST]);
    return;
  }
  if (id >= WORD_BASE && id < vocab) {
    char w[16];
    size_t n = 0;
    for (uint64_t k = (uint64_t)id - WORD_BASE + 1; k > 0 && n < sizeof w; k = (k - 1) / 26)
      w[n++] = (char)('a' + (k - 1) % 26);
    sbuf_putc(out, ' ');
    while (n > 0)
      sbuf_putc(out, w[--n]);
    return;
  }
  switch (id) {
  case 9: sbuf_putc(out, '\t'); return;
  case 11: sbuf_puts(out, "\n\n"); return;
  case 12: sbuf_puts(out, "  "); return;
  case 13: sbuf_puts(out, "\r\n"); return;
  default: break;
  }
  if (id >= 32 && id <= 126)
    sbuf_putc(out, (char)id);
  else
    sbuf_putc(out, '\n');
}

void sim_chat_render_append(struct sbuf *out, const char *role, const char *content) {
  sbuf_printf(out, "%s%s\n%s%s\n", special_tokens[0], role, content ? content : "",
              special_tokens[1]);
}

void sim_chat_generation_prompt_append(struct sbuf *out) {
  sbuf_printf(out, "%sassistant\n", special_tokens[0]);
}

/* Sixteen common words; output token i is " " + words[hash(i) % 16]. */
static const char *const output_words[] = {
    " the",  " of",  " and",   " to",    " in",  " model", " token", " server",
    " fast", " GPU", " cache", " batch", " run", " test",  " value", " stream",
};

const char *sim_token_text(uint64_t i, size_t *len) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
  const char *w = output_words[(h >> 60) & 15];
  *len = strlen(w);
  return w;
}

bool sim_text_is_chat_formatted(const char *text, size_t len) {
  static const char *const markers[] = {
      "<|im_start|>", "<|start_header_id|>", "<|start|>", "<｜User｜>", "[INST]", "<|user|>"};
  for (size_t m = 0; m < ST_ARRAY_LEN(markers); m++)
    if (memmem(text, len, markers[m], strlen(markers[m])))
      return true;
  return false;
}

bool sim_stream_should_send(int stream_interval, long out_len, bool finished) {
  if (finished)
    return true;
  if (stream_interval <= 1)
    return true;
  return out_len % stream_interval == 1;
}
