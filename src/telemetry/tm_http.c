/* One blocking HTTP GET with a deadline, for the dcgm and sim backends, through
 * the HTTP helper (its body cap, proxy policy and error text). It runs on the
 * sampler thread only. */
#include "telemetry/telemetry_internal.h"

#include "http/http.h"

int tm_http_get(const char *url, int timeout_ms, struct sbuf *out, struct st_err *err) {
  struct http_request req = {.url = url, .timeout_ms = timeout_ms};
  struct http_response resp = {.body = *out};
  int rc = http_do(&req, &resp, err);
  *out = resp.body; /* NUL-terminated, also for an empty body */
  return rc;
}
