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

long sim_count_tokens(const char *text, size_t len) {
  const unsigned char *s = (const unsigned char *)text;
  long tokens = 0;
  size_t i = 0;
  while (i < len) {
    unsigned char c = s[i];
    if (is_alpha(c)) {
      while (i < len && is_alpha(s[i]))
        i++;
      tokens++;
    } else if (c == ' ' && i + 1 < len && !is_space(s[i + 1])) {
      i++; /* a single space belongs to the token after it */
    } else if (is_space(c)) {
      while (i < len && is_space(s[i]))
        i++;
      if (i < len && s[i - 1] == ' ' && i >= 2 && is_space(s[i - 2]))
        i--; /* leave the last space to the next token: "\n\n word" = 2 tokens */
      tokens++;
    } else if (c < 0x80) {
      i++; /* digit or punctuation */
      tokens++;
    } else {
      i++; /* one UTF-8 code point: skip its continuation bytes */
      while (i < len && (s[i] & 0xC0) == 0x80)
        i++;
      tokens++;
    }
  }
  return tokens;
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
