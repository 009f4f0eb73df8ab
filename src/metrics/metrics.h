/* metrics: Prometheus text-format parsing, exact statistics (numpy-compatible)
 * and a live (windowed) latency estimator.
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

/* ---------------------------------------------------------------- server signals
 * A scraper thread (never the load generator's loop) that reads the server's
 * /metrics at start, every interval and at the end, and /get_server_info at
 * start and end, then derives run-scoped speculative-decoding acceptance:
 *  - vLLM: deltas of vllm:spec_decode_num_{drafts,draft_tokens,accepted_tokens}
 *    (and _per_pos) between the first and last scrape (D.2 formulas);
 *  - SGLang /metrics: sglang:spec_accept_length / _rate are gauges over the last
 *    decode-log interval; the run value is their mean over the scrapes taken
 *    during the run, weighted by the generation tokens produced between scrapes;
 *  - SGLang /get_server_info: avg_spec_accept_length is cumulative since boot
 *    (accepted / verify steps); with the generation-token counter G at both ends,
 *    verify steps = G / L, so the run value is (G1 - G0) / (G1/L1 - G0/L0).
 * Absent endpoints are recorded as unavailable, never as errors. */
enum { SIG_MAX_POSITIONS = 8, SIG_ENGINE_BYTES = 16 };

enum sig_engine { SIG_ENGINE_UNKNOWN = 0, SIG_ENGINE_SGLANG, SIG_ENGINE_VLLM };

/* One /metrics scrape, reduced to what servetop uses (NaN = not reported). */
struct sig_point {
  double t_s;                 /* since the scraper started */
  double accept_length;       /* sglang gauge, or vLLM interval value */
  double accept_rate;
  double kv_usage_frac;
  double num_running;
  double num_queued;
  double gen_tokens_total;    /* counter (sum over series) */
  double drafts_total, draft_tokens_total, accepted_tokens_total; /* vLLM counters */
  double accepted_per_pos_total[SIG_MAX_POSITIONS];
  double avg_spec_accept_length; /* /get_server_info (start and end points only) */
};

struct sig_config {
  const char *base_url;       /* http://host:port */
  double interval_s;          /* 1.0 */
  double timeout_s;           /* per scrape; 2.0 */
};

struct sig_summary {
  enum sig_engine engine;
  bool metrics_available;     /* at least one /metrics answered 200 with samples */
  char metrics_unavailable_reason[160];
  bool server_info_available;
  char server_info_unavailable_reason[160];
  int n_scrapes, n_scrape_failures;
  size_t n_prom_malformed;    /* lines skipped over all scrapes */
  bool spec_enabled_valid, spec_enabled;
  char spec_algorithm[32];
  int spec_num_steps, spec_num_draft_tokens, stream_interval; /* -1 unknown */
  /* Run-scoped acceptance and how it was derived ("vllm_counter_deltas",
   * "sglang_server_info_cumulative_delta", "sglang_metrics_gauge_weighted"). */
  bool accept_length_valid;
  double accept_length;
  const char *accept_length_method;
  bool accept_rate_valid;
  double accept_rate;
  const char *accept_rate_method;
  int n_positions;
  double per_position_rate[SIG_MAX_POSITIONS];
  /* Lifetime values as the server reports them (for reference). */
  bool server_info_accept_length_start_valid, server_info_accept_length_end_valid;
  double server_info_accept_length_start, server_info_accept_length_end;
  struct sig_point *points;   /* every successful scrape, in order */
  size_t n_points;
};

/* Live values for the progress line: the latest scrape. */
struct sig_live {
  bool valid;
  double accept_length, accept_rate, kv_usage_frac, num_running, num_queued; /* NaN = absent */
};

struct sig_scraper;
/* Starts the thread, which scrapes once at once (the "start" point). */
struct sig_scraper *sig_scraper_start(const struct sig_config *cfg);
void sig_scraper_live(struct sig_scraper *s, struct sig_live *out);
/* Takes the "end" scrape, stops the thread, fills *out (free with sig_summary_fini). */
void sig_scraper_finish(struct sig_scraper *s, struct sig_summary *out);
void sig_summary_fini(struct sig_summary *sum);
/* Reduces one parsed /metrics text to a point (exposed for tests). */
void sig_point_from_prom(const struct prom_set *set, struct sig_point *out, enum sig_engine *engine);
/* Run-scoped acceptance from points[0..n-1] (first = before the run, last = after). */
void sig_summarize_points(struct sig_summary *sum);

#endif
