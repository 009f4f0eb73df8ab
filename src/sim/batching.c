/* Scheduling. Fixed-latency mode: one deadline per request (exact TTFT/TPOT).
 * Model mode: SGLang-like continuous batching, one forward pass at a time:
 * a prefill batch (chunked, up to --chunked-prefill-size tokens) when new
 * requests wait, else a decode (or draft+verify) step over every running
 * request. Stream-interval chunking is applied here for both modes. */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- fixed-latency mode */
/* The next output length at which SGLang's rule sends a chunk. */
static long next_boundary(const struct sim_server *srv, const struct sim_req *req) {
  if (!req->stream)
    return req->max_tokens;
  long len = req->sent_len + 1;
  while (len < req->max_tokens && !sim_stream_should_send(srv->cfg->stream_interval, len, false))
    len++;
  return len;
}

static int64_t fixed_token_due_ns(const struct sim_server *srv, const struct sim_req *req, long n) {
  return req->first_token_ns + (int64_t)(n - 1) * srv->fixed_tpot_ns;
}

static void fixed_timer_fired(struct sim_server *srv, struct sim_timer *t) {
  struct sim_req *req = SIM_CONTAINER_OF(t, struct sim_req, timer);
  sim_engine_pump(srv, req);
}

void sim_engine_pump(struct sim_server *srv, struct sim_req *req) {
  if (!srv->fixed_mode || req->phase == SIM_PHASE_DONE || srv->stopping)
    return;
  struct sim_conn *conn = req->conn;
  for (;;) {
    int64_t now = sim_now_ns();
    long due = 0;
    if (now >= req->first_token_ns)
      due = srv->fixed_tpot_ns <= 0 ? req->max_tokens
                                    : 1 + (long)((now - req->first_token_ns) / srv->fixed_tpot_ns);
    if (due > req->max_tokens)
      due = req->max_tokens;
    while (req->sent_len < due && (!conn || sim_conn_backlog(conn) < SIM_CONN_HIGH_WATER_BYTES)) {
      long len = next_boundary(srv, req);
      if (len > due)
        break;
      req->out_len = len;
      bool finished = len == req->max_tokens;
      if (!sim_api_send_chunk(srv, req, len, finished) || srv->stopping)
        return; /* req is gone (or the process is crashing) */
      if (req->fault_stall && req->sent_len > 0) {
        if (conn)
          sim_conn_flush(srv, conn); /* the first chunk goes out, then nothing */
        return;
      }
      if (!req->conn)
        return;
    }
    if (!conn)
      return;
    if (sim_conn_backlog(conn) >= SIM_CONN_HIGH_WATER_BYTES) {
      /* EPOLLOUT resumes the stream once the client has read */
      if (!sim_conn_flush(srv, conn) || sim_conn_backlog(conn) > 0)
        return;
      continue;
    }
    sim_timer_arm(&srv->timers, &req->timer, fixed_token_due_ns(srv, req, next_boundary(srv, req)));
    sim_conn_flush(srv, conn);
    return;
  }
}

/* ---------------------------------------------------------------- model mode: lists */
/* The waiting and running lists are both doubly linked with a head, a tail
 * and a count; these two do the linking for either. */
static void list_append(struct sim_req **head, struct sim_req **tail, int *n, struct sim_req *req) {
  req->prev = *tail;
  req->next = NULL;
  if (*tail)
    (*tail)->next = req;
  else
    *head = req;
  *tail = req;
  (*n)++;
}

static void list_unlink(struct sim_req **head, struct sim_req **tail, int *n, struct sim_req *req) {
  if (req->prev)
    req->prev->next = req->next;
  else
    *head = req->next;
  if (req->next)
    req->next->prev = req->prev;
  else
    *tail = req->prev;
  req->prev = req->next = NULL;
  (*n)--;
}

static void waiting_push(struct sim_server *srv, struct sim_req *req) {
  list_append(&srv->waiting_head, &srv->waiting_tail, &srv->n_waiting, req);
}

static void waiting_remove(struct sim_server *srv, struct sim_req *req) {
  list_unlink(&srv->waiting_head, &srv->waiting_tail, &srv->n_waiting, req);
}

/* append, so prefill order follows arrival order */
static void running_push(struct sim_server *srv, struct sim_req *req) {
  list_append(&srv->running_head, &srv->running_tail, &srv->n_running, req);
}

static void running_remove(struct sim_server *srv, struct sim_req *req) {
  list_unlink(&srv->running_head, &srv->running_tail, &srv->n_running, req);
}

/* A retracted request goes back to the front of the queue (it arrived before anything
 * waiting: SGLang's FCFS order). */
static void waiting_push_front(struct sim_server *srv, struct sim_req *req) {
  req->prev = NULL;
  req->next = srv->waiting_head;
  if (srv->waiting_head)
    srv->waiting_head->prev = req;
  else
    srv->waiting_tail = req;
  srv->waiting_head = req;
  srv->n_waiting++;
}

long sim_engine_kv_tokens(const struct sim_server *srv) {
  long n = 0;
  /* a re-prefill after a retraction recomputes prompt + the output so far */
  for (const struct sim_req *r = srv->running_head; r; r = r->next)
    n += r->prefilled_tokens + r->out_len - (r->prefill_target - r->prompt_tokens);
  return n;
}

/* ---------------------------------------------------------------- model mode: logs and gauges */
static void update_gauges(struct sim_server *srv) {
  struct sim_stats *st = &srv->stats;
  st->num_running = srv->n_running;
  st->num_queue = srv->n_waiting;
  st->num_used_tokens = sim_engine_kv_tokens(srv);
  st->token_usage =
      (double)st->num_used_tokens / ((double)srv->perf.max_total_num_tokens * srv->perf.dp);
}

static void log_prefill(struct sim_server *srv, int new_seq, long new_tokens) {
  update_gauges(srv);
  sim_log(srv,
          "Prefill batch, #new-seq: %d, #new-token: %ld, #cached-token: 0, token usage: %.2f, "
          "#running-req: %d, #queue-req: %d, ",
          new_seq, new_tokens, srv->stats.token_usage, srv->n_running - new_seq, srv->n_waiting);
}

static void log_decode(struct sim_server *srv, int bs) {
  struct sim_stats *st = &srv->stats;
  int64_t now = sim_now_ns();
  double elapsed_s = (double)(now - st->last_decode_log_ns) / 1e9;
  st->gen_throughput = elapsed_s > 0 ? (double)st->tokens_since_log / elapsed_s : 0;
  st->tokens_since_log = 0;
  st->last_decode_log_ns = now;
  update_gauges(srv);
  const struct sim_perf *p = &srv->perf;
  char spec[96] = "";
  if (p->spec) {
    double len =
        st->spec_forward_interval > 0 ? st->spec_accepted_interval / st->spec_forward_interval : 0;
    st->spec_accept_length = len;
    st->spec_accept_rate = len / p->spec_draft_tokens;
    st->spec_accepted_total += st->spec_accepted_interval;
    st->spec_forward_total += st->spec_forward_interval;
    st->spec_accepted_interval = st->spec_forward_interval = 0;
    snprintf(spec, sizeof spec, "accept len: %.2f, accept rate: %.2f, ", len, st->spec_accept_rate);
  }
  sim_log(srv,
          "Decode batch, #running-req: %d, #token: %ld, token usage: %.2f, %scuda graph: %s, "
          "gen throughput (token/s): %.2f, #queue-req: %d, ",
          bs, st->num_used_tokens, st->token_usage, spec,
          (bs + p->dp - 1) / p->dp <= p->cuda_graph_max_bs ? "True" : "False", st->gen_throughput,
          srv->n_waiting);
  st->retracted_interval = 0;
}

/* SGLang's retract_decode: the decode step about to run needs tokens_per_req free slots per
 * request; when the pool has fewer, the requests with the least output (then the longest
 * prompt) go back to the queue, their KV freed, to be prefilled again (prompt + output so
 * far) when they fit. Logs SGLang's warning and counts them. */
static void retract_if_full(struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  long capacity = p->max_total_num_tokens * p->dp;
  long per_req = p->spec ? p->spec_draft_tokens : 1;
  long free_tokens = capacity - sim_engine_kv_tokens(srv);
  int n = 0;
  for (struct sim_req *r = srv->running_head; r; r = r->next)
    n += r->phase == SIM_PHASE_DECODE;
  if (n == 0 || free_tokens >= (long)n * per_req) {
    srv->new_token_ratio = sim_sched_ratio_decay(srv->new_token_ratio);
    return;
  }
  struct sim_req **reqs = xcalloc((size_t)n, sizeof *reqs);
  int i = 0;
  for (struct sim_req *r = srv->running_head; r; r = r->next)
    if (r->phase == SIM_PHASE_DECODE)
      reqs[i++] = r;
  double old_ratio = srv->new_token_ratio;
  int victims = sim_sched_retract(reqs, n, free_tokens, per_req, &srv->new_token_ratio);
  /* the last victim (fewest output tokens) goes in front: the queue keeps their order */
  for (int k = n - victims; k < n; k++) {
    struct sim_req *r = reqs[k];
    running_remove(srv, r);
    r->phase = SIM_PHASE_WAITING;
    r->prefilled_tokens = 0;
    r->prefill_target = r->prompt_tokens + r->out_len;
    r->retractions++;
    waiting_push_front(srv, r);
  }
  free(reqs);
  srv->stats.retracted_total += (uint64_t)victims;
  srv->stats.retracted_interval += victims;
  if (victims > 0)
    sim_log(srv,
            "KV cache pool is full. Retract requests. #retracted_reqs: %d, "
            "#new_token_ratio: %.4f -> %.4f",
            victims, old_ratio, srv->new_token_ratio);
}

/* ---------------------------------------------------------------- model mode: steps */
static void start_step(struct sim_server *srv);

/* Admits waiting requests in order while --max-running-requests and the KV pool allow:
 * SGLang's PrefillAdder counts, for every running request and the new one, the tokens it
 * holds (prompt + output) plus the output still expected, min(max_tokens - out, 4096) x
 * new_token_ratio (sched.c). The ratio starts at 0.7 and decays, so admission is optimistic
 * and a decode step may find the pool full: then requests are retracted (retract_if_full).
 * DP ranks (DP attention or DP replicas) each have their own slots and KV pool; the one
 * scheduler here treats them as one pool dp times as large. */
static void admit(struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  long max_running = (long)p->max_running_requests * p->dp;
  long kv_capacity = p->max_total_num_tokens * p->dp;
  double ratio = srv->new_token_ratio;
  double committed = 0;
  for (const struct sim_req *r = srv->running_head; r; r = r->next)
    committed += (double)sim_sched_req_tokens(r) + sim_sched_req_future(r, ratio);
  while (srv->waiting_head && srv->n_running < max_running) {
    struct sim_req *req = srv->waiting_head;
    if (srv->n_running > 0 && !sim_sched_admit_fits(committed, req, ratio, kv_capacity))
      break;
    committed += (double)sim_sched_req_tokens(req) + sim_sched_req_future(req, ratio);
    waiting_remove(srv, req);
    req->phase = SIM_PHASE_PREFILL;
    running_push(srv, req);
  }
}

long sim_engine_step_advance(struct sim_server *srv, struct sim_req *req, bool *finished) {
  const struct sim_perf *p = &srv->perf;
  struct sim_stats *st = &srv->stats;
  req->in_step = false;
  *finished = false;
  long gained;
  if (!srv->step_decode) {
    req->prefilled_tokens += req->step_tokens;
    req->step_tokens = 0;
    if (req->prefilled_tokens < req->prefill_target)
      return 0; /* more prompt chunks to go */
    req->phase = SIM_PHASE_DECODE;
    gained = 1; /* prefill yields the next token */
  } else {
    gained = sim_draw_accept_len(p, req->chat_prompt, &srv->rng);
    if (p->spec) {
      st->spec_accepted_interval += (double)gained;
      st->spec_forward_interval += 1;
    }
  }
  if (gained > req->max_tokens - req->out_len)
    gained = req->max_tokens - req->out_len;
  req->out_len += gained;
  st->tokens_since_log += gained;
  *finished = req->out_len >= req->max_tokens;
  if (*finished)
    running_remove(srv, req);
  return gained;
}

static void finish_step(struct sim_server *srv, struct sim_timer *t) {
  (void)t;
  struct sim_stats *st = &srv->stats;
  int64_t now = sim_now_ns();
  st->busy_s += (double)(now - srv->step_started_ns) / 1e9;
  /* step_in_flight stays set while the batch is handed out: a request that
   * arrives meanwhile (keep-alive) must not start a step in the middle */
  struct sim_req *next;
  for (struct sim_req *req = srv->running_head; req && !srv->stopping; req = next) {
    next = req->next;
    if (!req->in_step)
      continue;
    bool finished = false;
    if (sim_engine_step_advance(srv, req, &finished) == 0)
      continue; /* more prompt chunks to go */
    bool send = finished || (req->stream && sim_stream_should_send(srv->cfg->stream_interval,
                                                                   req->out_len, false));
    if (send) {
      struct sim_conn *conn = req->conn;
      if (sim_api_send_chunk(srv, req, req->out_len, finished) && conn && conn->fd >= 0 &&
          conn->req == req)
        sim_conn_flush(srv, conn); /* may abort req: next was saved above */
    }
  }
  srv->step_in_flight = false;
  if (!srv->stopping)
    start_step(srv);
}

static void start_step(struct sim_server *srv) {
  if (srv->step_in_flight)
    return;
  double dur_s = sim_engine_plan_step(srv);
  if (dur_s < 0)
    return;
  srv->step_in_flight = true;
  srv->step_started_ns = sim_now_ns();
  sim_timer_arm(&srv->timers, &srv->step_timer, srv->step_started_ns + sim_wall_ns(srv, dur_s));
}

double sim_engine_plan_step(struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  admit(srv);
  if (!srv->running_head)
    return -1;
  double dur_s = 0;
  /* a prefill batch when any running request still has prompt to compute */
  /* SGLang's PrefillAdder: chunks of --chunked-prefill-size, batches of --max-prefill-tokens */
  long budget = p->chunked_prefill_size < p->max_prefill_tokens ? p->chunked_prefill_size
                                                                : p->max_prefill_tokens;
  long new_tokens = 0;
  int new_seq = 0;
  long context = 0;
  for (struct sim_req *r = srv->running_head; r && budget > 0; r = r->next) {
    if (r->phase != SIM_PHASE_PREFILL)
      continue;
    long left = r->prefill_target - r->prefilled_tokens;
    long take = left < budget ? left : budget;
    r->step_tokens = take;
    r->in_step = true;
    budget -= take;
    new_tokens += take;
    context += r->prefilled_tokens;
    new_seq++;
  }
  if (new_seq > 0) {
    srv->step_decode = false;
    dur_s = sim_prefill_s(p, new_tokens, new_seq ? context / new_seq : 0);
    log_prefill(srv, new_seq, new_tokens);
  } else {
    retract_if_full(srv);
    int bs = 0;
    long kv = 0;
    for (struct sim_req *r = srv->running_head; r; r = r->next) {
      if (r->phase != SIM_PHASE_DECODE)
        continue;
      r->in_step = true;
      bs++;
      kv += r->prompt_tokens + r->out_len;
    }
    if (bs == 0)
      return -1;
    srv->step_decode = true;
    /* like SGLang, the log line describes the batch about to run */
    struct sim_stats *st = &srv->stats;
    st->decode_steps++;
    if (st->decode_steps % (uint64_t)srv->cfg->decode_log_interval == 0) /* >= 1: validated */
      log_decode(srv, bs);
    /* DP ranks step in parallel, each over its share of the batch */
    int bs_rank = (bs + p->dp - 1) / p->dp;
    long kv_rank = kv / p->dp;
    dur_s = p->spec ? sim_spec_step_s(p, bs_rank, kv_rank) : sim_decode_step_s(p, bs_rank, kv_rank);
    if (bs_rank > p->cuda_graph_max_bs)
      st->eager_decode_steps++;
  }
  return dur_s;
}

/* ---------------------------------------------------------------- entry points */
void sim_engine_submit(struct sim_server *srv, struct sim_req *req) {
  if (srv->fixed_mode) {
    req->phase = SIM_PHASE_DECODE;
    req->first_token_ns = req->recv_ns + srv->fixed_ttft_ns;
    sim_timer_init(&req->timer, fixed_timer_fired);
    sim_timer_arm(&srv->timers, &req->timer, fixed_token_due_ns(srv, req, next_boundary(srv, req)));
    return;
  }
  sim_engine_enqueue(srv, req);
  start_step(srv);
}

void sim_engine_enqueue(struct sim_server *srv, struct sim_req *req) {
  req->phase = SIM_PHASE_WAITING;
  req->prefill_target = req->prompt_tokens;
  waiting_push(srv, req);
}

void sim_engine_init(struct sim_server *srv) {
  sim_timer_init(&srv->step_timer, finish_step);
  srv->new_token_ratio = SIM_SCHED_INIT_NEW_TOKEN_RATIO;
}

void sim_engine_abort(struct sim_server *srv, struct sim_req *req) {
  sim_timer_cancel(&srv->timers, &req->timer);
  if (!srv->fixed_mode) {
    if (req->phase == SIM_PHASE_WAITING)
      waiting_remove(srv, req);
    else if (req->phase == SIM_PHASE_PREFILL || req->phase == SIM_PHASE_DECODE)
      running_remove(srv, req);
  }
  if (req->phase != SIM_PHASE_DONE && !req->is_warmup) {
    srv->stats.num_aborted++;
    srv->n_active--;
  }
  sim_req_free(req);
}

void sim_engine_fini(struct sim_server *srv) {
  sim_timer_cancel(&srv->timers, &srv->step_timer);
  while (srv->waiting_head) {
    struct sim_req *r = srv->waiting_head;
    waiting_remove(srv, r);
    sim_req_free(r);
  }
  while (srv->running_head) {
    struct sim_req *r = srv->running_head;
    running_remove(srv, r);
    if (r->conn)
      r->conn->req = NULL;
    sim_req_free(r);
  }
  srv->warmup_req = NULL; /* it was on one of the lists */
}
