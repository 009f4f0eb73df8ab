/* engine: the server-signals scraper and the engines' /metrics readers
 * (fixtures in tests/data/metrics/), run-scoped acceptance. */
#include "engine/engine.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/prom_fixture.h"

/* ---------------------------------------------------------------- server signals */
START_TEST(signals_reduce_fixtures) {
  struct prom_set set;
  struct sig_point pt = {.t_s = 1.5};
  const struct eng_ops *engine = NULL;
  prom_fixture_parse("sglang_metrics.txt", &set);
  sig_point_from_prom(&set, &pt, &engine);
  ck_assert_ptr_eq(engine, eng_find("sglang"));
  ck_assert(pt.t_s == 1.5);
  ck_assert(pt.accept_length == 2.71 && pt.accept_rate == 0.6775);
  ck_assert(pt.num_running == 128.0 && pt.num_queued == 3.0 && pt.kv_usage_frac == 0.41);
  ck_assert(pt.gen_tokens_total == 1234567.0);
  prom_set_free(&set);

  engine = NULL;
  prom_fixture_parse("vllm_metrics.txt", &set);
  sig_point_from_prom(&set, &pt, &engine);
  ck_assert_ptr_eq(engine, eng_find("vllm"));
  ck_assert(pt.drafts_total == 1000.0 && pt.draft_tokens_total == 3000.0);
  ck_assert(pt.accepted_tokens_total == 1800.0 && pt.accepted_per_pos_total[2] == 400.0);
  ck_assert(isnan(pt.accepted_per_pos_total[3]));
  ck_assert(pt.num_running == 32.0);
  prom_set_free(&set);
}
END_TEST

static struct sig_point nan_point(double t_s) {
  struct sig_point p;
  memset(&p, 0, sizeof(p));
  p.t_s = t_s;
  p.accept_length = p.accept_rate = p.kv_usage_frac = p.num_running = p.num_queued = (double)NAN;
  p.gen_tokens_total = p.drafts_total = p.draft_tokens_total = p.accepted_tokens_total = (double)NAN;
  p.avg_spec_accept_length = (double)NAN;
  for (int i = 0; i < SIG_MAX_POSITIONS; i++)
    p.accepted_per_pos_total[i] = (double)NAN;
  return p;
}

START_TEST(signals_run_scoped_acceptance) {
  /* vLLM (D.2): length = 1 + dAccepted/dDrafts = 1 + 900/500; rate = 900/1500. */
  struct sig_point v[2] = {nan_point(0), nan_point(10)};
  v[0].drafts_total = 1000, v[0].draft_tokens_total = 3000, v[0].accepted_tokens_total = 1800;
  v[1].drafts_total = 1500, v[1].draft_tokens_total = 4500, v[1].accepted_tokens_total = 2700;
  double pos0[] = {800, 600, 400}, pos1[] = {1100, 900, 700};
  for (int p = 0; p < 3; p++) {
    v[0].accepted_per_pos_total[p] = pos0[p];
    v[1].accepted_per_pos_total[p] = pos1[p];
  }
  struct sig_summary sum;
  memset(&sum, 0, sizeof(sum));
  sum.engine = eng_find("vllm");
  sum.points = v;
  sum.n_points = 2;
  sig_summarize_points(&sum);
  ck_assert(sum.accept_length_valid && sum.accept_rate_valid);
  ck_assert_double_eq_tol(sum.accept_length, 2.8, 1e-12);
  ck_assert_double_eq_tol(sum.accept_rate, 0.6, 1e-12);
  ck_assert_int_eq(sum.n_positions, 3);
  ck_assert_double_eq_tol(sum.per_position_rate[1], 0.6, 1e-12);
  ck_assert_str_eq(sum.accept_length_method, "vllm_counter_deltas");

  /* SGLang, server info: G0=1000 at L0=2.0 (500 steps), G1=4000 at L1=2.5
   * (1600 steps): the run made 3000 tokens in 1100 steps. */
  struct sig_point g[3] = {nan_point(0), nan_point(1), nan_point(2)};
  g[0].gen_tokens_total = 1000, g[0].avg_spec_accept_length = 2.0;
  g[1].gen_tokens_total = 1100, g[1].accept_length = 2.0, g[1].accept_rate = 0.25;
  g[2].gen_tokens_total = 4000, g[2].avg_spec_accept_length = 2.5, g[2].accept_length = 3.0;
  g[2].accept_rate = 0.5;
  memset(&sum, 0, sizeof(sum));
  sum.engine = eng_find("sglang");
  sum.points = g;
  sum.n_points = 3;
  sig_summarize_points(&sum);
  ck_assert(sum.accept_length_valid);
  ck_assert_double_eq_tol(sum.accept_length, 3000.0 / 1100.0, 1e-12);
  ck_assert_str_eq(sum.accept_length_method, "sglang_server_info_cumulative_delta");
  ck_assert(sum.server_info_accept_length_start == 2.0 && sum.server_info_accept_length_end == 2.5);
  /* rate from gauges weighted by tokens: (0.25*100 + 0.5*2900) / 3000 */
  ck_assert_double_eq_tol(sum.accept_rate, (0.25 * 100 + 0.5 * 2900) / 3000.0, 1e-12);

  /* Without server info: gauge length weighted the same way. */
  g[2].avg_spec_accept_length = (double)NAN;
  memset(&sum, 0, sizeof(sum));
  sum.engine = eng_find("sglang");
  sum.points = g;
  sum.n_points = 3;
  sig_summarize_points(&sum);
  ck_assert_double_eq_tol(sum.accept_length, (2.0 * 100 + 3.0 * 2900) / 3000.0, 1e-12);
  ck_assert_str_eq(sum.accept_length_method, "sglang_metrics_gauge_weighted");

  /* Spec off (gauges 0, counters absent): nothing claimed. */
  struct sig_point off[2] = {nan_point(0), nan_point(1)};
  off[0].gen_tokens_total = 0, off[1].gen_tokens_total = 500;
  off[0].accept_length = off[1].accept_length = 0;
  memset(&sum, 0, sizeof(sum));
  sum.engine = eng_find("sglang");
  sum.points = off;
  sum.n_points = 2;
  sig_summarize_points(&sum);
  ck_assert(!sum.accept_length_valid && !sum.accept_rate_valid);
}
END_TEST

START_TEST(signals_unavailable_server_is_not_an_error) {
  /* Port 1 on loopback: connection refused at once. */
  struct sig_config cfg = {.base_url = "http://127.0.0.1:1", .interval_s = 0.05, .timeout_s = 0.5};
  struct sig_scraper *s = sig_scraper_start(&cfg);
  clock_sleep_us(120000);
  struct sig_live live;
  sig_scraper_live(s, &live);
  ck_assert(!live.valid);
  struct sig_summary sum;
  sig_scraper_finish(s, &sum);
  ck_assert(!sum.metrics_available && !sum.server_info_available);
  ck_assert(sum.n_scrapes >= 2);
  ck_assert_ptr_nonnull(strstr(sum.metrics_unavailable_reason, "/metrics"));
  ck_assert(!sum.accept_length_valid);
  sig_summary_fini(&sum);
}
END_TEST

/* A real llama-server's /metrics before and after 8 requests with a draft model
 * (tests/data/metrics/llamacpp_metrics*.txt): the per-position counters appear
 * with the first draft, so before it they count as 0. */
START_TEST(signals_llamacpp_counters) {
  struct prom_set set;
  struct sig_point pts[2] = {{.t_s = 0}, {.t_s = 1}};
  const struct eng_ops *engine = NULL;
  prom_fixture_parse("llamacpp_metrics_start.txt", &set);
  sig_point_from_prom(&set, &pts[0], &engine);
  prom_set_free(&set);
  ck_assert_ptr_eq(engine, eng_find("llamacpp"));
  ck_assert(pts[0].drafts_total == 0 && pts[0].accepted_per_pos_total[7] == 0);
  prom_fixture_parse("llamacpp_metrics.txt", &set);
  sig_point_from_prom(&set, &pts[1], &engine);
  prom_set_free(&set);
  ck_assert(pts[1].gen_tokens_total == 256 && pts[1].num_running == 0 && pts[1].num_queued == 0);
  ck_assert(pts[1].drafts_total == 45 && pts[1].draft_tokens_total == 305);
  ck_assert(pts[1].accepted_tokens_total == 203 && pts[1].accepted_per_pos_total[0] == 43);
  ck_assert(isnan(pts[1].kv_usage_frac)); /* /metrics has none: /slots gives it live */
  struct sig_summary sum;
  memset(&sum, 0, sizeof(sum));
  sum.engine = engine;
  sum.points = pts;
  sum.n_points = 2;
  sig_summarize_points(&sum);
  ck_assert_str_eq(sum.accept_length_method, "llamacpp_counter_deltas");
  ck_assert_double_eq_tol(sum.accept_length, 1.0 + 203.0 / 45.0, 1e-12);
  ck_assert_double_eq_tol(sum.accept_rate, 203.0 / 305.0, 1e-12);
  ck_assert_int_eq(sum.n_positions, 8);
  ck_assert_double_eq_tol(sum.per_position_rate[0], 43.0 / 45.0, 1e-12);
  ck_assert_double_eq_tol(sum.per_position_rate[7], 15.0 / 45.0, 1e-12);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine_signals");
  TCase *sig = tcase_create("signals");
  tcase_add_test(sig, signals_reduce_fixtures);
  tcase_add_test(sig, signals_run_scoped_acceptance);
  tcase_add_test(sig, signals_unavailable_server_is_not_an_error);
  tcase_add_test(sig, signals_llamacpp_counters);
  suite_add_tcase(s, sig);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
