/* A minimal HTTP/1.x request parser: pure, bounded, allocation-free, so the
 * fuzzer can drive it over any byte buffer. */
#include "sim/sim_internal.h"

#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c) {
  /* RFC 9110 token characters */
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return true;
  return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Finds "\r\n\r\n" (or "\n\n") ending the header block; returns the offset of
 * the first body byte, or 0 when not present yet. */
static size_t header_end(const char *buf, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (buf[i] != '\n')
      continue;
    if (i + 1 < len && buf[i + 1] == '\n')
      return i + 2;
    if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
      return i + 3;
  }
  return 0;
}

static bool value_has_token(const char *v, size_t n, const char *token) {
  size_t tlen = strlen(token);
  size_t i = 0;
  while (i < n) {
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    size_t start = i;
    while (i < n && v[i] != ',')
      i++;
    size_t end = i;
    while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
      end--;
    if (end - start == tlen && strncasecmp(v + start, token, tlen) == 0)
      return true;
  }
  return false;
}

static bool parse_content_length(const char *v, size_t n, size_t *out) {
  size_t value = 0;
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return false;
    if (value > (SIZE_MAX - 9) / 10)
      return false;
    value = value * 10 + (size_t)(v[i] - '0');
  }
  *out = value;
  return true;
}

enum sim_http_result sim_http_parse(const char *buf, size_t len, struct sim_http_request *req) {
  memset(req, 0, sizeof *req);
  size_t hend = header_end(buf, len);
  if (hend == 0)
    return len > SIM_HTTP_MAX_HEADER_BYTES ? SIM_HTTP_TOO_LARGE : SIM_HTTP_INCOMPLETE;
  if (hend > SIM_HTTP_MAX_HEADER_BYTES)
    return SIM_HTTP_TOO_LARGE;

  /* request line: METHOD SP target SP HTTP/1.x */
  size_t i = 0;
  while (i < hend && is_tchar((unsigned char)buf[i]))
    i++;
  if (i == 0 || i >= hend || buf[i] != ' ')
    return SIM_HTTP_BAD;
  req->method = buf;
  req->method_len = i;
  size_t tstart = ++i;
  while (i < hend && buf[i] != ' ' && buf[i] != '\r' && buf[i] != '\n') {
    if ((unsigned char)buf[i] < 0x21 || (unsigned char)buf[i] == 0x7f)
      return SIM_HTTP_BAD;
    i++;
  }
  if (i == tstart || i >= hend || buf[i] != ' ')
    return SIM_HTTP_BAD;
  req->target = buf + tstart;
  req->target_len = i - tstart;
  const char *q = memchr(req->target, '?', req->target_len);
  req->path_len = q ? (size_t)(q - req->target) : req->target_len;
  i++;
  if (hend - i < 9 || memcmp(buf + i, "HTTP/1.", 7) != 0 || buf[i + 7] < '0' || buf[i + 7] > '9')
    return SIM_HTTP_BAD;
  req->minor_version = buf[i + 7] - '0';
  i += 8;
  if (buf[i] == '\r')
    i++;
  if (i >= hend || buf[i] != '\n')
    return SIM_HTTP_BAD;
  i++;
  req->keep_alive = req->minor_version >= 1;

  /* header fields */
  bool have_length = false, chunked = false;
  size_t content_length = 0;
  while (i < hend) {
    size_t line = i;
    size_t eol = i;
    while (eol < hend && buf[eol] != '\n')
      eol++;
    size_t lend = eol;
    if (lend > line && buf[lend - 1] == '\r')
      lend--;
    i = eol + 1;
    if (lend == line)
      break; /* the empty line */
    size_t c = line;
    while (c < lend && is_tchar((unsigned char)buf[c]))
      c++;
    if (c == line || c >= lend || buf[c] != ':')
      return SIM_HTTP_BAD; /* also rejects obsolete line folding */
    const char *name = buf + line;
    size_t name_len = c - line;
    size_t v = c + 1;
    while (v < lend && (buf[v] == ' ' || buf[v] == '\t'))
      v++;
    size_t vend = lend;
    while (vend > v && (buf[vend - 1] == ' ' || buf[vend - 1] == '\t'))
      vend--;
    const char *value = buf + v;
    size_t value_len = vend - v;
    if (name_len == 14 && strncasecmp(name, "content-length", 14) == 0) {
      size_t n;
      if (!parse_content_length(value, value_len, &n) || (have_length && n != content_length))
        return SIM_HTTP_BAD;
      have_length = true;
      content_length = n;
    } else if (name_len == 17 && strncasecmp(name, "transfer-encoding", 17) == 0) {
      chunked = true;
    } else if (name_len == 10 && strncasecmp(name, "connection", 10) == 0) {
      if (value_has_token(value, value_len, "close"))
        req->keep_alive = false;
      else if (value_has_token(value, value_len, "keep-alive"))
        req->keep_alive = true;
    } else if (name_len == 6 && strncasecmp(name, "expect", 6) == 0) {
      if (value_has_token(value, value_len, "100-continue"))
        req->expect_continue = true;
    }
  }
  if (chunked)
    return have_length ? SIM_HTTP_BAD : SIM_HTTP_UNSUPPORTED;
  if (content_length > SIM_HTTP_MAX_BODY_BYTES)
    return SIM_HTTP_TOO_LARGE;
  if (len - hend < content_length)
    return SIM_HTTP_INCOMPLETE;
  req->body = buf + hend;
  req->body_len = content_length;
  req->total_bytes = hend + content_length;
  return SIM_HTTP_COMPLETE;
}

bool sim_http_path_is(const struct sim_http_request *req, const char *path) {
  size_t n = strlen(path);
  return req->path_len == n && memcmp(req->target, path, n) == 0;
}

bool sim_http_method_is(const struct sim_http_request *req, const char *method) {
  size_t n = strlen(method);
  return req->method_len == n && memcmp(req->method, method, n) == 0;
}
