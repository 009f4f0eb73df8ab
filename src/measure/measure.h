/* measure: one measured point -- the single pipeline behind `servetop bench`
 * and `servetop run`. In order, on the calling thread:
 *
 *   prompts   the server's tokenizer endpoints probed; the reference's prompts
 *             built through them (or, where the server has none, token-id
 *             arrays / calibrated chat text, recorded as such)
 *   warmups   num_warmups copies of the first request, all at once, bounded
 *             by max_concurrency, dropped
 *   profile   POST /start_profile with the reference's body (--profile)
 *   load      the server-signal scraper started (its first scrape after the
 *             warmups ended), the load driven to its end
 *   profile   POST /stop_profile (inside the duration, as the reference)
 *   figures   the scraper's end scrape (after the last request ended: its
 *             run-scoped figures cover the measured requests only),
 *             results_compute, the result JSON
 *
 * The caller steers it through hooks called about every tick_ms: live
 * figures, live concurrency changes, stop, restart (measure ends the load and
 * hands back what was measured). It writes nothing itself: measure_save()
 * writes under the reference's file rules, and measure_verdict() is the one
 * failure rule (more than 5% of the requests failed).
 */
#ifndef SERVETOP_MEASURE_MEASURE_H
#define SERVETOP_MEASURE_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "loadgen/loadgen.h"
#include "engine/engine.h"
#include "metrics/metrics.h"
#include "results/results.h"

/* What to measure. Strings are borrowed for the call (and, through
 * result->settings, until measure_result_fini). */
struct measure_spec {
  const char *base_url;          /* http://host:port */
  const char *endpoint;          /* "/v1/completions" or "/v1/chat/completions" */
  const char *api_key;           /* NULL: "Bearer None", as the reference */
  enum lg_api api;               /* chat only for the reference's openai-chat backend */
  const char *served_model_name; /* "model" in requests */
  int input_len, output_len, prefix_len;
  double range_ratio;
  int num_prompts, num_warmups;
  /* > 0: the load should last at least this long (servetop run's default point;
   * `servetop bench` never sets it: the reference's count is exact). After the
   * warmups, measure_point estimates the load's length from theirs and, when
   * num_prompts would end sooner, raises it (bounded; MEASURE_MAX_PROMPTS_FACTOR,
   * MEASURE_MAX_PROMPT_TOKENS) and builds the prompts again. Without warmups,
   * or when one failed, num_prompts stays. */
  double min_duration_s;
  bool ignore_eos, use_chat_template, dsv4;
  uint64_t seed;
  int max_concurrency;           /* <= 0: unlimited */
  double request_rate, burstiness;
  int vocab_size;                /* <= 0: the server's when it says, else 32000 */
  int random_num_workers;        /* the reference's --random-num-workers */
  bool server_tokenizer;         /* false: never probe it (token ids / calibrated chat) */
  bool profile;                  /* --profile */
  /* the load generator */
  int num_workers;               /* loops; LG_NUM_WORKERS_AUTO (0): by the streams and CPUs */
  bool reuse_connections, keep_text;
  double request_timeout_s, drain_timeout_s;
  /* server signals (/metrics, /get_server_info) */
  bool server_signals;
  double scrape_interval_s;
  /* The reference's reporting settings (metrics, percentiles, goodput,
   * metadata, backend, model_id, tokenizer_id, save_detailed ...); measure
   * fills in what it knows (url, dataset, prompts, calibration, profile). */
  struct results_settings report;
};

enum measure_phase {
  MEASURE_PHASE_PROMPTS,
  MEASURE_PHASE_WARMUP,
  MEASURE_PHASE_PROFILE_START,
  MEASURE_PHASE_LOAD,
  MEASURE_PHASE_PROFILE_STOP,
  MEASURE_PHASE_FIGURES,
};
const char *measure_phase_name(enum measure_phase phase);

struct measure_tick {
  enum measure_phase phase;
  const struct lg_live *live;    /* WARMUP and LOAD; else NULL */
  struct sig_scraper *scraper;   /* LOAD with server signals; else NULL */
};

enum measure_action {
  MEASURE_GO_ON,
  MEASURE_STOP,                  /* end the load (drain, then cut); keep what was measured */
  MEASURE_RESTART,               /* the same, ending as MEASURE_END_RESTART */
};

struct measure_hooks {
  void *ctx;
  /* Every tick_ms while the warmups or the load run (on the measuring
   * thread); *set_concurrency > 0 changes max concurrency live. While the
   * prompts are built only *cancel is watched. */
  enum measure_action (*tick)(void *ctx, const struct measure_tick *t, int *set_concurrency);
  /* At each phase's start, with a one-line note. */
  void (*phase)(void *ctx, enum measure_phase phase, const char *note);
  int tick_ms;                   /* <= 0: 100 */
  const atomic_int *cancel;      /* non-zero: as MEASURE_STOP (lock-free: from signal handlers, threads) */
};

enum measure_end {
  MEASURE_END_DONE,
  MEASURE_END_STOPPED,           /* tick said stop, or *cancel */
  MEASURE_END_RESTART,
  MEASURE_END_FAILED,            /* nothing measured: err says why */
};
const char *measure_end_name(enum measure_end end);

enum { MEASURE_MAX_MARKS = 256 };
/* min_duration_s's bounds: at most this many times the planned count, and at most
 * this many input tokens in all (every prompt's body is held in memory). */
enum { MEASURE_MAX_PROMPTS_FACTOR = 20, MEASURE_MAX_PROMPT_TOKENS = 4000000 };

struct measure_result {
  enum measure_end end;
  bool measured;                 /* the load ran: run, metrics, json are valid */
  struct lg_result run;
  struct results_settings settings;
  struct results_metrics metrics;
  struct sig_summary signals;
  bool have_signals;
  struct lg_prompts_info prompts;
  const char *no_tokenizer_reason;  /* points into no_tokenizer_why, or NULL */
  char no_tokenizer_why[256];
  struct lg_calibration calibration;
  bool calibrated;
  int vocab_size;
  const char *vocab_size_source;    /* "server", "--vocab-size", "default 32000" */
  size_t warmups_failed;
  int planned_num_prompts;       /* spec's num_prompts (settings.num_prompts: the count measured) */
  double warmup_request_s;       /* the warmups' wall time per wave; 0: not estimated */
  int profile_start_status, profile_stop_status;
  double mark_s[MEASURE_MAX_MARKS]; /* concurrency changes during the load */
  int mark_conc[MEASURE_MAX_MARKS];
  int n_marks;
  char *json;                    /* the result JSON (results_json_alloc) */
  char *url;                     /* request URL (settings.url points here) */
};

/* Measures one point. Returns 0 when something was measured (see ->end), -1
 * with err when nothing was (->end MEASURE_END_FAILED, or STOPPED when
 * cancelled before the load). result must be released with measure_result_fini. */
int measure_point(const struct measure_spec *spec, const struct measure_hooks *hooks,
                  struct measure_result *result, struct st_err *err);
void measure_result_fini(struct measure_result *r);

/* The one failure rule (the reference's): more than 5% of the requests
 * failed. The rate is of the requests sent (completed + failed): requests a
 * stop cut (in flight then, or never sent) are neither failures nor in it, so
 * a run that ran to its end gets the reference's 1 - completed / num_prompts. */
struct measure_verdict {
  bool too_many_failed;
  double failure_rate;
  int64_t completed, failed, num_prompts;
  int64_t sent;                    /* completed + failed */
  int64_t cut_by_stop;             /* num_prompts - sent */
  enum lg_failure first_failure;   /* LG_OK when none */
  const char *first_detail;        /* the first failed request's reason, or "" */
};
enum { MEASURE_MAX_FAILURE_PERCENT = 5 };
void measure_verdict(const struct measure_result *r, struct measure_verdict *out);

/* Writes the result JSON: result_filename or the reference's default name
 * ({backend}-{rate}qps[-concurrency{N}]-{model}-{date}.json), joined under
 * result_dir with os.path.join's rule. 0 or -1 with err (the text is rescued
 * to $TMPDIR or stderr, never lost). */
int measure_save(const struct measure_result *r, const char *result_dir,
                 const char *result_filename, struct st_err *err);

#endif
