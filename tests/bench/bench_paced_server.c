/* A paced streaming server for client benchmarks (not a test, not the sim):
 * OpenAI /v1/completions SSE in SGLang's shape over HTTP/1.1 chunked encoding,
 * one token chunk every --tpot-ms after a first one --ttft-ms after the
 * request arrived, all streams on one step clock like a batching server's
 * decode steps (--staggered: each stream on its own phase), or with --fast as
 * fast as the sockets take them. It
 * timestamps its own writes (CLOCK_MONOTONIC, right before each send) and
 * the arrival of each request (the kernel's receive timestamp of its last
 * bytes, SO_TIMESTAMPNS), and writes them all to --trace at exit, so a
 * client's figures can be compared with what the server really did:
 * client TTFT minus (first write - request arrived), each client chunk gap
 * minus the server's gap.
 *
 * Every request gets a server id; its first token's text is "r<id>", the
 * others " t", so a client's saved generated texts name the trace line of
 * each of its requests. /tokenize and /detokenize (SGLang/vLLM and llama.cpp
 * shapes) implement a word tokenizer ("w<id>" is token id, other words hash)
 * for the reference client's tokenizer stand-in.
 *
 * Threads (--threads N): one epoll loop each, each with its own SO_REUSEPORT
 * listener on the same port. SIGTERM/SIGINT end it; the trace is written then.
 *
 *   bench_paced_server --port-file F --trace F [--port N] [--threads N]
 *                      [--tpot-ms MS] [--ttft-ms MS] [--fast] [--vocab N]
 * Trace: a "# {json}" line (settings, per-thread CPU time, write lateness
 * against the schedule), then one line per request:
 *   id recv_mono_ns read_ns prompt_tokens max_tokens events complete t_0 t_1 ...
 * with read_ns the server's own delay from arrival to reading the request and
 * t_k the ns from arrival to the write of token chunk k. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim_internal.h"

enum {
  MAX_THREADS = 64,
  MAX_REQUEST_BYTES = 16 << 20,
  FAST_BATCH_BYTES = 64 << 10,
  LATE_BUCKETS = 100000 /* µs; the last one collects everything later */
};

static struct {
  int port, threads, vocab;
  int64_t tpot_ns, ttft_ns;
  bool fast, staggered;
  const char *port_file, *trace_path, *model;
} opt = {.threads = 1, .vocab = 32000, .tpot_ns = 10000000, .ttft_ns = 10000000, .model = "bench"};

static atomic_bool stopping;
static atomic_uint_fast64_t next_request_id;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t ts_ns(const struct timespec *ts) {
  return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* ---------------------------------------------------------------- requests, connections */
struct request_trace {
  uint64_t id;
  int64_t recv_ns;
  int64_t read_ns; /* when the server read those bytes */
  int prompt_tokens, max_tokens, events;
  bool complete;
  int n_tokens;
  int64_t *token_ns; /* absolute */
};

enum conn_state { READING, STREAMING, DRAINING };

struct conn {
  int fd;
  enum conn_state state;
  bool close_after;
  bool want_out; /* EPOLLOUT registered */
  struct sbuf in, out;
  int64_t last_rx_ns; /* kernel receive timestamp of the latest bytes read */
  int64_t last_read_ns; /* when they were read */
  struct request_trace *req;
  int tokens_sent;
  struct sim_timer due; /* armed while a paced token is due */
};

struct worker {
  int id;
  pthread_t thread;
  int lfd, epfd, tfd, wfd;
  struct sim_timer_heap heap;
  int64_t armed_ns;
  struct request_trace **reqs;
  size_t n_reqs, reqs_cap;
  uint64_t *late_us; /* LATE_BUCKETS counts */
  uint64_t late_n;
  int64_t cpu_ns;
  uint64_t writes, blocked_writes;
};

static struct worker workers[MAX_THREADS];

/* Paced streams wait in the sim's deadline heap (their due time is the
 * timer's at_ns); the heap is used without its fire callbacks. */
static struct conn *due_first(const struct worker *w) {
  struct sim_timer *t = sim_timer_peek(&w->heap);
  return t ? (struct conn *)((char *)t - offsetof(struct conn, due)) : NULL;
}

static void arm_timer(struct worker *w) {
  struct conn *first = due_first(w);
  int64_t due = first ? first->due.at_ns : 0;
  if (due == w->armed_ns)
    return;
  struct itimerspec its = {0};
  if (due > 0) {
    its.it_value.tv_sec = due / 1000000000;
    its.it_value.tv_nsec = due % 1000000000;
  }
  timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
  w->armed_ns = due;
}

static void set_events(struct worker *w, struct conn *c, bool out) {
  if (c->want_out == out)
    return;
  struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0u), .data.ptr = c};
  epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
  c->want_out = out;
}

static void conn_close(struct worker *w, struct conn *c) {
  sim_timer_cancel(&w->heap, &c->due);
  epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  sbuf_free(&c->in);
  sbuf_free(&c->out);
  free(c);
}

/* Sends what is queued; false when the connection is gone. */
static bool flush_out(struct worker *w, struct conn *c) {
  while (c->out.len > 0) {
    ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
    w->writes++;
    if (n > 0) {
      sbuf_consume(&c->out, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      w->blocked_writes++;
      break;
    }
    return false;
  }
  if (!opt.fast || c->state != STREAMING)
    set_events(w, c, c->out.len > 0);
  return true;
}

/* ---------------------------------------------------------------- SSE */
static void add_chunk(struct sbuf *b, const char *payload, size_t len) {
  sbuf_printf(b, "%zx\r\n", len);
  sbuf_append(b, payload, len);
  sbuf_append(b, "\r\n", 2);
}

/* Appends token chunk k of c's request (one SSE event in one HTTP chunk). */
static void add_token(struct conn *c, int k) {
  struct request_trace *r = c->req;
  char text[32];
  if (k == 0)
    snprintf(text, sizeof(text), "r%" PRIu64, r->id);
  else
    snprintf(text, sizeof(text), " t");
  bool last = k + 1 == r->max_tokens;
  char ev[512];
  int n = snprintf(ev, sizeof(ev),
                   "data: {\"id\":\"%016" PRIx64 "\",\"object\":\"text_completion\",\"created\":"
                   "1700000000,\"model\":\"%s\",\"choices\":[{\"index\":0,\"text\":\"%s\","
                   "\"logprobs\":null,\"finish_reason\":%s,\"matched_stop\":null}],\"usage\":null}\n\n",
                   r->id, opt.model, text, last ? "\"length\"" : "null");
  add_chunk(&c->out, ev, (size_t)n);
  r->events++;
  if (last) {
    n = snprintf(ev, sizeof(ev),
                 "data: {\"id\":\"%016" PRIx64 "\",\"object\":\"text_completion\",\"created\":"
                 "1700000000,\"model\":\"%s\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,"
                 "\"total_tokens\":%d,\"completion_tokens\":%d}}\n\n",
                 r->id, opt.model, r->prompt_tokens, r->prompt_tokens + r->max_tokens,
                 r->max_tokens);
    add_chunk(&c->out, ev, (size_t)n);
    add_chunk(&c->out, "data: [DONE]\n\n", 14);
    sbuf_append(&c->out, "0\r\n\r\n", 5);
    r->events += 2;
  }
}

static void stream_done(struct worker *w, struct conn *c) {
  c->req->complete = true;
  c->req = NULL;
  c->state = READING;
  if (c->close_after)
    c->state = DRAINING;
  (void)w;
}

/* Paced: the token due now. */
static bool emit_due(struct worker *w, struct conn *c, int64_t now) {
  int64_t late_us = (now - c->due.at_ns) / 1000;
  w->late_us[late_us < 0 ? 0 : late_us >= LATE_BUCKETS ? LATE_BUCKETS - 1 : late_us]++;
  w->late_n++;
  int k = c->tokens_sent++;
  add_token(c, k);
  c->req->token_ns[c->req->n_tokens++] = mono_ns();
  bool ok = flush_out(w, c);
  if (c->tokens_sent == c->req->max_tokens) {
    stream_done(w, c);
  } else {
    sim_timer_arm(&w->heap, &c->due, c->due.at_ns + opt.tpot_ns);
  }
  return ok;
}

/* Fast: one batch of tokens for a writable stream. */
static bool emit_fast(struct worker *w, struct conn *c) {
  if (c->out.len == 0) {
    int64_t now = mono_ns();
    while (c->tokens_sent < c->req->max_tokens && c->out.len < FAST_BATCH_BYTES) {
      add_token(c, c->tokens_sent++);
      c->req->token_ns[c->req->n_tokens++] = now;
    }
  }
  bool ok = flush_out(w, c);
  if (ok && c->tokens_sent == c->req->max_tokens && c->out.len == 0) {
    stream_done(w, c);
    set_events(w, c, false);
  }
  return ok;
}

/* ---------------------------------------------------------------- the word tokenizer */
static int word_id(const char *s, size_t n) {
  if (n > 1 && s[0] == 'w') {
    long v = 0;
    size_t i = 1;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000; i++)
      v = v * 10 + (s[i] - '0');
    if (i == n)
      return (int)(v % opt.vocab);
  }
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return (int)(h % (uint32_t)opt.vocab);
}

/* Calls fn for each whitespace-separated word; returns the count. */
static int words(const char *s, void (*fn)(void *, int), void *ctx) {
  int n = 0;
  while (*s) {
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
      s++;
    if (!*s)
      break;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\n' && *e != '\t' && *e != '\r')
      e++;
    if (fn)
      fn(ctx, word_id(s, (size_t)(e - s)));
    n++;
    s = e;
  }
  return n;
}

static void add_id(void *ctx, int id) {
  cJSON_AddItemToArray(ctx, cJSON_CreateNumber(id));
}

static int prompt_tokens(const cJSON *prompt) {
  if (cJSON_IsString(prompt))
    return words(prompt->valuestring, NULL, NULL);
  if (cJSON_IsArray(prompt)) {
    const cJSON *first = cJSON_GetArrayItem(prompt, 0);
    if (cJSON_IsString(first))
      return words(first->valuestring, NULL, NULL);
    return cJSON_GetArraySize(prompt);
  }
  return 0;
}

/* ---------------------------------------------------------------- HTTP */
static void respond(struct conn *c, int status, const char *type, const char *body) {
  const char *reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
  sbuf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n%s",
             status, reason, type, strlen(body), c->close_after ? "Connection: close\r\n" : "",
             body);
  if (c->close_after)
    c->state = DRAINING;
}

static void respond_json(struct conn *c, cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  respond(c, 200, "application/json", s);
  free(s);
  cJSON_Delete(j);
}

/* Paced streams tick together like a batching server's decode steps: every
 * token is written at a multiple of --tpot-ms on the server's clock (the
 * first at the first step after --ttft-ms), unless --staggered gives each
 * stream its own phase. */
static int64_t step_after(int64_t t) {
  if (opt.staggered || opt.fast || opt.tpot_ns == 0)
    return t;
  return (t + opt.tpot_ns - 1) / opt.tpot_ns * opt.tpot_ns;
}

static void start_completion(struct worker *w, struct conn *c, const cJSON *body, int64_t now) {
  const cJSON *mt = cJSON_GetObjectItem(body, "max_tokens");
  int max_tokens = cJSON_IsNumber(mt) && mt->valuedouble >= 1 ? (int)mt->valuedouble : 16;
  const cJSON *st = cJSON_GetObjectItem(body, "stream");
  struct request_trace *r = calloc(1, sizeof(*r));
  if (!r)
    abort();
  r->id = atomic_fetch_add(&next_request_id, 1);
  r->recv_ns = c->last_rx_ns;
  r->read_ns = c->last_read_ns;
  r->prompt_tokens = prompt_tokens(cJSON_GetObjectItem(body, "prompt"));
  r->max_tokens = max_tokens;
  if (w->n_reqs == w->reqs_cap) {
    w->reqs_cap = w->reqs_cap ? w->reqs_cap * 2 : 1024;
    w->reqs = xrealloc(w->reqs, w->reqs_cap * sizeof(*w->reqs));
  }
  w->reqs[w->n_reqs++] = r;
  if (!cJSON_IsTrue(st)) { /* non-streaming: everything at once */
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "object", "text_completion");
    cJSON_AddStringToObject(j, "model", opt.model);
    cJSON *ch = cJSON_AddArrayToObject(j, "choices");
    cJSON *c0 = cJSON_CreateObject();
    cJSON_AddNumberToObject(c0, "index", 0);
    cJSON_AddStringToObject(c0, "text", "r");
    cJSON_AddStringToObject(c0, "finish_reason", "length");
    cJSON_AddItemToArray(ch, c0);
    cJSON *u = cJSON_AddObjectToObject(j, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", r->prompt_tokens);
    cJSON_AddNumberToObject(u, "completion_tokens", max_tokens);
    cJSON_AddNumberToObject(u, "total_tokens", r->prompt_tokens + max_tokens);
    r->complete = true;
    respond_json(c, j);
    return;
  }
  r->token_ns = calloc((size_t)max_tokens, sizeof(*r->token_ns));
  if (!r->token_ns)
    abort();
  sbuf_printf(&c->out,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
             "Transfer-Encoding: chunked\r\n%s\r\n",
             c->close_after ? "Connection: close\r\n" : "");
  c->req = r;
  c->state = STREAMING;
  c->tokens_sent = 0;
  if (opt.fast && opt.ttft_ns == 0) {
    set_events(w, c, true);
  } else {
    sim_timer_arm(&w->heap, &c->due, step_after(now + opt.ttft_ns));
  }
}

static void handle_request(struct worker *w, struct conn *c, const char *method, const char *path,
                           const char *body, int64_t now) {
  cJSON *j = strcmp(method, "POST") == 0 ? cJSON_Parse(body) : NULL;
  if (strcmp(path, "/v1/completions") == 0 && j) {
    start_completion(w, c, j, now);
  } else if (strcmp(path, "/tokenize") == 0 && j) {
    const cJSON *p = cJSON_GetObjectItem(j, "prompt");
    if (!cJSON_IsString(p))
      p = cJSON_GetObjectItem(j, "content");
    if (!cJSON_IsString(p))
      p = cJSON_GetObjectItem(j, "text");
    cJSON *out = cJSON_CreateObject();
    cJSON *toks = cJSON_AddArrayToObject(out, "tokens");
    int n = cJSON_IsString(p) ? words(p->valuestring, add_id, toks) : 0;
    cJSON_AddNumberToObject(out, "count", n);
    cJSON_AddNumberToObject(out, "max_model_len", 1 << 20);
    respond_json(c, out);
  } else if (strcmp(path, "/detokenize") == 0 && j) {
    const cJSON *toks = cJSON_GetObjectItem(j, "tokens");
    struct sbuf text = {0};
    const cJSON *t;
    cJSON_ArrayForEach(t, toks) { sbuf_printf(&text, "%sw%d", text.len ? " " : "", (int)t->valuedouble); }
    sbuf_reserve(&text, 0); /* "" for no tokens */
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "prompt", text.data);
    cJSON_AddStringToObject(out, "content", text.data);
    cJSON_AddStringToObject(out, "text", text.data);
    sbuf_free(&text);
    respond_json(c, out);
  } else if (strcmp(path, "/health") == 0 || strcmp(path, "/v1/models") == 0) {
    char models[256];
    snprintf(models, sizeof(models),
             "{\"object\":\"list\",\"data\":[{\"id\":\"%s\",\"object\":\"model\","
             "\"max_model_len\":1048576}]}",
             opt.model);
    respond(c, 200, "application/json", path[1] == 'h' ? "{}" : models);
  } else {
    respond(c, 404, "application/json", "{\"error\":\"not found\"}");
  }
  cJSON_Delete(j);
}

/* Parses complete requests out of c->in; false on a bad request. */
static bool parse_requests(struct worker *w, struct conn *c, int64_t now) {
  while (c->state == READING && c->in.len > 0) {
    char *start = c->in.data;
    size_t avail = c->in.len;
    char *end = memmem(start, avail, "\r\n\r\n", 4);
    if (!end)
      return avail < MAX_REQUEST_BYTES;
    size_t head_len = (size_t)(end - start) + 4;
    size_t body_len = 0;
    bool close_after = false;
    char method[8] = "", path[256] = "";
    if (sscanf(start, "%7s %255s", method, path) != 2)
      return false;
    for (char *line = memchr(start, '\n', head_len); line && line < end;
         line = memchr(line + 1, '\n', (size_t)(end - line))) {
      line++;
      if (strncasecmp(line, "content-length:", 15) == 0)
        body_len = strtoul(line + 15, NULL, 10);
      else if (strncasecmp(line, "connection:", 11) == 0 &&
               strncasecmp(line + 11 + strspn(line + 11, " "), "close", 5) == 0)
        close_after = true;
    }
    if (strstr(start, " HTTP/1.0\r\n") && strstr(start, " HTTP/1.0\r\n") < end)
      close_after = true;
    if (body_len > MAX_REQUEST_BYTES)
      return false;
    if (avail < head_len + body_len)
      return true; /* wait for the rest of the body */
    char saved = start[head_len + body_len];
    start[head_len + body_len] = '\0';
    c->close_after = close_after;
    handle_request(w, c, method, path, start + head_len, now);
    start[head_len + body_len] = saved;
    sbuf_consume(&c->in, head_len + body_len);
  }
  return true;
}

/* Reads what is there, keeping the kernel's receive time of the last bytes. */
static bool conn_read(struct worker *w, struct conn *c) {
  for (;;) {
    sbuf_reserve(&c->in, 65536);
    char ctl[CMSG_SPACE(sizeof(struct timespec) * 3)];
    struct iovec iov = {.iov_base = c->in.data + c->in.len, .iov_len = c->in.cap - c->in.len - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                         .msg_controllen = sizeof(ctl)};
    ssize_t n = recvmsg(c->fd, &msg, 0);
    if (n == 0)
      return false;
    if (n < 0)
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    int64_t now = mono_ns();
    c->last_rx_ns = c->last_read_ns = now;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
        struct timespec rx, real, mono;
        memcpy(&rx, CMSG_DATA(cm), sizeof(rx));
        clock_gettime(CLOCK_REALTIME, &real);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        int64_t rx_mono = ts_ns(&rx) - (ts_ns(&real) - ts_ns(&mono));
        if (rx_mono <= now)
          c->last_rx_ns = rx_mono;
      }
    }
    c->in.len += (size_t)n;
    c->in.data[c->in.len] = '\0';
    if (c->state == READING && !parse_requests(w, c, now))
      return false;
    if (!flush_out(w, c))
      return false;
    if (c->state == DRAINING && c->out.len == 0)
      return false;
  }
}

static void accept_all(struct worker *w) {
  for (;;) {
    int fd = accept4(w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    struct conn *c = calloc(1, sizeof(*c));
    if (!c)
      abort();
    c->fd = fd;
    sim_timer_init(&c->due, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
  }
}

/* ---------------------------------------------------------------- the loop */
static void *worker_main(void *arg) {
  struct worker *w = arg;
  prctl(PR_SET_TIMERSLACK, 1UL); /* the default 50 µs slack would show as lateness */
  enum { MAX_EVENTS = 512 };
  struct epoll_event evs[MAX_EVENTS];
  static char tag_listen, tag_timer, tag_wake;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &tag_listen};
  epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfd, &ev);
  ev.data.ptr = &tag_timer;
  epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev);
  ev.data.ptr = &tag_wake;
  epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wfd, &ev);
  while (!atomic_load(&stopping)) {
    int n = epoll_wait(w->epfd, evs, MAX_EVENTS, -1);
    for (int i = 0; i < n; i++) {
      void *p = evs[i].data.ptr;
      if (p == &tag_listen) {
        accept_all(w);
      } else if (p == &tag_timer || p == &tag_wake) {
        uint64_t v;
        ssize_t r = read(p == &tag_timer ? w->tfd : w->wfd, &v, sizeof(v));
        (void)r;
        if (p == &tag_timer)
          w->armed_ns = 0;
      } else {
        struct conn *c = p;
        bool ok = true;
        if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
          ok = conn_read(w, c);
        if (ok && (evs[i].events & EPOLLOUT))
          ok = c->state == STREAMING && opt.fast ? emit_fast(w, c) : flush_out(w, c);
        if (ok && c->state == DRAINING && c->out.len == 0)
          ok = false;
        if (!ok)
          conn_close(w, c);
      }
    }
    /* Paced streams that are due (a closed connection left the heap). */
    int64_t now = mono_ns();
    for (struct conn *c; (c = due_first(w)) && c->due.at_ns <= now;) {
      sim_timer_cancel(&w->heap, &c->due);
      if (opt.fast) { /* first token of a fast stream: stream from now on */
        set_events(w, c, true);
        continue;
      }
      if (!emit_due(w, c, now) || (c->state == DRAINING && c->out.len == 0))
        conn_close(w, c);
      now = mono_ns();
    }
    arm_timer(w);
  }
  struct timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  w->cpu_ns = ts_ns(&cpu);
  return NULL;
}

/* ---------------------------------------------------------------- setup, trace */
static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4096) != 0) {
    perror("bench_paced_server: bind/listen");
    exit(1);
  }
  return fd;
}

static int bound_port(int fd) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  getsockname(fd, (struct sockaddr *)&a, &len);
  return ntohs(a.sin_port);
}

static double late_percentile(const uint64_t *counts, uint64_t total, double p) {
  if (total == 0)
    return 0;
  uint64_t rank = (uint64_t)((double)(total - 1) * p / 100.0);
  uint64_t seen = 0;
  for (int i = 0; i < LATE_BUCKETS; i++) {
    seen += counts[i];
    if (seen > rank)
      return i;
  }
  return LATE_BUCKETS - 1;
}

static void write_trace(void) {
  FILE *f = fopen(opt.trace_path, "w");
  if (!f) {
    perror(opt.trace_path);
    exit(1);
  }
  uint64_t *late = calloc(LATE_BUCKETS, sizeof(*late));
  uint64_t late_n = 0, writes = 0, blocked = 0;
  fprintf(f, "# {\"mode\":\"%s\",\"tpot_ms\":%.3f,\"ttft_ms\":%.3f,\"threads\":%d,\"cpu_ns\":[",
          opt.fast ? "fast" : opt.staggered ? "staggered" : "paced", (double)opt.tpot_ns / 1e6, (double)opt.ttft_ns / 1e6,
          opt.threads);
  for (int t = 0; t < opt.threads; t++) {
    struct worker *w = &workers[t];
    fprintf(f, "%s%" PRId64, t ? "," : "", w->cpu_ns);
    for (int i = 0; i < LATE_BUCKETS; i++)
      late[i] += w->late_us[i];
    late_n += w->late_n;
    writes += w->writes;
    blocked += w->blocked_writes;
  }
  fprintf(f,
          "],\"late_us\":{\"n\":%" PRIu64 ",\"p50\":%.0f,\"p99\":%.0f,\"p999\":%.0f,\"max\":%.0f},"
          "\"writes\":%" PRIu64 ",\"blocked_writes\":%" PRIu64 "}\n",
          late_n, late_percentile(late, late_n, 50), late_percentile(late, late_n, 99),
          late_percentile(late, late_n, 99.9), late_percentile(late, late_n, 100), writes, blocked);
  free(late);
  for (int t = 0; t < opt.threads; t++) {
    struct worker *w = &workers[t];
    for (size_t i = 0; i < w->n_reqs; i++) {
      struct request_trace *r = w->reqs[i];
      fprintf(f, "%" PRIu64 " %" PRId64 " %" PRId64 " %d %d %d %d", r->id, r->recv_ns,
              r->read_ns - r->recv_ns, r->prompt_tokens, r->max_tokens, r->events,
              r->complete ? 1 : 0);
      for (int k = 0; k < r->n_tokens; k++)
        fprintf(f, " %" PRId64, r->token_ns[k] - r->recv_ns);
      fputc('\n', f);
    }
  }
  if (fclose(f) != 0) {
    perror(opt.trace_path);
    exit(1);
  }
}

static void usage(void) {
  fprintf(stderr, "usage: bench_paced_server --port-file FILE --trace FILE [--port N] [--threads N]\n"
                  "         [--tpot-ms MS] [--ttft-ms MS] [--staggered | --fast] [--vocab N] [--model NAME]\n");
  exit(2);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--fast") == 0 || strcmp(a, "--staggered") == 0) {
      *(a[2] == 'f' ? &opt.fast : &opt.staggered) = true;
      continue;
    }
    if (!v)
      usage();
    i++;
    if (strcmp(a, "--port") == 0)
      opt.port = atoi(v);
    else if (strcmp(a, "--port-file") == 0)
      opt.port_file = v;
    else if (strcmp(a, "--trace") == 0)
      opt.trace_path = v;
    else if (strcmp(a, "--threads") == 0)
      opt.threads = atoi(v);
    else if (strcmp(a, "--tpot-ms") == 0)
      opt.tpot_ns = (int64_t)(atof(v) * 1e6);
    else if (strcmp(a, "--ttft-ms") == 0)
      opt.ttft_ns = (int64_t)(atof(v) * 1e6);
    else if (strcmp(a, "--vocab") == 0)
      opt.vocab = atoi(v);
    else if (strcmp(a, "--model") == 0)
      opt.model = v;
    else
      usage();
  }
  if (!opt.port_file || !opt.trace_path || opt.threads < 1 || opt.threads > MAX_THREADS ||
      opt.vocab < 1 || opt.tpot_ns < 0 || opt.ttft_ns < 0 || strlen(opt.model) > 100)
    usage();

  struct rlimit nofile; /* one descriptor per stream */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  /* Grow the descriptor table now, while single-threaded: grown later by an
   * accept() with the loops running, the kernel waits an RCU grace period
   * (10-20 ms on a VM) and every stream stalls. */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    int fd = fcntl(2, F_DUPFD_CLOEXEC, (int)(nofile.rlim_cur - 1 < 65535 ? nofile.rlim_cur - 1 : 65535));
    if (fd >= 0)
      close(fd);
  }
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);

  int port = opt.port;
  for (int t = 0; t < opt.threads; t++) {
    struct worker *w = &workers[t];
    w->id = t;
    w->lfd = listen_on(port);
    port = bound_port(w->lfd);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    w->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->late_us = calloc(LATE_BUCKETS, sizeof(*w->late_us));
    if (w->epfd < 0 || w->tfd < 0 || w->wfd < 0 || !w->late_us) {
      perror("bench_paced_server");
      return 1;
    }
  }
  for (int t = 0; t < opt.threads; t++)
    pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", opt.port_file);
  FILE *pf = fopen(tmp, "w");
  if (!pf || fprintf(pf, "%d\n", port) < 0 || fclose(pf) != 0 || rename(tmp, opt.port_file) != 0) {
    perror(opt.port_file);
    return 1;
  }
  int sig = 0;
  sigwait(&sigs, &sig);
  atomic_store(&stopping, true);
  for (int t = 0; t < opt.threads; t++) {
    uint64_t one = 1;
    ssize_t r = write(workers[t].wfd, &one, sizeof(one));
    (void)r;
  }
  for (int t = 0; t < opt.threads; t++)
    pthread_join(workers[t].thread, NULL);
  write_trace();
  return 0;
}
