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

int tm_source_sample(void *state, struct tm_snapshot *out, struct st_err *err) {
  struct tm_source *src = state;
  int got;
  if (src->args) {
    const char *argv[TM_SOURCE_MAX_ARGS + 2] = {src->where};
    for (size_t i = 0; i < TM_SOURCE_MAX_ARGS && src->args[i]; i++)
      argv[i + 1] = src->args[i];
    got = tm_run_capture(argv, src->timeout_ms, &src->text, err);
  } else {
    got = tm_http_get(src->where, src->timeout_ms, &src->text, err);
  }
  if (got < 0)
    return -1;
  return src->parse(src->text.data, out, err);
}

int tm_source_open_parsed(char *where, const char *const *args,
                          int (*parse)(const char *, struct tm_snapshot *, struct st_err *),
                          const struct tm_config *cfg, void **state_out, struct st_err *err) {
  struct tm_source *src = tm_source_new(sizeof *src, where, cfg);
  src->args = args;
  src->parse = parse;
  return tm_open_probed(src, tm_source_sample, tm_source_close, state_out, err);
}

int tm_source_open(size_t state_bytes, char *where, const struct tm_config *cfg,
                   int (*sample)(void *, struct tm_snapshot *, struct st_err *), void **state_out,
                   struct st_err *err) {
  return tm_open_probed(tm_source_new(state_bytes, where, cfg), sample, tm_source_close,
                        state_out, err);
}
