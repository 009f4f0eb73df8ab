/* libFuzzer: the sim's HTTP request parser must survive any bytes, never read
 * outside the buffer (ASan), and return consistent results: a complete
 * request lies inside the buffer, and parsing a pipelined remainder works too.
 * The token-counting rule runs over the same bytes. */
#include "sim/sim_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* an exact-size heap copy so ASan sees any read past the end */
  char *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  size_t off = 0;
  for (int i = 0; i < 8 && off < size; i++) {
    struct sim_http_request req;
    enum sim_http_result r = sim_http_parse(buf + off, size - off, &req);
    if (r != SIM_HTTP_COMPLETE)
      break;
    if (req.total_bytes == 0 || req.total_bytes > size - off || req.body_len > req.total_bytes ||
        req.path_len > req.target_len || req.method_len == 0)
      __builtin_trap();
    if (req.body + req.body_len != buf + off + req.total_bytes)
      __builtin_trap();
    (void)sim_http_path_is(&req, "/v1/completions");
    (void)sim_http_method_is(&req, "POST");
    off += req.total_bytes;
  }
  if (sim_count_tokens(buf, size) > (long)size)
    __builtin_trap(); /* never more tokens than bytes */
  (void)sim_text_is_chat_formatted(buf, size);
  free(buf);
  return 0;
}
