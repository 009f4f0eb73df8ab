/* In-process integration test of the sim: sim_main() runs in a thread
 * (cfg.in_process, stopped through an eventfd) and a raw-socket client checks
 * that every streamed event is valid JSON of SGLang's shape, that HTTP/1.1
 * chunked framing, keep-alive and pipelining work, and the client-side TTFT. */
#include "sim/sim.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct sim_thread {
  struct sim_config cfg;
  pthread_t thread;
  int rc;
  struct st_err err;
  char dir[64];
  char port_file[96];
  int port;
};

static void *sim_thread_main(void *arg) {
  struct sim_thread *t = arg;
  t->rc = sim_main(&t->cfg, &t->err);
  return NULL;
}

static void sim_start(struct sim_thread *t, double ttft_ms, double tpot_ms) {
  memset(t, 0, sizeof *t);
  snprintf(t->dir, sizeof t->dir, "/tmp/it_sim_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(t->dir));
  snprintf(t->port_file, sizeof t->port_file, "%s/port", t->dir);
  sim_config_init(&t->cfg);
  t->cfg.port = 0;
  t->cfg.port_file = t->port_file;
  t->cfg.fixed_ttft_ms = ttft_ms;
  t->cfg.fixed_tpot_ms = tpot_ms;
  t->cfg.warmup_ms = 0;
  t->cfg.served_model_name = "it \"model\""; /* needs JSON escaping */
  t->cfg.in_process = true;
  t->cfg.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ck_assert_int_ge(t->cfg.stop_fd, 0);
  ck_assert_int_eq(pthread_create(&t->thread, NULL, sim_thread_main, t), 0);
  for (int i = 0; i < 500 && t->port == 0; i++) {
    char *text = file_read_all(t->port_file, NULL, NULL);
    if (text) {
      t->port = atoi(text);
      free(text);
    } else {
      clock_sleep_us(10000);
    }
  }
  ck_assert_int_gt(t->port, 0);
}

static void sim_stop(struct sim_thread *t) {
  uint64_t one = 1;
  ck_assert_int_eq(write(t->cfg.stop_fd, &one, sizeof one), (ssize_t)sizeof one);
  pthread_join(t->thread, NULL);
  ck_assert_msg(t->rc == 0, "sim_main: %s", t->err.msg);
  close(t->cfg.stop_fd);
  unlink(t->port_file);
  rmdir(t->dir);
}

static int connect_port(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  struct timeval tv = {.tv_sec = 10};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

static void send_all(int fd, const char *s) {
  size_t len = strlen(s), off = 0;
  while (off < len) {
    ssize_t w = send(fd, s + off, len - off, MSG_NOSIGNAL);
    ck_assert_int_gt(w, 0);
    off += (size_t)w;
  }
}

/* A buffered reader over the socket. */
struct reader {
  int fd;
  struct sbuf buf;
  size_t pos;
};

static bool reader_fill(struct reader *r) {
  char tmp[65536];
  ssize_t n = recv(r->fd, tmp, sizeof tmp, 0);
  if (n <= 0)
    return false;
  sbuf_append(&r->buf, tmp, (size_t)n);
  return true;
}

/* Reads one CRLF-terminated line (without CRLF) into a heap string. */
static char *reader_line(struct reader *r) {
  for (;;) {
    char *nl =
        r->buf.len > r->pos ? memmem(r->buf.data + r->pos, r->buf.len - r->pos, "\r\n", 2) : NULL;
    if (nl) {
      char *line = xstrndup(r->buf.data + r->pos, (size_t)(nl - (r->buf.data + r->pos)));
      r->pos = (size_t)(nl - r->buf.data) + 2;
      return line;
    }
    ck_assert_msg(reader_fill(r), "connection closed mid-line");
  }
}

static char *reader_bytes(struct reader *r, size_t n) {
  while (r->buf.len - r->pos < n)
    ck_assert_msg(reader_fill(r), "connection closed mid-body");
  char *s = xstrndup(r->buf.data + r->pos, n);
  r->pos += n;
  return s;
}

struct response {
  int status;
  bool chunked;
  char *body;    /* non-chunked */
  char **events; /* chunked: one HTTP chunk each */
  size_t n_events;
  int64_t first_token_ns;
};

static void response_free(struct response *resp) {
  free(resp->body);
  for (size_t i = 0; i < resp->n_events; i++)
    free(resp->events[i]);
  free(resp->events);
}

static void read_response(struct reader *r, struct response *resp) {
  memset(resp, 0, sizeof *resp);
  char *status = reader_line(r);
  ck_assert_int_eq(sscanf(status, "HTTP/1.1 %d", &resp->status), 1);
  free(status);
  long length = -1;
  for (;;) {
    char *h = reader_line(r);
    bool end = h[0] == '\0';
    if (strncasecmp(h, "content-length:", 15) == 0)
      length = atol(h + 15);
    if (strcasecmp(h, "transfer-encoding: chunked") == 0)
      resp->chunked = true;
    free(h);
    if (end)
      break;
  }
  if (!resp->chunked) {
    ck_assert_int_ge(length, 0);
    resp->body = reader_bytes(r, (size_t)length);
    return;
  }
  for (;;) {
    char *size_line = reader_line(r);
    size_t size = strtoul(size_line, NULL, 16);
    free(size_line);
    if (size == 0) {
      free(reader_line(r)); /* the empty trailer line */
      return;
    }
    char *data = reader_bytes(r, size);
    if (!resp->first_token_ns && strstr(data, "\"text\":\""))
      resp->first_token_ns = clock_mono_ns();
    free(reader_line(r));
    resp->events = xreallocarray(resp->events, resp->n_events + 1, sizeof *resp->events);
    resp->events[resp->n_events++] = data;
  }
}

static const char completion_body[] =
    "{\"prompt\":[1,2,3,4,5],\"max_tokens\":12,\"ignore_eos\":true,\"stream\":true,"
    "\"stream_options\":{\"include_usage\":true}}";

START_TEST(stream_events_are_valid_sglang_json) {
  struct sim_thread t;
  sim_start(&t, 20, 2);
  int fd = connect_port(t.port);
  struct reader r = {.fd = fd};
  char *req =
      xasprintf("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                "Content-Length: %zu\r\n\r\n%s",
                strlen(completion_body), completion_body);
  int64_t sent_ns = clock_mono_ns();
  send_all(fd, req);
  free(req);
  struct response resp;
  read_response(&r, &resp);
  ck_assert_int_eq(resp.status, 200);
  ck_assert(resp.chunked);
  /* client-side TTFT: never before 20 ms, and not far after */
  double ttft_ms = (double)(resp.first_token_ns - sent_ns) / 1e6;
  ck_assert_msg(ttft_ms >= 20.0 && ttft_ms < 40.0, "client TTFT %.3f ms", ttft_ms);
  ck_assert_int_eq(resp.n_events, 14); /* 12 tokens + usage + [DONE] */
  for (size_t i = 0; i < resp.n_events; i++) {
    const char *e = resp.events[i];
    ck_assert_msg(strncmp(e, "data: ", 6) == 0 && strcmp(e + strlen(e) - 2, "\n\n") == 0,
                  "event %zu: %s", i, e);
    if (i == resp.n_events - 1) {
      ck_assert_str_eq(e, "data: [DONE]\n\n");
      break;
    }
    cJSON *j = cJSON_Parse(e + 6);
    ck_assert_msg(j != NULL, "event %zu is not JSON: %s", i, e);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "model")->valuestring, "it \"model\"");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "object")->valuestring, "text_completion");
    cJSON *choices = cJSON_GetObjectItem(j, "choices");
    if (i < 12) {
      cJSON *c0 = cJSON_GetArrayItem(choices, 0);
      ck_assert(cJSON_IsString(cJSON_GetObjectItem(c0, "text")));
      cJSON *fr = cJSON_GetObjectItem(c0, "finish_reason");
      if (i == 11)
        ck_assert_str_eq(fr->valuestring, "length");
      else
        ck_assert(cJSON_IsNull(fr));
      ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "usage")));
    } else {
      ck_assert_int_eq(cJSON_GetArraySize(choices), 0);
      cJSON *u = cJSON_GetObjectItem(j, "usage");
      ck_assert_int_eq(cJSON_GetObjectItem(u, "prompt_tokens")->valueint, 5);
      ck_assert_int_eq(cJSON_GetObjectItem(u, "completion_tokens")->valueint, 12);
      ck_assert_int_eq(cJSON_GetObjectItem(u, "total_tokens")->valueint, 17);
    }
    cJSON_Delete(j);
  }
  response_free(&resp);

  /* keep-alive: the same connection serves two pipelined requests in order */
  send_all(fd, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  read_response(&r, &resp);
  ck_assert_int_eq(resp.status, 200);
  cJSON *models = cJSON_Parse(resp.body);
  ck_assert_ptr_nonnull(models);
  ck_assert_str_eq(
      cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(models, "data"), 0), "id")
          ->valuestring,
      "it \"model\"");
  cJSON_Delete(models);
  response_free(&resp);
  read_response(&r, &resp);
  ck_assert_int_eq(resp.status, 404);
  response_free(&resp);
  sbuf_free(&r.buf);
  close(fd);
  sim_stop(&t);
}
END_TEST

START_TEST(chat_stream_has_role_content_finish_usage) {
  struct sim_thread t;
  sim_start(&t, 0, 0);
  int fd = connect_port(t.port);
  struct reader r = {.fd = fd};
  const char *body =
      "{\"messages\":[{\"role\":\"system\",\"content\":\"be "
      "brief\"},{\"role\":\"user\",\"content\":"
      "[{\"type\":\"text\",\"text\":\"hi there\"}]}],\"max_completion_tokens\":4,\"stream\":true,"
      "\"stream_options\":{\"include_usage\":true}}";
  char *req = xasprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        "Content-Length: %zu\r\n\r\n%s",
                        strlen(body), body);
  send_all(fd, req);
  free(req);
  struct response resp;
  read_response(&r, &resp);
  ck_assert_int_eq(resp.status, 200);
  /* role, 4 content chunks, finish, usage, [DONE] */
  ck_assert_int_eq(resp.n_events, 8);
  for (size_t i = 0; i + 1 < resp.n_events; i++) {
    cJSON *j = cJSON_Parse(resp.events[i] + 6);
    ck_assert_msg(j != NULL, "event %zu is not JSON: %s", i, resp.events[i]);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion.chunk");
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    cJSON *delta = c0 ? cJSON_GetObjectItem(c0, "delta") : NULL;
    if (i == 0)
      ck_assert_str_eq(cJSON_GetObjectItem(delta, "role")->valuestring, "assistant");
    else if (i <= 4)
      ck_assert(cJSON_IsString(cJSON_GetObjectItem(delta, "content")));
    else if (i == 5)
      ck_assert_str_eq(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "length");
    else /* 2 system + 2 user tokens + 2 messages x 5 + 3 */
      ck_assert_int_eq(
          cJSON_GetObjectItem(cJSON_GetObjectItem(j, "usage"), "prompt_tokens")->valueint, 17);
    cJSON_Delete(j);
  }
  response_free(&resp);
  /* Connection: close: the server closes after the response */
  char byte;
  ck_assert_int_eq(recv(fd, &byte, 1, 0), 0);
  sbuf_free(&r.buf);
  close(fd);
  sim_stop(&t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("it_sim");
  TCase *tc = tcase_create("in_process");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, stream_events_are_valid_sglang_json);
  tcase_add_test(tc, chat_stream_has_role_content_finish_usage);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
