/* metrics' confidence intervals (ci.c) on synthetic data with a known truth: coverage near 95%
 * over many seeded trials (independent and autocorrelated samples, quantiles, ratios of one
 * run and of repeats), bounds ordered, too few samples give no interval. */
#include "metrics/metrics.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_rng.h"
static double normal(void) {
  return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

START_TEST(t_quantiles) {
  ck_assert_double_eq_tol(ci_t975(1), 12.706, 1e-3);
  ck_assert_double_eq_tol(ci_t975(9), 2.262, 1e-3);
  ck_assert_double_eq_tol(ci_t975(40), 2.021, 2e-3);
  ck_assert_double_eq_tol(ci_t975(1000), 1.962, 1e-3);
  ck_assert(isnan(ci_t975(0)));
  for (int df = 1; df < 200; df++)
    ck_assert(ci_t975(df + 1) < ci_t975(df));
}
END_TEST

/* Too few samples: no interval, never a fake one. */
START_TEST(tiny_samples_give_unknown) {
  size_t l, u;
  ck_assert(!ci_quantile_ranks(5, 0.5, &l, &u)); /* 0.5^5 = 0.031 > 0.025 */
  ck_assert(ci_quantile_ranks(6, 0.5, &l, &u));
  ck_assert(l == 1 && u == 6);
  ck_assert(!ci_quantile_ranks(300, 0.99, &l, &u));
  ck_assert(ci_quantile_ranks(400, 0.99, &l, &u));
  ck_assert(l < u && u <= 400 && l >= 390);
  ck_assert(!ci_quantile_ranks(0, 0.5, &l, &u));
  /* the least n with an interval: the one below it has none */
  static const double qs[] = {0.5, 0.9, 0.99};
  static const size_t least[] = {6, 36, 368};
  for (size_t i = 0; i < 3; i++) {
    size_t m = ci_quantile_min_n(qs[i]);
    ck_assert_uint_eq(m, least[i]);
    ck_assert(ci_quantile_ranks(m, qs[i], &l, &u));
    ck_assert(!ci_quantile_ranks(m - 1, qs[i], &l, &u));
  }
  ck_assert_uint_eq(ci_quantile_min_n(0), 0);
  double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, lo, hi;
  ck_assert(!ci_mean_batched(v, NULL, 9, 5, &lo, &hi));
  ck_assert(isnan(lo) && isnan(hi));
  ck_assert_uint_eq(ci_batches_for(9), 0);
  ck_assert_uint_eq(ci_batches_for(10), 5);
  ck_assert_uint_eq(ci_batches_for(10000), CI_BATCHES);
  struct ci_ratio r;
  ci_ratio_of_repeats((double[]){1.2}, 1, true, &r);
  ck_assert(!r.known && r.ratio == 1.2 && r.verdict == CI_NO_DIFFERENCE);
  ci_ratio_of_intervals(100, NAN, NAN, 150, 140, 160, true, &r);
  ck_assert(!r.known && fabs(r.ratio - 1.5) < 1e-12);
  ck_assert_str_eq(ci_verdict_word(r.verdict), "no difference detected");
}
END_TEST

/* Order statistics: exponential samples, true quantile -ln(1 - q). */
START_TEST(quantile_coverage) {
  rng_state = 19;
  enum { TRIALS = 2000, N = 400 };
  static double x[N];
  const double qs[] = {0.5, 0.9, 0.99};
  int covered[3] = {0}, known[3] = {0};
  for (int t = 0; t < TRIALS; t++) {
    for (int i = 0; i < N; i++)
      x[i] = exponential(1.0);
    qsort(x, N, sizeof(x[0]), cmp_d);
    for (int k = 0; k < 3; k++) {
      double lo, hi, truth = -log(1 - qs[k]);
      if (!ci_quantile_sorted(x, N, 0, qs[k], &lo, &hi))
        continue;
      known[k]++;
      ck_assert(lo <= hi);
      ck_assert(lo <= stats_percentile_sorted(x, N, qs[k] * 100) &&
                stats_percentile_sorted(x, N, qs[k] * 100) <= hi);
      covered[k] += lo <= truth && truth <= hi;
    }
  }
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(known[k], TRIALS);
    double c = (double)covered[k] / TRIALS;
    printf("quantile q %.2f n %d: coverage %.3f\n", qs[k], N, c);
    ck_assert_msg(c >= 0.93 && c <= 0.99, "q %.2f coverage %.3f", qs[k], c);
  }
}
END_TEST

/* Clustered samples (ITL: the gaps of one request share its speed): counting requests, not
 * gaps, as the independent units keeps the coverage; counting gaps would not. */
START_TEST(clustered_quantile_coverage) {
  rng_state = 7;
  enum { TRIALS = 600, REQ = 100, GAPS = 20, N = REQ * GAPS };
  static double x[N];
  int by_request = 0, by_gap = 0;
  /* gap = speed of its request (log-normal) x exponential jitter: the median by simulation */
  static double big[200000];
  for (int i = 0; i < 200000; i++)
    big[i] = exp(0.5 * normal()) * exponential(1.0);
  qsort(big, 200000, sizeof(big[0]), cmp_d);
  double truth = stats_percentile_sorted(big, 200000, 50);
  for (int t = 0; t < TRIALS; t++) {
    for (int r = 0; r < REQ; r++) {
      double speed = exp(0.5 * normal());
      for (int g = 0; g < GAPS; g++)
        x[r * GAPS + g] = speed * exponential(1.0);
    }
    qsort(x, N, sizeof(x[0]), cmp_d);
    double lo, hi;
    ck_assert(ci_quantile_sorted(x, N, REQ, 0.5, &lo, &hi));
    by_request += lo <= truth && truth <= hi;
    ck_assert(ci_quantile_sorted(x, N, 0, 0.5, &lo, &hi));
    by_gap += lo <= truth && truth <= hi;
  }
  double c = (double)by_request / TRIALS, naive = (double)by_gap / TRIALS;
  printf("clustered median: coverage by request %.3f, by gap %.3f\n", c, naive);
  ck_assert_msg(c >= 0.93, "coverage by request %.3f", c);
  ck_assert_msg(naive < c, "by gap %.3f, by request %.3f", naive, c);
}
END_TEST

/* Quantiles of an autocorrelated series (AR(1), phi 0.9, true median 0): order statistics
 * alone are too narrow; the wider of them and the sections is near 95%. */
START_TEST(autocorrelated_quantile_coverage) {
  rng_state = 23;
  enum { TRIALS = 1000, N = 2000 };
  static double x[N], sorted[N];
  int binom = 0, wider = 0;
  for (int t = 0; t < TRIALS; t++) {
    double e = normal() / sqrt(1 - 0.81);
    for (int i = 0; i < N; i++) {
      e = 0.9 * e + normal();
      x[i] = sorted[i] = e;
    }
    qsort(sorted, N, sizeof(sorted[0]), cmp_d);
    double med = stats_percentile_sorted(sorted, N, 50), lo, hi, slo, shi;
    ck_assert(ci_quantile_sorted(sorted, N, 0, 0.5, &lo, &hi));
    binom += lo <= 0 && 0 <= hi;
    ck_assert(ci_quantile_sections(x, N, 0.5, med, &slo, &shi));
    ck_assert(slo <= med && med <= shi);
    wider += fmin(lo, slo) <= 0 && 0 <= fmax(hi, shi);
  }
  double b = (double)binom / TRIALS, w = (double)wider / TRIALS;
  printf("AR(1) median: order statistics %.3f, wider of them and sections %.3f\n", b, w);
  ck_assert_msg(b < 0.7, "order statistics alone covered %.3f", b);
  ck_assert_msg(w >= 0.92 && w <= 0.99, "coverage %.3f", w);
}
END_TEST

/* Batch means of an autocorrelated series (AR(1), phi 0.9: a loaded server's neighbouring
 * requests), known mean 5: near 95%, where the naive independent interval is far below. */
START_TEST(batch_means_coverage) {
  rng_state = 42;
  enum { TRIALS = 2000, N = 4000 };
  static double x[N];
  int covered = 0, naive_covered = 0, iid_covered = 0;
  for (int t = 0; t < TRIALS; t++) {
    double e = normal() / sqrt(1 - 0.81);
    for (int i = 0; i < N; i++) {
      e = 0.9 * e + normal();
      x[i] = 5 + e;
    }
    double mean = stats_mean(x, N), lo, hi;
    ck_assert(ci_mean_batched(x, NULL, N, mean, &lo, &hi));
    ck_assert(lo < mean && mean < hi);
    covered += lo <= 5 && 5 <= hi;
    double half = 1.96 * stats_std(x, N) / sqrt(N);
    naive_covered += mean - half <= 5 && 5 <= mean + half;
    /* independent exponential samples, mean 3 */
    for (int i = 0; i < 200; i++)
      x[i] = exponential(3.0);
    mean = stats_mean(x, 200);
    ck_assert(ci_mean_batched(x, NULL, 200, mean, &lo, &hi));
    iid_covered += lo <= 3 && 3 <= hi;
  }
  double c = (double)covered / TRIALS, naive = (double)naive_covered / TRIALS,
         iid = (double)iid_covered / TRIALS;
  printf("batch means: AR(1) %.3f (naive %.3f), independent %.3f\n", c, naive, iid);
  ck_assert_msg(c >= 0.92 && c <= 0.98, "AR(1) batch means coverage %.3f", c);
  ck_assert_msg(naive < 0.6, "the naive interval covered %.3f (the test is not autocorrelated)",
                naive);
  ck_assert_msg(iid >= 0.92 && iid <= 0.98, "independent coverage %.3f", iid);
}
END_TEST

/* A weighted batch ratio (sums over counts) is the pooled mean, and its interval covers. */
START_TEST(batch_ratio_of_sums) {
  rng_state = 3;
  enum { TRIALS = 1000, N = 300 };
  double sums[N], counts[N];
  int covered = 0;
  for (int t = 0; t < TRIALS; t++) {
    double s = 0, c = 0;
    for (int i = 0; i < N; i++) {
      counts[i] = 1 + (double)(int)(uniform01() * 30);
      sums[i] = 0;
      for (int g = 0; g < (int)counts[i]; g++)
        sums[i] += exponential(2.0);
      s += sums[i];
      c += counts[i];
    }
    double lo, hi;
    ck_assert(ci_mean_batched(sums, counts, N, s / c, &lo, &hi));
    covered += lo <= 2 && 2 <= hi;
  }
  double c = (double)covered / TRIALS;
  ck_assert_msg(c >= 0.92 && c <= 0.98, "coverage %.3f", c);
  printf("batch ratio of sums: coverage %.3f\n", c);
}
END_TEST

/* One run per arm: B's mean is 1.2 x A's; the log-ratio interval from both arms' batch-means
 * intervals covers 1.2 near 95% of the time, and reads "faster" when the gap is clear. */
START_TEST(ratio_of_intervals_coverage) {
  rng_state = 11;
  enum { TRIALS = 2000, N = 100 };
  double a[N], b[N];
  int covered = 0;
  for (int t = 0; t < TRIALS; t++) {
    for (int i = 0; i < N; i++) {
      a[i] = 100 + 20 * normal();
      b[i] = 120 + 24 * normal();
    }
    double ma = stats_mean(a, N), mb = stats_mean(b, N), alo, ahi, blo, bhi;
    ck_assert(ci_mean_batched(a, NULL, N, ma, &alo, &ahi));
    ck_assert(ci_mean_batched(b, NULL, N, mb, &blo, &bhi));
    struct ci_ratio r;
    ci_ratio_of_intervals(ma, alo, ahi, mb, blo, bhi, true, &r);
    ck_assert(r.known && r.lo <= r.ratio && r.ratio <= r.hi);
    covered += r.lo <= 1.2 && 1.2 <= r.hi;
  }
  double c = (double)covered / TRIALS;
  ck_assert_msg(c >= 0.92 && c <= 0.985, "coverage %.3f", c);
  printf("ratio of one run each: coverage %.3f\n", c);

  struct ci_ratio r;
  ci_ratio_of_intervals(100, 95, 105, 150, 140, 160, true, &r);
  ck_assert(r.known && r.verdict == CI_FASTER);
  ci_ratio_of_intervals(100, 95, 105, 150, 140, 160, false, &r); /* a latency 1.5x: slower */
  ck_assert(r.verdict == CI_SLOWER);
  ck_assert_str_eq(ci_verdict_word(r.verdict), "slower");
  ci_ratio_of_intervals(100, 90, 110, 102, 92, 112, true, &r);
  ck_assert(r.known && r.lo < 1 && r.hi > 1 && r.verdict == CI_NO_DIFFERENCE);
  char buf[96];
  ci_ratio_format(buf, sizeof buf, &r);
  ck_assert_str_eq(buf, "1.020x [0.886, 1.174] no difference detected");
}
END_TEST

/* Repeats: each repeat's ratio log-normal around 1.1; the t interval of the mean log covers
 * 1.1 near 95% with 3 repeats. */
START_TEST(ratio_of_repeats_coverage) {
  rng_state = 5;
  enum { TRIALS = 4000 };
  int covered = 0;
  for (int t = 0; t < TRIALS; t++) {
    double r3[3];
    for (int i = 0; i < 3; i++)
      r3[i] = 1.1 * exp(0.05 * normal());
    struct ci_ratio r;
    ci_ratio_of_repeats(r3, 3, true, &r);
    ck_assert(r.known && r.repeats == 3 && r.lo <= r.ratio && r.ratio <= r.hi);
    covered += r.lo <= 1.1 && 1.1 <= r.hi;
  }
  double c = (double)covered / TRIALS;
  ck_assert_msg(c >= 0.93 && c <= 0.97, "coverage %.3f", c);
  printf("ratio of 3 repeats: coverage %.3f\n", c);
  struct ci_ratio r;
  ci_ratio_of_repeats((double[]){1.10, 1.12, 1.11, NAN}, 4, true, &r);
  ck_assert(r.known && r.repeats == 3 && r.verdict == CI_FASTER);
  ci_ratio_of_repeats((double[]){0.9, 1.1}, 2, true, &r);
  ck_assert(r.known && r.verdict == CI_NO_DIFFERENCE);
}
END_TEST

/* A per-chunk figure (ITL) is set against another run's only where their chunks are alike:
 * speculative decoding on one side only, or tokens per chunk more than 10% apart, is unlike;
 * what is not known never is. */
START_TEST(chunks_unlike_rule) {
  ck_assert(fig_desc(FIG_ITL)->shown & FIG_PER_CHUNK);
  ck_assert(!(fig_desc(FIG_TPOT)->shown & FIG_PER_CHUNK));
  struct fig_set a, b, none;
  fig_set_clear(&a);
  fig_set_clear(&b);
  fig_set_clear(&none);
  fig_set_dist(&a, FIG_TOKENS_PER_CHUNK, 100, 1.0, 1.0, 1.0, 1.0);
  fig_set_dist(&b, FIG_TOKENS_PER_CHUNK, 100, 1.08, 1.09, 1.1, 1.2);
  ck_assert(!fig_chunks_unlike(&a, 0, &b, 0)); /* 9% apart: alike */
  ck_assert(fig_chunks_unlike(&a, 0, &b, 1));  /* speculative on one side */
  ck_assert(!fig_chunks_unlike(&a, 1, &b, 1));
  ck_assert(!fig_chunks_unlike(&a, -1, &b, 1)); /* one side's method not known */
  fig_set_dist(&b, FIG_TOKENS_PER_CHUNK, 100, 1.2, 1.2, 1.3, 1.4);
  ck_assert(fig_chunks_unlike(&a, 0, &b, 0));  /* a stream interval: 20% apart */
  ck_assert(fig_chunks_unlike(&b, -1, &a, -1)); /* either way round */
  ck_assert(!fig_chunks_unlike(&a, 0, &none, 0)); /* tokens per chunk not known */
  struct ci_ratio r;
  ci_ratio_init(&r);
  r.verdict = CI_NOT_COMPARABLE;
  ck_assert_str_eq(ci_verdict_word(r.verdict), "not comparable (per chunk; see TPOT)");
}
END_TEST

/* Output per GPU and interactivity carry their sources' intervals. */
START_TEST(derived_figures_carry_intervals) {
  struct fig_set s;
  fig_set_clear(&s);
  fig_set_scalar(&s, FIG_OUTPUT_TPUT, true, 1000);
  fig_set_ci(&s, FIG_OUTPUT_TPUT, FIG_VALUE, 900, 1100);
  fig_set_dist(&s, FIG_TPOT, 100, 21, 20, 25, 30);
  fig_set_ci(&s, FIG_TPOT, FIG_STAT_P50, 19, 25);
  fig_set_derive(&s, 4);
  double lo, hi;
  ck_assert(fig_get_ci(&s, FIG_OUTPUT_TPUT_PER_GPU, FIG_VALUE, &lo, &hi));
  ck_assert(lo == 225 && hi == 275);
  ck_assert(fig_get_ci(&s, FIG_INTERACTIVITY, FIG_VALUE, &lo, &hi));
  ck_assert_double_eq_tol(lo, 40, 1e-12);
  ck_assert_double_eq_tol(hi, 1000.0 / 19, 1e-12);
  fig_set_derive(&s, 0);
  ck_assert(!fig_get_ci(&s, FIG_OUTPUT_TPUT_PER_GPU, FIG_VALUE, &lo, &hi));
}
END_TEST

int main(void) {
  Suite *s = suite_create("metrics_ci");
  TCase *tc = tcase_create("ci");
  tcase_add_test(tc, t_quantiles);
  tcase_add_test(tc, tiny_samples_give_unknown);
  tcase_add_test(tc, quantile_coverage);
  tcase_add_test(tc, clustered_quantile_coverage);
  tcase_add_test(tc, autocorrelated_quantile_coverage);
  tcase_add_test(tc, batch_means_coverage);
  tcase_add_test(tc, batch_ratio_of_sums);
  tcase_add_test(tc, ratio_of_intervals_coverage);
  tcase_add_test(tc, ratio_of_repeats_coverage);
  tcase_add_test(tc, derived_figures_carry_intervals);
  tcase_add_test(tc, chunks_unlike_rule);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
