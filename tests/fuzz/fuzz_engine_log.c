/* libFuzzer: server log lines through the parser and the folding state. */
#include "engine/engine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct eng_log_state st;
  eng_log_state_init(&st);
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    struct eng_log_record r;
    eng_log_parse_line(NULL, line, &r);
    eng_log_state_add(&st, &r, 1);
  }
  free(text);
  return 0;
}
