/* metrics: Prometheus text-format parsing, exact statistics (numpy-compatible)
 * and a live (windowed) latency estimator. (What an engine's /metrics mean,
 * and the scraper that reads them during a run, are in engine/engine.h.)
 *
 * Prometheus: prom_parse() turns exposition text (format 0.0.4 / OpenMetrics
 * text without exemplars) into a flat list of samples. It never fails: lines it
 * cannot read are skipped and counted, whatever the bytes. Lookups match a
 * metric name exactly (histogram parts are their own names: "x_bucket",
 * "x_sum", "x_count"; counters usually end in "_total") and a subset of labels.
 *
 * Statistics: stats_* follow numpy exactly: mean, population std (ddof=0) and
 * percentile with the default "linear" method, over every sample (no
 * approximation). Values are doubles in whatever unit the caller uses.
 */
#ifndef SERVETOP_METRICS_METRICS_H
#define SERVETOP_METRICS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- Prometheus text */
enum prom_type {
  PROM_TYPE_UNTYPED = 0,
  PROM_TYPE_COUNTER,
  PROM_TYPE_GAUGE,
  PROM_TYPE_HISTOGRAM,
  PROM_TYPE_SUMMARY,
};

struct prom_label {
  char *name;
  char *value;  /* escapes (\\ \" \n) resolved */
};

struct prom_sample {
  char *name;               /* full series name, e.g. "vllm:num_accepted_tokens_total" */
  struct prom_label *labels;
  size_t n_labels;
  double value;             /* +Inf, -Inf and NaN as IEEE values */
  bool has_timestamp;
  int64_t timestamp_ms;
};

struct prom_family {        /* from "# TYPE name type" (and "# HELP") lines */
  char *name;
  enum prom_type type;
  char *help;               /* NULL when no HELP line */
};

struct prom_set {
  struct prom_sample *samples;
  size_t n_samples;
  struct prom_family *families;
  size_t n_families;
  size_t n_malformed;            /* lines skipped because they could not be read */
  size_t first_malformed_line;   /* 1-based line number of the first one, 0 if none */
};

/* Parses len bytes of exposition text (need not be NUL-terminated) into out,
 * which is overwritten (call prom_set_free first when reusing it). Never fails;
 * malformed lines are skipped and counted. */
void prom_parse(const char *text, size_t len, struct prom_set *out);
void prom_set_free(struct prom_set *set);

/* A label filter: NULL, or name/value pairs ending with NULL, e.g.
 * (const char *const[]){"gpu", "0", NULL}. A sample matches when it has every
 * listed label with exactly that value (other labels are ignored). */
typedef const char *const prom_match[];

/* First sample called name whose labels include match; NULL if none. */
const struct prom_sample *prom_find(const struct prom_set *set, const char *name,
                                    const char *const *match);
/* Value of prom_find(), or fallback when there is none. */
double prom_value_or(const struct prom_set *set, const char *name, const char *const *match,
                     double fallback);
/* Sums every series called name matching match into *sum_out (0 when none);
 * returns how many series were summed. */
size_t prom_sum(const struct prom_set *set, const char *name, const char *const *match,
                double *sum_out);
/* Value of label label_name on sample s, or NULL. */
const char *prom_label_value(const struct prom_sample *s, const char *label_name);
/* Type declared for a family name (a histogram's "x_bucket" resolves to "x"); UNTYPED
 * when not declared. */
enum prom_type prom_type_of(const struct prom_set *set, const char *name);

/* ---------------------------------------------------------------- exact statistics */
/* Summary of a sample set, in the caller's unit. Empty sets give all zeros with
 * n = 0, as benchmark_serving.py does (`np.mean(x or 0)`). */
struct stats_summary {
  size_t n;
  double mean;
  double std;      /* population (ddof = 0) */
  double median;
  double min;
  double max;
};

/* numpy's pairwise summation, term for term (np.sum of a contiguous array). */
double stats_sum(const double *values, size_t n);
/* np.mean: stats_sum / n. */
double stats_mean(const double *values, size_t n);
/* Population standard deviation (numpy np.std default, ddof = 0). */
double stats_std(const double *values, size_t n);
/* numpy.percentile(x, p) with method "linear", x sorted ascending, p in [0, 100].
 * Returns 0 for n = 0. */
double stats_percentile_sorted(const double *sorted, size_t n, double p);
/* np.median of sorted x: the middle value, or (a + b) / 2 of the two middle
 * ones (not the linear percentile's lerp, which differs in the last bit). */
double stats_median_sorted(const double *sorted, size_t n);
/* Sorts values in place (ascending, NaN last). */
void stats_sort(double *values, size_t n);
/* Fills *out: mean and std over values in the order given (as numpy sums
 * them), then sorts values in place for median, min and max. */
void stats_summarize(double *values, size_t n, struct stats_summary *out);

/* ---------------------------------------------------------------- live estimator
 * A log-linear histogram for the live progress line and the dashboard: values
 * in microseconds from 1 µs to ~1.2 hours at ~1.6% relative resolution. Final
 * results never use it (they keep every sample); it exists so live percentiles
 * cost O(1) per record and a fixed amount of memory. Single writer; copy by
 * value to hand it to another thread. */
enum { LIVE_HIST_SUB_BUCKETS = 64, LIVE_HIST_OCTAVES = 32 };
struct live_hist {
  uint32_t counts[LIVE_HIST_OCTAVES][LIVE_HIST_SUB_BUCKETS];
  uint64_t total;
  uint64_t max_us;
};
void live_hist_reset(struct live_hist *h);
void live_hist_record_us(struct live_hist *h, uint64_t value_us);
void live_hist_add(struct live_hist *into, const struct live_hist *from);
/* Approximate value at percentile p (0..100), in µs; 0 when empty. */
double live_hist_percentile_us(const struct live_hist *h, double p);

#endif
