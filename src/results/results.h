/* results: the figures of one load run, computed exactly as InferenceX's
 * benchmark_serving.py computes them, its stdout summary, and its result JSON
 * (same keys, same order, same quirks) plus a "servetop" object with what
 * servetop adds. A reader brings result files back for `servetop compare`.
 *
 * Flow: results_compute(records, settings) -> struct results_metrics;
 *       results_print_summary(); results_json_alloc() -> results_save().
 */
#ifndef SERVETOP_RESULTS_RESULTS_H
#define SERVETOP_RESULTS_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h" /* struct sig_summary */
#include "loadgen/loadgen.h"
#include "metrics/metrics.h"

/* 2: failures and failure_rate count only requests sent; those a stop, restart or crash cut are
 * in cut_by_stop (1: failures also held the never-sent ones) */
enum { RESULTS_SCHEMA_VERSION = 2, RESULTS_MAX_PERCENTILES = 16 };

/* Which of ttft, tpot, itl, e2el are reported (--percentile-metrics). */
enum results_metric_id { RESULTS_TTFT, RESULTS_TPOT, RESULTS_ITL, RESULTS_E2EL, RESULTS_N_METRICS };

/* What the run was asked to do: the reference's setup keys plus servetop's
 * client settings. Strings are borrowed. */
struct results_settings {
  const char *backend;            /* --backend */
  const char *model_id;           /* --model */
  const char *tokenizer_id;       /* --tokenizer, else model */
  const char *served_model_name;  /* NULL: model */
  const char *url;                /* request URL */
  const char *endpoint;
  int num_prompts;
  char **metadata;                /* "KEY=VALUE" items (--metadata) */
  size_t n_metadata;
  double request_rate;            /* INFINITY for "inf" */
  double burstiness;
  int max_concurrency;            /* <= 0: null */
  bool selected[RESULTS_N_METRICS];
  double percentiles[RESULTS_MAX_PERCENTILES]; /* --metric-percentiles */
  size_t n_percentiles;
  bool goodput_set;               /* --goodput given */
  double goodput_slo_ms[RESULTS_N_METRICS];   /* < 0: no SLO on that metric (ITL never) */
  bool save_detailed;
  /* servetop client settings */
  const char *dataset_name;
  int random_input_len, random_output_len, random_prefix_len;
  double random_range_ratio;
  bool ignore_eos;
  bool chat;                      /* chat endpoint with messages */
  long seed;
  int num_warmups;
  int num_workers;
  bool reuse_connections;
  int vocab_size;
  const struct lg_calibration *calibration; /* chat mode without a tokenizer, else NULL */
  const struct lg_prompts_info *prompts;    /* how the prompts were made; NULL: not recorded */
  const char *no_tokenizer_reason;  /* why the server's tokenizer was not used, or NULL */
  const char *vocab_size_source;    /* where vocab_size came from */
  bool profile;                   /* --profile: /start_profile and /stop_profile were called */
  int profile_start_status, profile_stop_status; /* HTTP status, 0: no answer */
  /* provenance: the engine that served (a run knows the one it launched); NULL: as the
   * server signals tell (the server info says whether it is servetop sim) */
  const struct eng_ops *engine;
};

/* Parses "ttft,tpot,itl,e2el" into selected[]; "90,99,99.9" into percentiles;
 * "ttft:100" (repeatable) into goodput SLOs. Each returns 0 or -1 with err. */
int results_parse_percentile_metrics(const char *list, struct results_settings *s, struct st_err *err);
int results_parse_metric_percentiles(const char *list, struct results_settings *s, struct st_err *err);
int results_parse_goodput(const char *item, struct results_settings *s, struct st_err *err);

struct results_stat {            /* one metric, milliseconds */
  size_t n;
  double mean_ms, median_ms, std_ms;
  double percentile_ms[RESULTS_MAX_PERCENTILES];
  double max_ms;
};

/* One second of the run (servetop addition; bucket by completion / chunk time). */
struct results_second {
  int64_t completed, failed;
  int64_t output_tokens;          /* tokens whose chunk arrived in this second (spread evenly over a request's chunks) */
  int64_t dispatched;
  double ttft_p50_ms;             /* of requests completed in this second; 0 when none */
  double tpot_p50_ms;
};

struct results_metrics {
  /* as benchmark_serving.py */
  int64_t completed, failed;
  int64_t total_input, total_output;
  double duration_s;
  double request_throughput, output_throughput, total_token_throughput;
  double request_goodput;         /* valid only when settings.goodput_set */
  double failure_rate;            /* failed / (completed + failed): of the requests sent and
                                     not cut by a stop (= the reference's 1 - completed /
                                     num_prompts when the load ran to its end) */
  int64_t cut_by_stop;            /* in flight or never sent when the run was stopped: not
                                     failures (failures_by_kind has them by kind) */
  int64_t not_sent_server_gone;   /* of the never sent: refused by a dead server (LG_SERVER_GONE) */
  struct results_stat stat[RESULTS_N_METRICS];
  /* servetop additions */
  struct results_stat itl_per_token;  /* chunk gap / tokens in that chunk (request's mean) */
  struct results_stat tokens_per_chunk; /* per request: output tokens / token chunks */
  struct results_stat send_lag;       /* dispatch - scheduled */
  struct results_stat recv_lag;       /* sampled receive lag (loadgen.h, client health) */
  double loop_busy_max;               /* the busiest loop's busy share, 0..1 */
  char client_bound[LG_CLIENT_BOUND_LEN]; /* lg_client_bound's verdict; "" keeping up */
  struct results_stat connect;        /* dispatch -> connected (inside TTFT), new connections */
  int64_t input_tokens_client;        /* = total_input (the reference counts on the client) */
  int64_t input_tokens_server;        /* usage.prompt_tokens of completed requests that report it */
  int64_t n_input_server;             /* completed requests with a server prompt count */
  int64_t n_input_mismatch;           /* ... whose server count differs from the client's */
  double input_max_rel_error;         /* max |server - client| / client over requests with both */
  int64_t failures_by_kind[LG_FAIL_N_KINDS];
  /* Per-request speculative decoding (llama.cpp's final-chunk timings). */
  int64_t accept_requests;            /* completed requests with draft_n > 0 */
  int64_t accept_draft_tokens, accept_accepted_tokens; /* sums over them */
  struct results_stat accept_rate;    /* per request accepted / drafted, unitless */
  struct results_second *seconds;     /* n_seconds */
  size_t n_seconds;
  /* The same figures in the model (metrics.h's FIG_TABLE), from the same
   * numbers: the rates, the latencies (mean, median as p50, p90, p99, exact),
   * tokens per chunk, completed, duration, and the derived ones (per GPU
   * unknown). FIG_ACCEPT_LENGTH is the server's: results_figures_add_signals. */
  struct fig_set figs;
};

/* Computes every figure from the records (exact: all samples sorted). */
void results_compute(const struct lg_result *run, const struct results_settings *s,
                     struct results_metrics *out);
void results_metrics_fini(struct results_metrics *m);
/* The server's figures of the model (the point's acceptance length) from the
 * scraper's summary; sig may be NULL (they stay unknown). */
void results_figures_add_signals(struct fig_set *figs, const struct sig_summary *sig);

/* The reference's summary block (`============ Serving Benchmark Result ============` ...).
 * When no request succeeded it says so and prints no figure (never a latency
 * of 0 ms); results_print_accounting then gives the failures' reasons. */
void results_print_summary(FILE *out, const struct results_settings *s,
                           const struct results_metrics *m);

/* servetop's lines after the summary: where the prompts came from, client
 * vs server input tokens, per-request acceptance, and every failure by kind
 * with the first one's reason (the server's words). */
void results_print_accounting(FILE *out, const struct lg_result *run,
                              const struct results_settings *s, const struct results_metrics *m);

/* The result JSON: the reference's keys in its order, then "servetop". signals
 * may be NULL. Heap string. */
char *results_json_alloc(const struct lg_result *run, const struct results_settings *s,
                         const struct results_metrics *m, const struct sig_summary *signals);
/* "{backend}-{rate}qps[-concurrency{N}]-{model basename}-{YYYYmmdd-HHMMSS}.json" */
char *results_default_filename_alloc(const struct results_settings *s, const char *date);
/* Python's str(float): "inf", "10.0", "2.5". */
void results_format_python_float(char *buf, size_t len, double v);
/* The reference's os.path.join(result_dir, filename): an absolute filename
 * wins, otherwise it is joined under result_dir (NULL or "": filename). */
char *results_path_alloc(const char *result_dir, const char *filename);
/* Writes text atomically to results_path_alloc(result_dir, filename)
 * (result_dir created when given). */
int results_save(const char *result_dir, const char *filename, const char *json,
                 struct st_err *err);

/* ---------------------------------------------------------------- reading back */
struct results_file {
  char *path;
  char *backend, *model_id, *date;
  int num_prompts, max_concurrency;   /* -1 when null */
  double request_rate;                /* INFINITY for "inf" */
  /* Every figure of the model the file has, read by the table (json_style,
   * json): the one reader of result figures. Derived ones as fig_set_derive
   * with the GPU count unknown. */
  struct fig_set figs;
  bool servetop;                      /* has a servetop section */
  bool interrupted;
  void *json;                         /* the whole document (cJSON *), for other keys */
};
int results_load(const char *path, struct results_file *out, struct st_err *err);
/* The figures of a result document (a cJSON *): what results_load fills in. */
void results_figures_from_json(const void *json, struct fig_set *out);
/* A request a stop cut (in flight then, or never sent), not a failure. */
bool results_failure_cut_by_stop(enum lg_failure f);
void results_file_fini(struct results_file *f);
const char *results_metric_name(enum results_metric_id id); /* "ttft", ... */

#endif
