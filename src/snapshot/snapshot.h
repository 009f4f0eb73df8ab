/* snapshot: value-type pictures of a running measurement, handed from the
 * producer threads (run orchestration: launcher, load generator, monitor) to
 * the dashboard and the headless status line.
 *
 * A snapshot is plain data: fixed-size arrays, no pointers, so a reader owns
 * its copy outright and never touches live state. The producer fills a
 * struct snap_run and publishes it at ~10 Hz into a struct snap_slot; the
 * slot holds its mutex only for the copy. Readers poll with the last sequence
 * number they saw and copy only when something new was published.
 *
 * Conventions for every field below:
 *  - units are in the names (_ms, _s, _bytes, _mw, _per_s, _frac = 0..1);
 *  - a figure that may be unknown has a `valid` flag (or a *_valid bit);
 *    an invalid figure is drawn as "-", never as 0;
 *  - "window" figures cover the current second of the point and the
 *    SNAP_WINDOW_S - 1 whole seconds before it (or the point so far when
 *    shorter: figures.window_span_s says how long, and rates divide by
 *    it); "run" figures cover the current measurement point from its first
 *    dispatch, live while it runs and the saved result's own values once it
 *    has ended (figures.run_exact);
 *  - when a point ends, every figure of it (counts, throughput, latency,
 *    acceptance) is replaced by the saved result's, and stays until the next
 *    point starts: the last picture of a point is its result;
 *  - strings are NUL-terminated and truncated to their array size.
 */
#ifndef SERVETOP_SNAPSHOT_SNAPSHOT_H
#define SERVETOP_SNAPSHOT_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics/metrics.h" /* the figures model */

#define SNAP_WINDOW_S 10         /* span of the windowed ("live") figures */
#define SNAP_MAX_GPUS 16
#define SNAP_MAX_SPEC_POSITIONS 8
#define SNAP_MAX_CONC_MARKS 32
#define SNAP_LOG_LINES 40
#define SNAP_LOG_LINE_BYTES 240
#define SNAP_NAME_BYTES 128
#define SNAP_MESSAGE_BYTES 256
#define SNAP_MAX_POINTS 64
/* a configuration in words ("conc 8 kv-cache=0.9 max-batch=64"): the run's label fits whole */
enum { SNAP_CONFIG_LABEL_BYTES = 160 };

/* ---------------------------------------------------------------- server / run state */
enum snap_server_state {
  SNAP_SERVER_NONE = 0,  /* nothing launched (yet) */
  SNAP_SERVER_STARTING,  /* process started, readiness not seen */
  SNAP_SERVER_READY,     /* /health answered 200 or the ready log line was seen */
  SNAP_SERVER_STOPPING,  /* SIGTERM sent to the process group */
  SNAP_SERVER_EXITED,    /* reaped; see exit_code / exit_signal */
};

enum snap_run_phase {
  SNAP_PHASE_IDLE = 0,
  SNAP_PHASE_LAUNCHING,   /* waiting for the server to be ready */
  SNAP_PHASE_MEASURING,   /* load generator running */
  SNAP_PHASE_BETWEEN,     /* between sweep points (server stays up) */
  SNAP_PHASE_STOPPING,
  SNAP_PHASE_DONE,        /* all points measured */
  SNAP_PHASE_FAILED,      /* server crash, readiness timeout, launch error */
  SNAP_PHASE_INTERRUPTED, /* Ctrl-C / run_stop() before the end */
};

struct snap_server {
  enum snap_server_state state;
  int pid;                        /* server process (group leader); 0 before launch */
  int port;                       /* TCP port on 127.0.0.1 */
  bool simulated;                 /* engine is `servetop sim`: always shown */
  char engine[16];                /* "sglang", "vllm", "sim" */
  char recipe_name[SNAP_NAME_BYTES];
  char gpus[64];                  /* CUDA_VISIBLE_DEVICES given to it, "" = all */
  bool exited_valid;              /* exit_code / exit_signal meaningful (state EXITED) */
  int exit_code;                  /* exit status when it exited normally, else -1 */
  int exit_signal;                /* signal that killed it, else 0 */
  bool crashed;                   /* it exited without servetop stopping it (a crash, or its
                                     own exit): panels say so until the run ends */
  double uptime_s;                /* since launch */
  double ready_after_s;           /* launch -> ready; < 0 until ready */
  bool attached;                  /* a server servetop did not launch (servetop attach): no
                                     process, no restarts */
  char restart_note[SNAP_MESSAGE_BYTES]; /* the last restart with new knobs and how it went */
  bool restart_failed;            /* it could not start: the previous configuration is back */
};

/* ---------------------------------------------------------------- load progress */
struct snap_progress {
  enum snap_run_phase phase;
  int point_index;                /* 0-based sweep point being measured */
  int n_points;                   /* points in this run (1 without --sweep) */
  int64_t done;                   /* requests finished successfully (this point) */
  int64_t failed;                 /* requests finished with an error (this point); once the
                                     point ends, the result's: never a request a stop cut */
  int64_t cut_by_stop;            /* requests a stop cut (in flight then, or never sent),
                                     the result's; not failures */
  int64_t in_flight;              /* dispatched, not finished */
  int64_t total;                  /* requests this point will send (num_prompts) */
  double elapsed_s;               /* since the point's first dispatch */
  bool eta_valid;
  double eta_s;                   /* remaining, from the recent completion rate */
  bool warmup;                    /* the point's warm-up runs: done/failed/in_flight/total
                                     count the warm-up requests (not measured) */
  bool mislabelled;               /* recipe's spec-decoding label disagrees with the server */
  char message[SNAP_MESSAGE_BYTES]; /* last notable event ("server exited with status 1", ...) */
};

/* ---------------------------------------------------------------- the load's figures */
/* The figures of the model (metrics/metrics.h: FIG_TABLE, struct fig_set indexed
 * by enum fig_id, each with its validity), over two spans:
 *  - window: the last SNAP_WINDOW_S seconds: rates (output tokens by chunk
 *    arrival: exact with one token per chunk, else the chunks of requests still
 *    streaming are estimated, see lg_live in loadgen.h; total = output + req/s x
 *    the point's mean prompt length) and latency percentiles (histograms: the
 *    ceil(p% x n)-th sample to within 0.8%);
 *  - run: the whole point so far (rates over run_span_s, latencies of every
 *    completed request), live while it runs and the saved result's own values
 *    once it has ended (run_exact: every sample, numpy's percentiles, p50 = the
 *    median, tokens per chunk). */
struct snap_figures {
  struct fig_set window;
  struct fig_set run;
  bool run_exact;                 /* run is the result's: the point has ended */
  double window_span_s;           /* time the window rates are divided by (<= SNAP_WINDOW_S) */
  bool window_output_estimated;   /* window output counts chunks x an estimated tokens/chunk */
  double run_span_s;              /* first dispatch to now, or to the last request's end */
  bool server_gen_valid;
  double server_gen_tok_per_s;    /* the server's own figure (Decode log line / metrics) */
  /* Does the client keep up? lg_client_bound's verdict (loadgen.h; docs/figures.md): on the
   * window while the point runs, on the result once it has ended; "" while it keeps up,
   * else "client-bound: <which loop, what lag>". */
  char client_bound[160];
};

/* ---------------------------------------------------------------- server-side signals */
enum snap_source {                /* where a server figure came from */
  SNAP_SRC_NONE = 0,
  SNAP_SRC_METRICS,               /* /metrics scrape */
  SNAP_SRC_SERVER_INFO,           /* /get_server_info */
  SNAP_SRC_LOG,                   /* server log line (fallback when /metrics is off) */
};

#define SNAP_ACCEPT_BINS 10

/* llama.cpp's per-request acceptance: each completed request's final chunk
 * says how many draft tokens it proposed (timings.draft_n) and how many were
 * accepted; over the completed requests of the point (the result's
 * servetop.per_request_acceptance, exactly). */
struct snap_request_accept {
  bool valid;                     /* at least one request with draft tokens */
  int64_t requests;               /* completed requests with draft_n > 0 */
  int64_t draft_tokens, accepted_tokens;
  double rate_frac;               /* accepted / draft tokens, pooled */
  double mean_rate_frac;          /* mean of the per-request rates */
  int64_t rate_bins[SNAP_ACCEPT_BINS]; /* requests with a rate in [k/10, (k+1)/10); 1.0 in the last */
};

struct snap_spec {                /* speculative decoding acceptance, from the server */
  bool enabled_valid;
  bool enabled;                   /* server reports speculative decoding on */
  char algorithm[32];             /* "EAGLE", "NEXTN", "mtp"...; "" = none/unknown */
  /* The point's acceptance, as the result saves it: from a scrape after the
   * warmups to the latest one (span_s), derived by the result's method;
   * once the point ends, the saved value itself. Invalid until the point has
   * a figure of its own (two scrapes with draft counter deltas): the server
   * log's value is from before the point and never stands in (it is only the
   * interval below). */
  bool accept_length_valid;
  double accept_length;           /* mean tokens per verify step incl. bonus (1 .. steps+1) */
  bool accept_rate_valid;
  double accept_rate_frac;        /* accepted / proposed draft tokens, 0..1 */
  int n_positions;                /* entries of per_position_rate_frac that are valid */
  double per_position_rate_frac[SNAP_MAX_SPEC_POSITIONS];
  bool point_scoped;              /* the figures above cover the point (else they are invalid) */
  double span_s;                  /* start scrape -> latest scrape */
  char method[48];                /* "llamacpp_counter_deltas", "sglang_server_info_cumulative_delta",
                                     ...; "" while none */
  /* The latest interval only (/metrics gauge or counter deltas between the
   * last two scrapes, else the log's last line): what moves now. */
  bool interval_accept_length_valid;
  double interval_accept_length;
  bool interval_accept_rate_valid;
  double interval_accept_rate_frac;
  struct snap_request_accept per_request;
  enum snap_source source;
};

struct snap_server_load {
  bool kv_usage_valid;
  double kv_usage_frac;           /* KV-cache slots in use / capacity, 0..1 */
  bool running_valid;
  int64_t num_running;            /* requests in the running batch */
  bool queued_valid;
  int64_t num_queued;             /* requests waiting in the server queue */
  bool max_total_num_tokens_valid;
  int64_t max_total_num_tokens;   /* KV capacity in tokens (SGLang; vLLM "GPU KV cache size";
                                     llama.cpp -c, all slots) */
  bool max_total_num_tokens_was_valid;
  int64_t max_total_num_tokens_was; /* the capacity before the last restart with other knobs */
  bool kv_per_slot_valid;
  int64_t kv_per_slot_tokens;     /* KV one request can hold (a llama.cpp slot's n_ctx) */
  int64_t kv_asked_tokens;        /* the KV knob of the command, where the engine takes it in
                                     tokens (llama.cpp -c); 0: none or not tokens. Differs from
                                     max_total_num_tokens when the engine rounds it */
  bool batch_cap_valid;
  int batch_cap;                  /* requests the server decodes at once (max-running-requests,
                                     max-num-seqs, slots); more wait in its queue */
  enum snap_source source;
};

/* ---------------------------------------------------------------- concurrency */
struct snap_conc_mark {
  double at_s;                    /* point-elapsed time of the change */
  int concurrency;                /* new target */
};

struct snap_concurrency {
  int target;                     /* concurrency the load generator aims for now */
  int n_marks;                    /* most recent changes, oldest first */
  struct snap_conc_mark marks[SNAP_MAX_CONC_MARKS];
};

/* ---------------------------------------------------------------- GPUs */
enum {                            /* struct snap_gpu.valid_mask bits */
  SNAP_GPU_MEM_TOTAL = 1u << 0,
  SNAP_GPU_MEM_SERVER = 1u << 1,  /* per-process memory attributed to the server group */
  SNAP_GPU_MEM_OTHER = 1u << 2,
  SNAP_GPU_POWER = 1u << 3,
  SNAP_GPU_UTIL = 1u << 4,
};

struct snap_gpu {
  int index;                      /* backend index (as nvidia-smi numbers it) */
  unsigned valid_mask;            /* SNAP_GPU_* bits */
  uint64_t mem_total_bytes;
  uint64_t mem_server_bytes;      /* used by processes of the server's process group */
  uint64_t mem_other_bytes;       /* used by everything else */
  double power_mw;
  double util_frac;               /* 0..1 */
};

struct snap_gpus {
  int n_gpus;
  struct snap_gpu gpu[SNAP_MAX_GPUS];
  char backend[32];               /* "nvml", "nvidia-smi", "sim", "" = none */
  char unavailable_reason[SNAP_MESSAGE_BYTES]; /* when n_gpus == 0; why stale when stale */
  bool stale;                     /* the latest sample failed (or the server changed): the
                                     figures are the last good ones */
};

/* ---------------------------------------------------------------- log tail */
struct snap_log_tail {
  int n_lines;                    /* lines[0] oldest .. lines[n_lines-1] newest */
  uint64_t total_lines;           /* lines seen since launch (to spot new ones) */
  char lines[SNAP_LOG_LINES][SNAP_LOG_LINE_BYTES];
};

/* ---------------------------------------------------------------- finished points */
/* A point whose result file was written, with the saved result's figures:
 * what the A/B curve, `[`/`]` and the headless per-point table show. */
struct snap_point_result {
  int point_index;                /* sweep point (0-based) */
  int segment;                    /* 1-based within the point: +/- and restarts start another */
  char config[SNAP_CONFIG_LABEL_BYTES]; /* its configuration in words: "conc 8 kv-cache=0.9" */
  int conc;                       /* concurrency it was measured at (the result's) */
  int conc_end;                   /* concurrency at its end (after live changes) */
  bool measured_to_end;           /* its load ran to the end ("done"): not stopped, restarted
                                     or cut short by the server exiting */
  char end[16];                   /* how it ended: "done", "stopped", "restarted",
                                     "conc_changed", ... */
  char result_file[64];           /* in the run folder: "result-conc4.json" */
  int64_t completed, failed, total; /* failed: not the requests a stop or restart cut */
  int64_t cut_by_stop;            /* those: in flight when stopped, or never sent */
  int64_t planned;                /* > 0: the count planned, raised to total from the warmups
                                     for the point to last CI_MIN_POINT_S; 0: as planned */
  double duration_s;
  struct fig_set figs;            /* the saved result's figures (results_metrics.figs): rates
                                     (known when a request completed), latencies exact over
                                     every sample, FIG_ACCEPT_LENGTH run-scoped as saved */
  bool drafts_valid;
  double drafts_accepted_frac;    /* llama.cpp's per-request acceptance, pooled (the result's) */
  bool kv_tokens_valid;
  int64_t kv_tokens;              /* the server's KV capacity while it ran */
  int batch_cap;                  /* the server's batch cap, -1 unknown */
};

struct snap_points {
  int n;                          /* entries in point[], oldest first */
  int n_written;                  /* result files written in all (n stops at SNAP_MAX_POINTS:
                                     the oldest are dropped) */
  struct snap_point_result point[SNAP_MAX_POINTS];
  char chart[1024];               /* a sweep's chart (sweep.png in the run folder), once the
                                     run wrote it at its end; "" none */
};

/* ---------------------------------------------------------------- the whole picture */
struct snap_run {
  uint64_t seq;                   /* set by snap_slot_publish: 1, 2, 3... */
  int64_t published_mono_ns;      /* CLOCK_MONOTONIC at publish */
  struct snap_server server;
  struct snap_progress progress;
  struct snap_figures figures;
  struct snap_spec spec;
  struct snap_server_load load;
  struct snap_concurrency concurrency;
  struct snap_gpus gpus;
  struct snap_log_tail log;
  struct snap_points points;      /* every point of the run with a result, in order */
};

/* ---------------------------------------------------------------- publish / read */
struct snap_slot; /* opaque: one published snap_run behind a mutex */

struct snap_slot *snap_slot_new(void);
void snap_slot_free(struct snap_slot *slot);

/* Copies *snap into the slot, stamps seq (previous + 1) and published_mono_ns
 * (in the slot's copy and in *snap). Safe from any thread. */
void snap_slot_publish(struct snap_slot *slot, struct snap_run *snap);

/* Copies the latest snapshot into *out when its seq differs from *last_seq
 * and updates *last_seq; returns true when it copied. Pass last_seq = NULL
 * (or *last_seq = 0) to copy unconditionally. Returns false and leaves *out
 * untouched before the first publish. Safe from any thread. */
bool snap_slot_read(struct snap_slot *slot, struct snap_run *out, uint64_t *last_seq);

/* Sequence number of the latest publish (0 = none), without copying. */
uint64_t snap_slot_seq(struct snap_slot *slot);

/* Helpers for producers. */
void snap_run_init(struct snap_run *snap);  /* zero, all figures invalid */
/* Appends one line to a tail ring kept in order (drops the oldest when full). */
void snap_log_tail_push(struct snap_log_tail *tail, const char *line);
/* Appends a concurrency change (drops the oldest when full). */
void snap_concurrency_mark(struct snap_concurrency *conc, double at_s, int concurrency);
/* Appends a finished point (drops the oldest when full). */
void snap_points_add(struct snap_points *points, const struct snap_point_result *p);

/* What is left of a run, in seconds: the point being measured (its ETA, or
 * the typical point's length when it has none), plus the points not started
 * yet at the mean length of the finished ones (every point of a sweep sends
 * conc x factor requests, so a closed-loop point lasts about the same at
 * every concurrency until the server saturates). False when nothing is known
 * yet (no ETA, no point finished). */
bool snap_run_remaining_s(const struct snap_run *snap, double *out_s);
/* The mean length of the finished points measured to the end; false when none. */
bool snap_mean_point_s(const struct snap_run *snap, double *out_s);

const char *snap_server_state_name(enum snap_server_state state); /* "starting"... */
const char *snap_run_phase_name(enum snap_run_phase phase);       /* "measuring"... */

#endif
