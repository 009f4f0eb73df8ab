/* libFuzzer: SSE framing + the chunk scanner + the unescaper must survive any
 * byte stream, split anywhere. The first byte picks the split points so the
 * fuzzer also explores reassembly across reads. */
#include "loadgen/loadgen.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(void *ctx, const char *payload, size_t len) {
  size_t *tokens = ctx;
  struct lg_chunk chunk;
  enum lg_chunk_kind kind = lg_chunk_scan(payload, len, &chunk);
  if (kind == LG_CHUNK_CHOICES && chunk.n_choices == 0)
    __builtin_trap(); /* CHOICES means non-empty choices */
  if (chunk.text) {
    if (chunk.text < payload || chunk.text + chunk.text_len > payload + len)
      __builtin_trap(); /* text points into the line */
    struct sbuf sb = {0};
    lg_json_unescape_append(&sb, chunk.text, chunk.text_len);
    sbuf_free(&sb);
  }
  if (chunk.error_text &&
      (!chunk.has_error || chunk.error_text < payload || chunk.error_text + chunk.error_text_len > payload + len))
    __builtin_trap(); /* an error event's text points into the line */
  if (chunk.completion_tokens < -2 || chunk.prompt_tokens < -2 || chunk.draft_n < -2 ||
      chunk.draft_n_accepted < -2)
    __builtin_trap(); /* counts are >= 0, -1 (absent) or -2 (impossible) */
  if (kind == LG_CHUNK_CHOICES)
    (*tokens)++;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  size_t step = (size_t)data[0] % 17 + 1;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  size_t tokens = 0;
  struct lg_sse sse;
  lg_sse_init(&sse);
  int rc = 0;
  for (size_t off = 0; off < len && rc == 0; off += step) {
    size_t n = len - off < step ? len - off : step;
    rc = lg_sse_feed(&sse, body + off, n, on_line, &tokens);
  }
  if (rc == 0)
    lg_sse_finish(&sse, on_line, &tokens);
  lg_sse_fini(&sse);
  /* Whole-input scan too: arbitrary bytes as one payload. */
  struct lg_chunk chunk;
  (void)lg_chunk_scan(body, len, &chunk);
  return 0;
}
