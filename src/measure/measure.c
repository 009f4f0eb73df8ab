/* One measured point: prompts, warmups, profile, load, figures (measure.h). */
#include "measure/measure.h"

#include "http/http.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DEFAULT_VOCAB = 32000, DEFAULT_TICK_MS = 100 };

/* The names of enum measure_phase and enum measure_end, by value. */
static const char *const phase_names[] = {
    [MEASURE_PHASE_PROMPTS] = "prompts",
    [MEASURE_PHASE_WARMUP] = "warmup",
    [MEASURE_PHASE_PROFILE_START] = "profile_start",
    [MEASURE_PHASE_LOAD] = "load",
    [MEASURE_PHASE_PROFILE_STOP] = "profile_stop",
    [MEASURE_PHASE_FIGURES] = "figures",
};
static const char *const end_names[] = {
    [MEASURE_END_DONE] = "done",
    [MEASURE_END_STOPPED] = "stopped",
    [MEASURE_END_RESTART] = "restart",
    [MEASURE_END_FAILED] = "failed",
};

const char *measure_phase_name(enum measure_phase phase) {
  return (size_t)phase < ST_ARRAY_LEN(phase_names) ? phase_names[phase] : "?";
}

const char *measure_end_name(enum measure_end end) {
  return (size_t)end < ST_ARRAY_LEN(end_names) ? end_names[end] : "?";
}

static void phase(const struct measure_hooks *h, enum measure_phase p, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void phase(const struct measure_hooks *h, enum measure_phase p, const char *fmt, ...) {
  if (!h || !h->phase)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *note = xvasprintf(fmt, ap);
  va_end(ap);
  h->phase(h->ctx, p, note);
  free(note);
}

static bool cancelled(const struct measure_hooks *h) {
  return h && h->cancel && *h->cancel;
}

/* ---------------------------------------------------------------- prompts */
static int build_workload(const struct measure_spec *spec, const struct measure_hooks *hooks,
                          struct measure_result *r, struct lg_workload *work, struct st_err *err) {
  bool chat_endpoint = spec->api == LG_API_CHAT;
  struct lg_tokenizer *tok = NULL;
  if (spec->server_tokenizer) {
    struct lg_tokenizer_config tc = {.base_url = spec->base_url,
                                     .model = spec->served_model_name,
                                     .api_key = spec->api_key};
    tok = lg_tokenizer_open(&tc, r->no_tokenizer_why, sizeof r->no_tokenizer_why);
    if (!tok)
      r->no_tokenizer_reason = r->no_tokenizer_why;
  } else {
    snprintf(r->no_tokenizer_why, sizeof r->no_tokenizer_why,
             "the server's tokenizer was not used (asked so)");
    r->no_tokenizer_reason = r->no_tokenizer_why;
  }
  bool template = spec->use_chat_template || spec->dsv4;
  if (tok && template && !spec->dsv4 && !lg_tokenizer_template_method(tok)) {
    snprintf(r->no_tokenizer_why, sizeof r->no_tokenizer_why,
             "the server's tokenizer (%s endpoints) cannot render the chat template (no "
             "/apply-template, /tokenize takes no messages)",
             lg_tokenizer_dialect(tok));
    r->no_tokenizer_reason = r->no_tokenizer_why;
    lg_tokenizer_close(tok);
    tok = NULL;
  }
  /* Vocabulary: the server's when it says, else --vocab-size, else 32000. */
  r->vocab_size = spec->vocab_size > 0 ? spec->vocab_size : DEFAULT_VOCAB;
  r->vocab_size_source = spec->vocab_size > 0 ? "--vocab-size" : "default 32000";
  if (tok && spec->vocab_size <= 0 && lg_tokenizer_vocab_size(tok) > 0) {
    r->vocab_size = lg_tokenizer_vocab_size(tok);
    r->vocab_size_source = "server";
  }
  /* Without a tokenizer: today's behaviour -- token ids on completions, or
   * calibrated text on the chat endpoint (the server applies the template). */
  bool calibrated_chat = !tok && (chat_endpoint || template);
  const char *url_path = calibrated_chat && !chat_endpoint ? "/v1/chat/completions" : spec->endpoint;
  if (calibrated_chat && !r->calibrated) { /* a rebuild (sized_num_prompts) keeps the first's */
    char *url = path_join_alloc(spec->base_url, url_path);
    int rc = lg_chat_calibrate(url, spec->served_model_name, spec->api_key,
                               spec->prefix_len + spec->input_len, &r->calibration, err);
    free(url);
    if (rc != 0) {
      lg_tokenizer_close(tok);
      return -1;
    }
    r->calibrated = true;
    phase(hooks, MEASURE_PHASE_PROMPTS,
          "chat calibration: %.2f tokens + %.4f tokens/word (%d probes; target %d -> server "
          "counted %d)",
          r->calibration.sizer.overhead_tokens, r->calibration.sizer.tokens_per_word,
          r->calibration.n_probes, r->calibration.check_target_tokens,
          r->calibration.check_server_tokens);
  }
  struct lg_dataset_config dc = {
      .api = calibrated_chat ? LG_API_CHAT : spec->api,
      .model = spec->served_model_name,
      .input_len = spec->input_len,
      .output_len = spec->output_len,
      .range_ratio = spec->range_ratio,
      .prefix_len = spec->prefix_len,
      .num_prompts = spec->num_prompts,
      .vocab_size = r->vocab_size,
      .ignore_eos = spec->ignore_eos,
      .seed = spec->seed,
      .request_rate = spec->request_rate,
      .burstiness = spec->burstiness,
      .tokenizer = tok,
      .use_chat_template = spec->use_chat_template,
      .dsv4 = spec->dsv4,
      .random_num_workers = spec->random_num_workers,
      .chat_sizer = r->calibrated ? &r->calibration.sizer : NULL,
      .cancel = hooks ? hooks->cancel : NULL,
  };
  int rc = lg_workload_random(&dc, work, err);
  lg_tokenizer_close(tok);
  if (rc != 0)
    return -1;
  r->prompts = work->info;
  r->settings.chat = dc.api == LG_API_CHAT;
  r->settings.endpoint = url_path;
  return 0;
}

/* ---------------------------------------------------------------- load */
/* Runs cfg to its end, calling the tick hook; *out gets the records. */
static enum measure_end drive(const struct lg_config *cfg, enum measure_phase p,
                              struct sig_scraper *scraper, const struct measure_hooks *hooks,
                              struct measure_result *r, struct lg_result *out, struct st_err *err) {
  struct lg_run *run = lg_run_start(cfg, err);
  if (!run)
    return MEASURE_END_FAILED;
  int tick_ms = hooks && hooks->tick_ms > 0 ? hooks->tick_ms : DEFAULT_TICK_MS;
  enum measure_end end = MEASURE_END_DONE;
  bool stop_sent = false;
  for (;;) {
    bool done = lg_run_wait(run, tick_ms);
    struct lg_live live;
    lg_run_live(run, &live);
    enum measure_action act = MEASURE_GO_ON;
    int conc = 0;
    if (hooks && hooks->tick) {
      struct measure_tick t = {.phase = p, .live = &live, .scraper = scraper};
      act = hooks->tick(hooks->ctx, &t, &conc);
    }
    if (done)
      break;
    if (cancelled(hooks) && act == MEASURE_GO_ON)
      act = MEASURE_STOP;
    if (!stop_sent && act != MEASURE_GO_ON) {
      end = act == MEASURE_RESTART ? MEASURE_END_RESTART : MEASURE_END_STOPPED;
      stop_sent = true;
      lg_run_stop(run);
    }
    if (conc > 0 && !stop_sent) {
      lg_run_set_max_concurrency(run, conc);
      if (p == MEASURE_PHASE_LOAD && r->n_marks < MEASURE_MAX_MARKS) {
        r->mark_s[r->n_marks] = live.elapsed_s;
        r->mark_conc[r->n_marks] = conc;
        r->n_marks++;
      }
    }
  }
  lg_run_finish(run, out);
  return end;
}

/* ---------------------------------------------------------------- point length */
/* How much longer the workload's mean request is than its first (the warmups'
 * copy): the first's prefill (TTFT) and decode (the rest) in the warmups wr,
 * scaled by the mean input and output lengths over the first's; 1 when unknown. */
static double mean_over_first(const struct lg_workload *work, const struct lg_result *wr) {
  if (work->n_prompts == 0 || work->prompts[0].prompt_len == 0 ||
      work->prompts[0].output_len == 0)
    return 1;
  double in = 0, out = 0, ttft_s = 0, e2el_s = 0;
  for (size_t i = 0; i < work->n_prompts; i++) {
    in += work->prompts[i].prompt_len;
    out += work->prompts[i].output_len;
  }
  double in_ratio = in / (double)work->n_prompts / work->prompts[0].prompt_len;
  double out_ratio = out / (double)work->n_prompts / work->prompts[0].output_len;
  for (size_t i = 0; i < wr->n_records; i++) {
    ttft_s += (double)wr->records[i].ttft_ns / 1e9;
    e2el_s += (double)wr->records[i].e2el_ns / 1e9;
  }
  if (!(e2el_s > 0) || ttft_s > e2el_s)
    return out_ratio;
  return (ttft_s * in_ratio + (e2el_s - ttft_s) * out_ratio) / e2el_s;
}

/* The requests that make the load last spec->min_duration_s, estimated from the
 * warmups wr: they are copies of the first request of work, all at once, bounded
 * by max-concurrency, so ceil(warmups / conc) waves of about one request's latency
 * each (scaled from the first request to the mean one: mean_over_first); the load
 * is ceil(num_prompts / conc) such waves (or num_prompts / rate at a finite rate,
 * when that is longer). spec->num_prompts when the estimate already reaches it or
 * when nothing can be estimated; *request_s gets the latency (0: none). */
static int sized_num_prompts(const struct measure_spec *spec, const struct lg_workload *work,
                             const struct lg_result *wr, double *request_s) {
  *request_s = 0;
  int n = spec->num_prompts;
  double wall_s = (double)(wr->end_mono_ns - wr->start_mono_ns) / 1e9;
  if (spec->min_duration_s <= 0 || n <= 0 || wr->n_records == 0 || !(wall_s > 0))
    return n;
  double conc = spec->max_concurrency > 0 ? spec->max_concurrency : 0;
  double lat_s = wall_s / (conc > 0 ? ceil((double)wr->n_records / conc) : 1) *
                 mean_over_first(work, wr);
  if (!(lat_s > 0))
    return n;
  *request_s = lat_s;
  bool paced = spec->request_rate > 0 && isfinite(spec->request_rate);
  double est_s = (conc > 0 ? ceil(n / conc) : 1) * lat_s;
  if (paced)
    est_s = fmax(est_s, n / spec->request_rate);
  /* A margin over the estimate: the warmups (the first request, from a cold start)
   * stand for all the requests; on the sim they ran 0.8 to 1.25 x the load's latency. */
  double target_s = spec->min_duration_s * 1.4, need = INFINITY;
  if (est_s >= target_s)
    return n;
  if (conc > 0)
    need = ceil(target_s / lat_s) * conc;
  if (paced)
    need = fmin(need, ceil(target_s * spec->request_rate));
  /* Bounded: a first request far faster than the rest cannot blow the count up, and
   * the prompts (every body is built and held before the load) stay within
   * MEASURE_MAX_PROMPT_TOKENS input tokens, tens of MB. */
  double tokens = fmax(1, spec->input_len + spec->prefix_len);
  double cap = fmin((double)n * MEASURE_MAX_PROMPTS_FACTOR, floor(MEASURE_MAX_PROMPT_TOKENS / tokens));
  need = fmin(need, cap);
  return need > n ? (int)need : n;
}

/* ---------------------------------------------------------------- profile */
/* POST base/path with body (the reference reads the reply as a stream); the
 * HTTP status, 0 without an answer. */
static int post_status(const char *base, const char *path, const char *api_key,
                       const char *body) {
  char *url = path_join_alloc(base, path);
  struct http_request req = {.url = url, .body = body, .api = true, .api_key = api_key,
                             .timeout_ms = 600000, .discard_body = true};
  struct http_response resp = {0};
  int rc = http_do(&req, &resp, NULL);
  /* the status as it came; 0: no answer, or a 2xx cut short */
  long status = rc == 0 || resp.status < 200 || resp.status > 299 ? resp.status : 0;
  http_response_fini(&resp);
  free(url);
  return (int)status;
}

/* ---------------------------------------------------------------- the point */
static void fill_settings(const struct measure_spec *spec, struct measure_result *r,
                          const char *url) {
  struct results_settings *s = &r->settings;
  bool chat = s->chat;
  const char *endpoint = s->endpoint;
  *s = spec->report;
  s->chat = chat;
  s->endpoint = endpoint;
  s->url = url;
  s->served_model_name = spec->served_model_name;
  s->num_prompts = spec->num_prompts;
  s->request_rate = spec->request_rate;
  s->burstiness = spec->burstiness;
  s->max_concurrency = spec->max_concurrency > 0 ? spec->max_concurrency : 0;
  s->dataset_name = "random";
  s->random_input_len = spec->input_len;
  s->random_output_len = spec->output_len;
  s->random_prefix_len = spec->prefix_len;
  s->random_range_ratio = spec->range_ratio;
  s->ignore_eos = spec->ignore_eos;
  s->seed = (long)spec->seed;
  s->num_warmups = spec->num_warmups;
  s->num_workers = spec->num_workers;
  s->reuse_connections = spec->reuse_connections;
  s->vocab_size = r->vocab_size;
  s->vocab_size_source = r->vocab_size_source;
  s->calibration = r->calibrated ? &r->calibration : NULL;
  s->prompts = &r->prompts;
  s->no_tokenizer_reason = r->no_tokenizer_reason;
  s->profile = spec->profile;
  s->profile_start_status = r->profile_start_status;
  s->profile_stop_status = r->profile_stop_status;
}

int measure_point(const struct measure_spec *planned, const struct measure_hooks *hooks,
                  struct measure_result *r, struct st_err *err) {
  struct measure_spec sized = *planned; /* num_prompts: the count measured (min_duration_s) */
  const struct measure_spec *spec = &sized;
  memset(r, 0, sizeof(*r));
  r->end = MEASURE_END_FAILED;
  r->planned_num_prompts = planned->num_prompts;
  phase(hooks, MEASURE_PHASE_PROMPTS, "building %d prompts", spec->num_prompts);
  struct lg_workload work = {0}, warm = {0};
  if (build_workload(spec, hooks, r, &work, err) != 0) {
    if (cancelled(hooks))
      r->end = MEASURE_END_STOPPED;
    return -1;
  }
  char *url = path_join_alloc(spec->base_url, r->settings.endpoint);
  struct lg_config lc;
  lg_config_init(&lc);
  lc.url = url;
  lc.api_key = spec->api_key;
  lc.api = r->settings.chat ? LG_API_CHAT : LG_API_COMPLETIONS;
  lc.max_concurrency = spec->max_concurrency > 0 ? spec->max_concurrency : 0;
  lc.seed = spec->seed;
  lc.num_workers = spec->num_workers; /* LG_NUM_WORKERS_AUTO (0): loadgen decides */
  lc.reuse_connections = spec->reuse_connections;
  lc.keep_text = spec->keep_text;
  if (spec->request_timeout_s > 0)
    lc.request_timeout_s = spec->request_timeout_s;
  if (spec->drain_timeout_s > 0)
    lc.drain_timeout_s = spec->drain_timeout_s;

  enum measure_end end = MEASURE_END_DONE;
  if (spec->num_warmups > 0 && !cancelled(hooks)) {
    /* The reference's warmups: copies of the first request, all at once,
     * bounded by max-concurrency; their results are dropped. */
    phase(hooks, MEASURE_PHASE_WARMUP, "warming up with %d requests", spec->num_warmups);
    lg_workload_repeat_first(&work, (size_t)spec->num_warmups, &warm);
    struct lg_config wc = lc;
    wc.prompts = warm.prompts;
    wc.n_prompts = warm.n_prompts;
    wc.request_rate = (double)INFINITY;
    wc.keep_text = false;
    struct lg_result wr;
    end = drive(&wc, MEASURE_PHASE_WARMUP, NULL, hooks, r, &wr, err);
    if (end != MEASURE_END_FAILED) {
      for (size_t i = 0; i < wr.n_records; i++)
        r->warmups_failed += wr.records[i].failure != LG_OK;
      if (end == MEASURE_END_DONE && r->warmups_failed == 0 && !wr.interrupted)
        sized.num_prompts = sized_num_prompts(spec, &work, &wr, &r->warmup_request_s);
      lg_result_free(&wr);
    }
    lg_workload_free(&warm);
    r->n_marks = 0;
  }
  if (end == MEASURE_END_DONE && cancelled(hooks))
    end = MEASURE_END_STOPPED;
  if (end != MEASURE_END_DONE) {
    r->end = end;
    if (end != MEASURE_END_FAILED)
      err_setf(err, "stopped during the warmups: nothing measured");
    lg_workload_free(&work);
    free(url);
    return -1;
  }
  if (spec->num_prompts != planned->num_prompts) { /* the same seed, more prompts */
    phase(hooks, MEASURE_PHASE_PROMPTS, "building %d prompts (%d would last under %g s)",
          spec->num_prompts, planned->num_prompts, spec->min_duration_s);
    lg_workload_free(&work);
    if (build_workload(spec, hooks, r, &work, err) != 0) {
      r->end = cancelled(hooks) ? MEASURE_END_STOPPED : MEASURE_END_FAILED;
      free(url);
      return -1;
    }
  }

  if (spec->profile) {
    phase(hooks, MEASURE_PHASE_PROFILE_START, "starting the profiler");
    char *body = lg_workload_profile_body_alloc(&work, spec->served_model_name, true,
                                                spec->ignore_eos);
    r->profile_start_status = post_status(spec->base_url, "/start_profile", spec->api_key, body);
    free(body);
  }
  struct sig_scraper *scraper = NULL;
  if (spec->server_signals) {
    struct sig_config sc = {.base_url = spec->base_url,
                            .interval_s = spec->scrape_interval_s > 0 ? spec->scrape_interval_s : 1,
                            .timeout_s = 2.0};
    scraper = sig_scraper_start(&sc);
  }
  if (spec->num_prompts != planned->num_prompts)
    phase(hooks, MEASURE_PHASE_LOAD,
          "%d -> %d requests (warm-up: %.2f s a request; a point lasts at least %g s)",
          planned->num_prompts, spec->num_prompts, r->warmup_request_s, spec->min_duration_s);
  else
    phase(hooks, MEASURE_PHASE_LOAD, "%d requests", spec->num_prompts);
  lc.prompts = work.prompts;
  lc.n_prompts = work.n_prompts;
  lc.request_rate = spec->request_rate;
  lc.burstiness = spec->burstiness;
  lc.arrival_ns = work.arrival_ns;
  end = drive(&lc, MEASURE_PHASE_LOAD, scraper, hooks, r, &r->run, err);
  if (spec->profile && end != MEASURE_END_FAILED) {
    /* The reference stops the profiler inside the benchmark's duration, with
     * the first request's body and the model id (not the served name). */
    phase(hooks, MEASURE_PHASE_PROFILE_STOP, "stopping the profiler");
    char *body = lg_workload_profile_body_alloc(&work, spec->report.model_id, false, false);
    r->profile_stop_status = post_status(spec->base_url, "/stop_profile", spec->api_key, body);
    free(body);
    int64_t now = clock_mono_ns();
    r->run.end_unix_s += (double)(now - r->run.end_mono_ns) / 1e9;
    r->run.end_mono_ns = now;
  }
  if (scraper) {
    sig_scraper_finish(scraper, &r->signals);
    r->have_signals = true;
  }
  if (end == MEASURE_END_FAILED) {
    lg_workload_free(&work);
    free(url);
    r->end = end;
    return -1;
  }
  r->end = end;
  r->measured = true;
  phase(hooks, MEASURE_PHASE_FIGURES, "computing the figures");
  fill_settings(spec, r, url);
  results_compute(&r->run, &r->settings, &r->metrics);
  results_figures_add_signals(&r->metrics.figs, r->have_signals ? &r->signals : NULL);
  r->json = results_json_alloc(&r->run, &r->settings, &r->metrics,
                               r->have_signals ? &r->signals : NULL);
  r->url = url; /* settings.url */
  lg_workload_free(&work);
  return 0;
}

void measure_result_fini(struct measure_result *r) {
  results_metrics_fini(&r->metrics);
  lg_result_free(&r->run);
  if (r->have_signals)
    sig_summary_fini(&r->signals);
  free(r->json);
  free(r->url);
  memset(r, 0, sizeof(*r));
}

void measure_verdict(const struct measure_result *r, struct measure_verdict *out) {
  memset(out, 0, sizeof(*out));
  out->first_detail = "";
  out->num_prompts = r->settings.num_prompts;
  out->completed = r->metrics.completed;
  out->failed = r->metrics.failed;
  out->sent = out->completed + out->failed;
  out->cut_by_stop = r->metrics.cut_by_stop;
  out->failure_rate = r->metrics.failure_rate;
  out->too_many_failed = out->failure_rate > MEASURE_MAX_FAILURE_PERCENT / 100.0;
  for (size_t i = 0; i < r->run.n_records; i++) {
    const struct lg_record *rec = &r->run.records[i];
    if (rec->failure != LG_OK && !results_failure_cut_by_stop((enum lg_failure)rec->failure)) {
      out->first_failure = (enum lg_failure)rec->failure;
      out->first_detail = rec->detail ? rec->detail : "";
      break;
    }
  }
}

int measure_save(const struct measure_result *r, const char *result_dir,
                 const char *result_filename, struct st_err *err) {
  if (!r->json)
    return err_setf(err, "no result to save");
  char date[32];
  time_t end_s = (time_t)r->run.end_unix_s;
  struct tm tm;
  localtime_r(&end_s, &tm);
  strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
  char *name = result_filename ? xstrdup(result_filename)
                               : results_default_filename_alloc(&r->settings, date);
  int rc = results_save(result_dir, name, r->json, err);
  free(name);
  return rc;
}
