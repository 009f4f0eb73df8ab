/* The KV capacity rules of SGLang's scheduler as pure functions (admission with the
 * new-token-ratio estimate, retraction when a decode step would overflow the pool), and the
 * virtual run: batching.c's scheduler over a closed-loop workload in simulated time. Formulas
 * and sources: docs/sim.md, "KV capacity, retraction, batch caps and CUDA graphs". */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sim_sched_ratio_decay(double ratio) {
  double floor_ratio = SIM_SCHED_INIT_NEW_TOKEN_RATIO * SIM_SCHED_MIN_NEW_TOKEN_RATIO_FACTOR;
  double step = (SIM_SCHED_INIT_NEW_TOKEN_RATIO - floor_ratio) /
                SIM_SCHED_NEW_TOKEN_RATIO_DECAY_STEPS;
  return ratio - step > floor_ratio ? ratio - step : floor_ratio;
}

long sim_sched_req_tokens(const struct sim_req *r) {
  return r->prompt_tokens + r->out_len;
}

double sim_sched_req_future(const struct sim_req *r, double ratio) {
  long left = r->max_tokens - r->out_len;
  if (left > SIM_SCHED_CLIP_MAX_NEW_TOKENS)
    left = SIM_SCHED_CLIP_MAX_NEW_TOKENS;
  return left > 0 ? (double)left * ratio : 0.0;
}

bool sim_sched_admit_fits(double committed, const struct sim_req *r, double ratio,
                          long capacity_tokens) {
  return committed + (double)sim_sched_req_tokens(r) + sim_sched_req_future(r, ratio) <=
         (double)capacity_tokens;
}

/* Victims last: SGLang sorts by (output length, -prompt length) descending and pops. */
static int retract_order(const void *a, const void *b) {
  const struct sim_req *x = *(const struct sim_req *const *)a;
  const struct sim_req *y = *(const struct sim_req *const *)b;
  if (x->out_len != y->out_len)
    return x->out_len > y->out_len ? -1 : 1;
  if (x->prompt_tokens != y->prompt_tokens)
    return x->prompt_tokens < y->prompt_tokens ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sim_sched_retract(struct sim_req **reqs, int n, long free_tokens, long tokens_per_req,
                      double *ratio) {
  if (n <= 0 || free_tokens >= (long)n * tokens_per_req)
    return 0;
  qsort(reqs, (size_t)n, sizeof *reqs, retract_order);
  int keep = n;
  bool first = true;
  /* retract until the rest can decode retract_decode_steps more steps (at least one victim,
   * never the last request) */
  while (keep > 1 && (first || free_tokens < (long)keep * SIM_SCHED_RETRACT_DECODE_STEPS)) {
    first = false;
    keep--;
    free_tokens += sim_sched_req_tokens(reqs[keep]);
  }
  double decoded = 0, max_new = 0;
  for (int i = 0; i < keep; i++) {
    decoded += (double)reqs[i]->out_len;
    max_new += (double)reqs[i]->max_tokens;
  }
  double est = max_new > 0 ? (decoded + (double)SIM_SCHED_RETRACT_DECODE_STEPS * keep) / max_new
                           : 1.0;
  *ratio = est < 1.0 ? est : 1.0;
  return n - keep;
}

/* ---------------------------------------------------------------- the virtual run */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int sim_vrun(const struct sim_config *cfg, const struct sim_vrun_workload *w,
             struct sim_vrun_result *res, struct st_err *err) {
  memset(res, 0, sizeof *res);
  if (w->concurrency < 1 || w->n_requests < 1 || w->isl < 1 || w->osl < 1)
    return err_setf(err, "virtual run: concurrency, requests, isl and osl must be >= 1");
  if (cfg->decode_log_interval < 1)
    return err_setf(err, "virtual run: --decode-log-interval must be >= 1");
  struct sim_server *srv = xcalloc(1, sizeof *srv);
  srv->cfg = cfg;
  srv->quiet = true;
  srv->rng = cfg->seed ? cfg->seed : 0x5eed5eed5eedull;
  srv->new_token_ratio = SIM_SCHED_INIT_NEW_TOKEN_RATIO;
  if (sim_perf_init(&srv->perf, cfg, err) != 0) {
    free(srv);
    return -1;
  }
  size_t n = (size_t)w->n_requests;
  struct sim_req *reqs = xcalloc(n, sizeof *reqs);
  double *recv = xcalloc(n, sizeof *recv), *first = xcalloc(n, sizeof *first),
         *done_at = xcalloc(n, sizeof *done_at);
  for (size_t i = 0; i < n; i++) {
    reqs[i].seq = i + 1;
    reqs[i].prompt_tokens = w->isl;
    reqs[i].prefill_target = w->isl;
    reqs[i].max_tokens = w->osl;
    first[i] = -1;
  }
  double t = 0;
  size_t next = 0, done = 0;
  for (; next < n && next < (size_t)w->concurrency; next++)
    sim_engine_enqueue(srv, &reqs[next]);
  while (done < n) {
    double dur = sim_engine_plan_step(srv);
    if (dur < 0)
      break; /* nothing runnable: cannot happen while requests wait */
    if (srv->n_running > res->max_running)
      res->max_running = srv->n_running;
    if (srv->n_waiting > res->max_queue)
      res->max_queue = srv->n_waiting;
    t += dur;
    struct sim_req *nx;
    for (struct sim_req *r = srv->running_head; r; r = nx) {
      nx = r->next;
      if (!r->in_step)
        continue;
      size_t i = (size_t)(r - reqs);
      bool finished = false;
      long gained = sim_engine_step_advance(srv, r, &finished);
      if (gained > 0 && first[i] < 0)
        first[i] = t;
      if (finished) {
        done_at[i] = t;
        done++;
        if (next < n) {
          recv[next] = t;
          sim_engine_enqueue(srv, &reqs[next++]);
        }
      }
    }
  }
  /* whatever is left on the lists belongs to reqs[] */
  srv->waiting_head = srv->waiting_tail = srv->running_head = srv->running_tail = NULL;
  double ttft_sum = 0, tpot_sum = 0;
  double *ttft = xcalloc(n, sizeof *ttft);
  for (size_t i = 0; i < n; i++) {
    ttft[i] = first[i] - recv[i];
    ttft_sum += ttft[i];
    if (w->osl > 1)
      tpot_sum += (done_at[i] - first[i]) / (double)(w->osl - 1);
  }
  qsort(ttft, n, sizeof *ttft, cmp_double);
  size_t rank = (size_t)ceil(0.99 * (double)n);
  res->ttft_p99_s = ttft[rank > 0 ? rank - 1 : 0];
  res->ttft_mean_s = ttft_sum / (double)n;
  res->tpot_mean_s = tpot_sum / (double)n;
  res->makespan_s = t;
  res->output_tok_s = t > 0 ? (double)n * (double)w->osl / t : 0;
  res->retractions = srv->stats.retracted_total;
  res->decode_steps = srv->stats.decode_steps;
  res->eager_decode_steps = srv->stats.eager_decode_steps;
  res->kv_capacity_tokens = srv->perf.max_total_num_tokens * srv->perf.dp;
  int rc = done == n ? 0 : err_setf(err, "virtual run: %zu of %zu requests finished", done, n);
  free(ttft);
  free(recv);
  free(first);
  free(done_at);
  free(reqs);
  free(srv);
  return rc;
}
