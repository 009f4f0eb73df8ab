/* tune: what the search (tune.c) and the grid (full_grid.c) share; not for other modules. */
#ifndef SERVETOP_TUNE_TUNE_INTERNAL_H
#define SERVETOP_TUNE_TUNE_INTERNAL_H

#include "tune/tune.h"

/* tune_probe's answers */
enum {
  TUNE_PROBE_FAILS = 0,         /* measured: the SLO fails */
  TUNE_PROBE_HOLDS = 1,         /* measured: the SLO holds */
  TUNE_PROBE_ERROR = -1,        /* the callback failed: the search fails (err says why) */
  TUNE_PROBE_START_FAILED = -2, /* the configuration did not start: its why says why */
  TUNE_PROBE_END = -3,          /* not measured: the budget ran out or a stop came */
};

/* One point of configuration res->configs[config] at conc, recorded once: the point budget
 * and the stop checked first (res->out_of_budget, res->stopped set), the callback called, the
 * point counted (res->points, the configuration's points), a start failure's reason kept in
 * the configuration's why, a measured point judged on slo and appended to res->probes with *pt
 * filled. Calls no on_point: the caller does, once its own state is updated. */
int tune_probe(const struct tune_slo *slo, const struct tune_options *opt,
               tune_measure_fn measure, void *ctx, struct tune_result *res, size_t config,
               int conc, struct tune_point *pt, struct st_err *err);

/* Ends a search or a grid: failed (the callback failed), res freed and -1; else its winner,
 * runner-up and end (from stopped and out_of_budget) set and 0. */
int tune_finish(struct tune_result *res, bool failed);

#endif
