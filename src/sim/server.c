/* The event loop: one epoll instance, a timerfd for the deadline heap, a
 * signalfd for SIGINT/SIGTERM, non-blocking sockets, no threads. */
#include "sim/sim_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum {
  READ_CHUNK_BYTES = 64 * 1024,
  MAX_EVENTS = 256,
  LISTEN_BACKLOG = 4096,
};

int64_t sim_now_ns(void) {
  return clock_mono_ns();
}

int64_t sim_wall_ns(const struct sim_server *srv, double sim_seconds) {
  double ns = sim_seconds * 1e9 * srv->time_scale;
  return ns > 9e18 ? INT64_MAX / 2 : (int64_t)llround(ns);
}

void sim_log(const struct sim_server *srv, const char *fmt, ...) {
  if (srv->quiet)
    return;
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  const char *tags =
      srv->cfg->enable_dp_attention && srv->cfg->dp_size > 1 ? " DP0 TP0 EP0" : " TP0";
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[%s%s] %s\n", stamp, tags, line);
}

size_t sim_conn_backlog(const struct sim_conn *conn) {
  return conn->out.len - conn->out_sent;
}

static void conn_set_want_write(struct sim_server *srv, struct sim_conn *conn, bool want) {
  if (conn->want_write == want || conn->fd < 0)
    return;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u),
                           .data.ptr = conn};
  if (epoll_ctl(srv->epfd, EPOLL_CTL_MOD, conn->fd, &ev) == 0)
    conn->want_write = want;
}

static long trickle_bytes_per_ms(const struct sim_server *srv) {
  for (size_t i = 0; i < srv->cfg->n_faults; i++)
    if (srv->cfg->faults[i].kind == SIM_FAULT_TRICKLE)
      return srv->cfg->faults[i].n > 0 ? srv->cfg->faults[i].n : 1;
  return 0;
}

static void conn_trickle_timer(struct sim_server *srv, struct sim_timer *t) {
  struct sim_conn *conn = SIM_CONTAINER_OF(t, struct sim_conn, trickle_timer);
  sim_conn_flush(srv, conn);
}

bool sim_conn_flush(struct sim_server *srv, struct sim_conn *conn) {
  if (conn->fd < 0)
    return false;
  long trickle = trickle_bytes_per_ms(srv);
  while (conn->out_sent < conn->out.len) {
    size_t n = conn->out.len - conn->out_sent;
    if (trickle > 0) {
      if (conn->trickle_timer.heap_index != SIM_TIMER_IDLE)
        return true; /* the trickle timer sends the next bytes */
      if (n > (size_t)trickle)
        n = (size_t)trickle;
    }
    ssize_t w = send(conn->fd, conn->out.data + conn->out_sent, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        conn_set_want_write(srv, conn, true);
        return true;
      }
      sim_conn_close(srv, conn);
      return false;
    }
    conn->out_sent += (size_t)w;
    if (trickle > 0 && conn->out_sent < conn->out.len) {
      sim_timer_arm(&srv->timers, &conn->trickle_timer, sim_now_ns() + 1000000);
      return true;
    }
  }
  sbuf_reset(&conn->out);
  conn->out_sent = 0;
  conn_set_want_write(srv, conn, false);
  if (conn->closing && !conn->req) {
    sim_conn_close(srv, conn);
    return false;
  }
  return true;
}

void sim_conn_close(struct sim_server *srv, struct sim_conn *conn) {
  if (conn->fd < 0)
    return;
  if (conn->req) {
    struct sim_req *req = conn->req;
    conn->req = NULL;
    req->conn = NULL;
    sim_engine_abort(srv, req);
  }
  sim_timer_cancel(&srv->timers, &conn->trickle_timer);
  sim_timer_cancel(&srv->timers, &conn->reply_timer);
  epoll_ctl(srv->epfd, EPOLL_CTL_DEL, conn->fd, NULL);
  close(conn->fd);
  conn->fd = -1;
  if (conn->prev)
    conn->prev->next = conn->next;
  else
    srv->conns = conn->next;
  if (conn->next)
    conn->next->prev = conn->prev;
  conn->prev = NULL;
  conn->next = srv->dead_conns;
  srv->dead_conns = conn;
}

static void free_dead_conns(struct sim_server *srv) {
  while (srv->dead_conns) {
    struct sim_conn *c = srv->dead_conns;
    srv->dead_conns = c->next;
    sbuf_free(&c->in);
    sbuf_free(&c->out);
    free(c);
  }
}

static void conn_error_response(struct sim_server *srv, struct sim_conn *conn, int status,
                                const char *message) {
  char *body = sim_fmt_error_json_alloc(status, message);
  sim_fmt_json_response(&conn->out, status, body, false);
  free(body);
  conn->closing = true;
  conn->keep_alive = false;
  sbuf_reset(&conn->in);
  sim_conn_flush(srv, conn);
}

/* Parses and serves complete requests while no response is in progress. */
static void conn_process_input(struct sim_server *srv, struct sim_conn *conn) {
  if (conn->dispatching)
    return; /* the loop below resumes once the dispatch returns */
  while (conn->fd >= 0 && !conn->req && !conn->closing && conn->in.len > 0 &&
         conn->reply_timer.heap_index == SIM_TIMER_IDLE) {
    struct sim_http_request hreq;
    enum sim_http_result r = sim_http_parse(conn->in.data, conn->in.len, &hreq);
    if (r == SIM_HTTP_INCOMPLETE) {
      if (hreq.expect_continue && !conn->continue_sent) {
        conn->continue_sent = true;
        sbuf_puts(&conn->out, "HTTP/1.1 100 Continue\r\n\r\n");
        sim_conn_flush(srv, conn);
      }
      return;
    }
    if (r == SIM_HTTP_BAD) {
      conn_error_response(srv, conn, 400, "Invalid HTTP request.");
      return;
    }
    if (r == SIM_HTTP_TOO_LARGE) {
      bool headers = hreq.method == NULL;
      conn_error_response(srv, conn, headers ? 431 : 413,
                          headers ? "Request header fields too large." : "Request body too large.");
      return;
    }
    if (r == SIM_HTTP_UNSUPPORTED) {
      conn_error_response(srv, conn, 501, "Chunked request bodies are not supported.");
      return;
    }
    conn->keep_alive = hreq.keep_alive;
    conn->continue_sent = false;
    conn->dispatching = true;
    sim_api_dispatch(srv, conn, &hreq);
    conn->dispatching = false;
    if (conn->fd < 0)
      return;
    sbuf_consume(&conn->in, hreq.total_bytes);
  }
}

void sim_conn_response_done(struct sim_server *srv, struct sim_conn *conn) {
  conn->req = NULL;
  if (!conn->keep_alive)
    conn->closing = true;
  if (!sim_conn_flush(srv, conn))
    return;
  conn_process_input(srv, conn);
}

static void conn_on_readable(struct sim_server *srv, struct sim_conn *conn) {
  for (;;) {
    sbuf_reserve(&conn->in, READ_CHUNK_BYTES);
    ssize_t r = recv(conn->fd, conn->in.data + conn->in.len, READ_CHUNK_BYTES, 0);
    if (r > 0) {
      conn->in.len += (size_t)r;
      conn->in.data[conn->in.len] = '\0';
      if (conn->in.len > SIM_HTTP_MAX_BODY_BYTES + SIM_HTTP_MAX_HEADER_BYTES + READ_CHUNK_BYTES) {
        conn_error_response(srv, conn, 413, "Request body too large.");
        return;
      }
      if ((size_t)r < READ_CHUNK_BYTES)
        break;
      continue;
    }
    if (r == 0) {
      sim_conn_close(srv, conn);
      return;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      break;
    sim_conn_close(srv, conn);
    return;
  }
  conn_process_input(srv, conn);
}

static void accept_all(struct sim_server *srv) {
  for (;;) {
    int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
        log_msg(LOG_WARN, "sim: accept: %s", strerror(errno));
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sim_conn *conn = xcalloc(1, sizeof *conn);
    conn->fd = fd;
    conn->id = ++srv->next_conn_id;
    conn->keep_alive = true;
    sim_timer_init(&conn->trickle_timer, conn_trickle_timer);
    sim_timer_init(&conn->reply_timer, sim_api_reply_timer);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = conn};
    if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
      close(fd);
      free(conn);
      continue;
    }
    conn->next = srv->conns;
    if (srv->conns)
      srv->conns->prev = conn;
    srv->conns = conn;
  }
}

static void rearm_timerfd(struct sim_server *srv) {
  struct sim_timer *t = sim_timer_peek(&srv->timers);
  int64_t at = t ? (t->at_ns > 0 ? t->at_ns : 1) : 0;
  if (at == srv->timerfd_armed_ns)
    return;
  struct itimerspec its = {0};
  its.it_value.tv_sec = at / 1000000000;
  its.it_value.tv_nsec = at % 1000000000;
  timerfd_settime(srv->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
  srv->timerfd_armed_ns = at;
}

/* Waits for I/O until the earliest deadline. epoll_pwait2 (Linux 5.11+)
 * takes a nanosecond timeout, one syscall per wake-up; older kernels use the
 * timerfd (settime + read + wait). */
static int wait_events(struct sim_server *srv, struct epoll_event *events, int max_events) {
  if (srv->use_pwait2) {
    struct sim_timer *t = sim_timer_peek(&srv->timers);
    struct timespec ts = {0}, *timeout = NULL;
    if (t) {
      int64_t delta = t->at_ns - sim_now_ns();
      if (delta > 0) {
        ts.tv_sec = delta / 1000000000;
        ts.tv_nsec = delta % 1000000000;
      }
      timeout = &ts;
    }
    int n = epoll_pwait2(srv->epfd, events, max_events, timeout, NULL);
    if (n >= 0 || errno != ENOSYS)
      return n;
    srv->use_pwait2 = false;
  }
  rearm_timerfd(srv);
  return epoll_wait(srv->epfd, events, max_events, -1);
}

static void run_due_timers(struct sim_server *srv) {
  int64_t now = sim_now_ns();
  struct sim_timer *t;
  while ((t = sim_timer_peek(&srv->timers)) && t->at_ns <= now) {
    sim_timer_cancel(&srv->timers, t);
    t->fire(srv, t);
    now = sim_now_ns();
  }
}

static int listen_on(struct sim_server *srv, struct st_err *err) {
  const struct sim_config *cfg = srv->cfg;
  char port_text[16];
  snprintf(port_text, sizeof port_text, "%d", cfg->port);
  struct addrinfo hints = {
      .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(cfg->host, port_text, &hints, &res);
  if (rc != 0)
    return err_setf(err, "--host %s: %s", cfg->host, gai_strerror(rc));
  int fd = -1;
  int last_errno = 0;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, LISTEN_BACKLOG) == 0)
      break;
    last_errno = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0)
    return err_setf(err, "cannot listen on %s:%d: %s", cfg->host, cfg->port, strerror(last_errno));
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  getsockname(fd, (struct sockaddr *)&ss, &sl);
  srv->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
  srv->listen_fd = fd;
  return 0;
}

static int write_port_file(const struct sim_server *srv, struct st_err *err) {
  if (!srv->cfg->port_file)
    return 0;
  char text[16];
  int n = snprintf(text, sizeof text, "%d\n", srv->port);
  if (file_write_atomic(srv->cfg->port_file, text, (size_t)n, 0644, err) < 0)
    return err_prefixf(err, "--sim-port-file");
  return 0;
}

static void warmup_timer_fired(struct sim_server *srv, struct sim_timer *t) {
  (void)t;
  if (srv->fixed_mode || srv->cfg->skip_server_warmup) {
    srv->ready = true;
    sim_log(srv, "The server is fired up and ready to roll!");
    return;
  }
  /* Like SGLang: a real 8-token generation; api.c marks the server ready
   * and logs the line when it finishes. */
  struct sim_req *req = xcalloc(1, sizeof *req);
  snprintf(req->rid, sizeof req->rid, "WARMUP");
  req->kind = SIM_REQ_GENERATE;
  req->is_warmup = true;
  req->prompt_tokens = 7; /* "The capital city of France is" */
  req->max_tokens = 8;
  req->recv_ns = sim_now_ns();
  sim_timer_init(&req->timer, NULL);
  srv->warmup_req = req;
  sim_engine_submit(srv, req);
}

static void server_fini(struct sim_server *srv) {
  while (srv->conns)
    sim_conn_close(srv, srv->conns);
  free_dead_conns(srv);
  sim_engine_fini(srv);
  sim_timer_heap_free(&srv->timers);
  if (srv->listen_fd >= 0)
    close(srv->listen_fd);
  if (srv->timer_fd >= 0)
    close(srv->timer_fd);
  if (srv->signal_fd >= 0)
    close(srv->signal_fd);
  if (srv->epfd >= 0)
    close(srv->epfd);
  if (srv->trace)
    fclose(srv->trace);
  free(srv->model_name);
  free(srv->model_name_json);
  sbuf_free(&srv->scratch);
}

static void log_startup(struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  const struct sim_config *cfg = srv->cfg;
  sim_log(srv, "servetop sim %s: this is a SIMULATED SGLang server (no GPU work is done)",
          SERVETOP_VERSION);
  if (srv->fixed_mode)
    sim_log(srv, "Fixed-latency mode: ttft=%.3f ms, tpot=%.3f ms (no performance model)",
            cfg->fixed_ttft_ms, cfg->fixed_tpot_ms);
  sim_log(srv,
          "server_args=ServerArgs(model_path='%s', served_model_name='%s', host='%s', port=%d, "
          "tp_size=%d, dp_size=%d, ep_size=%d, mem_fraction_static=%.3f, max_running_requests=%d, "
          "chunked_prefill_size=%d, cuda_graph_max_bs=%d, context_length=%d, stream_interval=%d, "
          "speculative_algorithm=%s, speculative_num_steps=%d, speculative_eagle_topk=%d, "
          "speculative_num_draft_tokens=%d, enable_dp_attention=%s)",
          cfg->model_path, srv->model_name, cfg->host, srv->port, p->tp, cfg->dp_size, p->ep,
          p->mem_fraction_static, p->max_running_requests, p->chunked_prefill_size,
          p->cuda_graph_max_bs, p->context_length, cfg->stream_interval,
          p->spec ? cfg->speculative_algorithm : "None", p->spec_steps, p->spec_topk,
          p->spec_draft_tokens, cfg->enable_dp_attention ? "True" : "False");
  for (size_t i = 0; i < cfg->n_unrecognized_args; i++)
    sim_log(srv, "WARNING: unrecognized argument '%s': accepted, not modelled by servetop sim",
            cfg->unrecognized_args[i]);
  sim_log(srv, "Simulated GPU: %s x%d, model preset %s (%s weights)", p->gpu->name, p->ranks,
          p->model->key, p->weight_dtype);
  sim_log(srv, "Load weight end. type=simulated, dtype=%s, avail mem=%.2f GB, mem usage=%.2f GB.",
          p->weight_dtype, (p->gpu->memory_bytes - p->weights_bytes_per_gpu) / 1073741824.0,
          p->weights_bytes_per_gpu / 1073741824.0);
  sim_log(srv, "KV Cache is allocated. #tokens: %ld, KV size: %.2f GB", p->max_total_num_tokens,
          p->kv_pool_bytes_per_gpu / 1073741824.0);
  sim_log(srv,
          "max_total_num_tokens=%ld, chunked_prefill_size=%d, max_prefill_tokens=%d, "
          "max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB",
          p->max_total_num_tokens, p->chunked_prefill_size, p->max_prefill_tokens,
          p->max_running_requests, p->context_length,
          (p->gpu->memory_bytes * (1 - p->mem_fraction_static) - p->cuda_graph_bytes_per_gpu) /
              1073741824.0);
}

int sim_main(const struct sim_config *cfg, struct st_err *err) {
  struct sim_server srv_storage;
  struct sim_server *srv = &srv_storage;
  memset(srv, 0, sizeof *srv);
  srv->cfg = cfg;
  srv->epfd = srv->listen_fd = srv->timer_fd = srv->signal_fd = -1;
  srv->fixed_mode = sim_config_fixed_mode(cfg);
  srv->time_scale = cfg->speed > 0 ? 1.0 / cfg->speed : 1.0;
  srv->rng = cfg->seed ? cfg->seed : 0x5eed5eed5eedull;
  srv->start_ns = sim_now_ns();
  srv->stats.last_decode_log_ns = srv->start_ns;
  sim_timer_init(&srv->warmup_timer, warmup_timer_fired);
  sim_engine_init(srv);
  int rc = -1;
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  struct sigaction dfl = {.sa_handler = SIG_DFL}, old_int, old_term;
  if (!cfg->in_process) {
    pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
    /* A shell starts background jobs with SIGINT ignored, and an ignored signal
     * never reaches the signalfd; blocked, the default action cannot fire. */
    sigaction(SIGINT, &dfl, &old_int);
    sigaction(SIGTERM, &dfl, &old_term);
  }

  /* embedders may skip the CLI: the loop relies on validated values */
  if (sim_config_validate(cfg, err) < 0 || sim_perf_init(&srv->perf, cfg, err) < 0)
    goto out;
  if (srv->fixed_mode) {
    /* exact wall-clock latencies: --sim-speed scales the model only */
    srv->fixed_ttft_ns = (int64_t)llround(cfg->fixed_ttft_ms * 1e6);
    srv->fixed_tpot_ns = (int64_t)llround(cfg->fixed_tpot_ms * 1e6);
  }
  srv->model_name = xstrdup(cfg->served_model_name ? cfg->served_model_name : cfg->model_path);
  struct sbuf esc = {0};
  sbuf_put_json_escaped(&esc, srv->model_name, strlen(srv->model_name));
  srv->model_name_json = sbuf_take(&esc);
  if (cfg->trace_path) {
    srv->trace = fopen(cfg->trace_path, "we");
    if (!srv->trace) {
      err_setf(err, "--sim-trace %s: %s", cfg->trace_path, strerror(errno));
      goto out;
    }
  }

  srv->use_pwait2 = true;
  /* token deadlines are exact to the microsecond: no 50 us timer slack */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  srv->epfd = epoll_create1(EPOLL_CLOEXEC);
  srv->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (!cfg->in_process)
    srv->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (srv->epfd < 0 || srv->timer_fd < 0 || (!cfg->in_process && srv->signal_fd < 0)) {
    err_setf(err, "event loop setup: %s", strerror(errno));
    goto out;
  }
  /* thousands of client connections: use the hard limit on descriptors */
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  if (listen_on(srv, err) < 0)
    goto out;
  log_startup(srv);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &srv->listen_fd};
  epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->listen_fd, &ev);
  ev.data.ptr = &srv->timer_fd;
  epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->timer_fd, &ev);
  if (srv->signal_fd >= 0) {
    ev.data.ptr = &srv->signal_fd;
    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->signal_fd, &ev);
  }
  srv->stop_fd = cfg->stop_fd;
  if (srv->stop_fd >= 0) {
    ev.data.ptr = &srv->stop_fd;
    if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->stop_fd, &ev) < 0) {
      err_setf(err, "stop_fd %d: %s", cfg->stop_fd, strerror(errno));
      goto out;
    }
  }

  if (write_port_file(srv, err) < 0)
    goto out;
  fprintf(stderr, "INFO:     Started server process [%d]\n", (int)getpid());
  fprintf(stderr, "INFO:     Waiting for application startup.\n");
  fprintf(stderr, "INFO:     Application startup complete.\n");
  fprintf(stderr, "INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)\n", cfg->host,
          srv->port);
  fflush(stderr);
  sim_timer_arm(&srv->timers, &srv->warmup_timer, srv->start_ns + (int64_t)(cfg->warmup_ms * 1e6));

  struct epoll_event events[MAX_EVENTS];
  while (!srv->stopping) {
    int n = wait_events(srv, events, MAX_EVENTS);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      err_setf(err, "epoll_wait: %s", strerror(errno));
      goto out;
    }
    for (int i = 0; i < n; i++) {
      void *tag = events[i].data.ptr;
      uint32_t e = events[i].events;
      if (tag == &srv->listen_fd) {
        accept_all(srv);
      } else if (tag == &srv->timer_fd) {
        uint64_t expirations;
        while (read(srv->timer_fd, &expirations, sizeof expirations) > 0)
          ;
        srv->timerfd_armed_ns = -1; /* force a re-arm */
      } else if (tag == &srv->stop_fd) {
        srv->stopping = true; /* the embedding program asked (left readable for it) */
      } else if (tag == &srv->signal_fd) {
        struct signalfd_siginfo si;
        while (read(srv->signal_fd, &si, sizeof si) > 0)
          srv->stopping = true;
      } else {
        struct sim_conn *conn = tag;
        if (conn->fd < 0)
          continue;
        if (e & EPOLLOUT) {
          if (!sim_conn_flush(srv, conn))
            continue;
          /* Fixed-mode streams refill the buffer once it drained. */
          if (srv->fixed_mode && conn->req && sim_conn_backlog(conn) == 0)
            sim_engine_pump(srv, conn->req);
          if (conn->fd < 0)
            continue;
        }
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
          conn_on_readable(srv, conn);
      }
    }
    run_due_timers(srv);
    free_dead_conns(srv);
  }
  if (srv->crashed) {
    err_setf(err, "simulated crash (--sim-fault crash-after=N)");
    goto out;
  }
  fprintf(stderr, "INFO:     Shutting down\n");
  rc = 0;
out:
  server_fini(srv);
  if (!cfg->in_process) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  }
  return rc;
}
