/* How sure: 95% confidence intervals of the figures and of A/B ratios
 * (docs/figures.md, "How sure", says which estimator serves which figure and why).
 *
 * - Batch means (ci_batch_ratio): a ratio of sums (tokens / seconds, a latency
 *   sum / requests) from K consecutive batches (time windows, or runs of
 *   requests in dispatch order); Student's t with K - 1 degrees of freedom on the
 *   spread of the batch ratios. Consecutive batches of a loaded server are close
 *   to independent even where neighbouring requests are not, so this is robust
 *   to the autocorrelation a shared batch puts between requests.
 * - Order statistics (ci_quantile_ranks / ci_quantile_sorted): the exact,
 *   distribution-free binomial interval of a quantile, [X(l), X(u)], for independent
 *   samples; sections (ci_quantile_sections): the spread of the quantile over K consecutive
 *   batches, for samples that are not. results.c takes the wider of the two.
 * - Ratios (ci_ratio_of_intervals, ci_ratio_of_repeats) on the log scale, and the
 *   verdict read from where the interval lies against 1. */
#include "metrics/metrics.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/util.h"

/* Student's t, two-sided 95% (the 0.975 quantile), df 1..30 from the table,
 * above by the Cornish-Fisher expansion around z (error < 1e-4 at df > 30). */
double ci_t975(int df) {
  static const double t[31] = {
      NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
      2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1)
    return (double)NAN;
  if (df <= 30)
    return t[df];
  double z = CI_Z975, v = (double)df, z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

bool ci_batch_ratio(const double *num, const double *den, size_t k, double est, double *lo,
                    double *hi) {
  *lo = *hi = (double)NAN;
  if (k < CI_MIN_BATCHES || !isfinite(est))
    return false;
  double sum_den = 0;
  for (size_t i = 0; i < k; i++) {
    if (!(den[i] > 0) || !isfinite(num[i]))
      return false;
    sum_den += den[i];
  }
  double r = 0, sum_num = 0;
  for (size_t i = 0; i < k; i++)
    sum_num += num[i];
  r = sum_num / sum_den;
  /* The ratio estimator's variance: sum((y_k - R m_k)^2) / (K (K - 1) mbar^2). */
  double mbar = sum_den / (double)k, ss = 0;
  for (size_t i = 0; i < k; i++) {
    double d = (num[i] - r * den[i]) / mbar;
    ss += d * d;
  }
  double se = sqrt(ss / ((double)k * (double)(k - 1)));
  double half = ci_t975((int)k - 1) * se;
  *lo = est - half;
  *hi = est + half;
  return true;
}

size_t ci_batches_for(size_t n) {
  size_t k = n / CI_MIN_PER_BATCH;
  if (k > CI_BATCHES)
    k = CI_BATCHES;
  return k >= CI_MIN_BATCHES ? k : 0;
}

bool ci_mean_batched(const double *values, const double *weights, size_t n, double est,
                     double *lo, double *hi) {
  *lo = *hi = (double)NAN;
  size_t k = ci_batches_for(n);
  if (k == 0)
    return false;
  double num[CI_BATCHES] = {0}, den[CI_BATCHES] = {0};
  for (size_t i = 0; i < n; i++) {
    size_t b = i * k / n; /* consecutive, sizes differing by at most one */
    num[b] += values[i];
    den[b] += weights ? weights[i] : 1.0;
  }
  return ci_batch_ratio(num, den, k, est, lo, hi);
}

/* log Gamma(x) for x > 0; lgamma_r, not lgamma: lgamma writes the global signgam, and two
 * run threads (run --ab-parallel) compute their results at once. */
static double log_gamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

/* log P(B = j), B ~ Binomial(n, q), 0 < q < 1. */
static double binom_log_pmf(double n, double j, double q) {
  return log_gamma(n + 1) - log_gamma(j + 1) - log_gamma(n - j + 1) + j * log(q) +
         (n - j) * log1p(-q);
}

bool ci_quantile_ranks(size_t n, double q, size_t *lo_rank, size_t *hi_rank) {
  *lo_rank = *hi_rank = 0;
  if (n == 0 || !(q > 0 && q < 1))
    return false;
  const double tail = (1 - CI_LEVEL) / 2;
  /* P(X(l) <= xi_q < X(u)) = P(l <= B <= u - 1), B the samples at or below the true
   * quantile. l: the largest with P(B <= l - 1) <= tail; u: the smallest with
   * P(B >= u) <= tail. The mass outside mean +- 12 sd (+ 30) is below 1e-30. */
  double nn = (double)n, mean = nn * q, sd = sqrt(nn * q * (1 - q));
  double from = floor(mean - 12 * sd - 30), to = ceil(mean + 12 * sd + 30);
  if (from < 0)
    from = 0;
  if (to > nn)
    to = nn;
  double cdf = 0;
  size_t l = 0, u = 0;
  bool have_u = false;
  for (double j = from; j <= to; j++) {
    cdf += exp(binom_log_pmf(nn, j, q)); /* cdf = P(B <= j) */
    if (cdf <= tail)
      l = (size_t)j + 1;                 /* P(B <= l - 1) <= tail */
    if (!have_u && cdf >= 1 - tail) {
      u = (size_t)j + 1;                 /* P(B >= u) = 1 - P(B <= j) <= tail */
      have_u = true;
    }
  }
  if (l < 1 || !have_u || u > n || u <= l)
    return false;
  *lo_rank = l;
  *hi_rank = u;
  return true;
}

size_t ci_quantile_min_n(double q) {
  size_t l, u;
  if (!(q > 0 && q < 1))
    return 0;
  for (size_t n = 1; n <= 1000000; n++) /* p99: 368 tries; each a few hundred terms */
    if (ci_quantile_ranks(n, q, &l, &u))
      return n;
  return 0;
}

bool ci_quantile_sorted(const double *sorted, size_t n, size_t n_eff, double q, double *lo,
                        double *hi) {
  *lo = *hi = (double)NAN;
  if (n_eff == 0 || n_eff > n)
    n_eff = n;
  size_t l, u;
  if (!ci_quantile_ranks(n_eff, q, &l, &u))
    return false;
  if (n_eff == n) {
    *lo = sorted[l - 1];
    *hi = sorted[u - 1];
  } else { /* the same relative ranks in the whole sample */
    *lo = stats_percentile_sorted(sorted, n, 100.0 * (double)(l - 1) / (double)(n_eff - 1));
    *hi = stats_percentile_sorted(sorted, n, 100.0 * (double)(u - 1) / (double)(n_eff - 1));
  }
  return isfinite(*lo) && isfinite(*hi);
}

bool ci_quantile_sections(const double *ordered, size_t n, double q, double est, double *lo,
                          double *hi) {
  *lo = *hi = (double)NAN;
  size_t k = ci_batches_for(n);
  if (k == 0 || !isfinite(est))
    return false;
  double qk[CI_BATCHES], sum = 0;
  size_t from = 0;
  double *tmp = xmalloc((n / k + 2) * sizeof(*tmp));
  for (size_t b = 0; b < k; b++) {
    size_t to = (b + 1) * n / k, m = to - from;
    for (size_t i = 0; i < m; i++)
      tmp[i] = ordered[from + i];
    stats_sort(tmp, m);
    qk[b] = stats_percentile_sorted(tmp, m, q * 100.0);
    sum += qk[b];
    from = to;
  }
  free(tmp);
  double mean = sum / (double)k, ss = 0;
  for (size_t b = 0; b < k; b++)
    ss += (qk[b] - mean) * (qk[b] - mean);
  double half = ci_t975((int)k - 1) * sqrt(ss / (double)(k - 1) / (double)k);
  *lo = est - half;
  *hi = est + half;
  return isfinite(half);
}

/* Half an interval on the log scale, as a standard error (the interval taken as +- z se). */
static bool log_se(double v, double lo, double hi, double *se) {
  if (!(v > 0 && lo > 0 && hi >= lo) || !isfinite(hi))
    return false;
  *se = (log(hi) - log(lo)) / (2 * CI_Z975);
  return true;
}

void ci_ratio_init(struct ci_ratio *r) {
  r->ratio = r->lo = r->hi = (double)NAN;
  r->known = false;
  r->repeats = 0;
  r->verdict = CI_NO_DIFFERENCE;
}

enum ci_verdict ci_verdict_of(const struct ci_ratio *r, bool higher_is_better) {
  if (!r->known)
    return CI_NO_DIFFERENCE;
  if (r->lo > 1)
    return higher_is_better ? CI_FASTER : CI_SLOWER;
  if (r->hi < 1)
    return higher_is_better ? CI_SLOWER : CI_FASTER;
  return CI_NO_DIFFERENCE;
}

const char *ci_verdict_word(enum ci_verdict v) {
  static const char *const words[] = {[CI_NO_DIFFERENCE] = "no difference detected",
                                      [CI_FASTER] = "faster", [CI_SLOWER] = "slower",
                                      [CI_NOT_COMPARABLE] = "not comparable (per chunk; see TPOT)"};
  return (unsigned)v < ST_ARRAY_LEN(words) ? words[v] : words[CI_NO_DIFFERENCE];
}

void ci_ratio_of_intervals(double a, double a_lo, double a_hi, double b, double b_lo,
                           double b_hi, bool higher_is_better, struct ci_ratio *out) {
  ci_ratio_init(out);
  if (a > 0 && isfinite(a) && isfinite(b) && b >= 0)
    out->ratio = b / a;
  double se_a, se_b;
  if (isfinite(out->ratio) && out->ratio > 0 && log_se(a, a_lo, a_hi, &se_a) &&
      log_se(b, b_lo, b_hi, &se_b)) {
    double half = CI_Z975 * sqrt(se_a * se_a + se_b * se_b);
    out->lo = out->ratio * exp(-half);
    out->hi = out->ratio * exp(half);
    out->known = true;
  }
  out->verdict = ci_verdict_of(out, higher_is_better);
}

void ci_ratio_of_repeats(const double *ratios, size_t n, bool higher_is_better,
                         struct ci_ratio *out) {
  ci_ratio_init(out);
  double sum = 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (ratios[i] > 0 && isfinite(ratios[i])) {
      sum += log(ratios[i]);
      m++;
    }
  out->repeats = (int)m;
  if (m == 0)
    return;
  double mean = sum / (double)m;
  out->ratio = exp(mean); /* the geometric mean of the repeats' ratios */
  if (m >= 2) {
    double ss = 0;
    for (size_t i = 0; i < n; i++)
      if (ratios[i] > 0 && isfinite(ratios[i])) {
        double d = log(ratios[i]) - mean;
        ss += d * d;
      }
    double half = ci_t975((int)m - 1) * sqrt(ss / (double)(m - 1) / (double)m);
    out->lo = exp(mean - half);
    out->hi = exp(mean + half);
    out->known = true;
  }
  out->verdict = ci_verdict_of(out, higher_is_better);
}

void ci_ratio_format(char *buf, size_t len, const struct ci_ratio *r) {
  if (!isfinite(r->ratio))
    snprintf(buf, len, "-");
  else if (r->known)
    snprintf(buf, len, "%.3fx [%.3f, %.3f] %s", r->ratio, r->lo, r->hi,
             ci_verdict_word(r->verdict));
  else
    snprintf(buf, len, "%.3fx [?] %s", r->ratio, ci_verdict_word(r->verdict));
}

bool ci_point_short(int64_t completed, double duration_s, int conc, char *why, size_t why_len) {
  int64_t min_req = ci_point_min_requests(conc);
  if (why_len)
    why[0] = '\0';
  if (completed < min_req) {
    if (why_len)
      snprintf(why, why_len, "short: %lld requests < %lld (%d x concurrency)", (long long)completed,
               (long long)min_req, CI_MIN_POINT_WAVES);
    return true;
  }
  if (!(duration_s >= CI_MIN_POINT_S)) {
    if (why_len) {
      double need = duration_s > 0 ? ceil((double)completed * CI_MIN_POINT_S * 1.1 / duration_s)
                                   : (double)min_req;
      snprintf(why, why_len, "short: %.1f s < %d s (--num-prompts %.0f for %d s)", duration_s,
               CI_MIN_POINT_S, need, CI_MIN_POINT_S);
    }
    return true;
  }
  return false;
}

int64_t ci_point_min_requests(int conc) {
  int64_t waves = (int64_t)CI_MIN_POINT_WAVES * (conc > 0 ? conc : 1);
  return waves > CI_MIN_POINT_REQUESTS ? waves : CI_MIN_POINT_REQUESTS;
}
