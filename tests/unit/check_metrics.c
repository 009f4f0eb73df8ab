/* metrics: Prometheus text parser, numpy-exact statistics, live histogram (the
 * scraper that reads engines' /metrics is tested in check_engine_signals.c). */
#include "metrics/metrics.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#include "../lib/prom_fixture.h"

START_TEST(prom_dcgm_exporter) {
  struct prom_set set;
  prom_fixture_parse("dcgm_exporter.txt", &set);
  ck_assert_uint_eq(set.n_malformed, 0);
  ck_assert_uint_eq(set.n_samples, 7);
  ck_assert(prom_value_or(&set, "DCGM_FI_DEV_FB_USED", (prom_match){"gpu", "0", NULL}, -1) ==
            128514.0);
  ck_assert(prom_value_or(&set, "DCGM_FI_DEV_FB_USED", (prom_match){"gpu", "1", NULL}, -1) ==
            0.0);
  ck_assert(prom_value_or(&set, "DCGM_FI_DEV_FB_USED", (prom_match){"gpu", "7", NULL}, -1) ==
            -1.0);
  const struct prom_sample *s =
      prom_find(&set, "DCGM_FI_DEV_POWER_USAGE",
                (prom_match){"modelName", "NVIDIA H200", "device", "nvidia1", NULL});
  ck_assert_ptr_nonnull(s);
  ck_assert(s->value == 74.5);
  ck_assert_str_eq(prom_label_value(s, "UUID"), "GPU-8e1c2b3a-4d5e-6f70-8192-a3b4c5d6e7f8");
  ck_assert(prom_value_or(&set, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", NULL, 0) ==
            9.87654321e+10);
  double sum;
  ck_assert_uint_eq(prom_sum(&set, "DCGM_FI_DEV_POWER_USAGE", NULL, &sum), 2);
  ck_assert_double_eq_tol(sum, 612.345 + 74.5, 1e-9);
  ck_assert_int_eq(prom_type_of(&set, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), PROM_TYPE_COUNTER);
  ck_assert_int_eq(prom_type_of(&set, "DCGM_FI_DEV_FB_USED"), PROM_TYPE_GAUGE);
  prom_set_free(&set);
}
END_TEST

START_TEST(prom_sglang_and_vllm) {
  struct prom_set set;
  prom_fixture_parse("sglang_metrics.txt", &set);
  ck_assert_uint_eq(set.n_malformed, 0);
  double running;
  ck_assert_uint_eq(prom_sum(&set, "sglang:num_running_reqs", NULL, &running), 2);
  ck_assert(running == 128.0);
  ck_assert(prom_value_or(&set, "sglang:spec_accept_length", NULL, 0) == 2.71);
  ck_assert(prom_value_or(&set, "sglang:generation_tokens_total", NULL, 0) == 1234567.0);
  const struct prom_sample *inf =
      prom_find(&set, "sglang:time_to_first_token_seconds_bucket", (prom_match){"le", "+Inf", NULL});
  ck_assert_ptr_nonnull(inf);
  ck_assert(inf->value == 640.0);
  ck_assert_int_eq(prom_type_of(&set, "sglang:time_to_first_token_seconds_bucket"),
                   PROM_TYPE_HISTOGRAM);
  ck_assert_int_eq(prom_type_of(&set, "sglang:time_to_first_token_seconds_count"),
                   PROM_TYPE_HISTOGRAM);
  ck_assert_str_eq(set.families[0].help, "The number of running requests.");
  prom_set_free(&set);

  prom_fixture_parse("vllm_metrics.txt", &set);
  double per_pos;
  ck_assert_uint_eq(
      prom_sum(&set, "vllm:spec_decode_num_accepted_tokens_per_pos_total", NULL, &per_pos), 3);
  ck_assert(per_pos == 1800.0);
  ck_assert(prom_value_or(&set, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                          (prom_match){"position", "2", NULL}, 0) == 400.0);
  prom_set_free(&set);
}
END_TEST

START_TEST(prom_escapes_special_values_timestamps) {
  const char text[] = "# a plain comment\r\n"
                      "esc{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",} 1\r\n"
                      "  spaced { a = \"1\" , b=\"2\" }   2.5e-3   1700000000123  \n"
                      "pinf +Inf\n"
                      "ninf -Inf\n"
                      "nan NaN\n"
                      "hex 0x10\n"
                      "om_ts 3 1700000000.5\n"
                      "nolabels{} 7\n";
  struct prom_set set;
  prom_parse(text, sizeof(text) - 1, &set);
  ck_assert_uint_eq(set.n_malformed, 0);
  ck_assert_uint_eq(set.n_samples, 8);
  const struct prom_sample *e = prom_find(&set, "esc", NULL);
  ck_assert_str_eq(prom_label_value(e, "path"), "C:\\dir");
  ck_assert_str_eq(prom_label_value(e, "quote"), "say \"hi\"");
  ck_assert_str_eq(prom_label_value(e, "nl"), "a\nb");
  const struct prom_sample *sp = prom_find(&set, "spaced", (prom_match){"b", "2", NULL});
  ck_assert_ptr_nonnull(sp);
  ck_assert(sp->value == 2.5e-3);
  ck_assert(sp->has_timestamp);
  ck_assert_int_eq(sp->timestamp_ms, 1700000000123LL);
  ck_assert(isinf(prom_value_or(&set, "pinf", NULL, 0)) && prom_value_or(&set, "pinf", NULL, 0) > 0);
  ck_assert(isinf(prom_value_or(&set, "ninf", NULL, 0)) && prom_value_or(&set, "ninf", NULL, 0) < 0);
  ck_assert(isnan(prom_value_or(&set, "nan", NULL, 0)));
  ck_assert(prom_value_or(&set, "hex", NULL, 0) == 16.0);
  ck_assert_int_eq(prom_find(&set, "om_ts", NULL)->timestamp_ms, 1700000000500LL);
  ck_assert(prom_value_or(&set, "nolabels", NULL, 0) == 7.0);
  prom_set_free(&set);
}
END_TEST

START_TEST(prom_malformed_lines_are_skipped_and_counted) {
  const char text[] = "good 1\n"
                      "bad{a=\"unterminated} 1\n"  /* line 2 */
                      "9starts_with_digit 1\n"
                      "novalue\n"
                      "trailing 1 2 3\n"
                      "badnum 1.2.3\n"
                      "# TYPE x notatype\n"
                      "lab{a=1} 2\n"
                      "also_good{x=\"y\"} 2\n";
  struct prom_set set;
  prom_parse(text, sizeof(text) - 1, &set);
  ck_assert_uint_eq(set.n_samples, 2);
  ck_assert_uint_eq(set.n_malformed, 7);
  ck_assert_uint_eq(set.first_malformed_line, 2);
  ck_assert(prom_value_or(&set, "also_good", (prom_match){"x", "y", NULL}, 0) == 2.0);
  prom_set_free(&set);
}
END_TEST

START_TEST(prom_survives_random_bytes) {
  /* Deterministic pseudo-random bytes, including NULs and lone quotes. */
  uint32_t state = 12345;
  char buf[4096];
  for (int round = 0; round < 200; round++) {
    for (size_t i = 0; i < sizeof(buf); i++) {
      state = state * 1103515245u + 12345u;
      static const char alphabet[] = "ab_:{}=\",\\ \n\t#+-.e0123456789InfNa\r";
      buf[i] = (state >> 24) & 1 ? alphabet[(state >> 8) % (sizeof(alphabet) - 1)]
                                 : (char)(state >> 16);
    }
    struct prom_set set;
    prom_parse(buf, (size_t)(round * 20), &set);
    prom_set_free(&set);
  }
  struct prom_set empty;
  prom_parse(NULL, 0, &empty);
  ck_assert_uint_eq(empty.n_samples, 0);
  prom_set_free(&empty);
}
END_TEST

/* Expected values below were computed by hand with numpy's definitions:
 * mean, np.std (ddof=0), np.percentile(method="linear"). */
START_TEST(stats_match_numpy) {
  double x[] = {10, 3, 1, 4, 2}; /* sorted: 1 2 3 4 10 */
  struct stats_summary s;
  stats_summarize(x, 5, &s);
  ck_assert_uint_eq(s.n, 5);
  ck_assert_double_eq_tol(s.mean, 4.0, 1e-12);
  ck_assert_double_eq_tol(s.std, 3.1622776601683795, 1e-12); /* sqrt(50/5) */
  ck_assert_double_eq_tol(s.median, 3.0, 1e-12);
  ck_assert(x[0] == 1.0 && x[4] == 10.0);
  ck_assert_double_eq_tol(stats_percentile_sorted(x, 5, 90), 7.6, 1e-12);   /* h=3.6 */
  ck_assert_double_eq_tol(stats_percentile_sorted(x, 5, 99), 9.76, 1e-12);  /* h=3.96 */
  ck_assert_double_eq_tol(stats_percentile_sorted(x, 5, 99.9), 9.976, 1e-12);
  ck_assert(stats_percentile_sorted(x, 5, 100) == 10.0);
  ck_assert(stats_percentile_sorted(x, 5, 0) == 1.0);

  double even[] = {4, 1, 3, 2};
  stats_summarize(even, 4, &s);
  ck_assert_double_eq_tol(s.median, 2.5, 1e-12);
  ck_assert_double_eq_tol(stats_percentile_sorted(even, 4, 25), 1.75, 1e-12);
  ck_assert_double_eq_tol(s.std, 1.118033988749895, 1e-12); /* sqrt(1.25) */

  double one[] = {5};
  stats_summarize(one, 1, &s);
  ck_assert(s.mean == 5.0 && s.std == 0.0 && s.median == 5.0);
  ck_assert(stats_percentile_sorted(one, 1, 99.9) == 5.0);

  stats_summarize(NULL, 0, &s);
  ck_assert(s.n == 0 && s.mean == 0.0 && s.median == 0.0 && s.std == 0.0);
  ck_assert(stats_percentile_sorted(NULL, 0, 99) == 0.0);
}
END_TEST

START_TEST(stats_lerp_is_exact_at_ends) {
  /* numpy switches lerp direction at t=0.5 so p=100*(n-2+1)/(n-1) hits b exactly. */
  double v[] = {0.1, 0.7};
  ck_assert(stats_percentile_sorted(v, 2, 100.0 - 1e-12) <= 0.7);
  ck_assert_double_eq_tol(stats_percentile_sorted(v, 2, 75), 0.55, 1e-15);
  ck_assert_double_eq_tol(stats_percentile_sorted(v, 2, 25), 0.25, 1e-15);
}
END_TEST

/* Bit-for-bit numpy: the values below were printed by numpy 1.24 (float.hex()). */
START_TEST(stats_bit_identical_to_numpy) {
  /* np.median([a, b]) is (a + b) / 2; np.percentile(.., 50) is the lerp,
   * one ulp away for this pair. */
  double pair[] = {0x1.8e7a065dc55a7p-8, 0x1.152c057910bd3p-4};
  struct stats_summary s;
  stats_summarize(pair, 2, &s);
  ck_assert(s.median == 0x1.2e13a5deed12dp-5);
  ck_assert(stats_percentile_sorted(pair, 2, 50) == 0x1.2e13a5deed12ep-5);
  /* 20000 values: pairwise sums over 8192-element buffers, as np.sum. */
  enum { N = 20000 };
  double *x = xmalloc(N * sizeof(*x));
  for (size_t i = 0; i < N; i++)
    x[i] = (double)((i * 2654435761u) % 1000003u) / 997.0 + 0.1;
  ck_assert(stats_sum(x, N) == 0x1.3249fb4cc63a1p+23);
  stats_summarize(x, N, &s);
  ck_assert(s.mean == 0x1.f5d2e9f69e7a3p+8);
  ck_assert(s.std == 0x1.218d223615b6ep+8);
  free(x);
}
END_TEST

START_TEST(live_hist_percentiles) {
  struct live_hist *h = xmalloc(sizeof(*h));
  live_hist_reset(h);
  ck_assert(live_hist_percentile_us(h, 50) == 0.0);
  for (uint64_t v = 1; v <= 10000; v++)
    live_hist_record_us(h, v * 100); /* 100 µs .. 1 s, uniform */
  double p50 = live_hist_percentile_us(h, 50);
  double p99 = live_hist_percentile_us(h, 99);
  ck_assert_msg(fabs(p50 - 500000) / 500000 < 0.02, "p50 %f", p50);
  ck_assert_msg(fabs(p99 - 990000) / 990000 < 0.02, "p99 %f", p99);
  ck_assert(live_hist_percentile_us(h, 100) <= 1000000.0);
  struct live_hist *h2 = xmalloc(sizeof(*h2));
  live_hist_reset(h2);
  live_hist_record_us(h2, 7);
  live_hist_record_us(h2, UINT64_MAX); /* clamps, never overflows an index */
  live_hist_add(h, h2);
  ck_assert_uint_eq(h->total, 10002);
  free(h);
  free(h2);
}
END_TEST

static Suite *metrics_suite(void) {
  Suite *s = suite_create("metrics");
  TCase *prom = tcase_create("prometheus");
  tcase_add_test(prom, prom_dcgm_exporter);
  tcase_add_test(prom, prom_sglang_and_vllm);
  tcase_add_test(prom, prom_escapes_special_values_timestamps);
  tcase_add_test(prom, prom_malformed_lines_are_skipped_and_counted);
  tcase_add_test(prom, prom_survives_random_bytes);
  suite_add_tcase(s, prom);
  TCase *stats = tcase_create("stats");
  tcase_add_test(stats, stats_match_numpy);
  tcase_add_test(stats, stats_lerp_is_exact_at_ends);
  tcase_add_test(stats, stats_bit_identical_to_numpy);
  tcase_add_test(stats, live_hist_percentiles);
  suite_add_tcase(s, stats);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(metrics_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
