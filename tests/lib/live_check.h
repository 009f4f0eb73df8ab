/* Shared by the C tests of the live figures (tests/unit/check_loadgen.c,
 * tests/integration/it_live.c): a live histogram's percentiles against the
 * records they summarise. Include after <check.h> and loadgen/loadgen.h. */
#ifndef SERVETOP_TESTS_LIVE_CHECK_H
#define SERVETOP_TESTS_LIVE_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static int live_check_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The live histogram's p50/p90/p99 are the ceil(p% x n)-th of the n samples
 * (us, sorted here) to within its stated 1/128, plus the microsecond the
 * samples are rounded to. */
static void live_check_percentiles(const char *what, const struct fig_value *live,
                                   uint64_t *us, size_t n) {
  ck_assert_msg(live->valid && (size_t)live->n == n, "%s: live n %lld, records %zu", what,
                (long long)live->n, n);
  qsort(us, n, sizeof(*us), live_check_cmp_u64);
  const double ps[] = {50, 90, 99};
  const double got[] = {live->v[FIG_STAT_P50], live->v[FIG_STAT_P90], live->v[FIG_STAT_P99]};
  for (int i = 0; i < 3; i++) {
    size_t k = (size_t)ceil(ps[i] / 100.0 * (double)n);
    double want_us = (double)us[k < 1 ? 0 : k - 1];
    ck_assert_msg(fabs(got[i] * 1000.0 - want_us) <= want_us / 128.0 + 1.0,
                  "%s p%g: live %.3f ms, records %.3f ms", what, ps[i], got[i], want_us / 1000.0);
  }
}

#endif
