/* The floor of this machine (not a real client; tests/bench/paced_bench.sh
 * runs it next to the reference and servetop): the least work a client can
 * do per SSE event from tests/bench_paced_server, so what any HTTP library
 * adds can be told from what the kernel costs. One epoll loop, a new
 * connection per request, one recv per readiness event, no HTTP parsing
 * beyond finding "data: " lines (the paced server sends one event per HTTP
 * chunk), timestamps as servetop takes them (the epoll return for the first
 * read after a readiness event). It writes the keys of a --save-detailed
 * result that tests/bench/paced.py reads (duration, start time, ttfts, itls,
 * generated_texts); every other benchmark_serving.py flag is ignored.
 *
 *   bench_floor_client --base-url URL --max-concurrency N --num-prompts M
 *     [--random-input-len L] [--random-output-len L] [--random-range-ratio R]
 *     [--seed S] --result-dir DIR --result-filename NAME */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

struct req {
  int input_len, output_len;
  int64_t dispatch_ns, last_ns;
  double ttft_s;
  cJSON *itls;
  char text[32];
  int tokens;
  bool done;
};

struct conn {
  int fd;
  struct req *req;
  bool sent;
  struct sbuf in;
  int64_t ready_ns;
};

static struct sockaddr_in server;
static const char *model = "bench";

static uint64_t rng_state;
static uint64_t rng_next(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static int uniform(int len, double ratio) {
  int lo = (int)(len * ratio);
  return lo + (int)(rng_next() % (uint64_t)(len - lo + 1));
}

static bool send_request(int ep, struct conn *c);

/* Connects and, where the connect is done at once (loopback), sends the
 * request in the same pass, as servetop does. */
static void conn_start(int ep, struct conn *c, struct req *r) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  c->req = r;
  c->sent = false;
  sbuf_reset(&c->in);
  r->dispatch_ns = clock_mono_ns();
  if (connect(c->fd, (struct sockaddr *)&server, sizeof(server)) != 0 && errno != EINPROGRESS) {
    perror("bench_floor_client: connect");
    exit(1);
  }
  struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.ptr = c};
  epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
  send_request(ep, c);
}

/* Sends the request; false while the connect is not done yet. */
static bool send_request(int ep, struct conn *c) {
  struct req *r = c->req;
  struct sbuf body = {0}, msg = {0};
  sbuf_printf(&body, "{\"model\":\"%s\",\"prompt\":[", model);
  for (int j = 0; j < r->input_len; j++)
    sbuf_printf(&body, "%s%d", j ? "," : "", 100 + j);
  sbuf_printf(&body, "],\"max_tokens\":%d,\"stream\":true,\"ignore_eos\":true,"
                     "\"stream_options\":{\"include_usage\":true}}",
              r->output_len);
  sbuf_printf(&msg, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\n\r\n",
              inet_ntoa(server.sin_addr), body.len);
  sbuf_append(&msg, body.data, body.len);
  size_t want = msg.len;
  ssize_t n = send(c->fd, msg.data, want, MSG_NOSIGNAL);
  int e = errno;
  sbuf_free(&body);
  sbuf_free(&msg);
  if (n < 0 && (e == EAGAIN || e == ENOTCONN || e == EINPROGRESS))
    return false;
  if (n != (ssize_t)want) {
    errno = e;
    perror("bench_floor_client: send");
    exit(1);
  }
  c->sent = true;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  return true;
}

/* Token events: "data: {" lines with a non-empty choices list. */
static void on_line(struct req *r, const char *line, size_t len, int64_t t) {
  if (len < 7 || memcmp(line, "data: ", 6) != 0)
    return;
  if (len >= 12 && memcmp(line + 6, "[DONE]", 6) == 0) {
    r->done = true;
    return;
  }
  const char *choices = memmem(line, len, "\"choices\":[{", 12);
  if (!choices)
    return;
  if (r->tokens == 0) {
    r->ttft_s = (double)(t - r->dispatch_ns) / 1e9;
    const char *text = memmem(line, len, "\"text\":\"", 8);
    if (text) {
      text += 8;
      size_t n = 0;
      while (text + n < line + len && text[n] != '"' && n + 1 < sizeof(r->text))
        n++;
      memcpy(r->text, text, n);
    }
  } else {
    cJSON_AddItemToArray(r->itls, cJSON_CreateNumber((double)(t - r->last_ns) / 1e9));
  }
  r->tokens++;
  r->last_ns = t;
}

/* One recv; false when the response is over. */
static bool conn_read(struct conn *c) {
  char buf[16384];
  ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return true;
  if (n <= 0)
    return false;
  int64_t t = c->ready_ns ? c->ready_ns : clock_mono_ns();
  c->ready_ns = 0;
  sbuf_append(&c->in, buf, (size_t)n);
  size_t start = 0;
  for (char *nl; (nl = memchr(c->in.data + start, '\n', c->in.len - start));) {
    on_line(c->req, c->in.data + start, (size_t)(nl - (c->in.data + start)), t);
    start = (size_t)(nl - c->in.data) + 1;
  }
  memmove(c->in.data, c->in.data + start, c->in.len - start);
  c->in.len -= start;
  return !c->req->done;
}

int main(int argc, char **argv) {
  const char *url = NULL, *dir = ".", *name = NULL;
  int conc = 1, n_req = 1, isl = 128, osl = 128;
  double ratio = 1.0;
  long seed = 0;
  for (int i = 1; i + 1 < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0)
      continue;
    const char *v = argv[i + 1];
    if (strcmp(a, "--base-url") == 0)
      url = v;
    else if (strcmp(a, "--max-concurrency") == 0)
      conc = atoi(v);
    else if (strcmp(a, "--num-prompts") == 0)
      n_req = atoi(v);
    else if (strcmp(a, "--random-input-len") == 0)
      isl = atoi(v);
    else if (strcmp(a, "--random-output-len") == 0)
      osl = atoi(v);
    else if (strcmp(a, "--random-range-ratio") == 0)
      ratio = atof(v);
    else if (strcmp(a, "--seed") == 0)
      seed = atol(v);
    else if (strcmp(a, "--result-dir") == 0)
      dir = v;
    else if (strcmp(a, "--result-filename") == 0)
      name = v;
    else if (strcmp(a, "--model") == 0)
      model = v;
    else
      continue;
    i++;
  }
  unsigned port = 0;
  char host[64] = "";
  if (!url || sscanf(url, "http://%63[^:]:%u", host, &port) != 2 || !name || conc < 1 || n_req < 1 ||
      isl < 1 || osl < 1 || inet_pton(AF_INET, host, &server.sin_addr) != 1) {
    fprintf(stderr, "usage: bench_floor_client --base-url http://IP:PORT --max-concurrency N "
                    "--num-prompts M [--random-input-len L] [--random-output-len L] "
                    "[--random-range-ratio R] [--seed S] --result-dir DIR --result-filename NAME\n");
    return 2;
  }
  struct rlimit nofile; /* one descriptor per stream */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  server.sin_family = AF_INET;
  server.sin_port = htons((uint16_t)port);
  rng_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)seed;
  struct req *reqs = xcalloc((size_t)n_req, sizeof(*reqs));
  for (int i = 0; i < n_req; i++) {
    reqs[i].input_len = uniform(isl, ratio);
    reqs[i].output_len = uniform(osl, ratio);
    reqs[i].itls = cJSON_CreateArray();
  }
  if (conc > n_req)
    conc = n_req;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct conn *conns = xcalloc((size_t)conc, sizeof(*conns));
  enum { MAX_EVENTS = 2048 };
  struct epoll_event *evs = xcalloc(MAX_EVENTS, sizeof(*evs));
  double start_unix = clock_real_s();
  int64_t start = clock_mono_ns(), end = start;
  int next = 0, done = 0;
  for (; next < conc; next++)
    conn_start(ep, &conns[next], &reqs[next]);
  while (done < n_req) {
    int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
    int64_t batch = clock_mono_ns();
    for (int i = 0; i < n; i++) {
      struct conn *c = evs[i].data.ptr;
      if (!c->sent && (evs[i].events & EPOLLOUT))
        send_request(ep, c);
      if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        continue;
      c->ready_ns = batch;
      if (conn_read(c))
        continue;
      if (!c->req->done) {
        fprintf(stderr, "bench_floor_client: connection closed before [DONE]\n");
        return 1;
      }
      epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
      close(c->fd);
      done++;
      end = clock_mono_ns();
      if (next < n_req)
        conn_start(ep, c, &reqs[next++]);
    }
  }
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "client", "bench_floor_client");
  cJSON_AddNumberToObject(res, "max_concurrency", conc);
  cJSON_AddNumberToObject(res, "completed", n_req);
  cJSON_AddNumberToObject(res, "duration", (double)(end - start) / 1e9);
  cJSON_AddNumberToObject(res, "benchmark_start_time_unix", start_unix);
  cJSON *ttfts = cJSON_AddArrayToObject(res, "ttfts");
  cJSON *itls = cJSON_AddArrayToObject(res, "itls");
  cJSON *texts = cJSON_AddArrayToObject(res, "generated_texts");
  for (int i = 0; i < n_req; i++) {
    cJSON_AddItemToArray(ttfts, cJSON_CreateNumber(reqs[i].ttft_s));
    cJSON_AddItemToArray(itls, reqs[i].itls);
    cJSON_AddItemToArray(texts, cJSON_CreateString(reqs[i].text));
  }
  char *path = xasprintf("%s/%s", dir, name);
  char *text = cJSON_PrintUnformatted(res);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    return 1;
  }
  printf("bench_floor_client: %d requests in %.2f s\n", n_req, (double)(end - start) / 1e9);
  free(text);
  free(path);
  cJSON_Delete(res);
  for (int i = 0; i < conc; i++)
    sbuf_free(&conns[i].in);
  free(conns);
  free(evs);
  free(reqs);
  close(ep);
  return 0;
}
