/* tune: the full grid, the reference the search is measured against (`servetop tune --grid`,
 * tests/bench/tune_vs_grid.sh, docs/tune.md "The search measured").
 *
 * Every configuration of the space, the recipe's setting first and then in odometer order
 * (the first knob fastest), at every concurrency from conc_min up, one by one, until the first
 * one whose SLO fails (or conc_max): a configuration's answer is the last concurrency before
 * that failure, its goodput the throughput measured there. Stopping at the first failure
 * rests on the search's own assumption (latency grows with load: above a failing concurrency
 * nothing holds); everything else is measured, nothing skipped or pruned. The result has the
 * search's shape, so the report, tune.json and the charts are the same. */
#include "tune/tune_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next configuration in odometer order; false after the last. */
static bool next_config(const struct tune_space *space, struct tune_config *cfg) {
  for (size_t k = 0; k < space->n_knobs; k++) {
    if (++cfg->idx[k] < space->knobs[k].n_values)
      return true;
    cfg->idx[k] = 0;
  }
  return false;
}

/* Measures configuration c from conc_min up to its first failure. Returns 0, 1 when the
 * search must end (budget, stop) or -1 (the callback failed). */
static int grid_config(const struct tune_slo *slo, const struct tune_options *opt,
                       tune_measure_fn measure, void *ctx, struct tune_result *res,
                       size_t ci, struct st_err *err) {
  for (int conc = opt->conc_min; conc <= opt->conc_max; conc++) {
    struct tune_point pt;
    int r = tune_probe(slo, opt, measure, ctx, res, ci, conc, &pt, err);
    struct tune_config_result *c = &res->configs[ci];
    if (r == TUNE_PROBE_END) {
      c->status = TUNE_CFG_OUT_OF_BUDGET;
      return 1;
    }
    if (r == TUNE_PROBE_ERROR)
      return -1;
    if (r == TUNE_PROBE_START_FAILED) {
      c->status = TUNE_CFG_START_FAILED;
      c->best_conc = 0; /* nothing it measured counts */
      return 0;
    }
    bool holds = r == TUNE_PROBE_HOLDS;
    if (holds) {
      c->best_conc = conc;
      c->goodput = pt.throughput;
    } else {
      c->fail_conc = conc;
    }
    if (opt->on_point)
      opt->on_point(ctx, res);
    if (!holds)
      break;
  }
  struct tune_config_result *c = &res->configs[ci];
  c->status = c->best_conc > 0 ? TUNE_CFG_BEST_FOUND : TUNE_CFG_NONE_HOLDS;
  return 0;
}

int tune_grid(const struct tune_space *space, const struct tune_slo *slo,
              const struct tune_options *opt_in, tune_measure_fn measure, void *ctx,
              struct tune_result *res, struct st_err *err) {
  memset(res, 0, sizeof *res);
  res->winner = res->runner_up = -1;
  struct tune_options opt = *opt_in;
  opt.conc_min = opt.conc_min < 1 ? 1 : opt.conc_min;
  opt.conc_max = opt.conc_max < 1 ? 1024 : opt.conc_max;
  if (space->n_knobs > TUNE_MAX_KNOBS)
    return err_setf(err, "tune: %zu knobs (at most %d)", space->n_knobs, TUNE_MAX_KNOBS);
  if (opt.conc_min > opt.conc_max)
    return err_setf(err, "tune: the lowest concurrency %d is above the highest %d", opt.conc_min,
                    opt.conc_max);
  for (size_t k = 0; k < space->n_knobs; k++)
    if (space->knobs[k].n_values == 0 || space->start.idx[k] >= space->knobs[k].n_values)
      return err_setf(err, "--knob %s: no values, or the start is not one of them",
                      space->knobs[k].name);
  struct tune_config cfg;
  memset(&cfg, 0, sizeof cfg);
  int rc = 0;
  for (bool first = true, more = true; more && rc == 0; first = false) {
    const struct tune_config *this = first ? &space->start : &cfg;
    if (!first && tune_config_eq(space, &cfg, &space->start)) { /* measured first */
      more = next_config(space, &cfg);
      continue;
    }
    res->configs = xreallocarray(res->configs, res->n_configs + 1, sizeof *res->configs);
    struct tune_config_result *c = &res->configs[res->n_configs];
    memset(c, 0, sizeof *c);
    c->cfg = *this;
    res->n_configs++;
    rc = grid_config(slo, &opt, measure, ctx, res, res->n_configs - 1, err);
    if (!first)
      more = next_config(space, &cfg);
  }
  return tune_finish(res, rc < 0);
}
