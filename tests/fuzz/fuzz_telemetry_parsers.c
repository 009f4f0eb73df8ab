/* libFuzzer: every telemetry parser on arbitrary bytes (tool output and HTTP
 * bodies are outside input). Must never crash, leak or read out of bounds. */
#include "telemetry/telemetry_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = xmalloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  struct st_err err;
  if (tm_nvsmi_parse_gpus(text, TM_NVSMI_GPU_QUERY, snap, &err) == 0)
    tm_nvsmi_parse_apps(text, TM_NVSMI_APPS_QUERY, snap, &err);
  memset(snap, 0, sizeof *snap);
  tm_amdsmi_parse(text, snap, &err);
  memset(snap, 0, sizeof *snap);
  tm_dcgm_parse(text, size, snap, &err);
  memset(snap, 0, sizeof *snap);
  tm_sim_parse(text, snap, &err);
  free(snap);
  free(text);
  return 0;
}
