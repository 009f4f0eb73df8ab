/* http: servetop's one blocking-HTTP client, used by every request that is not
 * load (launcher readiness, engine signals and server info, GPU telemetry,
 * the server tokenizer, chat calibration, the profile calls): one place for
 * timeouts, the reply-body cap, the Authorization header, the proxy policy and
 * the error text. The load loop (src/loadgen) drives its own libcurl multi
 * handles but takes the Authorization header and the proxy policy from here.
 *
 * Error text, always one line: "METHOD URL[ (through proxy P)]: what", where
 * what is
 *   HTTP <status> <reason>[ (not followed; Location: L)][: <start of the body>]
 *   <curl's error> (its detail when it has one, else curl_easy_strerror)
 *   reply larger than the <N>-byte cap
 *   aborted
 *
 * Proxy policy: servetop's traffic goes straight to the server and ignores
 * http_proxy, https_proxy, all_proxy, no_proxy (either case), unless a proxy
 * is set with http_set_proxy (the CLI's --proxy URL); then every request goes
 * through it, no_proxy included. */
#ifndef SERVETOP_HTTP_HTTP_H
#define SERVETOP_HTTP_HTTP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* curl_global_init, once per process (pthread_once). main() calls it before
 * any thread starts; every entry point below (and the load loop's) calls it
 * too, so code that runs without main (tests) is safe. */
void http_global_init(void);

/* ---------------------------------------------------------------- proxy policy */
/* The proxy every request goes through from now on; NULL or "": none (direct,
 * proxy variables of the environment ignored). The URL must be
 * http://, https://, socks4://, socks4a://, socks5:// or socks5h:// with a
 * host; -1 with err otherwise (the policy is then unchanged). Call before
 * threads that make requests start. */
int http_set_proxy(const char *url, struct st_err *err);
/* The proxy in use (a copy into out); false when none. */
bool http_proxy(char *out, size_t out_bytes);
/* Applies the policy to an easy handle the caller owns (the load loop). */
void http_apply_proxy(CURL *easy);

/* ---------------------------------------------------------------- headers */
/* The headers of an OpenAI-style API call, the one place they are built:
 * Content-Type: application/json, "Authorization: Bearer KEY" (api_key NULL:
 * "Bearer None", as the reference sends without OPENAI_API_KEY) and an empty
 * Expect: (no 100-continue round trip). The caller frees the list
 * (curl_slist_free_all). */
struct curl_slist *http_api_headers_alloc(const char *api_key);

/* The reason phrase of an HTTP status ("Not Found", "Found"); "" when unknown. */
const char *http_status_name(long status);

/* ---------------------------------------------------------------- one request */
enum {
  HTTP_DEFAULT_TIMEOUT_MS = 30000,
  HTTP_DEFAULT_MAX_BODY_BYTES = 64 << 20, /* 64 MiB */
};

struct http_request {
  const char *url;            /* absolute: http://host:port/path */
  const char *body;           /* non-NULL: POST this body; NULL: GET */
  size_t body_len;            /* 0: strlen(body) */
  bool api;                   /* an API call: the headers of http_api_headers_alloc */
  const char *api_key;        /* with api: the bearer token (NULL: "None") */
  int64_t timeout_ms;         /* the whole request; 0: HTTP_DEFAULT_TIMEOUT_MS */
  int64_t connect_timeout_ms; /* 0: timeout_ms */
  size_t max_body_bytes;      /* reply cap; 0: HTTP_DEFAULT_MAX_BODY_BYTES */
  bool discard_body;          /* the status only: the reply body is not kept */
  long expect_status;         /* success: this status; 0: any 2xx */
  /* Polled while the request runs; true aborts it ("aborted" in the error). */
  bool (*abort_if)(void *ud);
  void *abort_ud;
};

struct http_response {
  long status;                /* the HTTP status; 0: no answer */
  struct sbuf body;           /* NUL-terminated when status != 0 (also when empty) */
};

/* One request on a handle of its own. 0 when the answer arrived with the
 * expected status; else -1 with err in the words above (resp->status and
 * resp->body still say what came back). resp is reset first; free its body
 * with http_response_fini. */
int http_do(const struct http_request *req, struct http_response *resp, struct st_err *err);
void http_response_fini(struct http_response *resp);

/* GET url; the body (heap, NUL-terminated) when the status is 200, else NULL
 * with err; *status (may be NULL) gets the status, 0 without an answer. */
char *http_get_alloc(const char *url, int64_t timeout_ms, long *status, struct st_err *err);

/* ---------------------------------------------------------------- kept-alive handle */
/* A handle that keeps its connection between requests (the /metrics scraper,
 * a sequence of probes). One thread at a time. */
struct http_conn;
struct http_conn *http_conn_new(void);
int http_conn_do(struct http_conn *c, const struct http_request *req, struct http_response *resp,
                 struct st_err *err);
void http_conn_free(struct http_conn *c); /* NULL is fine */

/* ---------------------------------------------------------------- concurrent batch */
/* Up to n_slots requests at once on one multi handle; connections are kept
 * between requests and between batches (the tokenizer's many calls). A slot
 * runs one request at a time; one thread at a time. */
struct http_batch;
struct http_batch *http_batch_new(size_t n_slots);
size_t http_batch_slots(const struct http_batch *b);
/* Starts req on an idle slot (req's strings are copied). */
void http_batch_start(struct http_batch *b, size_t slot, const struct http_request *req);
/* One finished request. */
struct http_done {
  size_t slot;
  int rc;                            /* as http_do */
  const struct http_response *resp;  /* the slot's; valid until it starts again */
  struct st_err err;                 /* rc -1: why */
};
/* Waits up to wait_ms for a request to finish: 1 with *done filled; 0 when
 * none finished in that time (or none is running). */
int http_batch_wait(struct http_batch *b, int wait_ms, struct http_done *done);
size_t http_batch_running(const struct http_batch *b);
/* Stops what still runs (its replies are never reported); the slots are idle. */
void http_batch_abandon(struct http_batch *b);
/* Abandons what still runs and frees. NULL is fine. */
void http_batch_free(struct http_batch *b);

#endif
