/* libFuzzer: generation request bodies (completions, chat, generate) must be
 * parsed or rejected with a message, never crash, and accepted ones must be
 * within the limits the engine relies on. */
#include "sim/sim_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const enum sim_req_kind kinds[] = {SIM_REQ_COMPLETION, SIM_REQ_CHAT, SIM_REQ_GENERATE};
  const long context_length = 4096;
  char *body = malloc(size ? size : 1); /* exact size: ASan sees overreads */
  if (!body)
    return 0;
  memcpy(body, data, size);
  for (size_t k = 0; k < ST_ARRAY_LEN(kinds); k++) {
    struct sim_gen_params g;
    char why[768] = "";
    if (sim_request_parse(kinds[k], body, size, context_length, &g, why, sizeof why) == 0) {
      if (g.prompt_tokens < 1 || g.max_tokens < 1 || g.prompt_tokens + g.max_tokens > context_length)
        __builtin_trap();
    } else if (why[0] == '\0') {
      __builtin_trap(); /* every rejection says why */
    }
  }
  free(body);
  return 0;
}
