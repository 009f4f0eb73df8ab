/* servetop's blocking HTTP client (see http.h): one request on its own handle,
 * a kept-alive handle, and a concurrent batch on one multi handle, all set up
 * by prepare() and judged by finish(), so every caller gets the same
 * timeouts, body cap, headers, proxy policy and error text. */
#include "http/http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- global init */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init_once(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

void http_global_init(void) {
  pthread_once(&global_once, global_init_once);
}

/* ---------------------------------------------------------------- proxy policy */
static pthread_mutex_t proxy_mu = PTHREAD_MUTEX_INITIALIZER;
static char proxy_url[512]; /* "": none */

int http_set_proxy(const char *url, struct st_err *err) {
  if (!url || !url[0]) {
    pthread_mutex_lock(&proxy_mu);
    proxy_url[0] = '\0';
    pthread_mutex_unlock(&proxy_mu);
    return 0;
  }
  static const char *const schemes[] = {"http://", "https://", "socks4://", "socks4a://",
                                        "socks5://", "socks5h://"};
  const char *host = NULL;
  for (size_t i = 0; i < ST_ARRAY_LEN(schemes) && !host; i++)
    if (strncmp(url, schemes[i], strlen(schemes[i])) == 0)
      host = url + strlen(schemes[i]);
  if (!host)
    return err_setf(err, "%s: expected http://HOST:PORT (or https://, socks4://, socks4a://, "
                         "socks5://, socks5h://)", url);
  if (!host[0] || host[0] == '/' || host[0] == ':')
    return err_setf(err, "%s: no host", url);
  if (strlen(url) >= sizeof(proxy_url))
    return err_setf(err, "%.40s...: longer than %zu characters", url, sizeof(proxy_url) - 1);
  if (strpbrk(url, " \t\r\n"))
    return err_setf(err, "%s: has white space", url);
  pthread_mutex_lock(&proxy_mu);
  snprintf(proxy_url, sizeof(proxy_url), "%s", url);
  pthread_mutex_unlock(&proxy_mu);
  return 0;
}

bool http_proxy(char *out, size_t out_bytes) {
  pthread_mutex_lock(&proxy_mu);
  bool set = proxy_url[0] != '\0';
  if (out && out_bytes > 0)
    snprintf(out, out_bytes, "%s", proxy_url);
  pthread_mutex_unlock(&proxy_mu);
  return set;
}

void http_apply_proxy(CURL *easy) {
  pthread_mutex_lock(&proxy_mu);
  if (proxy_url[0]) {
    curl_easy_setopt(easy, CURLOPT_PROXY, proxy_url); /* libcurl copies it */
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "");      /* and no_proxy does not bypass it */
  } else {
    curl_easy_setopt(easy, CURLOPT_PROXY, ""); /* "": none, whatever the environment says */
  }
  pthread_mutex_unlock(&proxy_mu);
}

/* ---------------------------------------------------------------- headers, statuses */
struct curl_slist *http_api_headers_alloc(const char *api_key) {
  char *auth = xasprintf("Authorization: Bearer %s", api_key ? api_key : "None");
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  h = curl_slist_append(h, auth);
  h = curl_slist_append(h, "Expect:");
  free(auth);
  if (!h)
    util_die_oom(0);
  return h;
}

const char *http_status_name(long status) {
  static const struct {
    long status;
    const char *name;
  } names[] = {
      {100, "Continue"}, {101, "Switching Protocols"}, {200, "OK"}, {201, "Created"},
      {202, "Accepted"}, {203, "Non-Authoritative Information"}, {204, "No Content"},
      {205, "Reset Content"}, {206, "Partial Content"}, {300, "Multiple Choices"},
      {301, "Moved Permanently"}, {302, "Found"}, {303, "See Other"}, {304, "Not Modified"},
      {305, "Use Proxy"}, {307, "Temporary Redirect"}, {308, "Permanent Redirect"},
      {400, "Bad Request"}, {401, "Unauthorized"}, {402, "Payment Required"},
      {403, "Forbidden"}, {404, "Not Found"}, {405, "Method Not Allowed"},
      {406, "Not Acceptable"}, {407, "Proxy Authentication Required"}, {408, "Request Timeout"},
      {409, "Conflict"}, {410, "Gone"}, {411, "Length Required"}, {413, "Payload Too Large"},
      {414, "URI Too Long"}, {415, "Unsupported Media Type"}, {422, "Unprocessable Entity"},
      {425, "Too Early"}, {429, "Too Many Requests"}, {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"}, {501, "Not Implemented"}, {502, "Bad Gateway"},
      {503, "Service Unavailable"}, {504, "Gateway Timeout"},
      {505, "HTTP Version Not Supported"},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(names); i++)
    if (names[i].status == status)
      return names[i].name;
  return "";
}

/* ---------------------------------------------------------------- one transfer */
/* What one request needs while it runs, and to be judged after. */
struct xfer {
  char *url;
  char *body;                  /* a copy (the batch) or NULL */
  struct curl_slist *headers;
  size_t max_body;
  bool discard, capped, aborted, post;
  long expect;
  bool (*abort_if)(void *ud);
  void *abort_ud;
  struct http_response *resp;
  char proxy[512];             /* the proxy it went through; "": none */
  char errbuf[CURL_ERROR_SIZE];
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
  struct xfer *x = ud;
  size_t n = size * nmemb;
  if (x->discard)
    return n;
  if (x->resp->body.len + n > x->max_body) {
    x->capped = true;
    return 0; /* CURLE_WRITE_ERROR */
  }
  sbuf_append(&x->resp->body, data, n);
  return n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  struct xfer *x = ud;
  if (x->abort_if && x->abort_if(x->abort_ud)) {
    x->aborted = true;
    return 1;
  }
  return 0;
}

static void xfer_clear(struct xfer *x) {
  free(x->url);
  free(x->body);
  curl_slist_free_all(x->headers);
  x->url = x->body = NULL;
  x->headers = NULL;
}

/* Sets easy up for req (reset first: a reused handle keeps only its
 * connections); copy_body: the body is copied (it outlives the caller's). */
static void prepare(struct xfer *x, CURL *easy, const struct http_request *req,
                    struct http_response *resp, bool copy_body) {
  xfer_clear(x);
  x->url = xstrdup(req->url ? req->url : "");
  x->resp = resp;
  resp->status = 0;
  sbuf_reset(&resp->body);
  x->max_body = req->max_body_bytes ? req->max_body_bytes : (size_t)HTTP_DEFAULT_MAX_BODY_BYTES;
  x->discard = req->discard_body;
  x->capped = x->aborted = false;
  x->expect = req->expect_status;
  x->abort_if = req->abort_if;
  x->abort_ud = req->abort_ud;
  x->errbuf[0] = '\0';
  http_proxy(x->proxy, sizeof(x->proxy));
  int64_t timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : HTTP_DEFAULT_TIMEOUT_MS;
  int64_t connect_ms = req->connect_timeout_ms > 0 ? req->connect_timeout_ms : timeout_ms;

  curl_easy_reset(easy);
  curl_easy_setopt(easy, CURLOPT_URL, x->url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for timeouts */
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, x);
  if (!x->discard)
    curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max_body);
  http_apply_proxy(easy);
  if (req->api) {
    x->headers = http_api_headers_alloc(req->api_key);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, x->headers);
  }
  x->post = req->body != NULL;
  if (req->body) {
    size_t len = req->body_len ? req->body_len : strlen(req->body);
    const char *body = req->body;
    if (copy_body) {
      x->body = xmalloc(len + 1);
      memcpy(x->body, req->body, len);
      x->body[len] = '\0';
      body = x->body;
    }
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
  }
  if (x->abort_if) {
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, x);
  }
}

/* The start of a reply body on one line, for an error text. */
static void body_excerpt(const struct sbuf *body, char *out, size_t out_bytes) {
  size_t n = 0;
  for (size_t i = 0; body->data && i < body->len && n + 1 < out_bytes; i++) {
    char c = body->data[i];
    out[n++] = c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
  }
  out[n] = '\0';
  while (n > 0 && out[n - 1] == ' ')
    out[--n] = '\0';
}

/* The outcome of a finished transfer: 0, or -1 with err in http.h's words. */
static int finish(struct xfer *x, CURL *easy, CURLcode rc, struct st_err *err) {
  struct http_response *resp = x->resp;
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  resp->status = status;
  sbuf_reserve(&resp->body, 1); /* NUL-terminated, also when empty */
  const char *method = x->post ? "POST" : "GET";
  if (x->capped || rc == CURLE_FILESIZE_EXCEEDED)
    return err_setf(err, "%s %s: reply larger than the %zu-byte cap", method, x->url,
                    x->max_body);
  if (x->aborted || rc == CURLE_ABORTED_BY_CALLBACK)
    return err_setf(err, "%s %s: aborted", method, x->url);
  if (rc != CURLE_OK) { /* curl's own words: the detail when it has one */
    const char *what = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
    if (x->proxy[0])
      return err_setf(err, "%s %s (through proxy %s): %s", method, x->url, x->proxy, what);
    return err_setf(err, "%s %s: %s", method, x->url, what);
  }
  bool ok = x->expect ? status == x->expect : status >= 200 && status <= 299;
  if (ok)
    return 0;
  const char *name = http_status_name(status);
  char detail[640] = "";
  if (status >= 300 && status <= 399) {
    char *location = NULL;
    curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &location);
    snprintf(detail, sizeof(detail), " (not followed%s%s)", location ? "; Location: " : "",
             location ? location : "");
  } else if (resp->body.len > 0) {
    char excerpt[201];
    body_excerpt(&resp->body, excerpt, sizeof(excerpt));
    if (excerpt[0])
      snprintf(detail, sizeof(detail), ": %s", excerpt);
  }
  return err_setf(err, "%s %s: HTTP %ld%s%s%s", method, x->url, status, name[0] ? " " : "", name,
                  detail);
}

/* ---------------------------------------------------------------- kept-alive handle */
struct http_conn {
  CURL *easy;
  struct xfer x;
};

struct http_conn *http_conn_new(void) {
  http_global_init();
  struct http_conn *c = xcalloc(1, sizeof(*c));
  c->easy = curl_easy_init();
  if (!c->easy)
    util_die_oom(0);
  return c;
}

int http_conn_do(struct http_conn *c, const struct http_request *req, struct http_response *resp,
                 struct st_err *err) {
  prepare(&c->x, c->easy, req, resp, false);
  CURLcode rc = curl_easy_perform(c->easy);
  int out = finish(&c->x, c->easy, rc, err);
  xfer_clear(&c->x);
  return out;
}

void http_conn_free(struct http_conn *c) {
  if (!c)
    return;
  curl_easy_cleanup(c->easy);
  xfer_clear(&c->x);
  free(c);
}

int http_do(const struct http_request *req, struct http_response *resp, struct st_err *err) {
  struct http_conn *c = http_conn_new();
  int rc = http_conn_do(c, req, resp, err);
  http_conn_free(c);
  return rc;
}

void http_response_fini(struct http_response *resp) {
  sbuf_free(&resp->body);
  resp->status = 0;
}

char *http_get_alloc(const char *url, int64_t timeout_ms, long *status, struct st_err *err) {
  struct http_request req = {.url = url, .timeout_ms = timeout_ms, .expect_status = 200};
  struct http_response resp = {0};
  int rc = http_do(&req, &resp, err);
  if (status)
    *status = rc == 0 || resp.status != 0 ? resp.status : 0;
  if (rc != 0) {
    http_response_fini(&resp);
    return NULL;
  }
  return sbuf_take(&resp.body);
}

/* ---------------------------------------------------------------- concurrent batch */
struct batch_slot {
  CURL *easy;                 /* made on first use */
  struct xfer x;
  struct http_response resp;
  bool busy;
};

struct http_batch {
  CURLM *multi;
  struct batch_slot *slots;
  size_t n_slots, running;
};

struct http_batch *http_batch_new(size_t n_slots) {
  http_global_init();
  struct http_batch *b = xcalloc(1, sizeof(*b));
  b->n_slots = n_slots ? n_slots : 1;
  b->slots = xcalloc(b->n_slots, sizeof(*b->slots));
  b->multi = curl_multi_init();
  if (!b->multi)
    util_die_oom(0);
  return b;
}

size_t http_batch_slots(const struct http_batch *b) {
  return b->n_slots;
}

size_t http_batch_running(const struct http_batch *b) {
  return b->running;
}

void http_batch_start(struct http_batch *b, size_t slot, const struct http_request *req) {
  struct batch_slot *s = &b->slots[slot];
  if (s->busy) { /* a caller's bug: abandon what it ran */
    curl_multi_remove_handle(b->multi, s->easy);
    s->busy = false;
    b->running--;
  }
  if (!s->easy) {
    s->easy = curl_easy_init();
    if (!s->easy)
      util_die_oom(0);
  }
  prepare(&s->x, s->easy, req, &s->resp, true);
  curl_easy_setopt(s->easy, CURLOPT_PRIVATE, (void *)s);
  s->busy = true;
  b->running++;
  curl_multi_add_handle(b->multi, s->easy);
}

int http_batch_wait(struct http_batch *b, int wait_ms, struct http_done *done) {
  int64_t deadline_ns = clock_mono_ns() + (int64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000;
  for (;;) {
    int still;
    curl_multi_perform(b->multi, &still);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(b->multi, &left))) {
      if (msg->msg != CURLMSG_DONE)
        continue;
      struct batch_slot *s = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
      CURLcode res = msg->data.result;
      curl_multi_remove_handle(b->multi, s->easy);
      s->busy = false;
      b->running--;
      memset(&done->err, 0, sizeof(done->err));
      done->slot = (size_t)(s - b->slots);
      done->rc = finish(&s->x, s->easy, res, &done->err);
      done->resp = &s->resp;
      return 1;
    }
    if (b->running == 0)
      return 0;
    int64_t left_ms = (deadline_ns - clock_mono_ns()) / 1000000;
    if (left_ms <= 0)
      return 0;
    curl_multi_poll(b->multi, NULL, 0, left_ms < 100 ? (int)left_ms : 100, NULL);
  }
}

void http_batch_abandon(struct http_batch *b) {
  for (size_t i = 0; i < b->n_slots; i++) {
    struct batch_slot *s = &b->slots[i];
    if (s->busy) {
      curl_multi_remove_handle(b->multi, s->easy);
      s->busy = false;
    }
  }
  b->running = 0;
}

void http_batch_free(struct http_batch *b) {
  if (!b)
    return;
  for (size_t i = 0; i < b->n_slots; i++) {
    struct batch_slot *s = &b->slots[i];
    if (s->busy)
      curl_multi_remove_handle(b->multi, s->easy);
    if (s->easy)
      curl_easy_cleanup(s->easy);
    xfer_clear(&s->x);
    http_response_fini(&s->resp);
  }
  curl_multi_cleanup(b->multi);
  free(b->slots);
  free(b);
}
