/* HTTP/1.1 response framing and small JSON helpers (uvicorn's header style). */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *sim_http_reason(int status) {
  switch (status) {
  case 100:
    return "Continue";
  case 200:
    return "OK";
  case 400:
    return "Bad Request";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 413:
    return "Request Entity Too Large";
  case 431:
    return "Request Header Fields Too Large";
  case 500:
    return "Internal Server Error";
  case 501:
    return "Not Implemented";
  case 503:
    return "Service Unavailable";
  default:
    return "Unknown";
  }
}

void sim_fmt_response_head(struct sbuf *out, int status, const char *content_type,
                           long content_length, bool keep_alive) {
  char date[64];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  sbuf_printf(out, "HTTP/1.1 %d %s\r\ndate: %s\r\nserver: uvicorn\r\n", status,
              sim_http_reason(status), date);
  if (content_length >= 0)
    sbuf_printf(out, "content-length: %ld\r\n", content_length);
  sbuf_printf(out, "content-type: %s\r\n", content_type);
  if (content_length < 0)
    sbuf_puts(out, "transfer-encoding: chunked\r\n");
  if (!keep_alive)
    sbuf_puts(out, "connection: close\r\n");
  sbuf_puts(out, "\r\n");
}

void sim_fmt_http_chunk(struct sbuf *out, const char *payload, size_t len) {
  /* chunk-size in hex, built by hand: this runs once per streamed event */
  static const char hex[] = "0123456789abcdef";
  char head[24];
  size_t n = sizeof head;
  head[--n] = '\n';
  head[--n] = '\r';
  size_t v = len;
  do {
    head[--n] = hex[v & 15];
    v >>= 4;
  } while (v);
  size_t head_len = sizeof head - n;
  sbuf_reserve(out, head_len + len + 2);
  memcpy(out->data + out->len, head + n, head_len);
  memcpy(out->data + out->len + head_len, payload, len);
  memcpy(out->data + out->len + head_len + len, "\r\n", 2);
  out->len += head_len + len + 2;
  out->data[out->len] = '\0';
}

void sim_fmt_json_response(struct sbuf *out, int status, const char *json, bool keep_alive) {
  size_t len = strlen(json);
  sim_fmt_response_head(out, status, "application/json", (long)len, keep_alive);
  sbuf_append(out, json, len);
}

char *sim_fmt_error_json_alloc(int status, const char *message) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "object", "error");
  cJSON_AddStringToObject(o, "message", message);
  cJSON_AddStringToObject(o, "type",
                          status == 404   ? "NotFoundError"
                          : status >= 500 ? "InternalServerError"
                                          : "BadRequestError");
  cJSON_AddItemToObject(o, "param", cJSON_CreateNull());
  cJSON_AddNumberToObject(o, "code", status);
  return sim_json_take_alloc(o);
}

char *sim_json_take_alloc(struct cJSON *o) {
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!s)
    util_die_oom(0);
  char *copy = xstrdup(s);
  cJSON_free(s);
  return copy;
}

