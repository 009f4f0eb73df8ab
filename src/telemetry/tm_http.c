/* One blocking HTTP GET with a deadline, for the dcgm and sim backends. It
 * runs on the sampler thread only, so the easy interface is enough. */
#include "telemetry/telemetry_internal.h"

#include <curl/curl.h>

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata) {
  sbuf_append(userdata, data, size * nmemb);
  return size * nmemb;
}

int tm_http_get(const char *url, int timeout_ms, struct sbuf *out, struct st_err *err) {
  sbuf_reset(out);
  CURL *curl = curl_easy_init();
  if (!curl)
    return err_setf(err, "%s: curl_easy_init failed", url);
  char curl_err[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* we are not on the main thread */
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE, 64L << 20);
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK)
    return err_setf(err, "GET %s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(rc));
  if (status < 200 || status > 299)
    return err_setf(err, "GET %s: HTTP status %ld", url, status);
  sbuf_append(out, "", 0); /* NUL-terminated, also for an empty body */
  return 0;
}
