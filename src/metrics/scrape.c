/* Server signals during a load run: a thread that scrapes /metrics every
 * interval plus /get_server_info at both ends, and the run-scoped acceptance
 * derived from them (formulas in metrics.h). */
#include "metrics/metrics.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

struct sig_scraper {
  struct sig_config cfg;
  char *base_url;
  pthread_t thread;
  bool thread_started;
  pthread_mutex_t mu;          /* guards everything below */
  pthread_cond_t cv;
  bool stop;
  struct sig_summary sum;      /* points accumulate here */
  size_t points_cap;
  struct sig_live live;
  int64_t start_ns;
  CURL *easy;                  /* owned by whichever thread scrapes (never both) */
};

/* ---------------------------------------------------------------- HTTP */
static size_t collect(char *data, size_t size, size_t nmemb, void *userp) {
  sbuf_append(userp, data, size * nmemb);
  return size * nmemb;
}

/* GET base+path; returns the HTTP status (0 on transport failure) and the body. */
static long http_get(CURL *easy, const char *base, const char *path, double timeout_s,
                     struct sbuf *body, char *why, size_t why_len) {
  char *url = path_join_alloc(base, path);
  sbuf_reset(body);
  curl_easy_reset(easy);
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000.0));
  CURLcode rc = curl_easy_perform(easy);
  long status = 0;
  if (rc == CURLE_OK)
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK)
    snprintf(why, why_len, "GET %s: %s", url, curl_easy_strerror(rc));
  else if (status != 200)
    snprintf(why, why_len, "GET %s: HTTP %ld", url, status);
  free(url);
  return status;
}

/* ---------------------------------------------------------------- /metrics reduction */
static double sum_or_nan(const struct prom_set *set, const char *name) {
  double v;
  return prom_sum(set, name, NULL, &v) > 0 ? v : (double)NAN;
}

/* Gauges with one series per scheduler rank: the mean over ranks. */
static double mean_or_nan(const struct prom_set *set, const char *name) {
  double v;
  size_t n = prom_sum(set, name, NULL, &v);
  return n > 0 ? v / (double)n : (double)NAN;
}

void sig_point_from_prom(const struct prom_set *set, struct sig_point *out,
                         enum sig_engine *engine) {
  double t = out->t_s;
  memset(out, 0, sizeof(*out));
  out->t_s = t;
  out->avg_spec_accept_length = (double)NAN;
  for (int p = 0; p < SIG_MAX_POSITIONS; p++)
    out->accepted_per_pos_total[p] = (double)NAN;
  bool sglang = prom_find(set, "sglang:num_running_reqs", NULL) ||
                prom_find(set, "sglang:token_usage", NULL);
  bool vllm = prom_find(set, "vllm:num_requests_running", NULL) != NULL;
  if (engine && *engine == SIG_ENGINE_UNKNOWN)
    *engine = sglang ? SIG_ENGINE_SGLANG : vllm ? SIG_ENGINE_VLLM : SIG_ENGINE_UNKNOWN;
  if (sglang || !vllm) {
    out->accept_length = mean_or_nan(set, "sglang:spec_accept_length");
    out->accept_rate = mean_or_nan(set, "sglang:spec_accept_rate");
    out->kv_usage_frac = mean_or_nan(set, "sglang:token_usage");
    out->num_running = sum_or_nan(set, "sglang:num_running_reqs");
    out->num_queued = sum_or_nan(set, "sglang:num_queue_reqs");
    out->gen_tokens_total = sum_or_nan(set, "sglang:generation_tokens_total");
    out->drafts_total = out->draft_tokens_total = out->accepted_tokens_total = (double)NAN;
  } else {
    out->accept_length = out->accept_rate = (double)NAN; /* derived from deltas */
    out->kv_usage_frac = mean_or_nan(set, "vllm:kv_cache_usage_perc");
    if (isnan(out->kv_usage_frac))
      out->kv_usage_frac = mean_or_nan(set, "vllm:gpu_cache_usage_perc");
    out->num_running = sum_or_nan(set, "vllm:num_requests_running");
    out->num_queued = sum_or_nan(set, "vllm:num_requests_waiting");
    out->gen_tokens_total = sum_or_nan(set, "vllm:generation_tokens_total");
    out->drafts_total = sum_or_nan(set, "vllm:spec_decode_num_drafts_total");
    out->draft_tokens_total = sum_or_nan(set, "vllm:spec_decode_num_draft_tokens_total");
    out->accepted_tokens_total = sum_or_nan(set, "vllm:spec_decode_num_accepted_tokens_total");
    for (int p = 0; p < SIG_MAX_POSITIONS; p++) {
      char pos[8];
      snprintf(pos, sizeof(pos), "%d", p);
      double v;
      if (prom_sum(set, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                   (prom_match){"position", pos, NULL}, &v) > 0)
        out->accepted_per_pos_total[p] = v;
    }
  }
}

/* ---------------------------------------------------------------- /get_server_info */
static int json_int_or(const cJSON *obj, const char *key, int fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? (int)v->valuedouble : fallback;
}

/* Reads the fields servetop uses; returns avg_spec_accept_length (mean over
 * DP ranks) or NaN. */
static double read_server_info(struct sig_summary *sum, const char *text, size_t len) {
  cJSON *json = cJSON_ParseWithLength(text, len);
  if (!cJSON_IsObject(json)) {
    cJSON_Delete(json);
    snprintf(sum->server_info_unavailable_reason, sizeof(sum->server_info_unavailable_reason),
             "server info is not a JSON object");
    return (double)NAN;
  }
  sum->server_info_available = true;
  sum->server_info_unavailable_reason[0] = '\0';
  if (sum->engine == SIG_ENGINE_UNKNOWN)
    sum->engine = SIG_ENGINE_SGLANG; /* only SGLang serves /get_server_info */
  const cJSON *algo = cJSON_GetObjectItemCaseSensitive(json, "speculative_algorithm");
  sum->spec_enabled_valid = true;
  sum->spec_enabled = cJSON_IsString(algo) && algo->valuestring[0] &&
                      strcmp(algo->valuestring, "NONE") != 0;
  snprintf(sum->spec_algorithm, sizeof(sum->spec_algorithm), "%s",
           sum->spec_enabled ? algo->valuestring : "");
  sum->spec_num_steps = json_int_or(json, "speculative_num_steps", -1);
  sum->spec_num_draft_tokens = json_int_or(json, "speculative_num_draft_tokens", -1);
  sum->stream_interval = json_int_or(json, "stream_interval", -1);
  double total = 0;
  int n = 0;
  const cJSON *states = cJSON_GetObjectItemCaseSensitive(json, "internal_states");
  const cJSON *st;
  cJSON_ArrayForEach(st, states) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, "avg_spec_accept_length");
    if (cJSON_IsNumber(v)) {
      total += v->valuedouble;
      n++;
    }
  }
  cJSON_Delete(json);
  return n > 0 ? total / n : (double)NAN;
}

/* ---------------------------------------------------------------- scraping */
static void append_point(struct sig_scraper *s, const struct sig_point *pt) {
  struct sig_summary *sum = &s->sum;
  if (sum->n_points == s->points_cap) {
    s->points_cap = s->points_cap ? s->points_cap * 2 : 64;
    sum->points = xreallocarray(sum->points, s->points_cap, sizeof(*sum->points));
  }
  sum->points[sum->n_points++] = *pt;
}

/* One /metrics scrape (+ server info at the ends). Runs without the lock held
 * for the network part. */
static void scrape_once(struct sig_scraper *s, bool with_server_info) {
  struct sbuf body = {0};
  char why[160] = "";
  struct sig_point pt;
  memset(&pt, 0, sizeof(pt));
  pt.t_s = (double)(clock_mono_ns() - s->start_ns) / 1e9;
  long status = http_get(s->easy, s->base_url, "/metrics", s->cfg.timeout_s, &body, why,
                         sizeof(why));
  bool got_metrics = false;
  struct prom_set set;
  memset(&set, 0, sizeof(set));
  if (status == 200) {
    prom_parse(body.data, body.len, &set);
    got_metrics = set.n_samples > 0;
    if (!got_metrics)
      snprintf(why, sizeof(why), "/metrics answered without samples");
  }
  double info_accept = (double)NAN;
  char info_why[160] = "";
  struct sbuf info = {0};
  bool info_ok = false;
  if (with_server_info) {
    long st = http_get(s->easy, s->base_url, "/get_server_info", s->cfg.timeout_s, &info,
                       info_why, sizeof(info_why));
    if (st == 404)
      st = http_get(s->easy, s->base_url, "/server_info", s->cfg.timeout_s, &info, info_why,
                    sizeof(info_why));
    info_ok = st == 200;
  }

  pthread_mutex_lock(&s->mu);
  struct sig_summary *sum = &s->sum;
  sum->n_scrapes++;
  if (got_metrics) {
    sig_point_from_prom(&set, &pt, &sum->engine);
    sum->metrics_available = true;
    sum->n_prom_malformed += set.n_malformed;
  } else {
    sum->n_scrape_failures++;
    if (!sum->metrics_available)
      snprintf(sum->metrics_unavailable_reason, sizeof(sum->metrics_unavailable_reason), "%s",
               why);
  }
  if (with_server_info) {
    if (info_ok)
      info_accept = read_server_info(sum, info.data ? info.data : "", info.len);
    else if (!sum->server_info_available)
      snprintf(sum->server_info_unavailable_reason, sizeof(sum->server_info_unavailable_reason),
               "%s", info_why);
  }
  if (got_metrics || with_server_info) {
    if (!got_metrics) { /* a point that carries only the server-info value */
      double t = pt.t_s;
      sig_point_from_prom(&set, &pt, NULL);
      pt.t_s = t;
      pt.gen_tokens_total = (double)NAN;
    }
    pt.avg_spec_accept_length = info_accept;
    append_point(s, &pt);
  }
  if (got_metrics) {
    s->live.valid = true;
    s->live.accept_length = pt.accept_length;
    s->live.accept_rate = pt.accept_rate;
    s->live.kv_usage_frac = pt.kv_usage_frac;
    s->live.num_running = pt.num_running;
    s->live.num_queued = pt.num_queued;
    if (sum->engine == SIG_ENGINE_VLLM && sum->n_points >= 2) {
      const struct sig_point *a = &sum->points[sum->n_points - 2];
      double drafts = pt.drafts_total - a->drafts_total;
      if (drafts > 0) {
        s->live.accept_length = 1.0 + (pt.accepted_tokens_total - a->accepted_tokens_total) / drafts;
        s->live.accept_rate = (pt.accepted_tokens_total - a->accepted_tokens_total) /
                              (pt.draft_tokens_total - a->draft_tokens_total);
      }
    }
  }
  pthread_mutex_unlock(&s->mu);
  prom_set_free(&set);
  sbuf_free(&body);
  sbuf_free(&info);
}

static void *scraper_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-scrape"); /* shows in top -H and /proc */
  struct sig_scraper *s = arg;
  scrape_once(s, true);
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    int64_t ns = (int64_t)(s->cfg.interval_s * 1e9);
    deadline.tv_sec += ns / 1000000000;
    deadline.tv_nsec += ns % 1000000000;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000;
    }
    while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &deadline) == 0)
      ;
    if (s->stop)
      break;
    pthread_mutex_unlock(&s->mu);
    scrape_once(s, false);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

struct sig_scraper *sig_scraper_start(const struct sig_config *cfg) {
  struct sig_scraper *s = xcalloc(1, sizeof(*s));
  s->cfg = *cfg;
  if (!(s->cfg.interval_s > 0))
    s->cfg.interval_s = 1.0;
  if (!(s->cfg.timeout_s > 0))
    s->cfg.timeout_s = 2.0;
  s->base_url = xstrdup(cfg->base_url);
  s->cfg.base_url = s->base_url;
  s->start_ns = clock_mono_ns();
  s->easy = curl_easy_init();
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &attr);
  pthread_condattr_destroy(&attr);
  /* Signals stay with the main thread (its SIGINT handler may touch state
   * this thread does not own). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  s->thread_started = s->easy && pthread_create(&s->thread, NULL, scraper_main, s) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!s->thread_started)
    snprintf(s->sum.metrics_unavailable_reason, sizeof(s->sum.metrics_unavailable_reason),
             "could not start the scraper");
  return s;
}

void sig_scraper_live(struct sig_scraper *s, struct sig_live *out) {
  pthread_mutex_lock(&s->mu);
  *out = s->live;
  pthread_mutex_unlock(&s->mu);
}

void sig_scraper_finish(struct sig_scraper *s, struct sig_summary *out) {
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (s->thread_started) {
    pthread_join(s->thread, NULL);
    scrape_once(s, true); /* the "end" point */
  }
  sig_summarize_points(&s->sum);
  *out = s->sum;
  if (s->easy)
    curl_easy_cleanup(s->easy);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s->base_url);
  free(s);
}

void sig_summary_fini(struct sig_summary *sum) {
  free(sum->points);
  memset(sum, 0, sizeof(*sum));
}

/* ---------------------------------------------------------------- run-scoped acceptance */
void sig_summarize_points(struct sig_summary *sum) {
  sum->accept_length_valid = sum->accept_rate_valid = false;
  sum->n_positions = 0;
  if (sum->n_points == 0)
    return;
  const struct sig_point *first = &sum->points[0], *last = &sum->points[sum->n_points - 1];
  if (!isnan(first->avg_spec_accept_length)) {
    sum->server_info_accept_length_start_valid = true;
    sum->server_info_accept_length_start = first->avg_spec_accept_length;
  }
  if (sum->n_points > 1 && !isnan(last->avg_spec_accept_length)) {
    sum->server_info_accept_length_end_valid = true;
    sum->server_info_accept_length_end = last->avg_spec_accept_length;
  }
  if (sum->n_points < 2)
    return;

  if (sum->engine == SIG_ENGINE_VLLM) {
    double drafts = last->drafts_total - first->drafts_total;
    double draft_tokens = last->draft_tokens_total - first->draft_tokens_total;
    double accepted = last->accepted_tokens_total - first->accepted_tokens_total;
    if (drafts > 0) {
      sum->accept_length_valid = true;
      sum->accept_length = 1.0 + accepted / drafts;
      sum->accept_length_method = "vllm_counter_deltas";
      for (int p = 0; p < SIG_MAX_POSITIONS; p++) {
        double d = last->accepted_per_pos_total[p] - first->accepted_per_pos_total[p];
        if (isnan(d))
          break;
        sum->per_position_rate[p] = d / drafts;
        sum->n_positions = p + 1;
      }
    }
    if (draft_tokens > 0) {
      sum->accept_rate_valid = true;
      sum->accept_rate = accepted / draft_tokens;
      sum->accept_rate_method = "vllm_counter_deltas";
    }
    return;
  }

  /* SGLang, best source first: cumulative server-info average and the
   * generation-token counter at both ends. */
  double g0 = first->gen_tokens_total, g1 = last->gen_tokens_total;
  double l0 = first->avg_spec_accept_length, l1 = last->avg_spec_accept_length;
  if (!isnan(g0) && !isnan(g1) && !isnan(l1) && l1 > 0 && g1 > g0) {
    double steps0 = (!isnan(l0) && l0 > 0) ? g0 / l0 : 0.0; /* none before: no steps */
    double steps = g1 / l1 - steps0;
    if (steps > 0) {
      sum->accept_length_valid = true;
      sum->accept_length = (g1 - g0) / steps;
      sum->accept_length_method = "sglang_server_info_cumulative_delta";
    }
  }
  /* Gauges over the scrapes inside the run, weighted by tokens generated. */
  double w_len = 0, acc_len = 0, w_rate = 0, acc_rate = 0;
  for (size_t i = 1; i < sum->n_points; i++) {
    const struct sig_point *a = &sum->points[i - 1], *b = &sum->points[i];
    double dg = b->gen_tokens_total - a->gen_tokens_total;
    if (isnan(dg) || dg <= 0)
      continue;
    if (!isnan(b->accept_length) && b->accept_length > 0) {
      acc_len += b->accept_length * dg;
      w_len += dg;
    }
    if (!isnan(b->accept_rate) && b->accept_rate > 0) {
      acc_rate += b->accept_rate * dg;
      w_rate += dg;
    }
  }
  if (!sum->accept_length_valid && w_len > 0) {
    sum->accept_length_valid = true;
    sum->accept_length = acc_len / w_len;
    sum->accept_length_method = "sglang_metrics_gauge_weighted";
  }
  if (w_rate > 0) {
    sum->accept_rate_valid = true;
    sum->accept_rate = acc_rate / w_rate;
    sum->accept_rate_method = "sglang_metrics_gauge_weighted";
  }
}
