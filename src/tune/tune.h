/* tune: the search core of `servetop tune` (docs/tune.md). Pure: no process, no socket, no
 * clock. It parses the targets (--slo) and the knobs (--knob), and searches a space of server
 * configurations for the one with the highest goodput (output throughput at the highest
 * concurrency whose SLO holds), calling back for every measured point. "Holds" is judged on
 * 95% confidence bounds: every latency's upper bound inside its target, the lower bound of
 * the tok/s per user above its minimum.
 *
 *   per configuration: bracket (doubling) then bisect on integer concurrency;
 *   across configurations: coordinate search from the recipe's setting (axis passes, then a
 *            diagonal step along each pair of knobs);
 *   pruning: a configuration is dropped once the concurrencies still open below a failing one
 *            cannot beat the best goodput so far (bounds: the tok/s per user, and the
 *            throughput where it was seen rising);
 *   a configuration that fails to start is recorded with the reason; the search goes on. */
#ifndef SERVETOP_TUNE_TUNE_H
#define SERVETOP_TUNE_TUNE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* ---------------------------------------------------------------- targets: --slo */
enum tune_figure {
  TUNE_TTFT_P99_MS,
  TUNE_TPOT_P99_MS,
  TUNE_E2EL_P99_MS,
  TUNE_ITL_P99_MS,
  TUNE_MIN_TOK_S_PER_USER, /* a floor, not a ceiling */
  TUNE_N_FIGURES,
};

struct tune_slo {
  bool set[TUNE_N_FIGURES];
  double target[TUNE_N_FIGURES];
};

/* Does the SLO have a p99 target (a latency: ttft, tpot, e2el, itl)? Its first such key in
 * *key (when non-NULL). */
bool tune_slo_has_p99(const struct tune_slo *slo, const char **key);
/* The key of a figure in --slo ("ttft_p99_ms", ..., "min_tok_s_per_user"). */
const char *tune_figure_key(enum tune_figure f);
/* Parses "ttft_p99_ms=2000,tpot_p99_ms=50,..." into slo (cleared first). Errors name --slo
 * and the bad part: an unknown key (with the known ones), a value that is not a positive
 * number, a key given twice, an empty list. */
int tune_slo_parse(const char *text, struct tune_slo *slo, struct st_err *err);

/* ---------------------------------------------------------------- knobs: --knob */
/* One searched knob: a generic knob (kv-cache, max-batch), speculative decoding (spec) or any
 * server flag by name (leading dashes dropped); its values as the flag takes them. */
struct tune_knob {
  char *name;
  char **values;
  size_t n_values;
};

/* Parses "NAME=LO:HI:STEP" (an arithmetic range, HI included, written with the decimals of
 * its parts: kv-cache=0.80:0.92:0.04 -> 0.80 0.84 0.88 0.92) or "NAME=V1,V2,..." into k.
 * Errors name --knob and the bad part. */
int tune_knob_parse(const char *text, struct tune_knob *k, struct st_err *err);
void tune_knob_free(struct tune_knob *k);

/* ---------------------------------------------------------------- the search */
enum { TUNE_MAX_KNOBS = 16 };

/* One server configuration: the value index of each knob. */
struct tune_config {
  size_t idx[TUNE_MAX_KNOBS];
};

struct tune_space {
  const struct tune_knob *knobs;
  size_t n_knobs;
  struct tune_config start; /* the recipe's setting: the search begins here */
};

/* An estimate with its 95% confidence interval (lo <= point <= hi). */
struct tune_estimate {
  double point, lo, hi;
};

/* What one measured point gives: each figure (latencies in ms, tok/s per user) and the output
 * throughput (tok/s; per GPU or in all, as long as it is the same for every point). */
/* The percentiles of the dashboard's p50/p90/p99 switch. */
enum tune_stat { TUNE_STAT_P50, TUNE_STAT_P90, TUNE_STAT_P99, TUNE_N_STATS };

struct tune_point {
  struct tune_estimate figure[TUNE_N_FIGURES];
  struct tune_estimate throughput;
  /* Optional (valid when by_stat_valid): the latencies (TTFT, TPOT, E2EL, ITL: the first four
   * figures) at each percentile, for the Tune screen's p50/p90/p99 switch; the tok/s per user
   * is figure[]'s at every percentile. figure[] stays what the SLO judges; the search never
   * reads these. */
  bool by_stat_valid;
  struct tune_estimate by_stat[TUNE_N_STATS][TUNE_N_FIGURES];
};

/* Measures configuration cfg at a concurrency. Returns 0 with *out filled (why: "" or a note on
 * the point, e.g. that its p99 interval is unknown, which becomes its configuration's why
 * where that has none); TUNE_START_FAILED
 * when the server did not start with cfg (why: the server's reason, e.g. its out-of-memory
 * line); -1 for a failure that stops the search (err says why). The search calls it with one
 * configuration at a time, in order: a change of configuration means a restart. */
enum { TUNE_START_FAILED = 1, TUNE_STOPPED = 2 };
/* TUNE_STOPPED: the point was not measured because the search must end now (a stop, or the
 * time budget ran out while the server started); it does not count, the search ends as a stop
 * does (stopped, out_of_budget), keeping what was measured. */
typedef int (*tune_measure_fn)(void *ctx, const struct tune_config *cfg, int concurrency,
                               struct tune_point *out, char *why, size_t why_len,
                               struct st_err *err);

struct tune_result;
struct tune_options {
  int conc_min, conc_max; /* the concurrency searched (default 1 .. 1024) */
  int max_points;         /* measured points in all (0: no limit): the budget */
  /* Optional: called after every measured point with everything so far (the live screen,
   * the progress line); ctx is tune_search's. */
  void (*on_point)(void *ctx, const struct tune_result *so_far);
  /* Optional: when it reads true the search ends before the next point, keeping what was
   * measured (Ctrl-C, `q`, the time budget); the result says stopped. */
  const atomic_int *stop; /* lock-free: set from signal handlers and other threads */
  /* Measure the full grid instead of searching (tune_grid): the reference the search is
   * measured against (`servetop tune --grid`, tests/bench/tune_vs_grid.sh). */
  bool grid;
};

enum tune_status {
  TUNE_CFG_BEST_FOUND,    /* best_conc is the highest concurrency whose SLO holds */
  TUNE_CFG_NONE_HOLDS,    /* not even conc_min holds */
  TUNE_CFG_PRUNED,        /* dropped: cannot beat the best so far */
  TUNE_CFG_START_FAILED,  /* why: the server's reason */
  TUNE_CFG_OUT_OF_BUDGET, /* the point budget ran out during its search */
};
const char *tune_status_name(enum tune_status s);

struct tune_config_result {
  struct tune_config cfg;
  enum tune_status status;
  int best_conc;                /* highest concurrency known to hold (0: none) */
  struct tune_estimate goodput; /* throughput at best_conc */
  int fail_conc;                /* lowest concurrency known to fail (0: none) */
  int points;                   /* points measured for it */
  char why[256];                /* pruned / start failure: why */
};

/* One measured point, in the order measured: what the live screen, the report and the
 * charts draw (throughput against tok/s per user, per configuration). */
struct tune_probe {
  size_t config;         /* index into tune_result.configs */
  int concurrency;
  struct tune_point pt;  /* every figure with its interval */
  bool holds;            /* the SLO held on its bounds */
};

/* How a search ended: the one reading of it for the CLI's exit code, the chart, the Tune view
 * and tune.json's status. */
enum tune_end {
  TUNE_END_DONE,         /* the search ran to its end */
  TUNE_END_POINT_BUDGET, /* options.max_points ran out */
  TUNE_END_TIME_BUDGET,  /* a stop that was the caller's time budget: the search cannot tell
                            a stop's reason, so the caller (run/tune_run.c) sets it */
  TUNE_END_STOPPED,      /* a stop (Ctrl-C, q) */
};

struct tune_result {
  struct tune_config_result *configs; /* in the order visited */
  size_t n_configs;
  struct tune_probe *probes;          /* every measured point (start failures excluded) */
  size_t n_probes;
  int points; /* measured in all */
  bool out_of_budget;
  bool stopped; /* options.stop ended it */
  enum tune_end end; /* set once the search returns */
  long winner, runner_up; /* indexes into configs by goodput, -1: none */
};

/* Does a point meet the SLO on its confidence bounds? */
bool tune_slo_holds(const struct tune_slo *slo, const struct tune_point *pt);
/* The most points the search of one configuration takes for opt's range (bracket + bisect). */
int tune_points_per_config_max(const struct tune_options *opt);

/* Runs the search. Returns 0 (res filled, also when the budget ran out), or -1 when the
 * callback failed or the input is bad (err says why). Free res with tune_result_free. */
int tune_search(const struct tune_space *space, const struct tune_slo *slo,
                const struct tune_options *opt, tune_measure_fn measure, void *ctx,
                struct tune_result *res, struct st_err *err);
/* The full grid over the same space (src/tune/full_grid.c): every configuration, the recipe's
 * setting first and then in odometer order, at every concurrency from conc_min up to its
 * first failure (or conc_max); a configuration's answer is the last concurrency before that
 * failure. Nothing is pruned; the budget, stop, on_point and start failures work as in the
 * search, and the result has the search's shape. tune_search with opt->grid calls it. */
int tune_grid(const struct tune_space *space, const struct tune_slo *slo,
              const struct tune_options *opt, tune_measure_fn measure, void *ctx,
              struct tune_result *res, struct st_err *err);
void tune_result_free(struct tune_result *res);
/* A deep copy of src into dst (free with tune_result_free). */
void tune_result_copy(struct tune_result *dst, const struct tune_result *src);
/* Does probe i count as holding: its SLO held and its configuration was not marked failed to
 * start later (it died mid-search: nothing it measured counts)? The frontier, the chart and
 * the Tune view draw the others as not holding. */
bool tune_probe_counts(const struct tune_result *res, size_t i);
/* The frontier of the measured points that count as holding (tune_probe_counts), as InferenceX
 * plots its results:
 * throughput against tok/s per user, the points no other holding point beats on both. Writes
 * indexes into res->probes to out (room for res->n_probes), by tok/s per user ascending;
 * returns how many. */
size_t tune_frontier(const struct tune_result *res, size_t *out);
/* The same on n points given as arrays: tok/s per user, throughput, whether each counts
 * (holds); writes indexes (room for n) by tok/s per user ascending; returns how many. */
size_t tune_frontier_of(const double *user, const double *tput, const bool *holds, size_t n,
                        size_t *out);
/* The same configuration (the value index of each of the space's knobs)? */
bool tune_config_eq(const struct tune_space *space, const struct tune_config *a,
                    const struct tune_config *b);
/* The index of cfg in res->configs, -1 when it was not visited. */
long tune_config_find(const struct tune_result *res, const struct tune_space *space,
                      const struct tune_config *cfg);
/* Is a configuration in the running for the answer: a concurrency where its SLO holds and
 * its search ended on it (best found) or on the budget (a lower bound)? */
bool tune_config_is_candidate(const struct tune_config_result *c);
/* The candidate with the highest goodput, other than configuration `except` (-1: none);
 * the first of equals. -1 when there is none. The winner is tune_best_config(res, -1), the
 * runner-up tune_best_config(res, winner). */
long tune_best_config(const struct tune_result *res, long except);
/* The probe of configuration c at its best concurrency (the last one measured there that
 * holds), -1 when none. */
long tune_best_probe(const struct tune_result *res, size_t c);
/* "kv-cache=0.84 max-batch=128" into buf. */
void tune_config_describe(const struct tune_space *space, const struct tune_config *cfg, char *buf,
                          size_t len);

#endif
