/* The state shared by the backends that read one text per sample (see
 * struct tm_source in telemetry_internal.h). */
#include "telemetry/telemetry_internal.h"

#include <stdlib.h>

void *tm_source_new(size_t state_bytes, char *where, const struct tm_config *cfg) {
  struct tm_source *src = xcalloc(1, state_bytes);
  src->where = where;
  src->timeout_ms = tm_timeout_ms(cfg);
  return src;
}

void tm_source_close(void *state) {
  struct tm_source *src = state;
  if (!src)
    return;
  sbuf_free(&src->text);
  free(src->where);
  free(src);
}

int tm_source_open(size_t state_bytes, char *where, const struct tm_config *cfg,
                   int (*sample)(void *, struct tm_snapshot *, struct st_err *), void **state_out,
                   struct st_err *err) {
  return tm_open_probed(tm_source_new(state_bytes, where, cfg), sample, tm_source_close,
                        state_out, err);
}
