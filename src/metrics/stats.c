/* Exact statistics with numpy's definitions, and the live log-linear histogram. */
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double stats_mean(const double *values, size_t n) {
  if (n == 0)
    return 0.0;
  /* Pairwise-free Kahan summation: numpy uses pairwise summation; both are
   * exact to ~1 ulp for the sizes we see, plain summation is not at 1e7. */
  double sum = 0.0, comp = 0.0;
  for (size_t i = 0; i < n; i++) {
    double y = values[i] - comp;
    double t = sum + y;
    comp = (t - sum) - y;
    sum = t;
  }
  return sum / (double)n;
}

double stats_std(const double *values, size_t n) {
  if (n == 0)
    return 0.0;
  double mean = stats_mean(values, n);
  double sum_sq = 0.0, comp = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = values[i] - mean;
    double y = d * d - comp;
    double t = sum_sq + y;
    comp = (t - sum_sq) - y;
    sum_sq = t;
  }
  return sqrt(sum_sq / (double)n);
}

double stats_percentile_sorted(const double *sorted, size_t n, double p) {
  if (n == 0)
    return 0.0;
  if (p <= 0.0)
    return sorted[0];
  if (p >= 100.0)
    return sorted[n - 1];
  double h = (double)(n - 1) * (p / 100.0);
  size_t lo = (size_t)floor(h);
  if (lo >= n - 1)
    return sorted[n - 1];
  double frac = h - (double)lo;
  /* numpy's _lerp: a + (b - a) * t, switching to b - (b - a) * (1 - t) for
   * t >= 0.5 so the result is exact at both ends. */
  double a = sorted[lo], b = sorted[lo + 1], diff = b - a;
  return frac >= 0.5 ? b - diff * (1.0 - frac) : a + diff * frac;
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a))
    return isnan(b) ? 0 : 1;
  if (isnan(b))
    return -1;
  return (a > b) - (a < b);
}

void stats_sort(double *values, size_t n) {
  if (n > 1)
    qsort(values, n, sizeof(*values), cmp_double);
}

void stats_summarize(double *values, size_t n, struct stats_summary *out) {
  memset(out, 0, sizeof(*out));
  if (n == 0)
    return;
  stats_sort(values, n);
  out->n = n;
  out->mean = stats_mean(values, n);
  out->std = stats_std(values, n);
  out->median = stats_percentile_sorted(values, n, 50.0);
  out->min = values[0];
  out->max = values[n - 1];
}

/* ---------------------------------------------------------------- live histogram
 * Octave k >= 1 holds [64·2^(k-1), 64·2^k) µs split into 64 linear sub-buckets;
 * octave 0 holds [0, 64) µs at 1 µs resolution. */
void live_hist_reset(struct live_hist *h) {
  memset(h, 0, sizeof(*h));
}

static void live_hist_index(uint64_t v, unsigned *octave, unsigned *sub) {
  if (v < LIVE_HIST_SUB_BUCKETS) {
    *octave = 0;
    *sub = (unsigned)v;
    return;
  }
  unsigned msb = 63u - (unsigned)__builtin_clzll(v); /* >= 6 */
  unsigned k = msb - 5u;                              /* 64..127 -> 1 */
  if (k >= LIVE_HIST_OCTAVES) {
    *octave = LIVE_HIST_OCTAVES - 1;
    *sub = LIVE_HIST_SUB_BUCKETS - 1;
    return;
  }
  *octave = k;
  *sub = (unsigned)((v >> (k - 1)) - LIVE_HIST_SUB_BUCKETS);
}

void live_hist_record_us(struct live_hist *h, uint64_t value_us) {
  unsigned o, s;
  live_hist_index(value_us, &o, &s);
  h->counts[o][s]++;
  h->total++;
  if (value_us > h->max_us)
    h->max_us = value_us;
}

void live_hist_add(struct live_hist *into, const struct live_hist *from) {
  for (unsigned o = 0; o < LIVE_HIST_OCTAVES; o++)
    for (unsigned s = 0; s < LIVE_HIST_SUB_BUCKETS; s++)
      into->counts[o][s] += from->counts[o][s];
  into->total += from->total;
  if (from->max_us > into->max_us)
    into->max_us = from->max_us;
}

double live_hist_percentile_us(const struct live_hist *h, double p) {
  if (h->total == 0)
    return 0.0;
  double rank = p / 100.0 * (double)h->total;
  uint64_t target = rank < 1.0 ? 1 : (uint64_t)ceil(rank);
  uint64_t seen = 0;
  for (unsigned o = 0; o < LIVE_HIST_OCTAVES; o++) {
    for (unsigned s = 0; s < LIVE_HIST_SUB_BUCKETS; s++) {
      seen += h->counts[o][s];
      if (seen >= target) {
        if (o == 0)
          return (double)s;
        double width = (double)(1ull << (o - 1));
        double low = (double)(LIVE_HIST_SUB_BUCKETS + s) * width;
        double mid = low + width / 2.0;
        return mid > (double)h->max_us ? (double)h->max_us : mid;
      }
    }
  }
  return (double)h->max_us;
}
