/* results: the 95% intervals results_compute gives the figures a choice rests on, on synthetic
 * closed-loop runs with a known truth (seeded): ordered bounds holding the value, near-95%
 * coverage over trials, identical runs inside each other's intervals, nothing for a tiny run,
 * and the intervals saved in the result JSON and read back by the one reader. */
#include "results/results.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"

enum { MAX_REQ = 800, TOKENS = 20, TTFT_BASE_MS = 20, TTFT_EXP_MS = 50 };
static struct lg_record recs[MAX_REQ];
static uint32_t gaps[MAX_REQ][TOKENS - 1];

/* conc streams, each sending its next request when the last ends (the order records are
 * dispatched in); TTFT 20 ms + exponential(50 ms), 20 tokens one per chunk, gaps exponential
 * 10 ms. The true TTFT median: 20 + 50 ln 2 ms. */
static void make_run(struct lg_result *run, size_t n, int conc) {
  memset(run, 0, sizeof(*run));
  memset(recs, 0, sizeof(recs));
  int64_t clock_ns[64] = {0}, end_ns = 0;
  for (size_t i = 0; i < n; i++) {
    int s = 0;
    for (int k = 1; k < conc; k++)
      if (clock_ns[k] < clock_ns[s])
        s = k;
    struct lg_record *r = &recs[i];
    r->dispatch_ns = r->scheduled_ns = clock_ns[s];
    r->ttft_ns = (int64_t)((TTFT_BASE_MS + exponential(TTFT_EXP_MS)) * 1e6);
    int64_t e2el = r->ttft_ns;
    for (int g = 0; g < TOKENS - 1; g++) {
      gaps[i][g] = (uint32_t)(exponential(10.0) * 1000) + 1;
      e2el += (int64_t)gaps[i][g] * 1000;
    }
    r->e2el_ns = e2el;
    r->chunk_gaps_us = gaps[i];
    r->n_chunk_gaps = TOKENS - 1;
    r->prompt_len = 100;
    r->server_prompt_tokens = -1;
    r->output_tokens = TOKENS;
    r->draft_tokens = r->draft_accepted = -1;
    r->http_status = 200;
    clock_ns[s] += e2el;
    if (clock_ns[s] > end_ns)
      end_ns = clock_ns[s];
  }
  run->records = recs;
  run->n_records = n;
  run->start_mono_ns = 0;
  run->end_mono_ns = end_ns;
  run->start_unix_s = 1764550923;
  run->end_unix_s = run->start_unix_s + (double)end_ns / 1e9;
  run->num_workers = 1;
}

static void settings(struct results_settings *s) {
  memset(s, 0, sizeof(*s));
  struct st_err err;
  ck_assert_int_eq(results_parse_percentile_metrics("ttft,tpot,itl,e2el", s, &err), 0);
  ck_assert_int_eq(results_parse_metric_percentiles("99", s, &err), 0);
  s->backend = "sglang";
  s->model_id = "m";
  s->num_prompts = MAX_REQ;
  s->request_rate = (double)INFINITY;
  s->burstiness = 1.0;
  s->max_concurrency = 8;
}

/* The figures a choice rests on, and their stats. */
static const struct {
  enum fig_id id;
  enum fig_stat stat;
} choice[] = {
    {FIG_REQ_TPUT, FIG_VALUE},      {FIG_OUTPUT_TPUT, FIG_VALUE},   {FIG_TOTAL_TPUT, FIG_VALUE},
    {FIG_INTERACTIVITY, FIG_VALUE}, {FIG_TTFT, FIG_STAT_MEAN},      {FIG_TTFT, FIG_STAT_P50},
    {FIG_TTFT, FIG_STAT_P90},       {FIG_TTFT, FIG_STAT_P99},       {FIG_TPOT, FIG_STAT_MEAN},
    {FIG_TPOT, FIG_STAT_P50},       {FIG_TPOT, FIG_STAT_P90},       {FIG_TPOT, FIG_STAT_P99},
    {FIG_ITL, FIG_STAT_MEAN},       {FIG_ITL, FIG_STAT_P50},        {FIG_ITL, FIG_STAT_P90},
    {FIG_ITL, FIG_STAT_P99},        {FIG_E2EL, FIG_STAT_MEAN},      {FIG_E2EL, FIG_STAT_P50},
    {FIG_E2EL, FIG_STAT_P90},       {FIG_E2EL, FIG_STAT_P99},       {FIG_TOKENS_PER_CHUNK, FIG_STAT_MEAN},
    {FIG_TOKENS_PER_CHUNK, FIG_STAT_P50},
};

START_TEST(every_choice_figure_has_an_interval) {
  rng_state = 1;
  struct lg_result run;
  make_run(&run, MAX_REQ, 8);
  struct results_settings s;
  settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  for (size_t i = 0; i < sizeof(choice) / sizeof(choice[0]); i++) {
    double lo, hi, v = fig_get(&m.figs, choice[i].id, choice[i].stat);
    ck_assert_msg(fig_get_ci(&m.figs, choice[i].id, choice[i].stat, &lo, &hi), "%s %s: no interval",
                  fig_desc(choice[i].id)->name, fig_stat_name(choice[i].stat));
    ck_assert_msg(lo <= v && v <= hi, "%s %s: %g not in [%g, %g]", fig_desc(choice[i].id)->name,
                  fig_stat_name(choice[i].stat), v, lo, hi);
  }
  /* throughput's interval is a real one (not a point), a few percent wide */
  double lo, hi, v = fig_get(&m.figs, FIG_OUTPUT_TPUT, FIG_VALUE);
  ck_assert(fig_get_ci(&m.figs, FIG_OUTPUT_TPUT, FIG_VALUE, &lo, &hi));
  ck_assert_msg(lo < v && v < hi && (hi - lo) / v < 0.2, "[%g, %g] around %g", lo, hi, v);
  /* per GPU when the GPUs are known */
  fig_set_derive(&m.figs, 2);
  ck_assert(fig_get_ci(&m.figs, FIG_OUTPUT_TPUT_PER_GPU, FIG_VALUE, &lo, &hi));

  /* saved and read back by the one reader */
  char *json = results_json_alloc(&run, &s, &m, NULL);
  cJSON *root = cJSON_Parse(json);
  ck_assert_ptr_nonnull(root);
  cJSON *ci = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "servetop"),
                                                      "additions"), "ci");
  ck_assert(cJSON_IsObject(ci));
  ck_assert_double_eq(cJSON_GetObjectItem(ci, "level")->valuedouble, 0.95);
  struct fig_set back;
  results_figures_from_json(root, &back);
  for (size_t i = 0; i < sizeof(choice) / sizeof(choice[0]); i++) {
    double l0, h0, l1, h1;
    ck_assert(fig_get_ci(&m.figs, choice[i].id, choice[i].stat, &l0, &h0));
    ck_assert_msg(fig_get_ci(&back, choice[i].id, choice[i].stat, &l1, &h1), "%s %s not read back",
                  fig_desc(choice[i].id)->name, fig_stat_name(choice[i].stat));
    ck_assert(fabs(l0 - l1) <= 1e-9 * fabs(l0) && fabs(h0 - h1) <= 1e-9 * fabs(h0));
  }
  cJSON_Delete(root);
  free(json);
  results_metrics_fini(&m);
}
END_TEST

/* A tiny point (4 requests): no interval anywhere; unknown, not a fake one. */
START_TEST(tiny_point_has_no_interval) {
  rng_state = 2;
  struct lg_result run;
  make_run(&run, 4, 4);
  struct results_settings s;
  settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  for (size_t i = 0; i < sizeof(choice) / sizeof(choice[0]); i++) {
    double lo, hi;
    ck_assert_msg(!fig_get_ci(&m.figs, choice[i].id, choice[i].stat, &lo, &hi), "%s %s",
                  fig_desc(choice[i].id)->name, fig_stat_name(choice[i].stat));
  }
  char *json = results_json_alloc(&run, &s, &m, NULL);
  cJSON *root = cJSON_Parse(json);
  struct fig_set back;
  results_figures_from_json(root, &back);
  double lo, hi;
  ck_assert(!fig_get_ci(&back, FIG_OUTPUT_TPUT, FIG_VALUE, &lo, &hi));
  cJSON_Delete(root);
  free(json);
  results_metrics_fini(&m);
}
END_TEST

/* Over seeded trials of the same closed loop: output throughput's interval holds the expected
 * estimate (the mean over trials) and the TTFT median's the true median near 95% of the time;
 * identical runs fall inside each other's intervals as often as a 95% interval allows. */
START_TEST(coverage_over_identical_runs) {
  enum { TRIALS = 300, N = 400 };
  static double est[TRIALS], lo[TRIALS], hi[TRIALS];
  int ttft_covered = 0, ttft_mean_covered = 0;
  double ttft_median = TTFT_BASE_MS + TTFT_EXP_MS * log(2.0),
         ttft_mean = TTFT_BASE_MS + TTFT_EXP_MS;
  struct results_settings s;
  settings(&s);
  for (int t = 0; t < TRIALS; t++) {
    rng_state = 1000 + (uint64_t)t;
    struct lg_result run;
    make_run(&run, N, 8);
    struct results_metrics m;
    results_compute(&run, &s, &m);
    est[t] = fig_get(&m.figs, FIG_OUTPUT_TPUT, FIG_VALUE);
    ck_assert(fig_get_ci(&m.figs, FIG_OUTPUT_TPUT, FIG_VALUE, &lo[t], &hi[t]));
    double l, h;
    ck_assert(fig_get_ci(&m.figs, FIG_TTFT, FIG_STAT_P50, &l, &h));
    ttft_covered += l <= ttft_median && ttft_median <= h;
    ck_assert(fig_get_ci(&m.figs, FIG_TTFT, FIG_STAT_MEAN, &l, &h));
    ttft_mean_covered += l <= ttft_mean && ttft_mean <= h;
    results_metrics_fini(&m);
  }
  double mean = 0;
  for (int t = 0; t < TRIALS; t++)
    mean += est[t] / TRIALS;
  int covered = 0, pairs = 0, inside = 0;
  for (int t = 0; t < TRIALS; t++) {
    covered += lo[t] <= mean && mean <= hi[t];
    for (int u = 0; u < TRIALS; u++)
      if (u != t) {
        pairs++;
        inside += lo[t] <= est[u] && est[u] <= hi[t];
      }
  }
  double c = (double)covered / TRIALS, p = (double)inside / pairs,
         ct = (double)ttft_covered / TRIALS, cm = (double)ttft_mean_covered / TRIALS;
  printf("output throughput: coverage %.3f, another run inside %.3f; TTFT p50 %.3f, mean %.3f\n",
         c, p, ct, cm);
  /* at least 95%: the run-to-run allowance (CI_RUN_REL_SD) widens what the requests give, and
   * these synthetic runs have no run-to-run effect; the estimators' own coverage is checked
   * without it in check_metrics_ci */
  ck_assert_msg(c >= 0.95, "output throughput coverage %.3f", c);
  ck_assert_msg(p >= 0.90, "another identical run inside the interval %.3f", p);
  ck_assert_msg(ct >= 0.95, "TTFT p50 coverage %.3f", ct);
  ck_assert_msg(cm >= 0.95, "TTFT mean coverage %.3f", cm);
  /* ... and no wider than the allowance and the requests' noise together */
  double width = 0;
  for (int t = 0; t < TRIALS; t++)
    width += (hi[t] - lo[t]) / 2 / est[t] / TRIALS;
  printf("output throughput: mean half-width %.1f%% (allowance alone %.1f%%)\n", 100 * width,
         100 * CI_Z975 * CI_RUN_REL_SD);
  ck_assert_msg(width < 1.5 * CI_Z975 * CI_RUN_REL_SD, "half-width %.3f", width);
}
END_TEST

int main(void) {
  Suite *s = suite_create("results_ci");
  TCase *tc = tcase_create("ci");
  tcase_add_test(tc, every_choice_figure_has_an_interval);
  tcase_add_test(tc, tiny_point_has_no_interval);
  tcase_add_test(tc, coverage_over_identical_runs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
