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

/* ---------------------------------------------------------------- the figures model
 * Every figure servetop shows or saves about the load (throughput, latency,
 * tokens per chunk, ...) is one row of one table, FIG_TABLE below: its id,
 * its name in the result JSON, its label and unit, how it is printed, how it
 * is combined over loops and windows, and where it is shown. Live figures
 * (loadgen), final ones (results), the snapshot, compare, the screens, the
 * headless status line and bench's summary all hold and walk a struct
 * fig_set, an array of values indexed by figure id, instead of naming fields.
 *
 * Adding a figure: one X(...) row here, and its producer(s): the final value
 * in results_compute (results.c), the live one in lg_run_live (loadgen).
 *
 * A value: a rate or count is v[FIG_VALUE]; a distribution (kind FIG_DIST)
 * has its mean and p50/p90/p99 (a stat not known, e.g. p90 of a result file
 * saved without it, is NaN) over n samples. `valid` false: unknown, drawn as
 * "-", never as 0. */
enum fig_kind {
  FIG_SCALAR,  /* one number: a rate, a count, a span */
  FIG_DIST,    /* a distribution over samples: mean, p50 (the median), p90, p99 */
};
enum fig_combine {            /* how loops and windows are combined */
  FIG_COMBINE_COUNT_PER_SPAN, /* counts summed over loops, divided by the span (window or point) */
  FIG_COMBINE_SAMPLES,        /* samples pooled over loops: live histograms merged, final exact */
  FIG_COMBINE_RATIO,          /* numerators and denominators summed, then divided */
  FIG_COMBINE_COUNT,          /* summed */
  FIG_COMBINE_SPAN,           /* first dispatch to the last end */
  FIG_COMBINE_SERVER,         /* the server's own figure over the point's scrapes */
  FIG_COMBINE_DERIVED,        /* from other figures of the same set (fig_set_derive) */
  FIG_COMBINE_MAX,            /* the largest over loops (the busiest one) */
};
enum fig_json {               /* where the figure is in the result JSON */
  FIG_JSON_NONE,              /* not saved (derived) */
  FIG_JSON_NUMBER,            /* a number at json ("a/b/c": nested objects) */
  FIG_JSON_REF_STATS,         /* the reference's flat keys mean_<json>_ms, median_..., p<P>_... */
  FIG_JSON_STAT_OBJECT,       /* an object at json: n, mean<sfx>, median<sfx>, p<P><sfx>, with
                                 sfx "_ms" for unit "ms", else "" */
};
enum {                        /* fig_desc.shown: where a figure appears */
  FIG_SHOW_COMPARE = 1u << 0, /* `servetop compare` (text and JSON), in the table's order */
  FIG_SHOW_STATUS = 1u << 1,  /* the headless status line of `run` and bench's progress line */
  FIG_SHOW_LATENCY = 1u << 2, /* a row of the run view's latency table (window | run) */
  FIG_SHOW_POINTS = 1u << 3,  /* the headless per-point lines of `run` */
  FIG_PER_CHUNK = 1u << 4,    /* not a place: a per-chunk figure (ITL), set against another
                                 run's only where their chunks are alike (fig_chunks_unlike) */
};
enum fig_stat {
  FIG_STAT_MEAN,
  FIG_VALUE = FIG_STAT_MEAN,    /* a scalar's one value */
  FIG_STAT_P50,
  FIG_STAT_P90,
  FIG_STAT_P99,
  FIG_N_STATS
};

/* X(id, name, json_style, json, label, brief, title, unit, format, kind, combine,
 *   higher_is_better, shown, meaning)
 *  name:  the figure's word in compare's JSON (stats: <stat>_<name>_ms)
 *  label: short, on screens ("TTFT", "output tok/s"; a distribution's with its stat: "TTFT p50")
 *  brief: one word on one-line summaries ("out", "TTFT")
 *  title: compare's row title (a scalar's with its unit; a distribution's is label + stat + unit)
 *  format: printf format of one value on the status line and screens
 *  meaning: one line for the glossary (the dashboard's `?` help, docs/figures.md) */
#define FIG_TABLE(X)                                                                              \
  X(FIG_REQ_TPUT, "request_throughput", FIG_JSON_NUMBER, "request_throughput",                    \
    "req/s", "req", "request throughput (req/s)", "req/s", "%.2f",                                \
    FIG_SCALAR, FIG_COMBINE_COUNT_PER_SPAN, true, FIG_SHOW_COMPARE,                               \
    "completed requests per second")                                                              \
  X(FIG_OUTPUT_TPUT, "output_throughput", FIG_JSON_NUMBER, "output_throughput",                   \
    "output tok/s", "out", "output throughput (tok/s)", "tok/s", "%.0f",                          \
    FIG_SCALAR, FIG_COMBINE_COUNT_PER_SPAN, true,                                                 \
    FIG_SHOW_COMPARE | FIG_SHOW_STATUS | FIG_SHOW_POINTS,                                         \
    "generated tokens/s (server's count); live 10 s, \"(est.)\": chunks x est. tok/chunk")                                            \
  X(FIG_TOTAL_TPUT, "total_token_throughput", FIG_JSON_NUMBER, "total_token_throughput",          \
    "total tok/s", "total", "total throughput (tok/s)", "tok/s", "%.0f",                          \
    FIG_SCALAR, FIG_COMBINE_COUNT_PER_SPAN, true, FIG_SHOW_COMPARE,                               \
    "prompt plus generated tokens per second")                                                    \
  X(FIG_OUTPUT_TPUT_PER_GPU, "output_throughput_per_gpu", FIG_JSON_NONE, NULL,                    \
    "output tok/s/GPU", "out/GPU", "output tok/s per GPU", "tok/s", "%.0f",                       \
    FIG_SCALAR, FIG_COMBINE_DERIVED, true, FIG_SHOW_COMPARE,                                      \
    "output tok/s divided by the GPUs the server uses")                                           \
  X(FIG_INTERACTIVITY, "interactivity", FIG_JSON_NONE, NULL,                                      \
    "tok/s/user", "interactivity", "interactivity (tok/s/user)", "tok/s/user", "%.1f",            \
    FIG_SCALAR, FIG_COMBINE_DERIVED, true, FIG_SHOW_COMPARE,                                      \
    "one user's decode speed: 1000 / TPOT p50")                                                   \
  X(FIG_TTFT, "ttft", FIG_JSON_REF_STATS, "ttft",                                                 \
    "TTFT", "TTFT", "TTFT", "ms", "%.1f",                                                         \
    FIG_DIST, FIG_COMBINE_SAMPLES, false,                                                         \
    FIG_SHOW_COMPARE | FIG_SHOW_STATUS | FIG_SHOW_LATENCY | FIG_SHOW_POINTS,                      \
    "time to first token: request sent to first token chunk")                                     \
  X(FIG_TPOT, "tpot", FIG_JSON_REF_STATS, "tpot",                                                 \
    "TPOT", "TPOT", "TPOT", "ms", "%.1f",                                                         \
    FIG_DIST, FIG_COMBINE_SAMPLES, false,                                                         \
    FIG_SHOW_COMPARE | FIG_SHOW_STATUS | FIG_SHOW_LATENCY | FIG_SHOW_POINTS,                      \
    "time per output token after the first: (E2EL - TTFT) / (tokens - 1)")                        \
  X(FIG_ITL, "itl", FIG_JSON_REF_STATS, "itl",                                                    \
    "ITL", "ITL", "ITL", "ms", "%.1f",                                                            \
    FIG_DIST, FIG_COMBINE_SAMPLES, false,                                                         \
    FIG_SHOW_COMPARE | FIG_SHOW_STATUS | FIG_SHOW_LATENCY | FIG_PER_CHUNK,                        \
    "gap between token chunks: per chunk, not per token (see tok/chunk)")                         \
  X(FIG_E2EL, "e2el", FIG_JSON_REF_STATS, "e2el",                                                 \
    "E2EL", "E2EL", "E2EL", "ms", "%.1f",                                                         \
    FIG_DIST, FIG_COMBINE_SAMPLES, false, FIG_SHOW_COMPARE | FIG_SHOW_LATENCY | FIG_SHOW_POINTS,  \
    "end-to-end latency: request sent to its last token chunk")                                   \
  X(FIG_TOKENS_PER_CHUNK, "tokens_per_chunk", FIG_JSON_STAT_OBJECT,                               \
    "servetop/additions/tokens_per_chunk",                                                        \
    "tok/chunk", "tok/chunk", "tokens per chunk", "", "%.2f",                                     \
    FIG_DIST, FIG_COMBINE_SAMPLES, true, FIG_SHOW_COMPARE | FIG_SHOW_STATUS | FIG_SHOW_LATENCY,   \
    "tokens per streamed chunk (stream interval, spec. steps); ITL/this ~ per token")             \
  X(FIG_SEND_LAG, "send_lag", FIG_JSON_STAT_OBJECT, "servetop/additions/send_lag",                \
    "send lag", "send lag", "send lag (ms)", "ms", "%.1f",                                        \
    FIG_DIST, FIG_COMBINE_SAMPLES, false, FIG_SHOW_STATUS,                                        \
    "how late the client sent a request against its schedule (client health)")                    \
  X(FIG_RECV_LAG, "recv_lag", FIG_JSON_STAT_OBJECT, "servetop/additions/recv_lag",                \
    "recv lag", "recv lag", "receive lag (ms)", "ms", "%.2f",                                     \
    FIG_DIST, FIG_COMBINE_SAMPLES, false, FIG_SHOW_STATUS,                                        \
    "client's stamp of received bytes minus the kernel's receive time (sampled; client health)")  \
  X(FIG_LOOP_BUSY, "loop_busy", FIG_JSON_NUMBER, "servetop/loop/busy_pct_max",                    \
    "loop busy", "loop busy", "busiest client loop (% busy)", "%", "%.0f",                        \
    FIG_SCALAR, FIG_COMBINE_MAX, false, FIG_SHOW_STATUS,                                          \
    "busiest client loop's share of time outside epoll_wait (client health; 90%: client-bound)")  \
  X(FIG_ACCEPT_LENGTH, "accept_length", FIG_JSON_NUMBER,                                          \
    "servetop/server/acceptance/accept_length",                                                   \
    "accept len", "accept", "accept length (tokens/step)", "tokens/step", "%.2f",                 \
    FIG_SCALAR, FIG_COMBINE_SERVER, true, FIG_SHOW_COMPARE,                                       \
    "speculative decoding: tokens per verify step, the server's own figure")                      \
  X(FIG_COMPLETED, "completed", FIG_JSON_NUMBER, "completed",                                     \
    "completed", "done", "completed requests", "", "%.0f",                                        \
    FIG_SCALAR, FIG_COMBINE_COUNT, true, FIG_SHOW_COMPARE,                                        \
    "requests that completed")                                                                    \
  X(FIG_DURATION, "duration_s", FIG_JSON_NUMBER, "duration",                                      \
    "duration", "time", "duration (s)", "s", "%.1f",                                              \
    FIG_SCALAR, FIG_COMBINE_SPAN, false, FIG_SHOW_COMPARE,                                        \
    "first request sent to the last one's end")

#define FIG_ENUM_ROW(id, ...) id,
enum fig_id { FIG_TABLE(FIG_ENUM_ROW) FIG_N };
#undef FIG_ENUM_ROW

struct fig_desc {
  enum fig_id id;
  const char *name;
  enum fig_json json_style;
  const char *json;
  const char *label;
  const char *brief;
  const char *title;
  const char *unit;
  const char *format;
  enum fig_kind kind;
  enum fig_combine combine;
  bool higher_is_better;
  unsigned shown;                 /* FIG_SHOW_* */
  const char *meaning;            /* one line: what it means (the glossary) */
};

struct fig_value {
  bool valid;
  int64_t n;                      /* samples (distributions); 0 for scalars */
  double v[FIG_N_STATS];          /* scalars: v[FIG_VALUE] */
  /* How sure: the 95% confidence interval of v[stat] (lo <= v <= hi), NaN when not known
   * (live figures, a file saved without it). docs/figures.md says how each is estimated. */
  double lo[FIG_N_STATS], hi[FIG_N_STATS];
};
struct fig_set {
  struct fig_value f[FIG_N];      /* indexed by enum fig_id */
};

/* The row of figure id (id < FIG_N). */
const struct fig_desc *fig_desc(enum fig_id id);
/* Looks a figure up by name; NULL when none. */
const struct fig_desc *fig_by_name(const char *name);
/* "mean", "p50", "p90", "p99" (compare's words: "mean", "median", "p99"). */
const char *fig_stat_name(enum fig_stat s);
/* Every figure invalid (stats NaN). */
void fig_set_clear(struct fig_set *set);
/* Sets a scalar. */
void fig_set_scalar(struct fig_set *set, enum fig_id id, bool valid, double v);
/* Sets a distribution (NaN for a stat not known; valid when n > 0). */
void fig_set_dist(struct fig_set *set, enum fig_id id, int64_t n, double mean, double p50,
                  double p90, double p99);
/* Sets the 95% confidence interval of v[stat] (NaN: not known). */
void fig_set_ci(struct fig_set *set, enum fig_id id, enum fig_stat stat, double lo, double hi);
/* The interval of v[stat]: true with *lo, *hi when known (the figure valid, both finite). */
bool fig_get_ci(const struct fig_set *set, enum fig_id id, enum fig_stat stat, double *lo,
                double *hi);
/* v[stat] of a figure, or NaN when the figure or the stat is not known. */
double fig_get(const struct fig_set *set, enum fig_id id, enum fig_stat stat);
/* True when v[stat] is known (valid and finite). */
bool fig_has(const struct fig_set *set, enum fig_id id, enum fig_stat stat);
/* Whether a per-chunk figure (FIG_PER_CHUNK) of run b cannot be set against run a's: their
 * chunks differ. Speculative decoding on one side only (spec_a, spec_b: 1 on, 0 off, -1 not
 * known) streams tokens in bursts whose gaps are near zero; tokens per chunk (medians) more
 * than FIG_CHUNKS_ALIKE_PCT apart (a stream interval, larger steps) put other work in a gap.
 * Either way TPOT is the per-token figure to compare. */
enum { FIG_CHUNKS_ALIKE_PCT = 10 };
bool fig_chunks_unlike(const struct fig_set *a, int spec_a, const struct fig_set *b, int spec_b);
/* Whether figure id of run b must not be judged against run a's: a per-chunk figure
 * (FIG_PER_CHUNK) of unlike chunks (fig_chunks_unlike). Its ratio's verdict is then
 * CI_NOT_COMPARABLE (compare and the A/B view). */
bool fig_not_comparable(enum fig_id id, const struct fig_set *a, int spec_a,
                        const struct fig_set *b, int spec_b);
/* A distribution from a live histogram (µs samples, shown in ms; mean unknown). */
void fig_set_from_hist_us(struct fig_set *set, enum fig_id id, const struct live_hist *h);
/* The derived figures (FIG_COMBINE_DERIVED) from the others: output per GPU
 * (n_gpus <= 0: unknown), interactivity = 1000 / TPOT p50. */
void fig_set_derive(struct fig_set *set, int n_gpus);
/* One value as the row's format prints it, or "-" when not known. */
void fig_format(char *buf, size_t len, const struct fig_set *set, enum fig_id id,
                enum fig_stat stat);

/* ---------------------------------------------------------------- token spreading
 * How output tokens are placed in time, live (loadgen's window) and in the
 * result (time_series), by this one rule: a completed request's tokens are
 * spread evenly over its token-carrying chunks, in whole tokens: the first c
 * chunks carry floor(tokens * c / chunks) (so all of them carry exactly
 * tokens). Returns the tokens chunks [from, to) carry (0 <= from <= to <= chunks). */
int64_t fig_spread_tokens(int64_t tokens, uint32_t chunks, uint32_t from, uint32_t to);
/* The same rule by second, as the live window credits a request when it
 * ends: its last n seconds with chunks, oldest first, chunks[i] in the i-th
 * (any earlier chunks, total - the sum, came before them); tokens_out[i]
 * gets what those chunks carry. */
void fig_spread_by_second(int64_t tokens, uint32_t total, const uint32_t *chunks, size_t n,
                          int64_t *tokens_out);

/* ---------------------------------------------------------------- how sure (ci.c)
 * 95% confidence intervals of figures and of A/B ratios; docs/figures.md ("How sure") says
 * which estimator serves which figure and why. */
#define CI_LEVEL 0.95
#define CI_Z975 1.959963984540054
enum {
  CI_BATCHES = 10,        /* batch means: at most this many batches (time windows, request runs) */
  CI_MIN_BATCHES = 5,     /* fewer: no interval (unknown, never a fake one) */
  CI_MIN_PER_BATCH = 2,   /* requests per batch at least */
};
/* Run to run: what identical runs differ by beyond the noise of their own requests (the
 * machine's load, a server's start), as a relative standard deviation. One run cannot see it;
 * results_compute adds it (x z, in quadrature) to the timing figures' intervals. Measured: the
 * sim on the shared 2-core VM, sequential identical runs, sd 0.8% to 3.5% (docs/figures.md). */
#define CI_RUN_REL_SD 0.04
/* The 0.975 quantile of Student's t with df degrees of freedom (NaN for df < 1). */
double ci_t975(int df);
/* Batch means: the interval of est = sum(num) / sum(den) from k batches (num[i] over den[i] >
 * 0), est +- t(k-1) * the ratio estimator's standard error. False (lo, hi NaN) when k <
 * CI_MIN_BATCHES or a batch is empty. */
bool ci_batch_ratio(const double *num, const double *den, size_t k, double est, double *lo,
                    double *hi);
/* How many batches n requests make (<= CI_BATCHES, >= CI_MIN_PER_BATCH each); 0: too few. */
size_t ci_batches_for(size_t n);
/* The interval of est = sum(values) / sum(weights) (weights NULL: all 1, a plain mean) over n
 * items in their order (dispatch order), in ci_batches_for(n) consecutive batches. */
bool ci_mean_batched(const double *values, const double *weights, size_t n, double est,
                     double *lo, double *hi);
/* The exact distribution-free 95% interval of the q-quantile (0 < q < 1) of n independent
 * samples: ranks [lo_rank, hi_rank] (1-based order statistics). False when n is too small for
 * an interval inside the sample (ci_quantile_min_n: p50 needs n >= 6, p99 n >= 368). */
bool ci_quantile_ranks(size_t n, double q, size_t *lo_rank, size_t *hi_rank);
/* The least n for which ci_quantile_ranks(n, q) gives an interval (0: none up to 10^6). */
size_t ci_quantile_min_n(double q);
/* The interval of the q-quantile of sorted[0..n): the order statistics of ci_quantile_ranks
 * for n_eff independent samples (0 or n: all are; fewer: samples cluster, e.g. the gaps of
 * n_eff requests), at the same relative ranks of the whole sample. */
bool ci_quantile_sorted(const double *sorted, size_t n, size_t n_eff, double q, double *lo,
                        double *hi);
/* Sections: the q-quantile over each of ci_batches_for(n) consecutive batches of ordered[0..n)
 * (in dispatch order), est +- t(K-1) * their standard error: robust where neighbouring samples
 * are alike (a loaded server's batch, a slow first wave), where order statistics are not. */
bool ci_quantile_sections(const double *ordered, size_t n, double q, double est, double *lo,
                          double *hi);

/* A ratio B / A with its 95% interval and verdict (of B against A). */
enum ci_verdict {
  CI_NO_DIFFERENCE,
  CI_FASTER,
  CI_SLOWER,
  CI_NOT_COMPARABLE, /* a per-chunk figure of unlike chunks (fig_chunks_unlike): no verdict */
};
struct ci_ratio {
  double ratio;           /* B / A; NaN when not known */
  double lo, hi;          /* the interval; NaN when not known */
  bool known;             /* the interval is known */
  int repeats;            /* ci_ratio_of_repeats: the repeats it rests on; 0: one run each */
  enum ci_verdict verdict;
};
void ci_ratio_init(struct ci_ratio *r);
/* One run per arm: the interval of b / a from each value's own interval, on the log scale
 * (each half-width / z as a standard error, the two combined in quadrature). */
void ci_ratio_of_intervals(double a, double a_lo, double a_hi, double b, double b_lo,
                           double b_hi, bool higher_is_better, struct ci_ratio *out);
/* Repeated, interleaved runs: the geometric mean of the n repeats' ratios, and the t interval
 * of their mean log (n >= 2; non-positive or NaN ratios are skipped). */
void ci_ratio_of_repeats(const double *ratios, size_t n, bool higher_is_better,
                         struct ci_ratio *out);
/* faster / slower when the whole interval is on one side of 1 (for a figure where lower is
 * better, a ratio above 1 is slower), else (or unknown) no difference detected. */
enum ci_verdict ci_verdict_of(const struct ci_ratio *r, bool higher_is_better);
/* "faster", "slower", "no difference detected", "not comparable (per chunk; see TPOT)". */
const char *ci_verdict_word(enum ci_verdict v);
/* Point length: long enough for the intervals to mean something (docs/figures.md, "How long
 * is a point"): at least CI_MIN_POINT_WAVES x concurrency requests (and CI_MIN_POINT_REQUESTS)
 * measured after the warmups, over at least CI_MIN_POINT_S seconds. */
enum { CI_MIN_POINT_WAVES = 10, CI_MIN_POINT_REQUESTS = 10, CI_MIN_POINT_S = 5 };
int64_t ci_point_min_requests(int conc);
/* True when a point of completed requests over duration_s at concurrency conc is shorter than
 * that; why (why_len > 0) gets "short: 0.4 s < 5 s (--num-prompts 1840 for 5 s)". */
bool ci_point_short(int64_t completed, double duration_s, int conc, char *why, size_t why_len);
/* "1.234x [1.100, 1.380] faster", "1.234x [?] no difference detected", or "-". */
void ci_ratio_format(char *buf, size_t len, const struct ci_ratio *r);

#endif
