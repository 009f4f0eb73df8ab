/* The load generator's loops: one thread per worker, each an epoll loop that
 * drives its own CURLM through the multi-socket interface (the shape of curl's
 * docs/examples/ephiperfifo.c). Requests are claimed from one shared index so
 * N workers behave like the reference's single semaphore: at most
 * max_concurrency in flight in total, requests started in index order. */
#include "loadgen/loadgen.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "http/http.h"
#include "loadgen/loadgen_internal.h"

/* DISPATCH_BATCH: requests started per loop iteration. A burst of N starts is
 * cut into batches with a pass over ready sockets in between, so a request's
 * connect and send are not queued behind the starts of all the others (that
 * delay would land in its TTFT); the wait shows as send lag instead. */
enum {
  PUBLISH_INTERVAL_NS = 100 * 1000 * 1000,
  MAX_WORKERS = LG_MAX_WORKERS,
  DETAIL_MAX_BYTES = 1024,
  DISPATCH_BATCH = 4
};

/* epoll tags: sockets carry their fd, the loop's own fds a tag above any fd. */
enum fd_tag { TAG_SOCKET = 0, TAG_DISPATCH_TIMER, TAG_TICK, TAG_WAKE };

struct lg_worker;

/* One request in flight. */
struct xfer {
  CURL *easy;
  struct lg_worker *worker;
  size_t index;
  struct lg_record *rec;
  int64_t dispatch_abs_ns;
  int64_t last_token_abs_ns;
  int64_t now_ns;           /* timestamp of the line being parsed; never goes back */
  int64_t hand_ns;          /* when libcurl handed over the bytes being parsed */
  int64_t ready_ns;         /* epoll return that reported its socket ready; 0: none or used */
  curl_socket_t connecting; /* socket libcurl waits on to finish connecting; -1: none */
  uint32_t gaps_cap;
  uint32_t n_token_chunks;
  /* Live window: this request's token chunks that carry a token, per
   * second of the window (index second % LG_LIVE_WINDOW_S; -1 unused),
   * pending until it ends (live_settle). */
  int64_t live_second[LG_LIVE_WINDOW_S];
  uint32_t live_chunks[LG_LIVE_WINDOW_S];
  uint32_t live_chunks_total;  /* over the whole request */
  /* Continuous usage (stream_options.continuous_usage_stats: SGLang, vLLM,
   * the sim): every content chunk carries the cumulative completion_tokens.
   * Such a request's live_chunks count tokens, credited as they arrive
   * (settled at once), not chunks pending an estimate. */
  uint32_t live_carrying;      /* token-carrying chunks (tokens per chunk) */
  int64_t usage_tokens;        /* latest cumulative count on a content chunk; -1: none */
  bool by_usage;               /* this stream carries continuous usage */
  bool status_checked;
  bool parse_failed;
  bool usage_impossible;      /* the last usage's completion_tokens was no count (-2) */
  struct lg_sse sse;
  struct sbuf detail;       /* error body / stream error / generated text */
  char errbuf[CURL_ERROR_SIZE];
  struct xfer *next_free;
};

/* Live latencies, one histogram per metric. */
/* LAT_TPC: a completed request's tokens per chunk (the result's: output tokens /
 * its chunks), x 1000 so the µs histogram keeps its fraction. */
/* LAT_RECV_LAG: the sampled receive lag (lg_client_bound in loadgen.h). */
enum { LAT_TTFT, LAT_TPOT, LAT_ITL, LAT_E2EL, LAT_SEND_LAG, LAT_TPC, LAT_RECV_LAG, LAT_N };
struct live_lat {
  struct live_hist h[LAT_N];
};

/* A one-second slot of live figures. */
struct live_second {
  int64_t second;           /* since start; -1: unused */
  int64_t completed;
  double settled;           /* output tokens of ended requests by chunk arrival (lg_live) */
  int64_t pending;          /* token-carrying chunks of requests still streaming */
  int64_t busy_ns;          /* the loop's time outside epoll_wait in passes that ended here */
  int64_t cpu_ns;           /* the loop thread's CPU time counted at publishes in this second */
  struct live_lat lat;
};

/* Per-request acceptance sums (llama.cpp timings). */
struct live_accept {
  int64_t requests, draft_tokens, accepted_tokens;
  double rate_sum;
  int64_t bins[LG_ACCEPT_BINS];
};

/* A worker's running sums (loop thread only), published as one copy. */
struct worker_tally {
  int64_t dispatched, completed, failed, output_tokens, input_tokens;
  struct live_lat window;    /* sum of the live slots' latencies */
  struct live_lat point;     /* every completed request of the run */
  double point_settled;      /* tokens of the completed requests */
  int64_t point_pending;     /* chunks of the requests streaming now */
  double ratio_tokens;       /* completed requests: tokens / their token-carrying chunks */
  int64_t ratio_chunks;
  struct live_accept accept;
};

/* The request counts of c added to sum. */
static void worker_tally_add_counts(struct worker_tally *sum, const struct worker_tally *c) {
  sum->dispatched += c->dispatched;
  sum->completed += c->completed;
  sum->failed += c->failed;
  sum->output_tokens += c->output_tokens;
  sum->input_tokens += c->input_tokens;
}

/* What a worker publishes under its mutex every 100 ms. */
struct worker_published {
  struct worker_tally tally;
  int64_t in_flight;
  int64_t window_completed;
  double window_settled, window_s;
  int64_t window_pending;
  int64_t window_from_s;
  double busy_window, busy_point; /* the loop's busy share over the window / the point */
  double cpu_window, cpu_point;   /* its thread's CPU time / wall time, the same spans */
  bool finished;
};

struct lg_worker {
  struct lg_run *run;
  int id;
  pthread_t thread;
  bool thread_started;
  int epfd, dispatch_timer_fd, tick_fd, wake_fd;
  CURLM *multi;
  int64_t curl_deadline_ns;  /* libcurl's timeout (CURLMOPT_TIMERFUNCTION); -1: none */
  struct xfer **by_fd;       /* the transfer on each socket libcurl watches */
  size_t by_fd_cap;
  int in_flight;
  atomic_int max_in_flight;  /* this worker's share of max_concurrency; INT32_MAX: unlimited */
  int64_t slot_free_ns;      /* when the last slot was freed (closed-loop schedule) */
  bool stopping;
  int64_t drain_deadline_ns;
  struct xfer *free_xfers;
  struct xfer **active;      /* in-flight xfers, for cutting them at stop */
  size_t n_active, active_cap;
  struct worker_tally tally;
  uint64_t events, body_bytes;
  int64_t batch_start_ns;    /* when epoll_wait returned the events being handled */
  struct live_hist callback_delay; /* batch start -> write callback, µs */
  struct live_second live[LG_LIVE_WINDOW_S];
  /* client health: time outside epoll_wait, receive lag samples (µs) */
  int64_t busy_ns;
  int64_t cpu_ns;            /* thread CPU time at the last publish */
  int64_t end_ns;            /* when the loop exited */
  uint32_t *recv_lag_us;
  size_t n_recv_lag, recv_lag_cap;
  uint32_t readable_events;  /* readiness events seen: every LG_RECV_LAG_SAMPLE_EVERY-th is sampled */
  pthread_mutex_t pub_mu;
  struct worker_published pub;
};

struct lg_run {
  struct lg_config cfg;
  struct lg_record *records;
  int64_t *arrival_ns;       /* NULL when rate is infinite */
  atomic_size_t next_index;  /* next request to claim */
  atomic_bool stop;
  atomic_int max_concurrency;
  atomic_int workers_running;
  atomic_llong end_ns;       /* latest completion */
  int64_t start_ns;
  double start_unix_s;
  struct curl_slist *headers;
  int n_workers;
  struct lg_worker *workers;
  pthread_mutex_t done_mu;
  pthread_cond_t done_cv;
};

/* ---------------------------------------------------------------- small helpers */
static void timerfd_arm_ns(int fd, int64_t delay_ns) {
  struct itimerspec its = {0};
  if (delay_ns >= 0) {
    if (delay_ns == 0)
      delay_ns = 1; /* 0 would disarm */
    its.it_value.tv_sec = delay_ns / 1000000000;
    its.it_value.tv_nsec = delay_ns % 1000000000;
  }
  timerfd_settime(fd, 0, &its, NULL);
}

static void drain_fd(int fd) {
  uint64_t v;
  ssize_t n = read(fd, &v, sizeof(v));
  (void)n;
}

static int epoll_add_tagged(int epfd, int fd, enum fd_tag tag) {
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ((uint64_t)tag << 32) | (uint32_t)fd};
  return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

const char *lg_failure_name(enum lg_failure f) {
  switch (f) {
  case LG_OK: return "ok";
  case LG_FAIL_HTTP: return "http_error";
  case LG_FAIL_CONNECT: return "connect_error";
  case LG_FAIL_TIMEOUT: return "timeout";
  case LG_FAIL_TRANSFER: return "transfer_error";
  case LG_FAIL_MALFORMED: return "malformed_sse";
  case LG_FAIL_NO_CHUNK: return "no_token_chunk";
  case LG_FAIL_STREAM_ERROR: return "stream_error";
  case LG_FAIL_NO_FINISH: return "no_finish_reason";
  case LG_FAIL_NO_USAGE: return "no_usage";
  case LG_FAIL_USAGE_NO_COUNT: return "usage_without_count";
  case LG_FAIL_INTERRUPTED: return "interrupted";
  case LG_FAIL_NOT_SENT: return "not_sent";
  case LG_FAIL_N_KINDS: break;
  }
  return "unknown";
}

void lg_config_init(struct lg_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->api = LG_API_COMPLETIONS;
  cfg->request_rate = (double)INFINITY;
  cfg->burstiness = 1.0;
  cfg->num_workers = LG_NUM_WORKERS_AUTO;
  cfg->request_timeout_s = 6 * 60 * 60;
  cfg->drain_timeout_s = 5.0;
}

/* ---------------------------------------------------------------- how many loops, client health */
int lg_usable_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n < INT32_MAX ? n : INT32_MAX) : 1;
}

int lg_auto_workers(long streams, int cpus) {
  long loops = streams > 0 ? (streams + LG_STREAMS_PER_LOOP - 1) / LG_STREAMS_PER_LOOP : 1;
  if (loops > cpus)
    loops = cpus;
  if (loops > LG_MAX_WORKERS)
    loops = LG_MAX_WORKERS;
  return loops < 1 ? 1 : (int)loops;
}

int lg_parse_num_workers(const char *text) {
  if (!text)
    return -1;
  if (strcmp(text, "auto") == 0)
    return LG_NUM_WORKERS_AUTO;
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < 1 || v > LG_MAX_WORKERS)
    return -1;
  return (int)v;
}

bool lg_client_bound(const struct fig_set *figs, const double *loop_busy, const double *loop_cpu,
                     int n_loops, char *why, size_t why_len) {
  int busiest = -1;
  for (int i = 0; i < n_loops; i++)
    if (busiest < 0 || loop_busy[i] > loop_busy[busiest])
      busiest = i;
  double recv_p99 = fig_get(figs, FIG_RECV_LAG, FIG_STAT_P99);
  double send_p50 = fig_get(figs, FIG_SEND_LAG, FIG_STAT_P50);
  char loop[128] = "";
  /* A loop whose thread ran for less than half of its busy time was preempted inside its
   * passes, and lags with idle loops mean their threads waited for a CPU after waking:
   * other processes have the client's cores. */
  if (busiest >= 0) {
    double cpu = loop_cpu ? loop_cpu[busiest] : -1;
    bool preempted = cpu >= 0 && cpu < 0.5 * loop_busy[busiest];
    int n = snprintf(loop, sizeof loop, "loop %d of %d busy %.0f%%", busiest + 1, n_loops,
                     loop_busy[busiest] * 100.0);
    if (preempted && n > 0 && (size_t)n < sizeof loop)
      snprintf(loop + n, sizeof loop - (size_t)n, ", on a CPU %.0f%%: waiting for a CPU (a busy machine)",
               cpu * 100.0);
    else if (loop_busy[busiest] < 0.5 && n > 0 && (size_t)n < sizeof loop)
      snprintf(loop + n, sizeof loop - (size_t)n, " (waiting for a CPU: a busy machine?)");
  }
  if (busiest >= 0 && loop_busy[busiest] >= LG_CLIENT_BOUND_BUSY_FRAC)
    snprintf(why, why_len, "client-bound: %s (limit %.0f%%)", loop,
             LG_CLIENT_BOUND_BUSY_FRAC * 100.0);
  else if (recv_p99 > LG_CLIENT_BOUND_RECV_LAG_P99_MS && /* NaN: not measured, no verdict */
           figs->f[FIG_RECV_LAG].n >= LG_CLIENT_BOUND_RECV_LAG_MIN_N)
    snprintf(why, why_len, "client-bound: receive lag p99 %.2f ms (limit %.1f ms); %s", recv_p99,
             LG_CLIENT_BOUND_RECV_LAG_P99_MS, loop);
  else if (send_p50 > LG_CLIENT_BOUND_SEND_LAG_P50_MS)
    snprintf(why, why_len, "client-bound: send lag p50 %.1f ms (limit %.0f ms); %s", send_p50,
             LG_CLIENT_BOUND_SEND_LAG_P50_MS, loop);
  else {
    if (why_len > 0)
      why[0] = '\0';
    return false;
  }
  return true;
}

/* ---------------------------------------------------------------- live figures (loop side)
 * One slot per second of the last LG_LIVE_WINDOW_S, plus the running sum of
 * their latency histograms (w->tally.window): a sample is added to both, an
 * expiring slot is subtracted, so publishing is one copy instead of a merge
 * of every slot. Token counts follow the chunks (see lg_live in loadgen.h). */
static void hist_subtract(struct live_hist *from, const struct live_hist *h) {
  for (unsigned o = 0; o < LIVE_HIST_OCTAVES; o++)
    for (unsigned k = 0; k < LIVE_HIST_SUB_BUCKETS; k++)
      from->counts[o][k] -= h->counts[o][k];
  from->total -= h->total; /* max_us stays: it only caps percentiles */
}

static void live_slot_expire(struct lg_worker *w, struct live_second *slot) {
  if (slot->second < 0)
    return;
  for (int m = 0; m < LAT_N; m++) {
    hist_subtract(&w->tally.window.h[m], &slot->lat.h[m]);
    live_hist_reset(&slot->lat.h[m]);
  }
  slot->second = -1;
  slot->completed = 0;
  slot->settled = 0;
  slot->pending = 0;
  slot->busy_ns = 0;
  slot->cpu_ns = 0;
}

static int64_t live_second_of(const struct lg_worker *w, int64_t t_ns) {
  int64_t second = (t_ns - w->run->start_ns) / 1000000000;
  return second < 0 ? 0 : second;
}

/* The slot of the second t_ns falls in (a stale one is recycled). */
static struct live_second *live_slot_at(struct lg_worker *w, int64_t t_ns) {
  int64_t second = live_second_of(w, t_ns);
  struct live_second *slot = &w->live[second % LG_LIVE_WINDOW_S];
  if (slot->second != second) {
    live_slot_expire(w, slot);
    slot->second = second;
  }
  return slot;
}

/* A token chunk arrived; `carries` is false for a finish-only chunk without
 * text (llama.cpp's last one). It is pending until the request ends. */
static void live_chunk(struct xfer *x, bool carries) {
  if (!carries)
    return;
  x->live_carrying++;
  uint32_t units = 1;
  if (x->by_usage) { /* the server's own count: the tokens this chunk added */
    int64_t delta = x->usage_tokens - (int64_t)x->live_chunks_total;
    if (delta <= 0)
      return;
    units = delta > UINT32_MAX - x->live_chunks_total ? 0 : (uint32_t)delta;
  }
  struct live_second *slot = live_slot_at(x->worker, x->now_ns);
  int i = (int)(slot->second % LG_LIVE_WINDOW_S);
  if (x->live_second[i] != slot->second) {
    x->live_second[i] = slot->second;
    x->live_chunks[i] = 0;
  }
  x->live_chunks[i] += units;
  x->live_chunks_total += units;
  if (x->by_usage) {
    slot->settled += units;
    x->worker->tally.point_settled += units;
  } else {
    slot->pending += units;
    x->worker->tally.point_pending += units;
  }
}

/* The request ended: its output tokens (0 for a failure) are spread evenly
 * over its token-carrying chunks by the result's own rule (fig_spread_by_second,
 * the time_series' fig_spread_tokens by second), into the seconds still in
 * the window. A continuous-usage request's tokens were credited as they came:
 * they are replaced by the same spread over them (a no-op when the final
 * count is the streamed one; 0 for a failure, as the result counts it). */
static void live_settle(struct lg_worker *w, struct xfer *x, int64_t output_tokens) {
  int order[LG_LIVE_WINDOW_S] = {0}; /* the request's tracked seconds, oldest first */
  uint32_t chunks[LG_LIVE_WINDOW_S] = {0};
  int64_t tokens[LG_LIVE_WINDOW_S] = {0};
  size_t n = 0;
  for (int i = 0; i < LG_LIVE_WINDOW_S; i++) {
    if (x->live_second[i] < 0)
      continue;
    size_t k = n++;
    while (k > 0 && x->live_second[order[k - 1]] > x->live_second[i]) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = i;
  }
  for (size_t k = 0; k < n; k++)
    chunks[k] = x->live_chunks[order[k]];
  fig_spread_by_second(output_tokens, x->live_chunks_total, chunks, n, tokens);
  for (size_t k = 0; k < n; k++) {
    int i = order[k];
    if (w->live[i].second == x->live_second[i]) {
      if (x->by_usage)
        w->live[i].settled -= x->live_chunks[i];
      else
        w->live[i].pending -= x->live_chunks[i];
      w->live[i].settled += (double)tokens[k];
    }
    x->live_second[i] = -1;
  }
  if (x->by_usage)
    w->tally.point_settled -= x->live_chunks_total;
  else
    w->tally.point_pending -= x->live_chunks_total;
  w->tally.point_settled += (double)output_tokens;
  if (output_tokens > 0 && x->live_carrying > 0) {
    w->tally.ratio_tokens += (double)output_tokens;
    w->tally.ratio_chunks += x->live_carrying;
  }
  x->live_chunks_total = 0;
  x->live_carrying = 0;
}

static void live_record_us(struct lg_worker *w, struct live_second *slot, int metric,
                           uint64_t v_us) {
  live_hist_record_us(&slot->lat.h[metric], v_us);
  live_hist_record_us(&w->tally.window.h[metric], v_us);
  live_hist_record_us(&w->tally.point.h[metric], v_us);
}

static void live_record_completion(struct lg_worker *w, const struct lg_record *rec,
                                   int64_t now_ns) {
  struct live_second *slot = live_slot_at(w, now_ns);
  slot->completed++;
  live_record_us(w, slot, LAT_TTFT, (uint64_t)(rec->ttft_ns / 1000));
  live_record_us(w, slot, LAT_E2EL, (uint64_t)(rec->e2el_ns / 1000));
  if (rec->output_tokens > 1)
    live_record_us(w, slot, LAT_TPOT,
                   (uint64_t)((rec->e2el_ns - rec->ttft_ns) / 1000 / (rec->output_tokens - 1)));
  for (uint32_t i = 0; i < rec->n_chunk_gaps; i++)
    live_record_us(w, slot, LAT_ITL, rec->chunk_gaps_us[i]);
  live_record_us(w, slot, LAT_TPC,
                 (uint64_t)llround(1000.0 * rec->output_tokens / (rec->n_chunk_gaps + 1.0)));
  if (rec->draft_tokens > 0 && rec->draft_accepted >= 0) { /* as results_compute */
    struct live_accept *a = &w->tally.accept;
    double rate = (double)rec->draft_accepted / (double)rec->draft_tokens;
    a->requests++;
    a->draft_tokens += rec->draft_tokens;
    a->accepted_tokens += rec->draft_accepted;
    a->rate_sum += rate;
    int bin = (int)(rate * LG_ACCEPT_BINS);
    a->bins[bin < 0 ? 0 : bin >= LG_ACCEPT_BINS ? LG_ACCEPT_BINS - 1 : bin]++;
  }
}

static void publish(struct lg_worker *w, int64_t now_ns, bool finished) {
  int64_t now_second = live_second_of(w, now_ns);
  int64_t first = now_second - (LG_LIVE_WINDOW_S - 1); /* oldest second of the window */
  if (first < 0)
    first = 0;
  /* the thread's CPU time since the last publish, into this second: with the busy share
   * it tells a loop that works from one whose thread waits for a CPU */
  struct timespec cpu;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
    int64_t cpu_ns = (int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec;
    live_slot_at(w, now_ns)->cpu_ns += cpu_ns - w->cpu_ns;
    w->cpu_ns = cpu_ns;
  }
  int64_t window_completed = 0, window_pending = 0, window_busy_ns = 0, window_cpu_ns = 0;
  double window_settled = 0;
  for (int i = 0; i < LG_LIVE_WINDOW_S; i++) {
    struct live_second *slot = &w->live[i];
    if (slot->second >= 0 && slot->second < first) {
      live_slot_expire(w, slot);
    } else if (slot->second >= 0) {
      window_completed += slot->completed;
      window_settled += slot->settled;
      window_pending += slot->pending;
      window_busy_ns += slot->busy_ns;
      window_cpu_ns += slot->cpu_ns;
    }
  }
  double window_s = (double)(now_ns - w->run->start_ns) / 1e9 - (double)first;
  double point_s = (double)(now_ns - w->run->start_ns) / 1e9;
  struct worker_published *p = &w->pub;
  pthread_mutex_lock(&w->pub_mu);
  p->tally = w->tally;
  p->in_flight = w->in_flight;
  p->window_completed = window_completed;
  p->window_settled = window_settled;
  p->window_pending = window_pending;
  p->window_s = window_s > 0 ? window_s : 0;
  p->window_from_s = first;
  /* a pass counts in the second it ended: a share may pass 1 by a pass */
  p->busy_window = window_s > 0 ? fmin(1.0, (double)window_busy_ns / 1e9 / window_s) : 0;
  p->busy_point = point_s > 0 ? fmin(1.0, (double)w->busy_ns / 1e9 / point_s) : 0;
  p->cpu_window = window_s > 0 ? fmin(1.0, (double)window_cpu_ns / 1e9 / window_s) : 0;
  p->cpu_point = point_s > 0 ? fmin(1.0, (double)w->cpu_ns / 1e9 / point_s) : 0;
  p->finished = finished;
  pthread_mutex_unlock(&w->pub_mu);
}

/* ---------------------------------------------------------------- per-request parsing */
static void record_detail(struct xfer *x, const char *text, size_t len) {
  if (x->detail.len >= DETAIL_MAX_BYTES)
    return;
  size_t room = DETAIL_MAX_BYTES - x->detail.len;
  sbuf_append(&x->detail, text, len < room ? len : room);
}

static int on_sse_line(void *ctx, const char *payload, size_t len) {
  struct xfer *x = ctx;
  struct lg_record *rec = x->rec;
  struct lg_chunk chunk;
  x->worker->events++;
  enum lg_chunk_kind kind = lg_chunk_scan(payload, len, &chunk);
  if (kind == LG_CHUNK_MALFORMED) {
    x->parse_failed = true;
    sbuf_reset(&x->detail);
    record_detail(x, "malformed SSE line: ", 20);
    record_detail(x, payload, len < 200 ? len : 200);
    return -1;
  }
  if (kind == LG_CHUNK_DONE)
    return 0;
  /* Continuous usage: a content chunk that does not end the stream carries
   * the count so far (llama.cpp's usage comes only on its finishing chunk).
   * Such counts feed the live figures only: the result's count is, as the
   * reference's, the last usage object outside them. */
  if (kind == LG_CHUNK_CHOICES && chunk.has_usage && chunk.completion_tokens >= 0 &&
      !chunk.has_finish_reason)
    x->by_usage = true;
  if (x->by_usage && kind == LG_CHUNK_CHOICES && chunk.has_usage) {
    if (chunk.completion_tokens > x->usage_tokens)
      x->usage_tokens = chunk.completion_tokens;
  } else if (chunk.has_usage) {
    /* The last usage object decides: a count, or a usage without one. */
    if (chunk.completion_tokens >= 0 && chunk.completion_tokens <= INT32_MAX) {
      rec->output_tokens = (int32_t)chunk.completion_tokens;
      rec->flags = (uint8_t)((rec->flags | LG_REC_USAGE_SEEN) & ~LG_REC_USAGE_NO_COUNT);
    } else {
      rec->flags = (uint8_t)((rec->flags | LG_REC_USAGE_NO_COUNT) & ~LG_REC_USAGE_SEEN);
    }
    x->usage_impossible = chunk.completion_tokens == -2 ||
                          (chunk.completion_tokens > INT32_MAX);
    if (chunk.prompt_tokens >= 0 && chunk.prompt_tokens <= INT32_MAX)
      rec->server_prompt_tokens = (int32_t)chunk.prompt_tokens;
  }
  if (chunk.has_timings) { /* llama.cpp: only its final chunk has them */
    if (chunk.draft_n >= 0 && chunk.draft_n <= INT32_MAX)
      rec->draft_tokens = (int32_t)chunk.draft_n;
    if (chunk.draft_n_accepted >= 0 && chunk.draft_n_accepted <= INT32_MAX)
      rec->draft_accepted = (int32_t)chunk.draft_n_accepted;
  }
  if (chunk.has_error) {
    /* The first error event's own words are the failure's detail. */
    if (!(rec->flags & LG_REC_STREAM_ERROR)) {
      sbuf_reset(&x->detail);
      static const char what[] = "server error event after HTTP 200: ";
      record_detail(x, what, sizeof what - 1);
      if (chunk.error_text)
        record_detail(x, chunk.error_text, chunk.error_text_len);
    }
    rec->flags |= LG_REC_STREAM_ERROR;
  }
  if (chunk.has_finish_reason)
    rec->flags |= LG_REC_FINISH_SEEN;
  /* Token chunk: completions count every chunk with choices (text may be
   * empty for special tokens), as the reference; chat counts chunks that
   * carry generated text, so the role-only chunk and the finish chunk are
   * not tokens (docs/bench.md). */
  bool token_chunk = kind == LG_CHUNK_CHOICES &&
                     (x->worker->run->cfg.api == LG_API_COMPLETIONS || chunk.has_text);
  if (!token_chunk)
    return 0;
  if (x->n_token_chunks == 0) {
    rec->ttft_ns = x->now_ns - x->dispatch_abs_ns;
  } else {
    if (rec->n_chunk_gaps == x->gaps_cap) {
      x->gaps_cap = x->gaps_cap ? x->gaps_cap * 2 : 64;
      rec->chunk_gaps_us = xreallocarray(rec->chunk_gaps_us, x->gaps_cap, sizeof(uint32_t));
    }
    int64_t gap_us = (x->now_ns - x->last_token_abs_ns + 500) / 1000;
    rec->chunk_gaps_us[rec->n_chunk_gaps++] = gap_us > UINT32_MAX ? UINT32_MAX : (uint32_t)gap_us;
  }
  x->n_token_chunks++;
  rec->token_chunks = x->n_token_chunks;
  bool carries = !(chunk.has_finish_reason && !chunk.has_text);
  rec->flags = (uint8_t)(carries ? rec->flags & ~LG_REC_LAST_CHUNK_NO_TOKEN
                                 : rec->flags | LG_REC_LAST_CHUNK_NO_TOKEN);
  live_chunk(x, carries);
  x->last_token_abs_ns = x->now_ns;
  if (x->worker->run->cfg.keep_text && chunk.text && !(rec->flags & LG_REC_STREAM_ERROR))
    lg_json_unescape_append(&x->detail, chunk.text, chunk.text_len);
  return 0;
}

/* lg_sse_feed's line callback: the line, then the stamp of the next one (on_body). */
static int on_sse_line_stamped(void *ctx, const char *payload, size_t len) {
  struct xfer *x = ctx;
  int rc = on_sse_line(x, payload, len);
  if (x->hand_ns > x->now_ns)
    x->now_ns = x->hand_ns;
  return rc;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp) {
  struct xfer *x = userp;
  size_t len = size * nmemb;
  int64_t now_ns = clock_mono_ns();
  /* Epoll reported this socket ready: its oldest unread bytes, the first
   * that libcurl hands over after that, were there when epoll_wait returned.
   * The first line they complete gets that moment, so the time the loop
   * spent on other sockets before this one is not added to it. Whatever
   * follows in the same read (more events, the next HTTP chunks) may have
   * arrived while the loop was busy: it gets the moment libcurl hands it
   * over (on_sse_line_stamped), later but never before the bytes came. A
   * stamp never goes back: libcurl may have read this transfer earlier in
   * the pass, from another socket's action, after the epoll return. */
  if (x->ready_ns && x->hand_ns >= x->ready_ns)
    x->ready_ns = 0; /* read since the epoll return: those bytes are gone */
  x->hand_ns = now_ns;
  int64_t stamp = x->ready_ns ? x->ready_ns : now_ns;
  x->ready_ns = 0;
  if (stamp > x->now_ns)
    x->now_ns = stamp;
  x->worker->body_bytes += len;
  /* How long after the epoll return the loop got to these bytes. */
  live_hist_record_us(&x->worker->callback_delay,
                      (uint64_t)(now_ns - x->worker->batch_start_ns) / 1000);
  if (!x->status_checked) {
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    x->rec->http_status = (uint16_t)(status > 0 && status < 65536 ? status : 0);
    x->status_checked = true;
  }
  if (x->rec->http_status != 200) {
    record_detail(x, data, len);
    return len;
  }
  if (lg_sse_feed(&x->sse, data, len, on_sse_line_stamped, x) != 0) {
    if (!x->parse_failed) {
      x->parse_failed = true;
      sbuf_reset(&x->detail);
      sbuf_puts(&x->detail, "SSE line too long");
    }
    return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
  }
  return len;
}

/* Header lines come before the body in the byte stream: when libcurl hands
 * one over after an epoll return, the oldest bytes of that return were the
 * headers, not the body that follows them in the same read (a server that
 * sends its headers at once and the first token later: both may be read
 * together when the loop got to the socket late). The body then gets the
 * moment libcurl hands it over, never the earlier epoll return. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *userp) {
  struct xfer *x = userp;
  (void)data;
  x->hand_ns = clock_mono_ns();
  return size * nmemb;
}

/* ---------------------------------------------------------------- receive lag
 * Every socket asks the kernel for receive timestamps (SO_TIMESTAMPNS); on a
 * sampled readiness event the loop peeks one byte with its timestamp before
 * libcurl reads, and records how much later the stamp its bytes get (the
 * epoll_wait return) is than the kernel's receive time. */
static int on_curl_sockopt(void *userp, curl_socket_t fd, curlsocktype purpose) {
  (void)userp;
  (void)purpose;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)); /* no stamps: no samples */
  return CURL_SOCKOPT_OK;
}

static void sample_recv_lag(struct lg_worker *w, int fd) {
  char byte;
  union {
    char buf[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof(ctl.buf)};
  if (recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT) <= 0)
    return;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
      continue;
    struct timespec ts, real, mono;
    memcpy(&ts, CMSG_DATA(c), sizeof(ts));
    if (ts.tv_sec == 0 && ts.tv_nsec == 0)
      return;
    clock_gettime(CLOCK_REALTIME, &real); /* the kernel stamps in CLOCK_REALTIME */
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t real_minus_mono = ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000 +
                              (real.tv_nsec - mono.tv_nsec);
    int64_t arrived_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - real_minus_mono;
    int64_t lag_ns = w->batch_start_ns - arrived_ns;
    uint32_t lag_us = lag_ns <= 0 ? 0 : lag_ns / 1000 > UINT32_MAX ? UINT32_MAX
                                                                   : (uint32_t)(lag_ns / 1000);
    if (w->n_recv_lag == w->recv_lag_cap) {
      w->recv_lag_cap = w->recv_lag_cap ? w->recv_lag_cap * 2 : 1024;
      w->recv_lag_us = xreallocarray(w->recv_lag_us, w->recv_lag_cap, sizeof(uint32_t));
    }
    w->recv_lag_us[w->n_recv_lag++] = lag_us;
    live_record_us(w, live_slot_at(w, w->batch_start_ns), LAT_RECV_LAG, lag_us);
    return;
  }
}

/* ---------------------------------------------------------------- request lifecycle */
/* A transfer's easy handle keeps its options between requests: the ones that
 * are the same for every request of the run are set once, here. */
static struct xfer *xfer_get(struct lg_worker *w) {
  struct xfer *x = w->free_xfers;
  if (x) {
    w->free_xfers = x->next_free;
    return x;
  }
  const struct lg_run *run = w->run;
  x = xcalloc(1, sizeof(*x));
  x->easy = curl_easy_init();
  if (!x->easy)
    util_die_oom(0);
  x->worker = w;
  lg_sse_init(&x->sse);
  CURL *e = x->easy;
  curl_easy_setopt(e, CURLOPT_URL, run->cfg.url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, run->headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  /* as the reference's aiohttp session: asks for and decodes gzip/deflate, so
   * a compressed body (asked for or not) is read as the text it holds */
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(run->cfg.request_timeout_s * 1000.0));
  long fresh = run->cfg.reuse_connections ? 0L : 1L;
  curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, fresh);
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, fresh);
  http_apply_proxy(e); /* servetop's one proxy policy: none unless --proxy */
  curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_curl_sockopt);
  return x;
}

static void xfer_put(struct lg_worker *w, struct xfer *x) {
  x->ready_ns = 0;
  sbuf_reset(&x->detail);
  sbuf_reset(&x->sse.partial);
  x->next_free = w->free_xfers;
  w->free_xfers = x;
}

static void active_add(struct lg_worker *w, struct xfer *x) {
  if (w->n_active == w->active_cap) {
    w->active_cap = w->active_cap ? w->active_cap * 2 : 64;
    w->active = xreallocarray(w->active, w->active_cap, sizeof(*w->active));
  }
  w->active[w->n_active++] = x;
}

static void active_remove(struct lg_worker *w, struct xfer *x) {
  for (size_t i = 0; i < w->n_active; i++) {
    if (w->active[i] == x) {
      w->active[i] = w->active[--w->n_active];
      return;
    }
  }
}

static void start_request(struct lg_worker *w, size_t index, int64_t scheduled_abs_ns) {
  struct lg_run *run = w->run;
  const struct lg_prompt *prompt = &run->cfg.prompts[index];
  struct xfer *x = xfer_get(w);
  struct lg_record *rec = &run->records[index];
  x->index = index;
  x->rec = rec;
  x->gaps_cap = 0;
  x->n_token_chunks = 0;
  for (int i = 0; i < LG_LIVE_WINDOW_S; i++)
    x->live_second[i] = -1;
  x->live_chunks_total = 0;
  x->live_carrying = 0;
  x->usage_tokens = -1;
  x->by_usage = false;
  x->status_checked = false;
  x->parse_failed = false;
  x->usage_impossible = false;
  x->errbuf[0] = '\0';
  rec->prompt_len = prompt->prompt_len;
  rec->server_prompt_tokens = -1;
  rec->draft_tokens = rec->draft_accepted = -1;
  rec->failure = LG_FAIL_INTERRUPTED; /* until it finishes */
  /* Most streams send one chunk per token: size the gap array for that once. */
  if (prompt->output_len > 1) {
    x->gaps_cap = prompt->output_len - 1;
    rec->chunk_gaps_us = xreallocarray(NULL, x->gaps_cap, sizeof(uint32_t));
  }

  CURL *e = x->easy;
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, prompt->body);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)prompt->body_len);

  int64_t now = clock_mono_ns();
  rec->scheduled_ns = scheduled_abs_ns - run->start_ns;
  rec->dispatch_ns = now - run->start_ns;
  x->dispatch_abs_ns = now;
  x->now_ns = x->hand_ns = now; /* no stamp of this request before it */
  w->in_flight++;
  w->tally.dispatched++;
  active_add(w, x);
  x->connecting = CURL_SOCKET_BAD;
  curl_multi_add_handle(w->multi, e);
  /* Start connecting now rather than after the timer round trip. */
  int running;
  curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  /* A connect to a nearby server is done by now: let libcurl see it at once
   * and send the request in this pass, instead of after the next epoll_wait
   * (with a burst of starts that pass is inside this request's TTFT).
   * libcurl checks the socket itself and keeps waiting if it is not. */
  if (x->connecting != CURL_SOCKET_BAD)
    curl_multi_socket_action(w->multi, x->connecting, CURL_CSELECT_OUT, &running);
  /* send lag (scheduled -> handed to libcurl), live as the result's additions.send_lag;
   * counted once the request is on its way (the histograms are no work before it) */
  live_record_us(w, live_slot_at(w, now), LAT_SEND_LAG,
                 (uint64_t)(now > scheduled_abs_ns ? (now - scheduled_abs_ns) / 1000 : 0));
}

/* Why the request failed, or LG_OK. An error event the server sent is the
 * reason even when the connection broke after it; then the transport; then
 * what the stream lacked. */
static enum lg_failure classify(const struct xfer *x, CURLcode result) {
  const struct lg_record *rec = x->rec;
  if (rec->http_status == 200 && (rec->flags & LG_REC_STREAM_ERROR))
    return LG_FAIL_STREAM_ERROR;
  if (x->parse_failed)
    return LG_FAIL_MALFORMED;
  if (result == CURLE_OPERATION_TIMEDOUT)
    return LG_FAIL_TIMEOUT;
  if (result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST)
    return LG_FAIL_CONNECT;
  if (result != CURLE_OK)
    return rec->http_status != 0 && rec->http_status != 200 ? LG_FAIL_HTTP : LG_FAIL_TRANSFER;
  if (rec->http_status != 200)
    return LG_FAIL_HTTP;
  if (x->n_token_chunks == 0)
    return LG_FAIL_NO_CHUNK;
  if (!(rec->flags & LG_REC_FINISH_SEEN))
    return LG_FAIL_NO_FINISH;
  if (rec->flags & LG_REC_USAGE_NO_COUNT)
    return LG_FAIL_USAGE_NO_COUNT;
  if (!(rec->flags & LG_REC_USAGE_SEEN))
    return LG_FAIL_NO_USAGE;
  return LG_OK;
}

static void finish_request(struct lg_worker *w, struct xfer *x, CURLcode result, int64_t now_ns) {
  struct lg_record *rec = x->rec;
  if (!x->status_checked) { /* no body came (a 307 with none): the status still says what */
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    rec->http_status = (uint16_t)(status > 0 && status < 65536 ? status : 0);
    x->status_checked = true;
  }
  if (result == CURLE_OK && rec->http_status == 200 && !x->parse_failed)
    lg_sse_finish(&x->sse, on_sse_line, x);
  enum lg_failure failure = classify(x, result);
  rec->failure = (uint8_t)failure;
  live_settle(w, x, failure == LG_OK ? rec->output_tokens : 0);
  long os_errno = 0;
  if (failure == LG_FAIL_CONNECT && result == CURLE_COULDNT_CONNECT &&
      curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK &&
      os_errno == ECONNREFUSED)
    rec->flags |= LG_REC_REFUSED;
  curl_off_t connect_us = 0;
  if (curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_us) == CURLE_OK && connect_us > 0)
    rec->connect_us = connect_us > UINT32_MAX ? UINT32_MAX : (uint32_t)connect_us;
  if (failure == LG_OK) {
    rec->e2el_ns = x->last_token_abs_ns - x->dispatch_abs_ns;
  } else {
    /* The detail says why, in the reference's words where it has them. */
    struct sbuf why = {0};
    if (failure == LG_FAIL_HTTP && rec->http_status >= 300 && rec->http_status < 400)
      sbuf_printf(&why, "HTTP %u (a redirect; servetop does not follow redirects): ",
                  rec->http_status);
    else if (failure == LG_FAIL_HTTP)
      sbuf_printf(&why, "HTTP %u: ", rec->http_status);
    else if (failure == LG_FAIL_NO_CHUNK)
      sbuf_puts(&why, "Never received a valid chunk to calculate TTFT. This response will be "
                      "marked as failed! ");
    else if (failure == LG_FAIL_NO_FINISH)
      sbuf_puts(&why, "the stream ended without a finish_reason ");
    else if (failure == LG_FAIL_NO_USAGE)
      sbuf_puts(&why, "the stream ended without a usage chunk (no server token count) ");
    else if (failure == LG_FAIL_USAGE_NO_COUNT && x->usage_impossible)
      sbuf_puts(&why, "the usage chunk's completion_tokens is impossible (negative, not a whole "
                      "number, or too large to be a token count) ");
    else if (failure == LG_FAIL_USAGE_NO_COUNT)
      sbuf_puts(&why, "the usage chunk has no completion_tokens ");
    else if (failure != LG_FAIL_MALFORMED && failure != LG_FAIL_STREAM_ERROR)
      sbuf_printf(&why, "%s: %s ", lg_failure_name(failure),
                  x->errbuf[0] ? x->errbuf : curl_easy_strerror(result));
    if (x->detail.len > 0)
      sbuf_append(&why, x->detail.data, x->detail.len);
    sbuf_free(&x->detail);
    x->detail = why;
    rec->ttft_ns = 0;
    rec->e2el_ns = 0;
    rec->n_chunk_gaps = 0;
    rec->output_tokens = 0;
  }
  /* Keep exactly what was used: 4 bytes per chunk gap. */
  if (rec->n_chunk_gaps == 0) {
    free(rec->chunk_gaps_us);
    rec->chunk_gaps_us = NULL;
  } else if (rec->n_chunk_gaps < x->gaps_cap) {
    rec->chunk_gaps_us = xreallocarray(rec->chunk_gaps_us, rec->n_chunk_gaps, sizeof(uint32_t));
  }
  if (x->detail.len > 0 && (failure != LG_OK || w->run->cfg.keep_text))
    rec->detail = sbuf_take(&x->detail);

  w->in_flight--;
  if (failure == LG_OK) {
    w->tally.completed++;
    w->tally.output_tokens += rec->output_tokens;
    w->tally.input_tokens += rec->prompt_len; /* the client's count, as the result's total */
    live_record_completion(w, rec, now_ns);
  } else {
    w->tally.failed++;
  }
  long long prev = atomic_load(&w->run->end_ns);
  while (now_ns > prev && !atomic_compare_exchange_weak(&w->run->end_ns, &prev, now_ns))
    ;
  w->slot_free_ns = now_ns;
  active_remove(w, x);
  xfer_put(w, x);
}

/* Reaps every finished transfer (after each socket action). */
static void reap_done(struct lg_worker *w) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(w->multi, &left))) {
    if (msg->msg != CURLMSG_DONE)
      continue;
    CURL *e = msg->easy_handle;
    CURLcode result = msg->data.result;
    struct xfer *x = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
    curl_multi_remove_handle(w->multi, e);
    finish_request(w, x, result, clock_mono_ns());
  }
}

/* Claims the next request index this worker may start now, or SIZE_MAX. With a
 * finite rate *next_arrival_ns is set when the next one is not due yet. */
static size_t claim_next(struct lg_worker *w, int64_t now_ns, int64_t *next_arrival_ns) {
  struct lg_run *run = w->run;
  size_t idx = atomic_load(&run->next_index);
  for (;;) {
    if (idx >= run->cfg.n_prompts)
      return SIZE_MAX;
    if (run->arrival_ns) {
      int64_t due = run->start_ns + run->arrival_ns[idx];
      if (due > now_ns) {
        *next_arrival_ns = due;
        return SIZE_MAX;
      }
    }
    if (atomic_compare_exchange_weak(&run->next_index, &idx, idx + 1))
      return idx;
  }
}

static void dispatch_ready(struct lg_worker *w) {
  if (w->stopping)
    return;
  int64_t now = clock_mono_ns();
  int64_t next_arrival = -1;
  for (int started = 0;; started++) {
    int limit = atomic_load(&w->max_in_flight);
    if (w->in_flight >= limit)
      break;
    if (started == DISPATCH_BATCH) { /* more to start: come back after one pass */
      next_arrival = now;
      break;
    }
    size_t idx = claim_next(w, now, &next_arrival);
    if (idx == SIZE_MAX)
      break;
    /* The request could have gone at its arrival or when a slot freed,
     * whichever is later: the difference to now is client send lag. */
    int64_t scheduled = w->run->start_ns;
    if (w->run->arrival_ns)
      scheduled += w->run->arrival_ns[idx];
    if (w->slot_free_ns > scheduled && limit != INT32_MAX)
      scheduled = w->slot_free_ns;
    start_request(w, idx, scheduled);
  }
  if (next_arrival > 0)
    timerfd_arm_ns(w->dispatch_timer_fd, next_arrival > now ? next_arrival - now : 0);
  reap_done(w); /* a start can fail at once (connection refused) */
}

/* ---------------------------------------------------------------- curl callbacks */
/* Remembers which transfer a socket belongs to, so the loop can hand it the
 * moment epoll reported the socket ready. */
static void by_fd_set(struct lg_worker *w, curl_socket_t s, struct xfer *x) {
  if (s < 0)
    return;
  if ((size_t)s >= w->by_fd_cap) {
    if (!x)
      return;
    size_t cap = w->by_fd_cap ? w->by_fd_cap : 256;
    while (cap <= (size_t)s)
      cap *= 2;
    w->by_fd = xreallocarray(w->by_fd, cap, sizeof(*w->by_fd));
    memset(w->by_fd + w->by_fd_cap, 0, (cap - w->by_fd_cap) * sizeof(*w->by_fd));
    w->by_fd_cap = cap;
  }
  w->by_fd[s] = x;
}

/* CURLMOPT_SOCKETFUNCTION */
static int on_curl_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
  struct lg_worker *w = userp;
  struct epoll_event ev = {.data.u64 = (uint32_t)s};
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, s, NULL);
    curl_multi_assign(w->multi, s, NULL);
    by_fd_set(w, s, NULL);
    return 0;
  }
  struct xfer *x = NULL;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
  by_fd_set(w, s, x);
  if (x)
    x->connecting = what == CURL_POLL_OUT ? s : CURL_SOCKET_BAD;
  ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
  if (socketp) {
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, s, &ev);
  } else {
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s, &ev) != 0 && errno == EEXIST)
      epoll_ctl(w->epfd, EPOLL_CTL_MOD, s, &ev);
    curl_multi_assign(w->multi, s, w); /* any non-NULL marks "known" */
  }
  return 0;
}

/* CURLMOPT_TIMERFUNCTION: only records the deadline (-1: none; 0: act at the
 * end of this loop pass). The loop waits for it in epoll_wait, whose
 * millisecond timeout is libcurl's own resolution, so a changed timeout costs
 * no system call. */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  struct lg_worker *w = userp;
  (void)multi;
  w->curl_deadline_ns = timeout_ms < 0 ? -1 : clock_mono_ns() + (int64_t)timeout_ms * 1000000;
  return 0;
}

/* epoll_wait's timeout: until libcurl's deadline, rounded up to whole ms. */
static int curl_wait_ms(const struct lg_worker *w) {
  if (w->curl_deadline_ns < 0)
    return -1;
  int64_t left_ns = w->curl_deadline_ns - clock_mono_ns();
  if (left_ns <= 0)
    return 0;
  int64_t ms = (left_ns + 999999) / 1000000;
  return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Runs libcurl's timeout when it is due. */
static void curl_timeout_if_due(struct lg_worker *w) {
  if (w->curl_deadline_ns < 0 || clock_mono_ns() < w->curl_deadline_ns)
    return;
  w->curl_deadline_ns = -1; /* libcurl sets the next one from inside */
  int running;
  curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  reap_done(w);
}

/* ---------------------------------------------------------------- the loop */
/* Drain time is over: every request still in flight is cut and recorded as
 * interrupted (its partial timings are dropped, as for any failure). */
static void cut_in_flight(struct lg_worker *w) {
  while (w->n_active > 0) {
    struct xfer *x = w->active[w->n_active - 1];
    curl_multi_remove_handle(w->multi, x->easy);
    struct lg_record *rec = x->rec;
    live_settle(w, x, 0);
    w->in_flight--;
    w->tally.failed++;
    rec->failure = LG_FAIL_INTERRUPTED;
    rec->ttft_ns = rec->e2el_ns = 0;
    rec->n_chunk_gaps = 0;
    rec->output_tokens = 0;
    free(rec->chunk_gaps_us);
    rec->chunk_gaps_us = NULL;
    rec->detail = xstrdup("interrupted: still in flight when the run was stopped");
    w->n_active--;
    xfer_put(w, x);
  }
}

static bool worker_done(struct lg_worker *w) {
  if (w->in_flight > 0)
    return false;
  if (w->stopping)
    return true;
  return atomic_load(&w->run->next_index) >= w->run->cfg.n_prompts;
}

static void *worker_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-loadgen"); /* shows in top -H and /proc */
  struct lg_worker *w = arg;
  struct lg_run *run = w->run;
  /* Large enough for one decode step of every stream of a loop at once: a
   * batch split over two epoll_wait calls would stamp its second part later. */
  enum { MAX_EVENTS = 2048 };
  struct epoll_event *events = xcalloc(MAX_EVENTS, sizeof(*events));
  int running = 0;
  bool publish_due = false;
  timerfd_arm_ns(w->tick_fd, PUBLISH_INTERVAL_NS);
  w->batch_start_ns = clock_mono_ns();
  dispatch_ready(w);
  while (!worker_done(w)) {
    /* busy: this pass, from the epoll_wait return to the next call */
    int64_t idle_from = clock_mono_ns();
    w->busy_ns += idle_from - w->batch_start_ns;
    live_slot_at(w, idle_from)->busy_ns += idle_from - w->batch_start_ns;
    int n = epoll_wait(w->epfd, events, MAX_EVENTS, curl_wait_ms(w));
    w->batch_start_ns = clock_mono_ns();
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < n; i++) {
      enum fd_tag tag = (enum fd_tag)(events[i].data.u64 >> 32);
      int fd = (int)(uint32_t)events[i].data.u64;
      switch (tag) {
      case TAG_SOCKET: {
        int flags = (events[i].events & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) |
                    (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                    (events[i].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
        /* The transfer stays allocated until reap_done(), so x outlives the call. */
        struct xfer *x = (size_t)fd < w->by_fd_cap ? w->by_fd[fd] : NULL;
        if (x) {
          x->ready_ns = w->batch_start_ns;
          if ((events[i].events & EPOLLIN) &&
              ++w->readable_events % LG_RECV_LAG_SAMPLE_EVERY == 0)
            sample_recv_lag(w, fd);
        }
        curl_multi_socket_action(w->multi, fd, flags, &running);
        if (x)
          x->ready_ns = 0;
        reap_done(w);
        break;
      }
      case TAG_DISPATCH_TIMER:
        drain_fd(fd);
        if (w->stopping && clock_mono_ns() >= w->drain_deadline_ns)
          cut_in_flight(w);
        break;
      case TAG_TICK:
        drain_fd(fd);
        publish_due = true;
        timerfd_arm_ns(w->tick_fd, PUBLISH_INTERVAL_NS);
        break;
      case TAG_WAKE:
        drain_fd(fd);
        if (atomic_load(&run->stop) && !w->stopping) {
          w->stopping = true;
          w->drain_deadline_ns = clock_mono_ns() + (int64_t)(run->cfg.drain_timeout_s * 1e9);
          timerfd_arm_ns(w->dispatch_timer_fd, (int64_t)(run->cfg.drain_timeout_s * 1e9));
        }
        break;
      }
    }
    curl_timeout_if_due(w);
    dispatch_ready(w);
    /* Last in the pass: every chunk stamped before this moment has been
     * handled (a pass stamps the bytes of its sockets with the moment
     * epoll_wait returned, then parses them), so the live figures cover
     * exactly the chunks the records place before it. Publishing when the
     * tick came up in the batch would leave out the rest of the batch,
     * chunks stamped earlier -- many per stream after the loop waited for
     * its CPU. */
    if (publish_due) {
      publish(w, clock_mono_ns(), false);
      publish_due = false;
    }
  }
  free(events);
  w->end_ns = clock_mono_ns();
  w->busy_ns += w->end_ns - w->batch_start_ns;
  publish(w, w->end_ns, true); /* also takes the thread's CPU time up to here */
  pthread_mutex_lock(&run->done_mu);
  atomic_fetch_sub(&run->workers_running, 1);
  pthread_cond_broadcast(&run->done_cv);
  pthread_mutex_unlock(&run->done_mu);
  return NULL;
}

/* ---------------------------------------------------------------- setup and teardown */
static void worker_fini(struct lg_worker *w) {
  if (w->multi) {
    for (size_t i = 0; i < w->n_active; i++)
      curl_multi_remove_handle(w->multi, w->active[i]->easy);
  }
  for (size_t i = 0; i < w->n_active; i++)
    xfer_put(w, w->active[i]);
  free(w->active);
  free(w->by_fd);
  free(w->recv_lag_us);
  while (w->free_xfers) {
    struct xfer *x = w->free_xfers;
    w->free_xfers = x->next_free;
    curl_easy_cleanup(x->easy);
    lg_sse_fini(&x->sse);
    sbuf_free(&x->detail);
    free(x);
  }
  if (w->multi)
    curl_multi_cleanup(w->multi);
  int fds[] = {w->epfd, w->dispatch_timer_fd, w->tick_fd, w->wake_fd};
  for (size_t i = 0; i < ST_ARRAY_LEN(fds); i++)
    if (fds[i] >= 0)
      close(fds[i]);
  pthread_mutex_destroy(&w->pub_mu);
}

static int worker_init(struct lg_worker *w, struct lg_run *run, int id, struct st_err *err) {
  w->run = run;
  w->id = id;
  w->epfd = w->dispatch_timer_fd = w->tick_fd = w->wake_fd = -1;
  w->curl_deadline_ns = -1;
  pthread_mutex_init(&w->pub_mu, NULL);
  for (int i = 0; i < LG_LIVE_WINDOW_S; i++)
    w->live[i].second = -1;
  w->epfd = epoll_create1(EPOLL_CLOEXEC);
  w->dispatch_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  w->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (w->epfd < 0 || w->dispatch_timer_fd < 0 || w->tick_fd < 0 || w->wake_fd < 0)
    return err_setf(err, "loadgen worker %d: epoll/timerfd/eventfd: %s", id, strerror(errno));
  if (epoll_add_tagged(w->epfd, w->dispatch_timer_fd, TAG_DISPATCH_TIMER) != 0 ||
      epoll_add_tagged(w->epfd, w->tick_fd, TAG_TICK) != 0 ||
      epoll_add_tagged(w->epfd, w->wake_fd, TAG_WAKE) != 0)
    return err_setf(err, "loadgen worker %d: epoll_ctl: %s", id, strerror(errno));
  w->multi = curl_multi_init();
  if (!w->multi)
    return err_setf(err, "loadgen worker %d: curl_multi_init failed", id);
  curl_multi_setopt(w->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt(w->multi, CURLMOPT_SOCKETDATA, w);
  curl_multi_setopt(w->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(w->multi, CURLMOPT_TIMERDATA, w);
  if (run->cfg.reuse_connections) {
    int conc = atomic_load(&w->max_in_flight);
    curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, (long)(conc < 65536 ? conc + 1 : 1024));
  }
  return 0;
}

/* Splits max_concurrency over the workers: the first (total % n) get one more;
 * a worker without a share gets 0 (dispatches nothing). */
static void set_shares(struct lg_run *run, int total) {
  for (int i = 0; i < run->n_workers; i++) {
    int share = INT32_MAX;
    if (total > 0)
      share = total / run->n_workers + (i < total % run->n_workers ? 1 : 0);
    atomic_store(&run->workers[i].max_in_flight, share);
  }
}

static void run_free(struct lg_run *run) {
  if (!run)
    return;
  for (int i = 0; i < run->n_workers; i++)
    worker_fini(&run->workers[i]);
  free(run->workers);
  free(run->arrival_ns);
  curl_slist_free_all(run->headers);
  pthread_mutex_destroy(&run->done_mu);
  pthread_cond_destroy(&run->done_cv);
  free(run);
}

/* Opening the streams' sockets grows the process's descriptor table each time
 * it fills (at 256, 512, 1024, ... descriptors), and in a process with threads
 * the kernel then waits for an RCU grace period: 8-21 ms measured on a 2-core
 * VM, during which the loop stands still inside the TTFT of every request in
 * flight. The table never shrinks, so it is grown once here, before the run,
 * by asking for a descriptor above what the run will hold. */
static void fd_table_reserve(const struct lg_config *cfg, int any_fd) {
  size_t streams = cfg->max_concurrency > 0 ? (size_t)cfg->max_concurrency : cfg->n_prompts;
  size_t want = streams + 16 * (size_t)cfg->num_workers + 64;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  if (rl.rlim_cur != RLIM_INFINITY && want >= rl.rlim_cur)
    want = rl.rlim_cur - 1;
  if (want > INT32_MAX)
    want = INT32_MAX;
  int fd = fcntl(any_fd, F_DUPFD_CLOEXEC, (int)want); /* lowest free one >= want: clobbers nothing */
  if (fd >= 0)
    close(fd);
}

struct lg_run *lg_run_start(const struct lg_config *cfg, struct st_err *err) {
  if (!cfg->url || !cfg->prompts || cfg->n_prompts == 0) {
    err_setf(err, "loadgen: no URL or no prompts");
    return NULL;
  }
  if (!(cfg->burstiness > 0)) {
    err_setf(err, "burstiness must be > 0 (got %g)", cfg->burstiness);
    return NULL;
  }
  if (!(cfg->request_rate > 0)) {
    err_setf(err, "request-rate must be > 0 (got %g)", cfg->request_rate);
    return NULL;
  }
  if (cfg->num_workers < LG_NUM_WORKERS_AUTO || cfg->num_workers > MAX_WORKERS) {
    err_setf(err, "num-workers must be auto or 1..%d (got %d)", MAX_WORKERS, cfg->num_workers);
    return NULL;
  }
  http_global_init(); /* main did it; tests that start a run without main are safe too */

  struct lg_run *run = xcalloc(1, sizeof(*run));
  run->cfg = *cfg;
  if (run->cfg.num_workers == LG_NUM_WORKERS_AUTO)
    run->cfg.num_workers =
        lg_auto_workers(cfg->max_concurrency > 0 ? cfg->max_concurrency : (long)cfg->n_prompts,
                        lg_usable_cpus());
  cfg = &run->cfg; /* the loops as resolved */
  pthread_mutex_init(&run->done_mu, NULL);
  pthread_cond_init(&run->done_cv, NULL);
  run->records = xcalloc(cfg->n_prompts, sizeof(*run->records));
  for (size_t i = 0; i < cfg->n_prompts; i++) {
    run->records[i].failure = LG_FAIL_NOT_SENT;
    run->records[i].prompt_len = cfg->prompts[i].prompt_len;
    run->records[i].server_prompt_tokens = -1;
    run->records[i].draft_tokens = run->records[i].draft_accepted = -1;
  }
  if (isfinite(cfg->request_rate) && cfg->arrival_ns) {
    /* the workload drew them, as the reference, after its prompts */
    run->arrival_ns = xcalloc(cfg->n_prompts, sizeof(*run->arrival_ns));
    memcpy(run->arrival_ns, cfg->arrival_ns, cfg->n_prompts * sizeof(*run->arrival_ns));
  } else if (isfinite(cfg->request_rate)) {
    /* get_request(): request 0 at t = 0, then gamma(shape=burstiness,
     * scale=1/(rate*burstiness)) gaps. */
    struct lg_np *rng = xmalloc(sizeof(*rng));
    lg_np_seed(rng, (uint32_t)cfg->seed);
    run->arrival_ns = xcalloc(cfg->n_prompts, sizeof(*run->arrival_ns));
    double t_s = 0.0;
    for (size_t i = 0; i < cfg->n_prompts; i++) {
      run->arrival_ns[i] = (int64_t)llround(t_s * 1e9);
      t_s += lg_np_gamma(rng, cfg->burstiness, 1.0 / (cfg->request_rate * cfg->burstiness));
    }
    free(rng);
  }
  run->headers = http_api_headers_alloc(cfg->api_key); /* no Expect: 100-continue round trip */

  run->n_workers = cfg->num_workers;
  run->workers = xcalloc((size_t)run->n_workers, sizeof(*run->workers));
  atomic_store(&run->max_concurrency, cfg->max_concurrency > 0 ? cfg->max_concurrency : 0);
  set_shares(run, cfg->max_concurrency);
  for (int i = 0; i < run->n_workers; i++) {
    if (worker_init(&run->workers[i], run, i, err) != 0) {
      run->n_workers = i + 1;
      free(run->records);
      run_free(run);
      return NULL;
    }
  }

  fd_table_reserve(cfg, run->workers[0].epfd);

  /* Workers leave signals to the main thread. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  run->start_ns = clock_mono_ns();
  run->start_unix_s = clock_real_s();
  atomic_store(&run->end_ns, run->start_ns);
  atomic_store(&run->workers_running, run->n_workers);
  int started = 0;
  for (int i = 0; i < run->n_workers; i++) {
    struct lg_worker *w = &run->workers[i];
    w->slot_free_ns = run->start_ns;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
      break;
    w->thread_started = true;
    started++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (started < run->n_workers) {
    err_setf(err, "loadgen: could not start worker threads");
    atomic_fetch_sub(&run->workers_running, run->n_workers - started);
    lg_run_stop(run);
    struct lg_result discard;
    lg_run_finish(run, &discard);
    lg_result_free(&discard);
    return NULL;
  }
  return run;
}

void lg_run_stop(struct lg_run *run) {
  atomic_store(&run->stop, true);
  uint64_t one = 1;
  for (int i = 0; i < run->n_workers; i++) {
    ssize_t n = write(run->workers[i].wake_fd, &one, sizeof(one));
    (void)n;
  }
}

void lg_run_set_max_concurrency(struct lg_run *run, int max_concurrency) {
  if (max_concurrency < 1)
    max_concurrency = 1;
  atomic_store(&run->max_concurrency, max_concurrency);
  set_shares(run, max_concurrency);
  uint64_t one = 1;
  for (int i = 0; i < run->n_workers; i++) {
    ssize_t n = write(run->workers[i].wake_fd, &one, sizeof(one));
    (void)n;
  }
}

bool lg_run_wait(struct lg_run *run, int timeout_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  if (timeout_ms >= 0) {
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&run->done_mu);
  while (atomic_load(&run->workers_running) > 0) {
    if (timeout_ms < 0) {
      pthread_cond_wait(&run->done_cv, &run->done_mu);
    } else if (pthread_cond_timedwait(&run->done_cv, &run->done_mu, &deadline) == ETIMEDOUT) {
      break;
    }
  }
  bool done = atomic_load(&run->workers_running) == 0;
  pthread_mutex_unlock(&run->done_mu);
  return done;
}

/* The latency figures of the model from the loops' histograms. */
static void live_latencies(struct fig_set *dst, const struct live_lat *src) {
  fig_set_from_hist_us(dst, FIG_TTFT, &src->h[LAT_TTFT]);
  fig_set_from_hist_us(dst, FIG_TPOT, &src->h[LAT_TPOT]);
  fig_set_from_hist_us(dst, FIG_ITL, &src->h[LAT_ITL]);
  fig_set_from_hist_us(dst, FIG_E2EL, &src->h[LAT_E2EL]);
  fig_set_from_hist_us(dst, FIG_SEND_LAG, &src->h[LAT_SEND_LAG]);
  fig_set_from_hist_us(dst, FIG_TOKENS_PER_CHUNK, &src->h[LAT_TPC]); /* x 1000: as is */
  fig_set_from_hist_us(dst, FIG_RECV_LAG, &src->h[LAT_RECV_LAG]);
}

/* The rates of the model over a span: output tokens, (those + input tokens),
 * requests, each / span_s; unknown for an empty span. */
static void live_rates(struct fig_set *dst, double span_s, double output_tokens,
                       double input_tokens, double requests) {
  bool valid = span_s > 0;
  fig_set_scalar(dst, FIG_OUTPUT_TPUT, valid, valid ? output_tokens / span_s : 0);
  fig_set_scalar(dst, FIG_TOTAL_TPUT, valid, valid ? (output_tokens + input_tokens) / span_s : 0);
  fig_set_scalar(dst, FIG_REQ_TPUT, valid, valid ? requests / span_s : 0);
}

void lg_run_live(struct lg_run *run, struct lg_live *out) {
  memset(out, 0, sizeof(*out));
  struct worker_published *sum = xcalloc(1, sizeof(*sum));
  struct worker_published *p = xmalloc(sizeof(*p));
  /* Each loop's publish is read once, under one lock: a loop may publish
   * again between two reads, and its window and its tokens must come from
   * the same publish. What the sums below need of it is kept here. */
  struct pub_window {
    int64_t from_s, pending, point_pending, completed;
    double s, settled, point_settled;
  } win[MAX_WORKERS];
  bool all_finished = true;
  double ratio_tokens = 0;
  int64_t ratio_chunks = 0;
  for (int i = 0; i < run->n_workers; i++) {
    struct lg_worker *w = &run->workers[i];
    pthread_mutex_lock(&w->pub_mu);
    memcpy(p, &w->pub, sizeof(*p));
    pthread_mutex_unlock(&w->pub_mu);
    win[i] = (struct pub_window){.from_s = p->window_from_s, .pending = p->window_pending,
                                 .point_pending = p->tally.point_pending,
                                 .completed = p->window_completed, .s = p->window_s,
                                 .settled = p->window_settled,
                                 .point_settled = p->tally.point_settled};
    ratio_tokens += p->tally.ratio_tokens;
    ratio_chunks += p->tally.ratio_chunks;
    /* every rate is over the window of the latest publish */
    if (i == 0 || (double)p->window_from_s + p->window_s >
                      (double)sum->window_from_s + sum->window_s) {
      sum->window_s = p->window_s;
      sum->window_from_s = p->window_from_s;
    }
    worker_tally_add_counts(&sum->tally, &p->tally);
    sum->in_flight += p->in_flight;
    for (int m = 0; m < LAT_N; m++) {
      live_hist_add(&sum->tally.window.h[m], &p->tally.window.h[m]);
      live_hist_add(&sum->tally.point.h[m], &p->tally.point.h[m]);
    }
    sum->tally.accept.requests += p->tally.accept.requests;
    sum->tally.accept.draft_tokens += p->tally.accept.draft_tokens;
    sum->tally.accept.accepted_tokens += p->tally.accept.accepted_tokens;
    sum->tally.accept.rate_sum += p->tally.accept.rate_sum;
    for (int k = 0; k < LG_ACCEPT_BINS; k++)
      sum->tally.accept.bins[k] += p->tally.accept.bins[k];
    all_finished = all_finished && p->finished;
    out->loop_busy_window[i] = p->busy_window;
    out->loop_busy_point[i] = p->busy_point;
    out->loop_cpu_window[i] = p->cpu_window;
    out->loop_cpu_point[i] = p->cpu_point;
  }
  out->n_loops = run->n_workers;
  /* Pending chunks (streams without continuous usage: llama.cpp, or a
   * server that ignores it) count one token while the first window fills
   * (never above the truth there), then the point's tokens per chunk: an
   * estimate, said so (output_estimated). Continuous-usage streams are
   * counted by the server's own numbers as they arrive. */
  double per_chunk = sum->window_s >= LG_LIVE_WINDOW_S - 1 && ratio_chunks > 0
                         ? ratio_tokens / (double)ratio_chunks
                         : 1.0;
  double window_tokens = 0, window_completed = 0;
  int64_t window_pending = 0;
  for (int i = 0; i < run->n_workers; i++) {
    const struct pub_window *q = &win[i];
    window_pending += q->pending;
    sum->tally.point_settled += q->point_settled + per_chunk * (double)q->point_pending;
    /* A loop's window starting in the same second is inside the latest one
     * (it misses at most its last 100 ms, or nothing once it has exited);
     * one that started a second earlier counts at its own rate. */
    double tokens = q->settled + per_chunk * (double)q->pending;
    double scale = q->from_s == sum->window_from_s || q->s <= 0 ? 1.0 : sum->window_s / q->s;
    window_tokens += tokens * scale;
    window_completed += (double)q->completed * scale;
  }
  out->total = (int64_t)run->cfg.n_prompts;
  out->dispatched = sum->tally.dispatched;
  out->completed = sum->tally.completed;
  out->failed = sum->tally.failed;
  out->in_flight = sum->in_flight;
  out->output_tokens = sum->tally.output_tokens;
  out->input_tokens = sum->tally.input_tokens;
  out->max_concurrency = atomic_load(&run->max_concurrency);
  /* Once over, the span the result divides by: first dispatch to last end. */
  int64_t until_ns = all_finished ? atomic_load(&run->end_ns) : clock_mono_ns();
  out->elapsed_s = (double)(until_ns - run->start_ns) / 1e9;
  out->window_s = sum->window_s;
  out->window_from_s = (double)sum->window_from_s;
  fig_set_clear(&out->window);
  fig_set_clear(&out->point);
  /* the window has no input-token count: the point's mean prompt per request */
  const struct worker_tally *n = &sum->tally;
  double mean_input = n->completed > 0 ? (double)n->input_tokens / (double)n->completed : 0;
  live_rates(&out->window, sum->window_s, window_tokens, window_completed * mean_input,
             window_completed);
  /* settled, the sum is the completed requests' tokens */
  live_rates(&out->point, out->elapsed_s,
             all_finished ? (double)sum->tally.output_tokens : sum->tally.point_settled,
             (double)sum->tally.input_tokens, (double)sum->tally.completed);
  fig_set_scalar(&out->point, FIG_COMPLETED, true, (double)sum->tally.completed);
  fig_set_scalar(&out->point, FIG_DURATION, true, out->elapsed_s);
  live_latencies(&out->window, &sum->tally.window);
  live_latencies(&out->point, &sum->tally.point);
  double busiest_window = 0, busiest_point = 0;
  for (int i = 0; i < out->n_loops; i++) {
    busiest_window = fmax(busiest_window, out->loop_busy_window[i]);
    busiest_point = fmax(busiest_point, out->loop_busy_point[i]);
  }
  fig_set_scalar(&out->window, FIG_LOOP_BUSY, sum->window_s > 0, busiest_window * 100.0);
  fig_set_scalar(&out->point, FIG_LOOP_BUSY, out->elapsed_s > 0, busiest_point * 100.0);
  fig_set_derive(&out->window, 0);
  fig_set_derive(&out->point, 0);
  /* the verdict: on the window while it runs, on the point once it is over */
  if (all_finished)
    lg_client_bound(&out->point, out->loop_busy_point, out->loop_cpu_point, out->n_loops,
                    out->client_bound, sizeof(out->client_bound));
  else
    lg_client_bound(&out->window, out->loop_busy_window, out->loop_cpu_window, out->n_loops,
                    out->client_bound, sizeof(out->client_bound));
  out->output_estimated = !all_finished && window_pending > 0 &&
                          !(per_chunk == 1.0 && ratio_chunks > 0 && ratio_tokens == ratio_chunks);
  out->accept_requests = sum->tally.accept.requests;
  out->accept_draft_tokens = sum->tally.accept.draft_tokens;
  out->accept_accepted_tokens = sum->tally.accept.accepted_tokens;
  out->accept_rate_sum = sum->tally.accept.rate_sum;
  memcpy(out->accept_rate_bins, sum->tally.accept.bins, sizeof(out->accept_rate_bins));
  out->finished = all_finished;
  free(p);
  free(sum);
}

/* A dead server: a request whose connection was refused (nothing listening,
 * no byte sent) after the last request the server answered was dispatched
 * never reached a server: it is not sent (LG_SERVER_GONE), not a failure, so
 * the failure rate counts requests the server got. A refusal followed by an
 * answer (a server that came back), or a server that never answered at all
 * (a wrong port, a dead proxy), stays a connect_error. Whether the
 * launcher saw the process die or, attached, nothing answers again, the
 * records say the same. Returns how many were reclassified. */
static size_t cut_server_gone(struct lg_record *records, size_t n) {
  int64_t last_answered = INT64_MIN; /* dispatch of the latest request that got a response */
  for (size_t i = 0; i < n; i++)
    if (records[i].failure != LG_FAIL_NOT_SENT && records[i].http_status != 0 &&
        records[i].dispatch_ns > last_answered)
      last_answered = records[i].dispatch_ns;
  size_t cut = 0;
  if (last_answered == INT64_MIN) /* never answered: not gone, never there (a failure) */
    return 0;
  for (size_t i = 0; i < n; i++) {
    struct lg_record *r = &records[i];
    if (r->failure != LG_FAIL_CONNECT || !(r->flags & LG_REC_REFUSED) ||
        r->dispatch_ns <= last_answered)
      continue;
    r->failure = LG_FAIL_NOT_SENT;
    free(r->detail);
    r->detail = xstrdup(LG_SERVER_GONE ": connection refused after the last request it answered");
    cut++;
  }
  return cut;
}

void lg_run_finish(struct lg_run *run, struct lg_result *out) {
  memset(out, 0, sizeof(*out));
  for (int i = 0; i < run->n_workers; i++) {
    struct lg_worker *w = &run->workers[i];
    if (w->thread_started)
      pthread_join(w->thread, NULL);
    out->events += w->events;
    out->body_bytes += w->body_bytes;
    live_hist_add(&out->callback_delay, &w->callback_delay);
    int64_t span_ns = w->end_ns - run->start_ns;
    out->loop_busy[i] = span_ns > 0 ? fmin(1.0, (double)w->busy_ns / (double)span_ns) : 0;
    out->loop_cpu[i] = span_ns > 0 ? fmin(1.0, (double)w->cpu_ns / (double)span_ns) : 0;
    out->n_recv_lag += w->n_recv_lag;
  }
  out->recv_lag_us = out->n_recv_lag ? xcalloc(out->n_recv_lag, sizeof(uint32_t)) : NULL;
  size_t k = 0;
  for (int i = 0; i < run->n_workers; i++) {
    struct lg_worker *w = &run->workers[i];
    if (w->n_recv_lag)
      memcpy(out->recv_lag_us + k, w->recv_lag_us, w->n_recv_lag * sizeof(uint32_t));
    k += w->n_recv_lag;
  }
  cut_server_gone(run->records, run->cfg.n_prompts);
  out->records = run->records;
  out->n_records = run->cfg.n_prompts;
  out->start_mono_ns = run->start_ns;
  out->end_mono_ns = atomic_load(&run->end_ns);
  out->start_unix_s = run->start_unix_s;
  out->end_unix_s = run->start_unix_s + (double)(out->end_mono_ns - run->start_ns) / 1e9;
  out->interrupted = atomic_load(&run->stop);
  out->num_workers = run->n_workers;
  out->reuse_connections = run->cfg.reuse_connections;
  run_free(run);
}

size_t lg_result_record_bytes(const struct lg_result *r) {
  size_t bytes = r->n_records * sizeof(struct lg_record);
  for (size_t i = 0; i < r->n_records; i++) {
    bytes += (size_t)r->records[i].n_chunk_gaps * sizeof(uint32_t);
    if (r->records[i].detail)
      bytes += strlen(r->records[i].detail) + 1;
  }
  return bytes;
}

void lg_result_free(struct lg_result *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->n_records; i++) {
    free(r->records[i].chunk_gaps_us);
    free(r->records[i].detail);
  }
  free(r->records);
  free(r->recv_lag_us);
  memset(r, 0, sizeof(*r));
}
