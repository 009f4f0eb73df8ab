/* Server signals during a load run: a thread that scrapes /metrics every
 * interval plus the server info at both ends, and the run-scoped acceptance
 * derived from them with the engine's reader (formulas in engine.h); the
 * HTTP and Prometheus helpers the readers share. */
#include "engine/engine_internal.h"

#include "http/http.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


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
  bool info_every_scrape;      /* the start point's server info had a cumulative acceptance */
  int64_t start_ns;
  struct http_conn *conn;      /* kept alive; owned by whichever thread scrapes (never both) */
};

/* ---------------------------------------------------------------- HTTP */
/* GET base+path on conn (NULL: a handle of its own); returns the HTTP status
 * when the reply came whole (0 on transport failure), the body, and why it was
 * not 200 in why. */
static long http_get(struct http_conn *conn, const char *base, const char *path,
                     double timeout_s, struct sbuf *body, char *why, size_t why_len) {
  char *url = path_join_alloc(base, path);
  struct http_request req = {.url = url, .timeout_ms = (int64_t)(timeout_s * 1000.0),
                             .expect_status = 200};
  struct http_response resp = {0};
  struct st_err err = {{0}};
  int rc = conn ? http_conn_do(conn, &req, &resp, &err) : http_do(&req, &resp, &err);
  long status = rc == 0 || (resp.status != 0 && resp.status != 200) ? resp.status : 0;
  if (rc != 0)
    snprintf(why, why_len, "%s", err.msg);
  sbuf_free(body);
  *body = resp.body; /* the caller's now */
  free(url);
  return status;
}

char *eng_http_get_alloc(const char *base_url, const char *path, double timeout_s, long *status,
                         struct st_err *err) {
  struct sbuf body = {0};
  char why[sizeof(err->msg)] = "";
  *status = http_get(NULL, base_url, path, timeout_s, &body, why, sizeof(why));
  if (*status != 200) {
    err_setf(err, "%s", why);
    sbuf_free(&body);
    return NULL;
  }
  sbuf_reserve(&body, 1);
  return sbuf_take(&body);
}

/* ---------------------------------------------------------------- /metrics reduction */
double eng_prom_sum(const struct prom_set *set, const char *name) {
  double v;
  return prom_sum(set, name, NULL, &v) > 0 ? v : (double)NAN;
}

/* Gauges with one series per scheduler rank: the mean over ranks. */
double eng_prom_mean(const struct prom_set *set, const char *name) {
  double v;
  size_t n = prom_sum(set, name, NULL, &v);
  return n > 0 ? v / (double)n : (double)NAN;
}

void eng_prom_per_position(const struct prom_set *set, const char *name, double *per_pos,
                           int n) {
  for (int p = 0; p < n; p++) {
    char pos[16];
    snprintf(pos, sizeof(pos), "%d", p);
    double v;
    per_pos[p] = prom_sum(set, name, (prom_match){"position", pos, NULL}, &v) > 0 ? v : (double)NAN;
  }
}

static void point_clear(struct sig_point *out) {
  double t = out->t_s;
  memset(out, 0, sizeof(*out));
  out->t_s = t;
  out->accept_length = out->accept_rate = out->kv_usage_frac = (double)NAN;
  out->num_running = out->num_queued = out->gen_tokens_total = (double)NAN;
  out->drafts_total = out->draft_tokens_total = out->accepted_tokens_total = (double)NAN;
  out->avg_spec_accept_length = (double)NAN;
  for (int p = 0; p < SIG_MAX_POSITIONS; p++)
    out->accepted_per_pos_total[p] = (double)NAN;
}

/* The engine whose /metrics names set carries, or NULL. */
static const struct eng_ops *metrics_engine(const struct prom_set *set) {
  for (size_t i = 0; i < eng_count(); i++)
    if (eng_at(i)->owns_metrics && eng_at(i)->owns_metrics(set))
      return eng_at(i);
  return NULL;
}

void sig_point_from_prom(const struct prom_set *set, struct sig_point *out,
                         const struct eng_ops **engine) {
  point_clear(out);
  const struct eng_ops *e = metrics_engine(set);
  if (engine && !*engine)
    *engine = e;
  if (e && e->read_metrics)
    e->read_metrics(set, out);
}

/* ---------------------------------------------------------------- server info */
void eng_server_info_init(struct eng_server_info *info) {
  memset(info, 0, sizeof(*info));
  info->spec_num_steps = info->spec_num_draft_tokens = info->stream_interval = -1;
  info->avg_spec_accept_length = (double)NAN;
  info->kv_capacity_tokens = info->kv_per_slot_tokens = -1;
  info->batch_cap = -1;
}

int eng_query_server_info(const struct eng_ops *e, const char *base_url, double timeout_s,
                          struct eng_server_info *info, struct st_err *err) {
  eng_server_info_init(info);
  if (!e || !e->query_info)
    return err_setf(err, "%s has no server-info endpoint", e ? e->title : "the server");
  if (e->query_info(base_url, timeout_s, info, err) != 0) {
    eng_server_info_init(info);
    return -1;
  }
  return 0;
}

/* The server info of the engine told by /metrics; while it is unknown, of
 * each engine that has an info endpoint until one answers. */
static int query_any_info(const struct eng_ops **engine, const char *base_url, double timeout_s,
                          struct eng_server_info *info, struct st_err *err) {
  if (*engine)
    return eng_query_server_info(*engine, base_url, timeout_s, info, err);
  int rc = err_setf(err, "no server-info endpoint answered");
  for (size_t i = 0; i < eng_count() && rc != 0; i++) {
    const struct eng_ops *e = eng_at(i);
    if (!e->query_info || e->simulated) /* the sim's endpoint is SGLang's */
      continue;
    bool tried = false;
    for (size_t k = 0; k < i && !tried; k++)
      tried = !eng_at(k)->simulated && eng_at(k)->query_info == e->query_info;
    if (tried)
      continue;
    rc = eng_query_server_info(e, base_url, timeout_s, info, err);
    if (rc == 0)
      *engine = e;
  }
  return rc;
}

const struct eng_ops *eng_detect(const char *base_url, double timeout_s, char *how,
                                 size_t how_bytes) {
  long status = 0;
  struct st_err err = {{0}};
  char *body = eng_http_get_alloc(base_url, "/metrics", timeout_s, &status, &err);
  const struct eng_ops *e = NULL;
  if (body && status == 200) {
    struct prom_set set;
    memset(&set, 0, sizeof(set));
    prom_parse(body, strlen(body), &set);
    e = metrics_engine(&set);
    prom_set_free(&set);
    if (e)
      snprintf(how, how_bytes, "from its /metrics names (%s)", e->title);
  }
  free(body);
  struct eng_server_info info;
  struct st_err info_err = {{0}};
  const struct eng_ops *by_info = e;
  bool info_ok = query_any_info(&by_info, base_url, timeout_s, &info, &info_err) == 0;
  if (!e && info_ok) {
    e = by_info;
    snprintf(how, how_bytes, "from its server-info endpoint (%s; no /metrics names)", e->title);
  }
  if (e && info_ok && info.simulated) {
    e = eng_sim();
    snprintf(how, how_bytes, "it says it is servetop sim");
  }
  if (!e) {
    char metrics[200];
    if (status == 200)
      snprintf(metrics, sizeof metrics, "/metrics has no engine's names");
    else if (status)
      snprintf(metrics, sizeof metrics, "/metrics answered HTTP %ld", status);
    else
      snprintf(metrics, sizeof metrics, "/metrics: %.150s", err.msg);
    snprintf(how, how_bytes, "unknown engine: %s, and no server-info endpoint answered", metrics);
  }
  return e;
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

/* Folds what the server info says into the summary (lock held). */
static void add_server_info(struct sig_summary *sum, const struct eng_server_info *info) {
  sum->server_info_available = true;
  sum->server_info_unavailable_reason[0] = '\0';
  if (info->simulated)
    sum->simulated = true;
  if (info->spec_valid) {
    sum->spec_enabled_valid = true;
    sum->spec_enabled = info->spec_on;
    snprintf(sum->spec_algorithm, sizeof(sum->spec_algorithm), "%s", info->spec_algorithm);
  }
  sum->spec_num_steps = info->spec_num_steps;
  sum->spec_num_draft_tokens = info->spec_num_draft_tokens;
  sum->stream_interval = info->stream_interval;
}

/* The run-scoped acceptance over the points so far, by the final summary's
 * own function (lock held; the copy shares the points, read only). */
static void live_run_scoped(struct sig_scraper *s) {
  struct sig_summary so_far = s->sum;
  sig_summarize_points(&so_far);
  struct sig_live *l = &s->live;
  l->run_accept_length_valid = so_far.accept_length_valid;
  l->run_accept_length = so_far.accept_length;
  l->run_accept_length_method = so_far.accept_length_method;
  l->run_accept_rate_valid = so_far.accept_rate_valid;
  l->run_accept_rate = so_far.accept_rate;
  l->run_accept_rate_method = so_far.accept_rate_method;
  l->run_n_positions = so_far.n_positions;
  memcpy(l->run_per_position_rate, so_far.per_position_rate, sizeof(l->run_per_position_rate));
  l->run_span_s = s->sum.points[s->sum.n_points - 1].t_s - s->sum.points[0].t_s;
}

/* One /metrics scrape (+ server info at the ends, or at every scrape). Runs without the lock held
 * for the network part; only the scraping thread (or, before the thread and
 * after it is joined, the caller) writes sum->engine. */
static void scrape_once(struct sig_scraper *s, bool with_server_info) {
  struct sbuf body = {0};
  char why[160] = "";
  struct sig_point pt;
  memset(&pt, 0, sizeof(pt));
  int64_t asked_ns = clock_mono_ns();
  pt.t_s = (double)(asked_ns - s->start_ns) / 1e9;
  long status = http_get(s->conn, s->base_url, "/metrics", s->cfg.timeout_s, &body, why,
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
  const struct eng_ops *engine = s->sum.engine;
  sig_point_from_prom(&set, &pt, &engine); /* no samples: a point of NaNs */
  if (!got_metrics)
    engine = s->sum.engine;
  else if (engine && engine->read_live)
    engine->read_live(s->base_url, s->cfg.timeout_s, &pt);
  struct eng_server_info info;
  struct st_err info_err = {{0}};
  bool info_ok = with_server_info &&
                 query_any_info(&engine, s->base_url, s->cfg.timeout_s, &info, &info_err) == 0;

  pthread_mutex_lock(&s->mu);
  struct sig_summary *sum = &s->sum;
  sum->n_scrapes++;
  if (!sum->engine)
    sum->engine = engine;
  if (got_metrics) {
    sum->metrics_available = true;
    sum->n_prom_malformed += set.n_malformed;
  } else {
    sum->n_scrape_failures++;
    if (!sum->metrics_available)
      snprintf(sum->metrics_unavailable_reason, sizeof(sum->metrics_unavailable_reason), "%s",
               why);
  }
  if (info_ok)
    add_server_info(sum, &info);
  else if (with_server_info && !sum->server_info_available)
    snprintf(sum->server_info_unavailable_reason, sizeof(sum->server_info_unavailable_reason),
             "%.159s", info_err.msg);
  if (got_metrics || with_server_info) {
    pt.avg_spec_accept_length = info_ok ? info.avg_spec_accept_length : (double)NAN;
    if (sum->n_points == 0) {
      sum->first_mono_ns = asked_ns;
      s->info_every_scrape = !isnan(pt.avg_spec_accept_length);
    }
    sum->last_mono_ns = asked_ns;
    append_point(s, &pt);
    live_run_scoped(s);
  }
  if (got_metrics) {
    s->live.valid = true;
    s->live.accept_length = pt.accept_length;
    s->live.accept_rate = pt.accept_rate;
    s->live.kv_usage_frac = pt.kv_usage_frac;
    s->live.num_running = pt.num_running;
    s->live.num_queued = pt.num_queued;
    if (sum->engine && sum->engine->accept_from_counters && sum->n_points >= 2) {
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
}

static void *scraper_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-scrape"); /* shows in top -H and /proc */
  struct sig_scraper *s = arg;
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
    bool info = s->info_every_scrape;
    pthread_mutex_unlock(&s->mu);
    scrape_once(s, info);
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
  s->conn = http_conn_new();
  pthread_mutex_init(&s->mu, NULL);
  clock_cond_init_mono(&s->cv);
  scrape_once(s, true); /* the "start" point, before the caller starts any load */
  /* Signals stay with the main thread (its SIGINT handler may touch state
   * this thread does not own). */
  s->thread_started = thread_start_unsignalled(&s->thread, scraper_main, s);
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
  http_conn_free(s->conn);
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
  sum->accept_length_valid = sum->accept_rate_valid = sum->counter_deltas_valid = false;
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

  if (sum->engine && sum->engine->summarize)
    sum->engine->summarize(sum);
}

void sig_summarize_counters(struct sig_summary *sum, const char *method) {
  const struct sig_point *first = &sum->points[0], *last = &sum->points[sum->n_points - 1];
  double drafts = last->drafts_total - first->drafts_total;
  double draft_tokens = last->draft_tokens_total - first->draft_tokens_total;
  double accepted = last->accepted_tokens_total - first->accepted_tokens_total;
  sum->counter_deltas_valid = !isnan(drafts) && !isnan(draft_tokens) && !isnan(accepted);
  sum->drafts_delta = drafts;
  sum->draft_tokens_delta = draft_tokens;
  sum->accepted_tokens_delta = accepted;
  if (drafts > 0) {
    sum->accept_length_valid = true;
    sum->accept_length = 1.0 + accepted / drafts;
    sum->accept_length_method = method;
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
    sum->accept_rate_method = method;
  }
}
