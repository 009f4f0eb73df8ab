/* libFuzzer: server log lines through the parser and the folding state. */
#include "launcher/launcher.h"

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
  struct launch_log_state st;
  launch_log_state_init(&st);
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    struct launch_log_record r;
    launch_log_parse_line(line, &r);
    launch_log_state_add(&st, &r, 1);
  }
  free(text);
  return 0;
}
