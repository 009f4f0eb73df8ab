/* run: the run thread — points, load, live snapshots, restarts, outcome. */
#include "run/run_internal.h"

#include "results/results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 100              /* snapshot rate: 10 Hz */

int run_workload_len(int given, int recipe_len, int fallback) {
  return given > 0 ? given : recipe_len > 0 ? recipe_len : fallback;
}

void run_config_init(struct run_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->engine = eng_sim();
  cfg->num_warmups = -1;
  cfg->chat_template = -1;
  cfg->seed = 0;
}

const char *run_status_name(enum run_status status) {
  switch (status) {
  case RUN_STATUS_RUNNING: return "running";
  case RUN_STATUS_OK: return "ok";
  case RUN_STATUS_MISLABELLED: return "mislabelled";
  case RUN_STATUS_SERVER_FAILED: return "server_failed";
  case RUN_STATUS_INTERRUPTED: return "interrupted";
  case RUN_STATUS_ERROR: return "error";
  }
  return "?";
}

static char **strv_dup(char *const *v, size_t n) {
  char **out = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++)
    out[i] = xstrdup(v[i]);
  return out;
}


/* ---------------------------------------------------------------- outcome helpers */
static void set_outcome(struct run *run, enum run_status status, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void set_outcome(struct run *run, enum run_status status, const char *fmt, ...) {
  pthread_mutex_lock(&run->lock);
  run->outcome.status = status;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->outcome.message, sizeof(run->outcome.message), fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&run->lock);
}

static void note(struct run *run, const char *fmt, ...) ST_PRINTF(2, 3);
static void note(struct run *run, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(run->snap.progress.message, sizeof(run->snap.progress.message), fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------- snapshots */
/* The point's acceptance in the snapshot (see struct snap_spec). */
static void set_point_accept(struct snap_spec *sp, bool length_valid, double length,
                             bool rate_valid, double rate, int n_positions, const double *per_pos,
                             const char *method, double span_s) {
  sp->point_scoped = true;
  sp->accept_length_valid = length_valid;
  sp->accept_length = length;
  sp->accept_rate_valid = rate_valid;
  sp->accept_rate_frac = rate;
  sp->n_positions = n_positions < SNAP_MAX_SPEC_POSITIONS ? n_positions : SNAP_MAX_SPEC_POSITIONS;
  memcpy(sp->per_position_rate_frac, per_pos, sizeof(double) * (size_t)sp->n_positions);
  snprintf(sp->method, sizeof(sp->method), "%s", method ? method : "");
  sp->span_s = span_s;
}

/* The latest /metrics scrape wins over the log where it has a value. */
static void fill_from_metrics(struct run *run) {
  struct sig_live live;
  sig_scraper_live(run->scraper, &live);
  if (!live.valid)
    return;
  struct snap_run *s = &run->snap;
  if (!isnan(live.num_running)) {
    s->load.running_valid = true;
    s->load.num_running = (int64_t)live.num_running;
    s->load.source = SNAP_SRC_METRICS;
  }
  if (!isnan(live.num_queued)) {
    s->load.queued_valid = true;
    s->load.num_queued = (int64_t)live.num_queued;
  }
  if (!isnan(live.kv_usage_frac)) {
    s->load.kv_usage_valid = true;
    s->load.kv_usage_frac = live.kv_usage_frac;
  }
  /* SGLang exports 0 when speculative decoding is off: only > 0 is a value */
  struct snap_spec *sp = &s->spec;
  if (!isnan(live.accept_length) && live.accept_length > 0) {
    sp->interval_accept_length_valid = true;
    sp->interval_accept_length = live.accept_length;
    sp->interval_accept_rate_valid = !isnan(live.accept_rate);
    sp->interval_accept_rate_frac = live.accept_rate;
    sp->source = SNAP_SRC_METRICS;
  }
  if (live.run_accept_length_valid && live.run_accept_length > 0) {
    set_point_accept(sp, true, live.run_accept_length, live.run_accept_rate_valid,
                     live.run_accept_rate, live.run_n_positions, live.run_per_position_rate,
                     live.run_accept_length_method, live.run_span_s);
    sp->source = SNAP_SRC_METRICS;
  }
}

static void fill_server_part(struct run *run) {
  struct snap_run *s = &run->snap;
  if (run->launcher) {
    struct launch_status st;
    launcher_get_status(run->launcher, &st);
    switch (st.state) {
    case LAUNCH_STARTING: s->server.state = SNAP_SERVER_STARTING; break;
    case LAUNCH_READY: s->server.state = SNAP_SERVER_READY; break;
    case LAUNCH_STOPPING: s->server.state = SNAP_SERVER_STOPPING; break;
    case LAUNCH_EXITED: s->server.state = SNAP_SERVER_EXITED; break;
    }
    s->server.pid = st.pid;
    s->server.exited_valid = st.exited;
    s->server.exit_code = st.exit_code;
    s->server.exit_signal = st.exit_signal;
    s->server.crashed = st.exited && !st.stop_requested;
    s->server.uptime_s = (double)(clock_mono_ns() - st.started_mono_ns) / 1e9;
    s->server.ready_after_s = st.ready_after_ms >= 0 ? (double)st.ready_after_ms / 1000.0 : -1.0;
    s->log.n_lines = (int)launcher_copy_tail(run->launcher, &s->log.lines[0][0], SNAP_LOG_LINES,
                                             SNAP_LOG_LINE_BYTES);
    s->log.total_lines = st.n_log_lines;
  }
  s->server.port = run->port;

  struct eng_log_state ls;
  pthread_mutex_lock(&run->lock);
  ls = run->log_state;
  pthread_mutex_unlock(&run->lock);
  /* /metrics (live scrape) first, the log lines as the fallback */
  s->load.source = SNAP_SRC_LOG;
  s->load.running_valid = s->load.queued_valid = ls.load_valid;
  s->load.num_running = ls.running;
  s->load.num_queued = ls.queued;
  s->load.kv_usage_valid = ls.token_usage_valid;
  s->load.kv_usage_frac = ls.token_usage_frac;
  s->load.max_total_num_tokens_valid = ls.max_total_num_tokens_valid;
  s->load.max_total_num_tokens = ls.max_total_num_tokens;
  if (run->server.max_total_num_tokens > 0) {
    s->load.max_total_num_tokens_valid = true;
    s->load.max_total_num_tokens = run->server.max_total_num_tokens;
  }
  s->load.max_total_num_tokens_was_valid = run->kv_capacity_was > 0;
  s->load.max_total_num_tokens_was = run->kv_capacity_was;
  s->load.kv_per_slot_valid = run->server.kv_per_slot_tokens > 0;
  s->load.kv_per_slot_tokens = run->server.kv_per_slot_tokens;
  s->load.kv_asked_tokens = 0; /* what was asked, where the engine's KV knob counts tokens */
  const struct eng_flag *kv_row = eng_knob_row(run->cfg.engine, ENG_KNOB_KV_CACHE);
  const char *kv = run->rcmd_valid && kv_row && kv_row->value == ENG_VALUE_NATURAL
                       ? recipe_cmd_knob(&run->rcmd, "kv-cache")
                       : NULL;
  if (kv && *kv)
    s->load.kv_asked_tokens = strtoll(kv, NULL, 10) > 0 ? strtoll(kv, NULL, 10) : 0;
  int cap = run_batch_cap(run, &ls);
  s->load.batch_cap_valid = cap > 0;
  s->load.batch_cap = cap;
  s->figures.server_gen_valid = ls.gen_valid;
  s->figures.server_gen_tok_per_s = ls.gen_tok_per_s;
  struct snap_spec *sp = &s->spec;
  sp->enabled_valid = run->server.spec_known || ls.spec_seen;
  sp->enabled = run->server.spec_algorithm[0] != '\0' || ls.spec_seen;
  snprintf(sp->algorithm, sizeof(sp->algorithm), "%s", run->server.spec_algorithm);
  /* The log's last interval; a scrape overrides it below. */
  sp->source = SNAP_SRC_LOG;
  sp->interval_accept_length_valid = ls.accept_length_valid;
  sp->interval_accept_length = ls.accept_length;
  sp->interval_accept_rate_valid = ls.accept_rate_valid;
  sp->interval_accept_rate_frac = ls.accept_rate_frac;
  if (!run->point_accept_final && !(sp->point_scoped && run->scraper)) {
    /* No figure of the point's own (yet): none. The log's last interval is
     * from before the point (warmups, an earlier point, the server's
     * lifetime) and is not what the result saves; it stays an interval. */
    sp->point_scoped = false;
    sp->accept_length_valid = false;
    sp->accept_rate_valid = false;
    sp->n_positions = 0;
    sp->method[0] = '\0';
    sp->span_s = 0;
  }

  if (run->scraper)
    fill_from_metrics(run);

  if (run->telemetry) {
    if (!run->tm_snap)
      run->tm_snap = xmalloc(sizeof(*run->tm_snap)); /* large: not on the stack */
    struct tm_snapshot *tm = run->tm_snap;
    if (tm_latest(run->telemetry, tm)) {
      /* While a point is measured, each new sample (1 s) goes into its series. */
      if (run->gpu_series && tm->seq > 0)
        tm_series_append(run->gpu_series, tm);
      snprintf(s->gpus.backend, sizeof(s->gpus.backend), "%s", tm->backend);
      snprintf(s->gpus.unavailable_reason, sizeof(s->gpus.unavailable_reason), "%s", tm->error);
      s->gpus.stale = tm->stale;
      s->gpus.n_gpus = tm->n_gpus < SNAP_MAX_GPUS ? tm->n_gpus : SNAP_MAX_GPUS;
      for (int g = 0; g < s->gpus.n_gpus; g++) {
        const struct tm_gpu *src = &tm->gpus[g];
        struct snap_gpu *dst = &s->gpus.gpu[g];
        dst->index = src->index;
        memset(dst, 0, sizeof(*dst)); /* nothing of an earlier sample stays */
        dst->index = src->index;
        if (src->valid & TM_GPU_MEM_TOTAL) {
          dst->valid_mask |= SNAP_GPU_MEM_TOTAL;
          dst->mem_total_bytes = src->mem_total_bytes;
        }
        if (src->valid & TM_GPU_SERVER_MEM) {
          dst->valid_mask |= SNAP_GPU_MEM_SERVER | SNAP_GPU_MEM_OTHER;
          dst->mem_server_bytes = src->server_mem_bytes;
          dst->mem_other_bytes = src->other_mem_bytes;
        }
        if (src->valid & TM_GPU_POWER) {
          dst->valid_mask |= SNAP_GPU_POWER;
          dst->power_mw = src->power_w * 1000.0;
        }
        if (src->valid & TM_GPU_UTIL) {
          dst->valid_mask |= SNAP_GPU_UTIL;
          dst->util_frac = src->util_pct / 100.0;
        }
      }
    }
  }
}

/* llama.cpp's per-request acceptance (struct snap_request_accept). */
static void set_request_accept(struct snap_request_accept *pr, int64_t requests,
                               int64_t draft_tokens, int64_t accepted_tokens, double mean_rate) {
  pr->valid = requests > 0 && draft_tokens > 0;
  pr->requests = requests;
  pr->draft_tokens = draft_tokens;
  pr->accepted_tokens = accepted_tokens;
  pr->rate_frac = pr->valid ? (double)accepted_tokens / (double)draft_tokens : 0;
  pr->mean_rate_frac = pr->valid ? mean_rate : 0;
}

static void fill_load_part(struct run *run, const struct lg_live *live) {
  struct snap_run *s = &run->snap;
  s->progress.done = live->completed;
  s->progress.failed = live->failed;
  s->progress.cut_by_stop = 0; /* known from the result */
  s->progress.in_flight = live->in_flight;
  s->progress.total = live->total;
  s->progress.elapsed_s = live->elapsed_s;
  int64_t left = live->total - live->completed - live->failed;
  double window_req_per_s = fig_has(&live->window, FIG_REQ_TPUT, FIG_VALUE)
                                ? fig_get(&live->window, FIG_REQ_TPUT, FIG_VALUE)
                                : 0;
  s->progress.eta_valid = window_req_per_s > 0 || left == 0;
  s->progress.eta_s = left > 0 && window_req_per_s > 0 ? (double)left / window_req_per_s : 0;
  /* The last wave (every request left is in flight, none to send): the rate
   * falls while they run together, so the ETA from it would grow; it counts
   * down from what it was instead (a new rate may only bring it closer). */
  if (left > 0 && live->in_flight >= left && s->progress.eta_valid) {
    if (run->last_wave_eta_valid) {
      double counted = run->last_wave_eta_s - (live->elapsed_s - run->last_wave_elapsed_s);
      if (counted < 0)
        counted = 0;
      if (s->progress.eta_s > counted)
        s->progress.eta_s = counted;
    }
    run->last_wave_eta_valid = true;
    run->last_wave_eta_s = s->progress.eta_s;
    run->last_wave_elapsed_s = live->elapsed_s;
  } else {
    run->last_wave_eta_valid = false;
  }
  s->figures.window = live->window;
  s->figures.run = live->point;
  s->figures.window_span_s = live->window_s;
  s->figures.window_output_estimated = live->output_estimated;
  snprintf(s->figures.client_bound, sizeof s->figures.client_bound, "%s", live->client_bound);
  s->figures.run_span_s = live->elapsed_s;
  s->figures.run_exact = false;
  set_request_accept(&s->spec.per_request, live->accept_requests, live->accept_draft_tokens,
                     live->accept_accepted_tokens,
                     live->accept_requests > 0 ? live->accept_rate_sum / (double)live->accept_requests
                                               : 0);
  memcpy(s->spec.per_request.rate_bins, live->accept_rate_bins,
         sizeof(s->spec.per_request.rate_bins));
}

void run_publish(struct run *run) {
  fill_server_part(run);
  snap_slot_publish(run->slot, &run->snap);
}

/* A point ended: every figure of it becomes the saved result's. */
static void fill_from_result(struct run *run, const struct measure_result *res) {
  const struct results_metrics *m = &res->metrics;
  struct snap_run *s = &run->snap;
  s->progress.done = m->completed;
  s->progress.failed = m->failed;
  s->progress.cut_by_stop = m->cut_by_stop;
  s->progress.in_flight = 0;
  s->progress.total = res->settings.num_prompts;
  s->progress.elapsed_s = m->duration_s;
  s->progress.eta_valid = true;
  s->progress.eta_s = 0;
  s->figures.run = m->figs; /* every figure of the point: the result's */
  s->figures.run_span_s = m->duration_s;
  s->figures.run_exact = true;
  snprintf(s->figures.client_bound, sizeof s->figures.client_bound, "%s", m->client_bound);
  /* the bins stay the last live ones: the same requests, the same rule */
  set_request_accept(&s->spec.per_request, m->accept_requests, m->accept_draft_tokens,
                     m->accept_accepted_tokens, m->accept_rate.mean_ms /* unitless here */);
  const struct sig_summary *sig = &res->signals;
  if (res->have_signals && sig->accept_length_valid) {
    double span_s = (double)(sig->last_mono_ns - sig->first_mono_ns) / 1e9;
    set_point_accept(&s->spec, true, sig->accept_length, sig->accept_rate_valid, sig->accept_rate,
                     sig->n_positions, sig->per_position_rate, sig->accept_length_method, span_s);
    s->spec.source = SNAP_SRC_METRICS;
    run->point_accept_final = true;
  }
}

static bool spec_on_now(struct run *run) {
  pthread_mutex_lock(&run->lock);
  bool on = run->server.spec_algorithm[0] != '\0' || run->log_state.spec_seen;
  pthread_mutex_unlock(&run->lock);
  return on;
}

static void check_mislabel(struct run *run) {
  if (run->cfg.attach_url)
    return; /* an attached server has no recipe label to disagree with */
  bool known = run->server.spec_known || run->log_state.spec_seen;
  bool on = spec_on_now(run);
  bool mislabelled = run_spec_mislabelled(run->cfg.recipe->spec, known, on);
  pthread_mutex_lock(&run->lock);
  run->outcome.mislabelled = mislabelled;
  pthread_mutex_unlock(&run->lock);
  run->snap.progress.mislabelled = mislabelled;
}

/* ---------------------------------------------------------------- one point */
struct point_plan {
  struct recipe_point point;      /* tp/ep/conc of the recipe row (conc may be overridden) */
  int conc;
  int num_prompts;
  int num_warmups;
  int isl, osl;
  double range_ratio;
  bool chat_template;             /* the recipe's --use-chat-template */
};

static void plan_point(const struct run *run, const struct recipe_point *rp, struct point_plan *p) {
  const struct recipe *r = run->cfg.recipe;
  p->point = *rp;
  p->conc = run->cfg.conc > 0 ? run->cfg.conc : rp->conc;
  if (p->conc <= 0)
    p->conc = 1;
  p->point.conc = p->conc;
  int factor = r->bench.num_prompts_factor > 0 ? r->bench.num_prompts_factor : 10;
  p->num_prompts = run->cfg.num_prompts > 0 ? run->cfg.num_prompts : p->conc * factor;
  if (run->cfg.num_prompts <= 0 && p->num_prompts < run->cfg.num_prompts_min)
    p->num_prompts = run->cfg.num_prompts_min;
  if (run->cfg.num_warmups >= 0)
    p->num_warmups = run->cfg.num_warmups;
  else
    p->num_warmups = r->bench.num_warmups >= 0 ? r->bench.num_warmups : 2 * p->conc;
  p->isl = run_workload_len(run->cfg.isl, r->isl, RUN_DEFAULT_ISL);
  p->osl = run_workload_len(run->cfg.osl, r->osl, RUN_DEFAULT_OSL);
  p->range_ratio = r->bench.random_range_ratio > 0 ? r->bench.random_range_ratio : 0.8;
  if (run->cfg.range_ratio_set)
    p->range_ratio = run->cfg.range_ratio;
  p->chat_template = run->cfg.chat_template >= 0 ? run->cfg.chat_template != 0
                                                 : r->bench.use_chat_template;
}

static bool server_exited(struct run *run) {
  struct launch_status st;
  launcher_get_status(run->launcher, &st);
  return st.exited;
}

/* What the measuring hooks share with the point. */
struct point_ctx {
  struct run *run;
  const struct point_plan *plan;
  bool server_exited;             /* the load was stopped because the server exited */
  int next_conc;                  /* > 0: a concurrency change ended the segment (the latest) */
};

/* run_set_concurrency while a segment's load runs: the segment ends (its requests so far
 * are its result, saved at its own concurrency) and the next one starts at conc. */
static enum measure_action end_segment_for_conc(struct point_ctx *pc, const struct lg_live *live,
                                                int conc) {
  struct run *run = pc->run;
  pc->next_conc = conc;
  run->snap.concurrency.target = conc;
  note(run, "concurrency %d -> %d: this segment is saved at %d after %.1f s, the next one "
       "measures %d", pc->plan->conc, conc, pc->plan->conc, live->elapsed_s, conc);
  return MEASURE_RESTART;
}

/* Every tick of the warmups and the load (measure.h): stop, server exit,
 * restart and concurrency changes; the live picture. */
static enum measure_action point_tick(void *ctx, const struct measure_tick *t, int *set_conc) {
  struct point_ctx *pc = ctx;
  struct run *run = pc->run;
  enum measure_action act = MEASURE_GO_ON;
  if (run->stop_requested) {
    act = MEASURE_STOP;
  } else if (server_exited(run)) {
    pc->server_exited = true;
    act = MEASURE_STOP;
  }
  pthread_mutex_lock(&run->lock);
  int new_conc = 0; /* taken while the load runs (a warmup leaves it for the load) */
  if (t->phase == MEASURE_PHASE_LOAD) {
    new_conc = run->pending_conc;
    run->pending_conc = 0;
  }
  bool restart = run->pending_restart;
  pthread_mutex_unlock(&run->lock);
  if (act == MEASURE_GO_ON && restart)
    act = MEASURE_RESTART;
  (void)set_conc; /* one result, one concurrency: a change ends the segment instead */
  if (t->phase == MEASURE_PHASE_LOAD) {
    run->scraper = t->scraper;
    if (new_conc > 0 && (act == MEASURE_GO_ON || act == MEASURE_RESTART) && !t->live->finished)
      act = end_segment_for_conc(pc, t->live, new_conc);
    fill_load_part(run, t->live);
  } else if (t->phase == MEASURE_PHASE_WARMUP && t->live) {
    run->snap.progress.done = t->live->completed;
    run->snap.progress.failed = t->live->failed;
    run->snap.progress.in_flight = t->live->in_flight;
    run->snap.progress.total = t->live->total;
    run->snap.progress.elapsed_s = t->live->elapsed_s;
  }
  run_publish(run); /* warmups too: server state and log tail keep moving */
  return act;
}

static void point_phase(void *ctx, enum measure_phase phase, const char *text) {
  struct point_ctx *pc = ctx;
  struct run *run = pc->run;
  const struct point_plan *p = pc->plan;
  run->scraper = NULL; /* the load's scraper lives only while the load runs */
  switch (phase) {
  case MEASURE_PHASE_PROMPTS:
    note(run, "concurrency %d: %s", p->conc, text);
    break;
  case MEASURE_PHASE_WARMUP: /* its own progress, not the point's "0/0" */
    note(run, "concurrency %d: %s", p->conc, text);
    run->snap.concurrency.target = p->conc;
    run->snap.progress.warmup = true;
    run->snap.progress.done = run->snap.progress.failed = run->snap.progress.in_flight = 0;
    run->snap.progress.cut_by_stop = 0;
    run->snap.progress.total = p->num_warmups;
    run->snap.progress.eta_valid = false;
    break;
  case MEASURE_PHASE_LOAD:
    run->snap.progress.phase = SNAP_PHASE_MEASURING;
    run->snap.progress.warmup = false;
    run->last_wave_eta_valid = false;
    run->snap.concurrency.n_marks = 0;
    snap_concurrency_mark(&run->snap.concurrency, 0.0, p->conc);
    fig_set_clear(&run->snap.figures.window);
    fig_set_clear(&run->snap.figures.run);
    run->snap.figures.run_exact = false;
    memset(&run->snap.spec.per_request, 0, sizeof(run->snap.spec.per_request));
    run->point_accept_final = false;
    run->snap.spec.point_scoped = false;
    if (run->telemetry)
      run->gpu_series = tm_series_new();
    pthread_mutex_lock(&run->lock);
    run->measuring = true;
    run->between_segments = false;
    pthread_mutex_unlock(&run->lock);
    note(run, "measuring concurrency %d: %s", p->conc, text); /* measure's count: maybe sized */
    break;
  case MEASURE_PHASE_PROFILE_START:
  case MEASURE_PHASE_PROFILE_STOP:
  case MEASURE_PHASE_FIGURES:
    pthread_mutex_lock(&run->lock);
    run->measuring = false;
    pthread_mutex_unlock(&run->lock);
    break;
  }
  run_publish(run);
}

/* What to measure at plan, as `servetop bench` would be asked by InferenceX. */
static void fill_spec(const struct run *run, int point_index, const struct point_plan *p,
                      const char *base_url, const char *model, struct measure_spec *spec) {
  const struct recipe *r = run->cfg.recipe;
  memset(spec, 0, sizeof(*spec));
  struct results_settings *rs = &spec->report;
  /* every metric, p50/p90/p99: what the snapshot and `servetop compare` show */
  results_parse_percentile_metrics("ttft,tpot,itl,e2el", rs, NULL);
  results_parse_metric_percentiles("50,90,99", rs, NULL);
  rs->backend = r->bench.backend ? r->bench.backend : "vllm";
  rs->model_id = model;
  rs->tokenizer_id = model;
  rs->engine = run->cfg.engine; /* provenance: the result says "simulated" for the sim */
  bool chat = strcmp(rs->backend, "openai-chat") == 0; /* as the reference's backends */
  spec->base_url = base_url;
  spec->endpoint = chat ? "/v1/chat/completions" : "/v1/completions";
  spec->api = chat ? LG_API_CHAT : LG_API_COMPLETIONS;
  spec->served_model_name = model;
  spec->input_len = p->isl;
  spec->output_len = p->osl;
  spec->range_ratio = p->range_ratio;
  spec->num_prompts = p->num_prompts;
  spec->num_warmups = p->num_warmups;
  /* The default count (conc x factor) grows until the point lasts CI_MIN_POINT_S after
   * the warmups (measure sizes it from them); --num-prompts is obeyed exactly. */
  spec->min_duration_s = run->cfg.num_prompts > 0 ? 0 : CI_MIN_POINT_S;
  spec->ignore_eos = true;
  spec->use_chat_template = p->chat_template;
  spec->seed = run->cfg.seed + (uint64_t)point_index;
  spec->max_concurrency = p->conc;
  spec->request_rate = (double)INFINITY; /* closed loop: every request may go at once */
  spec->burstiness = 1.0;
  spec->server_tokenizer = true;
  spec->num_workers = run->cfg.num_workers; /* 0: auto (loadgen.h) */
  spec->request_timeout_s = run->cfg.request_timeout_s; /* 0: the reference's 6 h */
  spec->server_signals = true;
  spec->scrape_interval_s = 1.0;
}

/* How a measured point ended, from measure's end and what the hooks saw. */
static enum point_end point_end_of(struct run *run, const struct point_ctx *pc,
                                   const struct measure_result *res) {
  if (pc->server_exited)
    return POINT_SERVER_DIED;
  pthread_mutex_lock(&run->lock);
  bool restart = run->pending_restart;
  pthread_mutex_unlock(&run->lock);
  switch (res->end) {
  case MEASURE_END_RESTART: /* a restart, or a +/- alone */
    return restart || pc->next_conc <= 0 ? POINT_RESTART : POINT_CONC_CHANGED;
  case MEASURE_END_STOPPED: return POINT_STOPPED;
  case MEASURE_END_FAILED: return server_exited(run) ? POINT_SERVER_DIED : POINT_FAILED;
  case MEASURE_END_DONE: break;
  }
  if (!res->measured)
    return server_exited(run) ? POINT_SERVER_DIED : POINT_FAILED;
  /* The load can drain (every request failing fast) before the exit is
   * reaped: failures give the server a moment to show it is gone. */
  bool any_failed = res->metrics.failed > 0;
  if (server_exited(run) || (any_failed && launcher_wait_exit(run->launcher, 1000)))
    return POINT_SERVER_DIED;
  return POINT_DONE;
}

/* Measures one segment of a point and saves its result (*saved: a result file was
 * written; *next_conc > 0: the concurrency the next segment measures). */
static enum point_end measure_one_point(struct run *run, int point_index,
                                        const struct point_plan *p, bool *saved, int *next_conc,
                                        struct st_err *err) {
  *saved = false;
  char base_url[128];
  run_base_url(run, base_url, sizeof(base_url));
  const char *model = run->server.model_id[0] ? run->server.model_id : run->cfg.recipe->model;
  struct measure_spec spec;
  fill_spec(run, point_index, p, base_url, model, &spec);
  struct point_ctx pc = {.run = run, .plan = p};
  struct measure_hooks hooks = {.ctx = &pc, .tick = point_tick, .phase = point_phase,
                                .tick_ms = TICK_MS, .cancel = &run->cancel_measure};
  struct measure_result res;
  measure_point(&spec, &hooks, &res, err);
  *next_conc = pc.next_conc;
  run->scraper = NULL;
  pthread_mutex_lock(&run->lock);
  run->measuring = false;
  pthread_mutex_unlock(&run->lock);
  enum point_end end = point_end_of(run, &pc, &res);

  if (res.have_signals && res.signals.spec_enabled_valid) {
    pthread_mutex_lock(&run->lock);
    run->server.spec_known = true;
    if (res.signals.spec_enabled && !run->server.spec_algorithm[0])
      snprintf(run->server.spec_algorithm, sizeof(run->server.spec_algorithm), "%s",
               res.signals.spec_algorithm[0] ? res.signals.spec_algorithm : "on");
    pthread_mutex_unlock(&run->lock);
  }
  check_mislabel(run);

  if (res.measured) {
    /* Every measured request is kept, whatever ended the point. */
    fill_from_result(run, &res);
    struct run_point_extras extras = {.point_index = point_index, .segment = run->segment,
                                      .conc = p->conc,
                                      .end = end, .mark_s = res.mark_s,
                                      .mark_conc = res.mark_conc, .n_marks = res.n_marks,
                                      .gpu_series = run->gpu_series};
    *saved = run_files_write_point(run, &res, &extras, err) == 0;
    if (!*saved) {
      end = POINT_FAILED;
    } else if (end == POINT_DONE) {
      struct measure_verdict v;
      measure_verdict(&res, &v);
      if (v.too_many_failed) {
        err_setf(err, "%lld of %lld requests failed at concurrency %d (first: %s), more than %d%%; "
                 "result saved", (long long)v.failed, (long long)v.sent, p->conc,
                 lg_failure_name(v.first_failure),
                 MEASURE_MAX_FAILURE_PERCENT);
        end = POINT_REQUESTS_FAILED;
      }
    }
  }
  tm_series_free(run->gpu_series);
  run->gpu_series = NULL;
  measure_result_fini(&res);
  return end;
}

/* ---------------------------------------------------------------- the run thread */
/* The plan of a point's segment at another concurrency: the requests a point at conc
 * sends (--num-prompts, else conc x the recipe's factor). */
static void plan_at_conc(const struct run *run, struct point_plan *plan, int conc) {
  const struct recipe *r = run->cfg.recipe;
  int factor = r->bench.num_prompts_factor > 0 ? r->bench.num_prompts_factor : 10;
  plan->conc = conc;
  plan->num_prompts = run->cfg.num_prompts > 0 ? run->cfg.num_prompts : conc * factor;
}

/* A +/- asked for between two segments of a point (the next one not measuring yet): the
 * next segment measures at it from its start. */
static void take_pending_conc(struct run *run, struct point_plan *plan) {
  pthread_mutex_lock(&run->lock);
  int conc = run->between_segments ? run->pending_conc : 0;
  if (conc > 0)
    run->pending_conc = 0;
  pthread_mutex_unlock(&run->lock);
  if (conc <= 0 || conc == plan->conc)
    return;
  plan_at_conc(run, plan, conc);
  run->snap.concurrency.target = conc;
}

/* The outcome of a run stopped before its end: why, then what it saved. */
static void set_interrupted(struct run *run, const char *fmt, ...) ST_PRINTF(2, 3);
static void set_interrupted(struct run *run, const char *fmt, ...) {
  char why[256], saved[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  int n = run_files_summary(run, saved, sizeof saved);
  set_outcome(run, RUN_STATUS_INTERRUPTED, "%s: %s%s", why, saved,
              n > 0 ? " (partial results saved)" : "");
}

/* The knob edit run_restart_with queued becomes the last override; the
 * point's next segment measures it from the start (next_segment). */
static void apply_pending_restart(struct run *run) {
  pthread_mutex_lock(&run->lock);
  char *knob = run->pending_knob, *value = run->pending_value;
  run->pending_knob = run->pending_value = NULL;
  run->pending_restart = false;
  pthread_mutex_unlock(&run->lock);
  if (!knob)
    return;
  char *assignment = xasprintf("%s=%s", knob, value);
  run->cfg.overrides = run->overrides_owned =
      xreallocarray(run->overrides_owned, run->cfg.n_overrides + 2, sizeof(char *));
  run->overrides_owned[run->cfg.n_overrides++] = assignment;
  run->overrides_owned[run->cfg.n_overrides] = NULL;
  run->restart_pending_check = true; /* ensure_server undoes it if the server cannot start */
  note(run, "restarting the server with %s", assignment);
  snprintf(run->snap.server.restart_note, sizeof(run->snap.server.restart_note),
           "restarting with %s", assignment);
  run->snap.server.restart_failed = false;
  free(knob);
  free(value);
}

/* A restart whose server could not start: its override goes, the previous
 * configuration comes back (ensure_server starts it again), and the run
 * says why. */
static void undo_restart(struct run *run, const char *why) {
  char *assignment = run->overrides_owned[--run->cfg.n_overrides];
  run->overrides_owned[run->cfg.n_overrides] = NULL;
  run->restart_pending_check = false;
  snprintf(run->snap.server.restart_note, sizeof(run->snap.server.restart_note),
           "restart with %.50s failed (%.120s): back to the previous configuration", assignment,
           why);
  run->snap.server.restart_failed = true;
  note(run, "%s", run->snap.server.restart_note);
  log_msg(LOG_WARN, "run: %s", run->snap.server.restart_note);
  free(assignment);
}

/* GPU telemetry for the server's process tree, once per run. */
static void start_telemetry(struct run *run) {
  struct st_err err = {{0}};
  char url[256];
  run_base_url(run, url, sizeof(url));
  const char *urls[] = {url};
  struct launch_status st;
  launcher_get_status(run->launcher, &st);
  bool sim = run->cfg.engine->simulated; /* the sim serves /sim/gpu_memory */
  struct tm_config tc = {.backend = sim ? "sim" : "auto", .urls = sim ? urls : NULL,
                         .n_urls = sim ? 1 : 0, .server_pid = st.pid};
  run->telemetry = tm_open(&tc, &err);
  if (run->telemetry && tm_start(run->telemetry, &err) != 0) {
    tm_close(run->telemetry);
    run->telemetry = NULL;
  }
  if (!run->telemetry)
    log_msg(LOG_INFO, "run: no GPU telemetry: %s", err.msg);
}

static enum run_status server_died_status(struct run *run, const char *when) {
  struct launch_status st;
  launcher_get_status(run->launcher, &st);
  char *tail = launcher_tail_alloc(run->launcher, 3);
  if (st.exit_signal)
    set_outcome(run, RUN_STATUS_SERVER_FAILED, "server killed by signal %d %s; last log lines: %s",
                st.exit_signal, when, tail);
  else
    set_outcome(run, RUN_STATUS_SERVER_FAILED,
                "server exited with status %d %s; last log lines: %s", st.exit_code, when, tail);
  free(tail);
  return RUN_STATUS_SERVER_FAILED;
}

/* servetop attach: the server at cfg.attach_url is already running; it is
 * waited for (it answers /v1/models), told apart by what it serves, and
 * read as a launched one would be, once. Nothing is launched or stopped. */
static enum run_status attach_server(struct run *run, struct st_err *err) {
  if (run->snap.server.state == SNAP_SERVER_READY)
    return RUN_STATUS_OK;
  run->snap.server.attached = true;
  run->snap.server.state = SNAP_SERVER_STARTING;
  run->snap.progress.phase = SNAP_PHASE_LAUNCHING;
  note(run, "attaching to %s", run->cfg.attach_url);
  run_publish(run);
  int64_t timeout_ms = run->cfg.ready_timeout_ms > 0 ? run->cfg.ready_timeout_ms : 10000;
  int64_t until_ns = clock_mono_ns() + timeout_ms * 1000000;
  bool answered = false;
  struct st_err http_err = {{0}};
  while (!run->stop_requested) {
    char *body = launch_http_get_alloc(run->host, run->port, "/v1/models", 2000, &http_err);
    answered = body != NULL;
    free(body);
    if (answered || clock_mono_ns() > until_ns)
      break;
    run_publish(run);
    clock_sleep_us(500000);
  }
  if (!answered) {
    enum run_status st = run->stop_requested ? RUN_STATUS_INTERRUPTED : RUN_STATUS_SERVER_FAILED;
    set_outcome(run, st, "nothing answers GET %s/v1/models: %s", run->cfg.attach_url,
                http_err.msg);
    return st;
  }
  char base_url[256], how[256];
  run_base_url(run, base_url, sizeof base_url);
  const struct eng_ops *e = eng_detect(base_url, 2.0, how, sizeof how);
  run->cfg.engine = e ? e : eng_unknown();
  snprintf(run->snap.server.engine, sizeof(run->snap.server.engine), "%s", run->cfg.engine->name);
  run->snap.server.simulated = run->cfg.engine->simulated;
  pthread_mutex_lock(&run->lock);
  run->outcome.simulated = run->cfg.engine->simulated;
  pthread_mutex_unlock(&run->lock);
  run_server_query_info(run);
  run->snap.server.state = SNAP_SERVER_READY;
  run->snap.server.ready_after_s = 0;
  struct launch_cmd none;
  launch_cmd_init(&none);
  if (run_files_write_recipe(run, &none, NULL, err) != 0)
    log_msg(LOG_WARN, "run: %s", err->msg);
  launch_cmd_fini(&none);
  start_telemetry(run);
  note(run, "attached to %s: %s, engine %s", run->cfg.attach_url, run->cfg.engine->title, how);
  run_publish(run);
  return RUN_STATUS_OK;
}

/* Makes sure the server for plan runs: keeps the current one when the
 * resolved command is the same, else (re)starts it. *running_cmd is the
 * command line of the running server (owned). When the server of a restart
 * with new knobs cannot start (its command does not resolve, it exits, it
 * is not ready in time), the knob is undone and the previous configuration
 * starts again: a typo never ends the run. */
static enum run_status ensure_server(struct run *run, const struct point_plan *plan,
                                     char **running_cmd, struct st_err *err) {
  if (run->cfg.attach_url)
    return attach_server(run, err);
  struct launch_cmd cmd;
  launch_cmd_init(&cmd);
  if (run_server_prepare(run, &plan->point, &cmd, err) != 0) {
    launch_cmd_fini(&cmd);
    if (run->restart_pending_check) {
      undo_restart(run, err->msg);
      return ensure_server(run, plan, running_cmd, err);
    }
    set_outcome(run, RUN_STATUS_ERROR, "%s", err->msg);
    return RUN_STATUS_ERROR;
  }
  char *cmd_line = launch_cmd_format_alloc(&cmd);
  enum run_status status = RUN_STATUS_OK;
  if (*running_cmd && run->launcher && server_exited(run)) {
    status = server_died_status(run, "between points"); /* never hide a crash */
  } else if (!*running_cmd || strcmp(cmd_line, *running_cmd) != 0) {
    int64_t capacity_before = run->kv_capacity_running;
    if (run->launcher) {
      note(run, "server command changes at concurrency %d: restarting it", plan->conc);
      run->snap.progress.phase = SNAP_PHASE_BETWEEN;
      run_publish(run);
      run_server_stop(run);
      run_server_free(run);
    }
    run->snap.progress.phase = SNAP_PHASE_LAUNCHING;
    note(run, "launching %s (%s)", run->cfg.recipe->name, run->cfg.engine->name);
    /* nothing of the old server stays on screen: its load, capacity and cap */
    run_server_info_reset(&run->server);
    run->kv_capacity_was = capacity_before;
    run_publish(run);
    if (run_files_write_recipe(run, &cmd, &plan->point, err) != 0)
      log_msg(LOG_WARN, "run: %s", err->msg);
    free(*running_cmd);
    *running_cmd = cmd_line;
    cmd_line = NULL;
    if (run_server_start(run, &cmd, err) != 0) {
      if (run->restart_pending_check && !run->stop_requested) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        run_server_stop(run);
        run_server_free(run);
        free(*running_cmd);
        *running_cmd = NULL;
        undo_restart(run, why);
        free(cmd_line);
        launch_cmd_fini(&cmd);
        return ensure_server(run, plan, running_cmd, err);
      }
      status = run->stop_requested ? RUN_STATUS_INTERRUPTED : RUN_STATUS_SERVER_FAILED;
      if (status == RUN_STATUS_INTERRUPTED)
        set_interrupted(run, "%s", err->msg);
      else
        set_outcome(run, status, "%s", err->msg);
    } else {
      if (run->restart_pending_check) {
        snprintf(run->snap.server.restart_note, sizeof(run->snap.server.restart_note),
                 "restarted with %.200s", run->overrides_owned[run->cfg.n_overrides - 1]);
        run->restart_pending_check = false;
      }
      struct launch_status ls;
      launcher_get_status(run->launcher, &ls);
      if (!run->telemetry)
        start_telemetry(run);
      else /* the new process: its memory, not the old one's (the pid is known by now) */
        tm_set_server_pid(run->telemetry, ls.pid);
      run_publish(run); /* the new server's capacity (server info, else its log) */
      const struct snap_server_load *ld = &run->snap.load;
      bool moved = capacity_before > 0 && ld->max_total_num_tokens_valid &&
                   ld->max_total_num_tokens != capacity_before;
      run->kv_capacity_was = moved ? capacity_before : -1;
      run->kv_capacity_running = ld->max_total_num_tokens_valid ? ld->max_total_num_tokens : -1;
      run_publish(run);
      pthread_mutex_lock(&run->lock);
      run->outcome.max_total_num_tokens =
          ld->max_total_num_tokens_valid ? ld->max_total_num_tokens : -1;
      pthread_mutex_unlock(&run->lock);
      check_mislabel(run);
    }
  }
  free(cmd_line);
  launch_cmd_fini(&cmd);
  return status;
}

/* The run's status after a point ended (RUN_STATUS_OK: go on). */
static enum run_status status_after_point(struct run *run, enum point_end end,
                                          const struct point_plan *plan, bool saved,
                                          const struct st_err *err) {
  switch (end) {
  case POINT_DONE:
  case POINT_RESTART:
  case POINT_CONC_CHANGED:
    return RUN_STATUS_OK;
  case POINT_STOPPED:
    (void)saved; /* what every segment saved, this one's or not */
    set_interrupted(run, "stopped at concurrency %d", plan->conc);
    return RUN_STATUS_INTERRUPTED;
  case POINT_SERVER_DIED:
    return server_died_status(run, "mid-run");
  case POINT_FAILED:
  case POINT_REQUESTS_FAILED:
    break;
  }
  if (run->stop_requested) {
    set_interrupted(run, "%s", err->msg);
    return RUN_STATUS_INTERRUPTED;
  }
  set_outcome(run, RUN_STATUS_ERROR, "%s", err->msg);
  return RUN_STATUS_ERROR;
}

/* A segment ended by +/- or a restart: the next one of the same sweep point. A restart
 * applies its knob (a new server, warmed up again); a concurrency change keeps the server
 * and measures at conc (0: unchanged) with the requests a point at conc sends (--num-prompts,
 * else conc x the recipe's factor), without warmups: the server has just been under load.
 * A restart after a change launches with the recipe's $CONC at the new concurrency. */
static void next_segment(struct run *run, struct point_plan *plan, enum point_end end, int conc,
                         bool saved) {
  pthread_mutex_lock(&run->lock);
  run->between_segments = true;
  pthread_mutex_unlock(&run->lock);
  if (end == POINT_RESTART)
    apply_pending_restart(run);
  if (conc > 0 && conc != plan->conc) {
    plan_at_conc(run, plan, conc);
    if (end == POINT_RESTART)
      plan->point.conc = conc;
  }
  if (end == POINT_CONC_CHANGED) {
    plan->num_warmups = 0;
    run->snap.progress.phase = SNAP_PHASE_BETWEEN;
    run->snap.concurrency.target = plan->conc;
    note(run, "concurrency %d: a new segment of %d requests", plan->conc, plan->num_prompts);
    run_publish(run);
  }
  if (saved) /* a segment that saved nothing (a restart in its warmups) leaves no gap */
    run->segment++;
}

/* One tick (TICK_MS) from now on CLOCK_REALTIME: a condition wait that also polls a flag. */
static void tick_deadline(struct timespec *until) {
  clock_gettime(CLOCK_REALTIME, until);
  until->tv_nsec += TICK_MS * 1000000L;
  if (until->tv_nsec >= 1000000000L) {
    until->tv_sec++;
    until->tv_nsec -= 1000000000L;
  }
}

/* Points on demand (run_measure_point): waits for each concurrency asked for, measures it on
 * the server (started at the first, restarted only when its command changes) and hands the
 * saved point back; ends when no more are asked for, on a stop, or when the server fails. */
static enum run_status run_points_on_demand(struct run *run, char **running_cmd,
                                            struct st_err *err) {
  const struct recipe *r = run->cfg.recipe;
  enum run_status status = RUN_STATUS_OK;
  for (int k = 0; status == RUN_STATUS_OK; k++) {
    pthread_mutex_lock(&run->lock);
    while (run->demand_conc == 0 && !run->demand_end && !run->stop_requested) {
      struct timespec until; /* a stop comes from a signal handler: polled */
      tick_deadline(&until);
      pthread_cond_timedwait(&run->demand_cond, &run->lock, &until);
    }
    int conc = run->demand_conc;
    bool end = run->demand_end;
    pthread_mutex_unlock(&run->lock);
    if (run->stop_requested) {
      status = RUN_STATUS_INTERRUPTED;
      set_interrupted(run, "stopped"); /* what it saved, in configurations */
      break;
    }
    if (end || conc <= 0)
      break;
    run->cfg.conc = conc;
    struct point_plan plan;
    plan_point(run, &r->points[0], &plan);
    if (run->cfg.server_conc > 0)
      plan.point.conc = run->cfg.server_conc; /* the command stays; the load is conc */
    run->snap.progress.point_index = k;
    run->snap.progress.n_points = k + 1;
    run->segment = 1;
    run->snap.concurrency.target = conc;
    int written = run->snap.points.n_written;
    status = ensure_server(run, &plan, running_cmd, err);
    bool saved = false;
    if (status == RUN_STATUS_OK) {
      int next_conc = 0; /* a +/- ends the point as its own result all the same */
      enum point_end pend = measure_one_point(run, k, &plan, &saved, &next_conc, err);
      check_mislabel(run);
      /* too many failed requests is the point's verdict (it was saved), not the run's */
      if (pend != POINT_REQUESTS_FAILED)
        status = status_after_point(run, pend, &plan, saved, err);
    }
    pthread_mutex_lock(&run->lock);
    run->demand_conc = 0;
    run->demand_ready = true;
    run->demand_measured = saved && run->snap.points.n_written > written;
    if (run->demand_measured)
      run->demand_result = run->snap.points.point[run->snap.points.n - 1];
    pthread_cond_broadcast(&run->done_cond);
    pthread_mutex_unlock(&run->lock);
  }
  return status;
}

static void *run_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-run"); /* shows in top -H and /proc */
  struct run *run = arg;
  struct st_err err = {{0}};
  const struct recipe *r = run->cfg.recipe;
  run->started_unix_s = clock_real_s();
  run->snap.progress.phase = SNAP_PHASE_LAUNCHING;
  snap_concurrency_mark(&run->snap.concurrency, 0.0, run->cfg.conc);
  run_publish(run);

  size_t n_points = run->cfg.sweep ? r->n_points : 1;
  run->snap.progress.n_points = (int)n_points;
  pthread_mutex_lock(&run->lock);
  run->outcome.n_points = (int)n_points;
  run->outcome.simulated = run->cfg.engine->simulated;
  pthread_mutex_unlock(&run->lock);

  if (run_files_make_dir(run, &err) != 0) {
    set_outcome(run, RUN_STATUS_ERROR, "%s", err.msg);
    goto finish;
  }
  if (r->n_points == 0) {
    set_outcome(run, RUN_STATUS_ERROR, "%s:%d: recipe %s has no sweep point", r->file, r->line,
                r->name);
    goto finish;
  }
  enum run_status status = RUN_STATUS_OK;
  char *running_cmd = NULL;
  if (run->cfg.points_on_demand) {
    status = run_points_on_demand(run, &running_cmd, &err);
    n_points = 0; /* the loop below measures nothing */
  }
  for (size_t i = 0; i < n_points && status == RUN_STATUS_OK; i++) {
    struct point_plan plan;
    plan_point(run, &r->points[i], &plan);
    run->snap.progress.point_index = (int)i;
    run->segment = 1;
    if (i > 0) { /* the label between points names the next one */
      run->snap.progress.phase = SNAP_PHASE_BETWEEN;
      run->snap.concurrency.target = plan.conc;
      run_publish(run);
    }
    for (;;) { /* the point's segments: a new one after +/- or a restart */
      if (run->stop_requested) {
        status = RUN_STATUS_INTERRUPTED;
        set_interrupted(run, "stopped before concurrency %d", plan.conc);
        break;
      }
      take_pending_conc(run, &plan);
      status = ensure_server(run, &plan, &running_cmd, &err);
      if (status != RUN_STATUS_OK)
        break;
      bool saved;
      int next_conc = 0;
      enum point_end end = measure_one_point(run, (int)i, &plan, &saved, &next_conc, &err);
      check_mislabel(run);
      if (end == POINT_RESTART || end == POINT_CONC_CHANGED) {
        next_segment(run, &plan, end, next_conc, saved);
        if (end == POINT_RESTART) {
          free(running_cmd); /* forces a new server */
          running_cmd = NULL;
        }
        continue;
      }
      status = status_after_point(run, end, &plan, saved, &err);
      break;
    }
    pthread_mutex_lock(&run->lock);
    run->between_segments = false; /* the point is over: nothing carries to the next one */
    run->pending_conc = 0;
    pthread_mutex_unlock(&run->lock);
  }
  free(running_cmd);
  if (status == RUN_STATUS_OK && run->stop_requested)
    status = RUN_STATUS_INTERRUPTED;
  if (status == RUN_STATUS_OK && run->outcome.mislabelled) {
    status = RUN_STATUS_MISLABELLED;
    /* what the command does that it does not look like, when the engine knows */
    const char *why = run->rcmd_valid ? eng_args_spec_problem(run->rcmd.engine, run->rcmd.argv,
                                                              run->rcmd.argc)
                                      : NULL;
    set_outcome(run, status,
                "MISLABELLED: recipe says spec-decoding %s but the server reports %s%s%s",
                recipe_spec_name(r->spec),
                spec_on_now(run) ? "speculative decoding ON" : "no speculative decoding",
                why ? ": " : "", why ? why : "");
  } else if (status == RUN_STATUS_OK) {
    char summary[sizeof run->outcome.message];
    run_files_summary(run, summary, sizeof summary);
    set_outcome(run, status, "%s", summary);
  } else if (status == RUN_STATUS_INTERRUPTED && run->outcome.status == RUN_STATUS_RUNNING) {
    set_interrupted(run, "stopped"); /* stopped as the last point ended */
  }

finish:
  run->snap.progress.phase = SNAP_PHASE_STOPPING;
  run_publish(run);
  run_server_stop(run);
  if (run->telemetry) {
    tm_close(run->telemetry);
    run->telemetry = NULL;
  }
  pthread_mutex_lock(&run->lock);
  enum run_status final_status = run->outcome.status;
  if (final_status == RUN_STATUS_RUNNING)
    run->outcome.status = final_status = RUN_STATUS_ERROR;
  pthread_mutex_unlock(&run->lock);
  /* Every write that failed or was rescued makes the run fail, said last in
   * its outcome: files of the run folder, the server log (counted by its
   * launcher), the manifest (written once more then, to say so too). */
  uint64_t log_fails = run->log_write_failures;
  int log_errno = run->log_write_errno;
  if (run->launcher) {
    struct launch_status ls;
    launcher_get_status(run->launcher, &ls);
    if (ls.log_write_failures && !log_fails)
      log_errno = ls.log_write_errno;
    log_fails += ls.log_write_failures;
  }
  bool manifest_failed = run->dir[0] && run_files_write_manifest(run, &err) != 0;
  if (manifest_failed)
    log_msg(LOG_ERROR, "run: %s", err.msg);
  /* a sweep ends with its table of points and chart, of what was measured (stopped too) */
  if (run->cfg.sweep && run->dir[0] && run->n_points_done > 0 && !manifest_failed) {
    struct st_err chart_err = {{0}};
    if (run_sweep_report(run->dir, &chart_err) != 0) {
      log_msg(LOG_ERROR, "run: %s", chart_err.msg);
      run->n_file_failures++;
    } else {
      char *chart = path_join_alloc(run->dir, RUN_SWEEP_CHART);
      snprintf(run->snap.points.chart, sizeof run->snap.points.chart, "%s", chart);
      free(chart);
    }
  }
  if ((run->n_file_failures || log_fails) && final_status != RUN_STATUS_INTERRUPTED) {
    char was[sizeof run->outcome.message], files[200] = "", logs[120] = "";
    pthread_mutex_lock(&run->lock);
    snprintf(was, sizeof was, "%s", run->outcome.message);
    pthread_mutex_unlock(&run->lock);
    if (run->n_file_failures) /* named on stderr as each failed */
      snprintf(files, sizeof files, "%d file(s) of the run folder could not be written there%s "
               "(see above)", run->n_file_failures,
               manifest_failed ? ", manifest.json among them" : "");
    if (log_fails)
      snprintf(logs, sizeof logs, "%s%llu write(s) to server.log failed (%s)",
               files[0] ? "; " : "", (unsigned long long)log_fails,
               log_errno ? strerror(log_errno) : "short write");
    set_outcome(run, RUN_STATUS_ERROR, "%s; but %s%s", was, files, logs);
    final_status = RUN_STATUS_ERROR;
    struct st_err again;
    if (run->dir[0] && run_files_write_manifest(run, &again) != 0 && !manifest_failed)
      log_msg(LOG_ERROR, "run: %s", again.msg);
  }
  switch (final_status) {
  case RUN_STATUS_OK: run->snap.progress.phase = SNAP_PHASE_DONE; break;
  case RUN_STATUS_MISLABELLED: run->snap.progress.phase = SNAP_PHASE_DONE; break;
  case RUN_STATUS_INTERRUPTED: run->snap.progress.phase = SNAP_PHASE_INTERRUPTED; break;
  default: run->snap.progress.phase = SNAP_PHASE_FAILED; break;
  }
  pthread_mutex_lock(&run->lock);
  snprintf(run->snap.progress.message, sizeof(run->snap.progress.message), "%.*s",
           (int)sizeof(run->snap.progress.message) - 1, run->outcome.message);
  pthread_mutex_unlock(&run->lock);
  run_publish(run);
  pthread_mutex_lock(&run->lock);
  run->done = true;
  pthread_cond_broadcast(&run->done_cond);
  pthread_mutex_unlock(&run->lock);
  return NULL;
}

/* ---------------------------------------------------------------- public API */
struct run *run_start(const struct run_config *cfg, struct st_err *err) {
  if (!cfg->recipe || (!cfg->engine && !cfg->attach_url)) {
    err_setf(err, "run: no %s", cfg->recipe ? "engine" : "recipe");
    return NULL;
  }
  char host[128] = "127.0.0.1";
  int port = 0;
  if (cfg->attach_url && run_parse_http_url(cfg->attach_url, host, sizeof host, &port, err) != 0)
    return NULL;
  if (run_check_server_cmd(cfg, err) != 0) /* before a folder is made or a port taken */
    return NULL;
  struct run *run = xcalloc(1, sizeof(*run));
  run->cfg = *cfg;
  if (cfg->attach_url) /* told from what it serves once it answers */
    run->cfg.engine = eng_unknown();
  run->cfg.attach_url = cfg->attach_url ? xstrdup(cfg->attach_url) : NULL;
  snprintf(run->host, sizeof(run->host), "%s", host);
  run->port = port;
  run->overrides_owned = strv_dup(cfg->overrides, cfg->n_overrides);
  run->n_overrides_start = cfg->n_overrides;
  run->cfg.overrides = run->overrides_owned;
  run->extra_args_owned = strv_dup(cfg->extra_server_args, cfg->n_extra_server_args);
  run->cfg.extra_server_args = run->extra_args_owned;
  run->cfg.results_dir = cfg->results_dir ? xstrdup(cfg->results_dir) : NULL;
  run->cfg.label = cfg->label ? xstrdup(cfg->label) : NULL;
  run->cfg.servetop_exe = cfg->servetop_exe ? xstrdup(cfg->servetop_exe) : NULL;
  run->cfg.gpus = cfg->gpus ? xstrdup(cfg->gpus) : NULL;
  run->slot = snap_slot_new();
  pthread_mutex_init(&run->lock, NULL);
  pthread_cond_init(&run->done_cond, NULL);
  pthread_cond_init(&run->demand_cond, NULL);
  run->outcome.status = RUN_STATUS_RUNNING;
  run->outcome.max_total_num_tokens = -1;
  run->server.max_total_num_tokens = run->server.kv_per_slot_tokens = -1;
  run->server.batch_cap = -1;
  run->kv_capacity_was = run->kv_capacity_running = -1;
  eng_log_state_init(&run->log_state);
  snap_run_init(&run->snap);
  run->snap.server.simulated = run->cfg.engine->simulated;
  run->snap.server.attached = cfg->attach_url != NULL;
  snprintf(run->snap.server.engine, sizeof(run->snap.server.engine), "%s", run->cfg.engine->name);
  snprintf(run->snap.server.recipe_name, sizeof(run->snap.server.recipe_name), "%s",
           cfg->recipe->name);
  snprintf(run->snap.server.gpus, sizeof(run->snap.server.gpus), "%s", cfg->gpus ? cfg->gpus : "");
  if (pthread_create(&run->thread, NULL, run_main, run) != 0) {
    err_setf(err, "run: cannot start the run thread");
    run_free(run);
    return NULL;
  }
  run->thread_started = true;
  return run;
}

bool run_snapshot(struct run *run, struct snap_run *out, uint64_t *last_seq) {
  return snap_slot_read(run->slot, out, last_seq);
}

int run_set_concurrency(struct run *run, int conc, struct st_err *err) {
  if (conc < 1)
    return err_setf(err, "concurrency must be >= 1 (got %d)", conc);
  pthread_mutex_lock(&run->lock);
  bool measuring = (run->measuring || run->between_segments) && !run->done;
  if (measuring)
    run->pending_conc = conc;
  pthread_mutex_unlock(&run->lock);
  return measuring ? 0 : err_setf(err, "no point is being measured");
}

int run_restart_with(struct run *run, const char *knob, const char *value, struct st_err *err) {
  if (!knob || !*knob || strchr(knob, '=') || !value)
    return err_setf(err, "restart: knob must be a flag name without '=' and value non-NULL");
  if (run->cfg.attach_url)
    return err_setf(err, "restart: servetop did not launch this server (attached), so it cannot "
                         "restart it");
  /* a bad value is refused while the server still runs */
  char *assignment = xasprintf("%s=%s", knob, value);
  int rc = run_check_overrides(run->cfg.recipe, &assignment, 1, err);
  free(assignment);
  if (rc != 0)
    return -1;
  pthread_mutex_lock(&run->lock);
  bool ok = (run->measuring || run->between_segments) && !run->done && !run->pending_restart;
  if (ok) {
    run->pending_knob = xstrdup(knob);
    run->pending_value = xstrdup(value);
    run->pending_restart = true;
  }
  pthread_mutex_unlock(&run->lock);
  return ok ? 0 : err_setf(err, "restart: no point is being measured (or a restart is pending)");
}

int run_measure_point(struct run *run, int conc, const atomic_int *cancel,
                      struct snap_point_result *out, char *why, size_t why_len) {
  pthread_mutex_lock(&run->lock);
  const char *refused = !run->cfg.points_on_demand ? "the run does not take points on demand"
                        : conc < 1                  ? "concurrency must be >= 1"
                        : run->demand_conc          ? "a point is being measured"
                        : run->demand_end           ? "no more points were to come"
                                                    : NULL;
  if (refused) {
    pthread_mutex_unlock(&run->lock);
    snprintf(why, why_len, "%s", refused);
    return -1;
  }
  run->demand_conc = conc;
  run->demand_ready = false;
  pthread_cond_broadcast(&run->demand_cond);
  while (!run->demand_ready && !run->done) {
    if (cancel && *cancel)
      run_stop(run); /* flags only: fine under the lock */
    struct timespec until;
    tick_deadline(&until);
    pthread_cond_timedwait(&run->done_cond, &run->lock, &until);
  }
  bool measured = run->demand_ready && run->demand_measured;
  if (measured)
    *out = run->demand_result;
  run->demand_ready = false;
  run->demand_conc = 0;
  bool over = run->done || run->outcome.status != RUN_STATUS_RUNNING;
  snprintf(why, why_len, "%s",
           over && run->outcome.message[0] ? run->outcome.message : "the point was not measured");
  pthread_mutex_unlock(&run->lock);
  return measured ? 0 : -1;
}

void run_end_points(struct run *run) {
  pthread_mutex_lock(&run->lock);
  run->demand_end = true;
  pthread_cond_broadcast(&run->demand_cond);
  pthread_mutex_unlock(&run->lock);
}

void run_stop(struct run *run) {
  run->stop_requested = 1;
  run->cancel_measure = 1; /* also stops building prompts */
}

bool run_wait(struct run *run, int64_t timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  if (timeout_ms >= 0) {
    int64_t ns = until.tv_nsec + timeout_ms % 1000 * 1000000;
    until.tv_sec += timeout_ms / 1000 + ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
  }
  pthread_mutex_lock(&run->lock);
  while (!run->done) {
    if (timeout_ms < 0)
      pthread_cond_wait(&run->done_cond, &run->lock);
    else if (pthread_cond_timedwait(&run->done_cond, &run->lock, &until) == ETIMEDOUT)
      break;
  }
  bool done = run->done;
  pthread_mutex_unlock(&run->lock);
  return done;
}

void run_get_outcome(struct run *run, struct run_outcome *out) {
  pthread_mutex_lock(&run->lock);
  *out = run->outcome;
  snprintf(out->dir, sizeof(out->dir), "%s", run->dir);
  out->n_points_done = (int)run->n_points_done;
  pthread_mutex_unlock(&run->lock);
  char summary[sizeof out->message];
  out->n_configs_done = run_files_summary(run, summary, sizeof summary);
}

void run_free(struct run *run) {
  if (!run)
    return;
  if (run->thread_started) {
    run_stop(run);
    pthread_join(run->thread, NULL);
  }
  run_server_free(run);
  if (run->rcmd_valid)
    recipe_cmd_fini(&run->rcmd);
  free(run->server_cmd_line);
  free(run->tm_snap);
  run_files_free_records(run);
  free(run->pending_knob);
  free(run->pending_value);
  str_vec_free(run->overrides_owned, run->cfg.n_overrides);
  str_vec_free(run->extra_args_owned, run->cfg.n_extra_server_args);
  free((char *)run->cfg.results_dir);
  free((char *)run->cfg.label);
  free((char *)run->cfg.servetop_exe);
  free((char *)run->cfg.gpus);
  free((char *)run->cfg.attach_url);
  snap_slot_free(run->slot);
  pthread_mutex_destroy(&run->lock);
  pthread_cond_destroy(&run->done_cond);
  pthread_cond_destroy(&run->demand_cond);
  free(run);
}
