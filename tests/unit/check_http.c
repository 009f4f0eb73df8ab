/* The HTTP helper (src/http) against a tiny HTTP/1.1 server in this test:
 * statuses named (3xx included), the body cap, the timeout, the Authorization
 * header, POST bodies, the proxy policy (environment ignored, --proxy used,
 * a dead proxy named), the kept-alive handle and the concurrent batch. */
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/http.h"

/* ---------------------------------------------------------------- the server */
enum { MAX_CONNS = 64 };
static int listen_fd = -1, port;
static atomic_bool stopping;
static atomic_int n_accepted;
static pthread_t acceptor, conn_threads[MAX_CONNS];
static atomic_int n_conn_threads;

static void send_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    data += n;
    len -= (size_t)n;
  }
}

static void reply(int fd, const char *status_line, const char *extra_headers, const char *body) {
  char head[1024];
  int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Length: %zu\r\n%s\r\n", status_line,
                   strlen(body), extra_headers ? extra_headers : "");
  send_all(fd, head, (size_t)n);
  send_all(fd, body, strlen(body));
}

/* Waits for data on fd until the test stops; false when stopping. */
static bool wait_readable(int fd) {
  while (!atomic_load(&stopping)) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 50) > 0)
      return true;
  }
  return false;
}

/* A header's value (case-insensitive name) from the request head, or NULL. */
static const char *header(const char *head, const char *name, char *out, size_t out_len) {
  for (const char *line = strstr(head, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
    const char *l = line + 2;
    size_t n = strlen(name);
    if (strncasecmp(l, name, n) == 0 && l[n] == ':') {
      l += n + 1;
      while (*l == ' ')
        l++;
      size_t len = strcspn(l, "\r\n");
      snprintf(out, out_len, "%.*s", (int)len, l);
      return out;
    }
  }
  return NULL;
}

static void *serve_conn(void *arg) {
  int fd = (int)(intptr_t)arg;
  char buf[65536];
  size_t have = 0;
  for (;;) {
    char *end;
    while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
      if (have == sizeof buf - 1 || !wait_readable(fd))
        goto out;
      ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
      if (n <= 0)
        goto out;
      have += (size_t)n;
    }
    *end = '\0';
    size_t head_len = (size_t)(end - buf) + 4;
    char method[16], target[2048], value[512];
    if (sscanf(buf, "%15s %2047s", method, target) != 2)
      goto out;
    size_t body_len = header(buf, "Content-Length", value, sizeof value) ? strtoul(value, 0, 10) : 0;
    while (have < head_len + body_len) {
      if (!wait_readable(fd))
        goto out;
      ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
      if (n <= 0)
        goto out;
      have += (size_t)n;
    }
    char body[8192];
    snprintf(body, sizeof body, "%.*s", (int)body_len, buf + head_len);
    char auth[512];
    const char *authz = header(buf, "Authorization", auth, sizeof auth);
    memmove(buf, buf + head_len + body_len, have - head_len - body_len);
    have -= head_len + body_len;

    if (strncmp(target, "http://", 7) == 0) { /* asked as a proxy */
      char out[2100];
      snprintf(out, sizeof out, "via proxy %s", target);
      reply(fd, "200 OK", NULL, out);
    } else if (strcmp(target, "/ok") == 0) {
      reply(fd, "200 OK", NULL, "hello");
    } else if (strcmp(target, "/auth") == 0) {
      reply(fd, "200 OK", NULL, authz ? authz : "none");
    } else if (strcmp(target, "/echo") == 0) {
      reply(fd, "200 OK", NULL, body);
    } else if (strcmp(target, "/big") == 0) { /* says its length up front */
      char big[5001];
      memset(big, 'x', 5000);
      big[5000] = '\0';
      reply(fd, "200 OK", NULL, big);
    } else if (strcmp(target, "/big-unsized") == 0) { /* until the connection closes */
      const char *head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
      send_all(fd, head, strlen(head));
      char chunk[1000];
      memset(chunk, 'y', sizeof chunk);
      for (int i = 0; i < 5; i++)
        send_all(fd, chunk, sizeof chunk);
      goto out;
    } else if (strcmp(target, "/redirect") == 0) {
      reply(fd, "302 Found", "Location: /ok\r\n", "");
    } else if (strcmp(target, "/missing") == 0) {
      reply(fd, "404 Not Found", NULL, "no such\nthing");
    } else if (strcmp(target, "/teapot") == 0) {
      reply(fd, "418 I'm a teapot", NULL, "");
    } else if (strcmp(target, "/slow") == 0) {
      while (wait_readable(fd) && recv(fd, buf, sizeof buf, 0) > 0)
        ; /* never answers; ends when the client gives up or the test stops */
      goto out;
    } else {
      reply(fd, "404 Not Found", NULL, "");
    }
  }
out:
  close(fd);
  return NULL;
}

static void *accept_loop(void *arg) {
  (void)arg;
  while (wait_readable(listen_fd)) {
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
      continue;
    atomic_fetch_add(&n_accepted, 1);
    int i = atomic_fetch_add(&n_conn_threads, 1);
    ck_assert_int_lt(i, MAX_CONNS);
    pthread_create(&conn_threads[i], NULL, serve_conn, (void *)(intptr_t)fd);
  }
  return NULL;
}

/* A port nothing listens on (bound, then closed). */
static int dead_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &len);
  close(fd);
  return ntohs(a.sin_port);
}

static void server_start(void) {
  atomic_store(&stopping, false);
  atomic_store(&n_accepted, 0);
  atomic_store(&n_conn_threads, 0);
  listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(listen_fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(listen_fd, 64), 0);
  socklen_t len = sizeof a;
  getsockname(listen_fd, (struct sockaddr *)&a, &len);
  port = ntohs(a.sin_port);
  pthread_create(&acceptor, NULL, accept_loop, NULL);
  http_set_proxy(NULL, NULL);
}

static void server_stop(void) {
  atomic_store(&stopping, true);
  pthread_join(acceptor, NULL);
  for (int i = 0; i < atomic_load(&n_conn_threads); i++)
    pthread_join(conn_threads[i], NULL);
  close(listen_fd);
  http_set_proxy(NULL, NULL);
}

static char *url_of(const char *path) {
  return xasprintf("http://127.0.0.1:%d%s", port, path);
}

/* GET path; rc, and the body or the error in out. */
static int get(const char *path, const struct http_request *base, char *out, size_t out_len) {
  char *url = url_of(path);
  struct http_request req = base ? *base : (struct http_request){0};
  req.url = url;
  struct http_response resp = {0};
  struct st_err err = {{0}};
  int rc = http_do(&req, &resp, &err);
  snprintf(out, out_len, "%s", rc == 0 ? resp.body.data : err.msg);
  http_response_fini(&resp);
  free(url);
  return rc;
}

/* ---------------------------------------------------------------- tests */
START_TEST(statuses_are_named) {
  ck_assert_str_eq(http_status_name(200), "OK");
  ck_assert_str_eq(http_status_name(302), "Found");
  ck_assert_str_eq(http_status_name(307), "Temporary Redirect");
  ck_assert_str_eq(http_status_name(404), "Not Found");
  ck_assert_str_eq(http_status_name(503), "Service Unavailable");
  ck_assert_str_eq(http_status_name(418), "");
  char out[600];
  ck_assert_int_eq(get("/ok", NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "hello");
  /* a redirect is not followed and says where it points */
  ck_assert_int_eq(get("/redirect", NULL, out, sizeof out), -1);
  char want[200];
  snprintf(want, sizeof want, "GET http://127.0.0.1:%d/redirect: HTTP 302 Found (not followed; "
           "Location: http://127.0.0.1:%d/ok)", port, port);
  ck_assert_str_eq(out, want);
  /* the start of the body, on one line */
  ck_assert_int_eq(get("/missing", NULL, out, sizeof out), -1);
  snprintf(want, sizeof want, "GET http://127.0.0.1:%d/missing: HTTP 404 Not Found: no such thing",
           port);
  ck_assert_str_eq(out, want);
  ck_assert_int_eq(get("/teapot", NULL, out, sizeof out), -1);
  ck_assert_ptr_nonnull(strstr(out, "/teapot: HTTP 418"));
  /* expect_status: a 2xx other than the one asked for is an error */
  struct http_request only_404 = {.expect_status = 404};
  ck_assert_int_eq(get("/missing", &only_404, out, sizeof out), 0);
  ck_assert_str_eq(out, "no such\nthing");
  /* no answer at all: curl's words and the URL */
  char *url = xasprintf("http://127.0.0.1:%d/x", dead_port());
  struct st_err err = {{0}};
  long status = -1;
  ck_assert_ptr_null(http_get_alloc(url, 5000, &status, &err));
  ck_assert_int_eq(status, 0);
  ck_assert_msg(strncmp(err.msg, "GET ", 4) == 0 && strstr(err.msg, url) &&
                    strstr(err.msg, "Couldn't connect to server"), "%s", err.msg);
  free(url);
}
END_TEST

START_TEST(body_cap) {
  char out[600];
  struct http_request capped = {.max_body_bytes = 1000};
  /* announced length over the cap */
  ck_assert_int_eq(get("/big", &capped, out, sizeof out), -1);
  ck_assert_msg(strstr(out, "/big: reply larger than the 1000-byte cap"), "%s", out);
  /* unannounced: cut while it arrives */
  ck_assert_int_eq(get("/big-unsized", &capped, out, sizeof out), -1);
  ck_assert_msg(strstr(out, "/big-unsized: reply larger than the 1000-byte cap"), "%s", out);
  /* under the cap: the whole body */
  struct http_request roomy = {.max_body_bytes = 5000};
  char whole[6000];
  ck_assert_int_eq(get("/big", &roomy, whole, sizeof whole), 0);
  ck_assert_uint_eq(strlen(whole), 5000);
  /* the default cap is 64 MiB */
  ck_assert_int_eq(get("/big", NULL, out, sizeof out), 0);
}
END_TEST

START_TEST(timeout) {
  char out[600];
  struct http_request quick = {.timeout_ms = 300};
  ck_assert_int_eq(get("/slow", &quick, out, sizeof out), -1);
  ck_assert_msg(strstr(out, "/slow: Operation timed out after"), "%s", out);
}
END_TEST

START_TEST(auth_header) {
  char out[600];
  struct http_request api = {.api = true, .api_key = "sk-test"};
  ck_assert_int_eq(get("/auth", &api, out, sizeof out), 0);
  ck_assert_str_eq(out, "Bearer sk-test");
  struct http_request no_key = {.api = true}; /* as the reference without OPENAI_API_KEY */
  ck_assert_int_eq(get("/auth", &no_key, out, sizeof out), 0);
  ck_assert_str_eq(out, "Bearer None");
  ck_assert_int_eq(get("/auth", NULL, out, sizeof out), 0); /* not an API call: none */
  ck_assert_str_eq(out, "none");
  /* the list the load loop sends */
  struct curl_slist *h = http_api_headers_alloc("k");
  ck_assert_str_eq(h->data, "Content-Type: application/json");
  ck_assert_str_eq(h->next->data, "Authorization: Bearer k");
  ck_assert_str_eq(h->next->next->data, "Expect:");
  ck_assert_ptr_null(h->next->next->next);
  curl_slist_free_all(h);
  /* POST: the body arrives whole */
  char *url = url_of("/echo");
  struct http_request post = {.url = url, .body = "{\"a\": 1}", .api = true};
  struct http_response resp = {0};
  struct st_err err = {{0}};
  ck_assert_int_eq(http_do(&post, &resp, &err), 0);
  ck_assert_int_eq(resp.status, 200);
  ck_assert_str_eq(resp.body.data, "{\"a\": 1}");
  http_response_fini(&resp);
  free(url);
}
END_TEST

START_TEST(proxy_policy) {
  char out[600], dead[64], want[200];
  snprintf(dead, sizeof dead, "http://127.0.0.1:%d", dead_port());
  /* proxy variables of the environment are ignored */
  const char *vars[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                        "all_proxy", "ALL_PROXY"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    setenv(vars[i], dead, 1);
  ck_assert_int_eq(get("/ok", NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "hello");
  char got[128];
  ck_assert(!http_proxy(got, sizeof got));
  /* --proxy: every request goes through it, no_proxy too */
  setenv("no_proxy", "*", 1);
  setenv("NO_PROXY", "*", 1);
  char self[64];
  snprintf(self, sizeof self, "http://127.0.0.1:%d", port);
  ck_assert_int_eq(http_set_proxy(self, NULL), 0);
  ck_assert(http_proxy(got, sizeof got));
  ck_assert_str_eq(got, self);
  struct st_err err = {{0}};
  char *body = http_get_alloc("http://server.invalid:81/v1/models", 5000, NULL, &err);
  ck_assert_msg(body != NULL, "%s", err.msg);
  ck_assert_str_eq(body, "via proxy http://server.invalid:81/v1/models");
  free(body);
  /* a dead proxy is named */
  ck_assert_int_eq(http_set_proxy(dead, NULL), 0);
  ck_assert_int_eq(get("/ok", NULL, out, sizeof out), -1);
  snprintf(want, sizeof want, "/ok (through proxy %s): Failed to connect to 127.0.0.1 port %s", dead,
           dead + strlen("http://127.0.0.1:"));
  ck_assert_msg(strstr(out, want), "%s", out);
  /* bad URLs leave the policy as it was */
  ck_assert_int_eq(http_set_proxy("ftp://host:21", &err), -1);
  ck_assert_msg(strstr(err.msg, "ftp://host:21: expected http://HOST:PORT"), "%s", err.msg);
  ck_assert_int_eq(http_set_proxy("http://", &err), -1);
  ck_assert_int_eq(http_set_proxy("127.0.0.1:3128", &err), -1);
  ck_assert(http_proxy(got, sizeof got));
  ck_assert_str_eq(got, dead);
  /* none again: straight to the server */
  ck_assert_int_eq(http_set_proxy("", NULL), 0);
  ck_assert_int_eq(get("/ok", NULL, out, sizeof out), 0);
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    unsetenv(vars[i]);
  unsetenv("no_proxy");
  unsetenv("NO_PROXY");
}
END_TEST

START_TEST(kept_alive_handle) {
  struct http_conn *c = http_conn_new();
  char *ok = url_of("/ok"), *missing = url_of("/missing");
  struct http_response resp = {0};
  struct st_err err = {{0}};
  for (int i = 0; i < 3; i++) {
    struct http_request req = {.url = i == 1 ? missing : ok};
    ck_assert_int_eq(http_conn_do(c, &req, &resp, &err), i == 1 ? -1 : 0);
    ck_assert_int_eq(resp.status, i == 1 ? 404 : 200);
  }
  ck_assert_str_eq(resp.body.data, "hello");
  ck_assert_int_eq(atomic_load(&n_accepted), 1); /* one connection for all three */
  http_response_fini(&resp);
  http_conn_free(c);
  free(ok);
  free(missing);
}
END_TEST

START_TEST(concurrent_batch) {
  enum { N = 12, SLOTS = 4 };
  struct http_batch *b = http_batch_new(SLOTS);
  ck_assert_uint_eq(http_batch_slots(b), SLOTS);
  char *echo = url_of("/echo"), *missing = url_of("/missing");
  int started = 0, finished = 0, failed = 0, slot_job[SLOTS];
  bool seen[N] = {false};
  for (int s = 0; s < SLOTS; s++) {
    char body[32];
    snprintf(body, sizeof body, "job %d", started);
    /* the body is copied: the buffer may go */
    struct http_request req = {.url = started == 5 ? missing : echo, .body = body};
    http_batch_start(b, (size_t)s, &req);
    slot_job[s] = started++;
  }
  ck_assert_uint_eq(http_batch_running(b), SLOTS);
  while (finished < N) {
    struct http_done d;
    if (http_batch_wait(b, 1000, &d) == 0)
      continue;
    int job = slot_job[d.slot];
    finished++;
    if (job == 5) {
      ck_assert_int_eq(d.rc, -1);
      ck_assert_msg(strstr(d.err.msg, "POST ") && strstr(d.err.msg, "/missing: HTTP 404 Not Found"),
                    "%s", d.err.msg);
      failed++;
    } else {
      ck_assert_msg(d.rc == 0, "%s", d.err.msg);
      char want[32];
      snprintf(want, sizeof want, "job %d", job);
      ck_assert_str_eq(d.resp->body.data, want);
      seen[job] = true;
    }
    if (started < N) {
      char body[32];
      snprintf(body, sizeof body, "job %d", started);
      struct http_request req = {.url = started == 5 ? missing : echo, .body = body};
      http_batch_start(b, d.slot, &req);
      slot_job[d.slot] = started++;
    }
  }
  ck_assert_int_eq(failed, 1);
  for (int j = 0; j < N; j++)
    ck_assert(seen[j] || j == 5);
  ck_assert_uint_eq(http_batch_running(b), 0);
  ck_assert_int_le(atomic_load(&n_accepted), SLOTS); /* connections kept between requests */
  /* abandoned requests are never reported */
  char *slow = url_of("/slow");
  struct http_request req = {.url = slow, .timeout_ms = 60000};
  http_batch_start(b, 0, &req);
  http_batch_abandon(b);
  ck_assert_uint_eq(http_batch_running(b), 0);
  struct http_done d;
  ck_assert_int_eq(http_batch_wait(b, 50, &d), 0);
  http_batch_free(b);
  free(echo);
  free(missing);
  free(slow);
}
END_TEST

int main(void) {
  http_global_init(); /* as main() does; the entry points would do it too */
  Suite *s = suite_create("http");
  TCase *tc = tcase_create("helper");
  tcase_add_checked_fixture(tc, server_start, server_stop);
  tcase_add_test(tc, statuses_are_named);
  tcase_add_test(tc, body_cap);
  tcase_add_test(tc, timeout);
  tcase_add_test(tc, auth_header);
  tcase_add_test(tc, proxy_policy);
  tcase_add_test(tc, kept_alive_handle);
  tcase_add_test(tc, concurrent_batch);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
