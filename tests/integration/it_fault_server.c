/* Faults `servetop sim` cannot make, from a small misbehaving HTTP server in
 * this test (one thread per connection on 127.0.0.1) against a real
 * `servetop bench`: a 1 MB SSE line, invalid UTF-8 in the text, the whole
 * response one byte per send(), a server that never closes the connection, a
 * server that accepts and never answers, a reset before the headers, and
 * HTTP 503 without a body. For each: the exit status, every request in the
 * saved result (completed + failures by kind = num_prompts = requests the
 * server saw), and the bench process reaped within its bound. */
#include "util/util.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum fault_mode {
  MODE_NORMAL,       /* a well-formed stream (the control) */
  MODE_BIG_LINE,     /* the first token event is a 1 MiB line */
  MODE_BAD_UTF8,     /* token text with bytes that are not UTF-8 */
  MODE_TRICKLE_BYTE, /* every byte of the response in its own send() */
  MODE_NEVER_CLOSE,  /* close-delimited body, the server never closes */
  MODE_SILENT,       /* reads the request, never answers */
  MODE_RESET_EARLY,  /* RST right after reading the request */
  MODE_503_EMPTY,    /* 503 with no body, connection closed */
  MODE_307,          /* 307 Temporary Redirect with a Location and no body */
  MODE_GZIP,         /* the normal stream gzip-compressed (Content-Encoding: gzip) */
  MODE_USAGE_HUGE,   /* usage.completion_tokens 1e30 */
  MODE_USAGE_NEGATIVE, /* usage.completion_tokens -4 */
};

#define MAX_CONNS 64
#define BIG_LINE_BYTES (1u << 20)

struct fault_server {
  enum fault_mode mode;
  int listen_fd;
  int stop_fd; /* eventfd: set when the test ends */
  int port;
  pthread_t acceptor;
  pthread_t conns[MAX_CONNS];
  int conn_fds[MAX_CONNS];
  atomic_int n_conns;
  atomic_int n_requests; /* generation requests fully read */
};

struct conn_arg {
  struct fault_server *srv;
  int fd;
};

static bool stopped(struct fault_server *srv, int timeout_ms) {
  struct pollfd p = {.fd = srv->stop_fd, .events = POLLIN};
  return poll(&p, 1, timeout_ms) > 0;
}

static int send_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Reads one request (headers + Content-Length body); false on EOF/error. */
static bool read_request(int fd) {
  struct sbuf sb = {0};
  size_t body_at = 0, need = 0;
  bool ok = false;
  for (;;) {
    sbuf_reserve(&sb, 4096);
    ssize_t n = recv(fd, sb.data + sb.len, sb.cap - sb.len - 1, 0);
    if (n <= 0)
      break;
    sb.len += (size_t)n;
    sb.data[sb.len] = '\0';
    if (!body_at) {
      char *end = strstr(sb.data, "\r\n\r\n");
      if (!end)
        continue;
      body_at = (size_t)(end - sb.data) + 4;
      char *cl = strcasestr(sb.data, "content-length:");
      need = body_at + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
    }
    if (sb.len >= need) {
      ok = true;
      break;
    }
  }
  sbuf_free(&sb);
  return ok;
}

/* The body of a 4-token completions stream, as SGLang sends it. */
static char *stream_body_alloc(enum fault_mode mode, size_t *len_out) {
  struct sbuf sb = {0};
  for (int i = 0; i < 4; i++) {
    const char *text = " hi";
    char *big = NULL;
    if (mode == MODE_BIG_LINE && i == 0) {
      big = xmalloc(BIG_LINE_BYTES + 1);
      memset(big, 'a', BIG_LINE_BYTES);
      big[BIG_LINE_BYTES] = '\0';
      text = big;
    } else if (mode == MODE_BAD_UTF8) {
      text = " \xff\xfe\xc3\x28 \xed\xa0\x80"; /* invalid bytes, a lone surrogate */
    }
    sbuf_printf(&sb,
                "data: {\"id\":\"f\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":"
                "[{\"index\":0,\"text\":\"%s\",\"logprobs\":null,\"finish_reason\":%s}],"
                "\"usage\":null}\n\n",
                text, i == 3 ? "\"length\"" : "null");
    free(big);
  }
  sbuf_printf(&sb, "data: {\"id\":\"f\",\"object\":\"text_completion\",\"model\":\"m\","
                   "\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"total_tokens\":12,"
                   "\"completion_tokens\":%s}}\n\ndata: [DONE]\n\n",
              mode == MODE_USAGE_HUGE ? "1e30" : mode == MODE_USAGE_NEGATIVE ? "-4" : "4");
  *len_out = sb.len;
  return sbuf_take(&sb);
}

static const char stream_head[] = "HTTP/1.1 200 OK\r\n"
                                  "content-type: text/event-stream; charset=utf-8\r\n"
                                  "connection: close\r\n\r\n";

static uint32_t crc32_of(const unsigned char *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
  }
  return ~c;
}

/* data as a gzip member of stored (uncompressed) deflate blocks: what a
 * compressing server sends, without a zlib in the test. */
static void gzip_stored(struct sbuf *out, const char *data, size_t len) {
  static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  sbuf_append(out, head, sizeof head);
  size_t off = 0;
  do {
    size_t n = len - off > 65535 ? 65535 : len - off;
    unsigned char b[5] = {off + n == len ? 1 : 0, (unsigned char)(n & 0xff),
                          (unsigned char)(n >> 8), (unsigned char)(~n & 0xff),
                          (unsigned char)((~n >> 8) & 0xff)};
    sbuf_append(out, b, sizeof b);
    sbuf_append(out, data + off, n);
    off += n;
  } while (off < len);
  uint32_t crc = crc32_of((const unsigned char *)data, len), size = (uint32_t)len;
  unsigned char tail[8] = {crc & 0xff, (crc >> 8) & 0xff, (crc >> 16) & 0xff, crc >> 24,
                           size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >> 24};
  sbuf_append(out, tail, sizeof tail);
}

static void serve_stream(struct fault_server *srv, int fd) {
  size_t len;
  char *body = stream_body_alloc(srv->mode, &len);
  struct sbuf sb = {0};
  if (srv->mode == MODE_GZIP) { /* unasked-for or not: the server compresses */
    static const char gz_head[] = "HTTP/1.1 200 OK\r\n"
                                  "content-type: text/event-stream; charset=utf-8\r\n"
                                  "content-encoding: gzip\r\nconnection: close\r\n\r\n";
    sbuf_append(&sb, gz_head, strlen(gz_head));
    gzip_stored(&sb, body, len);
  } else {
    sbuf_append(&sb, stream_head, strlen(stream_head));
    sbuf_append(&sb, body, len);
  }
  free(body);
  if (srv->mode == MODE_TRICKLE_BYTE) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (size_t i = 0; i < sb.len && !stopped(srv, 0); i++) {
      if (send_all(fd, sb.data + i, 1) < 0)
        break;
      if (i % 64 == 0)
        usleep(100);
    }
  } else {
    send_all(fd, sb.data, sb.len);
  }
  sbuf_free(&sb);
  if (srv->mode == MODE_NEVER_CLOSE)
    stopped(srv, -1); /* hold the connection until the test ends */
}

static void *conn_main(void *arg) {
  struct conn_arg *ca = arg;
  struct fault_server *srv = ca->srv;
  int fd = ca->fd;
  free(ca);
  if (!read_request(fd)) {
    close(fd);
    return NULL;
  }
  atomic_fetch_add(&srv->n_requests, 1);
  switch (srv->mode) {
  case MODE_SILENT:
    stopped(srv, -1);
    break;
  case MODE_RESET_EARLY: {
    struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* close() sends RST */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    break;
  }
  case MODE_503_EMPTY: {
    static const char r503[] = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n"
                               "connection: close\r\n\r\n";
    send_all(fd, r503, strlen(r503));
    break;
  }
  case MODE_307: {
    static const char r307[] = "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:1/x\r\n"
                               "content-length: 0\r\nconnection: close\r\n\r\n";
    send_all(fd, r307, strlen(r307));
    break;
  }
  default:
    serve_stream(srv, fd);
    break;
  }
  close(fd);
  return NULL;
}

static void *acceptor_main(void *arg) {
  struct fault_server *srv = arg;
  for (;;) {
    struct pollfd p[2] = {{.fd = srv->listen_fd, .events = POLLIN},
                          {.fd = srv->stop_fd, .events = POLLIN}};
    if (poll(p, 2, -1) < 0 && errno != EINTR)
      break;
    if (p[1].revents)
      break;
    if (!p[0].revents)
      continue;
    int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    int i = atomic_load(&srv->n_conns);
    if (i >= MAX_CONNS) {
      close(fd);
      continue;
    }
    struct conn_arg *ca = xmalloc(sizeof *ca);
    ca->srv = srv;
    ca->fd = fd;
    if (pthread_create(&srv->conns[i], NULL, conn_main, ca) != 0) {
      free(ca);
      close(fd);
      continue;
    }
    atomic_store(&srv->n_conns, i + 1);
  }
  return NULL;
}

static void server_start(struct fault_server *srv, enum fault_mode mode) {
  memset(srv, 0, sizeof *srv);
  srv->mode = mode;
  srv->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(srv->listen_fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(srv->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(srv->listen_fd, 64), 0);
  socklen_t alen = sizeof a;
  getsockname(srv->listen_fd, (struct sockaddr *)&a, &alen);
  srv->port = ntohs(a.sin_port);
  srv->stop_fd = eventfd(0, EFD_CLOEXEC);
  ck_assert_int_ge(srv->stop_fd, 0);
  ck_assert_int_eq(pthread_create(&srv->acceptor, NULL, acceptor_main, srv), 0);
}

static void server_stop(struct fault_server *srv) {
  uint64_t one = 1;
  ck_assert_int_eq(write(srv->stop_fd, &one, sizeof one), (ssize_t)sizeof one);
  pthread_join(srv->acceptor, NULL);
  for (int i = 0; i < atomic_load(&srv->n_conns); i++)
    pthread_join(srv->conns[i], NULL);
  close(srv->listen_fd);
  close(srv->stop_fd);
}

/* Runs `servetop bench` against the server; returns its exit status (128+sig
 * when killed). It is killed after limit_s and always reaped. */
static int run_bench(const struct fault_server *srv, int num_prompts, const char *result_path,
                     double request_timeout_s, int limit_s, double *elapsed_s) {
  const char *exe = getenv("SERVETOP");
  ck_assert_ptr_nonnull(exe);
  char url[64], n[16], timeout[32];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv->port);
  snprintf(n, sizeof n, "%d", num_prompts);
  snprintf(timeout, sizeof timeout, "%g", request_timeout_s);
  const char *argv[] = {exe, "bench", "--model", "m", "--base-url", url, "--num-prompts", n,
                        "--max-concurrency", "2", "--random-input-len", "8",
                        "--random-output-len", "4", "--ignore-eos", "--quiet",
                        "--no-server-signals", "--no-server-tokenizer", "--request-timeout",
                        timeout, "--save-result",
                        "--result-filename", result_path, NULL};
  int64_t t0 = clock_mono_ns();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execv(exe, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (clock_mono_ns() - t0 > (int64_t)limit_s * 1000000000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(10 * 1000);
  }
  *elapsed_s = (double)(clock_mono_ns() - t0) / 1e9;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct outcome {
  int completed;
  int num_prompts;
  int failed_total;
  int total_output_tokens;
  cJSON *failures; /* owned by doc */
  cJSON *doc;
};

/* Loads the saved result and checks every request is accounted for. */
static void load_outcome(const char *path, int num_prompts, struct outcome *o) {
  struct st_err err = {{0}};
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "no saved result: %s", err.msg);
  o->doc = cJSON_Parse(text);
  free(text);
  ck_assert_msg(o->doc != NULL, "%s does not parse", path);
  o->completed = cJSON_GetObjectItem(o->doc, "completed")->valueint;
  o->num_prompts = cJSON_GetObjectItem(o->doc, "num_prompts")->valueint;
  o->total_output_tokens = cJSON_GetObjectItem(o->doc, "total_output_tokens")->valueint;
  cJSON *st = cJSON_GetObjectItem(o->doc, "servetop");
  o->failures = cJSON_GetObjectItem(st, "failures");
  o->failed_total = 0;
  cJSON *f;
  cJSON_ArrayForEach(f, o->failures) o->failed_total += f->valueint;
  ck_assert_int_eq(o->num_prompts, num_prompts);
  ck_assert_msg(o->completed + o->failed_total == num_prompts,
                "completed %d + failed %d != %d requests", o->completed, o->failed_total,
                num_prompts);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o->doc, "output_lens")), num_prompts);
}

static int failures_of(const struct outcome *o, const char *kind) {
  cJSON *f = cJSON_GetObjectItem(o->failures, kind);
  return f ? f->valueint : 0;
}

static char *result_path_alloc(const char *name) {
  char dir[] = "/tmp/it_fault_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  return xasprintf("%s/%s.json", dir, name);
}

static void remove_result(char *path) {
  unlink(path);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  rmdir(path);
  free(path);
}

/* Runs one mode: N requests, returns the outcome (caller frees doc). */
static int run_mode(enum fault_mode mode, int num_prompts, double request_timeout_s,
                    struct outcome *o, int *requests_seen, double *elapsed_s) {
  struct fault_server srv;
  server_start(&srv, mode);
  char *path = result_path_alloc("r");
  int rc = run_bench(&srv, num_prompts, path, request_timeout_s, 60, elapsed_s);
  server_stop(&srv);
  *requests_seen = atomic_load(&srv.n_requests);
  load_outcome(path, num_prompts, o);
  remove_result(path);
  return rc;
}

START_TEST(normal_stream_is_the_control) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_NORMAL, 6, 10, &o, &seen, &s), 0);
  ck_assert_int_eq(o.completed, 6);
  ck_assert_int_eq(o.total_output_tokens, 24);
  ck_assert_int_eq(seen, 6);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(one_megabyte_sse_line_is_parsed) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_BIG_LINE, 4, 20, &o, &seen, &s), 0);
  ck_assert_int_eq(o.completed, 4);
  ck_assert_int_eq(o.total_output_tokens, 16);
  ck_assert_int_eq(seen, 4);
  cJSON_Delete(o.doc);
}
END_TEST

/* Bytes that are not UTF-8 inside a JSON string: the text is not used for
 * any figure, so the request counts (tokens come from usage). */
START_TEST(invalid_utf8_text_counts_tokens_from_usage) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_BAD_UTF8, 4, 10, &o, &seen, &s), 0);
  ck_assert_int_eq(o.completed, 4);
  ck_assert_int_eq(o.total_output_tokens, 16);
  ck_assert_int_eq(seen, 4);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(byte_at_a_time_trickle_completes) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_TRICKLE_BYTE, 4, 20, &o, &seen, &s), 0);
  ck_assert_int_eq(o.completed, 4);
  ck_assert_int_eq(o.total_output_tokens, 16);
  ck_assert_int_eq(seen, 4);
  cJSON_Delete(o.doc);
}
END_TEST

/* [DONE] arrives but the connection stays open: the request must not hang
 * past its timeout; whichever way it ends, it is saved. */
START_TEST(server_that_never_closes_is_bounded) {
  struct outcome o;
  int seen;
  double s;
  int rc = run_mode(MODE_NEVER_CLOSE, 4, 2, &o, &seen, &s);
  ck_assert_msg(rc == 0 || rc == 1, "bench exit %d", rc);
  ck_assert_msg(s < 20, "took %.1f s with a 2 s request timeout", s);
  ck_assert_int_eq(o.completed + failures_of(&o, "timeout"), 4);
  ck_assert_int_eq(seen, 4);
  printf("never-closing server: %d completed, %d timed out, %.1f s\n", o.completed,
         failures_of(&o, "timeout"), s);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(silent_server_times_out) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_SILENT, 4, 1, &o, &seen, &s), 1);
  ck_assert_int_eq(failures_of(&o, "timeout"), 4);
  ck_assert_msg(s < 15, "took %.1f s with a 1 s request timeout", s);
  ck_assert_int_eq(seen, 4);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(reset_before_headers_is_a_transfer_error) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_RESET_EARLY, 6, 10, &o, &seen, &s), 1);
  ck_assert_int_eq(o.completed, 0);
  ck_assert_int_eq(failures_of(&o, "transfer_error"), 6);
  ck_assert_int_eq(seen, 6);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(http_503_storm_without_body) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_503_EMPTY, 30, 10, &o, &seen, &s), 1);
  ck_assert_int_eq(failures_of(&o, "http_error"), 30);
  ck_assert_int_eq(seen, 30);
  cJSON_Delete(o.doc);
}
END_TEST

/* The first failure example's reason (servetop.failure_examples: kind ->
 * the detail of its first request), or "". */
static const char *first_reason(const struct outcome *o) {
  cJSON *st = cJSON_GetObjectItem(o->doc, "servetop");
  cJSON *ex = cJSON_GetObjectItem(st, "failure_examples");
  cJSON *it;
  cJSON_ArrayForEach(it, ex) if (cJSON_IsString(it)) return it->valuestring;
  return "";
}

/* issue 22.5: reasons that say what happened */
START_TEST(redirect_is_named_with_its_status) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_307, 4, 10, &o, &seen, &s), 1);
  ck_assert_int_eq(failures_of(&o, "http_error"), 4);
  ck_assert_msg(strstr(first_reason(&o), "HTTP 307") != NULL, "reason: %s", first_reason(&o));
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(gzip_body_is_decoded_as_the_reference_does) {
  struct outcome o;
  int seen;
  double s;
  ck_assert_int_eq(run_mode(MODE_GZIP, 4, 10, &o, &seen, &s), 0);
  ck_assert_int_eq(o.completed, 4);
  ck_assert_int_eq(o.total_output_tokens, 16);
  cJSON_Delete(o.doc);
}
END_TEST

START_TEST(impossible_usage_counts_are_called_so) {
  const enum fault_mode modes[] = {MODE_USAGE_HUGE, MODE_USAGE_NEGATIVE};
  for (size_t i = 0; i < 2; i++) {
    struct outcome o;
    int seen;
    double s;
    ck_assert_int_eq(run_mode(modes[i], 4, 10, &o, &seen, &s), 1);
    ck_assert_int_eq(failures_of(&o, "usage_without_count"), 4);
    ck_assert_msg(strstr(first_reason(&o), "impossible") != NULL, "reason: %s",
                  first_reason(&o));
    cJSON_Delete(o.doc);
  }
}
END_TEST

static Suite *fault_server_suite(void) {
  Suite *s = suite_create("fault_server");
  TCase *tc = tcase_create("bench");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, normal_stream_is_the_control);
  tcase_add_test(tc, one_megabyte_sse_line_is_parsed);
  tcase_add_test(tc, invalid_utf8_text_counts_tokens_from_usage);
  tcase_add_test(tc, byte_at_a_time_trickle_completes);
  tcase_add_test(tc, server_that_never_closes_is_bounded);
  tcase_add_test(tc, silent_server_times_out);
  tcase_add_test(tc, reset_before_headers_is_a_transfer_error);
  tcase_add_test(tc, http_503_storm_without_body);
  tcase_add_test(tc, redirect_is_named_with_its_status);
  tcase_add_test(tc, gzip_body_is_decoded_as_the_reference_does);
  tcase_add_test(tc, impossible_usage_counts_are_called_so);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(fault_server_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
