/* Exact statistics with numpy's definitions, and the live log-linear histogram. */
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* numpy's pairwise summation (pairwise_sum in loops_utils.h.src): below 8
 * values a plain loop; up to 128 eight accumulators combined as
 * ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) plus the remainder in order; above
 * that the two halves (the first a multiple of 8 long), recursively. np.sum
 * and np.mean of a contiguous float64 array add exactly these terms in
 * exactly this order, so the results are bit-identical. */
static double pairwise_sum(const double *a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; i++)
      res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; j++)
      r[j] = a[j];
    size_t i;
    for (i = 8; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; j++)
        r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++)
      res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* A reduction hands the inner loop at most one buffer (np.getbufsize(),
 * 8192 elements) at a time, each summed pairwise into the running total. */
enum { NUMPY_BUFSIZE = 8192 };

double stats_sum(const double *values, size_t n) {
  double total = 0.0;
  for (size_t i = 0; i < n; i += NUMPY_BUFSIZE)
    total += pairwise_sum(values + i, n - i < NUMPY_BUFSIZE ? n - i : NUMPY_BUFSIZE);
  return total;
}

double stats_mean(const double *values, size_t n) {
  if (n == 0)
    return 0.0;
  return stats_sum(values, n) / (double)n; /* np.mean: umr_sum / count */
}

/* np.std (ddof 0): the mean, the squared deviations summed pairwise, / n, sqrt. */
double stats_std(const double *values, size_t n) {
  if (n == 0)
    return 0.0;
  double mean = stats_mean(values, n);
  double *sq = xmalloc(n * sizeof(*sq));
  for (size_t i = 0; i < n; i++) {
    double d = values[i] - mean;
    sq[i] = d * d;
  }
  double var = stats_sum(sq, n) / (double)n;
  free(sq);
  return sqrt(var);
}

/* np.median: the middle value, or np.mean of the two middle values, i.e.
 * (a + b) / 2 -- which differs from the linear percentile's a + (b - a) / 2
 * in the last bit for some pairs. */
double stats_median_sorted(const double *sorted, size_t n) {
  if (n == 0)
    return 0.0;
  if (n % 2 == 1)
    return sorted[n / 2];
  return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
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
  /* Mean and std in the given order (numpy sums the list as it comes), then
   * sorted for the order statistics. */
  out->n = n;
  out->mean = stats_mean(values, n);
  out->std = stats_std(values, n);
  stats_sort(values, n);
  out->median = stats_median_sorted(values, n);
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
