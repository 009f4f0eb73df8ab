/* Figures, summary and result JSON as benchmark_serving.py makes them
 * (reference/server-protocol.md A.4 and A.9), plus servetop's own section. */
#include "results/results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const metric_names[RESULTS_N_METRICS] = {"ttft", "tpot", "itl", "e2el"};
static const char *const metric_labels[RESULTS_N_METRICS] = {"TTFT", "TPOT", "ITL", "E2EL"};
static const char *const metric_headers[RESULTS_N_METRICS] = {
    "Time to First Token", "Time per Output Token (excl. 1st token)", "Inter-token Latency",
    "End-to-end Latency"};

const char *results_metric_name(enum results_metric_id id) {
  return id < RESULTS_N_METRICS ? metric_names[id] : "?";
}

/* ---------------------------------------------------------------- option parsing */
static int metric_by_name(const char *name, size_t len) {
  for (int i = 0; i < RESULTS_N_METRICS; i++)
    if (strlen(metric_names[i]) == len && strncmp(metric_names[i], name, len) == 0)
      return i;
  return -1;
}

int results_parse_percentile_metrics(const char *list, struct results_settings *s,
                                     struct st_err *err) {
  bool selected[RESULTS_N_METRICS] = {false};
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    int m = metric_by_name(p, len);
    if (m < 0)
      return err_setf(err, "--percentile-metrics: unknown metric '%.*s' (ttft, tpot, itl, e2el)",
                      (int)len, p);
    selected[m] = true;
    p += len + (comma ? 1 : 0);
  }
  memcpy(s->selected, selected, sizeof(selected));
  return 0;
}

int results_parse_metric_percentiles(const char *list, struct results_settings *s,
                                     struct st_err *err) {
  char *copy = xstrdup(list);
  size_t n = 0;
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    double v;
    if (parse_double(str_trim(tok), &v) != 0 || !(v >= 0 && v <= 100)) {
      rc = err_setf(err, "--metric-percentiles: '%s' is not a percentile in [0, 100]", tok);
      break;
    }
    if (n == RESULTS_MAX_PERCENTILES) {
      rc = err_setf(err, "--metric-percentiles: at most %d values", RESULTS_MAX_PERCENTILES);
      break;
    }
    s->percentiles[n++] = v;
  }
  if (rc == 0)
    s->n_percentiles = n;
  free(copy);
  return rc;
}

int results_parse_goodput(const char *item, struct results_settings *s, struct st_err *err) {
  const char *colon = strchr(item, ':');
  if (!colon)
    return err_setf(err, "--goodput: '%s' is not KEY:VALUE (e.g. ttft:100)", item);
  int m = metric_by_name(item, (size_t)(colon - item));
  if (m < 0 || m == RESULTS_ITL)
    return err_setf(err, "--goodput: invalid metric in '%s' (ttft, tpot, e2el)", item);
  double v;
  if (parse_double(colon + 1, &v) != 0 || v < 0)
    return err_setf(err, "--goodput: invalid value in '%s' (milliseconds, >= 0)", item);
  if (!s->goodput_set) {
    for (int i = 0; i < RESULTS_N_METRICS; i++)
      s->goodput_slo_ms[i] = -1;
  }
  s->goodput_set = true;
  s->goodput_slo_ms[m] = v;
  return 0;
}

/* ---------------------------------------------------------------- computing */
/* The figure of the model from the same sorted values: mean, median (p50),
 * p90, p99, each as the result computes it, times scale. */
static void fig_from_sorted(struct fig_value *f, const double *sorted, size_t n,
                            const struct stats_summary *sum, double scale) {
  if (!f)
    return;
  f->valid = n > 0;
  f->n = (int64_t)n;
  f->v[FIG_STAT_MEAN] = sum->mean * scale;
  f->v[FIG_STAT_P50] = sum->median * scale;
  f->v[FIG_STAT_P90] = stats_percentile_sorted(sorted, n, 90.0) * scale;
  f->v[FIG_STAT_P99] = stats_percentile_sorted(sorted, n, 99.0) * scale;
}

static void summarize_fig(double *values_ms, size_t n, const struct results_settings *s,
                          struct results_stat *out, struct fig_value *fig, double fig_scale) {
  struct stats_summary sum;
  stats_summarize(values_ms, n, &sum);
  memset(out, 0, sizeof(*out));
  out->n = n;
  out->mean_ms = sum.mean;
  out->median_ms = sum.median;
  out->std_ms = sum.std;
  out->max_ms = sum.max;
  for (size_t i = 0; i < s->n_percentiles; i++)
    out->percentile_ms[i] = stats_percentile_sorted(values_ms, n, s->percentiles[i]);
  fig_from_sorted(fig, values_ms, n, &sum, fig_scale);
}

static void summarize_ms(double *values_ms, size_t n, const struct results_settings *s,
                         struct results_stat *out) {
  summarize_fig(values_ms, n, s, out, NULL, 1.0);
}

/* The reference's figures: numpy statistics of the values in seconds, in
 * request order, then * 1000 (np.mean(ttfts) * 1000, not the mean of ms). */
static void summarize_s_as_ms(double *values_s, size_t n, const struct results_settings *s,
                              struct results_stat *out, struct fig_value *fig) {
  summarize_fig(values_s, n, s, out, fig, 1000.0);
  out->mean_ms *= 1000.0;
  out->median_ms *= 1000.0;
  out->std_ms *= 1000.0;
  out->max_ms *= 1000.0;
  for (size_t i = 0; i < s->n_percentiles; i++)
    out->percentile_ms[i] *= 1000.0;
}

static double record_tpot_s(const struct lg_record *r) {
  if (r->output_tokens <= 1)
    return 0.0;
  return ((double)(r->e2el_ns - r->ttft_ns) / 1e9) / (double)(r->output_tokens - 1);
}

struct second_value {
  int64_t second;
  double value;
};

static int cmp_second_value(const void *pa, const void *pb) {
  const struct second_value *a = pa, *b = pb;
  if (a->second != b->second)
    return (a->second > b->second) - (a->second < b->second);
  return (a->value > b->value) - (a->value < b->value);
}

/* p50 of each second's values (pairs sorted by second, then value). */
static void fill_second_medians(struct second_value *pairs, size_t n, struct results_second *secs,
                                size_t n_secs, bool tpot) {
  qsort(pairs, n, sizeof(*pairs), cmp_second_value);
  double *tmp = xcalloc(n + 1, sizeof(*tmp));
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && pairs[j].second == pairs[i].second) {
      tmp[j - i] = pairs[j].value;
      j++;
    }
    if (pairs[i].second >= 0 && (size_t)pairs[i].second < n_secs) {
      double med = stats_percentile_sorted(tmp, j - i, 50.0);
      if (tpot)
        secs[pairs[i].second].tpot_p50_ms = med;
      else
        secs[pairs[i].second].ttft_p50_ms = med;
    }
    i = j;
  }
  free(tmp);
}

/* Adds a completed request's output tokens to bins[t / bin_ns] (t from the first dispatch;
 * later than the last bin: the last) by chunk arrival, its tokens spread evenly over its
 * token-carrying chunks (a finish-only last chunk without text has none): fig_spread_tokens,
 * the rule the live window uses too. */
static void spread_output_tokens(const struct lg_record *r, int64_t bin_ns, size_t n_bins,
                                 int64_t *bins) {
  uint32_t n_chunks = r->n_chunk_gaps + 1;
  uint32_t carrying = (r->flags & LG_REC_LAST_CHUNK_NO_TOKEN) && n_chunks > 1 ? n_chunks - 1
                                                                             : n_chunks;
  int64_t t_ns = r->dispatch_ns + r->ttft_ns;
  for (uint32_t c = 0; c < carrying; c++) {
    if (c > 0)
      t_ns += (int64_t)r->chunk_gaps_us[c - 1] * 1000;
    size_t b = t_ns > 0 ? (size_t)(t_ns / bin_ns) : 0;
    bins[b < n_bins ? b : n_bins - 1] += fig_spread_tokens(r->output_tokens, carrying, c, c + 1);
  }
}

static void compute_seconds(const struct lg_result *run, struct results_metrics *m) {
  int64_t span_ns = run->end_mono_ns - run->start_mono_ns;
  size_t n_secs = (size_t)(span_ns > 0 ? (span_ns + 999999999) / 1000000000 : 1);
  for (size_t i = 0; i < run->n_records; i++) { /* failures may end later than successes */
    const struct lg_record *r = &run->records[i];
    if (r->failure != LG_FAIL_NOT_SENT && r->dispatch_ns / 1000000000 + 1 > (int64_t)n_secs)
      n_secs = (size_t)(r->dispatch_ns / 1000000000 + 1);
  }
  struct results_second *secs = xcalloc(n_secs, sizeof(*secs));
  struct second_value *ttfts = xcalloc(run->n_records + 1, sizeof(*ttfts));
  struct second_value *tpots = xcalloc(run->n_records + 1, sizeof(*tpots));
  int64_t *tokens = xcalloc(n_secs, sizeof(*tokens));
  size_t n_ttft = 0, n_tpot = 0;
  for (size_t i = 0; i < run->n_records; i++) {
    const struct lg_record *r = &run->records[i];
    if (r->failure == LG_FAIL_NOT_SENT)
      continue;
    size_t sd = (size_t)(r->dispatch_ns / 1000000000);
    secs[sd < n_secs ? sd : n_secs - 1].dispatched++;
    if (r->failure != LG_OK) {
      if (!results_failure_cut_by_stop((enum lg_failure)r->failure))
        secs[sd < n_secs ? sd : n_secs - 1].failed++;
      continue;
    }
    int64_t done_ns = r->dispatch_ns + r->e2el_ns;
    size_t sc = (size_t)(done_ns / 1000000000);
    if (sc >= n_secs)
      sc = n_secs - 1;
    secs[sc].completed++;
    ttfts[n_ttft++] = (struct second_value){(int64_t)sc, (double)r->ttft_ns / 1e6};
    if (r->output_tokens > 1)
      tpots[n_tpot++] = (struct second_value){(int64_t)sc, record_tpot_s(r) * 1e3};
    spread_output_tokens(r, 1000000000, n_secs, tokens);
  }
  for (size_t i = 0; i < n_secs; i++)
    secs[i].output_tokens = tokens[i];
  free(tokens);
  fill_second_medians(ttfts, n_ttft, secs, n_secs, false);
  fill_second_medians(tpots, n_tpot, secs, n_secs, true);
  free(ttfts);
  free(tpots);
  m->seconds = secs;
  m->n_seconds = n_secs;
}

/* ---------------------------------------------------------------- how sure
 * The 95% intervals of the figures a choice rests on (docs/figures.md, "How sure"). */
static const double ci_quantiles[FIG_N_STATS] = {[FIG_STAT_P50] = 0.50, [FIG_STAT_P90] = 0.90,
                                                 [FIG_STAT_P99] = 0.99};

/* The mean's interval by batch means over the items in dispatch order (weights: NULL, or
 * each item's count when values are sums), times scale. Before the summaries sort values. */
static void mean_ci(const double *values, const double *weights, size_t n, double scale,
                    struct fig_value *f) {
  double den = weights ? stats_sum(weights, n) : (double)n;
  double lo, hi;
  if (n > 0 && den > 0 &&
      ci_mean_batched(values, weights, n, stats_sum(values, n) / den, &lo, &hi)) {
    f->lo[FIG_STAT_MEAN] = lo * scale;
    f->hi[FIG_STAT_MEAN] = hi * scale;
  }
}

/* A copy of values in dispatch order, for quantile_cis once the summaries sorted values. */
static double *ordered_copy(const double *values, size_t n) {
  double *c = xcalloc(n + 1, sizeof(*c));
  memcpy(c, values, n * sizeof(*c));
  return c;
}

/* p50, p90, p99's intervals, times scale: the wider of the order statistics of the sorted
 * values (for n_eff independent requests; 0: every value is one) and the sections of the
 * ordered ones (the same values in dispatch order, freed here); none when the order
 * statistics have none (too few values). */
static void quantile_cis(const double *sorted, double *ordered, size_t n, size_t n_eff,
                         double scale, struct fig_value *f) {
  for (int k = FIG_STAT_P50; k < FIG_N_STATS; k++) {
    double lo, hi, slo, shi;
    if (!ci_quantile_sorted(sorted, n, n_eff, ci_quantiles[k], &lo, &hi))
      continue;
    if (ci_quantile_sections(ordered, n, ci_quantiles[k], f->v[k] / scale, &slo, &shi)) {
      lo = fmin(lo, slo);
      hi = fmax(hi, shi);
    }
    f->lo[k] = lo * scale;
    f->hi[k] = hi * scale;
  }
  free(ordered);
}

/* Throughputs by batch means over time windows: the point's span cut into K equal windows
 * (the last takes the remainder), each window's tokens (by chunk arrival), completions and
 * completed requests' prompt tokens (at their end) over its length. */
static void throughput_cis(const struct lg_result *run, struct results_metrics *m) {
  size_t k = ci_batches_for((size_t)(m->completed > 0 ? m->completed : 0));
  int64_t span_ns = run->end_mono_ns - run->start_mono_ns;
  if (k == 0 || span_ns < (int64_t)k)
    return;
  int64_t bin_ns = span_ns / (int64_t)k;
  int64_t out_tok[CI_BATCHES] = {0};
  double done[CI_BATCHES] = {0}, total[CI_BATCHES] = {0}, out[CI_BATCHES] = {0},
         len_s[CI_BATCHES] = {0};
  for (size_t i = 0; i < run->n_records; i++) {
    const struct lg_record *r = &run->records[i];
    if (r->failure != LG_OK)
      continue;
    spread_output_tokens(r, bin_ns, k, out_tok);
    int64_t end_ns = r->dispatch_ns + r->e2el_ns;
    size_t b = end_ns > 0 ? (size_t)(end_ns / bin_ns) : 0;
    b = b < k ? b : k - 1;
    done[b] += 1;
    total[b] += r->prompt_len;
  }
  for (size_t b = 0; b < k; b++) {
    out[b] = (double)out_tok[b];
    total[b] += out[b];
    len_s[b] = (double)(b + 1 < k ? bin_ns : span_ns - (int64_t)(k - 1) * bin_ns) / 1e9;
  }
  const struct {
    enum fig_id id;
    const double *num;
  } rows[] = {{FIG_REQ_TPUT, done}, {FIG_OUTPUT_TPUT, out}, {FIG_TOTAL_TPUT, total}};
  for (size_t i = 0; i < ST_ARRAY_LEN(rows); i++) {
    double lo, hi;
    if (ci_batch_ratio(rows[i].num, len_s, k, fig_get(&m->figs, rows[i].id, FIG_VALUE), &lo, &hi))
      fig_set_ci(&m->figs, rows[i].id, FIG_VALUE, lo, hi);
  }
}

/* Every interval holds its value (an estimator centred elsewhere, or rounding, could leave
 * it a hair outside), a timing figure's (every one but tokens per chunk, a count of the
 * server's) has the run-to-run allowance added (CI_RUN_REL_SD x z, in quadrature), and a rate's
 * or a latency's does not go below 0. */
static void ci_hold_values(struct fig_set *figs) {
  for (int i = 0; i < FIG_N; i++)
    for (int k = 0; k < FIG_N_STATS; k++) {
      struct fig_value *f = &figs->f[i];
      if (!isfinite(f->lo[k]) || !isfinite(f->hi[k]) || !isfinite(f->v[k]))
        continue;
      double v = f->v[k], below = fmax(0, v - f->lo[k]), above = fmax(0, f->hi[k] - v);
      if (i != FIG_TOKENS_PER_CHUNK) {
        double run = CI_Z975 * CI_RUN_REL_SD * fabs(v);
        below = sqrt(below * below + run * run);
        above = sqrt(above * above + run * run);
      }
      f->lo[k] = fmax(0, v - below);
      f->hi[k] = v + above;
    }
}

void results_compute(const struct lg_result *run, const struct results_settings *s,
                     struct results_metrics *out) {
  memset(out, 0, sizeof(*out));
  size_t n = run->n_records;
  size_t n_gaps = 0;
  for (size_t i = 0; i < n; i++)
    if (run->records[i].failure == LG_OK)
      n_gaps += run->records[i].n_chunk_gaps;
  double *ttft = xcalloc(n + 1, sizeof(double));
  double *tpot = xcalloc(n + 1, sizeof(double));
  double *e2el = xcalloc(n + 1, sizeof(double));
  double *itl = xcalloc(n_gaps + 1, sizeof(double));
  double *itl_tok = xcalloc(n_gaps + 1, sizeof(double));
  double *tpc = xcalloc(n + 1, sizeof(double));
  double *lag = xcalloc(n + 1, sizeof(double));
  double *connect = xcalloc(n + 1, sizeof(double));
  double *accept = xcalloc(n + 1, sizeof(double));
  double *itl_sum = xcalloc(n + 1, sizeof(double)), *itl_cnt = xcalloc(n + 1, sizeof(double));
  size_t n_itl_req = 0;
  size_t n_ok = 0, n_tpot = 0, n_itl = 0, n_lag = 0, n_connect = 0, n_accept = 0;
  int64_t good = 0;
  for (size_t i = 0; i < n; i++) {
    const struct lg_record *r = &run->records[i];
    if (r->failure < LG_FAIL_N_KINDS)
      out->failures_by_kind[r->failure]++;
    if (r->failure != LG_FAIL_NOT_SENT)
      lag[n_lag++] = (double)(r->dispatch_ns - r->scheduled_ns) / 1e6;
    if (results_failure_cut_by_stop((enum lg_failure)r->failure)) {
      out->cut_by_stop++;
      if (r->failure == LG_FAIL_NOT_SENT && r->detail &&
          strncmp(r->detail, LG_SERVER_GONE, strlen(LG_SERVER_GONE)) == 0)
        out->not_sent_server_gone++;
      continue;
    }
    if (r->failure != LG_OK) {
      out->failed++;
      continue;
    }
    out->completed++;
    out->total_input += r->prompt_len; /* the client's count, as the reference */
    out->input_tokens_client += r->prompt_len;
    if (r->server_prompt_tokens >= 0) {
      out->input_tokens_server += r->server_prompt_tokens;
      out->n_input_server++;
      out->n_input_mismatch += r->server_prompt_tokens != (int32_t)r->prompt_len;
      double rel = r->prompt_len > 0 ? fabs((double)r->server_prompt_tokens - (double)r->prompt_len) /
                                           (double)r->prompt_len
                                     : 0.0;
      if (rel > out->input_max_rel_error)
        out->input_max_rel_error = rel;
    }
    out->total_output += r->output_tokens;
    if (r->draft_tokens > 0 && r->draft_accepted >= 0) {
      out->accept_requests++;
      out->accept_draft_tokens += r->draft_tokens;
      out->accept_accepted_tokens += r->draft_accepted;
      accept[n_accept++] = (double)r->draft_accepted / (double)r->draft_tokens;
    }
    double ttft_s = (double)r->ttft_ns / 1e9, e2el_s = (double)r->e2el_ns / 1e9;
    double tpot_s = record_tpot_s(r);
    ttft[n_ok] = ttft_s;
    e2el[n_ok] = e2el_s;
    if (r->output_tokens > 1)
      tpot[n_tpot++] = tpot_s;
    double tokens_after_first = r->output_tokens > 1 ? (double)(r->output_tokens - 1) : 0.0;
    double per_chunk = r->n_chunk_gaps > 0 ? tokens_after_first / (double)r->n_chunk_gaps : 1.0;
    for (uint32_t g = 0; g < r->n_chunk_gaps; g++) {
      double gap_s = (double)r->chunk_gaps_us[g] / 1e6;
      itl[n_itl] = gap_s;
      itl_tok[n_itl] = (per_chunk > 0 ? gap_s / per_chunk : gap_s) * 1000.0;
      n_itl++;
    }
    if (r->n_chunk_gaps > 0) { /* a request's gaps together: one batch item */
      itl_sum[n_itl_req] = stats_sum(itl + n_itl - r->n_chunk_gaps, r->n_chunk_gaps);
      itl_cnt[n_itl_req++] = r->n_chunk_gaps;
    }
    tpc[n_ok] = (double)r->output_tokens / (double)(r->n_chunk_gaps + 1);
    if (r->connect_us > 0)
      connect[n_connect++] = (double)r->connect_us / 1000.0;
    n_ok++;
    if (s->goodput_set) {
      /* A request is good when every given SLO holds (TPOT 0 for <= 1 token):
       * the reference compares seconds with slo_ms / 1000. */
      double v[RESULTS_N_METRICS] = {ttft_s, tpot_s, 0, e2el_s};
      bool ok = true;
      for (int k = 0; k < RESULTS_N_METRICS; k++)
        if (s->goodput_slo_ms[k] >= 0 && !(s->goodput_slo_ms[k] / 1000.0 >= v[k]))
          ok = false;
      good += ok;
    }
  }
  out->duration_s = (double)(run->end_mono_ns - run->start_mono_ns) / 1e9;
  if (out->duration_s > 0) {
    out->request_throughput = (double)out->completed / out->duration_s;
    out->output_throughput = (double)out->total_output / out->duration_s;
    out->total_token_throughput = (double)(out->total_input + out->total_output) / out->duration_s;
    out->request_goodput = (double)good / out->duration_s;
  }
  /* Of the requests sent and not cut by a stop: the reference's 1 - completed
   * / num_prompts whenever the load ran to its end (nothing is cut then). */
  int64_t sent = out->completed + out->failed;
  out->failure_rate = sent > 0 ? (double)out->failed / (double)sent : 0.0;
  struct fig_set *figs = &out->figs;
  fig_set_clear(figs);
  /* How sure: the means' intervals from the values in dispatch order (before they are sorted) */
  mean_ci(ttft, NULL, n_ok, 1000.0, &figs->f[FIG_TTFT]);
  mean_ci(tpot, NULL, n_tpot, 1000.0, &figs->f[FIG_TPOT]);
  mean_ci(itl_sum, itl_cnt, n_itl_req, 1000.0, &figs->f[FIG_ITL]);
  mean_ci(e2el, NULL, n_ok, 1000.0, &figs->f[FIG_E2EL]);
  mean_ci(tpc, NULL, n_ok, 1.0, &figs->f[FIG_TOKENS_PER_CHUNK]);
  double *ttft_o = ordered_copy(ttft, n_ok), *tpot_o = ordered_copy(tpot, n_tpot),
         *itl_o = ordered_copy(itl, n_itl), *e2el_o = ordered_copy(e2el, n_ok),
         *tpc_o = ordered_copy(tpc, n_ok);
  summarize_s_as_ms(ttft, n_ok, s, &out->stat[RESULTS_TTFT], &figs->f[FIG_TTFT]);
  summarize_s_as_ms(tpot, n_tpot, s, &out->stat[RESULTS_TPOT], &figs->f[FIG_TPOT]);
  summarize_s_as_ms(itl, n_itl, s, &out->stat[RESULTS_ITL], &figs->f[FIG_ITL]);
  summarize_s_as_ms(e2el, n_ok, s, &out->stat[RESULTS_E2EL], &figs->f[FIG_E2EL]);
  summarize_ms(itl_tok, n_itl, s, &out->itl_per_token);
  summarize_fig(tpc, n_ok, s, &out->tokens_per_chunk, &figs->f[FIG_TOKENS_PER_CHUNK], 1.0);
  /* ... and the quantiles' from the sorted values (ITL: its gaps cluster by request) */
  quantile_cis(ttft, ttft_o, n_ok, 0, 1000.0, &figs->f[FIG_TTFT]);
  quantile_cis(tpot, tpot_o, n_tpot, 0, 1000.0, &figs->f[FIG_TPOT]);
  quantile_cis(itl, itl_o, n_itl, n_itl_req, 1000.0, &figs->f[FIG_ITL]);
  quantile_cis(e2el, e2el_o, n_ok, 0, 1000.0, &figs->f[FIG_E2EL]);
  quantile_cis(tpc, tpc_o, n_ok, 0, 1.0, &figs->f[FIG_TOKENS_PER_CHUNK]);
  free(itl_sum);
  free(itl_cnt);
  summarize_fig(lag, n_lag, s, &out->send_lag, &figs->f[FIG_SEND_LAG], 1.0);
  double *recv_lag = xcalloc(run->n_recv_lag + 1, sizeof(double)); /* client health */
  for (size_t i = 0; i < run->n_recv_lag; i++)
    recv_lag[i] = (double)run->recv_lag_us[i] / 1000.0;
  summarize_fig(recv_lag, run->n_recv_lag, s, &out->recv_lag, &figs->f[FIG_RECV_LAG], 1.0);
  free(recv_lag);
  out->loop_busy_max = 0;
  for (int i = 0; i < run->num_workers && i < LG_MAX_WORKERS; i++)
    out->loop_busy_max = fmax(out->loop_busy_max, run->loop_busy[i]);
  fig_set_scalar(figs, FIG_LOOP_BUSY, run->num_workers > 0, out->loop_busy_max * 100.0);
  summarize_ms(connect, n_connect, s, &out->connect);
  summarize_ms(accept, n_accept, s, &out->accept_rate);
  free(accept);
  free(connect);
  free(ttft);
  free(tpot);
  free(e2el);
  free(itl);
  free(itl_tok);
  free(tpc);
  free(lag);
  bool timed = out->duration_s > 0;
  fig_set_scalar(figs, FIG_REQ_TPUT, timed, out->request_throughput);
  fig_set_scalar(figs, FIG_OUTPUT_TPUT, timed, out->output_throughput);
  fig_set_scalar(figs, FIG_TOTAL_TPUT, timed, out->total_token_throughput);
  fig_set_scalar(figs, FIG_COMPLETED, true, (double)out->completed);
  fig_set_scalar(figs, FIG_DURATION, true, out->duration_s);
  throughput_cis(run, out);
  ci_hold_values(figs);
  fig_set_derive(figs, 0);
  lg_client_bound(figs, run->loop_busy, run->loop_cpu, run->num_workers, out->client_bound,
                  sizeof(out->client_bound));
  compute_seconds(run, out);
}

void results_figures_add_signals(struct fig_set *figs, const struct sig_summary *sig) {
  fig_set_scalar(figs, FIG_ACCEPT_LENGTH, sig && sig->accept_length_valid,
                 sig ? sig->accept_length : (double)NAN);
}

void results_metrics_fini(struct results_metrics *m) {
  free(m->seconds);
  memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------- formatting helpers */
void results_format_python_float(char *buf, size_t len, double v) {
  if (isinf(v)) {
    snprintf(buf, len, v > 0 ? "inf" : "-inf");
    return;
  }
  if (isnan(v)) {
    snprintf(buf, len, "nan");
    return;
  }
  if (v == floor(v) && fabs(v) < 1e16) {
    snprintf(buf, len, "%.1f", v);
    return;
  }
  /* Shortest repr that round-trips, as Python's repr(float). */
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      return;
  }
}

/* "p99", "p99.9": str(int(p)) when p is whole, else str(p). */
static void percentile_word(char *buf, size_t len, double p) {
  if (p == floor(p))
    snprintf(buf, len, "%d", (int)p);
  else
    results_format_python_float(buf, len, p);
}

/* Python's "{s:{c}^{n}}": centred, the extra fill char on the right. */
static void print_centered(FILE *out, const char *s, char fill, int width) {
  int len = (int)strlen(s);
  int pad = width > len ? width - len : 0;
  int left = pad / 2, right = pad - left;
  for (int i = 0; i < left; i++)
    fputc(fill, out);
  fputs(s, out);
  for (int i = 0; i < right; i++)
    fputc(fill, out);
  fputc('\n', out);
}

void results_print_summary(FILE *out, const struct results_settings *s,
                           const struct results_metrics *m) {
  print_centered(out, " Serving Benchmark Result ", '=', 50);
  fprintf(out, "%-40s %-10lld\n", "Successful requests:", (long long)m->completed);
  if (m->completed == 0) {
    /* Nothing was measured: no figure is printed as if it were 0 ms. */
    fprintf(out, "%-40s %-10lld\n", "Failed requests:", (long long)m->failed);
    fputs("No request succeeded: no throughput or latency figures.\n"
          "==================================================\n", out);
    return;
  }
  if (s->max_concurrency > 0)
    fprintf(out, "%-40s %-10d\n", "Maximum request concurrency:", s->max_concurrency);
  if (isfinite(s->request_rate))
    fprintf(out, "%-40s %-10.2f\n", "Request rate configured (RPS):", s->request_rate);
  fprintf(out, "%-40s %-10.2f\n", "Benchmark duration (s):", m->duration_s);
  fprintf(out, "%-40s %-10lld\n", "Total input tokens:", (long long)m->total_input);
  fprintf(out, "%-40s %-10lld\n", "Total generated tokens:", (long long)m->total_output);
  fprintf(out, "%-40s %-10.2f\n", "Request throughput (req/s):", m->request_throughput);
  if (s->goodput_set)
    fprintf(out, "%-40s %-10.2f\n", "Request goodput (req/s):", m->request_goodput);
  fprintf(out, "%-40s %-10.2f\n", "Output token throughput (tok/s):", m->output_throughput);
  fprintf(out, "%-40s %-10.2f\n", "Total Token throughput (tok/s):", m->total_token_throughput);
  for (int k = 0; k < RESULTS_N_METRICS; k++) {
    if (!s->selected[k])
      continue;
    const struct results_stat *st = &m->stat[k];
    print_centered(out, metric_headers[k], '-', 50);
    char label[64];
    snprintf(label, sizeof(label), "Mean %s (ms):", metric_labels[k]);
    fprintf(out, "%-40s %-10.2f\n", label, st->mean_ms);
    snprintf(label, sizeof(label), "Median %s (ms):", metric_labels[k]);
    fprintf(out, "%-40s %-10.2f\n", label, st->median_ms);
    for (size_t p = 0; p < s->n_percentiles; p++) {
      char word[32];
      percentile_word(word, sizeof(word), s->percentiles[p]);
      snprintf(label, sizeof(label), "P%s %s (ms):", word, metric_labels[k]);
      fprintf(out, "%-40s %-10.2f\n", label, st->percentile_ms[p]);
    }
  }
  fputs("==================================================\n", out);
}

void results_print_accounting(FILE *out, const struct lg_result *run,
                              const struct results_settings *s, const struct results_metrics *m) {
  if (s->prompts) {
    const struct lg_prompts_info *pr = s->prompts;
    if (pr->tokenizer)
      fprintf(out, "servetop: prompts as the reference, through the server's tokenizer (%s "
                   "endpoints): avg_token_mismatch %.2f, %lld off target, %lld calls in %.2f s\n",
              pr->tokenizer, pr->avg_token_mismatch, (long long)pr->prompts_off_target,
              (long long)pr->tokenizer_calls, pr->build_s);
    else
      fprintf(out, "servetop: NOT the reference's prompts: %s; %s\n",
              s->no_tokenizer_reason ? s->no_tokenizer_reason : "no tokenizer endpoint",
              pr->path && strcmp(pr->path, "chat_calibrated") == 0
                  ? "sent calibrated text to the chat endpoint instead"
                  : "sent the reference's token ids as token-id arrays instead (exact lengths)");
  }
  if (m->tokens_per_chunk.n > 0) /* beside ITL: the reference's ITL is per chunk */
    fprintf(out, "servetop: tokens per chunk mean %.2f, median %.2f (ITL above is per chunk; "
                 "per token: mean %.2f ms, median %.2f ms)\n",
            m->tokens_per_chunk.mean_ms, m->tokens_per_chunk.median_ms, m->itl_per_token.mean_ms,
            m->itl_per_token.median_ms);
  if (m->n_input_server > 0)
    fprintf(out, "servetop: input tokens client %lld, server %lld (%lld of %lld requests differ)\n",
            (long long)m->input_tokens_client, (long long)m->input_tokens_server,
            (long long)m->n_input_mismatch, (long long)m->n_input_server);
  if (m->accept_requests > 0)
    fprintf(out, "servetop: per-request acceptance %lld/%lld draft tokens (%.3f) over %lld requests, "
                 "median request %.3f\n",
            (long long)m->accept_accepted_tokens, (long long)m->accept_draft_tokens,
            (double)m->accept_accepted_tokens / (double)m->accept_draft_tokens,
            (long long)m->accept_requests, m->accept_rate.median_ms);
  if (m->cut_by_stop > 0)
    fprintf(out, "servetop: %lld requests cut when the run ended (%lld in flight, %lld never sent): "
                 "not failures, not in the failure rate\n",
            (long long)m->cut_by_stop, (long long)m->failures_by_kind[LG_FAIL_INTERRUPTED],
            (long long)m->failures_by_kind[LG_FAIL_NOT_SENT]);
  if (m->not_sent_server_gone > 0)
    fprintf(out, "servetop: %lld of the never sent: " LG_SERVER_GONE " (connection refused after "
                 "the last request it answered)\n", (long long)m->not_sent_server_gone);
  if (m->failed == 0)
    return;
  fprintf(out, "servetop: %lld of %lld requests failed:", (long long)m->failed, /* of those sent */
          (long long)(m->completed + m->failed));
  for (int f = LG_FAIL_HTTP; f < LG_FAIL_N_KINDS; f++)
    if (m->failures_by_kind[f] > 0 && !results_failure_cut_by_stop((enum lg_failure)f))
      fprintf(out, " %s %lld", lg_failure_name((enum lg_failure)f), (long long)m->failures_by_kind[f]);
  fputc('\n', out);
  for (int f = LG_FAIL_HTTP; f < LG_FAIL_N_KINDS; f++) {
    if (m->failures_by_kind[f] == 0 || results_failure_cut_by_stop((enum lg_failure)f))
      continue;
    for (size_t i = 0; i < run->n_records; i++) {
      const struct lg_record *r = &run->records[i];
      if (r->failure == f) {
        fprintf(out, "  %s, first: %.300s\n", lg_failure_name((enum lg_failure)f),
                r->detail ? r->detail : "");
        break;
      }
    }
  }
}

/* ---------------------------------------------------------------- JSON */
/* mean, median, std and the percentiles of st, each under "<statistic><suffix>"
 * ("mean_ttft_ms", "p99_ms"). */
static void add_stat_numbers(cJSON *o, const struct results_stat *st,
                             const struct results_settings *s, const char *suffix) {
  const struct {
    const char *word;
    double value;
  } moments[] = {{"mean", st->mean_ms}, {"median", st->median_ms}, {"std", st->std_ms}};
  char key[96];
  for (size_t i = 0; i < ST_ARRAY_LEN(moments); i++) {
    snprintf(key, sizeof(key), "%s%s", moments[i].word, suffix);
    cJSON_AddNumberToObject(o, key, moments[i].value);
  }
  for (size_t p = 0; p < s->n_percentiles; p++) {
    char word[32];
    percentile_word(word, sizeof(word), s->percentiles[p]);
    snprintf(key, sizeof(key), "p%s%s", word, suffix);
    cJSON_AddNumberToObject(o, key, st->percentile_ms[p]);
  }
}

/* The reference's flat keys: mean_<name>_ms, median_..., std_..., p<P>_<name>_ms. */
static void add_stat_keys(cJSON *obj, const char *name, const struct results_stat *st,
                          const struct results_settings *s) {
  char suffix[64];
  snprintf(suffix, sizeof(suffix), "_%s_ms", name);
  add_stat_numbers(obj, st, s, suffix);
}

static cJSON *stat_object(const struct results_stat *st, const struct results_settings *s,
                          const char *unit) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", (double)st->n);
  add_stat_numbers(o, st, s, unit);
  char key[64];
  snprintf(key, sizeof(key), "max%s", unit);
  cJSON_AddNumberToObject(o, key, st->max_ms);
  return o;
}

static cJSON *signals_object(const struct sig_summary *sig, const struct lg_result *run) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "engine", sig->engine ? sig->engine->name : "unknown");
  cJSON_AddBoolToObject(o, "metrics_available", sig->metrics_available);
  if (!sig->metrics_available)
    cJSON_AddStringToObject(o, "metrics_unavailable_reason", sig->metrics_unavailable_reason);
  cJSON_AddBoolToObject(o, "server_info_available", sig->server_info_available);
  if (!sig->server_info_available)
    cJSON_AddStringToObject(o, "server_info_unavailable_reason",
                            sig->server_info_unavailable_reason);
  cJSON_AddNumberToObject(o, "scrapes", sig->n_scrapes);
  cJSON_AddNumberToObject(o, "scrape_failures", sig->n_scrape_failures);
  cJSON_AddNumberToObject(o, "prometheus_lines_skipped", (double)sig->n_prom_malformed);

  /* What the run-scoped figures (counter deltas, acceptance) cover: from the
   * start scrape to the end scrape, seconds from the first dispatch. */
  cJSON *win = cJSON_AddObjectToObject(o, "window");
  cJSON_AddStringToObject(win, "covers", "the measured requests: from a scrape after the warmups "
                                         "and before the first dispatch to one after the last "
                                         "request ended");
  json_add_number_or_null(win, "from_s", sig->first_mono_ns != 0,
                          (double)(sig->first_mono_ns - run->start_mono_ns) / 1e9);
  json_add_number_or_null(win, "to_s", sig->last_mono_ns != 0,
                          (double)(sig->last_mono_ns - run->start_mono_ns) / 1e9);
  cJSON *acc = cJSON_AddObjectToObject(o, "acceptance");
  if (sig->spec_enabled_valid)
    cJSON_AddBoolToObject(acc, "spec_enabled", sig->spec_enabled);
  else
    cJSON_AddNullToObject(acc, "spec_enabled");
  cJSON_AddStringToObject(acc, "algorithm", sig->spec_algorithm);
  json_add_number_or_null(acc, "accept_length", sig->accept_length_valid, sig->accept_length);
  if (sig->accept_length_valid)
    cJSON_AddStringToObject(acc, "accept_length_method", sig->accept_length_method);
  json_add_number_or_null(acc, "accept_rate", sig->accept_rate_valid, sig->accept_rate);
  if (sig->accept_rate_valid)
    cJSON_AddStringToObject(acc, "accept_rate_method", sig->accept_rate_method);
  if (sig->counter_deltas_valid) { /* the server's own counters over the window */
    cJSON_AddNumberToObject(acc, "drafts", sig->drafts_delta);
    cJSON_AddNumberToObject(acc, "draft_tokens", sig->draft_tokens_delta);
    cJSON_AddNumberToObject(acc, "accepted_tokens", sig->accepted_tokens_delta);
  }
  cJSON *pos = cJSON_AddArrayToObject(acc, "per_position_rate");
  for (int p = 0; p < sig->n_positions; p++)
    cJSON_AddItemToArray(pos, cJSON_CreateNumber(sig->per_position_rate[p]));
  json_add_number_or_null(acc, "server_lifetime_accept_length_start",
                          sig->server_info_accept_length_start_valid,
                          sig->server_info_accept_length_start);
  json_add_number_or_null(acc, "server_lifetime_accept_length_end",
                          sig->server_info_accept_length_end_valid,
                          sig->server_info_accept_length_end);
  cJSON *info = cJSON_AddObjectToObject(o, "server_info");
  json_add_number_or_null(info, "speculative_num_steps", sig->spec_num_steps >= 0,
                          sig->spec_num_steps);
  json_add_number_or_null(info, "speculative_num_draft_tokens", sig->spec_num_draft_tokens >= 0,
                          sig->spec_num_draft_tokens);
  json_add_number_or_null(info, "stream_interval", sig->stream_interval >= 0, sig->stream_interval);

  cJSON *series = cJSON_AddArrayToObject(o, "scrapes_series");
  for (size_t i = 0; i < sig->n_points; i++) {
    const struct sig_point *pt = &sig->points[i];
    cJSON *row = cJSON_CreateObject();
    cJSON_AddNumberToObject(row, "t_s", pt->t_s);
    json_add_number_or_null(row, "accept_length", true, pt->accept_length);
    json_add_number_or_null(row, "accept_rate", true, pt->accept_rate);
    json_add_number_or_null(row, "kv_usage_frac", true, pt->kv_usage_frac);
    json_add_number_or_null(row, "num_running", true, pt->num_running);
    json_add_number_or_null(row, "num_queued", true, pt->num_queued);
    json_add_number_or_null(row, "generation_tokens_total", true, pt->gen_tokens_total);
    cJSON_AddItemToArray(series, row);
  }
  return o;
}

/* servetop/additions/ci: {"level": 0.95, "methods": {...}, "figures": {"<name>": {"<stat>":
 * [lo, hi]}}} for every saved figure whose interval is known; <stat> "value" for a scalar,
 * else "mean", "p50", "p90", "p99". results_figures_from_json reads it back. */
static const char *ci_stat_key(const struct fig_desc *d, int k) {
  return d->kind == FIG_SCALAR ? "value" : fig_stat_name((enum fig_stat)k);
}

static cJSON *ci_object(const struct fig_set *figs) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "level", CI_LEVEL);
  cJSON *how = cJSON_AddObjectToObject(o, "methods");
  cJSON_AddStringToObject(how, "throughput", "batch means over equal time windows of the point");
  cJSON_AddStringToObject(how, "mean", "batch means over consecutive requests (dispatch order)");
  cJSON_AddStringToObject(how, "percentile", "the wider of order statistics (exact binomial; "
                                             "ITL: requests as the independent units) and "
                                             "sections (batch quantiles)");
  cJSON_AddNumberToObject(how, "run_to_run_rel_sd", CI_RUN_REL_SD); /* added to timing figures */
  cJSON *all = cJSON_AddObjectToObject(o, "figures");
  for (int i = 0; i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    if (d->json_style == FIG_JSON_NONE)
      continue;
    cJSON *one = NULL;
    for (int k = 0; k < (d->kind == FIG_SCALAR ? 1 : FIG_N_STATS); k++) {
      double lo, hi;
      if (!fig_get_ci(figs, d->id, (enum fig_stat)k, &lo, &hi))
        continue;
      if (!one)
        one = cJSON_AddObjectToObject(all, d->name);
      cJSON *pair = cJSON_AddArrayToObject(one, ci_stat_key(d, k));
      cJSON_AddItemToArray(pair, cJSON_CreateNumber(lo));
      cJSON_AddItemToArray(pair, cJSON_CreateNumber(hi));
    }
  }
  return o;
}

/* ---------------------------------------------------------------- Python-style JSON text
 * json.dump() as the reference calls it: one line, ", " and ": " separators,
 * non-ASCII escaped (ensure_ascii), shortest round-trip floats. */
static void py_json_string(struct sbuf *sb, const char *s) {
  sbuf_putc(sb, '"');
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      sbuf_putc(sb, '\\');
      sbuf_putc(sb, (char)c);
      p++;
    } else if (c == '\n') {
      sbuf_puts(sb, "\\n"), p++;
    } else if (c == '\r') {
      sbuf_puts(sb, "\\r"), p++;
    } else if (c == '\t') {
      sbuf_puts(sb, "\\t"), p++;
    } else if (c < 0x20 || c == 0x7f) {
      sbuf_printf(sb, "\\u%04x", c), p++;
    } else if (c < 0x80) {
      sbuf_putc(sb, (char)c), p++;
    } else {
      /* Decode one UTF-8 sequence; invalid bytes become U+FFFD. */
      uint32_t cp = 0xFFFD;
      int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      bool valid = len > 1;
      for (int i = 1; i < len && valid; i++)
        valid = (p[i] & 0xC0) == 0x80;
      if (valid) {
        cp = c & (0x7F >> len);
        for (int i = 1; i < len; i++)
          cp = (cp << 6) | (p[i] & 0x3F);
        p += len;
      } else {
        p++;
      }
      if (cp >= 0x10000) {
        cp -= 0x10000;
        sbuf_printf(sb, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        sbuf_printf(sb, "\\u%04x", cp);
      }
    }
  }
  sbuf_putc(sb, '"');
}

static void py_json_number(struct sbuf *sb, double v) {
  if (!isfinite(v)) {
    sbuf_puts(sb, "null");
  } else if (v == floor(v) && fabs(v) < 1e15) {
    sbuf_printf(sb, "%.0f", v);
  } else {
    char buf[48];
    results_format_python_float(buf, sizeof(buf), v);
    sbuf_puts(sb, buf);
  }
}

static void py_json_value(struct sbuf *sb, const cJSON *item) {
  if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
    bool obj = cJSON_IsObject(item);
    sbuf_putc(sb, obj ? '{' : '[');
    for (const cJSON *c = item->child; c; c = c->next) {
      if (c != item->child)
        sbuf_puts(sb, ", ");
      if (obj) {
        py_json_string(sb, c->string);
        sbuf_puts(sb, ": ");
      }
      py_json_value(sb, c);
    }
    sbuf_putc(sb, obj ? '}' : ']');
  } else if (cJSON_IsString(item)) {
    py_json_string(sb, item->valuestring);
  } else if (cJSON_IsNumber(item)) {
    py_json_number(sb, item->valuedouble);
  } else if (cJSON_IsTrue(item)) {
    sbuf_puts(sb, "true");
  } else if (cJSON_IsFalse(item)) {
    sbuf_puts(sb, "false");
  } else {
    sbuf_puts(sb, "null");
  }
}

char *results_json_alloc(const struct lg_result *run, const struct results_settings *s,
                         const struct results_metrics *m, const struct sig_summary *signals) {
  cJSON *root = cJSON_CreateObject();
  char date[32];
  time_t now_s = (time_t)run->end_unix_s;
  struct tm tm;
  localtime_r(&now_s, &tm);
  strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
  /* Setup, as the reference inserts it. */
  cJSON_AddStringToObject(root, "date", date);
  cJSON_AddStringToObject(root, "backend", s->backend);
  cJSON_AddStringToObject(root, "model_id", s->model_id);
  cJSON_AddStringToObject(root, "tokenizer_id", s->tokenizer_id ? s->tokenizer_id : s->model_id);
  cJSON_AddNumberToObject(root, "best_of", 1);
  cJSON_AddNumberToObject(root, "num_prompts", s->num_prompts);
  for (size_t i = 0; i < s->n_metadata; i++) {
    const char *eq = strchr(s->metadata[i], '=');
    if (!eq)
      continue;
    /* item.split("=") -> [0] and [1]: "k=a=b" stores k = "a", as the reference. */
    char *key = xstrndup(s->metadata[i], (size_t)(eq - s->metadata[i]));
    const char *eq2 = strchr(eq + 1, '=');
    char *value = eq2 ? xstrndup(eq + 1, (size_t)(eq2 - eq - 1)) : xstrdup(eq + 1);
    /* A Python dict keeps an existing key's position when it is assigned again. */
    const char *k = str_trim(key);
    if (cJSON_GetObjectItemCaseSensitive(root, k))
      cJSON_ReplaceItemInObjectCaseSensitive(root, k, cJSON_CreateString(str_trim(value)));
    else
      cJSON_AddStringToObject(root, k, str_trim(value));
    free(key);
    free(value);
  }
  if (isfinite(s->request_rate))
    cJSON_AddNumberToObject(root, "request_rate", s->request_rate);
  else
    cJSON_AddStringToObject(root, "request_rate", "inf");
  cJSON_AddNumberToObject(root, "burstiness", s->burstiness);
  json_add_number_or_null(root, "max_concurrency", s->max_concurrency > 0, s->max_concurrency);
  /* Benchmark result. */
  cJSON_AddNumberToObject(root, "duration", m->duration_s);
  cJSON_AddNumberToObject(root, "benchmark_start_time_unix", run->start_unix_s);
  cJSON_AddNumberToObject(root, "benchmark_end_time_unix", run->end_unix_s);
  cJSON_AddNumberToObject(root, "completed", (double)m->completed);
  cJSON_AddNumberToObject(root, "total_input_tokens", (double)m->total_input);
  cJSON_AddNumberToObject(root, "total_output_tokens", (double)m->total_output);
  cJSON_AddNumberToObject(root, "request_throughput", m->request_throughput);
  if (s->goodput_set) /* sic: the reference's key has the colon */
    cJSON_AddNumberToObject(root, "request_goodput:", m->request_goodput);
  else
    cJSON_AddNullToObject(root, "request_goodput:");
  cJSON_AddNumberToObject(root, "output_throughput", m->output_throughput);
  cJSON_AddNumberToObject(root, "total_token_throughput", m->total_token_throughput);
  cJSON *input_lens = cJSON_AddArrayToObject(root, "input_lens");
  cJSON *output_lens = cJSON_AddArrayToObject(root, "output_lens");
  for (size_t i = 0; i < run->n_records; i++) {
    const struct lg_record *r = &run->records[i];
    cJSON_AddItemToArray(input_lens, cJSON_CreateNumber((double)r->prompt_len));
    cJSON_AddItemToArray(output_lens,
                         cJSON_CreateNumber(r->failure == LG_OK ? r->output_tokens : 0));
  }
  if (s->save_detailed) {
    cJSON *ttfts = cJSON_AddArrayToObject(root, "ttfts");
    cJSON *itls = cJSON_AddArrayToObject(root, "itls");
    cJSON *texts = cJSON_AddArrayToObject(root, "generated_texts");
    cJSON *errors = cJSON_AddArrayToObject(root, "errors");
    for (size_t i = 0; i < run->n_records; i++) {
      const struct lg_record *r = &run->records[i];
      bool ok = r->failure == LG_OK;
      cJSON_AddItemToArray(ttfts, cJSON_CreateNumber(ok ? (double)r->ttft_ns / 1e9 : 0.0));
      cJSON *gaps = cJSON_CreateArray();
      for (uint32_t g = 0; ok && g < r->n_chunk_gaps; g++)
        cJSON_AddItemToArray(gaps, cJSON_CreateNumber((double)r->chunk_gaps_us[g] / 1e6));
      cJSON_AddItemToArray(itls, gaps);
      cJSON_AddItemToArray(texts, cJSON_CreateString(ok && r->detail ? r->detail : ""));
      cJSON_AddItemToArray(errors, cJSON_CreateString(!ok && r->detail ? r->detail : ""));
    }
  }
  for (int k = 0; k < RESULTS_N_METRICS; k++)
    if (s->selected[k])
      add_stat_keys(root, metric_names[k], &m->stat[k], s);

  /* servetop's own section. */
  cJSON *st = cJSON_AddObjectToObject(root, "servetop");
  cJSON_AddNumberToObject(st, "schema_version", RESULTS_SCHEMA_VERSION);
  cJSON_AddStringToObject(st, "version", SERVETOP_VERSION);
  /* Provenance: whether a simulator produced these figures (servetop sim), and the engine.
   * null: nothing told (no run launched it, and the server has no info endpoint). */
  const struct eng_ops *served = s->engine ? s->engine : signals ? signals->engine : NULL;
  if (s->engine)
    cJSON_AddBoolToObject(st, "simulated", s->engine->simulated);
  else if (signals && signals->server_info_available)
    cJSON_AddBoolToObject(st, "simulated", signals->simulated);
  else
    cJSON_AddNullToObject(st, "simulated");
  if (signals && signals->simulated && !s->engine)
    cJSON_AddStringToObject(st, "engine", "sim");
  else if (served)
    cJSON_AddStringToObject(st, "engine", served->name);
  else
    cJSON_AddNullToObject(st, "engine");
  cJSON_AddBoolToObject(st, "interrupted", run->interrupted);
  cJSON_AddNumberToObject(st, "failure_rate", m->failure_rate);
  cJSON *client = cJSON_AddObjectToObject(st, "client");
  cJSON_AddStringToObject(client, "url", s->url ? s->url : "");
  cJSON_AddStringToObject(client, "api", s->chat ? "chat" : "completions");
  cJSON_AddStringToObject(client, "served_model_name",
                          s->served_model_name ? s->served_model_name : s->model_id);
  cJSON_AddStringToObject(client, "dataset_name", s->dataset_name ? s->dataset_name : "random");
  cJSON_AddNumberToObject(client, "random_input_len", s->random_input_len);
  cJSON_AddNumberToObject(client, "random_output_len", s->random_output_len);
  cJSON_AddNumberToObject(client, "random_range_ratio", s->random_range_ratio);
  cJSON_AddNumberToObject(client, "random_prefix_len", s->random_prefix_len);
  cJSON_AddBoolToObject(client, "ignore_eos", s->ignore_eos);
  cJSON_AddNumberToObject(client, "seed", (double)s->seed);
  cJSON_AddNumberToObject(client, "num_warmups", s->num_warmups);
  /* the loops that ran; --num-workers auto (0 asked) says so beside them */
  cJSON_AddNumberToObject(client, "num_workers", run->num_workers > 0 ? run->num_workers
                                                                      : s->num_workers);
  if (s->num_workers == LG_NUM_WORKERS_AUTO)
    cJSON_AddStringToObject(client, "num_workers_asked", "auto");
  cJSON_AddNumberToObject(client, "vocab_size", s->vocab_size);
  cJSON_AddStringToObject(client, "connection_reuse",
                          s->reuse_connections ? "keep-alive" : "new connection per request");
  cJSON_AddBoolToObject(client, "reuse_connections", s->reuse_connections);
  cJSON_AddStringToObject(client, "input_lens_source", "client token count");
  if (s->prompts) {
    const struct lg_prompts_info *pr = s->prompts;
    cJSON *po = cJSON_AddObjectToObject(client, "prompts");
    cJSON_AddStringToObject(po, "path", pr->path ? pr->path : "");
    json_add_string_or_null(po, "tokenizer_endpoints", pr->tokenizer);
    if (s->no_tokenizer_reason)
      cJSON_AddStringToObject(po, "no_tokenizer_reason", s->no_tokenizer_reason);
    if (pr->chat_template) {
      cJSON_AddStringToObject(po, "chat_template", pr->chat_template);
      cJSON_AddNumberToObject(po, "chat_template_len", pr->chat_template_len);
    } else {
      cJSON_AddNullToObject(po, "chat_template");
    }
    cJSON_AddNumberToObject(po, "vocab_size", s->vocab_size);
    cJSON_AddStringToObject(po, "vocab_size_source", s->vocab_size_source ? s->vocab_size_source : "");
    cJSON_AddNumberToObject(po, "random_num_workers", pr->random_num_workers);
    cJSON_AddNumberToObject(po, "avg_token_mismatch", pr->avg_token_mismatch);
    cJSON_AddNumberToObject(po, "prompts_off_target", (double)pr->prompts_off_target);
    cJSON_AddNumberToObject(po, "tokenizer_calls", (double)pr->tokenizer_calls);
    cJSON_AddNumberToObject(po, "build_s", pr->build_s);
  }
  if (s->calibration) {
    cJSON *cal = cJSON_AddObjectToObject(client, "chat_calibration");
    cJSON_AddNumberToObject(cal, "overhead_tokens", s->calibration->sizer.overhead_tokens);
    cJSON_AddNumberToObject(cal, "tokens_per_word", s->calibration->sizer.tokens_per_word);
    cJSON_AddNumberToObject(cal, "probes", s->calibration->n_probes);
    cJSON_AddNumberToObject(cal, "check_target_tokens", s->calibration->check_target_tokens);
    cJSON_AddNumberToObject(cal, "check_server_tokens", s->calibration->check_server_tokens);
  }
  if (s->profile) {
    cJSON *prof = cJSON_AddObjectToObject(client, "profile");
    cJSON_AddNumberToObject(prof, "start_profile_http_status", s->profile_start_status);
    cJSON_AddNumberToObject(prof, "stop_profile_http_status", s->profile_stop_status);
  }
  /* Input tokens: the totals above are the client's count (the reference's
   * rule); the server's own count of the same requests is kept here. */
  cJSON *tok = cJSON_AddObjectToObject(st, "tokens");
  cJSON_AddNumberToObject(tok, "input_client", (double)m->input_tokens_client);
  cJSON_AddNumberToObject(tok, "input_server", (double)m->input_tokens_server);
  cJSON_AddNumberToObject(tok, "requests_with_server_input_count", (double)m->n_input_server);
  cJSON_AddNumberToObject(tok, "requests_client_server_mismatch", (double)m->n_input_mismatch);
  cJSON_AddNumberToObject(tok, "input_max_rel_error", m->input_max_rel_error);
  cJSON *server_lens = cJSON_AddArrayToObject(tok, "input_lens_server");
  for (size_t i = 0; i < run->n_records; i++) {
    const struct lg_record *r = &run->records[i];
    cJSON_AddItemToArray(server_lens, r->server_prompt_tokens >= 0
                                          ? cJSON_CreateNumber(r->server_prompt_tokens)
                                          : cJSON_CreateNull());
  }
  /* Every request accounted for: completed + the failures by kind + the
   * requests a stop cut = num prompts; the first failure of each kind keeps
   * the server's words. A request a stop cut did not fail. */
  cJSON_AddNumberToObject(st, "failed", (double)m->failed);
  cJSON *fail = cJSON_AddObjectToObject(st, "failures");
  cJSON *cut = cJSON_AddObjectToObject(st, "cut_by_stop");
  cJSON *why = cJSON_CreateObject();
  for (int f = LG_FAIL_HTTP; f < LG_FAIL_N_KINDS; f++) {
    const char *name = lg_failure_name((enum lg_failure)f);
    if (results_failure_cut_by_stop((enum lg_failure)f)) {
      cJSON_AddNumberToObject(cut, name, (double)m->failures_by_kind[f]);
      continue;
    }
    if (m->failures_by_kind[f] == 0)
      continue;
    cJSON_AddNumberToObject(fail, name, (double)m->failures_by_kind[f]);
    for (size_t i = 0; i < run->n_records; i++) {
      if (run->records[i].failure == f) {
        cJSON_AddStringToObject(why, name, run->records[i].detail ? run->records[i].detail : "");
        break;
      }
    }
  }
  cJSON_AddItemToObject(st, "failure_examples", why);
  /* why requests were not sent, when a dead server refused them */
  if (m->not_sent_server_gone > 0)
    cJSON_AddNumberToObject(st, "not_sent_server_gone", (double)m->not_sent_server_gone);
  /* llama.cpp's per-request acceptance (timings.draft_n / draft_n_accepted
   * of each completed request's final chunk). */
  cJSON *pra = cJSON_AddObjectToObject(st, "per_request_acceptance");
  cJSON_AddStringToObject(pra, "covers", "the completed measured requests");
  cJSON_AddNumberToObject(pra, "requests", (double)m->accept_requests);
  cJSON_AddNumberToObject(pra, "draft_tokens", (double)m->accept_draft_tokens);
  cJSON_AddNumberToObject(pra, "accepted_tokens", (double)m->accept_accepted_tokens);
  json_add_number_or_null(pra, "accept_rate", m->accept_draft_tokens > 0,
                          m->accept_draft_tokens > 0
                              ? (double)m->accept_accepted_tokens / (double)m->accept_draft_tokens
                              : 0);
  cJSON_AddItemToObject(pra, "rate_distribution", stat_object(&m->accept_rate, s, ""));
  cJSON *add = cJSON_AddObjectToObject(st, "additions");
  cJSON_AddItemToObject(add, "itl_per_token", stat_object(&m->itl_per_token, s, "_ms"));
  cJSON_AddItemToObject(add, "tokens_per_chunk", stat_object(&m->tokens_per_chunk, s, ""));
  cJSON_AddItemToObject(add, "send_lag", stat_object(&m->send_lag, s, "_ms"));
  cJSON_AddItemToObject(add, "recv_lag", stat_object(&m->recv_lag, s, "_ms"));
  cJSON_AddItemToObject(add, "connect", stat_object(&m->connect, s, "_ms"));
  cJSON_AddItemToObject(add, "ci", ci_object(&m->figs));
  /* point length (ci_point_short): whether the point is long enough for its intervals */
  cJSON *len = cJSON_AddObjectToObject(add, "point_length");
  char short_why[160];
  bool is_short = ci_point_short(m->completed, m->duration_s, s->max_concurrency, short_why,
                                 sizeof short_why);
  cJSON_AddBoolToObject(len, "short", is_short);
  if (is_short)
    cJSON_AddStringToObject(len, "why", short_why);
  cJSON_AddNumberToObject(len, "min_requests", (double)ci_point_min_requests(s->max_concurrency));
  cJSON_AddNumberToObject(len, "min_seconds", CI_MIN_POINT_S);
  cJSON *loop = cJSON_AddObjectToObject(st, "loop");
  cJSON_AddNumberToObject(loop, "sse_events", (double)run->events);
  cJSON_AddNumberToObject(loop, "body_bytes", (double)run->body_bytes);
  cJSON_AddNumberToObject(loop, "record_bytes", (double)lg_result_record_bytes(run));
  cJSON_AddNumberToObject(loop, "callback_delay_p50_us",
                          live_hist_percentile_us(&run->callback_delay, 50));
  cJSON_AddNumberToObject(loop, "callback_delay_p99_us",
                          live_hist_percentile_us(&run->callback_delay, 99));
  cJSON_AddNumberToObject(loop, "callback_delay_max_us", (double)run->callback_delay.max_us);
  /* client health: each loop's busy share, the busiest in %, the verdict and its limits */
  cJSON *busy = cJSON_AddArrayToObject(loop, "busy_share");
  for (int i = 0; i < run->num_workers && i < LG_MAX_WORKERS; i++)
    cJSON_AddItemToArray(busy, cJSON_CreateNumber(run->loop_busy[i]));
  cJSON *cpu = cJSON_AddArrayToObject(loop, "cpu_share");
  for (int i = 0; i < run->num_workers && i < LG_MAX_WORKERS; i++)
    cJSON_AddItemToArray(cpu, cJSON_CreateNumber(run->loop_cpu[i]));
  cJSON_AddNumberToObject(loop, "busy_pct_max", m->loop_busy_max * 100.0);
  if (m->client_bound[0])
    cJSON_AddStringToObject(loop, "client_bound", m->client_bound);
  else
    cJSON_AddNullToObject(loop, "client_bound");
  cJSON *lim = cJSON_AddObjectToObject(loop, "client_bound_limits");
  cJSON_AddNumberToObject(lim, "busy_share", LG_CLIENT_BOUND_BUSY_FRAC);
  cJSON_AddNumberToObject(lim, "recv_lag_p99_ms", LG_CLIENT_BOUND_RECV_LAG_P99_MS);
  cJSON_AddNumberToObject(lim, "recv_lag_min_samples", LG_CLIENT_BOUND_RECV_LAG_MIN_N);
  cJSON_AddNumberToObject(lim, "send_lag_p50_ms", LG_CLIENT_BOUND_SEND_LAG_P50_MS);
  cJSON_AddNumberToObject(lim, "recv_lag_sample_every", LG_RECV_LAG_SAMPLE_EVERY);
  if (signals)
    cJSON_AddItemToObject(st, "server", signals_object(signals, run));
  cJSON *series = cJSON_AddArrayToObject(st, "time_series");
  for (size_t i = 0; i < m->n_seconds; i++) {
    const struct results_second *sec = &m->seconds[i];
    cJSON *row = cJSON_CreateObject();
    cJSON_AddNumberToObject(row, "t_s", (double)i);
    cJSON_AddNumberToObject(row, "dispatched", (double)sec->dispatched);
    cJSON_AddNumberToObject(row, "completed", (double)sec->completed);
    cJSON_AddNumberToObject(row, "failed", (double)sec->failed);
    cJSON_AddNumberToObject(row, "output_tokens", (double)sec->output_tokens);
    cJSON_AddNumberToObject(row, "ttft_p50_ms", sec->ttft_p50_ms);
    cJSON_AddNumberToObject(row, "tpot_p50_ms", sec->tpot_p50_ms);
    cJSON_AddItemToArray(series, row);
  }
  struct sbuf sb = {0};
  py_json_value(&sb, root);
  cJSON_Delete(root);
  return sbuf_take(&sb);
}

char *results_default_filename_alloc(const struct results_settings *s, const char *date) {
  char rate[48];
  results_format_python_float(rate, sizeof(rate), s->request_rate);
  const char *slash = strrchr(s->model_id, '/');
  const char *base = slash ? slash + 1 : s->model_id;
  if (s->max_concurrency > 0)
    return xasprintf("%s-%sqps-concurrency%d-%s-%s.json", s->backend, rate, s->max_concurrency,
                     base, date);
  return xasprintf("%s-%sqps-%s-%s.json", s->backend, rate, base, date);
}

char *results_path_alloc(const char *result_dir, const char *filename) {
  /* posixpath.join: an absolute part restarts the path; a separator is added
   * only when the first part does not end with one. */
  if (!result_dir || !*result_dir || filename[0] == '/')
    return xstrdup(filename);
  size_t n = strlen(result_dir);
  return xasprintf("%s%s%s", result_dir, result_dir[n - 1] == '/' ? "" : "/", filename);
}

int results_save(const char *result_dir, const char *filename, const char *json,
                 struct st_err *err) {
  if (result_dir && *result_dir) {
    struct st_err mkdir_err; /* a missing folder still gets the rescue below */
    path_mkdir_p(result_dir, 0755, &mkdir_err);
  }
  char *path = results_path_alloc(result_dir, filename);
  int rc = file_write_or_rescue(path, json, strlen(json), 0644, err);
  free(path);
  return rc;
}

/* ---------------------------------------------------------------- reading back */
static double num_or(const cJSON *o, const char *key, double fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static char *str_dup_or_null(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

int results_load(const char *path, struct results_file *out, struct st_err *err) {
  memset(out, 0, sizeof(*out));
  size_t len;
  char *text = file_read_all(path, &len, err);
  if (!text)
    return -1;
  cJSON *root = cJSON_ParseWithLength(text, len);
  free(text);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return err_setf(err, "%s: not a JSON object (benchmark result expected)", path);
  }
  if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "duration")) ||
      !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "completed"))) {
    cJSON_Delete(root);
    return err_setf(err, "%s: missing \"duration\" or \"completed\" (not a benchmark_serving result)",
                    path);
  }
  out->path = xstrdup(path);
  out->backend = str_dup_or_null(root, "backend");
  out->model_id = str_dup_or_null(root, "model_id");
  out->date = str_dup_or_null(root, "date");
  out->num_prompts = (int)num_or(root, "num_prompts", -1);
  out->max_concurrency = (int)num_or(root, "max_concurrency", -1);
  const cJSON *rate = cJSON_GetObjectItemCaseSensitive(root, "request_rate");
  out->request_rate = cJSON_IsNumber(rate) ? rate->valuedouble : (double)INFINITY;
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "servetop");
  if (cJSON_IsObject(st)) {
    out->servetop = true;
    out->interrupted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "interrupted"));
  }
  results_figures_from_json(root, &out->figs);
  out->json = root;
  return 0;
}

/* The item at a "a/b/c" path of nested objects, or NULL. */
static const cJSON *json_at_path(const cJSON *root, const char *path) {
  const cJSON *o = root;
  const char *p = path;
  while (o && *p) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    char key[96];
    snprintf(key, sizeof key, "%.*s", (int)len, p);
    o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    p += len + (slash ? 1 : 0);
  }
  return o;
}

/* One statistic of a distribution: the reference's flat key
 * "<stat>_<name>_ms" or, in an object, "<stat><suffix>" (median is p50). */
static double stat_number(const cJSON *o, const char *stat, const char *name, const char *suffix) {
  char key[96];
  if (name)
    snprintf(key, sizeof key, "%s_%s_ms", stat, name);
  else
    snprintf(key, sizeof key, "%s%s", stat, suffix ? suffix : "");
  return num_or(o, key, (double)NAN);
}

void results_figures_from_json(const void *json, struct fig_set *out) {
  const cJSON *root = json;
  static const char *const words[FIG_N_STATS] = {"mean", "median", "p90", "p99"};
  fig_set_clear(out);
  for (int i = 0; i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    struct fig_value *f = &out->f[i];
    switch (d->json_style) {
    case FIG_JSON_NONE:
      break;
    case FIG_JSON_NUMBER: {
      const cJSON *v = json_at_path(root, d->json);
      fig_set_scalar(out, d->id, cJSON_IsNumber(v), cJSON_IsNumber(v) ? v->valuedouble : (double)NAN);
      break;
    }
    case FIG_JSON_REF_STATS:
      for (int k = 0; k < FIG_N_STATS; k++)
        f->v[k] = stat_number(root, words[k], d->json ? d->json : d->name, NULL);
      f->valid = isfinite(f->v[FIG_STAT_MEAN]);
      f->n = 0; /* the reference saves no sample count */
      break;
    case FIG_JSON_STAT_OBJECT: {
      const cJSON *o = json_at_path(root, d->json);
      const char *suffix = strcmp(d->unit, "ms") == 0 ? "_ms" : "";
      for (int k = 0; k < FIG_N_STATS; k++)
        f->v[k] = stat_number(o, words[k], NULL, suffix);
      f->n = (int64_t)num_or(o, "n", 0);
      f->valid = f->n > 0 && isfinite(f->v[FIG_STAT_MEAN]);
      break;
    }
    }
  }
  /* The intervals, where the file has them (servetop/additions/ci) */
  const cJSON *cis = json_at_path(root, "servetop/additions/ci/figures");
  for (int i = 0; cis && i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(cis, d->name);
    for (int k = 0; cJSON_IsObject(one) && k < (d->kind == FIG_SCALAR ? 1 : FIG_N_STATS); k++) {
      const cJSON *pair = cJSON_GetObjectItemCaseSensitive(one, ci_stat_key(d, k));
      const cJSON *lo = cJSON_GetArrayItem(pair, 0), *hi = cJSON_GetArrayItem(pair, 1);
      if (cJSON_IsArray(pair) && cJSON_IsNumber(lo) && cJSON_IsNumber(hi) &&
          lo->valuedouble <= hi->valuedouble)
        fig_set_ci(out, d->id, (enum fig_stat)k, lo->valuedouble, hi->valuedouble);
    }
  }
  fig_set_derive(out, 0);
}

bool results_failure_cut_by_stop(enum lg_failure f) {
  return f == LG_FAIL_INTERRUPTED || f == LG_FAIL_NOT_SENT;
}

void results_file_fini(struct results_file *f) {
  free(f->path);
  free(f->backend);
  free(f->model_id);
  free(f->date);
  cJSON_Delete(f->json);
  memset(f, 0, sizeof(*f));
}
